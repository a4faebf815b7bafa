"""``clusterclass plan``: the changes the topology controller would make, computed offline.

The objects given are the management cluster as it stands: ClusterClasses and their templates,
Clusters, and whatever the topology created earlier. Every Cluster with ``spec.topology`` (or the
one ``--cluster`` names) goes through the same pipeline the controller runs
(:func:`~clusterclass.topology.pipeline.compute_topology`), then
:func:`~clusterclass.topology.changes.compute_changes` says what a reconcile would create, update
and delete. Workload-cluster Nodes may be given too (``kubectl get nodes -o yaml``); they tell
whether existing MachinePools are still upgrading.

Objects may be given in any API version Cluster API serves: the core kinds are read in the pipeline's version
(:mod:`clusterclass.topology.shapes`) and every planned object is shown in the version its Cluster was given in
(or ``--api-version``'s, which converts the provider objects the conversions know too); field paths in errors are
in the version of the object they are about.

One Cluster failing does not hide the others' plans: its error is reported, naming the file the
faulty object came from, and the command exits non-zero.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from clusterclass.api import constants as c
from clusterclass.api.contracts import CrdContracts
from clusterclass.api.conversion import ConversionError
from clusterclass.api.objects import Obj, dig, key_of, namespace_of
from clusterclass.api.views import Cluster, ClusterClass
from clusterclass.errors import ClusterClassError, ObjectKey, TopologyError
from clusterclass.plan.extensions import PlanExtensions
from clusterclass.plan.loader import Loaded
from clusterclass.topology.changes import Change, compute_changes
from clusterclass.topology.check import Result
from clusterclass.topology.check.cluster import always_reconciled, default_cluster, validate_cluster
from clusterclass.topology.check.clusterclass import default_cluster_class, validate_cluster_class
from clusterclass.topology.desired import Computation
from clusterclass.topology.patches import PatchEngine
from clusterclass.topology.patches.engine import ClusterClassPatchEngine
from clusterclass.topology.pipeline import compute_topology
from clusterclass.topology.reader import IndexedNodes, ObjectIndex
from clusterclass.topology.shapes import (
    from_pipeline,
    offline_contracts,
    to_pipeline,
    user_message,
    user_path,
    with_owner_version,
)
from clusterclass.topology.variables import status_variables


@dataclass
class ClusterPlan:
    cluster: ObjectKey
    #: the version the Cluster's objects are shown in (``v1beta1``, ``v1beta2``)
    api_version: str = ""
    changes: list[Change] = field(default_factory=list)
    computation: Computation | None = None
    error: str | None = None
    #: why the controller would leave this Cluster alone (paused, being deleted), if it would
    skipped: str | None = None

    @property
    def warnings(self) -> list[str]:
        return self.computation.warnings if self.computation else []


@dataclass
class Plan:
    clusters: list[ClusterPlan]

    @property
    def failed(self) -> bool:
        return any(p.error for p in self.clusters)


class PlanError(ClusterClassError):
    """The plan cannot start (for example ``--cluster`` names no Cluster with a topology)."""


def _topology_clusters(index: ObjectIndex) -> list[Obj]:
    clusters = [
        obj
        for obj in index
        if obj.get("kind") == c.KIND_CLUSTER and key_of(obj).group == c.CLUSTER_GROUP and Cluster(obj).topology
    ]
    return sorted(clusters, key=key_of)


def _select(clusters: list[Obj], wanted: str | None) -> list[Obj]:
    if wanted is None:
        return clusters
    namespace, _, name = wanted.rpartition("/")
    chosen = [
        obj for obj in clusters if key_of(obj).name == name and (not namespace or key_of(obj).namespace == namespace)
    ]
    if not chosen:
        known = ", ".join(f"{key_of(o).namespace}/{key_of(o).name}" for o in clusters) or "none"
        raise PlanError(f"--cluster {wanted}: no Cluster with spec.topology by that name (given: {known})")
    if len(chosen) > 1:
        raise PlanError(f"--cluster {wanted}: several namespaces have such a Cluster; use NAMESPACE/NAME")
    return chosen


@dataclass
class _Inputs:
    """What the plan reads: the objects in the pipeline's version, where each came from and in which version."""

    loaded: Loaded
    given: dict[ObjectKey, str]
    contracts: CrdContracts

    def version_of(self, key: ObjectKey) -> str:
        return self.given.get(key, "").rpartition("/")[2]


