"""The contract suite's backends: one set of tests, run against every implementation of the Client.

Every test here takes the ``client`` fixture (or ``backend``), parametrised over:

- ``memory``: :class:`~clusterclass.apiserver.inprocess_client.MemoryClient` over a fresh
  :class:`~clusterclass.apiserver.store.MemoryStore`, in this process;
- ``http-embedded``: the embedded store served by ``clusterclass apiserver``'s HTTP front, reached
  with :class:`~clusterclass.kube.http.HttpClient`;
- ``real``: a real kube-apiserver and etcd (``tests/support/real_apiserver.py``), reached with
  :class:`~clusterclass.kube.http.HttpClient`. It is the truth: the tests are written against it,
  and the other two must answer the same.

Each test gets a fresh namespace (``namespace``), created through the client itself. Assertions are
on behaviour that is the same on all three; where kube-apiserver's wording is not ours, tests
compare the error type, code, reason and field paths rather than the message.

GC is not here: the test kube-apiserver runs no kube-controller-manager, so garbage collection is
tested on the embedded store alone (``tests/apiserver/test_gc.py``), against kube-controller-manager's behaviour.
"""

from __future__ import annotations

import asyncio
import shutil
import tempfile
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from contract_support import Backend

from clusterclass.api.objects import Obj
from clusterclass.apiserver.front.serving import serve_in_thread
from clusterclass.apiserver.inprocess_client import MemoryClient
from clusterclass.apiserver.store import MemoryStore
from clusterclass.kube.client import Client
from clusterclass.kube.http import HttpClient

BACKENDS = ("memory", "http-embedded", "real")

#: no contract test may hang: a watch that never ends fails the test instead
TEST_TIMEOUT = 90


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timeout") is None and "/contract/" in str(item.path):
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


@pytest.fixture
def memory_store() -> Iterator[MemoryStore]:
    store = MemoryStore()
    yield store
    store.close()


@pytest.fixture(scope="session")
def embedded_apiserver() -> Iterator[Any]:
    """The embedded store served over HTTPS by the front, in a thread: one per session, like the real server."""
    store = MemoryStore()
    workdir = Path(tempfile.mkdtemp(prefix="contract-embedded-"))
    server = serve_in_thread(store, kubeconfig_path=workdir / "kubeconfig")
    try:
        yield server, store
    finally:
        server.stop()
        store.close()
        shutil.rmtree(workdir, ignore_errors=True)


def _in_a_thread(compact: Callable[[], object]) -> Callable[[], Awaitable[None]]:
    """``compact`` as a Backend's ``expire_history``: run off the event loop, as it blocks on another server."""

    async def expire_history() -> None:
        await asyncio.to_thread(compact)

    return expire_history


def _memory(request: pytest.FixtureRequest) -> Backend:
    store: MemoryStore = request.getfixturevalue("memory_store")

    async def expire_history() -> None:  # the memory twin of etcd compaction past the newest revision
        store.compact()

    return Backend("memory", MemoryClient(store), expire_history)


def _http_embedded(request: pytest.FixtureRequest) -> Backend:
    server, store = request.getfixturevalue("embedded_apiserver")
    return Backend("http-embedded", HttpClient.from_kubeconfig(server.kubeconfig_path), _in_a_thread(store.compact))


def _real(request: pytest.FixtureRequest) -> Backend:
    server = request.getfixturevalue("real_apiserver")
    return Backend("real", server.client(), _in_a_thread(server.compact))


_FACTORIES = {"memory": _memory, "http-embedded": _http_embedded, "real": _real}


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Backend]:
    """The backend named by the parameter; its client is closed after the test, before its server stops."""
    built = _FACTORIES[request.param](request)
    try:
        yield built
    finally:
        await built.client.close()


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
