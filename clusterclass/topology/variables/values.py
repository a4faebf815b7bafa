"""Cluster variable values: defaulting, validation, and the variables each patch sees (spec §5.3, §5.9).

Values are ``ClusterVariable`` dicts (``{name, definitionFrom?, value}``) from
``Cluster.spec.topology.variables`` or a worker's ``variables.overrides``; definitions are the
ClusterClass's (:func:`~clusterclass.topology.variables.definitions.variable_definitions`).

Defaulting never fails: a value it cannot default (no definition, an ambiguous
``definitionFrom``, a broken schema) is returned as it is, and validation — which always runs
after defaulting, in the webhook and at reconcile — reports why. Cluster-level defaulting
(``createVariables``) also adds a value for every definition with a top-level ``default`` that no
value satisfies yet; override defaulting only defaults the overrides that exist.

Validation follows the apiextensions order for each value: OpenAPI schema, then CEL rules, then
unknown fields (the ones pruning would drop), stopping at the first stage that fails. Before the
values, the ``(name, definitionFrom)`` index is checked (no repeats, no mix of empty and
non-empty ``definitionFrom`` for one name) and, for the Cluster's own variables only, that every
required definition has a value. Error paths: ``<field>[<name>]`` for a variable,
``<field>[<name>].value.<path>`` inside its value, ``<field>`` itself for missing required ones.
Decoding the values (YAML or JSON) is the caller's job; a value is whatever that produced.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.fielderrors import FieldError
from clusterclass.schema.celrules import MISSING, validate_rules
from clusterclass.schema.defaulting import MAX_DEPTH, default_top_level, unknown_fields
from clusterclass.schema.jsonvalues import nesting_exceeds
from clusterclass.schema.model import Schema, parse_schema
from clusterclass.schema.validation import validate_value
from clusterclass.topology.variables.definitions import (
    BUILTIN,
    DefinitionIndex,
    DefinitionLookupError,
    Definitions,
    StatusVariable,
    VariableDefinition,
    as_definitions,
)

CLUSTER_VARIABLES_FIELD = "spec.topology.variables"


@dataclass(frozen=True)
class _Entry:
    """One well-formed value entry."""

    position: int
    name: str
    definition_from: str
    present: bool
    value: Any
    raw: Mapping[str, Any]


def default_cluster_variables(
    values: Sequence[Any] | None, definitions: Definitions, *, field: str = CLUSTER_VARIABLES_FIELD
) -> list[Any]:
    """``Cluster.spec.topology.variables`` with defaults applied and defaulted variables added.

    Existing values come first (with nested defaults), then one value per definition with a
    top-level default that no value satisfies: non-conflicting variables once with an empty
    ``definitionFrom``, conflicting ones once per ``from``, in definition order. ``field`` is
    accepted for symmetry with validation; defaulting reports nothing.
    """
    del field
    return _default(values or [], definitions, create=True)


def default_override_variables(values: Sequence[Any] | None, definitions: Definitions, *, field: str) -> list[Any]:
    """A worker's ``variables.overrides`` with nested defaults applied; no variable is ever added."""
    del field
    return _default(values, definitions, create=False) if values else []


def validate_cluster_variables(
    values: Sequence[Any] | None,
    definitions: Definitions,
    *,
    field: str = CLUSTER_VARIABLES_FIELD,
    old_values: Sequence[Any] | None = None,
) -> list[FieldError]:
    """Every problem with the Cluster's variables, required variables included."""
    return _validate(values or [], definitions, field=field, old_values=old_values, check_required=True)


def validate_override_variables(
    values: Sequence[Any] | None,
    definitions: Definitions,
    *,
    field: str,
    old_values: Sequence[Any] | None = None,
) -> list[FieldError]:
    """Every problem with a worker's overrides (required variables are not checked for overrides)."""
    return _validate(values or [], definitions, field=field, old_values=old_values, check_required=False)


