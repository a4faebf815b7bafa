"""Reading workload-cluster Nodes through a Cluster's ``<cluster>-kubeconfig`` Secret, as on a real management cluster.

The workload cluster here is the test's real kube-apiserver (Nodes are plain objects to it; no kubelet is
needed), reached with the kubeconfig stored in the Secret, key ``value``, as Cluster API stores it. The
management cluster is each backend in turn. The topology controller must find a MachinePool still upgrading
while a Node of its ``status.nodeRefs`` runs the old kubelet, and let the next one go once it does not.
"""

from __future__ import annotations

import base64

import pytest
from controller_support import Env, eventually, example_class, example_cluster
from support.real_apiserver import RealApiServer

from clusterclass.api.objects import dig, name_of
from clusterclass.controllers.workload import KubeconfigWorkloadClusters
from clusterclass.topology.reader import NodeReadError

OLD, NEW = "v1.28.0", "v1.29.0"


def node(name: str, kubelet: str) -> dict:
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {"name": name},
        "status": {"nodeInfo": {"kubeletVersion": kubelet, "architecture": "amd64", "operatingSystem": "linux"}},
    }


async def test_machine_pool_upgrades_follow_the_nodes_of_the_real_workload_cluster(
    env: Env, real_apiserver: RealApiServer
) -> None:
    env.controllers = await env.new_controllers(through_kubeconfigs=True).start()
    workload = real_apiserver.client()
    prefix = env.namespace  # Node names unique to this test on the shared server
    try:
        kubeconfig = real_apiserver.kubeconfig.read_bytes()
        await env.apply(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "demo-kubeconfig", "labels": {"cluster.x-k8s.io/cluster-name": "demo"}},
                "type": "cluster.x-k8s.io/secret",
                "data": {"value": base64.b64encode(kubeconfig).decode()},
            }
        )
        cluster = example_cluster()
        await env.apply(*example_class(), cluster)
        await env.wait_reconciled()
        await env.settle_control_plane()
        pools = await env.machine_pools()
        for topology_name, pool in pools.items():
            names = [f"{prefix}-{topology_name}-old"]
            for name in names:
                await workload.create(node(name, OLD))
            await env.set_status(pool, {"nodeRefs": [{"apiVersion": "v1", "kind": "Node", "name": n} for n in names]})
        await env.wait_reconciled()

        cluster["spec"]["topology"]["version"] = NEW
        await env.apply(cluster)
        await eventually(lambda: _cp_at(env, NEW), what="the control plane to start upgrading")
        await env.settle_control_plane(version=NEW)

        async def first_only() -> bool:
            now = await env.machine_pools()
            return _version(now["mp-0"]) == NEW and _version(now["mp-1"]) == OLD

        await eventually(first_only, what="mp-0 to upgrade while mp-1 waits")
        await env.settled()
        assert _version((await env.machine_pools())["mp-1"]) == OLD  # mp-0's Node still runs the old kubelet

        # mp-0 rolled: a new Node at the new version replaces the old one
        new_node = f"{prefix}-mp-0-new"
        await workload.create(node(new_node, NEW))
        await env.set_status(pools["mp-0"], {"nodeRefs": [{"apiVersion": "v1", "kind": "Node", "name": new_node}]})

        async def second() -> bool:
            return _version((await env.machine_pools())["mp-1"]) == NEW

        await eventually(second, what="mp-1 to upgrade once mp-0's Nodes run the new kubelet")
    finally:
        await workload.close()


async def test_an_unreachable_workload_cluster_is_a_clear_reconcile_error(env: Env) -> None:
    env.controllers = controllers = await env.new_controllers(through_kubeconfigs=True).start()
    assert isinstance(controllers.workload, KubeconfigWorkloadClusters)
    await env.apply(*example_class(), example_cluster())
    await env.wait_reconciled()
    pool = (await env.machine_pools())["mp-0"]
    await env.set_status(pool, {"nodeRefs": [{"apiVersion": "v1", "kind": "Node", "name": "n1"}]})
    condition = await env.wait_condition("TopologyReconcileFailed")
    assert condition["message"] == (
        "error computing the desired state of the Cluster topology: failed to check if any MachinePool is upgrading: "
        f"the kubeconfig Secret {env.namespace}/demo-kubeconfig does not exist"
    )
    with pytest.raises(NodeReadError):
        controllers.workload.get_node(await env.cluster(), "n1")
    assert name_of(pool)


def _version(pool: dict) -> str:
    return str(dig(pool, "spec", "template", "spec", "version"))


async def _cp_at(env: Env, version: str) -> bool:
    return bool((await env.control_plane())["spec"]["version"] == version)
