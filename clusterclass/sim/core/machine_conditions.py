"""A Machine's v1beta2 conditions, as upstream v1.14's Machine controller sets them.

``BootstrapConfigReady`` and ``InfrastructureReady`` mirror the referenced objects' ``Ready`` (falling back to the
Machine's own ``bootstrapReady``/``infrastructureReady``, which v1beta2 spells ``status.initialization``);
``NodeReady`` and ``NodeHealthy`` read the workload cluster's Node once the Cluster's infrastructure is provisioned
and its control plane initialized; ``Deleting`` names the deletion's stage; ``Updating`` is False (no in-place
updates here); ``Ready`` summarises them all; ``Available`` is Ready for ``minReadySeconds``. ``UpToDate`` is the
owner's word (:func:`up_to_date`), set by whoever upstream has set it: the MachineSet/MachineDeployment pair, the
KubeadmControlPlane, or the MachinePool.

The inputs are plain values (the objects read, the Node found, the deletion stage), so each rule is a function of
what the controller saw; the controller writes the result with :func:`clusterclass.sim.conditions.set_v1beta2`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from clusterclass.api.condition_merge import Priority, Reasons, Strategy, default_priority, mirror, summary
from clusterclass.api.conditions import MetaCondition
from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.sim.conditions import (
    AVAILABLE,
    DELETING,
    OBJECT_DELETED,
    OBJECT_DOES_NOT_EXIST,
    READY,
    UP_TO_DATE,
    is_v1beta2_true,
    v1beta2_of,
)

BOOTSTRAP_CONFIG_READY = "BootstrapConfigReady"
INFRASTRUCTURE_READY = "InfrastructureReady"
NODE_READY = "NodeReady"
NODE_HEALTHY = "NodeHealthy"
UPDATING = "Updating"
HEALTH_CHECK_SUCCEEDED = "HealthCheckSucceeded"
INSPECTION_FAILED = "InspectionFailed"
CONNECTION_DOWN = "ConnectionDown"

#: the conditions a Machine's Ready summarises, in the order its message lists them
READINESS = (DELETING, UPDATING, BOOTSTRAP_CONFIG_READY, INFRASTRUCTURE_READY, NODE_HEALTHY, HEALTH_CHECK_SUCCEEDED)
NEGATIVE_POLARITY = (DELETING, UPDATING)
NODE_CONDITIONS = ("Ready", "MemoryPressure", "DiskPressure", "PIDPressure")


@dataclass(frozen=True)
class Referenced:
    """An object a Machine references, as the reconcile found it: ``obj`` None when it does not exist."""

    kind: str
    obj: Obj | None


@dataclass(frozen=True)
class DeletionStage:
    """Where a deletion stands: the Deleting condition's reason and message."""

    reason: str
    message: str


def _fallback(kind: str, ready: bool, field: str) -> MetaCondition:
    if ready:
        return MetaCondition("", "True", "Ready")
    return MetaCondition("", "False", "NotReady", f"{kind} status.initialization.{field} is false")


def bootstrap_config_ready(machine: Obj, config: Referenced | None) -> MetaCondition:
    """``BootstrapConfigReady``; ``config`` None when the Machine has no configRef (a data Secret is given)."""
    if config is None:
        return MetaCondition(BOOTSTRAP_CONFIG_READY, "True", "DataSecretProvided")
    created = dig(machine, "status", "bootstrapReady") is True
    if config.obj is not None:
        fallback = _fallback(config.kind, created, "dataSecretCreated")
        return mirror(v1beta2_of(config.obj), READY, BOOTSTRAP_CONFIG_READY, fallback)
    if dig(machine, "metadata", "deletionTimestamp") and created:
        return MetaCondition(BOOTSTRAP_CONFIG_READY, "False", OBJECT_DELETED, f"{config.kind} has been deleted")
    return MetaCondition(BOOTSTRAP_CONFIG_READY, "False", OBJECT_DOES_NOT_EXIST, f"{config.kind} does not exist")


