"""``clusterclass plan`` on upstream's quick-start ClusterClass and a new Cluster with MachinePools.

Input: ``shared/upstream/examples/clusterclass-quick-start.yaml`` (read-only; its objects have no
namespace, so they land in ``default``, and its refs have none, so they are read in the
ClusterClass namespace) plus ``fixtures/quick-start-cluster.yaml``, a Cluster with one
MachineDeployment (md-0) and two MachinePools (mp-0 with labels, failure domains and a
defer-upgrade annotation; mp-1), setting no variables.

Admission defaults the Cluster's variables first (spec §9.2 step 6, §5.9): the quick-start's three
required string variables have a top-level default ``""`` and are added, in ``status.variables``
order (sorted by name); ``podSecurityStandard`` has no top-level default and is not added. Then the
quick-start patches run (spec §5) with those values:

- ``imageRepository``: ``enabledIf: {{ ne .imageRepository "" }}`` is false → not applied;
- ``etcdImageTag`` / ``coreDNSImageTag``: the templates render ``imageTag:`` with nothing after it,
  which YAML reads as null → ``etcd: {local: {imageTag: null}}`` and ``dns: {imageTag: null}``;
- ``customImage``: ``kindest/node:<version>`` on the control plane's and the MachineDeployment's
  DockerMachineTemplate (``spec.template.spec.customImage``) and on the DockerMachinePool (the
  template's ``spec.template.spec.template.customImage`` becomes the object's ``spec.template.customImage``);
- ``podSecurityStandard``: ``enabledIf: {{ .podSecurityStandard.enabled }}`` renders ``<no value>``
  (a string, not ``true``) → not applied.

No patch targets the KubeadmConfigTemplate, so the MachineDeployment's bootstrap template and the
MachinePools' KubeadmConfigs carry exactly the cloned template spec.

Every created object is checked field by field against spec §2.4-§2.6 and §3.1 (reconcile order).
"""

from __future__ import annotations

import copy
import json
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from plan_helpers import (
    FIXTURES,
    QUICK_START,
    RANDOM,
    SHARED,
    Obj,
    deployment,
    find,
    invoke,
    one,
    plan_json,
    pool,
    read_all_yaml,
    read_yaml,
    run_subprocess,
)

CLUSTER_FILE = FIXTURES / "quick-start-cluster.yaml"
SEED = "1234"
ARGS = ("-f", QUICK_START, "-f", CLUSTER_FILE, "--seed", SEED)

CLUSTER_UID = "3f6c7a52-2f0e-4c8a-9d44-1b2a7e0c9d11"
CLUSTER_OWNER = [
    {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "my-cluster", "uid": CLUSTER_UID}
]
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"
OWNED = "topology.cluster.x-k8s.io/owned"
POOL_NAME = "topology.cluster.x-k8s.io/pool-name"
DEPLOYMENT_NAME = "topology.cluster.x-k8s.io/deployment-name"
CLONED_NAME = "cluster.x-k8s.io/cloned-from-name"
CLONED_GROUPKIND = "cluster.x-k8s.io/cloned-from-groupkind"
DEFER = "topology.cluster.x-k8s.io/defer-upgrade"

BASE_LABELS = {CLUSTER_NAME: "my-cluster", OWNED: ""}
SHIM_OWNER = {"apiVersion": "v1", "kind": "Secret", "name": "my-cluster-shim", "uid": ""}

#: what the customImage patch sets for version v1.28.0 (``kindest/node:{{ ... | replace "+" "_" }}``)
CUSTOM_IMAGE = "kindest/node:v1.28.0"
#: the Cluster's variables once admission defaulted them: the three required variables with
#: top-level default "", sorted by name as ``status.variables`` is
DEFAULTED_VARIABLES = [
    {"name": "coreDNSImageTag", "value": ""},
    {"name": "etcdImageTag", "value": ""},
    {"name": "imageRepository", "value": ""},
]


@pytest.fixture(scope="module")
def plan() -> Obj:
    return plan_json(*ARGS)


@pytest.fixture(scope="module")
def created(plan: Obj) -> list[Obj]:
    return list(plan["created"])


