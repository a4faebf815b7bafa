"""Printing a describe tree as clusterctl v1.11+ does by default: the v1beta2 table.

``NAME  REPLICAS  AVAILABLE  READY  UP TO DATE  STATUS  REASON  SINCE  MESSAGE``: NAME is the tree prefix and
``Kind namespace/name`` (with the version a Cluster, control plane, MachineDeployment, MachineSet, MachinePool or
Machine runs: ``Cluster default/demo, v1.29.0``), a virtual node's name, or ``3 Machines...`` for a group;
REPLICAS is ``current/desired``; AVAILABLE, READY and UP TO DATE count replicas (a group: its objects) in that
state; STATUS, REASON, SINCE and MESSAGE come from one v1beta2 condition: a Cluster's, MachineDeployment's or
control plane's ``Available``, everyone else's ``Ready`` (MachineSets and MachinePools show none). A message is
wrapped at 100 characters and keeps its line breaks, each further line a row of its own under the tree's lines.
With ``--show-conditions`` an object's conditions follow it (in the order it keeps them), ten spaces further in,
and its own STATUS columns are left empty; ``Kind+`` shows only the conditions that say something.

Columns are as wide as their widest cell plus two spaces (the header's plus one), as clusterctl's tablewriter
lays them out; lines carry no trailing spaces. Colours: a positive condition True green and False red, a
negative one (``Deleting``, ``Paused``, ``ScalingUp``...) the other way round, Unknown yellow.

Beyond clusterctl: a MachinePool row shows its replica counters, as a MachineDeployment's does (upstream's tree
leaves MachinePool rows empty).
"""

from __future__ import annotations

import re
from datetime import datetime

from rich.cells import cell_len
from rich.text import Text

from clusterclass.describe.humanduration import human_duration
from clusterclass.describe.render import (
    CONDITION_FILLER,
    CYAN,
    FIRST_CHILD,
    GRAY,
    GREEN,
    INDENT,
    LAST_CHILD,
    PIPE,
    RED,
    WHITE,
    YELLOW,
    child_prefix,
    group_message,
    plural,
)
from clusterclass.describe.tree import GROUP_SUFFIX, ConditionState, Counters, Node

HEADER = ("NAME", "REPLICAS", "AVAILABLE", "READY", "UP TO DATE", "STATUS", "REASON", "SINCE", "MESSAGE")
#: conditions whose normal state is False
NEGATIVE_POLARITY = frozenset(
    {"Paused", "Deleting", "RollingOut", "ScalingUp", "ScalingDown", "Updating", "Remediating"}
)
#: always shown by the non-zero filter
ALWAYS_SHOWN = frozenset({"Available", "Ready"})
MESSAGE_WIDTH = 100
_SPACES = re.compile(r"\s+")


def row_name(node: Node) -> str:
    return _name_text(node).plain


def _name_text(node: Node) -> Text:
    if node.is_group:
        kind = plural(node.kind.removesuffix(GROUP_SUFFIX))
        return Text(f"{len(node.items)} {kind}...", style=f"bold {WHITE}")
    if node.virtual:
        return Text(node.meta_name or node.name)
    name = Text(f"{node.kind} ")
    name.append(f"{node.namespace}/{node.name}" if node.namespace else node.name, style="bold")
    if node.v1beta2.version is not None:
        name.append(f", {node.v1beta2.version}")
    if node.deleting:
        name = Text().append("!! DELETED !!", style=RED).append(" ").append_text(name)
    return name


def ordered_children(node: Node) -> list[Node]:
    return sorted(node.children, key=lambda child: (-child.z_order, row_name(child)))


def format_paragraph(text: str, width: int = MESSAGE_WIDTH) -> str:
    """``text`` wrapped at ``width``, its line breaks kept; a wrapped line keeps its indentation (and a bullet's)."""
    lines: list[str] = []
    for line in text.split("\n"):
        current = line[: len(line) - len(line.lstrip(" "))]
        indent = current + ("  " if line.strip().startswith("* ") else "")
        for word in _SPACES.split(line):
            if len(current) + len(word) < width:
                if current.strip():
                    current += " "
                current += word
                continue
            lines.append(current)
            current = indent + word
        lines.append(current)
    return "\n".join(lines)


def _color(condition: ConditionState, positive: bool) -> str:
    if condition.status == "True":
        return GREEN if positive else RED
    if condition.status == "False":
        return RED if positive else GREEN
    if condition.status == "Unknown":
        return YELLOW
    return GRAY


def _since(condition: ConditionState, now: datetime) -> str:
    return human_duration(now - condition.last_transition_time) if condition.last_transition_time else ""


