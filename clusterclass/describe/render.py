"""Printing a describe tree: clusterctl's table (:func:`render_table`), or the same tree as data (:func:`as_data`).

The table is borderless, columns left-aligned and two spaces apart, the header
``NAME  READY  SEVERITY  REASON  SINCE  MESSAGE`` (spec §4.3). NAME is the tree prefix (``├─``, ``└─``,
continued by ``│ `` or two spaces) and the row name: ``2 Machines...`` for a group, the name of a
virtual node, else ``Kind/name`` after the object's meta name (``ControlPlane - ``) and, while it is
being deleted, ``!! DELETED !! ``. READY, SEVERITY and REASON come from the ``Ready`` condition,
SINCE is the time since its last transition in Kubernetes' short form, MESSAGE its message cut at 100
characters (a group says which objects it stands for). Children are ordered by z-order, then by row
name; siblings with equal keys keep the order they were added in, so the output is the same on every
run. With ``show_conditions`` an object's other conditions follow it, indented ten more spaces.

Colours are clusterctl's: True green; False and Unknown red for Error, yellow for Warning, white
otherwise; no condition gray. :func:`render_table` returns a :class:`rich.text.Text`: its ``plain``
is the uncoloured table, printing it on a rich Console colours it.

:func:`as_data` gives the rows as nested dicts for ``-o json`` and ``-o yaml``: each row's name,
kind, object (apiVersion, namespace, name; null for virtual and group rows), the ``Ready`` columns
with the full message and the transition time, a group's items, the other conditions when asked
for, the v1beta2 view (``v1beta2``: the counters and the condition of its STATUS column, and the v1beta2
conditions when asked for), and the children in display order. "Now" is a parameter everywhere, so output is
reproducible.
"""

from __future__ import annotations

import json
from datetime import datetime
from typing import Any

from rich.cells import cell_len
from rich.text import Text

from clusterclass.describe.humanduration import human_duration
from clusterclass.describe.tree import GROUP_SUFFIX, ConditionState, Node
from clusterclass.kube.gotext import rfc3339
from clusterclass.yamlio import dump_yaml

HEADER = ("NAME", "READY", "SEVERITY", "REASON", "SINCE", "MESSAGE")
FIRST_CHILD, LAST_CHILD, PIPE, INDENT = "├─", "└─", "│ ", "  "
#: how far a condition row is indented under its object, besides the tree prefix
CONDITION_FILLER = " " * 10
MAX_MESSAGE = 100
#: how many of a group's items its row names before ``...``
GROUP_ITEMS_SHOWN = 2
COLUMN_GAP = "  "

GRAY, GREEN, RED, YELLOW, WHITE, CYAN = "bright_black", "green", "red", "yellow", "white", "cyan"


def plural(kind: str) -> str:
    """An English plural of a kind name, as clusterctl's (flect) for the kinds Cluster API has."""
    if kind.endswith(("s", "x", "z", "ch", "sh")):
        return kind + "es"
    if kind.endswith("y") and kind[-2:-1] not in ("a", "e", "i", "o", "u"):
        return kind[:-1] + "ies"
    return kind + "s"


def row_name(node: Node) -> str:
    """The name a row shows, without the tree prefix; also what siblings are sorted by."""
    return _name_text(node).plain


def _name_text(node: Node) -> Text:
    if node.is_group:
        kind = plural(node.kind.removesuffix(GROUP_SUFFIX))
        return Text(f"{len(node.items)} {kind}...", style=f"bold {WHITE}")
    if node.virtual:
        return Text(node.meta_name or node.name)
    name = Text(f"{node.kind}/")
    name.append(node.name, style="bold")
    if node.meta_name:
        name.stylize(GRAY)
        name = Text(f"{node.meta_name} - ").append_text(name)
    if node.deleting:
        name = Text().append("!! DELETED !!", style=RED).append(" ").append_text(name)
    return name


def ordered_children(node: Node) -> list[Node]:
    """Children in display order: higher z-order first, then by row name; ties keep insertion order."""
    return sorted(node.children, key=lambda child: (-child.z_order, row_name(child)))


def child_prefix(prefix: str, index: int, count: int) -> str:
    """The tree prefix of child ``index`` of ``count`` under a row whose prefix is ``prefix``."""
    continued = prefix.replace(FIRST_CHILD, PIPE).replace(LAST_CHILD, INDENT)
    return continued + (FIRST_CHILD if index < count - 1 else LAST_CHILD)


def _color(condition: ConditionState | None) -> str:
    if condition is None:
        return GRAY
    if condition.status == "True":
        return GREEN
    if condition.status in ("False", "Unknown"):
        return {"Error": RED, "Warning": YELLOW}.get(condition.severity, WHITE)
    return GRAY


def since(condition: ConditionState | None, now: datetime) -> str:
    """How long ago ``condition`` last changed (empty when it has no transition time)."""
    if condition is None or condition.last_transition_time is None:
        return ""
    return human_duration(now - condition.last_transition_time)


