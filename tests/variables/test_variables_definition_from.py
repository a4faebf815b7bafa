"""Required variables, the (name, definitionFrom) rules, and which variables a patch sees (§5.3, §5.9, §10.8)."""

from __future__ import annotations

from typing import Any

import pytest
from var_support import FIELD, inline, multi, triples

from clusterclass.topology.variables import (
    status_variables,
    validate_cluster_variables,
    validate_override_variables,
    variable_definitions,
    variables_for_patch,
)

INT = {"type": "integer"}
STR = {"type": "string"}
OVERRIDES = "spec.topology.workers.machinePools[0].variables.overrides"


@pytest.mark.parametrize(
    ("definitions", "values", "expected"),
    [
        # required
        (
            [inline("cpu", INT, required=True), inline("zone", STR, required=True)],
            [{"name": "zone", "value": "a"}],
            [(FIELD, "Required value", 'required variable with name "cpu" must be defined')],
        ),
        ([inline("cpu", INT, required=True)], [{"name": "cpu", "value": 1}], []),
        ([inline("cpu", INT, required=False)], [], []),
        # a required, non-conflicting variable is satisfied by a value with empty definitionFrom ...
        (
            [multi("cpu", ("inline", INT, True), ("patch1", INT, True), conflict=False)],
            [{"name": "cpu", "value": 1}],
            [],
        ),
        # ... but a conflicting one needs a value for each required origin
        (
            [multi("cpu", ("inline", INT, True), ("patch1", STR, True), conflict=True)],
            [{"name": "cpu", "definitionFrom": "inline", "value": 1}],
            [(FIELD, "Required value", 'required variable with name "cpu" from "patch1" must be defined')],
        ),
        (
            [multi("cpu", ("inline", INT, True), ("patch1", STR, True), conflict=True)],
            [
                {"name": "cpu", "definitionFrom": "inline", "value": 1},
                {"name": "cpu", "definitionFrom": "patch1", "value": "x"},
            ],
            [],
        ),
        # no definition
        (
            [],
            [{"name": "location", "value": "us-east-1"}],
            [(f"{FIELD}[location]", "Invalid value", 'no definitions found for variable "location"')],
        ),
        (
            [inline("cpu", INT)],
            [{"name": "cpu", "definitionFrom": "nope", "value": 1}],
            [(f"{FIELD}[cpu]", "Invalid value", 'no definitions found for variable "cpu" from "nope"')],
        ),
        # conflicting definitions need definitionFrom
        (
            [multi("cpu", ("inline", STR, False), ("somepatch", INT, False), conflict=True)],
            [{"name": "cpu", "value": 1}],
            [
                (
                    f"{FIELD}[cpu]",
                    "Invalid value",
                    'variable "cpu" has conflicting definitions. It requires a non-empty `definitionFrom`',
                )
            ],
        ),
        # with definitionFrom, the matching schema is used
        (
            [multi("cpu", ("inline", STR, False), ("somepatch", INT, False), conflict=True)],
            [{"name": "cpu", "definitionFrom": "somepatch", "value": "x"}],
            [(f"{FIELD}[cpu].value", "Invalid value", 'must be of type integer: "string"')],
        ),
        # non-conflicting definitions: an empty definitionFrom validates against the shared schema
        (
            [multi("cpu", ("inline", STR, False), ("somepatch", STR, False), conflict=False)],
            [{"name": "cpu", "value": 1}],
            [(f"{FIELD}[cpu].value", "Invalid value", 'must be of type string: "integer"')],
        ),
        # index rules: a repeat and a mix stop validation before anything else
        (
            [inline("cpu", INT, required=True), inline("other", INT, required=True)],
            [{"name": "cpu", "value": 1}, {"name": "cpu", "value": 2}],
            [(f"{FIELD}[cpu]", "Invalid value", 'variable "cpu" from "" is defined more than once')],
        ),
        (
            [multi("cpu", ("inline", INT, False), ("p", INT, False), conflict=True)],
            [{"name": "cpu", "definitionFrom": "p", "value": 1}, {"name": "cpu", "definitionFrom": "p", "value": 2}],
            [(f"{FIELD}[cpu]", "Invalid value", 'variable "cpu" from "p" is defined more than once')],
        ),
        (
            [multi("cpu", ("inline", INT, False), ("p", INT, False), conflict=False)],
            [{"name": "cpu", "value": 1}, {"name": "cpu", "definitionFrom": "p", "value": 2}],
            [
                (
                    f"{FIELD}[cpu]",
                    "Invalid value",
                    'variable "cpu" is defined with a mix of empty and non-empty values for definitionFrom',
                )
            ],
        ),
        # malformed entries
        (
            [inline("cpu", INT)],
            ["cpu", {"value": 1}, {"name": "cpu", "definitionFrom": 3, "value": 1}],
            [
                (f"{FIELD}[0]", "Invalid value", "must be an object with name and value"),
                (f"{FIELD}[1].name", "Required value", "variable name must be defined"),
                (f"{FIELD}[cpu].definitionFrom", "Invalid value", "must be a string"),
            ],
        ),
    ],
)
def test_validate_cluster_variables(definitions: list[Any], values: list[Any], expected: list[Any]) -> None:
    assert triples(validate_cluster_variables(values, definitions)) == expected


