"""The API version the simulated providers speak: v1beta1, for every kind the Cluster API conversions know.

The simulated core, kubeadm and Docker controllers were written to upstream's v1beta1 types (with the v1beta2
conditions and counters v1.14 keeps under ``status.v1beta2`` of a v1beta1 object), so they read and compute every
Cluster API object in v1beta1, whatever version a reference names (a v1beta2 Cluster's references name no version
at all; a v1beta1 reference to a v1beta2 provider object names v1beta2). The API server converts what they read,
as it does for any v1beta1 client of a v1.14 management cluster; the shared caches convert reads
(:mod:`clusterclass.kube.cache_reader`). What they create and write goes in the kind's hub version, as upstream's
controllers send it (:func:`clusterclass.sim.base.write`).

:class:`SimManager` is the manager as the providers see it: every request, informer and cache read it passes on
is made in the simulation's version.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Mapping
from typing import Any, Final, TypeVar

from clusterclass.api.conversion import conversion_for, in_version
from clusterclass.api.objects import Obj
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.kube.cache_reader import CacheReader
from clusterclass.kube.client import Client, ObjectList, Resource
from clusterclass.kube.informer import Informer

SIM_VERSION: Final = "v1beta1"

T = TypeVar("T")


def sim_cache_version(group: str, kind: str) -> str | None:
    """The manager's :attr:`~clusterclass.controllers.runtime.manager.Manager.cache_version` with the simulation
    on it: the providers read their informers directly, so a kind they may read is cached in their version."""
    conversion = conversion_for(group, kind)
    return SIM_VERSION if conversion is not None and SIM_VERSION in conversion.versions else None


def sim_api_version(api_version: str, kind: str) -> str:
    """``api_version`` as the simulation speaks it: v1beta1 for a kind the conversions know, else unchanged."""
    return in_version(api_version, kind, SIM_VERSION)


class SimClient:
    """A :class:`~clusterclass.kube.client.Client` whose reads, watches and deletes are made in the simulation's
    version (objects written carry their own apiVersion, which the simulation builds in v1beta1)."""

    def __init__(self, client: Client) -> None:
        self._client = client

    @property
    def unpinned(self) -> Client:
        """The client itself, for the writes the providers make in a kind's hub version (``sim.base.write``)."""
        return self._client

    async def resource(self, api_version: str, kind: str) -> Resource:
        return await self._client.resource(sim_api_version(api_version, kind), kind)

    async def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        return await self._client.get(sim_api_version(api_version, kind), kind, name, namespace=namespace)

    async def list(self, api_version: str, kind: str, **options: Any) -> ObjectList:
        return await self._client.list(sim_api_version(api_version, kind), kind, **options)

    def watch(self, api_version: str, kind: str, **options: Any) -> AsyncIterator[Any]:
        return self._client.watch(sim_api_version(api_version, kind), kind, **options)

    async def delete(self, api_version: str, kind: str, name: str, **options: Any) -> Obj | None:
        return await self._client.delete(sim_api_version(api_version, kind), kind, name, **options)

    async def patch(self, api_version: str, kind: str, name: str, patch: Any, **options: Any) -> Obj:
        return await self._client.patch(sim_api_version(api_version, kind), kind, name, patch, **options)

    async def create(self, obj: Obj, **options: Any) -> Obj:
        return await self._client.create(obj, **options)

    async def update(self, obj: Obj, **options: Any) -> Obj:
        return await self._client.update(obj, **options)

    async def update_status(self, obj: Obj, **options: Any) -> Obj:
        return await self._client.update_status(obj, **options)

    async def apply(self, obj: Obj, **options: Any) -> Obj:
        return await self._client.apply(obj, **options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._client, name)


class SimReader:
    """The manager's :class:`~clusterclass.kube.cache_reader.CacheReader`, answering in the simulation's version."""

    def __init__(self, reader: CacheReader) -> None:
        self._reader = reader

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        return self._reader.get(sim_api_version(api_version, kind), kind, namespace, name)

    def list(self, api_version: str, kind: str, namespace: str, labels: Mapping[str, str | None]) -> list[Obj]:
        return self._reader.list(sim_api_version(api_version, kind), kind, namespace, labels)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._reader, name)


class SimManager:
    """The shared :class:`~clusterclass.controllers.runtime.manager.Manager` as the simulated providers use it."""

    def __init__(self, manager: Manager) -> None:
        self.manager = manager
        self.client = SimClient(manager.client)
        self.reader = SimReader(manager.reader)

    async def informer(self, api_version: str, kind: str, **options: Any) -> Informer:
        return await self.manager.informer(sim_api_version(api_version, kind), kind, **options)

    async def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        return await self.manager.get(sim_api_version(api_version, kind), kind, namespace, name)

    async def read(self, function: Callable[[Any], T]) -> T:
        return await self.manager.read(lambda reader: function(SimReader(reader)))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.manager, name)
