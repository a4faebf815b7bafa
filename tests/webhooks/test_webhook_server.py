"""The admission webhooks over HTTPS, as kube-apiserver calls them: AdmissionReview in, patch or verdict out.

The server runs on the embedded store with the controllers (so ClusterClasses are reconciled, as the Cluster webhook
requires before it defaults variables); reviews are POSTed over TLS the way kube-apiserver sends them. The same
webhooks registered with a real kube-apiserver are in ``tests/run/test_run_on_a_real_apiserver.py``.
"""

from __future__ import annotations

import asyncio
import base64
import copy
import json
import os
import ssl
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import jsonpatch
import pytest

from clusterclass.api.objects import Obj, dig
from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.controllers import ControllerOptions, Controllers
from clusterclass.controllers.workload import StaticWorkloadClusters
from clusterclass.kube.certs import CertificateAuthority
from clusterclass.plan.loader import load
from clusterclass.webhooks import WEBHOOKS, AdmissionHandlers, CertificateWatcher, WebhookServer

EXAMPLES = Path(__file__).resolve().parents[2] / "clusterclass" / "examples"
EXAMPLE = EXAMPLES / "quick-start-v1beta1.yaml"
EXAMPLE_V1BETA2 = EXAMPLES / "quick-start.yaml"
CAPI = "cluster.x-k8s.io/v1beta1"
PATHS = {w.name: w.path for w in WEBHOOKS}


def example(path: Path = EXAMPLE) -> list[Obj]:
    return list(load([str(path)]).objects)


def example_cluster(name: str = "demo", path: Path = EXAMPLE) -> Obj:
    cluster = copy.deepcopy(next(o for o in example(path) if o["kind"] == "Cluster"))
    cluster["metadata"]["name"] = name
    return cluster


def write_pair(directory: Path, ca: CertificateAuthority) -> None:
    pair = ca.issue_server(["localhost", "127.0.0.1"])
    (directory / "tls.key").write_bytes(pair.key_pem)
    (directory / "tls.crt").write_bytes(pair.cert_pem)


@dataclass
class Webhooks:
    """The running webhook server, the store behind it, and a way to send reviews."""

    client: MemoryClient
    controllers: Controllers
    server: WebhookServer
    ca: CertificateAuthority
    cert_dir: Path

    def ssl_context(self, ca: CertificateAuthority | None = None) -> ssl.SSLContext:
        return ssl.create_default_context(cadata=(ca or self.ca).cert_pem.decode())

    async def review(
        self,
        webhook: str,
        operation: str,
        obj: Obj | None,
        old: Obj | None = None,
        *,
        raw: bytes | None = None,
    ) -> dict[str, Any]:
        subject = obj if obj is not None else old or {}
        body = (
            raw
            or json.dumps(
                {
                    "apiVersion": "admission.k8s.io/v1",
                    "kind": "AdmissionReview",
                    "request": {
                        "uid": str(uuid.uuid4()),
                        "kind": {
                            "group": "cluster.x-k8s.io",
                            "version": str(subject.get("apiVersion") or CAPI).rpartition("/")[2],
                            "kind": subject.get("kind"),
                        },
                        "operation": operation,
                        "name": dig(subject, "metadata", "name"),
                        "namespace": dig(subject, "metadata", "namespace"),
                        "object": obj,
                        "oldObject": old,
                        "userInfo": {"username": "tester"},
                    },
                }
            ).encode()
        )
        url = f"https://127.0.0.1:{self.server.port}{PATHS[webhook]}"
        async with aiohttp.ClientSession() as session, session.post(url, data=body, ssl=self.ssl_context()) as answer:
            assert answer.status == 200
            review = await answer.json()
        assert review["kind"] == "AdmissionReview"
        response: dict[str, Any] = review["response"]
        if raw is None:
            assert response["uid"] == json.loads(body)["request"]["uid"]
        return response


