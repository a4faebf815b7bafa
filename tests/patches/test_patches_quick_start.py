"""``clusterclass plan`` of upstream's quick-start ClusterClass with Clusters that set its variables.

Input: ``shared/upstream/examples/clusterclass-quick-start.yaml`` (read-only) and
``fixtures/quick-start-variables.yaml`` (three Clusters, see its header). Every expected value below is
derived by hand from the quick-start's patches:

- ``imageRepository`` (``enabledIf: {{ ne .imageRepository "" }}``): ``add
  .../clusterConfiguration/imageRepository`` from the variable;
- ``etcdImageTag`` / ``coreDNSImageTag``: ``add .../etcd`` = ``local: {imageTag: <tag>}`` and ``add .../dns``
  = ``imageTag: <tag>`` (an empty tag renders ``imageTag:``, YAML null);
- ``customImage``: ``kindest/node:{{ <builtin>.version | replace "+" "_" }}`` on the control plane's and the
  MachineDeployment's DockerMachineTemplate (``spec.template.spec.customImage``) and on the
  DockerMachinePoolTemplate (``spec.template.spec.template.customImage``, which becomes the
  DockerMachinePool's ``spec.template.customImage``);
- ``podSecurityStandard`` (``enabledIf: {{ .podSecurityStandard.enabled }}``): apiServer ``extraArgs``,
  ``extraVolumes`` and an AdmissionConfiguration file whose PodSecurityConfiguration is ``v1beta1`` below
  v1.25.

No patch targets the KubeadmConfigTemplate: MachinePool KubeadmConfigs and the MachineDeployment's
KubeadmConfigTemplate carry the template as it is.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from patch_support import FIXTURES, QUICK_START, invoke

Obj = dict[str, Any]

CLUSTERS = FIXTURES / "quick-start-variables.yaml"
INVALID = FIXTURES / "quick-start-invalid-variables.yaml"
POOL_NAME = "topology.cluster.x-k8s.io/pool-name"
DEPLOYMENT_NAME = "topology.cluster.x-k8s.io/deployment-name"
PSS_FILE = "/etc/kubernetes/kube-apiserver-admission-pss.yaml"


def templates() -> dict[str, Obj]:
    return {d["metadata"]["name"] + "/" + d["kind"]: d for d in yaml.safe_load_all(QUICK_START.read_text()) if d}


def template_spec(name: str, kind: str) -> Obj:
    spec: Obj = copy.deepcopy(templates()[f"{name}/{kind}"]["spec"]["template"]["spec"])
    return spec


def plan(cluster_name: str) -> Obj:
    result = invoke(
        "-f", QUICK_START, "-f", CLUSTERS, "--cluster", f"default/{cluster_name}", "--seed", "3", "-o", "json"
    )
    assert result.exit_code == 0, result.output
    data: Obj = json.loads(result.stdout)
    return data


@pytest.fixture(scope="module")
def plans() -> dict[str, Obj]:
    return {name: plan(name) for name in ("vendor", "restricted", "baseline")}


def created(data: Obj, kind: str, label: tuple[str, str] | None = None) -> list[Obj]:
    return [
        o
        for o in data["created"]
        if o["kind"] == kind and (label is None or o["metadata"].get("labels", {}).get(label[0]) == label[1])
    ]


def only(objects: list[Obj]) -> Obj:
    assert len(objects) == 1, [o["metadata"]["name"] for o in objects]
    return objects[0]


def control_plane_machine_template(data: Obj) -> Obj:
    """The DockerMachineTemplate without a deployment-name label."""
    return only([o for o in created(data, "DockerMachineTemplate") if DEPLOYMENT_NAME not in o["metadata"]["labels"]])


def pss_file(api_version: str, enforce: str, audit: str = "restricted", warn: str = "restricted") -> Obj:
    content = (
        "apiVersion: apiserver.config.k8s.io/v1\n"
        "kind: AdmissionConfiguration\n"
        "plugins:\n"
        "- name: PodSecurity\n"
        "  configuration:\n"
        f"    apiVersion: pod-security.admission.config.k8s.io/{api_version}\n"
        "    kind: PodSecurityConfiguration\n"
        "    defaults:\n"
        f'      enforce: "{enforce}"\n'
        '      enforce-version: "latest"\n'
        f'      audit: "{audit}"\n'
        '      audit-version: "latest"\n'
        f'      warn: "{warn}"\n'
        '      warn-version: "latest"\n'
        "    exemptions:\n"
        "      usernames: []\n"
        "      runtimeClasses: []\n"
        "      namespaces: [kube-system]\n"
    )
    return {"content": content, "path": PSS_FILE}


def kubeadm_config_spec(*, repository: str | None, etcd_tag: str | None, dns_tag: str | None, pss: Obj | None) -> Obj:
    """The quick-start KubeadmControlPlaneTemplate's kubeadmConfigSpec with the patches applied, in patch order."""
    spec: Obj = template_spec("quick-start-control-plane", "KubeadmControlPlaneTemplate")["kubeadmConfigSpec"]
    cluster_configuration = spec["clusterConfiguration"]
    if repository is not None:
        cluster_configuration["imageRepository"] = repository
    cluster_configuration["etcd"] = {"local": {"imageTag": etcd_tag}}
    cluster_configuration["dns"] = {"imageTag": dns_tag}
    if pss is not None:
        cluster_configuration["apiServer"]["extraArgs"] = {"admission-control-config-file": PSS_FILE}
        cluster_configuration["apiServer"]["extraVolumes"] = [
            {"name": "admission-pss", "hostPath": PSS_FILE, "mountPath": PSS_FILE, "readOnly": True, "pathType": "File"}
        ]
        spec["files"] = [pss]
    return spec


