"""One CRD version's ``openAPIV3Schema``, compiled once: decode (prune), default, validate, field types.

kube-apiserver runs every custom resource write, and every read from storage, through the
version's structural schema. :class:`VersionSchema` does the same steps, in the same order:

1. :meth:`~VersionSchema.prune` (decoding a request, or an object read from storage): fields the
   schema does not know are dropped unless ``x-kubernetes-preserve-unknown-fields`` keeps them;
   ``apiVersion``, ``kind`` and ``metadata`` of the object (and of every
   ``x-kubernetes-embedded-resource``) are kept, and ``metadata`` is coerced to ObjectMeta
   (:mod:`clusterclass.apiserver.objectmeta`); a ``null`` for a property or map value that is neither
   ``nullable`` nor defaulted is dropped (a ``null`` array item is not). The dropped paths come back,
   for ``fieldValidation=Strict`` (an error) and ``Warn`` (warnings).
2. :meth:`~VersionSchema.default`: a property with a ``default`` that is missing, or ``null`` and not
   nullable, gets a copy of it, at every level where the parent exists (array items and map values
   that are ``null`` get their schema's default too), descending into the defaults just applied.
3. :meth:`~VersionSchema.errors` / :meth:`~VersionSchema.validate`: the OpenAPI checks (kube-openapi's
   order per node: type, anyOf/oneOf/allOf/not, string length and pattern, format, number range and
   bounds, array items and size, enum, object size, properties, required), the scale subresource
   paths, embedded resources, ``x-kubernetes-list-type`` set/map uniqueness, then the CEL rules —
   or, when an earlier error blocks them, kube-apiserver's single "some validation rules were not
   checked" error. On update, checks are ratcheted: a value equal to the old value it correlates
   with (same property, same map key, same ``map`` list key, same ``set`` value) is not reported.

Messages are kube-apiserver 1.37's, recorded from a real one: ``spec.replicas: Invalid value:
"string": spec.replicas in body must be of type integer: "string"``. The OpenAPI validator's own
quirks are kept on purpose (a format string is not checked on a list value; integer formats are
range-checked with an error on field ``<nil>``), because contract tests compare messages.

The schema is compiled once per CRD version (:mod:`clusterclass.apiserver.crd.nodes`); the CEL rules
run in :mod:`clusterclass.apiserver.crd.cel` and server-side apply's field types come from
:mod:`clusterclass.apiserver.crd.fieldtypes`. The ``topology.variables`` walks are not reused because
their messages and ``null`` handling are ClusterClass variables', not kube-apiserver's; their
parser, formats, RE2 patterns, JSON value rules, ``maximum``/``minimum`` wording and CEL evaluator are.
"""

from __future__ import annotations

import copy
import math
from collections.abc import Mapping, Sequence
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.api.objects import is_int
from clusterclass.apiserver.crd.cel import CelRun
from clusterclass.apiserver.crd.fieldtypes import SchemaFieldTypes
from clusterclass.apiserver.crd.nodes import Node, Scale, compile_schema, correlate_items, map_key
from clusterclass.apiserver.objectmeta import coerce_object_meta, too_long_detail
from clusterclass.fielderrors import ErrorType, FieldError, format_number
from clusterclass.kube.gotext import go_float, go_json, go_quote
from clusterclass.schema.cel import CelBackend
from clusterclass.schema.cel import default_backend as default_cel_backend
from clusterclass.schema.celrules import MISSING
from clusterclass.schema.formats import check_format
from clusterclass.schema.jsonvalues import (
    INT64_MAX,
    INT64_MIN,
    canonical,
    is_integer,
    json_equal,
    json_type,
)
from clusterclass.schema.patterns import matches
from clusterclass.schema.validation import range_problems

__all__ = ["BLOCKED_RULES_DETAIL", "VersionSchema", "default_value_errors"]

