"""Watch for the memory store: a bounded history of changes per kind and the watches that read it.

kube-apiserver serves watches from its watch cache: per resource, a window of recent changes, each
tagged with the resourceVersion of the write. This module is that cache for
:class:`~clusterclass.apiserver.store.MemoryStore`, with the same rules:

- a watch from resourceVersion N gets every change after N; when the window no longer reaches back
  to N the answer is ``Gone``, ``too old resource version: N (M)`` with M the oldest resourceVersion
  the window can still start from, and the client lists again;
- a watch without a resourceVersion (or with ``"0"``) first gets a synthetic ``ADDED`` for every
  object that matches, then (when it asked for bookmarks) a ``BOOKMARK`` at the store's
  resourceVersion annotated ``k8s.io/initial-events-end: "true"``, then the live changes, as
  kube-apiserver 1.37 sends them;
- label selectors filter per watch, and an object whose labels move in or out of the selector
  arrives as ``ADDED`` or ``DELETED``; a ``DELETED`` carries the object's last state with the
  resourceVersion of the change that removed it (as the watch cache's ``cacheWatcher`` does);
- ``BOOKMARK`` events (only ``apiVersion``, ``kind`` and ``metadata.resourceVersion``) tell a quiet
  watch how far the store has got, so a client re-watching after a break does not fall out of the
  window; the store sends one after ``bookmark_interval`` seconds without events;
- ``timeout_seconds`` ends the stream, as the server ends a watch request; two seconds before, a
  watch that asked for bookmarks gets one if its kind changed since it caught up (kube-apiserver
  1.37 does the same, even when that change was the last event it sent).

Writers never wait for watchers. A write, under the store's lock, appends the change to the
kind's history and to each matching watch's buffer, and wakes the watch's event loop with
``call_soon_threadsafe`` (the HTTP front runs its own loop, tests another). Copies are made by the
reader when it takes an event, not by the writer, so fanning out to many watches stays cheap: the
stored objects a change refers to are never modified after they are written.

A watch whose buffer fills (its reader is too slow) is terminated, as kube-apiserver terminates a
watcher that cannot keep up: the events already buffered are delivered, then the stream ends
without an error. The reader re-watches from the last resourceVersion it saw and gets the rest
from the history, or ``Gone`` if the history has moved past it.
"""

from __future__ import annotations

import asyncio
import contextlib
import marshal
import threading
import time
import zlib
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Literal

from clusterclass.api.objects import Obj
from clusterclass.kube.client import WatchEvent, WatchEventType
from clusterclass.kube.errors import Gone
from clusterclass.kube.fieldselectors import EVERYTHING as EVERY_FIELD
from clusterclass.kube.fieldselectors import FieldSelector
from clusterclass.kube.selectors import Selector

ChangeType = Literal["ADDED", "MODIFIED", "DELETED"]
#: (group, kind)
KindKey = tuple[str, str]

#: changes kept per kind; older resourceVersions are Gone
DEFAULT_HISTORY_SIZE = 4096
#: events one watch may have waiting before it is terminated as too slow
DEFAULT_BUFFER_SIZE = 10000
#: seconds without events before a watch that asked for bookmarks gets one
DEFAULT_BOOKMARK_INTERVAL = 1.0
#: seconds before a watch's timeout when it gets a last bookmark (kube-apiserver's watch cache: 2 s)
FINAL_BOOKMARK_LEAD = 2.0
#: the annotation of the bookmark that ends the initial ADDED events
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(frozen=True, slots=True)
class Change:
    """One write as the history keeps it.

    ``obj`` is the object after the write (None for a deletion) and ``prev`` the object before it
    (None for a creation). Both are the store's own, never-modified dicts.
    """

    resource_version: int
    type: ChangeType
    namespace: str
    obj: Obj | None
    prev: Obj | None