def variables_for_patch(values: Sequence[Any], definitions: Definitions, definition_from: str) -> dict[str, Any]:
    """Name → value of the user variables a patch with this ``definitionFrom`` sees (spec §5.3).

    A value is kept when its name is not ``builtin``, its ``definitionFrom`` is empty or equal to
    ``definition_from``, and the name has a definition from exactly ``definition_from``. If both
    an empty and a matching ``definitionFrom`` value exist (invalid, but possible unvalidated),
    the matching one wins. Values are deep copies.
    """
    defined = DefinitionIndex(as_definitions(definitions)).names_from(definition_from)
    result: dict[str, Any] = {}
    exact: set[str] = set()
    for entry in _entries(values or [], [], ""):
        if entry.name == BUILTIN or entry.name not in defined:
            continue
        if entry.definition_from not in ("", definition_from) or entry.name in exact:
            continue
        if entry.definition_from:
            exact.add(entry.name)
        result[entry.name] = _copy(entry.value) if entry.present else None
    return result


def _copy(value: Any) -> Any:
    """A deep copy; a value too deep to copy (thousands of levels) is shared rather than raising."""
    try:
        return copy.deepcopy(value)
    except RecursionError:
        return value


# --- defaulting ------------------------------------------------------------------------------


def _default(values: Sequence[Any], source: Definitions, *, create: bool) -> list[Any]:
    if not isinstance(values, Sequence) or isinstance(values, str | bytes):
        return []  # not a list of variables: validation says so
    definitions = as_definitions(source)
    entries = _entries(values, [], "")
    if _index_problems(entries, ""):
        return [_copy(raw) for raw in values]
    index = DefinitionIndex(definitions)
    by_position = {entry.position: entry for entry in entries}
    result: list[Any] = []
    for position, raw in enumerate(values):
        entry = by_position.get(position)
        defaulted = _default_entry(entry, index) if entry is not None else None
        result.append(defaulted if defaulted is not None else _copy(raw))
    if create:
        result.extend(_added_defaults(entries, definitions))
    return result


def _default_entry(entry: _Entry, index: DefinitionIndex) -> dict[str, Any] | None:
    try:
        definition = index.get(entry.name, entry.definition_from)
    except DefinitionLookupError:
        return None
    schema = _usable_schema(definition)
    if schema is None or (entry.present and nesting_exceeds(entry.value, MAX_DEPTH)):
        return None
    present, value = default_top_level(entry.present, entry.value, schema)
    defaulted = {key: _copy(item) for key, item in entry.raw.items() if key != "value"}
    if present:
        defaulted["value"] = value
    return defaulted


def _added_defaults(entries: list[_Entry], definitions: list[StatusVariable]) -> list[dict[str, Any]]:
    existing: dict[str, set[str]] = {}
    for entry in entries:
        existing.setdefault(entry.name, set()).add(entry.definition_from)
    added: list[dict[str, Any]] = []
    handled: set[str] = set()
    for variable in definitions:
        if not variable.name:
            continue  # an unnamed definition (refused by the ClusterClass rules) can never be satisfied
        froms = existing.get(variable.name, set())
        for definition in variable.definitions:
            if definition.from_ in froms or "" in froms:
                continue
            if not variable.definitions_conflict:
                if variable.name in handled or froms:
                    continue
                handled.add(variable.name)
                definition_from = ""
            else:
                definition_from = definition.from_
            schema = _usable_schema(definition)
            if schema is None:
                continue
            present, value = default_top_level(False, None, schema)
            if present:
                item: dict[str, Any] = {"name": variable.name}
                if definition_from:
                    item["definitionFrom"] = definition_from
                item["value"] = value
                added.append(item)
    return added


def _usable_schema(definition: VariableDefinition) -> Schema | None:
    schema, errors = parse_schema(definition.schema, "openAPIV3Schema")
    return None if errors else schema


# --- validation ------------------------------------------------------------------------------


def _validate(
    values: Sequence[Any],
    source: Definitions,
    *,
    field: str,
    old_values: Sequence[Any] | None,
    check_required: bool,
) -> list[FieldError]:
    definitions = as_definitions(source)
    if not isinstance(values, Sequence) or isinstance(values, str | bytes):
        return [fe.invalid(field, values, "must be a list of variables")]
    errors: list[FieldError] = []
    entries = _entries(values, errors, field)
    problems = _index_problems(entries, field)
    if problems:
        return errors + problems
    index = DefinitionIndex(definitions)
    if check_required:
        errors.extend(_required_errors(entries, definitions, field))
    old = {(e.name, e.definition_from): e.value for e in _entries(old_values or [], [], "") if e.present}
    for entry in entries:
        path = fe.key(field, entry.name)
        try:
            definition = index.get(entry.name, entry.definition_from)
        except DefinitionLookupError as err:
            errors.append(fe.invalid(path, entry.value if entry.present else None, str(err)))
            continue
        old_value = old.get((entry.name, entry.definition_from), MISSING)
        value = entry.value if entry.present else None
        errors.extend(validate_variable_value(entry.name, value, definition, path, old_value))
    return errors


