"""clusterclass's extensions of upstream Cluster API's CRDs, as JSON patches on the vendored files.

The bundled CRDs are upstream's v1.14.0 files unchanged (:mod:`clusterclass.crds`). Where clusterclass goes beyond
upstream's API, the difference is written here once, as JSON patch (RFC 6902) operations on a CRD, and used twice:
the embedded management cluster applies them when it installs the bundled CRDs, and ``config/crd`` carries them as
kustomize patches (:mod:`clusterclass.run.manifests`), so ``kubectl apply -k config/crd`` installs the same schemas.
A management cluster whose CRDs come from upstream (``clusterctl init``) prunes the added fields: there the
extension is off, and everything else works as upstream's API does.

One extension today: **MachineHealthChecks for MachinePool workers** (Cluster API #11392/#13065). MachinePool
classes (``ClusterClass.spec.workers.machinePools[]``) and MachinePool topologies
(``Cluster.spec.topology.workers.machinePools[]``) get the MachineDeployment's health-check field —
``machineHealthCheck`` in v1beta1, ``healthCheck`` in v1beta2 — with the MachineDeployment's schema, copied from the
same CRD version so the two never drift. A MachinePool has no rollout strategy, so v1beta2's
``healthCheck.remediation.maxInFlight`` (kept in a MachineDeployment's ``strategy.remediation`` in v1beta1) is left
out: a pool's remediation is not rate-limited by the check.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable
from typing import Any, Final

import jsonpatch

from clusterclass.api.objects import Obj

#: the CRDs extended, and where the worker lists sit in their ``spec`` (a ClusterClass's classes, a Cluster's
#: topologies)
_WORKERS_AT: Final = {
    "clusterclasses.cluster.x-k8s.io": ("spec", "workers"),
    "clusters.cluster.x-k8s.io": ("spec", "topology", "workers"),
}
#: the health-check field of a worker, by CRD version
HEALTH_CHECK_FIELD: Final = {"v1beta1": "machineHealthCheck", "v1beta2": "healthCheck"}


def _schema_path(fields: Iterable[str]) -> list[str]:
    """The path of a nested field's schema under a version's ``openAPIV3Schema``."""
    path: list[str] = []
    for field in fields:
        path += ["properties", field]
    return path


def _items_path(workers_at: tuple[str, ...], list_key: str) -> list[str]:
    return [*_schema_path(workers_at), "properties", list_key, "items"]


def _get(node: Any, path: list[str]) -> Any:
    for key in path:
        if not isinstance(node, dict):
            return None
        node = node.get(key)
    return node


def _pointer(parts: Iterable[str | int]) -> str:
    return "/" + "/".join(str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _pool_health_check_schema(deployment_schema: Obj, version: str) -> Obj:
    schema = copy.deepcopy(deployment_schema)
    if version == "v1beta2":
        remediation = _get(schema, ["properties", "remediation"])
        if isinstance(remediation, dict):
            remediation.get("properties", {}).pop("maxInFlight", None)
    description = str(schema.get("description") or "").strip()
    schema["description"] = (
        f"{description}\n\nclusterclass extension (not in upstream Cluster API's API): the MachineHealthCheck of the "
        "MachinePool's Machines, with the fields of a MachineDeployment's."
    ).strip()
    return schema


def extension_operations(crd: Obj) -> list[Obj]:
    """The JSON patch operations that extend ``crd`` (none for a CRD clusterclass does not extend).

    Computed from the CRD itself (the MachineDeployment's schema of each version), so the result is the same for
    the upstream file and for an already extended CRD.
    """
    workers_at = _WORKERS_AT.get(str(crd.get("metadata", {}).get("name")))
    if workers_at is None:
        return []
    operations: list[Obj] = []
    for index, version in enumerate(crd.get("spec", {}).get("versions") or []):
        field = HEALTH_CHECK_FIELD.get(str(version.get("name")))
        schema = version.get("schema", {}).get("openAPIV3Schema")
        if field is None or not isinstance(schema, dict):
            continue
        deployment_check = _get(schema, [*_items_path(workers_at, "machineDeployments"), "properties", field])
        pool_properties = _get(schema, [*_items_path(workers_at, "machinePools"), "properties"])
        if not isinstance(deployment_check, dict) or not isinstance(pool_properties, dict):
            raise ValueError(f"{crd['metadata']['name']} {version.get('name')}: no worker schema to extend")
        # the test guards the index: applied to another release's CRD (other versions), the patch fails instead
        # of adding the field to the wrong version
        operations.append(
            {"op": "test", "path": _pointer(["spec", "versions", index, "name"]), "value": version["name"]}
        )
        at: list[str | int] = ["spec", "versions", index, "schema", "openAPIV3Schema"]
        at += _items_path(workers_at, "machinePools")
        operations.append(
            {
                "op": "add",
                "path": _pointer([*at, "properties", field]),
                "value": _pool_health_check_schema(deployment_check, str(version["name"])),
            }
        )
    return operations


def with_extensions(crd: Obj) -> Obj:
    """``crd`` with :func:`extension_operations` applied (a copy when anything changes)."""
    operations = extension_operations(crd)
    if not operations:
        return crd
    extended: Obj = jsonpatch.apply_patch(crd, operations)
    return extended
