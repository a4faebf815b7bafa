"""Watch: events in order from a list's resourceVersion, selectors, bookmarks, and 410 Gone for old history."""

from __future__ import annotations

import pytest
from contract_support import CAPI, Backend, Events, cluster, config_map, rv, summary

from clusterclass.apiserver.watch_cache import INITIAL_EVENTS_END
from clusterclass.kube.client import Client
from clusterclass.kube.errors import Gone


async def test_watch_from_a_list_sees_every_later_change_in_order(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "before"))
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    a = await client.create(config_map(namespace, "a", {"v": "1"}))
    a2 = await client.update({**a, "data": {"v": "2"}})
    await client.create(config_map(namespace, "b"))
    await client.delete("v1", "ConfigMap", "a", namespace=namespace)
    events = Events(client.watch("v1", "ConfigMap", namespace=namespace, resource_version=listed.resource_version))
    try:
        seen = await events.take(4)
    finally:
        await events.close()
    assert summary(seen) == [("ADDED", "a"), ("MODIFIED", "a"), ("ADDED", "b"), ("DELETED", "a")]
    assert seen[1]["object"]["data"] == {"v": "2"}
    assert rv(seen[1]["object"]) == rv(a2)
    versions = [rv(e["object"]) for e in seen]
    assert versions == sorted(versions) and len(set(versions)) == 4
    # a DELETED event carries the object's last state
    assert seen[3]["object"]["data"] == {"v": "2"}
    assert seen[3]["object"]["metadata"]["uid"] == a["metadata"]["uid"]


async def test_live_changes_arrive_as_they_happen(client: Client, namespace: str) -> None:
    listed = await client.list(CAPI, "Cluster", namespace=namespace)
    events = Events(client.watch(CAPI, "Cluster", namespace=namespace, resource_version=listed.resource_version))
    try:
        created = await client.create(cluster(namespace, "c1"))
        assert summary([await events.next_change()]) == [("ADDED", "c1")]
        await client.update_status({**created, "status": {"phase": "Provisioned"}})
        modified = await events.next_change()
        assert (modified["type"], modified["object"]["status"]) == ("MODIFIED", {"phase": "Provisioned"})
        assert modified["object"]["apiVersion"] == CAPI and modified["object"]["kind"] == "Cluster"
    finally:
        await events.close()


async def test_watch_without_resource_version_starts_with_what_exists(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a"))
    await client.create(config_map(namespace, "b"))
    events = Events(client.watch("v1", "ConfigMap", namespace=namespace, bookmarks=True))
    try:
        initial = await events.until(lambda e: e["type"] == "BOOKMARK")
        await client.create(config_map(namespace, "c"))
        live = await events.next_change()
    finally:
        await events.close()
    assert sorted(summary(initial[:-1])) == [("ADDED", "a"), ("ADDED", "b")]
    bookmark = initial[-1]["object"]
    # the end of the initial events is marked by a bookmark with an annotation
    assert bookmark["metadata"]["annotations"] == {INITIAL_EVENTS_END: "true"}
    assert rv(bookmark) >= max(rv(e["object"]) for e in initial[:-1])
    assert summary([live]) == [("ADDED", "c")]


async def test_bookmarks_carry_only_the_resource_version(client: Client, namespace: str) -> None:
    events = Events(client.watch(CAPI, "Cluster", namespace=namespace, bookmarks=True))
    try:
        [bookmark] = await events.until(lambda e: e["type"] == "BOOKMARK")
    finally:
        await events.close()
    obj = bookmark["object"]
    assert set(obj) == {"apiVersion", "kind", "metadata"}
    assert (obj["apiVersion"], obj["kind"]) == (CAPI, "Cluster")
    assert set(obj["metadata"]) == {"resourceVersion", "annotations"}
    assert rv(obj) > 0


async def test_a_quiet_watch_gets_a_bookmark_before_it_ends(client: Client, namespace: str) -> None:
    listed = await client.list(CAPI, "Cluster", namespace=namespace)
    await client.create(cluster(namespace, "c0"))
    events = Events(
        client.watch(CAPI, "Cluster", namespace=namespace, resource_version=listed.resource_version, timeout_seconds=5)
    )
    try:
        assert summary([await events.next_change()]) == [("ADDED", "c0")]
        created = await client.create(cluster(namespace, "c1"))
        rest = await events.rest()
    finally:
        await events.close()
    assert summary([e for e in rest if e["type"] != "BOOKMARK"]) == [("ADDED", "c1")]
    bookmarks = [e for e in rest if e["type"] == "BOOKMARK"]
    assert bookmarks, "kube-apiserver sends a bookmark before a watch with a timeout ends"
    assert rv(bookmarks[-1]["object"]) >= rv(created)
    assert set(bookmarks[-1]["object"]["metadata"]) == {"resourceVersion"}


async def test_no_bookmarks_unless_asked(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a"))
    events = Events(client.watch("v1", "ConfigMap", namespace=namespace, bookmarks=False, timeout_seconds=3))
    try:
        seen = await events.rest()
    finally:
        await events.close()
    assert summary(seen) == [("ADDED", "a")]


async def test_timeout_seconds_ends_the_stream(client: Client, namespace: str) -> None:
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    events = Events(
        client.watch(
            "v1", "ConfigMap", namespace=namespace, resource_version=listed.resource_version, timeout_seconds=1
        )
    )
    try:
        assert [e for e in await events.rest() if e["type"] != "BOOKMARK"] == []
    finally:
        await events.close()


async def test_a_label_selector_filters_and_moves_objects_in_and_out(client: Client, namespace: str) -> None:
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    other = await client.create(config_map(namespace, "other", labels={"app": "no"}))
    a = await client.create(config_map(namespace, "a", labels={"app": "yes"}))
    joined = await client.update({**other, "metadata": {**other["metadata"], "labels": {"app": "yes"}}})
    a2 = await client.update({**a, "data": {"x": "1"}})
    left = await client.update({**a2, "metadata": {**a2["metadata"], "labels": {"app": "no"}}})
    await client.delete("v1", "ConfigMap", "other", namespace=namespace)
    events = Events(
        client.watch(
            "v1", "ConfigMap", namespace=namespace, label_selector="app=yes", resource_version=listed.resource_version
        )
    )
    try:
        seen = await events.take(5)
    finally:
        await events.close()
    assert summary(seen) == [
        ("ADDED", "a"),
        ("ADDED", "other"),  # its labels now match
        ("MODIFIED", "a"),
        ("DELETED", "a"),  # its labels no longer match: it leaves the selection
        ("DELETED", "other"),
    ]
    assert rv(seen[1]["object"]) == rv(joined)
    # the object that left carries its last state that matched, at the resourceVersion of the change
    assert seen[3]["object"]["metadata"]["labels"] == {"app": "yes"}
    assert seen[3]["object"]["data"] == {"x": "1"}
    assert rv(seen[3]["object"]) == rv(left)


async def test_a_namespaced_watch_sees_only_its_namespace(client: Client, namespace: str) -> None:
    other = (await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "w-"}}))[
        "metadata"
    ]["name"]
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    await client.create(config_map(other, "elsewhere"))
    await client.create(config_map(namespace, "here"))
    events = Events(client.watch("v1", "ConfigMap", namespace=namespace, resource_version=listed.resource_version))
    try:
        assert summary([await events.next_change()]) == [("ADDED", "here")]
    finally:
        await events.close()