def test_overrides_are_not_checked_for_required_variables() -> None:
    definitions = [inline("cpu", INT, required=True), inline("zone", {"type": "string", "minLength": 1}, required=True)]
    assert validate_override_variables([{"name": "zone", "value": "a"}], definitions, field=OVERRIDES) == []
    assert triples(
        validate_override_variables(
            [{"name": "zone", "value": ""}, {"name": "x", "value": 1}], definitions, field=OVERRIDES
        )
    ) == [
        (f"{OVERRIDES}[zone].value", "Invalid value", "should be at least 1 chars long"),
        (f"{OVERRIDES}[x]", "Invalid value", 'no definitions found for variable "x"'),
    ]


def test_broken_schema_is_one_internal_error_not_an_exception() -> None:
    definitions = [inline("cpu", {"type": "integer", "minimum": "one", "pattern": "("})]
    errors = validate_cluster_variables([{"name": "cpu", "value": 1}], definitions)
    assert [(e.field, e.type.display) for e in errors] == [(f"{FIELD}[cpu]", "Internal error")]
    assert errors[0].detail.startswith(
        'failed to convert schema definition for variable "cpu"; ClusterClass should be checked: '
        'openAPIV3Schema.minimum: Invalid value: "one": must be a number; openAPIV3Schema.pattern: '
    )


# --- the variables one patch sees (spec §5.3; upstream TestMachinePool "for a given patch name") ---------------

PATCH_DEFINITIONS = [
    multi("location", ("patch1", STR, False), ("anotherPatch", STR, False), conflict=True),
    multi("cpu", ("patch1", INT, False), ("inline", INT, False), conflict=False),
    inline("http-proxy", STR),
]


def test_machine_pool_overrides_for_a_given_patch_name() -> None:
    overrides = [
        {"name": "location", "value": "us-central", "definitionFrom": "patch1"},
        {"name": "location", "value": "us-east", "definitionFrom": "anotherPatch"},
        {"name": "cpu", "value": 8},
        {"name": "http-proxy", "value": "internal.proxy.com"},
    ]
    assert variables_for_patch(overrides, PATCH_DEFINITIONS, "patch1") == {"location": "us-central", "cpu": 8}
    assert variables_for_patch(overrides, PATCH_DEFINITIONS, "inline") == {"cpu": 8, "http-proxy": "internal.proxy.com"}
    assert variables_for_patch(overrides, PATCH_DEFINITIONS, "anotherPatch") == {"location": "us-east"}


def test_variables_for_patch_skips_builtin_and_copies_values() -> None:
    definitions = [
        inline("obj", {"type": "object", "x-kubernetes-preserve-unknown-fields": True}),
        inline("builtin", STR),
    ]
    values = [{"name": "builtin", "value": "spoof"}, {"name": "obj", "value": {"a": [1]}}, "junk", {"value": 1}]
    seen = variables_for_patch(values, definitions, "inline")
    assert seen == {"obj": {"a": [1]}}
    seen["obj"]["a"].append(2)
    assert values[1] == {"name": "obj", "value": {"a": [1]}}


def test_variables_for_patch_prefers_the_exact_definition_from() -> None:
    definitions = [inline("v", INT)]
    values = [{"name": "v", "definitionFrom": "inline", "value": 1}, {"name": "v", "value": 2}]
    assert variables_for_patch(values, definitions, "inline") == {"v": 1}


# --- where definitions come from ------------------------------------------------------------------


def test_definitions_from_status_when_present() -> None:
    cc = {
        "spec": {"variables": [{"name": "ignored", "required": False, "schema": {"openAPIV3Schema": STR}}]},
        "status": {
            "variables": [
                {
                    "name": "cpu",
                    "definitionsConflict": True,
                    "definitions": [
                        {"from": "inline", "required": True, "schema": {"openAPIV3Schema": INT}},
                        {"from": "patch1", "required": False, "schema": {"openAPIV3Schema": STR}},
                    ],
                }
            ]
        },
    }
    [variable] = variable_definitions(cc)
    assert variable.name == "cpu" and variable.definitions_conflict
    assert [(d.from_, d.required, d.schema, d.conflicts) for d in variable.definitions] == [
        ("inline", True, INT, True),
        ("patch1", False, STR, True),
    ]


def test_definitions_from_spec_without_status_sorted_by_name() -> None:
    cc = {
        "spec": {
            "variables": [
                {"name": "b", "required": True, "schema": {"openAPIV3Schema": INT}},
                {"name": "a", "required": False, "schema": {"openAPIV3Schema": STR}},
                "junk",
            ]
        }
    }
    definitions = variable_definitions(cc)
    assert [(v.name, v.definitions_conflict, [(d.from_, d.required) for d in v.definitions]) for v in definitions] == [
        ("a", False, [("inline", False)]),
        ("b", False, [("inline", True)]),
    ]
    assert variable_definitions({}) == [] and variable_definitions("nonsense") == []


def test_status_variables_marks_conflicts() -> None:
    inline_vars = [{"name": "cpu", "required": True, "schema": {"openAPIV3Schema": INT}}]
    discovered = {
        "p1": [{"name": "cpu", "required": True, "schema": {"openAPIV3Schema": INT}}],
        "p2": [
            {"name": "zone", "required": False, "schema": {"openAPIV3Schema": STR}},
            {"name": "cpu", "required": False, "schema": {"openAPIV3Schema": INT}},
        ],
    }
    status = status_variables(inline_vars, discovered)
    assert [
        (v["name"], v.get("definitionsConflict", False), [d["from"] for d in v["definitions"]]) for v in status
    ] == [
        ("cpu", True, ["inline", "p1", "p2"]),
        ("zone", False, ["p2"]),
    ]
    assert status_variables(inline_vars, {"p1": inline_vars})[0].get("definitionsConflict") is None
