"""A Cluster's v1beta2 status, as upstream v1.14's Cluster controller sets it: replica counters and conditions.

``status.controlPlane`` surfaces the control plane's own counters (through its contract: a v1beta2 control plane's
``status.readyReplicas`` & co., kept under ``status.v1beta2`` of its v1beta1 shape); ``status.workers`` sums the
MachineDeployments' and MachinePools'. The conditions:

- ``InfrastructureReady`` and ``ControlPlaneAvailable`` mirror the InfrastructureCluster's ``Ready`` and the
  control plane's ``Available`` (falling back to the Cluster's own provisioned/initialized flags);
- ``ControlPlaneInitialized`` is sticky once True;
- ``WorkersAvailable`` aggregates the MachineDeployments' ``Available`` — MachinePools are left out, as upstream
  v1.14 leaves them out (they have no ``Available`` condition there yet);
- ``ControlPlaneMachinesReady``/``WorkerMachinesReady`` and their ``...UpToDate`` twins aggregate the Machines
  (MachinePool Machines are left out, as upstream does);
- ``RemoteConnectionProbe`` is True once the workload cluster answers;
- ``Deleting`` names the deletion's stage;
- ``Available`` summarises Deleting, RemoteConnectionProbe, InfrastructureReady, ControlPlaneAvailable,
  WorkersAvailable, TopologyReconciled and the availability gates.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime

from clusterclass.api import constants as c
from clusterclass.api.condition_merge import Priority, Reasons, Source, Strategy, aggregate, default_priority, mirror
from clusterclass.api.condition_merge import summary as summarise
from clusterclass.api.conditions import MetaCondition
from clusterclass.api.objects import Obj, dig, labels_of, name_of
from clusterclass.sim import conditions as v1beta2

INFRASTRUCTURE_READY = "InfrastructureReady"
CONTROL_PLANE_AVAILABLE = "ControlPlaneAvailable"
CONTROL_PLANE_INITIALIZED = "ControlPlaneInitialized"
WORKERS_AVAILABLE = "WorkersAvailable"
REMOTE_CONNECTION_PROBE = "RemoteConnectionProbe"
TOPOLOGY_RECONCILED = "TopologyReconciled"
WAITING_FOR_TOPOLOGY = "Waiting for cluster topology to be reconciled"
#: the conditions the Cluster's Available summarises (before its availability gates)
AVAILABILITY = (
    v1beta2.DELETING,
    REMOTE_CONNECTION_PROBE,
    INFRASTRUCTURE_READY,
    CONTROL_PLANE_AVAILABLE,
    WORKERS_AVAILABLE,
    TOPOLOGY_RECONCILED,
)


@dataclass(frozen=True)
class Descendants:
    """What the Cluster controller read of a Cluster: its infrastructure and control plane (None: missing, or
    not referenced yet), its workers and Machines, and whether its workload cluster answers."""

    infrastructure: Obj | None
    control_plane: Obj | None
    machine_deployments: Sequence[Obj]
    machine_pools: Sequence[Obj]
    machines: Sequence[Obj]
    connected: bool


def _int(value: object) -> int | None:
    return int(value) if isinstance(value, int) and not isinstance(value, bool) else None


def control_plane_counters(cluster: Obj, control_plane: Obj | None) -> Obj:
    """``status.controlPlane``: the control plane's desired, current, ready, available and up-to-date replicas."""
    if control_plane is None:
        return {}
    found = {
        "desiredReplicas": _int(dig(control_plane, "spec", "replicas")),
        "replicas": _int(dig(control_plane, "status", "replicas")),
        "readyReplicas": _int(dig(control_plane, "status", "v1beta2", "readyReplicas")),
        "availableReplicas": _int(dig(control_plane, "status", "v1beta2", "availableReplicas")),
        "upToDateReplicas": _int(dig(control_plane, "status", "v1beta2", "upToDateReplicas")),
    }
    return {key: value for key, value in found.items() if value is not None}


def worker_counters(workers: Sequence[Obj]) -> Obj:
    """``status.workers``: the MachineDeployments' and MachinePools' counters summed (a counter none reports is
    left out)."""
    totals: dict[str, int] = {}
    for worker in workers:
        for key, value in (
            ("desiredReplicas", dig(worker, "spec", "replicas")),
            ("replicas", dig(worker, "status", "replicas")),
            ("readyReplicas", dig(worker, "status", "v1beta2", "readyReplicas")),
            ("availableReplicas", dig(worker, "status", "v1beta2", "availableReplicas")),
            ("upToDateReplicas", dig(worker, "status", "v1beta2", "upToDateReplicas")),
        ):
            number = _int(value)
            if number is not None:
                totals[key] = totals.get(key, 0) + number
    return totals


def _ref_kind(cluster: Obj, field: str) -> str:
    return str(dig(cluster, "spec", field, "kind") or "")


