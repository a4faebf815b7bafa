"""v1beta1 conditions (``status.conditions``): how Cluster API sets one condition among others.

A condition is ``{type, status, severity, reason, message, lastTransitionTime}``; ``severity`` only
when the status is not True, and empty strings are left out. Setting a condition keeps its old
``lastTransitionTime`` when nothing else about it changed, else stamps "now" (whole seconds); the list
stays sorted with ``Ready`` first and then by type, as Cluster API keeps it. Each controller owns its
own condition types and leaves every other condition as it found it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from clusterclass.api.objects import Obj, dig

Status = Literal["True", "False", "Unknown"]
Severity = Literal["", "Error", "Warning", "Info"]

READY = "Ready"


@dataclass(frozen=True)
class Condition:
    type: str
    status: Status
    reason: str = ""
    message: str = ""
    severity: Severity = ""

    def as_dict(self, last_transition_time: str) -> Obj:
        condition: Obj = {"type": self.type, "status": self.status}
        if self.status != "True" and self.severity:
            condition["severity"] = self.severity
        condition["lastTransitionTime"] = last_transition_time
        if self.reason:
            condition["reason"] = self.reason
        if self.message:
            condition["message"] = self.message
        return condition

    def same_as(self, existing: Any) -> bool:
        """Whether ``existing`` (a condition dict) says exactly this, timestamps aside."""
        if not isinstance(existing, dict):
            return False
        return (
            existing.get("type") == self.type
            and existing.get("status") == self.status
            and (existing.get("severity") or "") == (self.severity if self.status != "True" else "")
            and (existing.get("reason") or "") == self.reason
            and (existing.get("message") or "") == self.message
        )


def true(type_: str) -> Condition:
    return Condition(type_, "True")


def false(type_: str, reason: str, severity: Severity, message: str = "") -> Condition:
    return Condition(type_, "False", reason, message, severity)


def conditions_of(obj: Obj) -> list[Obj]:
    found = dig(obj, "status", "conditions")
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


def find(obj: Obj, type_: str) -> Obj | None:
    return next((c for c in conditions_of(obj) if c.get("type") == type_), None)


def is_true(obj: Obj, type_: str) -> bool:
    condition = find(obj, type_)
    return condition is not None and condition.get("status") == "True"


def _order(condition: Obj) -> tuple[int, str]:
    type_ = str(condition.get("type", ""))
    return (0 if type_ == READY else 1, type_)


def with_conditions(existing: Sequence[Obj], changes: Sequence[Condition], now: str) -> list[Obj] | None:
    """``existing`` with each of ``changes`` set, or None when that changes nothing.

    A condition that already says the same keeps its ``lastTransitionTime``; others keep their place
    in the sort order and their content.
    """
    by_type = {str(c.get("type")): c for c in existing}
    changed = False
    for condition in changes:
        old = by_type.get(condition.type)
        if condition.same_as(old):
            continue
        by_type[condition.type] = condition.as_dict(now)
        changed = True
    if not changed:
        return None
    return sorted(by_type.values(), key=_order)


# --- v1beta2 conditions (metav1.Condition) ---------------------------------------------------------------


@dataclass(frozen=True)
class MetaCondition:
    """A v1beta2 condition (``metav1.Condition``): ``{type, status, observedGeneration, lastTransitionTime, reason,
    message}``; all but observedGeneration are required (an empty message is written, as Go does). v1beta2 objects
    keep them in ``status.conditions`` (``status.v1beta2.conditions`` of a v1beta1 object)."""

    type: str
    status: Status
    reason: str
    message: str = ""

    def as_dict(self, last_transition_time: str, observed_generation: int | None) -> Obj:
        condition: Obj = {"type": self.type, "status": self.status}
        if observed_generation:
            condition["observedGeneration"] = observed_generation
        condition["lastTransitionTime"] = last_transition_time
        condition["reason"] = self.reason
        condition["message"] = self.message
        return condition


def with_meta_conditions(
    existing: Sequence[Obj], changes: Sequence[MetaCondition], now: str, observed_generation: int | None
) -> list[Obj] | None:
    """``existing`` v1beta2 conditions with each of ``changes`` set, or None when that changes nothing.

    As ``meta.SetStatusCondition`` (what upstream's ``conditions.Set`` builds on): ``lastTransitionTime`` moves only
    when the status changes; reason, message and observedGeneration are updated in place; the list is kept in
    upstream's order (:func:`v1beta2_order`).
    """
    by_type = {str(c.get("type")): c for c in existing}
    changed = False
    for condition in changes:
        old = by_type.get(condition.type)
        keep_time = isinstance(old, dict) and old.get("status") == condition.status and old.get("lastTransitionTime")
        new = condition.as_dict(str(old["lastTransitionTime"]) if keep_time and old else now, observed_generation)
        if new != old:
            by_type[condition.type] = new
            changed = True
    if not changed:
        return None
    return sorted(by_type.values(), key=lambda c: v1beta2_order(str(c.get("type", ""))))


#: the order upstream v1.14 keeps v1beta2 conditions in (``util/conditions/sort.go``): Available and Ready first,
#: Paused and Deleting last, readiness and availability gates (and any type not listed) just before those two;
#: ties by type. Writing them in another order would make two writers of one list rewrite it in turn.
V1BETA2_ORDER: tuple[str, ...] = (
    "Available",
    "Ready",
    "UpToDate",
    "RemoteConnectionProbe",
    "BootstrapConfigReady",
    "InfrastructureReady",
    "ControlPlaneInitialized",
    "ControlPlaneAvailable",
    "WorkersAvailable",
    "CertificatesAvailable",
    "Initialized",
    "EtcdClusterHealthy",
    "ControlPlaneComponentsHealthy",
    "NodeHealthy",
    "NodeReady",
    "NodeKubeadmLabelsAndTaintsSet",
    "EtcdPodHealthy",
    "EtcdMemberHealthy",
    "APIServerPodHealthy",
    "ControllerManagerPodHealthy",
    "SchedulerPodHealthy",
    "HealthCheckSucceeded",
    "OwnerRemediated",
    "TopologyReconciled",
    "Updating",
    "RollingOut",
    "Remediating",
    "ScalingDown",
    "ScalingUp",
    "MachinesReady",
    "ControlPlaneMachinesReady",
    "WorkerMachinesReady",
    "MachinesUpToDate",
    "ControlPlaneMachinesUpToDate",
    "WorkerMachinesUpToDate",
    "",  # readiness and availability gates, and every type not named here
    "Paused",
    "Deleting",
)
_V1BETA2_RANK = {type_: index for index, type_ in enumerate(V1BETA2_ORDER)}


def v1beta2_order(type_: str) -> tuple[int, str]:
    """Sort key of a v1beta2 condition type in upstream's order (:data:`V1BETA2_ORDER`)."""
    return (_V1BETA2_RANK.get(type_, _V1BETA2_RANK[""]), type_)


def meta_conditions_of(obj: Obj) -> list[Obj]:
    """The v1beta2 conditions of a v1beta1 object (``status.v1beta2.conditions``)."""
    found = dig(obj, "status", "v1beta2", "conditions")
    return [c for c in found if isinstance(c, dict)] if isinstance(found, list) else []


# --- how Cluster API derives one condition from others -----------------------------------------------

#: the merge priority of a (status, severity) group: the worst comes first
_GROUP_PRIORITY = {("False", "Error"): 0, ("False", "Warning"): 1, ("False", "Info"): 2, ("True", ""): 3}


def condition_of(found: Obj) -> Condition:
    """A condition dict as a :class:`Condition` (timestamps dropped)."""
    status = found.get("status")
    severity = found.get("severity") or ""
    return Condition(
        str(found.get("type", "")),
        status if status in ("True", "False", "Unknown") else "Unknown",
        str(found.get("reason") or ""),
        str(found.get("message") or ""),
        severity if severity in ("Error", "Warning", "Info") and status != "True" else "",  # type: ignore[arg-type]
    )


def _priority(condition: Condition) -> int:
    if condition.status == "Unknown":
        return 4
    return _GROUP_PRIORITY.get((condition.status, condition.severity if condition.status == "False" else ""), 99)


def _merge(
    type_: str, in_scope: Sequence[tuple[Condition, str]], order: Sequence[str], step_counter: int | None
) -> Condition | None:
    """The worst (status, severity) group of ``in_scope`` as one condition (Cluster API's merge).

    ``in_scope`` pairs each condition with the name of the object it comes from; reason and message
    come from the group's first condition in ``order`` (then by source name); ``step_counter`` replaces
    the message with "<true> of <step_counter> completed".
    """
    if not in_scope:
        return None
    top = min(_priority(condition) for condition, _ in in_scope)
    group = [(condition, source) for condition, source in in_scope if _priority(condition) == top]
    if top == 3:
        return true(type_)
    rank = {name: i for i, name in enumerate(order)}
    first = min(group, key=lambda pair: (rank.get(pair[0].type, len(rank)), pair[0].type, pair[1]))[0]
    message = first.message
    if step_counter is not None:
        done = sum(1 for condition, _ in in_scope if _priority(condition) == 3)
        message = f"{done} of {step_counter} completed"
    return Condition(type_, first.status, first.reason, message, first.severity)


def summary(
    obj: Obj,
    types: Sequence[str],
    *,
    step_counter: bool = False,
    step_counter_if_only: Sequence[str] | None = None,
) -> Condition | None:
    """``Ready`` summarising ``types`` of ``obj`` (None when none of them is set: no ``Ready`` then).

    The worst group (False/Error, False/Warning, False/Info, True, Unknown) decides the status and
    severity; reason and message come from its first condition in the order of ``types``.
    ``step_counter`` replaces the message with "<true> of <len(types)> completed"; with
    ``step_counter_if_only``, only while no condition outside those is set, counting those.
    """
    present = {str(c.get("type")): c for c in conditions_of(obj)}
    in_scope = [(condition_of(present[t]), "") for t in types if t in present and t != READY]
    counter: int | None = None
    if step_counter:
        counter = len(types)
        if step_counter_if_only is not None:
            only = set(step_counter_if_only)
            counter = len(step_counter_if_only) if all(c.type in only for c, _ in in_scope) else None
    return _merge(READY, in_scope, types, counter)


def mirror(source: Obj | None, type_: str, fallback_reason: str, fallback_message: str = "") -> Condition:
    """``source``'s ``Ready`` under the name ``type_``.

    Without one: True when ``status.ready`` is true, else False/``fallback_reason``/Info.
    """
    ready = find(source, READY) if source is not None else None
    if ready is not None:
        found = condition_of(ready)
        return Condition(type_, found.status, found.reason, found.message, found.severity)
    if source is not None and dig(source, "status", "ready") is True:
        return true(type_)
    return false(type_, fallback_reason, "Info", fallback_message)


def aggregate(children: Sequence[Obj], type_: str) -> Condition | None:
    """The children's ``Ready`` merged into ``type_``; the reason names its source (``<reason> @ Kind/name``)."""
    in_scope: list[tuple[Condition, str]] = []
    for child in children:
        ready = find(child, READY)
        if ready is not None:
            in_scope.append((condition_of(ready), str(dig(child, "metadata", "name") or "")))
    merged = _merge(type_, in_scope, (), None)
    if merged is None or merged.status == "True":
        return merged
    top = min(_priority(condition) for condition, _ in in_scope)
    source = min(
        ((condition, name) for condition, name in in_scope if _priority(condition) == top), key=lambda pair: pair[1]
    )
    kind = next((str(c.get("kind")) for c in children if dig(c, "metadata", "name") == source[1]), "")
    reason = merged.reason if "@" in merged.reason else f"{merged.reason} @ {kind}/{source[1]}"
    return Condition(type_, merged.status, reason, merged.message, merged.severity)


def set_conditions(obj: Obj, changes: Sequence[Condition | None], now: str) -> bool:
    """Set each of ``changes`` (None skipped) on ``obj``'s ``status.conditions``; whether anything changed."""
    updated = with_conditions(conditions_of(obj), [c for c in changes if c is not None], now)
    if updated is None:
        return False
    obj.setdefault("status", {})["conditions"] = updated
    return True


def delete_condition(obj: Obj, type_: str) -> bool:
    """Remove condition ``type_`` from ``obj``; whether it was there."""
    existing = conditions_of(obj)
    kept = [c for c in existing if c.get("type") != type_]
    if len(kept) == len(existing):
        return False
    obj.setdefault("status", {})["conditions"] = kept
    return True
