"""MachineHealthChecks end to end: MachinePool workers (clusterclass's extension of upstream's API, Cluster API
#11392/#13065) and MachineDeployments, on the simulated providers.

The topology makes a MachineHealthCheck for every worker whose class or topology defines one; the simulated
MachineHealthCheck controller marks unhealthy Machines; their owner — the MachinePool for its MachinePool Machines,
the MachineSet for a MachineDeployment's — deletes them and a replacement comes up. A Node is made unhealthy the
way a broken machine shows it: its Ready condition turns Unknown (the simulated kubelet leaves such a Node alone).
"""

from __future__ import annotations

import copy
from datetime import UTC, datetime
from typing import Any

from e2e_support import CAPI, INFRA, SimEnv, eventually, example_class, example_cluster

from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.kube.gotext import rfc3339

#: a check that judges quickly: Ready Unknown for a second is unhealthy
QUICK_CHECK = {
    "unhealthyConditions": [{"type": "Ready", "status": "Unknown", "timeout": "1s"}],
    "nodeStartupTimeout": "10m",
}


def class_with_pool_check(check: Obj | None = None) -> list[Obj]:
    """The example ClusterClass with a health check on its ``default-pool`` MachinePool class."""
    objects = example_class()
    cluster_class = next(o for o in objects if o["kind"] == "ClusterClass")
    pool_class = next(p for p in cluster_class["spec"]["workers"]["machinePools"] if p["class"] == "default-pool")
    pool_class["machineHealthCheck"] = copy.deepcopy(check or QUICK_CHECK)
    return objects


def cluster(**workers: Any) -> Obj:
    return example_cluster(
        controlPlane={"replicas": 1},
        workers={
            "machineDeployments": [{"class": "default-worker", "name": "md-0", "replicas": 1}],
            "machinePools": [{"class": "default-pool", "name": "mp-0", "replicas": 2}],
            **workers,
        },
    )


async def machines_of(env: SimEnv, pool: Obj) -> list[Obj]:
    return await env.list(CAPI, "Machine", **{"cluster.x-k8s.io/pool-name": name_of(pool)})


async def break_node(env: SimEnv, node_name: str, since: str = "2026-01-01T00:00:00Z") -> None:
    """What the node lifecycle controller writes when a kubelet stops posting: Ready Unknown ``since``."""
    workload = env.workload()
    node = await workload.client.get("v1", "Node", node_name)
    unknown = {
        "type": "Ready",
        "status": "Unknown",
        "reason": "NodeStatusUnknown",
        "message": "Kubelet stopped posting node status.",
        "lastHeartbeatTime": since,
        "lastTransitionTime": since,
    }
    conditions = [x for x in dig(node, "status", "conditions") or [] if x.get("type") != "Ready"] + [unknown]
    await workload.client.patch(
        "v1", "Node", node_name, {"status": {"conditions": conditions}}, status=True, field_manager="node-lifecycle"
    )


async def test_a_machine_pool_health_check_replaces_an_unhealthy_pool_machine(any_env: SimEnv) -> None:
    env = any_env
    await env.apply(*class_with_pool_check())
    await env.apply(cluster())
    await env.wait_ready()
    pool = await env.pool("mp-0")

    check = await env.get(CAPI, "MachineHealthCheck", name_of(pool))
    assert check["spec"]["selector"] == {
        "matchLabels": {"topology.cluster.x-k8s.io/owned": "", "topology.cluster.x-k8s.io/pool-name": "mp-0"}
    }
    assert dig(check, "metadata", "labels", "topology.cluster.x-k8s.io/owned") == ""
    before = {name_of(m): m for m in await machines_of(env, pool)}
    assert len(before) == 2

    async def all_healthy() -> bool:
        found = await env.get(CAPI, "MachineHealthCheck", name_of(pool))
        return bool(dig(found, "status", "expectedMachines") == 2 and dig(found, "status", "currentHealthy") == 2)

    await eventually(all_healthy, what="the pool's check to count 2 healthy Machines")
    victim = sorted(before)[0]
    victim_node = str(dig(before[victim], "status", "nodeRef", "name"))
    await break_node(env, victim_node)

    async def replaced() -> bool:
        machines = {name_of(m): m for m in await machines_of(env, pool)}
        fresh = set(machines) - set(before)
        return (
            victim not in machines and len(fresh) == 1 and all(dig(m, "status", "nodeRef") for m in machines.values())
        )

    await eventually(replaced, what=f"{victim} to be remediated and replaced")
    objects = await env.wait_ready()
    assert objects is not None
    pool = await env.pool("mp-0")
    assert dig(pool, "status", "readyReplicas") == 2
    node_names = {str(r["name"]) for r in dig(pool, "status", "nodeRefs") or []}
    assert victim_node not in node_names
    assert env.workload().node(victim_node) is None, "the broken instance's Node is still there"
    survivor = next(m for m in await machines_of(env, pool) if name_of(m) in before)
    assert dig(survivor, "metadata", "uid") == dig(before[name_of(survivor)], "metadata", "uid"), (
        "a healthy Machine went"
    )
    await eventually(all_healthy, what="the pool's check to count 2 healthy Machines again")
    events = await env.list("v1", "Event")
    assert any(e.get("reason") == "MachineMarkedUnhealthy" and victim in str(e.get("message")) for e in events)


