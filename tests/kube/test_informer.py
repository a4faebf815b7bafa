"""Informers and their indexes (clusterclass/kube/informer.py, indexes.py) over the memory backend.

The memory store's knobs make the hard paths deterministic: ``watch_buffer=1`` ends a watch as
soon as two changes arrive before the informer reads (the store terminates a slow watcher), and a
tiny ``history_size`` makes the resumed watch ``Gone``. Backoff runs on a fake clock. The same
behaviour on the embedded HTTP store and the real kube-apiserver is in
tests/contract/test_informer_contract.py.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import Any

import pytest

from clusterclass.api.objects import Obj
from clusterclass.apiserver.inprocess_client import MemoryClient
from clusterclass.apiserver.store import MemoryStore
from clusterclass.kube.indexes import (
    CONTROLLER_INDEX,
    LABEL_INDEX,
    OWNER_INDEX,
    TOPOLOGY_CLASS_INDEX,
    IndexedCache,
    UnknownIndex,
    index_by_controller,
    index_by_label,
    index_by_owner,
    index_by_topology_class,
)
from clusterclass.kube.informer import EventHandler, Informer, enqueue_mapped
from clusterclass.kube.workqueue import FakeClock, WorkQueue

CAPI = "cluster.x-k8s.io/v1beta1"


def configmap(name: str, namespace: str = "default", **labels: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
    }


def cluster(name: str, cls: str | None, namespace: str = "default", class_namespace: str | None = None) -> Obj:
    obj: Obj = {"apiVersion": CAPI, "kind": "Cluster", "metadata": {"name": name, "namespace": namespace}}
    if cls is not None:
        obj["spec"] = {"topology": {"class": cls, "version": "v1.30.0"}}
        if class_namespace:
            obj["spec"]["topology"]["classNamespace"] = class_namespace
    return obj


def owned(name: str, *owners: tuple[str, bool]) -> Obj:
    obj = configmap(name)
    obj["metadata"]["ownerReferences"] = [
        {"apiVersion": CAPI, "kind": "Cluster", "name": f"owner-{uid}", "uid": uid, "controller": controller}
        for uid, controller in owners
    ]
    return obj


class Recorder:
    """Records handler calls as tuples and lets a test wait for a condition on them."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []
        self._changed = asyncio.Event()

    def handler(self) -> EventHandler:
        return EventHandler(on_add=self._add, on_update=self._update, on_delete=self._delete)

    def _record(self, event: tuple[Any, ...]) -> None:
        self.events.append(event)
        self._changed.set()

    def _add(self, obj: Obj) -> None:
        self._record(("add", obj["metadata"]["name"]))

    def _update(self, old: Obj, new: Obj) -> None:
        self._record(("update", new["metadata"]["name"]))

    def _delete(self, obj: Obj, final_state_unknown: bool) -> None:
        self._record(("delete", obj["metadata"]["name"], final_state_unknown))

    async def wait_for(self, count: int) -> list[tuple[Any, ...]]:
        """The events once there are at least ``count`` (the test's timeout guards a hang)."""
        while len(self.events) < count:
            self._changed.clear()
            await self._changed.wait()
        return self.events


async def eventually(condition: Callable[[], bool]) -> None:
    """Yield to the loop until ``condition`` holds (the test timeout guards a hang)."""
    while not condition():
        await asyncio.sleep(0.001)


def informer(client: MemoryClient, api_version: str = "v1", kind: str = "ConfigMap", **options: Any) -> Informer:
    options.setdefault("jitter", 0.0)
    options.setdefault("backoff_initial", 0.001)
    options.setdefault("backoff_max", 0.01)
    return Informer(client, api_version, kind, **options)


# -- index functions and the indexed cache ---------------------------------------------------------


def test_label_index_values_are_key_equals_value() -> None:
    assert sorted(index_by_label(configmap("a", app="web", tier="1"))) == ["app=web", "tier=1"]
    assert index_by_label({"metadata": {}}) == []


def test_owner_indexes_by_uid_and_controller_only_the_controller() -> None:
    obj = owned("a", ("u1", False), ("u2", True))
    assert index_by_owner(obj) == ["u1", "u2"]
    assert index_by_controller(obj) == ["u2"]
    assert index_by_owner(configmap("b")) == []


def test_topology_class_index_is_namespace_qualified() -> None:
    assert index_by_topology_class(cluster("c", "quick-start", "ns1")) == ["ns1/quick-start"]
    assert index_by_topology_class(cluster("c", "quick-start", "ns1", class_namespace="shared")) == [
        "shared/quick-start"
    ]
    assert index_by_topology_class(cluster("c", None)) == []


