"""Informers: a local, indexed, always-current copy of one kind, and events when it changes.

Controllers never poll the API server. For each kind they care about, an :class:`Informer` lists
the objects once, then watches from the list's resourceVersion, so it sees every later change
exactly once and in order; it applies each change to its cache
(:class:`~clusterclass.kube.indexes.IndexedCache`) and then tells its event handlers. Reconciles
read the cache (through :class:`~clusterclass.kube.cache_reader.CacheReader`), handlers only map
an event to the keys to reconcile and add them to a :class:`~clusterclass.kube.workqueue.WorkQueue`.
This is client-go's reflector and shared informer, in one loop per kind:

- **List, then watch** from the list's resourceVersion, with bookmarks on and a server-side
  timeout (5 to 10 minutes, random) so the server rotates streams. A stream that ends normally is
  resumed from the last resourceVersion seen, bookmarks included, without listing again.
- **Re-list** when the watch says ``Gone`` (410: the server's history no longer reaches back to our
  resourceVersion) or the stream breaks, with exponential backoff and jitter between failed
  attempts. A re-list *replaces* the cache: new objects are added, changed ones updated, and any
  cached object missing from the list is deleted, its handlers told the final state is unknown
  (client-go's ``DeletedFinalStateUnknown``): the deletion happened while we were not watching.
- **Handlers in order.** ``on_add(obj)``, ``on_update(old, new)``, ``on_delete(obj,
  final_state_unknown)`` are called synchronously on the informer's task after the cache has
  changed, in the order of the changes; an object is always added before it is updated or
  deleted. An object deleted and created again under the same name (a new uid) while the informer
  was re-listing is a delete then an add, never an update. Handlers must be quick and must not
  block (enqueue a key); an exception in one is logged and does not stop the informer. A handler
  added after objects are cached gets an ``on_add`` for each of them first.
- **Synced.** :attr:`Informer.has_synced` turns true once the first list is in the cache;
  :meth:`Informer.wait_for_sync` waits for it. Controllers start their workers only then, so a
  reconcile never mistakes "not listed yet" for "does not exist".

Objects given to handlers and returned by :meth:`Informer.get`, :meth:`Informer.list` and
:meth:`Informer.by_index` are the cache's own dicts, shared by every reader: **read-only** (copy
before changing one). :class:`~clusterclass.kube.cache_reader.CacheReader` copies for the topology
pipeline. Time comes from a :class:`~clusterclass.kube.workqueue.Clock` so tests control backoff.
"""

from __future__ import annotations

import asyncio
import builtins
import logging
import random
from collections.abc import AsyncIterator, Callable, Hashable, Iterable
from dataclasses import dataclass
from typing import Any, TypeVar

from clusterclass.api.objects import Obj, dig
from clusterclass.kube.client import Client, FieldSelectorLike, LabelSelector, Resource, WatchEvent
from clusterclass.kube.errors import Gone
from clusterclass.kube.indexes import (
    NAMESPACE_INDEX,
    IndexedCache,
    IndexFunc,
    index_by_namespace,
    key_of_object,
    object_key,
)
from clusterclass.kube.workqueue import Clock, RealClock, WorkQueue, exponential_delay

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)

#: client-go's reflector: watches last between 5 and 10 minutes before the server ends them
MIN_WATCH_TIMEOUT = 300
#: client-go's reflector backoff between failed list-and-watch attempts: 0.8 s doubling to 30 s
DEFAULT_BACKOFF_INITIAL = 0.8
DEFAULT_BACKOFF_MAX = 30.0
#: a stream that ends normally this fast without a single event counts as broken (client-go's
#: "very short watch"): re-watching at once would spin against a server that closes every stream
SHORT_WATCH = 1.0

OnAdd = Callable[[Obj], None]
OnUpdate = Callable[[Obj, Obj], None]
#: (the last known state, True when the deletion was only noticed by a re-list)
OnDelete = Callable[[Obj, bool], None]


@dataclass(frozen=True, eq=False)
class EventHandler:
    """What to call when the cache changes; any of the three may be left out.

    The objects are the cache's own: read-only. ``on_delete`` gets the object as it was deleted,
    or, when the deletion was only noticed by a re-list, the last state the cache had and
    ``final_state_unknown`` True.
    """

    on_add: OnAdd | None = None
    on_update: OnUpdate | None = None
    on_delete: OnDelete | None = None