async def test_an_all_namespaces_watch_sees_every_namespace(client: Client, namespace: str) -> None:
    other = (await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "w-"}}))[
        "metadata"
    ]["name"]
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    mark = {"contract-watch": namespace}
    await client.create(config_map(other, "there", labels=mark))
    await client.create(config_map(namespace, "here", labels=mark))
    events = Events(
        client.watch(
            "v1", "ConfigMap", label_selector=f"contract-watch={namespace}", resource_version=listed.resource_version
        )
    )
    try:
        seen = await events.take(2)
    finally:
        await events.close()
    assert [(e["object"]["metadata"]["namespace"], e["object"]["metadata"]["name"]) for e in seen] == [
        (other, "there"),
        (namespace, "here"),
    ]


async def test_deletion_with_finalizers_is_a_modification_then_a_deletion(client: Client, namespace: str) -> None:
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    await client.create(config_map(namespace, "a", finalizers=["example.com/a"]))
    marked = await client.delete("v1", "ConfigMap", "a", namespace=namespace)
    assert marked is not None
    await client.update({**marked, "metadata": {**marked["metadata"], "finalizers": []}})
    events = Events(client.watch("v1", "ConfigMap", namespace=namespace, resource_version=listed.resource_version))
    try:
        seen = await events.take(3)
    finally:
        await events.close()
    assert summary(seen) == [("ADDED", "a"), ("MODIFIED", "a"), ("DELETED", "a")]
    assert seen[1]["object"]["metadata"]["deletionTimestamp"]


async def test_a_too_old_resource_version_is_gone(backend: Backend, namespace: str) -> None:
    client = backend.client
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    await client.create(config_map(namespace, "a"))
    await backend.expire_history()
    with pytest.raises(Gone) as gone:
        async for _ in client.watch(
            "v1", "ConfigMap", namespace=namespace, resource_version=listed.resource_version, timeout_seconds=10
        ):
            pass
    assert gone.value.code == 410
    assert gone.value.reason == "Expired"
    # a fresh list gives a resourceVersion to watch from again
    again = await client.list("v1", "ConfigMap", namespace=namespace)
    events = Events(client.watch("v1", "ConfigMap", namespace=namespace, resource_version=again.resource_version))
    try:
        await client.create(config_map(namespace, "b"))
        assert summary([await events.next_change()]) == [("ADDED", "b")]
    finally:
        await events.close()


async def test_writes_that_store_nothing_send_no_events(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a", {"k": "v"}), field_manager="m")
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    await client.update(a, field_manager="m")  # no change
    await client.create(config_map(namespace, "dry"), dry_run=True)
    await client.update({**a, "data": {"k": "dry"}}, dry_run=True)
    await client.delete("v1", "ConfigMap", "a", namespace=namespace, dry_run=True)
    await client.create(config_map(namespace, "real"))
    events = Events(client.watch("v1", "ConfigMap", namespace=namespace, resource_version=listed.resource_version))
    try:
        assert summary([await events.next_change()]) == [("ADDED", "real")]
    finally:
        await events.close()
