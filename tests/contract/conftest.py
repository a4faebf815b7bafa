"""The contract suite's backends: one set of tests, run against every implementation of the Client.

Every test here takes the ``client`` fixture (or ``backend``), parametrised over:

- ``memory``: :class:`~clusterclass.kube.memory_client.MemoryClient` over a fresh
  :class:`~clusterclass.kube.memory.MemoryStore`, in this process;
- ``http-embedded``: the embedded store served by ``clusterclass apiserver``'s HTTP front, reached
  with :class:`~clusterclass.kube.http.HttpClient`;
- ``real``: a real kube-apiserver and etcd (``tests/support/real_apiserver.py``), reached with
  :class:`~clusterclass.kube.http.HttpClient`. It is the truth: the tests are written against it,
  and the other two must answer the same.

Each test gets a fresh namespace (``namespace``), created through the client itself. Assertions are
on behaviour that is the same on all three; where kube-apiserver's wording is not ours, tests
compare the error type, code, reason and field paths rather than the message.

A backend whose code has not landed yet is collected and skipped with "backend not built yet".
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from clusterclass.api.objects import Obj
from clusterclass.kube.client import Client

BACKENDS = ("memory", "http-embedded", "real")

#: no contract test may hang: a watch that never ends fails the test instead
TEST_TIMEOUT = 90


@dataclass
class Backend:
    """One backend under test: its name, a client, and how to make its watch history too old."""

    name: str
    client: Client
    #: after this, a watch of ConfigMaps from any resourceVersion read before it raises Gone
    expire_history: Callable[[], Awaitable[None]]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timeout") is None and "/contract/" in str(item.path):
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


def _not_built(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except ImportError:
        pytest.skip("backend not built yet")


@contextlib.asynccontextmanager
async def _memory(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    memory_client = _not_built("clusterclass.kube.memory_client")
    from clusterclass.kube.memory import MemoryStore

    store = MemoryStore()
    client = memory_client.MemoryClient(store)

    async def expire_history() -> None:
        await _expire_memory_history(store)

    try:
        yield Backend("memory", client, expire_history)
    finally:
        await client.close()
        store.close()


async def _expire_memory_history(store: Any) -> None:
    _expire_memory_history_sync(store)


def _expire_memory_history_sync(store: Any) -> None:
    """The memory twin of etcd compaction past the newest revision (what the real backend's expire does).

    Every resourceVersion handed out so far becomes too old to watch from, and a fresh list answers one
    that can be watched from. ``MemoryStore.compact()`` when the store has it; until then the same
    through the store's internals (requested from the store's owner): the resourceVersion moves on by
    one without any change, and each kind's history starts there. Pushing the history out with writes
    would not do: the writes move the store's resourceVersion, and watches receive it in bookmarks.
    """
    compact = getattr(store, "compact", None)
    if compact is not None:
        compact()
        return
    with store._lock:
        store._resource_version += 1
        for history in store._hub._histories.values():
            history.changes.clear()
            history.floor = store._resource_version


@pytest.fixture(scope="session")
def embedded_apiserver() -> Iterator[Any]:
    """The embedded store served over HTTPS by the front, in a thread: one per session, like the real server."""
    serving = _not_built("clusterclass.kube.server.serving")
    from clusterclass.kube.memory import MemoryStore

    store = MemoryStore()
    workdir = Path(tempfile.mkdtemp(prefix="contract-embedded-"))
    server = serving.serve_in_thread(store, kubeconfig_path=workdir / "kubeconfig")
    try:
        yield server, store
    finally:
        server.stop()
        store.close()
        shutil.rmtree(workdir, ignore_errors=True)


@contextlib.asynccontextmanager
async def _http_embedded(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    http = _not_built("clusterclass.kube.http")
    server, store = request.getfixturevalue("embedded_apiserver")
    client = http.HttpClient.from_kubeconfig(server.kubeconfig_path)

    async def expire_history() -> None:
        await asyncio.to_thread(_expire_memory_history_sync, store)

    try:
        yield Backend("http-embedded", client, expire_history)
    finally:
        await client.close()


@contextlib.asynccontextmanager
async def _real(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    _not_built("clusterclass.kube.http")
    server = request.getfixturevalue("real_apiserver")
    client = server.client()

    async def expire_history() -> None:
        await asyncio.to_thread(server.compact)

    try:
        yield Backend("real", client, expire_history)
    finally:
        await client.close()


_FACTORIES = {"memory": _memory, "http-embedded": _http_embedded, "real": _real}


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    async with _FACTORIES[request.param](request) as built:
        yield built


@pytest.fixture
def client(backend: Backend) -> Client:
    return backend.client


@pytest.fixture
async def namespace(client: Client) -> str:
    """A fresh namespace for this test, made through the backend under test."""
    created: Obj = await client.create(
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "contract-"}}
    )
    return str(created["metadata"]["name"])
