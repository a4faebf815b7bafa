"""Field selectors on list and watch, as kube-apiserver serves them.

The topology controller caches only the Secrets of type ``cluster.x-k8s.io/secret`` (the Cluster shim and
the workload kubeconfigs), through a field-selected list and watch; these tests hold every backend to
kube-apiserver's answers for that, for the fields every kind has, and for an object whose field changes
out of the selection mid-watch (an Event's ``reason``).
"""

from __future__ import annotations

from typing import Any

import pytest
from contract_support import Events, config_map, summary

from clusterclass.api.objects import Obj
from clusterclass.kube.client import Client
from clusterclass.kube.errors import BadRequest

CLUSTER_SECRET = "cluster.x-k8s.io/secret"


def secret(namespace: str, name: str, secret_type: str, **labels: str) -> Obj:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace}
    if labels:
        metadata["labels"] = labels
    return {"apiVersion": "v1", "kind": "Secret", "metadata": metadata, "type": secret_type}


def event(namespace: str, name: str, reason: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"name": name, "namespace": namespace},
        "involvedObject": {"apiVersion": "v1", "kind": "ConfigMap", "name": "x", "namespace": namespace},
        "reason": reason,
        "message": "m",
        "type": "Normal",
    }


@pytest.fixture
async def secrets(client: Client, namespace: str) -> str:
    await client.create(secret(namespace, "a-shim", CLUSTER_SECRET))
    await client.create(secret(namespace, "a-kubeconfig", CLUSTER_SECRET, **{"cluster.x-k8s.io/cluster-name": "a"}))
    await client.create(secret(namespace, "opaque", "Opaque"))
    return namespace


@pytest.mark.parametrize(
    ("selector", "expected"),
    [
        (f"type={CLUSTER_SECRET}", ["a-kubeconfig", "a-shim"]),
        (f"type=={CLUSTER_SECRET}", ["a-kubeconfig", "a-shim"]),
        (f"type!={CLUSTER_SECRET}", ["opaque"]),
        ("metadata.name=opaque", ["opaque"]),
        (f"type={CLUSTER_SECRET},metadata.name!=a-shim", ["a-kubeconfig"]),
        ("", ["a-kubeconfig", "a-shim", "opaque"]),
    ],
)
async def test_list_secrets_by_field(client: Client, secrets: str, selector: str, expected: list[str]) -> None:
    listed = await client.list("v1", "Secret", namespace=secrets, field_selector=selector)
    assert [o["metadata"]["name"] for o in listed.items] == expected


async def test_field_and_label_selectors_together(client: Client, secrets: str) -> None:
    listed = await client.list(
        "v1",
        "Secret",
        namespace=secrets,
        field_selector=f"type={CLUSTER_SECRET}",
        label_selector="cluster.x-k8s.io/cluster-name",
    )
    assert [o["metadata"]["name"] for o in listed.items] == ["a-kubeconfig"]


async def test_a_field_every_kind_has_selects_custom_resources_and_config_maps(client: Client, namespace: str) -> None:
    for name in ("one", "two"):
        await client.create(config_map(namespace, name))
    listed = await client.list(
        "v1", "ConfigMap", namespace=namespace, field_selector=f"metadata.namespace={namespace},metadata.name=two"
    )
    assert [o["metadata"]["name"] for o in listed.items] == ["two"]


async def test_watch_secrets_by_type_sees_only_the_selected_ones(client: Client, namespace: str) -> None:
    listed = await client.list("v1", "Secret", namespace=namespace, field_selector=f"type={CLUSTER_SECRET}")
    await client.create(secret(namespace, "opaque", "Opaque"))
    await client.create(secret(namespace, "c-shim", CLUSTER_SECRET))
    await client.delete("v1", "Secret", "opaque", namespace=namespace)
    await client.delete("v1", "Secret", "c-shim", namespace=namespace)
    events = Events(
        client.watch(
            "v1",
            "Secret",
            namespace=namespace,
            field_selector=f"type={CLUSTER_SECRET}",
            resource_version=listed.resource_version,
        )
    )
    try:
        seen = await events.take(2)
    finally:
        await events.close()
    assert summary(seen) == [("ADDED", "c-shim"), ("DELETED", "c-shim")]


async def test_an_object_whose_field_changes_moves_in_and_out_of_a_watch(client: Client, namespace: str) -> None:
    listed = await client.list("v1", "Event", namespace=namespace)
    first = await client.create(event(namespace, "e1", "Started"))
    moved = await client.update({**first, "reason": "Finished"})
    await client.update({**moved, "reason": "Started", "message": "again"})
    events = Events(
        client.watch(
            "v1",
            "Event",
            namespace=namespace,
            field_selector="reason=Started",
            resource_version=listed.resource_version,
        )
    )
    try:
        seen = await events.take(3)
    finally:
        await events.close()
    assert summary(seen) == [("ADDED", "e1"), ("DELETED", "e1"), ("ADDED", "e1")]
    assert seen[1]["object"]["reason"] == "Started"  # the last state that matched
    assert seen[2]["object"]["message"] == "again"


@pytest.mark.parametrize("field", ["spec.x", "data.key"])
async def test_a_field_the_kind_cannot_be_selected_on_is_a_bad_request(
    client: Client, namespace: str, field: str
) -> None:
    with pytest.raises(BadRequest) as caught:
        await client.list("v1", "Secret", namespace=namespace, field_selector=f"{field}=1")
    assert caught.value.message == f"field label not supported: {field}"
