"""The controllers' work queue: de-duplicating, one reconcile per key at a time, rate-limited.

A controller does not act on events; it acts on *keys* (a Cluster's ``namespace/name``). Informer
handlers map every event to the key of the object that must converge and :meth:`WorkQueue.add` it;
workers take keys and reconcile the whole state behind them. This module is that queue, with
client-go's ``workqueue`` rules, which controller-runtime's controllers are built on:

- **De-duplicated.** A key added while it waits is queued once: ten events for one Cluster before a
  worker gets to it are one reconcile.
- **One reconcile per key at a time.** A key handed to a worker is *processing* until the worker
  calls :meth:`WorkQueue.done`. Adding it meanwhile marks it *dirty*; ``done`` queues it again, so
  the change is seen by a second reconcile, never by two at once.
- **Rate-limited requeues.** :meth:`WorkQueue.add_rate_limited` (a failed reconcile) delays the key
  by the :class:`RateLimiter`: by default the larger of a per-key exponential backoff (5 ms doubling
  up to 1000 s) and an overall token bucket (10 per second, bursts of 100), as controller-runtime's
  default. :meth:`WorkQueue.forget` (a successful reconcile) resets the key's backoff.
- **Requeue after.** :meth:`WorkQueue.add_after` queues a key later (a reconcile that must look
  again in 30 s); a key waiting twice keeps the earlier time.
- **Shutdown drains.** After :meth:`WorkQueue.shutdown` adds are ignored, delayed keys are dropped,
  and workers still get every key already queued; :meth:`WorkQueue.shutdown_with_drain` also waits
  for the reconciles in flight.

Time comes from a :class:`Clock` so tests drive delays with :class:`FakeClock` instead of sleeping.
What the queue does is reported to its :class:`QueueMetrics` (client-go's ``workqueue`` metrics:
adds, depth, time queued, time processing, retries); the controllers' runtime plugs Prometheus in.
:func:`run_workers` runs the workers. The informers that feed the queue are in
:mod:`clusterclass.kube.informer`.

Written here rather than taken from a library: no Python package has these semantics (see
``../shared/design/STACK.md``); kopf queues per object and would not merge child events into the
key of their Cluster.
"""

from __future__ import annotations

import asyncio
import heapq
import logging
import time
from collections import deque
from collections.abc import Awaitable, Callable, Hashable, Iterable
from dataclasses import dataclass, field
from typing import Generic, Protocol, TypeVar

logger = logging.getLogger(__name__)

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)

#: controller-runtime's default per-key backoff: first retry after 5 ms, doubling up to 1000 s
DEFAULT_BASE_DELAY = 0.005
DEFAULT_MAX_DELAY = 1000.0
#: controller-runtime's default overall limit: 10 requeues per second, bursts of 100
DEFAULT_QPS = 10.0
DEFAULT_BURST = 100


# -- time ------------------------------------------------------------------------------------------


class Timer(Protocol):
    """A scheduled callback that can be cancelled (what ``loop.call_later`` returns)."""

    def cancel(self) -> None: ...


class Clock(Protocol):
    """Where the queue and the informers get the time and schedule callbacks.

    ``now`` is monotonic seconds. ``call_later`` runs ``callback`` on the running event loop after
    ``delay`` seconds; ``sleep`` waits that long.
    """

    def now(self) -> float: ...

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer: ...

    async def sleep(self, delay: float) -> None: ...


class RealClock:
    """The event loop's monotonic clock; ``call_later`` and ``sleep`` need a running loop."""

    def now(self) -> float:
        return time.monotonic()

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        return asyncio.get_running_loop().call_later(max(delay, 0.0), callback)

    async def sleep(self, delay: float) -> None:
        await asyncio.sleep(max(delay, 0.0))


@dataclass(order=True)
class _FakeTimer:
    when: float
    seq: int
    callback: Callable[[], None] = field(compare=False)
    cancelled: bool = field(default=False, compare=False)

    def cancel(self) -> None:
        self.cancelled = True


