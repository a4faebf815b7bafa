"""``clusterclass run`` on a real kube-apiserver when its process dies: SIGKILLed mid-rollout, a leader lost under load.

The setting is :mod:`run_support`'s (and ``test_run_on_a_real_apiserver``'s): a kube-apiserver with RBAC, admission
webhooks and kube-controller-manager's garbage collector; ``clusterclass run`` as a subprocess under the token of its
ServiceAccount, serving the admission webhooks the apiserver calls (``failurePolicy: Fail``).

The simulated providers (core, kubeadm, Docker, with the workload clusters' Nodes) run in this test process, not in
``run --sim``. That is the layout of a real management cluster: Cluster API's core, kubeadm and Docker providers are
Deployments of their own, the machines and the workload clusters' API servers are outside any controller's process,
and a ``clusterclass run`` Pod that dies takes down the topology and ClusterClass controllers and its webhooks, and
nothing else. ``run --sim`` keeps its workload clusters in memory (``WorkloadClusters()`` without a state
directory), so a SIGKILL of it would also wipe every Node of every workload cluster: the disappearance of the
infrastructure, not a controller crash, and nothing a topology controller is expected to survive. The conversion
webhook of the CRDs stays the harness's, as upstream's core manager (here: the providers' side) serves it for
Cluster API's kinds; the admission webhooks for Clusters, ClusterClasses and MachinePools are ``run``'s and go down
with it, so while it is dead the providers' MachinePool writes and the user's Cluster writes are refused, as they
would be in a cluster whose webhook Service has no ready endpoint.

The kill test runs one replica without leader election (its docstring says why); the failover test runs two with
it (fast timings, :data:`run_support.ELECTION_FLAGS`). The failover test found that a topology controller killed
between the writes of a create leaked what it had made first (a control plane's machine template, a MachinePool's
infrastructure pool and bootstrap config); the next reconcile now deletes such leftovers before creating
(``LiveLeftovers`` in :mod:`clusterclass.topology.reconcile`).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import random
import re
import time
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from run_support import (
    CAPI,
    ELECTION_FLAGS,
    LEASE_SECONDS,
    Installed,
    RunProcess,
    as_yaml,
    kubectl,
    lease_holder,
    quick_start,
    wait,
)
from support.invariants import violations
from support.real_apiserver import local_get

from clusterclass.api.objects import Obj, dig, labels_of, name_of
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.describe.objects import ClusterObjects
from clusterclass.describe.readiness import pending
from clusterclass.kube.client import Client
from clusterclass.sim import Simulation
from clusterclass.sim.timing import NONE, Timing, profile

pytestmark = pytest.mark.timeout(600)

INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
CONTROL_PLANE = "controlplane.cluster.x-k8s.io/v1beta1"
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"
FROM, TO = "v1.28.0", "v1.29.0"
#: what a converged namespace is read from (:func:`left_to_do`)
READ: tuple[tuple[str, str], ...] = (
    (CAPI, "Machine"),
    (CAPI, "MachineDeployment"),
    (CAPI, "MachineSet"),
    (CAPI, "MachinePool"),
    (CONTROL_PLANE, "KubeadmControlPlane"),
    (INFRA, "DockerCluster"),
    (INFRA, "DockerMachinePool"),
)
KILLS = 20
#: how long after a process is ready it is killed: a random moment in this range, then as soon as a reconcile is in
#: flight (if one starts within :data:`IN_FLIGHT_PATIENCE` seconds)
KILL_AFTER = (0.0, 1.5)
IN_FLIGHT_PATIENCE = 1.5
#: the kill test's MachineDeployment rolls one Machine at a time: its replicas, and a machine's container taking
#: 3 s or a little more to start, make the rollout outlast the kills
KILLED_MD_REPLICAS = 10
KILLED_TIMING = ("vm=3~0.5",)
#: the Clusters of the failover test: half are up before the load, half are created in it
FLEET = 12


# --- what is left to do --------------------------------------------------------------------------------------


async def left_to_do(client: Client, namespace: str, version: str) -> list[str]:
    """What still differs from "every Cluster of ``namespace`` is Ready at ``version``, with every Machine and pool
    instance at it, and every invariant of :mod:`support.invariants` holds" (empty: done)."""
    clusters = (await client.list(CAPI, "Cluster", namespace=namespace)).items
    lists = await asyncio.gather(*(client.list(api, kind, namespace=namespace) for api, kind in READ))
    everything = [obj for found in lists for obj in found.items]
    left: list[str] = []
    for cluster in clusters:
        name = name_of(cluster)
        if dig(cluster, "spec", "topology", "version") != version:
            left.append(f"{name}: topology at {dig(cluster, 'spec', 'topology', 'version')}")
        objects = ClusterObjects.of(cluster, everything)
        left += [f"{name}: {what}" for what in pending(objects)]
        left += [
            f"{name}: Machine {name_of(m)} at {dig(m, 'spec', 'version')}, Node {dig(m, 'status', 'nodeRef', 'name')}"
            for m in objects.machines
            if dig(m, "spec", "version") != (None if pool_instance(m) else version) or not dig(m, "status", "nodeRef")
        ]
        for pool in objects.machine_pools:
            docker_pool = objects.lookup(dig(pool, "spec", "template", "spec", "infrastructureRef"))
            instances = dig(docker_pool, "status", "instances") if docker_pool else None
            versions = sorted(str(i.get("version")) for i in instances or [])
            if versions != [version] * int(dig(pool, "spec", "replicas") or 0):
                left.append(f"{name}: MachinePool {name_of(pool)} has instances at {versions}")
    if not clusters:
        left.append("no Clusters")
    return left or await violations(client, namespace)


