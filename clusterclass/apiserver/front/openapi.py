"""A minimal OpenAPI v3 description: enough for kubectl to validate on the server side.

Before it sends an object, ``kubectl apply``/``create``/``replace`` (``--validate=strict``, the
default) checks whether the server validates fields itself: it looks in ``/openapi/v3`` for the
group version's document, finds the PATCH operation tagged with the kind's
``x-kubernetes-group-version-kind``, and looks for its ``fieldValidation`` query parameter. Found,
kubectl sends ``?fieldValidation=Strict`` and skips its own schema validation; not found, or no
document at all, it fails with "failed to download openapi". So every served group version gets a
document listing its paths and operations with the query parameters the front accepts.

The documents carry the schemas of custom resources, taken from their stored CRDs as
kube-apiserver publishes them (``metadata`` pointing at a short ObjectMeta schema), so ``kubectl
explain clusters.spec.topology`` works. Built-in kinds have no schema here: kubectl then computes
client-side apply patches from its compiled-in types, as it does whenever OpenAPI lacks a kind.
``/openapi/v2`` is not served; kubectl uses it only when v3 is missing.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from clusterclass.api.objects import dig
from clusterclass.apiserver.front.catalog import stored_crd
from clusterclass.apiserver.front.discovery import served_groups
from clusterclass.apiserver.store import KindInfo, MemoryStore

OPENAPI_VERSION = "3.0.0"
OBJECT_META = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"


def _string(description: str) -> dict[str, Any]:
    return {"type": "string", "description": description}


#: enough of ObjectMeta for ``kubectl explain <kind>.metadata``
OBJECT_META_SCHEMA: dict[str, Any] = {
    "type": "object",
    "description": "ObjectMeta is metadata that all persisted resources must have, which includes all objects "
    "users must create.",
    "properties": {
        "name": _string("Name must be unique within a namespace."),
        "generateName": _string("Optional prefix the server uses to generate a unique name."),
        "namespace": _string("The namespace the object is in; empty for cluster-scoped objects."),
        "uid": _string("The unique identifier of this object in time and space. Populated by the system."),
        "resourceVersion": _string("The internal version of this object, for optimistic concurrency."),
        "generation": {"type": "integer", "format": "int64", "description": "The generation of the desired state."},
        "creationTimestamp": _string("When this object was created. Populated by the system."),
        "deletionTimestamp": _string("When this object will be deleted. Populated by the system."),
        "labels": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Labels."},
        "annotations": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Annotations."},
        "finalizers": {"type": "array", "items": {"type": "string"}, "description": "Finalizers."},
        "ownerReferences": {"type": "array", "items": {"type": "object"}, "description": "Owner references."},
        "managedFields": {"type": "array", "items": {"type": "object"}, "description": "Field ownership."},
    },
}


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


def document(store: MemoryStore, group: str, version: str) -> dict[str, Any] | None:
    """The OpenAPI v3 document of ``group/version``, or None when it is not served."""
    kinds = served_groups(store).get(group, {}).get(version)
    return _document(store, group, version, kinds) if kinds else None


def _document(store: MemoryStore, group: str, version: str, kinds: list[KindInfo]) -> dict[str, Any]:
    prefix = "/" + group_version_path(group, version)
    paths: dict[str, Any] = {}
    schemas: dict[str, Any] = {}
    for info in sorted(kinds, key=lambda info: info.plural):
        gvk = {"group": info.group, "version": version, "kind": info.kind}
        schema = _crd_schema(store, info, version)
        if schema is not None:
            schemas[OBJECT_META] = OBJECT_META_SCHEMA
            schemas[schema_name(info.group, version, info.kind)] = {**schema, "x-kubernetes-group-version-kind": [gvk]}
        scope = f"{prefix}/namespaces/{{namespace}}/{info.plural}" if info.namespaced else f"{prefix}/{info.plural}"
        paths[scope] = {
            "get": _operation(f"list{info.kind}", "list", gvk, _LIST_PARAMETERS),
            "post": _operation(f"create{info.kind}", "post", gvk, _WRITE_PARAMETERS),
            "delete": _operation(f"deletecollection{info.kind}", "deletecollection", gvk, [_DRY_RUN]),
        }
        item_paths = [f"{scope}/{{name}}"] + ([f"{scope}/{{name}}/status"] if info.has_status(version) else [])
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
        "components": {"schemas": schemas},
    }


def schema_name(group: str, version: str, kind: str) -> str:
    """The component name of a CRD schema, its group reversed: ``io.x-k8s.cluster.v1beta1.Cluster``."""
    return ".".join([*reversed(group.split(".")), version, kind])


def _crd_schema(store: MemoryStore, info: KindInfo, version: str) -> dict[str, Any] | None:
    """The ``openAPIV3Schema`` of the stored CRD serving ``info`` in ``version``, metadata pointing at ObjectMeta."""
    crd = stored_crd(store, info)
    if crd is None:
        return None
    for served in dig(crd, "spec", "versions") or []:
        schema = dig(served, "schema", "openAPIV3Schema") if isinstance(served, dict) else None
        if served.get("name") == version and isinstance(schema, dict):
            properties = dict(schema.get("properties") or {})
            properties["metadata"] = {"$ref": f"#/components/schemas/{OBJECT_META}"}
            return {**schema, "properties": properties}
    return None


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
    for group, versions in served_groups(store).items():
        for version, kinds in versions.items():
            served = _document(store, group, version, kinds)
            digest = hashlib.sha512(json.dumps(served, sort_keys=True).encode()).hexdigest()[:32].upper()
            key = group_version_path(group, version)
            paths[key] = {"serverRelativeURL": f"/openapi/v3/{key}?hash={digest}"}
    return {"paths": paths}