class History:
    """The recent changes of one kind, complete for every resourceVersion after ``floor``.

    Kept packed (``marshal``, then ``zlib`` at its fastest level): the history is read only by a watch that
    starts from an older resourceVersion, rarely, while it holds thousands of past versions of objects nobody
    else holds any more — as Python dicts it was most of the embedded cluster's memory at scale (six times the
    objects stored); packed it is about a twentieth of that, for some 40 µs per write. A change's previous object
    is the one the change before it wrote, so its bytes are shared. A watch starting from the history gets new
    dicts, equal to the stored ones.
    """

    def __init__(self, size: int, floor: int) -> None:
        self.changes: deque[_Packed] = deque()
        self.size = size
        self.floor = floor
        #: each stored object's latest packed bytes, by (namespace, name): the previous object of its next change
        self._latest: dict[tuple[str, str], tuple[Obj, bytes | Obj]] = {}

    def append(self, change: Change) -> None:
        obj, prev = change.obj, change.prev
        key = (change.namespace, str(((obj or prev) or {}).get("metadata", {}).get("name", "")))
        latest = self._latest.get(key)
        packed_prev = latest[1] if latest is not None and latest[0] is prev else _pack(prev)
        packed_obj = _pack(obj)
        if obj is None or packed_obj is None:
            self._latest.pop(key, None)
        else:
            self._latest[key] = (obj, packed_obj)
        self.changes.append((change.resource_version, change.type, change.namespace, packed_obj, packed_prev))
        if len(self.changes) > self.size:
            self.changes.popleft()
            self.floor = self.changes[0][0] - 1

    def clear(self, floor: int) -> None:
        """Forget every change: only watches from ``floor`` on can start."""
        self.changes.clear()
        self._latest.clear()
        self.floor = floor

    def since(self, resource_version: int) -> Iterable[Change]:
        """The changes after ``resource_version``; Gone when the window no longer reaches back to it.

        A ``resource_version`` the store has not reached gives nothing now: the watch waits for it.
        """
        if resource_version < self.floor:
            raise Gone.new(f"too old resource version: {resource_version} ({self.floor})")
        return (
            Change(version, kind, namespace, _unpack(obj), _unpack(prev))
            for version, kind, namespace, obj, prev in self.changes
            if version > resource_version
        )


#: a change as the history keeps it: resourceVersion, type, namespace, the packed object and previous object
_Packed = tuple[int, "ChangeType", str, "bytes | Obj | None", "bytes | Obj | None"]


def _pack(obj: Obj | None) -> bytes | Obj | None:
    """``obj`` as bytes; itself when ``marshal`` does not know a value in it (a client stored a non-JSON value)."""
    if obj is None:
        return None
    try:
        return zlib.compress(marshal.dumps(obj), 1)
    except ValueError:
        return obj


def _unpack(data: bytes | Obj | None) -> Obj | None:
    if not isinstance(data, bytes):
        return data
    obj: Obj = marshal.loads(zlib.decompress(data))
    return obj


#: a buffered event: type, the store's object, the resourceVersion to serve it with
_Entry = tuple[WatchEventType, Obj, int]


