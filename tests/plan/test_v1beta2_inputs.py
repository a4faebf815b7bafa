"""``plan`` on what users copy today: upstream v1.14's v1beta2 Docker templates, unchanged.

The ClusterClass (``clusterclass-quick-start.yaml``) and the MachinePool Cluster
(``cluster-template-development-mp.yaml``, its ``${VARIABLES}`` substituted as ``clusterctl generate cluster``
would) plan with no CRDs given: the ``Dev*`` kinds are not known here and pass through as they are, in the
version the ClusterClass's templates use. Errors name fields in the version the user wrote.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from plan_helpers import FIXTURES, Obj, invoke, plan_json

UPSTREAM = FIXTURES / "upstream-v1.14"
CLASS = UPSTREAM / "clusterclass-quick-start.yaml"
VARIABLES = {
    "CLUSTER_NAME": "dev",
    "NAMESPACE": "default",
    "KUBERNETES_VERSION": "v1.34.0",
    "CONTROL_PLANE_MACHINE_COUNT": "1",
    "WORKER_MACHINE_COUNT": "2",
}


def generated_cluster(tmp_path: Path, **overrides: str) -> Path:
    """The development-mp template with its variables substituted (``${X:=default}`` takes the default)."""
    text = (UPSTREAM / "cluster-template-development-mp.yaml").read_text()
    values = {**VARIABLES, **overrides}
    text = re.sub(r"\$\{([A-Z_]+):=([^}]*)\}", lambda m: values.get(m.group(1), m.group(2)), text)
    text = re.sub(r"\$\{([A-Z_]+)\}", lambda m: values[m.group(1)], text)
    path = tmp_path / "cluster.yaml"
    path.write_text(text)
    return path


@pytest.fixture
def plan(tmp_path: Path) -> Obj:
    return plan_json("-f", CLASS, "-f", generated_cluster(tmp_path), "--seed", "1")


def by_kind(objects: list[Obj]) -> dict[str, Obj]:
    return {str(o["kind"]): o for o in objects}


def test_upstreams_v1beta2_templates_plan_a_cluster_with_a_machine_pool(plan: Obj) -> None:
    created = by_kind(plan["created"])
    assert {kind: o["apiVersion"] for kind, o in created.items()} == {
        "Secret": "v1",
        "DevCluster": "infrastructure.cluster.x-k8s.io/v1beta2",
        "MachineHealthCheck": "cluster.x-k8s.io/v1beta2",
        "DevMachineTemplate": "infrastructure.cluster.x-k8s.io/v1beta2",
        "KubeadmControlPlane": "controlplane.cluster.x-k8s.io/v1beta2",
        "DevMachinePool": "infrastructure.cluster.x-k8s.io/v1beta2",
        "KubeadmConfig": "bootstrap.cluster.x-k8s.io/v1beta2",
        "MachinePool": "cluster.x-k8s.io/v1beta2",
    }
    pool = created["MachinePool"]
    assert pool["spec"]["replicas"] == 2
    template = pool["spec"]["template"]["spec"]
    assert template["version"] == "v1.34.0"
    # v1beta2 references: apiGroup, kind, name (the version comes from the CRD's contract)
    assert template["bootstrap"]["configRef"] == {
        "apiGroup": "bootstrap.cluster.x-k8s.io",
        "kind": "KubeadmConfig",
        "name": created["KubeadmConfig"]["metadata"]["name"],
    }
    assert template["infrastructureRef"] == {
        "apiGroup": "infrastructure.cluster.x-k8s.io",
        "kind": "DevMachinePool",
        "name": created["DevMachinePool"]["metadata"]["name"],
    }
    (modified,) = plan["modified"]
    refs = {key: modified["after"]["spec"][key] for key in ("controlPlaneRef", "infrastructureRef")}
    assert refs == {
        "controlPlaneRef": {
            "apiGroup": "controlplane.cluster.x-k8s.io",
            "kind": "KubeadmControlPlane",
            "name": created["KubeadmControlPlane"]["metadata"]["name"],
        },
        "infrastructureRef": {
            "apiGroup": "infrastructure.cluster.x-k8s.io",
            "kind": "DevCluster",
            "name": created["DevCluster"]["metadata"]["name"],
        },
    }
    assert modified["after"]["spec"]["topology"]["classRef"] == {"name": "quick-start"}


def test_objects_are_owned_by_the_clusters_name_in_the_version_shown(tmp_path: Path, plan: Obj) -> None:
    """As upstream v1.14 writes them: a v1beta2 plan's owner references name the Cluster as v1beta2, a v1beta1 plan's
    as v1beta1 (the shim Secret, the MachineHealthCheck, the MachinePool's bootstrap and infrastructure objects)."""

    def cluster_owners(planned: Obj) -> set[str]:
        return {
            reference["apiVersion"]
            for obj in planned["created"]
            for reference in obj["metadata"].get("ownerReferences") or []
            if reference["kind"] == "Cluster"
        }

    assert cluster_owners(plan) == {"cluster.x-k8s.io/v1beta2"}
    v1beta1 = plan_json("-f", CLASS, "-f", generated_cluster(tmp_path), "--seed", "1", "--api-version", "v1beta1")
    assert cluster_owners(v1beta1) == {"cluster.x-k8s.io/v1beta1"}


def test_the_class_patches_reach_the_v1beta2_control_plane(plan: Obj) -> None:
    """The class's patches address v1beta2 paths (kubeadm's extraArgs as lists) and land on the v1beta2 object."""
    kcp = by_kind(plan["created"])["KubeadmControlPlane"]
    spec = kcp["spec"]
    assert kcp["spec"]["version"] == "v1.34.0" and kcp["spec"]["replicas"] == 1
    api_server = spec["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"]
    assert {"name": "admission-control-config-file", "value": "/etc/kubernetes/kube-apiserver-admission-pss.yaml"} in (
        api_server["extraArgs"]
    )


def test_api_version_v1beta1_writes_the_cluster_api_kinds_in_v1beta1(tmp_path: Path) -> None:
    plan = plan_json("-f", CLASS, "-f", generated_cluster(tmp_path), "--seed", "1", "--api-version", "v1beta1")
    created = by_kind(plan["created"])
    assert created["MachinePool"]["apiVersion"] == "cluster.x-k8s.io/v1beta1"
    assert created["KubeadmControlPlane"]["apiVersion"] == "controlplane.cluster.x-k8s.io/v1beta1"
    assert created["DevCluster"]["apiVersion"] == "infrastructure.cluster.x-k8s.io/v1beta2"  # unknown here: as given
    (modified,) = plan["modified"]
    assert modified["after"]["spec"]["topology"]["class"] == "quick-start"


def test_errors_name_the_field_as_the_user_wrote_it(tmp_path: Path) -> None:
    cluster = generated_cluster(tmp_path)
    cluster.write_text(cluster.read_text().replace("name: quick-start", "name: nope"))
    result = invoke("-f", CLASS, "-f", cluster)
    assert result.exit_code == 1
    assert "Cluster default/dev: spec.topology.classRef.name: failed to get ClusterClass default/nope: not found" in (
        result.output
    )
