"""metadata.generation and the status subresource, as kube-apiserver keeps them for custom resources."""

from __future__ import annotations

import pytest
from contract_support import CAPI, CLUSTER_SPEC, cluster, config_map, rv

from clusterclass.kube.client import Client
from clusterclass.kube.errors import Conflict, NotFound


async def test_a_custom_resource_starts_at_generation_one(client: Client, namespace: str) -> None:
    created = await client.create(cluster(namespace, "c1"))
    assert created["metadata"]["generation"] == 1


async def test_generation_follows_spec_changes_only(client: Client, namespace: str) -> None:
    c = await client.create(cluster(namespace, "c1"))
    spec_changed = await client.update({**c, "spec": {"paused": True}})
    assert spec_changed["metadata"]["generation"] == 2
    labelled = await client.update({**spec_changed, "metadata": {**spec_changed["metadata"], "labels": {"a": "b"}}})
    assert labelled["metadata"]["generation"] == 2
    assert rv(labelled) > rv(spec_changed)
    patched = await client.patch(CAPI, "Cluster", "c1", {"spec": {"paused": False}}, namespace=namespace)
    assert patched["metadata"]["generation"] == 3
    annotated = await client.patch(
        CAPI, "Cluster", "c1", {"metadata": {"annotations": {"x": "y"}}}, namespace=namespace
    )
    assert annotated["metadata"]["generation"] == 3


async def test_create_drops_status(client: Client, namespace: str) -> None:
    created = await client.create({**cluster(namespace, "c1"), "status": {"phase": "Provisioned"}})
    assert "status" not in created
    assert "status" not in await client.get(CAPI, "Cluster", "c1", namespace=namespace)


async def test_update_ignores_status(client: Client, namespace: str) -> None:
    c = await client.create(cluster(namespace, "c1"))
    updated = await client.update({**c, "status": {"phase": "Provisioned"}})
    assert "status" not in updated
    assert rv(updated) == rv(c)  # nothing changed, nothing written
    both = await client.update({**c, "spec": {"paused": True}, "status": {"phase": "Provisioned"}})
    assert both["spec"] == {"paused": True} and "status" not in both


async def test_update_status_changes_only_status(client: Client, namespace: str) -> None:
    c = await client.create(cluster(namespace, "c1"))
    attempt = {
        **c,
        "metadata": {**c["metadata"], "labels": {"ignored": "yes"}},
        "spec": {"paused": True},
        "status": {"phase": "Provisioned", "infrastructureReady": True},
    }
    updated = await client.update_status(attempt)
    assert updated["status"] == {"phase": "Provisioned", "infrastructureReady": True}
    assert updated["spec"] == c["spec"]
    assert "labels" not in updated["metadata"]
    assert updated["metadata"]["generation"] == 1
    assert rv(updated) > rv(c)
    stored = await client.get(CAPI, "Cluster", "c1", namespace=namespace)
    assert stored == updated


async def test_status_survives_spec_updates(client: Client, namespace: str) -> None:
    c = await client.create(cluster(namespace, "c1"))
    with_status = await client.update_status({**c, "status": {"phase": "Provisioned"}})
    without = {k: v for k, v in with_status.items() if k != "status"}
    updated = await client.update({**without, "spec": {"paused": True}})
    assert updated["status"] == {"phase": "Provisioned"}


async def test_update_status_with_a_stale_resource_version_is_a_conflict(client: Client, namespace: str) -> None:
    c = await client.create(cluster(namespace, "c1"))
    await client.update({**c, "spec": {"paused": True}})
    with pytest.raises(Conflict):
        await client.update_status({**c, "status": {"phase": "Provisioned"}})


async def test_a_status_patch_changes_only_status(client: Client, namespace: str) -> None:
    await client.create(cluster(namespace, "c1"))
    patched = await client.patch(
        CAPI,
        "Cluster",
        "c1",
        {"spec": {"paused": True}, "status": {"phase": "Provisioning"}},
        namespace=namespace,
        status=True,
    )
    assert patched["status"] == {"phase": "Provisioning"}
    assert patched["spec"] == CLUSTER_SPEC
    assert patched["metadata"]["generation"] == 1


async def test_a_kind_without_status_subresource_has_no_status_endpoint(client: Client, namespace: str) -> None:
    cm = await client.create(config_map(namespace, "a"))
    with pytest.raises(NotFound):
        await client.update_status({**cm, "data": {"x": "1"}})
    with pytest.raises(NotFound):
        await client.patch("v1", "ConfigMap", "a", {"data": {"x": "1"}}, namespace=namespace, status=True)


async def test_deletion_bumps_the_generation_of_a_custom_resource(client: Client, namespace: str) -> None:
    await client.create(cluster(namespace, "c1", finalizers=["example.com/hold"]))
    marked = await client.delete(CAPI, "Cluster", "c1", namespace=namespace)
    assert marked is not None
    assert marked["metadata"]["generation"] == 2