def pool_instance(machine: Obj) -> bool:
    """A MachinePool's instance has a Machine without a version of its own (its DockerMachinePool has it)."""
    return any(ref.get("kind") == "MachinePool" for ref in dig(machine, "metadata", "ownerReferences") or [])


async def duplicates(client: Client, namespace: str) -> list[str]:
    """Any Cluster with more than one control plane, infrastructure cluster, or worker object per topology name
    (the invariants check the workers too; this names the control plane and its infrastructure as well)."""
    found = []
    for api_version, kind, label in (
        (CONTROL_PLANE, "KubeadmControlPlane", None),
        (INFRA, "DockerCluster", None),
        (CAPI, "MachineDeployment", "topology.cluster.x-k8s.io/deployment-name"),
        (CAPI, "MachinePool", "topology.cluster.x-k8s.io/pool-name"),
    ):
        items = (await client.list(api_version, kind, namespace=namespace)).items
        counts = Counter((labels_of(o).get(CLUSTER_NAME), labels_of(o).get(label) if label else "") for o in items)
        found += [f"{n} {kind}s for {key}" for key, n in counts.items() if n != 1]
    return found


def forbidden(run: RunProcess) -> list[str]:
    return re.findall(r".*is forbidden.*", run.log())[:5]


# --- the providers, in this process ----------------------------------------------------------------------------


@dataclass
class Providers:
    """The simulated providers of one namespace on the admin client, as the environment around ``clusterclass run``."""

    client: Client
    manager: Manager
    simulation: Simulation

    async def close(self) -> None:
        await self.manager.stop()
        await self.simulation.close()
        await self.client.close()


@pytest.fixture
async def fast_providers(installed: Installed) -> AsyncIterator[Providers]:
    async with providers_in(installed, "killed", profile("fast", seed=3, delays=KILLED_TIMING)) as found:
        yield found


@pytest.fixture
async def instant_providers(installed: Installed) -> AsyncIterator[Providers]:
    async with providers_in(installed, "failover-load", NONE) as found:
        yield found


@contextlib.asynccontextmanager
async def providers_in(installed: Installed, namespace: str, timing: Timing) -> AsyncIterator[Providers]:
    """The simulated providers of a new ``namespace``, watching it only, on the admin's client."""
    await asyncio.to_thread(kubectl, installed.api.kubeconfig, "create", "namespace", namespace)
    client = installed.api.client()
    manager = Manager(client, namespace=namespace)
    simulation = Simulation(manager, timing=timing)
    providers = Providers(client, manager, simulation)
    try:
        await simulation.setup()
        await manager.start()
        yield providers
    finally:
        await providers.close()


# --- helpers -------------------------------------------------------------------------------------------------


@dataclass
class Incarnation:
    """One ``clusterclass run`` of the kill test: how long after the last one's kill it was ready (reconciling), and
    what it was doing when killed."""

    restarted_in: float
    reconciles: float = 0.0
    writes: int = 0
    in_flight: bool = False
    rolling: bool = False


@dataclass
class Runs:
    """Every ``clusterclass run`` a test started, stopped at the end whatever happened."""

    started: list[RunProcess] = field(default_factory=list)

    def start(
        self, installed: Installed, name: str, *, ports: tuple[int, int, int] | None = None, elect: bool = True
    ) -> RunProcess:
        run = RunProcess(installed, name, *(ELECTION_FLAGS if elect else ()), ports=ports)
        self.started.append(run)
        return run

    def stop(self) -> None:
        for run in self.started:
            run.stop()


