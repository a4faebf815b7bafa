"""A Cluster's life after it comes up: class changes and rebase, scaling, removing a pool, deletion (spec §3, §11.4).

What upstream's ``clusterclass_changes``, ``clusterclass_rollout`` and quick-start specs check for
MachinePools, on the simulated providers: a MachinePool's bootstrap config and infrastructure pool are
changed in place (same objects, no instance replaced — which is upstream's behaviour, #10496), while a
MachineDeployment's templates are rotated and its Machines rolled; topology metadata reaches the
objects without a rollout; pools scale both ways; a pool removed from the topology goes with all it
owns; a deleted Cluster takes its MachinePools down first and leaves nothing behind.
"""

from __future__ import annotations

import copy

from e2e_support import (
    BOOTSTRAP,
    CAPI,
    CONTROL_PLANE,
    INFRA,
    Recorder,
    SimEnv,
    eventually,
    example_class,
    example_cluster,
)
from support.leftovers import nothing_left

from clusterclass.api.objects import Obj, dig, labels_of, name_of


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


def machine_names(machines: list[Obj]) -> set[str]:
    return {name_of(m) for m in machines}


async def pool_machines(env: SimEnv, pool: Obj) -> set[str]:
    return machine_names(await env.list(CAPI, "Machine", **{"cluster.x-k8s.io/pool-name": name_of(pool)}))


async def test_topology_metadata_and_pool_fields_change_in_place_without_replacing_machines(env: SimEnv) -> None:
    cluster = small_cluster()
    await env.apply_example(cluster)
    await env.wait_ready()
    machines_before = machine_names(await env.list(CAPI, "Machine"))
    workers = cluster["spec"]["topology"]["workers"]
    workers["machinePools"][0].update(
        metadata={"labels": {"team": "storage"}, "annotations": {"owner": "ops"}},
        nodeDeletionTimeout="30s",
        minReadySeconds=7,
    )
    workers["machineDeployments"][0].update(metadata={"labels": {"tier": "web"}}, nodeDrainTimeout="45s")
    control_plane = {**cluster["spec"]["topology"]["controlPlane"], "nodeDrainTimeout": "20s"}
    await env.patch_topology("demo", {"workers": workers, "controlPlane": control_plane})

    async def reflected() -> bool:
        pool = await env.pool("mp-0")
        deployment = await env.deployment("md-0")
        machines = await env.list(CAPI, "Machine", **{"cluster.x-k8s.io/deployment-name": name_of(deployment)})
        control_plane_machines = await env.list(CAPI, "Machine", **{"cluster.x-k8s.io/control-plane": ""})
        return (
            labels_of(pool).get("team") == "storage"
            and (pool["metadata"].get("annotations") or {}).get("owner") == "ops"
            and dig(pool, "spec", "template", "metadata", "labels", "team") == "storage"
            and dig(pool, "spec", "template", "spec", "nodeDeletionTimeout") == "30s"
            and dig(pool, "spec", "minReadySeconds") == 7
            and bool(machines)
            and all(labels_of(m).get("tier") == "web" for m in machines)
            and all(dig(m, "spec", "nodeDrainTimeout") == "45s" for m in machines)
            and bool(control_plane_machines)
            and all(dig(m, "spec", "nodeDrainTimeout") == "20s" for m in control_plane_machines)
        )

    await eventually(reflected, what="the new topology metadata, node timeouts and pool fields")
    await env.wait_ready()
    assert machine_names(await env.list(CAPI, "Machine")) == machines_before, "a metadata change replaced Machines"


