"""How Cluster API v1.14 derives one v1beta2 condition from others: mirror, summary and aggregate.

v1beta2 conditions (``metav1.Condition``, see :class:`~clusterclass.api.conditions.MetaCondition`) are built
from other conditions in three ways, each with upstream's exact status, reason and message, because users read
those messages in ``kubectl describe`` and ``clusterctl describe`` and tools match on the reasons:

- :func:`mirror`: one condition of another object copied under a new type (a Machine's ``InfrastructureReady``
  is its DockerMachine's ``Ready``), with a fallback when that object reports none;
- :func:`summary`: several conditions of one object folded into one (a Machine's ``Ready`` from
  ``BootstrapConfigReady``, ``InfrastructureReady``, ``NodeHealthy``, ...), its message a ``* Type: message``
  line per condition that matters;
- :func:`aggregate`: one condition type across many objects (a MachineDeployment's ``MachinesReady`` from its
  Machines' ``Ready``), its message grouping objects that say the same thing (``* Machines a, b, c: ...``), at
  most three groups, then ``And 2 Machines with other issues``.

All three rank each input by a :class:`Priority` (issue, unknown, info): the worst present decides the status
(False for an issue, Unknown, else True, or the opposite for a negative-polarity target) and which of three
reasons is used (:class:`Reasons`). By default False is an issue and True is info, except for negative-polarity
types (``Deleting``, ``Updating``) where it is the other way round; a caller passes its own priority to treat,
say, a deleted infrastructure as expected while its owner is deleting.

Our own code because no library has these semantics; built from upstream's documented behaviour
(``util/conditions`` of v1.14), tested on the messages it produces.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass, field
from enum import IntEnum

from clusterclass.api.conditions import MetaCondition, Status
from clusterclass.api.objects import Obj

#: the reason of a condition an object does not report yet (mirror, summary and aggregate all use it)
NOT_YET_REPORTED = "NotYetReported"
#: the reason given to a v1beta1 condition read as a v1beta2 one when it has none
NO_REASON_REPORTED = "NoReasonReported"


class Priority(IntEnum):
    """How much an input condition weighs in a merge; lower is worse."""

    ISSUE = 0
    UNKNOWN = 1
    INFO = 2


PriorityOf = Callable[[Obj], Priority]


def default_priority(negative_polarity: Collection[str] = ()) -> PriorityOf:
    """False is an issue and True is info, reversed for the ``negative_polarity`` types; Unknown is unknown."""
    negative = frozenset(negative_polarity)

    def priority(condition: Obj) -> Priority:
        status = condition.get("status")
        if status == "True":
            return Priority.ISSUE if condition.get("type") in negative else Priority.INFO
        if status == "False":
            return Priority.INFO if condition.get("type") in negative else Priority.ISSUE
        return Priority.UNKNOWN

    return priority


@dataclass(frozen=True)
class Reasons:
    """The reason of a merged condition when its worst input is an issue, unknown, or info."""

    issue: str
    unknown: str
    info: str


GENERIC_REASONS = Reasons("IssuesReported", "UnknownReported", "InfoReported")


@dataclass(frozen=True)
class Strategy:
    """How a merge ranks its inputs and names its result (upstream's default merge strategy and its options)."""

    priority: PriorityOf = field(default_factory=default_priority)
    reasons: Reasons = GENERIC_REASONS
    positive_polarity: bool = True
    #: rewrites a summary's message lines (the Machine's Ready folds the control-plane component lines into one)
    summary_lines: Callable[[list[str]], list[str]] | None = None


@dataclass(frozen=True)
class Owned:
    """A condition and the object it was read from (an aggregate's message names objects)."""

    condition: Obj
    kind: str
    name: str
    control_plane_machine: bool = False


# --- mirror --------------------------------------------------------------------------------------------------


def mirror(
    conditions: Sequence[Obj], source_type: str, target_type: str, fallback: MetaCondition | None = None
) -> MetaCondition:
    """``source_type`` of ``conditions`` (another object's v1beta2 conditions) as ``target_type``; when it is
    missing, ``fallback`` (what the caller derives from the object's fields), else Unknown/``NotYetReported``."""
    found = find_condition(conditions, source_type)
    if found is not None:
        return MetaCondition(
            target_type, _status(found.get("status")), str(found.get("reason") or ""), str(found.get("message") or "")
        )
    if fallback is not None:
        return MetaCondition(target_type, fallback.status, fallback.reason, fallback.message)
    return MetaCondition(target_type, "Unknown", NOT_YET_REPORTED, f"Condition {source_type} not yet reported")


def find_condition(conditions: Iterable[Obj], type_: str) -> Obj | None:
    return next((c for c in conditions if isinstance(c, dict) and c.get("type") == type_), None)


def _status(value: object) -> Status:
    return value if value in ("True", "False") else "Unknown"  # type: ignore[return-value]


# --- summary -------------------------------------------------------------------------------------------------


def summary(
    conditions: Sequence[Obj],
    target_type: str,
    for_types: Sequence[str],
    *,
    owner: tuple[str, str] = ("", ""),
    strategy: Strategy | None = None,
    ignore_if_missing: Collection[str] = (),
    overrides: Sequence[Obj] = (),
) -> MetaCondition:
    """``for_types`` of one object's ``conditions`` folded into ``target_type``.

    A type in ``for_types`` the object lacks counts as Unknown/``NotYetReported`` unless it is in
    ``ignore_if_missing``; ``overrides`` replace conditions of the same type (each must exist). ``owner`` is the
    object's (kind, name).
    """
    if target_type in for_types:
        raise ValueError(f"a summary of {target_type} cannot include {target_type}")
    by_override = {str(o.get("type")): o for o in overrides}
    wanted = set(for_types)
    kind, name = owner
    in_scope: list[Owned] = []
    seen: set[str] = set()
    for condition in conditions:
        type_ = str(condition.get("type"))
        if type_ not in wanted:
            continue
        in_scope.append(Owned(by_override.get(type_, condition), kind, name))
        seen.add(type_)
    for type_ in for_types:
        if type_ not in seen and type_ not in ignore_if_missing:
            missing = {"type": type_, "status": "Unknown", "reason": NOT_YET_REPORTED}
            in_scope.append(Owned({**missing, "message": "Condition not yet reported"}, kind, name))
    if not in_scope:
        raise ValueError(f"nothing to summarise into {target_type}")
    status, reason, message = merge(in_scope, for_types, strategy or Strategy(), aggregate=False)
    return MetaCondition(target_type, status, reason, message)


# --- aggregate -----------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Source:
    """One object an aggregate reads: its kind, name and v1beta2 conditions."""

    kind: str
    name: str
    conditions: Sequence[Obj]
    control_plane_machine: bool = False


def aggregate(
    sources: Sequence[Source], source_type: str, target_type: str, strategy: Strategy | None = None
) -> MetaCondition:
    """``source_type`` across ``sources`` merged into ``target_type`` (an object lacking it counts as
    Unknown/``NotYetReported``)."""
    if not sources:
        raise ValueError(f"an aggregate of {source_type} needs at least one object")
    in_scope: list[Owned] = []
    for source in sources:
        found = find_condition(source.conditions, source_type)
        if found is None:
            found = {
                "type": source_type,
                "status": "Unknown",
                "reason": NOT_YET_REPORTED,
                "message": f"Condition {source_type} not yet reported",
            }
        in_scope.append(Owned(found, source.kind, source.name, source.control_plane_machine))
    status, reason, message = merge(in_scope, [source_type], strategy or Strategy(), aggregate=True)
    return MetaCondition(target_type, status, reason, message)


# --- the merge -----------------------------------------------------------------------------------------------

#: at most this many message groups in an aggregate
AGGREGATE_GROUPS = 3
_BULLET = re.compile(r"\s*\*\s+")


def merge(
    conditions: Sequence[Owned], order: Sequence[str], strategy: Strategy, *, aggregate: bool
) -> tuple[Status, str, str]:
    """The status, reason and message of ``conditions`` merged; ``order`` ranks types for the message."""
    if not conditions:
        raise ValueError("cannot merge no conditions")
    rank = {type_: index for index, type_ in enumerate(order)}
    ordered = sorted(
        conditions,
        key=lambda o: (rank.get(str(o.condition.get("type")), 0), str(o.condition.get("lastTransitionTime") or "")),
    )
    groups: dict[Priority, list[Owned]] = {p: [] for p in Priority}
    for owned in ordered:
        groups[strategy.priority(owned.condition)].append(owned)
    issues, unknowns, infos = groups[Priority.ISSUE], groups[Priority.UNKNOWN], groups[Priority.INFO]
    status: Status
    if issues:
        status = "False" if strategy.positive_polarity else "True"
        reason = strategy.reasons.issue
    elif unknowns:
        status, reason = "Unknown", strategy.reasons.unknown
    else:
        status = "True" if strategy.positive_polarity else "False"
        reason = strategy.reasons.info
    if not aggregate:
        return status, reason, _summary_message(ordered, strategy, status)
    budget = [AGGREGATE_GROUPS]
    if issues or unknowns:
        others = {Priority.ISSUE: "with other issues", Priority.UNKNOWN: "with status unknown"}
        lines = _aggregate_lines(issues + unknowns, budget, strategy.priority, others, drop_empty=False)
    else:
        lines = _aggregate_lines(infos, budget, strategy.priority, {Priority.INFO: "with additional info"}, True)
    return status, reason, "\n".join(lines)


def _summary_message(ordered: Sequence[Owned], strategy: Strategy, status: Status) -> str:
    """A ``* Type: message`` line (the reason when there is no message) per condition, leaving out info ones
    unless the result is True and they say something."""
    lines = []
    for owned in ordered:
        condition = owned.condition
        message = str(condition.get("message") or "")
        if strategy.priority(condition) == Priority.INFO and (status != "True" or not message):
            continue
        text = indent_if_multiline(message) if message else f" {condition.get('reason') or ''}"
        lines.append(f"* {condition.get('type')}:{text}")
    if strategy.summary_lines is not None:
        lines = strategy.summary_lines(lines)
    return "\n".join(lines)


def _aggregate_lines(
    conditions: Sequence[Owned],
    budget: list[int],
    priority: PriorityOf,
    others: dict[Priority, str],
    drop_empty: bool,
) -> list[str]:
    """One line per distinct message per kind (kinds alphabetically), naming who says it; past the budget,
    an ``And N <kind> <others>`` count per priority."""
    names_by_message: dict[str, dict[str, list[str]]] = {}
    message_priority: dict[str, Priority] = {}
    first: dict[str, bool] = {}
    control_plane: set[str] = set()
    for owned in conditions:
        message = str(owned.condition.get("message") or "")
        if drop_empty and not message:
            continue
        names_by_message.setdefault(owned.kind, {}).setdefault(message, []).append(owned.name)
        if owned.control_plane_machine:
            control_plane.add(owned.name)
            first[message] = True
        new = priority(owned.condition)
        old = message_priority.get(message)
        if old is None or old == Priority.INFO or (old == Priority.UNKNOWN and new == Priority.ISSUE):
            message_priority[message] = new
    lines: list[str] = []
    for kind in sorted(names_by_message):
        by_message = names_by_message[kind]
        ordered = sorted(
            by_message,
            key=lambda m: (
                not first.get(m, False),
                message_priority[m],
                -len(by_message[m]),
                ",".join(by_message[m]),
            ),
        )
        left: dict[Priority, int] = {}
        for message in ordered:
            names = by_message[message]
            if budget[0] == 0:
                left[message_priority[message]] = left.get(message_priority[message], 0) + len(names)
                continue
            names = sorted(names, key=lambda n: (n not in control_plane, n))
            if len(names) == 1:
                head = f"* {kind} {names[0]}:"
            elif len(names) <= 3:
                head = f"* {plural(kind)} {', '.join(names)}:"
            else:
                head = f"* {plural(kind)} {', '.join(names[:3])}, ... ({len(names) - 3} more):"
            lines.append(head + indent_if_multiline(message))
            budget[0] -= 1
        for level in Priority:
            count = left.get(level)
            if count and level in others:
                lines.append(f"And {count} {kind if count == 1 else plural(kind)} {others[level]}")
    return lines


def plural(kind: str) -> str:
    """The plural of a Cluster API kind (all of ours take an ``s``, as upstream's pluraliser gives them)."""
    return kind[:-1] + "ies" if kind.endswith("y") and kind[-2:-1] not in "aeiou" else kind + "s"


def indent_if_multiline(message: str) -> str:
    """`` message`` on one line; a message with several lines or bullets starts on the next line, each of its
    lines indented (and bulleted, when some lack a bullet)."""
    if "\n" not in message and not _BULLET.search(message):
        return " " + message
    lines = message.split("\n")
    bullets = [bool(_BULLET.search(line)) for line in lines]
    mixed = not all(bullets)
    out = []
    for line, bulleted in zip(lines, bullets, strict=True):
        prefix = "  " + (("  " if bulleted else "* ") if mixed else "")
        out.append(prefix + line)
    return "\n" + "\n".join(out)
