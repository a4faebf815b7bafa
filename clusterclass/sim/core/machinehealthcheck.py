"""The core MachineHealthCheck controller: find unhealthy Machines and mark them for their owner to remediate.

A MachineHealthCheck selects the Machines of its Cluster (its ``selector`` and the cluster-name label, in its
namespace) once the Cluster's infrastructure is ready and its control plane initialized. A Machine needs remediation
when it has a failure, carries ``cluster.x-k8s.io/remediate-machine`` (a user asking for it), names a Node that is
gone, has no Node ``nodeStartupTimeout`` after it (or the control plane) started, or its Node has been in one of
``unhealthyConditions`` for longer than that condition's timeout. Deleting Machines and those annotated
``cluster.x-k8s.io/skip-remediation`` or paused are not judged.

When the unhealthy ones are within ``maxUnhealthy`` (default 100% of the targets) or ``unhealthyRange``, each gets
``HealthCheckSucceeded=False`` and ``OwnerRemediated=False/WaitingForRemediation`` — the owner (the MachineSet, the
MachinePool for its Machines, here in :mod:`~clusterclass.sim.core.machineset` and
:mod:`~clusterclass.sim.core.machinepool`) deletes it and a replacement comes up. Beyond the limit nothing is marked
for remediation and ``RemediationAllowed`` is False/``TooManyUnhealthy``. Healthy Machines get
``HealthCheckSucceeded=True``. The status counts ``expectedMachines``, ``currentHealthy`` and
``remediationsAllowed`` and lists the ``targets``; the reconcile comes back when the next timeout would expire.

Upstream's controller (``internal/controllers/machinehealthcheck``) is the model; not simulated: external
remediation (a ``remediationTemplate`` check marks Machines unhealthy but creates no remediation request) and
``unhealthyMachineConditions``.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta

from goduration import Duration, DurationParseError

from clusterclass.api import constants as c
from clusterclass.api.conditions import (
    Condition,
    MetaCondition,
    false,
    find,
    is_true,
    set_conditions,
    true,
)
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, annotations_of, dig, labels_of, name_of, namespace_of
from clusterclass.controllers.runtime.controller import key_of
from clusterclass.kube.selectors import SelectorError, from_label_selector
from clusterclass.sim import conditions as v1beta2
from clusterclass.sim.base import (
    ProviderController,
    delete_if_present,
    deleting,
    ensure_owner,
    requeue_min,
    set_label,
)
from clusterclass.sim.conditions import parse_time
from clusterclass.sim.core.cluster import CONTROL_PLANE_INITIALIZED
from clusterclass.sim.core.machine import HEALTH_CHECK_SUCCEEDED, OWNER_REMEDIATED
from clusterclass.sim.workload import WorkloadCluster

REMEDIATION_ALLOWED = "RemediationAllowed"
ANNOTATION_REMEDIATE_MACHINE = "cluster.x-k8s.io/remediate-machine"
ANNOTATION_SKIP_REMEDIATION = "cluster.x-k8s.io/skip-remediation"
INFRASTRUCTURE_READY = "InfrastructureReady"
#: upstream v1.14's default ``nodeStartupTimeout`` (its webhook writes it on every check)
DEFAULT_NODE_STARTUP_TIMEOUT = "10m0s"
WAITING_FOR_REMEDIATION = "WaitingForRemediation"


@dataclass(frozen=True)
class Verdict:
    """What a check found about one Machine: unhealthy with a reason and message, or healthy; and how many seconds
    until a pending timeout would make it unhealthy (None: nothing pending)."""

    unhealthy: bool
    reason: str = ""
    message: str = ""
    next_check: float | None = None


HEALTHY = Verdict(False)


def _seconds(duration: object) -> float | None:
    if not isinstance(duration, str):
        return None
    try:
        return Duration.parse(duration).total_seconds()
    except (DurationParseError, ValueError, OverflowError):
        return None


def max_unhealthy(check: Obj, total: int) -> int:
    """``maxUnhealthy`` as a number of Machines (an int, or a percentage of ``total`` rounded down); 100% unset."""
    value = dig(check, "spec", "maxUnhealthy")
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, str) and value.endswith("%"):
        try:
            return total * int(value[:-1]) // 100
        except ValueError:
            return 0
    return total


def remediation_allowed(check: Obj, total: int, unhealthy: int) -> tuple[bool, str]:
    """Whether ``unhealthy`` of ``total`` targets may be remediated, and the limit's words for a refusal."""
    range_ = dig(check, "spec", "unhealthyRange")
    if isinstance(range_, str) and range_.startswith("[") and range_.endswith("]") and "-" in range_:
        low, _, high = range_[1:-1].partition("-")
        if low.isdigit() and high.isdigit():
            return int(low) <= unhealthy <= int(high), f"unhealthyRange: {range_}"
    limit = max_unhealthy(check, total)
    value = dig(check, "spec", "maxUnhealthy")
    return unhealthy <= limit, f"maxUnhealthy: {value if value is not None else '100%'}"


