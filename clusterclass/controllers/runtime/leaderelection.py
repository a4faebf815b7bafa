"""Leader election on a ``coordination.k8s.io/v1`` Lease, with client-go's rules, so only one replica reconciles.

A management cluster runs the controller as a Deployment, often with two replicas: both serve webhooks and keep
their caches warm, and only the one holding the Lease reconciles. The rules are client-go's ``leaderelection``
package, which controller-runtime (and so Cluster API's managers) use, so a Lease written by one is read right
by the other:

- **The record** is the Lease's spec: ``holderIdentity``, ``leaseDurationSeconds``, ``acquireTime``,
  ``renewTime`` (MicroTime, RFC 3339 with microseconds) and ``leaseTransitions``.
- **Acquire.** Every ``retry_period`` (with up to 20 % jitter) a candidate reads the Lease: a missing Lease is
  created with itself as holder; a Lease held by someone else is taken only once it has *expired*, which a
  candidate judges by its own clock: ``lease_duration`` after it last saw the record change (never by the
  ``renewTime`` written by another machine's clock). Taking it sets ``acquireTime`` and adds one to
  ``leaseTransitions``; an empty ``holderIdentity`` (a released Lease) may be taken at once. Every write is an
  update with the resourceVersion read, so two candidates cannot both win.
- **Renew.** The leader renews every ``retry_period``; if it cannot renew for ``renew_deadline`` it has lost
  the lease and must stop reconciling (``clusterclass run`` then exits, as controller-runtime's managers do).
- **Release.** On a graceful stop the leader writes ``holderIdentity: ""`` and ``leaseDurationSeconds: 1``
  (client-go's ``ReleaseOnCancel``, which Cluster API turns on), so a standby takes over without waiting.

Leadership is reported to :class:`~clusterclass.controllers.runtime.metrics.Metrics`
(``leader_election_master_status``) and, as client-go does, as a ``LeaderElection`` Event on the Lease.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.controllers.runtime.events import EventRecorder
from clusterclass.controllers.runtime.metrics import Metrics
from clusterclass.kube.client import Client
from clusterclass.kube.errors import AlreadyExists, ApiError, Conflict, NotFound

logger = logging.getLogger(__name__)

LEASE_API_VERSION = "coordination.k8s.io/v1"
#: client-go's JitterFactor for the acquire loop
JITTER = 1.2


def default_identity() -> str:
    """``<hostname>_<uuid>``, as controller-runtime names a candidate."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


