"""Finalizers and deletionTimestamp: a delete marks, removing the last finalizer removes."""

from __future__ import annotations

import pytest
from contract_support import CAPI, assert_status, causes, cluster, config_map, rv

from clusterclass.kube.client import Client
from clusterclass.kube.errors import Invalid, NotFound


async def test_delete_with_finalizers_marks_the_object(client: Client, namespace: str) -> None:
    created = await client.create(config_map(namespace, "a", finalizers=["example.com/a"]))
    marked = await client.delete("v1", "ConfigMap", "a", namespace=namespace)
    assert marked is not None
    meta = marked["metadata"]
    assert meta["deletionTimestamp"]
    assert meta["deletionGracePeriodSeconds"] == 0
    assert meta["finalizers"] == ["example.com/a"]
    assert rv(marked) > rv(created)
    assert await client.get("v1", "ConfigMap", "a", namespace=namespace) == marked


async def test_deleting_again_changes_nothing(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a", finalizers=["example.com/a"]))
    marked = await client.delete("v1", "ConfigMap", "a", namespace=namespace)
    again = await client.delete("v1", "ConfigMap", "a", namespace=namespace)
    assert again is not None
    assert again["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]  # type: ignore[index]
    assert rv(again) == rv(marked)  # type: ignore[arg-type]


async def test_removing_the_last_finalizer_removes_the_object(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a", finalizers=["example.com/a", "example.com/b"]))
    marked = await client.delete("v1", "ConfigMap", "a", namespace=namespace)
    assert marked is not None
    one_left = await client.update({**marked, "metadata": {**marked["metadata"], "finalizers": ["example.com/b"]}})
    assert one_left["metadata"]["finalizers"] == ["example.com/b"]
    assert (await client.get("v1", "ConfigMap", "a", namespace=namespace))["metadata"]["deletionTimestamp"]
    await client.update({**one_left, "metadata": {**one_left["metadata"], "finalizers": []}})
    with pytest.raises(NotFound):
        await client.get("v1", "ConfigMap", "a", namespace=namespace)


async def test_a_patch_that_removes_the_last_finalizer_removes_the_object(client: Client, namespace: str) -> None:
    await client.create(cluster(namespace, "c1", finalizers=["example.com/a"]))
    await client.delete(CAPI, "Cluster", "c1", namespace=namespace)
    await client.patch(CAPI, "Cluster", "c1", {"metadata": {"finalizers": None}}, namespace=namespace)
    with pytest.raises(NotFound):
        await client.get(CAPI, "Cluster", "c1", namespace=namespace)


async def test_no_new_finalizers_once_deletion_started(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a", finalizers=["example.com/a"]))
    marked = await client.delete("v1", "ConfigMap", "a", namespace=namespace)
    assert marked is not None
    with pytest.raises(Invalid) as refused:
        await client.update(
            {**marked, "metadata": {**marked["metadata"], "finalizers": ["example.com/a", "example.com/b"]}}
        )
    assert_status(refused.value, 422, "Invalid")
    assert causes(refused.value) == [("FieldValueForbidden", "metadata.finalizers")]
    assert refused.value.details["name"] == "a" and refused.value.details["kind"] == "ConfigMap"


async def test_finalizers_can_be_added_and_removed_on_a_live_object(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    held = await client.update({**a, "metadata": {**a["metadata"], "finalizers": ["example.com/a"]}})
    assert held["metadata"]["finalizers"] == ["example.com/a"]
    released = await client.update({**held, "metadata": {**held["metadata"], "finalizers": []}})
    assert "finalizers" not in released["metadata"]
    assert "deletionTimestamp" not in released["metadata"]


async def test_a_marked_object_can_still_change_its_spec(client: Client, namespace: str) -> None:
    await client.create(cluster(namespace, "c1", finalizers=["example.com/a"]))
    marked = await client.delete(CAPI, "Cluster", "c1", namespace=namespace)
    assert marked is not None
    changed = await client.update({**marked, "spec": {"paused": True}})
    assert changed["spec"] == {"paused": True}
    assert changed["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]


async def test_an_update_cannot_set_the_deletion_timestamp(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a", finalizers=["example.com/a"]))
    with pytest.raises(Invalid) as refused:
        await client.update({**a, "metadata": {**a["metadata"], "deletionTimestamp": "2030-01-01T00:00:00Z"}})
    assert causes(refused.value) == [("FieldValueInvalid", "metadata.deletionTimestamp")]


async def test_an_update_cannot_clear_the_deletion_timestamp(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a", finalizers=["example.com/a"]))
    marked = await client.delete("v1", "ConfigMap", "a", namespace=namespace)
    assert marked is not None
    meta = {k: v for k, v in marked["metadata"].items() if k != "deletionTimestamp"}
    still = await client.update({**marked, "metadata": meta, "data": {"x": "2"}})
    assert still["metadata"]["deletionTimestamp"] == marked["metadata"]["deletionTimestamp"]