#: the one error kube-apiserver reports instead of running CEL rules on an object with blocking errors
BLOCKED_RULES_DETAIL = (
    "some validation rules were not checked because the object was invalid; correct the existing errors to "
    "complete validation"
)
_BLOCKING = (
    ErrorType.NOT_SUPPORTED,
    ErrorType.REQUIRED,
    ErrorType.TOO_LONG,
    ErrorType.TOO_MANY,
    ErrorType.TYPE_INVALID,
)
_NIL = "<nil>"  # the field of an error kube-openapi reports without a path

# --- pruning -----------------------------------------------------------------------------------


class _Pruner:
    def __init__(self, unknown: list[str], drop_malformed: bool, keep_nulls: bool = False) -> None:
        self.unknown = unknown
        self.drop_malformed = drop_malformed
        self.keep_nulls = keep_nulls

    def prune(self, value: Any, node: Node | None, path: str, embedded: bool = False) -> None:
        if node is not None and node.preserve:
            self.skip(value, node, path)
            return
        if isinstance(value, dict):
            if node is None:
                for key in list(value):
                    self.unknown.append(fe.child(path, key))
                    del value[key]
                return
            embedded = embedded or node.embedded
            properties = node.properties
            for key in list(value):
                child_value = value[key]
                if embedded and self.keeps_meta_field(value, key, path):
                    continue
                child = properties.get(key) if properties is not None else None
                if child is None and not node.prunes_value:
                    self.unknown.append(fe.child(path, key))
                    del value[key]
                    continue
                if child is None:
                    child = node.additional
                self.prune(child_value, child, fe.child(path, key))
                if self._drops_null(child_value, child):
                    del value[key]  # PruneNonNullableNullsWithoutDefaults
        elif isinstance(value, list):
            items = node.items if node is not None else None
            for i, item in enumerate(value):
                self.prune(item, items, f"{path}[{i}]")

    def _drops_null(self, value: Any, node: Node | None) -> bool:
        return value is None and not self.keep_nulls and (node is None or (not node.nullable and not node.has_default))

    def keeps_meta_field(self, value: dict[str, Any], key: str, path: str) -> bool:
        """``apiVersion``/``kind`` strings and the ``metadata`` object of a resource are kept (metadata coerced)."""
        if key in ("apiVersion", "kind"):
            return isinstance(value[key], str)
        if key != "metadata" or not isinstance(value[key], dict):
            return False
        meta, unknown = coerce_object_meta(value[key], drop_malformed=self.drop_malformed, path=fe.child(path, key))
        value[key] = meta
        self.unknown.extend(unknown)
        return True

    def skip(self, value: Any, node: Node, path: str) -> None:
        """``x-kubernetes-preserve-unknown-fields``: unknown fields stay; known ones are still pruned."""
        if isinstance(value, dict):
            for key in list(value):
                if node.embedded and self.keeps_meta_field(value, key, path):
                    continue
                child = node.child(key)
                if child is not None:
                    child_value = value[key]
                    self.prune(child_value, child, fe.child(path, key))
                    if self._drops_null(child_value, child):
                        del value[key]  # PruneNonNullableNullsWithoutDefaults ignores preserve-unknown-fields
        elif isinstance(value, list) and node.items is not None:
            for i, item in enumerate(value):
                self.skip(item, node.items, f"{path}[{i}]")


# --- defaulting --------------------------------------------------------------------------------


def _default(value: Any, node: Node) -> None:
    if isinstance(value, dict):
        for name, child in node.prop_defaults:
            if name not in value or (value[name] is None and not child.nullable):
                value[name] = copy.deepcopy(child.default)
        properties, additional = node.properties, node.additional
        for key, item in value.items():
            declared = properties.get(key) if properties is not None else None
            if declared is not None:
                if declared.defaults_below and item is not None:
                    _default(item, declared)
                continue
            if additional is None:
                continue
            if item is None and additional.has_default and not additional.nullable:
                value[key] = item = copy.deepcopy(additional.default)
            if additional.defaults_below and item is not None:
                _default(item, additional)
    elif isinstance(value, list):
        items = node.items
        if items is None:
            return
        for i, item in enumerate(value):
            if item is None and items.has_default and not items.nullable:
                value[i] = item = copy.deepcopy(items.default)
            if items.defaults_below and item is not None:
                _default(item, items)


