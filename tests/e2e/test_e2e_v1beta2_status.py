"""v1beta2 status on the simulated providers: what a v1beta2 read of each object shows, as upstream v1.14 writes it.

The objects are stored in v1beta2; the providers write v1beta1 shapes whose ``status.v1beta2`` becomes the v1beta2
``status.conditions`` and replica counters, and whose v1beta1 conditions go under ``status.deprecated.v1beta1``.
These tests read back in v1beta2, as ``kubectl get`` and ``clusterctl describe`` of v1.14 do, on the embedded store
and on a real kube-apiserver (whose conversion webhook is ours).
"""

from __future__ import annotations

from e2e_support import SimEnv, eventually, example_cluster

from clusterclass.api.objects import Obj, dig, labels_of, name_of

CAPI_V1BETA2 = "cluster.x-k8s.io/v1beta2"
CONTROL_PLANE_V1BETA2 = "controlplane.cluster.x-k8s.io/v1beta2"


def conditions(obj: Obj) -> dict[str, tuple[str, str]]:
    return {str(c["type"]): (str(c["status"]), str(c["reason"])) for c in dig(obj, "status", "conditions") or []}


def message(obj: Obj, type_: str) -> str:
    return next(str(c.get("message") or "") for c in obj["status"]["conditions"] if c["type"] == type_)


async def v1beta2_list(env: SimEnv, api_version: str, kind: str) -> list[Obj]:
    return (await env.client.list(api_version, kind, namespace=env.namespace)).items


async def test_a_ready_cluster_reads_available_in_v1beta2_with_its_counters(any_env: SimEnv) -> None:
    env = any_env
    await env.apply_example()
    await env.wait_ready()

    async def available() -> bool:
        cluster = await env.client.get(CAPI_V1BETA2, "Cluster", "demo", namespace=env.namespace)
        return conditions(cluster).get("Available") == ("True", "Available")

    await eventually(available, what="the Cluster's v1beta2 Available")
    cluster = await env.client.get(CAPI_V1BETA2, "Cluster", "demo", namespace=env.namespace)
    assert conditions(cluster) == {
        "Available": ("True", "Available"),
        "ControlPlaneAvailable": ("True", "Available"),
        "ControlPlaneInitialized": ("True", "Initialized"),
        "ControlPlaneMachinesReady": ("True", "Ready"),
        "ControlPlaneMachinesUpToDate": ("True", "UpToDate"),
        "Deleting": ("False", "NotDeleting"),
        "InfrastructureReady": ("True", "Ready"),
        "Paused": ("False", "NotPaused"),
        "RemoteConnectionProbe": ("True", "ProbeSucceeded"),
        "TopologyReconciled": ("True", "ReconcileSucceeded"),
        "WorkerMachinesReady": ("True", "Ready"),
        "WorkerMachinesUpToDate": ("True", "UpToDate"),
        "WorkersAvailable": ("True", "Available"),
    }
    counters = {"desiredReplicas": 3, "replicas": 3, "readyReplicas": 3, "availableReplicas": 3, "upToDateReplicas": 3}
    assert cluster["status"]["controlPlane"] == counters
    # workers: md-0 ×2, mp-0 ×3, mp-1 ×2
    assert cluster["status"]["workers"] == {key: 7 for key in counters}
    assert cluster["status"]["initialization"] == {"infrastructureProvisioned": True, "controlPlaneInitialized": True}
    legacy = {c["type"]: c["status"] for c in cluster["status"]["deprecated"]["v1beta1"]["conditions"]}
    assert legacy["Ready"] == "True" and legacy["TopologyReconciled"] == "True"

    (kcp,) = await v1beta2_list(env, CONTROL_PLANE_V1BETA2, "KubeadmControlPlane")
    assert {k: conditions(kcp)[k] for k in ("Available", "Initialized", "MachinesReady", "MachinesUpToDate")} == {
        "Available": ("True", "Available"),
        "Initialized": ("True", "Initialized"),
        "MachinesReady": ("True", "Ready"),
        "MachinesUpToDate": ("True", "UpToDate"),
    }
    assert {k: kcp["status"][k] for k in ("readyReplicas", "availableReplicas", "upToDateReplicas")} == {
        "readyReplicas": 3,
        "availableReplicas": 3,
        "upToDateReplicas": 3,
    }
    (deployment,) = await v1beta2_list(env, CAPI_V1BETA2, "MachineDeployment")
    assert conditions(deployment)["Available"] == ("True", "Available")
    assert (deployment["status"]["readyReplicas"], deployment["status"]["upToDateReplicas"]) == (2, 2)
    for pool in await v1beta2_list(env, CAPI_V1BETA2, "MachinePool"):
        replicas = pool["spec"]["replicas"]
        assert (pool["status"]["readyReplicas"], pool["status"]["upToDateReplicas"]) == (replicas, replicas)
    for machine in await v1beta2_list(env, CAPI_V1BETA2, "Machine"):
        found = conditions(machine)
        assert {k: found[k][0] for k in ("Ready", "Available", "UpToDate", "NodeHealthy")} == dict.fromkeys(
            ("Ready", "Available", "UpToDate", "NodeHealthy"), "True"
        ), name_of(machine)


