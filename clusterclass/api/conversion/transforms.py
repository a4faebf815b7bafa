"""Value re-encodings shared by many kinds' conversions, each a :class:`~clusterclass.api.conversion.engine.Transform`.

- :data:`DURATION_SECONDS` — a ``metav1.Duration`` (``"5m0s"``) ↔ whole seconds (``300``), truncated and capped
  at MaxInt32 as upstream's ``ConvertToSeconds``; seconds come back in Go's form (``go_duration``);
- :data:`CONTRACT_REF` — a ``corev1.ObjectReference`` ↔ a ``ContractVersionedObjectReference``
  (``{apiGroup, kind, name}``): the version is dropped going up and asked of :class:`ApiVersions` coming down,
  where the reference also gets the object's namespace;
- :data:`TEMPLATE_REF` — an ``ObjectReference`` ↔ ``{apiVersion, kind, name}`` (ClusterClass template and MHC
  remediation template references: the namespace is always the object's own);
- :data:`NODE_REF` — a Node ``ObjectReference`` ↔ ``{name}``;
- :func:`keyed_list` — a map ↔ a list of ``{name, value}`` sorted by name (kubeadm ``extraArgs``; failure domains);
- :data:`OMIT_ZERO` / :func:`omit_zero` — a field one version writes as its zero and the other leaves out
  (a ``*string`` that became an ``omitempty`` string, a value Go always wrote): the zero is left out both ways.
"""

from __future__ import annotations

import math
from typing import Any, Final

from goduration import Duration, DurationParseError

from clusterclass.api.conversion.engine import MISSING, Context, ConversionError, Move, Transform, move
from clusterclass.api.durations import go_duration
from clusterclass.api.objects import split_api_version

MAX_INT32: Final = 2**31 - 1


def _seconds(value: Any, _ctx: Context, path: str) -> Any:
    if value is None:
        return MISSING
    if not isinstance(value, str):
        raise ConversionError(f"invalid duration {value!r}: must be a string", field=path)
    try:
        seconds = math.trunc(Duration.parse(value).total_seconds())
    except (DurationParseError, ValueError, OverflowError) as err:
        raise ConversionError(f"invalid duration {value!r}: {err}", field=path) from None
    return min(seconds, MAX_INT32)


def _duration(value: Any, _ctx: Context, path: str) -> Any:
    if value is None:
        return MISSING
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise ConversionError(f"invalid number of seconds {value!r}", field=path)
    return go_duration(f"{int(value)}s")


DURATION_SECONDS: Final = Transform(_seconds, _duration)


def _group(api_version: Any, path: str) -> str:
    if not api_version:
        return ""
    try:
        return split_api_version(str(api_version))[0]
    except ValueError as err:
        raise ConversionError(f"failed to convert object: failed to parse apiVersion: {err}", field=path) from None


def _contract_ref_up(value: Any, _ctx: Context, path: str) -> Any:
    if not isinstance(value, dict):
        return value
    ref: dict[str, Any] = {}
    group = _group(value.get("apiVersion"), f"{path}.apiVersion")
    if group or "apiVersion" in value:
        ref["apiGroup"] = group
    for key in ("kind", "name"):
        if key in value:
            ref[key] = value[key]
    return ref


def _contract_ref_down(value: Any, ctx: Context, path: str) -> Any:
    if not isinstance(value, dict):
        return value
    if not value.get("kind") and not value.get("name") and not value.get("apiGroup"):
        return MISSING  # upstream converts only a reference that IsDefined()
    group, kind = str(value.get("apiGroup") or ""), str(value.get("kind") or "")
    if not kind:
        # nothing to look a version up for (upstream's lookup fails here and the object cannot be read in v1beta1)
        partial = {"namespace": ctx.namespace, "name": value.get("name", "")}
        return {"apiVersion": group, **partial} if group else partial
    try:
        api_version = ctx.api_versions.api_version(group, kind)
    except ConversionError as err:
        raise ConversionError(f"failed to convert object: {err.message}", field=path) from None
    return {"apiVersion": api_version, "kind": kind, "namespace": ctx.namespace, "name": value.get("name", "")}


