"""Informers, the cache reader and the work queue on every backend: memory, embedded HTTP, real kube-apiserver.

What the controllers rely on, end to end over a real :class:`~clusterclass.kube.client.Client`:
list then watch, the server ending a stream (``watch_timeout=1`` makes each backend end it after a
second) and the informer resuming without listing again, a history made too old (the backend's
``expire_history``: etcd compaction on the real server) and the informer listing again, secondary
indexes, and a small controller (informers → work queue → workers → CacheReader → writes) that
converges. The deterministic corner cases (a deletion noticed only by a re-list, a name taken by a
new object, backoff) are in tests/kube/test_informer.py on the memory backend, where the store's
knobs make them reproducible.

Waits are for conditions (``eventually``, guarded by ``WATCH_GUARD``); nothing asserts on speed.
"""

from __future__ import annotations

import asyncio
from typing import Any

from contract_support import CAPI, cluster, config_map, eventually

from clusterclass.api.objects import name_of
from clusterclass.kube.cache_reader import CacheReader
from clusterclass.kube.client import Client
from clusterclass.kube.errors import AlreadyExists
from clusterclass.kube.indexes import CONTROLLER_INDEX, LABEL_INDEX, OWNER_INDEX, TOPOLOGY_CLASS_INDEX
from clusterclass.kube.informer import EventHandler, Informer, enqueue_mapped
from clusterclass.kube.workqueue import WorkQueue, run_workers


class Recorder:
    """Handler calls as (event, name[, final_state_unknown]) tuples."""

    def __init__(self) -> None:
        self.events: list[tuple[Any, ...]] = []

    def handler(self) -> EventHandler:
        return EventHandler(
            on_add=lambda obj: self.events.append(("add", name_of(obj))),
            on_update=lambda old, new: self.events.append(("update", name_of(new))),
            on_delete=lambda obj, unknown: self.events.append(("delete", name_of(obj), unknown)),
        )


def informer(client: Client, namespace: str, **options: Any) -> Informer:
    options.setdefault("backoff_initial", 0.05)
    options.setdefault("backoff_max", 0.5)
    return Informer(
        client, options.pop("api_version", "v1"), options.pop("kind", "ConfigMap"), namespace=namespace, **options
    )


async def cache_matches_server(inf: Informer, client: Client, namespace: str) -> None:
    """Wait until the informer's cache holds exactly what the server lists (names and resourceVersions)."""
    listed = await client.list(inf.api_version, inf.kind, namespace=namespace, label_selector=inf.label_selector)
    want = [(name_of(o), o["metadata"]["resourceVersion"]) for o in listed.items]
    await eventually(lambda: [(name_of(o), o["metadata"]["resourceVersion"]) for o in inf.list()] == want)


async def test_informer_lists_then_watches_and_tells_handlers_in_order(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a"))
    await client.create(config_map(namespace, "b"))
    recorder = Recorder()
    inf = informer(client, namespace)
    inf.add_event_handler(recorder.handler())
    async with inf:
        assert await inf.wait_for_sync()
        assert recorder.events == [("add", "a"), ("add", "b")]
        await client.create(config_map(namespace, "c"))
        await client.patch("v1", "ConfigMap", "a", {"data": {"k": "v"}}, namespace=namespace)
        await client.delete("v1", "ConfigMap", "b", namespace=namespace)
        await eventually(lambda: len(recorder.events) == 5)
        assert recorder.events[2:] == [("add", "c"), ("update", "a"), ("delete", "b", False)]
        await cache_matches_server(inf, client, namespace)
        assert inf.get("a", namespace)["data"] == {"k": "v"}  # type: ignore[index]


async def test_objects_moving_in_and_out_of_the_selector_are_adds_and_deletes(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "in", labels={"app": "web"}))
    await client.create(config_map(namespace, "out", labels={"app": "db"}))
    recorder = Recorder()
    inf = informer(client, namespace, label_selector="app=web")
    inf.add_event_handler(recorder.handler())
    async with inf:
        await inf.wait_for_sync()
        await client.patch("v1", "ConfigMap", "in", {"metadata": {"labels": {"app": "db"}}}, namespace=namespace)
        await client.patch("v1", "ConfigMap", "out", {"metadata": {"labels": {"app": "web"}}}, namespace=namespace)
        await eventually(lambda: len(recorder.events) == 3)
        assert recorder.events == [("add", "in"), ("delete", "in", False), ("add", "out")]
        assert [name_of(o) for o in inf.list()] == ["out"]


