"""v1beta2 condition merges (mirror, summary, aggregate) say exactly what upstream v1.14's would.

The aggregate and summary cases are answered by upstream's own ``util/conditions`` (built from its Go module by
``scripts/condition-merge-golden/regenerate.sh``, answers kept in ``data/condition_merge_golden.json``); each is
replayed through :mod:`clusterclass.api.condition_merge` and must give the same status, reason and message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from condition_merge_cases import CASES

from clusterclass.api.condition_merge import (
    Reasons,
    Source,
    Strategy,
    aggregate,
    default_priority,
    indent_if_multiline,
    mirror,
    summary,
)
from clusterclass.api.conditions import MetaCondition

GOLDEN = json.loads((Path(__file__).parent / "data" / "condition_merge_golden.json").read_text())


def test_the_golden_answers_are_for_todays_cases() -> None:
    assert [entry["case"] for entry in GOLDEN] == CASES, "run scripts/condition-merge-golden/regenerate.sh"


def _strategy(case: dict[str, Any]) -> Strategy:
    reasons = case.get("reasons")
    return Strategy(
        priority=default_priority(case.get("negativePolarity") or ()),
        **({"reasons": Reasons(*reasons)} if reasons else {}),
    )


def _ours(case: dict[str, Any]) -> MetaCondition:
    if case["operation"] == "summary":
        (obj,) = case["objects"]
        return summary(
            obj["conditions"],
            case["targetType"],
            case["forTypes"],
            owner=(obj["kind"], obj["name"]),
            strategy=_strategy(case),
            ignore_if_missing=case.get("ignoreIfMissing") or (),
        )
    sources = [Source(o["kind"], o["name"], o["conditions"], o["controlPlane"]) for o in case["objects"]]
    return aggregate(sources, case["sourceType"], case["targetType"], _strategy(case))


@pytest.mark.parametrize("entry", GOLDEN, ids=[f"{e['case']['operation']}-{i}" for i, e in enumerate(GOLDEN)])
def test_a_merge_says_what_upstreams_says(entry: dict[str, Any]) -> None:
    ours = _ours(entry["case"])
    assert {"status": ours.status, "reason": ours.reason, "message": ours.message} == entry["upstream"]


def test_a_mirror_copies_the_source_or_falls_back() -> None:
    source = [{"type": "Ready", "status": "False", "reason": "Waiting", "message": "for the VM"}]
    assert mirror(source, "Ready", "InfrastructureReady") == MetaCondition(
        "InfrastructureReady", "False", "Waiting", "for the VM"
    )
    fallback = MetaCondition("x", "True", "Ready")
    assert mirror([], "Ready", "InfrastructureReady", fallback) == MetaCondition("InfrastructureReady", "True", "Ready")
    assert mirror([], "Ready", "InfrastructureReady") == MetaCondition(
        "InfrastructureReady", "Unknown", "NotYetReported", "Condition Ready not yet reported"
    )


def test_a_summary_refuses_to_include_its_own_type() -> None:
    with pytest.raises(ValueError, match="cannot include Ready"):
        summary([], "Ready", ["Ready"])


def test_an_aggregate_needs_objects() -> None:
    with pytest.raises(ValueError, match="at least one object"):
        aggregate([], "Ready", "MachinesReady")


def test_one_line_messages_stay_on_the_line() -> None:
    assert indent_if_multiline("plain") == " plain"
