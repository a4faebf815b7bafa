"""The v1beta2 view of ``describe cluster`` prints what upstream's own ``clusterctl describe cluster`` (v1.14) prints.

``data/clusterctl-v1.14.json`` holds a live Cluster's objects (mid-upgrade, a paused MachineDeployment's Machines
outdated, multi-line messages) and clusterctl's output for five flag sets, captured by
``scripts/describe-golden/capture.py`` with clusterctl built from its Go module; each is rendered here from the same
objects at the same moment and must be the same text (clusterctl pads lines with trailing spaces, which neither
side's comparison keeps). The one deliberate difference, MachinePool rows' replica counters, is left out for the
comparison and checked on its own.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from clusterclass.describe.objects import ClusterObjects
from clusterclass.describe.render_v1beta2 import format_paragraph, render_table
from clusterclass.describe.tree import TreeOptions, build_tree, parse_time

GOLDEN = json.loads((Path(__file__).parent / "data" / "clusterctl-v1.14.json").read_text())


def options(flags: list[str]) -> TreeOptions:
    found: dict[str, Any] = {"v1beta2": True}
    for flag in flags:
        name, _, value = flag.removeprefix("--").partition("=")
        if name == "show-conditions":
            found["show_conditions"] = value
        elif name == "grouping":
            found["grouping"] = value != "false"
        else:
            found[name.replace("-", "_")] = True
    return TreeOptions(**found)


def objects() -> ClusterObjects:
    (cluster,) = [o for o in GOLDEN["objects"] if o["kind"] == "Cluster"]
    return ClusterObjects.of(cluster, GOLDEN["objects"])


def trimmed(text: str) -> str:
    return "".join(line.rstrip() + "\n" for line in text.splitlines())


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=[" ".join(c["flags"]) or "default" for c in GOLDEN["cases"]])
def test_the_table_is_clusterctls(case: dict[str, Any]) -> None:
    now = parse_time(case["now"])
    assert now is not None
    tree = build_tree(objects(), options(case["flags"]))
    ours = render_table(tree, now=now, machine_pool_counters=False).plain
    assert ours == trimmed(case["output"])


def test_machine_pool_rows_show_their_counters() -> None:
    now = parse_time(GOLDEN["cases"][0]["now"])
    assert now is not None
    table = render_table(build_tree(objects(), options([])), now=now).plain
    pools = [line for line in table.splitlines() if "─MachinePool " in line]
    assert pools and all("3/3" in line or "2/2" in line for line in pools), pools


def test_messages_wrap_at_a_hundred_characters_keeping_their_breaks_and_indentation() -> None:
    words = " ".join(["word"] * 30)
    wrapped = format_paragraph(f"* {words}\nnext")
    lines = wrapped.splitlines()
    assert all(len(line) < 100 for line in lines) and lines[-1] == "next"
    assert lines[1].startswith("  word")  # a bullet's continuation is indented under its text
