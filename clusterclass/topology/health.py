"""MachineHealthChecks for the control plane and the workers.

Upstream makes them for the control plane and MachineDeployments; clusterclass also for MachinePools whose class or
topology defines one (an extension of upstream's API, :mod:`clusterclass.apiserver.crd.extensions`): the check
selects the pool's Machines by the topology's pool-name label, as a MachineDeployment's selects its Machines.

Whether a health check exists follows upstream: the topology's ``machineHealthCheck`` wins when
it sets any check field, otherwise the class's; ``enable`` decides when set, and a check defined
anywhere is enabled by default. The desired MachineHealthCheck is defaulted the way its admission
webhook would — upstream v1.14's: ``nodeStartupTimeout: 10m0s`` (v1beta2's ``nodeStartupTimeoutSeconds: 600``), the
cluster-name label, every Duration in Go's form — so the stored object never differs from the desired one only
because of defaulting. v1.14's webhook no longer defaults ``maxUnhealthy`` (``remediation.triggerIf`` in v1beta2) to
100%, so a check that sets none has none, as upstream v1.14 writes it. Upstream v1.6 defaulted its desired check
with its own webhook, ``maxUnhealthy: 100%`` included, so its ``capi-topology`` apply owns that field: where a check is
written in v1beta1 (a management cluster of v1.6's generation), :func:`with_v1beta1_defaults` adds it to the intent,
or the first apply after upstream v1.6's controller would take the field over (a write with no change to the spec).
"""

from __future__ import annotations

import copy
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.durations import DURATION_PATHS, normalize_durations
from clusterclass.api.objects import Obj

CHECK_FIELDS = ("unhealthyConditions", "maxUnhealthy", "unhealthyRange", "nodeStartupTimeout", "remediationTemplate")
DEFAULT_NODE_STARTUP_TIMEOUT = "10m0s"
#: upstream v1.6's webhook default (v1beta1 only: v1.14 dropped it with v1beta2's ``remediation.triggerIf``)
V1BETA1_DEFAULT_MAX_UNHEALTHY = "100%"


def is_zero(check: Any) -> bool:
    """Whether a health check class sets no check field at all (upstream's ``IsZero``)."""
    return not isinstance(check, dict) or all(check.get(f) in (None, []) for f in CHECK_FIELDS)


def _has_checks(check: Obj | None) -> bool:
    return check is not None and any(check.get(f) is not None for f in CHECK_FIELDS)


def effective_check(class_check: Obj | None, topology_check: Obj | None) -> Obj | None:
    """The health check class in force, or None when no MachineHealthCheck should exist."""
    if class_check is None and not _has_checks(topology_check):
        return None
    enable = (topology_check or {}).get("enable")
    if enable is False:
        return None
    if _has_checks(topology_check):
        assert topology_check is not None
        return {f: topology_check[f] for f in CHECK_FIELDS if topology_check.get(f) is not None}
    return class_check


def machine_health_check(
    *, name: str, namespace: str, cluster_name: str, owner: Obj, selector: dict[str, str], check: Obj
) -> Obj:
    spec: Obj = {"clusterName": cluster_name, "selector": {"matchLabels": dict(selector)}}
    for f in CHECK_FIELDS:
        if check.get(f) is not None:
            spec[f] = copy.deepcopy(check[f])
    spec.setdefault("nodeStartupTimeout", DEFAULT_NODE_STARTUP_TIMEOUT)
    remediation = spec.get("remediationTemplate")
    if isinstance(remediation, dict) and not remediation.get("namespace"):
        remediation["namespace"] = namespace
    check_object = {
        "apiVersion": c.CLUSTER_API_VERSION,
        "kind": c.KIND_MACHINE_HEALTH_CHECK,
        "metadata": {
            "name": name,
            "namespace": namespace,
            "labels": {c.LABEL_TOPOLOGY_OWNED: "", c.LABEL_CLUSTER_NAME: cluster_name},
            "ownerReferences": [owner],
        },
        "spec": spec,
    }
    normalize_durations(check_object, DURATION_PATHS[c.KIND_MACHINE_HEALTH_CHECK])
    return check_object


def with_v1beta1_defaults(check_object: Obj) -> Obj:
    """``check_object`` (v1beta1) as upstream v1.6's webhook defaults it beyond v1.14's: ``maxUnhealthy: 100%`` when
    unset (module doc). A copy when anything is added."""
    spec = check_object.get("spec")
    if not isinstance(spec, dict) or spec.get("maxUnhealthy") is not None:
        return check_object
    return {**check_object, "spec": {**spec, "maxUnhealthy": V1BETA1_DEFAULT_MAX_UNHEALTHY}}
