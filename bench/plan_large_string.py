"""Benchmark: ``clusterclass plan`` of a Cluster holding a large string, against the same plan without it.

Not a test: it measures and prints medians. The Cluster of ``examples/machinepools`` gets an annotation
of ``--megabytes`` MB (a base64-like blob, as a user might keep a certificate bundle or a rendered
config there), and the plan runs as a user runs it: the ``clusterclass`` console entry point in a fresh
process, for each output format, with and without the annotation. The annotation lands in the
Cluster's diff (the plan's "modified" Cluster prints before and after as YAML), so every format pays for
dumping it twice and diffing it.

Usage::

    .venv/bin/python bench/plan_large_string.py [--megabytes 20] [--repeat 3] [--json]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
EXAMPLE = ROOT / "examples" / "machinepools"
FORMATS = ("text", "json", "yaml")


def write_inputs(directory: Path, megabytes: int) -> Path:
    """The example with ``megabytes`` MB in one annotation of its Cluster, written to ``directory``."""
    cluster = yaml.safe_load((EXAMPLE / "cluster.yaml").read_text())
    blob = ("QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo0NTY3ODkw" * (megabytes * 2**20 // 44 + 1))[: megabytes * 2**20]
    if blob:
        cluster["metadata"].setdefault("annotations", {})["example.com/blob"] = blob
    target = directory / f"cluster-{megabytes}mb.yaml"
    target.write_text(yaml.safe_dump(cluster, width=2**31))
    return target


def time_plan(cluster_file: Path, output: str, repeat: int) -> float:
    """Median wall-clock seconds of ``clusterclass plan`` in a fresh process (output discarded)."""
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "clusterclass.cli.main",
                "plan",
                "-f",
                str(EXAMPLE / "clusterclass.yaml"),
                "-f",
                str(cluster_file),
                "-o",
                output,
                "--seed",
                "1",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            check=False,
        )
        samples.append(time.perf_counter() - started)
        if completed.returncode != 0:
            raise SystemExit(f"plan failed ({completed.returncode}): {completed.stderr.decode()}")
    return statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--megabytes", type=int, default=20)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        small, large = write_inputs(Path(tmp), 0), write_inputs(Path(tmp), args.megabytes)
        for output in FORMATS:
            without, with_string = time_plan(small, output, args.repeat), time_plan(large, output, args.repeat)
            rows.append({"output": output, "without": without, "with": with_string, "ratio": with_string / without})
    if args.json:
        print(json.dumps(rows, indent=2))
        return
    print(f"| -o | without the string (s) | with a {args.megabytes} MB string (s) | ratio |")
    print("| --- | ---: | ---: | ---: |")
    for row in rows:
        print(f"| {row['output']} | {row['without']:.2f} | {row['with']:.2f} | {row['ratio']:.1f}× |")


if __name__ == "__main__":
    main()