async def test_a_stream_the_server_ends_is_resumed_without_listing_again(client: Client, namespace: str) -> None:
    recorder = Recorder()
    inf = informer(client, namespace, watch_timeout=1)
    inf.add_event_handler(recorder.handler())
    async with inf:
        await inf.wait_for_sync()
        await client.create(config_map(namespace, "before"))
        await eventually(lambda: inf.watches >= 3)
        await client.create(config_map(namespace, "after"))
        await eventually(lambda: len(recorder.events) == 2)
        assert recorder.events == [("add", "before"), ("add", "after")]
        assert inf.lists == 1


async def test_bookmarks_move_a_quiet_informer_to_the_servers_resource_version(client: Client, namespace: str) -> None:
    # Clusters are in kube-apiserver's watch cache, which sends a bookmark 2 s before a watch's
    # deadline; the memory store sends one after a second without events
    elsewhere = await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "other-"}})
    recorder = Recorder()
    inf = informer(client, namespace, api_version=CAPI, kind="Cluster", watch_timeout=3)
    inf.add_event_handler(recorder.handler())
    async with inf:
        await inf.wait_for_sync()
        last = 0
        for index in range(3):
            created = await client.create(cluster(elsewhere["metadata"]["name"], f"c{index}"))
            last = int(created["metadata"]["resourceVersion"])
        await eventually(lambda: int(inf.last_sync_resource_version) >= last)
        assert recorder.events == [], "bookmarks are not events"
        assert inf.lists == 1


