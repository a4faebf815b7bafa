"""Builders for the ClusterClass and patch validation tests: a valid ClusterClass to start from and
small helpers to change it, an in-memory reader of Clusters, and assertions on field errors.

The starting ClusterClass mirrors upstream's webhook test fixtures: generic templates in namespace
``default``, one MachineDeployment class and one MachinePool class (both named ``aa``), a control
plane with a machine infrastructure template.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from typing import Any

from clusterclass.fielderrors import ErrorType, FieldError
from clusterclass.topology.check import Gates, Result
from clusterclass.topology.check.clusterclass import default_cluster_class, validate_cluster_class
from clusterclass.topology.reader import ObjectIndex

Obj = dict[str, Any]

NAMESPACE = "default"
CLUSTER_V1 = "cluster.x-k8s.io/v1beta1"
INFRA_V1 = "infrastructure.cluster.x-k8s.io/v1beta1"
BOOTSTRAP_V1 = "bootstrap.cluster.x-k8s.io/v1beta1"
CONTROLPLANE_V1 = "controlplane.cluster.x-k8s.io/v1beta1"


def ref(kind: str, name: str, api_version: str = INFRA_V1, namespace: str | None = NAMESPACE) -> Obj:
    built: Obj = {"apiVersion": api_version, "kind": kind, "name": name}
    if namespace is not None:
        built["namespace"] = namespace
    return built


def template(kind: str, name: str, api_version: str = INFRA_V1, namespace: str | None = NAMESPACE) -> Obj:
    """A ``LocalObjectTemplate``: ``{ref: ...}``."""
    return {"ref": ref(kind, name, api_version, namespace)}


def worker_class(
    name: str,
    *,
    bootstrap: Obj | None = None,
    infrastructure: Obj | None = None,
    pool: bool = False,
    **fields: Any,
) -> Obj:
    """A MachineDeployment class (or a MachinePool class with ``pool=True``) with generic templates."""
    infra_kind = "GenericInfrastructureMachinePoolTemplate" if pool else "GenericInfrastructureMachineTemplate"
    built: Obj = {
        "class": name,
        "template": {
            "bootstrap": bootstrap or template("GenericBootstrapConfigTemplate", "bootstrap", BOOTSTRAP_V1),
            "infrastructure": infrastructure or template(infra_kind, "infra"),
        },
    }
    built.update(copy.deepcopy(fields))
    return built


def md_class(name: str = "aa", **kwargs: Any) -> Obj:
    return worker_class(name, **kwargs)


def mp_class(name: str = "aa", **kwargs: Any) -> Obj:
    return worker_class(name, pool=True, **kwargs)


def cluster_class(
    name: str = "class1",
    *,
    namespace: str = NAMESPACE,
    machine_deployments: list[Obj] | None = None,
    machine_pools: list[Obj] | None = None,
    machine_infrastructure: bool = True,
    **spec_fields: Any,
) -> Obj:
    """A valid ClusterClass; ``machine_deployments`` / ``machine_pools`` default to one class ``aa``."""
    control_plane: Obj = template("GenericControlPlaneTemplate", "cp", CONTROLPLANE_V1, namespace)
    if machine_infrastructure:
        control_plane["machineInfrastructure"] = template("GenericInfrastructureMachineTemplate", "cp-infra")
        control_plane["machineInfrastructure"]["ref"]["namespace"] = namespace
    spec: Obj = {
        "infrastructure": template("GenericInfrastructureClusterTemplate", "infra-cluster", INFRA_V1, namespace),
        "controlPlane": control_plane,
        "workers": {
            "machineDeployments": [md_class()] if machine_deployments is None else machine_deployments,
            "machinePools": [mp_class()] if machine_pools is None else machine_pools,
        },
    }
    for workers in spec["workers"].values():
        for worker in workers:
            for part in ("bootstrap", "infrastructure"):
                part_ref = worker.get("template", {}).get(part, {}).get("ref")
                if isinstance(part_ref, dict) and part_ref.get("namespace") == NAMESPACE:
                    part_ref["namespace"] = namespace
    spec.update(copy.deepcopy(spec_fields))
    return {
        "apiVersion": CLUSTER_V1,
        "kind": "ClusterClass",
        "metadata": {"name": name, "namespace": namespace},
        "spec": spec,
    }


def cluster(
    name: str,
    class_name: str = "class1",
    *,
    namespace: str = NAMESPACE,
    machine_deployments: list[Obj] | None = None,
    machine_pools: list[Obj] | None = None,
    control_plane: Obj | None = None,
) -> Obj:
    """A Cluster using ``class_name``; worker lists are ``[{name, class, ...}]`` entries."""
    topology: Obj = {"class": class_name, "version": "v1.28.0"}
    workers: Obj = {}
    if machine_deployments is not None:
        workers["machineDeployments"] = machine_deployments
    if machine_pools is not None:
        workers["machinePools"] = machine_pools
    if workers:
        topology["workers"] = workers
    if control_plane is not None:
        topology["controlPlane"] = control_plane
    return {
        "apiVersion": CLUSTER_V1,
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"topology": topology},
    }


def worker_topology(name: str, class_name: str, **fields: Any) -> Obj:
    return {"name": name, "class": class_name, **fields}


def reader(*objects: Obj) -> ObjectIndex:
    return ObjectIndex(objects)


class FailingReader:
    """A reader whose list fails, like an API server that cannot be reached."""

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        raise RuntimeError("connection refused")

    def list(self, api_version: str, kind: str, namespace: str, labels: Mapping[str, str | None]) -> list[Obj]:
        raise RuntimeError("connection refused")


def validate(cc: Obj, old: Obj | None = None, *, clusters: Iterable[Obj] = (), gates: Gates | None = None) -> Result:
    """Default then validate ``cc`` (and ``old``) as the webhooks do, against ``clusters``."""
    defaulted_old = default_cluster_class(old) if old is not None else None
    return validate_cluster_class(
        default_cluster_class(cc), defaulted_old, reader=reader(*clusters), gates=gates or Gates()
    )


def errors_of(result: Result | list[FieldError]) -> list[tuple[str, ErrorType, str]]:
    """``(field, type, detail)`` of every error, in order."""
    errors = result.errors if isinstance(result, Result) else result
    return [(e.field, e.type, e.detail) for e in errors]


def fields_of(result: Result | list[FieldError]) -> list[str]:
    errors = result.errors if isinstance(result, Result) else result
    return [e.field for e in errors]
