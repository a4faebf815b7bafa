#!/usr/bin/env python3
"""Capture what upstream's own ``clusterctl describe cluster`` (v1.14, built from its Go module) prints for a live
Cluster, with the objects it read, for ``tests/describe/test_describe_v1beta2.py`` to hold ours to.

Run it against a management cluster with a Cluster in an interesting state (``clusterclass up``, then an upgrade
with a paused MachineDeployment, say):

    go build -o /tmp/clusterctl sigs.k8s.io/cluster-api/cmd/clusterctl@v1.14.0   # in a module requiring it
    .venv/bin/python scripts/describe-golden/capture.py --clusterctl /tmp/clusterctl \\
        --kubeconfig .clusterclass/kubeconfig --cluster default/demo tests/describe/data/clusterctl-v1.14.json

The objects are read with ``clusterclass.describe.collect`` (every Machine's references included); each case's
output is taken with "now" recorded on both sides of the clusterctl run, and retaken when a second ticked in
between, so that SINCE reads the same to clusterctl and to the test.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import tempfile
from datetime import UTC, datetime
from pathlib import Path

from clusterclass.describe.collect import collect
from clusterclass.describe.tree import TreeOptions
from clusterclass.kube.gotext import rfc3339
from clusterclass.kube.http import HttpClient

#: the flag sets captured, as clusterctl takes them
CASES = [
    [],
    ["--show-conditions=all"],
    ["--show-conditions=all+", "--grouping=false"],
    ["--show-machinesets", "--echo"],
    ["--show-conditions=KubeadmControlPlane,Machine+", "--grouping=false", "--show-templates"],
]


async def read_objects(kubeconfig: str, namespace: str, name: str) -> list[dict[str, object]]:
    client = HttpClient.from_environment(kubeconfig)
    try:
        found = await collect(
            client, namespace=namespace, name=name, options=TreeOptions(grouping=False, show_templates=True)
        )
    finally:
        await client.close()
    objects = [found.cluster, *found.machines, *found.machine_sets, *found.machine_deployments,
               *found.machine_pools, *found.referenced.values()]  # fmt: skip
    for obj in objects:
        obj["metadata"].pop("managedFields", None)  # what describe never reads, kept out of the fixture
        (obj["metadata"].get("annotations") or {}).pop("cluster.x-k8s.io/conversion-data", None)
    return objects


def run_clusterctl(binary: str, kubeconfig: str, namespace: str, name: str, flags: list[str]) -> tuple[str, str]:
    with tempfile.TemporaryDirectory() as home:
        env = {**os.environ, "HOME": home, "NO_COLOR": "1"}
        for _ in range(10):
            before = datetime.now(UTC).replace(microsecond=0)
            done = subprocess.run(
                [binary, "describe", "cluster", name, "-n", namespace, "--kubeconfig", kubeconfig, *flags],
                capture_output=True, text=True, env=env, check=True, timeout=60,
            )  # fmt: skip
            after = datetime.now(UTC).replace(microsecond=0)
            if before == after:
                return rfc3339(before), done.stdout
        raise SystemExit("every run crossed a second boundary; try again")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clusterctl", required=True)
    parser.add_argument("--kubeconfig", required=True)
    parser.add_argument("--cluster", required=True, help="NAMESPACE/NAME")
    parser.add_argument("out", type=Path)
    args = parser.parse_args()
    namespace, _, name = args.cluster.partition("/")
    objects = asyncio.run(read_objects(args.kubeconfig, namespace, name))
    cases = []
    for flags in CASES:
        now, output = run_clusterctl(args.clusterctl, args.kubeconfig, namespace, name, flags)
        cases.append({"flags": flags, "now": now, "output": output})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"objects": objects, "cases": cases}, indent=1, sort_keys=True) + "\n")
    print(f"wrote {args.out}: {len(objects)} objects, {len(cases)} cases")


if __name__ == "__main__":
    main()