async def test_an_expired_history_makes_the_informer_list_again(backend: Any, client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a"))
    recorder = Recorder()
    inf = informer(client, namespace, watch_timeout=1)
    inf.add_event_handler(recorder.handler())
    async with inf:
        await inf.wait_for_sync()
        await backend.expire_history()
        # the open stream ends within a second; resuming it from a resourceVersion the server no
        # longer has history for is Gone, and the informer lists again
        await eventually(lambda: inf.lists >= 2)
        assert recorder.events == [("add", "a")], "a re-list that finds nothing new tells handlers nothing"
        await client.create(config_map(namespace, "b"))
        await client.delete("v1", "ConfigMap", "a", namespace=namespace)
        await eventually(lambda: len(recorder.events) == 3)
        assert recorder.events[1:] == [("add", "b"), ("delete", "a", False)]
        await cache_matches_server(inf, client, namespace)


async def test_indexes_find_children_by_owner_label_and_class(client: Client, namespace: str) -> None:
    parent = await client.create(cluster(namespace, "c1", {"topology": {"class": "quick-start", "version": "v1.30.0"}}))
    uid = parent["metadata"]["uid"]
    ref = {"apiVersion": CAPI, "kind": "Cluster", "name": "c1", "uid": uid}
    await client.create(config_map(namespace, "owned", labels={"cluster": "c1"}, ownerReferences=[ref]))
    await client.create(
        config_map(namespace, "controlled", ownerReferences=[{**ref, "controller": True, "blockOwnerDeletion": True}])
    )
    await client.create(config_map(namespace, "loose", labels={"cluster": "c2"}))
    clusters = informer(client, namespace, api_version=CAPI, kind="Cluster")
    children = informer(client, namespace)
    clusters.add_standard_indexes()
    children.add_standard_indexes()
    async with clusters, children:
        assert await clusters.wait_for_sync() and await children.wait_for_sync()
        assert [name_of(o) for o in children.by_index(OWNER_INDEX, uid)] == ["controlled", "owned"]
        assert [name_of(o) for o in children.by_index(CONTROLLER_INDEX, uid)] == ["controlled"]
        assert [name_of(o) for o in children.by_index(LABEL_INDEX, "cluster=c1")] == ["owned"]
        assert [name_of(o) for o in clusters.by_index(TOPOLOGY_CLASS_INDEX, f"{namespace}/quick-start")] == ["c1"]
        await client.patch("v1", "ConfigMap", "loose", {"metadata": {"ownerReferences": [ref]}}, namespace=namespace)
        await eventually(lambda: len(children.by_index(OWNER_INDEX, uid)) == 3)


async def test_a_small_controller_converges_through_informers_queue_and_cache_reader(
    client: Client, namespace: str
) -> None:
    """For every ConfigMap labelled ``role=parent``, a reconcile makes sure ``<name>-child`` exists."""
    parents = informer(client, namespace, label_selector="role=parent")
    children = informer(client, namespace, label_selector="role=child")
    reader = CacheReader([parents, children])
    queue: WorkQueue[str] = WorkQueue(name="parents")
    parents.add_event_handler(enqueue_mapped(queue, lambda obj: [name_of(obj)]))
    children.add_event_handler(enqueue_mapped(queue, lambda obj: [obj["metadata"]["labels"]["parent"]]))
    reconciles: list[str] = []
    in_flight: set[str] = set()
    writes = 0

    async def reconcile(name: str) -> float | None:
        nonlocal writes
        assert name not in in_flight, "one reconcile per key at a time"
        in_flight.add(name)
        try:
            reconciles.append(name)
            parent = reader.get("v1", "ConfigMap", namespace, name)
            if parent is None or reader.get("v1", "ConfigMap", namespace, f"{name}-child") is not None:
                return None
            child = config_map(namespace, f"{name}-child", labels={"role": "child", "parent": name})
            child["metadata"]["ownerReferences"] = [
                {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": parent["metadata"]["uid"]}
            ]
            try:
                await client.create(child)
                writes += 1
            except AlreadyExists:
                pass  # the cache had not seen our last create yet: converged anyway
            return None
        finally:
            in_flight.discard(name)

    async with parents, children:
        assert await parents.wait_for_sync() and await children.wait_for_sync()
        workers = asyncio.create_task(run_workers(queue, reconcile, 2))
        try:
            for name in ("p1", "p2", "p3"):
                await client.create(config_map(namespace, name, labels={"role": "parent"}))
            await eventually(lambda: len(children.list()) == 3)
            await eventually(lambda: len(queue) == 0 and not queue.processing and queue.waiting == 0)
            assert writes == 3, "one child per parent, never two"
            assert sorted(name_of(o) for o in reader.list("v1", "ConfigMap", namespace, {"role": "child"})) == [
                "p1-child",
                "p2-child",
                "p3-child",
            ]
            before = len(reconciles)
            queue.add("p1")
            await eventually(lambda: len(reconciles) == before + 1 and not queue.processing)
            assert writes == 3, "a converged reconcile writes nothing"
        finally:
            await queue.shutdown_with_drain()
            await workers


async def test_cache_reader_answers_as_the_server_does(client: Client, namespace: str) -> None:
    for name, labels in (("b", {"env": "prod"}), ("a", {"env": "dev"}), ("c", {})):
        await client.create(config_map(namespace, name, labels=labels))
    inf = informer(client, namespace)
    reader = CacheReader([inf])
    async with inf:
        await inf.wait_for_sync()
        served = await client.get("v1", "ConfigMap", "a", namespace=namespace)
        assert reader.get("v1", "ConfigMap", namespace, "a") == served
        assert reader.get("v1", "ConfigMap", namespace, "missing") is None
        listed = await client.list("v1", "ConfigMap", namespace=namespace, label_selector="env")
        assert reader.list("v1", "ConfigMap", namespace, {"env": None}) == listed.items
        assert [name_of(o) for o in reader.list("v1", "ConfigMap", namespace, {"env": "prod"})] == ["b"]
