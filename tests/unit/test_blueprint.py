"""The blueprint: a ClusterClass with the templates it references (spec §2.2, §10.1)."""

from __future__ import annotations

import builders as b
import pytest
from unit_support import blueprint_of

from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WorkerKind
from clusterclass.errors import ObjectKey, TopologyError

CC_KEY = ObjectKey("cluster.x-k8s.io", "ClusterClass", "default", "class1")


def _world(
    *, bootstrap: dict | None = None, infrastructure: dict | None = None, kind: WorkerKind = MACHINE_POOL
) -> tuple[dict, list[dict]]:
    """A ClusterClass with one worker class ``workerclass2`` of ``kind``; templates as given (None = not stored)."""
    infra_cluster = b.docker_cluster_template()
    cp = b.kubeadm_control_plane_template()
    bootstrap_template = b.kubeadm_config_template("worker-bootstrap", spec={"files": []})
    if kind is MACHINE_POOL:
        infra_template = b.docker_machine_pool_template("worker-infra")
    else:
        infra_template = b.docker_machine_template("worker-infra")
    worker = b.worker_class(
        "workerclass2", bootstrap_template, infra_template, labels={"foo": "bar"}, annotations={"a": "b"}
    )
    workers = {"machine_pools": [worker]} if kind is MACHINE_POOL else {"machine_deployments": [worker]}
    cc = b.cluster_class(infrastructure=infra_cluster, control_plane=cp, **workers)
    stored = [cc, infra_cluster, cp]
    stored += [bootstrap_template] if bootstrap is None else ([bootstrap] if bootstrap else [])
    stored += [infra_template] if infrastructure is None else ([infrastructure] if infrastructure else [])
    return b.cluster(), stored


def test_machine_pool_class_carries_class_metadata_and_both_templates() -> None:
    cluster, objects = _world()
    blueprint = blueprint_of(cluster, objects)
    pool = blueprint.machine_pools["workerclass2"]
    assert pool.metadata.labels == {"foo": "bar"}
    assert pool.metadata.annotations == {"a": "b"}
    assert pool.bootstrap_template["kind"] == "KubeadmConfigTemplate"
    assert pool.bootstrap_template["metadata"]["name"] == "worker-bootstrap"
    assert pool.infrastructure_template["kind"] == "DockerMachinePoolTemplate"
    assert pool.infrastructure_template["metadata"]["name"] == "worker-infra"
    assert pool.machine_health_check is None
    assert blueprint.machine_deployments == {}


def test_machine_deployment_class_is_read_the_same_way() -> None:
    cluster, objects = _world(kind=MACHINE_DEPLOYMENT)
    blueprint = blueprint_of(cluster, objects)
    deployment = blueprint.machine_deployments["workerclass2"]
    assert (deployment.metadata.labels, deployment.metadata.annotations) == ({"foo": "bar"}, {"a": "b"})
    assert deployment.infrastructure_template["kind"] == "DockerMachineTemplate"
    assert blueprint.machine_pools == {}


@pytest.mark.parametrize(
    ("kind", "missing", "what", "noun", "list_key"),
    [
        (MACHINE_POOL, "bootstrap", "bootstrap config", "MachinePool", "machinePools"),
        (MACHINE_POOL, "infrastructure", "InfrastructureMachinePoolTemplate", "MachinePool", "machinePools"),
        (MACHINE_DEPLOYMENT, "bootstrap", "bootstrap config", "MachineDeployment", "machineDeployments"),
        (
            MACHINE_DEPLOYMENT,
            "infrastructure",
            "InfrastructureMachineTemplate",
            "MachineDeployment",
            "machineDeployments",
        ),
    ],
)
def test_missing_worker_template_is_an_error_on_the_class_field(
    kind: WorkerKind, missing: str, what: str, noun: str, list_key: str
) -> None:
    cluster, objects = _world(kind=kind, **{missing: {}})
    with pytest.raises(TopologyError) as err:
        blueprint_of(cluster, objects)
    assert err.value.message.startswith(f'failed to get {what} for default/class1, {noun} class "workerclass2": ')
    assert err.value.message.endswith("not found")
    assert err.value.obj == CC_KEY
    assert err.value.field == f"spec.workers.{list_key}[0].template.{missing}.ref"


