"""Labels and annotations of generated objects: the one metadata merge (spec §2.5, Appendix A2–A3)."""

from __future__ import annotations

from typing import Any

import builders as b
import pytest

from clusterclass.topology.metadata import merge_maps, topology_labels, without_upgrade_sequencing


@pytest.mark.parametrize(
    ("maps", "expected"),
    [
        (({"a": "1"}, {"a": "2", "b": "3"}), {"a": "1", "b": "3"}),
        (({"a": "1"}, {"a": "2"}, {"a": "3", "c": "4"}), {"a": "1", "c": "4"}),
        ((None, {"x": "y"}), {"x": "y"}),
        (({"x": "y"}, None), {"x": "y"}),
        ((None, None), None),
        (({}, {}), None),
        ((), None),
        (({"empty": ""},), {"empty": ""}),
    ],
)
def test_merge_maps_first_wins_and_empty_is_none(maps: tuple[Any, ...], expected: Any) -> None:
    assert merge_maps(*maps) == expected


def test_merge_maps_does_not_change_its_inputs() -> None:
    first, second = {"a": "1"}, {"a": "2", "b": "3"}
    merge_maps(first, second)
    assert (first, second) == ({"a": "1"}, {"a": "2", "b": "3"})


@pytest.mark.parametrize(
    ("annotations", "expected"),
    [
        ({b.DEFER_UPGRADE: "", b.HOLD_UPGRADE_SEQUENCE: "", "keep": "k"}, {"keep": "k"}),
        ({b.DEFER_UPGRADE: "x"}, None),
        ({}, None),
        (None, None),
        ({"keep": "k"}, {"keep": "k"}),
    ],
)
def test_without_upgrade_sequencing(annotations: Any, expected: Any) -> None:
    assert without_upgrade_sequencing(annotations) == expected


def test_topology_labels_enforce_cluster_name_and_owned() -> None:
    assert topology_labels("c1", {b.CLUSTER_NAME: "wrong", "x": "y"}) == {b.CLUSTER_NAME: "c1", b.OWNED: "", "x": "y"}
    assert topology_labels("c1") == {b.CLUSTER_NAME: "c1", b.OWNED: ""}
