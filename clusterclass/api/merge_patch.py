"""JSON merge patch (RFC 7386), as ``kubectl patch --type merge`` sends and kube-apiserver applies it.

The embedded API server applies merge patches with it, and ``plan`` merges a Cluster given again over
the one given before with it, as upstream's plan does (``clusterctl alpha topology plan``).

A map in the patch merges into the target key by key; ``null`` removes a key; anything else,
lists included, replaces the target value whole. A dozen lines, so our own (see STACK.md).
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