class FakeClock:
    """A clock that moves only when told to (:meth:`advance`), for deterministic tests.

    Callbacks due by the new time run inside :meth:`advance`, in time order, each with ``now`` set
    to its own due time; a ``sleep`` ends when the clock passes its deadline (the sleeper resumes
    at the caller's next await).
    """

    def __init__(self, start: float = 0.0) -> None:
        self._now = start
        self._timers: list[_FakeTimer] = []
        self._seq = 0

    def now(self) -> float:
        return self._now

    def call_later(self, delay: float, callback: Callable[[], None]) -> Timer:
        self._seq += 1
        timer = _FakeTimer(self._now + max(delay, 0.0), self._seq, callback)
        heapq.heappush(self._timers, timer)
        return timer

    async def sleep(self, delay: float) -> None:
        future: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        timer = self.call_later(delay, lambda: None if future.done() else future.set_result(None))
        try:
            await future
        finally:
            timer.cancel()

    def advance(self, seconds: float) -> None:
        """Move time forward by ``seconds``, running every callback that falls due."""
        if seconds < 0:
            raise ValueError("a clock does not go backwards")
        target = self._now + seconds
        while self._timers and self._timers[0].when <= target:
            timer = heapq.heappop(self._timers)
            if timer.cancelled:
                continue
            self._now = max(self._now, timer.when)
            timer.callback()
        self._now = target

    @property
    def pending(self) -> int:
        """How many scheduled callbacks have not run or been cancelled."""
        return sum(1 for timer in self._timers if not timer.cancelled)


# -- rate limiters ---------------------------------------------------------------------------------


class RateLimiter(Protocol[K_contra]):
    """How long a key waits before its next try.

    ``when`` is called once per rate-limited requeue and counts it; ``forget`` clears what the
    limiter remembers of a key; ``num_requeues`` is how many requeues it counted since.
    """

    def when(self, key: K_contra) -> float: ...

    def forget(self, key: K_contra) -> None: ...

    def num_requeues(self, key: K_contra) -> int: ...


def exponential_delay(base: float, maximum: float, doublings: int) -> float:
    """``base * 2**doublings`` seconds, at most ``maximum``: the backoff of requeues and of informers."""
    if doublings >= 64:  # 2**64 times any positive base is past any sensible maximum (and 2.0**1024 overflows)
        return maximum
    return min(base * 2.0**doublings, maximum)


class ExponentialBackoff(Generic[K]):
    """Per key: ``base * 2**failures`` seconds, at most ``maximum``; ``forget`` starts it over."""

    def __init__(self, base: float = DEFAULT_BASE_DELAY, maximum: float = DEFAULT_MAX_DELAY) -> None:
        if base <= 0 or maximum < base:
            raise ValueError("the base delay must be positive and at most the maximum")
        self.base = base
        self.maximum = maximum
        self._failures: dict[K, int] = {}

    def when(self, key: K) -> float:
        failures = self._failures.get(key, 0)
        self._failures[key] = failures + 1
        return exponential_delay(self.base, self.maximum, failures)

    def forget(self, key: K) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: K) -> int:
        return self._failures.get(key, 0)


class TokenBucket(Generic[K]):
    """For all keys together: ``qps`` tokens a second, at most ``burst`` saved up.

    Every requeue takes a token; when none is left it reserves the next one and waits for it, so a
    storm of failures is spread out at ``qps`` (golang's ``rate.Limiter`` reservation rule). It
    counts no key, so ``forget`` does nothing.
    """

    def __init__(self, qps: float = DEFAULT_QPS, burst: int = DEFAULT_BURST, *, clock: Clock | None = None) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("qps must be positive and burst at least 1")
        self.qps = qps
        self.burst = burst
        self.clock: Clock = clock or RealClock()
        self._tokens = float(burst)
        self._last = self.clock.now()

    def when(self, key: K) -> float:
        now = self.clock.now()
        self._tokens = min(float(self.burst), self._tokens + (now - self._last) * self.qps)
        self._last = now
        self._tokens -= 1.0
        return 0.0 if self._tokens >= 0 else -self._tokens / self.qps

    def forget(self, key: K) -> None:
        return None

    def num_requeues(self, key: K) -> int:
        return 0


class MaxOf(Generic[K]):
    """The longest wait any of ``limiters`` asks for; ``forget`` forgets in all of them."""

    def __init__(self, *limiters: RateLimiter[K]) -> None:
        if not limiters:
            raise ValueError("MaxOf needs at least one rate limiter")
        self.limiters = limiters

    def when(self, key: K) -> float:
        return max(limiter.when(key) for limiter in self.limiters)

    def forget(self, key: K) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return max(limiter.num_requeues(key) for limiter in self.limiters)


