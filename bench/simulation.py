"""Benchmark: K Clusters brought up to Ready by the simulated providers on the embedded management cluster.

Not a test: it measures and prints. Each K (``--clusters``, default 10, 100 and 1000) runs in a fresh Python
process, so every run starts from an empty store and its peak RSS is its own. One run assembles what
``clusterclass up`` runs, minus the HTTPS front of the management cluster (nothing here needs kubectl): the
embedded store (:class:`~clusterclass.apiserver.store.MemoryStore`, in memory), the topology and
ClusterClass controllers (:class:`~clusterclass.controllers.Controllers`) and the simulated Cluster API
providers (:class:`~clusterclass.sim.Simulation`) on one manager, with every provisioning step instant
(``profile("none")``). The simulated workload clusters are served over HTTPS as usual, and the topology
controller reaches them through their kubeconfig Secrets, as on a real management cluster.

It applies the bundled example's ClusterClass ``quick-start-pools`` and its templates
(``clusterclass/examples/quick-start.yaml``) once, waits for the ClusterClass controller to reconcile the
class, then creates K Clusters ``scale-0000``, ``scale-0001``... derived from the example Cluster ``demo``
with every replica count set to 1: **each Cluster is one control-plane Machine (KubeadmControlPlane), two
MachinePools (``mp-0``, ``mp-1``) of one replica each and one MachineDeployment (``md-0``) of one
Machine**, so four Machines and four workload-cluster Nodes per Cluster. All are created at once (``--batch``
creates them B at a time, letting the controllers run between batches), then it waits until all are ready.

"Ready" is exactly :func:`clusterclass.describe.readiness.pending` returning nothing (what
``clusterclass up --exit-when-ready`` waits for). Calling :func:`~clusterclass.describe.collect.collect`
per Cluster every round would cost K times a dozen requests per round, so the bench builds the same
:class:`~clusterclass.describe.objects.ClusterObjects` (the Cluster, its Machines, MachineDeployments,
MachineSets and MachinePools by the cluster-name label, its control plane) from the manager's shared
informer caches, and checks again only the Clusters whose objects changed since the last round (every
``--poll`` seconds). Once all are ready it checks every Cluster once more through ``collect()`` on the
store (outside the timing): a disagreement is reported.

Reported per K:

- wall time from the first create until all are Ready, until the first one is, and the median and 90th
  percentile of the Clusters' own time to Ready (from their create);
- peak RSS (``ru_maxrss``), RSS after setup (before the first Cluster) and once all are Ready, the CPU time
  of the process, and with ``--tracemalloc`` the Python heap (current and peak; it slows everything down);
- the management cluster's requests by verb, and its writes (create, update, update_status, apply, patch,
  patch of status, delete) by kind, counted by a :class:`~clusterclass.kube.counting.CountingClient`
  under the manager: every controller's requests, none of the bench's own (the bench's creates and reads
  go to the store directly); the simulated kubelets write workload-cluster Nodes and Pods in process, not
  through it;
- per controller: reconciles (converged, requeued, failed), errors by type (``Conflict`` is an
  optimistic-concurrency retry) and two times. *busy*: the time the event loop spent running the
  controller's reconciles, store work for their requests included (:class:`BusyTimer`); summed over the
  controllers it is at most the CPU time. *in reconcile*: ``ReconcileStats.seconds``, from start to end;
  every controller shares one event loop, so that mostly measures waiting for the others;
- the workload clusters and their Nodes and Pods, warnings logged, and what happened in the ``--settle``
  seconds after all were Ready (the providers may still be writing their last statuses);
- with ``--idle S``: how long after that the controllers went quiet (no request but watches for ``--quiet``
  seconds) and what they made until then, then the requests of S idle seconds (a converged simulation makes none;
  ``--idle-trace FILE`` writes each to ``FILE.<K>`` with what it changed or why its change check missed).

A run whose event loop stops turning for ``--stall`` seconds (a reconcile requeued at once whose awaits
never suspend; the work queue now turns the loop between keys, which this found) is ended by
:class:`Watchdog`, which reports which controller and key were spinning, where, and at what rate.
``--progress S`` prints a line every S seconds, ``--profile`` a cProfile summary, both to standard error;
``--profile-out FILE`` also saves the whole profile to ``FILE.<K>`` for ``pstats`` (callers, callees).

Usage::

    .venv/bin/python bench/simulation.py [--clusters 10 100 1000] [--workers 10] [--timeout 1800] [--batch 0]
        [--poll 0.1] [--settle 2] [--idle S] [--quiet 10] [--idle-trace FILE] [--upgrade VERSION]
        [--stall 60] [--tracemalloc] [--progress S]
        [--profile] [--profile-out FILE] [--markdown | --json]
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import cProfile
import faulthandler
import functools
import gc
import json
import logging
import os
import pstats
import random
import resource
import signal
import subprocess
import sys
import threading
import time
import tracemalloc
from collections import Counter
from collections.abc import Awaitable, Callable, Generator, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from statistics import quantiles
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.merge_patch import create_merge_patch
from clusterclass.api.objects import Obj, dig, labels_of, name_of, namespace_of
from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.cli.running import tune_long_running_process
from clusterclass.controllers import ControllerOptions, Controllers
from clusterclass.controllers.runtime.controller import Controller
from clusterclass.controllers.topology import structuredmerge
from clusterclass.describe.collect import collect
from clusterclass.describe.objects import ClusterObjects
from clusterclass.describe.readiness import pending
from clusterclass.kube.client import Client
from clusterclass.kube.counting import WRITES, CountingClient
from clusterclass.kube.errors import NotFound
from clusterclass.kube.indexes import LABEL_INDEX
from clusterclass.kube.informer import Informer
from clusterclass.sim import Simulation, WorkloadClusters
from clusterclass.sim.timing import profile
from clusterclass.up.example import example_objects

NAMESPACE = "default"
CLASS_NAME = "quick-start-pools"
#: the write verbs as reported: the CountingClient's, with patches of the status subresource apart
WRITE_VERBS = ("create", "apply", "patch", "patch_status", "update", "update_status", "delete")
VERB_TITLES = {"patch_status": "patch status", "update_status": "update status"}
#: the exit code of a run whose event loop stopped turning (see :class:`Watchdog`)
STALLED = 3
#: seconds between checks of every Cluster not ready yet (between them, only those whose objects changed)
FULL_CHECK_INTERVAL = 30.0
#: the providers' groups as the bench reads them (any version they serve does)
BOOTSTRAP_API_VERSION = "bootstrap.cluster.x-k8s.io/v1beta1"
INFRASTRUCTURE_API_VERSION = "infrastructure.cluster.x-k8s.io/v1beta1"


# -- the objects -----------------------------------------------------------------------------------------


def class_objects() -> list[Obj]:
    """The example's ClusterClass and templates (everything but its Cluster), in the namespace ``default``."""
    objects = [copy.deepcopy(obj) for obj in example_objects() if obj.get("kind") != c.KIND_CLUSTER]
    for obj in objects:
        obj["metadata"].setdefault("namespace", NAMESPACE)
    return objects


def cluster_names(count: int) -> list[str]:
    width = max(4, len(str(count - 1)))
    return [f"scale-{n:0{width}d}" for n in range(count)]


@functools.cache
def example_cluster() -> Obj:
    return next(obj for obj in example_objects() if obj.get("kind") == c.KIND_CLUSTER)


