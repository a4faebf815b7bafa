"""HttpClient against a real kube-apiserver: what the server actually answers, and how the client reads it.

The contract suite (``tests/contract``) holds every backend to kube-apiserver's semantics; these
tests cover what is particular to the HTTP client: discovery of built-in and CRD kinds, list items
without ``kind``, the different answers of a delete, errors on the wire, watch streams, and every
way of authenticating (client certificate, exec plugin with a token or a certificate, in-cluster
service account) end to end, asking the server who it thinks we are.
"""

from __future__ import annotations

import base64
import json
import sys
from pathlib import Path
from typing import Any

import pytest
from support.real_apiserver import RealApiServer

from clusterclass.kube.errors import AlreadyExists, ApiError, Conflict, Forbidden, Gone, Invalid, NotFound
from clusterclass.kube.http import Config, HttpClient, load_kubeconfig
from clusterclass.kube.http.kubeconfig import ExecConfig, in_cluster_config

CAPI = "cluster.x-k8s.io/v1beta1"


def configmap(namespace: str, name: str, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, **metadata},
        "data": {"k": "v"},
    }


def cluster(namespace: str, name: str, **metadata: Any) -> dict[str, Any]:
    return {
        "apiVersion": CAPI,
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace, **metadata},
        "spec": {"paused": True},
    }


