"""The variable schema model: a ClusterClass ``openAPIV3Schema`` parsed into :class:`Schema` nodes.

A ClusterClass keeps each variable's schema as a plain JSON object (the v1beta1
``JSONSchemaProps`` subset, plus the later additions this project supports: ``nullable``,
``x-kubernetes-int-or-string``, ``x-kubernetes-validations``, ``minProperties``/
``maxProperties``, ``allOf``/``anyOf``/``oneOf``/``not``). :func:`parse_schema` turns it into a
typed tree once, so the defaulting, pruning and validation walks read attributes instead of
re-checking dict shapes, and so a malformed schema (``type: 5``, ``properties: "x"``, a
``pattern`` that is not RE2) becomes :class:`FieldError`\\ s with schema paths instead of an
exception half-way through a walk.

:func:`structural_errors` adds the structural-schema rules the ClusterClass webhook enforces
(``type`` set and one of the six types, ``items`` for arrays, ``properties`` and
``additionalProperties`` mutually exclusive, value validations without types). Parse errors
make a schema unusable; structural errors only matter when a ClusterClass is admitted.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.api.objects import is_int
from clusterclass.fielderrors import FieldError
from clusterclass.schema.jsonvalues import is_number
from clusterclass.schema.patterns import Pattern, compile_pattern

SCHEMA_TYPES = ("object", "array", "string", "integer", "number", "boolean")
MAX_DEPTH = 64
_MISSING: Any = object()


@dataclass(frozen=True)
class Rule:
    """One ``x-kubernetes-validations`` entry."""

    rule: str
    message: str = ""
    message_expression: str = ""
    field_path: str = ""
    reason: str = ""


@dataclass
class Schema:
    """One node of a parsed variable schema; unset keywords keep their "no constraint" default."""

    type: str = ""
    format: str = ""
    nullable: bool = False
    int_or_string: bool = False
    preserve_unknown_fields: bool = False
    properties: dict[str, Schema] | None = None
    additional_properties: Schema | None = None
    items: Schema | None = None
    required: tuple[str, ...] = ()
    enum: list[Any] | None = None
    default: Any = _MISSING
    example: Any = _MISSING
    max_length: int | None = None
    min_length: int | None = None
    pattern: str = ""
    compiled_pattern: Pattern | None = None
    maximum: int | float | None = None
    minimum: int | float | None = None
    exclusive_maximum: bool = False
    exclusive_minimum: bool = False
    max_items: int | None = None
    min_items: int | None = None
    unique_items: bool = False
    max_properties: int | None = None
    min_properties: int | None = None
    all_of: tuple[Schema, ...] = ()
    any_of: tuple[Schema, ...] = ()
    one_of: tuple[Schema, ...] = ()
    not_: Schema | None = None
    validations: tuple[Rule, ...] = ()
    keys: frozenset[str] = field(default_factory=frozenset)

    @property
    def has_default(self) -> bool:
        return self.default is not _MISSING

    @property
    def has_example(self) -> bool:
        return self.example is not _MISSING

    def property_schema(self, name: str) -> Schema | None:
        """The schema for the value under key ``name`` of an object, if the schema defines one."""
        if self.properties is not None and name in self.properties:
            return self.properties[name]
        return self.additional_properties


def parse_schema(raw: Any, path: str) -> tuple[Schema, list[FieldError]]:
    """Parse ``raw`` (an ``openAPIV3Schema`` object) into a :class:`Schema`, collecting every problem."""
    errors: list[FieldError] = []
    schema = _Parser(errors).parse(raw, path, 0)
    return schema, errors


class _Parser:
    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors

    def parse(self, raw: Any, path: str, depth: int) -> Schema:
        if not isinstance(raw, Mapping):
            self.errors.append(fe.invalid(path, raw, "must be a schema object"))
            return Schema()
        if depth > MAX_DEPTH:
            self.errors.append(fe.invalid(path, "", f"schema is nested more than {MAX_DEPTH} levels deep"))
            return Schema()
        s = Schema(keys=frozenset(str(k) for k in raw))
        s.type = self.string(raw, "type", path)
        s.format = self.string(raw, "format", path)
        self.string(raw, "description", path)
        s.nullable = self.boolean(raw, "nullable", path)
        s.int_or_string = self.boolean(raw, "x-kubernetes-int-or-string", path)
        s.preserve_unknown_fields = self.boolean(raw, "x-kubernetes-preserve-unknown-fields", path)
        s.exclusive_maximum = self.boolean(raw, "exclusiveMaximum", path)
        s.exclusive_minimum = self.boolean(raw, "exclusiveMinimum", path)
        s.unique_items = self.boolean(raw, "uniqueItems", path)
        for key, attr in _COUNTS.items():
            setattr(s, attr, self.count(raw, key, path))
        s.maximum = self.number(raw, "maximum", path)
        s.minimum = self.number(raw, "minimum", path)
        s.pattern = self.string(raw, "pattern", path)
        if "pattern" in raw and isinstance(raw["pattern"], str):
            compiled, reason = compile_pattern(s.pattern)
            if compiled is None:
                detail = f"must be a valid regular expression, but isn't: {reason}"
                self.errors.append(fe.invalid(fe.child(path, "pattern"), s.pattern, detail))
            s.compiled_pattern = compiled
        if "default" in raw:
            s.default = raw["default"]
        if "example" in raw:
            s.example = raw["example"]
        s.enum = self.enum(raw, path)
        s.required = self.required(raw, path)
        s.properties = self.properties(raw, path, depth)
        s.additional_properties = self.sub_schema(raw, "additionalProperties", path, depth)
        s.items = self.sub_schema(raw, "items", path, depth)
        s.not_ = self.sub_schema(raw, "not", path, depth)
        s.all_of = self.schema_list(raw, "allOf", path, depth)
        s.any_of = self.schema_list(raw, "anyOf", path, depth)
        s.one_of = self.schema_list(raw, "oneOf", path, depth)
        s.validations = self.rules(raw, path)
        return s

    def string(self, raw: Mapping[str, Any], key: str, path: str) -> str:
        value = raw.get(key)
        if value is None:
            return ""
        if not isinstance(value, str):
            self.errors.append(fe.invalid(fe.child(path, key), value, "must be a string"))
            return ""
        return value

    def boolean(self, raw: Mapping[str, Any], key: str, path: str) -> bool:
        value = raw.get(key)
        if value is None:
            return False
        if not isinstance(value, bool):
            self.errors.append(fe.invalid(fe.child(path, key), value, "must be a boolean"))
            return False
        return value

    def count(self, raw: Mapping[str, Any], key: str, path: str) -> int | None:
        value = raw.get(key)
        if value is None:
            return None
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not is_int(value) or value < 0:
            self.errors.append(fe.invalid(fe.child(path, key), value, "must be a non-negative integer"))
            return None
        return int(value)

    def number(self, raw: Mapping[str, Any], key: str, path: str) -> int | float | None:
        value = raw.get(key)
        if value is None:
            return None
        if not is_number(value) or (isinstance(value, float) and value != value):
            self.errors.append(fe.invalid(fe.child(path, key), value, "must be a number"))
            return None
        return value  # type: ignore[no-any-return]

    def enum(self, raw: Mapping[str, Any], path: str) -> list[Any] | None:
        value = raw.get("enum")
        if value is None:
            return None
        if not isinstance(value, list):
            self.errors.append(fe.invalid(fe.child(path, "enum"), value, "must be a list"))
            return None
        return value

    def required(self, raw: Mapping[str, Any], path: str) -> tuple[str, ...]:
        value = raw.get("required")
        if value is None:
            return ()
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            self.errors.append(fe.invalid(fe.child(path, "required"), value, "must be a list of strings"))
            return ()
        return tuple(value)

    def properties(self, raw: Mapping[str, Any], path: str, depth: int) -> dict[str, Schema] | None:
        value = raw.get("properties")
        if value is None:
            return None
        if not isinstance(value, Mapping):
            self.errors.append(fe.invalid(fe.child(path, "properties"), value, "must be a map of schemas"))
            return None
        result: dict[str, Schema] = {}
        for name, prop in value.items():
            result[str(name)] = self.parse(prop, fe.key(fe.child(path, "properties"), str(name)), depth + 1)
        return result

    def sub_schema(self, raw: Mapping[str, Any], key: str, path: str, depth: int) -> Schema | None:
        value = raw.get(key)
        if value is None:
            return None
        return self.parse(value, fe.child(path, key), depth + 1)

    def schema_list(self, raw: Mapping[str, Any], key: str, path: str, depth: int) -> tuple[Schema, ...]:
        value = raw.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.errors.append(fe.invalid(fe.child(path, key), value, "must be a list of schemas"))
            return ()
        return tuple(self.parse(v, fe.index(fe.child(path, key), i), depth + 1) for i, v in enumerate(value))

    def rules(self, raw: Mapping[str, Any], path: str) -> tuple[Rule, ...]:
        key = "x-kubernetes-validations"
        value = raw.get(key)
        if value is None:
            return ()
        if not isinstance(value, list):
            self.errors.append(fe.invalid(fe.child(path, key), value, "must be a list of validation rules"))
            return ()
        rules: list[Rule] = []
        for i, entry in enumerate(value):
            entry_path = fe.index(fe.child(path, key), i)
            if not isinstance(entry, Mapping):
                self.errors.append(fe.invalid(entry_path, entry, "must be a validation rule object"))
                continue
            texts = {k: self.string(entry, k, entry_path) for k in _RULE_KEYS}
            if not texts["rule"].strip():
                self.errors.append(fe.required(fe.child(entry_path, "rule"), "rule must be defined"))
                continue
            rules.append(
                Rule(
                    rule=texts["rule"],
                    message=texts["message"],
                    message_expression=texts["messageExpression"],
                    field_path=texts["fieldPath"],
                    reason=texts["reason"],
                )
            )
        return tuple(rules)


_COUNTS = {
    "maxLength": "max_length",
    "minLength": "min_length",
    "maxItems": "max_items",
    "minItems": "min_items",
    "maxProperties": "max_properties",
    "minProperties": "min_properties",
}
_RULE_KEYS = ("rule", "message", "messageExpression", "fieldPath", "reason")

# Keywords a value validation (allOf/anyOf/oneOf/not) may not carry in a structural schema.
_STRUCTURE_ONLY_KEYS = (
    "type",
    "default",
    "nullable",
    "additionalProperties",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
    "x-kubernetes-validations",
)


def structural_errors(schema: Schema, path: str) -> list[FieldError]:
    """The structural-schema rules Kubernetes (and the ClusterClass webhook) enforce on a definition."""
    errors: list[FieldError] = []
    _check_structure(schema, path, errors, nested_in_value_validation=False)
    return errors


def _check_structure(s: Schema, path: str, errors: list[FieldError], *, nested_in_value_validation: bool) -> None:
    nested = nested_in_value_validation
    if nested:
        for keyword in _STRUCTURE_ONLY_KEYS:
            if keyword in s.keys:
                errors.append(fe.forbidden(fe.child(path, keyword), "must be empty to be structural"))
    else:
        _check_type(s, path, errors)
    for name, prop in (s.properties or {}).items():
        _check_structure(prop, fe.key(fe.child(path, "properties"), name), errors, nested_in_value_validation=nested)
    if s.additional_properties is not None:
        additional = fe.child(path, "additionalProperties")
        _check_structure(s.additional_properties, additional, errors, nested_in_value_validation=nested)
    if s.items is not None:
        _check_structure(s.items, fe.child(path, "items"), errors, nested_in_value_validation=nested)
    for keyword, group in (("allOf", s.all_of), ("anyOf", s.any_of), ("oneOf", s.one_of)):
        for i, sub in enumerate(group):
            _check_structure(sub, fe.index(fe.child(path, keyword), i), errors, nested_in_value_validation=True)
    if s.not_ is not None:
        _check_structure(s.not_, fe.child(path, "not"), errors, nested_in_value_validation=True)


def _check_type(s: Schema, path: str, errors: list[FieldError]) -> None:
    if s.int_or_string:
        if s.type:
            detail = "must be empty if x-kubernetes-int-or-string is true"
            errors.append(fe.invalid(fe.child(path, "type"), s.type, detail))
    elif not s.type:
        if not s.preserve_unknown_fields:
            errors.append(fe.required(fe.child(path, "type"), "type cannot be empty"))
    elif s.type not in SCHEMA_TYPES:
        errors.append(fe.not_supported(fe.child(path, "type"), s.type, list(SCHEMA_TYPES)))
    if s.properties is not None and s.additional_properties is not None:
        detail = "additionalProperties and properties are mutual exclusive"
        errors.append(fe.forbidden(fe.child(path, "additionalProperties"), detail))
    if s.type and s.type != "object":
        for keyword, present in (
            ("properties", s.properties is not None),
            ("additionalProperties", s.additional_properties is not None),
        ):
            if present:
                errors.append(fe.forbidden(fe.child(path, keyword), f'must be empty for type "{s.type}"'))
    if s.type and s.type != "array" and s.items is not None:
        errors.append(fe.forbidden(fe.child(path, "items"), f'must be empty for type "{s.type}"'))
    if s.type == "array" and s.items is None:
        errors.append(fe.required(fe.child(path, "items"), "must be specified"))
