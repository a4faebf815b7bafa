"""The Cluster condition ``TopologyReconciled`` (spec §7.1): what the topology controller says it is doing.

:func:`topology_reconciled` is pure: it decides the condition from what one reconcile saw, top down,
first match wins: the Cluster is being deleted; the reconcile failed (the error text); the ClusterClass
is not reconciled yet; a lifecycle hook blocks; an upgrade is in flight (the control plane, or
MachineDeployments, or MachinePools held, waiting to be created, or deferred, with why); otherwise True.
Name lists are sorted and cut after five (``a, b, c, d, e, ...``); object names for workers pending an
upgrade or deferred, topology names for those waiting to be created (their objects do not exist yet).

That is the v1beta1 condition as upstream v1.6 writes it, on a management cluster that serves Clusters only in
v1beta1. :func:`topology_reconciled_v1beta2` decides the v1beta2 condition (``status.conditions`` of a v1beta2
Cluster) as upstream v1.14 does, and on a management cluster that serves v1beta2 the v1beta1 condition kept under
``status.deprecated.v1beta1`` is that decision in v1beta1's form (:func:`legacy_condition`), as v1.14 writes both
from one decision: an upgrade in flight, or an ``AfterClusterUpgrade`` hook still to call, is ``ClusterUpgrading``
in both.
"""

from __future__ import annotations

from collections.abc import Iterable

from clusterclass.api import constants as c
from clusterclass.api.conditions import Condition, MetaCondition, Severity, false, true
from clusterclass.api.objects import Obj, dig
from clusterclass.topology.hooks import HookTracker, is_pending
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


def blocking_message(hooks: HookTracker, action: str) -> str:
    """``Following hooks are blocking <action>: <Hook>: <message>; ...`` (upstream v1.14's aggregate message, hooks
    in name order), or ``""`` when none blocks."""
    blocking = sorted((name, r.message) for name, r in hooks.responses.items() if r.blocking)
    if not blocking:
        return ""
    parts = [f"{name}: {message}" if message else name for name, message in blocking]
    return f"Following hooks are blocking {action}: {'; '.join(parts)}"


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


# --- the v1beta2 condition ---------------------------------------------------------------------------------------

#: the v1beta2 reasons (upstream v1.14 ``api/core/v1beta2``), where they differ from the v1beta1 ones
RECONCILE_SUCCEEDED = "ReconcileSucceeded"
RECONCILE_FAILED_V1BETA2 = "ReconcileFailed"
CLUSTER_CREATING = "ClusterCreating"
CLUSTER_UPGRADING = "ClusterUpgrading"
DELETING = "Deleting"


def topology_reconciled_v1beta2(
    *,
    cluster: Obj,
    error: BaseException | None = None,
    cluster_class: Obj | None = None,
    upgrades: UpgradeTracker | None = None,
    hooks: HookTracker | None = None,
    control_plane: Obj | None = None,
) -> MetaCondition:
    """``TopologyReconciled`` as a v1beta2 condition (``status.conditions`` of a v1beta2 Cluster), decided as upstream
    v1.14 decides it: the same cases as :func:`topology_reconciled`, with v1.14's reasons and its upgrade message
    (``Cluster is upgrading to <v>`` and a bullet per component). ``control_plane`` is the desired control plane
    (its kind and the version it is being moved to)."""
    blocking = hooks is not None and any(response.blocking for response in hooks.responses.values())
    if dig(cluster, "metadata", "deletionTimestamp"):
        message = "Cluster is deleting"
        if blocking and hooks is not None:
            message += ". " + blocking_message(hooks, "delete")
        return MetaCondition(TOPOLOGY_RECONCILED, "False", DELETING, message)
    if error is not None:
        return MetaCondition(TOPOLOGY_RECONCILED, "False", RECONCILE_FAILED_V1BETA2, str(error))
    if cluster_class is not None and not cluster_class_reconciled(cluster_class):
        return MetaCondition(
            TOPOLOGY_RECONCILED, "False", CLUSTER_CLASS_NOT_RECONCILED, CLUSTER_CLASS_NOT_RECONCILED_MESSAGE
        )
    created = dig(cluster, "spec", "infrastructureRef") or dig(cluster, "spec", "controlPlaneRef")
    if not created and blocking and hooks is not None:
        message = blocking_message(hooks, "Cluster topology creation")
        return MetaCondition(TOPOLOGY_RECONCILED, "False", CLUSTER_CREATING, message)
    if upgrades is not None:
        upgrading = _upgrade_message(upgrades, hooks, cluster, control_plane)
        if upgrading is not None:
            return upgrading
    if blocking and hooks is not None:
        message = blocking_message(hooks, "Cluster topology reconcile")
        return MetaCondition(TOPOLOGY_RECONCILED, "False", LIFECYCLE_HOOK_BLOCKING, message)
    return MetaCondition(TOPOLOGY_RECONCILED, "True", RECONCILE_SUCCEEDED)


