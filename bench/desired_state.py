"""Benchmark: desired-state computation for one Cluster with N MachinePools and N MachineDeployments.

Not a test: it measures and prints medians. Two scenarios per (N, P), P being the number of inline
patches in the ClusterClass (each patch targets every worker of one kind, rendering a Go template
over builtin and user variables; every fifth one has an ``enabledIf``):

- ``new``: a Cluster whose topology exists only in its spec (first reconcile: everything is created);
- ``existing``: the same Cluster after the objects of the first computation exist (steady state,
  names reused, refs aligned, and the changes computed with the offline differ).

Each sample runs the full pure pipeline the controller runs per reconcile: read the blueprint and the
current state through the in-memory reader, compute the desired state, and (``existing``) compute
the changes. Usage::

    .venv/bin/python bench/desired_state.py [--sizes 1,10,50] [--patches 0,20,50] [--repeat 30] [--json]
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
from clusterclass.topology.patches.engine import ClusterClassPatchEngine
from clusterclass.topology.pipeline import compute_topology
from clusterclass.topology.reader import NoNodes, ObjectIndex

EXAMPLE = Path(__file__).resolve().parents[1] / "examples" / "machinepools" / "clusterclass.yaml"


_TARGETS = [
    (
        "infrastructure.cluster.x-k8s.io/v1beta1",
        "DockerMachinePoolTemplate",
        "machinePoolClass",
        "/spec/template/spec/template/preLoadImages",
        '["{{ .registry }}/pool-{{ .builtin.machinePool.topologyName }}-%d"]',
    ),
    (
        "bootstrap.cluster.x-k8s.io/v1beta1",
        "KubeadmConfigTemplate",
        "machinePoolClass",
        "/spec/template/spec/joinConfiguration/nodeRegistration/kubeletExtraArgs/node-labels",
        'pool={{ .builtin.machinePool.class }},v={{ .builtin.machinePool.version | replace "+" "_" }},n=%d',
    ),
    (
        "infrastructure.cluster.x-k8s.io/v1beta1",
        "DockerMachineTemplate",
        "machineDeploymentClass",
        "/spec/template/spec/customImage",
        "{{ .registry }}/node:{{ .builtin.machineDeployment.version }}-%d",
    ),
]


def with_patches(cluster_class: dict[str, Any], count: int) -> dict[str, Any]:
    """``cluster_class`` with ``count`` inline patches and the variable they use."""
    patched = copy.deepcopy(cluster_class)
    spec = patched["spec"]
    spec["variables"] = [
        {"name": "registry", "required": False, "schema": {"openAPIV3Schema": {"type": "string", "default": "r.io"}}}
    ]
    spec["patches"] = []
    for i in range(count):
        api_version, kind, match, path, template = _TARGETS[i % len(_TARGETS)]
        patch: dict[str, Any] = {
            "name": f"patch-{i}",
            "definitions": [
                {
                    "selector": {"apiVersion": api_version, "kind": kind, "matchResources": {match: {"names": ["*"]}}},
                    "jsonPatches": [{"op": "add", "path": path, "valueFrom": {"template": template % i}}],
                }
            ],
        }
        if i % 5 == 4:
            patch["enabledIf"] = '{{ ne .registry "" }}'
        spec["patches"].append(patch)
    return patched


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


ENGINE = ClusterClassPatchEngine()


def existing_state(objects: list[dict[str, Any]], cluster: dict[str, Any]) -> list[dict[str, Any]]:
    """The objects after a first reconcile: created objects stored, the Cluster pointing at them."""
    index = ObjectIndex([*objects, cluster])
    computation = compute_topology(cluster, index, nodes=NoNodes(), rng=random.Random(1), patches=ENGINE)
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
        computation = compute_topology(cluster, index, nodes=NoNodes(), rng=random.Random(i), patches=ENGINE)
        if with_changes:
            compute_changes(computation, rng=random.Random(i))
        samples.append((time.perf_counter() - start) * 1000)
    return samples


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", default="1,10,50")
    parser.add_argument("--patches", default="0,20,50")
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)

    base = load([str(EXAMPLE)]).objects
    results = []
    for p in (int(x) for x in args.patches.split(",")):
        templates = [with_patches(o, p) if o.get("kind") == "ClusterClass" else o for o in base]
        for n in (int(x) for x in args.sizes.split(",")):
            cluster = cluster_with_workers(n)
            new_index = ObjectIndex([*templates, cluster])
            measure(new_index, cluster, 3, False)  # warm caches (compiled templates)
            new = measure(new_index, cluster, args.repeat, False)
            stored = existing_state(templates, cluster)
            current_cluster = next(o for o in stored if o.get("kind") == "Cluster")
            existing = measure(ObjectIndex(stored), current_cluster, args.repeat, True)
            results.append(
                {
                    "n": n,
                    "patches": p,
                    "new_median_ms": round(statistics.median(new), 2),
                    "existing_median_ms": round(statistics.median(existing), 2),
                    "per_worker_us": round(statistics.median(existing) / (2 * n) * 1000, 1),
                }
            )
    if args.json:
        print(json.dumps(results, indent=2))
    else:
        print(f"{'N':>4} {'P':>4} {'new (ms)':>10} {'existing (ms)':>14} {'per worker (µs)':>16}")
        for r in results:
            print(
                f"{r['n']:>4} {r['patches']:>4} {r['new_median_ms']:>10} {r['existing_median_ms']:>14}"
                f" {r['per_worker_us']:>16}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
