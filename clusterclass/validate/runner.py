"""Running the admission chain offline: default, then validate, every Cluster, ClusterClass and MachinePool.

The objects given are validated, and together they are also the world the rules may look at (the
ClusterClass a Cluster uses, the Clusters that use a ClusterClass, a Cluster's control plane and
workers). ClusterClasses given count as reconciled, since no controller ran. Objects given as
``old`` are the stored versions, which turns the checks of the same objects into update checks.
Defaulting runs before validation, as the mutating webhooks run before the validating ones, and the
world holds the defaulted objects, as the API server would store them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, key_of
from clusterclass.errors import ObjectKey
from clusterclass.plan.loader import Loaded, Source
from clusterclass.topology.check import Gates, Result, invalid_status
from clusterclass.topology.check.cluster import always_reconciled, default_cluster, validate_cluster
from clusterclass.topology.check.clusterclass import default_cluster_class, validate_cluster_class
from clusterclass.topology.check.machinepool import default_machine_pool, validate_machine_pool
from clusterclass.topology.reader import IndexedNodes, ObjectIndex


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
    stored = {key_of(o): o for o in (old.objects if old else [])}
    latest = {key_of(o): o for o in loaded.objects}  # the last one given wins

    defaulters: dict[str, Callable[[Obj], Obj]] = {
        c.KIND_CLUSTER_CLASS: default_cluster_class,
        c.KIND_MACHINE_POOL: lambda obj: default_machine_pool(obj, stored.get(key_of(obj))),
    }
    world = ObjectIndex()
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
            checked.append(item)
    return checked
