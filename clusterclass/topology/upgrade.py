"""Upgrade sequencing (spec §4): control plane first, then workers, a few at a time.

An :class:`UpgradeTracker` is built fresh for every computation. The control plane version is
decided first (:func:`control_plane_version`); each worker's version then depends on whether the
control plane is stable, on the worker's deferral annotations, on lifecycle hooks and on how many
workers of its kind are already upgrading (:func:`worker_version`). MachineDeployments and
MachinePools follow identical rules with independent trackers, each allowing
``topology.cluster.x-k8s.io/upgrade-concurrency`` (default 1) concurrent upgrades.

Which workers are *already* upgrading is decided from the current state
(:func:`mark_upgrading_workers`): a MachineDeployment whose Machines are not all at its version, a
MachinePool whose workload Nodes report a different kubelet version or whose own ``MachinesUpToDate`` condition
is False (beyond upstream: :func:`_pool_reports_outdated_machines`). Unlike upstream v1.6-v1.10 we
compare kubelet versions ignoring build metadata, so vendor-suffixed kubelets
(``v1.28.0+vmware.1``) do not look as upgrading forever.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterclass.api import constants as c
from clusterclass.api.conditions import meta_conditions_of
from clusterclass.api.contract import CONTROL_PLANE_V1BETA1, ControlPlaneContract
from clusterclass.api.objects import Obj, annotations_of, dig, key_of, name_of
from clusterclass.api.views import Worker, WorkerTopology
from clusterclass.api.workers import MACHINE_POOL, WorkerKind
from clusterclass.errors import TopologyError
from clusterclass.topology import versions
from clusterclass.topology.current import CurrentState, WorkerState
from clusterclass.topology.hooks import HookTracker, LifecycleHooks, is_pending


@dataclass
class ControlPlaneUpgrade:
    is_pending_upgrade: bool = False
    is_provisioning: bool = False
    is_upgrading: bool = False
    is_starting_upgrade: bool = False
    is_scaling: bool = False
    #: the current control plane's ``spec.version`` (what an upgrading control plane is upgrading to);
    #: information for messages, not part of the state compared
    version: str = field(default="", compare=False)

    @property
    def is_stable(self) -> bool:
        """Stable: not upgrading, scaling, starting or pending an upgrade (provisioning is fine)."""
        return not (self.is_upgrading or self.is_scaling or self.is_starting_upgrade or self.is_pending_upgrade)


@dataclass
class WorkerUpgrades:
    """Upgrade bookkeeping for one kind of worker.

    ``pending_create`` holds *topology* names (objects not yet created have random names);
    the other sets hold *object* names.
    """

    max_concurrency: int = 1
    pending_create: set[str] = field(default_factory=set)
    pending_upgrade: set[str] = field(default_factory=set)
    deferred: set[str] = field(default_factory=set)
    upgrading: set[str] = field(default_factory=set)

    @property
    def concurrency_reached(self) -> bool:
        return len(self.upgrading) >= self.max_concurrency

    @property
    def idle(self) -> bool:
        return not (self.pending_create or self.pending_upgrade or self.deferred or self.upgrading)


@dataclass
class UpgradeTracker:
    control_plane: ControlPlaneUpgrade = field(default_factory=ControlPlaneUpgrade)
    machine_deployments: WorkerUpgrades = field(default_factory=WorkerUpgrades)
    machine_pools: WorkerUpgrades = field(default_factory=WorkerUpgrades)

    def workers(self, kind: WorkerKind) -> WorkerUpgrades:
        return self.machine_pools if kind is MACHINE_POOL else self.machine_deployments


def upgrade_concurrency(cluster: Obj) -> int:
    """``topology.cluster.x-k8s.io/upgrade-concurrency`` as an int; invalid or below 1 means 1.

    Admission rejects invalid values; the floor only keeps a bad stored value from stopping upgrades.
    """
    value = annotations_of(cluster).get(c.ANNOTATION_UPGRADE_CONCURRENCY)
    try:
        return max(1, int(value)) if value is not None else 1
    except ValueError:
        return 1


def new_tracker(cluster: Obj) -> UpgradeTracker:
    concurrency = upgrade_concurrency(cluster)
    return UpgradeTracker(
        machine_deployments=WorkerUpgrades(max_concurrency=concurrency),
        machine_pools=WorkerUpgrades(max_concurrency=concurrency),
    )


def is_deferred(workers: list[WorkerTopology], index: int) -> bool:
    """Whether the upgrade of ``workers[index]`` is deferred (spec §4.6).

    It is when it carries ``defer-upgrade`` or ``hold-upgrade-sequence``, or when an entry earlier in
    the same list carries ``hold-upgrade-sequence``.
    """
    own = workers[index].metadata.annotations
    if c.ANNOTATION_DEFER_UPGRADE in own or c.ANNOTATION_HOLD_UPGRADE_SEQUENCE in own:
        return True
    return any(c.ANNOTATION_HOLD_UPGRADE_SEQUENCE in w.metadata.annotations for w in workers[:index])


def _machine_deployment_upgrading(state: WorkerState) -> bool:
    version = Worker(state.object).version
    if version is None:
        return False
    for machine in state.machines:
        machine_version = dig(machine, "spec", "version")
        if not isinstance(machine_version, str):
            raise TopologyError(
                f"failed to check if MachineDeployment {name_of(state.object)} is upgrading: "
                f"Machine {name_of(machine)} has no version",
                obj=key_of(machine),
                field="spec.version",
            )
        if machine_version != version:
            return True
    return False


def _pool_reports_outdated_machines(pool: Obj) -> bool:
    """Whether the MachinePool's own status says some instance does not run its version yet: its v1beta2
    condition ``MachinesUpToDate`` (v1beta1's ``status.v1beta2.conditions``) is False.

    The signal users asked for (Cluster API #10059; upstream's open PR #13929 adds the condition for pools with
    Machines): clusterclass's simulated MachinePool controller sets it from the infrastructure pool's instance
    versions, so a pool counts as upgrading as soon as pool and instances disagree, before or without any Node — a
    managed pool whose nodeRefs are empty mid-rollout would otherwise look idle. Upstream v1.14's controller does not
    write the condition, so there the Nodes decide, as upstream's topology does."""
    return any(
        cond.get("type") == c.CONDITION_MACHINES_UP_TO_DATE and cond.get("status") == "False"
        for cond in meta_conditions_of(pool)
    )


def _machine_pool_upgrading(state: WorkerState) -> bool:
    version = Worker(state.object).version
    if version is None:
        return False
    if _pool_reports_outdated_machines(state.object):
        return True
    for node in state.nodes.values():
        if node is None:
            continue  # unknown offline: reported as a warning by the caller
        kubelet = dig(node, "status", "nodeInfo", "kubeletVersion")
        if not isinstance(kubelet, str) or not versions.same_ignoring_build(kubelet, version):
            return True
    return False


def worker_is_upgrading(kind: WorkerKind, state: WorkerState) -> bool:
    """Whether one existing worker is mid-upgrade (spec §4.3): the one rule the reconciler and the
    admission version-bump guard share. MachineDeployments are judged by their Machines, MachinePools
    by their workload Nodes, because only a MachineDeployment has Machines in the management cluster."""
    if kind is MACHINE_POOL:
        return _machine_pool_upgrading(state)
    return _machine_deployment_upgrading(state)


def mark_upgrading_workers(current: CurrentState, tracker: UpgradeTracker, kind: WorkerKind) -> None:
    """Record which current workers of ``kind`` are in the middle of an upgrade (spec §4.3)."""
    upgrades = tracker.workers(kind)
    for state in current.workers(kind).values():
        if worker_is_upgrading(kind, state):
            upgrades.upgrading.add(name_of(state.object))


def control_plane_version(
    *,
    desired: str,
    current_cp: Obj | None,
    cluster: Obj,
    replicas_managed: bool,
    tracker: UpgradeTracker,
    hook_tracker: HookTracker,
    hooks: LifecycleHooks | None,
    contract: ControlPlaneContract = CONTROL_PLANE_V1BETA1,
) -> str:
    """The version to write on the control plane (spec §4.4), recording its state in ``tracker``.

    ``contract`` is the current control plane's (where its status keeps versions and replica counts)."""
    if current_cp is None:
        return desired
    cp_state = tracker.control_plane
    current = dig(current_cp, *contract.VERSION)
    current = current if isinstance(current, str) else ""
    cp_state.version = current
    if current != desired:
        cp_state.is_pending_upgrade = True

    status_version = dig(current_cp, *contract.STATUS_VERSION)
    if not status_version:
        cp_state.is_provisioning = True
        return current
    if versions.is_newer_including_build(current, str(status_version)):
        cp_state.is_upgrading = True
        return current

    if not cp_state.is_pending_upgrade:
        # At the desired version: release workers once AfterControlPlaneUpgrade agrees.
        if hooks is not None and is_pending(cluster, c.HOOK_AFTER_CONTROL_PLANE_UPGRADE):
            response = hooks.call(c.HOOK_AFTER_CONTROL_PLANE_UPGRADE, cluster, {"kubernetesVersion": desired})
            hook_tracker.responses[c.HOOK_AFTER_CONTROL_PLANE_UPGRADE] = response
            if not response.blocking:
                hook_tracker.marked_done.add(c.HOOK_AFTER_CONTROL_PLANE_UPGRADE)
        return current

    if replicas_managed and contract.is_scaling(current_cp):
        cp_state.is_scaling = True
        return current

    if tracker.machine_deployments.upgrading or tracker.machine_pools.upgrading:
        return current  # the previous upgrade of the workers is still rolling out

    if hooks is not None:
        response = hooks.call(
            c.HOOK_BEFORE_CLUSTER_UPGRADE,
            cluster,
            {"fromKubernetesVersion": current, "toKubernetesVersion": desired},
        )
        hook_tracker.responses[c.HOOK_BEFORE_CLUSTER_UPGRADE] = response
        if response.blocking:
            return current
        hook_tracker.marked_pending.update({c.HOOK_AFTER_CONTROL_PLANE_UPGRADE, c.HOOK_AFTER_CLUSTER_UPGRADE})

    cp_state.is_pending_upgrade = False
    cp_state.is_starting_upgrade = True
    return desired


def worker_version(
    *,
    desired: str,
    topology_workers: list[WorkerTopology],
    index: int,
    current: WorkerState | None,
    tracker: UpgradeTracker,
    hook_tracker: HookTracker,
) -> str:
    """The version of one MachineDeployment or MachinePool (spec §4.5; first matching rule wins)."""
    topology = topology_workers[index]
    upgrades = tracker.workers(topology.kind)
    after_cp_upgrade_blocking = hook_tracker.is_blocking(c.HOOK_AFTER_CONTROL_PLANE_UPGRADE)
    if current is None:
        if not tracker.control_plane.is_stable or after_cp_upgrade_blocking:
            upgrades.pending_create.add(topology.name)
        return desired

    name = name_of(current.object)
    current_version = Worker(current.object).version or ""
    if current_version == desired:
        return current_version
    if is_deferred(topology_workers, index):
        upgrades.deferred.add(name)
        upgrades.pending_upgrade.add(name)
        return current_version
    catching_up = name in upgrades.upgrading and already_runs(topology.kind, current, desired)
    if (
        after_cp_upgrade_blocking
        or (upgrades.concurrency_reached and not catching_up)
        or not tracker.control_plane.is_stable
    ):
        upgrades.pending_upgrade.add(name)
        return current_version
    upgrades.upgrading.add(name)
    return desired


def already_runs(kind: WorkerKind, state: WorkerState, version: str) -> bool:
    """Whether every Machine (MachineDeployment) or Node (MachinePool) of a worker runs ``version`` already though its
    own version is another: its version write was lost after its infrastructure's went through (a MachinePool's
    infrastructure pool carries the image the version patches give it, and its provider rolls the instances to it).

    Such a worker counts as upgrading — its instances and its version disagree — and so holds a concurrency slot:
    waiting for a free one would wait for itself forever, so it takes the version at once. Upstream's topology waits
    (a deadlock it meets only after such a lost write)."""
    if kind is MACHINE_POOL:
        nodes = list(state.nodes.values())
        return bool(nodes) and all(
            node is not None
            and isinstance(kubelet := dig(node, "status", "nodeInfo", "kubeletVersion"), str)
            and versions.same_ignoring_build(kubelet, version)
            for node in nodes
        )
    return bool(state.machines) and all(dig(m, "spec", "version") == version for m in state.machines)
