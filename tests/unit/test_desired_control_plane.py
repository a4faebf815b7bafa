"""Desired InfrastructureCluster, ControlPlane (with machine template and health check) and Cluster (spec §2.4)."""

from __future__ import annotations

import re
from typing import Any

import builders as b
import pytest
from unit_support import World, compute

from clusterclass.errors import ObjectKey, TopologyError
from clusterclass.topology.desired import DesiredState

RANDOM = "[bcdfghjklmnpqrstvwxz2456789]{5}"
ABSENT = object()
CLUSTER_OWNER = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "cluster1", "uid": "cluster1-uid"}


def lookup(obj: Any, *path: str) -> Any:
    for step in path:
        if not isinstance(obj, dict) or step not in obj:
            return ABSENT
        obj = obj[step]
    return obj


def desired_state(
    world: World | None = None, existing: list[dict[str, Any]] | None = None, **cluster: Any
) -> DesiredState:
    return compute(b.cluster(**cluster), [*(world or World()).objects(), *(existing or [])]).desired


def with_machines(**control_plane_fields: Any) -> World:
    return World(
        machine_infrastructure=b.docker_machine_template("cp-machines"), control_plane_fields=control_plane_fields
    )


# --- InfrastructureCluster ---------------------------------------------------------------------------------


def test_infrastructure_cluster_is_cloned_from_its_template_with_a_cluster_prefixed_name() -> None:
    world = World()
    infra = desired_state(world).infrastructure_cluster
    assert (infra["apiVersion"], infra["kind"]) == (b.INFRA_V1, "DockerCluster")
    assert re.fullmatch(f"cluster1-{RANDOM}", infra["metadata"]["name"])
    assert infra["metadata"]["labels"] == {b.CLUSTER_NAME: "cluster1", b.OWNED: ""}
    assert infra["metadata"]["annotations"] == {
        b.CLONED_FROM_NAME: "infra-cluster-template",
        b.CLONED_FROM_GROUPKIND: "DockerClusterTemplate.infrastructure.cluster.x-k8s.io",
    }
    assert infra["spec"] == world.infrastructure_cluster["spec"]["template"]["spec"]
    assert "ownerReferences" not in infra["metadata"]


def test_existing_infrastructure_cluster_keeps_its_name_and_shim_owner() -> None:
    world = World()
    current = b.cloned_object(world.infrastructure_cluster, "cluster1-abcde")
    shim = {"apiVersion": "v1", "kind": "Secret", "name": "cluster1-shim", "uid": "shim-uid"}
    current["metadata"]["ownerReferences"] = [shim, CLUSTER_OWNER]
    infra = desired_state(world, [current], infrastructure_ref=current).infrastructure_cluster
    assert infra["metadata"]["name"] == "cluster1-abcde"
    assert infra["metadata"]["ownerReferences"] == [shim]


# --- ControlPlane ------------------------------------------------------------------------------------------


def test_control_plane_metadata_is_topology_over_class_plus_template_and_enforced_labels() -> None:
    world = World(
        control_plane=b.kubeadm_control_plane_template(template_labels={"tpl": "l"}, template_annotations={"tpl": "a"}),
        control_plane_fields={"metadata": {"labels": {"shared": "class", "c": "c"}, "annotations": {"ca": "c"}}},
    )
    cp = desired_state(
        world, control_plane={"metadata": {"labels": {"shared": "topology"}, "annotations": {"ta": "t"}}}
    ).control_plane
    assert cp["metadata"]["labels"] == {
        "tpl": "l",
        "shared": "topology",
        "c": "c",
        b.CLUSTER_NAME: "cluster1",
        b.OWNED: "",
    }
    assert cp["metadata"]["annotations"] == {
        "tpl": "a",
        "ca": "c",
        "ta": "t",
        b.CLONED_FROM_NAME: "control-plane-template",
        b.CLONED_FROM_GROUPKIND: "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io",
    }
    assert (cp["apiVersion"], cp["kind"]) == (b.CONTROLPLANE_V1, "KubeadmControlPlane")


