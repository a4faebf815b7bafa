"""Benchmark: the topology and ClusterClass controllers on the embedded store (memory backend).

Not a test: it measures and prints. Every Cluster has the upstream shape (a control plane with its machine
template and MachineHealthCheck, one MachineDeployment, two MachinePools) from the bundled ClusterClass
``pools`` (``examples/machinepools``). The harness plays the other controllers: once a Cluster's control
plane exists it owns it and reports it ready, as the core Cluster controller and KubeadmControlPlane would.

Three measurements:

- ``requests``: requests by verb the controllers make to create one Cluster until it is converged (its
  ``TopologyReconciled`` True and every controller idle), then per further reconcile of the converged Cluster
  (the goal is none);
- ``workers``: K Clusters created at once, for N topology workers: the wall time until all are converged,
  and the mean time of one topology reconcile;
- ``scale``: the time for 100 Clusters (``--clusters``) to reach ``TopologyReconciled=True``.

Usage::

    .venv/bin/python bench/controllers.py [--clusters 100] [--workers 1,10,50] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
import logging
import random
import time
from pathlib import Path
from typing import Any

from clusterclass.api.objects import Obj, dig
from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.controllers import ControllerOptions, Controllers
from clusterclass.controllers.workload import StaticWorkloadClusters
from clusterclass.kube.counting import CountingClient
from clusterclass.plan.loader import load

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "machinepools"
CAPI = "cluster.x-k8s.io/v1beta1"
NAMESPACE = "default"


def class_objects() -> list[Obj]:
    return load([str(EXAMPLES / "clusterclass.yaml")]).objects


def cluster(name: str) -> Obj:
    obj = copy.deepcopy(load([str(EXAMPLES / "cluster.yaml")]).objects[0])
    obj["metadata"]["name"] = name
    return obj


def reconciled(obj: Obj) -> bool:
    return any(
        c.get("type") == "TopologyReconciled" and c.get("status") == "True"
        for c in dig(obj, "status", "conditions") or []
    )


async def start(workers: int) -> tuple[MemoryClient, CountingClient, Controllers]:
    store_client = MemoryClient(MemoryStore())
    counting = CountingClient(store_client)
    controllers = Controllers(
        counting,
        ControllerOptions(topology_workers=workers, clusterclass_workers=2, sync_period=None, rng=random.Random(1)),
        workload=StaticWorkloadClusters(),
    )
    await controllers.start()
    for obj in class_objects():
        await store_client.apply(obj, field_manager="bench", force=True)
    return store_client, counting, controllers


async def settle(client: MemoryClient, names: list[str], adopted: set[str]) -> int:
    """Play the core Cluster controller and KubeadmControlPlane; how many Clusters are reconciled."""
    done = 0
    for name in names:
        obj = await client.get(CAPI, "Cluster", name, namespace=NAMESPACE)
        if reconciled(obj):
            done += 1
        ref = dig(obj, "spec", "controlPlaneRef")
        if ref and name not in adopted:
            adopted.add(name)
            cp = await client.get(ref["apiVersion"], ref["kind"], ref["name"], namespace=NAMESPACE)
            owner = {
                "apiVersion": CAPI,
                "kind": "Cluster",
                "name": name,
                "uid": obj["metadata"]["uid"],
                "controller": True,
            }
            await client.patch(
                ref["apiVersion"],
                ref["kind"],
                ref["name"],
                {"metadata": {"ownerReferences": [*cp["metadata"].get("ownerReferences", []), owner]}},
                namespace=NAMESPACE,
            )
            replicas = dig(cp, "spec", "replicas") or 1
            status = {
                "version": cp["spec"]["version"],
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": replicas,
                "unavailableReplicas": 0,
            }
            await client.patch(
                ref["apiVersion"], ref["kind"], ref["name"], {"status": status}, namespace=NAMESPACE, status=True
            )
    return done


async def idle(controllers: Controllers) -> None:
    quiet = 0
    while quiet < 5:
        busy = any(len(c.queue) or c.queue.processing for c in controllers.manager.controllers)
        quiet = 0 if busy else quiet + 1
        await asyncio.sleep(0.01)
    for recorder in controllers.manager.recorders:
        await recorder.flush()


async def converge(client: MemoryClient, controllers: Controllers, names: list[str]) -> float:
    """Create the Clusters; seconds until every one is TopologyReconciled and the controllers are idle."""
    started = time.perf_counter()
    for name in names:
        await client.apply(cluster(name), field_manager="bench", force=True)
    adopted: set[str] = set()
    while await settle(client, names, adopted) < len(names):
        await asyncio.sleep(0.005)
    await idle(controllers)
    return time.perf_counter() - started


async def requests() -> dict[str, Any]:
    client, counting, controllers = await start(workers=1)
    try:
        await idle(controllers)
        counting.reset()
        await converge(client, controllers, ["one"])
        create = dict(sorted(counting.counts.items()))
        counting.reset()
        controller = controllers.topology.controller
        for _ in range(100):
            before = controller.stats.total
            controller.enqueue(f"{NAMESPACE}/one")
            while controller.stats.total == before or controller.queue.processing:
                await asyncio.sleep(0)
        return {"create": create, "per_converged_reconcile": {k: v / 100 for k, v in counting.counts.items()}}
    finally:
        await controllers.stop()


async def workers(count: int, clusters: int) -> dict[str, Any]:
    client, _, controllers = await start(workers=count)
    try:
        seconds = await converge(client, controllers, [f"c{i}" for i in range(clusters)])
        stats = controllers.topology.controller.stats
        return {
            "workers": count,
            "clusters": clusters,
            "seconds": seconds,
            "reconciles": stats.total,
            "mean_reconcile_ms": 1000 * stats.seconds / max(stats.total, 1),
        }
    finally:
        await controllers.stop()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, default=100)
    parser.add_argument("--workers", default="1,10,50")
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    logging.basicConfig(level=logging.ERROR)
    results: dict[str, Any] = {"requests": asyncio.run(requests())}
    results["workers"] = [asyncio.run(workers(int(n), args.clusters)) for n in args.workers.split(",")]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print("requests to create one Cluster until converged:", results["requests"]["create"])
    print("requests per reconcile of the converged Cluster:", results["requests"]["per_converged_reconcile"] or "none")
    print("\n| topology workers | Clusters | until all converged (s) | reconciles | mean reconcile (ms) |")
    print("| ---: | ---: | ---: | ---: | ---: |")
    for row in results["workers"]:
        seconds, mean = f"{row['seconds']:.2f}", f"{row['mean_reconcile_ms']:.2f}"
        cells = (row["workers"], row["clusters"], seconds, row["reconciles"], mean)
        print("| " + " | ".join(str(cell) for cell in cells) + " |")


if __name__ == "__main__":
    main()
