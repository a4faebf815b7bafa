"""The topology controller (``topology/cluster``): makes a Cluster's managed topology exist, and keeps it so.

One reconcile of a Cluster, in upstream's order (spec §2.1):

1. read the Cluster from the cache; gone, without ``spec.topology``, or paused → nothing (a paused
   Cluster's condition is not touched either);
2. being deleted → only the BeforeClusterDelete hook (when the Runtime SDK is on), condition ``Deleted``;
3. read its ClusterClass; until the ClusterClass controller has reconciled its current generation, stop
   (the ClusterClass's status update wakes the Cluster again);
4. the BeforeClusterCreate hook, for a Cluster not created yet;
5. the pure pipeline ``plan`` runs too (:func:`~clusterclass.topology.pipeline.compute_topology`: variables
   defaulted and validated, blueprint, current state, desired state with patches), reading the informer
   caches; informers for the kinds the ClusterClass names are started on first read;
6. the reconcile steps (:mod:`clusterclass.topology.reconcile`), done by
   :class:`~clusterclass.controllers.topology.state.StateDriver` with server-side apply;
7. always, even after an error: the ``TopologyReconciled`` condition (spec §7.1), written with
   owned-condition semantics: only that condition changes, every other condition stays as the cache has it,
   and nothing is written when it already says the same.

Watches (spec §2.1 step 1): Clusters with a topology; ClusterClasses (each mapped to the Clusters using
it); topology-owned MachineDeployments and MachinePools (to ``spec.clusterName``); the current
InfrastructureCluster and ControlPlane kinds, mapped through their Cluster ownerReference (dynamic: known
only once a Cluster points at them); the kubeconfig Secrets of workload clusters. Events not matching the
``--watch-filter`` label are ignored.

Reads come from the caches; the only requests besides writes are the live list before creating a
worker, and server-side-apply dry runs when an object may have changed, so a converged Cluster costs
no request at all.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime

from clusterclass.api import constants as c
from clusterclass.api.conditions import conditions_of, meta_conditions_of, with_conditions, with_meta_conditions
from clusterclass.api.objects import Obj, dig, group_of, name_of, namespace_of, owner_references_of
from clusterclass.api.views import Cluster
from clusterclass.controllers.runtime.controller import DEFAULT_WORKERS, Controller, split_key
from clusterclass.controllers.runtime.events import EventRecorder
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.controllers.runtime.predicates import (
    CLUSTER_HAS_TOPOLOGY,
    RELEVANT_CHANGE,
    TOPOLOGY_OWNED,
    has_filter_label,
)
from clusterclass.controllers.topology.hooks import (
    AnsweredHooks,
    ExtensionCaller,
    HookCaller,
    LifecycleHooks,
    compute_with_calls,
    requeue_after,
)
from clusterclass.controllers.topology.state import StateDriver
from clusterclass.controllers.topology.structuredmerge import ServerSideApply
from clusterclass.controllers.workload import KUBECONFIG_SUFFIX, WorkloadClusters
from clusterclass.errors import TopologyError
from clusterclass.kube.cache_reader import CacheReader
from clusterclass.kube.errors import Conflict, NotFound
from clusterclass.kube.gotext import rfc3339
from clusterclass.kube.indexes import LABEL_INDEX, TOPOLOGY_CLASS_INDEX
from clusterclass.kube.informer import Informer
from clusterclass.topology.conditions import (
    cluster_class_reconciled,
    legacy_condition,
    topology_reconciled,
    topology_reconciled_v1beta2,
)
from clusterclass.topology.desired import Computation
from clusterclass.topology.hooks import HookTracker
from clusterclass.topology.patches import PatchEngine
from clusterclass.topology.patches.engine import ClusterClassPatchEngine
from clusterclass.topology.patches.external import ExtensionAnswers
from clusterclass.topology.pipeline import compute_topology
from clusterclass.topology.reader import NodeReadError
from clusterclass.topology.reconcile import reconcile_steps
from clusterclass.topology.shim import CLUSTER_SECRET_TYPE

logger = logging.getLogger(__name__)

CONTROLLER_NAME = "topology/cluster"
#: conflicts writing the condition are retried this often (the cache catches up in between)
CONDITION_WRITE_ATTEMPTS = 5


@dataclass
class _Scope:
    """What one reconcile learned, for the condition written at its end."""

    cluster: Obj
    cluster_class: Obj | None = None
    computation: Computation | None = None
    error: BaseException | None = None
    writes: int = 0
    #: every lifecycle hook answered in this reconcile
    hooks: HookTracker = field(default_factory=HookTracker)


@dataclass
class TopologyOptions:
    """``--clustertopology-concurrency`` and ``--watch-filter``, as upstream's flags."""

    workers: int = DEFAULT_WORKERS
    watch_filter: str | None = None
    #: random suffixes of new names come from here (a seeded one makes tests reproducible)
    rng: random.Random = field(default_factory=random.Random)


