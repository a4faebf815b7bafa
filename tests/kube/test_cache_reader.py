"""CacheReader (clusterclass/kube/cache_reader.py) answers exactly as StoreReader over the same store."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from clusterclass.api.objects import Obj
from clusterclass.apiserver.inprocess_client import MemoryClient
from clusterclass.apiserver.store import MemoryStore
from clusterclass.apiserver.store_reader import StoreReader
from clusterclass.kube import cache_reader as cache_reader_module
from clusterclass.kube.cache_reader import CacheReader, NotCached, NotSynced
from clusterclass.kube.informer import Informer
from clusterclass.kube.workqueue import FakeClock

CAPI = "cluster.x-k8s.io/v1beta1"


def obj(api_version: str, kind: str, name: str, namespace: str | None = "default", **labels: str) -> Obj:
    metadata: dict[str, Any] = {"name": name, "labels": labels}
    if namespace:
        metadata["namespace"] = namespace
    return {"apiVersion": api_version, "kind": kind, "metadata": metadata}


async def eventually(condition: Callable[[], bool]) -> None:
    while not condition():
        await asyncio.sleep(0.001)


@pytest.fixture
async def world() -> AsyncIterator[tuple[MemoryClient, StoreReader, CacheReader]]:
    """A store with objects in two namespaces, its StoreReader, and a synced CacheReader over it."""
    client = MemoryClient(MemoryStore())
    await client.create(obj("v1", "Namespace", "other", None, team="a"))
    for namespace in ("default", "other"):
        await client.create(obj(CAPI, "Cluster", "c1", namespace, env="prod"))
        await client.create(obj(CAPI, "Cluster", "c2", namespace, env="dev", tier="1"))
        await client.create(obj("v1", "ConfigMap", "b", namespace, env="prod"))
        await client.create(obj("v1", "ConfigMap", "a", namespace))
    informers = [
        Informer(client, "v1", "Namespace"),
        Informer(client, CAPI, "Cluster"),
        Informer(client, "v1", "ConfigMap"),
    ]
    informers[2].add_standard_indexes()
    for informer in informers:
        informer.start()
    for informer in informers:
        assert await informer.wait_for_sync()
    yield client, StoreReader(client.store), CacheReader(informers)
    for informer in informers:
        await informer.stop()


def answer(read: Callable[[], Any]) -> Any:
    """What a read returns, or the type and message of what it raises."""
    try:
        return read()
    except Exception as err:
        return (type(err).__name__, str(err))


GETS = [
    (CAPI, "Cluster", "default", "c1"),
    (CAPI, "Cluster", "other", "c2"),
    (CAPI, "Cluster", "default", "missing"),
    (CAPI, "Cluster", "", "c1"),
    ("v1", "ConfigMap", "other", "a"),
    ("v1", "Namespace", "", "other"),
    ("v1", "Namespace", "", "missing"),
    ("v1", "Namespace", "ignored", "default"),
]

LISTS: list[tuple[str, str, str, dict[str, str | None]]] = [
    (CAPI, "Cluster", "default", {}),
    (CAPI, "Cluster", "other", {"env": "prod"}),
    (CAPI, "Cluster", "default", {"tier": None}),
    (CAPI, "Cluster", "default", {"env": "dev", "tier": None}),
    (CAPI, "Cluster", "default", {"env": "staging"}),
    (CAPI, "Cluster", "", {}),
    ("v1", "ConfigMap", "other", {}),
    ("v1", "ConfigMap", "default", {"env": "prod"}),
    ("v1", "ConfigMap", "default", {"env": None}),
    ("v1", "Namespace", "", {}),
    ("v1", "Namespace", "", {"team": "a"}),
    ("v1", "Namespace", "default", {}),
    ("v1", "ConfigMap", "default", {"bad key!": "x"}),
]


@pytest.mark.parametrize("query", GETS, ids=lambda q: "/".join(q[1:]))
async def test_get_answers_as_the_store_reader_does(
    world: tuple[MemoryClient, StoreReader, CacheReader], query: tuple[str, str, str, str]
) -> None:
    _, store_reader, cache_reader = world
    expected = answer(lambda: store_reader.get(*query))
    assert answer(lambda: cache_reader.get(*query)) == expected


@pytest.mark.parametrize("query", LISTS, ids=lambda q: f"{q[1]}/{q[2]}/{q[3]}")
async def test_list_answers_as_the_store_reader_does(
    world: tuple[MemoryClient, StoreReader, CacheReader], query: tuple[str, str, str, dict[str, str | None]]
) -> None:
    _, store_reader, cache_reader = world
    expected = answer(lambda: store_reader.list(*query))
    assert answer(lambda: cache_reader.list(*query)) == expected


async def test_reads_follow_changes_once_the_informer_has_seen_them(
    world: tuple[MemoryClient, StoreReader, CacheReader],
) -> None:
    client, store_reader, cache_reader = world
    await client.patch(CAPI, "Cluster", "c1", {"metadata": {"labels": {"env": "dev"}}}, namespace="default")
    await client.delete("v1", "ConfigMap", "a", namespace="default")
    await eventually(lambda: cache_reader.get("v1", "ConfigMap", "default", "a") is None)
    await eventually(lambda: len(cache_reader.list(CAPI, "Cluster", "default", {"env": "dev"})) == 2)
    for query in LISTS[:5]:
        assert cache_reader.list(*query) == store_reader.list(*query)


async def test_reads_are_copies_the_caller_may_change(world: tuple[MemoryClient, StoreReader, CacheReader]) -> None:
    _, _, cache_reader = world
    got = cache_reader.get(CAPI, "Cluster", "default", "c1")
    assert got is not None
    got["metadata"]["labels"]["env"] = "changed"
    listed = cache_reader.list(CAPI, "Cluster", "default", {})
    listed[0]["metadata"]["name"] = "changed"
    assert cache_reader.get(CAPI, "Cluster", "default", "c1")["metadata"]["labels"]["env"] == "prod"  # type: ignore[index]
    assert [o["metadata"]["name"] for o in cache_reader.list(CAPI, "Cluster", "default", {})] == ["c1", "c2"]


async def test_lookups_are_by_group_and_kind_whatever_the_version(
    world: tuple[MemoryClient, StoreReader, CacheReader],
) -> None:
    _, store_reader, cache_reader = world
    v1beta2 = "cluster.x-k8s.io/v1beta2"
    got = cache_reader.get(v1beta2, "Cluster", "default", "c1")
    # found by group and kind in the v1beta1 informer, answered in the version asked for, as the store serves it
    assert got is not None and got["apiVersion"] == v1beta2
    assert got == store_reader.get(v1beta2, "Cluster", "default", "c1")
    assert cache_reader.list(v1beta2, "Cluster", "default", {}) == store_reader.list(v1beta2, "Cluster", "default", {})


async def test_an_object_read_in_another_version_is_converted_once_per_change_and_kept_once(
    world: tuple[MemoryClient, StoreReader, CacheReader], monkeypatch: pytest.MonkeyPatch
) -> None:
    client, store_reader, cache_reader = world
    v1beta2 = "cluster.x-k8s.io/v1beta2"
    conversions: list[str] = []
    real = cache_reader_module.convert

    def counted(obj: Obj, api_version: str, **options: Any) -> Obj:
        conversions.append(obj["metadata"]["resourceVersion"])
        return real(obj, api_version, **options)

    monkeypatch.setattr(cache_reader_module, "convert", counted)
    for _ in range(3):
        cache_reader.get(v1beta2, "Cluster", "default", "c1")
    assert len(conversions) == 1
    for n in range(3):
        patched = await client.patch(
            CAPI, "Cluster", "c1", {"metadata": {"labels": {"n": str(n)}}}, namespace="default"
        )
        version = patched["metadata"]["resourceVersion"]

        def seen(version: str = version) -> bool:
            cached = cache_reader.get(CAPI, "Cluster", "default", "c1")
            return cached is not None and cached["metadata"]["resourceVersion"] == version

        await eventually(seen)
        served = cache_reader.get(v1beta2, "Cluster", "default", "c1")
        assert served == store_reader.get(v1beta2, "Cluster", "default", "c1")
        assert conversions[-1] == version
    assert len(conversions) == 4
    # one conversion kept for the object, whatever its history: an earlier version can never be asked for again
    assert len(cache_reader._converted) == 1


async def test_what_the_caches_cannot_answer_is_an_error_not_an_empty_answer() -> None:
    client = MemoryClient(MemoryStore())
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    scoped = Informer(client, "v1", "ConfigMap", namespace="default")
    unsynced = Informer(client, "example.com/v1", "Widget", clock=FakeClock())
    reader = CacheReader([scoped, unsynced])
    with pytest.raises(NotSynced):
        reader.get("v1", "ConfigMap", "default", "a")
    async with scoped, unsynced:
        assert await scoped.wait_for_sync()
        assert reader.get("v1", "ConfigMap", "default", "a") is None
        assert reader.list("v1", "ConfigMap", "", {}) == [], "no ConfigMap is cluster-scoped"
        with pytest.raises(NotCached, match="namespace 'other'"):
            reader.list("v1", "ConfigMap", "other", {})
        with pytest.raises(NotCached, match="Secret"):
            reader.get("v1", "Secret", "default", "s")
        with pytest.raises(NotSynced, match=r"Widget\.example\.com"):
            reader.list("example.com/v1", "Widget", "default", {})


async def test_per_namespace_informers_of_one_kind_each_answer_for_their_namespace() -> None:
    client = MemoryClient(MemoryStore())
    await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    await client.create(obj("v1", "ConfigMap", "x", "other"))
    await client.create(obj("v1", "ConfigMap", "y", "default"))
    reader = CacheReader()
    informers = [Informer(client, "v1", "ConfigMap", namespace=ns) for ns in ("default", "other")]
    for informer in informers:
        reader.add(informer)
    async with informers[0], informers[1]:
        for informer in informers:
            await informer.wait_for_sync()
        assert [o["metadata"]["name"] for o in reader.list("v1", "ConfigMap", "other", {})] == ["x"]
        assert [o["metadata"]["name"] for o in reader.list("v1", "ConfigMap", "default", {})] == ["y"]


async def test_informers_split_by_label_selector_answer_together() -> None:
    client = MemoryClient(MemoryStore())
    await client.create(obj("v1", "ConfigMap", "parent", role="parent"))
    await client.create(obj("v1", "ConfigMap", "child", role="child"))
    await client.create(obj("v1", "ConfigMap", "neither"))
    parents = Informer(client, "v1", "ConfigMap", label_selector="role=parent")
    children = Informer(client, "v1", "ConfigMap", label_selector="role=child")
    reader = CacheReader([parents, children])
    async with parents, children:
        assert await parents.wait_for_sync() and await children.wait_for_sync()
        assert reader.get("v1", "ConfigMap", "default", "child") is not None
        assert [o["metadata"]["name"] for o in reader.list("v1", "ConfigMap", "default", {})] == ["child", "parent"]
        assert reader.get("v1", "ConfigMap", "default", "neither") is None, "no informer selects it"