def reconciles(run: RunProcess) -> float:
    """Reconciles of Clusters the topology controller finished, whatever their result."""
    return sum(
        run.metric("controller_runtime_reconcile_total", controller="topology/cluster", result=result)
        for result in ("success", "error", "requeue", "requeue_after")
    )


def writes(run: RunProcess) -> int:
    """The requests ``run`` made that change something (POST, PUT, PATCH, DELETE; Events too), whatever the answer."""
    _, text = local_get(run.metrics_port, "/metrics")
    found = re.findall(
        r'^rest_client_requests_total\{[^}]*method="(?:POST|PUT|PATCH|DELETE)"[^}]*\} (\S+)$', text, re.M
    )
    return int(sum(float(value) for value in found))


def in_flight(run: RunProcess) -> bool:
    """Whether a reconcile of any controller is running: one that waits on the API server (one that does not runs to
    its end before the metrics can be read, and a SIGKILL cannot cut it short either)."""
    _, text = local_get(run.metrics_port, "/metrics")
    return any(float(v) > 0 for v in re.findall(r"^controller_runtime_active_workers\{[^}]*\} (\S+)$", text, re.M))


def kill_in_flight(run: RunProcess, patience: float) -> bool:
    """SIGKILL ``run`` as soon as a reconcile is in flight, or after ``patience`` seconds; whether one was."""
    deadline = time.monotonic() + patience
    caught = False
    while not caught and time.monotonic() < deadline:
        caught = in_flight(run)
        if not caught:
            time.sleep(0.02)
    run.kill()
    return caught


def busy(run: RunProcess) -> bool:
    """Whether the topology controller has a reconcile running or waiting."""
    labels = {"controller": "topology/cluster"}
    return (
        run.metric("controller_runtime_active_workers", **labels) > 0
        or run.metric("workqueue_depth", name="topology/cluster", **labels) > 0
    )


async def eventually_done(client: Client, namespace: str, version: str, guard: float, runs: list[RunProcess]) -> None:
    deadline = time.monotonic() + guard
    left = ["not checked"]
    while time.monotonic() < deadline:
        for run in runs:
            assert run.popen.poll() is None, f"clusterclass run exited ({run.popen.returncode}):\n{run.log()[-4000:]}"
        left = await left_to_do(client, namespace, version)
        if not left:
            return
        await asyncio.sleep(1.0)
    tail = runs[-1].log()[-3000:] if runs else ""
    raise AssertionError(f"not done after {guard:g}s: {left[:20]}\n{tail}")


async def patch_version(installed: Installed, namespace: str, names: list[str], version: str) -> None:
    """The user's upgrade: ``kubectl patch`` of each Cluster's topology version (through the webhooks)."""
    patch = json.dumps({"spec": {"topology": {"version": version}}})
    await asyncio.gather(
        *(
            asyncio.to_thread(
                kubectl,
                installed.api.kubeconfig,
                "-n",
                namespace,
                "patch",
                "cluster",
                name,
                "--type=merge",
                "-p",
                patch,
            )
            for name in names
        )
    )


# --- the tests -----------------------------------------------------------------------------------------------


