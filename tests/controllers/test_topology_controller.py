"""The topology controller end to end (spec §10.5, upstream's ``cluster_controller_test.go``), with MachinePools.

The bundled ClusterClass ``pools`` (one MachineDeployment class ``general``, one MachinePool class ``pool``)
and Clusters using it are applied; the controllers run against the backend; assertions read the objects
back. Every case covers MachinePools and, where upstream has one, the MachineDeployment twin.
"""

from __future__ import annotations

import pytest
from controller_support import (
    BOOTSTRAP_REF,
    CAPI,
    CONTROL_PLANE,
    INFRA,
    INFRA_REF,
    Env,
    eventually,
    example_class,
    example_cluster,
)

from clusterclass.api import constants as c
from clusterclass.api.objects import dig, name_of

pytestmark = pytest.mark.usefixtures("running")


async def assert_machine_pools_reconcile(env: Env, cluster_name: str = "demo") -> None:
    """Upstream's ``assertMachinePoolsReconcile``: one MachinePool per topology entry, as the topology says."""
    cluster = await env.cluster(cluster_name)
    topology = cluster["spec"]["topology"]
    pools = await env.machine_pools(cluster_name)
    assert sorted(pools) == sorted(entry["name"] for entry in topology["workers"]["machinePools"])
    for entry in topology["workers"]["machinePools"]:
        pool = pools[entry["name"]]
        labels = pool["metadata"]["labels"]
        assert labels[c.LABEL_CLUSTER_NAME] == cluster_name and labels[c.LABEL_TOPOLOGY_OWNED] == ""
        assert pool["spec"].get("replicas") == entry.get("replicas")
        machine = pool["spec"]["template"]["spec"]
        assert machine["version"] == topology["version"]
        infra_ref, bootstrap_ref = machine["infrastructureRef"], machine["bootstrap"]["configRef"]
        assert (infra_ref["apiVersion"], infra_ref["kind"]) == (INFRA_REF, "DockerMachinePool")
        assert (bootstrap_ref["apiVersion"], bootstrap_ref["kind"]) == (BOOTSTRAP_REF, "KubeadmConfig")
        for ref in (infra_ref, bootstrap_ref):
            obj = await env.get(ref["apiVersion"], ref["kind"], ref["name"])
            obj_labels = obj["metadata"]["labels"]
            assert obj_labels[c.LABEL_CLUSTER_NAME] == cluster_name and c.LABEL_TOPOLOGY_OWNED in obj_labels
            assert c.ANNOTATION_CLONED_FROM_NAME in obj["metadata"]["annotations"]


async def test_a_new_cluster_gets_every_object_and_the_condition(env: Env) -> None:
    await env.apply_example()
    cluster = await env.wait_reconciled()
    assert cluster["spec"]["infrastructureRef"]["kind"] == "DockerCluster"
    assert cluster["spec"]["controlPlaneRef"]["kind"] == "KubeadmControlPlane"
    await assert_machine_pools_reconcile(env)
    deployments = await env.machine_deployments()
    assert list(deployments) == ["md-0"]
    assert deployments["md-0"]["spec"]["replicas"] == 2
    cp = await env.control_plane()
    assert (cp["spec"]["replicas"], cp["spec"]["version"]) == (3, "v1.28.0")
    condition = await env.condition()
    assert condition is not None and set(condition) == {"type", "status", "lastTransitionTime"}


async def test_the_condition_is_written_in_both_generations(env: Env) -> None:
    """Read in v1beta2 the Cluster has v1.14's TopologyReconciled (metav1.Condition, observedGeneration) in
    status.conditions and the v1beta1 one (v1.6's words) under status.deprecated.v1beta1; the refs are v1beta2's."""
    await env.apply_example()
    await env.wait_reconciled()
    cluster = await env.direct.get("cluster.x-k8s.io/v1beta2", "Cluster", "demo", namespace=env.namespace)
    (current,) = [x for x in cluster["status"]["conditions"] if x["type"] == "TopologyReconciled"]
    assert {k: current[k] for k in ("status", "reason", "message", "observedGeneration")} == {
        "status": "True",
        "reason": "ReconcileSucceeded",
        "message": "",
        "observedGeneration": cluster["metadata"]["generation"],
    }
    legacy = [x for x in cluster["status"]["deprecated"]["v1beta1"]["conditions"] if x["type"] == "TopologyReconciled"]
    assert [(x["status"], x.get("reason")) for x in legacy] == [("True", None)]
    assert set(cluster["spec"]["controlPlaneRef"]) == {"apiGroup", "kind", "name"}


