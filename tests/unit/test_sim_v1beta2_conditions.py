"""The simulated providers' v1beta2 condition rules (Machine, Cluster, KubeadmControlPlane), case by case.

Each rule is a function of what a reconcile read, so the edge cases a running simulation rarely shows — a deleted
infrastructure, a Node with pressure, a Machine waiting for minReadySeconds, a class's availability gates — are
pinned here with upstream v1.14's reasons and messages.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from typing import Any

from clusterclass.api.conditions import MetaCondition
from clusterclass.api.objects import Obj
from clusterclass.sim.core import cluster_conditions as cc
from clusterclass.sim.core import machine_conditions as mc
from clusterclass.sim.core.rollout import template_differences
from clusterclass.sim.kubeadm import controlplane_conditions as kcp

NOW = datetime(2026, 12, 4, 12, 0, 0, tzinfo=UTC)


def at(seconds_ago: float) -> str:
    return (NOW - timedelta(seconds=seconds_ago)).strftime("%Y-%m-%dT%H:%M:%SZ")


def meta(type_: str, status: str, reason: str = "R", message: str = "", since: str = "") -> Obj:
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": since}


def machine(**fields: Any) -> Obj:
    obj: Obj = {"kind": "Machine", "metadata": {"name": "m1"}, "spec": {}, "status": {}}
    for key, value in fields.items():
        section, _, name = key.partition("__")
        obj[section][name] = value
    return obj


def node(**conditions: str) -> Obj:
    return {"status": {"conditions": [{"type": t, "status": s} for t, s in conditions.items()]}}


HEALTHY = {"Ready": "True", "MemoryPressure": "False", "DiskPressure": "False", "PIDPressure": "False"}


# --- Machine ---------------------------------------------------------------------------------------------------


def test_bootstrap_config_ready_falls_back_to_the_machines_flag_and_names_a_missing_config() -> None:
    config = mc.Referenced("KubeadmConfig", {"status": {}})
    assert mc.bootstrap_config_ready(machine(status__bootstrapReady=True), config) == MetaCondition(
        "BootstrapConfigReady", "True", "Ready"
    )
    assert mc.bootstrap_config_ready(machine(), config) == MetaCondition(
        "BootstrapConfigReady", "False", "NotReady", "KubeadmConfig status.initialization.dataSecretCreated is false"
    )
    assert mc.bootstrap_config_ready(machine(), mc.Referenced("KubeadmConfig", None)) == MetaCondition(
        "BootstrapConfigReady", "False", "ObjectDoesNotExist", "KubeadmConfig does not exist"
    )
    assert mc.bootstrap_config_ready(machine(), None) == MetaCondition(
        "BootstrapConfigReady", "True", "DataSecretProvided"
    )


def test_bootstrap_config_ready_mirrors_the_configs_own_v1beta2_ready() -> None:
    config = {"status": {"v1beta2": {"conditions": [meta("Ready", "False", "WaitingForData", "not yet")]}}}
    assert mc.bootstrap_config_ready(machine(), mc.Referenced("KubeadmConfig", config)) == MetaCondition(
        "BootstrapConfigReady", "False", "WaitingForData", "not yet"
    )


def test_infrastructure_deleted_while_the_machine_exists_is_said_so() -> None:
    provisioned = machine(status__infrastructureReady=True)
    assert mc.infrastructure_ready(provisioned, mc.Referenced("DockerMachine", None)) == MetaCondition(
        "InfrastructureReady", "False", "ObjectDeleted", "DockerMachine has been deleted while the Machine still exists"
    )


def test_node_conditions_wait_for_the_cluster_then_read_the_node() -> None:
    cluster: Obj = {"status": {"infrastructureReady": False}}
    waiting = mc.node_conditions(machine(), cluster, None, connected=True, infra_kind="DockerMachine")
    assert {c.reason for c in waiting} == {"InspectionFailed"}
    assert waiting[0].message == "Waiting for Cluster status.initialization.infrastructureProvisioned to be true"
    cluster = {
        "status": {"infrastructureReady": True, "v1beta2": {"conditions": [meta("ControlPlaneInitialized", "True")]}}
    }
    found = mc.node_conditions(machine(), cluster, node(**HEALTHY), connected=True, infra_kind="DockerMachine")
    assert found == [
        MetaCondition("NodeReady", "True", "NodeReady"),
        MetaCondition("NodeHealthy", "True", "NodeHealthy"),
    ]
    missing = mc.node_conditions(
        machine(spec__providerID="docker:////m1"), cluster, None, connected=True, infra_kind="DockerMachine"
    )
    assert missing[1].message == "Waiting for a Node with spec.providerID docker:////m1 to exist"


def test_node_healthy_lists_what_is_wrong_or_folds_one_shared_message() -> None:
    sick = node(Ready="True", MemoryPressure="True", DiskPressure="False", PIDPressure="False")
    assert mc.node_healthy(sick) == MetaCondition(
        "NodeHealthy", "False", "NodeNotHealthy", "* Node.MemoryPressure: Condition is True"
    )
    unknown = node(Ready="Unknown", MemoryPressure="Unknown", DiskPressure="False", PIDPressure="False")
    assert mc.node_healthy(unknown) == MetaCondition(
        "NodeHealthy", "Unknown", "NodeHealthyUnknown", "* Node.AllConditions: Condition is Unknown"
    )


def test_ready_summarises_and_deleting_machines_expect_their_parts_gone() -> None:
    healthy = [
        meta("Deleting", "False", "NotDeleting"),
        meta("Updating", "False", "NotUpdating"),
        meta("BootstrapConfigReady", "True", "Ready"),
        meta("InfrastructureReady", "True", "Ready"),
        meta("NodeHealthy", "True", "NodeHealthy"),
    ]
    assert mc.ready(machine(), healthy) == MetaCondition("Ready", "True", "Ready")
    deleting = machine(metadata__deletionTimestamp="2026-12-04T12:00:00Z")
    deleting["metadata"]["name"] = "m1"
    going = [
        meta("Deleting", "True", "WaitingForInfrastructureDeletion", "Waiting for DockerMachine to be deleted"),
        meta("Updating", "False", "NotUpdating"),
        meta("BootstrapConfigReady", "True", "Ready"),
        meta("InfrastructureReady", "False", "ObjectDeleted", "DockerMachine has been deleted"),
        meta("NodeHealthy", "False", "NodeDeleted", "Node m1 has been deleted"),
    ]
    assert mc.ready(deleting, going) == MetaCondition(
        "Ready",
        "False",
        "NotReady",
        "* Deleting: Machine deletion in progress, stage: WaitingForInfrastructureDeletion",
    )


def test_available_waits_for_min_ready_seconds() -> None:
    slow = machine(spec__minReadySeconds=30)
    ready = [meta("Ready", "True", "Ready", since=at(10))]
    condition, wait = mc.available(slow, ready, NOW)
    assert (condition, wait) == (MetaCondition("Available", "False", "WaitingForMinReadySeconds"), 20)
    assert mc.available(slow, [meta("Ready", "True", "Ready", since=at(31))], NOW)[0].status == "True"
    assert mc.available(slow, [meta("Ready", "False")], NOW) == (MetaCondition("Available", "False", "NotReady"), None)


def test_template_differences_use_upstreams_words() -> None:
    old = {"spec": {"version": "v1.28.0", "infrastructureRef": {"kind": "DockerMachineTemplate", "name": "a"}}}
    new = {"spec": {"version": "v1.29.0", "infrastructureRef": {"kind": "DockerMachineTemplate", "name": "b"}}}
    assert template_differences(old, new) == ["Version v1.28.0, v1.29.0 required", "DockerMachine is not up-to-date"]
    assert template_differences(old, old) == []


# --- Cluster ---------------------------------------------------------------------------------------------------


def cluster(**spec: Any) -> Obj:
    return {"kind": "Cluster", "metadata": {"name": "demo"}, "spec": spec, "status": {}}


def test_cluster_conditions_wait_for_the_topology_to_create_the_parts() -> None:
    new = cluster(topology={"class": "c", "version": "v1.28.0"})
    assert cc.infrastructure_ready(new, None) == MetaCondition(
        "InfrastructureReady", "False", "ObjectDoesNotExist", "Waiting for cluster topology to be reconciled"
    )
    assert cc.workers_available([]) == MetaCondition("WorkersAvailable", "True", "NoWorkers")


def test_cluster_counters_sum_the_workers_v1beta2_counters() -> None:
    worker: Obj = {
        "spec": {"replicas": 2},
        "status": {"replicas": 2, "v1beta2": {"readyReplicas": 1, "availableReplicas": 1, "upToDateReplicas": 2}},
    }
    assert cc.worker_counters([worker, worker]) == {
        "desiredReplicas": 4,
        "replicas": 4,
        "readyReplicas": 2,
        "availableReplicas": 2,
        "upToDateReplicas": 4,
    }


def test_available_uses_the_class_availability_gates_and_tolerates_topology_progress() -> None:
    with_topology = cluster(topology={"class": "c"})
    base = [
        meta("Deleting", "False", "NotDeleting"),
        meta("RemoteConnectionProbe", "True", "ProbeSucceeded"),
        meta("InfrastructureReady", "True", "Ready"),
        meta("ControlPlaneAvailable", "True", "Available"),
        meta("WorkersAvailable", "True", "Available"),
        meta("TopologyReconciled", "False", "ClusterUpgrading", "Cluster is upgrading to v1.29.0"),
    ]
    assert cc.available(with_topology, None, base) == MetaCondition(
        "Available", "True", "Available", "* TopologyReconciled: Cluster is upgrading to v1.29.0"
    )
    gated_class = {"spec": {"availabilityGates": [{"conditionType": "example.com/Ready"}]}}
    assert cc.available(with_topology, gated_class, base) == MetaCondition(
        "Available", "Unknown", "AvailableUnknown", "* example.com/Ready: Condition not yet reported"
    )


# --- KubeadmControlPlane ---------------------------------------------------------------------------------------


def test_a_control_plane_needs_etcd_quorum_to_be_available() -> None:
    initialized: Obj = {"metadata": {}, "spec": {"replicas": 3}, "status": {"initialized": True}}

    def cp_machine(etcd: str) -> Obj:
        healthy = ["APIServerPodHealthy", "ControllerManagerPodHealthy", "SchedulerPodHealthy", "EtcdPodHealthy"]
        found = [{"type": t, "status": "True"} for t in healthy]
        found.append({"type": "EtcdMemberHealthy", "status": etcd})
        return {"spec": {"providerID": "p"}, "status": {"nodeRef": {"name": "n"}, "conditions": found}}

    machines = [cp_machine("True"), cp_machine("False"), cp_machine("False")]
    assert kcp.available(initialized, machines, certificates=True) == MetaCondition(
        "Available",
        "False",
        "NotAvailable",
        "* 1 of 3 etcd members is healthy, at least 2 healthy member required for etcd quorum",
    )
    machines[1] = cp_machine("True")
    assert kcp.available(initialized, machines, certificates=True) == MetaCondition("Available", "True", "Available")
    assert kcp.available({"metadata": {}, "status": {}}, machines, certificates=True).message == (
        "Control plane not yet initialized"
    )
