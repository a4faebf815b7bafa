"""The official ``kubernetes`` Python client against the embedded store served over TLS.

It reads the kubeconfig the front writes (CA and client certificate inline) and uses the typed
CoreV1Api, the CustomObjectsApi most Python operators use for custom resources, its watch helper
and the discovery-driven dynamic client.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from kubernetes import client, config, dynamic, watch
from kubernetes.client.rest import ApiException

from clusterclass.apiserver.front import ThreadedServer
from clusterclass.apiserver.store import MemoryStore

GROUP, VERSION = "cluster.x-k8s.io", "v1beta1"


@pytest.fixture
def api_client(served: ThreadedServer) -> Iterator[Any]:
    api = config.new_client_from_config(config_file=str(served.kubeconfig_path))
    try:
        yield api
    finally:
        api.close()


def cluster(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/{VERSION}", "kind": "Cluster", "metadata": {"name": name, "labels": labels}}


def test_core_v1_api(api_client: Any) -> None:
    core = client.CoreV1Api(api_client)
    assert [ns.metadata.name for ns in core.list_namespace().items] == ["default"]
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="team-a")))
    body = client.V1ConfigMap(metadata=client.V1ObjectMeta(name="conf", labels={"app": "web"}), data={"k": "v"})
    created = core.create_namespaced_config_map("team-a", body)
    assert created.metadata.uid and created.data == {"k": "v"}
    listed = core.list_namespaced_config_map("team-a", label_selector="app=web")
    assert [item.metadata.name for item in listed.items] == ["conf"]
    patched = core.patch_namespaced_config_map("conf", "team-a", {"data": {"k2": "v2"}})
    assert patched.data == {"k": "v", "k2": "v2"}
    created.data = {"only": "this"}
    with pytest.raises(ApiException) as conflict:
        core.replace_namespaced_config_map("conf", "team-a", created)  # created has a stale resourceVersion
    assert conflict.value.status == 409
    deleted = core.delete_namespaced_config_map("conf", "team-a")  # this client version answers a plain dict
    assert deleted["status"] == "Success" and deleted["details"]["name"] == "conf"
    with pytest.raises(ApiException) as missing:
        core.read_namespaced_config_map("conf", "team-a")
    assert missing.value.status == 404
    assert '"reason":"NotFound"' in missing.value.body.replace(" ", "")


def test_custom_objects_api(api_client: Any) -> None:
    custom = client.CustomObjectsApi(api_client)
    created = custom.create_namespaced_custom_object(GROUP, VERSION, "default", "clusters", cluster("c1", env="a"))
    assert created["metadata"]["generation"] == 1
    got = custom.get_namespaced_custom_object(GROUP, VERSION, "default", "clusters", "c1")
    assert got["metadata"]["uid"] == created["metadata"]["uid"]
    listed = custom.list_cluster_custom_object(GROUP, VERSION, "clusters", label_selector="env=a")
    assert [item["metadata"]["name"] for item in listed["items"]] == ["c1"]
    patched = custom.patch_namespaced_custom_object(
        GROUP, VERSION, "default", "clusters", "c1", {"spec": {"paused": True}}
    )
    assert patched["spec"]["paused"] is True and patched["metadata"]["generation"] == 2
    status = custom.patch_namespaced_custom_object_status(
        GROUP, VERSION, "default", "clusters", "c1", {"status": {"phase": "Provisioned"}}
    )
    assert status["status"]["phase"] == "Provisioned"
    replaced = custom.replace_namespaced_custom_object(
        GROUP, VERSION, "default", "clusters", "c1", {**status, "spec": {}}
    )
    assert replaced["spec"] == {}
    deleted = custom.delete_namespaced_custom_object(GROUP, VERSION, "default", "clusters", "c1")
    assert deleted["status"] == "Success" and deleted["details"]["uid"] == created["metadata"]["uid"]


def test_watch_stream(api_client: Any, store: MemoryStore) -> None:
    custom = client.CustomObjectsApi(api_client)
    custom.create_namespaced_custom_object(GROUP, VERSION, "default", "clusters", cluster("c1"))

    def change() -> None:
        store.create({**cluster("c2"), "metadata": {"name": "c2", "namespace": "default"}})
        store.delete(f"{GROUP}/{VERSION}", "Cluster", "c1", namespace="default")

    seen: list[tuple[str, str]] = []
    watcher = watch.Watch()
    changer = threading.Timer(0.5, change)
    changer.start()
    try:
        for event in watcher.stream(
            custom.list_namespaced_custom_object, GROUP, VERSION, "default", "clusters", timeout_seconds=20
        ):
            seen.append((event["type"], event["object"]["metadata"]["name"]))
            if len(seen) == 3:
                watcher.stop()
    finally:
        changer.join()
    assert seen == [("ADDED", "c1"), ("ADDED", "c2"), ("DELETED", "c1")]


def test_dynamic_client_uses_discovery(api_client: Any) -> None:
    dyn = dynamic.DynamicClient(api_client)
    clusters = dyn.resources.get(api_version=f"{GROUP}/{VERSION}", kind="Cluster")
    assert clusters.namespaced and clusters.name == "clusters"
    clusters.create(body=cluster("c1"), namespace="default")
    assert [item.metadata.name for item in clusters.get(namespace="default").items] == ["c1"]
    config_maps = dyn.resources.get(api_version="v1", kind="ConfigMap")
    assert "cm" in config_maps.short_names


def test_anonymous_requests_are_unauthorized(served: ThreadedServer, tmp_path: Path) -> None:
    ca = tmp_path / "ca.crt"
    ca.write_bytes(served.credentials.ca_pem)
    configuration = client.Configuration()
    configuration.host = served.url
    configuration.ssl_ca_cert = str(ca)
    with client.ApiClient(configuration) as anonymous, pytest.raises(ApiException) as refused:
        client.CoreV1Api(anonymous).list_namespace()
    assert refused.value.status == 401
