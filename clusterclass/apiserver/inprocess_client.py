"""The :class:`~clusterclass.kube.client.Client` protocol over an in-process :class:`MemoryStore`.

:class:`~clusterclass.apiserver.store.MemoryStore` is synchronous: it holds one lock for the length of
a call and never waits on anything, so tests, benchmarks and the HTTP front can drive it directly.
Controllers speak the asynchronous ``Client`` protocol; :class:`MemoryClient` is that protocol for
a store in the same process. Each call runs the store's call inline (no thread hop: a store call
is short and never blocks on I/O, except the SQLite commit of a persistent store, which is what
acknowledging a write means).

A watch opened through the client is the store's watch, iterated on the caller's event loop; the
store delivers events into that loop thread-safely, so writers on other threads or other loops
never wait for a watcher. :meth:`MemoryClient.close` ends every watch the client opened.

Writes without a ``field_manager`` are recorded in ``managedFields`` under
:data:`~clusterclass.kube.client.DEFAULT_FIELD_MANAGER` (``clusterclass``), as kube-apiserver
records them under a name derived from the client's user agent.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.apiserver.store import MemoryStore
from clusterclass.apiserver.watch_cache import MemoryWatch
from clusterclass.kube.client import (
    FieldSelectorLike,
    LabelSelector,
    ObjectList,
    PatchType,
    Preconditions,
    PropagationPolicy,
    Resource,
    WatchEvent,
)


class MemoryClient:
    """A :class:`~clusterclass.kube.client.Client` backed by a :class:`MemoryStore` in this process.

    ``store`` defaults to a fresh store (Cluster API kinds registered, namespace ``default``).
    Several clients may share one store; each returned object is the caller's own copy.
    """

    def __init__(self, store: MemoryStore | None = None) -> None:
        self.store = store if store is not None else MemoryStore()
        self._watches: set[MemoryWatch] = set()

    async def resource(self, api_version: str, kind: str) -> Resource:
        return self.store.resource(api_version, kind)

    async def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        return self.store.get(api_version, kind, name, namespace=namespace)

    async def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
    ) -> ObjectList:
        return self.store.list(
            api_version, kind, namespace=namespace, label_selector=label_selector, field_selector=field_selector
        )

    def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
        resource_version: str | None = None,
        bookmarks: bool = True,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """The store's watch, opened when iteration starts; errors (``Gone``) come from the iterator.

        Opening lazily means a watch that is never iterated holds nothing in the store, and an
        error reaches the caller where an HTTP backend's would: on the first ``__anext__``.
        """
        return self._watch(
            api_version,
            kind,
            namespace=namespace,
            label_selector=label_selector,
            field_selector=field_selector,
            resource_version=resource_version,
            bookmarks=bookmarks,
            timeout_seconds=timeout_seconds,
        )

    async def _watch(self, api_version: str, kind: str, **options: Any) -> AsyncIterator[WatchEvent]:
        watch = self.store.watch(api_version, kind, **options)
        self._watches.add(watch)
        try:
            async for event in watch:
                yield event
        finally:
            watch.close()
            self._watches.discard(watch)

    async def create(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        return self.store.create(obj, dry_run=dry_run, field_manager=field_manager)

    async def update(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        return self.store.update(obj, dry_run=dry_run, field_manager=field_manager)

    async def update_status(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        return self.store.update_status(obj, dry_run=dry_run, field_manager=field_manager)

    async def apply(
        self,
        obj: Obj,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        status: bool = False,
    ) -> Obj:
        return self.store.apply(obj, field_manager=field_manager, force=force, dry_run=dry_run, status=status)

    async def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        *,
        patch_type: PatchType = "merge",
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        status: bool = False,
    ) -> Obj:
        return self.store.patch(
            api_version,
            kind,
            name,
            patch,
            patch_type=patch_type,
            namespace=namespace,
            dry_run=dry_run,
            field_manager=field_manager,
            status=status,
        )

    async def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy | None = None,
        dry_run: bool = False,
    ) -> Obj | None:
        return self.store.delete(
            api_version,
            kind,
            name,
            namespace=namespace,
            preconditions=preconditions,
            propagation_policy=propagation_policy,
            dry_run=dry_run,
        )

    async def close(self) -> None:
        """End every watch opened through this client; the store itself stays open for others."""
        for watch in list(self._watches):
            watch.close()
        self._watches.clear()
