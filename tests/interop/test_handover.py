"""Moving a management cluster from upstream's topology controller to clusterclass, and back, changes nothing.

Upstream's managers run with upstream's own topology controller (``ClusterTopology=true``) and bring two Clusters
of upstream's in-memory e2e ClusterClass (with a MachinePool, on the simulated DockerMachinePool) to Ready. Then the
core manager is restarted without it, with clusterclass's webhooks in place of its Cluster and ClusterClass ones,
and ``clusterclass run`` takes over: once it has reconciled every Cluster, no object the topology owns has a new
generation, label, annotation, ownerReference or spec, no Machine was replaced, and the kube-apiserver's audit log
holds no write by clusterclass at all. Then back: clusterclass stops, upstream's topology controller returns,
reconciles every Cluster, and again nothing changes.
"""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from conftest import release_or_skip
from interop_support import UPSTREAM, Stack
from support.audit import AuditLog, by_agent
from support.real_apiserver import Binaries
from support.upstream_capi import OurTopologyController, metric_samples

from clusterclass.api.objects import Obj, labels_of, name_of
from clusterclass.kube.client import Client
from clusterclass.kube.http import HttpClient

RELEASES = ("v1.6.8", "v1.14.0")
CLUSTERS = ("handover-a", "handover-b")
#: how long a topology controller is watched after it has reconciled everything, for late writes
QUIET = 10.0


def reconciled(metrics: str) -> float:
    """How many topology reconciles a manager has finished (controller-runtime's counter, both implementations)."""
    samples = metric_samples(metrics, "controller_runtime_reconcile_total", controller="topology/cluster")
    return sum(value for _, value in samples)


async def versions(stack: Stack, client: Client, namespace: str) -> dict[str, str]:
    """What the topology owns of every object it owns — generation, labels, annotations, ownerReferences and spec —
    and the names of the Machines (a rollout renames them). Not the resourceVersion: the status of a
    MachineDeployment is the core manager's, and upstream's own core manager, restarted for the switch, rewrites it
    as it reconnects to the workload clusters; what clusterclass writes is checked in the audit log instead."""
    found: dict[str, str] = {}
    for api_version, kind in stack.kinds.topology_kinds():
        for obj in (await client.list(api_version, kind, namespace=namespace)).items:
            if kind != "Cluster" and "topology.cluster.x-k8s.io/owned" in labels_of(obj):
                metadata = obj["metadata"]
                owned = {
                    "generation": metadata.get("generation"),
                    "labels": metadata.get("labels"),
                    "annotations": metadata.get("annotations"),
                    "ownerReferences": metadata.get("ownerReferences"),
                    "spec": obj.get("spec"),
                }
                found[f"{kind} {name_of(obj)}"] = json.dumps(owned, sort_keys=True)
    for machine in (await client.list(stack.kinds.core, "Machine", namespace=namespace)).items:
        found[f"Machine {name_of(machine)}"] = "exists"
    return found


async def clusters_spec(stack: Stack, client: Client, namespace: str) -> dict[str, Obj]:
    """The Clusters' metadata and spec (their status is the core Cluster controller's to refresh)."""
    clusters = (await client.list(stack.kinds.core, "Cluster", namespace=namespace)).items
    return {
        name_of(c): {"labels": labels_of(c), "annotations": c["metadata"].get("annotations"), "spec": c["spec"]}
        for c in clusters
    }


async def wait_for_reconciles(stack: Stack, metrics: Callable[[], str], count: int, what: str) -> None:
    """Until the manager whose /metrics ``metrics`` reads has finished ``count`` topology reconciles, then
    :data:`QUIET` seconds more."""

    async def done() -> bool:
        return reconciled(metrics()) >= count

    await stack.wait(done, what, guard=120)
    await asyncio.sleep(QUIET)


@pytest.mark.parametrize("version", RELEASES)
async def test_upstream_to_clusterclass_and_back_writes_nothing(
    version: str, controller_manager_binaries: Binaries, tmp_path: Path
) -> None:
    stack = Stack(release_or_skip(version), UPSTREAM, tmp_path / "stack", controller_manager_binaries, audit=True)
    stack.start()
    await stack.start_pools()
    client = HttpClient.from_kubeconfig(stack.api.kubeconfig, user_agent="interop-tests")
    audit = AuditLog(stack.api.audit_log)
    try:
        namespace = stack.api.create_namespace("handover-")
        await stack.create(client, stack.data.cluster_class(namespace))
        for name in CLUSTERS:
            await stack.create(client, [stack.data.cluster(name, namespace, control_plane=1, workers=2)])
        for name in CLUSTERS:
            await stack.wait_ready(client, namespace, name)
        before, clusters_before = (
            await versions(stack, client, namespace),
            await clusters_spec(stack, client, namespace),
        )

        # upstream's topology controller out, clusterclass in
        started = time.monotonic()
        stack.capi.restart_core(upstream_topology=False)
        audit.mark()
        stack.ours = OurTopologyController(stack.capi).start()
        await wait_for_reconciles(stack, stack.ours.metrics, len(CLUSTERS), "clusterclass to reconcile every Cluster")
        ours_wrote = [f"{r.verb} {r.what} {r.name}" for r in by_agent(audit.requests(), "clusterclass") if r.is_write]
        assert ours_wrote == []
        assert await versions(stack, client, namespace) == before
        assert await clusters_spec(stack, client, namespace) == clusters_before
        for name in CLUSTERS:
            await stack.wait_ready(client, namespace, name)  # still Ready, TopologyReconciled as upstream left it

        # and back
        stack.ours.stop()
        stack.ours = None
        audit.mark()
        core = stack.capi.restart_core(upstream_topology=True)
        await wait_for_reconciles(stack, core.metrics, len(CLUSTERS), "upstream's topology controller to reconcile")
        assert await versions(stack, client, namespace) == before
        assert await clusters_spec(stack, client, namespace) == clusters_before
        upstream_wrote = [
            r
            for r in by_agent(audit.requests(), "capi-controller-manager")
            if r.is_write and "fieldManager=capi-topology" in r.uri
        ]
        assert upstream_wrote == []
        assert time.monotonic() - started < 600
    finally:
        await client.close()
        await stack.stop_pools()
        stack.stop()