def _missing(cluster: Obj, type_: str, kind: str, done: bool, done_reason: str = "ObjectDeleted") -> MetaCondition:
    """A referenced object that is not there: deleted (it was there once), or not created yet."""
    deleting = bool(dig(cluster, "metadata", "deletionTimestamp"))
    if deleting:
        if done:
            return MetaCondition(type_, "False", done_reason, f"{kind} has been deleted")
        return MetaCondition(type_, "False", v1beta2.OBJECT_DOES_NOT_EXIST, f"{kind} does not exist")
    if done:
        return MetaCondition(type_, "False", done_reason, f"{kind} has been deleted while the cluster still exists")
    return MetaCondition(type_, "False", v1beta2.OBJECT_DOES_NOT_EXIST, f"{kind} does not exist")


def _waiting_for_topology(cluster: Obj, type_: str, status: str = "False") -> MetaCondition:
    message = "" if dig(cluster, "metadata", "deletionTimestamp") else WAITING_FOR_TOPOLOGY
    return MetaCondition(type_, status, v1beta2.OBJECT_DOES_NOT_EXIST, message)  # type: ignore[arg-type]


def _has_topology(cluster: Obj) -> bool:
    return isinstance(dig(cluster, "spec", "topology"), dict)


def infrastructure_ready(cluster: Obj, infrastructure: Obj | None) -> MetaCondition:
    kind = _ref_kind(cluster, "infrastructureRef")
    if not dig(cluster, "spec", "infrastructureRef") and _has_topology(cluster):
        return _waiting_for_topology(cluster, INFRASTRUCTURE_READY)
    provisioned = dig(cluster, "status", "infrastructureReady") is True
    if infrastructure is not None:
        fallback = (
            MetaCondition("", "True", "Ready")
            if provisioned
            else MetaCondition("", "False", "NotReady", f"{kind} status.initialization.provisioned is false")
        )
        return mirror(v1beta2.v1beta2_of(infrastructure), v1beta2.READY, INFRASTRUCTURE_READY, fallback)
    return _missing(cluster, INFRASTRUCTURE_READY, kind, provisioned)


def control_plane_available(cluster: Obj, control_plane: Obj | None) -> MetaCondition:
    kind = _ref_kind(cluster, "controlPlaneRef")
    if not dig(cluster, "spec", "controlPlaneRef") and _has_topology(cluster):
        return _waiting_for_topology(cluster, CONTROL_PLANE_AVAILABLE)
    initialized = dig(cluster, "status", "controlPlaneReady") is True
    if control_plane is not None:
        fallback = (
            MetaCondition("", "True", "Available")
            if initialized
            else MetaCondition(
                "", "False", "NotAvailable", f"{kind} status.initialization.controlPlaneInitialized is false"
            )
        )
        return mirror(v1beta2.v1beta2_of(control_plane), v1beta2.AVAILABLE, CONTROL_PLANE_AVAILABLE, fallback)
    return _missing(cluster, CONTROL_PLANE_AVAILABLE, kind, initialized)


def control_plane_initialized(cluster: Obj, descendants: Descendants) -> MetaCondition | None:
    """``ControlPlaneInitialized`` (None: it is True already, and stays so)."""
    if v1beta2.is_v1beta2_true(cluster, CONTROL_PLANE_INITIALIZED):
        return None
    if dig(cluster, "spec", "controlPlaneRef"):
        if descendants.control_plane is None:
            kind = _ref_kind(cluster, "controlPlaneRef")
            return MetaCondition(
                CONTROL_PLANE_INITIALIZED, "Unknown", v1beta2.OBJECT_DOES_NOT_EXIST, f"{kind} does not exist"
            )
        if dig(descendants.control_plane, "status", "initialized") is True:
            return MetaCondition(CONTROL_PLANE_INITIALIZED, "True", "Initialized")
        return MetaCondition(CONTROL_PLANE_INITIALIZED, "False", "NotInitialized", "Control plane not yet initialized")
    if _has_topology(cluster):
        return _waiting_for_topology(cluster, CONTROL_PLANE_INITIALIZED, "Unknown")
    if any(dig(m, "status", "nodeRef") for m in _control_plane_machines(descendants.machines)):
        return MetaCondition(CONTROL_PLANE_INITIALIZED, "True", "Initialized")
    return MetaCondition(
        CONTROL_PLANE_INITIALIZED,
        "False",
        "NotInitialized",
        "Waiting for the first control plane machine to have status.nodeRef set",
    )


def workers_available(machine_deployments: Sequence[Obj]) -> MetaCondition:
    if not machine_deployments:
        return MetaCondition(WORKERS_AVAILABLE, "True", "NoWorkers")
    sources = [Source(c.KIND_MACHINE_DEPLOYMENT, name_of(md), v1beta2.v1beta2_of(md)) for md in machine_deployments]
    reasons = Reasons("NotAvailable", "AvailableUnknown", "Available")
    return aggregate(sources, v1beta2.AVAILABLE, WORKERS_AVAILABLE, Strategy(reasons=reasons))