async def who_am_i(client: HttpClient) -> str:
    """The user name the server authenticated the client as (SelfSubjectReview is open to everyone)."""
    review = await client.create(
        {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview", "metadata": {}}
    )
    return str(review["status"]["userInfo"]["username"])


def service_account_token(server: RealApiServer, namespace: str, name: str) -> str:
    """A token for a new service account, from the TokenRequest API."""
    status, _ = server.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts",
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}},
    )
    assert status == 201
    status, answer = server.request(
        "POST",
        f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
        {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": 3600}},
    )
    assert status == 201, answer
    return str(answer["status"]["token"])


def exec_plugin(directory: Path, status: dict[str, Any]) -> ExecConfig:
    """A plugin script printing an ExecCredential with ``status``."""
    script = directory / "plugin"
    credential = {"apiVersion": "client.authentication.k8s.io/v1", "kind": "ExecCredential", "status": status}
    script.write_text(f"#!{sys.executable}\nprint({json.dumps(json.dumps(credential))})\n")
    script.chmod(0o755)
    return ExecConfig(command=str(script), interactive_mode="Never")


# -- discovery and reads ---------------------------------------------------------------------------


async def test_discovery_of_built_in_and_custom_kinds(real_client: HttpClient) -> None:
    md = await real_client.resource(CAPI, "MachineDeployment")
    assert (md.plural, md.namespaced, md.subresources) == ("machinedeployments", True, {"status", "scale"})
    namespace = await real_client.resource("v1", "Namespace")
    assert (namespace.plural, namespace.namespaced) == ("namespaces", False)
    assert {"status", "finalize"} <= namespace.subresources
    lease = await real_client.resource("coordination.k8s.io/v1", "Lease")
    assert (lease.plural, lease.namespaced) == ("leases", True)
    with pytest.raises(NotFound, match="the server could not find the requested resource"):
        await real_client.resource(CAPI, "NoSuchKind")
    with pytest.raises(NotFound):
        await real_client.resource("nothing.example.io/v1", "Thing")
    assert CAPI in await real_client.discovery.group_versions()


async def test_list_items_get_the_kind_the_server_leaves_out(
    real_apiserver: RealApiServer, real_client: HttpClient, real_namespace: str
) -> None:
    for name in ("b", "a", "c"):
        await real_client.create(configmap(real_namespace, name, labels={"pick": "yes" if name != "c" else "no"}))
    _, raw = real_apiserver.request("GET", f"/api/v1/namespaces/{real_namespace}/configmaps")
    assert "kind" not in raw["items"][0] and "apiVersion" not in raw["items"][0]

    listed = await real_client.list("v1", "ConfigMap", namespace=real_namespace, label_selector="pick=yes")
    assert [(o["apiVersion"], o["kind"], o["metadata"]["name"]) for o in listed.items] == [
        ("v1", "ConfigMap", "a"),
        ("v1", "ConfigMap", "b"),
    ]
    assert int(listed.resource_version) >= max(int(o["metadata"]["resourceVersion"]) for o in listed.items)


async def test_errors_from_the_server_are_typed(real_client: HttpClient, real_namespace: str) -> None:
    with pytest.raises(NotFound, match=r'clusters\.cluster\.x-k8s\.io "nope" not found') as missing:
        await real_client.get(CAPI, "Cluster", "nope", namespace=real_namespace)
    assert missing.value.details == {"name": "nope", "group": "cluster.x-k8s.io", "kind": "clusters"}
    created = await real_client.create(configmap(real_namespace, "cm"))
    with pytest.raises(AlreadyExists, match='configmaps "cm" already exists'):
        await real_client.create(configmap(real_namespace, "cm"))
    stale = {**created, "metadata": {**created["metadata"], "resourceVersion": "1"}}
    with pytest.raises(Conflict, match="the object has been modified"):
        await real_client.update(stale)
    with pytest.raises(Invalid) as invalid:
        await real_client.create(configmap(real_namespace, "Not_Valid"))
    assert invalid.value.details["causes"][0]["field"] == "metadata.name"


# -- writes ----------------------------------------------------------------------------------------


async def test_apply_patch_and_status_round_trip(real_client: HttpClient, real_namespace: str) -> None:
    def with_endpoint(host: str) -> dict[str, Any]:
        return {**cluster(real_namespace, "c1"), "spec": {"controlPlaneEndpoint": {"host": host, "port": 6443}}}

    applied = await real_client.apply(with_endpoint("a"), field_manager="capi-topology")
    assert [(m["manager"], m["operation"]) for m in applied["metadata"]["managedFields"]] == [
        ("capi-topology", "Apply")
    ]
    other = with_endpoint("b")
    with pytest.raises(Conflict, match='conflict with "capi-topology"') as conflict:
        await real_client.apply(other, field_manager="someone-else")
    assert conflict.value.details["causes"][0]["field"] == ".spec.controlPlaneEndpoint.host"
    dry = await real_client.apply(other, field_manager="someone-else", force=True, dry_run=True)
    assert dry["spec"]["controlPlaneEndpoint"]["host"] == "b"
    stored = await real_client.get(CAPI, "Cluster", "c1", namespace=real_namespace)
    assert stored["spec"]["controlPlaneEndpoint"]["host"] == "a"

    merged = await real_client.patch(
        CAPI, "Cluster", "c1", {"metadata": {"labels": {"a": "b"}}}, namespace=real_namespace
    )
    assert merged["metadata"]["labels"] == {"a": "b"}
    assert "clusterclass" in {m["manager"] for m in merged["metadata"]["managedFields"]}
    patched = await real_client.patch(
        CAPI,
        "Cluster",
        "c1",
        [{"op": "add", "path": "/status", "value": {"phase": "Provisioning"}}],
        patch_type="json",
        namespace=real_namespace,
        status=True,
    )
    assert patched["status"]["phase"] == "Provisioning"
    updated = await real_client.update_status({**patched, "status": {"phase": "Provisioned"}})
    assert updated["status"]["phase"] == "Provisioned"
    status_applied = await real_client.apply(
        {**cluster(real_namespace, "c1"), "status": {"infrastructureReady": True}},
        field_manager="status-writer",
        status=True,
    )
    assert status_applied["status"]["infrastructureReady"] is True


# -- delete answers --------------------------------------------------------------------------------


async def test_delete_answers_as_the_server_gives_them(real_client: HttpClient, real_namespace: str) -> None:
    # a ConfigMap's delete answers with a Status, a custom resource's with the deleted object
    await real_client.create(configmap(real_namespace, "plain"))
    assert await real_client.delete("v1", "ConfigMap", "plain", namespace=real_namespace) is None
    await real_client.create(cluster(real_namespace, "plain"))
    assert await real_client.delete(CAPI, "Cluster", "plain", namespace=real_namespace) is None
    with pytest.raises(NotFound):
        await real_client.get(CAPI, "Cluster", "plain", namespace=real_namespace)

    # finalizers hold it: the marked object comes back
    await real_client.create(cluster(real_namespace, "held", finalizers=["example.com/hold"]))
    held = await real_client.delete(CAPI, "Cluster", "held", namespace=real_namespace)
    assert held is not None and held["metadata"]["deletionTimestamp"]
    assert held["metadata"]["finalizers"] == ["example.com/hold"]

    # Foreground adds a finalizer the garbage collector would remove (none runs here)
    await real_client.create(cluster(real_namespace, "fg"))
    foreground = await real_client.delete(
        CAPI, "Cluster", "fg", namespace=real_namespace, propagation_policy="Foreground"
    )
    assert foreground is not None and foreground["metadata"]["finalizers"] == ["foregroundDeletion"]
    # without a policy the object's own foregroundDeletion decides: still held
    again = await real_client.delete(CAPI, "Cluster", "fg", namespace=real_namespace)
    assert again is not None and again["metadata"]["finalizers"] == ["foregroundDeletion"]
    # an explicit Background drops that finalizer, and with it the object
    assert (
        await real_client.delete(CAPI, "Cluster", "fg", namespace=real_namespace, propagation_policy="Background")
        is None
    )
    with pytest.raises(NotFound):
        await real_client.get(CAPI, "Cluster", "fg", namespace=real_namespace)

    # preconditions go in DeleteOptions
    await real_client.create(configmap(real_namespace, "pre"))
    with pytest.raises(Conflict, match=r"the UID in the precondition \(x\) does not match the UID in record"):
        await real_client.delete("v1", "ConfigMap", "pre", namespace=real_namespace, preconditions={"uid": "x"})
    assert await real_client.delete("v1", "ConfigMap", "pre", namespace=real_namespace, dry_run=True) is None
    await real_client.get("v1", "ConfigMap", "pre", namespace=real_namespace)


async def test_a_deleted_namespace_stays_terminating(real_client: HttpClient) -> None:
    namespace = await real_client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "t-"}})
    # the namespace controller's spec.finalizers hold it (no namespace controller runs here)
    marked = await real_client.delete("v1", "Namespace", namespace["metadata"]["name"])
    assert marked is not None
    assert marked["status"]["phase"] == "Terminating"
    assert marked["spec"]["finalizers"] == ["kubernetes"]


