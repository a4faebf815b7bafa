"""OpenAPI validation of variable values, keyword by keyword, with exact paths, types and messages."""

from __future__ import annotations

from typing import Any

import pytest
from var_support import check_value

P = "spec.topology.variables[v].value"
INVALID = "Invalid value"


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        # type
        ({"type": "integer"}, 1, []),
        ({"type": "integer"}, 3.0, []),  # Kubernetes accepts an integral float as an integer
        ({"type": "integer"}, -(2**63), []),
        ({"type": "integer"}, 1.5, [(P, INVALID, 'must be of type integer: "number"')]),
        ({"type": "integer"}, 2**63, [(P, INVALID, 'must be of type integer: "number"')]),
        ({"type": "integer"}, "1", [(P, INVALID, 'must be of type integer: "string"')]),
        ({"type": "integer"}, True, [(P, INVALID, 'must be of type integer: "boolean"')]),
        ({"type": "number"}, 1, []),
        ({"type": "number"}, 1.5, []),
        ({"type": "number"}, False, [(P, INVALID, 'must be of type number: "boolean"')]),
        ({"type": "number"}, float("nan"), [(P, INVALID, "must be a finite number")]),
        ({"type": "string"}, "a", []),
        ({"type": "string"}, 1, [(P, INVALID, 'must be of type string: "integer"')]),
        ({"type": "boolean"}, False, []),
        ({"type": "boolean"}, "true", [(P, INVALID, 'must be of type boolean: "string"')]),
        ({"type": "array", "items": {"type": "string"}}, [], []),
        ({"type": "array", "items": {"type": "string"}}, {}, [(P, INVALID, 'must be of type array: "object"')]),
        ({"type": "object"}, {}, []),
        ({"type": "object"}, [], [(P, INVALID, 'must be of type object: "array"')]),
        # nullable
        ({"type": "string"}, None, [(P, INVALID, 'must be of type string: "null"')]),
        ({"type": "string", "nullable": True}, None, []),
        ({"type": "string", "nullable": True, "minLength": 3}, None, []),
        ({"type": "object", "properties": {"a": {"type": "string", "nullable": True}}}, {"a": None}, []),
        (
            {"type": "object", "properties": {"a": {"type": "string"}}},
            {"a": None},
            [(f"{P}.a", INVALID, 'must be of type string: "null"')],
        ),
        # x-kubernetes-int-or-string
        ({"x-kubernetes-int-or-string": True}, 3, []),
        ({"x-kubernetes-int-or-string": True}, "50%", []),
        ({"x-kubernetes-int-or-string": True}, 2.0, []),
        ({"x-kubernetes-int-or-string": True}, 2.5, [(P, INVALID, 'must be of type integer,string: "number"')]),
        ({"x-kubernetes-int-or-string": True}, True, [(P, INVALID, 'must be of type integer,string: "boolean"')]),
        ({"x-kubernetes-int-or-string": True}, None, [(P, INVALID, 'must be of type integer,string: "null"')]),
        ({"x-kubernetes-int-or-string": True, "pattern": "^[0-9]+%?$"}, "10%", []),
        (
            {"x-kubernetes-int-or-string": True, "pattern": "^[0-9]+%?$"},
            "ten",
            [(P, INVALID, "should match '^[0-9]+%?$'")],
        ),
        ({"x-kubernetes-int-or-string": True, "maximum": 5}, 6, [(P, INVALID, "should be less than or equal to 5")]),
        # enum
        ({"type": "string", "enum": ["a", "b"]}, "a", []),
        ({"type": "string", "enum": ["a", "b"]}, "c", [(P, "Unsupported value", 'supported values: "a", "b"')]),
        ({"type": "integer", "enum": [1, 2]}, 2.0, []),
        (
            {"type": "string", "enum": [1, 2]},
            3,
            [(P, INVALID, 'must be of type string: "integer"'), (P, "Unsupported value", 'supported values: "1", "2"')],
        ),
        (
            {"type": "boolean", "enum": [True]},
            1,
            [(P, INVALID, 'must be of type boolean: "integer"'), (P, "Unsupported value", 'supported values: "true"')],
        ),
        (
            {"type": "object", "properties": {"l": {"type": "string"}}, "enum": [{"l": "x"}]},
            {"l": "y"},
            [(P, "Unsupported value", 'supported values: "{\\"l\\":\\"x\\"}"')],
        ),
        ({"type": "array", "items": {"type": "string"}, "enum": [["1", "2"]]}, ["1", "2"], []),
        # numeric bounds
        ({"type": "integer", "maximum": 10}, 10, []),
        ({"type": "integer", "maximum": 10}, 11, [(P, INVALID, "should be less than or equal to 10")]),
        ({"type": "integer", "maximum": 10, "exclusiveMaximum": True}, 10, [(P, INVALID, "should be less than 10")]),
        ({"type": "integer", "maximum": 10, "exclusiveMaximum": True}, 9, []),
        ({"type": "integer", "minimum": 1}, 1, []),
        ({"type": "integer", "minimum": 1}, 0, [(P, INVALID, "should be greater than or equal to 1")]),
        ({"type": "integer", "minimum": 1, "exclusiveMinimum": True}, 1, [(P, INVALID, "should be greater than 1")]),
        ({"type": "number", "minimum": 1}, 0.5, [(P, INVALID, "should be greater than or equal to 1")]),
        ({"type": "number", "maximum": 1.5}, 1.75, [(P, INVALID, "should be less than or equal to 1.5")]),
        # string lengths and pattern
        ({"type": "string", "minLength": 2}, "ab", []),
        ({"type": "string", "minLength": 2}, "a", [(P, INVALID, "should be at least 2 chars long")]),
        ({"type": "string", "maxLength": 2}, "ab", []),
        ({"type": "string", "maxLength": 2}, "abc", [(P, "Too long", "may not be longer than 2")]),
        ({"type": "string", "maxLength": 2}, "éé", []),  # characters, not bytes
        ({"type": "string", "pattern": "^[0-9]+$"}, "0123", []),
        ({"type": "string", "pattern": "^[0-9]+$"}, "000000a", [(P, INVALID, "should match '^[0-9]+$'")]),
        ({"type": "string", "pattern": "[0-9]"}, "ab1cd", []),  # a search, as Go's MatchString
        ({"type": "string", "pattern": "^\\pL+$"}, "héllo", []),  # RE2 Unicode classes
        ({"type": "string", "pattern": "^[[:alpha:]]+\\z"}, "abc", []),  # RE2 POSIX classes and \z
        # arrays
        ({"type": "array", "items": {"type": "string"}, "minItems": 2}, ["a", "b"], []),
        (
            {"type": "array", "items": {"type": "string"}, "minItems": 3},
            ["a", "b"],
            [(P, INVALID, "should have at least 3 items")],
        ),
        (
            {"type": "array", "items": {"type": "string"}, "maxItems": 1},
            ["a", "b"],
            [(P, "Too many", "must have at most 1 items")],
        ),
        ({"type": "array", "items": {"type": "string"}, "uniqueItems": True}, ["a", "b"], []),
        (
            {"type": "array", "items": {"type": "string"}, "uniqueItems": True},
            ["a", "a"],
            [(P, INVALID, "shouldn't contain duplicates")],
        ),
        (
            {"type": "array", "items": {"type": "number"}, "uniqueItems": True},
            [1, 1.0],
            [(P, INVALID, "shouldn't contain duplicates")],
        ),
        (
            {
                "type": "array",
                "items": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                "uniqueItems": True,
            },
            [{"a": 1, "b": 2}, {"b": 2, "a": 1}],
            [(P, INVALID, "shouldn't contain duplicates")],
        ),
        (
            {"type": "array", "items": {"type": "string", "enum": ["x"]}},
            ["x", "y"],
            [(f"{P}[1]", "Unsupported value", 'supported values: "x"')],
        ),
        # objects
        (
            {
                "type": "object",
                "properties": {"url": {"type": "string"}, "on": {"type": "boolean"}},
                "required": ["url"],
            },
            {"on": "true"},
            [(f"{P}.url", "Required value", ""), (f"{P}.on", INVALID, 'must be of type boolean: "string"')],
        ),
        ({"type": "object", "properties": {"url": {"type": "string"}}, "required": ["url"]}, {"url": "x"}, []),
        (
            {
                "type": "object",
                "additionalProperties": {"type": "object", "properties": {"u": {"type": "string"}}, "required": ["u"]},
            },
            {"proxy": {}},
            [(f"{P}.proxy.u", "Required value", "")],
        ),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}},
            {"a": 1, "b": "x"},
            [(f"{P}.b", INVALID, 'must be of type integer: "string"')],
        ),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}, "maxProperties": 1},
            {"a": 1, "b": 2},
            [(P, "Too many", "must have at most 1 items")],
        ),
        (
            {"type": "object", "additionalProperties": {"type": "integer"}, "minProperties": 2},
            {"a": 1},
            [(P, INVALID, "should have at least 2 properties")],
        ),
        (
            {
                "type": "object",
                "properties": {
                    "a": {
                        "type": "object",
                        "properties": {"b": {"type": "array", "items": {"type": "integer", "minimum": 0}}},
                    }
                },
            },
            {"a": {"b": [1, -1]}},
            [(f"{P}.a.b[1]", INVALID, "should be greater than or equal to 0")],
        ),
    ],
)
def test_schema_keywords(schema: dict[str, Any], value: Any, expected: list[tuple[str, str, str]]) -> None:
    assert check_value(schema, value) == expected