@pytest.fixture(scope="module")
def templates() -> dict[tuple[str, str], Obj]:
    """The quick-start templates by (kind, name)."""
    return {(o["kind"], o["metadata"]["name"]): o for o in read_all_yaml(QUICK_START) if o["kind"] != "ClusterClass"}


def cloned_from(name: str, group_kind: str) -> dict[str, str]:
    return {CLONED_NAME: name, CLONED_GROUPKIND: group_kind}


def ref(obj: Obj) -> dict[str, Any]:
    return {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "namespace": "default",
        "name": obj["metadata"]["name"],
    }


def test_shared_inputs_are_present() -> None:
    assert SHARED.is_dir(), SHARED
    assert QUICK_START.is_file(), QUICK_START
    cc = read_all_yaml(QUICK_START)[0]
    assert cc["kind"] == "ClusterClass"
    assert "namespace" not in cc["metadata"], "the example is meant to have no namespace"


def test_created_objects_in_reconcile_order(plan: Obj) -> None:
    """The Cluster shim, InfrastructureCluster, control plane (machine template first), then MDs, then MPs
    (spec §3.1).

    Inside a worker: infrastructure, bootstrap, then the worker itself (spec §3.3 step 4-6).
    The quick-start control plane class has no MachineHealthCheck, so none is created.
    """
    assert [o["kind"] for o in plan["created"]] == [
        "Secret",
        "DockerCluster",
        "DockerMachineTemplate",
        "KubeadmControlPlane",
        "DockerMachineTemplate",
        "KubeadmConfigTemplate",
        "MachineDeployment",
        "DockerMachinePool",
        "KubeadmConfig",
        "MachinePool",
        "DockerMachinePool",
        "KubeadmConfig",
        "MachinePool",
    ]
    workers = plan["created"][4:]
    assert [o["metadata"]["labels"].get(DEPLOYMENT_NAME) for o in workers[:3]] == ["md-0"] * 3
    assert [o["metadata"]["labels"].get(POOL_NAME) for o in workers[3:]] == ["mp-0"] * 3 + ["mp-1"] * 3
    assert [(m["after"]["kind"], m["after"]["metadata"]["name"]) for m in plan["modified"]] == [
        ("Cluster", "my-cluster")
    ]
    assert plan["deleted"] == []


def test_names_namespaces_and_api_versions(created: list[Obj]) -> None:
    patterns = [
        "my-cluster-shim",
        rf"my-cluster-{RANDOM}",
        rf"my-cluster-{RANDOM}",
        rf"my-cluster-{RANDOM}",
        *[rf"my-cluster-md-0-{RANDOM}"] * 3,
        *[rf"my-cluster-mp-0-{RANDOM}"] * 3,
        *[rf"my-cluster-mp-1-{RANDOM}"] * 3,
    ]
    for obj, pattern in zip(created, patterns, strict=True):
        assert re.fullmatch(pattern, obj["metadata"]["name"]), (obj["kind"], obj["metadata"]["name"], pattern)
        assert obj["metadata"]["namespace"] == "default"
    names = [o["metadata"]["name"] for o in created]
    # The control plane name is rendered from its naming strategy; all random suffixes differ.
    assert len(set(names)) == len(names)
    assert {o["kind"]: o["apiVersion"] for o in created} == {
        "Secret": "v1",
        "DockerCluster": "infrastructure.cluster.x-k8s.io/v1beta1",
        "DockerMachineTemplate": "infrastructure.cluster.x-k8s.io/v1beta1",
        "KubeadmControlPlane": "controlplane.cluster.x-k8s.io/v1beta1",
        "KubeadmConfigTemplate": "bootstrap.cluster.x-k8s.io/v1beta1",
        "MachineDeployment": "cluster.x-k8s.io/v1beta1",
        "DockerMachinePool": "infrastructure.cluster.x-k8s.io/v1beta1",
        "KubeadmConfig": "bootstrap.cluster.x-k8s.io/v1beta1",
        "MachinePool": "cluster.x-k8s.io/v1beta1",
    }


