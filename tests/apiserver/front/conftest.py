"""Fixtures for the HTTP front: an in-process app for REST semantics, a TLS server for real clients."""

from __future__ import annotations

import os
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
from aiohttp.test_utils import TestClient, TestServer
from front_support import Api, find_kubectl

from clusterclass.apiserver.front import ThreadedServer, make_app, serve_in_thread
from clusterclass.apiserver.store import MemoryStore


@pytest.fixture
def store() -> Iterator[MemoryStore]:
    store = MemoryStore(bookmark_interval=0.2)
    yield store
    store.close()


@pytest.fixture
async def api(store: MemoryStore) -> AsyncIterator[Api]:
    client = TestClient(TestServer(make_app(store, require_client_cert=False)))
    await client.start_server()
    try:
        yield Api(client)
    finally:
        await client.close()


@pytest.fixture
def served(store: MemoryStore, tmp_path: Path) -> Iterator[ThreadedServer]:
    """The store served over TLS in a thread, with its kubeconfig in ``tmp_path``."""
    server = serve_in_thread(store, kubeconfig_path=tmp_path / "kubeconfig")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def kubectl_binary() -> str:
    found = find_kubectl()
    if found is None:
        if os.environ.get("CI"):
            pytest.fail("kubectl not found: run scripts/build-apiserver.sh")
        pytest.skip("kubectl not found (scripts/build-apiserver.sh builds it)")
    return found
