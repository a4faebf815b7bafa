"""Values as Go prints them in kube-apiserver's messages and JSON, so the memory store's text is byte-equal.

Contract tests compare the memory store's errors and ``fieldsV1`` keys with a real kube-apiserver's,
so every module that writes such text (field error causes, managed-field paths, ObjectMeta decoding,
the server's decode errors) renders values through the one set of functions here:

- :func:`go_quote`: ``strconv.Quote`` / ``%q`` of a string;
- :func:`go_float`: ``%v`` of a float64 (``1e+06``, ``1e-05``), :func:`go_exponent` its exponent form;
- :func:`go_json`: ``encoding/json`` of a decoded JSON value (HTML characters escaped, ``1.5e-7``);
- :func:`json_kind`: how Go's JSON decoder names the kind of a value it cannot unmarshal;
- :func:`rfc3339`: ``metav1.Time`` as JSON (seconds, UTC, ``Z``).
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v"}


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


def go_float(value: float) -> str:
    """A float64 as Go's ``%v`` prints it: shortest digits, exponent form below 1e-4 and from 1e+06."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1.0, value) < 0 else "0"
    if 1e-4 <= abs(value) < 1e6:
        return fixed_digits(value)
    return go_exponent(value)


def go_exponent(value: float) -> str:
    """A finite float in ``%v``'s exponent form: shortest digits, a two-digit exponent (``1e-05``, ``1.5e+21``)."""
    sign, digit_tuple, exponent = Decimal(repr(value)).normalize().as_tuple()
    assert isinstance(exponent, int)
    digits = "".join(map(str, digit_tuple))
    mantissa = digits[0] + ("." + digits[1:] if len(digits) > 1 else "")
    power = exponent + len(digits) - 1
    return f"{'-' if sign else ''}{mantissa}e{'+' if power >= 0 else '-'}{abs(power):02d}"


_NEEDS_ESCAPE = re.compile(r'["\\<>&]')
_HTML_ESCAPES = {"<": "\\u003c", ">": "\\u003e", "&": "\\u0026", "\u2028": "\\u2028", "\u2029": "\\u2029"}


def go_json(value: Any) -> str:
    """Compact JSON as Go's ``encoding/json`` writes it: keys sorted, HTML characters escaped, no ``.0`` floats."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _json_float(value)
    if isinstance(value, str):
        if value.isascii() and value.isprintable() and _NEEDS_ESCAPE.search(value) is None:
            return '"' + value + '"'
        text = json.dumps(value, ensure_ascii=False)
        if any(c in text for c in _HTML_ESCAPES):
            text = "".join(_HTML_ESCAPES.get(c, c) for c in text)
        return text
    if isinstance(value, Mapping):
        return "{" + ",".join(go_json(str(k)) + ":" + go_json(value[k]) for k in sorted(value)) + "}"
    if isinstance(value, list | tuple):
        return "[" + ",".join(go_json(v) for v in value) + "]"
    raise TypeError(f"not a JSON value: {value!r}")


def _json_float(value: float) -> str:
    """``encoding/json``'s float: exponent form below 1e-6 and from 1e21, written ``1e-7`` (no padding)."""
    if math.isnan(value) or math.isinf(value):
        raise ValueError(f"unsupported JSON number {value!r}")
    magnitude = abs(value)
    if magnitude != 0 and (magnitude < 1e-6 or magnitude >= 1e21):
        text = repr(value)
        mantissa, _, exponent = text.partition("e")
        sign = exponent[0] if exponent[:1] in "+-" else "+"
        digits = exponent.lstrip("+-").lstrip("0") or "0"
        return f"{mantissa}e{sign}{digits}"
    return fixed_digits(value)


def fixed_digits(value: float) -> str:
    """The shortest round-tripping digits of ``value`` without an exponent (``-0`` as ``0``)."""
    text = format(Decimal(repr(value)).normalize(), "f")
    return "0" if text == "-0" else text


def json_kind(value: Any) -> str:
    """How Go's JSON decoder names the kind of a value in ``json: cannot unmarshal <kind> into ...``."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, Mapping):
        return "object"
    return "null"


def rfc3339(moment: datetime) -> str:
    """``metav1.Time`` as JSON: seconds precision, UTC, ``Z`` (a naive moment is taken as UTC already)."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")
