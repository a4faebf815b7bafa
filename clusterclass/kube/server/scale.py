"""The ``scale`` subresource of custom resources: ``autoscaling/v1`` Scale, what ``kubectl scale`` uses.

A CRD version with ``subresources.scale`` names where its replica counts live
(``specReplicasPath: .spec.replicas``, ``statusReplicasPath``, ``labelSelectorPath``); the Cluster API
CRDs declare one for MachineDeployment, MachineSet, MachinePool and KubeadmControlPlane. The
subresource shows the object as a Scale and changes only the spec replicas of the object:

- GET: ``{"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": {name, namespace, uid,
  resourceVersion, creationTimestamp}, "spec": {"replicas"}, "status": {"replicas", "selector"}}``;
- PUT: a Scale whose ``spec.replicas`` is written to the object (its ``metadata.resourceVersion``,
  when given, must be the object's: a Conflict otherwise);
- PATCH: a merge or JSON patch of the Scale, then as PUT.
"""

from __future__ import annotations

from typing import Any

from clusterclass.api.objects import Obj, dig, is_int
from clusterclass.kube.errors import BadRequest
from clusterclass.kube.memory import KindInfo
from clusterclass.kube.mergepatch import merge_patch
from clusterclass.kube.server import jsonpath
from clusterclass.kube.server.responses import not_found

SCALE_API_VERSION = "autoscaling/v1"


def scale_paths(info: KindInfo, version: str) -> Any:
    """The version's Scale description (``spec_replicas_path``...); NotFound when it has none."""
    schema = getattr(info, "schema", None)
    served = schema.versions.get(version) if schema is not None else None
    scale = getattr(served, "scale", None)
    if scale is None:
        raise not_found()
    return scale


def _path(path: str) -> list[str]:
    return [part for part in path.strip().lstrip(".").split(".") if part]


def as_scale(obj: Obj, paths: Any) -> Obj:
    """``obj`` as an autoscaling/v1 Scale."""
    meta = obj.get("metadata") or {}
    metadata = {
        key: meta[key] for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if key in meta
    }
    spec_replicas = dig(obj, *_path(paths.spec_replicas_path))
    status: dict[str, Any] = {"replicas": _replicas(dig(obj, *_path(paths.status_replicas_path)))}
    if paths.label_selector_path:
        found = jsonpath.find(paths.label_selector_path, obj)
        if found and isinstance(found[0], str) and found[0]:
            status["selector"] = found[0]
    return {
        "kind": "Scale",
        "apiVersion": SCALE_API_VERSION,
        "metadata": metadata,
        "spec": {"replicas": _replicas(spec_replicas)} if spec_replicas is not None else {},
        "status": status,
    }


def _replicas(value: Any) -> int:
    return int(value) if is_int(value) else 0


def scaled(obj: Obj, scale: Any, paths: Any) -> Obj:
    """A copy of ``obj`` with the spec replicas of ``scale``; the resourceVersion ``scale`` asks for, if any."""
    if not isinstance(scale, dict) or scale.get("kind", "Scale") != "Scale":
        raise BadRequest.new("the body must be an autoscaling/v1 Scale")
    replicas = dig(scale, "spec", "replicas")
    if replicas is None:
        replicas = 0
    if not is_int(replicas) or replicas < 0:
        raise BadRequest.new(f"spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0")
    updated = merge_patch(obj, {})
    parts = _path(paths.spec_replicas_path)
    target = updated
    for part in parts[:-1]:
        child = target.get(part)
        if not isinstance(child, dict):
            child = target[part] = {}
        target = child
    target[parts[-1]] = replicas
    wanted = dig(scale, "metadata", "resourceVersion")
    if wanted:
        updated["metadata"]["resourceVersion"] = wanted
    return updated  # type: ignore[no-any-return]
