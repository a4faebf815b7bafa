"""Upgrades end to end: the control plane first, then the workers, as the topology's sequencing says (spec §4).

The simulated providers roll for real: KCP replaces control-plane Machines one at a time, MachineDeployments
roll Machines over a new MachineSet, DockerMachinePools create all replacements at once and drop the old
instances as the new ones become ready. A sampler reads the management objects and the workload cluster's
Nodes every few milliseconds (each sample is one consistent moment: everything runs on this event loop),
and the tests check their invariants on every sample:

- no worker takes the new version before the control plane reports it (``status.version``);
- at most ``topology.cluster.x-k8s.io/upgrade-concurrency`` MachinePools upgrade at once;
- deferred (``defer-upgrade``) and held (``hold-upgrade-sequence``) pools keep the old version until released;
- in the end every MachinePool Node's kubelet is at the new version.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest
from e2e_support import CAPI, CONTROL_PLANE, INFRA, SimEnv, eventually, example_cluster

from clusterclass.api.objects import Obj, dig, labels_of
from clusterclass.sim.timing import NONE, Step

OLD, NEW = "v1.28.0", "v1.29.0"
POOL_LABEL = "topology.cluster.x-k8s.io/pool-name"
DEPLOYMENT_LABEL = "topology.cluster.x-k8s.io/deployment-name"


def small_cluster(**topology: object) -> Obj:
    cluster = example_cluster(
        controlPlane={"replicas": 1},
        workers={
            "machineDeployments": [{"class": "default-worker", "name": "md-0", "replicas": 1}],
            "machinePools": [
                {"class": "default-pool", "name": "mp-0", "replicas": 2},
                {"class": "large-pool", "name": "mp-1", "replicas": 1},
            ],
        },
    )
    cluster["spec"]["topology"].update(topology)
    return cluster


@dataclass
class Sample:
    control_plane_version: str | None
    #: topology name → (spec version, every nodeRef Node at it and all replicas ready)
    pools: dict[str, tuple[str | None, bool]]
    deployments: dict[str, str | None]


@dataclass
class Sampler:
    env: SimEnv
    samples: list[Sample] = field(default_factory=list)

    async def sample(self) -> Sample:
        # the workers first, the control plane last: against a real kube-apiserver these are separate
        # requests, and the control plane's status.version only ever moves forward, so a worker seen at
        # the new version earlier in the sample must find the control plane there too
        deployments = {
            labels_of(md)[DEPLOYMENT_LABEL]: dig(md, "spec", "template", "spec", "version")
            for md in await self.env.list(CAPI, "MachineDeployment")
        }
        pools = {}
        workload = self.env.workloads.get(self.env.namespace, "demo")
        for pool in await self.env.list(CAPI, "MachinePool"):
            version = dig(pool, "spec", "template", "spec", "version")
            refs = dig(pool, "status", "nodeRefs") or []
            nodes = [workload.node(str(ref["name"])) if workload is not None else None for ref in refs]
            done = len(refs) == dig(pool, "spec", "replicas") == dig(pool, "status", "readyReplicas") and all(
                n is not None and n["status"]["nodeInfo"]["kubeletVersion"] == version for n in nodes
            )
            pools[labels_of(pool)[POOL_LABEL]] = (version, done)
        (control_plane,) = await self.env.list(CONTROL_PLANE, "KubeadmControlPlane")
        return Sample(dig(control_plane, "status", "version"), pools, deployments)

    async def run(self) -> None:
        while True:
            self.samples.append(await self.sample())
            await asyncio.sleep(0.003)


@contextlib.asynccontextmanager
async def sampling(env: SimEnv) -> AsyncIterator[Sampler]:
    sampler = Sampler(env)
    task = asyncio.ensure_future(sampler.run())
    try:
        yield sampler
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task


def upgrading_pools(sample: Sample) -> list[str]:
    return [name for name, (version, done) in sample.pools.items() if version == NEW and not done]


def workers_pending(pending: list[str]) -> list[str]:
    """What is pending besides the topology controller's own message (it says why the rest waits)."""
    return sorted(line for line in pending if not line.startswith("topology:"))


async def upgrade(env: SimEnv, **topology: object) -> None:
    await env.patch_topology("demo", {"version": NEW, **topology})


def assert_control_plane_first(samples: list[Sample]) -> None:
    for sample in samples:
        workers = [v for v, _ in sample.pools.values()] + list(sample.deployments.values())
        if NEW in workers:
            assert sample.control_plane_version == NEW, f"a worker took {NEW} before the control plane: {sample}"


async def all_pool_nodes_at(env: SimEnv, version: str) -> bool:
    for pool in await env.list(CAPI, "MachinePool"):
        nodes = env.pool_nodes(pool)
        if len(nodes) != pool["spec"]["replicas"] or any(
            n["status"]["nodeInfo"]["kubeletVersion"] != version for n in nodes
        ):
            return False
    return True