def short_message(message: str) -> str:
    return message if len(message) <= MAX_MESSAGE else message[:MAX_MESSAGE] + " ..."


def _condition_cells(condition: ConditionState | None, now: datetime) -> list[Text]:
    """READY, SEVERITY, REASON, SINCE and MESSAGE of a row."""
    if condition is None:
        return [Text() for _ in range(5)]
    color = _color(condition)
    return [
        Text(condition.status, style=color),
        Text(condition.severity, style=color),
        Text(condition.reason, style=color),
        Text(since(condition, now)),
        Text(short_message(condition.message)),
    ]


def group_message(node: Node) -> str:
    shown = node.items[:GROUP_ITEMS_SHOWN] + (["..."] if len(node.items) > GROUP_ITEMS_SHOWN else [])
    return "See " + ", ".join(shown)


def _rows(node: Node, prefix: str, now: datetime) -> list[list[Text]]:
    cells = _condition_cells(node.ready, now)
    if node.is_group:
        cells[4] = Text(group_message(node))
    name = Text().append(prefix, style=GRAY).append_text(_name_text(node))
    rows = [[name, *cells]]
    if node.show_conditions:
        under = prefix + (PIPE if node.children else INDENT) + CONDITION_FILLER
        for index, condition in enumerate(node.conditions):
            condition_prefix = child_prefix(under, index, len(node.conditions))
            label = Text().append(condition_prefix, style=GRAY).append(condition.type, style=CYAN)
            rows.append([label, *_condition_cells(condition, now)])
    children = ordered_children(node)
    for index, child in enumerate(children):
        rows.extend(_rows(child, child_prefix(prefix, index, len(children)), now))
    return rows


def render_table(root: Node, *, now: datetime) -> Text:
    """The table of the tree at ``root``, one line per row (a multi-line message takes more), no trailing spaces."""
    rows = [[Text(title) for title in HEADER], *_rows(root, "", now)]
    # a cell with line breaks spans several lines, as Go's tablewriter prints it
    split_rows = [[cell.split("\n", allow_blank=True) for cell in row] for row in rows]
    widths = [max(cell_len(line.plain) for row in split_rows for line in row[column]) for column in range(len(HEADER))]
    out = Text()
    for row in split_rows:
        for index in range(max(len(cell) for cell in row)):
            line = Text()
            for column, cell in enumerate(row):
                part = cell[index] if index < len(cell) else Text()
                if column:
                    line.append(COLUMN_GAP)
                line.append_text(part)
                line.append(" " * (widths[column] - cell_len(part.plain)))
            line.rstrip()
            out.append_text(line)
            out.append("\n")
    return out


def _condition_data(condition: ConditionState | None, now: datetime) -> dict[str, Any]:
    moment = condition.last_transition_time if condition is not None else None
    return {
        "status": condition.status if condition is not None else None,
        "severity": condition.severity if condition is not None else None,
        "reason": condition.reason if condition is not None else None,
        "since": since(condition, now) if moment is not None else None,
        "lastTransitionTime": rfc3339(moment) if moment is not None else None,
        "message": condition.message if condition is not None else None,
    }


def as_data(node: Node, *, now: datetime) -> dict[str, Any]:
    """The tree at ``node`` as nested data, rows in display order (the module docstring lists the keys)."""
    ready = _condition_data(node.ready, now)
    data: dict[str, Any] = {
        "name": row_name(node),
        "kind": node.kind,
        "object": None
        if node.virtual
        else {"apiVersion": node.api_version, "namespace": node.namespace, "name": node.name},
        "deleting": node.deleting,
        "ready": ready.pop("status"),
        **ready,
    }
    if node.is_group:
        data["items"] = list(node.items)
    if node.show_conditions:
        data["conditions"] = [{"type": cond.type, **_condition_data(cond, now)} for cond in node.conditions]
    row = node.v1beta2
    counters = row.counters
    data["v1beta2"] = {
        "replicas": counters.replicas or None,
        "available": counters.available or None,
        "ready": counters.ready or None,
        "upToDate": counters.up_to_date or None,
        "condition": row.status.type if row.status is not None else None,
        **_condition_data(row.status, now),
    }
    if node.show_conditions:
        data["v1beta2"]["conditions"] = [{"type": cond.type, **_condition_data(cond, now)} for cond in row.conditions]
    data["children"] = [as_data(child, now=now) for child in ordered_children(node)]
    return data


def render_json(root: Node, *, now: datetime) -> str:
    return json.dumps(as_data(root, now=now), indent=2) + "\n"


def render_yaml(root: Node, *, now: datetime) -> str:
    text: str = dump_yaml(as_data(root, now=now))
    return text


def render_view(root: Node, *, now: datetime, v1beta2: bool) -> Text:
    """The table of the view asked for: clusterctl v1.11+'s v1beta2 table, or v1.6's v1beta1 one."""
    if v1beta2:
        from clusterclass.describe import render_v1beta2  # it builds on this module's pieces

        return render_v1beta2.render_table(root, now=now)
    return render_table(root, now=now)