def test_the_cache_reindexes_on_change_and_unindexes_on_removal() -> None:
    cache = IndexedCache()
    cache.add_standard_indexes()
    cache.put(configmap("a", app="web"))
    cache.put(configmap("b", app="web"))
    assert [o["metadata"]["name"] for o in cache.by_index(LABEL_INDEX, "app=web")] == ["a", "b"]
    cache.put(configmap("a", app="db"))
    assert [o["metadata"]["name"] for o in cache.by_index(LABEL_INDEX, "app=web")] == ["b"]
    assert [o["metadata"]["name"] for o in cache.by_index(LABEL_INDEX, "app=db")] == ["a"]
    cache.remove("default/b")
    assert cache.by_index(LABEL_INDEX, "app=web") == []
    assert cache.index_values(LABEL_INDEX) == ["app=db"], "empty index values are dropped"


def test_an_index_added_later_covers_the_objects_already_cached() -> None:
    cache = IndexedCache()
    cache.put(owned("a", ("u1", True)))
    cache.add_index("by-name-length", lambda obj: [str(len(obj["metadata"]["name"]))])
    cache.add_standard_indexes()
    assert [o["metadata"]["name"] for o in cache.by_index(CONTROLLER_INDEX, "u1")] == ["a"]
    assert [o["metadata"]["name"] for o in cache.by_index("by-name-length", "1")] == ["a"]
    with pytest.raises(ValueError):
        cache.add_index(OWNER_INDEX, index_by_owner)
    with pytest.raises(UnknownIndex):
        cache.by_index("nope", "x")


# -- list, then watch ------------------------------------------------------------------------------


async def test_lists_then_watches_and_calls_handlers_in_order() -> None:
    client = MemoryClient(MemoryStore())
    await client.create(configmap("a"))
    await client.create(configmap("b"))
    recorder = Recorder()
    inf = informer(client)
    inf.add_event_handler(recorder.handler())
    async with inf:
        assert await inf.wait_for_sync()
        assert inf.has_synced
        assert recorder.events == [("add", "a"), ("add", "b")]
        await client.create(configmap("c"))
        changed = configmap("a", app="x")
        changed["metadata"]["resourceVersion"] = inf.get("a", "default")["metadata"]["resourceVersion"]  # type: ignore[index]
        await client.update(changed)
        await client.delete("v1", "ConfigMap", "b", namespace="default")
        events = await recorder.wait_for(5)
        assert events[2:] == [("add", "c"), ("update", "a"), ("delete", "b", False)]
        assert [o["metadata"]["name"] for o in inf.list()] == ["a", "c"]
        assert inf.get("a", "default")["metadata"]["labels"] == {"app": "x"}  # type: ignore[index]
        await eventually(lambda: inf.last_sync_resource_version == client.store.resource_version)
        assert (inf.lists, inf.watches) == (1, 1)
    assert not inf.running


async def test_a_handler_added_after_sync_first_gets_every_cached_object() -> None:
    client = MemoryClient(MemoryStore())
    for name in ("b", "a"):
        await client.create(configmap(name))
    async with informer(client) as inf:
        await inf.wait_for_sync()
        recorder = Recorder()
        handler = inf.add_event_handler(recorder.handler())
        assert recorder.events == [("add", "a"), ("add", "b")]
        inf.remove_event_handler(handler)
        await client.create(configmap("c"))
        await eventually(lambda: inf.get("c", "default") is not None)
        assert len(recorder.events) == 2, "a removed handler hears nothing more"


async def test_namespace_and_label_selector_restrict_the_cache_and_moves_are_adds_and_deletes() -> None:
    client = MemoryClient(MemoryStore())
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    await client.create(configmap("in", app="web"))
    await client.create(configmap("not-selected", app="db"))
    await client.create(configmap("elsewhere", "other", app="web"))
    recorder = Recorder()
    inf = informer(client, namespace="default", label_selector="app=web")
    inf.add_event_handler(recorder.handler())
    async with inf:
        await inf.wait_for_sync()
        assert [o["metadata"]["name"] for o in inf.list()] == ["in"]
        await client.patch("v1", "ConfigMap", "in", {"metadata": {"labels": {"app": "db"}}}, namespace="default")
        await client.patch(
            "v1", "ConfigMap", "not-selected", {"metadata": {"labels": {"app": "web"}}}, namespace="default"
        )
        events = await recorder.wait_for(3)
        assert events == [("add", "in"), ("delete", "in", False), ("add", "not-selected")]
        assert [o["metadata"]["name"] for o in inf.list()] == ["not-selected"]