@pytest.mark.parametrize(
    ("naming_template", "expected"),
    [
        (None, f"cluster1-{RANDOM}"),
        ("{{ .cluster.name }}-cp", "cluster1-cp"),
        ("{{ .cluster.name }}-{{ .random }}-" + "x" * 60, f"cluster1-{RANDOM}-" + "x" * 43 + RANDOM),
    ],
)
def test_control_plane_name_follows_the_naming_strategy(naming_template: str | None, expected: str) -> None:
    fields = {"namingStrategy": {"template": naming_template}} if naming_template else None
    cp = desired_state(World(control_plane_fields=fields)).control_plane
    assert re.fullmatch(expected, cp["metadata"]["name"])


def test_control_plane_naming_error_points_at_the_class() -> None:
    world = World(control_plane_fields={"namingStrategy": {"template": "{{ .machinePool.topologyName }}"}})
    with pytest.raises(TopologyError) as err:
        desired_state(world)
    assert "failed to generate name for ControlPlane" in err.value.message
    assert err.value.obj == ObjectKey("cluster.x-k8s.io", "ClusterClass", "default", "class1")
    assert err.value.field == "spec.controlPlane.namingStrategy.template"


def test_existing_control_plane_keeps_its_name() -> None:
    cp = b.control_plane("cluster1-existing", version="v1.2.3", status_version="v1.2.3")
    assert desired_state(World(), [cp], control_plane_ref=cp).control_plane["metadata"]["name"] == "cluster1-existing"


@pytest.mark.parametrize(
    ("topology_replicas", "expected"),
    [
        (3, 3),
        (None, ABSENT),
    ],
)
def test_control_plane_replicas_only_when_the_topology_sets_them(topology_replicas: Any, expected: Any) -> None:
    topology = {"replicas": topology_replicas} if topology_replicas is not None else {}
    assert lookup(desired_state(control_plane=topology).control_plane, "spec", "replicas") == expected


@pytest.mark.parametrize(
    ("field", "topology_value", "class_value", "expected"),
    [
        ("nodeDrainTimeout", "10s", "20s", "10s"),
        ("nodeDrainTimeout", None, "20s", "20s"),
        ("nodeVolumeDetachTimeout", "10s", None, "10s"),
        ("nodeDeletionTimeout", None, None, ABSENT),
    ],
)
def test_control_plane_timeouts_go_to_the_machine_template(
    field: str, topology_value: Any, class_value: Any, expected: Any
) -> None:
    world = World(control_plane_fields={field: class_value} if class_value else None)
    topology = {field: topology_value} if topology_value else {}
    cp = desired_state(world, control_plane=topology).control_plane
    assert lookup(cp, "spec", "machineTemplate", field) == expected


def test_control_plane_machine_template_is_a_template_copy_referenced_from_the_control_plane() -> None:
    world = with_machines(metadata={"labels": {"c": "c"}, "annotations": {"ca": "c"}})
    state = desired_state(world, control_plane={"metadata": {"labels": {"t": "t"}}})
    machines = state.control_plane_infrastructure_machine_template
    assert machines is not None
    assert (machines["kind"], machines["metadata"]["ownerReferences"]) == ("DockerMachineTemplate", [CLUSTER_OWNER])
    assert re.fullmatch(f"cluster1-{RANDOM}", machines["metadata"]["name"])
    assert machines["spec"] == world.machine_infrastructure["spec"]  # type: ignore[index]
    machine_template = state.control_plane["spec"]["machineTemplate"]
    assert machine_template["infrastructureRef"] == {
        "apiVersion": b.INFRA_V1,
        "kind": "DockerMachineTemplate",
        "namespace": "default",
        "name": machines["metadata"]["name"],
    }
    assert machine_template["metadata"] == {
        "labels": {"c": "c", "t": "t", b.CLUSTER_NAME: "cluster1", b.OWNED: ""},
        "annotations": {"ca": "c"},
    }


def test_existing_control_plane_machine_template_keeps_its_name() -> None:
    world = with_machines()
    machines = b.cloned_object(world.machine_infrastructure, "cluster1-machines", as_template=True)  # type: ignore[arg-type]
    cp = b.control_plane(version="v1.2.3", status_version="v1.2.3", machine_template_ref=machines)
    state = desired_state(world, [cp, machines], control_plane_ref=cp)
    assert state.control_plane_infrastructure_machine_template["metadata"]["name"] == "cluster1-machines"  # type: ignore[index]
    assert state.control_plane["spec"]["machineTemplate"]["infrastructureRef"]["name"] == "cluster1-machines"


