"""A DockerMachinePool in a Cluster whose workload cluster is not simulated here: a *managed* pool.

The simulated DockerMachinePool normally backs its instances with DockerMachines of the simulated Docker
provider (:mod:`clusterclass.sim.docker.machinepool`), which join the simulated workload cluster the
DockerCluster opened. When the Cluster's infrastructure is another provider's — upstream's in-memory provider,
say, with upstream's own core and kubeadm managers beside only this simulated MachinePool infrastructure — there
is no simulated workload cluster and no DockerMachine controller to provision anything. The pool then behaves
as a managed pool does (AKS's managed machine pools are the model): no MachinePool Machines
(``status.infrastructureMachineKind`` is left unset), and its instances are Nodes the pool registers itself in
the Cluster's workload cluster, reached through the ``<cluster>-kubeconfig`` Secret as any provider reaches it.

Each instance is one Node named ``<DockerMachinePool>-<6 characters>``, ``spec.providerID``
``docker:////<node>``, labelled with the DockerMachinePool's uid, Ready at once, its kubelet the
MachinePool's version (or the custom image's tag). The replacement rule is the Docker one: an instance whose
image or build (template fields, bootstrap data Secret) no longer matches is replaced, all at once or
``pool_max_surge`` at a time, the surplus deleted once the replacements are Ready, outdated ones first.
``spec.providerIDList`` lists the instances, which is what the core MachinePool controller — upstream's or the
simulated one — matches against the Nodes for nodeRefs.

Nodes are written with their status: a real kubelet posts it, and the workload API servers this is used
with (upstream's in-memory one, the simulated ones) keep what a create carries; where a server dropped it,
the status is written through the status subresource.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field

from clusterclass.api.objects import Obj, dig, labels_of, name_of, namespace_of
from clusterclass.controllers.workload import KUBECONFIG_SUFFIX, kubeconfig_in_secret
from clusterclass.kube.client import Client
from clusterclass.kube.errors import ApiError, NotFound
from clusterclass.kube.http import HttpClient
from clusterclass.sim.docker.kubelet import kubelet_of, node_status
from clusterclass.sim.docker.machine import ANNOTATION_BUILD, ANNOTATION_IMAGE
from clusterclass.topology.reader import NodeReadError

#: the kind of infrastructure cluster whose workload cluster the simulation itself serves
SIMULATED_INFRASTRUCTURE_CLUSTER = "DockerCluster"
#: the label that ties a Node to the DockerMachinePool that made it (its uid: names can be too long for a value)
LABEL_POOL_UID = "docker.sim.clusterclass.dev/machine-pool-uid"
#: how long one request to a workload cluster may take
REQUEST_TIMEOUT = 10.0
#: upstream's in-memory workload API server routes a create only when it is declared protobuf (what kubelets and
#: client-go send), then decodes whatever the body is; a JSON create it answers 415, and gets again so declared
UNSUPPORTED_MEDIA_TYPE, PROTOBUF = 415, "application/vnd.kubernetes.protobuf"


class WorkloadUnreachable(Exception):
    """The Cluster's workload cluster cannot be reached (no kubeconfig Secret yet, or it does not answer)."""


def is_managed(cluster: Obj) -> bool:
    """Whether a DockerMachinePool of ``cluster`` is a managed pool (module doc): its infrastructure cluster is
    not the simulated DockerCluster."""
    kind = dig(cluster, "spec", "infrastructureRef", "kind")
    return bool(kind) and kind != SIMULATED_INFRASTRUCTURE_CLUSTER


@dataclass
class _Connection:
    secret_version: str
    client: HttpClient


@dataclass
class ManagedPools:
    """The workload-cluster side of managed pools: one client per Cluster, rebuilt when its kubeconfig changes."""

    connections: dict[tuple[str, str], _Connection] = field(default_factory=dict)

    async def client(self, management: Client, cluster: Obj) -> HttpClient:
        """A client of ``cluster``'s workload cluster, from its ``<cluster>-kubeconfig`` Secret."""
        namespace, name = namespace_of(cluster), name_of(cluster)
        try:
            secret = await management.get("v1", "Secret", name + KUBECONFIG_SUFFIX, namespace=namespace)
        except NotFound:
            raise WorkloadUnreachable(f"Secret {namespace}/{name}{KUBECONFIG_SUFFIX} does not exist yet") from None
        version = str(dig(secret, "metadata", "resourceVersion") or "")
        known = self.connections.get((namespace, name))
        if known is not None and known.secret_version == version:
            return known.client
        try:
            config = kubeconfig_in_secret(secret)
        except NodeReadError as unusable:
            raise WorkloadUnreachable(str(unusable)) from unusable
        if known is not None:
            await known.client.close()
        client = HttpClient(config, request_timeout=REQUEST_TIMEOUT, read_retries=1)
        self.connections[(namespace, name)] = _Connection(version, client)
        return client

    async def close(self) -> None:
        for known in self.connections.values():
            await known.client.close()
        self.connections.clear()


async def pool_nodes(workload: HttpClient, docker_pool: Obj) -> list[Obj]:
    """The Nodes of ``docker_pool``'s instances, by name."""
    uid = str(dig(docker_pool, "metadata", "uid"))
    try:
        nodes = (await workload.list("v1", "Node")).items
    except (ApiError, OSError, TimeoutError) as error:
        raise WorkloadUnreachable(f"listing Nodes: {error}") from error
    return sorted((n for n in nodes if labels_of(n).get(LABEL_POOL_UID) == uid), key=name_of)


async def register_node(
    workload: HttpClient, docker_pool: Obj, name: str, image: str, build: str, version: str, now: str
) -> Obj:
    """Register one instance's Node, Ready, with its kubelet version, image and build (module doc)."""
    status = node_status(name, version, ready=True, now=now)
    node: Obj = {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "labels": {LABEL_POOL_UID: str(dig(docker_pool, "metadata", "uid")), "kubernetes.io/hostname": name},
            "annotations": {ANNOTATION_IMAGE: image, ANNOTATION_BUILD: build},
        },
        "spec": {"providerID": f"docker:////{name}"},
        "status": status,
    }
    try:
        try:
            created = await workload.create(node)
        except ApiError as refused:
            if refused.code != UNSUPPORTED_MEDIA_TYPE:
                raise
            created = await workload.create(node, declared_content_type=PROTOBUF)
        if not dig(created, "status", "conditions"):
            created["status"] = status
            created = await workload.update_status(created)
    except (ApiError, OSError, TimeoutError) as error:
        raise WorkloadUnreachable(f"registering Node {name}: {error}") from error
    return created


async def remove_node(workload: HttpClient, node: Obj) -> None:
    with contextlib.suppress(NotFound):
        try:
            await workload.delete("v1", "Node", name_of(node))
        except (OSError, TimeoutError) as error:
            raise WorkloadUnreachable(f"deleting Node {name_of(node)}: {error}") from error


def kubelet_version(image: str, version: str | None) -> str:
    return str(kubelet_of(image, version) or "")
