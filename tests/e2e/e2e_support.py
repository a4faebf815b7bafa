"""End-to-end tests of the controllers with the simulated providers: one test's management cluster.

:class:`SimEnv` runs what ``clusterclass up`` runs — the topology and ClusterClass controllers and
every simulated provider on one manager — watching one namespace of its own, against the embedded
store or a real kube-apiserver. The test writes through a direct client, as a user with kubectl
would, and waits for what upstream's e2e helpers wait for (:func:`clusterclass.describe.readiness.pending`).

Restarting (:meth:`SimEnv.restart`) stops the controllers and providers and starts new ones on the
same management cluster and the same simulated workload clusters: what a restart of ``up`` on its
state file does.
"""

from __future__ import annotations

import asyncio
import copy
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterclass.api.objects import Obj, dig, name_of, namespace_of
from clusterclass.controllers import ControllerOptions, Controllers
from clusterclass.describe.collect import collect
from clusterclass.describe.objects import ClusterObjects
from clusterclass.describe.readiness import pending
from clusterclass.kube.client import Client
from clusterclass.kube.errors import NotFound
from clusterclass.kube.faults import FaultRates, FaultyClient
from clusterclass.plan.loader import load
from clusterclass.sim import Simulation
from clusterclass.sim.timing import NONE, Timing
from clusterclass.sim.workload import WorkloadCluster, WorkloadClusters
from clusterclass.up.example import example_objects

CAPI = "cluster.x-k8s.io/v1beta1"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta1"
CONTROL_PLANE = "controlplane.cluster.x-k8s.io/v1beta1"
UPSTREAM_QUICK_START = (
    Path(__file__).resolve().parents[3] / "shared" / "upstream" / "examples" / "clusterclass-quick-start.yaml"
)

#: a guard, not a speed check: how long a wait may take before the test fails
GUARD = 60.0

#: every kind the providers and the topology controller write, for "what changed" checks
WATCHED_KINDS: tuple[tuple[str, str], ...] = (
    (CAPI, "Cluster"),
    (CAPI, "ClusterClass"),
    (CAPI, "MachineDeployment"),
    (CAPI, "MachineSet"),
    (CAPI, "Machine"),
    (CAPI, "MachinePool"),
    (CAPI, "MachineHealthCheck"),
    (CONTROL_PLANE, "KubeadmControlPlane"),
    (BOOTSTRAP, "KubeadmConfig"),
    (BOOTSTRAP, "KubeadmConfigTemplate"),
    (INFRA, "DockerCluster"),
    (INFRA, "DockerMachine"),
    (INFRA, "DockerMachinePool"),
    (INFRA, "DockerMachineTemplate"),
    ("v1", "Secret"),
)


async def eventually(
    check: Callable[[], Awaitable[bool]], *, what: str = "the condition", guard: float = GUARD
) -> None:
    try:
        async with asyncio.timeout(guard):
            while not await check():
                await asyncio.sleep(0.02)
    except TimeoutError:
        raise AssertionError(f"timed out after {guard:g}s waiting for {what}") from None


def in_namespace(objects: list[Obj], namespace: str) -> list[Obj]:
    moved = []
    for obj in objects:
        obj = copy.deepcopy(obj)
        obj["metadata"]["namespace"] = namespace
        moved.append(obj)
    return moved


#: the example the tests change, field by field, in v1beta1 (the v1beta2 example has tests of its own)
EXAMPLE_VERSION = "v1beta1"


def example_class(version: str = EXAMPLE_VERSION) -> list[Obj]:
    return [o for o in example_objects(version) if o["kind"] != "Cluster"]


def example_cluster(name: str = "demo", *, version: str = EXAMPLE_VERSION, **topology: Any) -> Obj:
    cluster = copy.deepcopy(next(o for o in example_objects(version) if o["kind"] == "Cluster"))
    cluster["metadata"]["name"] = name
    cluster["spec"]["topology"].update(topology)
    return cluster


def upstream_quick_start() -> list[Obj]:
    return list(load([str(UPSTREAM_QUICK_START)]).objects)