def _read_inputs(loaded: Loaded) -> _Inputs:
    contracts = offline_contracts(loaded.objects)
    objects, given = [], {}
    for obj in loaded.objects:
        key = key_of(obj)
        given[key] = str(obj.get("apiVersion") or "")
        try:
            objects.append(to_pipeline(obj, contracts))
        except ConversionError as err:
            source = loaded.sources.get(key)
            raise PlanError(f"{source}: {key}: {err}" if source else f"{key}: {err}") from err
    return _Inputs(Loaded(objects, loaded.sources), given, contracts)


def describe_error(err: TopologyError, loaded: Loaded, cluster: ObjectKey, inputs: _Inputs | None = None) -> str:
    """``file:line: Kind ns/name: field: message``, pointing at the object at fault (its field as its version
    spells it)."""
    obj = err.obj or cluster
    source = loaded.sources.get(obj)
    version = inputs.version_of(obj) if inputs is not None else ""
    field = user_path(obj.group, obj.kind, version, err.field) if err.field else err.field
    message = err.message
    if err.field and field != err.field:
        message = message.replace(f"{err.field}: ", f"{field}: ").replace(f"{err.field} ", f"{field} ")
    parts = [str(source)] if source else []
    parts.append(str(obj))
    if field and f"{field}: " not in message:  # not when the message already leads with it
        parts.append(field)
    parts.append(message)
    return ": ".join(parts)


def _admitted(loaded: Loaded, contracts: CrdContracts) -> ObjectIndex:
    """The objects as the API server would hold them: ClusterClasses and Clusters defaulted by admission."""
    index = ObjectIndex(loaded.objects, api_versions=contracts)
    for obj in list(index):
        if obj.get("kind") == c.KIND_CLUSTER_CLASS and key_of(obj).group == c.CLUSTER_GROUP:
            index.add(default_cluster_class(obj))
    for obj in list(index):
        if obj.get("kind") == c.KIND_CLUSTER and key_of(obj).group == c.CLUSTER_GROUP and Cluster(obj).topology:
            index.add(default_cluster(obj, reader=index, is_reconciled=always_reconciled))
    return index


def _admission_errors(
    cluster: Obj,
    index: ObjectIndex,
    nodes: IndexedNodes,
    loaded: Loaded,
    class_results: dict[ObjectKey, Result],
    inputs: _Inputs,
) -> str | None:
    """What admission would refuse about the Cluster or the ClusterClass it uses, naming the files.

    ``class_results`` keeps each ClusterClass's verdict, so a class used by many Clusters is checked once.
    """
    lines: list[str] = []
    cluster_class = index.get(
        c.CLUSTER_API_VERSION,
        c.KIND_CLUSTER_CLASS,
        namespace_of(cluster),
        str(dig(cluster, "spec", "topology", "class") or ""),
    )
    checks = [(cluster, validate_cluster(cluster, None, reader=index, nodes=nodes, is_reconciled=always_reconciled))]
    if cluster_class is not None:
        class_key = key_of(cluster_class)
        if class_key not in class_results:
            class_results[class_key] = validate_cluster_class(cluster_class, None, reader=index)
        checks.insert(0, (cluster_class, class_results[class_key]))
    for obj, result in checks:
        key = key_of(obj)
        source = loaded.sources.get(key)
        where = f"{source}: {key}" if source else str(key)
        version = inputs.version_of(key)
        lines.extend(f"{where}: {user_message(key.group, key.kind, version, str(error))}" for error in result.errors)
    if not lines:
        return None
    return "admission would refuse it:" + "".join(f"\n    {line}" for line in lines)


