"""A minimal OpenAPI v3 description: enough for kubectl to validate on the server side.

Before it sends an object, ``kubectl apply``/``create``/``replace`` (``--validate=strict``, the
default) checks whether the server validates fields itself: it looks in ``/openapi/v3`` for the
group version's document, finds the PATCH operation tagged with the kind's
``x-kubernetes-group-version-kind``, and looks for its ``fieldValidation`` query parameter. Found,
kubectl sends ``?fieldValidation=Strict`` and skips its own schema validation; not found, or no
document at all, it fails with "failed to download openapi". So every served group version gets a
document listing its paths and operations with the query parameters the front accepts.

The documents carry no schemas (``components.schemas`` is empty): kubectl then computes client-side
apply patches from its compiled-in types for built-in kinds and with JSON merge patch for the
others, which is what it does against any server for custom resources without OpenAPI schemas.
``kubectl explain`` has nothing to explain. ``/openapi/v2`` is not served; kubectl uses it only
when v3 is missing.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from clusterclass.kube.memory import KindInfo, MemoryStore

OPENAPI_VERSION = "3.0.0"


def _query(name: str, description: str) -> dict[str, Any]:
    return {"name": name, "in": "query", "description": description, "schema": {"type": "string", "uniqueItems": True}}


_DRY_RUN = _query("dryRun", "When present, modifications are not persisted. The only valid value is All.")
_FIELD_MANAGER = _query("fieldManager", "The name of the actor making the change.")
_FIELD_VALIDATION = _query("fieldValidation", "How unknown and duplicate fields are handled: Ignore, Warn or Strict.")
_FORCE = _query("force", "Server-side apply: take over conflicting fields. Only for apply requests.")
_WRITE_PARAMETERS = [_DRY_RUN, _FIELD_MANAGER, _FIELD_VALIDATION]
_LIST_PARAMETERS = [
    _query(name, name)
    for name in (
        "labelSelector",
        "fieldSelector",
        "resourceVersion",
        "timeoutSeconds",
        "watch",
        "allowWatchBookmarks",
        "limit",
        "continue",
    )
]


def group_version_path(group: str, version: str) -> str:
    """The key of a group version in ``/openapi/v3`` (``api/v1``, ``apis/<group>/<version>``)."""
    return f"apis/{group}/{version}" if group else f"api/{version}"


def _kinds_by_group_version(store: MemoryStore) -> dict[tuple[str, str], list[KindInfo]]:
    served: dict[tuple[str, str], list[KindInfo]] = {}
    for info in store.kinds():
        for version in sorted(info.versions):
            served.setdefault((info.group, version), []).append(info)
    return served


def document(store: MemoryStore, group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of ``group/version``, or None when it is not served."""
    kinds = _kinds_by_group_version(store).get((group, version))
    if not kinds:
        return None
    prefix = "/" + group_version_path(group, version)
    paths: dict[str, Any] = {}
    for info in sorted(kinds, key=lambda info: info.plural):
        gvk = {"group": info.group, "version": version, "kind": info.kind}
        scope = f"{prefix}/namespaces/{{namespace}}/{info.plural}" if info.namespaced else f"{prefix}/{info.plural}"
        paths[scope] = {
            "get": _operation(f"list{info.kind}", "list", gvk, _LIST_PARAMETERS),
            "post": _operation(f"create{info.kind}", "post", gvk, _WRITE_PARAMETERS),
            "delete": _operation(f"deletecollection{info.kind}", "deletecollection", gvk, [_DRY_RUN]),
        }
        item_paths = [f"{scope}/{{name}}"] + ([f"{scope}/{{name}}/status"] if info.status_subresource else [])
        for path in item_paths:
            status = path.endswith("/status")
            suffix = "Status" if status else ""
            paths[path] = {
                "get": _operation(f"read{info.kind}{suffix}", "get", gvk, []),
                "put": _operation(f"replace{info.kind}{suffix}", "put", gvk, _WRITE_PARAMETERS),
                "patch": _operation(f"patch{info.kind}{suffix}", "patch", gvk, [*_WRITE_PARAMETERS, _FORCE]),
            }
            if not status:
                paths[path]["delete"] = _operation(f"delete{info.kind}", "delete", gvk, [_DRY_RUN])
    return {
        "openapi": OPENAPI_VERSION,
        "info": {"title": "clusterclass embedded API server", "version": version},
        "paths": paths,
        "components": {"schemas": {}},
    }


def _operation(operation_id: str, action: str, gvk: dict[str, str], parameters: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "operationId": operation_id,
        "parameters": parameters,
        "responses": {"200": {"description": "OK"}},
        "x-kubernetes-action": action,
        "x-kubernetes-group-version-kind": gvk,
    }


def index(store: MemoryStore) -> dict[str, Any]:
    """``/openapi/v3``: where each group version's document is, with a hash that changes with it."""
    paths = {}
    for group, version in sorted(_kinds_by_group_version(store)):
        served = document(store, group, version)
        digest = hashlib.sha512(json.dumps(served, sort_keys=True).encode()).hexdigest()[:32].upper()
        key = group_version_path(group, version)
        paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}
