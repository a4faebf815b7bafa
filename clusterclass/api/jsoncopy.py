"""The one deep copy of JSON values (plain dicts, lists, scalars) that the API layers use.

Objects are plain dicts end to end and are copied on every read and write of the memory store, every
merge patch and every server-side apply, so the copy is on the hot path: a type-dispatched walk is
several times faster than ``copy.deepcopy``, which memoises and handles arbitrary objects.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def json_copy(value: Any) -> Any:
    """A deep copy of a JSON value (dicts, lists, scalars), several times faster than ``copy.deepcopy``.

    Other mappings become dicts and tuples lists, as a JSON round trip would make them.
    """
    kind = type(value)
    if kind is dict:
        return {key: json_copy(item) for key, item in value.items()}
    if kind is list:
        return [json_copy(item) for item in value]
    if kind in _SCALARS:
        return value
    if isinstance(value, Mapping):
        return {key: json_copy(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [json_copy(item) for item in value]
    return value


_SCALARS = frozenset({str, int, float, bool, type(None)})
