"""Which items a patch definition targets (spec §5.4).

The template's apiVersion and kind must equal the selector's exactly; then at least one of the
``matchResources`` fields must match the item's holder: ``infrastructureCluster`` (the Cluster's
infrastructureRef), ``controlPlane`` (the Cluster's controlPlaneRef or the control plane's machine
template), ``machineDeploymentClass.names`` / ``machinePoolClass.names`` (the bootstrap or
infrastructure template of a worker whose class matches a name: exact, ``*``, ``prefix*`` or
``*suffix``).
"""

from __future__ import annotations

from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj
from clusterclass.topology.patches.request import (
    BOOTSTRAP_FIELD,
    CP_MACHINE_TEMPLATE_FIELD,
    INFRASTRUCTURE_FIELD,
    Item,
)


def class_name_matches(class_name: str, names: Any) -> bool:
    """Whether ``class_name`` matches one of ``names`` (exact, ``*``, ``prefix*``, ``*suffix``)."""
    if not isinstance(names, list):
        return False
    for name in names:
        if not isinstance(name, str) or not name:
            continue
        if name == "*" or name == class_name:
            return True
        if name.startswith("*") and class_name.endswith(name[1:]):
            return True
        if name.endswith("*") and class_name.startswith(name[:-1]):
            return True
    return False


def matches(selector: Obj, item: Item) -> bool:
    if item.template.get("apiVersion") != selector.get("apiVersion") or item.template.get("kind") != selector.get(
        "kind"
    ):
        return False
    match = selector.get("matchResources")
    if not isinstance(match, dict):
        return False
    if match.get("infrastructureCluster") is True and (item.holder_kind, item.field_path) == (
        c.KIND_CLUSTER,
        "spec.infrastructureRef",
    ):
        return True
    if match.get("controlPlane") is True and (
        (item.holder_kind, item.field_path) == (c.KIND_CLUSTER, "spec.controlPlaneRef")
        or item.field_path == CP_MACHINE_TEMPLATE_FIELD
    ):
        return True
    if item.worker is None or item.field_path not in (BOOTSTRAP_FIELD, INFRASTRUCTURE_FIELD):
        return False
    for key, kind in (("machineDeploymentClass", c.KIND_MACHINE_DEPLOYMENT), ("machinePoolClass", c.KIND_MACHINE_POOL)):
        worker_match = match.get(key)
        if (
            isinstance(worker_match, dict)
            and item.holder_kind == kind
            and class_name_matches(item.worker.topology.class_name, worker_match.get("names"))
        ):
            return True
    return False
