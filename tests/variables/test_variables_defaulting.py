"""Variable defaulting: top-level and nested defaults, createVariables, overrides (spec §5.9, A23)."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from var_support import inline, multi

from clusterclass.topology.variables import (
    default_cluster_variables,
    default_override_variables,
    validate_cluster_variables,
)

OVERRIDES = "spec.topology.workers.machinePools[0].variables.overrides"

NESTED = {
    "type": "object",
    "properties": {
        "url": {"type": "string", "default": "http://proxy"},
        "enabled": {"type": "boolean"},
        "tls": {
            "type": "object",
            "default": {},
            "properties": {"verify": {"type": "boolean", "default": True}, "ca": {"type": "string"}},
        },
    },
}


@pytest.mark.parametrize(
    ("schema", "values", "expected"),
    [
        # a top-level default adds the variable
        ({"type": "integer", "default": 3}, [], [{"name": "v", "value": 3}]),
        # no default, nothing added
        ({"type": "integer"}, [], []),
        # an existing value is kept
        ({"type": "integer", "default": 3}, [{"name": "v", "value": 5}], [{"name": "v", "value": 5}]),
        # null and not nullable: the default applies, as apiextensions does
        ({"type": "integer", "default": 3}, [{"name": "v", "value": None}], [{"name": "v", "value": 3}]),
        # null and nullable: kept
        (
            {"type": "integer", "default": 3, "nullable": True},
            [{"name": "v", "value": None}],
            [{"name": "v", "value": None}],
        ),
        # a value key missing altogether counts as null
        ({"type": "integer", "default": 3}, [{"name": "v"}], [{"name": "v", "value": 3}]),
        # nested defaults, including inside a default just applied
        (
            NESTED,
            [{"name": "v", "value": {"enabled": True}}],
            [{"name": "v", "value": {"enabled": True, "url": "http://proxy", "tls": {"verify": True}}}],
        ),
        (
            NESTED,
            [{"name": "v", "value": {"url": "http://mine", "tls": {"verify": False}}}],
            [{"name": "v", "value": {"url": "http://mine", "tls": {"verify": False}}}],
        ),
        # a nested null that is not nullable is defaulted
        (
            NESTED,
            [{"name": "v", "value": {"url": None, "tls": None}}],
            [{"name": "v", "value": {"url": "http://proxy", "tls": {"verify": True}}}],
        ),
        # a top-level object default gets its own nested defaults
        (
            {**NESTED, "default": {"enabled": False}},
            [],
            [{"name": "v", "value": {"enabled": False, "url": "http://proxy", "tls": {"verify": True}}}],
        ),
        # defaults reach objects inside arrays and maps, but never add items or entries
        (
            {"type": "array", "items": {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}}},
            [{"name": "v", "value": [{}, {"n": 5}]}],
            [{"name": "v", "value": [{"n": 1}, {"n": 5}]}],
        ),
        (
            {
                "type": "object",
                "additionalProperties": {"type": "object", "properties": {"n": {"type": "integer", "default": 1}}},
            },
            [{"name": "v", "value": {"a": {}, "b": {"n": 2}}}],
            [{"name": "v", "value": {"a": {"n": 1}, "b": {"n": 2}}}],
        ),
        # a default with fields the schema does not know is pruned before it is applied
        (
            {
                "type": "object",
                "properties": {
                    "o": {"type": "object", "properties": {"a": {"type": "string"}}, "default": {"a": "x", "b": 1}}
                },
            },
            [{"name": "v", "value": {}}],
            [{"name": "v", "value": {"o": {"a": "x"}}}],
        ),
        # ... unless the schema preserves unknown fields
        (
            {
                "type": "object",
                "properties": {
                    "o": {"type": "object", "x-kubernetes-preserve-unknown-fields": True, "default": {"a": "x", "b": 1}}
                },
            },
            [{"name": "v", "value": {}}],
            [{"name": "v", "value": {"o": {"a": "x", "b": 1}}}],
        ),
        # user-supplied unknown fields are not pruned by defaulting (validation reports them)
        (
            NESTED,
            [{"name": "v", "value": {"url": "u", "tls": {}, "extra": 1}}],
            [{"name": "v", "value": {"url": "u", "tls": {"verify": True}, "extra": 1}}],
        ),
    ],
)
def test_default_cluster_variables(schema: dict[str, Any], values: list[Any], expected: list[Any]) -> None:
    assert default_cluster_variables(values, [inline("v", schema)]) == expected


def test_existing_values_first_then_added_in_definition_order() -> None:
    definitions = [
        inline("a", {"type": "string", "default": "A"}),
        inline("b", {"type": "string"}),
        inline("c", {"type": "string", "default": "C"}),
        inline("d", {"type": "string", "default": "D"}),
    ]
    values = [{"name": "d", "value": "mine"}, {"name": "b", "value": "B"}]
    assert default_cluster_variables(values, definitions) == [
        {"name": "d", "value": "mine"},
        {"name": "b", "value": "B"},
        {"name": "a", "value": "A"},
        {"name": "c", "value": "C"},
    ]


def test_non_conflicting_definitions_add_one_value_with_empty_definition_from() -> None:
    schema = {"type": "integer", "default": 1}
    definitions = [multi("v", ("inline", schema, False), ("patch1", schema, False), conflict=False)]
    assert default_cluster_variables([], definitions) == [{"name": "v", "value": 1}]


def test_conflicting_definitions_add_one_value_per_origin() -> None:
    definitions = [
        multi(
            "v",
            ("inline", {"type": "integer", "default": 1}, False),
            ("patch1", {"type": "string", "default": "one"}, False),
            ("patch2", {"type": "string"}, False),
            conflict=True,
        )
    ]
    assert default_cluster_variables([], definitions) == [
        {"name": "v", "definitionFrom": "inline", "value": 1},
        {"name": "v", "definitionFrom": "patch1", "value": "one"},
    ]
    # a value for one origin satisfies that origin only
    values = [{"name": "v", "definitionFrom": "patch1", "value": "mine"}]
    assert default_cluster_variables(values, definitions) == [
        {"name": "v", "definitionFrom": "patch1", "value": "mine"},
        {"name": "v", "definitionFrom": "inline", "value": 1},
    ]


def test_a_value_with_empty_definition_from_satisfies_every_origin() -> None:
    definitions = [
        multi(
            "v",
            ("inline", {"type": "integer", "default": 1}, False),
            ("p", {"type": "integer", "default": 2}, False),
            conflict=True,
        )
    ]
    values = [{"name": "v", "value": 7}]
    assert default_cluster_variables(values, definitions) == values


def test_defaulted_values_validate() -> None:
    definitions = [inline("v", NESTED, required=True), inline("n", {"type": "integer", "default": 3}, required=True)]
    defaulted = default_cluster_variables([{"name": "v", "value": {}}], definitions)
    assert validate_cluster_variables(defaulted, definitions) == []


def test_overrides_are_defaulted_but_never_added() -> None:
    definitions = [inline("v", NESTED), inline("n", {"type": "integer", "default": 3})]
    assert default_override_variables([], definitions, field=OVERRIDES) == []
    assert default_override_variables([{"name": "v", "value": {"tls": {}}}], definitions, field=OVERRIDES) == [
        {"name": "v", "value": {"tls": {"verify": True}, "url": "http://proxy"}}
    ]
    # an override set to null gets the top-level default (it exists, so it is defaulted)
    assert default_override_variables([{"name": "n", "value": None}], definitions, field=OVERRIDES) == [
        {"name": "n", "value": 3}
    ]


def test_defaulting_never_mutates_its_input() -> None:
    values = [{"name": "v", "value": {"tls": {}}}]
    schema = copy.deepcopy(NESTED)
    definitions = [inline("v", schema)]
    before = copy.deepcopy(values)
    result = default_cluster_variables(values, definitions)
    assert values == before
    assert schema == NESTED
    result[0]["value"]["tls"]["verify"] = "changed"
    assert default_cluster_variables(values, definitions)[0]["value"]["tls"]["verify"] is True


@pytest.mark.parametrize(
    "values",
    [
        [{"name": "unknown", "value": 1}],  # no definition
        [{"name": "v", "value": 1}, {"name": "v", "value": 2}],  # defined twice: left alone, nothing added
        ["not-an-object", {"name": ""}, {"name": 5}],
        [{"name": "v", "definitionFrom": 7, "value": 1}],
    ],
)
def test_defaulting_leaves_what_it_cannot_default_for_validation_to_report(values: list[Any]) -> None:
    definitions = [inline("v", {"type": "integer", "default": 1}), inline("w", {"type": "integer"})]
    result = default_cluster_variables(values, definitions)
    assert result[: len(values)] == values
    assert validate_cluster_variables(result, definitions) != []


def test_broken_schema_is_not_defaulted() -> None:
    definitions = [inline("v", {"type": "object", "properties": "nope", "default": {}})]
    assert default_cluster_variables([], definitions) == []
    assert default_cluster_variables([{"name": "v", "value": {}}], definitions) == [{"name": "v", "value": {}}]


def test_definitions_may_be_given_as_the_cluster_class() -> None:
    cc = {
        "spec": {
            "variables": [
                {"name": "v", "required": True, "schema": {"openAPIV3Schema": {"type": "integer", "default": 4}}}
            ]
        }
    }
    assert default_cluster_variables([], cc) == [{"name": "v", "value": 4}]