def infrastructure_ready(machine: Obj, infra: Referenced) -> MetaCondition:
    provisioned = dig(machine, "status", "infrastructureReady") is True
    if infra.obj is not None:
        fallback = _fallback(infra.kind, provisioned, "provisioned")
        return mirror(v1beta2_of(infra.obj), READY, INFRASTRUCTURE_READY, fallback)
    if dig(machine, "metadata", "deletionTimestamp"):
        if provisioned:
            return MetaCondition(INFRASTRUCTURE_READY, "False", OBJECT_DELETED, f"{infra.kind} has been deleted")
        return MetaCondition(INFRASTRUCTURE_READY, "False", OBJECT_DOES_NOT_EXIST, f"{infra.kind} does not exist")
    if provisioned:
        message = f"{infra.kind} has been deleted while the Machine still exists"
        return MetaCondition(INFRASTRUCTURE_READY, "False", OBJECT_DELETED, message)
    return MetaCondition(INFRASTRUCTURE_READY, "False", OBJECT_DOES_NOT_EXIST, f"{infra.kind} does not exist")


def _both(status: str, reason: str, message: str) -> list[MetaCondition]:
    return [MetaCondition(NODE_READY, status, reason, message), MetaCondition(NODE_HEALTHY, status, reason, message)]  # type: ignore[arg-type]


def node_conditions(
    machine: Obj, cluster: Obj, node: Obj | None, *, connected: bool, infra_kind: str
) -> list[MetaCondition]:
    """``NodeReady`` and ``NodeHealthy`` (``connected``: the workload cluster answers)."""
    if dig(cluster, "status", "infrastructureReady") is not True:
        return _both(
            "Unknown",
            INSPECTION_FAILED,
            "Waiting for Cluster status.initialization.infrastructureProvisioned to be true",
        )
    if not is_v1beta2_true(cluster, "ControlPlaneInitialized"):
        return _both("Unknown", INSPECTION_FAILED, "Waiting for Cluster control plane to be initialized")
    if not connected:
        return _both("Unknown", CONNECTION_DOWN, "Remote connection not established yet")
    if node is not None:
        return [node_ready(node), node_healthy(node)]
    node_ref = dig(machine, "status", "nodeRef", "name")
    if dig(machine, "metadata", "deletionTimestamp"):
        if node_ref:
            return _both("False", "NodeDeleted", f"Node {node_ref} has been deleted")
        return _both("Unknown", "NodeDoesNotExist", "Node does not exist")
    if node_ref:
        return _both("False", "NodeDeleted", f"Node {node_ref} has been deleted while the Machine still exists")
    provider_id = dig(machine, "spec", "providerID")
    if provider_id:
        return _both("Unknown", INSPECTION_FAILED, f"Waiting for a Node with spec.providerID {provider_id} to exist")
    return _both("Unknown", INSPECTION_FAILED, f"Waiting for {infra_kind} to report spec.providerID")


def _node_condition(node: Obj, type_: str) -> Obj | None:
    found = dig(node, "status", "conditions") or []
    return next((x for x in found if isinstance(x, dict) and x.get("type") == type_), None)


def node_ready(node: Obj) -> MetaCondition:
    ready = _node_condition(node, "Ready")
    if ready is None:
        return MetaCondition(NODE_READY, "Unknown", "NodeReadyUnknown", "* Node.Ready: Condition not yet reported")
    status = ready.get("status")
    reason = {"True": "NodeReady", "False": "NodeNotReady"}.get(str(status), "NodeReadyUnknown")
    message = f"* Node.Ready: {ready['message']}" if status != "True" and ready.get("message") else ""
    return MetaCondition(NODE_READY, status if status in ("True", "False") else "Unknown", reason, message)


def node_healthy(node: Obj) -> MetaCondition:
    """``NodeHealthy`` from the Node's Ready and pressure conditions (one ``AllConditions`` line when every failing
    one says the same)."""
    lines: list[str] = []
    failing = unknown = counted = 0
    messages: set[str] = set()
    for type_ in NODE_CONDITIONS:
        found = _node_condition(node, type_)
        if found is None:
            lines.append(f"* Node.{type_}: Condition not yet reported")
            unknown += 1
            continue
        status = found.get("status")
        healthy = status == "True" if type_ == "Ready" else status == "False"
        if healthy:
            continue
        message = str(found.get("message") or f"Condition is {status}")
        counted += 1
        messages.add(message)
        lines.append(f"* Node.{type_}: {message}")
        if status == "Unknown":
            unknown += 1
        else:
            failing += 1
    if counted > 1 and len(messages) == 1:
        lines = [f"* Node.AllConditions: {next(iter(messages))}"]
    if failing:
        return MetaCondition(NODE_HEALTHY, "False", "NodeNotHealthy", "\n".join(lines))
    if unknown:
        return MetaCondition(NODE_HEALTHY, "Unknown", "NodeHealthyUnknown", "\n".join(lines))
    return MetaCondition(NODE_HEALTHY, "True", "NodeHealthy")