def test_no_server_set_fields_and_no_status(created: list[Obj]) -> None:
    for obj in created:
        assert set(obj) <= {"apiVersion", "kind", "metadata", "spec", "type"}, obj["kind"]
        assert set(obj["metadata"]) <= {"name", "namespace", "labels", "annotations", "ownerReferences"}, obj["kind"]


def test_the_cluster_shim_comes_first_and_owns_the_new_top_level_objects(created: list[Obj]) -> None:
    """Upstream's plan shows the shim (spec §3.2): a Secret the Cluster owns, made an extra owner of the new
    InfrastructureCluster and ControlPlane so that they are collected if the Cluster update never lands.
    Its uid is not known before it is created, so the references to it carry an empty uid, as upstream's."""
    shim = created[0]
    assert shim == {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": "my-cluster-shim", "namespace": "default", "ownerReferences": CLUSTER_OWNER},
        "type": "cluster.x-k8s.io/secret",
    }
    for kind in ("DockerCluster", "KubeadmControlPlane"):
        assert one(created, kind)["metadata"]["ownerReferences"] == [SHIM_OWNER]


def test_infrastructure_cluster(created: list[Obj], templates: dict[tuple[str, str], Obj]) -> None:
    docker_cluster = one(created, "DockerCluster")
    assert docker_cluster["metadata"]["labels"] == BASE_LABELS
    assert docker_cluster["metadata"]["annotations"] == cloned_from(
        "quick-start-cluster", "DockerClusterTemplate.infrastructure.cluster.x-k8s.io"
    )
    assert docker_cluster["metadata"]["ownerReferences"] == [SHIM_OWNER]
    assert (
        docker_cluster["spec"]
        == templates[("DockerClusterTemplate", "quick-start-cluster")]["spec"]["template"]["spec"]
    )


def test_control_plane_and_its_machine_template(created: list[Obj], templates: dict[tuple[str, str], Obj]) -> None:
    machine_template, kcp = created[2], created[3]
    assert machine_template["kind"] == "DockerMachineTemplate"
    assert machine_template["metadata"]["labels"] == BASE_LABELS
    assert machine_template["metadata"]["annotations"] == cloned_from(
        "quick-start-control-plane", "DockerMachineTemplate.infrastructure.cluster.x-k8s.io"
    )
    assert machine_template["metadata"]["ownerReferences"] == CLUSTER_OWNER
    # template-to-template: the whole template spec is copied, then the customImage patch adds the
    # control plane version to spec.template.spec
    template_spec = copy.deepcopy(templates[("DockerMachineTemplate", "quick-start-control-plane")]["spec"])
    template_spec["template"]["spec"]["customImage"] = CUSTOM_IMAGE
    assert machine_template["spec"] == template_spec

    assert kcp["kind"] == "KubeadmControlPlane"
    assert kcp["metadata"]["labels"] == BASE_LABELS
    assert kcp["metadata"]["annotations"] == cloned_from(
        "quick-start-control-plane", "KubeadmControlPlaneTemplate.controlplane.cluster.x-k8s.io"
    )
    assert kcp["metadata"]["ownerReferences"] == [SHIM_OWNER]
    template_spec = templates[("KubeadmControlPlaneTemplate", "quick-start-control-plane")]["spec"]["template"]["spec"]
    # etcdImageTag and coreDNSImageTag render "imageTag: " with the empty default: YAML null.
    # imageRepository (enabledIf ne "") and podSecurityStandard (unset: "<no value>") are not applied.
    kubeadm_config_spec = copy.deepcopy(template_spec["kubeadmConfigSpec"])
    kubeadm_config_spec["clusterConfiguration"]["etcd"] = {"local": {"imageTag": None}}
    kubeadm_config_spec["clusterConfiguration"]["dns"] = {"imageTag": None}
    assert kcp["spec"]["kubeadmConfigSpec"] == kubeadm_config_spec
    cluster_configuration = kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]
    assert "imageRepository" not in cluster_configuration
    assert "extraArgs" not in cluster_configuration["apiServer"]
    assert "files" not in kcp["spec"]["kubeadmConfigSpec"]
    assert kcp["spec"]["version"] == "v1.28.0"
    assert kcp["spec"]["replicas"] == 1
    assert kcp["spec"]["machineTemplate"]["infrastructureRef"] == ref(machine_template)
    assert kcp["spec"]["machineTemplate"]["metadata"]["labels"] == BASE_LABELS
    assert set(kcp["spec"]) == {"kubeadmConfigSpec", "machineTemplate", "replicas", "version"}


