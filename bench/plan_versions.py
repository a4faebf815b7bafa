"""Benchmark: what v1beta2 costs ``plan`` — the same topology planned from v1beta1 and from v1beta2 inputs.

Not a test: it measures and prints medians. Each sample is one in-process plan (``make_plan``: admission, the
pipeline, the rendering of the objects to show) of:

- ``v1beta1``: the bundled example in v1beta1 (``clusterclass/examples/quick-start-v1beta1.yaml``): its objects are
  converted to the pipeline's shape (v1.14's v1beta1) only where they need nothing;
- ``v1beta2``: the same objects in v1beta2 (``clusterclass/examples/quick-start.yaml``): every input is converted in,
  every planned object converted out;
- ``upstream v1.14``: upstream's own v1beta2 quick-start ClusterClass and MachinePool Cluster
  (``tests/plan/fixtures/upstream-v1.14``), whose Dev* kinds pass through unconverted;

and, per object, the conversion itself: the example's ClusterClass and Cluster v1beta1 → v1beta2 → v1beta1.
Usage::

    .venv/bin/python bench/plan_versions.py [--repeat 40] [--json]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from clusterclass.api.contracts import bundled_contracts
from clusterclass.api.conversion import convert
from clusterclass.plan.loader import load
from clusterclass.plan.planner import make_plan

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "clusterclass" / "examples"
UPSTREAM = ROOT / "tests" / "plan" / "fixtures" / "upstream-v1.14"
VARIABLES = {"CLUSTER_NAME": "dev", "NAMESPACE": "default", "KUBERNETES_VERSION": "v1.34.0"}
VARIABLES |= {"CONTROL_PLANE_MACHINE_COUNT": "1", "WORKER_MACHINE_COUNT": "2"}


def upstream_cluster(directory: Path) -> Path:
    """upstream's development-mp Cluster with clusterctl's variables filled in."""
    text = (UPSTREAM / "cluster-template-development-mp.yaml").read_text()
    text = re.sub(r"\$\{([A-Z_]+):=([^}]*)\}", lambda m: VARIABLES.get(m.group(1), m.group(2)), text)
    text = re.sub(r"\$\{([A-Z_]+)\}", lambda m: VARIABLES[m.group(1)], text)
    path = directory / "upstream-cluster.yaml"
    path.write_text(text)
    return path


def median_ms(function: Callable[[], Any], repeat: int) -> float:
    function()  # warm: imports, compiled schemas and regexes
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        function()
        samples.append((time.perf_counter() - start) * 1000)
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=40)
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory() as work:
        inputs = {
            "v1beta1 (bundled example)": [str(EXAMPLES / "quick-start-v1beta1.yaml")],
            "v1beta2 (bundled example)": [str(EXAMPLES / "quick-start.yaml")],
            "v1beta2 (upstream v1.14 templates)": [
                str(UPSTREAM / "clusterclass-quick-start.yaml"),
                str(upstream_cluster(Path(work))),
            ],
        }
        results: dict[str, float] = {}
        for name, paths in inputs.items():
            loaded = load(paths)
            results[f"plan {name}"] = median_ms(lambda loaded=loaded: make_plan(loaded, seed=1), args.repeat)

    contracts = bundled_contracts()
    example = load([str(EXAMPLES / "quick-start-v1beta1.yaml")]).objects
    for kind in ("ClusterClass", "Cluster"):
        (obj,) = [o for o in example if o["kind"] == kind]
        hub = "cluster.x-k8s.io/v1beta2"

        def round_trip(obj: dict[str, Any] = obj, hub: str = hub) -> None:
            convert(convert(obj, hub, api_versions=contracts), "cluster.x-k8s.io/v1beta1", api_versions=contracts)

        results[f"convert {kind} v1beta1 → v1beta2 → v1beta1"] = median_ms(round_trip, args.repeat * 10)

    if args.json:
        print(json.dumps(results, indent=2))
        return
    width = max(map(len, results))
    for name, value in results.items():
        print(f"{name:<{width}}  {value:8.2f} ms")


if __name__ == "__main__":
    main()
