"""Helpers for the variable tests: definitions from schemas, and errors as comparable tuples."""

from __future__ import annotations

from typing import Any

from clusterclass.topology.variables import (
    FieldError,
    StatusVariable,
    VariableDefinition,
    validate_cluster_variables,
)

FIELD = "spec.topology.variables"


def inline(name: str, schema: dict[str, Any], *, required: bool = False) -> StatusVariable:
    """One inline (non-conflicting) definition."""
    return StatusVariable(name, False, (VariableDefinition(name, "inline", required, schema),))


def multi(name: str, *defs: tuple[str, dict[str, Any], bool], conflict: bool) -> StatusVariable:
    """A variable with several definitions: (from, schema, required) each."""
    return StatusVariable(name, conflict, tuple(VariableDefinition(name, f, r, s, conflict) for f, s, r in defs))


def triples(errors: list[FieldError]) -> list[tuple[str, str, str]]:
    """(field, kubernetes error type display, detail) of each error."""
    return [(e.field, e.type.display, e.detail) for e in errors]


def check_value(schema: dict[str, Any], value: Any, name: str = "v") -> list[tuple[str, str, str]]:
    """Validation errors of one value of a variable ``name`` with ``schema``."""
    return triples(validate_cluster_variables([{"name": name, "value": value}], [inline(name, schema)]))
