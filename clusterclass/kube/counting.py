"""A :class:`~clusterclass.kube.client.Client` that counts the requests it forwards, by verb.

The topology controller's promise is measurable: a converged Cluster costs no request, creating one
costs a known number. This wrapper counts what goes through it (``get``, ``list``, ``watch``,
``create``, ``update``, ``update_status``, ``apply``, ``apply_dry_run``, ``patch``, ``delete``), for the
benchmarks, for the tests that hold the controller to that promise, and for request metrics.
A dry-run apply is counted apart: it reads (with the server's defaulting), it does not write.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.kube.client import Client, ObjectList, Resource, WatchEvent

#: the verbs that change something on the server
WRITES = ("create", "update", "update_status", "apply", "patch", "delete")


class CountingClient:
    """Forwards every call to ``inner`` and counts it in :attr:`counts`."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.counts: Counter[str] = Counter()

    def reset(self) -> None:
        self.counts.clear()

    @property
    def writes(self) -> int:
        return sum(self.counts[verb] for verb in WRITES)

    @property
    def reads(self) -> int:
        """Reads other than watches: gets, lists and dry runs."""
        return self.counts["get"] + self.counts["list"] + self.counts["apply_dry_run"]

    def _count(self, verb: str, what: Any) -> None:
        """Count one request (a hook for subclasses that want to see, or refuse, it)."""
        self.counts[verb] += 1

    async def resource(self, api_version: str, kind: str) -> Resource:
        return await self.inner.resource(api_version, kind)

    async def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        self._count("get", kind)
        return await self.inner.get(api_version, kind, name, namespace=namespace)

    async def list(self, api_version: str, kind: str, **options: Any) -> ObjectList:
        self._count("list", kind)
        return await self.inner.list(api_version, kind, **options)

    def watch(self, api_version: str, kind: str, **options: Any) -> AsyncIterator[WatchEvent]:
        self.counts["watch"] += 1
        return self.inner.watch(api_version, kind, **options)

    async def create(self, obj: Obj, **options: Any) -> Obj:
        self._count("create", obj)
        return await self.inner.create(obj, **options)

    async def update(self, obj: Obj, **options: Any) -> Obj:
        self._count("update", obj)
        return await self.inner.update(obj, **options)

    async def update_status(self, obj: Obj, **options: Any) -> Obj:
        self._count("update_status", obj)
        return await self.inner.update_status(obj, **options)

    async def apply(self, obj: Obj, **options: Any) -> Obj:
        self._count("apply_dry_run" if options.get("dry_run") else "apply", obj)
        return await self.inner.apply(obj, **options)

    async def patch(self, api_version: str, kind: str, name: str, patch: Any, **options: Any) -> Obj:
        self._count("patch", kind)
        return await self.inner.patch(api_version, kind, name, patch, **options)

    async def delete(self, api_version: str, kind: str, name: str, **options: Any) -> Obj | None:
        self._count("delete", kind)
        return await self.inner.delete(api_version, kind, name, **options)

    async def close(self) -> None:
        await self.inner.close()
