"""Builders of the objects ``describe cluster`` reads, and the Cluster of spec §4.4 in its two states.

Objects are what the controllers would have written (v1beta1 conditions, controller ownerReferences,
the cluster-name label), small enough to read in a test. Times are seconds before :data:`NOW`.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

CAPI = "cluster.x-k8s.io/v1beta1"
INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta1"
CONTROL_PLANE = "controlplane.cluster.x-k8s.io/v1beta1"
NS = "default"
CLUSTER = "c1"
NOW = datetime(2024, 5, 1, 12, 0, 0, tzinfo=UTC)

Obj = dict[str, Any]


def at(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def true(type_: str, seconds_ago: float) -> Obj:
    return {"type": type_, "status": "True", "lastTransitionTime": at(seconds_ago)}


def false(type_: str, seconds_ago: float, reason: str, severity: str = "Info", message: str = "") -> Obj:
    condition = {"type": type_, "status": "False", "severity": severity, "lastTransitionTime": at(seconds_ago)}
    condition["reason"] = reason
    if message:
        condition["message"] = message
    return condition


def ready(seconds_ago: float, *others: str) -> list[Obj]:
    """``Ready`` True since ``seconds_ago`` and each of ``others`` True since then as well."""
    return [true("Ready", seconds_ago), *(true(other, seconds_ago) for other in others)]


def ref(obj: Obj) -> Obj:
    return {"apiVersion": obj["apiVersion"], "kind": obj["kind"], "name": obj["metadata"]["name"], "namespace": NS}


def obj(
    api_version: str,
    kind: str,
    name: str,
    *,
    conditions: Iterable[Obj] = (),
    owner: Obj | None = None,
    labels: dict[str, str] | None = None,
    spec: Obj | None = None,
    deleting: bool = False,
    cluster: str = CLUSTER,
) -> Obj:
    metadata: Obj = {
        "name": name,
        "namespace": NS,
        "uid": f"uid-{kind.lower()}-{name}",
        "labels": {"cluster.x-k8s.io/cluster-name": cluster, **(labels or {})},
    }
    if owner is not None:
        metadata["ownerReferences"] = [
            {
                "apiVersion": owner["apiVersion"],
                "kind": owner["kind"],
                "name": owner["metadata"]["name"],
                "uid": owner["metadata"]["uid"],
                "controller": True,
                "blockOwnerDeletion": True,
            }
        ]
    if deleting:
        metadata["deletionTimestamp"] = at(5)
        metadata["finalizers"] = ["machine.cluster.x-k8s.io"]
    found: Obj = {"apiVersion": api_version, "kind": kind, "metadata": metadata, "spec": spec or {}}
    conditions = list(conditions)
    if conditions:
        found["status"] = {"conditions": conditions}
    return found


def cluster(name: str, infrastructure: Obj | None, control_plane: Obj | None, conditions: Iterable[Obj]) -> Obj:
    spec: Obj = {"topology": {"class": "quick-start", "version": "v1.28.0"}}
    if infrastructure is not None:
        spec["infrastructureRef"] = ref(infrastructure)
    if control_plane is not None:
        spec["controlPlaneRef"] = ref(control_plane)
    return obj(CAPI, "Cluster", name, conditions=conditions, spec=spec, cluster=name)


def docker_cluster(name: str, conditions: Iterable[Obj]) -> Obj:
    return obj(INFRA, "DockerCluster", name, conditions=conditions)


def docker_machine_template(name: str) -> Obj:
    return obj(INFRA, "DockerMachineTemplate", name, spec={"template": {"spec": {}}})


def kubeadm_config_template(name: str) -> Obj:
    return obj(BOOTSTRAP, "KubeadmConfigTemplate", name, spec={"template": {"spec": {}}})


def kubeadm_control_plane(name: str, conditions: Iterable[Obj], template: Obj | None = None) -> Obj:
    spec: Obj = {"replicas": 1, "version": "v1.28.0", "machineTemplate": {}, "kubeadmConfigSpec": {}}
    if template is not None:
        spec["machineTemplate"]["infrastructureRef"] = ref(template)
    return obj(CONTROL_PLANE, "KubeadmControlPlane", name, conditions=conditions, spec=spec)


def machine(
    name: str,
    owner: Obj,
    conditions: Iterable[Obj],
    *,
    infrastructure: Obj | None = None,
    bootstrap: Obj | None = None,
    control_plane: bool = False,
    deleting: bool = False,
) -> Obj:
    spec: Obj = {"clusterName": CLUSTER, "bootstrap": {}}
    if infrastructure is not None:
        spec["infrastructureRef"] = ref(infrastructure)
    if bootstrap is not None:
        spec["bootstrap"]["configRef"] = ref(bootstrap)
    else:
        spec["bootstrap"]["dataSecretName"] = f"{name}-bootstrap"
    labels = {"cluster.x-k8s.io/control-plane": ""} if control_plane else {}
    return obj(CAPI, "Machine", name, conditions=conditions, owner=owner, labels=labels, spec=spec, deleting=deleting)


def machine_deployment(
    name: str, conditions: Iterable[Obj], *, bootstrap_template: Obj | None = None, infra_template: Obj | None = None
) -> Obj:
    template_spec: Obj = {"clusterName": CLUSTER, "bootstrap": {}}
    if bootstrap_template is not None:
        template_spec["bootstrap"]["configRef"] = ref(bootstrap_template)
    if infra_template is not None:
        template_spec["infrastructureRef"] = ref(infra_template)
    spec: Obj = {
        "clusterName": CLUSTER,
        "replicas": 2,
        "selector": {"matchLabels": {"cluster.x-k8s.io/deployment-name": name}},
        "template": {"spec": template_spec},
    }
    return obj(CAPI, "MachineDeployment", name, conditions=conditions, spec=spec)


def machine_set(name: str, owner: Obj, conditions: Iterable[Obj]) -> Obj:
    spec = {"clusterName": CLUSTER, "replicas": 2, "selector": {"matchLabels": {"cluster.x-k8s.io/set-name": name}}}
    return obj(CAPI, "MachineSet", name, conditions=conditions, owner=owner, spec=spec)


def machine_pool(name: str, conditions: Iterable[Obj], *, bootstrap: Obj, infrastructure: Obj) -> Obj:
    template_spec = {
        "clusterName": CLUSTER,
        "bootstrap": {"configRef": ref(bootstrap)},
        "infrastructureRef": ref(infrastructure),
        "version": "v1.28.0",
    }
    spec = {"clusterName": CLUSTER, "replicas": 2, "template": {"spec": template_spec}}
    return obj(CAPI, "MachinePool", name, conditions=conditions, spec=spec)


def kubeadm_config(name: str, conditions: Iterable[Obj], owner: Obj | None = None) -> Obj:
    return obj(BOOTSTRAP, "KubeadmConfig", name, conditions=conditions, owner=owner)


def docker_machine(name: str, conditions: Iterable[Obj], owner: Obj | None = None) -> Obj:
    return obj(INFRA, "DockerMachine", name, conditions=conditions, owner=owner)


def docker_machine_pool(name: str, conditions: Iterable[Obj]) -> Obj:
    return obj(INFRA, "DockerMachinePool", name, conditions=conditions)


def sample_cluster(*, rollout: bool = False) -> tuple[Obj, list[Obj]]:
    """The Cluster ``c1`` of spec §4.4: 1 CP Machine, MD ``md-0`` ×2, MP ``mp-0`` ×2.

    With ``rollout`` the MachinePool is rolling out a version (spec 2.9.5): two new MP Machines are
    still bootstrapping, the DockerMachinePool waits for them and the MachinePool mirrors it.
    """
    infra_cluster = docker_cluster("c1-x7k2p", ready(185, "LoadBalancerAvailable"))
    cp_template = docker_machine_template("c1-control-plane-8n2ds")
    kcp = kubeadm_control_plane(
        "c1-4bq9d",
        ready(130, "Available", "CertificatesAvailable", "MachinesCreated", "MachinesReady", "Resized"),
        cp_template,
    )
    root = cluster(
        CLUSTER,
        infra_cluster,
        kcp,
        ready(130, "ControlPlaneInitialized", "ControlPlaneReady", "InfrastructureReady", "TopologyReconciled"),
    )
    objects: list[Obj] = [infra_cluster, cp_template, kcp]

    cp_infra = docker_machine("c1-4bq9d-2bz8q", ready(165, "BootstrapExecSucceeded", "ContainerProvisioned"))
    cp_bootstrap = kubeadm_config("c1-4bq9d-2bz8q", ready(170, "CertificatesAvailable", "DataSecretAvailable"))
    objects += [
        cp_infra,
        cp_bootstrap,
        machine(
            "c1-4bq9d-2bz8q",
            kcp,
            ready(160, "BootstrapReady", "InfrastructureReady", "NodeHealthy"),
            infrastructure=cp_infra,
            bootstrap=cp_bootstrap,
            control_plane=True,
        ),
    ]

    md_bootstrap_template = kubeadm_config_template("c1-md-0-bootstrap-9xk2f")
    md_infra_template = docker_machine_template("c1-md-0-infra-vb7qz")
    md = machine_deployment(
        "c1-md-0-d6wst",
        ready(95, "Available"),
        bootstrap_template=md_bootstrap_template,
        infra_template=md_infra_template,
    )
    ms = machine_set("c1-md-0-d6wst-nj7bf", md, ready(96, "MachinesCreated", "MachinesReady", "Resized"))
    objects += [md_bootstrap_template, md_infra_template, md, ms]
    for name, seconds in (("c1-md-0-d6wst-nj7bf-5rcls", 100), ("c1-md-0-d6wst-nj7bf-t4x9w", 90)):
        infra = docker_machine(name, ready(seconds + 5, "BootstrapExecSucceeded", "ContainerProvisioned"))
        bootstrap = kubeadm_config(name, ready(seconds + 10, "CertificatesAvailable", "DataSecretAvailable"))
        conditions = ready(seconds, "BootstrapReady", "InfrastructureReady", "NodeHealthy")
        objects += [infra, bootstrap, machine(name, ms, conditions, infrastructure=infra, bootstrap=bootstrap)]

    mp_bootstrap = kubeadm_config("c1-mp-0-config-zcq4t", ready(300, "CertificatesAvailable", "DataSecretAvailable"))
    if rollout:
        waiting = false("ReplicasReady", 40, "WaitingForReplicasReady")
        dmp = docker_machine_pool("c1-mp-0-rhx9v", [false("Ready", 40, "WaitingForReplicasReady"), waiting])
        mp_conditions = [
            false("Ready", 40, "WaitingForReplicasReady"),
            true("BootstrapReady", 300),
            false("InfrastructureReady", 40, "WaitingForReplicasReady"),
            true("ReplicasReady", 300),
        ]
    else:
        dmp = docker_machine_pool("c1-mp-0-rhx9v", ready(82, "ReplicasReady"))
        mp_conditions = ready(80, "BootstrapReady", "InfrastructureReady", "ReplicasReady")
    mp = machine_pool("c1-mp-0-t8lh4", mp_conditions, bootstrap=mp_bootstrap, infrastructure=dmp)
    objects += [mp_bootstrap, dmp, mp]
    old = (("c1-mp-0-t8lh4-8vkq2", 360 if rollout else 85), ("c1-mp-0-t8lh4-rwz6m", 300 if rollout else 70))
    for name, seconds in old:
        infra = docker_machine(name, ready(seconds + 2, "BootstrapExecSucceeded", "ContainerProvisioned"))
        objects += [infra, machine(name, mp, ready(seconds, "InfrastructureReady"), infrastructure=infra)]
    if rollout:
        for name, seconds in (("c1-mp-0-t8lh4-b2n7d", 25), ("c1-mp-0-t8lh4-q9w4z", 20)):
            bootstrapping = [
                false("Ready", seconds, "Bootstrapping", message="1 of 2 completed"),
                false("BootstrapExecSucceeded", seconds, "Bootstrapping"),
                true("ContainerProvisioned", seconds + 5),
            ]
            infra = docker_machine(name, bootstrapping)
            conditions = [
                false("Ready", seconds, "Bootstrapping", message="0 of 2 completed"),
                false("InfrastructureReady", seconds, "Bootstrapping", message="1 of 2 completed"),
            ]
            objects += [infra, machine(name, mp, conditions, infrastructure=infra)]
    return root, objects
