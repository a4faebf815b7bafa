"""Strategic merge patch, applied the way kube-apiserver applies it to the built-in kinds we serve.

``kubectl patch`` (its default ``--type strategic``) and client-side ``kubectl apply`` send
``application/strategic-merge-patch+json`` for built-in kinds. It is a JSON merge patch (maps merge
key by key, ``null`` deletes) except where the kind's Go types declare a patch strategy for a list:

- ``merge`` with a ``patchMergeKey``: list items are maps matched by that key and merged one by one;
  an item ``{"<key>": ..., "$patch": "delete"}`` removes the matching item;
- ``merge`` without a key: a list of scalars, merged as a set (patch values are added);
  ``$deleteFromPrimitiveList/<field>: [...]`` removes values;
- anything else: the list is replaced, as in a merge patch.

Directives honoured everywhere: ``$patch: replace`` (a map or list replaced whole), ``$patch: delete``
(a map removed), ``$retainKeys: [...]`` (keys of the map not listed are dropped),
``$setElementOrder/<field>: [...]`` (the order of a merged list: listed items in that order, then
items only the server had, in their previous order).

Limits: the strategies known are those of ``metadata`` (``finalizers`` a set, ``ownerReferences``
keyed by ``uid``), which is all the built-in kinds we serve (Namespace, ConfigMap, Secret, Event,
Lease, CustomResourceDefinition) declare; a built-in kind with keyed lists elsewhere (Pod containers)
would get them replaced. Custom resources never get here: kube-apiserver refuses strategic merge
patches for them with 415, and so does the front.
"""

from __future__ import annotations

from typing import Any

from clusterclass.api.jsoncopy import json_copy
from clusterclass.kube.errors import BadRequest

Path = tuple[str, ...]

#: list fields with a patch strategy, by path from the object root: (strategy, merge key)
METADATA_STRATEGIES: dict[Path, tuple[str, str | None]] = {
    ("metadata", "finalizers"): ("merge", None),
    ("metadata", "ownerReferences"): ("merge", "uid"),
}

PATCH = "$patch"
RETAIN_KEYS = "$retainKeys"
SET_ELEMENT_ORDER = "$setElementOrder/"
DELETE_FROM_PRIMITIVE_LIST = "$deleteFromPrimitiveList/"

_DELETE = object()


def strategic_merge_patch(original: dict[str, Any], patch: Any) -> dict[str, Any]:
    """``original`` with ``patch`` applied; neither argument is changed."""
    if not isinstance(patch, dict):
        raise BadRequest.new("the strategic merge patch must be a JSON object")
    merged = _merge_map(json_copy(original), patch, ())
    if merged is _DELETE:
        raise BadRequest.new('a strategic merge patch may not delete the whole object ("$patch": "delete")')
    return merged  # type: ignore[no-any-return]


def _strip(value: Any) -> Any:
    """A patch value with its directives removed, for a place the original has nothing to merge into."""
    if isinstance(value, dict):
        return {
            key: _strip(item)
            for key, item in value.items()
            if key not in (PATCH, RETAIN_KEYS)
            and not key.startswith((SET_ELEMENT_ORDER, DELETE_FROM_PRIMITIVE_LIST))
            and item is not None
        }
    if isinstance(value, list):
        return [
            _strip(item) for item in value if not (isinstance(item, dict) and item.get(PATCH) in ("delete", "replace"))
        ]
    return value


def _strategy(path: Path) -> tuple[str, str | None]:
    """The patch strategy and merge key of the list at ``path``; lists without one are replaced."""
    return METADATA_STRATEGIES.get(path, ("replace", None))


def _merge_map(original: dict[str, Any], patch: dict[str, Any], path: Path) -> Any:
    directive = patch.get(PATCH)
    if directive == "delete":
        return _DELETE
    if directive == "replace":
        return _strip(patch)
    if directive is not None:
        raise BadRequest.new(f"Unknown patch type: {directive} in map: {_display(path)}")
    retain = patch.get(RETAIN_KEYS)
    if retain is not None:
        if not isinstance(retain, list):
            raise BadRequest.new(f"{RETAIN_KEYS} must be a list in {_display(path)}")
        original = {key: value for key, value in original.items() if key in retain}
    orders: dict[str, Any] = {}
    removals: dict[str, Any] = {}
    for key, value in patch.items():
        if key in (PATCH, RETAIN_KEYS):
            continue
        if key.startswith(SET_ELEMENT_ORDER):
            orders[key[len(SET_ELEMENT_ORDER) :]] = value
            continue
        if key.startswith(DELETE_FROM_PRIMITIVE_LIST):
            removals[key[len(DELETE_FROM_PRIMITIVE_LIST) :]] = value
            continue
        if value is None:
            original.pop(key, None)
            continue
        current = original.get(key)
        if isinstance(value, dict) and isinstance(current, dict):
            merged = _merge_map(current, value, (*path, key))
        elif isinstance(value, dict):
            merged = _merge_map({}, value, (*path, key)) if value.get(PATCH) != "delete" else _DELETE
        elif isinstance(value, list):
            merged = _merge_list(current if isinstance(current, list) else [], value, (*path, key))
        else:
            merged = value
        if merged is _DELETE:
            original.pop(key, None)
        else:
            original[key] = merged
    for key, values in removals.items():
        if not isinstance(values, list):
            raise BadRequest.new(f"{DELETE_FROM_PRIMITIVE_LIST}{key} must be a list in {_display(path)}")
        if isinstance(original.get(key), list):
            original[key] = [item for item in original[key] if item not in values]
    for key, order in orders.items():
        if not isinstance(order, list):
            raise BadRequest.new(f"{SET_ELEMENT_ORDER}{key} must be a list in {_display(path)}")
        if isinstance(original.get(key), list):
            original[key] = _ordered(original[key], order, _strategy((*path, key))[1])
    return original


def _merge_list(original: list[Any], patch: list[Any], path: Path) -> list[Any]:
    if any(isinstance(item, dict) and item.get(PATCH) == "replace" for item in patch):
        return [_strip(item) for item in patch if not (isinstance(item, dict) and item.get(PATCH) == "replace")]
    strategy, merge_key = _strategy(path)
    if strategy != "merge":
        return [_strip(item) for item in patch if not (isinstance(item, dict) and item.get(PATCH) == "delete")]
    if merge_key is None:
        merged = list(original)
        for item in patch:
            if item not in merged:
                merged.append(_strip(item))
        return merged
    merged = list(original)
    for item in patch:
        if not isinstance(item, dict) or merge_key not in item:
            raise BadRequest.new(f"map: {item} does not contain declared merge key: {merge_key}")
        found = next(
            (
                index
                for index, old in enumerate(merged)
                if isinstance(old, dict) and old.get(merge_key) == item[merge_key]
            ),
            None,
        )
        if item.get(PATCH) == "delete":
            if found is not None:
                del merged[found]
            continue
        if found is None:
            merged.append(_merge_map({}, item, path))
        else:
            merged[found] = _merge_map(merged[found], item, path)
    return merged


def _ordered(items: list[Any], order: list[Any], merge_key: str | None) -> list[Any]:
    """``items`` with those named in ``order`` first, in that order, then the rest as they were."""

    def identity(item: Any) -> Any:
        return item.get(merge_key) if merge_key is not None and isinstance(item, dict) else item

    wanted = [identity(entry) for entry in order]
    listed = [item for key in wanted for item in items if identity(item) == key]
    rest = [item for item in items if identity(item) not in wanted]
    return listed + rest


def _display(path: Path) -> str:
    return ".".join(path) or "<root>"
