"""The end-to-end suite: the controllers and simulated providers on the embedded store and on a real kube-apiserver.

Each test gets a fresh namespace and a :class:`e2e_support.SimEnv` watching only it. ``env`` runs on the
embedded store; ``any_env`` runs the same test on both backends. The real kube-apiserver runs no
kube-controller-manager, so nothing there garbage-collects: tests that need ownerReference cascades
(deleting a Cluster) use ``env``.
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
    if backend == "memory":
        store = MemoryStore()
        client: Client = MemoryClient(store)
    else:
        store = None
        client = request.getfixturevalue("real_apiserver").client()
    try:
        async for world in _env(client):
            yield world
    finally:
        await client.close()
        if store is not None:
            store.close()