def _discovered_variables(loaded: Loaded, extensions: PlanExtensions) -> tuple[Loaded, dict[ObjectKey, str]]:
    """The input with each ClusterClass's ``status.variables`` as its controller would publish them (variables
    discovered from its extensions included), and the discovery error of each ClusterClass whose discovery failed."""
    objects, errors = [], {}
    for obj in loaded.objects:
        if (
            obj.get("kind") == c.KIND_CLUSTER_CLASS
            and key_of(obj).group == c.CLUSTER_GROUP
            and ClusterClass(obj).external_patches
        ):
            try:
                discovered = extensions.discover_variables(obj)
            except ClusterClassError as err:
                errors[key_of(obj)] = f"VariableDiscovery failed: {err}"
            else:
                variables = status_variables(dig(obj, "spec", "variables") or [], discovered)
                obj = {**obj, "status": {**(obj.get("status") or {}), "variables": variables}}
        objects.append(obj)
    return Loaded(objects, loaded.sources), errors


def make_plan(
    loaded: Loaded,
    *,
    cluster: str | None = None,
    seed: int | None = None,
    patches: PatchEngine | None = None,
    extensions: PlanExtensions | None = None,
    api_version: str | None = None,
) -> Plan:
    """Plan every Cluster with a topology (or ``cluster``); ``extensions`` answers external patches and variable
    discovery (None: a ClusterClass with external patches cannot be planned). ``api_version`` (``v1beta2``) shows
    every planned object in that version; by default each Cluster's objects are shown in the Cluster's version."""
    inputs = _read_inputs(loaded)
    given_loaded = loaded
    loaded = inputs.loaded
    discovery_errors: dict[ObjectKey, str] = {}
    if extensions is not None:
        loaded, discovery_errors = _discovered_variables(loaded, extensions)
    index = _admitted(loaded, inputs.contracts)
    nodes = IndexedNodes(obj for obj in index if obj.get("kind") == "Node" and key_of(obj).group == "")
    rng = random.Random(seed)
    class_results: dict[ObjectKey, Result] = {}
    plans = []
    for obj in _select(_topology_clusters(index), cluster):
        plan = ClusterPlan(cluster=key_of(obj), api_version=api_version or inputs.version_of(key_of(obj)))
        plans.append(plan)
        if Cluster(obj).paused:
            plan.skipped = "the Cluster is paused: the topology controller changes nothing until it is unpaused"
            continue
        if dig(obj, "metadata", "deletionTimestamp"):
            plan.skipped = "the Cluster is being deleted: the topology controller only runs deletion hooks"
            continue
        cluster_class = index.get(
            c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS, namespace_of(obj), str(dig(obj, "spec", "topology", "class"))
        )
        if cluster_class is not None and key_of(cluster_class) in discovery_errors:
            plan.error = f"{key_of(cluster_class)}: {discovery_errors[key_of(cluster_class)]}"
            continue
        external = ClusterClass(cluster_class).external_patches if cluster_class is not None else []
        if extensions is None and cluster_class is not None and external:
            names = ", ".join(name for name, _external in external)
            plan.error = (
                f"{key_of(cluster_class)} has external patches ({names}): plan calls their Runtime Extensions only "
                "when they are given: --extension-url, or their ExtensionConfigs among the files"
            )
            continue
        plan.error = _admission_errors(obj, index, nodes, loaded, class_results, inputs)
        if plan.error:
            continue
        try:
            plan.computation = compute_topology(
                obj,
                index,
                nodes=nodes,
                rng=rng,
                patches=patches or ClusterClassPatchEngine(),
                extensions=extensions,
                contracts=inputs.contracts,
            )
            changes = compute_changes(plan.computation, rng=rng)
            plan.changes = [
                _shown(change, plan.api_version, inputs, providers=api_version is not None) for change in changes
            ]
        except TopologyError as err:
            plan.error = describe_error(err, given_loaded, plan.cluster, inputs)
        except ConversionError as err:
            plan.error = f"{plan.cluster}: cannot show the plan in {plan.api_version}: {err}"
    return Plan(plans)


def _shown(change: Change, version: str, inputs: _Inputs, *, providers: bool) -> Change:
    """``change`` with its objects in ``version``: the Cluster's own version, or ``--api-version``'s (which
    converts provider objects too)."""
    if not version:
        return change

    def shown(obj: Obj | None) -> Obj | None:
        if obj is None:
            return None
        return with_owner_version(from_pipeline(obj, version, inputs.contracts, providers=providers), version)

    return Change(change.action, shown(change.before), shown(change.after), change.note)
