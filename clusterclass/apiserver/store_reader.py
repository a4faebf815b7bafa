"""The topology pipeline's :class:`~clusterclass.topology.reader.Reader` over a synchronous store.

The pipeline is synchronous and pure; the :class:`~clusterclass.kube.client.Client` protocol is
asynchronous. In-process callers that hold the store itself (tests, the simulator, ``plan`` against
a saved embedded cluster) read through :class:`StoreReader`; controllers read their informer caches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Protocol

from clusterclass.api.objects import Obj, name_of, namespace_of
from clusterclass.kube.errors import NotFound
from clusterclass.kube.selectors import from_labels


class SyncStore(Protocol):
    """The two reads :class:`StoreReader` needs (what :class:`~clusterclass.apiserver.store.MemoryStore` has)."""

    def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj: ...

    def list(
        self, api_version: str, kind: str, *, namespace: str | None = None, label_selector: Any = None
    ) -> tuple[list[Obj], str]: ...


class StoreReader:
    """A Reader over a synchronous store.

    The Reader's namespace ``""`` (cluster-scoped) becomes None, and ``list`` keeps only objects in
    exactly the namespace asked for, as :class:`~clusterclass.topology.reader.ObjectIndex` does (so
    ``""`` never lists a namespaced kind across all namespaces). A NotFound on ``get`` becomes None.
    Any other API error propagates (a namespaced kind asked for with ``""`` is a BadRequest): the
    pipeline must not mistake an unreachable server for a missing object.
    """

    def __init__(self, store: SyncStore) -> None:
        self.store = store

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        try:
            return self.store.get(api_version, kind, name, namespace=namespace or None)
        except NotFound:
            return None

    def list(self, api_version: str, kind: str, namespace: str, labels: Mapping[str, str | None]) -> list[Obj]:
        items, _ = self.store.list(api_version, kind, namespace=namespace or None, label_selector=from_labels(labels))
        return sorted((obj for obj in items if namespace_of(obj) == namespace), key=name_of)