@pytest.mark.parametrize(
    ("missing_kind", "field"),
    [
        ("DockerClusterTemplate", "spec.infrastructure.ref"),
        ("KubeadmControlPlaneTemplate", "spec.controlPlane.ref"),
    ],
)
def test_missing_cluster_level_template_is_an_error_on_the_class_field(missing_kind: str, field: str) -> None:
    cluster, objects = _world()
    objects = [o for o in objects if o["kind"] != missing_kind]
    with pytest.raises(TopologyError) as err:
        blueprint_of(cluster, objects)
    assert (err.value.obj, err.value.field) == (CC_KEY, field)


def test_a_template_without_spec_template_is_read_as_an_empty_one() -> None:
    # as upstream v1.11+ (its in-memory e2e ClusterClass has empty kubeadm templates on purpose)
    empty = b.obj(b.INFRA_V1, "DockerMachinePoolTemplate", "worker-infra", spec={})
    cluster, objects = _world(infrastructure=empty)
    blueprint_of(cluster, objects)


def test_a_spec_template_that_is_not_an_object_is_an_error_on_the_template() -> None:
    broken = b.obj(b.INFRA_V1, "DockerMachinePoolTemplate", "worker-infra", spec={"template": ["not", "an object"]})
    cluster, objects = _world(infrastructure=broken)
    with pytest.raises(TopologyError) as err:
        blueprint_of(cluster, objects)
    assert "spec.template" in err.value.message
    assert err.value.field == "spec.template"
    infra_group = "infrastructure.cluster.x-k8s.io"
    assert err.value.obj == ObjectKey(infra_group, "DockerMachinePoolTemplate", "default", "worker-infra")


@pytest.mark.parametrize("part", ["apiVersion", "kind", "name"])
def test_incomplete_ref_names_the_missing_part(part: str) -> None:
    cluster, objects = _world()
    del objects[0]["spec"]["workers"]["machinePools"][0]["template"]["bootstrap"]["ref"][part]
    with pytest.raises(TopologyError) as err:
        blueprint_of(cluster, objects)
    assert err.value.field == f"spec.workers.machinePools[0].template.bootstrap.ref.{part}"


def test_ref_without_namespace_is_read_in_the_class_namespace() -> None:
    cluster, objects = _world()
    del objects[0]["spec"]["workers"]["machinePools"][0]["template"]["bootstrap"]["ref"]["namespace"]
    bootstrap = blueprint_of(cluster, objects).machine_pools["workerclass2"].bootstrap_template
    assert bootstrap["metadata"]["name"] == "worker-bootstrap"


@pytest.mark.parametrize(
    ("machine_infrastructure", "expect_check"),
    [
        (True, True),
        (False, False),
    ],
)
def test_control_plane_health_check_only_with_machine_infrastructure(
    machine_infrastructure: bool, expect_check: bool
) -> None:
    infra_cluster, cp = b.docker_cluster_template(), b.kubeadm_control_plane_template()
    machines = b.docker_machine_template("cp-machines")
    cc = b.cluster_class(
        infrastructure=infra_cluster,
        control_plane=cp,
        machine_infrastructure=machines if machine_infrastructure else None,
        control_plane_fields={"machineHealthCheck": {"maxUnhealthy": "33%"}},
    )
    blueprint = blueprint_of(b.cluster(), [cc, infra_cluster, cp, machines])
    assert (blueprint.control_plane_machine_health_check is not None) is expect_check
    assert blueprint.has_control_plane_infrastructure_machine is machine_infrastructure