async def test_a_field_selector_restricts_the_cache_to_the_selected_secrets() -> None:
    """As the topology controller caches only Secrets of type ``cluster.x-k8s.io/secret``."""
    client = MemoryClient(MemoryStore())
    for name, secret_type in (("c1-shim", "cluster.x-k8s.io/secret"), ("token", "Opaque")):
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": name, "namespace": "default"},
                "type": secret_type,
            }
        )
    recorder = Recorder()
    inf = informer(client, "v1", "Secret", field_selector="type=cluster.x-k8s.io/secret")
    inf.add_event_handler(recorder.handler())
    async with inf:
        await inf.wait_for_sync()
        assert [o["metadata"]["name"] for o in inf.list()] == ["c1-shim"]
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "c1-kubeconfig", "namespace": "default"},
                "type": "cluster.x-k8s.io/secret",
            }
        )
        await client.create(
            {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "other", "namespace": "default"}}
        )
        assert await recorder.wait_for(2) == [("add", "c1-shim"), ("add", "c1-kubeconfig")]
    assert "selected by type=cluster.x-k8s.io/secret" in repr(inf)


async def test_indexes_follow_the_cache_through_watch_events() -> None:
    client = MemoryClient(MemoryStore())
    await client.create(cluster("c1", "quick-start"))
    async with informer(client, CAPI, "Cluster") as inf:
        inf.add_standard_indexes()
        await inf.wait_for_sync()
        assert [o["metadata"]["name"] for o in inf.by_index(TOPOLOGY_CLASS_INDEX, "default/quick-start")] == ["c1"]
        await client.patch(CAPI, "Cluster", "c1", {"spec": {"topology": {"class": "other"}}}, namespace="default")
        await eventually(lambda: not inf.by_index(TOPOLOGY_CLASS_INDEX, "default/quick-start"))
        assert [o["metadata"]["name"] for o in inf.by_index(TOPOLOGY_CLASS_INDEX, "default/other")] == ["c1"]


async def test_a_failing_handler_is_logged_and_the_others_still_run(caplog: pytest.LogCaptureFixture) -> None:
    client = MemoryClient(MemoryStore())
    recorder = Recorder()

    def broken(obj: Obj) -> None:
        raise RuntimeError("handler bug")

    async with informer(client) as inf:
        inf.add_event_handler(on_add=broken)
        inf.add_event_handler(recorder.handler())
        await inf.wait_for_sync()
        await client.create(configmap("a"))
        await client.create(configmap("b"))
        assert await recorder.wait_for(2) == [("add", "a"), ("add", "b")]
    assert "handler bug" in caplog.text


async def test_enqueue_mapped_adds_the_keys_of_both_states_of_an_update() -> None:
    client = MemoryClient(MemoryStore())
    queue: WorkQueue[str] = WorkQueue(clock=FakeClock())
    await client.create(configmap("a", cluster="c1"))
    async with informer(client) as inf:
        inf.add_event_handler(enqueue_mapped(queue, lambda obj: [obj["metadata"]["labels"]["cluster"]]))
        await inf.wait_for_sync()
        assert queue.queued() == ["c1"]
        await client.patch("v1", "ConfigMap", "a", {"metadata": {"labels": {"cluster": "c2"}}}, namespace="default")
        await eventually(lambda: len(queue) == 2)
        assert queue.queued() == ["c1", "c2"], "c1 was already queued: de-duplicated"


# -- the stream ends, the history runs out ---------------------------------------------------------


async def test_a_stream_that_ends_is_resumed_from_the_last_resource_version_without_listing() -> None:
    store = MemoryStore(watch_buffer=1)
    client = MemoryClient(store)
    recorder = Recorder()
    inf = informer(client)
    inf.add_event_handler(recorder.handler())
    async with inf:
        await inf.wait_for_sync()
        # three writes before the informer reads: the store terminates its watch after the first
        for name in ("a", "b", "c"):
            await client.create(configmap(name))
        assert await recorder.wait_for(3) == [("add", "a"), ("add", "b"), ("add", "c")]
        assert inf.lists == 1, "the history still had the rest: no re-list"
        assert inf.watches >= 2


async def test_gone_relists_and_replays_what_the_informer_missed() -> None:
    store = MemoryStore(watch_buffer=1, history_size=2)
    client = MemoryClient(store)
    for name in ("keep", "change", "delete", "recreate"):
        await client.create(configmap(name))
    recorder = Recorder()
    inf = informer(client)
    inf.add_event_handler(recorder.handler())
    async with inf:
        await inf.wait_for_sync()
        assert len(recorder.events) == 4
        old_uid = inf.get("recreate", "default")["metadata"]["uid"]  # type: ignore[index]
        # before the informer reads again: the first change ends its watch (buffer of one), and
        # the history of two moves past it, so resuming is Gone and the informer lists again
        await client.create(configmap("new"))
        await client.patch("v1", "ConfigMap", "change", {"data": {"k": "v"}}, namespace="default")
        await client.delete("v1", "ConfigMap", "delete", namespace="default")
        await client.delete("v1", "ConfigMap", "recreate", namespace="default")
        await client.create(configmap("recreate"))
        await client.create(configmap("filler-1"))
        await client.create(configmap("filler-2"))
        await eventually(lambda: inf.lists == 2 and inf.get("filler-2", "default") is not None)
        replayed = recorder.events[4:]
        assert replayed[0] == ("add", "new"), "the one event the watch delivered"
        assert sorted(replayed[1:]) == sorted(
            [
                ("update", "change"),
                ("delete", "delete", True),
                ("delete", "recreate", True),
                ("add", "recreate"),
                ("add", "filler-1"),
                ("add", "filler-2"),
            ]
        ), "unchanged objects are not re-announced; a name taken by a new object is a delete and an add"
        assert replayed.index(("delete", "recreate", True)) < replayed.index(("add", "recreate"))
        assert inf.get("recreate", "default")["metadata"]["uid"] != old_uid  # type: ignore[index]
        assert [o["metadata"]["name"] for o in inf.list()] == [
            "change",
            "filler-1",
            "filler-2",
            "keep",
            "new",
            "recreate",
        ]


