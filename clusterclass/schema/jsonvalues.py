"""JSON value semantics shared by the schema walker: type names, integer rules, equality.

Values are what ``json``/``yaml`` decoding gives: ``None``, ``bool``, ``int``, ``float``, ``str``,
``list`` and ``dict``. Kubernetes decodes a JSON number without a fraction into an int64 and
anything else into a float64; its validator then also accepts a float with an integral value
(``3.0``) where an ``integer`` is required. We follow both rules:

- ``json_type`` names a value's JSON type the way the Kubernetes validator reports it
  (``integer`` for ints, ``number`` for floats and for ints that do not fit an int64);
- ``is_integer`` is true for ints in the int64 range and for integral floats within ±2^53
  (where a float still represents the integer exactly).

``bool`` is never a number, although Python makes it an ``int``.
"""

from __future__ import annotations

import math
from typing import Any

import orjson

from clusterclass.api.objects import is_int

INT64_MIN = -(2**63)
INT64_MAX = 2**63 - 1
_MAX_EXACT_FLOAT = 2.0**53


def is_number(value: Any) -> bool:
    return is_int(value) or isinstance(value, float)


def is_integer(value: Any) -> bool:
    """True for values the Kubernetes validator accepts as ``type: integer``."""
    if is_int(value):
        return bool(INT64_MIN <= value <= INT64_MAX)
    if isinstance(value, float):
        return math.isfinite(value) and value.is_integer() and abs(value) <= _MAX_EXACT_FLOAT
    return False


def json_type(value: Any) -> str:
    """The JSON type name of a decoded value, as the Kubernetes validator reports it."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if is_int(value):
        return "integer" if INT64_MIN <= value <= INT64_MAX else "number"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    if isinstance(value, list):
        return "array"
    if isinstance(value, dict):
        return "object"
    return type(value).__name__


def json_equal(a: Any, b: Any) -> bool:
    """Deep equality with JSON semantics: ``1 == 1.0``, but ``True != 1``; key order is ignored, and a
    null member differs from a missing one.

    Server-side apply runs this on every field of every write, mostly on equal values, so the common answers
    come from C: Python's ``!=`` tells unequal values apart (it only ever confuses a bool with a number, which
    makes it *more* lenient than JSON), and equal encodings (orjson, which writes ``true``, ``1`` and ``1.0``
    differently) prove equal values. Only values Python finds equal but that encode differently (a bool beside
    a number, keys in another order) take the walk.
    """
    if a is b and type(a) in _STRUCTURES:
        return True
    if type(a) in _STRUCTURES and type(b) is type(a):
        if a != b:
            return False
        try:
            if orjson.dumps(a) == orjson.dumps(b):
                return True
        except (TypeError, ValueError):
            pass
    return _walk_equal(a, b)


def _walk_equal(a: Any, b: Any) -> bool:
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for key, value in a.items():
            other = b.get(key, _ABSENT)
            if other is _ABSENT or not _walk_equal(value, other):
                return False
        return True
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(_walk_equal(x, y) for x, y in zip(a, b, strict=True))
    # the same type settles almost every comparison at once
    if type(a) is type(b):
        return bool(a == b)
    if isinstance(a, bool) or isinstance(b, bool):
        return False
    return is_number(a) and is_number(b) and bool(a == b)


_STRUCTURES = frozenset({dict, list})


#: a dict member that is not there (None would be a JSON null)
_ABSENT: Any = object()


def canonical(value: Any) -> Any:
    """A hashable form with JSON equality: used to find duplicate array items in linear time."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return (type(value).__name__, value)
    if is_number(value):
        if isinstance(value, float) and value.is_integer() and math.isfinite(value):
            return ("n", int(value))
        return ("n", value)
    if isinstance(value, list):
        return ("a", tuple(canonical(v) for v in value))
    if isinstance(value, dict):
        return ("o", tuple(sorted((str(k), canonical(v)) for k, v in value.items())))
    return ("?", repr(value))


def nesting_exceeds(value: Any, limit: int) -> bool:
    """Whether ``value`` nests lists/objects more than ``limit`` levels deep (or refers to itself, as a
    YAML alias can make it do). Iterative, so it is safe on any input."""
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        current, depth = stack.pop()
        if isinstance(current, dict):
            children: Any = current.values()
        elif isinstance(current, list):
            children = current
        else:
            continue
        if depth >= limit:
            return True
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))
    return False