@pytest.fixture
async def webhooks(tmp_path: Path) -> AsyncIterator[Webhooks]:
    store = MemoryStore()
    client = MemoryClient(store)
    controllers = Controllers(
        client, ControllerOptions(sync_period=None, topology_workers=2), workload=StaticWorkloadClusters()
    )
    await controllers.start()
    ca = CertificateAuthority("webhook-test-ca")
    write_pair(tmp_path, ca)
    server = WebhookServer(
        AdmissionHandlers(controllers.manager, workload=controllers.workload, class_poll_timeout=5.0),
        controllers.manager.metrics,
        CertificateWatcher(tmp_path, interval=0.05),
        host="127.0.0.1",
        port=0,
    )
    await server.start()
    try:
        yield Webhooks(client, controllers, server, ca, tmp_path)
    finally:
        await server.stop()
        await controllers.stop()
        await client.close()
        store.close()


async def apply_class(webhooks: Webhooks) -> None:
    for obj in example():
        if obj["kind"] != "Cluster":
            await webhooks.client.apply(obj, field_manager="test")


def apply_patch(obj: Obj, response: dict[str, Any]) -> Obj:
    assert response["allowed"] is True
    if "patch" not in response:
        return obj
    assert response["patchType"] == "JSONPatch"
    operations = json.loads(base64.b64decode(response["patch"]))
    return jsonpatch.apply_patch(obj, operations)


# --- Cluster ------------------------------------------------------------------------------------------------


async def test_a_cluster_is_defaulted_with_a_json_patch_once_its_class_is_reconciled(webhooks: Webhooks) -> None:
    await apply_class(webhooks)
    cluster = example_cluster()
    cluster["spec"]["topology"]["version"] = "1.28.0"
    response = await webhooks.review("default.cluster.cluster.x-k8s.io", "CREATE", cluster)
    defaulted = apply_patch(cluster, response)
    assert defaulted["spec"]["topology"]["version"] == "v1.28.0"
    # the required variable with a schema default is added; the optional one without a default is not
    assert defaulted["spec"]["topology"]["variables"] == [{"name": "imageRepository", "value": "registry.k8s.io"}]
    again = await webhooks.review("default.cluster.cluster.x-k8s.io", "UPDATE", defaulted, defaulted)
    assert again["allowed"] is True and "patch" not in again  # defaulting is idempotent: nothing to change


async def test_a_v1beta2_cluster_is_defaulted_and_denied_in_v1beta2(webhooks: Webhooks) -> None:
    """A v1beta2 review is answered in v1beta2: the patch applies to the v1beta2 object, causes name its fields."""
    await apply_class(webhooks)
    cluster = example_cluster(path=EXAMPLE_V1BETA2)
    cluster["spec"]["topology"]["version"] = "1.28.0"
    response = await webhooks.review("default.cluster.cluster.x-k8s.io", "CREATE", cluster)
    defaulted = apply_patch(cluster, response)
    assert defaulted["apiVersion"] == "cluster.x-k8s.io/v1beta2"
    assert defaulted["spec"]["topology"]["version"] == "v1.28.0"
    assert defaulted["spec"]["topology"]["classRef"] == {"name": "quick-start-pools"}
    assert "class" not in defaulted["spec"]["topology"]
    # v1beta1's machineHealthCheck.enable is v1beta2's healthCheck.enabled
    defaulted["spec"]["topology"]["workers"]["machineDeployments"][0]["healthCheck"] = {"enabled": True}
    response = await webhooks.review("validation.cluster.cluster.x-k8s.io", "CREATE", defaulted)
    assert response["allowed"] is False
    (cause,) = response["status"]["details"]["causes"]
    assert cause["field"] == "spec.topology.workers.machineDeployments[0].healthCheck.enabled"


async def test_a_v1beta2_class_change_is_denied_at_its_v1beta2_field(webhooks: Webhooks) -> None:
    await apply_class(webhooks)
    (old,) = [o for o in example(EXAMPLE_V1BETA2) if o["kind"] == "ClusterClass"]
    new = copy.deepcopy(old)
    new["spec"]["infrastructure"]["templateRef"]["kind"] = "DockerMachineTemplate"
    response = await webhooks.review("validation.clusterclass.cluster.x-k8s.io", "UPDATE", new, old)
    assert response["allowed"] is False
    fields = [cause["field"] for cause in response["status"]["details"]["causes"]]
    assert fields == ["spec.infrastructure.templateRef.kind"]


