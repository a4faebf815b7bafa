"""The controllers' end-to-end suite runs on two backends, with the same assertions.

- ``memory``: the embedded store in this process (:class:`~clusterclass.apiserver.MemoryClient`);
- ``real``: a real kube-apiserver and etcd (``tests/support/real_apiserver.py``), through
  :class:`~clusterclass.kube.http.HttpClient`, as ``clusterclass run`` talks to a management cluster.

Each test gets a fresh namespace and its own controllers watching only that namespace
(:class:`controller_support.Env`). The real kube-apiserver runs no kube-controller-manager, so nothing
there garbage-collects: tests that depend on ownerReference cascades say so and run on ``memory``.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator

import pytest
from controller_support import Env

from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.kube.client import Client

BACKENDS = ("memory", "real")
TEST_TIMEOUT = 120


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timeout") is None and "/controllers/" in str(item.path):
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


@pytest.fixture
def memory_store() -> Iterator[MemoryStore]:
    store = MemoryStore()
    yield store
    store.close()


@pytest.fixture(params=BACKENDS)
async def backend(request: pytest.FixtureRequest) -> AsyncIterator[Client]:
    if request.param == "memory":
        client: Client = MemoryClient(request.getfixturevalue("memory_store"))
    else:
        client = request.getfixturevalue("real_apiserver").client()
    try:
        yield client
    finally:
        await client.close()


@pytest.fixture
async def env(backend: Client) -> AsyncIterator[Env]:
    created = await backend.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "topology-"}})
    world = Env(backend, created["metadata"]["name"])
    try:
        yield world
    finally:
        await world.stop()


@pytest.fixture
async def running(env: Env) -> Env:
    """``env`` with its controllers started."""
    await env.start()
    return env