def scaled_cluster(name: str) -> Obj:
    """The example Cluster named ``name``: 1 control-plane replica, md-0, mp-0 and mp-1 of 1 replica each."""
    obj = copy.deepcopy(example_cluster())
    obj["metadata"] = {"name": name, "namespace": NAMESPACE}
    topology = obj["spec"]["topology"]
    topology["controlPlane"]["replicas"] = 1
    workers = topology["workers"]
    wanted = {"md-0": 1, "mp-0": 1, "mp-1": 1}
    found = {w["name"] for w in [*workers.get("machineDeployments", []), *workers.get("machinePools", [])]}
    if found != set(wanted):
        raise SystemExit(f"the example Cluster's workers are {sorted(found)}, the bench expects {sorted(wanted)}")
    for worker in [*workers.get("machineDeployments", []), *workers.get("machinePools", [])]:
        worker["replicas"] = wanted[worker["name"]]
    return obj


def control_plane_kind() -> tuple[str, str]:
    """The control plane's apiVersion and kind: the ClusterClass's control-plane template's, without Template."""
    cluster_class = next(obj for obj in example_objects() if obj.get("kind") == c.KIND_CLUSTER_CLASS)
    control_plane = dig(cluster_class, "spec", "controlPlane")
    ref = control_plane.get("templateRef") or control_plane.get("ref")  # v1beta2, v1beta1
    return str(ref["apiVersion"]), str(ref["kind"]).removesuffix("Template")


# -- counting ----------------------------------------------------------------------------------------------


class KindCountingClient(CountingClient):
    """A CountingClient that also counts writes by (kind, verb), a status patch apart from a patch."""

    def __init__(self, inner: Client) -> None:
        super().__init__(inner)
        self.writes_by_kind: Counter[tuple[str, str]] = Counter()
        #: while set, every write is recorded in it with what it changed (``--idle-trace``)
        self.trace: RequestTrace | None = None

    async def _traced(
        self, verb: str, api_version: str, kind: str, name: str, namespace: str | None, call: Awaitable[Obj]
    ) -> Obj:
        trace = self.trace
        if trace is None:
            return await call
        before = trace.stored(api_version, kind, name, namespace)
        try:
            result = await call
        except Exception as err:
            trace.write(verb, before, before, kind, name, error=f"{type(err).__name__}: {err}"[:300])
            raise
        trace.write(verb, before, trace.stored(api_version, kind, name, namespace), kind, name)
        return result

    def _traced_write(self, verb: str, obj: Obj, call: Awaitable[Obj]) -> Awaitable[Obj]:
        api_version, kind = str(obj.get("apiVersion")), str(obj.get("kind"))
        return self._traced(verb, api_version, kind, name_of(obj), namespace_of(obj) or None, call)

    async def update(self, obj: Obj, **options: Any) -> Obj:
        return await self._traced_write("update", obj, super().update(obj, **options))

    async def update_status(self, obj: Obj, **options: Any) -> Obj:
        return await self._traced_write("update_status", obj, super().update_status(obj, **options))

    async def apply(self, obj: Obj, **options: Any) -> Obj:
        if not options.get("dry_run"):
            return await self._traced_write("apply", obj, super().apply(obj, **options))
        if self.trace is not None:
            self.trace.dry_run(obj)
        return await super().apply(obj, **options)

    def _count(self, verb: str, what: Any) -> None:
        super()._count(verb, what)
        if verb in WRITES and verb != "patch":
            kind = what if isinstance(what, str) else str(what.get("kind") or "?")
            self.writes_by_kind[(kind, verb)] += 1

    async def patch(self, api_version: str, kind: str, name: str, patch: Any, **options: Any) -> Obj:
        verb = "patch_status" if options.get("status") else "patch"
        self.writes_by_kind[(kind, verb)] += 1
        call = super().patch(api_version, kind, name, patch, **options)
        return await self._traced(verb, api_version, kind, name, options.get("namespace") or None, call)


class RequestTrace:
    """What each request of a window did (``--idle-trace``): for a write, the merge patch it made of the stored
    object; for a change check's dry runs, why its kept "no change" answer was not found.

    Installed only for the window it traces. The "why" of a dry run compares what
    :func:`structuredmerge.request_id` was given for the object this time with the time before: the parts of its
    key that differ (the generation, uid, labels, annotations, ownerReferences, the topology's own Apply entry,
    the intent); none means the answer had expired or was never kept (the check before found a change); "not
    looked up in the window": the check began before it.
    """

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.entries: list[dict[str, Any]] = []
        self.started = time.perf_counter()
        self._parts: dict[str, dict[str, Any]] = {}
        self._changed: dict[str, list[str]] = {}
        self._why: dict[str, list[str] | str] = {}
        self._undo: list[Callable[[], None]] = []

    def install(self) -> None:
        original_request_id = structuredmerge.request_id
        original_contains = structuredmerge.AnswerCache.__contains__

        def request_id(current: Obj, intent: Obj) -> str:
            key = original_request_id(current, intent)
            parts = {
                "generation": dig(current, "metadata", "generation"),
                **structuredmerge.answer_depends_on(current),
                "intent": structuredmerge._digest(intent),
            }
            prefix = key.split(".", 1)[0] + f" {namespace_of(current)}/{name_of(current)}"
            before = self._parts.get(prefix)
            self._parts[prefix] = parts
            self._changed[key] = [k for k in parts if before is not None and before[k] != parts[k]]
            return key

        def contains(cache: structuredmerge.AnswerCache, request: object) -> bool:
            found = original_contains(cache, request)
            if not found and isinstance(request, str):
                # "<apiVersion>, Kind=<kind>.<namespace>/<name>.<generation>.<hash>.<intent>@<version written>"
                kind_and_name = request.rsplit("@", 1)[0].rsplit(".", 3)[0].split(", Kind=", 1)[-1]
                self._why[kind_and_name] = self._changed.get(request.rsplit("@", 1)[0]) or "expired or never kept"
            return found

        structuredmerge.request_id = request_id  # type: ignore[assignment]
        structuredmerge.AnswerCache.__contains__ = contains  # type: ignore[method-assign]

        def undo() -> None:
            structuredmerge.request_id = original_request_id  # type: ignore[assignment]
            structuredmerge.AnswerCache.__contains__ = original_contains  # type: ignore[method-assign]

        self._undo.append(undo)

    def uninstall(self) -> None:
        while self._undo:
            self._undo.pop()()

    def dry_run(self, obj: Obj) -> None:
        """One of a change check's two dry runs, with why the check was not answered from the kept answers."""
        kind_and_name = f"{obj.get('kind')}.{namespace_of(obj)}/{name_of(obj)}"
        self.entries.append(
            {
                "t": round(time.perf_counter() - self.started, 3),
                "verb": "apply_dry_run",
                "object": kind_and_name,
                "why": self._why.get(kind_and_name, "not looked up in the window"),
            }
        )

    def stored(self, api_version: str, kind: str, name: str, namespace: str | None) -> Obj | None:
        try:
            return self.store.get(api_version, kind, name, namespace=namespace)
        except NotFound:  # gone, or not there yet: the write creates it
            return None

    def write(
        self, verb: str, before: Obj | None, after: Obj | None, kind: str, name: str, *, error: str | None = None
    ) -> None:
        def plain(obj: Obj | None) -> Obj:
            obj = json_copy(obj or {})
            metadata = obj.get("metadata") or {}
            for key in ("resourceVersion", "managedFields"):
                metadata.pop(key, None)
            return obj

        self.entries.append(
            {
                "t": round(time.perf_counter() - self.started, 3),
                "verb": verb,
                "object": f"{kind} {name}",
                "change": create_merge_patch(plain(before), plain(after)),
                **({"error": error} if error else {}),
            }
        )


