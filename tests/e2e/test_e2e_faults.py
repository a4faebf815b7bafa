"""Nothing lost when the API server misbehaves: Clusters created, upgraded, scaled and deleted under injected faults.

The controllers and simulated providers talk through :class:`~clusterclass.kube.faults.FaultyClient` (409s, 429s
with Retry-After, 500s and timeouts — writes among them applied but unanswered —, dropped and expired watches, slow
lists); the test reads and writes through the plain client, as a user would. After each phase converges, the
invariants of :mod:`support.invariants` hold: every Cluster Ready at its version, one MachineDeployment and one
MachinePool per worker, MachineSets and Machines in step with their owners, nothing orphaned or leaked; and the
deletion leaves nothing. Each test reports what was injected (``-s`` shows it).
"""

from __future__ import annotations

import time
from typing import Any

import pytest
from e2e_support import CAPI, SimEnv, eventually, example_class, example_cluster
from support.invariants import violations
from support.leftovers import nothing_left

from clusterclass.api.objects import Obj, dig
from clusterclass.kube.faults import FaultRates

#: every fault at once, at rates a struggling management cluster shows
ALL = FaultRates(
    conflict=0.02,
    throttle=0.01,
    server_error=0.01,
    timeout=0.01,
    watch_drop=0.01,
    watch_expire=0.01,
    slow_list=0.1,
    list_delay=0.05,
    retry_after=0,
)
ONE_AT_A_TIME = {
    "conflict": FaultRates(conflict=0.15),
    "throttle": FaultRates(throttle=0.1, retry_after=0),
    "server_error": FaultRates(server_error=0.08),
    "timeout": FaultRates(timeout=0.08),
    "watch": FaultRates(watch_drop=0.05, watch_expire=0.05),
    "slow_list": FaultRates(slow_list=0.5, list_delay=0.1),
}
GUARD = 120.0


def small(name: str, version: str = "v1.28.0", **workers: Any) -> Obj:
    cluster = example_cluster(
        name,
        controlPlane={"replicas": 1},
        workers={
            "machineDeployments": [{"class": "default-worker", "name": "md-0", "replicas": 1}],
            "machinePools": [{"class": "default-pool", "name": "mp-0", "replicas": 1}],
            **workers,
        },
    )
    cluster["spec"]["topology"]["version"] = version
    return cluster


async def converged(env: SimEnv, names: list[str], what: str) -> None:
    """Every Cluster ready, then nothing moving, then the invariants."""
    print(f"[{time.monotonic() - START[0]:6.1f}s] {what}: waiting", flush=True)
    for name in names:
        await env.wait_ready(name, guard=GUARD)
    await env.settled(quiet=1.5)
    for name in names:
        await env.wait_ready(name, guard=GUARD)
    broken = await violations(env.client, env.namespace)
    assert not broken, f"after {what}: {broken}"
    print(f"[{time.monotonic() - START[0]:6.1f}s] {what}: converged, invariants hold", flush=True)


START = [0.0]


async def life_under_faults(env: SimEnv, count: int, *, upgrade_and_scale: bool = True) -> None:
    START[0] = time.monotonic()
    names = [f"c{i}" for i in range(count)]
    await env.apply(*example_class())
    await env.apply(*(small(name) for name in names))
    await converged(env, names, "create")
    if upgrade_and_scale:
        await upgrade_and_scale_all(env, names)
    await delete_all(env, names)


async def upgrade_and_scale_all(env: SimEnv, names: list[str]) -> None:
    count = len(names)

    # upgrade every Cluster: control plane first, then the workers
    for name in names:
        await env.patch_topology(name, {"version": "v1.29.0"})

    async def upgraded() -> bool:
        for machine in await env.list(CAPI, "Machine"):
            if dig(machine, "spec", "version") not in (None, "v1.29.0"):
                return False
        return all(
            dig(p, "spec", "template", "spec", "version") == "v1.29.0" for p in await env.list(CAPI, "MachinePool")
        )

    await eventually(upgraded, what="every Machine and pool at v1.29.0", guard=GUARD)
    await converged(env, names, "upgrade")

    # scale every worker up
    for name in names:
        workers = small(name, "v1.29.0")["spec"]["topology"]["workers"]
        workers["machineDeployments"][0]["replicas"] = 2
        workers["machinePools"][0]["replicas"] = 2
        await env.patch_topology(name, {"workers": workers})

    async def scaled() -> bool:
        deployments = await env.list(CAPI, "MachineDeployment")
        pools = await env.list(CAPI, "MachinePool")
        return all(dig(o, "status", "readyReplicas") == 2 for o in [*deployments, *pools]) and len(deployments) == count

    await eventually(scaled, what="every worker at 2 ready replicas", guard=GUARD)
    await converged(env, names, "scale")


async def delete_all(env: SimEnv, names: list[str]) -> None:
    for name in names:
        await env.client.delete(CAPI, "Cluster", name, namespace=env.namespace)

    async def gone() -> bool:
        return await nothing_left(env.client, env.namespace)

    await eventually(gone, what="every Cluster and everything it had to be gone", guard=GUARD)


@pytest.mark.parametrize(
    "fault",
    sorted(ONE_AT_A_TIME),
)
async def test_each_fault_alone_loses_nothing(env: SimEnv, fault: str) -> None:
    env.faults = ONE_AT_A_TIME[fault]
    await env.restart()
    await life_under_faults(env, 5)
    assert env.faulty is not None
    print(f"{fault}: injected {dict(env.faulty.injected)}")
    assert sum(env.faulty.injected.values()) > 0


@pytest.mark.timeout(1200)
async def test_fifty_clusters_under_every_fault_lose_nothing(env: SimEnv) -> None:
    """Fifty Clusters created and deleted under every fault (their upgrade and scaling under faults: the
    tests above, five Clusters each)."""
    env.faults = ALL
    await env.restart()
    await life_under_faults(env, 50, upgrade_and_scale=False)
    assert env.faulty is not None
    print(f"all faults, 50 Clusters: injected {dict(env.faulty.injected)}")


async def test_every_fault_on_both_backends_loses_nothing(collected_env: SimEnv) -> None:
    any_env = collected_env  # the real backend with kube-controller-manager: deletion needs its garbage collector
    any_env.faults = ALL
    await any_env.restart()
    await life_under_faults(any_env, 3)
    assert any_env.faulty is not None
    print(f"all faults ({any_env.client.__class__.__name__}): injected {dict(any_env.faulty.injected)}")
