"""The Cluster condition ``TopologyReconciled`` (spec §7.1): what the topology controller says it is doing.

:func:`topology_reconciled` is pure: it decides the condition from what one reconcile saw, top down,
first match wins: the Cluster is being deleted; the reconcile failed (the error text); the ClusterClass
is not reconciled yet; a lifecycle hook blocks; an upgrade is in flight (the control plane, or
MachineDeployments, or MachinePools held, waiting to be created, or deferred, with why); otherwise True.
Name lists are sorted and cut after five (``a, b, c, d, e, ...``); object names for workers pending an
upgrade or deferred, topology names for those waiting to be created (their objects do not exist yet).
"""

from __future__ import annotations

from collections.abc import Iterable

from clusterclass.api.conditions import Condition, false, true
from clusterclass.api.objects import Obj, dig
from clusterclass.topology.hooks import HookTracker
from clusterclass.topology.upgrade import UpgradeTracker

TOPOLOGY_RECONCILED = "TopologyReconciled"

DELETED = "Deleted"
RECONCILE_FAILED = "TopologyReconcileFailed"
CLUSTER_CLASS_NOT_RECONCILED = "ClusterClassNotReconciled"
LIFECYCLE_HOOK_BLOCKING = "LifecycleHookBlocking"
CONTROL_PLANE_UPGRADE_PENDING = "ControlPlaneUpgradePending"
MACHINE_DEPLOYMENTS_UPGRADE_PENDING = "MachineDeploymentsUpgradePending"
MACHINE_DEPLOYMENTS_CREATE_PENDING = "MachineDeploymentsCreatePending"
MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED = "MachineDeploymentsUpgradeDeferred"
MACHINE_POOLS_UPGRADE_PENDING = "MachinePoolsUpgradePending"
MACHINE_POOLS_CREATE_PENDING = "MachinePoolsCreatePending"
MACHINE_POOLS_UPGRADE_DEFERRED = "MachinePoolsUpgradeDeferred"

#: upstream's text, missing space before ".status" included (its tests compare the exact string)
CLUSTER_CLASS_NOT_RECONCILED_MESSAGE = (
    "ClusterClass not reconciled. If this condition persists please check ClusterClass status. A ClusterClass is "
    "reconciled if.status.observedGeneration == .metadata.generation is true. If this is not the case either "
    "ClusterClass reconciliation failed or the ClusterClass is paused"
)

#: how many names a message lists before "..."
MAX_NAMES = 5


def name_list(names: Iterable[str]) -> str:
    """Sorted names joined by ``, ``; after the fifth, ``...``."""
    ordered = sorted(names)
    shown = ordered[:MAX_NAMES]
    if len(ordered) > MAX_NAMES:
        shown.append("...")
    return ", ".join(shown)


def cluster_class_reconciled(cluster_class: Obj) -> bool:
    return bool(dig(cluster_class, "metadata", "generation") == dig(cluster_class, "status", "observedGeneration"))


def hook_blocking_message(hooks: HookTracker) -> str:
    """``hook "<Name>" is blocking: <message>``, for every blocking hook, joined by ``; ``."""
    return "; ".join(
        f'hook "{name}" is blocking: {response.message}'
        for name, response in hooks.responses.items()
        if response.blocking
    )


def topology_reconciled(
    *,
    cluster: Obj,
    error: BaseException | None = None,
    cluster_class: Obj | None = None,
    upgrades: UpgradeTracker | None = None,
    hooks: HookTracker | None = None,
) -> Condition:
    """The ``TopologyReconciled`` condition after one reconcile (module doc)."""
    if dig(cluster, "metadata", "deletionTimestamp"):
        return false(TOPOLOGY_RECONCILED, DELETED, "Info")
    if error is not None:
        return false(TOPOLOGY_RECONCILED, RECONCILE_FAILED, "Error", str(error))
    if cluster_class is not None and not cluster_class_reconciled(cluster_class):
        return false(TOPOLOGY_RECONCILED, CLUSTER_CLASS_NOT_RECONCILED, "Info", CLUSTER_CLASS_NOT_RECONCILED_MESSAGE)
    if hooks is not None and any(response.blocking for response in hooks.responses.values()):
        return false(TOPOLOGY_RECONCILED, LIFECYCLE_HOOK_BLOCKING, "Info", hook_blocking_message(hooks))
    if upgrades is not None:
        held = _upgrade_in_flight(upgrades, str(dig(cluster, "spec", "topology", "version") or ""))
        if held is not None:
            return held
    return true(TOPOLOGY_RECONCILED)


def _upgrade_in_flight(upgrades: UpgradeTracker, version: str) -> Condition | None:
    cp = upgrades.control_plane
    # (reason, noun, text, names): the first entry with names decides; the control plane has no names
    held: list[tuple[str, str, str, set[str]]] = []
    if cp.is_pending_upgrade:
        held.append(
            (CONTROL_PLANE_UPGRADE_PENDING, "Control plane", "rollout and upgrade to version {v} on hold.", {""})
        )
    for noun, workers, reasons in (
        ("MachineDeployment(s)", upgrades.machine_deployments, _MACHINE_DEPLOYMENT_REASONS),
        ("MachinePool(s)", upgrades.machine_pools, _MACHINE_POOL_REASONS),
    ):
        held += [
            (reasons[0], noun, _ON_HOLD, workers.pending_upgrade),
            (reasons[1], noun, "for Topologies {names} creation on hold.", workers.pending_create),
            (reasons[2], noun, "{names} rollout and upgrade to version {v} deferred.", workers.deferred),
        ]
    first = next(((reason, noun, text, names) for reason, noun, text, names in held if names), None)
    if first is None:
        return None
    reason, noun, text, names = first
    message = f"{noun} " + text.format(names=name_list(names), v=version)
    if cp.is_provisioning:
        message += " Control plane is completing initial provisioning"
    elif cp.is_upgrading:
        message += f" Control plane is upgrading to version {cp.version}"
    elif cp.is_scaling:
        message += " Control plane is reconciling desired replicas"
    elif upgrades.machine_deployments.upgrading:
        message += f" MachineDeployment(s) {name_list(upgrades.machine_deployments.upgrading)} are upgrading"
    elif upgrades.machine_pools.upgrading:
        message += f" MachinePool(s) {name_list(upgrades.machine_pools.upgrading)} are upgrading"
    return false(TOPOLOGY_RECONCILED, reason, "Info", message)


_ON_HOLD = "{names} rollout and upgrade to version {v} on hold."
_MACHINE_DEPLOYMENT_REASONS = (
    MACHINE_DEPLOYMENTS_UPGRADE_PENDING,
    MACHINE_DEPLOYMENTS_CREATE_PENDING,
    MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED,
)
_MACHINE_POOL_REASONS = (MACHINE_POOLS_UPGRADE_PENDING, MACHINE_POOLS_CREATE_PENDING, MACHINE_POOLS_UPGRADE_DEFERRED)
