"""A DockerMachinePool in a Cluster of another infrastructure provider: a managed pool.

Beside upstream's own managers (the interop suite), the simulated DockerMachinePool is the only simulated
provider that runs: its Cluster's infrastructure is upstream's in-memory provider, so there is no DockerCluster,
no DockerMachine controller, and the workload cluster is somebody else's, reached through the Cluster's
``<cluster>-kubeconfig`` Secret. Here the same situation on the embedded store: a workload cluster served with
its own CA and kubeconfig Secret, a Cluster whose infrastructure kind is not DockerCluster, and only the core
MachinePool and the DockerMachinePool controllers running. The pool registers Nodes there; the core controller
matches them by providerID, as upstream's does.
"""

from __future__ import annotations

import random
from collections.abc import AsyncIterator
from dataclasses import dataclass

import pytest
from e2e_support import CAPI, INFRA, eventually

from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.controllers import ControllerOptions, Controllers
from clusterclass.kube.certs import CertificateAuthority
from clusterclass.kube.client import Client
from clusterclass.kube.errors import NotFound
from clusterclass.sim import Simulation
from clusterclass.sim.core.machinepool import MachinePoolController
from clusterclass.sim.docker.machinepool import DockerMachinePoolController
from clusterclass.sim.docker.managedpool import LABEL_POOL_UID
from clusterclass.sim.kubeadm.certificates import admin_kubeconfig, kubeconfig_secret
from clusterclass.sim.workload import WorkloadCluster, WorkloadClusters

CLUSTER = "managed"


@dataclass
class ManagedWorld:
    client: Client
    namespace: str
    workload: WorkloadCluster
    simulation: Simulation

    async def get(self, api_version: str, kind: str, name: str) -> Obj:
        return await self.client.get(api_version, kind, name, namespace=self.namespace)

    def pool_nodes(self) -> list[Obj]:
        return sorted(
            (n for n in self.workload.nodes() if LABEL_POOL_UID in (n["metadata"].get("labels") or {})), key=name_of
        )


#: the other provider's infrastructure cluster kind, as its CRD says (its contract label maps the Cluster's v1beta2
#: ``infrastructureRef.apiGroup`` back to a v1beta1 apiVersion)
IN_MEMORY_CLUSTER_CRD: Obj = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {
        "name": "inmemoryclusters.infrastructure.cluster.x-k8s.io",
        "labels": {"cluster.x-k8s.io/v1beta1": "v1alpha1"},
    },
    "spec": {
        "group": "infrastructure.cluster.x-k8s.io",
        "names": {
            "kind": "InMemoryCluster",
            "listKind": "InMemoryClusterList",
            "plural": "inmemoryclusters",
            "singular": "inmemorycluster",
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1alpha1",
                "served": True,
                "storage": True,
                "schema": {"openAPIV3Schema": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
                "subresources": {"status": {}},
            }
        ],
    },
}


def cluster_of_another_provider(namespace: str) -> Obj:
    return {
        "apiVersion": CAPI,
        "kind": "Cluster",
        "metadata": {"name": CLUSTER, "namespace": namespace},
        "spec": {
            "infrastructureRef": {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1alpha1",
                "kind": "InMemoryCluster",
                "name": CLUSTER,
            }
        },
    }


def machine_pool(namespace: str, replicas: int, version: str) -> list[Obj]:
    docker_pool = {
        "apiVersion": INFRA,
        "kind": "DockerMachinePool",
        "metadata": {"name": "mp-0", "namespace": namespace},
        "spec": {"template": {}},
    }
    pool = {
        "apiVersion": CAPI,
        "kind": "MachinePool",
        "metadata": {"name": "mp-0", "namespace": namespace, "labels": {"cluster.x-k8s.io/cluster-name": CLUSTER}},
        "spec": {
            "clusterName": CLUSTER,
            "replicas": replicas,
            "template": {
                "spec": {
                    "clusterName": CLUSTER,
                    "version": version,
                    "bootstrap": {"dataSecretName": "mp-0-bootstrap"},
                    "infrastructureRef": {"apiVersion": INFRA, "kind": "DockerMachinePool", "name": "mp-0"},
                }
            },
        },
    }
    return [docker_pool, pool]


@pytest.fixture
async def world() -> AsyncIterator[ManagedWorld]:
    store = MemoryStore()
    client = MemoryClient(store)
    workloads = WorkloadClusters()
    namespace = (await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "mp-"}}))[
        "metadata"
    ]["name"]
    await client.create(IN_MEMORY_CLUSTER_CRD)
    cluster = await client.create(cluster_of_another_provider(namespace))
    # the other provider's workload cluster and the kubeconfig Secret its control plane wrote
    workload = await workloads.open(namespace, CLUSTER)
    workloads.reserve(workload)
    ca = CertificateAuthority("kubernetes")
    await workloads.serve(workload, ca)
    owner = {"apiVersion": CAPI, "kind": "Cluster", "name": CLUSTER, "uid": cluster["metadata"]["uid"]}
    assert workload.url is not None
    await client.create(kubeconfig_secret(CLUSTER, namespace, admin_kubeconfig(CLUSTER, workload.url, ca), owner))
    controllers = Controllers(client, ControllerOptions(namespace=namespace, rng=random.Random(3)))
    simulation = Simulation(
        controllers.manager,
        workloads=workloads,
        rng=random.Random(5),
        providers=(MachinePoolController, DockerMachinePoolController),
    )
    await simulation.setup()
    await controllers.start()
    try:
        yield ManagedWorld(client, namespace, workload, simulation)
    finally:
        await controllers.stop()
        await simulation.close()
        await client.close()
        store.close()