def default_rate_limiter(
    *,
    base_delay: float = DEFAULT_BASE_DELAY,
    max_delay: float = DEFAULT_MAX_DELAY,
    qps: float = DEFAULT_QPS,
    burst: int = DEFAULT_BURST,
    clock: Clock | None = None,
) -> MaxOf[K]:
    """controller-runtime's default: per-key exponential backoff and an overall token bucket."""
    return MaxOf(ExponentialBackoff(base_delay, max_delay), TokenBucket(qps, burst, clock=clock))


# -- the queue -------------------------------------------------------------------------------------


class QueueMetrics(Protocol[K_contra]):
    """What a :class:`WorkQueue` reports, at the moments client-go's queue reports them.

    ``added``: a key became due for a reconcile (it was not already); ``taken``: a worker took it;
    ``finished``: the worker is done with it; ``retried``: it was requeued rate-limited.
    """

    def added(self, key: K_contra) -> None: ...

    def taken(self, key: K_contra) -> None: ...

    def finished(self, key: K_contra) -> None: ...

    def retried(self, key: K_contra) -> None: ...


class NoQueueMetrics:
    """Reports nothing: the default."""

    def added(self, key: object) -> None:
        pass

    def taken(self, key: object) -> None:
        pass

    def finished(self, key: object) -> None:
        pass

    def retried(self, key: object) -> None:
        pass


class ShutDown(Exception):
    """The queue was shut down and nothing is left to hand out."""


class WorkQueue(Generic[K]):
    """A de-duplicating, rate-limited queue of keys with at most one worker per key (module doc).

    Use it from one event loop. ``name`` labels log lines; ``clock`` and ``rate_limiter`` default to
    the real clock and :func:`default_rate_limiter` on it; :attr:`metrics` may be replaced before use.
    """

    def __init__(
        self,
        *,
        name: str = "",
        clock: Clock | None = None,
        rate_limiter: RateLimiter[K] | None = None,
    ) -> None:
        self.name = name
        self.clock: Clock = clock or RealClock()
        self.rate_limiter: RateLimiter[K] = rate_limiter or default_rate_limiter(clock=self.clock)
        self._queue: deque[K] = deque()
        #: keys that need a reconcile: queued, or added again while processing
        self._dirty: set[K] = set()
        self._processing: set[K] = set()
        #: keys waiting for add_after: their due time and timer
        self._waiting: dict[K, tuple[float, Timer]] = {}
        self._getters: deque[asyncio.Future[None]] = deque()
        self._idle: list[asyncio.Future[None]] = []
        self._shutting_down = False
        self.metrics: QueueMetrics[K] = NoQueueMetrics()

    # -- adding --

    def add(self, key: K) -> None:
        """Queue ``key`` unless it is already queued; a key being processed is queued at ``done``."""
        if self._shutting_down or key in self._dirty:
            return
        self.metrics.added(key)
        self._dirty.add(key)
        if key in self._processing:
            return
        self._queue.append(key)
        self._wake_getter()

    def add_after(self, key: K, delay: float) -> None:
        """Queue ``key`` after ``delay`` seconds (at once when not positive).

        A key already waiting keeps whichever due time comes first.
        """
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        due = self.clock.now() + delay
        waiting = self._waiting.get(key)
        if waiting is not None:
            if waiting[0] <= due:
                return
            waiting[1].cancel()
        timer = self.clock.call_later(delay, lambda: self._due(key))
        self._waiting[key] = (due, timer)

    def _due(self, key: K) -> None:
        self._waiting.pop(key, None)
        self.add(key)

    def add_rate_limited(self, key: K) -> None:
        """Queue ``key`` after the rate limiter's delay (a reconcile failed)."""
        if self._shutting_down:
            return
        self.metrics.retried(key)
        self.add_after(key, self.rate_limiter.when(key))

    def forget(self, key: K) -> None:
        """Reset the rate limiter's memory of ``key`` (its reconcile succeeded); the queue is unchanged."""
        self.rate_limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        """Rate-limited requeues of ``key`` since it was last forgotten."""
        return self.rate_limiter.num_requeues(key)

    # -- taking --

    async def get(self) -> K:
        """The next key, waiting for one; the key is processing until :meth:`done`.

        Raises :class:`ShutDown` once the queue is shut down and empty.
        """
        while not self._queue:
            if self._shutting_down:
                raise ShutDown(self.name)
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                # a wake-up meant for this getter goes to the next one
                if waiter.done() and not waiter.cancelled():
                    self._wake_getter()
                raise
        return self._take()

    def get_nowait(self) -> K | None:
        """The next key when one is queued, else None (for tests and draining loops)."""
        return self._take() if self._queue else None

    def _take(self) -> K:
        """Hand out the first queued key: it is processing, and no longer dirty until added again."""
        key = self._queue.popleft()
        self._processing.add(key)
        self._dirty.discard(key)
        self.metrics.taken(key)
        return key

    def done(self, key: K) -> None:
        """The worker finished ``key``; if it was added meanwhile, it is queued again."""
        if key in self._processing:
            self.metrics.finished(key)
        self._processing.discard(key)
        if key in self._dirty:
            self._queue.append(key)
            self._wake_getter()
        elif not self._processing:
            self._notify_idle()

    def _wake_getter(self) -> None:
        while self._getters:
            waiter = self._getters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return

    # -- state --

    def __len__(self) -> int:
        """Keys queued now (not processing, not waiting for add_after): client-go's ``Len``."""
        return len(self._queue)

    @property
    def processing(self) -> frozenset[K]:
        return frozenset(self._processing)

    @property
    def waiting(self) -> int:
        """Keys scheduled by add_after (or a rate-limited requeue) that are not due yet."""
        return len(self._waiting)

    def queued(self) -> list[K]:
        """The queued keys in the order workers will get them."""
        return list(self._queue)

    # -- shutdown --

    def shutdown(self) -> None:
        """Stop accepting keys and drop the delayed ones; workers still get what is queued.

        Waiting :meth:`get` calls raise :class:`ShutDown` once nothing is queued.
        """
        self._shutting_down = True
        for _, timer in self._waiting.values():
            timer.cancel()
        self._waiting.clear()
        getters, self._getters = self._getters, deque()
        _release(getters)

    async def shutdown_with_drain(self) -> None:
        """:meth:`shutdown`, then wait until every queued key was handed out and every worker is done."""
        self.shutdown()
        while self._queue or self._processing:
            waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
            self._idle.append(waiter)
            await waiter

    def _notify_idle(self) -> None:
        if self._queue:
            return
        idle, self._idle = self._idle, []
        _release(idle)


