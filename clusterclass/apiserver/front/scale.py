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

from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, dig, is_int, set_path
from clusterclass.apiserver.crd.nodes import Scale
from clusterclass.apiserver.front.responses import not_found
from clusterclass.apiserver.store import KindInfo
from clusterclass.kube.errors import BadRequest

SCALE_API_VERSION = "autoscaling/v1"


def scale_paths(info: KindInfo, version: str) -> Scale:
    """The version's Scale description (``spec_replicas_path``...); NotFound when it has none."""
    served = info.schema.versions.get(version) if info.schema is not None else None
    if served is None or served.scale is None:
        raise not_found()
    return served.scale


def _path(path: str) -> tuple[str, ...]:
    """The fields of a scale path: the CRD's validation made it a simple ``.a.b`` path."""
    return tuple(part for part in path.strip().lstrip(".").split(".") if part)


def as_scale(obj: Obj, paths: Scale) -> Obj:
    """``obj`` as an autoscaling/v1 Scale."""
    meta = obj.get("metadata") or {}
    metadata = {
        key: meta[key] for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp") if key in meta
    }
    spec_replicas = dig(obj, *_path(paths.spec_replicas_path))
    status: dict[str, Any] = {"replicas": _replicas(dig(obj, *_path(paths.status_replicas_path)))}
    if paths.label_selector_path:
        selector = dig(obj, *_path(paths.label_selector_path))
        if isinstance(selector, str) and selector:
            status["selector"] = selector
    return {
        "kind": "Scale",
        "apiVersion": SCALE_API_VERSION,
        "metadata": metadata,
        "spec": {"replicas": _replicas(spec_replicas)} if spec_replicas is not None else {},
        "status": status,
    }


def _replicas(value: Any) -> int:
    return int(value) if is_int(value) else 0


def scaled(obj: Obj, scale: Any, paths: Scale) -> Obj:
    """A copy of ``obj`` with the spec replicas of ``scale``; the resourceVersion ``scale`` asks for, if any."""
    if not isinstance(scale, dict) or scale.get("kind", "Scale") != "Scale":
        raise BadRequest.new("the body must be an autoscaling/v1 Scale")
    replicas = dig(scale, "spec", "replicas")
    if replicas is None:
        replicas = 0
    if not is_int(replicas) or replicas < 0:
        raise BadRequest.new(f"spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0")
    updated: Obj = json_copy(obj)
    set_path(updated, _path(paths.spec_replicas_path), replicas)
    wanted = dig(scale, "metadata", "resourceVersion")
    if wanted:
        updated["metadata"]["resourceVersion"] = wanted
    return updated
