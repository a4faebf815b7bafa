"""Setting v1beta2 conditions (``with_meta_conditions``) as upstream v1.14's ``conditions.Set`` does."""

from __future__ import annotations

from clusterclass.api.conditions import MetaCondition, with_meta_conditions

T0, T1 = "2026-12-04T10:00:00Z", "2026-12-04T11:00:00Z"


def test_conditions_are_kept_in_upstreams_order() -> None:
    """Available and Ready first, Paused and Deleting last, gates and unknown types just before them."""
    changes = [
        MetaCondition(type_, "True", "R")
        for type_ in ("Deleting", "example.com/Gate", "TopologyReconciled", "Paused", "Ready", "Available", "ScalingUp")
    ]
    found = with_meta_conditions([], changes, T0, 1)
    assert found is not None
    assert [c["type"] for c in found] == [
        "Available",
        "Ready",
        "TopologyReconciled",
        "ScalingUp",
        "example.com/Gate",
        "Paused",
        "Deleting",
    ]


def test_the_transition_time_moves_only_with_the_status() -> None:
    first = with_meta_conditions([], [MetaCondition("Ready", "False", "NotReady", "a")], T0, 1)
    assert first is not None
    second = with_meta_conditions(first, [MetaCondition("Ready", "False", "NotReady", "b")], T1, 2)
    assert second is not None
    assert (second[0]["lastTransitionTime"], second[0]["message"], second[0]["observedGeneration"]) == (T0, "b", 2)
    third = with_meta_conditions(second, [MetaCondition("Ready", "True", "Ready")], T1, 2)
    assert third is not None and third[0]["lastTransitionTime"] == T1
    assert with_meta_conditions(third, [MetaCondition("Ready", "True", "Ready")], "later", 2) is None