def deleting(machine: Obj, stage: DeletionStage | None) -> MetaCondition:
    if not dig(machine, "metadata", "deletionTimestamp"):
        return MetaCondition(DELETING, "False", "NotDeleting")
    stage = stage or DeletionStage("Deleting", "Deletion started")
    return MetaCondition(DELETING, "True", stage.reason, stage.message)


def up_to_date(differences: Sequence[str]) -> MetaCondition:
    """``UpToDate`` from what differs from the owner's desired template (upstream's condition messages)."""
    if differences:
        return MetaCondition(UP_TO_DATE, "False", "NotUpToDate", "\n".join(f"* {d}" for d in differences))
    return MetaCondition(UP_TO_DATE, "True", "UpToDate")


def _ready_strategy(machine: Obj) -> Strategy:
    """Ready's merge: while the Machine is deleting, its parts being deleted or gone are expected, not issues."""
    base = default_priority(NEGATIVE_POLARITY)
    expected_gone = {
        BOOTSTRAP_CONFIG_READY: (OBJECT_DELETED, OBJECT_DOES_NOT_EXIST),
        INFRASTRUCTURE_READY: (OBJECT_DELETED, OBJECT_DOES_NOT_EXIST),
        NODE_HEALTHY: ("NodeDeleted", "NodeDoesNotExist"),
    }
    is_deleting = bool(dig(machine, "metadata", "deletionTimestamp"))

    def priority(condition: Obj) -> Priority:
        if is_deleting and condition.get("reason") in expected_gone.get(str(condition.get("type")), ()):
            return Priority.INFO
        return base(condition)

    return Strategy(priority=priority, reasons=Reasons("NotReady", "ReadyUnknown", "Ready"))


def ready(machine: Obj, conditions: Sequence[Obj]) -> MetaCondition:
    """``Ready``: a summary of :data:`READINESS` and the Machine's readiness gates."""
    gates = [g for g in dig(machine, "spec", "readinessGates") or [] if isinstance(g, dict)]
    for_types = [*READINESS, *(str(g.get("conditionType")) for g in gates)]
    negative = [*NEGATIVE_POLARITY, *(str(g.get("conditionType")) for g in gates if g.get("polarity") == "Negative")]
    strategy = _ready_strategy(machine)
    if len(negative) > len(NEGATIVE_POLARITY):
        gate_priority = default_priority(negative)
        inner = strategy.priority
        strategy = Strategy(
            priority=lambda c: gate_priority(c) if c.get("type") in negative[2:] else inner(c),
            reasons=strategy.reasons,
        )
    overrides: list[Obj] = []
    if dig(machine, "metadata", "deletionTimestamp"):
        current = next((c for c in conditions if c.get("type") == DELETING), None)
        message = (
            f"Machine deletion in progress, stage: {current['reason']}" if current else "Machine deletion in progress"
        )
        overrides.append({"type": DELETING, "status": "True", "reason": "Deleting", "message": message})
    return summary(
        conditions,
        READY,
        for_types,
        owner=("Machine", name_of(machine)),
        strategy=strategy,
        ignore_if_missing=(HEALTH_CHECK_SUCCEEDED,),
        overrides=overrides,
    )


def available(machine: Obj, conditions: Sequence[Obj], now: datetime) -> tuple[MetaCondition, float | None]:
    """``Available`` (and the seconds until it may become so): Ready for ``spec.minReadySeconds``."""
    current = next((c for c in conditions if c.get("type") == READY), None)
    if current is None or current.get("status") != "True":
        return MetaCondition(AVAILABLE, "False", "NotReady"), None
    min_ready = int(dig(machine, "spec", "minReadySeconds") or 0)
    since = _parse(str(current.get("lastTransitionTime") or ""))
    waited = (now - since).total_seconds() if since is not None else float(min_ready)
    if waited >= min_ready:
        return MetaCondition(AVAILABLE, "True", "Available"), None
    return MetaCondition(AVAILABLE, "False", "WaitingForMinReadySeconds"), min_ready - waited


def _parse(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
