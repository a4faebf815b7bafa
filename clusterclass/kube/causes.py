"""Field errors as kube-apiserver puts them on the wire: ``Status`` causes and the ``Invalid`` error.

The checks of the CRD schema walker and of ObjectMeta produce :class:`~clusterclass.fielderrors.FieldError`
values (path, error type, bad value, detail). A client never sees those: it sees a ``Status`` with
``reason: Invalid``, one cause per error (``{reason, message, field}``) and a message that joins them.
Both are rendered here the way apimachinery's ``field.Error`` and ``errors.NewInvalid`` render them,
because contract tests compare the memory store's messages with a real kube-apiserver's:

- a cause message is ``<Type>: <value>: <detail>``; the value is left out for ``Required``,
  ``Forbidden``, ``Too long`` and ``Internal error``; strings are Go-quoted (``%q``), numbers and
  booleans printed plainly (``%v``, so ``1e+06`` for a float million), and everything else, ``nil``
  included, as JSON (``null``, ``{"name":"a"}``), as Kubernetes 1.37 prints them;
- the ``Status`` message is ``<Kind>.<group> "<name>" is invalid: <errors>``, where ``<errors>`` is
  the one error, or ``[e1, e2]`` without repeats.

Why not :meth:`FieldError.message`: that rendering is the project's (JSON values, ``Too long``
with the value), fine for offline checks but not byte-equal to an API server's.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterable, Mapping
from decimal import Decimal
from typing import Any, Protocol

from clusterclass.fielderrors import OMITTED, ErrorType, FieldError
from clusterclass.kube.errors import Invalid, make_status

Cause = dict[str, str]

#: how Go's ``field.ErrorType.String()`` names each type
_TYPE_TEXT = {
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
_VALUE_HIDDEN = (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL)


class GroupKind(Protocol):
    """Anything naming a kind and its API group (a CRD's info, the memory store's kind registration)."""

    @property
    def group(self) -> str: ...

    @property
    def kind(self) -> str: ...


def go_quote(text: str) -> str:
    """Go's ``strconv.Quote``: printable characters as they are, the rest escaped Go's way."""
    out = ['"']
    for char in text:
        code = ord(char)
        if char in ('"', "\\"):
            out.append("\\" + char)
        elif char in _GO_ESCAPES:
            out.append(_GO_ESCAPES[char])
        elif char.isprintable() or char == " ":
            out.append(char)
        elif code < 0x80:
            out.append(f"\\x{code:02x}")
        elif code < 0x10000:
            out.append(f"\\u{code:04x}")
        else:
            out.append(f"\\U{code:08x}")
    out.append('"')
    return "".join(out)


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


def go_float(value: float) -> str:
    """A float64 as Go's ``%v`` prints it: shortest digits, exponent form below 1e-4 and from 1e+06."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    sign = "-" if math.copysign(1.0, value) < 0 else ""
    if value == 0:
        return sign + "0"
    shortest = Decimal(repr(abs(value))).normalize()
    _, digit_tuple, exponent = shortest.as_tuple()
    digits = "".join(str(d) for d in digit_tuple)
    point = len(digits) + int(exponent)  # value = 0.<digits> × 10^point
    if point - 1 < -4 or point - 1 >= 6:
        mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
        return f"{sign}{mantissa}e{'-' if point - 1 < 0 else '+'}{abs(point - 1):02d}"
    if point <= 0:
        return f"{sign}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return sign + digits + "0" * (point - len(digits))
    return f"{sign}{digits[:point]}.{digits[point:]}"


def go_json(value: Any) -> str:
    """``json.Marshal`` of a decoded JSON value: compact, map keys sorted, ``<``, ``>`` and ``&`` escaped."""
    text = json.dumps(_go_json_ready(value), separators=(",", ":"), ensure_ascii=False, sort_keys=True)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _go_json_ready(value: Any) -> Any:
    if isinstance(value, float) and value.is_integer() and abs(value) < 1e21:
        return int(value)
    if isinstance(value, Mapping):
        return {str(k): _go_json_ready(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_go_json_ready(v) for v in value]
    return value


class GoText(str):
    """A bad value already in the form Go prints it (a struct as JSON in field order, a time), shown as it is."""


def go_value(value: Any) -> str:
    """The bad value of a field error as ``field.Error.ErrorBody`` prints it (Kubernetes 1.37).

    Strings Go-quoted, numbers and booleans plain (``%v``), everything else, ``nil`` included, as JSON.
    """
    if isinstance(value, GoText):
        return str(value)
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    return go_json(value)


def error_body(error: FieldError) -> str:
    """``field.Error.ErrorBody()``: the error without its field path."""
    text = _TYPE_TEXT[error.type]
    if error.type not in _VALUE_HIDDEN and error.value is not OMITTED:
        text += f": {go_value(error.value)}"
    if error.detail:
        text += f": {error.detail}"
    return text


def to_cause(error: FieldError) -> Cause:
    """The ``StatusCause`` of one field error."""
    return {"reason": str(error.type), "message": error_body(error), "field": error.field}


def to_causes(errors: Iterable[FieldError]) -> list[Cause]:
    return [to_cause(e) for e in errors]


def cause_text(cause: Mapping[str, str]) -> str:
    """``field.Error.Error()``: ``<field>: <body>``."""
    return f"{cause.get('field', '')}: {cause.get('message', '')}"


def aggregate(causes: Iterable[Mapping[str, str]]) -> str:
    """``ErrorList.ToAggregate().Error()``: one error as it is, several as ``[a, b]``, repeats dropped."""
    seen: list[str] = []
    for cause in causes:
        text = cause_text(cause)
        if text not in seen:
            seen.append(text)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def qualified_kind(kind_info: GroupKind) -> str:
    """``Kind.group`` (``GroupKind.String()``); the bare kind for the core group."""
    return f"{kind_info.kind}.{kind_info.group}" if kind_info.group else kind_info.kind


def invalid_error(kind_info: GroupKind, name: str, causes: Iterable[Mapping[str, str]]) -> Invalid:
    """The 422 ``Invalid`` error kube-apiserver answers a write with, for ``causes`` of object ``name``."""
    cause_list = [dict(c) for c in causes]
    message = f"{qualified_kind(kind_info)} {go_quote(name)} is invalid"
    if cause_list:
        message += f": {aggregate(cause_list)}"
    details: dict[str, Any] = {"name": name, "kind": kind_info.kind, "causes": cause_list}
    if kind_info.group:
        details["group"] = kind_info.group
    return Invalid(make_status(422, "Invalid", message, details=details))
