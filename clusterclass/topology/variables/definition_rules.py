"""Definition-side checks of ``ClusterClass.spec.variables`` (the ClusterClass webhook, spec §5.9).

Names: defined, unique, not ``builtin``, without ``.``. Schemas: parse (every keyword of the
right JSON type, patterns valid RE2), structural (types set and known, ``items`` on arrays,
``properties`` xor ``additionalProperties``, value validations without structure), every
``default``/``example``/``enum`` value valid against its own schema node (defaults also without
unknown fields and passing the node's CEL rules), every CEL rule compiling against the schema.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.fielderrors import FieldError
from clusterclass.schema.celrules import rule_definition_errors, validate_rules
from clusterclass.schema.defaulting import MAX_DEPTH, apply_defaults, unknown_fields
from clusterclass.schema.jsonvalues import nesting_exceeds
from clusterclass.schema.model import Schema, parse_schema, structural_errors
from clusterclass.schema.validation import validate_value
from clusterclass.topology.variables.definitions import BUILTIN


def validate_variable_definitions(variables: Any, *, field: str = "spec.variables") -> list[FieldError]:
    """Every problem with a ClusterClass's ``spec.variables``."""
    if variables is None:
        return []
    if not isinstance(variables, Sequence) or isinstance(variables, str | bytes):
        return [fe.invalid(field, variables, "must be a list of variables")]
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, variable in enumerate(variables):
        path = fe.index(field, i)
        if not isinstance(variable, dict):
            errors.append(fe.invalid(path, variable, "must be an object"))
            continue
        errors.extend(_name_errors(variable.get("name"), fe.child(path, "name"), seen))
        if "required" in variable and not isinstance(variable["required"], bool):
            errors.append(fe.invalid(fe.child(path, "required"), variable["required"], "must be a boolean"))
        schema = variable.get("schema")
        schema_path = fe.child(fe.child(path, "schema"), "openAPIV3Schema")
        raw = schema.get("openAPIV3Schema") if isinstance(schema, dict) else None
        if raw is None:
            errors.append(fe.required(schema_path, "openAPIV3Schema must be defined"))
            continue
        errors.extend(schema_definition_errors(raw, schema_path))
    return errors


def _name_errors(name: Any, path: str, seen: set[str]) -> list[FieldError]:
    if not isinstance(name, str) or not name:
        return [fe.required(path, "variable name must be defined")]
    errors: list[FieldError] = []
    if name == BUILTIN:
        errors.append(fe.invalid(path, name, '"builtin" is a reserved variable name'))
    if "." in name:
        errors.append(fe.invalid(path, name, 'variable name cannot contain "."'))
    if name in seen:
        detail = f'variable name must be unique. Variable with name "{name}" is defined more than once'
        errors.append(fe.invalid(path, name, detail))
    seen.add(name)
    return errors


def schema_definition_errors(raw: Any, path: str) -> list[FieldError]:
    """Every problem with one ``openAPIV3Schema`` (also usable for discovered variables)."""
    schema, errors = parse_schema(raw, path)
    if errors:
        return errors
    errors = structural_errors(schema, path)
    errors.extend(rule_definition_errors(schema, path))
    if not errors:
        _check_values(schema, path, errors)
    return errors


def _check_values(s: Schema, path: str, errors: list[FieldError]) -> None:
    """Defaults, examples and enum values of every node must be valid for that node."""
    if s.has_default:
        default_path = fe.child(path, "default")
        if nesting_exceeds(s.default, MAX_DEPTH):
            errors.append(fe.invalid(default_path, "", f"must not be nested more than {MAX_DEPTH} levels deep"))
        else:
            unknown = unknown_fields(s.default, s)
            if unknown:
                detail = f'must not have unknown fields: "{",".join(unknown)}"'
                errors.append(fe.invalid(default_path, s.default, detail))
            defaulted = apply_defaults(s.default, s)
            problems = validate_value(defaulted, s, default_path) or validate_rules(defaulted, s, default_path)
            errors.extend(problems)
    if s.has_example and not nesting_exceeds(s.example, MAX_DEPTH):
        errors.extend(validate_value(s.example, s, fe.child(path, "example")))
    for i, allowed in enumerate(s.enum or []):
        if not nesting_exceeds(allowed, MAX_DEPTH):
            errors.extend(validate_value(allowed, s, fe.index(fe.child(path, "enum"), i)))
    for name, prop in (s.properties or {}).items():
        _check_values(prop, fe.key(fe.child(path, "properties"), name), errors)
    if s.additional_properties is not None:
        _check_values(s.additional_properties, fe.child(path, "additionalProperties"), errors)
    if s.items is not None:
        _check_values(s.items, fe.child(path, "items"), errors)
