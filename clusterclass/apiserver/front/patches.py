"""The patch types of a PATCH request, and how each one turns the stored object into the new one.

``Content-Type`` says which patch it is, as kube-apiserver reads it:

- ``application/merge-patch+json``: JSON merge patch (RFC 7386) and ``application/json-patch+json``:
  JSON patch (RFC 6902), both applied by the store
  (:meth:`~clusterclass.apiserver.store.MemoryStore.patch`);
- ``application/strategic-merge-patch+json``: :mod:`.strategic`, for built-in kinds only (415 for
  custom resources);
- ``application/apply-patch+yaml``: server-side apply, which is not a patch of the stored object but
  an intent handed to the store (see the handlers); it is recognised here so the same check of the
  media type applies.
"""

from __future__ import annotations

import json
from typing import Any, Literal

from clusterclass.api.objects import Obj
from clusterclass.apiserver.front.responses import unknown_media_type, unsupported_media_type
from clusterclass.apiserver.front.strategic import strategic_merge_patch
from clusterclass.apiserver.store import KindInfo
from clusterclass.kube.errors import BadRequest

PatchKind = Literal["merge", "json", "strategic", "apply"]

MEDIA_TYPES: dict[str, PatchKind] = {
    "application/merge-patch+json": "merge",
    "application/json-patch+json": "json",
    "application/strategic-merge-patch+json": "strategic",
    "application/apply-patch+yaml": "apply",
    "application/apply-patch+cbor": "apply",
}


def is_builtin(info: KindInfo) -> bool:
    """Whether kube-apiserver would serve ``info`` itself rather than through a CRD.

    CRD groups must contain a dot and may not end in ``.k8s.io`` (without an approval annotation we
    do not model), so the group alone tells them apart.
    """
    return not info.group or "." not in info.group or info.group.endswith(".k8s.io")


def accepted_media_types(info: KindInfo) -> list[str]:
    kinds = ["application/json-patch+json", "application/merge-patch+json"]
    if is_builtin(info):
        kinds.append("application/strategic-merge-patch+json")
    return [*kinds, "application/apply-patch+yaml"]


def patch_kind(content_type: str, info: KindInfo) -> PatchKind:
    """The patch type ``content_type`` names for ``info``; 415 when it is none the kind accepts."""
    media_type = content_type.split(";")[0].strip().lower()
    kind = MEDIA_TYPES.get(media_type)
    if kind is None:
        raise unknown_media_type()
    if media_type.endswith("+cbor") or (kind == "strategic" and not is_builtin(info)):
        raise unsupported_media_type(accepted_media_types(info))
    return kind


def decode_json(body: bytes, what: str) -> Any:
    try:
        return json.loads(body or b"null")
    except (ValueError, UnicodeDecodeError) as err:
        raise BadRequest.new(f"error decoding {what}: {err}") from err


def apply_strategic_patch(current: Obj, body: bytes) -> Obj:
    """``current`` with the strategic merge patch in ``body`` applied.

    JSON and JSON merge patches are applied by the store itself (atomically, under its lock); a
    strategic merge patch needs the kind's patch strategies, which only the front knows.
    """
    patch = decode_json(body, "patch")
    if not isinstance(patch, dict):
        raise BadRequest.new(
            "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
            if isinstance(patch, list)
            else "error decoding patch: the strategic merge patch must be a JSON object"
        )
    return strategic_merge_patch(current, patch)