async def pool_ready(world: ManagedWorld, replicas: int, version: str) -> bool:
    pool = await world.get(CAPI, "MachinePool", "mp-0")
    nodes = world.pool_nodes()
    refs = sorted(str(r["name"]) for r in dig(pool, "status", "nodeRefs") or [])
    return (
        dig(pool, "status", "readyReplicas") == replicas
        and refs == [name_of(n) for n in nodes]
        and len(nodes) == replicas
        and all(dig(n, "status", "nodeInfo", "kubeletVersion") == version for n in nodes)
    )


async def test_a_managed_pool_registers_replaces_and_removes_nodes_in_the_workload_cluster(
    world: ManagedWorld,
) -> None:
    for obj in machine_pool(world.namespace, 3, "v1.28.0"):
        await world.client.create(obj)
    await eventually(lambda: pool_ready(world, 3, "v1.28.0"), what="three Nodes of v1.28.0")
    docker_pool = await world.get(INFRA, "DockerMachinePool", "mp-0")
    assert "infrastructureMachineKind" not in (docker_pool.get("status") or {}), "a managed pool has no Machines"
    assert [m for m in (await world.client.list(CAPI, "Machine", namespace=world.namespace)).items] == []
    nodes = world.pool_nodes()
    assert sorted(docker_pool["spec"]["providerIDList"]) == sorted(f"docker:////{name_of(n)}" for n in nodes)
    assert all(name_of(n).startswith("mp-0-") for n in nodes)
    first = {name_of(n) for n in nodes}

    # an upgrade replaces every instance (the Docker rule: the image follows the version)
    await world.client.patch(
        CAPI, "MachinePool", "mp-0", {"spec": {"template": {"spec": {"version": "v1.29.0"}}}}, namespace=world.namespace
    )
    await eventually(lambda: pool_ready(world, 3, "v1.29.0"), what="three Nodes of v1.29.0")
    assert not first & {name_of(n) for n in world.pool_nodes()}, "an old instance survived the upgrade"

    # scaling in removes Nodes
    await world.client.patch(CAPI, "MachinePool", "mp-0", {"spec": {"replicas": 1}}, namespace=world.namespace)
    await eventually(lambda: pool_ready(world, 1, "v1.29.0"), what="one Node")

    # deleting the pool deregisters its Nodes and lets both objects go
    await world.client.delete(CAPI, "MachinePool", "mp-0", namespace=world.namespace)

    async def gone() -> bool:
        for kind, version in (("MachinePool", CAPI), ("DockerMachinePool", INFRA)):
            try:
                await world.get(version, kind, "mp-0")
                return False
            except NotFound:
                pass
        return not world.pool_nodes()

    await eventually(gone, what="the pool, its DockerMachinePool and its Nodes to be gone")


async def test_a_managed_pool_waits_for_the_workload_cluster_without_losing_anything(world: ManagedWorld) -> None:
    await world.client.delete("v1", "Secret", CLUSTER + "-kubeconfig", namespace=world.namespace)
    for obj in machine_pool(world.namespace, 2, "v1.28.0"):
        await world.client.create(obj)

    async def waiting() -> bool:
        docker_pool = await world.get(INFRA, "DockerMachinePool", "mp-0")
        conditions = {c["type"]: c for c in dig(docker_pool, "status", "conditions") or []}
        return conditions.get("ReplicasReady", {}).get("reason") == "WorkloadClusterUnreachable"

    await eventually(waiting, what="the DockerMachinePool to report the workload cluster unreachable")
    assert world.pool_nodes() == []


async def test_a_pool_whose_cluster_names_no_infrastructure_yet_waits_to_know_what_it_is(world: ManagedWorld) -> None:
    """Upstream's topology controller creates the pools while the Cluster's refs are on their way: a pool decided
    to be a Docker one then kept ``infrastructureMachineKind``, and upstream's MachinePool controller waited for
    Machines a managed pool never makes (seen beside upstream's managers, one MachinePool of 100 never Ready)."""
    refs = {"spec": {"infrastructureRef": None}}
    await world.client.patch(CAPI, "Cluster", CLUSTER, refs, namespace=world.namespace)
    for obj in machine_pool(world.namespace, 1, "v1.28.0"):
        await world.client.create(obj)

    async def seen_by_the_provider() -> bool:
        pool = await world.get(CAPI, "MachinePool", "mp-0")
        return bool(dig(pool, "status", "observedGeneration")) or bool(dig(pool, "metadata", "finalizers"))

    await eventually(seen_by_the_provider, what="the core MachinePool controller to have reconciled the pool")
    docker_pool = await world.get(INFRA, "DockerMachinePool", "mp-0")
    assert "infrastructureMachineKind" not in (docker_pool.get("status") or {})

    await world.client.patch(
        CAPI,
        "Cluster",
        CLUSTER,
        {"spec": cluster_of_another_provider(world.namespace)["spec"]},
        namespace=world.namespace,
    )
    await eventually(lambda: pool_ready(world, 1, "v1.28.0"), what="one Node, the pool a managed one")
    docker_pool = await world.get(INFRA, "DockerMachinePool", "mp-0")
    assert "infrastructureMachineKind" not in (docker_pool.get("status") or {})