# --- OpenAPI validation ------------------------------------------------------------------------


#: the format kube-openapi's ``schemaInfoForType`` gives a decoded number (``json_type`` names its type)
_NUMBER_FORMATS = {"integer": "int64", "number": "float64"}


#: JSON types whose name does not depend on the value (ints do: beyond int64 they decode as float64)
_SIMPLE_TYPES: dict[type, str] = {str: "string", bool: "boolean", float: "number", list: "array", dict: "object"}


class _Validator:
    """One walk of the OpenAPI checks; ``strip`` drops a prefix from the paths messages show."""

    def __init__(self, strip: int) -> None:
        self.errors: list[FieldError] = []
        self.strip = strip

    def name(self, path: str) -> str:
        return path[self.strip :] if self.strip else path

    def add(self, path: str, kind: ErrorType, detail: str, value: Any = fe.OMITTED) -> None:
        self.errors.append(FieldError(path, kind, detail, value))

    def body(self, path: str, text: str) -> str:
        return f"{self.name(path)} in body {text}"

    def validate(self, value: Any, node: Node, path: str, old: Any) -> None:
        if old is not MISSING and old == value and type(old) is type(value):
            return  # ratcheting: an unchanged value is not re-checked
        if value is None:
            if not node.nullable:
                if node.types:
                    self.type_error(path, ",".join(node.types), "null")
                if node.enum is not None:
                    self.enum(value, node, path)
            return
        self.check_type(value, node, path)
        if node.any_of or node.one_of or node.all_of or node.not_ is not None:
            self.combinators(value, node, path)
        if isinstance(value, str):
            self.string(value, node, path)
        elif isinstance(value, int | float) and not isinstance(value, bool):
            self.number(value, node, path)
        elif isinstance(value, list):
            self.array(value, node, path, old)
        if node.enum is not None:
            self.enum(value, node, path)
        if isinstance(value, dict):
            self.object(value, node, path, old)

    def type_error(self, path: str, wanted: str, got: str) -> None:
        self.add(path, ErrorType.TYPE_INVALID, self.body(path, f"must be of type {wanted}: {go_quote(got)}"), got)

    def check_type(self, value: Any, node: Node, path: str) -> None:
        """kube-openapi's type validator, quirks included (formats decide some type errors)."""
        types = node.types
        if not types:
            return
        simple = _SIMPLE_TYPES.get(type(value))
        if simple is not None and not node.format and simple in types:
            return  # the common case: the right type, no format to consult
        got = json_type(value)
        got_format = _NUMBER_FORMATS.get(got, "")
        float_int = isinstance(value, float) and is_integer(value) and "integer" in types  # swag.IsFloat64AJSONInteger
        int_float = got == "integer" and "number" in types
        scalar = not isinstance(value, str | list)
        if (
            scalar
            and node.format
            and not (got in types or got_format == node.format or float_int or int_float)
            and not (node.format == "int64" and got_format == "int32")
        ):
            self.type_error(path, node.format, got_format)
            return
        if "number" not in types and "integer" not in types and node.format and not scalar:
            return
        if not (got in types or float_int or int_float):
            self.type_error(path, ",".join(types), got)

    def combinators(self, value: Any, node: Node, path: str) -> None:
        if node.any_of:
            failures = [self.sub(value, sub, path) for sub in node.any_of]
            if all(failures):
                detail = f"{go_quote(self.name(path))} must validate at least one schema (anyOf)"
                self.add(_NIL, ErrorType.INVALID, detail, "")
                self.errors.extend(_closest(value, node.any_of, failures))
        if node.one_of:
            failures = [self.sub(value, sub, path) for sub in node.one_of]
            passed = sum(1 for f in failures if not f)
            if passed != 1:
                found = "Found none valid" if passed == 0 else f"Found {passed} valid alternatives"
                detail = f"{go_quote(self.name(path))} must validate one and only one schema (oneOf). {found}"
                self.add(_NIL, ErrorType.INVALID, detail, "")
                if passed == 0:
                    self.errors.extend(_closest(value, node.one_of, failures))
        if node.all_of:
            failures = [self.sub(value, sub, path) for sub in node.all_of]
            for failure in failures:
                self.errors.extend(failure)
            if any(failures):
                none = ". None validated" if all(failures) else ""
                detail = f"{go_quote(self.name(path))} must validate all the schemas (allOf){none}"
                self.add(_NIL, ErrorType.INVALID, detail, "")
        if node.not_ is not None and not self.sub(value, node.not_, path):
            self.add(_NIL, ErrorType.INVALID, f"{go_quote(self.name(path))} must not validate the schema (not)", "")

    def sub(self, value: Any, node: Node, path: str) -> list[FieldError]:
        inner = _Validator(self.strip)
        inner.validate(value, node, path, MISSING)
        return inner.errors

    def string(self, value: str, node: Node, path: str) -> None:
        if node.max_length is not None and len(value) > node.max_length:
            self.add(path, ErrorType.TOO_LONG, too_long_detail(node.max_length))
        elif node.min_length is not None and len(value) < node.min_length:
            self.add(
                path, ErrorType.INVALID, self.body(path, f"should be at least {node.min_length} chars long"), value
            )
        elif node.pattern is not None and not matches(node.pattern, value):
            self.add(path, ErrorType.INVALID, self.body(path, f"should match '{node.pattern_text}'"), value)
        if node.format and check_format(node.format, value) is False:
            detail = self.body(path, f"must be of type {node.format}: {go_quote(value)}")
            self.add(path, ErrorType.TYPE_INVALID, detail, value)

    def number(self, value: int | float, node: Node, path: str) -> None:
        if node.types == ("integer",) and not _fits_integer_format(value, node.format):
            shown = f"with format {node.format}" if node.format else "(default format)"
            detail = f"Checked value must be of type integer {shown} in {self.name(path)}"
            self.add(_NIL, ErrorType.INVALID, detail, "")
        if node.multiple_of is not None:
            self.multiple_of(value, node.multiple_of, path)
        for problem in range_problems(value, node.schema):
            self.add(path, ErrorType.INVALID, self.body(path, problem), value)

    def multiple_of(self, value: int | float, factor: float, path: str) -> None:
        """go-openapi's ``MultipleOfNativeType``: an integer value is checked against the truncated factor."""
        if is_int(value):
            whole = int(factor)
            if whole <= 0:
                detail = f"factor MultipleOf declared for {self.name(path)} must be positive: {whole}"
                self.add(path, ErrorType.INVALID, detail, whole)
            elif value % whole:
                self.add(path, ErrorType.INVALID, self.body(path, f"should be a multiple of {whole}"), value)
            return
        if factor <= 0:
            detail = f"factor MultipleOf declared for {self.name(path)} must be positive: {format_number(factor)}"
            self.add(path, ErrorType.INVALID, detail, factor)
        elif not is_integer(value / factor):
            self.add(
                path, ErrorType.INVALID, self.body(path, f"should be a multiple of {format_number(factor)}"), value
            )

    def array(self, value: list[Any], node: Node, path: str, old: Any) -> None:
        items = node.items
        if items is not None:
            olds = correlate_items(value, old, node)
            for i, item in enumerate(value):
                self.validate(item, items, f"{path}[{i}]", olds[i] if olds is not None else MISSING)
        size = len(value)
        if node.min_items is not None and size < node.min_items:
            self.add(path, ErrorType.INVALID, self.body(path, f"should have at least {node.min_items} items"), size)
        if node.max_items is not None and size > node.max_items:
            self.add(path, ErrorType.TOO_MANY, _too_many(node.max_items), size)
        if node.unique_items and len({canonical(v) for v in value}) != size:
            self.add(path, ErrorType.INVALID, self.body(path, "shouldn't contain duplicates"), "")

    def enum(self, value: Any, node: Node, path: str) -> None:
        allowed = node.enum or []
        if value is not None and any(json_equal(value, a) for a in allowed):
            return
        shown = ", ".join(go_quote(a if isinstance(a, str) else go_json(a)) for a in allowed)
        self.add(path, ErrorType.NOT_SUPPORTED, f"supported values: {shown}", value)

    def object(self, value: dict[str, Any], node: Node, path: str, old: Any) -> None:
        size = len(value)
        if node.min_properties is not None and size < node.min_properties:
            detail = self.body(path, f"should have at least {node.min_properties} properties")
            self.add(path, ErrorType.INVALID, detail, size)
            return
        if node.max_properties is not None and size > node.max_properties:
            self.add(path, ErrorType.TOO_MANY, _too_many(node.max_properties), size)
            return
        old_map = old if isinstance(old, dict) else None
        properties = node.properties
        additional = node.additional
        if additional is not None:
            for key in sorted(value):
                if properties is None or key not in properties:
                    child_old = old_map.get(key, MISSING) if old_map is not None else MISSING
                    self.validate(value[key], additional, fe.child(path, key), child_old)
        if node.additional_bool is False:
            for key in sorted(value):
                if properties is None or key not in properties:
                    detail = f"{fe.child(self.name(path), key)} in body is a forbidden property"
                    self.add(path, ErrorType.INVALID, detail, key)
        for key, child in node.sorted_properties:
            if key in value:
                child_old = old_map.get(key, MISSING) if old_map is not None else MISSING
                self.validate(value[key], child, fe.child(path, key), child_old)
        for key in node.required:
            if key not in value:
                self.add(fe.child(path, key), ErrorType.REQUIRED, "")


