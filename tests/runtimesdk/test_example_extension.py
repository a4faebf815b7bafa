"""The example extension (clusterclass/examples/extension.py) does what upstream's test extension does (§8.6)."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from clusterclass.api.objects import Obj
from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.examples.extension import extension
from clusterclass.runtimesdk import ExtensionTester, decoded_patch

TESTER = ExtensionTester(extension)


def template(kind: str, spec: Obj | None = None) -> Obj:
    return {"apiVersion": "x/v1beta1", "kind": kind, "metadata": {"name": "t"}, "spec": spec or {"template": {}}}


def generate(kind: str, item_variables: list[Obj], global_variables: list[Obj] | None = None) -> Obj:
    request = {
        "variables": global_variables or [],
        "items": [
            {
                "uid": "u1",
                "holderReference": {"apiVersion": "v", "kind": "K", "namespace": "n", "name": "h", "fieldPath": "f"},
                "object": template(kind),
                "variables": item_variables,
            }
        ],
    }
    return TESTER.call("GeneratePatches", request)


def builtin(**value: Any) -> Obj:
    return {"name": "builtin", "value": value}


def operations(answer: Obj) -> list[Obj]:
    assert answer["status"] == "Success", answer
    return [op for item in answer["items"] for op in decoded_patch(item)]


# --- Test_patchKubeadmConfigTemplate ---------------------------------------------------------------------------


def test_no_op_for_a_machine_pool_class_other_than_default_worker() -> None:
    answer = generate("KubeadmConfigTemplate", [builtin(machinePool={"class": "other", "version": "v1.23.0"})])
    assert operations(answer) == []


def test_fails_without_builtin_machine_pool_version_for_default_worker() -> None:
    answer = generate("KubeadmConfigTemplate", [builtin(machinePool={"class": "default-worker"})])
    assert answer["status"] == "Failure"
    assert "no builtin.machinePool.version" in answer["message"]


@pytest.mark.parametrize(("version", "patched"), [("v1.23.0", True), ("v1.24.0", False)])
def test_cgroup_driver_below_kubernetes_1_24_for_default_worker_pools(version: str, patched: bool) -> None:
    answer = generate("KubeadmConfigTemplate", [builtin(machinePool={"class": "default-worker", "version": version})])
    expected = [
        {
            "op": "add",
            "path": "/spec/template/spec/joinConfiguration",
            "value": {"nodeRegistration": {"kubeletExtraArgs": {"cgroup-driver": "cgroupfs"}}},
        }
    ]
    assert operations(answer) == (expected if patched else [])


# --- Test_patchDockerMachinePoolTemplate -------------------------------------------------------------------------


def test_docker_machine_pool_template_needs_a_version() -> None:
    answer = generate("DockerMachinePoolTemplate", [builtin(machinePool={"class": "p"})])
    assert (answer["status"], answer["message"]) == (
        "Failure",
        "no version variables found for DockerMachinePoolTemplate patch",
    )


def test_docker_machine_pool_template_gets_the_kind_image_of_the_pool_version() -> None:
    answer = generate("DockerMachinePoolTemplate", [builtin(machinePool={"class": "p", "version": "v1.23.0"})])
    assert operations(answer) == [
        {"op": "add", "path": "/spec/template/spec/template/customImage", "value": "kindest/node:v1.23.0"}
    ]


# --- TestHandler_GeneratePatches "All the templates are patched" ---------------------------------------------------


def test_every_template_kind_is_patched() -> None:
    request_items = [
        ("DockerClusterTemplate", []),
        ("KubeadmControlPlaneTemplate", [builtin(controlPlane={"version": "v1.23.0"})]),
        ("DockerMachineTemplate", [builtin(controlPlane={"version": "v1.23.0"})]),
        ("KubeadmConfigTemplate", [builtin(machineDeployment={"class": "default-worker", "version": "v1.23.0"})]),
        ("DockerMachineTemplate", [builtin(machineDeployment={"class": "default-worker", "version": "v1.23.0"})]),
        ("KubeadmConfigTemplate", [builtin(machinePool={"class": "default-worker", "version": "v1.23.0"})]),
        ("DockerMachinePoolTemplate", [builtin(machinePool={"class": "default-worker", "version": "v1.23.0"})]),
    ]
    request = {
        "variables": [
            {"name": "imageRepository", "value": "docker.io"},
            {"name": "kubeadmControlPlaneMaxSurge", "value": "3"},
        ],
        "items": [
            {
                "uid": str(i),
                "holderReference": {"apiVersion": "v", "kind": "K", "namespace": "n", "name": "h", "fieldPath": "f"},
                "object": template(kind),
                "variables": variables,
            }
            for i, (kind, variables) in enumerate(request_items, start=1)
        ],
    }
    answer = TESTER.call("GeneratePatches", request)
    assert answer["status"] == "Success"
    by_uid = {item["uid"]: decoded_patch(item) for item in answer["items"]}
    assert sorted(by_uid) == ["1", "2", "3", "4", "5", "6", "7"]
    assert by_uid["1"] == [
        {"op": "add", "path": "/spec/template/spec/loadBalancer", "value": {"imageRepository": "docker.io"}}
    ]
    surge = {"op": "add", "path": "/spec/template/spec/rolloutStrategy", "value": {"rollingUpdate": {"maxSurge": 3}}}
    assert surge in by_uid["2"]
    assert by_uid["7"] == [
        {"op": "add", "path": "/spec/template/spec/template/customImage", "value": "kindest/node:v1.23.0"}
    ]


def test_discovered_variables_and_validation() -> None:
    answer = TESTER.call("DiscoverVariables", {})
    assert [(v["name"], v["required"]) for v in answer["variables"]] == [
        ("kubeadmControlPlaneMaxSurge", False),
        ("imageRepository", True),
    ]
    assert TESTER.call("ValidateTopology", {"variables": [], "items": []})["status"] == "Success"


# --- lifecycle hooks from the ConfigMap ------------------------------------------------------------------------


@pytest.fixture
async def client() -> AsyncIterator[MemoryClient]:
    store = MemoryStore()
    memory = MemoryClient(store)
    extension.client = memory
    try:
        yield memory
    finally:
        extension.client = None
        await memory.close()
        store.close()


CLUSTER = {
    "apiVersion": "cluster.x-k8s.io/v1beta1",
    "kind": "Cluster",
    "metadata": {"name": "c1", "namespace": "default"},
}


async def test_hooks_answer_success_at_once_without_their_config_map(client: MemoryClient) -> None:
    answer = await TESTER.acall("BeforeClusterUpgrade", {"cluster": CLUSTER})
    assert (answer["status"], answer["retryAfterSeconds"]) == ("Success", 0)


async def test_hooks_answer_what_the_config_map_preloads_and_record_it(client: MemoryClient) -> None:
    await client.create(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "c1-test-extension-hookresponses", "namespace": "default"},
            "data": {
                "BeforeClusterUpgrade-preloadedResponse": json.dumps({"Status": "Success", "RetryAfterSeconds": 5}),
                "AfterClusterUpgrade-preloadedResponse": json.dumps({"Status": "Failure", "Message": "no"}),
            },
        }
    )
    held = await TESTER.acall("BeforeClusterUpgrade", {"cluster": CLUSTER})
    failed = await TESTER.acall("AfterClusterUpgrade", {"cluster": CLUSTER})
    created = await TESTER.acall("BeforeClusterCreate", {"cluster": CLUSTER})
    assert (held["status"], held["retryAfterSeconds"]) == ("Success", 5)
    assert (failed["status"], failed["message"]) == ("Failure", "no")
    assert (created["status"], created["retryAfterSeconds"]) == ("Success", 0)
    recorded = (await client.get("v1", "ConfigMap", "c1-test-extension-hookresponses", namespace="default"))["data"]
    assert recorded["BeforeClusterUpgrade-actualResponseStatus"] == "Success"
    assert recorded["AfterClusterUpgrade-actualResponseStatus"] == "Failure"
    assert recorded["BeforeClusterCreate-actualResponseStatus"] == "Success"
