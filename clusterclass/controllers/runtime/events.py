"""Kubernetes Events for the objects a controller acts on, with client-go's de-duplication.

``kubectl describe cluster c1`` shows what the topology controller did (``TopologyCreate Created
"MachinePool/c1-mp-0-x7k2p"``) because the controller records core/v1 Events about the Cluster. As
client-go's recorder does, an Event repeated for the same object, type, reason and message does not make
a new Event object: the first one's ``count`` goes up and its ``lastTimestamp`` moves (a merge patch).
Events are named ``<object name>.<hex timestamp>`` in the object's namespace, carry
``source.component`` and ``reportingComponent`` (the controller's name) and ``reportingInstance``.

Recording never blocks or fails a reconcile: :meth:`EventRecorder.event` queues the Event and one task
per recorder writes them in order; a write that fails is logged and dropped, as client-go drops it.
:meth:`EventRecorder.flush` waits until every queued Event is written (the manager calls it on stop;
tests call it before reading Events). Not done: client-go's aggregation of *similar* Events (same reason,
different messages) into one "combined from similar events" Event, and its per-object spam filter.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Literal

from clusterclass.api.objects import Obj, name_of, namespace_of
from clusterclass.kube.client import Client
from clusterclass.kube.errors import NotFound
from clusterclass.kube.gotext import rfc3339

logger = logging.getLogger(__name__)

EventType = Literal["Normal", "Warning"]

#: client-go remembers this many Events for de-duplication
CACHE_SIZE = 4096


@dataclass(frozen=True)
class _Key:
    api_version: str
    kind: str
    namespace: str
    name: str
    uid: str
    type: str
    reason: str
    message: str


@dataclass
class _Seen:
    name: str
    namespace: str
    count: int


def involved_object(obj: Obj) -> Obj:
    """The ``involvedObject`` reference of an Event about ``obj``."""
    metadata = obj.get("metadata") or {}
    ref: Obj = {"apiVersion": obj.get("apiVersion", ""), "kind": obj.get("kind", ""), "name": name_of(obj)}
    for field in ("namespace", "uid", "resourceVersion"):
        if metadata.get(field):
            ref[field] = metadata[field]
    return ref


class EventRecorder:
    """Records Events as ``component`` through ``client`` (module doc)."""

    def __init__(
        self,
        client: Client,
        component: str,
        *,
        instance: str | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.client = client
        self.component = component
        self.instance = instance or socket.gethostname()
        self._now = now or (lambda: datetime.now(UTC))
        self._seen: OrderedDict[_Key, _Seen] = OrderedDict()
        self._queue: asyncio.Queue[tuple[Obj, EventType, str, str]] | None = None
        self._writer: asyncio.Task[None] | None = None
        #: Events recorded (not necessarily written yet), for tests and logs
        self.recorded = 0

    def event(self, obj: Obj, type_: EventType, reason: str, message: str) -> None:
        """Queue an Event about ``obj``; it is written in the background."""
        if self._queue is None:
            self._queue = asyncio.Queue()
        self._queue.put_nowait((obj, type_, reason, message))
        self.recorded += 1
        if self._writer is None or self._writer.done():
            self._writer = asyncio.get_running_loop().create_task(self._write_all(), name=f"events {self.component}")

    def normal(self, obj: Obj, reason: str, message: str) -> None:
        self.event(obj, "Normal", reason, message)

    def warning(self, obj: Obj, reason: str, message: str) -> None:
        self.event(obj, "Warning", reason, message)

    async def flush(self) -> None:
        """Wait until every queued Event has been written (or dropped after a failed write)."""
        if self._queue is not None:
            await self._queue.join()

    async def _write_all(self) -> None:
        assert self._queue is not None
        while not self._queue.empty():
            obj, type_, reason, message = await self._queue.get()
            try:
                await self._write(obj, type_, reason, message)
            except Exception as err:  # never let an Event break the controller
                logger.warning("could not write Event %s %r about %s: %s", reason, message, name_of(obj), err)
            finally:
                self._queue.task_done()

    async def _write(self, obj: Obj, type_: EventType, reason: str, message: str) -> None:
        ref = involved_object(obj)
        namespace = namespace_of(obj) or "default"
        key = _Key(
            ref["apiVersion"], ref["kind"], namespace, ref["name"], str(ref.get("uid", "")), type_, reason, message
        )
        now = rfc3339(self._now())
        seen = self._seen.get(key)
        if seen is not None:
            self._seen.move_to_end(key)
            try:
                await self.client.patch(
                    "v1",
                    "Event",
                    seen.name,
                    {"count": seen.count + 1, "lastTimestamp": now},
                    namespace=seen.namespace,
                )
                seen.count += 1
                return
            except NotFound:
                del self._seen[key]  # expired or deleted: record a new one
        stamp = self._now()
        event = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": f"{ref['name']}.{int(stamp.timestamp() * 1e9):x}", "namespace": namespace},
            "involvedObject": ref,
            "reason": reason,
            "message": message,
            "type": type_,
            "source": {"component": self.component},
            "firstTimestamp": now,
            "lastTimestamp": now,
            "count": 1,
            "reportingComponent": self.component,
            "reportingInstance": self.instance,
        }
        created = await self.client.create(event)
        self._seen[key] = _Seen(name_of(created), namespace, 1)
        while len(self._seen) > CACHE_SIZE:
            self._seen.popitem(last=False)
