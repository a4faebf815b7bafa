"""OpenAPI validation of a variable value against its :class:`Schema`, with Kubernetes' messages.

Why our own walker rather than the ``jsonschema`` library: Kubernetes validates CRD values with
its own OpenAPI validator, and the differences from a JSON-Schema draft validator are exactly the
cases variables hit: ``integer`` accepts ``3.0``; ``nullable`` and ``x-kubernetes-int-or-string``
are not JSON-Schema keywords; formats are Kubernetes' list with Go's parsers; errors must carry
Kubernetes' field paths, error types (``Required``, ``Unsupported value``, ``Too many``...) and
messages (``should be greater than or equal to 1``). A converted Draft 4 schema plus a mapping of
every library error back to those shapes is more code than this walk, and less exact.

What is checked, per node (in the validator's order): type (with ``nullable`` and
int-or-string), ``enum`` (even when the type is wrong, as Kubernetes reports both), then for
strings ``maxLength``/``minLength``/``pattern``/``format``, for numbers
``maximum``/``minimum`` (exclusive or not), for arrays ``maxItems``/``minItems``/``uniqueItems``
and each item, for objects ``maxProperties``/``minProperties``/``required`` and each known
property or ``additionalProperties`` value, then ``allOf``/``anyOf``/``oneOf``/``not``. Unknown
fields are not errors here (pruning reports them), and CEL rules run separately
(:mod:`celrules`). Paths: object fields as ``.name``, array items as ``[i]``.
"""

from __future__ import annotations

import math
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.fielderrors import ErrorType, FieldError, format_number
from clusterclass.schema.formats import check_format
from clusterclass.schema.jsonvalues import canonical, is_integer, is_number, json_equal, json_type
from clusterclass.schema.model import Schema
from clusterclass.schema.patterns import matches


def validate_value(value: Any, schema: Schema, path: str) -> list[FieldError]:
    """Every OpenAPI-schema violation of ``value`` (already defaulted) under ``schema``."""
    errors: list[FieldError] = []
    _validate(value, schema, path, errors)
    return errors


def is_valid(value: Any, schema: Schema) -> bool:
    return not validate_value(value, schema, "")


def _validate(value: Any, s: Schema, path: str, errors: list[FieldError]) -> None:
    if value is None and s.nullable:
        return
    type_ok = _check_type(value, s, path, errors)
    if s.enum is not None and not any(json_equal(value, allowed) for allowed in s.enum):
        errors.append(fe.not_supported(path, value, s.enum))
    if not type_ok or value is None:
        return
    if isinstance(value, str):
        _check_string(value, s, path, errors)
    elif is_number(value):
        _check_number(value, s, path, errors)
    elif isinstance(value, list):
        _check_array(value, s, path, errors)
    elif isinstance(value, dict):
        _check_object(value, s, path, errors)
    _check_combinators(value, s, path, errors)


def expected_type(s: Schema) -> str:
    return "integer,string" if s.int_or_string else s.type


def _check_type(value: Any, s: Schema, path: str, errors: list[FieldError]) -> bool:
    if isinstance(value, float) and not math.isfinite(value):
        errors.append(fe.invalid(path, value, "must be a finite number"))
        return False
    if s.int_or_string:
        ok = is_integer(value) or isinstance(value, str)
    elif not s.type:
        return True
    elif s.type == "integer":
        ok = is_integer(value)
    elif s.type == "number":
        ok = is_number(value)
    else:
        ok = json_type(value) == s.type
    if not ok:
        errors.append(fe.type_invalid(path, value, f'must be of type {expected_type(s)}: "{json_type(value)}"'))
    return ok


