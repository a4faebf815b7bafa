"""The end-to-end suite: the controllers and simulated providers on the embedded store and on a real kube-apiserver.

Each test gets a fresh namespace and a :class:`e2e_support.SimEnv` watching only it. ``env`` runs on the
embedded store; ``any_env`` runs the same test on both backends. The real kube-apiserver of ``any_env`` runs no
kube-controller-manager, so nothing there garbage-collects; tests that need ownerReference cascades (deleting
a Cluster, removing a pool) use ``collected_env``: the embedded store, and a real kube-apiserver with
kube-controller-manager's garbage collector, which collects asynchronously, after the delete has answered.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import pytest
from e2e_support import SimEnv

from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.kube.client import Client

TEST_TIMEOUT = 180


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker("timeout") is None and "/e2e/" in str(item.path):
            item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


async def _env(client: Client) -> AsyncIterator[SimEnv]:
    created = await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "e2e-"}})
    world = SimEnv(client, created["metadata"]["name"])
    try:
        await world.start()
        yield world
    finally:
        await world.close()


@pytest.fixture
async def env() -> AsyncIterator[SimEnv]:
    store = MemoryStore()
    client = MemoryClient(store)
    try:
        async for world in _env(client):
            yield world
    finally:
        await client.close()
        store.close()


@pytest.fixture(params=["memory", "real"])
def backend(request: pytest.FixtureRequest) -> str:
    return str(request.param)


@pytest.fixture
async def any_env(backend: str, request: pytest.FixtureRequest) -> AsyncIterator[SimEnv]:
    async for world in _on_backend(backend, "real_apiserver", request):
        yield world


@pytest.fixture
async def collected_env(backend: str, request: pytest.FixtureRequest) -> AsyncIterator[SimEnv]:
    async for world in _on_backend(backend, "real_apiserver_with_gc", request):
        yield world


async def _on_backend(backend: str, real_fixture: str, request: pytest.FixtureRequest) -> AsyncIterator[SimEnv]:
    """A :class:`SimEnv` on the embedded store, or on the real kube-apiserver of the fixture ``real_fixture``."""
    if backend == "memory":
        store = MemoryStore()
        client: Client = MemoryClient(store)
    else:
        store = None
        client = request.getfixturevalue(real_fixture).client()
    try:
        async for world in _env(client):
            yield world
    finally:
        await client.close()
        if store is not None:
            store.close()
