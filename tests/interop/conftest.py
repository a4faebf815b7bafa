"""The interoperability suite: clusterclass beside upstream Cluster API's own managers, built from its Go modules.

Every test here needs a real kube-apiserver (with kube-controller-manager) and an upstream release built by
``scripts/build-capi.sh``; without them the tests are skipped, except in CI (``CI`` set), where they fail.
They are marked ``interop`` (``-m 'not interop'`` leaves them out).
"""

from __future__ import annotations

import os
from collections.abc import AsyncIterator

import pytest
from support.upstream_capi import Release, ReleaseMissing

from clusterclass.kube.client import Client

#: a guard for a whole test (a lifecycle on two cores takes a few minutes)
TEST_TIMEOUT = 900


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "/interop/" in str(item.path):
            item.add_marker(pytest.mark.interop)
            item.add_marker(pytest.mark.real_apiserver)
            if item.get_closest_marker("timeout") is None:
                item.add_marker(pytest.mark.timeout(TEST_TIMEOUT))


def release_or_skip(version: str) -> Release:
    try:
        return Release.find(version)
    except ReleaseMissing as missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs upstream Cluster API {version}: {missing}")
        pytest.skip(str(missing))


async def closing(client: Client) -> AsyncIterator[Client]:
    try:
        yield client
    finally:
        await client.close()
