"""Field errors: what every check (variables, admission rules) returns, in the shape Kubernetes admission reports.

A :class:`FieldError` names the field path (``spec.topology.variables[foo].value.bar``), the
Kubernetes error type (``Required value``, ``Invalid value``, ...), the offending value when the
type shows one, and a detail message. ``str()`` renders it the way ``kubectl`` prints a field
error, so the CLI, the webhooks and the controller's conditions all say the same thing.

The path helpers build the dotted/bracketed paths Kubernetes prints: ``child`` adds ``.name``,
``key`` adds ``[key]`` (used for variable names and ``properties[...]`` in schemas), ``index``
adds ``[i]``.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass
from dataclasses import field as dataclass_field
from enum import StrEnum
from typing import Any

from clusterclass.errors import ObjectKey, TopologyError


class ErrorType(StrEnum):
    """Kubernetes ``field.ErrorType`` values; ``display`` is the text ``kubectl`` shows."""

    REQUIRED = "FieldValueRequired"
    INVALID = "FieldValueInvalid"
    TYPE_INVALID = "FieldValueTypeInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    DUPLICATE = "FieldValueDuplicate"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    INTERNAL = "InternalError"

    @property
    def display(self) -> str:
        return _DISPLAY[self]

    @property
    def shows_value(self) -> bool:
        """Whether Kubernetes prints the bad value for this type of error."""
        return self not in (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.INTERNAL)


_DISPLAY = {
    ErrorType.REQUIRED: "Required value",
    ErrorType.INVALID: "Invalid value",
    ErrorType.TYPE_INVALID: "Invalid value",
    ErrorType.NOT_SUPPORTED: "Unsupported value",
    ErrorType.DUPLICATE: "Duplicate value",
    ErrorType.FORBIDDEN: "Forbidden",
    ErrorType.TOO_LONG: "Too long",
    ErrorType.TOO_MANY: "Too many",
    ErrorType.INTERNAL: "Internal error",
}


class _Omitted:
    """Marker for a field error that carries no value."""

    def __repr__(self) -> str:
        return "<omitted>"


OMITTED: Any = _Omitted()


@dataclass(frozen=True)
class FieldError:
    """One problem at one field path."""

    field: str
    type: ErrorType
    detail: str = ""
    value: Any = dataclass_field(default=OMITTED, compare=False, hash=False)

    @property
    def message(self) -> str:
        """The error without its field path: ``Invalid value: 99: should be less than or equal to 10``."""
        text = self.type.display
        if self.type.shows_value and self.value is not OMITTED:
            text += f": {render_value(self.value)}"
        if self.detail:
            text += f": {self.detail}"
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.message}" if self.field else self.message

    def topology_error(self, obj: ObjectKey | None = None) -> TopologyError:
        """The same problem as the project's :class:`TopologyError`, pointing at this field of ``obj``."""
        return TopologyError(self.message, obj=obj, field=self.field or None)


def required(path: str, detail: str = "") -> FieldError:
    return FieldError(path, ErrorType.REQUIRED, detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, ErrorType.INVALID, detail, value)


def type_invalid(path: str, value: Any, detail: str) -> FieldError:
    return FieldError(path, ErrorType.TYPE_INVALID, detail, value)


def not_supported(path: str, value: Any, supported: list[Any]) -> FieldError:
    shown = ", ".join(json.dumps(s if isinstance(s, str) else to_json(s), ensure_ascii=False) for s in supported)
    return FieldError(path, ErrorType.NOT_SUPPORTED, f"supported values: {shown}", value)


def wrong_type(path: str, value: Any, what: str) -> FieldError:
    """A value of the wrong JSON type: ``must be <what>`` (e.g. ``a string``, ``an object``)."""
    return type_invalid(path, value, f"must be {what}")


def quote(value: str) -> str:
    """Go's ``%q`` of a string, as Kubernetes messages print names (JSON quoting is close enough)."""
    return json.dumps(value, ensure_ascii=False)


def forbidden(path: str, detail: str) -> FieldError:
    return FieldError(path, ErrorType.FORBIDDEN, detail)


def duplicate(path: str, value: Any, detail: str = "") -> FieldError:
    return FieldError(path, ErrorType.DUPLICATE, detail, value)


def internal(path: str, detail: str) -> FieldError:
    return FieldError(path, ErrorType.INTERNAL, detail)


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def key(path: str, name: str) -> str:
    return f"{path}[{name}]"


def index(path: str, i: int) -> str:
    return f"{path}[{i}]"


def to_json(value: Any) -> str:
    """Compact JSON of a decoded value; never raises (non-JSON leftovers are shown with ``str``)."""
    try:
        return json.dumps(value, separators=(",", ":"), ensure_ascii=False, allow_nan=True, default=str)
    except (TypeError, ValueError, RecursionError):
        pass
    try:
        return str(value)
    except RecursionError:
        return "<value nested too deeply to show>"


MAX_RENDERED_VALUE = 256


def render_value(value: Any) -> str:
    """A value as Kubernetes prints it in a field error: strings quoted, numbers plain, the rest as JSON.

    Renderings longer than :data:`MAX_RENDERED_VALUE` characters are cut and end in ``...``, so an
    error about a large variable stays readable (the value itself stays whole in ``FieldError.value``).
    """
    if isinstance(value, str):
        text = json.dumps(value, ensure_ascii=False)
    elif isinstance(value, float) or (isinstance(value, int) and not isinstance(value, bool)):
        text = format_number(value)
    else:
        text = to_json(value)
    return text if len(text) <= MAX_RENDERED_VALUE else text[: MAX_RENDERED_VALUE - 3] + "..."


def format_number(value: int | float) -> str:
    """A number the way Go's ``%v`` prints a decoded JSON number (``10``, ``1.5``, ``1e+21``)."""
    if isinstance(value, int):
        return str(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value.is_integer() and abs(value) < 1e21:
        return str(int(value))
    text = repr(value)
    if "e" in text:
        mantissa, exponent = text.split("e")
        sign = "-" if exponent.startswith("-") else "+"
        digits = exponent.lstrip("+-").rjust(2, "0")
        text = f"{mantissa}e{sign}{digits}"
    return text