def _closest(value: Any, alternatives: tuple[Node, ...], failures: list[list[FieldError]]) -> list[FieldError]:
    """The errors of the alternative kube-openapi reports: the one with the most checks that applied to the
    value (its ``MatchCount``), the first on ties."""
    best = max(range(len(alternatives)), key=lambda i: (_checks_applied(value, alternatives[i]), -i))
    return failures[best]


def _checks_applied(value: Any, node: Node) -> int:
    """How many of kube-openapi's validators apply to ``value`` under ``node``."""
    count = 1 if node.types else 0
    if isinstance(value, int | float) and not isinstance(value, bool):
        count += 1
    elif isinstance(value, str):
        count += (node.max_length is not None or node.min_length is not None or node.pattern is not None) + bool(
            node.format
        )
    elif isinstance(value, list):
        count += node.items is not None or node.min_items is not None or node.max_items is not None
    elif isinstance(value, dict):
        count += 1
    return count + (node.enum is not None)


def _too_many(limit: int) -> str:
    return f"must have at most {limit} {'item' if limit == 1 else 'items'}"


def _fits_integer_format(value: int | float, fmt: str) -> bool:
    """go-openapi's ``IsValueValidAgainstRange`` for ``type: integer``: the value converts without loss."""
    if isinstance(value, float):
        if not math.isfinite(value) or value != math.trunc(value):
            return False
        value = int(value)
    if fmt == "int32":
        return -(2**31) <= value < 2**31
    if fmt == "uint32":
        return 0 <= value < 2**32
    if fmt == "uint64":
        return 0 <= value < 2**64
    return INT64_MIN <= value <= INT64_MAX


