"""Prometheus metrics with controller-runtime's and client-go's names, so existing dashboards read them unchanged.

A Cluster API dashboard or alert reads ``controller_runtime_reconcile_total{controller="topology/cluster"}``,
``workqueue_depth{name="topology/cluster"}`` and ``rest_client_requests_total{code="429"}``; this module defines
those metrics (names, labels, help texts, histogram buckets as controller-runtime v0.16 registers them, the
version Cluster API v1.6 builds on) on one :class:`~prometheus_client.CollectorRegistry` per :class:`Metrics`,
and the adapters the runtime reports through:

- :class:`ControllerInstruments` is a controller's
  :class:`~clusterclass.controllers.runtime.controller.ControllerMetrics` (reconciles by result, errors, time,
  active workers, the worker count);
- :class:`QueueInstruments` is a work queue's :class:`~clusterclass.kube.workqueue.QueueMetrics` (adds, depth,
  time queued, time processing, retries, and, computed when scraped, unfinished work and the longest
  running reconcile);
- :meth:`Metrics.observe_request` is the HTTP client's response hook (``rest_client_requests_total``);
- :meth:`Metrics.set_leader` is leader election's (``leader_election_master_status``);
- :meth:`Metrics.webhook` times admission requests (``controller_runtime_webhook_*``).

The :class:`~clusterclass.controllers.runtime.manager.Manager` instruments every controller it runs; ``clusterclass
run`` serves :meth:`Metrics.exposition` at ``--metrics-bind-addr``. prometheus-client is the library; nothing here
re-implements the text format.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import prometheus_client
from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector

from clusterclass.controllers.runtime.controller import ReconcileResult

#: controller-runtime's buckets for ``controller_runtime_reconcile_time_seconds`` (seconds)
RECONCILE_TIME_BUCKETS = (
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0,
    1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
)  # fmt: skip
#: client-go's workqueue buckets: ``prometheus.ExponentialBuckets(10e-9, 10, 10)``
QUEUE_DURATION_BUCKETS = tuple(1e-8 * 10**i for i in range(10))
#: controller-runtime's webhook latency buckets (``prometheus.DefBuckets``)
WEBHOOK_LATENCY_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
#: what ``rest_client_requests_total`` says for a request that got no HTTP answer, as client-go says it
NO_ANSWER = "<error>"

#: the text format's content type as controller-runtime serves it (every name here is a classic one, so the body is
#: the same as prometheus-client's newer 1.0.0 flavour; 0.0.4 is what every Prometheus version reads)
CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"


class Metrics:
    """The metrics of one controller process, on their own registry (module doc).

    Process metrics (``process_cpu_seconds_total``, ``process_resident_memory_bytes``...) are included, as the
    Go client's process collector gives them to every controller-runtime manager.
    """

    def __init__(self, registry: CollectorRegistry | None = None) -> None:
        # a counter's ``_created`` timestamp series is not what controller-runtime exports
        prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]
        self.registry = registry or CollectorRegistry(auto_describe=True)
        r = self.registry
        self.reconcile_total = Counter(
            "controller_runtime_reconcile_total",
            "Total number of reconciliations per controller",
            ["controller", "result"],
            registry=r,
        )
        self.reconcile_errors = Counter(
            "controller_runtime_reconcile_errors_total",
            "Total number of reconciliation errors per controller",
            ["controller"],
            registry=r,
        )
        self.reconcile_time = Histogram(
            "controller_runtime_reconcile_time_seconds",
            "Length of time per reconciliation per controller",
            ["controller"],
            buckets=RECONCILE_TIME_BUCKETS,
            registry=r,
        )
        self.max_concurrent = Gauge(
            "controller_runtime_max_concurrent_reconciles",
            "Maximum number of concurrent reconciles per controller",
            ["controller"],
            registry=r,
        )
        self.active_workers = Gauge(
            "controller_runtime_active_workers",
            "Number of currently used workers per controller",
            ["controller"],
            registry=r,
        )
        queue_labels = ["controller", "name"]
        self.queue_depth = Gauge("workqueue_depth", "Current depth of workqueue", queue_labels, registry=r)
        self.queue_adds = Counter(
            "workqueue_adds_total", "Total number of adds handled by workqueue", queue_labels, registry=r
        )
        self.queue_latency = Histogram(
            "workqueue_queue_duration_seconds",
            "How long in seconds an item stays in workqueue before being requested",
            queue_labels,
            buckets=QUEUE_DURATION_BUCKETS,
            registry=r,
        )
        self.work_duration = Histogram(
            "workqueue_work_duration_seconds",
            "How long in seconds processing an item from workqueue takes.",
            queue_labels,
            buckets=QUEUE_DURATION_BUCKETS,
            registry=r,
        )
        self.queue_retries = Counter(
            "workqueue_retries_total", "Total number of retries handled by workqueue", queue_labels, registry=r
        )
        self.rest_requests = Counter(
            "rest_client_requests_total",
            "Number of HTTP requests, partitioned by status code, method, and host.",
            ["code", "method", "host"],
            registry=r,
        )
        self.leader = Gauge(
            "leader_election_master_status",
            "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates "
            "master. 'name' is the string used to identify the lease. Please make sure to group by name.",
            ["name"],
            registry=r,
        )
        self.webhook_requests = Counter(
            "controller_runtime_webhook_requests_total",
            "Total number of admission requests by HTTP status code.",
            ["webhook", "code"],
            registry=r,
        )
        self.webhook_latency = Histogram(
            "controller_runtime_webhook_latency_seconds",
            "Histogram of the latency of processing admission requests",
            ["webhook"],
            buckets=WEBHOOK_LATENCY_BUCKETS,
            registry=r,
        )
        self.webhook_in_flight = Gauge(
            "controller_runtime_webhook_requests_in_flight",
            "Current number of admission requests being served.",
            ["webhook"],
            registry=r,
        )
        self._queues: list[QueueInstruments] = []
        r.register(_UnfinishedWork(self._queues))
        prometheus_client.ProcessCollector(registry=r)

    # -- controllers and queues ----------------------------------------------------------------------

    def controller(self, name: str, workers: int) -> ControllerInstruments:
        """The instruments of controller ``name`` running ``workers`` workers."""
        self.max_concurrent.labels(name).set(workers)
        self.active_workers.labels(name).set(0)
        for result in ("success", "error", "requeue", "requeue_after"):
            self.reconcile_total.labels(name, result)  # exported at 0 from the start, as controller-runtime does
        self.reconcile_errors.labels(name)
        return ControllerInstruments(self, name)

    def queue(self, name: str) -> QueueInstruments:
        """The instruments of the work queue of controller ``name``."""
        instruments = QueueInstruments(self, name)
        self._queues.append(instruments)
        return instruments

    # -- the HTTP client, leader election, webhooks ---------------------------------------------------

    def observe_request(self, method: str, host: str, code: int | None) -> None:
        """One request to an API server answered with ``code`` (None: no answer: refused, timed out, TLS)."""
        self.rest_requests.labels(NO_ANSWER if code is None else str(code), method.upper(), host).inc()

    def set_leader(self, lease: str, leading: bool) -> None:
        self.leader.labels(lease).set(1 if leading else 0)

    @contextlib.contextmanager
    def webhook(self, path: str) -> Iterator[_WebhookRequest]:
        """Time one admission request to ``path``; set :attr:`_WebhookRequest.code` to the HTTP code answered."""
        request = _WebhookRequest()
        in_flight = self.webhook_in_flight.labels(path)
        in_flight.inc()
        started = time.perf_counter()
        try:
            yield request
        finally:
            in_flight.dec()
            self.webhook_latency.labels(path).observe(time.perf_counter() - started)
            self.webhook_requests.labels(path, str(request.code)).inc()

    def exposition(self) -> bytes:
        """Everything, in the Prometheus text format."""
        return prometheus_client.generate_latest(self.registry)


@dataclass
class _WebhookRequest:
    code: int = 200


class ControllerInstruments:
    """A controller's :class:`~clusterclass.controllers.runtime.controller.ControllerMetrics` on :class:`Metrics`."""

    def __init__(self, metrics: Metrics, name: str) -> None:
        self._active = metrics.active_workers.labels(name)
        self._time = metrics.reconcile_time.labels(name)
        self._errors = metrics.reconcile_errors.labels(name)
        self._total = {
            result: metrics.reconcile_total.labels(name, result)
            for result in ("success", "error", "requeue", "requeue_after")
        }

    def started(self) -> None:
        self._active.inc()

    def finished(self, result: ReconcileResult | None, seconds: float) -> None:
        self._active.dec()
        if result is None:  # cancelled at shutdown: not a reconcile that ended
            return
        self._total[result].inc()
        if result == "error":
            self._errors.inc()
        self._time.observe(seconds)