class SimEnv:
    """One test's management cluster, controllers and simulated providers (module doc)."""

    def __init__(self, client: Client, namespace: str, *, timing: Timing | None = None, seed: int = 11) -> None:
        self.client = client
        self.namespace = namespace
        self.timing = timing or NONE
        self.seed = seed
        self.workloads = WorkloadClusters()
        #: the simulation's pool_max_surge (None: CAPD's all replacements at once)
        self.pool_max_surge: int | None = None
        self.controllers: Controllers | None = None
        self.simulation: Simulation | None = None
        #: faults the controllers' and providers' client injects (None: none); the test's own client has none
        self.faults: FaultRates | None = None
        self.faulty: FaultyClient | None = None
        self._runs = 0

    async def start(self) -> SimEnv:
        self._runs += 1
        rng = random.Random(self.seed * 1000 + self._runs)
        client: Client = self.client
        if self.faults is not None:
            self.faulty = client = FaultyClient(self.client, self.faults, rng=random.Random(rng.random()))
        self.controllers = Controllers(
            client,
            ControllerOptions(namespace=self.namespace, rng=random.Random(rng.random()), topology_workers=4),
        )
        self.simulation = Simulation(
            self.controllers.manager,
            workloads=self.workloads,
            timing=self.timing,
            rng=random.Random(rng.random()),
            pool_max_surge=self.pool_max_surge,
        )
        await self.simulation.setup()
        await self.controllers.start()
        return self

    async def stop(self) -> None:
        """Stop the controllers and providers; the management and workload clusters stay."""
        if self.controllers is not None:
            await self.controllers.stop()
            self.controllers = None

    async def restart(self) -> SimEnv:
        await self.stop()
        return await self.start()

    async def close(self) -> None:
        await self.stop()
        await self.workloads.close()

    # -- writing, as a user would ------------------------------------------------------------------

    async def apply(self, *objects: Obj) -> list[Obj]:
        written = []
        for obj in in_namespace(list(objects), self.namespace):
            written.append(await self.client.apply(obj, field_manager="e2e-test", force=True))
        return written

    async def apply_example(self, *clusters: Obj) -> None:
        await self.apply(*example_class())
        await self.apply(*(clusters or (example_cluster(),)))

    async def patch(self, api_version: str, kind: str, name: str, patch: Obj) -> Obj:
        return await self.client.patch(api_version, kind, name, patch, namespace=self.namespace)

    async def patch_topology(self, name: str, topology: Obj) -> Obj:
        return await self.patch(CAPI, "Cluster", name, {"spec": {"topology": topology}})

    # -- reading -----------------------------------------------------------------------------------

    async def get(self, api_version: str, kind: str, name: str) -> Obj:
        return await self.client.get(api_version, kind, name, namespace=self.namespace)

    async def find(self, api_version: str, kind: str, name: str) -> Obj | None:
        try:
            return await self.get(api_version, kind, name)
        except NotFound:
            return None

    async def list(self, api_version: str, kind: str, **labels: str) -> list[Obj]:
        selector = ",".join(f"{k}={v}" for k, v in labels.items()) or None
        return (await self.client.list(api_version, kind, namespace=self.namespace, label_selector=selector)).items

    async def objects(self, name: str = "demo") -> ClusterObjects:
        return await collect(self.client, namespace=self.namespace, name=name)

    async def pending(self, name: str = "demo") -> list[str]:
        try:
            return pending(await self.objects(name))
        except NotFound:
            return [f"Cluster {name} does not exist"]

    async def wait_ready(self, name: str = "demo", *, guard: float = GUARD) -> ClusterObjects:
        last: list[str] = []

        async def ready() -> bool:
            nonlocal last
            last = await self.pending(name)
            return not last

        try:
            await eventually(ready, what=f"Cluster {name} to be ready", guard=guard)
        except AssertionError as failure:
            raise AssertionError(f"{failure}; still waiting for: {last}; {await self.diagnosis(name)}") from None
        return await self.objects(name)

    async def settled_ready(self, name: str = "demo") -> ClusterObjects:
        """Ready, and then nothing changing for a second: a change just written has been acted on."""
        await self.wait_ready(name)
        await self.settled()
        return await self.wait_ready(name)

    async def diagnosis(self, name: str = "demo") -> str:
        """What a failing wait reports: the controllers' last errors and each pool's Nodes."""
        lines = []
        if self.controllers is not None:
            lines.append(f"topology last error: {self.controllers.topology.controller.stats.last_error!r}")
        if self.simulation is not None:
            for provider in self.simulation.providers:
                if provider.controller.stats.last_error:
                    lines.append(f"{provider.name} last error: {provider.controller.stats.last_error!r}")
        workload = self.workloads.get(self.namespace, name)
        for pool in await self.list(CAPI, "MachinePool"):
            refs = [str(r["name"]) for r in dig(pool, "status", "nodeRefs") or []]
            kubelets = [
                dig(workload.node(r), "status", "nodeInfo", "kubeletVersion") if workload is not None else None
                for r in refs
            ]
            lines.append(
                f"{name_of(pool)}: nodeRefs {list(zip(refs, kubelets, strict=True))}, status {pool.get('status')}"
            )
        for docker_pool in await self.list(INFRA, "DockerMachinePool"):
            lines.append(f"{name_of(docker_pool)}: spec {docker_pool.get('spec')}, status {docker_pool.get('status')}")
        for machine in await self.list(INFRA, "DockerMachine"):
            lines.append(
                f"{name_of(machine)}: {machine['metadata'].get('annotations')} {machine.get('status', {}).get('ready')}"
            )
        return "\n".join(lines)

    def workload(self, name: str = "demo") -> WorkloadCluster:
        found = self.workloads.get(self.namespace, name)
        assert found is not None, f"no workload cluster for {name}"
        return found

    async def pool(self, topology_name: str, cluster: str = "demo") -> Obj:
        pools = await self.list(CAPI, "MachinePool", **{"topology.cluster.x-k8s.io/pool-name": topology_name})
        mine = [p for p in pools if dig(p, "spec", "clusterName") == cluster]
        assert len(mine) == 1, f"expected one MachinePool {topology_name}, found {[name_of(p) for p in mine]}"
        return mine[0]

    async def deployment(self, topology_name: str, cluster: str = "demo") -> Obj:
        found = await self.list(
            CAPI, "MachineDeployment", **{"topology.cluster.x-k8s.io/deployment-name": topology_name}
        )
        mine = [d for d in found if dig(d, "spec", "clusterName") == cluster]
        assert len(mine) == 1
        return mine[0]

    def pool_nodes(self, pool: Obj, cluster: str = "demo") -> list[Obj]:
        workload = self.workload(cluster)
        nodes = []
        for ref in dig(pool, "status", "nodeRefs") or []:
            node = workload.node(str(ref["name"]))
            assert node is not None, f"nodeRef {ref['name']} of {name_of(pool)} names no Node"
            nodes.append(node)
        return nodes

    async def resource_versions(self) -> dict[tuple[str, str], str]:
        """The resourceVersion of every object of :data:`WATCHED_KINDS` in the namespace."""
        versions = {}
        for api_version, kind in WATCHED_KINDS:
            for obj in await self.list(api_version, kind):
                versions[(kind, name_of(obj))] = str(dig(obj, "metadata", "resourceVersion"))
        return versions

    async def settled(self, quiet: float = 1.0) -> dict[tuple[str, str], str]:
        """Wait until nothing in the namespace changed for ``quiet`` seconds; the resourceVersions then."""
        before = await self.resource_versions()
        while True:
            await asyncio.sleep(quiet)
            now = await self.resource_versions()
            if now == before:
                return now
            before = now

    def reconcile_errors(self) -> dict[str, dict[str, int]]:
        assert self.simulation is not None
        return {
            p.name: dict(p.controller.stats.errors_by_type)
            for p in self.simulation.providers
            if p.controller.stats.error
        }


