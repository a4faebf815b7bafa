"""The real kube-apiserver harness itself: binary lookup, the kubeconfig it writes, the admin identity, compaction.

The contract tests trust this harness to be envtest; these tests check the parts they rely on.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from support import real_apiserver as harness
from support.real_apiserver import RealApiServer

from clusterclass.kube.client import Client
from clusterclass.kube.errors import Gone


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("#!/bin/sh\n")
    path.chmod(0o755)
    return path


def test_binaries_are_found_in_envtest_order(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in (
        "TEST_ASSET_KUBE_APISERVER",
        "TEST_ASSET_ETCD",
        "TEST_ASSET_KUBECTL",
        "TEST_ASSET_KUBE_CONTROLLER_MANAGER",
        "KUBEBUILDER_ASSETS",
    ):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("CLUSTERCLASS_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("K8S_VERSION", "v1.0.0")
    monkeypatch.setenv("ETCD_VERSION", "v3.0.0")
    cached = tmp_path / "cache" / "bin" / "assets-v1.0.0-etcd-v3.0.0"
    assert harness.default_assets_dir() == cached

    _executable(cached / "kube-apiserver")
    _executable(cached / "etcd")
    assert harness.find_binaries().kube_apiserver == cached / "kube-apiserver"
    assert harness.find_binaries().kube_controller_manager is None  # optional: only some servers run it
    _executable(cached / "kube-controller-manager")
    assert harness.find_binaries().kube_controller_manager == cached / "kube-controller-manager"

    assets = tmp_path / "assets"
    _executable(assets / "kube-apiserver")
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(assets))
    found = harness.find_binaries()
    assert (found.kube_apiserver, found.etcd) == (assets / "kube-apiserver", cached / "etcd")

    monkeypatch.setenv("TEST_ASSET_ETCD", "/somewhere/etcd")
    assert harness.find_binaries().etcd == Path("/somewhere/etcd")


def test_missing_binaries_say_where_they_were_looked_for(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for variable in ("TEST_ASSET_KUBE_APISERVER", "TEST_ASSET_ETCD"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("KUBEBUILDER_ASSETS", str(tmp_path))
    monkeypatch.setenv("CLUSTERCLASS_CACHE", str(tmp_path / "cache"))
    with pytest.raises(harness.BinariesMissing, match=r"kube-apiserver not found .*build-apiserver\.sh"):
        harness.find_binaries()


def test_the_build_script_defaults_are_read_from_the_script() -> None:
    text = harness.BUILD_SCRIPT.read_text()
    k8s = harness._script_default("K8S_VERSION", "none")
    etcd = harness._script_default("ETCD_VERSION", "none")
    assert k8s.startswith("v1.") and f'"${{K8S_VERSION:-{k8s}}}"' in text
    assert etcd.startswith("v3.") and f'"${{ETCD_VERSION:-{etcd}}}"' in text


def test_a_control_plane_that_does_not_start_says_why_and_leaves_nothing(tmp_path: Path) -> None:
    etcd = tmp_path / "etcd"
    etcd.write_text("#!/bin/sh\necho 'etcd: cannot start here' >&2\nexit 3\n")
    etcd.chmod(0o755)
    server = RealApiServer(harness.Binaries(_executable(tmp_path / "kube-apiserver"), etcd))
    with pytest.raises(harness.StartError, match=r"after 3 attempts: etcd exited with 3:\netcd: cannot start here"):
        server.start()
    assert server._tmp is None
    assert server._processes == []


def test_the_kubeconfig_works_with_the_official_python_client(real_apiserver: RealApiServer) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    api = kubernetes.config.new_client_from_config(config_file=str(real_apiserver.kubeconfig))
    try:
        review = kubernetes.client.AuthenticationV1Api(api).create_self_subject_review(
            {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
        )
        assert review.status.user_info.username == "admin"
        assert "system:masters" in review.status.user_info.groups
        names = {ns.metadata.name for ns in kubernetes.client.CoreV1Api(api).list_namespace().items}
        assert {"default", "kube-system"} <= names
    finally:
        api.close()


def test_the_cluster_api_crds_are_installed_and_served(real_apiserver: RealApiServer) -> None:
    assert len(real_apiserver.crds) >= 18
    status, body = real_apiserver.request("GET", "/apis/cluster.x-k8s.io/v1beta1")
    assert status == 200
    assert {"clusters", "clusterclasses", "machinepools", "machinedeployments"} <= {
        r["name"] for r in body["resources"]
    }


async def test_the_fixture_client_talks_to_the_server(real_client: Client, real_namespace: str) -> None:
    created = await real_client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": real_namespace}}
    )
    assert created["metadata"]["uid"]
    assert (await real_client.get("v1", "ConfigMap", "a", namespace=real_namespace))["metadata"]["uid"] == (
        created["metadata"]["uid"]
    )


async def test_compaction_makes_older_resource_versions_gone(
    real_apiserver: RealApiServer, real_client: Client, real_namespace: str
) -> None:
    listed = await real_client.list("v1", "ConfigMap", namespace=real_namespace)
    await real_client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "a", "namespace": real_namespace}}
    )
    await asyncio.to_thread(real_apiserver.compact)
    with pytest.raises(Gone) as gone:
        async for _ in real_client.watch(
            "v1", "ConfigMap", namespace=real_namespace, resource_version=listed.resource_version, timeout_seconds=5
        ):
            pass
    assert gone.value.code == 410


async def test_the_server_with_a_controller_manager_collects_dependents(real_apiserver_with_gc: RealApiServer) -> None:
    """Its garbage collector deletes what a deleted owner owned, after the delete has answered (unlike envtest)."""
    namespace = real_apiserver_with_gc.create_namespace("gc-")
    client = real_apiserver_with_gc.client()
    try:
        owner = await client.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": namespace}}
        )
        reference = {"apiVersion": "v1", "kind": "ConfigMap", "name": "owner", "uid": owner["metadata"]["uid"]}
        dependent = {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "dependent", "namespace": namespace, "ownerReferences": [reference]},
        }
        await client.create(dependent)
        await client.delete("v1", "ConfigMap", "owner", namespace=namespace)
        for _ in range(600):
            names = [o["metadata"]["name"] for o in (await client.list("v1", "ConfigMap", namespace=namespace)).items]
            if "dependent" not in names:
                break
            await asyncio.sleep(0.1)
        assert "dependent" not in names, "the garbage collector did not delete the dependent within 60 s"
    finally:
        await client.close()
