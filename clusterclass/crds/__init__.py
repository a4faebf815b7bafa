"""The Cluster API CustomResourceDefinitions shipped with the package: data only, below every other package.

The YAML files here are links to ``config/crd/bases`` (a wheel build turns them into copies): upstream Cluster
API v1.14's CRDs with their contract labels (``scripts/vendor-crds.py``; Apache-2.0, LICENSE beside them). The
embedded management cluster installs them (``clusterclass.apiserver.crd``); ``plan`` and the pure pipeline read
only their names and contract labels (``clusterclass.api.contracts``).
"""

from __future__ import annotations

from collections.abc import Iterator
from importlib import resources
from importlib.abc import Traversable


def crd_files() -> Iterator[Traversable]:
    """Every bundled CRD file, by name."""
    directory = resources.files(__name__)
    for entry in sorted(directory.iterdir(), key=lambda e: e.name):
        if entry.name.endswith((".yaml", ".yml")):
            yield entry