# --- vendor: v1.28.0+vmware.1, image settings, Pod Security Standard off -------------------------------------------

VENDOR_IMAGE = "kindest/node:v1.28.0_vmware.1"


def test_vendor_creates_both_machine_pools_and_the_deployment(plans: dict[str, Obj]) -> None:
    data = plans["vendor"]
    assert [o["kind"] for o in data["created"]] == [
        "Secret",  # the Cluster shim
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


@pytest.mark.parametrize("topology_name", ["mp-0", "mp-1"])
def test_vendor_machine_pool_objects(plans: dict[str, Obj], topology_name: str) -> None:
    data = plans["vendor"]
    infra = only(created(data, "DockerMachinePool", (POOL_NAME, topology_name)))
    config = only(created(data, "KubeadmConfig", (POOL_NAME, topology_name)))
    assert infra["spec"] == {"template": {"customImage": VENDOR_IMAGE}}
    assert config["spec"] == template_spec("quick-start-default-worker-bootstraptemplate", "KubeadmConfigTemplate")
    mp = only(created(data, "MachinePool", (POOL_NAME, topology_name)))
    assert mp["spec"]["template"]["spec"]["version"] == "v1.28.0+vmware.1"


def test_vendor_machine_deployment_templates(plans: dict[str, Obj]) -> None:
    data = plans["vendor"]
    infra = only(created(data, "DockerMachineTemplate", (DEPLOYMENT_NAME, "md-0")))
    bootstrap = only(created(data, "KubeadmConfigTemplate", (DEPLOYMENT_NAME, "md-0")))
    expected = template_spec("quick-start-default-worker-machinetemplate", "DockerMachineTemplate")
    expected["customImage"] = VENDOR_IMAGE
    assert infra["spec"] == {"template": {"spec": expected}}
    assert bootstrap["spec"] == {
        "template": {"spec": template_spec("quick-start-default-worker-bootstraptemplate", "KubeadmConfigTemplate")}
    }


def test_vendor_control_plane(plans: dict[str, Obj]) -> None:
    data = plans["vendor"]
    machine_template = control_plane_machine_template(data)
    expected = template_spec("quick-start-control-plane", "DockerMachineTemplate")
    expected["customImage"] = VENDOR_IMAGE
    assert machine_template["spec"] == {"template": {"spec": expected}}

    kcp = only(created(data, "KubeadmControlPlane"))
    assert kcp["spec"]["kubeadmConfigSpec"] == kubeadm_config_spec(
        repository="registry.example.com/k8s", etcd_tag="3.5.9-0", dns_tag="v1.10.1", pss=None
    )
    assert kcp["spec"]["version"] == "v1.28.0+vmware.1"
    assert kcp["spec"]["replicas"] == 3
    assert kcp["spec"]["machineTemplate"]["infrastructureRef"]["name"] == machine_template["metadata"]["name"]
    # Pod Security Standard disabled: nothing of it
    api_server = kcp["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]["apiServer"]
    assert "extraArgs" not in api_server and "extraVolumes" not in api_server
    assert "files" not in kcp["spec"]["kubeadmConfigSpec"]


def test_vendor_cluster_is_shown_with_defaulted_variables(plans: dict[str, Obj]) -> None:
    """The nested defaults of podSecurityStandard are filled in (spec §5.9); nothing is added at the top."""
    (modification,) = plans["vendor"]["modified"]
    assert modification["before"]["spec"]["topology"]["variables"] == [
        {"name": "imageRepository", "value": "registry.example.com/k8s"},
        {"name": "etcdImageTag", "value": "3.5.9-0"},
        {"name": "coreDNSImageTag", "value": "v1.10.1"},
        {
            "name": "podSecurityStandard",
            "value": {"enabled": False, "enforce": "baseline", "audit": "restricted", "warn": "restricted"},
        },
    ]


# --- restricted: v1.24, Pod Security Standard enforced ----------------------------------------------------------------


def test_restricted_control_plane_gets_the_v1beta1_admission_configuration(plans: dict[str, Obj]) -> None:
    data = plans["restricted"]
    kcp = only(created(data, "KubeadmControlPlane"))
    assert kcp["spec"]["kubeadmConfigSpec"] == kubeadm_config_spec(
        repository=None, etcd_tag=None, dns_tag=None, pss=pss_file("v1beta1", enforce="restricted")
    )
    assert kcp["spec"]["version"] == "v1.24.17"
    assert control_plane_machine_template(data)["spec"]["template"]["spec"]["customImage"] == "kindest/node:v1.24.17"


def test_restricted_workers(plans: dict[str, Obj]) -> None:
    data = plans["restricted"]
    assert only(created(data, "DockerMachinePool"))["spec"] == {"template": {"customImage": "kindest/node:v1.24.17"}}
    md_infra = only(created(data, "DockerMachineTemplate", (DEPLOYMENT_NAME, "md-0")))
    assert md_infra["spec"]["template"]["spec"]["customImage"] == "kindest/node:v1.24.17"
    # the admission configuration is the control plane's business only
    for obj in data["created"]:
        if obj["kind"] != "KubeadmControlPlane":
            assert "PodSecurity" not in json.dumps(obj)


def test_restricted_cluster_variables(plans: dict[str, Obj]) -> None:
    """Existing values first (nested defaults applied), then the required variables' top-level defaults in
    status order (sorted by name)."""
    (modification,) = plans["restricted"]["modified"]
    assert modification["before"]["spec"]["topology"]["variables"] == [
        {
            "name": "podSecurityStandard",
            "value": {"enabled": True, "enforce": "restricted", "audit": "restricted", "warn": "restricted"},
        },
        {"name": "coreDNSImageTag", "value": ""},
        {"name": "etcdImageTag", "value": ""},
        {"name": "imageRepository", "value": ""},
    ]


# --- baseline: podSecurityStandard {} ------------------------------------------------------------------------------


def test_baseline_gets_every_default_of_pod_security_standard(plans: dict[str, Obj]) -> None:
    data = plans["baseline"]
    kcp = only(created(data, "KubeadmControlPlane"))
    assert kcp["spec"]["kubeadmConfigSpec"] == kubeadm_config_spec(
        repository="registry.example.com/k8s", etcd_tag=None, dns_tag=None, pss=pss_file("v1", enforce="baseline")
    )
    assert "replicas" not in kcp["spec"]  # the topology sets none
    assert only(created(data, "DockerMachinePool"))["spec"] == {"template": {"customImage": "kindest/node:v1.28.0"}}
    assert only(created(data, "KubeadmConfig"))["spec"] == template_spec(
        "quick-start-default-worker-bootstraptemplate", "KubeadmConfigTemplate"
    )


def test_plans_are_reproducible(plans: dict[str, Obj]) -> None:
    assert plan("vendor") == plans["vendor"]


# --- variables admission refuses -------------------------------------------------------------------------------------


def test_invalid_variable_values_fail_the_cluster_with_field_paths() -> None:
    result = invoke("-f", QUICK_START, "-f", INVALID)
    assert result.exit_code == 1, result.output
    out = result.output
    assert "Traceback" not in out
    assert out.startswith("Cluster default/wrong-types\n  error: ")
    assert f"{INVALID}:5: Cluster default/wrong-types: " in out
    assert (
        'spec.topology.variables[podSecurityStandard].value.enabled: Invalid value: "yes": must be of type boolean'
        in out
    )
    assert "spec.topology.variables[etcdImageTag].value: Invalid value: 3: must be of type string" in out
    assert (
        "spec.topology.workers.machinePools[0].variables.overrides[imageRepository].value: "
        "Invalid value: false: must be of type string"
    ) in out


def test_missing_required_variable_without_default(tmp_path: Path) -> None:
    """The quick-start's required variables all have defaults; without one, a Cluster must set it."""
    documents = [d for d in yaml.safe_load_all(QUICK_START.read_text()) if d]
    (image_repository,) = [v for v in documents[0]["spec"]["variables"] if v["name"] == "imageRepository"]
    assert image_repository["required"] is True
    del image_repository["schema"]["openAPIV3Schema"]["default"]
    class_file = tmp_path / "class.yaml"
    class_file.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    result = invoke("-f", class_file, "-f", CLUSTERS, "--cluster", "default/restricted")
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert "Cluster default/restricted: " in result.output
    assert (
        'spec.topology.variables: Required value: required variable with name "imageRepository" must be defined'
    ) in result.output
    # the Clusters that set it still plan
    ok = invoke("-f", class_file, "-f", CLUSTERS, "--cluster", "default/vendor")
    assert ok.exit_code == 0, ok.output
