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
    """The key of the object ``ref`` points at; an empty namespace means ``default_namespace``. A contract
    reference (``{apiGroup, kind, name}``, no apiVersion) names its group directly."""
    api_version = ref.get("apiVersion") or (f"{ref['apiGroup']}/" if ref.get("apiGroup") else "")
    return key_of(
        {
            "apiVersion": api_version,
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
        if not ref.get("apiVersion") and "apiGroup" in ref:
            groups.append(str(ref.get("apiGroup") or ""))  # a contract reference (v1beta2): group, kind, name
            continue
        try:
            groups.append(split_api_version(str(ref.get("apiVersion") or ""))[0])
        except ValueError as err:
            raise TopologyError(
                f"invalid apiVersion in reference to {ref.get('kind')} {ref.get('name')}: {err}"
            ) from err
    return groups[0] == groups[1] and a.get("kind") == b.get("kind")


def align_ref(ref: Mapping[str, Any], template: Mapping[str, Any]) -> Obj:
    """``ref`` read at the template's apiVersion when it names the template's group and kind, or the kind the
    template stamps out (a control plane, an InfrastructureCluster, a MachinePool's bootstrap config), so that
    current and desired objects are compared in one version; else unchanged (a contract reference
    ``{apiGroup, kind, name}`` then keeps no version: the reader resolves it)."""
    aligned = dict(ref)
    stamped = {**template, "kind": _stamped_kind(template)}
    if same_group_kind(ref, template) or same_group_kind(ref, stamped):
        aligned["apiVersion"] = template.get("apiVersion")
        aligned.pop("apiGroup", None)
    return aligned


def _stamped_kind(template: Mapping[str, Any]) -> str:
    kind = str(template.get("kind") or "")
    return kind[: -len("Template")] if kind.endswith("Template") else kind


def desired_ref(current: Mapping[str, Any] | None, desired_obj: Mapping[str, Any]) -> Obj:
    """The ref to write for ``desired_obj``, keeping ``current``'s apiVersion if group+kind match."""
    ref = ref_to(desired_obj)
    if current and current.get("apiVersion") and same_group_kind(current, ref):
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
