"""``clusterclass plan``: the changes the topology controller would make, computed offline.

The objects given are the management cluster as it stands: ClusterClasses and their templates,
Clusters, and whatever the topology created earlier. Every Cluster with ``spec.topology`` (or the
one ``--cluster`` names) goes through the same pipeline the controller runs
(:func:`~clusterclass.topology.pipeline.compute_topology`), then
:func:`~clusterclass.topology.changes.compute_changes` says what a reconcile would create, update
and delete. Workload-cluster Nodes may be given too (``kubectl get nodes -o yaml``); they tell
whether existing MachinePools are still upgrading.

One Cluster failing does not hide the others' plans: its error is reported, naming the file the
faulty object came from, and the command exits non-zero.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from clusterclass.api import constants as c
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
from clusterclass.topology.variables import status_variables


@dataclass
class ClusterPlan:
    cluster: ObjectKey
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


def describe_error(err: TopologyError, loaded: Loaded, cluster: ObjectKey) -> str:
    """``file:line: Kind ns/name: field: message``, pointing at the object at fault."""
    obj = err.obj or cluster
    source = loaded.sources.get(obj)
    parts = [str(source)] if source else []
    parts.append(str(obj))
    if err.field and f"{err.field}: " not in err.message:  # not when the message already leads with it
        parts.append(err.field)
    parts.append(err.message)
    return ": ".join(parts)


def _admitted(loaded: Loaded) -> ObjectIndex:
    """The objects as the API server would hold them: ClusterClasses and Clusters defaulted by admission."""
    index = ObjectIndex(loaded.objects)
    for obj in list(index):
        if obj.get("kind") == c.KIND_CLUSTER_CLASS and key_of(obj).group == c.CLUSTER_GROUP:
            index.add(default_cluster_class(obj))
    for obj in list(index):
        if obj.get("kind") == c.KIND_CLUSTER and key_of(obj).group == c.CLUSTER_GROUP and Cluster(obj).topology:
            index.add(default_cluster(obj, reader=index, is_reconciled=always_reconciled))
    return index


def _admission_errors(
    cluster: Obj, index: ObjectIndex, nodes: IndexedNodes, loaded: Loaded, class_results: dict[ObjectKey, Result]
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
        source = loaded.sources.get(key_of(obj))
        where = f"{source}: {key_of(obj)}" if source else str(key_of(obj))
        lines.extend(f"{where}: {error}" for error in result.errors)
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
) -> Plan:
    """Plan every Cluster with a topology (or ``cluster``); ``extensions`` answers external patches and variable
    discovery (None: a ClusterClass with external patches cannot be planned)."""
    discovery_errors: dict[ObjectKey, str] = {}
    if extensions is not None:
        loaded, discovery_errors = _discovered_variables(loaded, extensions)
    index = _admitted(loaded)
    nodes = IndexedNodes(obj for obj in index if obj.get("kind") == "Node" and key_of(obj).group == "")
    rng = random.Random(seed)
    class_results: dict[ObjectKey, Result] = {}
    plans = []
    for obj in _select(_topology_clusters(index), cluster):
        plan = ClusterPlan(cluster=key_of(obj))
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
        plan.error = _admission_errors(obj, index, nodes, loaded, class_results)
        if plan.error:
            continue
        try:
            plan.computation = compute_topology(
                obj, index, nodes=nodes, rng=rng, patches=patches or ClusterClassPatchEngine(), extensions=extensions
            )
            plan.changes = compute_changes(plan.computation, rng=rng)
        except TopologyError as err:
            plan.error = describe_error(err, loaded, plan.cluster)
    return Plan(plans)
