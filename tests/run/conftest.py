"""The ``installed`` fixture of the tests of ``clusterclass run`` on a real kube-apiserver (:mod:`run_support`)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from run_support import Installed, install


@pytest.fixture(scope="module")
def installed(controller_manager_binaries: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Installed]:
    """One kube-apiserver with clusterclass's RBAC per module (module doc of :mod:`run_support`)."""
    done = install(controller_manager_binaries, tmp_path_factory.mktemp("run"))
    try:
        yield done
    finally:
        done.api.stop()