async def test_invalid_variables_are_refused_by_the_defaulting_webhook(webhooks: Webhooks) -> None:
    await apply_class(webhooks)
    cluster = example_cluster()
    cluster["spec"]["topology"]["variables"] = [{"name": "kubeletLogLevel", "value": 11}]
    response = await webhooks.review("default.cluster.cluster.x-k8s.io", "CREATE", cluster)
    assert response["allowed"] is False
    status = response["status"]
    assert (status["code"], status["reason"]) == (422, "Invalid")
    assert status["message"].startswith('Cluster.cluster.x-k8s.io "demo" is invalid: ')
    assert [cause["field"] for cause in status["details"]["causes"]] == [
        "spec.topology.variables[kubeletLogLevel].value"
    ]


async def test_a_cluster_of_a_class_that_does_not_exist_is_allowed_with_a_warning(webhooks: Webhooks) -> None:
    cluster = example_cluster()
    response = await webhooks.review("validation.cluster.cluster.x-k8s.io", "CREATE", cluster)
    assert response["allowed"] is True
    (warning,) = response["warnings"]
    assert "refers to ClusterClass default/quick-start-pools in the topology but it does not exist" in warning


async def test_a_cluster_breaking_the_rules_is_denied_with_field_paths(webhooks: Webhooks) -> None:
    await apply_class(webhooks)
    cluster = example_cluster("c" * 64)  # a Cluster name must be a label value: 63 characters at most
    cluster["spec"]["topology"]["version"] = "v1.28"
    cluster["spec"]["topology"]["workers"]["machinePools"][1]["class"] = "no-such-pool-class"
    response = await webhooks.review("validation.cluster.cluster.x-k8s.io", "CREATE", cluster)
    assert response["allowed"] is False
    causes = {cause["field"]: cause["message"] for cause in response["status"]["details"]["causes"]}
    assert set(causes) >= {"metadata.name", "spec.topology.version", "spec.topology.workers.machinePools[1].class"}
    assert (
        'MachinePoolClass with name "no-such-pool-class" does not exist in ClusterClass "quick-start-pools"'
        in (causes["spec.topology.workers.machinePools[1].class"])
    )


async def test_a_version_decrease_is_denied_and_a_delete_allowed(webhooks: Webhooks) -> None:
    await apply_class(webhooks)
    old = example_cluster()
    old["spec"]["topology"]["variables"] = [{"name": "imageRepository", "value": "registry.k8s.io"}]  # as defaulted
    new = copy.deepcopy(old)
    new["spec"]["topology"]["version"] = "v1.27.3"
    response = await webhooks.review("validation.cluster.cluster.x-k8s.io", "UPDATE", new, old)
    assert response["allowed"] is False
    (cause,) = response["status"]["details"]["causes"]
    assert cause["field"] == "spec.topology.version"
    assert cause["message"].endswith('version cannot be decreased from "1.28.0" to "1.27.3"')
    deleted = await webhooks.review("validation.cluster.cluster.x-k8s.io", "DELETE", None, old)
    assert deleted["allowed"] is True


# --- ClusterClass ---------------------------------------------------------------------------------------------


async def test_a_class_change_that_drops_a_pool_class_in_use_is_denied(webhooks: Webhooks) -> None:
    await apply_class(webhooks)
    await webhooks.client.apply(example_cluster(), field_manager="test")
    stored = await webhooks.client.get(CAPI, "ClusterClass", "quick-start-pools", namespace="default")
    changed = copy.deepcopy(stored)
    changed["spec"]["workers"]["machinePools"] = [
        p for p in changed["spec"]["workers"]["machinePools"] if p["class"] != "large-pool"
    ]

    async def cluster_cached() -> bool:
        return webhooks.controllers.manager.reader.get(CAPI, "Cluster", "default", "demo") is not None

    while not await cluster_cached():
        await asyncio.sleep(0.01)
    response = await webhooks.review("validation.clusterclass.cluster.x-k8s.io", "UPDATE", changed, stored)
    assert response["allowed"] is False
    assert {
        "field": "spec.workers.machinePools",
        "reason": "FieldValueForbidden",
        "message": 'Forbidden: MachinePoolClass "large-pool" cannot be deleted because it is used by Cluster "demo"',
    } in response["status"]["details"]["causes"]
    refused = await webhooks.review("validation.clusterclass.cluster.x-k8s.io", "DELETE", None, stored)
    assert refused["allowed"] is False
    assert (refused["status"]["code"], refused["status"]["reason"]) == (403, "Forbidden")
    assert refused["status"]["message"] == (
        'ClusterClass.cluster.x-k8s.io "quick-start-pools" is forbidden: '
        "ClusterClass cannot be deleted because it is used by 1 Cluster(s)"
    )


