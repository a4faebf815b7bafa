"""One controller: a reconcile function, its work queue, its workers and the watches that feed the queue.

controller-runtime's controller in a page. Watches map events on any kind to the keys
(``namespace/name``) of the objects this controller reconciles (:meth:`Controller.watch`), filtered
by :mod:`predicates <clusterclass.controllers.runtime.predicates>`; the de-duplicating, rate-limited
:class:`~clusterclass.kube.workqueue.WorkQueue` holds the keys; ``workers`` tasks reconcile them, at
most one reconcile per key at a time. A reconcile returns None (converged), or seconds to look again
after; an exception requeues the key with backoff. Every reconcile runs in its own
:func:`~clusterclass.controllers.runtime.logs.reconcile_scope`, so its log lines carry the controller,
the key and a reconcile id.

:class:`ReconcileStats` counts results and time per controller: the benchmark and the tests read it.
The same moments go to the controller's :class:`ControllerMetrics` (controller-runtime's
``controller_runtime_*`` metrics, plugged in by the manager from
:mod:`~clusterclass.controllers.runtime.metrics`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass, field
from typing import Literal, Protocol

from clusterclass.api.objects import Obj
from clusterclass.controllers.runtime import logs
from clusterclass.controllers.runtime.predicates import Predicate
from clusterclass.errors import ClusterClassError
from clusterclass.kube.errors import ApiError, Conflict
from clusterclass.kube.informer import EventHandler, Informer
from clusterclass.kube.workqueue import Clock, RateLimiter, WorkQueue, run_workers

logger = logging.getLogger(__name__)

#: reconcile one key: None when converged, else seconds until it should run again
Reconcile = Callable[[str], Awaitable[float | None]]
#: the keys an event on an object maps to
ToKeys = Callable[[Obj], Iterable[str]]

#: controller-runtime's default (``MaxConcurrentReconciles``) is 1; Cluster API's topology and
#: ClusterClass controllers default to 10 (``--clustertopology-concurrency``, ``--clusterclass-concurrency``)
DEFAULT_WORKERS = 10


#: controller-runtime's ``result`` label of ``controller_runtime_reconcile_total``
ReconcileResult = Literal["success", "error", "requeue", "requeue_after"]


class ControllerMetrics(Protocol):
    """What a :class:`Controller` reports of its reconciles."""

    def started(self) -> None:
        """A worker began a reconcile."""
        ...

    def finished(self, result: ReconcileResult | None, seconds: float) -> None:
        """That reconcile ended with ``result`` after ``seconds`` (None: it was cancelled)."""
        ...


class NoControllerMetrics:
    """Reports nothing: the default until a manager instruments the controller."""

    def started(self) -> None:
        pass

    def finished(self, result: ReconcileResult | None, seconds: float) -> None:
        pass


@dataclass
class ReconcileStats:
    """Reconciles by result, and the time they took, for one controller."""

    success: int = 0
    requeue_after: int = 0
    error: int = 0
    seconds: float = 0.0
    errors_by_type: dict[str, int] = field(default_factory=dict)
    #: the text of the last reconcile error
    last_error: str = ""

    @property
    def total(self) -> int:
        return self.success + self.requeue_after + self.error


def key_of(obj: Obj) -> str:
    """``namespace/name`` (``name`` for a cluster-scoped object): the key of a reconcile."""
    metadata = obj.get("metadata") or {}
    namespace = metadata.get("namespace")
    return f"{namespace}/{metadata.get('name')}" if namespace else str(metadata.get("name"))


def split_key(key: str) -> tuple[str | None, str]:
    namespace, _, name = key.rpartition("/")
    return (namespace or None), name


def self_key(obj: Obj) -> list[str]:
    """The mapping of a controller's own kind: the object's key."""
    return [key_of(obj)]


class Controller:
    """A named reconcile with its queue and watches (module doc)."""

    def __init__(
        self,
        name: str,
        reconcile: Reconcile,
        *,
        workers: int = DEFAULT_WORKERS,
        clock: Clock | None = None,
        rate_limiter: RateLimiter[str] | None = None,
    ) -> None:
        if workers < 1:
            raise ValueError(f"{name}: at least one worker is needed")
        self.name = name
        self._reconcile = reconcile
        self.workers = workers
        self.queue: WorkQueue[str] = WorkQueue(name=name, clock=clock, rate_limiter=rate_limiter)
        self.stats = ReconcileStats()
        self.metrics: ControllerMetrics = NoControllerMetrics()
        self._watches: list[tuple[Informer, EventHandler]] = []

    def __repr__(self) -> str:
        return f"<Controller {self.name}>"

    # -- watches -------------------------------------------------------------------------------------

    def watch(self, informer: Informer, to_keys: ToKeys = self_key, *predicates: Predicate) -> EventHandler:
        """Enqueue ``to_keys(obj)`` for every event on ``informer`` that passes every predicate.

        For an update the keys of both states are enqueued, so the parent an object just left is
        reconciled too.
        """

        def add(obj: Obj) -> None:
            if all(p.create(obj) for p in predicates):
                self._enqueue(to_keys(obj))

        def update(old: Obj, new: Obj) -> None:
            if all(p.update(old, new) for p in predicates):
                self._enqueue([*to_keys(old), *to_keys(new)])

        def delete(obj: Obj, _final_state_unknown: bool) -> None:
            if all(p.delete(obj) for p in predicates):
                self._enqueue(to_keys(obj))

        handler = informer.add_event_handler(on_add=add, on_update=update, on_delete=delete)
        self._watches.append((informer, handler))
        return handler

    def _enqueue(self, keys: Iterable[str]) -> None:
        for key in dict.fromkeys(keys):
            self.queue.add(key)

    def enqueue(self, key: str) -> None:
        self.queue.add(key)

    def stop_watching(self) -> None:
        for informer, handler in self._watches:
            informer.remove_event_handler(handler)
        self._watches.clear()

    # -- running ---------------------------------------------------------------------------------------

    async def run(self) -> None:
        """Reconcile keys until the queue shuts down (see :meth:`shutdown`)."""
        await run_workers(self.queue, self._timed, self.workers, on_failure=self._failed)

    async def shutdown(self) -> None:
        """Stop taking new keys; return once the reconciles in flight have finished."""
        self.stop_watching()
        await self.queue.shutdown_with_drain()

    async def _timed(self, key: str) -> float | None:
        started = time.perf_counter()
        outcome: ReconcileResult | None = None
        self.metrics.started()
        with logs.reconcile_scope(self.name, key):
            try:
                result = await self._reconcile(key)
            except Exception as error:
                outcome = "error"
                self.stats.error += 1
                name = type(error).__name__
                self.stats.errors_by_type[name] = self.stats.errors_by_type.get(name, 0) + 1
                self.stats.last_error = str(error)
                raise
            else:
                # controller-runtime: Requeue without a delay is "requeue", RequeueAfter "requeue_after"
                outcome = "success" if result is None else "requeue" if result <= 0 else "requeue_after"
            finally:
                seconds = time.perf_counter() - started
                self.stats.seconds += seconds
                self.metrics.finished(outcome, seconds)
        if result is None:
            self.stats.success += 1
        else:
            self.stats.requeue_after += 1
        return result

    def _failed(self, key: str, error: Exception) -> None:
        # errors a user or another writer causes are one line; anything else is a bug: show the traceback
        with logs.reconcile_scope(self.name, key):
            if isinstance(error, Conflict):  # another writer was first: routine, the retry reads the new state
                logger.debug("reconcile conflicted, requeued with backoff: %s", error)
            elif isinstance(error, ClusterClassError | ApiError):
                logger.warning("reconcile failed, requeued with backoff: %s", error)
            else:
                logger.error("reconcile failed, requeued with backoff", exc_info=error)