async def test_a_paused_machine_deployment_says_its_machines_are_not_up_to_date_after_an_upgrade(env: SimEnv) -> None:
    """With md-0 paused (spec.paused: no rollout) the upgrade leaves its Machines on the old version: each Machine,
    the MachineDeployment and the Cluster say which and why, in upstream's words."""
    await env.apply_example(example_cluster(workers={"machineDeployments": [
        {"class": "default-worker", "name": "md-0", "replicas": 2}
    ]}))  # fmt: skip
    await env.wait_ready()
    deployment = await env.deployment("md-0")
    await env.patch(CAPI_V1BETA2, "MachineDeployment", name_of(deployment), {"spec": {"paused": True}})
    await env.patch_topology("demo", {"version": "v1.29.0"})

    async def deployment_outdated() -> bool:
        found = await env.client.get(CAPI_V1BETA2, "MachineDeployment", name_of(deployment), namespace=env.namespace)
        return conditions(found).get("MachinesUpToDate", ("", ""))[0] == "False"

    await eventually(deployment_outdated, what="md-0's MachinesUpToDate to turn False")
    machines = [
        m
        for m in await v1beta2_list(env, CAPI_V1BETA2, "Machine")
        if labels_of(m).get("cluster.x-k8s.io/deployment-name") == name_of(deployment)
    ]
    assert len(machines) == 2
    for machine in machines:
        assert conditions(machine)["UpToDate"] == ("False", "NotUpToDate")
        assert message(machine, "UpToDate") == "* Version v1.28.0, v1.29.0 required"
    found = await env.client.get(CAPI_V1BETA2, "MachineDeployment", name_of(deployment), namespace=env.namespace)
    names = ", ".join(sorted(name_of(m) for m in machines))
    assert message(found, "MachinesUpToDate") == f"* Machines {names}:\n  * Version v1.28.0, v1.29.0 required"

    async def counted() -> bool:  # the MachineSet counts first, then the MachineDeployment sums its MachineSets
        found = await env.client.get(CAPI_V1BETA2, "MachineDeployment", name_of(deployment), namespace=env.namespace)
        return bool(found["status"]["upToDateReplicas"] == 0)

    await eventually(counted, what="md-0's upToDateReplicas to drop to 0")

    async def cluster_says_so() -> bool:
        cluster = await env.client.get(CAPI_V1BETA2, "Cluster", "demo", namespace=env.namespace)
        return conditions(cluster).get("WorkerMachinesUpToDate") == ("False", "NotUpToDate")

    await eventually(cluster_says_so, what="the Cluster's WorkerMachinesUpToDate to turn False")
    cluster = await env.client.get(CAPI_V1BETA2, "Cluster", "demo", namespace=env.namespace)
    assert message(cluster, "WorkerMachinesUpToDate") == f"* Machines {names}:\n  * Version v1.28.0, v1.29.0 required"


async def test_a_paused_annotation_shows_in_the_paused_condition(env: SimEnv) -> None:
    await env.apply_example()
    await env.wait_ready()
    deployment = await env.deployment("md-0")
    await env.patch(
        CAPI_V1BETA2,
        "MachineDeployment",
        name_of(deployment),
        {"metadata": {"annotations": {"cluster.x-k8s.io/paused": ""}}},
    )

    async def paused() -> bool:
        found = await env.client.get(CAPI_V1BETA2, "MachineDeployment", name_of(deployment), namespace=env.namespace)
        return conditions(found).get("Paused") == ("True", "Paused")

    await eventually(paused, what="md-0's Paused condition")
    found = await env.client.get(CAPI_V1BETA2, "MachineDeployment", name_of(deployment), namespace=env.namespace)
    assert message(found, "Paused") == "MachineDeployment has the cluster.x-k8s.io/paused annotation"
