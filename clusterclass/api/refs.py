"""Object references (``corev1.ObjectReference``) and apiVersion alignment (spec §2.7).

A ref has ``apiVersion``, ``kind``, ``namespace`` and ``name``. Two rules keep refs stable while
providers bump their API versions:

- on read, a current ref whose group and kind match the class template is read at the template's
  apiVersion, so current and desired are compared in one version (:func:`align_ref`);
- on write, a desired ref keeps the current ref's apiVersion when group and kind are unchanged, so a
  version bump made by another controller is not reverted (:func:`desired_ref`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterclass.api.objects import Obj, key_of, name_of, namespace_of, split_api_version
from clusterclass.errors import ObjectKey, TopologyError


def ref_to(obj: Mapping[str, Any]) -> Obj:
    """A reference to ``obj``."""
    return {
        "apiVersion": obj.get("apiVersion", ""),
        "kind": obj.get("kind", ""),
        "namespace": namespace_of(obj),
        "name": name_of(obj),
    }


def ref_key(ref: Mapping[str, Any], default_namespace: str = "") -> ObjectKey:
    """The key of the object ``ref`` points at; an empty namespace means ``default_namespace``."""
    return key_of(
        {
            "apiVersion": ref.get("apiVersion", ""),
            "kind": ref.get("kind", ""),
            "metadata": {"name": ref.get("name", ""), "namespace": ref.get("namespace") or default_namespace},
        }
    )


def same_group_kind(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two refs or objects have the same API group and kind.

    Raises TopologyError when either apiVersion cannot be parsed, as upstream fails the reconcile.
    """
    groups = []
    for ref in (a, b):
        try:
            groups.append(split_api_version(str(ref.get("apiVersion") or ""))[0])
        except ValueError as err:
            raise TopologyError(
                f"invalid apiVersion in reference to {ref.get('kind')} {ref.get('name')}: {err}"
            ) from err
    return groups[0] == groups[1] and a.get("kind") == b.get("kind")


def align_ref(ref: Mapping[str, Any], template: Mapping[str, Any]) -> Obj:
    """``ref`` read at the template's apiVersion when group and kind agree, else unchanged."""
    aligned = dict(ref)
    if same_group_kind(ref, template):
        aligned["apiVersion"] = template.get("apiVersion")
    return aligned


def desired_ref(current: Mapping[str, Any] | None, desired_obj: Mapping[str, Any]) -> Obj:
    """The ref to write for ``desired_obj``, keeping ``current``'s apiVersion if group+kind match."""
    ref = ref_to(desired_obj)
    if current and same_group_kind(current, ref):
        ref["apiVersion"] = current.get("apiVersion")
    return ref


def owner_reference_to(obj: Mapping[str, Any]) -> Obj:
    """A plain (non-controller) ownerReference, as the topology controller sets to its Cluster."""
    return {
        "apiVersion": obj.get("apiVersion", ""),
        "kind": obj.get("kind", ""),
        "name": name_of(obj),
        "uid": str((obj.get("metadata") or {}).get("uid") or ""),
    }