async def test_two_clusters_from_one_class(env: Env) -> None:
    await env.apply_example("one", "two")
    for name in ("one", "two"):
        await env.wait_reconciled(name)
        await assert_machine_pools_reconcile(env, name)
    pools = {name_of(p) for name in ("one", "two") for p in (await env.machine_pools(name)).values()}
    assert len(pools) == 4


async def test_a_topology_change_reaches_the_machine_pool(env: Env) -> None:
    await env.apply_example()
    await env.wait_reconciled()
    cluster = example_cluster()
    cluster["spec"]["topology"]["workers"]["machinePools"][0]["replicas"] = 100
    cluster["spec"]["topology"]["workers"]["machineDeployments"][0]["replicas"] = 7
    await env.apply(cluster)

    async def propagated() -> bool:
        pools, deployments = await env.machine_pools(), await env.machine_deployments()
        return pools["mp-0"]["spec"]["replicas"] == 100 and deployments["md-0"]["spec"]["replicas"] == 7

    await eventually(propagated, what="replicas to propagate")
    await assert_machine_pools_reconcile(env)


async def test_a_cluster_class_change_is_made_in_place_on_machine_pools_and_rotates_deployment_templates(
    env: Env,
) -> None:
    """Upstream's ``reconcileUpdatesOnClusterClass``: the class's infrastructure refs point at new templates.

    (Templates are not watched: editing one in place is picked up at the next resync, as upstream.)
    """
    await env.apply_example()
    await env.wait_reconciled()
    infra_before = {
        t: p["spec"]["template"]["spec"]["infrastructureRef"]["name"] for t, p in (await env.machine_pools()).items()
    }
    md_infra_before = (await env.machine_deployments())["md-0"]["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    objects = {(o["kind"], name_of(o)): o for o in example_class()}
    pool_template = objects[("DockerMachinePoolTemplate", "pools-pool-machines")]
    pool_template["metadata"]["name"] = "pools-pool-machines-v2"
    pool_template["spec"]["template"]["spec"]["template"]["customImage"] = "kindest/node:custom"
    machines = objects[("DockerMachineTemplate", "pools-general-machines")]
    machines["metadata"]["name"] = "pools-general-machines-v2"
    machines["spec"]["template"]["spec"]["customImage"] = "kindest/node:custom"
    cluster_class = objects[("ClusterClass", "pools")]
    cluster_class["spec"]["workers"]["machinePools"][0]["template"]["infrastructure"]["ref"]["name"] = (
        "pools-pool-machines-v2"
    )
    cluster_class["spec"]["workers"]["machineDeployments"][0]["template"]["infrastructure"]["ref"]["name"] = (
        "pools-general-machines-v2"
    )
    await env.apply(pool_template, machines, cluster_class)

    async def images() -> list[str | None]:
        found = []
        for pool in (await env.machine_pools()).values():
            ref = pool["spec"]["template"]["spec"]["infrastructureRef"]
            found.append(dig(await env.get(INFRA, "DockerMachinePool", ref["name"]), "spec", "template", "customImage"))
        return found

    async def changed() -> bool:
        md = (await env.machine_deployments())["md-0"]
        rotated = md["spec"]["template"]["spec"]["infrastructureRef"]["name"] != md_infra_before
        return rotated and await images() == ["kindest/node:custom"] * 2

    await eventually(changed, what="the class change to reach the workers")
    # MachinePool objects are changed in place: same names; the MachineDeployment's template was rotated
    after = {
        t: p["spec"]["template"]["spec"]["infrastructureRef"]["name"] for t, p in (await env.machine_pools()).items()
    }
    assert after == infra_before
    await assert_machine_pools_reconcile(env)


async def test_a_cluster_rebased_onto_a_compatible_class_keeps_its_machine_pools(env: Env) -> None:
    await env.apply_example()
    await env.wait_reconciled()
    pools_before = {t: name_of(p) for t, p in (await env.machine_pools()).items()}
    other = next(o for o in example_class() if o["kind"] == "ClusterClass")
    other["metadata"]["name"] = "pools-v2"
    other["spec"]["workers"]["machinePools"][0]["template"]["metadata"]["labels"]["generation"] = "two"
    await env.apply(other)
    cluster = example_cluster()
    cluster["spec"]["topology"]["class"] = "pools-v2"
    await env.apply(cluster)

    async def rebased() -> bool:
        pools = await env.machine_pools()
        return all(dig(p, "metadata", "labels", "generation") == "two" for p in pools.values())

    await eventually(rebased, what="the MachinePools to follow the new class")
    await env.wait_reconciled()
    assert {t: name_of(p) for t, p in (await env.machine_pools()).items()} == pools_before
    await assert_machine_pools_reconcile(env)


async def test_a_paused_cluster_is_left_alone(env: Env) -> None:
    await env.apply(*example_class())
    cluster = example_cluster()
    cluster["spec"]["paused"] = True
    await env.apply(cluster)
    await env.settled()
    await env.reconcile()
    assert await env.machine_pools() == {}
    assert await env.condition() is None
    stored = await env.cluster()
    assert "infrastructureRef" not in stored["spec"]


async def test_a_cluster_waits_for_its_cluster_class_to_be_reconciled(env: Env) -> None:
    await env.apply(*[o for o in example_class() if o["kind"] != "ClusterClass"])
    cluster_class = next(o for o in example_class() if o["kind"] == "ClusterClass")
    cluster_class["metadata"]["annotations"] = {c.ANNOTATION_PAUSED: ""}  # the ClusterClass controller skips it
    await env.apply(cluster_class, example_cluster())
    condition = await env.wait_condition("ClusterClassNotReconciled")
    assert condition["severity"] == "Info"
    assert condition["message"].startswith("ClusterClass not reconciled.")
    assert await env.machine_pools() == {}


async def test_a_missing_cluster_class_is_a_reconcile_failure(env: Env) -> None:
    await env.apply(example_cluster())
    condition = await env.wait_condition("TopologyReconcileFailed")
    assert condition["severity"] == "Error"
    assert condition["message"] == (
        f'failed to retrieve ClusterClass {env.namespace}/pools: clusterclasses.cluster.x-k8s.io "pools" not found'
    )


async def test_the_objects_and_events_upstream_creates(env: Env) -> None:
    await env.apply_example()
    await env.wait_reconciled()
    shim = await env.list("v1", "Secret")
    assert [(name_of(s), s["type"]) for s in shim] == [("demo-shim", "cluster.x-k8s.io/secret")]
    events = await env.list("v1", "Event")
    on_cluster = sorted((e["reason"], e["message"]) for e in events if e["involvedObject"]["kind"] == "Cluster")
    pools = await env.machine_pools()
    assert ("TopologyCreate", f'Created "MachinePool/{name_of(pools["mp-0"])}"') in on_cluster
    assert ("TopologyUpdate", 'Updated "Cluster/demo"') in on_cluster
    assert all(e["source"]["component"] == "topology/cluster" and e["count"] == 1 for e in events)
    on_health_check = [e for e in events if e["involvedObject"]["kind"] == "MachineHealthCheck"]
    assert [e["reason"] for e in on_health_check] == ["TopologyCreate"]
    cp = await env.control_plane()
    assert cp["metadata"]["ownerReferences"][0]["kind"] == "Secret"
    assert cp["metadata"]["ownerReferences"][0]["uid"] == shim[0]["metadata"]["uid"]
    assert CONTROL_PLANE in cp["apiVersion"] and CAPI
