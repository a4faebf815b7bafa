"""Cloning ClusterClass templates into the objects and templates a Cluster owns (spec §2.6).

Two ways, because upstream treats them differently:

- :func:`template_to_object` stamps an *object* out of a template's ``spec.template`` (the
  InfrastructureCluster, the ControlPlane, and a MachinePool's bootstrap config and infrastructure
  machine pool). The kind loses its ``Template`` suffix.
- :func:`template_to_template` copies a whole *template* (a MachineDeployment's bootstrap and
  infrastructure templates, the control plane's infrastructure machine template), dropping
  ``kubectl.kubernetes.io/last-applied-configuration``.

Both record where the clone came from (``cluster.x-k8s.io/cloned-from-name`` and ``-groupkind``)
and enforce the topology labels. The result holds only the fields the topology owns
(apiVersion, kind, name, namespace, labels, annotations, ownerReferences, spec): server-set
metadata never enters the desired state. Names are decided by the caller (see ``names``).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api import contract
from clusterclass.api.objects import Obj, dig, group_of, name_of
from clusterclass.topology.metadata import topology_labels


def cloned_from_annotations(template: Mapping[str, Any]) -> dict[str, str]:
    group = group_of(str(template.get("apiVersion") or ""))
    group_kind = f"{template.get('kind')}.{group}" if group else str(template.get("kind"))
    return {c.ANNOTATION_CLONED_FROM_NAME: name_of(template), c.ANNOTATION_CLONED_FROM_GROUPKIND: group_kind}


def _build(
    *,
    api_version: str,
    kind: str,
    name: str,
    namespace: str,
    labels: dict[str, str],
    annotations: dict[str, str],
    owner_references: list[Obj] | None,
    spec: Any,
) -> Obj:
    metadata: Obj = {"name": name, "namespace": namespace, "labels": labels}
    if annotations:
        metadata["annotations"] = annotations
    if owner_references:
        metadata["ownerReferences"] = owner_references
    obj: Obj = {"apiVersion": api_version, "kind": kind, "metadata": metadata}
    if spec is not None:
        obj["spec"] = spec
    return obj


def template_to_object(
    template: Obj,
    *,
    cluster_name: str,
    namespace: str,
    name: str,
    labels: Mapping[str, str] | None = None,
    annotations: Mapping[str, str] | None = None,
    owner_references: list[Obj] | None = None,
) -> Obj:
    """An object cloned from ``template.spec.template``.

    Labels: the template's ``spec.template.metadata.labels``, then ``labels``, then the topology
    labels. Annotations: the template's, then ``annotations``, then the cloned-from pair.
    """
    source = dig(template, *contract.TEMPLATE)
    source = source if isinstance(source, dict) else {}
    merged_labels = dict(dig(source, "metadata", "labels") or {})
    merged_labels.update(labels or {})
    merged_annotations = dict(dig(source, "metadata", "annotations") or {})
    merged_annotations.update(annotations or {})
    merged_annotations.update(cloned_from_annotations(template))
    return _build(
        api_version=str(source.get("apiVersion") or template.get("apiVersion") or ""),
        kind=str(source.get("kind") or contract.object_kind_for_template(str(template.get("kind") or ""))),
        name=name,
        namespace=namespace,
        labels=topology_labels(cluster_name, merged_labels),
        annotations=merged_annotations,
        owner_references=owner_references,
        spec=copy.deepcopy(source.get("spec")),
    )


def template_to_template(
    template: Obj,
    *,
    cluster_name: str,
    namespace: str,
    name: str,
    labels: Mapping[str, str] | None = None,
    owner_references: list[Obj] | None = None,
) -> Obj:
    """A copy of the whole template, relabelled and renamed for one Cluster."""
    merged_labels = dict(dig(template, "metadata", "labels") or {})
    merged_labels.update(labels or {})
    merged_annotations = dict(dig(template, "metadata", "annotations") or {})
    merged_annotations.pop(c.ANNOTATION_LAST_APPLIED, None)
    merged_annotations.update(cloned_from_annotations(template))
    return _build(
        api_version=str(template.get("apiVersion") or ""),
        kind=str(template.get("kind") or ""),
        name=name,
        namespace=namespace,
        labels=topology_labels(cluster_name, merged_labels),
        annotations=merged_annotations,
        owner_references=owner_references,
        spec=copy.deepcopy(template.get("spec")),
    )
