"""Restarts and stability: a management cluster at rest writes nothing, and a restarted one carries on.

``clusterclass up`` restarted on its state file runs new controllers and providers on the same objects
and workload clusters; :meth:`SimEnv.restart` does the same in one process. Upstream's e2e checks that
resourceVersions stay put once a Cluster is up (``ValidateResourceVersionStable``); here that holds
across a restart too, and a restart in the middle of an upgrade finishes it without replacing any
Machine twice.
"""

from __future__ import annotations

import asyncio

from e2e_support import CAPI, CONTROL_PLANE, Recorder, SimEnv, eventually, example_cluster

from clusterclass.api.objects import Obj, dig


def small_cluster() -> Obj:
    return example_cluster(
        controlPlane={"replicas": 1},
        workers={
            "machineDeployments": [{"class": "default-worker", "name": "md-0", "replicas": 2}],
            "machinePools": [
                {"class": "default-pool", "name": "mp-0", "replicas": 2},
                {"class": "large-pool", "name": "mp-1", "replicas": 1},
            ],
        },
    )


async def test_resource_versions_stay_put_once_the_cluster_is_up(any_env: SimEnv) -> None:
    env = any_env
    await env.apply_example()
    await env.wait_ready()
    stable = await env.settled()
    await asyncio.sleep(2)
    assert await env.resource_versions() == stable


async def test_a_restart_at_rest_rewrites_nothing_and_replaces_no_machine(env: SimEnv) -> None:
    await env.apply_example()
    await env.wait_ready()
    stable = await env.settled()
    await env.restart()
    await env.wait_ready()
    await asyncio.sleep(1.5)
    assert await env.resource_versions() == stable, "the restart rewrote objects"


async def test_a_restart_mid_upgrade_finishes_it_with_each_machine_replaced_once(env: SimEnv) -> None:
    await env.apply_example(small_cluster())
    await env.wait_ready()
    async with Recorder(env.client, env.namespace, [(CAPI, "Machine")]) as recorder:
        await env.patch_topology("demo", {"version": "v1.29.0"})

        async def control_plane_rolling() -> bool:
            (control_plane,) = await env.list(CONTROL_PLANE, "KubeadmControlPlane")
            machines = await env.list(
                CAPI, "Machine", **{"cluster.x-k8s.io/control-plane-name": control_plane["metadata"]["name"]}
            )
            return any(dig(m, "spec", "version") == "v1.29.0" for m in machines)

        await eventually(control_plane_rolling, what="the control plane rollout to start")
        await env.restart()
        await env.wait_ready()
        await env.settled()
    created = [c for c in recorder.changes if c.type == "ADDED"]
    # one new control-plane Machine, two for md-0, three pool instances: none made twice by the restart
    assert len(created) == 1 + 2 + 3, [c.name for c in created]
    machines = await env.list(CAPI, "Machine")
    assert {dig(m, "spec", "version") for m in machines if dig(m, "spec", "version")} == {"v1.29.0"}
