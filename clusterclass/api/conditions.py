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