def test_machine_deployment_and_its_templates(created: list[Obj], templates: dict[tuple[str, str], Obj]) -> None:
    labels = {**BASE_LABELS, DEPLOYMENT_NAME: "md-0"}
    infra = deployment(created, "DockerMachineTemplate", "md-0")
    bootstrap = deployment(created, "KubeadmConfigTemplate", "md-0")
    md = deployment(created, "MachineDeployment", "md-0")

    for template, source_kind, source_name, group in (
        (infra, "DockerMachineTemplate", "quick-start-default-worker-machinetemplate", "infrastructure"),
        (bootstrap, "KubeadmConfigTemplate", "quick-start-default-worker-bootstraptemplate", "bootstrap"),
    ):
        assert template["metadata"]["labels"] == labels
        assert template["metadata"]["annotations"] == cloned_from(
            source_name, f"{source_kind}.{group}.cluster.x-k8s.io"
        )
        assert template["metadata"]["ownerReferences"] == CLUSTER_OWNER
    # the customImage patch sets the MachineDeployment's version on its DockerMachineTemplate ...
    infra_spec = copy.deepcopy(
        templates[("DockerMachineTemplate", "quick-start-default-worker-machinetemplate")]["spec"]
    )
    infra_spec["template"]["spec"]["customImage"] = CUSTOM_IMAGE
    assert infra["spec"] == infra_spec
    # ... and no patch targets the KubeadmConfigTemplate
    assert (
        bootstrap["spec"]
        == templates[("KubeadmConfigTemplate", "quick-start-default-worker-bootstraptemplate")]["spec"]
    )

    assert md["metadata"]["labels"] == labels
    assert "annotations" not in md["metadata"]
    assert "ownerReferences" not in md["metadata"]
    assert md["spec"] == {
        "clusterName": "my-cluster",
        "replicas": 1,
        "selector": {"matchLabels": labels},
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "clusterName": "my-cluster",
                "bootstrap": {"configRef": ref(bootstrap)},
                "infrastructureRef": ref(infra),
                "version": "v1.28.0",
            },
        },
    }


@pytest.mark.parametrize("topology_name", ["mp-0", "mp-1"])
def test_machine_pool_bootstrap_and_infrastructure_objects(
    created: list[Obj], templates: dict[tuple[str, str], Obj], topology_name: str
) -> None:
    """Objects, not templates: kind minus ``Template``, spec = the (patched) template's ``spec.template.spec``.

    The customImage patch writes ``/spec/template/spec/template/customImage`` of the
    DockerMachinePoolTemplate, which lands at the DockerMachinePool's ``spec.template.customImage``
    (spec §5.2, §5.8, A20); the KubeadmConfig is the unpatched template spec.

    Only the template's own metadata plus the enforced labels: the pool's topology/class metadata
    is not propagated to them (spec §2.5 step 4).
    """
    labels = {**BASE_LABELS, POOL_NAME: topology_name}
    config = pool(created, "KubeadmConfig", topology_name)
    infra = pool(created, "DockerMachinePool", topology_name)
    assert config["metadata"]["labels"] == labels
    assert infra["metadata"]["labels"] == labels
    assert config["metadata"]["annotations"] == cloned_from(
        "quick-start-default-worker-bootstraptemplate", "KubeadmConfigTemplate.bootstrap.cluster.x-k8s.io"
    )
    assert infra["metadata"]["annotations"] == cloned_from(
        "quick-start-default-worker-machinepooltemplate", "DockerMachinePoolTemplate.infrastructure.cluster.x-k8s.io"
    )
    assert config["metadata"]["ownerReferences"] == CLUSTER_OWNER
    assert infra["metadata"]["ownerReferences"] == CLUSTER_OWNER
    bootstrap_template = templates[("KubeadmConfigTemplate", "quick-start-default-worker-bootstraptemplate")]
    pool_template = templates[("DockerMachinePoolTemplate", "quick-start-default-worker-machinepooltemplate")]
    assert config["spec"] == bootstrap_template["spec"]["template"]["spec"]
    assert pool_template["spec"]["template"]["spec"] == {"template": {}}
    assert infra["spec"] == {"template": {"customImage": CUSTOM_IMAGE}}