def names(objects: list[Obj]) -> list[str]:
    return sorted(name_of(o) for o in objects)


def keys(objects: list[Obj]) -> list[tuple[str, str]]:
    return sorted((namespace_of(o), name_of(o)) for o in objects)


@dataclass(frozen=True)
class Change:
    """One watch event: its resourceVersion (the order of writes), what happened, to what."""

    resource_version: int
    type: str
    kind: str
    name: str
    deleting: bool


class Recorder:
    """Every change to some kinds in a namespace, in the order the API server made them (module doc)."""

    def __init__(self, client: Client, namespace: str, kinds: list[tuple[str, str]]) -> None:
        self.client = client
        self.namespace = namespace
        self.kinds = kinds
        self.changes: list[Change] = []
        self._tasks: list[asyncio.Task[None]] = []

    async def __aenter__(self) -> Recorder:
        for api_version, kind in self.kinds:
            listed = await self.client.list(api_version, kind, namespace=self.namespace)
            self._tasks.append(asyncio.ensure_future(self._follow(api_version, kind, listed.resource_version)))
        return self

    async def _follow(self, api_version: str, kind: str, version: str) -> None:
        async for event in self.client.watch(api_version, kind, namespace=self.namespace, resource_version=version):
            obj = event["object"]
            if event["type"] == "BOOKMARK":
                continue
            self.changes.append(
                Change(
                    int(dig(obj, "metadata", "resourceVersion") or 0),
                    event["type"],
                    kind,
                    name_of(obj),
                    bool(dig(obj, "metadata", "deletionTimestamp")),
                )
            )

    async def __aexit__(self, *exc: object) -> None:
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)

    def ordered(self) -> list[Change]:
        return sorted(self.changes, key=lambda change: change.resource_version)

    def first_deleting(self, kind: str) -> int | None:
        """The resourceVersion at which the first object of ``kind`` started deleting (or went)."""
        found = [c.resource_version for c in self.changes if c.kind == kind and (c.deleting or c.type == "DELETED")]
        return min(found) if found else None

    def last_deleted(self, kind: str) -> int | None:
        found = [c.resource_version for c in self.changes if c.kind == kind and c.type == "DELETED"]
        return max(found) if found else None
