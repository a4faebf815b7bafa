"""The controller runtime: shared and on-demand informers, workers, requeue, graceful stop, predicates, Events, logs."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from controller_support import eventually

from clusterclass.api.objects import Obj
from clusterclass.controllers.runtime import Controller, EventRecorder, Manager
from clusterclass.controllers.runtime import predicates as p
from clusterclass.controllers.runtime.logs import JsonFormatter, KeyValueFormatter, ReconcileFields, reconcile_scope
from clusterclass.errors import TopologyError
from clusterclass.kube.client import Client


def config_map(name: str, namespace: str, **labels: str) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace, "labels": labels},
    }


@pytest.fixture
async def namespace(backend: Client) -> str:
    created = await backend.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "runtime-"}})
    return str(created["metadata"]["name"])


# --- Events ------------------------------------------------------------------------------------------------


async def test_a_repeated_event_is_one_event_object_with_a_count(backend: Client, namespace: str) -> None:
    about = await backend.create(config_map("subject", namespace))
    recorder = EventRecorder(backend, "topology/cluster", instance="test-host")
    for _ in range(3):
        recorder.normal(about, "TopologyUpdate", 'Updated "ConfigMap/subject"')
    recorder.warning(about, "TopologyUpdate", "something else")
    await recorder.flush()
    events = (await backend.list("v1", "Event", namespace=namespace)).items
    by_message = {e["message"]: e for e in events}
    assert set(by_message) == {'Updated "ConfigMap/subject"', "something else"}
    repeated = by_message['Updated "ConfigMap/subject"']
    assert repeated["count"] == 3 and repeated["type"] == "Normal"
    assert repeated["metadata"]["name"].startswith("subject.")
    assert repeated["involvedObject"] == {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": "subject",
        "namespace": namespace,
        "uid": about["metadata"]["uid"],
        "resourceVersion": about["metadata"]["resourceVersion"],
    }
    assert repeated["source"] == {"component": "topology/cluster"}
    assert (repeated["reportingComponent"], repeated["reportingInstance"]) == ("topology/cluster", "test-host")
    assert repeated["firstTimestamp"] <= repeated["lastTimestamp"]
    assert by_message["something else"]["type"] == "Warning"


async def test_an_event_that_cannot_be_written_does_not_fail_anything(
    backend: Client, caplog: pytest.LogCaptureFixture
) -> None:
    recorder = EventRecorder(backend, "x")
    recorder.normal(config_map("ghost", "no-such-namespace-here"), "Reason", "message")
    await recorder.flush()
    assert "could not write Event" in caplog.text


# --- the manager -------------------------------------------------------------------------------------------


async def test_informers_are_shared_by_kind_and_selectors(backend: Client, namespace: str) -> None:
    manager = Manager(backend, namespace=namespace)
    first = await manager.informer("v1", "ConfigMap")
    assert await manager.informer("v1", "ConfigMap") is first
    selected = await manager.informer("v1", "ConfigMap", label_selector="app=web")
    assert selected is not first
    assert first.namespace == namespace  # namespaced kinds live in the manager's namespace
    nodes = await manager.informer("v1", "Namespace")
    assert nodes.namespace is None  # cluster-scoped kinds do not


async def test_a_read_starts_the_informers_it_needs(backend: Client, namespace: str) -> None:
    await backend.create(config_map("found", namespace))
    async with Manager(backend, namespace=namespace) as manager:
        assert manager.informers == []
        found = await manager.get("v1", "ConfigMap", namespace, "found")
        assert found is not None and found["metadata"]["name"] == "found"
        assert [i.kind for i in manager.informers] == ["ConfigMap"]
        assert await manager.get("v1", "ConfigMap", namespace, "missing") is None


async def test_workers_reconcile_each_key_once_at_a_time_and_requeue_after(backend: Client, namespace: str) -> None:
    seen: list[str] = []
    running: set[str] = set()
    overlaps = 0

    async def reconcile(key: str) -> float | None:
        nonlocal overlaps
        if key in running:
            overlaps += 1
        running.add(key)
        await asyncio.sleep(0.01)
        running.discard(key)
        seen.append(key)
        return 0.02 if seen.count(key) == 1 and key.endswith("/a") else None

    manager = Manager(backend, namespace=namespace)
    controller = Controller("test", reconcile, workers=4)
    maps = await manager.informer("v1", "ConfigMap")
    controller.watch(maps)
    manager.add(controller)
    async with manager:
        for name in ("a", "b"):
            await backend.create(config_map(name, namespace))
        for _ in range(5):
            controller.enqueue(f"{namespace}/b")

        async def done() -> bool:
            return seen.count(f"{namespace}/a") == 2 and f"{namespace}/b" in seen

        await eventually(done, what="a to be reconciled again after its requeue")
    assert overlaps == 0
    assert controller.stats.requeue_after == 1 and controller.stats.error == 0


async def test_stop_lets_the_reconciles_in_flight_finish(backend: Client, namespace: str) -> None:
    started, finished = asyncio.Event(), []

    async def reconcile(key: str) -> float | None:
        started.set()
        await asyncio.sleep(0.1)
        finished.append(key)
        return None

    manager = Manager(backend, namespace=namespace)
    controller = manager.add(Controller("slow", reconcile, workers=1))
    await manager.start()
    controller.enqueue("ns/one")
    await started.wait()
    await manager.stop()
    assert finished == ["ns/one"]
    controller.enqueue("ns/two")  # a stopped controller takes no new work
    await asyncio.sleep(0.05)
    assert finished == ["ns/one"]


async def test_a_failing_reconcile_is_retried_with_backoff_and_logged_in_one_line(
    backend: Client, namespace: str, caplog: pytest.LogCaptureFixture
) -> None:
    attempts = 0

    async def reconcile(key: str) -> float | None:
        nonlocal attempts
        attempts += 1
        if attempts < 3:
            raise TopologyError("the ClusterClass is missing")
        return None

    manager = Manager(backend, namespace=namespace)
    controller = manager.add(Controller("flaky", reconcile, workers=1))
    async with manager:
        controller.enqueue("ns/c1")

        async def succeeded() -> bool:
            return controller.stats.success == 1

        await eventually(succeeded, what="the third attempt to succeed")
    assert controller.stats.error == 2 and controller.stats.last_error == "the ClusterClass is missing"
    failures = [r for r in caplog.records if "reconcile failed" in r.getMessage()]
    assert failures and all(r.exc_info is None for r in failures)  # a user error is one line, no traceback


# --- predicates ----------------------------------------------------------------------------------------------


def test_watch_filter_paused_and_topology_predicates() -> None:
    labelled = {"metadata": {"labels": {p.WATCH_FILTER_LABEL: "team-a", "topology.cluster.x-k8s.io/owned": ""}}}
    plain: Obj = {"metadata": {}}
    assert p.has_filter_label("team-a").create(labelled) and not p.has_filter_label("team-a").create(plain)
    assert p.has_filter_label(None).create(plain)
    assert p.TOPOLOGY_OWNED.create(labelled) and not p.TOPOLOGY_OWNED.create(plain)
    paused = {"kind": "Cluster", "metadata": {}, "spec": {"paused": True}}
    annotated = {"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}}
    assert not p.NOT_PAUSED.create(paused) and not p.NOT_PAUSED.create(annotated) and p.NOT_PAUSED.create(plain)
    old = {"metadata": {"resourceVersion": "1", "managedFields": [{"manager": "a"}]}, "spec": {"x": 1}}
    only_noise = {"metadata": {"resourceVersion": "2", "managedFields": [{"manager": "b"}]}, "spec": {"x": 1}}
    real = {"metadata": {"resourceVersion": "3"}, "spec": {"x": 2}}
    assert not p.RELEVANT_CHANGE.update(old, only_noise)
    assert p.RELEVANT_CHANGE.update(old, real) and p.RELEVANT_CHANGE.update(old, old)  # a resync passes


# --- logs ------------------------------------------------------------------------------------------------------


def test_log_lines_carry_the_controller_the_key_and_a_reconcile_id() -> None:
    record = logging.LogRecord("clusterclass.x", logging.INFO, __file__, 1, "created %s", ("MachinePool/p",), None)
    with reconcile_scope("topology/cluster", "ns/c1") as scope:
        ReconcileFields().filter(record)
    assert (record.controller, record.key, record.reconcile_id) == ("topology/cluster", "ns/c1", scope.reconcile_id)  # type: ignore[attr-defined]
    line = KeyValueFormatter().format(record)
    assert line.endswith(
        f"info  created MachinePool/p controller=topology/cluster key=ns/c1 reconcile_id={scope.reconcile_id}"
    )
    document = json.loads(JsonFormatter().format(record))
    assert document["msg"] == "created MachinePool/p" and document["key"] == "ns/c1" and document["level"] == "info"


@pytest.mark.parametrize("backend", ["memory"], indirect=True)  # edits a CRD: a store of its own
async def test_a_provider_kind_is_written_in_the_version_its_crds_contract_labels_name(backend: Client) -> None:
    """A DockerMachinePool CRD serving v1beta1 and v1beta2 but labelled for the v1beta1 contract only (a provider of
    upstream v1.6's generation) is written in v1beta1, as upstream v1.6 wrote it; with the v1beta2 contract label, in
    v1beta2. Cluster API's own kinds go by what is served."""
    crds = "apiextensions.k8s.io/v1"
    name = "dockermachinepools.infrastructure.cluster.x-k8s.io"
    infrastructure = "infrastructure.cluster.x-k8s.io/v1beta1"
    crd = await backend.get(crds, "CustomResourceDefinition", name)
    assert crd["metadata"]["labels"].get("cluster.x-k8s.io/v1beta2") == "v1beta2"
    async with Manager(backend) as manager:
        await manager.informer(crds, "CustomResourceDefinition")
        assert await manager.preferred_version(infrastructure, "DockerMachinePool") == (
            "infrastructure.cluster.x-k8s.io/v1beta2"
        )
    labels = {k: v for k, v in crd["metadata"]["labels"].items() if k != "cluster.x-k8s.io/v1beta2"}
    await backend.update({**crd, "metadata": {**crd["metadata"], "labels": labels}})
    async with Manager(backend) as manager:
        await manager.informer(crds, "CustomResourceDefinition")
        assert await manager.preferred_version(infrastructure, "DockerMachinePool") == infrastructure
        assert await manager.preferred_version(infrastructure, "DockerCluster") == (
            "infrastructure.cluster.x-k8s.io/v1beta2"
        )
        assert await manager.preferred_version("cluster.x-k8s.io/v1beta1", "MachinePool") == "cluster.x-k8s.io/v1beta2"
