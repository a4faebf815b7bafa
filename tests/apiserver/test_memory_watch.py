"""MemoryStore.watch: kube-apiserver's watch cache semantics, delivered thread-safely into any event loop."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from typing import Any

import pytest
from memory_support import fixed_store

from clusterclass.api.objects import Obj
from clusterclass.apiserver.inprocess_client import MemoryClient
from clusterclass.apiserver.store import MemoryStore
from clusterclass.apiserver.watch_cache import FINAL_BOOKMARK_LEAD, INITIAL_EVENTS_END
from clusterclass.kube.client import WatchEvent
from clusterclass.kube.errors import ApiError, BadRequest, Gone, NotFound

CAPI = "cluster.x-k8s.io/v1beta1"

pytestmark = pytest.mark.timeout(30)


def new_store(**options: Any) -> MemoryStore:
    return fixed_store(**options)


@pytest.fixture
def store() -> MemoryStore:
    return new_store()


def config_map(name: str, namespace: str = "default", labels: dict[str, str] | None = None, **data: str) -> Obj:
    meta: Obj = {"name": name, "namespace": namespace}
    if labels is not None:
        meta["labels"] = labels
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta, "data": data}


async def next_event(watch: AsyncIterator[WatchEvent]) -> WatchEvent:
    """The next event; the wait is a guard against a hang, not a timing assertion."""
    return await asyncio.wait_for(anext(watch), 10)


async def rest(watch: AsyncIterator[WatchEvent]) -> list[WatchEvent]:
    """Every event until the stream ends."""
    return [event async for event in watch]


def summary(event: WatchEvent) -> tuple[str, str, str]:
    obj = event["object"]
    return event["type"], obj["metadata"].get("name", ""), obj["metadata"]["resourceVersion"]


async def test_without_resource_version_current_objects_come_first_then_a_bookmark_then_changes(
    store: MemoryStore,
) -> None:
    b = store.create(config_map("b"))
    a = store.create(config_map("a"))
    at_open = store.resource_version
    watch = store.watch("v1", "ConfigMap")
    assert summary(await next_event(watch)) == ("ADDED", "a", a["metadata"]["resourceVersion"])
    assert summary(await next_event(watch)) == ("ADDED", "b", b["metadata"]["resourceVersion"])
    bookmark = await next_event(watch)
    assert bookmark == {
        "type": "BOOKMARK",
        "object": {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"resourceVersion": at_open, "annotations": {INITIAL_EVENTS_END: "true"}},
        },
    }
    c = store.create(config_map("c"))
    a["data"] = {"x": "1"}
    a2 = store.update(a)
    store.delete("v1", "ConfigMap", "b", namespace="default")
    assert summary(await next_event(watch)) == ("ADDED", "c", c["metadata"]["resourceVersion"])
    modified = await next_event(watch)
    assert modified == {"type": "MODIFIED", "object": a2}
    deleted = await next_event(watch)
    assert deleted["type"] == "DELETED"
    assert deleted["object"]["metadata"]["resourceVersion"] == store.resource_version  # the deletion's
    assert deleted["object"]["metadata"]["uid"] == b["metadata"]["uid"]
    watch.close()
    assert await rest(watch) == []


@pytest.mark.parametrize("resource_version", [None, "", "0"])
async def test_resource_version_unset_or_zero_starts_with_current_objects(
    store: MemoryStore, resource_version: str | None
) -> None:
    store.create(config_map("a"))
    watch = store.watch("v1", "ConfigMap", resource_version=resource_version, bookmarks=False)
    assert summary(await next_event(watch))[:2] == ("ADDED", "a")
    store.create(config_map("b"))
    assert summary(await next_event(watch))[:2] == ("ADDED", "b")  # no bookmark without asking for one
    watch.close()


async def test_from_a_resource_version_only_later_changes_arrive(store: MemoryStore) -> None:
    store.create(config_map("a"))
    listed_at = store.list("v1", "ConfigMap").resource_version
    store.create(config_map("b"))
    store.patch("v1", "ConfigMap", "a", {"data": {"k": "v"}}, namespace="default")
    watch = store.watch("v1", "ConfigMap", resource_version=listed_at, bookmarks=False)
    assert [summary(await next_event(watch))[:2] for _ in range(2)] == [("ADDED", "b"), ("MODIFIED", "a")]
    watch.close()
    assert await rest(watch) == []


async def test_a_resource_version_older_than_the_history_is_gone() -> None:
    store = new_store(history_size=2)
    first = store.create(config_map("a"))["metadata"]["resourceVersion"]
    for name in "bcd":
        store.create(config_map(name))
    oldest_kept = int(store.resource_version) - 1
    with pytest.raises(Gone) as err:
        store.watch("v1", "ConfigMap", resource_version=first)
    assert (err.value.code, err.value.reason) == (410, "Expired")
    assert err.value.message == f"too old resource version: {first} ({oldest_kept - 1})"
    watch = store.watch("v1", "ConfigMap", resource_version=str(oldest_kept - 1), bookmarks=False)
    assert [summary(await next_event(watch))[1] for _ in range(2)] == ["c", "d"]
    watch.close()


async def test_the_history_is_per_kind_so_busy_kinds_do_not_push_others_out() -> None:
    store = new_store(history_size=2)
    listed_at = store.list("v1", "ConfigMap").resource_version
    for i in range(10):
        store.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"s{i}", "namespace": "default"}})
    watch = store.watch("v1", "ConfigMap", resource_version=listed_at, bookmarks=False)
    store.create(config_map("a"))
    assert summary(await next_event(watch))[:2] == ("ADDED", "a")
    watch.close()


async def test_label_selector_filters_and_turns_transitions_into_added_and_deleted(store: MemoryStore) -> None:
    watch = store.watch("v1", "ConfigMap", label_selector="app=web", resource_version=store.resource_version)
    store.create(config_map("other", labels={"app": "db"}))
    created = store.create(config_map("a", labels={"app": "db"}))
    store.patch("v1", "ConfigMap", "a", {"metadata": {"labels": {"app": "web"}}}, namespace="default")
    joined = await next_event(watch)
    assert summary(joined) == ("ADDED", "a", store.resource_version)
    store.patch("v1", "ConfigMap", "a", {"data": {"k": "v"}}, namespace="default")
    assert summary(await next_event(watch))[:2] == ("MODIFIED", "a")
    before_leaving = store.get("v1", "ConfigMap", "a", namespace="default")
    store.patch("v1", "ConfigMap", "a", {"metadata": {"labels": {"app": "db"}}}, namespace="default")
    left = await next_event(watch)
    # the previous content (still matching), with the resourceVersion of the change that made it leave
    assert left["type"] == "DELETED"
    assert left["object"]["metadata"]["labels"] == {"app": "web"}
    assert left["object"]["data"] == before_leaving["data"]
    assert left["object"]["metadata"]["resourceVersion"] == store.resource_version
    store.delete("v1", "ConfigMap", "a", namespace="default")  # not matching any more: nothing
    store.create(config_map("z", labels={"app": "web"}))
    assert summary(await next_event(watch))[:2] == ("ADDED", "z")
    assert created["metadata"]["uid"]
    watch.close()


async def test_namespace_filter(store: MemoryStore) -> None:
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    watch = store.watch("v1", "ConfigMap", namespace="other", bookmarks=False)
    store.create(config_map("a"))
    store.create(config_map("b", "other"))
    assert summary(await next_event(watch))[:2] == ("ADDED", "b")
    watch.close()


async def test_cluster_scoped_watch_ignores_a_namespace(store: MemoryStore) -> None:
    watch = store.watch("v1", "Namespace", namespace="whatever", bookmarks=False)
    assert summary(await next_event(watch))[:2] == ("ADDED", "default")
    watch.close()


async def test_objects_are_served_in_the_requested_version(store: MemoryStore) -> None:
    store.register_kind("cluster.x-k8s.io/v1beta2", "Cluster")
    watch = store.watch("cluster.x-k8s.io/v1beta2", "Cluster", bookmarks=False)
    store.create({"apiVersion": CAPI, "kind": "Cluster", "metadata": {"name": "c", "namespace": "default"}})
    event = await next_event(watch)
    assert event["object"]["apiVersion"] == "cluster.x-k8s.io/v1beta2"
    assert store.get(CAPI, "Cluster", "c", namespace="default")["apiVersion"] == CAPI
    watch.close()


async def test_events_are_copies(store: MemoryStore) -> None:
    watch = store.watch("v1", "ConfigMap", bookmarks=False)
    store.create(config_map("a", k="v"))
    event = await next_event(watch)
    event["object"]["data"]["k"] = "changed"
    assert store.get("v1", "ConfigMap", "a", namespace="default")["data"] == {"k": "v"}
    watch.close()


async def test_writes_that_store_nothing_send_nothing(store: MemoryStore) -> None:
    created = store.create(config_map("a", k="v"))
    watch = store.watch("v1", "ConfigMap", resource_version=store.resource_version, bookmarks=False)
    store.create(config_map("dry"), dry_run=True)
    store.update(created)  # no change
    store.patch("v1", "ConfigMap", "a", {"data": {"k": "w"}}, namespace="default", dry_run=True)
    store.delete("v1", "ConfigMap", "a", namespace="default", dry_run=True)
    store.create(config_map("real"))
    assert summary(await next_event(watch))[:2] == ("ADDED", "real")
    watch.close()


async def test_bookmarks_after_quiet_carry_the_store_resource_version() -> None:
    store = new_store(bookmark_interval=0.01)
    watch = store.watch("v1", "ConfigMap", resource_version=store.resource_version)
    store.create({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}})
    bookmark = await next_event(watch)
    assert bookmark == {
        "type": "BOOKMARK",
        "object": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"resourceVersion": store.resource_version}},
    }
    store.create(config_map("a"))
    assert summary(await next_event(watch))[:2] == ("ADDED", "a")
    watch.close()


async def test_timeout_seconds_ends_the_stream() -> None:
    store = new_store(bookmark_interval=0.01)
    watch = store.watch("v1", "ConfigMap", resource_version=store.resource_version, timeout_seconds=0.05)
    assert await rest(watch) == []
    assert watch.closed


async def test_a_watcher_that_falls_behind_is_terminated_after_what_it_has_buffered() -> None:
    store = new_store(watch_buffer=2)
    watch = store.watch("v1", "ConfigMap", resource_version=store.resource_version, bookmarks=False)
    for name in "abcd":
        store.create(config_map(name))  # the writer never waits for the reader
    events = await rest(watch)
    assert [summary(event)[1] for event in events] == ["a", "b"]
    # the reader resumes from what it saw and gets the rest from the history
    resumed = store.watch("v1", "ConfigMap", resource_version=events[-1]["object"]["metadata"]["resourceVersion"])
    assert [summary(await next_event(resumed))[1] for _ in range(2)] == ["c", "d"]
    resumed.close()


async def test_writes_from_other_threads_wake_the_reader(store: MemoryStore) -> None:
    watch = store.watch("v1", "ConfigMap", resource_version=store.resource_version, bookmarks=False)

    def write() -> None:
        for i in range(50):
            store.create(config_map(f"cm-{i}"))

    writer = threading.Thread(target=write)
    writer.start()
    names = [summary(await next_event(watch))[1] for _ in range(50)]
    writer.join()
    assert names == [f"cm-{i}" for i in range(50)]
    watch.close()


async def test_a_watch_read_on_another_event_loop(store: MemoryStore) -> None:
    watch = store.watch("v1", "ConfigMap", resource_version=store.resource_version, bookmarks=False)
    received: list[str] = []

    async def read() -> None:
        async for event in watch:
            received.append(event["object"]["metadata"]["name"])
            if len(received) == 3:
                return

    reader = threading.Thread(target=asyncio.run, args=(read(),))
    reader.start()
    for name in "abc":
        store.create(config_map(name))
        await asyncio.sleep(0)
    await asyncio.to_thread(reader.join)
    assert received == ["a", "b", "c"]
    watch.close()


async def test_close_from_another_task_ends_a_waiting_reader(store: MemoryStore) -> None:
    watch = store.watch("v1", "ConfigMap", resource_version=store.resource_version, bookmarks=False)
    reader = asyncio.create_task(rest(watch))
    await asyncio.sleep(0)
    watch.close()
    assert await asyncio.wait_for(reader, 10) == []


def test_a_resource_version_that_is_not_a_number_is_refused_as_kube_apiserver_does(store: MemoryStore) -> None:
    with pytest.raises(ApiError) as err:
        store.watch("v1", "ConfigMap", resource_version="abc")
    assert (err.value.code, err.value.message) == (
        500,
        'resourceVersion: Invalid value: "abc": strconv.ParseUint: parsing "abc": invalid syntax',
    )
    assert "reason" not in err.value.status


async def test_a_resource_version_not_reached_yet_waits_for_it(store: MemoryStore) -> None:
    future = int(store.resource_version) + 2
    watch = store.watch("v1", "ConfigMap", resource_version=str(future), bookmarks=False)
    for name in "abc":
        store.create(config_map(name))
    assert summary(await next_event(watch)) == ("ADDED", "c", str(future + 1))
    watch.close()


def test_watch_of_an_unknown_kind_or_with_a_bad_selector(store: MemoryStore) -> None:
    with pytest.raises(NotFound):
        store.watch("example.com/v1", "Widget")
    with pytest.raises(BadRequest, match="unable to parse"):
        store.watch("v1", "ConfigMap", label_selector="a in (")


async def test_namespace_deletion_is_seen_as_events(store: MemoryStore) -> None:
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    store.create(config_map("a", "ns"))
    namespaces = store.watch("v1", "Namespace", resource_version=store.resource_version, bookmarks=False)
    maps = store.watch("v1", "ConfigMap", resource_version=store.resource_version, bookmarks=False)
    store.delete("v1", "Namespace", "ns")
    assert summary(await next_event(maps))[:2] == ("DELETED", "a")
    marked, finalized, deleted = [await next_event(namespaces) for _ in range(3)]
    assert (marked["type"], marked["object"]["status"]["phase"]) == ("MODIFIED", "Terminating")
    assert (finalized["type"], finalized["object"]["spec"]) == ("MODIFIED", {})
    assert deleted["type"] == "DELETED"
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in (marked, finalized, deleted)]
    assert rvs == sorted(rvs) and len(set(rvs)) == 3
    namespaces.close()
    maps.close()


# -- through the Client -------------------------------------------------------------------------------


async def test_client_watch_raises_gone_from_the_iterator() -> None:
    client = MemoryClient(new_store(history_size=1))
    first = (await client.create(config_map("a")))["metadata"]["resourceVersion"]
    await client.create(config_map("b"))
    await client.create(config_map("c"))
    stream = client.watch("v1", "ConfigMap", resource_version=first)
    with pytest.raises(Gone, match="too old resource version"):
        await anext(stream)


async def test_client_close_ends_its_watches() -> None:
    client = MemoryClient()
    await client.create(config_map("a"))
    stream = client.watch("v1", "ConfigMap", bookmarks=False)
    assert client.store.watch_count() == 0  # opened by the first read
    assert summary(await next_event(stream))[:2] == ("ADDED", "a")
    assert client.store.watch_count() == 1
    await client.close()
    assert await rest(stream) == []
    assert client.store.watch_count() == 0


async def test_a_watch_about_to_time_out_gets_a_last_bookmark_when_its_kind_changed() -> None:
    store = new_store(bookmark_interval=60)
    start, timeout = store.resource_version, FINAL_BOOKMARK_LEAD + 0.5
    quiet = store.watch("v1", "Secret", resource_version=start, timeout_seconds=timeout)
    watch = store.watch("v1", "ConfigMap", resource_version=start, timeout_seconds=timeout)
    created = store.create(config_map("a"))
    quiet_events, events = await asyncio.gather(rest(quiet), rest(watch))
    assert quiet_events == []  # its kind did not change: no bookmark
    # the change was the last event sent, and kube-apiserver still bookmarks it before the end
    assert [summary(e) for e in events] == [
        ("ADDED", "a", created["metadata"]["resourceVersion"]),
        ("BOOKMARK", "", created["metadata"]["resourceVersion"]),
    ]


async def test_concurrent_writers_are_seen_in_resource_version_order(store: MemoryStore) -> None:
    watch = store.watch("v1", "ConfigMap", resource_version=store.resource_version, bookmarks=False)

    def write(prefix: str) -> None:
        for i in range(40):
            created = store.create(config_map(f"{prefix}-{i}"))
            store.patch("v1", "ConfigMap", created["metadata"]["name"], {"data": {"i": str(i)}}, namespace="default")

    writers = [threading.Thread(target=write, args=(f"w{n}",)) for n in range(4)]
    for writer in writers:
        writer.start()
    events = [await next_event(watch) for _ in range(4 * 40 * 2)]
    for writer in writers:
        writer.join()
    versions = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert versions == sorted(versions) and len(set(versions)) == len(versions)
    assert versions[-1] == int(store.resource_version)
    watch.close()


async def test_compaction_makes_every_earlier_resource_version_too_old(store: MemoryStore) -> None:
    store.create(config_map("a"))
    listed_at = store.list("v1", "ConfigMap").resource_version
    store.compact()
    with pytest.raises(Gone, match=f"too old resource version: {listed_at} "):
        store.watch("v1", "ConfigMap", resource_version=listed_at)
    fresh = store.list("v1", "ConfigMap").resource_version
    watch = store.watch("v1", "ConfigMap", resource_version=fresh, bookmarks=False)
    store.create(config_map("b"))
    assert summary(await next_event(watch))[:2] == ("ADDED", "b")
    watch.close()
