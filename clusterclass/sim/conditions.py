"""The v1beta2 conditions the simulated core and kubeadm controllers share (what upstream v1.14 writes).

The providers keep their objects in the pipeline's v1beta1 shape (:mod:`clusterclass.sim.versions`), where v1.14
puts the v1beta2 conditions under ``status.v1beta2.conditions``; a v1beta2 read shows them as
``status.conditions`` (and the v1beta1 conditions under ``status.deprecated.v1beta1``). Each controller sets its
own condition types with :func:`set_v1beta2` and leaves the others as it found them, as upstream's patch helper
does with owned conditions.

Conditions mirrored from another object read that object's v1beta2 conditions (:func:`v1beta2_of`), what
upstream sees reading it in its contract version; the providers here write v1beta1 conditions only, so the
mirrors fall back to the object's fields, exactly as upstream's do for a provider that reports no v1beta2
``Ready``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from clusterclass.api import constants as c
from clusterclass.api.condition_merge import Reasons, Source, Strategy, aggregate
from clusterclass.api.conditions import MetaCondition, meta_conditions_of, with_meta_conditions
from clusterclass.api.objects import Obj, dig, labels_of, name_of

AVAILABLE = "Available"
READY = "Ready"
UP_TO_DATE = "UpToDate"
DELETING = "Deleting"
PAUSED = "Paused"
MACHINES_READY = "MachinesReady"
MACHINES_UP_TO_DATE = c.CONDITION_MACHINES_UP_TO_DATE

NOT_DELETING = "NotDeleting"
NO_REPLICAS = "NoReplicas"
OBJECT_DOES_NOT_EXIST = "ObjectDoesNotExist"
OBJECT_DELETED = "ObjectDeleted"
INTERNAL_ERROR = "InternalError"

#: the reasons of an aggregate of the Machines' Ready and UpToDate (the same words for every owner)
READY_REASONS = Reasons("NotReady", "ReadyUnknown", "Ready")
UP_TO_DATE_REASONS = Reasons("NotUpToDate", "UpToDateUnknown", "UpToDate")


def v1beta2_of(obj: Obj | None) -> list[Obj]:
    """The v1beta2 conditions of an object read in v1beta1 shape (none for None)."""
    return meta_conditions_of(obj) if obj is not None else []


def set_v1beta2(obj: Obj, changes: Sequence[MetaCondition | None], now: str) -> None:
    """Set ``changes`` among ``obj``'s v1beta2 conditions, with its generation as their observedGeneration."""
    wanted = [change for change in changes if change is not None]
    updated = with_meta_conditions(meta_conditions_of(obj), wanted, now, dig(obj, "metadata", "generation"))
    if updated is not None:
        obj.setdefault("status", {}).setdefault("v1beta2", {})["conditions"] = updated


def is_v1beta2_true(obj: Obj, type_: str) -> bool:
    return any(cond.get("type") == type_ and cond.get("status") == "True" for cond in meta_conditions_of(obj))


def machine_source(machine: Obj) -> Source:
    """A Machine as an aggregate reads it (control-plane Machines are named first in messages)."""
    return Source("Machine", name_of(machine), meta_conditions_of(machine), c.LABEL_CONTROL_PLANE in labels_of(machine))


def machines_condition(machines: Sequence[Obj], source_type: str, target_type: str, reasons: Reasons) -> MetaCondition:
    """``source_type`` of ``machines`` aggregated into ``target_type``: True/``NoReplicas`` with no Machines."""
    if not machines:
        return MetaCondition(target_type, "True", NO_REPLICAS)
    return aggregate([machine_source(m) for m in machines], source_type, target_type, Strategy(reasons=reasons))


def deleting_condition(obj: Obj, reason: str = "Deleting", message: str = "") -> MetaCondition:
    """``Deleting``: False/``NotDeleting`` until the object has a deletionTimestamp, then True with ``reason``."""
    if not dig(obj, "metadata", "deletionTimestamp"):
        return MetaCondition(DELETING, "False", NOT_DELETING)
    return MetaCondition(DELETING, "True", reason, message)


def paused_condition(obj: Obj, cluster: Obj | None) -> MetaCondition:
    """``Paused``, as upstream's controllers keep it on every object they reconcile (both reasons, when both)."""
    messages = []
    if cluster is not None and dig(cluster, "spec", "paused") is True:
        messages.append("Cluster spec.paused is set to true")
    if c.ANNOTATION_PAUSED in (dig(obj, "metadata", "annotations") or {}):
        messages.append(f"{obj.get('kind')} has the cluster.x-k8s.io/paused annotation")
    if messages:
        return MetaCondition(PAUSED, "True", "Paused", ", ".join(messages))
    return MetaCondition(PAUSED, "False", "NotPaused")


def scaling_conditions(current: int, desired: int) -> list[MetaCondition]:
    """``ScalingUp`` and ``ScalingDown`` of a MachineSet, MachineDeployment or control plane."""
    up = (
        MetaCondition("ScalingUp", "True", "ScalingUp", f"Scaling up from {current} to {desired} replicas")
        if current < desired
        else MetaCondition("ScalingUp", "False", "NotScalingUp")
    )
    down = (
        MetaCondition("ScalingDown", "True", "ScalingDown", f"Scaling down from {current} to {desired} replicas")
        if current > desired
        else MetaCondition("ScalingDown", "False", "NotScalingDown")
    )
    return [up, down]


def settled_for_up_to_date(machines: Sequence[Obj], now: datetime) -> list[Obj]:
    """The Machines a ``MachinesUpToDate`` aggregate counts: those with an ``UpToDate`` condition or older than
    10s (so a new Machine does not flicker the condition before its owner has judged it)."""
    kept = []
    for machine in machines:
        if any(cond.get("type") == UP_TO_DATE for cond in meta_conditions_of(machine)):
            kept.append(machine)
            continue
        created = _parse(str(dig(machine, "metadata", "creationTimestamp") or ""))
        if created is not None and (now - created).total_seconds() > 10:
            kept.append(machine)
    return kept


def counters(machines: Sequence[Obj]) -> tuple[int, int, int]:
    """(ready, available, upToDate) Machines by their v1beta2 conditions: v1.14's replica counters."""
    return (
        sum(is_v1beta2_true(m, READY) for m in machines),
        sum(is_v1beta2_true(m, AVAILABLE) for m in machines),
        sum(is_v1beta2_true(m, UP_TO_DATE) for m in machines),
    )


def parse_time(text: object) -> datetime | None:
    """An RFC 3339 timestamp as Kubernetes writes it; None when missing or not one."""
    if not isinstance(text, str) or not text:
        return None
    return _parse(text)


def _parse(text: str) -> datetime | None:
    try:
        return datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