class MemoryWatch:
    """One watch on a memory store: an async iterator of :class:`~clusterclass.kube.client.WatchEvent`.

    Iterate it on any event loop; :meth:`close` (from any thread) ends it. Created by
    :meth:`~clusterclass.apiserver.store.MemoryStore.watch`, never directly.
    """

    def __init__(
        self,
        hub: WatchHub,
        kind_key: KindKey,
        *,
        api_version: str,
        kind: str,
        namespace: str | None,
        selector: Selector,
        fields: FieldSelector = EVERY_FIELD,
        bookmarks: bool,
        timeout_seconds: float | None,
        serve: Callable[[Obj, str, int], Obj],
    ) -> None:
        self._hub = hub
        self.kind_key = kind_key
        self.api_version = api_version
        self.kind = kind
        self.namespace = namespace
        self.selector = selector
        self.fields = fields
        self._everything = selector.empty() and fields.empty
        self.bookmarks = bookmarks
        self._serve = serve
        self._deadline = time.monotonic() + timeout_seconds if timeout_seconds else None
        self._lock = threading.Lock()
        self._initial: deque[_Entry] = deque()
        self._pending: deque[_Entry] = deque()
        self._waiter: asyncio.Future[None] | None = None
        self._closed = False
        self._last_sent = 0
        #: changes up to this resourceVersion are not for this watch (it started later)
        self._after = 0
        #: whether the kind changed after the watch caught up (a bookmark before the timeout says so)
        self._changed_live = False
        self._final_bookmark_sent = False

    # -- writer side (store lock held) ---------------------------------------------------------------

    def _matches(self, namespace: str, obj: Obj | None) -> bool:
        if obj is None or (self.namespace and namespace != self.namespace):
            return False
        return self._everything or (self.selector.matches(obj["metadata"].get("labels")) and self.fields.matches(obj))

    def _entry(self, change: Change) -> _Entry | None:
        """What this watch sees of ``change``, with selector transitions as ADDED and DELETED."""
        if change.resource_version <= self._after:
            return None
        now = self._matches(change.namespace, change.obj)
        before = self._matches(change.namespace, change.prev)
        if now and change.obj is not None:
            return ("MODIFIED" if before else "ADDED", change.obj, change.resource_version)
        if before and change.prev is not None:
            return ("DELETED", change.prev, change.resource_version)
        return None

    def _prefill(self, entries: Iterable[_Entry]) -> None:
        self._initial.extend(entries)

    def _push(self, change: Change, wake: list[asyncio.Future[None]]) -> None:
        """Buffer what this watch sees of ``change``; a reader waiting for it goes into ``wake``."""
        if change.resource_version > self._after:
            self._changed_live = True
        entry = self._entry(change)
        if entry is None:
            return
        with self._lock:
            if self._closed:
                return
            if len(self._pending) >= self._hub.buffer_size:
                # too slow: terminated, as kube-apiserver terminates a watcher that cannot keep up
                self._closed = True
                self._hub.forget(self)
            else:
                self._pending.append(entry)
            waiter, self._waiter = self._waiter, None
        if waiter is not None:
            wake.append(waiter)

    def _wake(self) -> None:
        """Wake the reader (watch lock held)."""
        waiter, self._waiter = self._waiter, None
        if waiter is not None:
            wake([waiter])

    # -- reader side ---------------------------------------------------------------------------------

    def __aiter__(self) -> MemoryWatch:
        return self

    async def __anext__(self) -> WatchEvent:
        loop = asyncio.get_running_loop()
        quiet_since = time.monotonic()
        while True:
            with self._lock:
                entry = self._initial.popleft() if self._initial else None
                if entry is None and self._pending:
                    entry = self._pending.popleft()
                if entry is None:
                    if self._closed:
                        raise StopAsyncIteration
                    waiter: asyncio.Future[None] = loop.create_future()
                    self._waiter = waiter
            if entry is not None:
                kind, obj, resource_version = entry
                self._last_sent = max(self._last_sent, resource_version)
                if kind == "BOOKMARK":
                    return self._bookmark_event(resource_version, initial_events_end=True)
                return {"type": kind, "object": self._serve(obj, self.api_version, resource_version)}
            now = time.monotonic()
            wakeups = []
            if self._deadline is not None:
                wakeups.append(self._deadline)
                if self.bookmarks and not self._final_bookmark_sent:
                    wakeups.append(self._deadline - FINAL_BOOKMARK_LEAD)
            if self.bookmarks:
                wakeups.append(quiet_since + self._hub.bookmark_interval)
            wait = min(wakeups) - now if wakeups else None
            if wait is None or wait > 0:
                await asyncio.wait((waiter,), timeout=wait)
            if waiter.done():
                continue
            with self._lock:
                if self._waiter is waiter:
                    self._waiter = None
            waiter.cancel()
            now = time.monotonic()
            if self._deadline is not None and now >= self._deadline:
                self.close()
                continue
            if (
                self.bookmarks
                and self._deadline is not None
                and not self._final_bookmark_sent
                and now >= self._deadline - FINAL_BOOKMARK_LEAD
            ):
                # kube-apiserver's watch cache bookmarks a watch about to time out when its kind changed
                # after the watch caught up, even if that change was the last event sent
                self._final_bookmark_sent = True
                bookmark = self._bookmark(again=True) if self._changed_live else None
                if bookmark is not None:
                    return bookmark
            if self.bookmarks and now >= quiet_since + self._hub.bookmark_interval:
                bookmark = self._bookmark()
                quiet_since = now
                if bookmark is not None:
                    return bookmark

    def _bookmark(self, *, again: bool = False) -> WatchEvent | None:
        """A BOOKMARK at the store's resourceVersion, when nothing is waiting and the store moved on.

        ``again``: even when the store has not moved past the last resourceVersion sent.
        """
        with self._hub.lock, self._lock:
            if self._pending or self._initial or self._closed:
                return None
            resource_version = self._hub.current()
        if resource_version < self._last_sent or (resource_version == self._last_sent and not again):
            return None
        self._last_sent = resource_version
        return self._bookmark_event(resource_version)

    def _bookmark_event(self, resource_version: int, *, initial_events_end: bool = False) -> WatchEvent:
        metadata: Obj = {"resourceVersion": str(resource_version)}
        if initial_events_end:
            metadata["annotations"] = {INITIAL_EVENTS_END: "true"}
        return {"type": "BOOKMARK", "object": {"apiVersion": self.api_version, "kind": self.kind, "metadata": metadata}}

    def close(self) -> None:
        """End the watch: the reader gets what is already buffered, then the end of the stream."""
        with self._hub.lock:
            self._hub.forget(self)
        with self._lock:
            self._closed = True
            self._wake()

    @property
    def closed(self) -> bool:
        return self._closed


def _resolve(waiters: list[asyncio.Future[None]]) -> None:
    for waiter in waiters:
        if not waiter.done():
            waiter.set_result(None)