class MachineHealthCheckController(ProviderController):
    name = "machinehealthcheck-controller"
    api_version = c.CLUSTER_API_VERSION
    kind = c.KIND_MACHINE_HEALTH_CHECK

    async def setup_watches(self) -> None:
        self.machines = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE, self._checks_of_machine)
        await self.watch_clusters()
        self.context.workloads.add_handler("Node", self._node_changed)

    def _checks_selecting(self, namespace: str, labels: dict[str, str]) -> list[str]:
        assert self.informer is not None
        keys = []
        for check in self.informer.list(namespace):
            try:
                selects = from_label_selector(dig(check, "spec", "selector") or {}).matches(labels)
            except SelectorError:
                continue
            if selects and labels.get(c.LABEL_CLUSTER_NAME) == dig(check, "spec", "clusterName"):
                keys.append(key_of(check))
        return keys

    def _checks_of_machine(self, machine: Obj) -> list[str]:
        return self._checks_selecting(namespace_of(machine), labels_of(machine))

    def _node_changed(self, workload: WorkloadCluster, node: Obj) -> None:
        """A Node of a workload cluster changed: every check of that Cluster looks again (Nodes are few)."""
        assert self.informer is not None
        for check in self.informer.list(workload.namespace):
            if dig(check, "spec", "clusterName") == workload.name:
                self.controller.enqueue(key_of(check))

    # -- reconcile ---------------------------------------------------------------------------------------------

    async def reconcile(self, current: Obj) -> float | None:
        namespace = namespace_of(current)
        cluster_name = str(dig(current, "spec", "clusterName") or "")
        cluster = await self.cluster(namespace, cluster_name)
        if cluster is None or await self.pause(current, cluster):
            return None
        check = json_copy(current)
        set_label(check, c.LABEL_CLUSTER_NAME, cluster_name)
        ensure_owner(check, cluster)
        if deleting(check):
            return await self._written(current, check, None)
        if not (is_true(cluster, INFRASTRUCTURE_READY) and is_true(cluster, CONTROL_PLANE_INITIALIZED)):
            return await self._written(current, check, None)  # nothing to check before the cluster is up
        try:
            selector = from_label_selector(dig(check, "spec", "selector") or {})
        except SelectorError:
            return await self._written(current, check, None)
        targets = sorted(
            (m for m in self.in_cluster(self.machines, namespace, cluster_name) if selector.matches(labels_of(m))),
            key=name_of,
        )
        workload = self.context.workloads.get(namespace, cluster_name)
        started = parse_time(dig(find(cluster, CONTROL_PLANE_INITIALIZED) or {}, "lastTransitionTime"))
        now = self.context.wall()
        verdicts = {name_of(m): self._judge(check, m, workload, started, now) for m in targets if self._judged(m)}
        unhealthy = [name for name, verdict in verdicts.items() if verdict.unhealthy]
        allowed, limit = remediation_allowed(check, len(targets), len(unhealthy))
        stamp = self.context.now()
        status = check.setdefault("status", {})
        status["expectedMachines"] = len(targets)
        status["currentHealthy"] = sum(not v.unhealthy for v in verdicts.values())
        status["remediationsAllowed"] = max(0, max_unhealthy(check, len(targets)) - len(unhealthy)) if allowed else 0
        status["targets"] = [name_of(m) for m in targets]
        status["observedGeneration"] = dig(check, "metadata", "generation")
        if allowed:
            set_conditions(check, [true(REMEDIATION_ALLOWED)], stamp)
            v1beta2.set_v1beta2(check, [MetaCondition(REMEDIATION_ALLOWED, "True", "RemediationAllowed")], stamp)
        else:
            message = (
                "Remediation is not allowed, the number of not started or unhealthy machines exceeds "
                f"{limit.split(':')[0]} (total: {len(targets)}, unhealthy: {len(unhealthy)}, {limit})"
            )
            set_conditions(check, [false(REMEDIATION_ALLOWED, "TooManyUnhealthy", "Warning", message)], stamp)
            v1beta2.set_v1beta2(
                check, [MetaCondition(REMEDIATION_ALLOWED, "False", "TooManyUnhealthy", message)], stamp
            )
            if unhealthy and current.get("status", {}).get("remediationsAllowed") != 0:
                self.events.warning(current, "RemediationRestricted", message)
        v1beta2.set_v1beta2(check, [v1beta2.paused_condition(check, cluster)], stamp)
        for machine in targets:
            verdict = verdicts.get(name_of(machine))
            if verdict is not None:
                await self._mark(
                    check, machine, verdict, remediate=allowed and not dig(check, "spec", "remediationTemplate")
                )
        return await self._written(current, check, requeue_min(*(v.next_check for v in verdicts.values())))

    async def _written(self, current: Obj, check: Obj, requeue: float | None) -> float | None:
        if check != current:
            await self.save(current, check)
        return requeue

    @staticmethod
    def _judged(machine: Obj) -> bool:
        annotations = annotations_of(machine)
        return not deleting(machine) and not (
            ANNOTATION_SKIP_REMEDIATION in annotations or c.ANNOTATION_PAUSED in annotations
        )

    def _judge(
        self, check: Obj, machine: Obj, workload: WorkloadCluster | None, started: datetime | None, now: datetime
    ) -> Verdict:
        status = machine.get("status") or {}
        if status.get("failureReason") or status.get("failureMessage"):
            return Verdict(True, "MachineHasFailure", f"FailureReason: {status.get('failureReason') or ''}")
        if ANNOTATION_REMEDIATE_MACHINE in annotations_of(machine):
            return Verdict(
                True, "HasRemediateMachineAnnotation", "Marked for remediation via remediate-machine annotation"
            )
        node_ref = status.get("nodeRef")
        if isinstance(node_ref, dict) and node_ref.get("name"):
            if workload is None:
                return HEALTHY  # the workload cluster cannot be read yet: nothing to judge by
            node = workload.node(str(node_ref["name"]))
            if node is None:
                return Verdict(True, "NodeNotFound", "")
            return self._node_conditions(check, node, now)
        timeout_text = dig(check, "spec", "nodeStartupTimeout") or DEFAULT_NODE_STARTUP_TIMEOUT
        timeout = _seconds(timeout_text)
        if not timeout:
            return HEALTHY  # 0 disables the startup check
        # from the later of the Machine's creation and the control plane's initialization
        starts = [t for t in (parse_time(dig(machine, "metadata", "creationTimestamp")), started) if t is not None]
        since = max(starts) if starts else now
        left = (since + timedelta(seconds=timeout) - now).total_seconds()
        if left <= 0:
            return Verdict(True, "NodeStartupTimeout", f"Node failed to report startup in {timeout_text}")
        return Verdict(False, next_check=left)

    @staticmethod
    def _node_conditions(check: Obj, node: Obj, now: datetime) -> Verdict:
        by_type = {str(x.get("type")): x for x in dig(node, "status", "conditions") or [] if isinstance(x, dict)}
        pending: list[float | None] = []
        for wanted in dig(check, "spec", "unhealthyConditions") or []:
            found = by_type.get(str(wanted.get("type")))
            if found is None or found.get("status") != wanted.get("status"):
                continue
            timeout = _seconds(wanted.get("timeout")) or 0.0
            since = parse_time(found.get("lastTransitionTime")) or now
            left = (since + timedelta(seconds=timeout) - now).total_seconds()
            if left <= 0:
                return Verdict(
                    True,
                    "UnhealthyNode",
                    f"Condition {wanted.get('type')} on node is reporting status {wanted.get('status')} for more than "
                    f"{wanted.get('timeout')}",
                )
            pending.append(left)
        return Verdict(False, next_check=requeue_min(*pending))

    async def _mark(self, check: Obj, machine: Obj, verdict: Verdict, *, remediate: bool) -> None:
        """Write the verdict on the Machine: its health, and — when remediation is allowed — the owner's cue."""
        marked = json_copy(machine)
        stamp = self.context.now()
        changes: list[Condition] = []
        meta: list[MetaCondition] = []
        if not verdict.unhealthy:
            changes.append(true(HEALTH_CHECK_SUCCEEDED))
            meta.append(MetaCondition(HEALTH_CHECK_SUCCEEDED, "True", "Succeeded"))
        else:
            changes.append(false(HEALTH_CHECK_SUCCEEDED, verdict.reason, "Warning", verdict.message))
            meta.append(MetaCondition(HEALTH_CHECK_SUCCEEDED, "False", verdict.reason, verdict.message))
            if remediate and find(machine, OWNER_REMEDIATED) is None:
                changes.append(false(OWNER_REMEDIATED, WAITING_FOR_REMEDIATION, "Warning"))
                meta.append(
                    MetaCondition(OWNER_REMEDIATED, "False", WAITING_FOR_REMEDIATION, "Waiting for remediation")
                )
                self.events.normal(
                    check, "MachineMarkedUnhealthy", f"Machine {name_of(machine)} has been marked as unhealthy"
                )
        set_conditions(marked, changes, stamp)
        v1beta2.set_v1beta2(marked, meta, stamp)
        if marked != machine:
            await self.save(machine, marked)


