"""JSON merge patch: the RFC 7386 appendix A examples, and that inputs are never changed."""

from __future__ import annotations

import copy
from typing import Any

import pytest

from clusterclass.api.merge_patch import merge_patch


@pytest.mark.parametrize(
    ("target", "patch", "expected"),
    [
        ({"a": "b"}, {"a": "c"}, {"a": "c"}),
        ({"a": "b"}, {"b": "c"}, {"a": "b", "b": "c"}),
        ({"a": "b"}, {"a": None}, {}),
        ({"a": "b", "b": "c"}, {"a": None}, {"b": "c"}),
        ({"a": ["b"]}, {"a": "c"}, {"a": "c"}),
        ({"a": "c"}, {"a": ["b"]}, {"a": ["b"]}),
        ({"a": {"b": "c"}}, {"a": {"b": "d", "c": None}}, {"a": {"b": "d"}}),
        ({"a": [{"b": "c"}]}, {"a": [1]}, {"a": [1]}),
        (["a", "b"], ["c", "d"], ["c", "d"]),
        ({"a": "b"}, ["c"], ["c"]),
        ({"a": "foo"}, None, None),
        ({"a": "foo"}, "bar", "bar"),
        ({"e": None}, {"a": 1}, {"e": None, "a": 1}),
        ([1, 2], {"a": "b", "c": None}, {"a": "b"}),
        ({}, {"a": {"bb": {"ccc": None}}}, {"a": {"bb": {}}}),
    ],
)
def test_rfc7386_examples(target: Any, patch: Any, expected: Any) -> None:
    before = (copy.deepcopy(target), copy.deepcopy(patch))
    assert merge_patch(target, patch) == expected
    assert (target, patch) == before


def test_result_shares_nothing_with_the_patch() -> None:
    patch = {"a": {"list": [1]}}
    result = merge_patch({}, patch)
    result["a"]["list"].append(2)
    assert patch == {"a": {"list": [1]}}
