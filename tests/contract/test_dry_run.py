"""Dry run: every check runs, the answer is what would be stored, and nothing is stored."""

from __future__ import annotations

import pytest
from contract_support import CAPI, ROLLOUT_STRATEGY_DEFAULT, cluster, config_map, control_plane, machine_set, rv

from clusterclass.kube.client import Client
from clusterclass.kube.errors import AlreadyExists, Conflict, Invalid, NotFound


async def test_dry_run_create_stores_nothing(client: Client, namespace: str) -> None:
    answer = await client.create(config_map(namespace, "a", {"k": "v"}), dry_run=True)
    assert answer["metadata"]["name"] == "a" and answer["data"] == {"k": "v"}
    assert answer["metadata"]["uid"]
    assert answer["metadata"]["creationTimestamp"]
    with pytest.raises(NotFound):
        await client.get("v1", "ConfigMap", "a", namespace=namespace)
    await client.create(config_map(namespace, "a"))


async def test_dry_run_create_still_checks(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a"))
    with pytest.raises(AlreadyExists):
        await client.create(config_map(namespace, "a"), dry_run=True)
    with pytest.raises(NotFound):
        await client.create(config_map("no-such-namespace", "a"), dry_run=True)
    with pytest.raises(Invalid):
        await client.create(machine_set(namespace, "ms", {"clusterName": "c1"}), dry_run=True)


async def test_dry_run_create_defaults_like_a_real_create(client: Client, namespace: str) -> None:
    answer = await client.create(control_plane(namespace, "kcp"), dry_run=True)
    assert answer["spec"]["rolloutStrategy"] == ROLLOUT_STRATEGY_DEFAULT
    assert answer["metadata"]["generation"] == 1


async def test_dry_run_update_stores_nothing(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a", {"k": "v"}))
    answer = await client.update({**a, "data": {"k": "changed"}}, dry_run=True)
    assert answer["data"] == {"k": "changed"}
    assert await client.get("v1", "ConfigMap", "a", namespace=namespace) == a
    stale = await client.update({**a, "data": {"k": "real"}})
    with pytest.raises(Conflict):
        await client.update({**a, "data": {"k": "again"}}, dry_run=True)
    assert rv(stale) > rv(a)


async def test_dry_run_update_status_stores_nothing(client: Client, namespace: str) -> None:
    c = await client.create(cluster(namespace, "c1"))
    answer = await client.update_status({**c, "status": {"phase": "Provisioned"}}, dry_run=True)
    assert answer["status"] == {"phase": "Provisioned"}
    assert await client.get(CAPI, "Cluster", "c1", namespace=namespace) == c


async def test_dry_run_patch_stores_nothing(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a", {"k": "v"}))
    merged = await client.patch("v1", "ConfigMap", "a", {"data": {"x": "1"}}, namespace=namespace, dry_run=True)
    assert merged["data"] == {"k": "v", "x": "1"}
    json_patched = await client.patch(
        "v1",
        "ConfigMap",
        "a",
        [{"op": "remove", "path": "/data/k"}],
        patch_type="json",
        namespace=namespace,
        dry_run=True,
    )
    assert "k" not in json_patched.get("data", {})
    assert await client.get("v1", "ConfigMap", "a", namespace=namespace) == a


async def test_dry_run_apply_stores_nothing(client: Client, namespace: str) -> None:
    answer = await client.apply(config_map(namespace, "a", {"k": "v"}), field_manager="m", dry_run=True)
    assert answer["data"] == {"k": "v"}
    assert [e["manager"] for e in answer["metadata"]["managedFields"]] == ["m"]
    with pytest.raises(NotFound):
        await client.get("v1", "ConfigMap", "a", namespace=namespace)
    a = await client.apply(config_map(namespace, "a", {"k": "v"}), field_manager="m")
    changed = await client.apply(config_map(namespace, "a", {"k": "w"}), field_manager="m", dry_run=True)
    assert changed["data"] == {"k": "w"}
    assert await client.get("v1", "ConfigMap", "a", namespace=namespace) == a


async def test_dry_run_delete_stores_nothing(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    assert await client.delete("v1", "ConfigMap", "a", namespace=namespace, dry_run=True) is None
    assert await client.get("v1", "ConfigMap", "a", namespace=namespace) == a
    held = await client.create(config_map(namespace, "held", finalizers=["example.com/a"]))
    would = await client.delete("v1", "ConfigMap", "held", namespace=namespace, dry_run=True)
    assert would is not None and would["metadata"]["deletionTimestamp"]
    assert await client.get("v1", "ConfigMap", "held", namespace=namespace) == held
    with pytest.raises(NotFound):
        await client.delete("v1", "ConfigMap", "missing", namespace=namespace, dry_run=True)
