"""Structural defaulting and pruning of variable values, with the Kubernetes apiextensions rules.

Defaulting (:func:`apply_defaults`): for every object in the value, each property whose schema has
a ``default`` and that is missing — or is ``null`` while the property is not ``nullable`` — gets
a copy of that default. Only object properties are defaulted (never array items or map entries
themselves), but the walk goes through arrays and ``additionalProperties`` maps to default the
objects inside them, and it continues into the defaults it has just applied, so a default object
picks up the nested defaults of its own properties. A default is pruned against its schema
before it is applied, so a sloppy default never introduces unknown fields.

Pruning (:func:`unknown_fields`, :func:`prune`): a field is unknown when its object's schema
neither names it in ``properties`` nor has ``additionalProperties``, unless the schema sets
``x-kubernetes-preserve-unknown-fields`` (then unknown fields stay, untouched and unchecked).
Paths of unknown fields are relative to the variable value: ``a.b``, ``list[0].c``, ``map.key``.

These walks never mutate their input; they work on copies. A value nested more than
:data:`MAX_DEPTH` levels deep (or referring to itself through a YAML alias) is returned as it is:
validation reports it.
"""

from __future__ import annotations

import copy
from typing import Any

from clusterclass.schema.jsonvalues import nesting_exceeds
from clusterclass.schema.model import Schema

MAX_DEPTH = 100


def apply_defaults(value: Any, schema: Schema) -> Any:
    """A copy of ``value`` with the structural defaults of ``schema`` applied at every level."""
    if nesting_exceeds(value, MAX_DEPTH):
        return value
    result = copy.deepcopy(value)
    _default(result, schema)
    return result


def default_top_level(present: bool, value: Any, schema: Schema) -> tuple[bool, Any]:
    """Default a whole variable: the variable's own ``default`` applies when it is absent (or null and
    not nullable), exactly as if the variable were a property of a wrapping object.

    Returns whether the variable has a value afterwards, and that value (with nested defaults).
    """
    if (not present or (value is None and not schema.nullable)) and schema.has_default:
        return True, apply_defaults(prune(schema.default, schema), schema)
    if not present:
        return False, None
    return True, apply_defaults(value, schema)


def _default(value: Any, schema: Schema | None) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        for name, prop in (schema.properties or {}).items():
            if not prop.has_default:
                continue
            if name not in value or (value[name] is None and not prop.nullable):
                value[name] = prune(prop.default, prop)
        for name, child in value.items():
            _default(child, schema.property_schema(name))
    elif isinstance(value, list):
        for item in value:
            _default(item, schema.items)


def prune(value: Any, schema: Schema) -> Any:
    """A copy of ``value`` without the fields ``schema`` does not know."""
    if nesting_exceeds(value, MAX_DEPTH):
        return value
    result = copy.deepcopy(value)
    _prune(result, schema, "", [])
    return result


def unknown_fields(value: Any, schema: Schema) -> list[str]:
    """The paths (relative to ``value``) of every field that pruning would drop, sorted."""
    found: list[str] = []
    if not nesting_exceeds(value, MAX_DEPTH):
        _prune(copy.deepcopy(value), schema, "", found)
    return sorted(found)


def _prune(value: Any, schema: Schema | None, path: str, found: list[str]) -> None:
    if schema is None:
        return
    if isinstance(value, dict):
        for name in list(value):
            child_schema = schema.property_schema(name)
            child_path = f"{path}.{name}" if path else name
            if child_schema is not None:
                _prune(value[name], child_schema, child_path, found)
            elif not schema.preserve_unknown_fields:
                found.append(child_path)
                del value[name]
    elif isinstance(value, list):
        for i, item in enumerate(value):
            _prune(item, schema.items, f"{path}[{i}]", found)