class LogCounter(logging.Handler):
    """Counts warnings and errors by logger, keeping the first few messages."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.counts: Counter[str] = Counter()
        self.samples: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.counts[f"{record.levelname} {record.name}"] += 1
        if len(self.samples) < 5:
            self.samples.append(f"{record.levelname} {record.name}: {record.getMessage()}"[:300])


@dataclass
class Snapshot:
    """Every controller's counters at one moment, and the client's."""

    stats: dict[str, dict[str, Any]]
    verbs: Counter[str]
    writes: Counter[tuple[str, str]]

    @classmethod
    def take(cls, controllers: Iterable[Controller], client: KindCountingClient, busy: dict[str, float]) -> Snapshot:
        stats = {
            ctl.name: {
                "success": ctl.stats.success,
                "requeue_after": ctl.stats.requeue_after,
                "error": ctl.stats.error,
                "seconds": ctl.stats.seconds,
                "busy": busy.get(ctl.name, 0.0),
                "errors_by_type": dict(ctl.stats.errors_by_type),
                "last_error": ctl.stats.last_error,
            }
            for ctl in controllers
        }
        return cls(stats, Counter(client.counts), Counter(client.writes_by_kind))

    def since(self, before: Snapshot) -> dict[str, Any]:
        controllers = {}
        for name, now in self.stats.items():
            was = before.stats.get(name) or {"success": 0, "requeue_after": 0, "error": 0, "seconds": 0.0, "busy": 0.0}
            errors = Counter(now["errors_by_type"])
            errors.subtract(was.get("errors_by_type") or {})
            row = {key: now[key] - was[key] for key in ("success", "requeue_after", "error", "seconds", "busy")}
            row["reconciles"] = row["success"] + row["requeue_after"] + row["error"]
            row["errors_by_type"] = {k: v for k, v in errors.items() if v}
            row["last_error"] = now["last_error"] if row["error"] else ""
            controllers[name] = row
        verbs = self.verbs - before.verbs
        writes: dict[str, dict[str, int]] = {}
        for (kind, verb), count in sorted((self.writes - before.writes).items()):
            writes.setdefault(kind, {})[verb] = count
        return {"controllers": controllers, "verbs": dict(sorted(verbs.items())), "writes": writes}


# -- readiness -----------------------------------------------------------------------------------------------


@dataclass
class Readiness:
    """Which Clusters are ready, checked from the manager's caches, only again when their objects change."""

    clusters: Informer
    machines: Informer
    machine_deployments: Informer
    machine_sets: Informer
    machine_pools: Informer
    control_planes: Informer
    names: set[str]
    created: dict[str, float] = field(default_factory=dict)
    ready: dict[str, float] = field(default_factory=dict)
    waiting: dict[str, list[str]] = field(default_factory=dict)
    dirty: set[str] = field(default_factory=set)
    checks: int = 0
    #: once an upgrade started: the version a Cluster must show in the cache before it can count as ready
    version: str | None = None

    def __post_init__(self) -> None:
        self.clusters.add_event_handler(
            on_add=self._cluster_changed,
            on_update=lambda _old, new: self._cluster_changed(new),
            on_delete=lambda obj, _unknown: self._cluster_changed(obj),
        )
        for informer in (
            self.machines,
            self.machine_deployments,
            self.machine_sets,
            self.machine_pools,
            self.control_planes,
        ):
            informer.add_event_handler(
                on_add=self._member_changed,
                on_update=lambda _old, new: self._member_changed(new),
                on_delete=lambda obj, _unknown: self._member_changed(obj),
            )

    def _cluster_changed(self, obj: Obj) -> None:
        if namespace_of(obj) == NAMESPACE:
            self.dirty.add(name_of(obj))

    def _member_changed(self, obj: Obj) -> None:
        if namespace_of(obj) != NAMESPACE:
            return
        name = labels_of(obj).get(c.LABEL_CLUSTER_NAME) or dig(obj, "spec", "clusterName")
        if name:
            self.dirty.add(str(name))
        for ref in dig(obj, "metadata", "ownerReferences") or []:
            if ref.get("kind") == c.KIND_CLUSTER:
                self.dirty.add(str(ref.get("name")))

    def objects(self, name: str) -> ClusterObjects | None:
        """What :func:`~clusterclass.describe.collect.collect` reads for ``pending``, from the caches."""
        cluster = self.clusters.get(name, NAMESPACE)
        if cluster is None:
            return None
        found = ClusterObjects(cluster)
        selector = f"{c.LABEL_CLUSTER_NAME}={name}"
        for informer, attribute in (
            (self.machines, "machines"),
            (self.machine_deployments, "machine_deployments"),
            (self.machine_sets, "machine_sets"),
            (self.machine_pools, "machine_pools"),
        ):
            members = [o for o in informer.by_index(LABEL_INDEX, selector) if namespace_of(o) == NAMESPACE]
            setattr(found, attribute, sorted(members, key=name_of))
        ref = dig(cluster, "spec", "controlPlaneRef")
        if isinstance(ref, dict) and ref.get("name"):
            control_plane = self.control_planes.get(str(ref["name"]), NAMESPACE)
            if control_plane is not None:
                found.add_referenced(control_plane)
        return found

    async def wait(
        self, started: float, args: argparse.Namespace, controllers: Iterable[Controller], client: CountingClient
    ) -> None:
        """Check every ``--poll`` seconds until all are ready or ``--timeout``: the Clusters whose objects changed,
        and all of them every :data:`FULL_CHECK_INTERVAL` seconds (a safety net for a change the event mapping
        missed; at every round it cost K checks per round, which at K=1000 was a good part of the run)."""
        deadline = started + args.timeout
        last_full = last_progress = time.perf_counter()
        self.dirty |= self.names
        while True:
            now = time.perf_counter()
            full = now - last_full > FULL_CHECK_INTERVAL
            self.check(now, everything=full)
            if full:
                last_full = now
            if args.progress and now - last_progress >= args.progress:
                last_progress = now
                print(progress_line(now - started, self, controllers, client), file=sys.stderr)
            if len(self.ready) == len(self.names) or now > deadline:
                return
            await asyncio.sleep(args.poll)

    def check(self, now: float, *, everything: bool = False) -> None:
        """Look again at the Clusters not ready yet whose objects changed (``everything``: at all of them)."""
        names = (self.names if everything else self.dirty & self.names) - self.ready.keys()
        self.dirty.clear()
        for name in names:
            if name not in self.created:
                continue
            self.checks += 1
            objects = self.objects(name)
            if objects is None:
                waiting = ["Cluster not in the cache yet"]
            elif self.version and dig(objects.cluster, "spec", "topology", "version") != self.version:
                waiting = [f"Cluster not at {self.version} in the cache yet"]
            else:
                waiting = pending(objects)
            if waiting:
                self.waiting[name] = waiting
            else:
                self.ready[name] = now
                self.waiting.pop(name, None)


