"""Test-suite settings shared by every directory.

Property-based tests explore random examples while we develop; in CI (``CI`` set) they run a fixed,
derandomized set of examples, so a CI run is reproducible and a new counterexample is found here,
not by chance on a submission. Neither fails a test for slow input generation (``HealthCheck.too_slow``): that
measures the machine's load at the moment — a 2-core machine building Go beside the suite — not the code.
"""

import os
from collections.abc import AsyncIterator, Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, settings
from support.real_apiserver import BinariesMissing, RealApiServer, find_binaries, require_controller_manager

settings.register_profile("dev", suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("ci", derandomize=True, database=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("ci" if os.environ.get("CI") else "dev")


# -- the real kube-apiserver (tests/support/real_apiserver.py) ------------------------------------


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "real_apiserver: uses the real kube-apiserver and etcd (deselect with -m 'not real_apiserver')"
    )
    config.addinivalue_line(
        "markers",
        "interop: runs beside upstream Cluster API's own managers, built by scripts/build-capi.sh "
        "(deselect with -m 'not interop')",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Mark every test that uses the real kube-apiserver, so ``-m 'not real_apiserver'`` leaves them out.

    That is every test taking the ``real_apiserver``, ``real_apiserver_with_gc`` or ``controller_manager_binaries``
    fixture and every test on the ``real`` backend (which asks for its fixture only when it runs).
    """
    for item in items:
        callspec = getattr(item, "callspec", None)
        on_real = callspec is not None and callspec.params.get("backend") == "real"
        fixtures = getattr(item, "fixturenames", ())
        if on_real or {"real_apiserver", "real_apiserver_with_gc", "controller_manager_binaries"} & set(fixtures):
            item.add_marker(pytest.mark.real_apiserver)


def real_apiserver_binaries_or_skip(*, controller_manager: bool = False) -> Any:
    """The binaries (with kube-controller-manager if asked); without them the test is skipped, except in CI
    (``CI`` set), where it fails."""
    try:
        binaries = find_binaries()
        if controller_manager:
            require_controller_manager(binaries)
        return binaries
    except BinariesMissing as missing:
        if os.environ.get("CI"):
            pytest.fail(f"CI needs the real kube-apiserver: {missing}")
        pytest.skip(str(missing))


@pytest.fixture(scope="session")
def controller_manager_binaries() -> Any:
    """The binaries with kube-controller-manager, for tests that start a server of their own with it."""
    return real_apiserver_binaries_or_skip(controller_manager=True)


@pytest.fixture(scope="session")
def real_apiserver_with_gc(controller_manager_binaries: Any) -> Iterator[RealApiServer]:
    """A second etcd and kube-apiserver, with kube-controller-manager's garbage collector and namespace controller.

    Kept apart from :func:`real_apiserver` so that the many tests sharing that one keep envtest's conditions
    (nothing but their own requests changes what they see) and the collector's work does not load it.
    """
    server = RealApiServer(controller_manager_binaries, controller_manager=True).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def real_apiserver() -> Iterator[RealApiServer]:
    """One etcd and kube-apiserver for the whole session, with the Cluster API CRDs installed."""
    server = RealApiServer(real_apiserver_binaries_or_skip()).start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture
def real_namespace(real_apiserver: RealApiServer) -> str:
    """A fresh namespace on the real kube-apiserver for this test (never deleted: no namespace controller runs)."""
    return real_apiserver.create_namespace("test-")


@pytest.fixture
async def real_client(real_apiserver: RealApiServer) -> AsyncIterator[Any]:
    """A :class:`~clusterclass.kube.client.Client` for the real kube-apiserver, closed after the test."""
    client = real_apiserver.client()
    try:
        yield client
    finally:
        await client.close()
