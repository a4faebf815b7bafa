"""Metrics: controller-runtime's and client-go's names and labels, counted from what the runtime really did."""

from __future__ import annotations

import asyncio

from controller_support import eventually
from prometheus_client.parser import text_string_to_metric_families

from clusterclass.api.objects import Obj
from clusterclass.controllers.runtime import Controller, Manager
from clusterclass.controllers.runtime.metrics import Metrics
from clusterclass.errors import TopologyError
from clusterclass.kube.client import Client
from clusterclass.kube.workqueue import FakeClock, WorkQueue


def samples(metrics: Metrics) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of the exposition, keyed by name and sorted labels: what a scraper reads."""
    found = {}
    for family in text_string_to_metric_families(metrics.exposition().decode()):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def value(metrics: Metrics, metric: str, /, **labels: str) -> float:
    return samples(metrics).get((metric, tuple(sorted(labels.items()))), float("nan"))


async def test_reconciles_are_counted_by_result_with_their_time_and_workers(backend: Client) -> None:
    namespace = (await backend.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "m-"}}))[
        "metadata"
    ]["name"]
    calls: dict[str, int] = {}

    async def reconcile(key: str) -> float | None:
        calls[key] = calls.get(key, 0) + 1
        name = key.rpartition("/")[2]
        if name == "fails" and calls[key] == 1:
            raise TopologyError("first time fails")
        if name == "later" and calls[key] == 1:
            return 0.01
        return None

    manager = Manager(backend, namespace=namespace)
    controller = Controller("test/things", reconcile, workers=3)
    controller.watch(await manager.informer("v1", "ConfigMap"))
    manager.add(controller)
    metrics = manager.metrics
    assert value(metrics, "controller_runtime_max_concurrent_reconciles", controller="test/things") == 3
    assert value(metrics, "controller_runtime_reconcile_total", controller="test/things", result="success") == 0
    async with manager:
        for name in ("ok", "fails", "later"):
            obj: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}}
            await backend.create(obj)

        async def all_converged() -> bool:
            return controller.stats.success == 3

        await eventually(all_converged, what="every ConfigMap reconciled to success")
    by_result = {
        result: value(metrics, "controller_runtime_reconcile_total", controller="test/things", result=result)
        for result in ("success", "error", "requeue_after", "requeue")
    }
    assert by_result == {"success": 3, "error": 1, "requeue_after": 1, "requeue": 0}
    assert value(metrics, "controller_runtime_reconcile_errors_total", controller="test/things") == 1
    assert value(metrics, "controller_runtime_reconcile_time_seconds_count", controller="test/things") == 5
    assert value(metrics, "controller_runtime_active_workers", controller="test/things") == 0
    queue = {"controller": "test/things", "name": "test/things"}
    assert value(metrics, "workqueue_adds_total", **queue) >= 5  # three creates, a retry, a requeue-after
    assert value(metrics, "workqueue_retries_total", **queue) == 1
    assert value(metrics, "workqueue_depth", **queue) == 0
    assert value(metrics, "workqueue_work_duration_seconds_count", **queue) == 5
    assert value(metrics, "workqueue_queue_duration_seconds_count", **queue) == 5
    assert value(metrics, "workqueue_unfinished_work_seconds", **queue) == 0
    assert any(name == "process_resident_memory_bytes" for name, _ in samples(metrics))


async def test_a_reconcile_in_progress_shows_as_unfinished_work() -> None:
    metrics = Metrics()
    queue: WorkQueue[str] = WorkQueue(name="slow", clock=FakeClock())
    queue.metrics = metrics.queue("slow")
    queue.add("a")
    queue.add("a")  # de-duplicated: one add
    queue.add("b")
    labels = {"controller": "slow", "name": "slow"}
    assert value(metrics, "workqueue_depth", **labels) == 2
    assert value(metrics, "workqueue_adds_total", **labels) == 2
    key = await queue.get()
    await asyncio.sleep(0.02)
    assert value(metrics, "workqueue_depth", **labels) == 1
    assert value(metrics, "workqueue_longest_running_processor_seconds", **labels) >= 0.02
    assert value(metrics, "workqueue_unfinished_work_seconds", **labels) >= 0.02
    queue.done(key)
    assert value(metrics, "workqueue_longest_running_processor_seconds", **labels) == 0
    assert value(metrics, "workqueue_work_duration_seconds_count", **labels) == 1


def test_requests_leadership_and_webhooks_have_client_go_and_controller_runtime_labels() -> None:
    metrics = Metrics()
    metrics.observe_request("get", "10.0.0.1:6443", 200)
    metrics.observe_request("PATCH", "10.0.0.1:6443", 409)
    metrics.observe_request("GET", "10.0.0.1:6443", None)
    metrics.set_leader("controller-leader-election-clusterclass", True)
    with metrics.webhook("/validate-cluster-x-k8s-io-v1beta1-cluster") as request:
        request.code = 403
    assert value(metrics, "rest_client_requests_total", code="200", method="GET", host="10.0.0.1:6443") == 1
    assert value(metrics, "rest_client_requests_total", code="409", method="PATCH", host="10.0.0.1:6443") == 1
    assert value(metrics, "rest_client_requests_total", code="<error>", method="GET", host="10.0.0.1:6443") == 1
    assert value(metrics, "leader_election_master_status", name="controller-leader-election-clusterclass") == 1
    path = "/validate-cluster-x-k8s-io-v1beta1-cluster"
    assert value(metrics, "controller_runtime_webhook_requests_total", webhook=path, code="403") == 1
    assert value(metrics, "controller_runtime_webhook_latency_seconds_count", webhook=path) == 1
    assert value(metrics, "controller_runtime_webhook_requests_in_flight", webhook=path) == 0
    text = metrics.exposition().decode()
    assert "_created" not in text