class ClusterTopologyController:
    """Reconciles Clusters with ``spec.topology`` (module doc). Create, then :meth:`setup` before the manager starts."""

    def __init__(
        self,
        manager: Manager,
        *,
        workload: WorkloadClusters,
        options: TopologyOptions | None = None,
        patches: PatchEngine | None = None,
        apply: ServerSideApply | None = None,
        hooks: HookCaller | None = None,
        extensions: ExtensionCaller | None = None,
    ) -> None:
        self.manager = manager
        self.workload = workload
        self.options = options or TopologyOptions()
        self.patches = patches or ClusterClassPatchEngine()
        self.ssa = apply or ServerSideApply(
            manager.client, write_versions=manager.preferred_version, api_versions=manager.reader.api_versions
        )
        #: None: the Runtime SDK is off and no hook is ever called
        self.hooks = hooks
        #: the Runtime Extensions external patches call (used only with the Runtime SDK on)
        self.extensions = extensions
        self.lifecycle = LifecycleHooks(hooks, self.ssa) if hooks is not None else None
        self.events: EventRecorder = manager.event_recorder(CONTROLLER_NAME)
        self.controller = Controller(CONTROLLER_NAME, self.reconcile, workers=self.options.workers, clock=manager.clock)
        self._filter = has_filter_label(self.options.watch_filter)
        self._dynamic: set[tuple[str, str]] = set()
        self.clusters: Informer | None = None
        self.machine_sets: Informer | None = None

    @property
    def reader(self) -> CacheReader:
        return self.manager.reader

    # --- watches --------------------------------------------------------------------------------------------

    async def setup(self) -> ClusterTopologyController:
        manager, controller = self.manager, self.controller
        self.clusters = await manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER)
        controller.watch(self.clusters, _own_key, CLUSTER_HAS_TOPOLOGY, RELEVANT_CHANGE, self._filter)
        classes = await manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS)
        controller.watch(classes, self._clusters_of_class, self._filter)
        for kind in (c.KIND_MACHINE_DEPLOYMENT, c.KIND_MACHINE_POOL):
            workers = await manager.informer(c.CLUSTER_API_VERSION, kind, label_selector=c.LABEL_TOPOLOGY_OWNED)
            controller.watch(workers, _cluster_of_worker, TOPOLOGY_OWNED, RELEVANT_CHANGE, self._filter)
        self.machine_sets = await manager.informer(
            c.CLUSTER_API_VERSION, c.KIND_MACHINE_SET, label_selector=c.LABEL_TOPOLOGY_OWNED
        )
        secrets = await manager.informer("v1", "Secret", field_selector=f"type={CLUSTER_SECRET_TYPE}")
        controller.watch(secrets, _cluster_of_kubeconfig)
        manager.add(controller)
        return self

    def _clusters_of_class(self, cluster_class: Obj) -> list[str]:
        assert self.clusters is not None
        value = f"{namespace_of(cluster_class)}/{name_of(cluster_class)}"
        return [f"{namespace_of(o)}/{name_of(o)}" for o in self.clusters.by_index(TOPOLOGY_CLASS_INDEX, value)]

    async def _watch_dynamically(self, obj: Obj | None) -> None:
        """Watch the current InfrastructureCluster's or ControlPlane's kind, mapped to its owning Cluster."""
        if obj is None:
            return
        api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
        if (group_of(api_version), kind) in self._dynamic:
            return
        self._dynamic.add((group_of(api_version), kind))
        informer = await self.manager.informer(api_version, kind)
        self.controller.watch(informer, _owning_cluster, TOPOLOGY_OWNED, RELEVANT_CHANGE, self._filter)

    def _machine_sets_of(self, deployment: Obj) -> list[Obj]:
        """The MachineSets of a MachineDeployment, as its controller labels them."""
        assert self.machine_sets is not None
        value = f"{c.LABEL_MACHINE_DEPLOYMENT_NAME}={name_of(deployment)}"
        return [
            ms for ms in self.machine_sets.by_index(LABEL_INDEX, value) if namespace_of(ms) == namespace_of(deployment)
        ]

    # --- the reconcile ---------------------------------------------------------------------------------------

    async def reconcile(self, key: str) -> float | None:
        namespace, name = split_key(key)
        cluster = self.reader.get(c.CLUSTER_API_VERSION, c.KIND_CLUSTER, namespace or "", name)
        if cluster is None:
            await self.workload.forget(namespace or "", name)
            return None
        cluster.setdefault("apiVersion", c.CLUSTER_API_VERSION)
        cluster.setdefault("kind", c.KIND_CLUSTER)
        view = Cluster(cluster)
        if view.topology is None or view.paused:
            return None
        scope = _Scope(cluster)
        try:
            if dig(cluster, "metadata", "deletionTimestamp"):
                if self.lifecycle is not None:
                    await self.lifecycle.before_cluster_delete(cluster, scope.hooks)
                return requeue_after(scope.hooks)
            return await self._reconcile(scope)
        except Exception as err:
            scope.error = err
            raise
        finally:
            await self._write_condition(scope)

    async def _reconcile(self, scope: _Scope) -> float | None:
        cluster = scope.cluster
        view = Cluster(cluster)
        class_name = view.topology.class_name if view.topology else ""
        scope.cluster_class = self.reader.get(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS, view.namespace, class_name)
        if scope.cluster_class is None:
            raise TopologyError(
                f"failed to retrieve ClusterClass {view.namespace}/{class_name}: "
                f'clusterclasses.cluster.x-k8s.io "{class_name}" not found'
            )
        if not cluster_class_reconciled(scope.cluster_class):
            return None  # the ClusterClass controller's status update wakes this Cluster again
        if self.lifecycle is not None:
            response = await self.lifecycle.before_cluster_create(cluster, scope.hooks)
            if response is not None and response.blocking:
                return requeue_after(scope.hooks)  # nothing is created until the hook lets it
        await self._prepare_workload_cluster(cluster)
        scope.computation = await self._compute(cluster)
        scope.hooks.responses.update(scope.computation.hooks.responses)
        if self.lifecycle is not None:
            cluster = await self._after_hooks(cluster, scope.computation, scope.hooks)
        current = scope.computation.current
        await self._watch_dynamically(current.infrastructure_cluster)
        await self._watch_dynamically(current.control_plane)
        driver = StateDriver(
            client=self.manager.client,
            reader=self.reader,
            apply=self.ssa,
            events=self.events,
            cluster=cluster,
            machine_sets_of=self._machine_sets_of,
        )
        try:
            await driver.run(reconcile_steps(scope.computation, self.options.rng))
        except TopologyError as err:
            raise err.wrap("error reconciling the Cluster topology") from err
        finally:
            scope.writes = driver.writes
        return requeue_after(scope.hooks)

    async def _compute(self, cluster: Obj) -> Computation:
        """The pure pipeline over the caches, with the answers of hooks and external patches it needs when the
        Runtime SDK is on."""

        # every run of the pipeline in this reconcile draws the same random names, so a run asks an extension
        # exactly what the run before did (whose answer it then finds)
        seed = self.options.rng.random()

        async def compute(hooks: AnsweredHooks | None, extensions: ExtensionAnswers | None) -> Computation:
            return await self.manager.read(
                lambda reader: compute_topology(
                    cluster,
                    reader,
                    nodes=self.workload,
                    rng=random.Random(seed),
                    patches=self.patches,
                    hooks=hooks,
                    extensions=extensions,
                    stage_context=True,
                )
            )

        extensions = self.extensions if self.hooks is not None else None
        return await compute_with_calls(self.hooks, extensions, namespace_of(cluster), compute)

    async def _after_hooks(self, cluster: Obj, computation: Computation, tracker: HookTracker) -> Obj:
        """Persist the pipeline's pending-hook marks, then AfterControlPlaneInitialized and AfterClusterUpgrade.

        (Upstream calls these right after the shim; here right before the reconcile steps, which start with
        the shim: nothing between the two reads what the hooks change.)
        """
        assert self.lifecycle is not None
        marks = computation.hooks
        cluster = await self.lifecycle.mark(cluster, pending=marks.marked_pending, done=marks.marked_done)
        cluster = await self.lifecycle.after_control_plane_initialized(cluster, tracker)
        return await self.lifecycle.after_cluster_upgrade(cluster, computation.upgrades, tracker)

    async def _prepare_workload_cluster(self, cluster: Obj) -> None:
        """Connect to the workload cluster if a MachinePool has Nodes to check (DECISIONS.md: only then)."""
        pools = self.reader.list(
            c.CLUSTER_API_VERSION,
            c.KIND_MACHINE_POOL,
            namespace_of(cluster),
            {c.LABEL_CLUSTER_NAME: name_of(cluster), c.LABEL_TOPOLOGY_OWNED: None},
        )
        if not any(dig(pool, "status", "nodeRefs") for pool in pools):
            return
        try:
            await self.workload.prepare(cluster)
        except NodeReadError as err:
            raise TopologyError(
                "error computing the desired state of the Cluster topology: "
                f"failed to check if any MachinePool is upgrading: {err}"
            ) from err

    # --- the condition ------------------------------------------------------------------------------------------

    async def _write_condition(self, scope: _Scope) -> None:
        """Set ``TopologyReconciled`` on the Cluster, as a v1beta2 condition (upstream v1.14's) and a v1beta1 one;
        only that condition changes, and only if it changed. The status patch is written in the version the
        management cluster prefers for Clusters: v1beta2 keeps the v1beta1 condition under
        ``status.deprecated.v1beta1``, the v1beta2 decision in v1beta1's form (as v1.14 writes it); a management
        cluster serving only v1beta1 gets upstream v1.6's v1beta1 condition, and the v1beta2 one under
        ``status.v1beta2``."""
        computation = scope.computation
        upgrades = computation.upgrades if computation is not None else None
        condition_v1beta2 = topology_reconciled_v1beta2(
            cluster=scope.cluster,
            error=scope.error,
            cluster_class=scope.cluster_class,
            upgrades=upgrades,
            hooks=scope.hooks,
            control_plane=computation.desired.control_plane if computation is not None else None,
        )
        cluster = scope.cluster
        api_version = await self.manager.preferred_version(c.CLUSTER_API_VERSION, c.KIND_CLUSTER)
        if api_version == c.CLUSTER_API_VERSION:
            condition = topology_reconciled(
                cluster=scope.cluster,
                error=scope.error,
                cluster_class=scope.cluster_class,
                upgrades=upgrades,
                hooks=scope.hooks,
            )
        else:
            condition = legacy_condition(condition_v1beta2)
        for attempt in range(CONDITION_WRITE_ATTEMPTS):
            latest = self.reader.get(c.CLUSTER_API_VERSION, c.KIND_CLUSTER, namespace_of(cluster), name_of(cluster))
            if latest is None:
                return
            now = rfc3339(datetime.now(UTC))
            legacy = with_conditions(conditions_of(latest), [condition], now)
            current = with_meta_conditions(
                meta_conditions_of(latest), [condition_v1beta2], now, dig(latest, "metadata", "generation")
            )
            if api_version == c.CLUSTER_API_VERSION and "v1beta2" not in (latest.get("status") or {}):
                # a v1beta1 Cluster whose CRD has no status.v1beta2 (before v1.9: nobody has written one): the
                # server would prune the v1beta2 condition, and writing it again would be a request every reconcile
                current = None
            if legacy is None and current is None:
                return
            legacy = legacy if legacy is not None else conditions_of(latest)
            current = current if current is not None else meta_conditions_of(latest)
            if api_version == c.CLUSTER_API_VERSION:
                status: Obj = {"conditions": legacy}
                if "v1beta2" in (latest.get("status") or {}):
                    status["v1beta2"] = {"conditions": current}
            else:
                status = {"conditions": current, "deprecated": {"v1beta1": {"conditions": legacy}}}
            patch = {"metadata": {"resourceVersion": dig(latest, "metadata", "resourceVersion")}, "status": status}
            try:
                await self.manager.client.patch(
                    api_version,
                    c.KIND_CLUSTER,
                    name_of(cluster),
                    patch,
                    namespace=namespace_of(cluster),
                    status=True,
                )
                return
            except NotFound:
                return
            except Conflict:
                if attempt == CONDITION_WRITE_ATTEMPTS - 1:
                    raise
                await asyncio.sleep(0.01 * 2**attempt)  # let the cache see the newer Cluster


# --- mappings ------------------------------------------------------------------------------------------------


def _own_key(obj: Obj) -> list[str]:
    return [f"{namespace_of(obj)}/{name_of(obj)}"]


def _cluster_of_worker(obj: Obj) -> list[str]:
    cluster_name = dig(obj, "spec", "clusterName")
    return [f"{namespace_of(obj)}/{cluster_name}"] if cluster_name else []


def _owning_cluster(obj: Obj) -> list[str]:
    return [
        f"{namespace_of(obj)}/{ref.get('name')}"
        for ref in owner_references_of(obj)
        if ref.get("kind") == c.KIND_CLUSTER and group_of(str(ref.get("apiVersion", ""))) == c.CLUSTER_GROUP
    ]


def _cluster_of_kubeconfig(secret: Obj) -> list[str]:
    name = name_of(secret)
    return (
        [f"{namespace_of(secret)}/{name.removesuffix(KUBECONFIG_SUFFIX)}"] if name.endswith(KUBECONFIG_SUFFIX) else []
    )