def enqueue_mapped(queue: WorkQueue[K], keys: Callable[[Obj], Iterable[K]]) -> EventHandler:
    """A handler that adds ``keys(obj)`` to ``queue`` for every event (for an update, of both states).

    controller-runtime's ``EnqueueRequestsFromMapFunc``: a MachinePool's event becomes its Cluster's
    key; mapping the old state too means a Cluster that just lost a child is reconciled as well.
    """

    def add(obj: Obj) -> None:
        for key in keys(obj):
            queue.add(key)

    def update(old: Obj, new: Obj) -> None:
        for key in dict.fromkeys([*keys(old), *keys(new)]):
            queue.add(key)

    return EventHandler(on_add=add, on_update=update, on_delete=lambda obj, _unknown: add(obj))


class _WatchBroken(Exception):
    """A stream ended normally too soon after opening and without events (see SHORT_WATCH)."""


class Informer:
    """Lists and watches one kind, optionally one namespace, a label selector and a field selector (module doc).

    ``start`` runs it as a task on the current loop and ``stop`` ends it; ``async with`` does both.
    ``watch_timeout`` fixes the seconds each watch asks the server to last (default random between
    5 and 10 minutes); ``backoff_initial``/``backoff_max`` bound the wait between failed attempts,
    with up to ``jitter`` times as much added at random. ``resync_period`` re-delivers every cached
    object as an ``on_update(obj, obj)`` that often (controller-runtime's SyncPeriod); None never.
    ``clock`` times the backoff, the resync and how long a watch lasted (a stream ending in under
    a second with no event counts as broken); ``rng`` draws the jitter and the watch timeouts.
    """

    def __init__(
        self,
        client: Client,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
        clock: Clock | None = None,
        watch_timeout: int | None = None,
        backoff_initial: float = DEFAULT_BACKOFF_INITIAL,
        backoff_max: float = DEFAULT_BACKOFF_MAX,
        jitter: float = 1.0,
        resync_period: float | None = None,
        rng: random.Random | None = None,
    ) -> None:
        if backoff_initial <= 0 or backoff_max < backoff_initial or jitter < 0:
            raise ValueError("backoff_initial must be positive, at most backoff_max, and jitter not negative")
        if watch_timeout is not None and watch_timeout < 1:
            raise ValueError("watch_timeout must be at least one second")
        if resync_period is not None and resync_period <= 0:
            raise ValueError("resync_period must be positive")
        self.client = client
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.label_selector = label_selector
        self.field_selector = field_selector
        self.clock: Clock = clock or RealClock()
        self.watch_timeout = watch_timeout
        self.backoff_initial = backoff_initial
        self.backoff_max = backoff_max
        self.jitter = jitter
        self.resync_period = resync_period
        self._rng = rng or random.Random()
        self.cache = IndexedCache()
        self.cache.add_index(NAMESPACE_INDEX, index_by_namespace)
        #: discovery's answer for the kind, known from the first successful list on
        self.resource: Resource | None = None
        self._handlers: list[EventHandler] = []
        #: set once the first list is in the cache (never cleared: later re-lists keep it synced)
        self._synced = asyncio.Event()
        self._last_resource_version = ""
        self._task: asyncio.Task[None] | None = None
        #: counters, for logs and tests: lists done (the first included), watches opened
        self.lists = 0
        self.watches = 0
        self._events_seen = 0

    def __repr__(self) -> str:
        where = f" in {self.namespace}" if self.namespace else ""
        chosen = [str(s) for s in (self.label_selector, self.field_selector) if s]
        selector = f" selected by {','.join(chosen)}" if chosen else ""
        return f"<Informer {self.kind}.{self.api_version}{where}{selector}>"

    # -- handlers and indexes --

    def add_event_handler(
        self,
        handler: EventHandler | None = None,
        *,
        on_add: OnAdd | None = None,
        on_update: OnUpdate | None = None,
        on_delete: OnDelete | None = None,
    ) -> EventHandler:
        """Register ``handler`` (or one made of the three callables); returns it for removal.

        Objects already cached are delivered to it as ``on_add`` at once, in key order.
        """
        if handler is None:
            handler = EventHandler(on_add=on_add, on_update=on_update, on_delete=on_delete)
        elif on_add or on_update or on_delete:
            raise TypeError("give a handler or callables, not both")
        self._handlers.append(handler)
        if handler.on_add is not None:
            for obj in self.cache.items():
                self._call(handler.on_add, obj)
        return handler

    def remove_event_handler(self, handler: EventHandler) -> None:
        self._handlers = [h for h in self._handlers if h is not handler]

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Index the cache by ``func`` (see :mod:`clusterclass.kube.indexes`); existing objects too."""
        self.cache.add_index(name, func)

    def add_standard_indexes(self) -> None:
        """The label, owner, controller and ``spec.topology.class`` indexes."""
        self.cache.add_standard_indexes()

    # -- reads (shared, read-only objects) --

    def get(self, name: str, namespace: str | None = None) -> Obj | None:
        return self.cache.get(object_key(namespace, name))

    def list(self, namespace: str | None = None) -> list[Obj]:
        """Cached objects ordered by key; with ``namespace``, only that namespace's."""
        if namespace:
            return self.cache.by_index(NAMESPACE_INDEX, namespace)
        return self.cache.items()

    def by_index(self, name: str, value: str) -> builtins.list[Obj]:
        return self.cache.by_index(name, value)

    # -- lifecycle --

    @property
    def has_synced(self) -> bool:
        """Whether the first list is in the cache (stays true through later re-lists)."""
        return self._synced.is_set()

    @property
    def last_sync_resource_version(self) -> str:
        """The resourceVersion the cache is current to: the last list's, event's or bookmark's."""
        return self._last_resource_version

    @property
    def running(self) -> bool:
        return self._task is not None and not self._task.done()

    def start(self) -> asyncio.Task[None]:
        """Run the informer as a task on the running loop; it runs until :meth:`stop`."""
        if self._task is not None:
            raise RuntimeError(f"{self!r} was already started")
        self._task = asyncio.get_running_loop().create_task(self._run(), name=repr(self))
        return self._task

    async def stop(self) -> None:
        """End the informer and its watch; the cache stays readable. Safe to call twice."""
        task = self._task
        if task is None or task.done():
            return
        task.cancel()
        try:
            await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if current is not None and current.cancelling():
                raise

    async def wait_for_sync(self) -> bool:
        """Wait until :attr:`has_synced`; False when the informer stopped (or never started) first."""
        if self.has_synced:
            return True
        task = self._task
        if task is None or task.done():
            return False
        synced = asyncio.ensure_future(self._synced.wait())
        try:
            await asyncio.wait((synced, task), return_when=asyncio.FIRST_COMPLETED)
        finally:
            synced.cancel()
        return self.has_synced

    async def __aenter__(self) -> Informer:
        self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the loop --

    async def _run(self) -> None:
        resync = None
        if self.resync_period is not None:
            resync = asyncio.get_running_loop().create_task(self._resync_loop(self.resync_period))
        try:
            await self._list_and_watch()
        finally:
            if resync is not None:
                resync.cancel()

    async def _list_and_watch(self) -> None:
        failures = 0
        #: where to watch from without listing again (a stream that ended normally)
        resume: str | None = None
        while True:
            events_before = self._events_seen
            try:
                if resume is None:
                    resume = await self._list()
                resume = await self._watch(resume)
                failures = 0
                continue
            except asyncio.CancelledError:
                raise
            except Gone as err:
                # expected now and then (the history moved past us): list again at once, unless
                # the last attempt was a Gone too and made no progress
                resume = None
                failures = 0 if self._events_seen > events_before else failures + 1
                logger.info("%r: %s; listing again", self, err)
                if failures <= 1:
                    continue
            except Exception as err:
                resume = None
                failures = 1 if self._events_seen > events_before else failures + 1
                logger.warning("%r: list and watch failed (%s: %s); listing again", self, type(err).__name__, err)
            await self.clock.sleep(self._backoff(failures))

    def _backoff(self, failures: int) -> float:
        delay = exponential_delay(self.backoff_initial, self.backoff_max, failures - 1)
        return delay * (1.0 + self.jitter * self._rng.random())

    async def _list(self) -> str:
        if self.resource is None:
            self.resource = await self.client.resource(self.api_version, self.kind)
        listed = await self.client.list(
            self.api_version,
            self.kind,
            namespace=self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
        )
        self.lists += 1
        self._replace(listed.items)
        self._last_resource_version = listed.resource_version
        self._synced.set()
        return listed.resource_version

    async def _watch(self, resource_version: str) -> str:
        """Apply a watch stream from ``resource_version``; the resourceVersion reached when it ends normally."""
        timeout = self.watch_timeout or int(MIN_WATCH_TIMEOUT * (1.0 + self._rng.random()))
        stream = self.client.watch(
            self.api_version,
            self.kind,
            namespace=self.namespace,
            label_selector=self.label_selector,
            field_selector=self.field_selector,
            resource_version=resource_version,
            bookmarks=True,
            timeout_seconds=timeout,
        )
        self.watches += 1
        opened = self.clock.now()
        events = 0
        try:
            async for event in stream:
                events += 1
                self._events_seen += 1
                self._apply(event)
        finally:
            await _close(stream)
        if events == 0 and self.clock.now() - opened < SHORT_WATCH:
            raise _WatchBroken(f"the watch from resourceVersion {resource_version} ended at once without events")
        return self._last_resource_version or resource_version

    def _apply(self, event: WatchEvent) -> None:
        obj = event["object"]
        resource_version = dig(obj, "metadata", "resourceVersion")
        kind = event["type"]
        if kind == "DELETED":
            old = self.cache.remove(key_of_object(obj))
            if old is not None:
                self._deleted(obj, final_state_unknown=False)
        elif kind in ("ADDED", "MODIFIED"):
            self._upsert(obj)
        # a BOOKMARK only moves the resourceVersion on
        if resource_version:
            self._last_resource_version = str(resource_version)

    def _upsert(self, obj: Obj) -> None:
        old = self.cache.put(obj)
        if old is None:
            self._added(obj)
        elif _uid(old) != _uid(obj):
            # the name was deleted and taken again while we were not looking: a different object
            self._deleted(old, final_state_unknown=True)
            self._added(obj)
        else:
            self._updated(old, obj)

    def _replace(self, items: Iterable[Obj]) -> None:
        """Make the cache exactly ``items`` (a list's answer), telling handlers what changed."""
        seen: set[str] = set()
        for obj in items:
            key = key_of_object(obj)
            seen.add(key)
            old = self.cache.get(key)
            if old is not None and _uid(old) == _uid(obj) and _resource_version(old) == _resource_version(obj):
                self.cache.put(obj)  # unchanged: nothing to tell
                continue
            self._upsert(obj)
        for key in list(self.cache):
            if key not in seen:
                old = self.cache.remove(key)
                if old is not None:
                    self._deleted(old, final_state_unknown=True)

    async def _resync_loop(self, period: float) -> None:
        while True:
            await self.clock.sleep(period)
            for obj in self.cache.items():
                self._updated(obj, obj)

    # -- calling handlers --

    def _added(self, obj: Obj) -> None:
        for handler in tuple(self._handlers):
            if handler.on_add is not None:
                self._call(handler.on_add, obj)

    def _updated(self, old: Obj, new: Obj) -> None:
        for handler in tuple(self._handlers):
            if handler.on_update is not None:
                self._call(handler.on_update, old, new)

    def _deleted(self, obj: Obj, *, final_state_unknown: bool) -> None:
        for handler in tuple(self._handlers):
            if handler.on_delete is not None:
                self._call(handler.on_delete, obj, final_state_unknown)

    def _call(self, func: Callable[..., None], *args: Any) -> None:
        try:
            func(*args)
        except Exception:
            logger.exception("%r: event handler %r failed", self, func)


def _uid(obj: Obj) -> Any:
    return dig(obj, "metadata", "uid")


def _resource_version(obj: Obj) -> Any:
    return dig(obj, "metadata", "resourceVersion")


async def _close(stream: AsyncIterator[WatchEvent]) -> None:
    """Close a watch stream now (an async generator's ``aclose``), not when it is garbage collected."""
    aclose = getattr(stream, "aclose", None)
    if aclose is not None:
        await aclose()
