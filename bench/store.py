"""Benchmark: the embedded store's throughput, in memory and on SQLite, and watch fan-out.

Not a test: it measures and prints medians of ``--repeat`` rounds, each on a fresh store. Backends:

- ``memory``: :class:`~clusterclass.apiserver.store.MemoryStore` without a state file;
- ``sqlite``: with a state file, ``durability="FULL"`` (the default: every acknowledged write is
  fsynced, so it survives power loss);
- ``sqlite-normal``: ``durability="NORMAL"`` (survives a process crash, not power loss).

Scenarios, each over ``--objects`` N ConfigMaps in one namespace:

- ``create``: N creates, one call each; ``apply``: N server-side applies that create, then N that
  change one field; ``patch``: N merge patches of existing objects;
- ``list``: list all N; list the 10% a label selector matches (µs per returned object);
- ``cascade``: delete an owner of N dependents (background garbage collection, one write);
- ``watch fan-out``: W watchers (1, 100, 1000) on ConfigMaps, then one create: time from the write
  until every watcher has read the event; and a burst of ``--burst`` creates: events read by all
  watchers per second, the writes' own time included (so with one watcher it is the write rate).

Usage::

    .venv/bin/python bench/store.py [--objects 1000] [--repeat 5] [--watchers 1,100,1000] [--burst 100]
                                    [--backends memory,sqlite,sqlite-normal] [--json]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from statistics import median
from typing import Any

from clusterclass.api.refs import owner_reference_to
from clusterclass.apiserver.store import MemoryStore

BACKENDS = ("memory", "sqlite", "sqlite-normal")
NAMESPACE = "bench"


@contextmanager
def fresh_store(backend: str) -> Iterator[MemoryStore]:
    """A new store of ``backend`` with namespace ``bench``; its state file is removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="clusterclass-bench-") as tmp:
        kwargs: dict[str, Any] = {}
        if backend != "memory":
            kwargs["state_path"] = Path(tmp) / "state.db"
            kwargs["durability"] = "NORMAL" if backend == "sqlite-normal" else "FULL"
        store = MemoryStore(**kwargs)
        try:
            store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": NAMESPACE}})
            yield store
        finally:
            store.close()


def config_map(i: int, **extra: Any) -> dict[str, Any]:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {
            "name": f"cm-{i:06}",
            "namespace": NAMESPACE,
            "labels": {"app": "bench", "shard": str(i % 10)},
            **extra,
        },
        "data": {"index": str(i), "payload": "x" * 256},
    }


def timed(action: Callable[[], Any]) -> float:
    start = time.perf_counter()
    action()
    return time.perf_counter() - start


# -- throughput -----------------------------------------------------------------------------------------


def bench_create(backend: str, n: int) -> float:
    with fresh_store(backend) as store:
        return n / timed(lambda: [store.create(config_map(i)) for i in range(n)])


def bench_patch(backend: str, n: int) -> float:
    with fresh_store(backend) as store:
        for i in range(n):
            store.create(config_map(i))
        return n / timed(
            lambda: [
                store.patch_merge("v1", "ConfigMap", f"cm-{i:06}", {"data": {"index": f"p{i}"}}, namespace=NAMESPACE)
                for i in range(n)
            ]
        )


def bench_apply(backend: str, n: int) -> tuple[float, float]:
    """(creates/s, updates/s) by server-side apply."""
    with fresh_store(backend) as store:
        created = n / timed(lambda: [store.apply(config_map(i), field_manager="bench") for i in range(n)])
        changed = [config_map(i) for i in range(n)]
        for obj in changed:
            obj["data"]["index"] = "applied"
        updated = n / timed(lambda: [store.apply(obj, field_manager="bench") for obj in changed])
        return created, updated


def bench_list(backend: str, n: int, rounds: int = 20) -> tuple[float, float]:
    """(µs per object listing all, µs per object listing the 10% a selector matches)."""
    with fresh_store(backend) as store:
        for i in range(n):
            store.create(config_map(i))
        whole = timed(lambda: [store.list("v1", "ConfigMap", namespace=NAMESPACE) for _ in range(rounds)])
        some = timed(
            lambda: [
                store.list("v1", "ConfigMap", namespace=NAMESPACE, label_selector="shard=3") for _ in range(rounds)
            ]
        )
        return whole / rounds / n * 1e6, some / rounds / max(1, n // 10) * 1e6


def bench_cascade(backend: str, n: int) -> float:
    """Seconds to delete an owner with ``n`` dependents (background collection, done before the delete returns)."""
    with fresh_store(backend) as store:
        owner = store.create(
            {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "owner", "namespace": NAMESPACE}}
        )
        for i in range(n):
            store.create(config_map(i, ownerReferences=[owner_reference_to(owner)]))
        seconds = timed(lambda: store.delete("v1", "ConfigMap", "owner", namespace=NAMESPACE))
        assert not store.list("v1", "ConfigMap", namespace=NAMESPACE).items, "the dependents were not collected"
        return seconds