def default_value_errors(node: Node, path: str) -> list[FieldError]:
    """A schema's ``default`` must be pruned already and valid against the schema (reported at ``path``)."""
    value = copy.deepcopy(node.default)
    unknown: list[str] = []
    _Pruner(unknown, drop_malformed=True).prune(copy.deepcopy(value), node, "")
    if unknown:
        return [fe.invalid(path, value, "must not have unknown fields")]
    validator = _Validator(0)
    validator.validate(value, node, "", MISSING)
    return [FieldError(path, e.type, e.detail, e.value) for e in validator.errors]


# --- embedded resources and list types ---------------------------------------------------------


def _embedded_errors(value: Any, node: Node, path: str, errors: list[FieldError]) -> None:
    """``x-kubernetes-embedded-resource`` objects need ``apiVersion`` and ``kind`` strings."""
    if isinstance(value, dict):
        if node.embedded and path:
            for key in ("apiVersion", "kind"):
                if key not in value:
                    errors.append(fe.required(fe.child(path, key)))
                elif not isinstance(value[key], str):
                    errors.append(fe.invalid(fe.child(path, key), value[key], "must be a string"))
                elif not value[key]:
                    errors.append(fe.invalid(fe.child(path, key), "", "must not be empty"))
        for key, item in value.items():
            child = node.child(key)
            if child is not None and child.embedded_below:
                _embedded_errors(item, child, fe.child(path, key), errors)
    elif isinstance(value, list) and node.items is not None and node.items.embedded_below:
        for i, item in enumerate(value):
            _embedded_errors(item, node.items, f"{path}[{i}]", errors)