async def test_a_class_is_defaulted_with_template_namespaces(webhooks: Webhooks) -> None:
    cc = copy.deepcopy(next(o for o in example() if o["kind"] == "ClusterClass"))
    response = await webhooks.review("default.clusterclass.cluster.x-k8s.io", "CREATE", cc)
    defaulted = apply_patch(cc, response)
    for pool in defaulted["spec"]["workers"]["machinePools"]:
        assert pool["template"]["bootstrap"]["ref"]["namespace"] == "default"
        assert pool["template"]["infrastructure"]["ref"]["namespace"] == "default"


# --- MachinePool --------------------------------------------------------------------------------------------


def machine_pool(**spec: Any) -> Obj:
    return {
        "apiVersion": CAPI,
        "kind": "MachinePool",
        "metadata": {"name": "pool", "namespace": "default"},
        "spec": {
            "clusterName": "demo",
            "template": {
                "spec": {
                    "clusterName": "demo",
                    "version": "1.28.0",
                    "bootstrap": {"dataSecretName": "data"},
                    "infrastructureRef": {"apiVersion": "x/v1", "kind": "K", "name": "n"},
                }
            },
            **spec,
        },
    }


async def test_a_machine_pool_is_defaulted_and_an_immutable_change_denied(webhooks: Webhooks) -> None:
    pool = machine_pool()
    defaulted = apply_patch(pool, await webhooks.review("default.machinepool.cluster.x-k8s.io", "CREATE", pool))
    assert defaulted["spec"]["replicas"] == 1
    assert defaulted["spec"]["template"]["spec"]["version"] == "v1.28.0"
    assert defaulted["metadata"]["labels"] == {"cluster.x-k8s.io/cluster-name": "demo"}
    moved = copy.deepcopy(defaulted)
    moved["spec"]["clusterName"] = "other"
    moved["spec"]["template"]["spec"]["clusterName"] = "other"
    response = await webhooks.review("validation.machinepool.cluster.x-k8s.io", "UPDATE", moved, defaulted)
    assert response["allowed"] is False
    assert "spec.clusterName" in [cause["field"] for cause in response["status"]["details"]["causes"]]


# --- the server -------------------------------------------------------------------------------------------------


async def test_a_body_that_is_no_review_is_answered_with_400(webhooks: Webhooks) -> None:
    response = await webhooks.review("validation.cluster.cluster.x-k8s.io", "CREATE", None, raw=b'{"kind": "Nope"}')
    assert response["allowed"] is False and response["status"]["code"] == 400


async def test_a_renewed_certificate_is_served_to_new_connections(webhooks: Webhooks) -> None:
    renewed = CertificateAuthority("renewed-ca")
    loads = webhooks.server.certificates.loads
    write_pair(webhooks.cert_dir, renewed)
    os.utime(webhooks.cert_dir / "tls.crt", ns=(1, 1))  # a changed stamp even within one clock tick
    while webhooks.server.certificates.loads == loads:
        await asyncio.sleep(0.02)
    url = f"https://127.0.0.1:{webhooks.server.port}{PATHS['validation.cluster.cluster.x-k8s.io']}"
    async with aiohttp.ClientSession() as session:
        with pytest.raises(aiohttp.ClientConnectorCertificateError):
            async with session.post(url, data=b"{}", ssl=webhooks.ssl_context()):
                pass
        async with session.post(url, data=b"{}", ssl=webhooks.ssl_context(renewed)) as answer:
            assert answer.status == 200


async def test_requests_are_counted_in_the_webhook_metrics(webhooks: Webhooks) -> None:
    await webhooks.review("validation.cluster.cluster.x-k8s.io", "CREATE", example_cluster())
    text = webhooks.controllers.manager.metrics.exposition().decode()
    path = PATHS["validation.cluster.cluster.x-k8s.io"]
    assert f'controller_runtime_webhook_requests_total{{code="200",webhook="{path}"}} 1.0' in text