def test_control_plane_without_machine_infrastructure_has_no_machine_template_ref() -> None:
    state = desired_state(World(control_plane_fields={"machineHealthCheck": {"maxUnhealthy": "40%"}}))
    assert state.control_plane_infrastructure_machine_template is None
    assert lookup(state.control_plane, "spec", "machineTemplate", "infrastructureRef") is ABSENT
    assert state.control_plane_machine_health_check is None


@pytest.mark.parametrize(
    ("class_check", "topology_check", "expected"),
    [
        ({"maxUnhealthy": "40%"}, None, {"maxUnhealthy": "40%", "nodeStartupTimeout": "10m0s"}),
        ({"maxUnhealthy": "40%"}, {"enable": False}, None),
        # Go's form; no maxUnhealthy default, as upstream v1.14's webhook
        (None, {"nodeStartupTimeout": "3m"}, {"nodeStartupTimeout": "3m0s"}),
        (None, None, None),
    ],
)
def test_control_plane_health_check(class_check: Any, topology_check: Any, expected: Any) -> None:
    world = with_machines(**({"machineHealthCheck": class_check} if class_check else {}))
    state = desired_state(world, control_plane={"machineHealthCheck": topology_check} if topology_check else None)
    check = state.control_plane_machine_health_check
    if expected is None:
        assert check is None
        return
    assert check is not None
    assert check["metadata"]["name"] == state.control_plane["metadata"]["name"]
    assert check["metadata"]["ownerReferences"] == [CLUSTER_OWNER]
    assert check["spec"] == {
        "clusterName": "cluster1",
        "selector": {"matchLabels": {b.OWNED: "", "cluster.x-k8s.io/control-plane": ""}},
        **expected,
    }


# --- Cluster ---------------------------------------------------------------------------------------------


def test_cluster_points_at_the_desired_objects_and_carries_the_topology_labels() -> None:
    state = desired_state(labels={"mine": "x"})
    assert state.cluster["metadata"]["labels"] == {"mine": "x", b.CLUSTER_NAME: "cluster1", b.OWNED: ""}
    assert state.cluster["spec"]["infrastructureRef"] == b.ref(state.infrastructure_cluster)
    assert state.cluster["spec"]["controlPlaneRef"] == b.ref(state.control_plane)


@pytest.mark.parametrize(
    ("current_api_version", "current_kind", "expected_api_version"),
    [
        ("infrastructure.cluster.x-k8s.io/v1alpha4", "DockerCluster", "infrastructure.cluster.x-k8s.io/v1alpha4"),
        ("infrastructure.cluster.x-k8s.io/v1beta1", "DockerCluster", "infrastructure.cluster.x-k8s.io/v1beta1"),
        ("infrastructure.cluster.x-k8s.io/v1alpha4", "OldDockerCluster", "infrastructure.cluster.x-k8s.io/v1beta1"),
        ("old.infrastructure.example.com/v1", "DockerCluster", "infrastructure.cluster.x-k8s.io/v1beta1"),
    ],
)
def test_cluster_ref_keeps_the_current_api_version_while_group_and_kind_are_unchanged(
    current_api_version: str, current_kind: str, expected_api_version: str
) -> None:
    world = World()
    current = b.cloned_object(world.infrastructure_cluster, "cluster1-abcde")
    current["apiVersion"], current["kind"] = current_api_version, current_kind
    state = desired_state(world, [current], infrastructure_ref=current)
    assert state.cluster["spec"]["infrastructureRef"]["apiVersion"] == expected_api_version
    assert state.cluster["spec"]["infrastructureRef"]["kind"] == "DockerCluster"


@pytest.mark.parametrize(("written", "go_form"), [("5m", "5m0s"), ("90s", "1m30s"), ("2h", "2h0m0s")])
def test_control_plane_timeouts_are_written_as_go_formats_durations(written: str, go_form: str) -> None:
    """Upstream sets the control plane's timeouts from typed Durations (contract ``Duration.Set``)."""
    world = World(control_plane_fields={"nodeDrainTimeout": written})
    cp = desired_state(world, control_plane={"nodeVolumeDetachTimeout": written}).control_plane
    assert lookup(cp, "spec", "machineTemplate", "nodeDrainTimeout") == go_form
    assert lookup(cp, "spec", "machineTemplate", "nodeVolumeDetachTimeout") == go_form