def validate_variable_value(
    name: str, value: Any, definition: VariableDefinition, path: str, old_value: Any = MISSING
) -> list[FieldError]:
    """One value against its definition: schema, then CEL rules, then unknown fields.

    ``path`` is the variable's path (``spec.topology.variables[name]``); errors inside the value
    are reported under ``<path>.value``. ``old_value`` enables CEL transition rules.
    """
    schema, schema_errors = parse_schema(definition.schema, "openAPIV3Schema")
    if schema_errors:
        problems = "; ".join(str(e) for e in schema_errors)
        detail = f'failed to convert schema definition for variable "{name}"; ClusterClass should be checked: '
        detail += problems
        return [fe.internal(path, detail)]
    value_path = fe.child(path, "value")
    if nesting_exceeds(value, MAX_DEPTH):
        return [fe.invalid(value_path, "", f"must not be nested more than {MAX_DEPTH} levels deep")]
    errors = validate_value(value, schema, value_path)
    if errors:
        return errors
    errors = validate_rules(value, schema, value_path, old_value=old_value)
    if errors:
        return errors
    unknown = unknown_fields(value, schema)
    if unknown:
        paths = ",".join(unknown)
        detail = f'failed validation: "{paths}" fields are not specified in the variable schema of variable "{name}"'
        return [fe.invalid(path, value, detail)]
    return []


def _required_errors(entries: list[_Entry], definitions: list[StatusVariable], field: str) -> list[FieldError]:
    froms: dict[str, set[str]] = {}
    for entry in entries:
        froms.setdefault(entry.name, set()).add(entry.definition_from)
    errors: list[FieldError] = []
    for variable in definitions:
        for definition in variable.definitions:
            if not definition.required:
                continue
            given = froms.get(variable.name)
            if not given:
                error = fe.required(field, f'required variable with name "{variable.name}" must be defined')
            elif ("" in given and not variable.definitions_conflict) or definition.from_ in given:
                continue
            else:
                detail = f'required variable with name "{variable.name}" from "{definition.from_}" must be defined'
                error = fe.required(field, detail)
            if error not in errors:
                errors.append(error)
    return errors


# --- entries and the (name, definitionFrom) index --------------------------------------------


def _entries(values: Any, errors: list[FieldError], field: str) -> list[_Entry]:
    """The well-formed entries of ``values``; shape problems go to ``errors``."""
    if not isinstance(values, Sequence) or isinstance(values, str | bytes):
        return []
    entries: list[_Entry] = []
    for position, raw in enumerate(values):
        entry_path = fe.index(field, position)
        if not isinstance(raw, Mapping):
            errors.append(fe.invalid(entry_path, raw, "must be an object with name and value"))
            continue
        name = raw.get("name")
        if not isinstance(name, str) or not name:
            errors.append(fe.required(fe.child(entry_path, "name"), "variable name must be defined"))
            continue
        definition_from = raw.get("definitionFrom")
        if definition_from is None:
            definition_from = ""
        if not isinstance(definition_from, str):
            from_path = fe.child(fe.key(field, name), "definitionFrom")
            errors.append(fe.invalid(from_path, definition_from, "must be a string"))
            continue
        entries.append(_Entry(position, name, definition_from, "value" in raw, raw.get("value"), raw))
    return entries


def _index_problems(entries: list[_Entry], field: str) -> list[FieldError]:
    errors: list[FieldError] = []
    seen: dict[str, set[str]] = {}
    for entry in entries:
        froms = seen.setdefault(entry.name, set())
        if entry.definition_from in froms:
            detail = f'variable "{entry.name}" from "{entry.definition_from}" is defined more than once'
            errors.append(fe.invalid(fe.key(field, entry.name), entry.value, detail))
        froms.add(entry.definition_from)
    for name, froms in seen.items():
        if "" in froms and len(froms) > 1:
            detail = f'variable "{name}" is defined with a mix of empty and non-empty values for definitionFrom'
            errors.append(fe.invalid(fe.key(field, name), "", detail))
    return errors