@pytest.fixture
def slower(any_env: SimEnv) -> SimEnv:
    """Machines take a few milliseconds per step, so overlapping rollouts are visible to the sampler."""
    any_env.timing = NONE.with_steps(vm=Step(0.02), node=Step(0.01))
    return any_env


async def test_the_control_plane_upgrades_first_then_the_workers_one_pool_at_a_time(slower: SimEnv) -> None:
    env = slower
    await env.restart()  # with the slower timing
    await env.apply_example(small_cluster())
    await env.wait_ready()
    machines_before = {m["metadata"]["name"] for m in await env.list(CAPI, "Machine")}
    async with sampling(env) as sampler:
        await upgrade(env)
        objects = await env.wait_ready(guard=90)
    samples = sampler.samples
    assert samples, "the sampler saw nothing"
    assert_control_plane_first(samples)
    # upgrade-concurrency defaults to 1: never two MachinePools upgrading at once
    assert max(len(upgrading_pools(s)) for s in samples) == 1
    await eventually(lambda: all_pool_nodes_at(env, NEW), what="every pool's Nodes at the new version")
    assert dig(objects.lookup(objects.cluster["spec"]["controlPlaneRef"]), "status", "version") == NEW
    # every Machine was replaced: the control plane's and the MachineDeployment's by rollouts, the pools' instances
    machines_after = {m["metadata"]["name"] for m in await env.list(CAPI, "Machine")}
    assert not machines_before & machines_after


async def test_upgrade_concurrency_lets_pools_upgrade_together(slower: SimEnv) -> None:
    env = slower
    await env.restart()
    cluster = small_cluster()
    cluster["metadata"]["annotations"] = {"topology.cluster.x-k8s.io/upgrade-concurrency": "2"}
    await env.apply_example(cluster)
    await env.wait_ready()
    async with sampling(env) as sampler:
        await upgrade(env)
        await env.wait_ready(guard=90)
    assert_control_plane_first(sampler.samples)
    assert max(len(upgrading_pools(s)) for s in sampler.samples) == 2
    await eventually(lambda: all_pool_nodes_at(env, NEW), what="every pool's Nodes at the new version")


async def test_a_deferred_pool_keeps_its_version_until_released(any_env: SimEnv) -> None:
    env = any_env
    cluster = small_cluster()
    pools = cluster["spec"]["topology"]["workers"]["machinePools"]
    pools[1]["metadata"] = {"annotations": {"topology.cluster.x-k8s.io/defer-upgrade": ""}}
    await env.apply_example(cluster)
    await env.wait_ready()
    await upgrade(env)

    async def only_mp1_left() -> bool:
        return workers_pending(await env.pending()) == ["MachinePool mp-1: to be v1.29.0"]

    await eventually(only_mp1_left, what="everything but the deferred mp-1 to upgrade")
    mp1 = await env.pool("mp-1")
    assert dig(mp1, "spec", "template", "spec", "version") == OLD
    assert {n["status"]["nodeInfo"]["kubeletVersion"] for n in env.pool_nodes(mp1)} == {OLD}

    async def reported() -> bool:
        # only the deferral is left: upstream v1.14 says so by its reason (v1.6 said MachinePoolsUpgradePending)
        cluster_now = await env.get(CAPI, "Cluster", "demo")
        found = next(c for c in cluster_now["status"]["conditions"] if c["type"] == "TopologyReconciled")
        return (found["status"], found.get("reason")) == ("False", "MachinePoolsUpgradeDeferred")

    await eventually(reported, what="TopologyReconciled to say the deferred pool's upgrade is on hold")
    assert "topology.cluster.x-k8s.io/defer-upgrade" not in (mp1["metadata"].get("annotations") or {})
    # releasing it lets it upgrade
    pools[1]["metadata"] = {"annotations": {}}
    await env.patch_topology(
        "demo",
        {
            "workers": {
                "machinePools": pools,
                "machineDeployments": cluster["spec"]["topology"]["workers"]["machineDeployments"],
            }
        },
    )
    await env.wait_ready()
    await eventually(lambda: all_pool_nodes_at(env, NEW), what="every pool's Nodes at the new version")