OBJ = {"type": "object", "properties": {"a": {"type": "boolean"}, "b": {"type": "boolean"}, "c": {"type": "boolean"}}}


@pytest.mark.parametrize(
    ("combinators", "value", "expected"),
    [
        ({"allOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": True, "b": True}, []),
        (
            {"allOf": [{"required": ["a"]}, {"required": ["b"]}]},
            {"a": True},
            [(f"{P}.b", "Required value", ""), (P, INVALID, "must validate all the schemas (allOf)")],
        ),
        ({"anyOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"b": True}, []),
        (
            {"anyOf": [{"required": ["a"]}, {"required": ["b"]}]},
            {"c": True},
            [(P, INVALID, "must validate at least one schema (anyOf)")],
        ),
        ({"oneOf": [{"required": ["a"]}, {"required": ["b"]}]}, {"a": True}, []),
        (
            {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
            {"a": True, "b": True},
            [(P, INVALID, "must validate one and only one schema (oneOf). Found 2 valid alternatives")],
        ),
        (
            {"oneOf": [{"required": ["a"]}, {"required": ["b"]}]},
            {},
            [(P, INVALID, "must validate one and only one schema (oneOf)")],
        ),
        ({"not": {"required": ["a", "b"]}}, {"a": True}, []),
        (
            {"not": {"required": ["a", "b"]}},
            {"a": True, "b": True},
            [(P, INVALID, "must not validate the schema (not)")],
        ),
    ],
)
def test_value_validations(combinators: dict[str, Any], value: Any, expected: list[tuple[str, str, str]]) -> None:
    assert check_value({**OBJ, **combinators}, value) == expected


def test_quantity_pattern_on_int_or_string_items() -> None:
    number = r"(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))"
    pattern = rf"^(\+|-)?{number}(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?{number}))?$"
    schema = {
        "type": "array",
        "items": {
            "x-kubernetes-int-or-string": True,
            "anyOf": [{"type": "integer"}, {"type": "string"}],
            "pattern": pattern,
        },
    }
    assert check_value(schema, ["500000G", "200M", "0.2G", 1000]) == []
    assert check_value(schema, ["lots"]) == [(f"{P}[0]", INVALID, f"should match '{pattern}'")]


def test_error_renders_like_kubectl() -> None:
    from var_support import inline

    from clusterclass.topology.variables import validate_cluster_variables

    errors = validate_cluster_variables(
        [{"name": "cpu", "value": 99}], [inline("cpu", {"type": "integer", "maximum": 10})]
    )
    assert [str(e) for e in errors] == [
        "spec.topology.variables[cpu].value: Invalid value: 99: should be less than or equal to 10"
    ]
    errors = validate_cluster_variables([{"name": "z", "value": "c"}], [inline("z", {"type": "string", "enum": ["a"]})])
    assert [str(e) for e in errors] == [
        'spec.topology.variables[z].value: Unsupported value: "c": supported values: "a"'
    ]


def test_long_values_are_cut_when_rendered() -> None:
    from var_support import inline

    from clusterclass.topology.variables import validate_cluster_variables

    value = ["x" * 40] * 20
    [error] = validate_cluster_variables([{"name": "v", "value": value}], [inline("v", {"type": "string"})])
    assert error.value == value
    rendered = str(error)
    assert rendered.startswith('spec.topology.variables[v].value: Invalid value: ["xxxx')
    assert rendered.endswith('...: must be of type string: "array"') and len(rendered) < 350
