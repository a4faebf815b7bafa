"""The manager: one shared informer per watched kind, the controllers, and their start and graceful stop.

controller-runtime's manager, for asyncio. Controllers ask it for informers (:meth:`Manager.informer`)
instead of starting their own, so the topology and ClusterClass controllers share one cache of
Clusters, one of ClusterClasses, and so on; an informer is identified by API group, kind and selectors,
and lives in the manager's namespace (``--namespace``) when its kind is namespaced.

Reads in a reconcile come from the caches, through :attr:`Manager.reader` (a
:class:`~clusterclass.kube.cache_reader.CacheReader`). The topology pipeline reads kinds only the
ClusterClass names (its templates, the InfrastructureCluster, the control plane), so :meth:`Manager.read`
runs a pure read function and, when it asks for a kind no informer caches yet, starts one, waits for its
first list and runs the function again: controller-runtime's cache starts informers on first use the same
way. The function must be free of side effects, since it may run several times.

A kind the Cluster API conversions know is cached in one version whatever version the first reader asked for:
the one the controllers are written to (v1beta1; v1alpha1 for ExtensionConfig), whose mappings, indexes and
predicates read the cached objects directly, when the server serves it (a v1beta2 management cluster converts
through its conversion webhook, as for any v1beta1 client); :attr:`Manager.cache_version` can choose another. Writes
go in the server's preferred version instead (:meth:`Manager.preferred_version`). The reader converts to the
version each read asks for (:mod:`clusterclass.kube.cache_reader`), with reference versions from the management
cluster's CRDs when a CRD informer runs (the ClusterClass controller starts one), else from the bundled CRDs.

Every controller added is instrumented with the manager's :class:`~clusterclass.controllers.runtime.metrics.Metrics`
(controller-runtime's reconcile and work-queue metrics), which ``clusterclass run`` serves.

Lifecycle: :meth:`start` starts every informer, waits until all have listed, then starts the controllers'
workers — or, with ``controllers=False``, only the caches, for a replica that waits for leader election and
meanwhile serves webhooks from them; :meth:`start_controllers` starts the workers later. :meth:`stop` shuts
every queue down, lets the reconciles in flight finish, then stops the
informers and flushes the event recorders. ``async with manager:`` does both.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TypeVar

from clusterclass.api import constants as c
from clusterclass.api.contracts import CrdContracts, bundled_contracts
from clusterclass.api.conversion import ConversionError, hub_version, spoke_version
from clusterclass.api.objects import Obj, group_of
from clusterclass.controllers.runtime.controller import Controller
from clusterclass.controllers.runtime.events import EventRecorder
from clusterclass.controllers.runtime.metrics import Metrics
from clusterclass.kube.cache_reader import CacheReader, NotCached, NotSynced
from clusterclass.kube.client import Client, FieldSelectorLike, LabelSelector
from clusterclass.kube.errors import NotFound
from clusterclass.kube.informer import Informer
from clusterclass.kube.workqueue import Clock, RealClock

logger = logging.getLogger(__name__)

T = TypeVar("T")

InformerKey = tuple[str, str, str, str]

#: how often :meth:`Manager.read` may start an informer and read again before giving up
MAX_READ_ATTEMPTS = 32


class Manager:
    """Shared informers and the controllers over them (module doc).

    ``namespace`` limits every namespaced informer to one namespace; ``resync_period`` re-delivers every
    cached object that often (``--sync-period``; None never); ``watch_timeout`` fixes how long each watch
    asks the server to last (tests use it to exercise the resume path).
    """

    def __init__(
        self,
        client: Client,
        *,
        namespace: str | None = None,
        resync_period: float | None = None,
        clock: Clock | None = None,
        watch_timeout: int | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.client = client
        self.metrics = metrics or Metrics()
        self.namespace = namespace
        self.resync_period = resync_period
        self.clock: Clock = clock or RealClock()
        self.watch_timeout = watch_timeout
        self._crds = _CachedCrds(self)
        self.reader = CacheReader(api_versions=self._crds)
        #: the version a convertible kind is cached in (group, kind → version); None: its spoke version if served
        self.cache_version: Callable[[str, str], str | None] = lambda _group, _kind: None
        self._preferred: dict[tuple[str, str], str] = {}
        self.controllers: list[Controller] = []
        self.recorders: list[EventRecorder] = []
        self._informers: dict[InformerKey, Informer] = {}
        self._starting: dict[InformerKey, asyncio.Task[Informer]] = {}
        self._controller_tasks: list[asyncio.Task[None]] = []
        self._running = False
        self._reconciling = False

    # -- informers ---------------------------------------------------------------------------------------

    async def informer(
        self,
        api_version: str,
        kind: str,
        *,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
    ) -> Informer:
        """The shared informer of ``kind`` with these selectors, created on first use.

        Once the manager runs, a new informer is started at once and this waits for its first list.
        """
        key = (group_of(api_version), kind, str(label_selector or ""), str(field_selector or ""))
        found = self._informers.get(key)
        if found is not None:
            if self._running and not found.has_synced:
                await found.wait_for_sync()
            return found
        starting = self._starting.get(key)
        if starting is None:
            starting = asyncio.ensure_future(self._new_informer(key, api_version, kind, label_selector, field_selector))
            self._starting[key] = starting
        try:
            return await asyncio.shield(starting)
        finally:
            if starting.done():
                self._starting.pop(key, None)

    async def _new_informer(
        self,
        key: InformerKey,
        api_version: str,
        kind: str,
        label_selector: LabelSelector | None,
        field_selector: FieldSelectorLike | None,
    ) -> Informer:
        api_version = await self._cached_version(api_version, kind)
        resource = await self.client.resource(api_version, kind)
        informer = Informer(
            self.client,
            api_version,
            kind,
            namespace=self.namespace if resource.namespaced else None,
            label_selector=label_selector,
            field_selector=field_selector,
            clock=self.clock,
            resync_period=self.resync_period,
            watch_timeout=self.watch_timeout,
        )
        informer.add_standard_indexes()
        self._informers[key] = informer
        self.reader.add(informer)
        if self._running:
            informer.start()
            await informer.wait_for_sync()
        return informer

    async def _cached_version(self, api_version: str, kind: str) -> str:
        """The version a kind is cached in (module doc)."""
        group = group_of(api_version)
        chosen = self.cache_version(group, kind) or spoke_version(group, kind)
        if chosen is None or api_version == f"{group}/{chosen}":
            return api_version
        try:
            await self.client.resource(f"{group}/{chosen}", kind)
        except NotFound:
            return api_version  # not served (a management cluster without that version): cache what was asked
        return f"{group}/{chosen}"

    async def preferred_version(self, api_version: str, kind: str) -> str:
        """The version to talk to the server in about ``kind``: its hub version (v1beta2) when the conversions
        know it and the server serves it, else ``api_version`` (a management cluster with older CRDs).

        A provider's kind (any group but Cluster API's core) is written no newer than the version its CRD's
        contract labels name (upstream's ``contract.GetAPIVersion``): on a management cluster whose providers
        implement the v1beta1 contract (upstream v1.6's generation) a provider object is written in v1beta1 even
        where its CRD serves v1beta2 too, as upstream v1.6's controller wrote it (a v1beta2 write would take every
        field's ownership over to another version, a write with no change, at the first reconcile after a
        handover)."""
        group = group_of(api_version)
        hub = hub_version(group, kind)
        if hub is None or api_version == f"{group}/{hub}":
            return api_version
        key = (group, kind)
        if key not in self._preferred:
            if group != c.CLUSTER_GROUP:
                contract_version = self._contract_version(group, kind)
                if contract_version is not None and contract_version != f"{group}/{hub}":
                    if self._crds.from_cluster:
                        self._preferred[key] = ""  # decided by the management cluster's own CRD: remembered
                    return api_version
            try:
                await self.client.resource(f"{group}/{hub}", kind)
                self._preferred[key] = f"{group}/{hub}"
            except NotFound:
                self._preferred[key] = ""
        return self._preferred[key] or api_version

    def _contract_version(self, group: str, kind: str) -> str | None:
        """The version the kind's CRD names for the newest contract it implements, or None when no CRD says."""
        try:
            return self._crds.api_version(group, kind)
        except ConversionError:
            return None

    async def serves_v1beta2(self, kind: str) -> bool:
        """Whether the management cluster serves Cluster API core ``kind`` in v1beta2: its upstream generation is
        v1.14's, whose webhooks and status shapes clusterclass then follows, rather than v1.6's (v1beta1 alone)."""
        return await self.preferred_version(c.CLUSTER_API_VERSION, kind) != c.CLUSTER_API_VERSION

    @property
    def informers(self) -> list[Informer]:
        return list(self._informers.values())

    async def read(self, function: Callable[[CacheReader], T]) -> T:
        """``function(reader)``, starting the informers it turns out to need (module doc)."""
        for _ in range(MAX_READ_ATTEMPTS):
            try:
                return function(self.reader)
            except NotCached as missing:
                await self.informer(missing.api_version, missing.kind)
            except NotSynced as unsynced:
                for informer in self.reader.informers_of(unsynced.api_version, unsynced.kind):
                    await informer.wait_for_sync()
        return function(self.reader)

    async def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        """One object from the cache, starting the kind's informer on first use."""
        return await self.read(lambda reader: reader.get(api_version, kind, namespace, name))

    # -- controllers and events -------------------------------------------------------------------------

    def add(self, controller: Controller) -> Controller:
        """Run ``controller`` with the manager (at once if it runs already), reporting to :attr:`metrics`."""
        controller.metrics = self.metrics.controller(controller.name, controller.workers)
        controller.queue.metrics = self.metrics.queue(controller.name)
        self.controllers.append(controller)
        if self._reconciling:
            self._controller_tasks.append(asyncio.ensure_future(controller.run()))
        return controller

    def event_recorder(self, component: str) -> EventRecorder:
        """An :class:`EventRecorder` writing Events as ``component`` (flushed on :meth:`stop`)."""
        recorder = EventRecorder(self.client, component)
        self.recorders.append(recorder)
        return recorder

    # -- lifecycle -------------------------------------------------------------------------------------

    async def start(self, *, controllers: bool = True) -> None:
        """Start every informer, wait for their first lists, then (unless ``controllers`` is False) the workers."""
        if self._running:
            raise RuntimeError("the manager is already running")
        self._running = True
        for informer in self._informers.values():
            if not informer.running:
                informer.start()
        for informer in list(self._informers.values()):
            if not await informer.wait_for_sync():
                raise RuntimeError(f"{informer!r} stopped before its first list")
        if controllers:
            self.start_controllers()

    def start_controllers(self) -> None:
        """Start the controllers' workers (once; the caches must be running)."""
        if not self._running:
            raise RuntimeError("start the manager before its controllers")
        if self._reconciling:
            return
        self._reconciling = True
        self._controller_tasks = [asyncio.ensure_future(c.run()) for c in self.controllers]

    @property
    def synced(self) -> bool:
        """Whether every informer has its first list (what ``/readyz`` waits for)."""
        return self._running and all(informer.has_synced for informer in self._informers.values())

    async def stop(self) -> None:
        """Graceful: no new reconciles, the ones in flight finish, informers stop, Events are written."""
        if not self._running:
            return
        # reconciles in flight may still start informers on first use (Manager.read), so the manager
        # counts as running until they have finished
        if self._reconciling:
            await asyncio.gather(*(controller.shutdown() for controller in self.controllers))
        else:  # no worker ever ran: nothing is in flight, and what the watches queued is for the next leader
            for controller in self.controllers:
                controller.stop_watching()
                controller.queue.shutdown()
        self._running = False
        self._reconciling = False
        for task in self._controller_tasks:
            task.cancel()
        await asyncio.gather(*self._controller_tasks, return_exceptions=True)
        self._controller_tasks = []
        for starting in self._starting.values():
            starting.cancel()
        for informer in self._informers.values():
            await informer.stop()
        for recorder in self.recorders:
            await recorder.flush()

    async def __aenter__(self) -> Manager:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    @property
    def running(self) -> bool:
        return self._running


class _CachedCrds:
    """Reference versions from the manager's CRD informer when one runs and has synced; the bundled CRDs'
    contract labels otherwise (what a management cluster with Cluster API installed has)."""

    CRD_GROUP = "apiextensions.k8s.io"

    def __init__(self, manager: Manager) -> None:
        self._manager = manager
        self._bundled = bundled_contracts()

    @property
    def from_cluster(self) -> bool:
        """Whether answers come from the management cluster's CRDs (a CRD informer has synced)."""
        return any(
            informer.has_synced
            for informer in self._manager.reader.informers_of(f"{self.CRD_GROUP}/v1", "CustomResourceDefinition")
        )

    def api_version(self, group: str, kind: str) -> str:
        for informer in self._manager.reader.informers_of(f"{self.CRD_GROUP}/v1", "CustomResourceDefinition"):
            if informer.has_synced:
                for crd in informer.cache.items():
                    contracts = CrdContracts([crd])
                    if contracts.knows(group, kind):
                        return contracts.api_version(group, kind)
        return self._bundled.api_version(group, kind)