def _release(waiters: Iterable[asyncio.Future[None]]) -> None:
    """Wake every waiter still waiting."""
    for waiter in waiters:
        if not waiter.done():
            waiter.set_result(None)


# -- workers ---------------------------------------------------------------------------------------

#: a reconcile: None when converged; a number of seconds to look again after (0: again at once)
Reconcile = Callable[[K], Awaitable[float | None]]


#: what to do with a reconcile's exception (the key is requeued rate-limited either way)
OnFailure = Callable[[K, Exception], None]


def _log_failure(key: object, error: Exception) -> None:
    logger.error("reconcile of %r failed; requeued with backoff", key, exc_info=error)


async def run_workers(
    queue: WorkQueue[K], reconcile: Reconcile[K], workers: int = 1, *, on_failure: OnFailure[K] | None = None
) -> None:
    """Run ``workers`` tasks that take keys from ``queue`` and reconcile them, until it shuts down.

    As controller-runtime's controller does with a reconcile's result: an exception is reported to
    ``on_failure`` (default: logged with its traceback) and the key requeued rate-limited; a number is a
    requeue-after (the key's backoff is forgotten); None forgets the key's backoff. Cancelling this call
    cancels the reconciles in flight. It returns once the queue is shut down and every worker has
    finished its last key.
    """
    if workers < 1:
        raise ValueError("at least one worker is needed")
    async with asyncio.TaskGroup() as group:
        for _ in range(workers):
            group.create_task(_worker(queue, reconcile, on_failure or _log_failure))


async def _worker(queue: WorkQueue[K], reconcile: Reconcile[K], on_failure: OnFailure[K]) -> None:
    while True:
        try:
            key = await queue.get()
        except ShutDown:
            return
        try:
            requeue_after = await reconcile(key)
        except asyncio.CancelledError:
            queue.done(key)
            raise
        except Exception as error:
            on_failure(key, error)
            queue.add_rate_limited(key)
        else:
            queue.forget(key)
            if requeue_after is not None:
                queue.add_after(key, requeue_after)
        queue.done(key)
        # let the rest of the loop run between two keys: a reconcile that never awaits real I/O (an
        # in-process client) would otherwise keep it from delivering the watch events it waits for
        await asyncio.sleep(0)
