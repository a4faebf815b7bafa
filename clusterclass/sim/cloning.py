"""Objects cloned from templates: how a MachineSet or KCP makes a Machine's bootstrap config and infrastructure.

Cluster API's ``external.CreateFromTemplate``: the clone of a ``<Kind>Template`` is a ``<Kind>`` in
the same API version, named ``<template>-<random suffix>``, whose spec is the template's
``spec.template.spec``, whose labels and annotations are the template's ``spec.template.metadata``
ones plus the caller's (and the ``cluster.x-k8s.io/cluster-name`` label), annotated with the
template it came from (``cluster.x-k8s.io/cloned-from-name`` and ``cloned-from-groupkind``), and owned
(not controlled) by the object that asked for it; the Machine that uses it adopts it later.
"""

from __future__ import annotations

from collections.abc import Mapping

from clusterclass.api import constants as c
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, dig, group_of, name_of, namespace_of

TEMPLATE_SUFFIX = "Template"


def group_kind(obj: Obj) -> str:
    """``Kind.group`` as Cluster API writes it in ``cloned-from-groupkind``."""
    return f"{obj['kind']}.{group_of(str(obj['apiVersion']))}"


def clone_from_template(
    template: Obj,
    *,
    name: str,
    cluster_name: str,
    labels: Mapping[str, str],
    annotations: Mapping[str, str],
    owner: Obj | None,
) -> Obj:
    """The object to create from ``template`` (module doc); ``owner`` is an ownerReference."""
    inner = dig(template, "spec", "template") or {}
    metadata = inner.get("metadata") or {}
    kind = str(template["kind"]).removesuffix(TEMPLATE_SUFFIX)
    clone: Obj = {
        "apiVersion": template["apiVersion"],
        "kind": kind,
        "metadata": {
            "name": name,
            "namespace": namespace_of(template),
            "labels": {**(metadata.get("labels") or {}), **labels, c.LABEL_CLUSTER_NAME: cluster_name},
            "annotations": {
                **(metadata.get("annotations") or {}),
                **annotations,
                c.ANNOTATION_CLONED_FROM_NAME: name_of(template),
                c.ANNOTATION_CLONED_FROM_GROUPKIND: group_kind(template),
            },
        },
        "spec": json_copy(inner.get("spec") or {}),
    }
    if owner is not None:
        clone["metadata"]["ownerReferences"] = [owner]
    return clone
