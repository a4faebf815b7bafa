"""Rendering a :class:`~clusterclass.plan.planner.Plan`: JSON, YAML, or a readable summary.

The machine formats are one object for all planned Clusters::

    {"created": [<object>...],
     "modified": [{"before": <object>, "after": <object>, "diff": "<unified diff>"}...],
     "deleted": [{"apiVersion", "kind", "namespace", "name"}...]}

The text format groups changes per Cluster, says where upgrades stand, and shows each
modification as a coloured unified diff of the object's YAML.
"""

from __future__ import annotations

import difflib
import json
from typing import Any

from rich.console import Console
from rich.text import Text

from clusterclass.api.objects import Obj, name_of, namespace_of
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL
from clusterclass.plan.planner import ClusterPlan, Plan
from clusterclass.topology.changes import Change
from clusterclass.topology.desired import Computation
from clusterclass.yamlio import dump_yaml


def to_yaml(obj: Any) -> str:
    text: str = dump_yaml(obj)
    return text


def unified_diff(before: Obj, after: Obj) -> str:
    label = f"{before.get('kind')} {namespace_of(before)}/{name_of(before)}"
    lines = difflib.unified_diff(
        to_yaml(before).splitlines(keepends=True),
        to_yaml(after).splitlines(keepends=True),
        fromfile=f"{label} (current)",
        tofile=f"{label} (planned)",
    )
    return "".join(lines)


def _reference(obj: Obj) -> Obj:
    return {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "namespace": namespace_of(obj),
        "name": name_of(obj),
    }


def as_data(plan: Plan) -> dict[str, list[Any]]:
    data: dict[str, list[Any]] = {"created": [], "modified": [], "deleted": []}
    for cluster_plan in plan.clusters:
        for change in cluster_plan.changes:
            if change.action == "create":
                data["created"].append(change.after)
            elif change.action == "update":
                assert change.before is not None and change.after is not None
                data["modified"].append(
                    {"before": change.before, "after": change.after, "diff": unified_diff(change.before, change.after)}
                )
            else:
                assert change.before is not None
                data["deleted"].append(_reference(change.before))
    return data


def render_json(plan: Plan) -> str:
    return json.dumps(as_data(plan), indent=2) + "\n"


def render_yaml(plan: Plan) -> str:
    return to_yaml(as_data(plan))


def upgrade_notes(computation: Computation) -> list[str]:
    """Where the version rollout stands, in the words of upgrade sequencing (spec §4)."""
    notes = []
    version = computation.blueprint.topology.version
    cp = computation.upgrades.control_plane
    if cp.is_starting_upgrade:
        notes.append(f"control plane starts upgrading to {version}")
    elif cp.is_provisioning:
        notes.append("control plane is provisioning")
    elif cp.is_upgrading:
        notes.append("control plane is upgrading")
    elif cp.is_scaling:
        notes.append("control plane is scaling")
    if cp.is_pending_upgrade:
        notes.append(f"control plane upgrade to {version} is pending")
    for kind in (MACHINE_DEPLOYMENT, MACHINE_POOL):
        upgrades = computation.upgrades.workers(kind)
        for label, names in (
            ("upgrading", upgrades.upgrading),
            ("pending upgrade", upgrades.pending_upgrade - upgrades.deferred),
            ("upgrade deferred", upgrades.deferred),
            ("creation pending until the control plane is stable", upgrades.pending_create),
        ):
            if names:
                notes.append(f"{kind.noun}s {label}: {', '.join(sorted(names))}")
    return notes


_STYLE = {"create": ("+", "created", "green"), "update": ("~", "modified", "yellow"), "delete": ("-", "deleted", "red")}


def _change_line(change: Change) -> Text:
    symbol, word, style = _STYLE[change.action]
    obj = change.object
    line = Text(f"  {symbol} {word:<9}", style=style)
    line.append(f"{obj.get('kind')} {namespace_of(obj)}/{name_of(obj)}")
    if change.note:
        line.append(f"  ({change.note})", style="dim")
    return line


def _diff_text(diff: str) -> Text:
    text = Text()
    for line in diff.splitlines():
        style = "bold" if line.startswith(("---", "+++")) else None
        if style is None and line.startswith("+"):
            style = "green"
        elif style is None and line.startswith("-"):
            style = "red"
        elif style is None and line.startswith("@@"):
            style = "cyan"
        text.append("      " + line + "\n", style=style)
    return text


def render_text(plan: Plan, console: Console) -> None:
    for cluster_plan in plan.clusters:
        _render_cluster(cluster_plan, console)


def _render_cluster(cluster_plan: ClusterPlan, console: Console) -> None:
    key = cluster_plan.cluster
    header = Text(f"Cluster {key.namespace}/{key.name}", style="bold")
    computation = cluster_plan.computation
    if computation is not None:
        topology = computation.blueprint.topology
        header.append(f" (ClusterClass {topology.class_name}, version {topology.version})")
    console.print(header)
    if cluster_plan.error:
        console.print(Text(f"  error: {cluster_plan.error}", style="bold red"))
        console.print()
        return
    if cluster_plan.skipped:
        console.print(Text(f"  note: {cluster_plan.skipped}", style="cyan"))
    if not cluster_plan.changes:
        console.print(f'  No changes detected for Cluster "{key.namespace}/{key.name}".')
    for change in cluster_plan.changes:
        console.print(_change_line(change))
    if computation is not None:
        for note in upgrade_notes(computation):
            console.print(Text(f"  note: {note}", style="cyan"))
    for warning in cluster_plan.warnings:
        console.print(Text(f"  warning: {warning}", style="magenta"))
    for change in cluster_plan.changes:
        if change.action == "update":
            assert change.before is not None and change.after is not None
            console.print(_diff_text(unified_diff(change.before, change.after)), end="")
    console.print()