# -- watch -----------------------------------------------------------------------------------------


async def test_watch_from_a_list_sees_later_changes_then_ends(real_client: HttpClient, real_namespace: str) -> None:
    await real_client.create(configmap(real_namespace, "before"))
    listed = await real_client.list("v1", "ConfigMap", namespace=real_namespace)
    await real_client.create(configmap(real_namespace, "after"))
    await real_client.delete("v1", "ConfigMap", "before", namespace=real_namespace)
    seen = []
    async for event in real_client.watch(
        "v1", "ConfigMap", namespace=real_namespace, resource_version=listed.resource_version, timeout_seconds=1
    ):
        seen.append((event["type"], event["object"]["kind"], event["object"]["metadata"].get("name")))
    assert seen[:2] == [("ADDED", "ConfigMap", "after"), ("DELETED", "ConfigMap", "before")]
    assert {kind for kind, _, _ in seen[2:]} <= {"BOOKMARK"}


async def test_watch_without_a_resource_version_starts_with_everything(
    real_client: HttpClient, real_namespace: str
) -> None:
    await real_client.create(cluster(real_namespace, "one"))
    events = real_client.watch(CAPI, "Cluster", namespace=real_namespace, timeout_seconds=5)
    first = await anext(events)
    second = await anext(events)
    await events.aclose()  # type: ignore[attr-defined]
    assert (first["type"], first["object"]["metadata"]["name"]) == ("ADDED", "one")
    assert second["type"] == "BOOKMARK"
    assert second["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}


async def test_watch_from_a_compacted_resource_version_is_gone(
    real_apiserver: RealApiServer, real_client: HttpClient, real_namespace: str
) -> None:
    created = await real_client.create(configmap(real_namespace, "old"))
    await real_client.patch("v1", "ConfigMap", "old", {"data": {"k": "w"}}, namespace=real_namespace)
    real_apiserver.compact()
    with pytest.raises(Gone) as gone:
        async for _ in real_client.watch(
            "v1", "ConfigMap", namespace=real_namespace, resource_version=created["metadata"]["resourceVersion"]
        ):
            pass
    assert (gone.value.code, gone.value.reason) == (410, "Expired")


# -- authentication end to end ---------------------------------------------------------------------


async def test_client_certificate_from_the_kubeconfig(real_client: HttpClient) -> None:
    assert await who_am_i(real_client) == "admin"


async def test_exec_plugin_with_a_client_certificate(real_apiserver: RealApiServer, tmp_path: Path) -> None:
    admin = load_kubeconfig(real_apiserver.kubeconfig)
    assert admin.client_cert and admin.client_key
    plugin = exec_plugin(
        tmp_path, {"clientCertificateData": admin.client_cert.decode(), "clientKeyData": admin.client_key.decode()}
    )
    config = Config(server=admin.server, ca_data=admin.ca_data, exec=plugin)
    async with HttpClient(config, stdin_is_terminal=False) as client:
        assert await who_am_i(client) == "admin"


async def test_exec_plugin_token_and_forbidden(
    real_apiserver: RealApiServer, real_namespace: str, tmp_path: Path
) -> None:
    token = service_account_token(real_apiserver, real_namespace, "robot")
    admin = load_kubeconfig(real_apiserver.kubeconfig)
    config = Config(server=admin.server, ca_data=admin.ca_data, exec=exec_plugin(tmp_path, {"token": token}))
    async with HttpClient(config, stdin_is_terminal=False) as client:
        assert await who_am_i(client) == f"system:serviceaccount:{real_namespace}:robot"
        with pytest.raises(Forbidden, match=r'cannot list resource "configmaps"') as forbidden:
            await client.list("v1", "ConfigMap", namespace=real_namespace)
        assert forbidden.value.code == 403


async def test_in_cluster_service_account(real_apiserver: RealApiServer, real_namespace: str, tmp_path: Path) -> None:
    token = service_account_token(real_apiserver, real_namespace, "pod-sa")
    admin = load_kubeconfig(real_apiserver.kubeconfig)
    assert admin.ca_data
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text(token)
    (sa / "ca.crt").write_bytes(admin.ca_data)
    (sa / "namespace").write_text(real_namespace)
    port = admin.server.rsplit(":", 1)[1]
    env = {"KUBERNETES_SERVICE_HOST": "127.0.0.1", "KUBERNETES_SERVICE_PORT": port}
    config = in_cluster_config(environ=env, service_account_dir=sa)
    assert config.namespace == real_namespace
    async with HttpClient(config) as client:
        assert await who_am_i(client) == f"system:serviceaccount:{real_namespace}:pod-sa"


async def test_a_bad_token_is_unauthorized(real_apiserver: RealApiServer) -> None:
    admin = load_kubeconfig(real_apiserver.kubeconfig)
    async with HttpClient(Config(server=admin.server, ca_data=admin.ca_data, token="not-a-token")) as client:
        with pytest.raises(ApiError, match="Unauthorized") as refused:
            await client.get("v1", "Namespace", "default")
    assert (refused.value.code, refused.value.reason) == (401, "Unauthorized")


async def test_token_auth_in_a_kubeconfig_file(
    real_apiserver: RealApiServer, real_namespace: str, tmp_path: Path
) -> None:
    token = service_account_token(real_apiserver, real_namespace, "file-sa")
    admin = load_kubeconfig(real_apiserver.kubeconfig)
    assert admin.ca_data
    (tmp_path / "ca.crt").write_bytes(admin.ca_data)
    (tmp_path / "token").write_text(token)
    (tmp_path / "kubeconfig").write_text(
        json.dumps(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": admin.server, "certificate-authority": "ca.crt"}}],
                "users": [{"name": "u", "user": {"tokenFile": "token"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    async with HttpClient.from_kubeconfig(tmp_path / "kubeconfig") as client:
        assert await who_am_i(client) == f"system:serviceaccount:{real_namespace}:file-sa"


def test_ca_data_in_the_fixture_kubeconfig_is_base64_pem(real_apiserver: RealApiServer) -> None:
    raw = real_apiserver.kubeconfig.read_text()
    assert "certificate-authority-data" in raw
    admin = load_kubeconfig(real_apiserver.kubeconfig)
    assert admin.ca_data is not None and admin.ca_data.startswith(b"-----BEGIN CERTIFICATE-----")
    assert base64.b64encode(admin.ca_data).decode() in raw
