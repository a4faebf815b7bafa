"""Quick start: a ClusterClass with MachinePools and a MachineDeployment comes up, owned as upstream's e2e checks.

Upstream's quick-start spec applies a ClusterClass-based Cluster, waits for the control plane, the
MachineDeployments' Machines and the MachinePools' ready replicas, and checks the ownerReferences of
every object (topology-spec §3.7). The same here, on the embedded store and on a real kube-apiserver,
with the bundled example and with upstream's own quick-start ClusterClass YAML unchanged.
"""

from __future__ import annotations

import base64

import yaml
from e2e_support import BOOTSTRAP, CAPI, CONTROL_PLANE, INFRA, SimEnv, eventually, example_cluster, upstream_quick_start

from clusterclass.api.objects import Obj, dig, labels_of, name_of
from clusterclass.kube.http import HttpClient
from clusterclass.kube.http.kubeconfig import parse_kubeconfig
from clusterclass.yamlio import SAFE_LOADER


def owners(obj: Obj) -> list[tuple[str, str, bool]]:
    """(kind, name, controller) of each ownerReference, but the shim's: the test checks the shim is gone, and
    only a garbage collector drops references to it (a real kube-apiserver alone runs none)."""
    refs = dig(obj, "metadata", "ownerReferences") or []
    found = [(str(ref["kind"]), str(ref["name"]), bool(ref.get("controller"))) for ref in refs]
    return sorted(ref for ref in found if ref[:2] != ("Secret", "demo-shim"))


async def test_the_example_comes_up_with_upstreams_ownership_graph(any_env: SimEnv) -> None:
    env = any_env
    await env.apply_example()
    objects = await env.wait_ready()
    cluster = objects.cluster
    assert dig(cluster, "status", "phase") == "Provisioned"
    assert dig(cluster, "status", "infrastructureReady") is True and dig(cluster, "status", "controlPlaneReady") is True
    assert {c["type"]: c["status"] for c in cluster["status"]["conditions"]} == {
        "Ready": "True",
        "ControlPlaneInitialized": "True",
        "ControlPlaneReady": "True",
        "InfrastructureReady": "True",
        "TopologyReconciled": "True",
    }
    # the Cluster controller controls the infrastructure cluster and the control plane; the shim is gone
    infra = objects.lookup(cluster["spec"]["infrastructureRef"])
    control_plane = objects.lookup(cluster["spec"]["controlPlaneRef"])
    assert infra is not None and control_plane is not None
    assert owners(infra) == [("Cluster", "demo", True)]
    assert owners(control_plane) == [("Cluster", "demo", True)]

    async def shim_gone() -> bool:
        return await env.find("v1", "Secret", "demo-shim") is None

    await eventually(shim_gone, what="the topology controller to delete the shim Secret")
    # the ClusterClass owns its templates
    for template in await env.list(INFRA, "DockerMachinePoolTemplate"):
        assert ("ClusterClass", "quick-start-pools", False) in owners(template)
    # MachinePools: exactly one ownerRef, to the Cluster; their KubeadmConfig and DockerMachinePool are
    # controlled by the MachinePool and owned by the Cluster too
    assert len(objects.machine_pools) == 2
    for pool in objects.machine_pools:
        assert owners(pool) == [("Cluster", "demo", False)]
        spec = pool["spec"]["template"]["spec"]
        config = await env.get(BOOTSTRAP, "KubeadmConfig", spec["bootstrap"]["configRef"]["name"])
        docker_pool = await env.get(INFRA, "DockerMachinePool", spec["infrastructureRef"]["name"])
        for part in (config, docker_pool):
            assert owners(part) == sorted([("Cluster", "demo", False), ("MachinePool", name_of(pool), True)])
        assert spec["bootstrap"]["dataSecretName"] == name_of(config)
        assert dig(pool, "status", "readyReplicas") == pool["spec"]["replicas"]
        assert dig(pool, "status", "phase") == "Running"
        assert dig(docker_pool, "status", "infrastructureMachineKind") == "DockerMachine"
        # nodeRefs name Nodes of the workload cluster whose providerIDs the pool lists, at the pool's version
        nodes = env.pool_nodes(pool)
        assert len(nodes) == pool["spec"]["replicas"]
        assert sorted(n["spec"]["providerID"] for n in nodes) == sorted(pool["spec"]["providerIDList"])
        assert {n["status"]["nodeInfo"]["kubeletVersion"] for n in nodes} == {"v1.28.0"}
        for node in nodes:
            assert node["metadata"]["annotations"]["cluster.x-k8s.io/owner-kind"] == "MachinePool"
            assert not any(t["key"] == "node.cluster.x-k8s.io/uninitialized" for t in node["spec"].get("taints") or [])
        # the MachinePool Machines, one per instance
        pool_machines = [m for m in objects.machines if labels_of(m).get("cluster.x-k8s.io/pool-name") == name_of(pool)]
        assert len(pool_machines) == pool["spec"]["replicas"]
        assert all(owners(m) == [("MachinePool", name_of(pool), True)] for m in pool_machines)
        assert all(dig(m, "status", "phase") == "Running" and not dig(m, "spec", "version") for m in pool_machines)
    # the MachineDeployment and its templates are owned by the Cluster, its Machines run Nodes
    (deployment,) = objects.machine_deployments
    assert owners(deployment) == [("Cluster", "demo", False)]
    template = deployment["spec"]["template"]["spec"]
    for api_version, kind, name in (
        (INFRA, "DockerMachineTemplate", template["infrastructureRef"]["name"]),
        (BOOTSTRAP, "KubeadmConfigTemplate", template["bootstrap"]["configRef"]["name"]),
    ):
        assert ("Cluster", "demo", False) in owners(await env.get(api_version, kind, name))
    assert dig(deployment, "status", "availableReplicas") == 2 and dig(deployment, "status", "phase") == "Running"
    # the control plane: 3 Machines with Ready control-plane Nodes, at the topology's version
    assert dig(control_plane, "status", "version") == "v1.28.0"
    assert dig(control_plane, "status", "initialized") is True and dig(control_plane, "status", "ready") is True
    control_plane_nodes = [n for n in env.workload().nodes() if "node-role.kubernetes.io/control-plane" in labels_of(n)]
    assert len(control_plane_nodes) == 3
    assert len(env.workload().nodes()) == 3 + 2 + 3 + 2
    assert env.reconcile_errors() == {} or all(set(e) <= {"Conflict"} for e in env.reconcile_errors().values())