async def test_a_class_bootstrap_change_rotates_the_pool_config_and_the_deployment_templates_and_rolls_both(
    env: SimEnv,
) -> None:
    """Cluster API #10496: upstream patches a pool's KubeadmConfig in place, so new bootstrap data reaches only
    instances created later. Here the config is rotated — a new one, the MachinePool switched to it, the old one
    deleted — and the pool's instances built from the old data are replaced, as the MachineDeployment's are."""
    await env.apply_example(small_cluster())
    await env.wait_ready()
    pool = await env.pool("mp-0")
    config_name = pool["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"]
    pool_instances = await pool_machines(env, pool)
    deployment = await env.deployment("md-0")
    md_machines = machine_names(
        await env.list(CAPI, "Machine", **{"cluster.x-k8s.io/deployment-name": name_of(deployment)})
    )
    old_infra_template = deployment["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    # clone the pool bootstrap template and the worker machine template with a change, and repoint the class
    objects = {(o["kind"], o["metadata"]["name"]): o for o in example_class()}
    bootstrap = copy.deepcopy(objects[("KubeadmConfigTemplate", "quick-start-pools-pool-bootstrap")])
    bootstrap["metadata"]["name"] = "quick-start-pools-pool-bootstrap-v2"
    bootstrap["spec"]["template"]["spec"]["verbosity"] = 4
    machine_template = copy.deepcopy(objects[("DockerMachineTemplate", "quick-start-pools-worker")])
    machine_template["metadata"]["name"] = "quick-start-pools-worker-v2"
    machine_template["spec"]["template"]["spec"] = {"extraMounts": [{"containerPath": "/data", "hostPath": "/data"}]}
    cluster_class = copy.deepcopy(objects[("ClusterClass", "quick-start-pools")])
    workers = cluster_class["spec"]["workers"]
    workers["machinePools"][0]["template"]["bootstrap"]["ref"]["name"] = bootstrap["metadata"]["name"]
    workers["machineDeployments"][0]["template"]["infrastructure"]["ref"]["name"] = machine_template["metadata"]["name"]
    await env.apply(bootstrap, machine_template, cluster_class)

    async def pool_rolled() -> bool:
        pool = await env.pool("mp-0")
        ref = pool["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"]
        if ref == config_name or await env.find(BOOTSTRAP, "KubeadmConfig", config_name) is not None:
            return False
        config = await env.get(BOOTSTRAP, "KubeadmConfig", ref)
        instances = await pool_machines(env, pool)
        return (
            dig(config, "spec", "verbosity") == 4
            and len(instances) == pool["spec"]["replicas"]
            and not (instances & pool_instances)
        )

    await eventually(pool_rolled, what="mp-0 on a new KubeadmConfig, the old one gone, every instance replaced")
    await env.wait_ready()
    deployment = await env.deployment("md-0")
    new_infra_template = deployment["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    assert new_infra_template != old_infra_template, "the MachineDeployment's template was not rotated"
    template = await env.get(INFRA, "DockerMachineTemplate", new_infra_template)
    assert template["metadata"]["annotations"]["cluster.x-k8s.io/cloned-from-name"] == "quick-start-pools-worker-v2"

    async def rolled() -> bool:
        now = await env.list(CAPI, "Machine", **{"cluster.x-k8s.io/deployment-name": name_of(deployment)})
        return len(now) == 2 and not (machine_names(now) & md_machines)

    await eventually(rolled, what="the MachineDeployment's Machines to be replaced")


async def test_rebase_onto_another_clusterclass(env: SimEnv) -> None:
    await env.apply_example(small_cluster())
    await env.wait_ready()
    pools_before = {name_of(p) for p in await env.list(CAPI, "MachinePool")}
    instances_before = machine_names(await env.list(CAPI, "Machine"))
    copy_class = copy.deepcopy(next(o for o in example_class() if o["kind"] == "ClusterClass"))
    copy_class["metadata"]["name"] = "quick-start-pools-copy"
    await env.apply(copy_class)
    await env.patch_topology("demo", {"class": "quick-start-pools-copy"})

    cluster = await env.get(CAPI, "Cluster", "demo")
    assert cluster["spec"]["topology"]["class"] == "quick-start-pools-copy"
    objects = await env.settled_ready()
    assert {name_of(p) for p in objects.machine_pools} == pools_before
    assert machine_names(await env.list(CAPI, "Machine")) == instances_before, "a rebase onto an equal class rolled"


async def test_machine_pools_and_deployments_scale_up_and_down(env: SimEnv) -> None:
    cluster = small_cluster()
    await env.apply_example(cluster)
    await env.wait_ready()
    workers = cluster["spec"]["topology"]["workers"]
    for pool_replicas, md_replicas in ((4, 3), (1, 1)):
        workers["machinePools"][0]["replicas"] = pool_replicas
        workers["machineDeployments"][0]["replicas"] = md_replicas
        await env.patch_topology("demo", {"workers": workers})

        async def scaled(pool_replicas: int = pool_replicas, md_replicas: int = md_replicas) -> bool:
            pool = await env.pool("mp-0")
            # while a scale-down settles, the pool's nodeRefs may still name a Node its instance took along
            refs = dig(pool, "status", "nodeRefs") or []
            nodes = [ref for ref in refs if env.workload().node(str(ref["name"])) is not None]
            return (
                dig(pool, "spec", "replicas") == pool_replicas
                and not await env.pending()
                and len(nodes) == len(refs) == pool_replicas
            )

        await eventually(scaled, what=f"mp-0 at {pool_replicas} and md-0 at {md_replicas}")
        pool = await env.pool("mp-0")
        assert len(env.pool_nodes(pool)) == pool_replicas
        assert len(pool["spec"]["providerIDList"]) == pool_replicas
        assert len(await pool_machines(env, pool)) == pool_replicas
        deployment = await env.deployment("md-0")
        assert dig(deployment, "status", "readyReplicas") == md_replicas
    # 1 control plane + 1 md-0 + 1 mp-0 + 1 mp-1 Nodes are left: the rest went with their instances
    assert len(env.workload().nodes()) == 4


async def test_removing_a_pool_from_the_topology_deletes_it_and_everything_it_owns(collected_env: SimEnv) -> None:
    env = collected_env
    cluster = small_cluster()
    await env.apply_example(cluster)
    await env.wait_ready()
    pool = await env.pool("mp-1")
    spec = pool["spec"]["template"]["spec"]
    owned = [
        (BOOTSTRAP, "KubeadmConfig", spec["bootstrap"]["configRef"]["name"]),
        (INFRA, "DockerMachinePool", spec["infrastructureRef"]["name"]),
    ]
    instances = await pool_machines(env, pool)
    node_names = {r["name"] for r in pool["status"]["nodeRefs"]}
    workers = cluster["spec"]["topology"]["workers"]
    workers["machinePools"] = workers["machinePools"][:1]
    await env.patch_topology("demo", {"workers": workers})

    async def gone() -> bool:
        leftovers = [
            await env.find(api, kind, name) for api, kind, name in [(CAPI, "MachinePool", name_of(pool)), *owned]
        ]
        machines = machine_names(await env.list(CAPI, "Machine")) & instances
        return all(o is None for o in leftovers) and not machines

    await eventually(gone, what="mp-1 and its objects to be deleted")
    await env.wait_ready()
    assert not node_names & {name_of(n) for n in env.workload().nodes()}, "mp-1's Nodes are still there"
    assert await env.list(INFRA, "DockerMachine", **{"cluster.x-k8s.io/pool-name": name_of(pool)}) == []


async def test_deleting_the_cluster_takes_machine_pools_first_and_leaves_nothing(collected_env: SimEnv) -> None:
    env = collected_env
    await env.apply_example(small_cluster())
    await env.wait_ready()
    kinds = [
        (CAPI, "MachinePool"),
        (CAPI, "MachineDeployment"),
        (CAPI, "Machine"),
        (CONTROL_PLANE, "KubeadmControlPlane"),
        (INFRA, "DockerCluster"),
        (CAPI, "Cluster"),
    ]
    async with Recorder(env.client, env.namespace, kinds) as recorder:
        await env.client.delete(CAPI, "Cluster", "demo", namespace=env.namespace)

        async def deleted() -> bool:
            return await env.find(CAPI, "Cluster", "demo") is None

        await eventually(deleted, what="the Cluster to go")
        await eventually(lambda: nothing_left(env.client, env.namespace), what="every object of the Cluster to be gone")
    pools, deployments = recorder.first_deleting("MachinePool"), recorder.first_deleting("MachineDeployment")
    assert pools is not None and deployments is not None and pools < deployments, "MachinePools were not deleted first"
    workers_gone = max(recorder.last_deleted("MachinePool") or 0, recorder.last_deleted("MachineDeployment") or 0)
    control_plane = recorder.first_deleting("KubeadmControlPlane")
    infrastructure = recorder.first_deleting("DockerCluster")
    assert control_plane is not None and infrastructure is not None
    assert workers_gone < control_plane < infrastructure, (
        "the control plane went before the workers, or after the infra"
    )
    assert env.workloads.get(env.namespace, "demo") is None, "the workload cluster was not deleted"


async def test_a_pool_node_registered_again_under_its_name_is_what_the_pool_names(env: SimEnv) -> None:
    """Cluster API #12388: a pool instance that registers its Node again (same name and providerID, a new uid, as a
    reimaged instance does) left upstream's nodeRefs naming the old uid for good, because its early exit compares
    counts only. Here the pool's nodeRefs follow the Node that runs."""
    await env.apply_example(small_cluster())
    await env.wait_ready()
    pool = await env.pool("mp-0")
    (old_ref, *_) = pool["status"]["nodeRefs"]
    workload = env.workload()
    node = workload.node(old_ref["name"])
    assert node is not None and node["metadata"]["uid"] == old_ref["uid"]
    await workload.client.delete("v1", "Node", old_ref["name"])
    again = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {k: v for k, v in node["metadata"].items() if k in ("name", "labels", "annotations")},
        "spec": node["spec"],
        "status": node.get("status", {}),
    }
    created = await workload.client.create(again)
    assert created["metadata"]["uid"] != old_ref["uid"]

    async def fresh() -> bool:
        refs = dig(await env.pool("mp-0"), "status", "nodeRefs") or []
        return {"name": old_ref["name"], "uid": created["metadata"]["uid"]} in [
            {"name": r.get("name"), "uid": r.get("uid")} for r in refs
        ]

    await eventually(fresh, what="mp-0's nodeRefs to name the Node registered again")
    pool = await env.pool("mp-0")
    assert [r["uid"] for r in pool["status"]["nodeRefs"]].count(old_ref["uid"]) == 0
    assert len(pool["status"]["nodeRefs"]) == pool["spec"]["replicas"]
