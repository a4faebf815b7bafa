"""Whether anything of a deleted Cluster is left in its namespace, on any backend (the end-to-end tests' check)."""

from __future__ import annotations

from clusterclass.api.objects import dig
from clusterclass.kube.client import Client

CAPI = "cluster.x-k8s.io/v1beta1"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"

#: every kind a Cluster's life creates in its namespace (the ClusterClass's templates aside)
CLUSTER_KINDS = (
    (CAPI, "Cluster"),
    (CAPI, "MachinePool"),
    (CAPI, "MachineDeployment"),
    (CAPI, "MachineSet"),
    (CAPI, "Machine"),
    (CAPI, "MachineHealthCheck"),
    ("controlplane.cluster.x-k8s.io/v1beta1", "KubeadmControlPlane"),
    ("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfig"),
    (INFRA, "DockerCluster"),
    (INFRA, "DockerMachine"),
    (INFRA, "DockerMachinePool"),
)


async def nothing_left(client: Client, namespace: str) -> bool:
    """No object of a Cluster's is left in ``namespace``: its kinds, its Secrets, the templates cloned for it."""
    for api_version, kind in CLUSTER_KINDS:
        if (await client.list(api_version, kind, namespace=namespace)).items:
            return False
    secrets = (await client.list("v1", "Secret", namespace=namespace)).items
    if any(s.get("type") == "cluster.x-k8s.io/secret" for s in secrets):
        return False
    templates = (await client.list(INFRA, "DockerMachineTemplate", namespace=namespace)).items
    return not any(dig(t, "metadata", "labels", "cluster.x-k8s.io/cluster-name") for t in templates)
