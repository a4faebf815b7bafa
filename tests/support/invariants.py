"""What must hold for a namespace of ClusterClass Clusters once everything converged, whatever happened on the way.

:func:`violations` lists every breach (empty: all hold):

- each Cluster's topology has exactly one MachineDeployment and one MachinePool per worker it names, and no other
  topology-owned one;
- a MachineDeployment's MachineSets add up to its replicas with at most one of them holding Machines; every
  MachineSet has exactly its replicas in Machines;
- every Machine is controlled by an owner that exists (MachineSet, MachinePool, control plane);
- nothing is orphaned or leaked: every KubeadmConfig, DockerMachine, DockerMachinePool, DockerCluster and control
  plane is referenced by a Machine, MachinePool or Cluster that exists, and every template cloned for a Cluster by
  its MachineDeployments, MachineSets or control plane.
"""

from __future__ import annotations

from collections import Counter

from clusterclass.api.objects import Obj, dig, labels_of, name_of
from clusterclass.kube.client import Client

CAPI = "cluster.x-k8s.io/v1beta1"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta1"
CONTROL_PLANE = "controlplane.cluster.x-k8s.io/v1beta1"
OWNED = "topology.cluster.x-k8s.io/owned"
DEPLOYMENT_NAME = "topology.cluster.x-k8s.io/deployment-name"
POOL_NAME = "topology.cluster.x-k8s.io/pool-name"
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"


def _controller(obj: Obj) -> tuple[str, str] | None:
    for ref in dig(obj, "metadata", "ownerReferences") or []:
        if ref.get("controller"):
            return str(ref.get("kind")), str(ref.get("name"))
    return None


def _ref_name(obj: Obj, *path: str) -> str | None:
    ref = dig(obj, *path)
    return str(ref["name"]) if isinstance(ref, dict) and ref.get("name") else None