async def upgrade_all(
    version: str,
    args: argparse.Namespace,
    client: Client,
    readiness: Readiness,
    manager: Any,
    counting: KindCountingClient,
    busy: dict[str, float],
    store: MemoryStore,
) -> dict[str, Any]:
    """Every Cluster's ``spec.topology.version`` set to ``version`` at once; then until all are Ready at it.

    A Cluster counts as upgraded once the cache shows it at ``version`` and :func:`pending` finds nothing (it
    compares the control plane's, every Machine's and every MachinePool's version with the topology's). Writes are
    reported per object of each kind that exists at the end (how often the upgrade wrote each object)."""
    before = Snapshot.take(manager.controllers, counting, busy)
    cpu_before = cpu_seconds()
    names = sorted(readiness.names)
    readiness.ready.clear()
    readiness.waiting.clear()
    readiness.version = version
    started = time.perf_counter()
    # readiness.created is reused as each Cluster's upgrade start, so Readiness.wait and the durations below need
    # nothing of their own
    for name in names:
        await client.patch(
            c.CLUSTER_API_VERSION,
            c.KIND_CLUSTER,
            name,
            {"spec": {"topology": {"version": version}}},
            namespace=NAMESPACE,
            field_manager="bench",
        )
        readiness.created[name] = time.perf_counter()
    await readiness.wait(started, args, manager.controllers, counting)
    finished = time.perf_counter()
    durations = sorted(readiness.ready[n] - readiness.created[n] for n in readiness.ready)
    changes = Snapshot.take(manager.controllers, counting, busy).since(before)
    objects = {kind: len(store.list(api_version, kind).items) for api_version, kind in upgraded_kinds()}
    writes = changes["writes"]
    per_object = {
        kind: round(sum(writes.get(kind, {}).values()) / count, 2) for kind, count in objects.items() if count
    }
    return {
        "version": version,
        "upgraded": len(readiness.ready),
        "all_upgraded_seconds": finished - started if len(readiness.ready) == len(names) else None,
        "p50_seconds": percentile(durations, 50),
        "p90_seconds": percentile(durations, 90),
        "cpu_seconds": cpu_seconds() - cpu_before,
        "objects": objects,
        "writes_per_object": per_object,
        "not_upgraded": {n: readiness.waiting.get(n, ["not checked"]) for n in names if n not in readiness.ready}
        if len(readiness.ready) < len(names)
        else {},
        **changes,
    }


def largest_objects(store: MemoryStore) -> dict[str, int]:
    """The size in bytes (JSON, as stored) of the largest object of each kind an upgrade writes: what every copy,
    conversion and write of one costs grows with it."""
    sizes = {}
    for api_version, kind in upgraded_kinds():
        items = store.list(api_version, kind).items
        sizes[kind] = max((len(json.dumps(obj, separators=(",", ":"))) for obj in items), default=0)
    return sizes


def upgraded_kinds() -> list[tuple[str, str]]:
    """The kinds an upgrade writes, for writes per object."""
    cp_api_version, cp_kind = control_plane_kind()
    return [
        (c.CLUSTER_API_VERSION, c.KIND_CLUSTER),
        (cp_api_version, cp_kind),
        (c.CLUSTER_API_VERSION, c.KIND_MACHINE_DEPLOYMENT),
        (c.CLUSTER_API_VERSION, c.KIND_MACHINE_SET),
        (c.CLUSTER_API_VERSION, c.KIND_MACHINE),
        (c.CLUSTER_API_VERSION, c.KIND_MACHINE_POOL),
        (BOOTSTRAP_API_VERSION, "KubeadmConfig"),
        (BOOTSTRAP_API_VERSION, "KubeadmConfigTemplate"),
        (INFRASTRUCTURE_API_VERSION, "DockerMachine"),
        (INFRASTRUCTURE_API_VERSION, "DockerMachinePool"),
        (INFRASTRUCTURE_API_VERSION, "DockerMachineTemplate"),
    ]


async def verify(client: Client, names: Sequence[str]) -> dict[str, list[str]]:
    """``collect()`` and ``pending()`` for each Cluster through ``client``: the ones not ready, with why."""
    slots = asyncio.Semaphore(20)

    async def one(name: str) -> tuple[str, list[str]]:
        async with slots:
            return name, pending(await collect(client, namespace=NAMESPACE, name=name))

    results = await asyncio.gather(*(one(name) for name in names))
    return {name: waiting for name, waiting in results if waiting}


# -- stalls ----------------------------------------------------------------------------------------------------


