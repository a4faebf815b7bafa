"""The one deep copy of JSON values (plain dicts, lists, scalars) that the API layers use.

Objects are plain dicts end to end and are copied on every read and write of the memory store, every
conversion, merge patch and server-side apply, so the copy is on the hot path. A round trip through
**orjson** (C, about twice as fast as a type-dispatched Python walk on an 8 KiB Cluster, which is itself several
times faster than ``copy.deepcopy``) makes exactly the copy JSON would: other mappings become dicts, tuples
lists, key order is kept. What JSON cannot carry — a NaN or infinite float (orjson writes ``null`` for it), an
integer beyond 64 bits, a non-string key, a lone surrogate — falls back to the walk, which keeps such values as
they are; so a copy never changes a value, and an object with a ``null`` in it (rare: stored objects have none)
is copied by the walk.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars).

    Other mappings become dicts and tuples lists, as a JSON round trip would make them.
    """
    kind = type(value)
    if kind is dict or kind is list:
        try:
            encoded = orjson.dumps(value)
        except (TypeError, ValueError):  # orjson.JSONEncodeError is a TypeError
            return _walk(value)
        if b"null" in encoded:  # a None, or a NaN/infinity that JSON would turn into one
            return _walk(value)
        return orjson.loads(encoded)
    return _walk(value)


def sorted_copy(value: Any) -> Any:
    """A deep copy with every object's keys in sorted order, as Go marshals a ``map[string]interface{}``."""
    if type(value) is dict:
        try:
            encoded = orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
        except (TypeError, ValueError):
            return _sorted_walk(value)
        if b"null" not in encoded:
            return orjson.loads(encoded)
    return _sorted_walk(value)


def _walk(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {key: _walk(item) for key, item in value.items()}
    if kind is list:
        return [_walk(item) for item in value]
    if kind in _SCALARS:
        return value
    if isinstance(value, Mapping):
        return {key: _walk(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_walk(item) for item in value]
    return value


def _sorted_walk(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _sorted_walk(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [_sorted_walk(item) for item in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})