async def test_a_pool_check_beyond_max_unhealthy_marks_but_does_not_remediate(env: SimEnv) -> None:
    check = {
        "unhealthyConditions": [{"type": "Ready", "status": "Unknown", "timeout": "3s"}],
        "maxUnhealthy": 1,
    }
    await env.apply(*class_with_pool_check(check))
    await env.apply(cluster())
    await env.wait_ready()
    pool = await env.pool("mp-0")
    machines = await machines_of(env, pool)
    now = rfc3339(datetime.now(UTC))
    for machine in machines:  # both within the timeout: judged unhealthy together
        await break_node(env, str(dig(machine, "status", "nodeRef", "name")), since=now)

    async def restricted() -> bool:
        found = await env.get(CAPI, "MachineHealthCheck", name_of(pool))
        allowed: Obj = next(
            (x for x in dig(found, "status", "conditions") or [] if x["type"] == "RemediationAllowed"), {}
        )
        # v1beta1 leaves zero counters out
        return allowed.get("status") == "False" and (dig(found, "status", "currentHealthy") or 0) == 0

    await eventually(restricted, what="remediation to be restricted")
    found = await env.get(CAPI, "MachineHealthCheck", name_of(pool))
    allowed = next(x for x in found["status"]["conditions"] if x["type"] == "RemediationAllowed")
    assert allowed["reason"] == "TooManyUnhealthy"
    assert allowed["message"] == (
        "Remediation is not allowed, the number of not started or unhealthy machines exceeds maxUnhealthy "
        "(total: 2, unhealthy: 2, maxUnhealthy: 1)"
    )
    assert found["status"].get("remediationsAllowed", 0) == 0
    await env.settled()
    after = await machines_of(env, pool)
    assert {name_of(m) for m in after} == {name_of(m) for m in machines}, "a Machine was remediated past the limit"
    for machine in after:
        assert not dig(machine, "metadata", "deletionTimestamp")
        conditions = {x["type"]: x for x in dig(machine, "status", "conditions") or []}
        assert conditions["HealthCheckSucceeded"]["status"] == "False"
        assert conditions["HealthCheckSucceeded"]["reason"] == "UnhealthyNode"
        assert "OwnerRemediated" not in conditions


async def test_the_remediate_machine_annotation_replaces_a_deployment_machine(env: SimEnv) -> None:
    """A MachineDeployment's check, as upstream's: a user asks for a Machine to be remediated."""
    objects = example_class()
    cluster_class = next(o for o in objects if o["kind"] == "ClusterClass")
    md_class = cluster_class["spec"]["workers"]["machineDeployments"][0]
    md_class["machineHealthCheck"] = copy.deepcopy(QUICK_CHECK)
    await env.apply(*objects)
    await env.apply(cluster())
    await env.wait_ready()
    deployment = await env.deployment("md-0")
    assert await env.find(CAPI, "MachineHealthCheck", name_of(deployment)) is not None
    [machine] = await env.list(CAPI, "Machine", **{"cluster.x-k8s.io/deployment-name": name_of(deployment)})
    await env.patch(
        CAPI, "Machine", name_of(machine), {"metadata": {"annotations": {"cluster.x-k8s.io/remediate-machine": ""}}}
    )

    async def replaced() -> bool:
        found = await env.list(CAPI, "Machine", **{"cluster.x-k8s.io/deployment-name": name_of(deployment)})
        return (
            [name_of(m) for m in found] != [name_of(machine)]
            and len(found) == 1
            and bool(dig(found[0], "status", "nodeRef"))
        )

    await eventually(replaced, what=f"{name_of(machine)} to be replaced")
    await env.wait_ready()
    assert await env.find(INFRA, "DockerMachine", str(dig(machine, "spec", "infrastructureRef", "name"))) is None


async def test_disabling_a_pool_check_in_the_topology_deletes_it(env: SimEnv) -> None:
    await env.apply(*class_with_pool_check())
    topology = cluster()
    await env.apply(topology)
    await env.wait_ready()
    pool = await env.pool("mp-0")
    assert await env.find(CAPI, "MachineHealthCheck", name_of(pool)) is not None
    workers = topology["spec"]["topology"]["workers"]
    workers["machinePools"][0]["machineHealthCheck"] = {"enable": False}
    await env.patch_topology("demo", {"workers": workers})

    async def gone() -> bool:
        return await env.find(CAPI, "MachineHealthCheck", name_of(pool)) is None

    await eventually(gone, what="the pool's MachineHealthCheck to be deleted")