def _list_type_errors(value: Any, node: Node, path: str, errors: list[FieldError]) -> None:
    """``x-kubernetes-list-type``: no repeated ``set`` values, no repeated ``map`` keys (map values as ``[key]``)."""
    if isinstance(value, dict):
        if node.additional is not None and node.additional.listtypes_below:
            for key in sorted(value):
                if node.properties is None or key not in node.properties:
                    _list_type_errors(value[key], node.additional, f"{path}[{key}]", errors)
        for key, child in node.sorted_properties:
            if key in value and child.listtypes_below:
                _list_type_errors(value[key], child, fe.child(path, key), errors)
    elif isinstance(value, list):
        if node.list_type == "set":
            seen: set[Any] = set()
            for i, item in enumerate(value):
                marker = canonical(item)
                if marker in seen:
                    errors.append(fe.duplicate(f"{path}[{i}]", item))
                seen.add(marker)
        elif node.list_type == "map":
            errors.extend(_map_list_errors(value, node, path))
        if node.items is not None and node.items.listtypes_below:
            for i, item in enumerate(value):
                _list_type_errors(item, node.items, f"{path}[{i}]", errors)


def _map_list_errors(value: list[Any], node: Node, path: str) -> list[FieldError]:
    for i, item in enumerate(value):
        if item is not None and not isinstance(item, dict):
            return [fe.invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map")]
    errors: list[FieldError] = []
    seen: set[Any] = set()
    for i, item in enumerate(value):
        if item is None:
            continue
        key = map_key(item, node)
        if key in seen:
            shown: dict[str, Any] = {}
            for name in node.list_keys:
                child = node.items.child(name) if node.items is not None else None
                if name in item:
                    shown[name] = item[name]
                elif child is not None and child.has_default:
                    shown[name] = child.default
                else:
                    shown[name] = {}
            errors.append(fe.duplicate(f"{path}[{i}]", shown))
        seen.add(key)
    return errors


# --- the public face ---------------------------------------------------------------------------


class VersionSchema:
    """The structural schema of one version of a CRD, compiled once; see the module docstring.

    ``raw`` is the version's ``openAPIV3Schema``; ``scale`` its scale subresource, whose replica
    paths every write checks. ``parse_errors`` are the schema problems found while compiling
    (a CRD with any is refused by :func:`clusterclass.apiserver.crd.definitions.parse_crd`).
    """

    def __init__(
        self, raw: Mapping[str, Any], *, scale: Scale | None = None, backend: CelBackend | None = None
    ) -> None:
        self.scale = scale
        self._backend = backend
        self.root, self.parse_errors = compile_schema(raw, backend=backend)
        self.has_rules = self.root.rules_below
        self.field_types = SchemaFieldTypes(self.root)
        status = self.root.child("status") if self.root.properties is not None else None
        self._status = status

    # -- decode ---------------------------------------------------------------------------------

    def prune(self, obj: dict[str, Any], *, drop_malformed: bool = False, keep_nulls: bool = False) -> list[str]:
        """Drop unknown fields from ``obj`` in place; the paths dropped (``metadata.x``, then the rest sorted).

        Raises :class:`~clusterclass.apiserver.objectmeta.MalformedMetadata` when ``metadata`` does not
        decode (unless ``drop_malformed``, used for objects read back from storage). ``keep_nulls``
        leaves ``null`` values for validation to judge: the result of a server-side apply is not a
        request body, and kube-apiserver refuses a ``null`` the schema does not allow there.
        """
        meta_unknown: list[str] = []
        other: list[str] = []
        pruner = _Pruner(other, drop_malformed, keep_nulls)
        if isinstance(obj.get("metadata"), dict):
            meta, meta_unknown = coerce_object_meta(obj["metadata"], drop_malformed=drop_malformed)
            obj["metadata"] = meta
        elif "metadata" in obj and obj["metadata"] is not None:
            coerce_object_meta(obj["metadata"], drop_malformed=drop_malformed)
            if drop_malformed:
                del obj["metadata"]
        root = self.root
        for key in list(obj):
            if key in ("apiVersion", "kind") and isinstance(obj[key], str):
                continue
            if key == "metadata":
                continue
            child = root.properties.get(key) if root.properties is not None else None
            if child is None and root.preserve:
                continue
            if child is None and not root.prunes_value:
                other.append(key)
                del obj[key]
                continue
            child = child or root.additional
            value = obj[key]
            pruner.prune(value, child, key)
            if pruner._drops_null(value, child):
                del obj[key]
        return meta_unknown + sorted(other)

    def default(self, obj: dict[str, Any]) -> dict[str, Any]:
        """Apply the schema's defaults to ``obj`` in place (and return it)."""
        if self.root.defaults_below:
            _default(obj, self.root)
        return obj

    # -- validate -------------------------------------------------------------------------------

    def schema_errors(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[FieldError]:
        """The OpenAPI checks of the whole object (``old``: ratchet against the stored object)."""
        validator = _Validator(0)
        validator.validate(obj, self.root, "", MISSING if old is None else old)
        return validator.errors

    def status_schema_errors(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None) -> list[FieldError]:
        """The OpenAPI checks of a status update: ``status`` alone, messages naming paths inside it."""
        if self._status is None or "status" not in obj:
            return []
        validator = _Validator(len("status."))
        old_status = old.get("status", MISSING) if old is not None else MISSING
        validator.validate(obj["status"], self._status, "status", old_status)
        return validator.errors

    def scale_errors(self, obj: Mapping[str, Any], *, spec: bool = True) -> list[FieldError]:
        """The scale subresource's checks: replica counts that are int64s in the int32 range, a string selector."""
        if self.scale is None:
            return []
        errors: list[FieldError] = []
        paths = [self.scale.spec_replicas_path] if spec else []
        paths.append(self.scale.status_replicas_path)
        for path in paths:
            value, problem = _nested(obj, path, "int64")
            if problem:
                errors.append(fe.invalid(path, 0, problem))
            elif is_int(value) and value < 0:
                errors.append(fe.invalid(path, value, "should be a non-negative integer"))
            elif is_int(value) and value > 2**31 - 1:
                errors.append(fe.invalid(path, value, f"should be less than or equal to {2**31 - 1}"))
        selector_path = self.scale.label_selector_path
        if selector_path:
            _, problem = _nested(obj, selector_path, "string")
            if problem:
                errors.append(fe.invalid(selector_path, "", problem))
        return errors

    def embedded_errors(self, obj: Mapping[str, Any]) -> list[FieldError]:
        errors: list[FieldError] = []
        if self.root.embedded_below:
            _embedded_errors(obj, self.root, "", errors)
        return errors

    def list_type_errors(self, obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[FieldError]:
        """Set and map list uniqueness; on update only when the stored object had none (ratcheting)."""
        if not self.root.listtypes_below:
            return []
        if old is not None:
            old_errors: list[FieldError] = []
            _list_type_errors(old, self.root, "", old_errors)
            if old_errors:
                return []
        errors: list[FieldError] = []
        _list_type_errors(obj, self.root, "", errors)
        return errors

    def rule_errors(
        self, obj: Mapping[str, Any], old: Mapping[str, Any] | None = None, *, preceding: Sequence[FieldError] = ()
    ) -> list[FieldError]:
        """The CEL rules, or the one "not checked" error when ``preceding`` errors block them."""
        if not self.has_rules:
            return []
        if any(e.type in _BLOCKING for e in preceding):
            return [FieldError(_NIL, ErrorType.INVALID, BLOCKED_RULES_DETAIL, None)]
        try:
            backend = self._backend or default_cel_backend()
        except Exception as err:  # the CEL library did not load: say so rather than skip the rules
            return [fe.internal("", f"CEL rules cannot be evaluated: {err}")]
        run = CelRun(backend)
        run.walk(obj, self.root, "", MISSING if old is None else old)
        return run.errors

    def errors(
        self,
        obj: Mapping[str, Any],
        old: Mapping[str, Any] | None = None,
        *,
        status: bool = False,
        preceding: Sequence[FieldError] = (),
    ) -> list[FieldError]:
        """Every schema-side error of a write, in kube-apiserver's order.

        ``old`` is the stored object on update (ratcheting, transition rules); ``status`` for the
        status subresource (only ``status`` is checked, and the spec-side scale path is not);
        ``preceding`` are the errors found before (ObjectMeta), which can block the CEL rules.
        """
        if status:
            errors = self.status_schema_errors(obj, old)
            errors.extend(self.scale_errors(obj, spec=False))
        else:
            errors = self.schema_errors(obj, old)
            errors.extend(self.scale_errors(obj))
            errors.extend(self.embedded_errors(obj))
        errors.extend(self.list_type_errors(obj, old))
        errors.extend(self.rule_errors(obj, old, preceding=[*preceding, *errors]))
        return errors


def _nested(obj: Mapping[str, Any], json_path: str, want: str) -> tuple[Any, str]:
    """``unstructured.NestedInt64`` / ``NestedString`` at a ``.a.b`` path: the value, or the accessor error."""
    fields = json_path.lstrip(".").split(".")
    current: Any = obj
    for i, name in enumerate(fields):
        if not isinstance(current, Mapping):
            shown = "." + ".".join(fields[:i])
            expected = "map[string]interface{}"
            return (
                None,
                f"{shown} accessor error: {_go_v(current)} is of the type {_go_type(current)}, expected {expected}",
            )
        if name not in current:
            return None, ""
        current = current[name]
    ok = is_int(current) if want == "int64" else isinstance(current, str)
    if current is None or ok:
        return current, ""
    shown = "." + ".".join(fields)
    return None, f"{shown} accessor error: {_go_v(current)} is of the type {_go_type(current)}, expected {want}"


def _go_type(value: Any) -> str:
    """Go's ``%T`` of a decoded JSON value."""
    if isinstance(value, bool):
        return "bool"
    if is_int(value):
        return "int64"
    if isinstance(value, float):
        return "float64"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "[]interface {}"
    if isinstance(value, dict):
        return "map[string]interface {}"
    return "<nil>"


def _go_v(value: Any) -> str:
    """Go's ``%v`` of a decoded JSON value (as the accessor errors print it)."""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, list):
        return "[" + " ".join(_go_v(v) for v in value) + "]"
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{_go_v(value[k])}" for k in sorted(value)) + "]"
    if value is None:
        return "<nil>"
    return str(value)