def micro_time(moment: datetime) -> str:
    """A ``metav1.MicroTime`` as the API server writes it: RFC 3339 with microseconds, in UTC."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True)
class LeaderElectionConfig:
    """Where the Lease is and how long things take (controller-runtime's defaults: 15 s, 10 s, 2 s)."""

    name: str
    namespace: str
    identity: str
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    release_on_cancel: bool = True

    def __post_init__(self) -> None:
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("the lease duration must be greater than the renew deadline")
        if self.renew_deadline <= JITTER * self.retry_period:
            raise ValueError("the renew deadline must be greater than 1.2 times the retry period")
        if self.retry_period <= 0:
            raise ValueError("the retry period must be positive")


@dataclass(frozen=True)
class _Record:
    holder: str
    duration: int
    acquire_time: str | None
    renew_time: str | None
    transitions: int

    @classmethod
    def of(cls, lease: Obj) -> _Record:
        spec: dict[str, Any] = lease.get("spec") or {}
        return cls(
            holder=str(spec.get("holderIdentity") or ""),
            duration=int(spec.get("leaseDurationSeconds") or 0),
            acquire_time=spec.get("acquireTime"),
            renew_time=spec.get("renewTime"),
            transitions=int(spec.get("leaseTransitions") or 0),
        )

    def spec(self) -> Obj:
        return {
            "holderIdentity": self.holder,
            "leaseDurationSeconds": self.duration,
            "acquireTime": self.acquire_time,
            "renewTime": self.renew_time,
            "leaseTransitions": self.transitions,
        }


class LeaderElector:
    """Campaigns for the Lease of ``config`` and holds it (module doc).

    :meth:`run` returns when leadership is lost or :meth:`stop` was called; ``on_started_leading`` is awaited
    once the Lease is won (it must return promptly: renewing waits for it), ``on_stopped_leading`` called when
    the Lease is lost or released.
    """

    def __init__(
        self,
        client: Client,
        config: LeaderElectionConfig,
        *,
        on_started_leading: Callable[[], Awaitable[None]],
        on_stopped_leading: Callable[[], None] | None = None,
        metrics: Metrics | None = None,
        events: EventRecorder | None = None,
        now: Callable[[], datetime] | None = None,
    ) -> None:
        self.client = client
        self.config = config
        self._on_started = on_started_leading
        self._on_stopped = on_stopped_leading
        self._metrics = metrics
        self._events = events
        self._now = now or (lambda: datetime.now(UTC))
        self._observed: _Record | None = None
        self._observed_at = 0.0
        self._leading = False
        self._stopping = asyncio.Event()
        if metrics is not None:
            metrics.set_leader(config.name, False)

    @property
    def is_leader(self) -> bool:
        return self._leading

    @property
    def observed_holder(self) -> str:
        """Who holds the Lease, as last read ("" when nobody or not read yet)."""
        return self._observed.holder if self._observed is not None else ""

    def stop(self) -> None:
        """Stop campaigning or leading; :meth:`run` releases the Lease (when leading) and returns."""
        self._stopping.set()

    async def run(self) -> None:
        """Acquire, then renew until lost or stopped; release on a stop (module doc)."""
        if not await self._acquire():
            return
        self._set_leading(True)
        try:
            await self._on_started()
            await self._renew()
        finally:
            self._set_leading(False)
            if self._stopping.is_set() and self.config.release_on_cancel:
                await self._release()
            if self._on_stopped is not None:
                self._on_stopped()

    # -- the loops -----------------------------------------------------------------------------------

    async def _acquire(self) -> bool:
        logger.info("attempting to acquire leader lease %s/%s", self.config.namespace, self.config.name)
        while not self._stopping.is_set():
            if await self._try_acquire_or_renew():
                logger.info("successfully acquired lease %s/%s", self.config.namespace, self.config.name)
                self._event("became leader")
                return True
            await self._sleep(self.config.retry_period * (1 + random.random() * (JITTER - 1)))
        return False

    async def _renew(self) -> None:
        """Renew every retry period; give up when no renewal succeeded within the renew deadline."""
        loop = asyncio.get_running_loop()
        while not self._stopping.is_set():
            deadline = loop.time() + self.config.renew_deadline
            renewed = False
            while loop.time() < deadline and not self._stopping.is_set():
                if await self._try_acquire_or_renew():
                    renewed = True
                    break
                await self._sleep(min(self.config.retry_period, max(deadline - loop.time(), 0)))
            if self._stopping.is_set():
                return
            if not renewed:
                logger.error("failed to renew lease %s/%s: timed out", self.config.namespace, self.config.name)
                self._event("stopped leading")
                return
            await self._sleep(self.config.retry_period)

    async def _sleep(self, seconds: float) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stopping.wait(), timeout=seconds)

    # -- one try -------------------------------------------------------------------------------------

    async def _try_acquire_or_renew(self) -> bool:
        config = self.config
        now = self._now()
        stamp = micro_time(now)
        mine = _Record(config.identity, max(int(config.lease_duration), 1), stamp, stamp, 0)
        try:
            lease = await self.client.get(LEASE_API_VERSION, "Lease", config.name, namespace=config.namespace)
        except NotFound:
            return await self._create(mine)
        except ApiError as err:
            logger.warning("error retrieving lease %s/%s: %s", config.namespace, config.name, err)
            return False
        record = _Record.of(lease)
        loop_now = asyncio.get_running_loop().time()
        if record != self._observed:
            self._observed, self._observed_at = record, loop_now
        if record.holder and record.holder != config.identity and not self._expired(loop_now):
            logger.debug("lock is held by %s and has not yet expired", record.holder)
            return False
        if record.holder == config.identity:
            mine = _Record(mine.holder, mine.duration, record.acquire_time, stamp, record.transitions)
        else:
            mine = _Record(mine.holder, mine.duration, stamp, stamp, record.transitions + 1)
        return await self._update(lease, mine)

    def _expired(self, loop_now: float) -> bool:
        """client-go's ``isLeaseValid``, negated: the record's duration has passed since it was last seen to change."""
        duration = self._observed.duration if self._observed is not None else 0
        return self._observed_at + duration <= loop_now

    async def _create(self, record: _Record) -> bool:
        lease = {
            "apiVersion": LEASE_API_VERSION,
            "kind": "Lease",
            "metadata": {"name": self.config.name, "namespace": self.config.namespace},
            "spec": record.spec(),
        }
        try:
            created = await self.client.create(lease)
        except (AlreadyExists, Conflict):
            return False
        except ApiError as err:
            logger.warning("error initially creating lease %s/%s: %s", self.config.namespace, self.config.name, err)
            return False
        self._observe_written(created, record)
        return True

    async def _update(self, lease: Obj, record: _Record) -> bool:
        updated = {**lease, "spec": {**(lease.get("spec") or {}), **record.spec()}}
        try:
            written = await self.client.update(updated)
        except Conflict:
            return False
        except ApiError as err:
            logger.warning("failed to update lease %s/%s: %s", self.config.namespace, self.config.name, err)
            return False
        self._observe_written(written, record)
        return True

    def _observe_written(self, lease: Obj, record: _Record) -> None:
        self._observed = record
        self._observed_at = asyncio.get_running_loop().time()

    async def _release(self) -> None:
        """Give the Lease up at once (holder "", duration 1 s), if this candidate still holds it."""
        config = self.config
        try:
            lease = await self.client.get(LEASE_API_VERSION, "Lease", config.name, namespace=config.namespace)
        except ApiError as err:
            logger.warning("failed to release lease %s/%s: %s", config.namespace, config.name, err)
            return
        record = _Record.of(lease)
        if record.holder != config.identity:
            return
        stamp = micro_time(self._now())
        released = _Record("", 1, stamp, stamp, record.transitions)
        if await self._update(lease, released):
            logger.info("released lease %s/%s", config.namespace, config.name)

    def _set_leading(self, leading: bool) -> None:
        self._leading = leading
        if self._metrics is not None:
            self._metrics.set_leader(self.config.name, leading)

    def _event(self, what: str) -> None:
        if self._events is None:
            return
        subject = {
            "apiVersion": LEASE_API_VERSION,
            "kind": "Lease",
            "metadata": {"name": self.config.name, "namespace": self.config.namespace},
        }
        self._events.normal(subject, "LeaderElection", f"{self.config.identity} {what}")
