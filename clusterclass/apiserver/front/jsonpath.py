"""The JSONPath subset of CRD ``additionalPrinterColumns``: enough to fill ``kubectl get`` columns.

A printer column's ``jsonPath`` is a "simple" path (apiextensions validates it): fields
(``.status.phase``), quoted fields (``.metadata.labels['cluster\\.x-k8s\\.io/cluster-name']``),
indexes (``[0]``, ``[*]``) and equality filters (``[?(@.type=="Ready")]``). :func:`find` returns
every value the path reaches, in document order; a path that reaches nothing returns an empty list,
which the table shows as an empty cell, as kube-apiserver does. A path outside the subset raises
:class:`JsonPathError`.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from clusterclass.errors import ClusterClassError


class JsonPathError(ClusterClassError, ValueError):
    """A printer-column path this module cannot evaluate."""


Step = Callable[[Any], list[Any]]

_FIELD = re.compile(r"\.([A-Za-z0-9_$-]+)")
_QUOTED = re.compile(r"\[\s*'((?:[^'\\]|\\.)*)'\s*\]")
_INDEX = re.compile(r"\[\s*(-?\d+|\*)\s*\]")
_FILTER = re.compile(
    r"""\[\s*\?\(\s*@((?:\.[A-Za-z0-9_$-]+)+)\s*(==|!=)\s*(?:"([^"]*)"|'([^']*)'|(-?\d+(?:\.\d+)?|true|false))\s*\)\s*\]"""
)


def find(path: str, obj: Any) -> list[Any]:
    """Every value ``path`` reaches in ``obj``."""
    values = [obj]
    for step in compile_path(path):
        values = [found for value in values for found in step(value)]
    return values


def compile_path(path: str) -> list[Step]:
    """The steps of ``path``; ``{...}`` around it (kubectl's template form) is accepted."""
    text = path.strip()
    if text.startswith("{") and text.endswith("}"):
        text = text[1:-1].strip()
    if text.startswith("$"):
        text = text[1:]
    steps: list[Step] = []
    position = 0
    while position < len(text):
        for pattern, build in _BUILDERS:
            match = pattern.match(text, position)
            if match:
                steps.append(build(match))
                position = match.end()
                break
        else:
            raise JsonPathError(f"unsupported JSONPath {path!r} at {text[position:]!r}")
    return steps


def _field(name: str) -> Step:
    return lambda value: [value[name]] if isinstance(value, dict) and name in value else []


def _index(token: str) -> Step:
    if token == "*":
        return (
            lambda value: list(value)
            if isinstance(value, list)
            else list(value.values())
            if isinstance(value, dict)
            else []
        )
    index = int(token)

    def step(value: Any) -> list[Any]:
        if isinstance(value, list) and -len(value) <= index < len(value):
            return [value[index]]
        return []

    return step


def _filter(match: re.Match[str]) -> Step:
    fields = match.group(1).split(".")[1:]
    negate = match.group(2) == "!="
    literal = match.group(5)
    wanted: Any = match.group(3) if match.group(3) is not None else match.group(4)
    if literal is not None:
        wanted = {"true": True, "false": False}.get(literal, float(literal) if "." in literal else int(literal))

    def matches(item: Any) -> bool:
        current = item
        for name in fields:
            if not isinstance(current, dict) or name not in current:
                return False
            current = current[name]
        return bool(current == wanted) != negate

    return lambda value: [item for item in value if matches(item)] if isinstance(value, list) else []


_BUILDERS: list[tuple[re.Pattern[str], Callable[[re.Match[str]], Step]]] = [
    (_FIELD, lambda m: _field(m.group(1))),
    (_QUOTED, lambda m: _field(re.sub(r"\\(.)", r"\1", m.group(1)))),
    (_INDEX, lambda m: _index(m.group(1))),
    (_FILTER, _filter),
]