def _control_plane_machines(machines: Sequence[Obj]) -> list[Obj]:
    return [m for m in machines if c.LABEL_CONTROL_PLANE in labels_of(m)]


def _worker_machines(machines: Sequence[Obj]) -> list[Obj]:
    """Worker Machines, MachinePool Machines left out (upstream v1.14 has no UpToDate for them in these)."""
    return [
        m
        for m in machines
        if c.LABEL_CONTROL_PLANE not in labels_of(m) and c.LABEL_MACHINE_POOL_NAME not in labels_of(m)
    ]


def machines_conditions(machines: Sequence[Obj], now: datetime) -> list[MetaCondition]:
    control_plane, workers = _control_plane_machines(machines), _worker_machines(machines)
    ready, up_to_date = v1beta2.READY_REASONS, v1beta2.UP_TO_DATE_REASONS
    return [
        v1beta2.machines_condition(control_plane, v1beta2.READY, "ControlPlaneMachinesReady", ready),
        v1beta2.machines_condition(workers, v1beta2.READY, "WorkerMachinesReady", ready),
        v1beta2.machines_condition(
            v1beta2.settled_for_up_to_date(control_plane, now),
            v1beta2.UP_TO_DATE,
            "ControlPlaneMachinesUpToDate",
            up_to_date,
        ),
        v1beta2.machines_condition(
            v1beta2.settled_for_up_to_date(workers, now), v1beta2.UP_TO_DATE, "WorkerMachinesUpToDate", up_to_date
        ),
    ]


def remote_connection_probe(cluster: Obj, connected: bool) -> MetaCondition | None:
    """True once the workload cluster answers; before it ever has, False (set once, then left)."""
    if connected:
        return MetaCondition(REMOTE_CONNECTION_PROBE, "True", "ProbeSucceeded")
    if any(x.get("type") == REMOTE_CONNECTION_PROBE for x in v1beta2.v1beta2_of(cluster)):
        return None
    return MetaCondition(REMOTE_CONNECTION_PROBE, "False", "ProbeFailed", "Remote connection not established yet")


def _available_strategy(cluster: Obj, negative: Sequence[str]) -> Strategy:
    base = default_priority(negative)
    deleting = bool(dig(cluster, "metadata", "deletionTimestamp"))
    gone = (v1beta2.OBJECT_DELETED, v1beta2.OBJECT_DOES_NOT_EXIST)

    def priority(condition: Obj) -> Priority:
        type_, reason = condition.get("type"), condition.get("reason")
        if deleting and type_ in (INFRASTRUCTURE_READY, CONTROL_PLANE_AVAILABLE) and reason in gone:
            return Priority.INFO
        if (
            type_ == TOPOLOGY_RECONCILED
            and condition.get("status") == "False"
            and reason not in ("ReconcileFailed", "ClusterClassNotReconciled")
        ):
            return Priority.INFO
        return base(condition)

    return Strategy(priority=priority, reasons=Reasons("NotAvailable", "AvailableUnknown", "Available"))


def available(cluster: Obj, cluster_class: Obj | None, conditions: Sequence[Obj]) -> MetaCondition:
    gates = dig(cluster, "spec", "availabilityGates")
    if gates is None and cluster_class is not None:
        gates = dig(cluster_class, "spec", "availabilityGates")
    gates = [g for g in gates or [] if isinstance(g, dict)]
    for_types = [*AVAILABILITY, *(str(g.get("conditionType")) for g in gates)]
    negative = [v1beta2.DELETING, *(str(g.get("conditionType")) for g in gates if g.get("polarity") == "Negative")]
    ignore = () if _has_topology(cluster) else (TOPOLOGY_RECONCILED,)
    return summarise(
        conditions,
        v1beta2.AVAILABLE,
        for_types,
        owner=(c.KIND_CLUSTER, name_of(cluster)),
        strategy=_available_strategy(cluster, negative),
        ignore_if_missing=ignore,
    )


@dataclass(frozen=True)
class DeletionStage:
    reason: str
    message: str


def deleting(cluster: Obj, stage: DeletionStage | None) -> MetaCondition:
    if not dig(cluster, "metadata", "deletionTimestamp"):
        return MetaCondition(v1beta2.DELETING, "False", "NotDeleting")
    stage = stage or DeletionStage("Deleting", "")
    return MetaCondition(v1beta2.DELETING, "True", stage.reason, stage.message)


def pending_names(kind_label: str, names: Sequence[str]) -> str:
    """``* MachineDeployments: a, b, c, d, e, ... (2 more)``: a line of a deletion's message."""
    shown = sorted(names)
    text = ", ".join(shown[:5]) + (f", ... ({len(shown) - 5} more)" if len(shown) > 5 else "")
    return f"* {kind_label}: {text}"
