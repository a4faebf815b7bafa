"""Benchmark: desired-state computation for one Cluster with N MachinePools and N MachineDeployments.

Not a test: it measures and prints medians. Two scenarios per N:

- ``new``: a Cluster whose topology exists only in its spec (first reconcile: everything is created);
- ``existing``: the same Cluster after the objects of the first computation exist (steady state,
  names reused, refs aligned, and the changes computed with the offline differ).

Each sample runs the full pure pipeline the controller runs per reconcile: read the blueprint and the
current state through the in-memory reader, compute the desired state, and (``existing``) compute
the changes. Usage::

    .venv/bin/python bench/desired_state.py [--sizes 1,10,50] [--repeat 30] [--json]
"""

from __future__ import annotations

import argparse
import copy
import json
import random
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from clusterclass.plan.loader import load
from clusterclass.topology.changes import compute_changes
from clusterclass.topology.pipeline import compute_topology
from clusterclass.topology.reader import NoNodes, ObjectIndex

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "machinepools" / "clusterclass.yaml"


def cluster_with_workers(n: int) -> dict[str, Any]:
    return {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "bench", "namespace": "default", "uid": "00000000-0000-4000-8000-000000000001"},
        "spec": {
            "topology": {
                "class": "pools",
                "version": "v1.28.0",
                "controlPlane": {"replicas": 3},
                "workers": {
                    "machineDeployments": [
                        {"class": "general", "name": f"md-{i}", "replicas": 2, "metadata": {"labels": {"i": str(i)}}}
                        for i in range(n)
                    ],
                    "machinePools": [
                        {"class": "pool", "name": f"mp-{i}", "replicas": 3, "metadata": {"labels": {"i": str(i)}}}
                        for i in range(n)
                    ],
                },
            }
        },
    }


def existing_state(objects: list[dict[str, Any]], cluster: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects after a first reconcile: created objects stored, the Cluster pointing at them."""
    index = ObjectIndex([*objects, cluster])
    computation = compute_topology(cluster, index, nodes=NoNodes(), rng=random.Random(1))
    stored = list(objects)
    for change in compute_changes(computation, rng=random.Random(2)):
        obj = copy.deepcopy(change.object)
        if obj.get("kind") == "KubeadmControlPlane":
            obj["status"] = {"version": "v1.28.0", "replicas": 3, "updatedReplicas": 3, "readyReplicas": 3}
        stored.append(obj)
    return stored


def measure(index: ObjectIndex, cluster: dict[str, Any], repeat: int, with_changes: bool) -> list[float]:
    samples = []
    for i in range(repeat):
        start = time.perf_counter()
        computation = compute_topology(cluster, index, nodes=NoNodes(), rng=random.Random(i))
        if with_changes:
            compute_changes(computation, rng=random.Random(i))
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,10,50")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    templates = load([str(EXAMPLE)]).objects
    results = []
    for n in (int(s) for s in args.sizes.split(",")):
        cluster = cluster_with_workers(n)
        new_index = ObjectIndex([*templates, cluster])
        measure(new_index, cluster, 3, False)  # warm caches (compiled naming templates)
        new = measure(new_index, cluster, args.repeat, False)
        stored = existing_state(templates, cluster)
        current_cluster = next(o for o in stored if o.get("kind") == "Cluster")
        existing = measure(ObjectIndex(stored), current_cluster, args.repeat, True)
        results.append(
            {
                "n": n,
                "new_median_ms": round(statistics.median(new), 2),
                "existing_median_ms": round(statistics.median(existing), 2),
                "per_worker_us": round(statistics.median(existing) / (2 * n) * 1000, 1),
            }
        )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"{'N':>4} {'new (ms)':>10} {'existing (ms)':>14} {'per worker (µs)':>16}")
        for r in results:
            print(f"{r['n']:>4} {r['new_median_ms']:>10} {r['existing_median_ms']:>14} {r['per_worker_us']:>16}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