class Watchdog:
    """A thread that notices when the event loop stops turning, says where it is, and ends the run.

    Every controller, informer and simulated workload cluster shares one event loop, and the in-process
    client never suspends: a reconcile that asks to run again at once (requeue after 0 s) is taken again
    by the same worker without the loop ever running anything else — no watch event is delivered, so a
    cache that was stale stays stale, and the loop spins. With no heartbeat for ``stall`` seconds this
    samples the main thread's stack (which controller reconciles which key, the common frames) and the
    controllers' reconcile rates, prints that as the run's JSON result and exits with :data:`STALLED`.
    """

    def __init__(self, stall: float, result: dict[str, Any]) -> None:
        self.stall = stall
        self.result = result
        self.controllers: list[Controller] = []
        self.phase = "setup"
        self.beat = time.monotonic()
        self.started = time.monotonic()
        self.main = threading.get_ident()
        self._stop = threading.Event()

    async def heartbeat(self) -> None:
        while True:
            self.beat = time.monotonic()
            await asyncio.sleep(0.2)

    def start(self) -> None:
        if self.stall > 0:
            threading.Thread(target=self._watch, name="bench-watchdog", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()

    def _watch(self) -> None:
        while not self._stop.wait(1.0):
            silent = time.monotonic() - self.beat
            if silent > self.stall:
                report = {**self.result, "stalled": self.diagnose(silent)}
                sys.stdout.write(json.dumps(report, default=str))
                sys.stdout.flush()
                os._exit(STALLED)

    def _totals(self) -> dict[str, tuple[int, int, int]]:
        return {ctl.name: (ctl.stats.success, ctl.stats.requeue_after, ctl.stats.error) for ctl in self.controllers}

    def diagnose(self, silent: float) -> dict[str, Any]:
        samples = 40
        before, started = self._totals(), time.monotonic()
        reconciling: Counter[str] = Counter()
        frames: Counter[str] = Counter()
        last: list[str] = []
        for _ in range(samples):
            chain = []  # innermost first, collected in one pass: the main thread runs on meanwhile
            frame = sys._current_frames().get(self.main)
            while frame is not None:
                chain.append((frame.f_code.co_filename, frame.f_lineno, frame.f_code.co_name, frame))
                frame = frame.f_back
            ours = [(path, line, name) for path, line, name, _ in reversed(chain) if "/clusterclass/" in path]
            frames.update({f"{Path(path).name}:{name}" for path, _, name in ours})
            last = [f"{path.split('/clusterclass/')[-1]}:{line} {name}" for path, line, name in ours]
            where = "no reconcile on the stack"
            for path, _, name, found in chain:
                if name == "_timed" and path.endswith("controller.py"):
                    local = found.f_locals
                    where = f"{getattr(local.get('self'), 'name', '?')} {local.get('key', '?')}"
                    break
            reconciling[where] += 1
            time.sleep(0.05)
        elapsed = time.monotonic() - started
        after = self._totals()
        rates = {}
        for name, (success, requeue, error) in after.items():
            was = before.get(name, (0, 0, 0))
            delta = (success - was[0], requeue - was[1], error - was[2])
            if any(delta):
                rates[name] = {
                    "converged_per_s": round(delta[0] / elapsed),
                    "requeued_per_s": round(delta[1] / elapsed),
                    "failed_per_s": round(delta[2] / elapsed),
                    "reconciles_so_far": success + requeue + error,
                }
        return {
            "phase": self.phase,
            "after_seconds": round(time.monotonic() - self.started, 1),
            "loop_silent_seconds": round(silent, 1),
            "samples": samples,
            "reconciling": dict(reconciling.most_common(5)),
            "common_frames": [name for name, n in frames.most_common() if n >= samples * 0.8][:25],
            "last_stack": last,
            "reconcile_rates": rates,
            "peak_rss_mib": peak_rss_mib(),
        }


class BusyTimer:
    """Drives a reconcile's coroutine, adding up the time of its steps: what it kept the event loop busy.

    :class:`~clusterclass.controllers.runtime.controller.ReconcileStats` times a reconcile from start to
    end, waits included; with every controller on one event loop a reconcile waits mostly for the others.
    The time of each ``send`` into the coroutine is the time the loop spent running it, and what it called
    inline (the in-process store's work for its requests too): summed per controller, at most the wall time.
    """

    def __init__(self, awaitable: Awaitable[float | None], add: Callable[[float], None]) -> None:
        self.awaitable = awaitable
        self.add = add

    def __await__(self) -> Generator[Any, Any, float | None]:
        coroutine = self.awaitable.__await__()
        value: Any = None
        error: BaseException | None = None
        while True:
            started = time.perf_counter()
            try:
                yielded = coroutine.send(value) if error is None else coroutine.throw(error)
            except StopIteration as stop:
                self.add(time.perf_counter() - started)
                result: float | None = stop.value
                return result
            except BaseException:
                self.add(time.perf_counter() - started)
                raise
            self.add(time.perf_counter() - started)
            try:
                value, error = (yield yielded), None
            except GeneratorExit:
                coroutine.close()
                raise
            except BaseException as thrown:
                value, error = None, thrown


def busy_timed(
    reconcile: Callable[[str], Awaitable[float | None]], name: str, busy: dict[str, float]
) -> Callable[[str], Awaitable[float | None]]:
    """``reconcile``, its busy time added to ``busy[name]`` (see :class:`BusyTimer`)."""

    def add(seconds: float) -> None:
        busy[name] = busy.get(name, 0.0) + seconds

    async def timed(key: str) -> float | None:
        return await BusyTimer(reconcile(key), add)

    return timed


def all_controllers(controllers: Controllers, simulation: Simulation) -> list[Controller]:
    """Every controller the run will start (they register with the manager only as they start)."""
    found = [provider.controller for provider in simulation.providers]
    for owner in (controllers.topology, controllers.clusterclass, controllers.templates):
        found += [value for value in vars(owner).values() if isinstance(value, Controller)]
    return found


# -- one run -------------------------------------------------------------------------------------------------


def rss_now_mib() -> float | None:
    """The current resident set size (Linux ``/proc``; None elsewhere)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    except OSError:
        return None
    return None


def peak_rss_mib() -> float:
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def percentile(values: Sequence[float], q: int) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return quantiles(values, n=100, method="inclusive")[q - 1]


async def wait_until(predicate: Any, timeout: float, what: str) -> None:
    deadline = time.perf_counter() + timeout
    while not predicate():
        if time.perf_counter() > deadline:
            raise SystemExit(f"bench: timed out waiting for {what}")
        await asyncio.sleep(0.01)


async def wait_for_quiet(counting: KindCountingClient, quiet: float, timeout: float) -> float | None:
    """Wait until the controllers made no request but watches for ``quiet`` seconds in a row: the Clusters are Ready
    before every provider has written its last status (a MachinePool's providerIDList, the Machines' conditions),
    and at K=1000 that tail is minutes long. The seconds it took, None if it never went quiet within ``timeout``
    (the idle window then measures the rest)."""
    started = time.perf_counter()
    requests = sum(n for verb, n in counting.counts.items() if verb != "watch")
    quiet_since = started
    while time.perf_counter() - quiet_since < quiet:
        if time.perf_counter() - started > timeout:
            return None
        await asyncio.sleep(min(1.0, quiet / 4))
        now = sum(n for verb, n in counting.counts.items() if verb != "watch")
        if now != requests:
            requests, quiet_since = now, time.perf_counter()
    return quiet_since - started


async def run(args: argparse.Namespace, count: int, logs: LogCounter) -> dict[str, Any]:
    """Bring up ``count`` Clusters on a fresh embedded management cluster; the measurements."""
    result: dict[str, Any] = {
        "clusters": count,
        "topology_workers": args.workers,
        "sim_workers": args.sim_workers,
    }
    watchdog = Watchdog(args.stall, result)
    watchdog.start()
    heartbeat = asyncio.ensure_future(watchdog.heartbeat())
    if args.tracemalloc:
        tracemalloc.start()
    store = MemoryStore()
    direct = MemoryClient(store)
    counting = KindCountingClient(MemoryClient(store))
    rng = random.Random(args.seed)
    controllers = Controllers(
        counting, ControllerOptions(rng=random.Random(rng.random()), topology_workers=args.workers)
    )
    workloads = WorkloadClusters()
    simulation = Simulation(
        controllers.manager,
        workloads=workloads,
        timing=profile("none", seed=args.seed),
        rng=random.Random(rng.random()),
        workers=args.sim_workers,
    )
    manager = controllers.manager
    watchdog.controllers = manager.controllers
    busy: dict[str, float] = {}
    for ctl in all_controllers(controllers, simulation):
        ctl._reconcile = busy_timed(ctl._reconcile, ctl.name, busy)
    try:
        await simulation.setup()
        await controllers.start()
        cp_api_version, cp_kind = control_plane_kind()
        readiness = Readiness(
            clusters=await manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER),
            machines=await manager.informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE),
            machine_deployments=await manager.informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE_DEPLOYMENT),
            machine_sets=await manager.informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE_SET),
            machine_pools=await manager.informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE_POOL),
            control_planes=await manager.informer(cp_api_version, cp_kind),
            names=set(cluster_names(count)),
        )

        for obj in class_objects():
            await direct.create(obj, field_manager="bench")
        classes = await manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS)

        def class_reconciled() -> bool:
            found = classes.get(CLASS_NAME, NAMESPACE)
            generation = dig(found, "metadata", "generation") if found else None
            return found is not None and dig(found, "status", "observedGeneration") == generation

        await wait_until(class_reconciled, 30, f"ClusterClass {CLASS_NAME} to be reconciled")
        await asyncio.sleep(0.2)  # let the class's own writes and events drain

        result["rss_setup_mib"] = rss_now_mib()
        cpu_before = cpu_seconds()
        before = Snapshot.take(manager.controllers, counting, busy)
        names = cluster_names(count)
        watchdog.phase = f"creating {count} Clusters"
        started = time.perf_counter()
        batch = args.batch or count
        for i, name in enumerate(names):
            await direct.create(scaled_cluster(name), field_manager="bench")
            readiness.created[name] = time.perf_counter()
            if (i + 1) % batch == 0:
                await asyncio.sleep(0)
        result["create_seconds"] = time.perf_counter() - started

        watchdog.phase = "waiting for the Clusters to be Ready"
        await readiness.wait(started, args, manager.controllers, counting)
        finished = time.perf_counter()
        result["log_warnings_until_ready"] = sum(logs.counts.values())
        at_ready = Snapshot.take(manager.controllers, counting, busy)
        cpu_at_ready = cpu_seconds()
        result["rss_ready_mib"] = rss_now_mib()
        result["peak_rss_mib"] = peak_rss_mib()
        if args.tracemalloc:
            current, peak = tracemalloc.get_traced_memory()
            result["heap_mib"] = current / 2**20
            result["heap_peak_mib"] = peak / 2**20
            top = tracemalloc.take_snapshot().statistics("filename")[:12]
            result["heap_by_file"] = [
                (str(stat.traceback[0].filename).split("site-packages/")[-1].split("/work/main/")[-1],
                 round(stat.size / 2**20, 1), stat.count)
                for stat in top
            ]  # fmt: skip

        durations = sorted(readiness.ready[n] - readiness.created[n] for n in readiness.ready)
        result.update(
            {
                "ready": len(readiness.ready),
                "timed_out": len(readiness.ready) < count,
                "all_ready_seconds": finished - started if len(readiness.ready) == count else None,
                "elapsed_seconds": finished - started,
                "first_ready_seconds": min(readiness.ready.values()) - started if readiness.ready else None,
                "p50_seconds": percentile(durations, 50),
                "p90_seconds": percentile(durations, 90),
                "max_seconds": durations[-1] if durations else None,
                "cpu_seconds": cpu_at_ready - cpu_before,
                "readiness_checks": readiness.checks,
                **at_ready.since(before),
            }
        )
        if result["timed_out"]:
            not_ready = sorted(readiness.names - readiness.ready.keys())
            result["not_ready"] = {n: readiness.waiting.get(n, ["not checked yet"]) for n in not_ready[:10]}
            reasons: Counter[str] = Counter()
            for n in not_ready:
                for line in readiness.waiting.get(n, ["not checked yet"]):
                    reasons[line.replace(n, "<cluster>").split(":")[0]] += 1
            result["not_ready_reasons"] = dict(reasons.most_common(10))

        watchdog.phase = "settling after all Ready"
        await asyncio.sleep(args.settle)
        result["settle"] = Snapshot.take(manager.controllers, counting, busy).since(at_ready)
        result["settle"]["seconds"] = args.settle

        if args.idle:
            if args.quiet:
                watchdog.phase = "waiting for the controllers to go quiet"
                quiet_from = Snapshot.take(manager.controllers, counting, busy)
                result["quiet_after_seconds"] = await wait_for_quiet(counting, args.quiet, args.timeout)
                result["until_quiet"] = Snapshot.take(manager.controllers, counting, busy).since(quiet_from)
            watchdog.phase = "idle"
            idle_from = Snapshot.take(manager.controllers, counting, busy)
            trace = RequestTrace(store) if args.idle_trace else None
            if trace:
                trace.install()
                counting.trace = trace
            await asyncio.sleep(args.idle)
            result["idle"] = Snapshot.take(manager.controllers, counting, busy).since(idle_from)
            result["idle"]["seconds"] = args.idle
            if trace:
                counting.trace = None
                trace.uninstall()
                with open(f"{args.idle_trace}.{count}", "w") as out:
                    out.writelines(json.dumps(entry) + "\n" for entry in trace.entries)

        if args.upgrade:
            watchdog.phase = f"upgrading {count} Clusters to {args.upgrade}"
            result["upgrade"] = await upgrade_all(args.upgrade, args, direct, readiness, manager, counting, busy, store)

        watchdog.phase = "checking readiness with collect()"
        verify_started = time.perf_counter()
        disagree = await verify(direct, sorted(readiness.ready))
        result["verify"] = {
            "seconds": time.perf_counter() - verify_started,
            "checked": len(readiness.ready),
            "not_ready_by_collect": {n: w for n, w in list(disagree.items())[:10]},
            "disagreements": len(disagree),
        }

        nodes = pods = 0
        opened = 0
        for name in names:
            workload = workloads.get(NAMESPACE, name)
            if workload is not None:
                opened += 1
                nodes += len(workload.nodes())
                pods += len(workload.store.list("v1", "Pod").items)
        result["workload_clusters"] = opened
        result["workload_nodes"] = nodes
        result["workload_pods"] = pods
        result["management_objects"] = {
            kind: len(store.list(api_version, kind).items)
            for api_version, kind in (
                (c.CLUSTER_API_VERSION, c.KIND_MACHINE),
                (c.CLUSTER_API_VERSION, c.KIND_MACHINE_POOL),
                (c.CLUSTER_API_VERSION, c.KIND_MACHINE_DEPLOYMENT),
                ("v1", "Secret"),
                ("v1", "Event"),
            )
        }
        result["largest_objects"] = largest_objects(store)
    finally:
        watchdog.phase = "stopping"
        stop_started = time.perf_counter()
        await controllers.stop()
        await simulation.close()
        await direct.close()
        await counting.close()
        store.close()
        result["stop_seconds"] = time.perf_counter() - stop_started
        if args.tracemalloc:
            tracemalloc.stop()
        watchdog.stop()
        heartbeat.cancel()
    result["log_warnings"] = dict(logs.counts)
    result["log_samples"] = list(logs.samples)
    return result


def progress_line(
    elapsed: float, readiness: Readiness, controllers: Iterable[Controller], client: CountingClient
) -> str:
    """One line for ``--progress``: Clusters ready, writes so far, and each busy controller's queue."""
    busy = [
        f"{ctl.name}={ctl.stats.total}r/{len(ctl.queue)}q"
        for ctl in sorted(controllers, key=lambda ctl: -ctl.stats.seconds)
        if ctl.stats.total or len(ctl.queue)
    ]
    ready = len(readiness.ready)
    return f"[{elapsed:7.1f}s] {ready}/{len(readiness.names)} Ready, {client.writes} writes; " + " ".join(busy)


class GcTimer:
    """Seconds the cyclic garbage collector ran, by generation (``gc.callbacks``): with a large heap a full
    collection walks every object, so its share of the CPU time is worth knowing."""

    def __init__(self) -> None:
        self.seconds = [0.0, 0.0, 0.0]
        self.collections = [0, 0, 0]
        self._started = 0.0
        gc.callbacks.append(self._callback)

    def _callback(self, phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            self._started = time.perf_counter()
        else:
            self.seconds[info["generation"]] += time.perf_counter() - self._started
            self.collections[info["generation"]] += 1

    def close(self) -> dict[str, Any]:
        gc.callbacks.remove(self._callback)
        return {"seconds": [round(s, 2) for s in self.seconds], "collections": self.collections}


def gc_thresholds(text: str) -> tuple[int, int, int]:
    """``--gc-threshold``: three non-negative integers, as :func:`gc.set_threshold` takes them."""
    try:
        values = tuple(int(part) for part in text.split(","))
    except ValueError:
        values = ()
    if len(values) != 3 or min(values) < 0:
        raise argparse.ArgumentTypeError(f"expected three non-negative integers G0,G1,G2, got {text!r}")
    return values[0], values[1], values[2]


def run_one(args: argparse.Namespace, count: int) -> None:
    """The child process: one K, its result as JSON on standard output."""
    faulthandler.register(signal.SIGUSR1)  # kill -USR1 <pid>: where the process is, for a run that stalls
    logs = LogCounter()
    logging.basicConfig(level=logging.WARNING, handlers=[logs], force=True)
    profiler = cProfile.Profile() if args.profile or args.profile_out else None
    if profiler is not None:
        profiler.enable()
    tune_long_running_process()  # as clusterclass up does
    if args.gc_threshold:
        gc.set_threshold(*args.gc_threshold)
    gc_timer = GcTimer()
    result = asyncio.run(run(args, count, logs))
    result["gc"] = gc_timer.close()
    if profiler is not None:
        profiler.disable()
        stats = pstats.Stats(profiler, stream=sys.stderr)
        stats.sort_stats("tottime").print_stats(30)
        stats.sort_stats("cumulative").print_stats(40)
        if args.profile_out:
            stats.dump_stats(f"{args.profile_out}.{count}")
    json.dump(result, sys.stdout)


def run_child(args: argparse.Namespace, count: int) -> dict[str, Any]:
    """One K in a fresh process (fresh store, its own peak RSS)."""
    command = [sys.executable, str(Path(__file__).resolve()), "--one", str(count)]
    command += ["--workers", str(args.workers), "--sim-workers", str(args.sim_workers)]
    command += ["--timeout", str(args.timeout), "--batch", str(args.batch), "--poll", str(args.poll)]
    command += ["--settle", str(args.settle), "--seed", str(args.seed), "--progress", str(args.progress)]
    command += ["--stall", str(args.stall), "--idle", str(args.idle), "--quiet", str(args.quiet)]
    command += ["--upgrade", args.upgrade] if args.upgrade else []
    command += ["--idle-trace", str(Path(args.idle_trace).resolve())] if args.idle_trace else []
    command += ["--gc-threshold", ",".join(map(str, args.gc_threshold))] if args.gc_threshold else []
    command += ["--tracemalloc"] if args.tracemalloc else []
    command += ["--profile"] if args.profile else []
    command += ["--profile-out", args.profile_out] if args.profile_out else []
    print(f"bench: {count} Clusters ...", file=sys.stderr, flush=True)
    done = subprocess.run(command, stdout=subprocess.PIPE, text=True, check=False, timeout=args.timeout + 600)
    if done.returncode not in (0, STALLED):
        raise SystemExit(f"bench: the run for {count} Clusters failed (exit {done.returncode})")
    result: dict[str, Any] = json.loads(done.stdout)
    if "stalled" in result:
        print(f"bench: {count} Clusters: the event loop stalled ({result['stalled']['phase']})", file=sys.stderr)
    return result


# -- output --------------------------------------------------------------------------------------------------


def table(headers: Sequence[str], rows: Sequence[Sequence[Any]], *, markdown: bool, right: int = 1) -> str:
    """Rows as a Markdown table, or aligned plain text; columns from ``right`` on are right-aligned."""
    cells = [[str(h) for h in headers], *[["" if v is None else str(v) for v in row] for row in rows]]
    if markdown:
        rule = ["---" if i < right else "---:" for i in range(len(headers))]
        return "\n".join("| " + " | ".join(row) + " |" for row in [cells[0], rule, *cells[1:]])
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for n, row in enumerate(cells):
        parts = [v.ljust(w) if i < right else v.rjust(w) for i, (v, w) in enumerate(zip(row, widths, strict=True))]
        lines.append("  ".join(parts).rstrip())
        if n == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def seconds(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def mib(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def summary_rows(results: Sequence[dict[str, Any]]) -> tuple[list[str], list[list[Any]]]:
    headers = [
        "Clusters",
        "all Ready (s)",
        "first Ready (s)",
        "p50 (s)",
        "p90 (s)",
        "CPU (s)",
        "peak RSS (MiB)",
        "RSS setup → Ready (MiB)",
        "writes",
        "writes / Cluster",
        "reconciles",
        "workload clusters",
        "Nodes",
    ]
    heap = any("heap_peak_mib" in r for r in results)
    if heap:
        headers.insert(8, "heap peak (MiB)")
    rows = []
    for r in results:
        writes = sum(sum(verbs.values()) for verbs in r["writes"].values())
        reconciles = sum(ctl["reconciles"] for ctl in r["controllers"].values())
        all_ready = (
            seconds(r["all_ready_seconds"])
            if not r["timed_out"]
            else f"> {r['elapsed_seconds']:.0f} ({r['ready']} Ready)"
        )
        row: list[Any] = [
            r["clusters"],
            all_ready,
            seconds(r["first_ready_seconds"]),
            seconds(r["p50_seconds"]),
            seconds(r["p90_seconds"]),
            seconds(r["cpu_seconds"]),
            mib(r["peak_rss_mib"]),
            f"{mib(r['rss_setup_mib'])} → {mib(r['rss_ready_mib'])}",
            writes,
            f"{writes / r['clusters']:.1f}",
            reconciles,
            r["workload_clusters"],
            r["workload_nodes"],
        ]
        if heap:
            row.insert(8, mib(r.get("heap_peak_mib")))
        rows.append(row)
    return headers, rows


def errors_text(ctl: dict[str, Any]) -> str:
    return ", ".join(f"{count} {kind}" for kind, count in sorted(ctl["errors_by_type"].items()))


def controller_cell(ctl: dict[str, Any] | None) -> str:
    if not ctl or not ctl["reconciles"]:
        return "-"
    errors = errors_text(ctl)
    text = f"{ctl['reconciles']} / {ctl['busy']:.1f} s"
    return f"{text} ({errors})" if errors else text


def controller_table(r: dict[str, Any], names: Sequence[str], *, markdown: bool) -> str:
    headers = ["controller", "reconciles", "converged", "requeued", "failed", "busy (s)", "in reconcile (s)", "errors"]
    rows = []
    for name in names:
        ctl = r["controllers"].get(name)
        if ctl and ctl["reconciles"]:
            counts = [ctl[k] for k in ("reconciles", "success", "requeue_after", "error")]
            rows.append([name, *counts, f"{ctl['busy']:.2f}", f"{ctl['seconds']:.1f}", errors_text(ctl)])
    busy = sum(ctl["busy"] for ctl in r["controllers"].values())
    rows.append(["all", *(sum(ctl[k] for ctl in r["controllers"].values()) for k in ("reconciles", "success",
                 "requeue_after", "error")), f"{busy:.2f}", "", ""])  # fmt: skip
    return table(headers, rows, markdown=markdown)


def stalled_notes(r: dict[str, Any]) -> list[str]:
    stall = r["stalled"]
    notes = [
        f"K={r['clusters']}: STALLED — the event loop did not turn for {stall['loop_silent_seconds']} s, "
        f"{stall['after_seconds']} s into the run, while {stall['phase']} ({r.get('ready', 0)} Ready); "
        f"peak RSS {mib(stall['peak_rss_mib'])} MiB",
        f"  reconciling (of {stall['samples']} stack samples): {stall['reconciling']}",
        f"  frames in 80% of the samples: {', '.join(stall['common_frames'])}",
        f"  reconcile rates meanwhile: {stall['reconcile_rates']}",
        "  the stack (clusterclass frames, outermost first):",
    ]
    notes += [f"    {frame}" for frame in stall["last_stack"]]
    return notes


def upgrade_notes(u: dict[str, Any], count: int) -> list[str]:
    seconds = u["all_upgraded_seconds"]
    total = sum(sum(v.values()) for v in u["writes"].values())
    notes = [
        f"  upgrade of all {count} to {u['version']}: "
        + (f"{seconds:.1f} s" if seconds is not None else f"NOT DONE ({u['upgraded']}/{count})")
        + f" (p50 {u['p50_seconds'] or 0:.1f} s, p90 {u['p90_seconds'] or 0:.1f} s per Cluster), "
        f"CPU {u['cpu_seconds']:.1f} s, {total} writes ({total / count:.1f} per Cluster), requests {u['verbs']}",
        "    writes per object: "
        + ", ".join(f"{kind} {per:g} ({u['objects'][kind]})" for kind, per in u["writes_per_object"].items()),
    ]
    notes += [f"    not upgraded: {name}: {waiting}" for name, waiting in list(u["not_upgraded"].items())[:10]]
    return notes


def report(results: Sequence[dict[str, Any]], *, markdown: bool) -> str:
    out: list[str] = []
    stalled = [r for r in results if "stalled" in r]
    results = [r for r in results if "stalled" not in r]
    if results:
        headers, rows = summary_rows(results)
        out += [
            "Time to Ready, memory and writes (each Cluster: 1 control-plane Machine, 2 MachinePools of 1, "
            "1 MachineDeployment of 1):",
            "",
            table(headers, rows, markdown=markdown),
            "",
        ]
    if stalled:
        out += [line for r in stalled for line in stalled_notes(r)] + [""]
    if not results:
        return "\n".join(out)

    names = sorted({name for r in results for name in r["controllers"]})
    names.sort(key=lambda n: -max(r["controllers"].get(n, {}).get("busy", 0.0) for r in results))
    if len(results) == 1 or not markdown:
        for r in results:
            out += [f"Per controller, K={r['clusters']}, until all Ready (busy: time the event loop ran its "
                    "reconciles; in reconcile: start to end, waits for the others included):", ""]  # fmt: skip
            out += [controller_table(r, names, markdown=markdown), ""]
    else:
        out += ["Reconciles / seconds the event loop ran them (errors) per controller, until all Ready:", ""]
        rows = [[name, *(controller_cell(r["controllers"].get(name)) for r in results)] for name in names]
        out += [table(["controller", *(f"K={r['clusters']}" for r in results)], rows, markdown=markdown), ""]

    kinds = sorted({kind for r in results for kind in r["writes"]})
    totals = {kind: max(sum(r["writes"].get(kind, {}).values()) for r in results) for kind in kinds}
    kinds.sort(key=lambda k: -totals[k])
    if len(results) == 1 or not markdown:
        for r in results:
            verbs = [v for v in WRITE_VERBS if any(v in r["writes"].get(k, {}) for k in kinds)]
            rows = []
            for kind in kinds:
                counts = r["writes"].get(kind, {})
                if counts:
                    rows.append([kind, *(counts.get(v, "") for v in verbs), sum(counts.values())])
            out += [f"Writes by kind, K={r['clusters']} (until all Ready):", ""]
            headers = ["kind", *(VERB_TITLES.get(v, v) for v in verbs), "total"]
            out += [table(headers, rows, markdown=markdown), ""]
    else:
        out += ["Writes by kind until all Ready (total, per Cluster):", ""]
        rows = []
        for kind in kinds:
            cells = []
            for r in results:
                total = sum(r["writes"].get(kind, {}).values())
                cells.append(f"{total} ({total / r['clusters']:.1f})" if total else "-")
            rows.append([kind, *cells])
        out += [table(["kind", *(f"K={r['clusters']}" for r in results)], rows, markdown=markdown), ""]

    for r in results:
        busy = sum(ctl["busy"] for ctl in r["controllers"].values())
        notes = [
            f"K={r['clusters']}: CPU {r['cpu_seconds']:.1f} s, of which the controllers' reconciles {busy:.1f} s; "
            f"requests by verb {r['verbs']}"
        ]
        if r.get("gc"):
            notes.append(
                f"  garbage collector (whole run): {sum(r['gc']['seconds']):.1f} s, by generation "
                f"{r['gc']['seconds']} s in {r['gc']['collections']} collections"
            )
        notes.append(
            f"  {r['create_seconds']:.2f} s to create the Clusters; {r['readiness_checks']} readiness checks; "
            f"stop {r['stop_seconds']:.1f} s; management objects {r['management_objects']}; "
            f"workload Pods {r['workload_pods']}"
        )
        settle = r["settle"]
        settle_writes = sum(sum(v.values()) for v in settle["writes"].values())
        settle_reconciles = sum(ctl["reconciles"] for ctl in settle["controllers"].values())
        notes.append(
            f"  in the {settle['seconds']:g} s after all Ready: {settle_writes} writes {settle['writes'] or ''}, "
            f"{settle_reconciles} reconciles"
        )
        if r.get("largest_objects"):
            notes.append(f"  largest object of each kind (bytes of JSON): {r['largest_objects']}")
        if "quiet_after_seconds" in r:
            after, until = r["quiet_after_seconds"], r["until_quiet"]
            requests = sum(v for k, v in until["verbs"].items() if k != "watch")
            went = f"quiet {after:.1f} s after settling" if after is not None else "never quiet (timed out)"
            notes.append(f"  {went}: {requests} requests before {until['verbs'] or ''}, writes {until['writes']}")
        if r.get("idle"):
            idle = r["idle"]
            idle_requests = sum(v for k, v in idle["verbs"].items() if k != "watch")
            notes.append(
                f"  idle {idle['seconds']:g} s (after settling and going quiet): {idle_requests} requests "
                f"{idle['verbs'] or ''}, "
                f"{sum(ctl['reconciles'] for ctl in idle['controllers'].values())} reconciles"
            )
        if r.get("upgrade"):
            notes += upgrade_notes(r["upgrade"], r["clusters"])
        verified = r["verify"]
        notes.append(
            f"  collect()+pending() check of the {verified['checked']} Ready Clusters: "
            f"{verified['disagreements']} not ready by it ({verified['seconds']:.2f} s)"
            + (f" {verified['not_ready_by_collect']}" if verified["disagreements"] else "")
        )
        for name, ctl in r["controllers"].items():
            if ctl["last_error"] and set(ctl["errors_by_type"]) - {"Conflict"}:  # a Conflict is a routine retry
                notes.append(f"  {name}: errors {ctl['errors_by_type']}, the last: {ctl['last_error'][:300]}")
        if r["log_warnings"]:
            until = r.get("log_warnings_until_ready", "?")
            notes.append(f"  log warnings/errors: {r['log_warnings']} ({until} of them until all Ready)")
            notes += [f"    {line}" for line in r["log_samples"]]
        if r["timed_out"]:
            notes.append(f"  TIMED OUT: {r['ready']}/{r['clusters']} Ready; waiting for: {r['not_ready_reasons']}")
            notes += [f"    {name}: {waiting}" for name, waiting in r["not_ready"].items()]
        if r.get("heap_by_file"):
            notes.append("  Python heap by file when all Ready (MiB, blocks):")
            notes += [f"    {size:7.1f} {count:9d}  {name}" for name, size, count in r["heap_by_file"]]
        out += notes
    return "\n".join(out)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clusters", type=int, nargs="+", default=[10, 100, 1000], metavar="K")
    parser.add_argument("--workers", type=int, default=10, help="topology controller workers (default 10)")
    parser.add_argument("--sim-workers", type=int, default=4, help="workers per simulated provider (default 4)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds to wait for all Ready, per K")
    parser.add_argument("--batch", type=int, default=0, help="create B Clusters at a time (default: all at once)")
    parser.add_argument("--poll", type=float, default=0.1, help="seconds between readiness rounds (default 0.1)")
    parser.add_argument("--settle", type=float, default=2.0, help="seconds to watch after all Ready (default 2)")
    parser.add_argument(
        "--idle", type=float, default=0, metavar="S", help="after settling, count requests over S idle seconds"
    )
    parser.add_argument(
        "--quiet",
        type=float,
        default=10,
        metavar="S",
        help="before the idle window, wait until no request but watches was made for S seconds (default 10; 0: not)",
    )
    parser.add_argument(
        "--idle-trace",
        metavar="FILE",
        help="write each request of the idle window to FILE.<K> (JSON lines): what a write changed, why a change "
        "check's kept answer was not found",
    )
    parser.add_argument(
        "--upgrade", metavar="VERSION", help="then upgrade every Cluster to VERSION (e.g. v1.29.0) and time it"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--progress", type=float, default=0, metavar="S", help="a progress line every S seconds")
    parser.add_argument(
        "--stall", type=float, default=60, metavar="S", help="end a run whose event loop is stuck S seconds (0: never)"
    )
    parser.add_argument(
        "--gc-threshold",
        type=gc_thresholds,
        metavar="G0,G1,G2",
        help="the garbage collector's thresholds instead of clusterclass's (700,10,10 is CPython's default)",
    )
    parser.add_argument("--tracemalloc", action="store_true", help="measure the Python heap (slow)")
    parser.add_argument("--profile", action="store_true", help="cProfile each run; the top functions to stderr")
    parser.add_argument(
        "--profile-out", metavar="FILE", help="cProfile each run and save the stats to FILE.<K> (for pstats)"
    )
    parser.add_argument("--markdown", action="store_true", help="Markdown tables (for the README)")
    parser.add_argument("--json", action="store_true", help="the raw results as JSON")
    parser.add_argument("--one", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one is not None:
        run_one(args, args.one)
        return
    if any(k < 1 for k in args.clusters):
        parser.error("--clusters: each K must be at least 1")
    results = [run_child(args, count) for count in args.clusters]
    if args.json:
        print(json.dumps(results, indent=2))
        return
    print(report(results, markdown=args.markdown))


if __name__ == "__main__":
    main()