async def test_run_sigkilled_at_twenty_moments_of_a_rollout_finishes_it_with_every_invariant(
    installed: Installed, fast_providers: Providers
) -> None:
    """The quick start comes up at v1.28.0 under one ``clusterclass run``; its version is bumped to v1.29.0 (the
    control plane rolls, then the MachineDeployment and both MachinePools); while that rolls, the process is SIGKILLed
    20 times, each at a random moment after it started reconciling (a random delay, then the first moment a reconcile
    waits on the API server, if one does within 1.5 s), and a new one started on the same ports right after. The last
    one brings the upgrade to its end: every Machine and pool instance at v1.29.0, the Cluster Ready, every invariant
    of :mod:`support.invariants`, one control plane and infrastructure cluster, nothing refused by RBAC.

    One replica, without leader election: a Deployment of one replica restarting its crashed container. With
    ``--leader-elect`` the restarted process (a new identity, as a new container has) would first wait out the killed
    one's Lease — a full lease duration from its own first read of it, as client-go's elector does — and idle some
    8 s per kill; that takeover after a SIGKILL is what the failover test below and ``test_run_on_a_real_apiserver``'s
    standby test measure. Without it the new process reconciles as soon as its caches have listed: the shortest gap
    between the dead writer and the next, where a half-done reconcile of the dead one is found soonest.

    The providers take the ``fast`` profile's step durations (a machine takes a few seconds), so the rollout spans
    the kills; the topology controller's own work is not slowed down.
    """
    namespace = "killed"
    admin = installed.api.kubeconfig
    client = fast_providers.client
    runs = Runs()
    try:
        run = runs.start(installed, "run-00", elect=False)
        await asyncio.to_thread(wait, run.ready, "clusterclass run to be ready", process=run)
        await asyncio.to_thread(installed.register_webhooks, run.webhook_port)
        objects = quick_start(namespace)
        cluster = next(o for o in objects if o["kind"] == "Cluster")
        cluster["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = KILLED_MD_REPLICAS
        await asyncio.to_thread(kubectl, admin, "apply", "-f", "-", stdin=as_yaml(objects))
        await eventually_done(client, namespace, FROM, 120, [run])

        started = time.monotonic()
        await patch_version(installed, namespace, ["demo"], TO)
        rng = random.Random(20)
        incarnations = [Incarnation(restarted_in=0.0)]
        for kill in range(KILLS):
            await asyncio.sleep(rng.uniform(*KILL_AFTER))
            last = incarnations[-1]
            last.reconciles = await asyncio.to_thread(reconciles, run)
            last.writes = await asyncio.to_thread(writes, run)
            last.in_flight = await asyncio.to_thread(kill_in_flight, run, IN_FLIGHT_PATIENCE)
            last.rolling = bool(await left_to_do(client, namespace, TO))  # not done after the kill: not before it
            killed_at = time.monotonic()
            run = runs.start(installed, f"run-{kill + 1:02}", ports=run.ports, elect=False)
            await asyncio.to_thread(wait, run.ready, f"run {kill + 1} to be ready", 60.0, run)
            incarnations.append(Incarnation(time.monotonic() - killed_at))

        await eventually_done(client, namespace, TO, 180, [run])
        rollout = time.monotonic() - started
        killed = incarnations[:-1]
        gaps = sorted(i.restarted_in for i in incarnations[1:])
        summary = (
            f"{KILLS} SIGKILLs in a {rollout:.0f}s rollout: {sum(i.rolling for i in killed)} before it was done, "
            f"{sum(i.in_flight for i in killed)} with a reconcile in flight, "
            f"{sum(i.reconciles > 0 for i in killed)} after the process had finished at least one reconcile "
            f"(the killed processes had made {sum(i.writes for i in killed)} writes); "
            f"each next process reconciling {gaps[0]:.1f}-{gaps[-1]:.1f}s (median {gaps[len(gaps) // 2]:.1f}s) after "
            "the kill"
        )
        print(summary)
        assert all(i.rolling for i in killed), summary  # every kill landed inside the rollout
        assert sum(i.reconciles > 0 for i in killed) >= KILLS // 2, summary
        assert any(i.in_flight for i in killed), summary  # (5 to 8 of 20 in every run so far)
        assert await duplicates(client, namespace) == []
        for each in runs.started:
            assert not forbidden(each), forbidden(each)
        assert await asyncio.to_thread(run.terminate) == 0
    finally:
        runs.stop()


async def test_a_standby_takes_over_from_a_leader_killed_under_load_and_finishes_every_cluster(
    installed: Installed, instant_providers: Providers
) -> None:
    """Two replicas. Half of a fleet of Clusters is up at v1.28.0; then, at once, those are upgraded to v1.29.0 and
    the other half created at v1.29.0 — the leader's queue full of creations and upgrades. In the middle of that (some
    new Clusters have their topology objects and some not, some upgrades are under way and none done) the leader is
    SIGKILLed. The standby takes the Lease once it expires and finishes all of it: every Cluster Ready at its version,
    each with one control plane, one infrastructure cluster and one object per topology worker, and every invariant
    holding.

    The providers are instant (no step delays): the load is the Clusters' number.
    """
    namespace = "failover-load"
    admin = installed.api.kubeconfig
    client = instant_providers.client
    old = [f"old-{i}" for i in range(FLEET // 2)]
    new = [f"new-{i}" for i in range(FLEET - FLEET // 2)]
    runs = Runs()
    try:
        first = runs.start(installed, "leader")
        await asyncio.to_thread(wait, first.leading, "the first replica to lead", process=first)
        second = runs.start(installed, "standby")
        await asyncio.to_thread(wait, second.ready, "the standby to be ready", process=second)
        await asyncio.to_thread(installed.register_webhooks, first.webhook_port)
        await asyncio.to_thread(kubectl, admin, "apply", "-f", "-", stdin=as_yaml(fleet(namespace, old, FROM)))
        await eventually_done(client, namespace, FROM, 150, [first, second])
        assert not second.leading() and reconciles(second) == 0  # the standby's controllers never ran

        load_started = time.monotonic()
        await asyncio.gather(
            patch_version(installed, namespace, old, TO),
            asyncio.to_thread(
                kubectl, admin, "apply", "-f", "-", stdin=as_yaml(fleet(namespace, new, TO, classes=False))
            ),
        )
        middle = await in_the_middle(client, namespace, old, new, load_started)
        busy_at_kill = await asyncio.to_thread(busy, first)
        holder = await asyncio.to_thread(lease_holder, installed)
        await asyncio.to_thread(first.kill)
        killed_at = time.monotonic()
        # the Service's endpoints: the standby serves the webhooks too, and is the only ready one now
        await asyncio.to_thread(installed.register_webhooks, second.webhook_port)
        await asyncio.to_thread(wait, second.leading, "the standby to take the Lease", 30.0, second)
        took = time.monotonic() - killed_at
        assert took <= LEASE_SECONDS + 3, f"the standby led {took:.1f}s after the leader died"
        assert await asyncio.to_thread(lease_holder, installed) not in ("", holder)

        await eventually_done(client, namespace, TO, 240, [second])
        finished = time.monotonic() - killed_at
        assert await duplicates(client, namespace) == []
        assert reconciles(second) > 0
        print(
            f"{FLEET} Clusters; leader SIGKILLed {middle}, its queue busy: {busy_at_kill}; the standby led "
            f"{took:.1f}s later (lease {LEASE_SECONDS:g}s) and finished {finished:.0f}s after the kill "
            f"({time.monotonic() - load_started:.0f}s of load)"
        )
        for each in runs.started:
            assert not forbidden(each), forbidden(each)
        assert await asyncio.to_thread(second.terminate) == 0
    finally:
        runs.stop()


def fleet(namespace: str, names: list[str], version: str, *, classes: bool = True) -> list[Obj]:
    """The quick start's ClusterClass and templates (with ``classes``) and one Cluster of it per name, at
    ``version``, with one machine in its control plane and in each worker (the load is the Clusters' number)."""
    objects = quick_start(namespace)
    cluster = next(o for o in objects if o["kind"] == "Cluster")
    topology = cluster["spec"]["topology"]
    topology["version"] = version
    topology["controlPlane"]["replicas"] = 1
    for worker in [*topology["workers"]["machineDeployments"], *topology["workers"]["machinePools"]]:
        worker["replicas"] = 1
    shared = [o for o in objects if o["kind"] != "Cluster"] if classes else []
    clusters = []
    for name in names:
        copied = copy.deepcopy(cluster)
        copied["metadata"]["name"] = name
        clusters.append(copied)
    return [*shared, *clusters]


@dataclass
class Middle:
    """Where the load was when the leader was killed."""

    at: float
    new_with_control_plane: int
    old_upgrading: int

    def __str__(self) -> str:
        return (
            f"{self.at:.1f}s into the load, {self.new_with_control_plane} new Clusters with a control plane, "
            f"{self.old_upgrading} control planes of the old ones told {TO}, no Cluster done"
        )


async def in_the_middle(client: Client, namespace: str, old: list[str], new: list[str], since: float) -> Middle:
    """Once the leader has started on both halves of the load (a new Cluster has its control plane, an old control
    plane is told the new version) and finished none of it."""
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        clusters = {name_of(c): c for c in (await client.list(CAPI, "Cluster", namespace=namespace)).items}
        control_planes = {
            labels_of(k).get(CLUSTER_NAME): k
            for k in (await client.list(CONTROL_PLANE, "KubeadmControlPlane", namespace=namespace)).items
        }
        created = sum(dig(clusters.get(n), "spec", "controlPlaneRef") is not None for n in new)
        upgrading = sum(dig(control_planes.get(n), "spec", "version") == TO for n in old)
        if created and upgrading:
            left = await left_to_do(client, namespace, TO)
            finished = [n for n in [*old, *new] if not any(line.startswith(f"{n}:") for line in left)]
            assert not finished, f"the load was over for {finished} before the leader could be killed in it"
            return Middle(time.monotonic() - since, created, upgrading)
        await asyncio.sleep(0.1)
    raise AssertionError("the leader did not start on the load within 60s")