# -- watch fan-out --------------------------------------------------------------------------------------


async def _fan_out(store: MemoryStore, watchers: int, writes: int, first: int) -> float:
    """Seconds from the first of ``writes`` creates until each of ``watchers`` watches has all of them."""
    resource_version = store.resource_version
    watches = [
        store.watch("v1", "ConfigMap", namespace=NAMESPACE, resource_version=resource_version, bookmarks=False)
        for _ in range(watchers)
    ]

    async def drain(watch: Any) -> None:
        for _ in range(writes):
            event = await watch.__anext__()
            assert event["type"] == "ADDED"

    readers = [asyncio.ensure_future(drain(watch)) for watch in watches]
    await asyncio.sleep(0)  # every reader is waiting
    start = time.perf_counter()
    for i in range(first, first + writes):
        store.create(config_map(i))
    await asyncio.gather(*readers)
    seconds = time.perf_counter() - start
    for watch in watches:
        watch.close()
    return seconds


def bench_watch(backend: str, watchers: int, burst: int) -> tuple[float, float]:
    """(ms until every watcher has one write, events delivered per second for a burst of writes)."""
    with fresh_store(backend) as store:
        one = asyncio.run(_fan_out(store, watchers, 1, 0))
        many = asyncio.run(_fan_out(store, watchers, burst, 1))
        return one * 1e3, watchers * burst / many


# -- the table --------------------------------------------------------------------------------------


def run(args: argparse.Namespace) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    n = args.objects
    for backend in args.backends.split(","):

        def row(scenario: str, value: float, unit: str, backend: str = backend) -> None:
            rows.append({"backend": backend, "scenario": scenario, "value": value, "unit": unit})

        row("create", median([bench_create(backend, n) for _ in range(args.repeat)]), "ops/s")
        applied = [bench_apply(backend, n) for _ in range(args.repeat)]
        row("apply (create)", median([a[0] for a in applied]), "ops/s")
        row("apply (update)", median([a[1] for a in applied]), "ops/s")
        row("merge patch", median([bench_patch(backend, n) for _ in range(args.repeat)]), "ops/s")
        listed = [bench_list(backend, n) for _ in range(args.repeat)]
        row(f"list all {n}", median([x[0] for x in listed]), "µs/object")
        row("list by label (10%)", median([x[1] for x in listed]), "µs/object")
        row(f"delete owner of {n} (GC)", median([bench_cascade(backend, n) * 1e3 for _ in range(args.repeat)]), "ms")
        for watchers in (int(w) for w in args.watchers.split(",")):
            watched = [bench_watch(backend, watchers, args.burst) for _ in range(args.repeat)]
            row(f"1 create → {watchers} watchers", median([w[0] for w in watched]), "ms")
            row(f"{args.burst} creates → {watchers} watchers", median([w[1] for w in watched]), "events/s")
    return rows


def print_table(rows: list[dict[str, Any]], backends: list[str]) -> None:
    scenarios: dict[str, str] = {}
    for r in rows:
        scenarios.setdefault(r["scenario"], r["unit"])
    values = {(r["backend"], r["scenario"]): r["value"] for r in rows}
    header = f"| {'scenario':<32} | {'unit':<10} | " + " | ".join(f"{b:>13}" for b in backends) + " |"
    print(header)
    print("|" + "|".join(["-" * 34 + "", "-" * 12] + ["-" * 14 + ":" for _ in backends]) + "|")
    for scenario, unit in scenarios.items():
        cells = []
        for backend in backends:
            value = values.get((backend, scenario))
            cells.append(f"{'n/a':>13}" if value is None else f"{_fmt(value):>13}")
        print(f"| {scenario:<32} | {unit:<10} | " + " | ".join(cells) + " |")


def _fmt(value: float) -> str:
    if value >= 1000:
        return f"{value:,.0f}"
    if value >= 10:
        return f"{value:.1f}"
    return f"{value:.2f}"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--objects", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--watchers", default="1,100,1000")
    parser.add_argument("--burst", type=int, default=100)
    parser.add_argument("--backends", default=",".join(BACKENDS))
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args(argv)
    for backend in args.backends.split(","):
        if backend not in BACKENDS:
            parser.error(f"unknown backend {backend!r}; choose from {', '.join(BACKENDS)}")
    rows = run(args)
    if args.json:
        print(json.dumps(rows, indent=2))
    else:
        print(
            f"# python {platform.python_version()}, {os.cpu_count()} cpus, {platform.system()} {platform.release()}; "
            f"N={args.objects}, median of {args.repeat}"
        )
        print_table(rows, args.backends.split(","))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
