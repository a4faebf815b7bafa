"""JSON merge patch (RFC 7386), as ``kubectl patch --type merge`` sends and kube-apiserver applies it.

The embedded API server applies merge patches with :func:`merge_patch`, ``plan`` merges a Cluster given
again over the one given before with it (as upstream's plan does), and the topology controller's change
detection computes one with :func:`create_merge_patch` (as upstream's does with jsonpatch's
``CreateMergePatch``).

A map in the patch merges into the target key by key; ``null`` removes a key; anything else,
lists included, replaces the target value whole. A few dozen lines, so our own (see STACK.md).
"""

from __future__ import annotations

from typing import Any

from clusterclass.api.jsoncopy import json_copy


def merge_patch(target: Any, patch: Any) -> Any:
    """``target`` with ``patch`` merged in; neither argument is changed."""
    if not isinstance(patch, dict):
        return json_copy(patch)
    result = json_copy(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


def create_merge_patch(original: Any, modified: Any) -> Any:
    """The merge patch that turns ``original`` into ``modified`` (``{}`` when they are equal).

    A key only in ``original`` becomes ``null``; maps are compared key by key; anything else that
    differs (lists included) is replaced whole. The topology controller's change detection asks whether
    this is empty and whether it touches ``spec``.
    """
    if not isinstance(original, dict) or not isinstance(modified, dict):
        return json_copy(modified)
    patch: dict[str, Any] = {}
    for key in original.keys() - modified.keys():
        patch[key] = None
    for key, value in modified.items():
        if key not in original:
            patch[key] = json_copy(value)
        elif original[key] != value:
            if isinstance(original[key], dict) and isinstance(value, dict):
                patch[key] = create_merge_patch(original[key], value)
            else:
                patch[key] = json_copy(value)
    return patch