def _check_string(value: str, s: Schema, path: str, errors: list[FieldError]) -> None:
    if s.max_length is not None and len(value) > s.max_length:
        errors.append(FieldError(path, ErrorType.TOO_LONG, f"may not be longer than {s.max_length}", value))
    if s.min_length is not None and len(value) < s.min_length:
        errors.append(fe.invalid(path, value, f"should be at least {s.min_length} chars long"))
    if s.compiled_pattern is not None and not matches(s.compiled_pattern, value):
        errors.append(fe.invalid(path, value, f"should match '{s.pattern}'"))
    if s.format and check_format(s.format, value) is False:
        errors.append(fe.type_invalid(path, value, f"must be of type {s.format}: {fe.render_value(value)}"))


def _check_number(value: int | float, s: Schema, path: str, errors: list[FieldError]) -> None:
    errors.extend(fe.invalid(path, value, problem) for problem in range_problems(value, s))


def range_problems(value: int | float, s: Schema) -> list[str]:
    """``maximum``/``minimum`` (exclusive or not) broken by ``value``, in go-openapi's words.

    CRD schemas (:mod:`clusterclass.apiserver.crd.schema`) report the same problems, prefixed with the path.
    """
    problems: list[str] = []
    if s.maximum is not None:
        if s.exclusive_maximum and value >= s.maximum:
            problems.append(f"should be less than {format_number(s.maximum)}")
        elif value > s.maximum:
            problems.append(f"should be less than or equal to {format_number(s.maximum)}")
    if s.minimum is not None:
        if s.exclusive_minimum and value <= s.minimum:
            problems.append(f"should be greater than {format_number(s.minimum)}")
        elif value < s.minimum:
            problems.append(f"should be greater than or equal to {format_number(s.minimum)}")
    return problems


def _check_array(value: list[Any], s: Schema, path: str, errors: list[FieldError]) -> None:
    if s.max_items is not None and len(value) > s.max_items:
        errors.append(FieldError(path, ErrorType.TOO_MANY, f"must have at most {s.max_items} items", len(value)))
    if s.min_items is not None and len(value) < s.min_items:
        errors.append(fe.invalid(path, value, f"should have at least {s.min_items} items"))
    if s.unique_items and len({canonical(item) for item in value}) != len(value):
        errors.append(fe.invalid(path, value, "shouldn't contain duplicates"))
    if s.items is not None:
        for i, item in enumerate(value):
            _validate(item, s.items, fe.index(path, i), errors)


def _check_object(value: dict[str, Any], s: Schema, path: str, errors: list[FieldError]) -> None:
    if s.max_properties is not None and len(value) > s.max_properties:
        errors.append(FieldError(path, ErrorType.TOO_MANY, f"must have at most {s.max_properties} items", len(value)))
    if s.min_properties is not None and len(value) < s.min_properties:
        errors.append(fe.invalid(path, value, f"should have at least {s.min_properties} properties"))
    for name in s.required:
        if name not in value:
            errors.append(fe.required(fe.child(path, name)))
    for name, child in value.items():
        child_schema = s.property_schema(name)
        if child_schema is not None:
            _validate(child, child_schema, fe.child(path, str(name)), errors)


def _check_combinators(value: Any, s: Schema, path: str, errors: list[FieldError]) -> None:
    if s.all_of:
        failed = False
        for sub in s.all_of:
            sub_errors = validate_value(value, sub, path)
            errors.extend(sub_errors)
            failed = failed or bool(sub_errors)
        if failed:
            errors.append(fe.invalid(path, value, "must validate all the schemas (allOf)"))
    if s.any_of and not any(is_valid(value, sub) for sub in s.any_of):
        errors.append(fe.invalid(path, value, "must validate at least one schema (anyOf)"))
    if s.one_of:
        passing = sum(1 for sub in s.one_of if is_valid(value, sub))
        if passing != 1:
            found = f". Found {passing} valid alternatives" if passing > 1 else ""
            errors.append(fe.invalid(path, value, f"must validate one and only one schema (oneOf){found}"))
    if s.not_ is not None and is_valid(value, s.not_):
        errors.append(fe.invalid(path, value, "must not validate the schema (not)"))