#: a v1beta2 reason whose v1beta1 form (upstream v1.14's ``*V1Beta1Reason`` constants) is spelled otherwise
_LEGACY_REASONS = {RECONCILE_FAILED_V1BETA2: RECONCILE_FAILED}


def legacy_condition(condition: MetaCondition) -> Condition:
    """The v1beta1 form of a v1beta2 ``TopologyReconciled`` decision, as upstream v1.14 writes it beside it: same
    status and message, the v1beta1 spelling of the reason, severity Error for a failed reconcile, else Info."""
    if condition.status == "True":
        return true(condition.type)
    reason = _LEGACY_REASONS.get(condition.reason, condition.reason)
    severity: Severity = "Error" if condition.reason == RECONCILE_FAILED_V1BETA2 else "Info"
    return false(condition.type, reason, severity, condition.message)


def _names(kind: str, names: Iterable[str]) -> str:
    """``MachinePool mp-0``, ``MachinePools a, b``, ``MachinePools a, b, c, ... (2 more)``: upstream v1.14's list."""
    ordered = sorted(names)
    if len(ordered) == 1:
        return f"{kind} {ordered[0]}"
    if len(ordered) <= 3:
        return f"{kind}s {', '.join(ordered)}"
    return f"{kind}s {', '.join(ordered[:3])}, ... ({len(ordered) - 3} more)"


def _upgrade_message(
    upgrades: UpgradeTracker, hooks: HookTracker | None, cluster: Obj, control_plane: Obj | None
) -> MetaCondition | None:
    cp = upgrades.control_plane
    md, mp = upgrades.machine_deployments, upgrades.machine_pools
    in_flight = (
        cp.is_pending_upgrade
        or cp.is_starting_upgrade
        or cp.is_upgrading
        or any(w.pending_upgrade or w.upgrading or w.deferred or w.pending_create for w in (md, mp))
        or is_pending(cluster, c.HOOK_AFTER_CLUSTER_UPGRADE)  # the upgrade is done only once that hook has been called
    )
    if not in_flight:
        return None
    version = str(dig(cluster, "spec", "topology", "version") or "")
    cp_version = str(dig(control_plane, "spec", "version") or version)
    cp_kind = str((control_plane or {}).get("kind") or "Control plane")
    lines = [f"Cluster is upgrading to {version}"]
    blocking = hooks is not None and any(r.blocking for r in hooks.responses.values())
    if blocking and hooks is not None:
        lines.append(f"  * {blocking_message(hooks, 'upgrade')}")
    if cp.is_starting_upgrade or cp.is_upgrading:
        lines.append(f"  * {cp_kind} upgrading to version {cp_version}")
    elif cp.is_pending_upgrade:
        lines.append(f"  * {cp_kind} pending upgrade to version {version}")
    reason = CLUSTER_UPGRADING
    deferred_reason = None
    for kind, workers, deferred_kind_reason in (
        ("MachineDeployment", md, MACHINE_DEPLOYMENTS_UPGRADE_DEFERRED),
        ("MachinePool", mp, MACHINE_POOLS_UPGRADE_DEFERRED),
    ):
        upgrading = set(workers.upgrading)
        deferred = set(workers.deferred) - upgrading
        pending = set(workers.pending_upgrade) - upgrading - deferred
        if upgrading:
            lines.append(f"  * {_names(kind, upgrading)} upgrading to version {cp_version}")
        if pending:
            lines.append(f"  * {_names(kind, pending)} pending upgrade to version {version}")
        if deferred:
            annotations = (
                "topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence"
                if kind == "MachinePool"
                else "defer-upgrade or hold-upgrade-sequence"
            )
            lines.append(
                f"  * {_names(kind, deferred)} upgrade to version {cp_version} deferred using {annotations} annotations"
            )
            quiet = not blocking and not (cp.is_starting_upgrade or cp.is_upgrading) and not upgrading and not pending
            if quiet and deferred_reason is None:
                deferred_reason = deferred_kind_reason
        if workers.pending_create:
            names = _names(kind, workers.pending_create)
            lines.append(f"  * {names} creation deferred while control plane upgrade is in progress")
    return MetaCondition(TOPOLOGY_RECONCILED, "False", deferred_reason or reason, "\n".join(lines))