def wake(waiters: Iterable[asyncio.Future[None]]) -> None:
    """Resolve waiting readers' futures, with one call into each reader's event loop.

    On the loop's own thread the futures are resolved at once; another thread goes through
    ``call_soon_threadsafe``, once per loop rather than once per watch, which keeps fanning out one
    write to many watches of one loop cheap. A closed loop has no readers left: skipped.
    """
    by_loop: dict[asyncio.AbstractEventLoop, list[asyncio.Future[None]]] = {}
    for waiter in waiters:
        by_loop.setdefault(waiter.get_loop(), []).append(waiter)
    try:
        running: asyncio.AbstractEventLoop | None = asyncio.get_running_loop()
    except RuntimeError:
        running = None
    for loop, futures in by_loop.items():
        if loop is running:
            _resolve(futures)
        else:
            with contextlib.suppress(RuntimeError):  # the reader's loop is closed
                loop.call_soon_threadsafe(_resolve, futures)


class WatchHub:
    """The histories and open watches of one store; every method runs under the store's lock.

    ``current`` reads the store's latest resourceVersion.
    """

    def __init__(
        self,
        lock: threading.RLock,
        current: Callable[[], int],
        *,
        history_size: int = DEFAULT_HISTORY_SIZE,
        buffer_size: int = DEFAULT_BUFFER_SIZE,
        bookmark_interval: float = DEFAULT_BOOKMARK_INTERVAL,
    ) -> None:
        if history_size < 1 or buffer_size < 1 or bookmark_interval <= 0:
            raise ValueError("history_size and buffer_size must be positive, bookmark_interval above zero")
        self.lock = lock
        self.current = current
        self.history_size = history_size
        self.buffer_size = buffer_size
        self.bookmark_interval = bookmark_interval
        self._histories: dict[KindKey, History] = {}
        self._watches: dict[KindKey, set[MemoryWatch]] = {}

    def history(self, kind_key: KindKey) -> History:
        history = self._histories.get(kind_key)
        if history is None:
            history = self._histories[kind_key] = History(self.history_size, self.current())
        return history

    def publish(self, kind_key: KindKey, change: Change, woken: list[asyncio.Future[None]]) -> None:
        """Record ``change`` and hand it to every open watch of its kind; readers to wake go into ``woken``.

        The caller wakes them (:func:`wake`) once every change of its write is published.
        """
        self.history(kind_key).append(change)
        for watch in tuple(self._watches.get(kind_key, ())):
            watch._push(change, woken)

    def open(
        self,
        kind_key: KindKey,
        *,
        api_version: str,
        kind: str,
        namespace: str | None,
        selector: Selector,
        fields: FieldSelector = EVERY_FIELD,
        resource_version: int | None,
        current_objects: Callable[[], Iterable[tuple[str, Obj]]],
        bookmarks: bool,
        timeout_seconds: float | None,
        serve: Callable[[Obj, str, int], Obj],
    ) -> MemoryWatch:
        """A new watch; ``resource_version`` None starts with the current objects (``current_objects``).

        ``serve`` turns a stored object into this watch's reader's copy, in the watch's apiVersion
        with the given resourceVersion.
        """
        watch = MemoryWatch(
            self,
            kind_key,
            api_version=api_version,
            kind=kind,
            namespace=namespace,
            selector=selector,
            fields=fields,
            bookmarks=bookmarks,
            timeout_seconds=timeout_seconds,
            serve=serve,
        )
        if resource_version is None:
            watch._prefill(
                ("ADDED", obj, int(obj["metadata"]["resourceVersion"]))
                for namespace_of, obj in current_objects()
                if watch._matches(namespace_of, obj)
            )
            if bookmarks:
                watch._prefill([("BOOKMARK", {}, self.current())])
        else:
            entries = (watch._entry(change) for change in self.history(kind_key).since(resource_version))
            watch._prefill(entry for entry in entries if entry is not None)
        # a bookmark only tells the reader something when the store has moved past where it started
        watch._last_sent = self.current() if resource_version is None else resource_version
        watch._after = watch._last_sent
        self._watches.setdefault(kind_key, set()).add(watch)
        return watch

    def compact(self, resource_version: int) -> None:
        """Drop every kind's recorded changes: only watches from ``resource_version`` on can start."""
        for history in self._histories.values():
            history.clear(resource_version)

    def forget(self, watch: MemoryWatch) -> None:
        watches = self._watches.get(watch.kind_key)
        if watches is not None:
            watches.discard(watch)

    def drop_kind(self, kind_key: KindKey) -> None:
        """A kind no longer served (its CRD is gone): its watches end and its history is forgotten."""
        for watch in tuple(self._watches.pop(kind_key, ())):
            watch.close()
        self._histories.pop(kind_key, None)

    def watch_count(self) -> int:
        return sum(len(watches) for watches in self._watches.values())