CONTRACT_REF: Final = Transform(_contract_ref_up, _contract_ref_down)


def _template_ref_up(value: Any, _ctx: Context, _path: str) -> Any:
    if not isinstance(value, dict):
        return value
    return {key: value[key] for key in ("apiVersion", "kind", "name") if key in value}


def _template_ref_down(value: Any, ctx: Context, _path: str) -> Any:
    if not isinstance(value, dict):
        return value
    ref = {key: value[key] for key in ("apiVersion", "kind", "name") if key in value}
    ref["namespace"] = ctx.namespace
    return ref


TEMPLATE_REF: Final = Transform(_template_ref_up, _template_ref_down)


def _node_ref_up(value: Any, _ctx: Context, _path: str) -> Any:
    if not isinstance(value, dict):
        return value
    return {"name": value["name"]} if "name" in value else {}


def _node_ref_down(value: Any, _ctx: Context, _path: str) -> Any:
    if not isinstance(value, dict):
        return value
    return {"apiVersion": "v1", "kind": "Node", "name": value.get("name", "")}


NODE_REF: Final = Transform(_node_ref_up, _node_ref_down)


def _each(transform: Transform) -> Transform:
    """``transform`` applied to every item of a list value."""

    def up(value: Any, ctx: Context, path: str) -> Any:
        if not isinstance(value, list):
            return value
        items = (transform.to_hub(item, ctx, f"{path}[{i}]") for i, item in enumerate(value))
        return [item for item in items if item is not MISSING]

    def down(value: Any, ctx: Context, path: str) -> Any:
        if not isinstance(value, list):
            return value
        items = (transform.to_spoke(item, ctx, f"{path}[{i}]") for i, item in enumerate(value))
        return [item for item in items if item is not MISSING]

    return Transform(up, down)


NODE_REFS: Final = _each(NODE_REF)


def keyed_list(key: str = "name", value_key: str | None = "value") -> Transform:
    """A map in the spoke ↔ a list in the hub sorted by ``key``.

    With ``value_key`` each map value becomes ``{key: k, value_key: v}``; without, each map value is itself a
    map that gains ``key`` (failure domains: ``{name: {controlPlane, attributes}}`` ↔ ``[{name, ...}]``).
    """

    def up(value: Any, _ctx: Context, _path: str) -> Any:
        if not isinstance(value, dict):
            return value
        items = []
        for name in sorted(value):
            if value_key is not None:
                items.append({key: name, value_key: value[name]})
            else:
                entry = value[name] if isinstance(value[name], dict) else {}
                items.append({key: name, **entry})
        return items

    def down(value: Any, _ctx: Context, _path: str) -> Any:
        if not isinstance(value, list):
            return value
        mapped: dict[str, Any] = {}
        for item in value:
            if not isinstance(item, dict) or key not in item:
                continue
            if value_key is not None:
                mapped[str(item[key])] = item.get(value_key, "")
            else:
                mapped[str(item[key])] = {k: v for k, v in item.items() if k != key}
        return mapped

    return Transform(up, down)


def renamed_values(mapping: dict[str, str]) -> Transform:
    """An enum whose spellings changed: spoke value → hub value by ``mapping`` (others kept)."""
    reverse = {v: k for k, v in mapping.items()}

    def up(value: Any, _ctx: Context, _path: str) -> Any:
        return mapping.get(value, value) if isinstance(value, str) else value

    def down(value: Any, _ctx: Context, _path: str) -> Any:
        return reverse.get(value, value) if isinstance(value, str) else value

    return Transform(up, down)


def _omit_zero(value: Any, _ctx: Context, _path: str) -> Any:
    """Go's ``omitempty``: a zero value (null, ``false``, ``0``, ``""``, an empty list or map) is not written."""
    if value is None or value is False or value in ("", [], {}):
        return MISSING
    if isinstance(value, int | float) and value == 0:
        return MISSING
    return value


OMIT_ZERO: Final = Transform(_omit_zero, _omit_zero)


def omit_zero(path: str) -> Move:
    """The field at ``path`` (the same in both versions) through :data:`OMIT_ZERO`."""
    return move(path, path, OMIT_ZERO)
