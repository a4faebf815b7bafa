"""Reading plain-dict Kubernetes objects: metadata accessors, nested lookups and object keys.

Objects are ``dict[str, Any]`` exactly as decoded from JSON or YAML. These helpers never mutate
their input and treat a missing map the same as an empty one, as Go's ``omitempty`` does.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterclass.errors import ObjectKey

Obj = dict[str, Any]


def dig(obj: Mapping[str, Any] | None, *path: str) -> Any:
    """The value at ``path`` inside nested maps, or None when any step is missing or not a map."""
    current: Any = obj
    for step in path:
        if type(current) is not dict and not isinstance(current, Mapping):  # the ABC check is slow: dicts first
            return None
        current = current.get(step)
    return current


def is_int(value: Any) -> bool:
    """A JSON integer: Python counts booleans as ints, JSON does not."""
    return isinstance(value, int) and not isinstance(value, bool)


def set_path(obj: Obj, path: tuple[str, ...], value: Any) -> None:
    """Set ``value`` at ``path``, creating intermediate maps."""
    current = obj
    for step in path[:-1]:
        child = current.get(step)
        if not isinstance(child, dict):
            child = {}
            current[step] = child
        current = child
    current[path[-1]] = value


def name_of(obj: Mapping[str, Any]) -> str:
    return str(dig(obj, "metadata", "name") or "")


def namespace_of(obj: Mapping[str, Any]) -> str:
    return str(dig(obj, "metadata", "namespace") or "")


def labels_of(obj: Mapping[str, Any] | None) -> dict[str, str]:
    return dict(dig(obj, "metadata", "labels") or {})


def annotations_of(obj: Mapping[str, Any] | None) -> dict[str, str]:
    return dict(dig(obj, "metadata", "annotations") or {})


def owner_references_of(obj: Mapping[str, Any] | None) -> list[Mapping[str, Any]]:
    """The object's ``metadata.ownerReferences`` entries (anything but a mapping in the list is skipped)."""
    refs = dig(obj, "metadata", "ownerReferences")
    return [ref for ref in refs if isinstance(ref, Mapping)] if isinstance(refs, list) else []


def split_api_version(api_version: str) -> tuple[str, str]:
    """``group/version`` → (group, version); the core group has no slash (``v1`` → ("", "v1")).

    Raises ValueError for anything else, as Go's ``schema.ParseGroupVersion`` does.
    """
    if not api_version:
        raise ValueError("apiVersion is empty")
    parts = api_version.split("/")
    if len(parts) == 1:
        return "", parts[0]
    if len(parts) == 2 and parts[0] and parts[1]:
        return parts[0], parts[1]
    raise ValueError(f"unexpected GroupVersion string: {api_version!r}")


def group_of(api_version: str) -> str:
    """The API group of ``api_version``; an unparsable value counts as its own group."""
    try:
        return split_api_version(api_version)[0]
    except ValueError:
        return api_version


def key_of(obj: Mapping[str, Any]) -> ObjectKey:
    """The version-independent identity of an object."""
    return ObjectKey(
        group_of(str(obj.get("apiVersion") or "")),
        str(obj.get("kind") or ""),
        namespace_of(obj),
        name_of(obj),
    )


def describe(obj: Mapping[str, Any]) -> str:
    """``Kind/name``, the way upstream renders objects in topology messages and events."""
    return f"{obj.get('kind')}/{name_of(obj)}"
