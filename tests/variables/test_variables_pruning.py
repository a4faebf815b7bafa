"""Unknown fields: values must not carry fields that pruning would drop (spec §5.9)."""

from __future__ import annotations

from typing import Any

import pytest
from var_support import check_value

from clusterclass.schema.defaulting import prune, unknown_fields
from clusterclass.schema.model import parse_schema

V = "spec.topology.variables[v]"
KNOWN = {"type": "object", "properties": {"known": {"type": "boolean"}}}


def unknown(paths: str) -> list[tuple[str, str, str]]:
    return [
        (
            V,
            "Invalid value",
            f'failed validation: "{paths}" fields are not specified in the variable schema of variable "v"',
        )
    ]


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (KNOWN, {"known": True}, []),
        (KNOWN, {"known": True, "unknown": 1}, unknown("unknown")),
        (KNOWN, {"Known": True}, unknown("Known")),  # names are case-sensitive
        ({**KNOWN, "x-kubernetes-preserve-unknown-fields": True}, {"known": True, "unknown": 1}, []),
        # preserve-unknown-fields without properties keeps everything below it
        ({"type": "object", "x-kubernetes-preserve-unknown-fields": True}, {"a": {"b": {"c": 1}}}, []),
        # nested: reported with the path inside the value
        ({"type": "object", "properties": {"test": KNOWN}}, {"test": {"known": False, "u": True}}, unknown("test.u")),
        # preserving one level does not preserve the nested level that has its own properties
        (
            {"type": "object", "properties": {"test": KNOWN}, "x-kubernetes-preserve-unknown-fields": True},
            {"test": {"known": False, "u": True}},
            unknown("test.u"),
        ),
        # ... but does preserve unknown fields at its own level
        (
            {"type": "object", "properties": {"test": KNOWN}, "x-kubernetes-preserve-unknown-fields": True},
            {"test": {"known": False}, "u": True},
            [],
        ),
        # arrays and maps
        ({"type": "array", "items": KNOWN}, [{"known": True}, {"x": 1}], unknown("[1].x")),
        ({"type": "object", "additionalProperties": KNOWN}, {"a": {"known": True, "x": 1}}, unknown("a.x")),
        # several, sorted and joined with commas
        ({"type": "object", "properties": {"test": KNOWN}}, {"z": 1, "test": {"y": 2}, "a": 3}, unknown("a,test.y,z")),
    ],
)
def test_unknown_fields(schema: dict[str, Any], value: Any, expected: list[tuple[str, str, str]]) -> None:
    assert check_value(schema, value) == expected


def test_schema_errors_are_reported_before_unknown_fields() -> None:
    assert check_value(KNOWN, {"known": "yes", "unknown": 1}) == [
        (f"{V}.value.known", "Invalid value", 'must be of type boolean: "string"')
    ]


def test_prune_returns_a_pruned_copy() -> None:
    schema, errors = parse_schema({"type": "object", "properties": {"a": KNOWN}}, "s")
    assert errors == []
    value = {"a": {"known": True, "x": 1}, "b": 2}
    assert prune(value, schema) == {"a": {"known": True}}
    assert value == {"a": {"known": True, "x": 1}, "b": 2}
    assert unknown_fields(value, schema) == ["a.x", "b"]