async def violations(client: Client, namespace: str) -> list[str]:
    async def of(api_version: str, kind: str) -> list[Obj]:
        return (await client.list(api_version, kind, namespace=namespace)).items

    clusters = await of(CAPI, "Cluster")
    deployments = await of(CAPI, "MachineDeployment")
    pools = await of(CAPI, "MachinePool")
    machine_sets = await of(CAPI, "MachineSet")
    machines = await of(CAPI, "Machine")
    control_planes = await of(CONTROL_PLANE, "KubeadmControlPlane")
    found: list[str] = []

    for cluster in clusters:
        name = name_of(cluster)
        workers = dig(cluster, "spec", "topology", "workers") or {}
        for kind, objects, label, key in (
            ("MachineDeployment", deployments, DEPLOYMENT_NAME, "machineDeployments"),
            ("MachinePool", pools, POOL_NAME, "machinePools"),
        ):
            wanted = {str(w["name"]) for w in workers.get(key) or []}
            mine = [o for o in objects if labels_of(o).get(CLUSTER_NAME) == name and OWNED in labels_of(o)]
            counts = Counter(labels_of(o).get(label) for o in mine)
            for topology_name in wanted:
                if counts[topology_name] != 1:
                    found.append(f"Cluster {name}: {counts[topology_name]} {kind}s for {topology_name}")
            for extra in set(counts) - wanted:
                found.append(f"Cluster {name}: a {kind} for {extra}, which its topology does not name")

    sets_by_deployment: dict[str, list[Obj]] = {}
    for machine_set in machine_sets:
        owner = _controller(machine_set)
        if owner is None or owner[0] != "MachineDeployment" or owner[1] not in {name_of(d) for d in deployments}:
            found.append(f"MachineSet {name_of(machine_set)} has no MachineDeployment: {owner}")
            continue
        sets_by_deployment.setdefault(owner[1], []).append(machine_set)
    for deployment in deployments:
        sets = sets_by_deployment.get(name_of(deployment), [])
        replicas = int(dig(deployment, "spec", "replicas") or 0)
        total = sum(int(dig(s, "spec", "replicas") or 0) for s in sets)
        holding = [name_of(s) for s in sets if int(dig(s, "spec", "replicas") or 0) > 0]
        if total != replicas or len(holding) > 1:
            found.append(
                f"MachineDeployment {name_of(deployment)}: {replicas} replicas, MachineSets {holding} hold {total}"
            )

    owners = {
        "MachineSet": {name_of(s) for s in machine_sets},
        "MachinePool": {name_of(p) for p in pools},
        "KubeadmControlPlane": {name_of(c) for c in control_planes},
    }
    machines_by_owner: Counter[tuple[str, str]] = Counter()
    for machine in machines:
        owner = _controller(machine)
        if owner is None or owner[1] not in owners.get(owner[0], set()):
            found.append(f"Machine {name_of(machine)} has no owner that exists: {owner}")
            continue
        machines_by_owner[owner] += 1
    for machine_set in machine_sets:
        wanted = int(dig(machine_set, "spec", "replicas") or 0)
        if machines_by_owner[("MachineSet", name_of(machine_set))] != wanted:
            have = machines_by_owner[("MachineSet", name_of(machine_set))]
            found.append(f"MachineSet {name_of(machine_set)}: {have} Machines for {wanted} replicas")

    referenced: dict[str, set[str]] = {"KubeadmConfig": set(), "DockerMachine": set(), "DockerMachinePool": set(),
                                       "DockerCluster": set(), "KubeadmControlPlane": set(),
                                       "DockerMachineTemplate": set(), "KubeadmConfigTemplate": set()}  # fmt: skip
    for machine in machines:
        for path, kind in (
            (("spec", "bootstrap", "configRef"), "KubeadmConfig"),
            (("spec", "infrastructureRef"), "DockerMachine"),
        ):
            name = _ref_name(machine, *path)
            if name:
                referenced[kind].add(name)
    for pool in pools:
        for path, kind in (
            (("spec", "template", "spec", "bootstrap", "configRef"), "KubeadmConfig"),
            (("spec", "template", "spec", "infrastructureRef"), "DockerMachinePool"),
        ):
            name = _ref_name(pool, *path)
            if name:
                referenced[kind].add(name)
    for cluster in clusters:
        for path, kind in (
            (("spec", "infrastructureRef"), "DockerCluster"),
            (("spec", "controlPlaneRef"), "KubeadmControlPlane"),
        ):
            name = _ref_name(cluster, *path)
            if name:
                referenced[kind].add(name)
    for owner in [*deployments, *machine_sets]:
        for path, kind in (
            (("spec", "template", "spec", "bootstrap", "configRef"), "KubeadmConfigTemplate"),
            (("spec", "template", "spec", "infrastructureRef"), "DockerMachineTemplate"),
        ):
            name = _ref_name(owner, *path)
            if name:
                referenced[kind].add(name)
    for control_plane in control_planes:
        name = _ref_name(control_plane, "spec", "machineTemplate", "infrastructureRef")
        if name:
            referenced["DockerMachineTemplate"].add(name)

    for api_version, kind in (
        (BOOTSTRAP, "KubeadmConfig"),
        (INFRA, "DockerMachine"),
        (INFRA, "DockerMachinePool"),
        (INFRA, "DockerCluster"),
        (CONTROL_PLANE, "KubeadmControlPlane"),
        (INFRA, "DockerMachineTemplate"),
        (BOOTSTRAP, "KubeadmConfigTemplate"),
    ):
        for obj in await of(api_version, kind):
            if kind.endswith("Template") and CLUSTER_NAME not in labels_of(obj):
                continue  # the ClusterClass's own templates
            if name_of(obj) not in referenced[kind] and not dig(obj, "metadata", "deletionTimestamp"):
                found.append(f"{kind} {name_of(obj)} is referenced by nothing (leaked)")
    return found
