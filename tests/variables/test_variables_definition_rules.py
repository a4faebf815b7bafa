"""ClusterClass ``spec.variables`` checks, and robustness: no input makes the package raise."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from var_support import inline, triples

from clusterclass.topology.variables import (
    default_cluster_variables,
    default_override_variables,
    status_variables,
    validate_cluster_variables,
    validate_variable_definitions,
    variable_definitions,
    variables_for_patch,
)

S = "spec.variables[0].schema.openAPIV3Schema"
EXPECTING = (
    "{'[', '{', '(', '.', '-', '!', 'true', 'false', 'null', NUM_FLOAT, NUM_INT, NUM_UINT, STRING, BYTES, IDENTIFIER}"
)


def var(schema: Any, name: str = "v", **extra: Any) -> dict[str, Any]:
    return {"name": name, "required": False, "schema": {"openAPIV3Schema": schema}, **extra}


@pytest.mark.parametrize(
    ("variables", "expected"),
    [
        ([var({"type": "string"})], []),
        (
            [var({"type": "string"}, name="")],
            [("spec.variables[0].name", "Required value", "variable name must be defined")],
        ),
        (
            [var({"type": "string"}, name="builtin")],
            [("spec.variables[0].name", "Invalid value", '"builtin" is a reserved variable name')],
        ),
        (
            [var({"type": "string"}, name="a.b")],
            [("spec.variables[0].name", "Invalid value", 'variable name cannot contain "."')],
        ),
        (
            [var({"type": "string"}), var({"type": "integer"})],
            [
                (
                    "spec.variables[1].name",
                    "Invalid value",
                    'variable name must be unique. Variable with name "v" is defined more than once',
                )
            ],
        ),
        (
            [{"name": "v", "required": "yes", "schema": {}}],
            [
                ("spec.variables[0].required", "Invalid value", "must be a boolean"),
                (S, "Required value", "openAPIV3Schema must be defined"),
            ],
        ),
        ([var({})], [(f"{S}.type", "Required value", "type cannot be empty")]),
        ([var({"x-kubernetes-preserve-unknown-fields": True})], []),
        (
            [var({"type": "strin"})],
            [
                (
                    f"{S}.type",
                    "Unsupported value",
                    'supported values: "object", "array", "string", "integer", "number", "boolean"',
                )
            ],
        ),
        (
            [var({"type": "object", "properties": {"a": {}}})],
            [(f"{S}.properties[a].type", "Required value", "type cannot be empty")],
        ),
        ([var({"type": "array"})], [(f"{S}.items", "Required value", "must be specified")]),
        (
            [
                var(
                    {
                        "type": "object",
                        "properties": {"a": {"type": "string"}},
                        "additionalProperties": {"type": "string"},
                    }
                )
            ],
            [(f"{S}.additionalProperties", "Forbidden", "additionalProperties and properties are mutual exclusive")],
        ),
        (
            [var({"type": "string", "items": {"type": "string"}})],
            [(f"{S}.items", "Forbidden", 'must be empty for type "string"')],
        ),
        (
            [var({"type": "string", "x-kubernetes-int-or-string": True})],
            [(f"{S}.type", "Invalid value", "must be empty if x-kubernetes-int-or-string is true")],
        ),
        (
            [var({"type": "object", "anyOf": [{"type": "string"}]})],
            [(f"{S}.anyOf[0].type", "Forbidden", "must be empty to be structural")],
        ),
        # parse errors: wrong JSON types for keywords, invalid patterns
        ([var({"type": 5})], [(f"{S}.type", "Invalid value", "must be a string")]),
        (
            [var({"type": "object", "properties": ["a"]})],
            [(f"{S}.properties", "Invalid value", "must be a map of schemas")],
        ),
        (
            [var({"type": "string", "maxLength": -1})],
            [(f"{S}.maxLength", "Invalid value", "must be a non-negative integer")],
        ),
        (
            [var({"type": "string", "pattern": "(?=x)"})],
            [
                (
                    f"{S}.pattern",
                    "Invalid value",
                    "must be a valid regular expression, but isn't: error parsing regexp: invalid perl operator: (?=",
                )
            ],
        ),
        ([var("not a schema")], [(S, "Invalid value", "must be a schema object")]),
        # defaults, examples and enum values must be valid
        (
            [var({"type": "integer", "minimum": 1, "default": 0})],
            [(f"{S}.default", "Invalid value", "should be greater than or equal to 1")],
        ),
        (
            [var({"type": "object", "properties": {"a": {"type": "string", "default": 1}}})],
            [(f"{S}.properties[a].default", "Invalid value", 'must be of type string: "integer"')],
        ),
        (
            [var({"type": "object", "properties": {"a": {"type": "string"}}, "default": {"b": 1}})],
            [(f"{S}.default", "Invalid value", 'must not have unknown fields: "b"')],
        ),
        (
            [var({"type": "string", "example": 5})],
            [(f"{S}.example", "Invalid value", 'must be of type string: "integer"')],
        ),
        (
            [var({"type": "string", "enum": ["a", 1]})],
            [(f"{S}.enum[1]", "Invalid value", 'must be of type string: "integer"')],
        ),
        (
            [var({"type": "integer", "default": 0, "x-kubernetes-validations": [{"rule": "self > 0"}]})],
            [(f"{S}.default", "Invalid value", "failed rule: self > 0")],
        ),
        # CEL rules must compile against the schema
        (
            [
                var(
                    {
                        "type": "object",
                        "properties": {"a": {"type": "string"}},
                        "x-kubernetes-validations": [{"rule": "self.b == 'x'"}],
                    }
                )
            ],
            [(f"{S}.x-kubernetes-validations[0].rule", "Invalid value", "compilation failed: undefined field 'b'")],
        ),
        (
            [
                var(
                    {
                        "type": "string",
                        "x-kubernetes-validations": [
                            {"rule": "self ==", "messageExpression": "'a' +", "reason": "Nope", "fieldPath": "x"}
                        ],
                    }
                )
            ],
            [
                (
                    f"{S}.x-kubernetes-validations[0].rule",
                    "Invalid value",
                    "compilation failed: "
                    f"ERROR: <input>:1:8: Syntax error: mismatched input '<EOF>' expecting {EXPECTING}",
                ),
                (
                    f"{S}.x-kubernetes-validations[0].messageExpression",
                    "Invalid value",
                    "messageExpression compilation failed: "
                    f"ERROR: <input>:1:6: Syntax error: mismatched input '<EOF>' expecting {EXPECTING}",
                ),
                (
                    f"{S}.x-kubernetes-validations[0].reason",
                    "Unsupported value",
                    'supported values: "FieldValueInvalid", "FieldValueForbidden", '
                    '"FieldValueRequired", "FieldValueDuplicate"',
                ),
                (f"{S}.x-kubernetes-validations[0].fieldPath", "Invalid value", "must be a valid relative JSON path"),
            ],
        ),
        (
            [var({"type": "string", "x-kubernetes-validations": [{"message": "no rule"}]})],
            [(f"{S}.x-kubernetes-validations[0].rule", "Required value", "rule must be defined")],
        ),
    ],
)
def test_validate_variable_definitions(variables: list[Any], expected: list[Any]) -> None:
    assert triples(validate_variable_definitions(variables)) == expected


def test_not_a_list() -> None:
    assert triples(validate_variable_definitions({"a": 1})) == [
        ("spec.variables", "Invalid value", "must be a list of variables")
    ]
    assert validate_variable_definitions(None) == []


def test_self_referencing_values_do_not_recurse_forever() -> None:
    loop: list[Any] = []
    loop.append(loop)
    definitions = [inline("v", {"type": "array", "items": {"type": "array", "items": {"type": "string"}}})]
    assert default_cluster_variables([{"name": "v", "value": loop}], definitions)[0]["name"] == "v"
    assert triples(validate_cluster_variables([{"name": "v", "value": loop}], definitions)) == [
        ("spec.topology.variables[v].value", "Invalid value", "must not be nested more than 100 levels deep")
    ]


def test_very_deep_values_are_errors_not_exceptions() -> None:
    deep: Any = "x"
    for _ in range(5000):
        deep = [deep]
    definitions = [inline("v", {"type": "array", "x-kubernetes-preserve-unknown-fields": True})]
    values = [{"name": "v", "value": deep}, {"name": "v", "value": deep}]
    assert default_cluster_variables(values[:1], definitions)[0]["value"] is deep
    assert variables_for_patch(values[:1], definitions, "inline") == {"v": deep}
    [error] = validate_cluster_variables(values, definitions)  # a duplicate, with an unprintable value
    assert "is defined more than once" in str(error)
    [error] = validate_cluster_variables(values[:1], definitions)
    assert error.detail == "must not be nested more than 100 levels deep"


def test_self_referencing_schema_is_an_error() -> None:
    schema: dict[str, Any] = {"type": "object", "properties": {}}
    schema["properties"]["again"] = schema
    [error] = validate_cluster_variables([{"name": "v", "value": {}}], [inline("v", schema)])
    assert error.type.display == "Internal error" and "nested more than 64 levels deep" in error.detail


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=True) | st.text(max_size=5),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=3), children, max_size=3),
    max_leaves=12,
)
KEYWORDS = st.sampled_from(
    [
        "type",
        "format",
        "nullable",
        "x-kubernetes-int-or-string",
        "x-kubernetes-preserve-unknown-fields",
        "properties",
        "additionalProperties",
        "items",
        "required",
        "enum",
        "default",
        "maximum",
        "minimum",
        "maxLength",
        "pattern",
        "uniqueItems",
        "allOf",
        "not",
        "x-kubernetes-validations",
        "exclusiveMaximum",
    ]
)
SCHEMAS = st.recursive(
    st.dictionaries(KEYWORDS, JSON, max_size=4)
    | st.fixed_dictionaries({"type": st.sampled_from(["object", "array", "string", "integer", "number", "boolean"])}),
    lambda children: st.fixed_dictionaries(
        {"type": st.sampled_from(["object", "array"])},
        optional={
            "properties": st.dictionaries(st.text(max_size=3), children, max_size=2),
            "items": children,
            "additionalProperties": children,
            "default": JSON,
            "x-kubernetes-validations": st.lists(
                st.fixed_dictionaries(
                    {"rule": st.sampled_from(["self.size() > 0", "self == self", "has(self.a)", "self.(", "true"])}
                ),
                max_size=2,
            ),
        },
    ),
    max_leaves=6,
)


@settings(max_examples=300, deadline=None)
@given(schema=SCHEMAS | JSON, value=JSON, definition_from=st.sampled_from(["", "inline", "p"]))
def test_no_input_raises(schema: Any, value: Any, definition_from: str) -> None:
    definitions = [inline("v", schema)]
    values = [{"name": "v", "definitionFrom": definition_from, "value": value}]
    defaulted = default_cluster_variables(values, definitions)
    default_override_variables(values, definitions, field="o")
    for error in validate_cluster_variables(defaulted, definitions):
        assert str(error)
    validate_variable_definitions([{"name": "v", "required": True, "schema": {"openAPIV3Schema": schema}}])
    variables_for_patch(values, definitions, "inline")


def test_missing_or_malformed_inputs() -> None:
    definitions = [inline("v", {"type": "integer", "default": 1}, required=True)]
    assert default_cluster_variables(None, definitions) == [{"name": "v", "value": 1}]
    assert default_cluster_variables({"not": "a list"}, definitions) == []  # type: ignore[arg-type]
    assert default_override_variables(None, definitions, field="o") == []
    assert variables_for_patch(None, definitions, "inline") == {}
    assert triples(validate_cluster_variables(None, definitions)) == [
        ("spec.topology.variables", "Required value", 'required variable with name "v" must be defined')
    ]
    assert triples(validate_cluster_variables("v=1", definitions)) == [  # type: ignore[arg-type]
        ("spec.topology.variables", "Invalid value", "must be a list of variables")
    ]
    status = {"status": {"variables": [{"name": "v", "definitions": 5}, {"definitions": []}, "x"]}}
    assert [(v.name, v.definitions) for v in variable_definitions(status)] == [("v", ())]
    assert status_variables([{"name": "v", "schema": "nope"}, 3], {"p": "nonsense"}) == [  # type: ignore[dict-item]
        {"name": "v", "definitions": [{"from": "inline", "required": False, "schema": {}}]}
    ]


def test_field_errors_convert_to_topology_errors() -> None:
    from clusterclass.errors import ObjectKey

    [error] = validate_cluster_variables(
        [{"name": "cpu", "value": 0}], [inline("cpu", {"type": "integer", "minimum": 1})]
    )
    key = ObjectKey("cluster.x-k8s.io", "Cluster", "ns", "c1")
    converted = error.topology_error(key)
    assert (converted.message, converted.field, converted.obj) == (
        "Invalid value: 0: should be greater than or equal to 1",
        "spec.topology.variables[cpu].value",
        key,
    )