def _is_zero(condition: ConditionState) -> bool:
    """A condition in its normal state with nothing to say (the non-zero filter leaves it out)."""
    positive = condition.type not in NEGATIVE_POLARITY
    normal = "True" if positive else "False"
    return condition.status == normal and not condition.message


Row = list[Text]


def _status_cells(condition: ConditionState | None, now: datetime, positive: bool = True) -> tuple[list[Text], str]:
    """STATUS, REASON and SINCE, and the formatted message."""
    if condition is None:
        return [Text(), Text(), Text()], ""
    color = _color(condition, positive)
    cells = [Text(condition.status, style=color), Text(condition.reason), Text(_since(condition, now))]
    return cells, format_paragraph(condition.message)


class _Printer:
    def __init__(self, root: Node, now: datetime, machine_pool_counters: bool) -> None:
        self.now = now
        self.machine_pool_counters = machine_pool_counters
        self.rows: list[Row] = []
        self.last = _last_node(root)

    def node(self, node: Node, prefix: str, ancestry: list[bool]) -> None:
        """``node``'s rows; ``ancestry``: for each ancestor, whether the path goes through its last child."""
        counters = node.v1beta2.counters
        if node.kind == "MachinePool" and not node.virtual and not self.machine_pool_counters:
            counters = Counters()
        status, message = _status_cells(node.v1beta2.status, self.now)
        message_text = Text(message)
        if node.is_group:
            message_text = Text(group_message(node), style=GRAY)
        if node.show_conditions:
            status, message_text = [Text(), Text(), Text()], Text()
        lines = message_text.split("\n", allow_blank=True) if message_text.plain else [Text()]
        name = Text().append(prefix, style=GRAY).append_text(_name_text(node))
        counts = [Text(x) for x in (counters.replicas, counters.available, counters.ready, counters.up_to_date)]
        self.rows.append([name, *counts, *status, lines[0]])
        continuation = self._multiline_prefix(node, ancestry)
        for line in lines[1:]:
            self.rows.append([Text(continuation, style=GRAY), *(Text() for _ in range(7)), line])
        if node.show_conditions:
            self._conditions(node, prefix)
        children = ordered_children(node)
        for index, child in enumerate(children):
            last = index == len(children) - 1
            self.node(child, child_prefix(prefix, index, len(children)), [*ancestry, last])

    def _multiline_prefix(self, node: Node, ancestry: list[bool]) -> str:
        if node is self.last:
            return ""
        return "".join(INDENT if last else PIPE for last in ancestry) + (PIPE if node.children else "")

    def _conditions(self, node: Node, prefix: str) -> None:
        shown = [
            condition
            for condition in node.v1beta2.conditions
            if not node.show_nonzero or condition.type in ALWAYS_SHOWN or not _is_zero(condition)
        ]
        under = prefix + (PIPE if node.children else INDENT) + CONDITION_FILLER
        for index, condition in enumerate(shown):
            condition_prefix = child_prefix(under, index, len(shown))
            status, message = _status_cells(condition, self.now, condition.type not in NEGATIVE_POLARITY)
            lines = Text(message).split("\n", allow_blank=True) if message else [Text()]
            label = Text().append(condition_prefix, style=GRAY).append(condition.type, style=CYAN)
            self.rows.append([label, *(Text() for _ in range(4)), *status, lines[0]])
            continuation = _multiline_condition_prefix(condition_prefix)
            for line in lines[1:]:
                self.rows.append([Text(continuation, style=GRAY), *(Text() for _ in range(7)), line])


def _multiline_condition_prefix(prefix: str) -> str:
    if prefix.endswith(FIRST_CHILD):
        return prefix.removesuffix(FIRST_CHILD) + PIPE
    if prefix.endswith(LAST_CHILD):
        return prefix.removesuffix(LAST_CHILD)
    return "?"


def _last_node(root: Node) -> Node:
    """The last row of the tree in display order."""
    node = root
    while node.children:
        node = ordered_children(node)[-1]
    return node


def render_table(root: Node, *, now: datetime, machine_pool_counters: bool = True) -> Text:
    """The v1beta2 table of the tree at ``root`` (module doc); ``machine_pool_counters=False`` leaves MachinePool
    rows empty, exactly as clusterctl prints them."""
    printer = _Printer(root, now, machine_pool_counters)
    printer.node(root, "", [])
    header = [Text(title) for title in HEADER]
    widths = [
        max([cell_len(header[column].plain) + 1, *(cell_len(row[column].plain) + 2 for row in printer.rows)])
        for column in range(len(HEADER))
    ]
    out = Text()
    for row in [header, *printer.rows]:
        line = Text()
        for column, cell in enumerate(row):
            line.append_text(cell)
            line.append(" " * (widths[column] - cell_len(cell.plain)))
        line.rstrip()
        out.append_text(line)
        out.append("\n")
    return out
