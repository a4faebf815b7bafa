"""What bench/upstream.py reads from kube-apiserver to explain a reconcile's time, on a real kube-apiserver.

The bench itself takes upstream's managers and many minutes; its readings of kube-apiserver do not, and a
reading that silently returns nothing (a renamed metric, a timestamp format) would make its table lie. Here, on
the Go-built kube-apiserver with an audit log and the Cluster API CRDs (v1beta2 stored, the harness's conversion
webhook): every request's latency comes out of the audit log, and a v1beta1 read of a v1beta2 object shows up as a
conversion webhook call to v1beta1.
"""

from __future__ import annotations

import asyncio
import importlib.util
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from support.audit import AuditLog, api_version_of, by_agent
from support.real_apiserver import RealApiServer

BENCH = Path(__file__).resolve().parents[2] / "bench" / "upstream.py"

pytestmark = pytest.mark.real_apiserver


@pytest.fixture(scope="module")
def bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_upstream", BENCH)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_upstream"] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="module")
def audited_apiserver(real_apiserver: RealApiServer) -> Iterator[RealApiServer]:
    """A kube-apiserver of its own, with the audit log (the shared one, without it, gives its binaries)."""
    server = RealApiServer(real_apiserver.binaries, audit=True).start()
    try:
        yield server
    finally:
        server.stop()


def _cluster(namespace: str) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": "latency", "namespace": namespace},
        "spec": {"paused": True},
    }


async def test_latency_and_conversions_are_read_from_the_server(
    bench: ModuleType, audited_apiserver: RealApiServer
) -> None:
    namespace = audited_apiserver.create_namespace("bench-")
    before = bench.conversions(bench.apiserver_metrics(audited_apiserver.kubeconfig))
    audit = AuditLog(audited_apiserver.audit_log)
    audit.mark()
    client = audited_apiserver.client()
    try:
        await client.create(_cluster(namespace))
        for _ in range(3):
            await client.get("cluster.x-k8s.io/v1beta1", "Cluster", "latency", namespace=namespace)
    finally:
        await client.close()

    after = bench.conversions(bench.apiserver_metrics(audited_apiserver.kubeconfig))
    assert after.get("calls to v1beta1", 0) - before.get("calls to v1beta1", 0) >= 3
    assert after.get("seconds to v1beta1", 0) > before.get("seconds to v1beta1", 0)

    mine = [r for r in audit.requests() if r.resource == "clusters" and r.namespace == namespace]
    assert {r.verb for r in mine} == {"create", "get"}
    assert all(0 < r.seconds < 30 for r in mine), [r.seconds for r in mine]
    latency = bench.request_latency_ms(mine)
    assert latency["p50"] is not None and 0 < latency["p50"] <= latency["p99"]
    assert by_agent(mine, mine[0].agent) == mine  # one client, one agent


async def test_conversions_follow_the_writes_not_the_readers(
    bench: ModuleType, audited_apiserver: RealApiServer
) -> None:
    """What the bench's conversion reading counts: kube-apiserver converts every write of a v1beta2 Cluster into
    v1beta1 for its v1beta1 watch cache, with no v1beta1 client at all (kubernetes/kubernetes#129979); a v1beta1
    watch and list are served from that cache and add none. So a topology controller caching v1beta1 costs
    kube-apiserver no conversion; its writes do, as everyone's do."""
    namespace = audited_apiserver.create_namespace("bench-")
    audit = AuditLog(audited_apiserver.audit_log)
    audit.mark()
    client = audited_apiserver.client()

    def to_v1beta1() -> float:
        return bench.conversions(bench.apiserver_metrics(audited_apiserver.kubeconfig)).get("calls to v1beta1", 0.0)

    async def label_patches(prefix: str, count: int) -> None:
        for i in range(count):
            patch = {"metadata": {"labels": {"n": f"{prefix}{i}"}}}
            await client.patch("cluster.x-k8s.io/v1beta2", "Cluster", "latency", patch, namespace=namespace)

    seen: list[object] = []

    async def watch_in_v1beta1() -> None:
        async for event in client.watch("cluster.x-k8s.io/v1beta1", "Cluster", namespace=namespace):
            seen.append(event)

    try:
        start = to_v1beta1()
        await client.create(_cluster(namespace))
        await label_patches("a", 10)
        for generation in range(1, 11):
            status = {"status": {"observedGeneration": generation}}
            await client.patch(
                "cluster.x-k8s.io/v1beta2", "Cluster", "latency", status, namespace=namespace, status=True
            )
        unread = to_v1beta1() - start

        watching = asyncio.ensure_future(watch_in_v1beta1())
        await asyncio.sleep(1)
        before = to_v1beta1()
        await label_patches("b", 10)
        await asyncio.sleep(1)
        watched = to_v1beta1() - before
        watching.cancel()

        before = to_v1beta1()
        listed = await client.list("cluster.x-k8s.io/v1beta1", "Cluster", namespace=namespace)
        listing = to_v1beta1() - before
    finally:
        await client.close()

    assert 19 <= unread <= 21, unread  # the create and 20 patches in v1beta2, nobody reading v1beta1
    assert 9 <= watched <= 10, watched  # 10 more patches: the v1beta1 watcher added nothing
    assert len(seen) >= 10 and len(listed.items) == 1
    assert listing == 0
    writes = [r for r in audit.requests() if r.namespace == namespace and bench.is_cluster_api_write(r)]
    assert len(writes) == 31


async def test_the_idle_window_waits_for_the_agents_to_go_quiet(
    bench: ModuleType, audited_apiserver: RealApiServer
) -> None:
    """``--quiet``: the requests an agent makes while the bench waits are counted before the window, and the wait
    ends once a quiet period has passed after the last of them."""
    namespace = audited_apiserver.create_namespace("bench-")
    client = audited_apiserver.client()
    probe = AuditLog(audited_apiserver.audit_log)
    probe.mark()
    try:
        await client.create(_cluster(namespace))
        await asyncio.sleep(1)
        agent = next(r.agent for r in probe.take() if r.namespace == namespace)

        async def busy_for_a_while() -> None:
            for i in range(4):
                patch = {"metadata": {"labels": {"n": str(i)}}}
                await client.patch("cluster.x-k8s.io/v1beta2", "Cluster", "latency", patch, namespace=namespace)
                await asyncio.sleep(0.5)

        audit = AuditLog(audited_apiserver.audit_log)
        writing = asyncio.ensure_future(busy_for_a_while())
        after, seen = await bench.wait_for_quiet(audit, (agent,), 2.0, 60.0)
        await writing
    finally:
        await client.close()
    assert after is not None and after >= 1.0  # the last patch came 1.5 s after the first
    assert [r.verb for r in seen if r.namespace == namespace] == ["patch"] * 4
    assert await bench.wait_for_quiet(AuditLog(audited_apiserver.audit_log), (agent,), 0.5, 0.2) == (None, [])


def test_percentile_is_nearest_rank(bench: ModuleType) -> None:
    assert bench.percentile([], 0.5) is None
    assert bench.percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert bench.percentile([float(i) for i in range(1, 101)], 0.99) == 99.0


def test_api_version_of_a_request_uri() -> None:
    assert api_version_of("/apis/cluster.x-k8s.io/v1beta1/namespaces/a/clusters?watch=true") == (
        "cluster.x-k8s.io/v1beta1"
    )
    assert api_version_of("/api/v1/namespaces/a/secrets/b") == "v1"
    assert api_version_of("/metrics") == "other"