async def test_the_kubeconfig_secret_reaches_the_workload_cluster_over_https(env: SimEnv) -> None:
    await env.apply_example()
    await env.wait_ready()
    secret = await env.get("v1", "Secret", "demo-kubeconfig")
    assert secret["type"] == "cluster.x-k8s.io/secret"
    document = yaml.load(base64.b64decode(secret["data"]["value"]), Loader=SAFE_LOADER)
    cluster = await env.get(CAPI, "Cluster", "demo")
    endpoint = cluster["spec"]["controlPlaneEndpoint"]
    assert document["clusters"][0]["cluster"]["server"] == f"https://{endpoint['host']}:{endpoint['port']}"
    assert document["current-context"] == "demo-admin@demo"
    client = HttpClient(parse_kubeconfig(document, path="secret"))
    try:
        nodes = (await client.list("v1", "Node")).items
        pods = (await client.list("v1", "Pod", namespace="kube-system")).items
    finally:
        await client.close()
    assert sorted(name_of(n) for n in nodes) == sorted(name_of(n) for n in env.workload().nodes())
    assert len([p for p in pods if labels_of(p).get("component") == "kube-apiserver"]) == 3


async def test_upstreams_quick_start_clusterclass_runs_unchanged(any_env: SimEnv) -> None:
    env = any_env
    await env.apply(*upstream_quick_start())
    cluster = example_cluster(
        "qs",
        **{
            "class": "quick-start",
            "workers": {
                "machineDeployments": [{"class": "default-worker", "name": "md-0", "replicas": 1}],
                "machinePools": [{"class": "default-worker", "name": "mp-0", "replicas": 2}],
            },
            "controlPlane": {"replicas": 1},
            # upstream's e2e sets these: empty, its etcd and CoreDNS patches write nulls the API refuses
            "variables": [
                {"name": "imageRepository", "value": "registry.k8s.io"},
                {"name": "etcdImageTag", "value": "3.5.9-0"},
                {"name": "coreDNSImageTag", "value": "v1.10.1"},
            ],
        },
    )
    await env.apply(cluster)
    objects = await env.wait_ready("qs")
    (pool,) = objects.machine_pools
    docker_pool = await env.get(
        INFRA, "DockerMachinePool", pool["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    )
    # upstream's customImage patch reaches the instances
    assert docker_pool["spec"]["template"]["customImage"] == "kindest/node:v1.28.0"
    control_plane = objects.lookup(objects.cluster["spec"]["controlPlaneRef"])
    assert control_plane is not None
    configuration = control_plane["spec"]["kubeadmConfigSpec"]["clusterConfiguration"]
    assert configuration["imageRepository"] == "registry.k8s.io"
    assert configuration["etcd"] == {"local": {"imageTag": "3.5.9-0"}}
    assert configuration["dns"] == {"imageTag": "v1.10.1"}
    assert {n["status"]["nodeInfo"]["kubeletVersion"] for n in env.pool_nodes(pool, "qs")} == {"v1.28.0"}


async def test_upstreams_quick_start_with_empty_image_tags_says_why_it_cannot_create_the_control_plane(
    any_env: SimEnv,
) -> None:
    """The etcd and CoreDNS patches render ``imageTag: null`` when their variables keep the default "":
    kube-apiserver refuses the applied control plane, and the Cluster says so (as upstream's would)."""
    env = any_env
    await env.apply(*upstream_quick_start())
    await env.apply(example_cluster("qs", **{"class": "quick-start", "workers": {}, "controlPlane": {"replicas": 1}}))

    async def refused() -> bool:
        cluster = await env.get(CAPI, "Cluster", "qs")
        found = [c for c in dig(cluster, "status", "conditions") or [] if c["type"] == "TopologyReconciled"]
        return bool(found) and "in body must be of type string" in found[0].get("message", "")

    await eventually(refused, what="TopologyReconciled to report the refused control plane")
    assert await env.list(CONTROL_PLANE, "KubeadmControlPlane") == []