async def test_hold_upgrade_sequence_holds_that_pool_and_the_ones_after_it(env: SimEnv) -> None:
    cluster = small_cluster()
    workers = cluster["spec"]["topology"]["workers"]
    workers["machinePools"][0]["metadata"] = {"annotations": {"topology.cluster.x-k8s.io/hold-upgrade-sequence": ""}}
    await env.apply_example(cluster)
    await env.wait_ready()
    await upgrade(env)

    async def only_pools_left() -> bool:
        return workers_pending(await env.pending()) == [
            "MachinePool mp-0: to be v1.29.0",
            "MachinePool mp-1: to be v1.29.0",
        ]

    await eventually(only_pools_left, what="the control plane and md-0 to upgrade while both pools are held")
    assert (await env.deployment("md-0"))["spec"]["template"]["spec"]["version"] == NEW
    assert await all_pool_nodes_at(env, OLD)
    workers["machinePools"][0]["metadata"] = {}
    await env.patch_topology("demo", {"workers": workers})
    await env.wait_ready()
    # a pool whose version just changed still counts its old Nodes as ready until its instances roll
    await eventually(lambda: all_pool_nodes_at(env, NEW), what="every pool's Nodes at the new version")


async def count_instances(env: SimEnv, pool: str, counts: list[int]) -> None:
    """Append the number of the pool's instances (DockerMachines) every few milliseconds, until cancelled."""
    while True:
        counts.append(len(await env.list(INFRA, "DockerMachine", **{"cluster.x-k8s.io/pool-name": pool})))
        await asyncio.sleep(0.003)


async def test_pools_replace_all_instances_at_once_by_default_or_one_at_a_time_with_a_max_surge(env: SimEnv) -> None:
    """CAPD v1.6 creates every replacement at once (full surge); ``pool_max_surge=1`` rolls one at a time."""
    for surge, most in ((None, 2 * 3), (1, 3 + 1)):
        env.pool_max_surge = surge
        env.timing = NONE.with_steps(vm=Step(0.02), node=Step(0.01))
        await env.restart()
        cluster = small_cluster()
        cluster["metadata"]["name"] = f"surge-{surge or 'all'}"
        cluster["spec"]["topology"]["workers"] = {
            "machinePools": [{"class": "default-pool", "name": "mp-0", "replicas": 3}],
        }
        await env.apply_example(cluster)
        name = cluster["metadata"]["name"]
        await env.wait_ready(name)
        (pool,) = [p for p in await env.list(CAPI, "MachinePool") if dig(p, "spec", "clusterName") == name]
        counts: list[int] = []
        sampler = asyncio.ensure_future(count_instances(env, pool["metadata"]["name"], counts))
        try:
            await env.patch_topology(name, {"version": NEW})
            await env.wait_ready(name, guard=90)
        finally:
            sampler.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sampler
        assert max(counts) == most, f"pool_max_surge={surge}: at most {max(counts)} instances, expected {most}"


async def test_a_pools_own_status_says_it_is_upgrading_while_its_instances_are_not_at_its_version(
    slower: SimEnv,
) -> None:
    """Cluster API #10059: upstream's MachinePool counts ``spec.replicas`` up to date through an upgrade and its
    ``observedGeneration`` catches up before any condition changes, so only the Node list tells. Here the pool's
    v1beta2 ``MachinesUpToDate`` (v1beta1: ``status.v1beta2.conditions``) and ``upToDateReplicas`` come from the
    DockerMachinePool's ``status.instances[].version``: False while any instance runs another version than the
    pool (the topology patches the infrastructure pool, then the pool's version), True with every instance at the
    new version."""
    env = slower
    await env.restart()
    await env.apply_example(small_cluster())
    await env.wait_ready()

    def up_to_date(pool: Obj) -> str | None:
        found = [c for c in dig(pool, "status", "v1beta2", "conditions") or [] if c["type"] == "MachinesUpToDate"]
        return found[0]["status"] if found else None

    for pool in await env.list(CAPI, "MachinePool"):
        assert up_to_date(pool) == "True"
        assert dig(pool, "status", "v1beta2", "upToDateReplicas") == pool["spec"]["replicas"]
    seen: list[tuple[str, str | None]] = []

    async def watch() -> None:
        while True:
            seen.extend((labels_of(p)[POOL_LABEL], up_to_date(p)) for p in await env.list(CAPI, "MachinePool"))
            await asyncio.sleep(0.003)

    task = asyncio.ensure_future(watch())
    try:
        await upgrade(env)
        await env.wait_ready(guard=90)
        await eventually(lambda: all_pool_nodes_at(env, NEW), what="every pool's Nodes at the new version")
    finally:
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task
    for name in ("mp-0", "mp-1"):
        assert (name, "False") in seen, f"{name}'s own status never said it was upgrading"
    for pool in await env.list(CAPI, "MachinePool"):
        assert up_to_date(pool) == "True"
        assert dig(pool, "status", "v1beta2", "upToDateReplicas") == pool["spec"]["replicas"]
        infra = await env.get(INFRA, "DockerMachinePool", pool["spec"]["template"]["spec"]["infrastructureRef"]["name"])
        assert {i.get("version") for i in infra["status"]["instances"]} == {NEW}