def test_machine_pool_mp_0(created: list[Obj]) -> None:
    """Labels and annotations from the topology; the defer-upgrade annotation is stripped (A2, A3)."""
    mp = pool(created, "MachinePool", "mp-0")
    labels = {"pool-role": "storage", **BASE_LABELS, POOL_NAME: "mp-0"}
    annotations = {"example.com/owner": "team-storage"}
    assert mp["metadata"] == {
        "name": mp["metadata"]["name"],
        "namespace": "default",
        "labels": labels,
        "annotations": annotations,
    }
    assert DEFER not in json.dumps(mp)
    assert mp["spec"] == {
        "clusterName": "my-cluster",
        "replicas": 2,
        "failureDomains": ["fd1", "fd2"],
        "template": {
            "metadata": {"labels": labels, "annotations": annotations},
            "spec": {
                "clusterName": "my-cluster",
                "bootstrap": {"configRef": ref(pool(created, "KubeadmConfig", "mp-0"))},
                "infrastructureRef": ref(pool(created, "DockerMachinePool", "mp-0")),
                "version": "v1.28.0",
            },
        },
    }


def test_machine_pool_mp_1(created: list[Obj]) -> None:
    """No annotations at all when there are none to set (an empty map never converges)."""
    mp = pool(created, "MachinePool", "mp-1")
    labels = {"pool-role": "web", **BASE_LABELS, POOL_NAME: "mp-1"}
    assert mp["metadata"]["labels"] == labels
    assert "annotations" not in mp["metadata"]
    assert "ownerReferences" not in mp["metadata"]
    assert mp["spec"] == {
        "clusterName": "my-cluster",
        "replicas": 3,
        "template": {
            "metadata": {"labels": labels},
            "spec": {
                "clusterName": "my-cluster",
                "bootstrap": {"configRef": ref(pool(created, "KubeadmConfig", "mp-1"))},
                "infrastructureRef": ref(pool(created, "DockerMachinePool", "mp-1")),
                "version": "v1.28.0",
            },
        },
    }


def test_topology_never_writes_controller_owned_fields(created: list[Obj]) -> None:
    """A15: no status, providerIDList, dataSecretName or MachinePool ownerReferences."""
    for mp in find(created, "MachinePool"):
        assert "providerIDList" not in mp["spec"]
        assert "dataSecretName" not in mp["spec"]["template"]["spec"]["bootstrap"]
        assert "minReadySeconds" not in mp["spec"]  # neither topology nor class sets it
        assert "ownerReferences" not in mp["metadata"]


def test_cluster_is_modified_with_refs(plan: Obj, created: list[Obj]) -> None:
    (modification,) = plan["modified"]
    before, after = modification["before"], modification["after"]
    # "before" is the Cluster as admission stores it: namespace set, variables defaulted (spec §9.2 step 6)
    expected_before = read_yaml(CLUSTER_FILE)
    expected_before["metadata"]["namespace"] = "default"
    assert "variables" not in expected_before["spec"]["topology"]
    expected_before["spec"]["topology"]["variables"] = DEFAULTED_VARIABLES
    assert before == expected_before
    assert "infrastructureRef" not in before["spec"] and "controlPlaneRef" not in before["spec"]
    assert after["spec"]["infrastructureRef"] == ref(one(created, "DockerCluster"))
    assert after["spec"]["controlPlaneRef"] == ref(one(created, "KubeadmControlPlane"))
    assert after["metadata"]["labels"] == {"env": "test", **BASE_LABELS}
    assert after["metadata"]["uid"] == CLUSTER_UID
    # nothing else of the Cluster changes
    rest_after = {k: v for k, v in after["spec"].items() if k not in ("infrastructureRef", "controlPlaneRef")}
    assert rest_after == before["spec"]
    diff = modification["diff"]
    assert diff.startswith("--- Cluster default/my-cluster (current)\n+++ Cluster default/my-cluster (planned)\n")
    assert "+  infrastructureRef:\n" in diff
    assert "+  controlPlaneRef:\n" in diff
    assert f"+    name: {one(created, 'KubeadmControlPlane')['metadata']['name']}\n" in diff