def waiting_for_remediation(machines: Iterable[Obj]) -> list[Obj]:
    """The Machines a MachineHealthCheck marked for their owner to remediate (``OwnerRemediated=False``), not yet
    deleting."""
    return [m for m in machines if not deleting(m) and (find(m, OWNER_REMEDIATED) or {}).get("status") == "False"]


async def remediate(owner_controller: ProviderController, owner: Obj, machines: Iterable[Obj]) -> int:
    """The owner's side of remediation, shared by the MachineSet and the MachinePool: each Machine marked
    ``OwnerRemediated=False`` is marked True (v1beta2: deleting) and deleted, so the owner's replicas bring a new one.
    How many were."""
    count = 0
    for machine in waiting_for_remediation(machines):
        stamp = owner_controller.context.now()
        remediated = json_copy(machine)
        set_conditions(remediated, [true(OWNER_REMEDIATED)], stamp)
        v1beta2.set_v1beta2(
            remediated, [MetaCondition(OWNER_REMEDIATED, "False", "MachineDeleting", "Machine is deleting")], stamp
        )
        await owner_controller.write(machine, remediated)
        await delete_if_present(
            owner_controller.manager.client,
            c.CLUSTER_API_VERSION,
            c.KIND_MACHINE,
            name_of(machine),
            namespace_of(machine),
        )
        owner_controller.events.normal(
            owner, "MachineRemediated", f"Deleted unhealthy Machine {name_of(machine)} (marked by a MachineHealthCheck)"
        )
        count += 1
    return count