@dataclass
class QueueInstruments:
    """A work queue's :class:`~clusterclass.kube.workqueue.QueueMetrics` on :class:`Metrics`, as client-go counts."""

    metrics: Metrics
    name: str
    _added_at: dict[Any, float] = field(default_factory=dict)
    _started_at: dict[Any, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        labels = (self.name, self.name)
        self._depth = self.metrics.queue_depth.labels(*labels)
        self._adds = self.metrics.queue_adds.labels(*labels)
        self._latency = self.metrics.queue_latency.labels(*labels)
        self._work = self.metrics.work_duration.labels(*labels)
        self._retries = self.metrics.queue_retries.labels(*labels)

    def added(self, key: Any) -> None:
        self._adds.inc()
        self._depth.inc()
        self._added_at.setdefault(key, time.perf_counter())

    def taken(self, key: Any) -> None:
        now = time.perf_counter()
        self._depth.dec()
        added = self._added_at.pop(key, None)
        if added is not None:
            self._latency.observe(now - added)
        self._started_at[key] = now

    def finished(self, key: Any) -> None:
        started = self._started_at.pop(key, None)
        if started is not None:
            self._work.observe(time.perf_counter() - started)

    def retried(self, key: Any) -> None:
        self._retries.inc()

    def running(self) -> list[float]:
        """How long each reconcile in progress has been running."""
        now = time.perf_counter()
        return [now - started for started in self._started_at.values()]


class _UnfinishedWork(Collector):
    """``workqueue_unfinished_work_seconds`` and ``workqueue_longest_running_processor_seconds``, when scraped."""

    def __init__(self, queues: list[QueueInstruments]) -> None:
        self._queues = queues

    def collect(self) -> Iterable[GaugeMetricFamily]:
        unfinished = GaugeMetricFamily(
            "workqueue_unfinished_work_seconds",
            "How many seconds of work has been done that is in progress and hasn't been observed by "
            "work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads "
            "by observing the rate at which this increases.",
            labels=["controller", "name"],
        )
        longest = GaugeMetricFamily(
            "workqueue_longest_running_processor_seconds",
            "How many seconds has the longest running processor for workqueue been running.",
            labels=["controller", "name"],
        )
        for queue in self._queues:
            running = queue.running()
            unfinished.add_metric([queue.name, queue.name], sum(running))
            longest.add_metric([queue.name, queue.name], max(running, default=0.0))
        yield unfinished
        yield longest