def test_text_output_lists_every_change(created: list[Obj]) -> None:
    result = invoke(*ARGS)
    assert result.exit_code == 0, result.output
    lines = result.stdout.splitlines()
    assert lines[0] == "Cluster default/my-cluster (ClusterClass quick-start, version v1.28.0)"
    listed = [line.strip() for line in lines if line.startswith("  + created") or line.startswith("  ~ modified")]
    expected = [f"+ created  {o['kind']} default/{o['metadata']['name']}" for o in created]
    expected[0] += "  (owns the new objects until the Cluster does)"
    expected.insert(4, "~ modified Cluster default/my-cluster")
    assert listed == expected
    assert "No changes detected" not in result.stdout
    assert "note:" not in result.stdout  # nothing to say about upgrades for a new Cluster


@pytest.mark.parametrize("output", ["json", "yaml", "text"])
def test_same_seed_gives_identical_output(output: str) -> None:
    first = invoke(*ARGS, "-o", output)
    second = invoke(*ARGS, "-o", output)
    assert first.exit_code == second.exit_code == 0
    assert first.stdout_bytes == second.stdout_bytes


def test_another_seed_gives_other_names(created: list[Obj]) -> None:
    other = plan_json("-f", QUICK_START, "-f", CLUSTER_FILE, "--seed", "4321")["created"]
    assert [o["kind"] for o in other] == [o["kind"] for o in created]
    generated = {o["metadata"]["name"] for o in created if o["kind"] != "Secret"}  # the shim's name is fixed
    assert {o["metadata"]["name"] for o in other if o["kind"] != "Secret"}.isdisjoint(generated)


def test_yaml_output_is_the_same_structure_as_json(plan: Obj) -> None:
    result = invoke(*ARGS, "-o", "yaml")
    assert result.exit_code == 0, result.output
    assert yaml.safe_load(result.stdout) == plan
    assert "&id" not in result.stdout and "*id" not in result.stdout  # no YAML anchors/aliases


def test_input_order_does_not_matter(plan: Obj) -> None:
    """The Cluster may come before its ClusterClass."""
    assert plan_json("-f", CLUSTER_FILE, "-f", QUICK_START, "--seed", SEED) == plan


@pytest.mark.parametrize("script", [False, True], ids=["python-m", "console-script"])
def test_real_process_gives_the_same_plan(plan: Obj, script: bool) -> None:
    outcome = run_subprocess("plan", *ARGS, "-o", "json", script=script)
    assert outcome.exit_code == 0, outcome.output
    assert outcome.stderr == ""
    assert json.loads(outcome.stdout) == plan
    assert outcome.stdout == invoke(*ARGS, "-o", "json").stdout


def test_a_large_string_on_the_cluster_comes_through_every_format_intact(tmp_path: Path) -> None:
    cluster = read_yaml(CLUSTER_FILE)
    blob = "ünïcode:" + "x" * 2_000_000 + " end"
    cluster["metadata"]["annotations"] = {"example.com/blob": blob}
    cluster_file = tmp_path / "cluster.yaml"
    cluster_file.write_text(yaml.safe_dump(cluster), encoding="utf-8")
    args = ("-f", QUICK_START, "-f", cluster_file, "--seed", SEED)
    as_json = plan_json(*args)
    assert as_json["modified"][0]["after"]["metadata"]["annotations"]["example.com/blob"] == blob
    as_yaml = invoke(*args, "-o", "yaml")
    assert yaml.safe_load(as_yaml.stdout) == as_json