async def test_bookmarks_carry_the_resource_version_a_quiet_watch_resumes_from() -> None:
    # writes the informer does not select move the store on; bookmarks tell the informer, so when
    # its stream ends (timeout) it resumes from there, inside the tiny history, without re-listing
    store = MemoryStore(history_size=2, bookmark_interval=0.02)
    client = MemoryClient(store)
    async with informer(client, label_selector="app=web", watch_timeout=1) as inf:
        await inf.wait_for_sync()
        for index in range(5):
            await client.create(configmap(f"other-{index}", app="db"))
        await eventually(lambda: inf.last_sync_resource_version == store.resource_version)
        await eventually(lambda: inf.watches >= 2)
        assert inf.lists == 1
        await client.create(configmap("web", app="web"))
        await eventually(lambda: inf.get("web", "default") is not None)
        assert inf.lists == 1


# -- failures, backoff, stop -----------------------------------------------------------------------


async def test_a_kind_not_served_yet_is_retried_with_backoff_until_it_is() -> None:
    store = MemoryStore()
    client = MemoryClient(store)
    clock = FakeClock()
    inf = informer(client, "example.com/v1", "Widget", clock=clock, backoff_initial=1, backoff_max=4)
    async with inf:
        await eventually(lambda: clock.pending == 1)
        assert not inf.has_synced
        clock.advance(1)
        await eventually(lambda: clock.pending == 1 and inf.lists == 0)
        store.register_kind("example.com/v1", "Widget")
        await client.create(
            {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}}
        )
        clock.advance(1.5)
        assert not inf.has_synced, "the second wait is twice as long"
        clock.advance(0.5)
        assert await inf.wait_for_sync()
        assert inf.get("w", "default") is not None


async def test_a_stream_that_ends_at_once_without_events_counts_as_broken() -> None:
    # a server that closes every stream straight away must not be re-watched in a tight loop:
    # the informer backs off and lists again (client-go's "very short watch")
    client = MemoryClient(MemoryStore())
    clock = FakeClock()
    async with informer(client, clock=clock, backoff_initial=5, backoff_max=5) as inf:
        await inf.wait_for_sync()
        await eventually(lambda: inf.watches == 1)
        await asyncio.sleep(0)
        await client.close()  # ends the open watch normally, at once (the fake clock has not moved)
        await eventually(lambda: clock.pending == 1)
        assert inf.lists == 1
        clock.advance(5)
        await eventually(lambda: inf.lists == 2)


async def test_wait_for_sync_is_false_when_the_informer_stops_first() -> None:
    client = MemoryClient(MemoryStore())
    inf = informer(client, "example.com/v1", "Widget", clock=FakeClock())
    assert not await inf.wait_for_sync(), "never started"
    inf.start()
    waiting = asyncio.ensure_future(inf.wait_for_sync())
    await asyncio.sleep(0)
    await inf.stop()
    assert await waiting is False
    await inf.stop()  # twice is fine
    with pytest.raises(RuntimeError):
        inf.start()


async def test_resync_redelivers_every_cached_object_as_an_update() -> None:
    client = MemoryClient(MemoryStore())
    await client.create(configmap("a"))
    clock = FakeClock()
    recorder = Recorder()
    inf = informer(client, clock=clock, resync_period=60)
    inf.add_event_handler(recorder.handler())
    async with inf:
        await inf.wait_for_sync()
        await eventually(lambda: clock.pending == 1)
        clock.advance(60)
        assert await recorder.wait_for(2) == [("add", "a"), ("update", "a")]


def test_informer_options_are_checked() -> None:
    client = MemoryClient(MemoryStore())
    with pytest.raises(ValueError):
        Informer(client, "v1", "ConfigMap", backoff_initial=0)
    with pytest.raises(ValueError):
        Informer(client, "v1", "ConfigMap", watch_timeout=0)
    with pytest.raises(ValueError):
        Informer(client, "v1", "ConfigMap", resync_period=0)
