"""Running the admission chain offline: default, then validate, every Cluster, ClusterClass and MachinePool.

The objects given are validated, and together they are also the world the rules may look at (the
ClusterClass a Cluster uses, the Clusters that use a ClusterClass, a Cluster's control plane and
workers). ClusterClasses given count as reconciled, since no controller ran. Objects given as
``old`` are the stored versions, which turns the checks of the same objects into update checks.
Defaulting runs before validation, as the mutating webhooks run before the validating ones, and the
world holds the defaulted objects, as the API server would store them.

Objects may be in either API version: the rules run on the pipeline's version (:mod:`clusterclass.topology.shapes`)
and every error names its field as the version the object was given in spells it.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.contracts import CrdContracts
from clusterclass.api.conversion import ConversionError
from clusterclass.api.objects import Obj, key_of
from clusterclass.errors import InputError, ObjectKey
from clusterclass.plan.loader import Loaded, Source
from clusterclass.topology.check import Gates, Result, invalid_status
from clusterclass.topology.check.cluster import always_reconciled, default_cluster, validate_cluster
from clusterclass.topology.check.clusterclass import default_cluster_class, validate_cluster_class
from clusterclass.topology.check.machinepool import default_machine_pool, validate_machine_pool
from clusterclass.topology.reader import IndexedNodes, ObjectIndex
from clusterclass.topology.shapes import offline_contracts, to_pipeline, user_errors, user_message


@dataclass
class Checked:
    key: ObjectKey
    source: Source | None
    result: Result = field(default_factory=Result)

    def status(self) -> dict[str, Any]:
        return invalid_status(self.key.kind, self.key.group, self.key.name, self.result.errors)


def _kind(obj: Obj, kind: str) -> bool:
    return obj.get("kind") == kind and key_of(obj).group == c.CLUSTER_GROUP


def validate_objects(loaded: Loaded, old: Loaded | None = None, *, gates: Gates | None = None) -> list[Checked]:
    """Default and validate every Cluster, ClusterClass and MachinePool of ``loaded``, in that order
    of kinds (ClusterClasses first, as a user applies them), each kind sorted by namespace and name."""
    gates = gates or Gates()
    contracts = offline_contracts([*loaded.objects, *(old.objects if old else [])])
    given = {key_of(o): str(o.get("apiVersion") or "").rpartition("/")[2] for o in loaded.objects}
    stored = {key_of(o): _pipeline(o, contracts, old.sources if old else {}) for o in (old.objects if old else [])}
    latest = {key_of(o): _pipeline(o, contracts, loaded.sources) for o in loaded.objects}  # the last one given wins

    defaulters: dict[str, Callable[[Obj], Obj]] = {
        c.KIND_CLUSTER_CLASS: default_cluster_class,
        # offline there is no server: a MachinePool written in v1beta2 gets v1.14's defaults, one in v1beta1 v1.6's
        c.KIND_MACHINE_POOL: lambda obj: default_machine_pool(
            obj, stored.get(key_of(obj)), v1beta2_server=given.get(key_of(obj)) == "v1beta2"
        ),
    }
    world = ObjectIndex(api_versions=contracts)
    for obj in latest.values():
        defaulter = defaulters.get(str(obj.get("kind"))) if key_of(obj).group == c.CLUSTER_GROUP else None
        world.add(defaulter(obj) if defaulter else obj)
    # Clusters are defaulted against the (defaulted) ClusterClasses they use.
    for obj in latest.values():
        if _kind(obj, c.KIND_CLUSTER):
            world.add(default_cluster(obj, reader=world, is_reconciled=always_reconciled))
    nodes = IndexedNodes(o for o in latest.values() if o.get("kind") == "Node" and key_of(o).group == "")

    checked: list[Checked] = []
    for kind in (c.KIND_CLUSTER_CLASS, c.KIND_CLUSTER, c.KIND_MACHINE_POOL):
        for key in sorted(k for k, o in latest.items() if _kind(o, kind)):
            defaulted = world.get_key(key)
            assert defaulted is not None
            previous = stored.get(key)
            item = Checked(key, loaded.sources.get(key))
            if kind == c.KIND_CLUSTER_CLASS:
                item.result = validate_cluster_class(defaulted, previous, reader=world, gates=gates)
            elif kind == c.KIND_CLUSTER:
                item.result = validate_cluster(
                    defaulted, previous, reader=world, nodes=nodes, gates=gates, is_reconciled=always_reconciled
                )
            else:
                item.result = validate_machine_pool(defaulted, previous, gates=gates)
            version = given.get(key, "")
            item.result.errors = user_errors(key.group, key.kind, version, item.result.errors)
            item.result.warnings = [user_message(key.group, key.kind, version, w) for w in item.result.warnings]
            checked.append(item)
    return checked


def _pipeline(obj: Obj, contracts: CrdContracts, sources: Mapping[ObjectKey, Source]) -> Obj:
    try:
        return to_pipeline(obj, contracts)
    except ConversionError as err:
        source = sources.get(key_of(obj))
        raise InputError(str(source) if source else str(key_of(obj)), f"{key_of(obj)}: {err}") from err
