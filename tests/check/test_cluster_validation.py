"""Cluster admission on create (spec §6.1.2, §6.1.3, Appendix A24): one passing and one failing case per rule."""

from __future__ import annotations

from typing import Any

import pytest
from check_support import (
    WORKER_CLASS,
    Nodes,
    admit,
    check,
    cluster,
    cluster_class,
    deployment,
    errors,
    fields,
    pool,
    rendered,
    world,
)

from clusterclass.topology.check import Gates
from clusterclass.topology.check.cluster import (
    cluster_class_is_reconciled,
    validate_cluster,
    validate_cluster_delete,
)

UPGRADE_CONCURRENCY = "topology.cluster.x-k8s.io/upgrade-concurrency"


def test_a_valid_cluster_with_machine_pools_is_admitted_without_warnings() -> None:
    result = check(cluster(machine_deployments=[deployment("md-0")], machine_pools=[pool("mp-0"), pool("mp-1")]))
    assert result.errors == []
    assert result.warnings == []


# --- the Cluster's name, refs and network ----------------------------------------------------------


def test_name_that_is_a_valid_label_value_passes() -> None:
    assert check(cluster("my.cluster_1")).errors == []


def test_name_longer_than_a_label_value_fails() -> None:
    name = "c" * 64
    assert errors(check(cluster(name))) == [
        ("metadata.name", "Invalid value", "must be a valid label value must be no more than 63 characters")
    ]


def test_name_that_is_not_a_label_value_fails() -> None:
    result = check(cluster("cluster-"))
    assert fields(result) == ["metadata.name"]
    assert result.errors[0].detail.startswith("must be a valid label value a valid label must be an empty string")


@pytest.mark.parametrize("key", ["infrastructureRef", "controlPlaneRef"])
def test_ref_without_namespace_is_defaulted_and_passes(key: str) -> None:
    obj = cluster()
    obj["spec"][key] = {"apiVersion": "x/v1", "kind": "X", "name": "x"}
    defaulted, result = admit(obj)
    assert defaulted["spec"][key]["namespace"] == "default"
    assert result.errors == []


@pytest.mark.parametrize("key", ["infrastructureRef", "controlPlaneRef"])
def test_ref_in_another_namespace_fails(key: str) -> None:
    obj = cluster()
    obj["spec"][key] = {"apiVersion": "x/v1", "kind": "X", "name": "x", "namespace": "other"}
    assert rendered(check(obj)) == [f'spec.{key}.namespace: Invalid value: "other": must match metadata.namespace']


def test_cidr_blocks_that_parse_pass() -> None:
    obj = cluster()
    obj["spec"]["clusterNetwork"] = {
        "pods": {"cidrBlocks": ["192.168.0.0/16", "fd00::/64"]},
        "services": {"cidrBlocks": ["10.128.0.1/12"]},
    }
    assert check(obj).errors == []


def test_cidr_blocks_that_do_not_parse_fail() -> None:
    obj = cluster()
    obj["spec"]["clusterNetwork"] = {"pods": {"cidrBlocks": ["10.0.0.0"]}, "services": {"cidrBlocks": ["ok", 5]}}
    assert errors(check(obj)) == [
        ("spec.clusterNetwork.pods.cidrBlocks[0]", "Invalid value", "invalid CIDR address: 10.0.0.0"),
        ("spec.clusterNetwork.services.cidrBlocks[0]", "Invalid value", "invalid CIDR address: ok"),
        ("spec.clusterNetwork.services.cidrBlocks[1]", "Invalid value", "invalid CIDR address: 5"),
    ]


# --- topology basics --------------------------------------------------------------------------------


def test_topology_is_allowed_with_the_cluster_topology_gate_on() -> None:
    assert check(cluster(), gates=Gates(cluster_topology=True)).errors == []


def test_topology_is_forbidden_with_the_cluster_topology_gate_off_and_nothing_else_is_checked() -> None:
    obj = cluster(version="bad", machine_pools=[pool("mp-0", replicas=-1)])
    assert errors(check(obj, gates=Gates(cluster_topology=False))) == [
        ("spec.topology", "Forbidden", "can be set only if the ClusterTopology feature flag is enabled")
    ]


def test_the_machine_pool_gate_does_not_concern_the_cluster_webhook() -> None:
    # Upstream has no MachinePool gate check in the Cluster webhook (v1.6 through HEAD).
    assert check(cluster(machine_pools=[pool("mp-0")]), gates=Gates(machine_pool=False)).errors == []


def test_empty_class_fails_and_stops_the_topology_checks() -> None:
    obj = cluster(class_name="", version="not a version", machine_pools=[pool("mp-0", replicas=-1)])
    assert errors(check(obj)) == [("spec.topology.class", "Required value", "class cannot be empty")]


def test_version_without_v_is_defaulted_and_passes() -> None:
    defaulted, result = admit(cluster(version="1.19.1"))
    assert defaulted["spec"]["topology"]["version"] == "v1.19.1"
    assert result.errors == []


@pytest.mark.parametrize("version", ["v1.19", "vfoo", "v1.19.1 ", "v1.19.x", "v01.19.1"])
def test_version_that_is_not_kube_semver_fails(version: str) -> None:
    assert rendered(check(cluster(version=version))) == [
        f'spec.topology.version: Invalid value: "{version}": version must be a valid semantic version'
    ]


def test_missing_version_fails() -> None:
    obj = cluster()
    del obj["spec"]["topology"]["version"]
    assert rendered(check(obj)) == ["spec.topology.version: Required value"]


def test_valid_topology_metadata_passes() -> None:
    obj = cluster(
        control_plane={"metadata": {"labels": {"a/b": "c"}, "annotations": {"x.io/y": "anything at all"}}},
        machine_deployments=[deployment("md-0", labels={"tier": "md"})],
        machine_pools=[pool("mp-0", labels={"tier": "mp"}, annotations={"note": "ok"})],
    )
    assert check(obj).errors == []


def test_invalid_topology_metadata_fails_at_each_path() -> None:
    obj = cluster(
        control_plane={"metadata": {"labels": {"bad key!": "v"}}},
        machine_deployments=[deployment("md-0", labels={"ok": "-bad-value"})],
        machine_pools=[pool("mp-0"), pool("mp-1", annotations={"/no-name": "v"})],
    )
    assert fields(check(obj)) == [
        "spec.topology.controlPlane.metadata.labels",
        "spec.topology.workers.machineDeployments[0].metadata.labels",
        "spec.topology.workers.machinePools[1].metadata.annotations",
    ]


@pytest.mark.parametrize("value", ["1", "2", "+3", "010"])
def test_upgrade_concurrency_that_is_a_positive_integer_passes(value: str) -> None:
    assert check(cluster(annotations={UPGRADE_CONCURRENCY: value})).errors == []


@pytest.mark.parametrize(
    ("value", "detail"),
    [
        ("abc", 'could not parse the value of the annotation: strconv.Atoi: parsing "abc": invalid syntax'),
        (" 2", 'could not parse the value of the annotation: strconv.Atoi: parsing " 2": invalid syntax'),
        ("1_0", 'could not parse the value of the annotation: strconv.Atoi: parsing "1_0": invalid syntax'),
        (
            "99999999999999999999",
            'could not parse the value of the annotation: strconv.Atoi: parsing "99999999999999999999": '
            "value out of range",
        ),
        ("0", "value cannot be less than 1"),
        ("-2", "value cannot be less than 1"),
    ],
)
def test_upgrade_concurrency_that_is_not_a_positive_integer_fails(value: str, detail: str) -> None:
    assert errors(check(cluster(annotations={UPGRADE_CONCURRENCY: value}))) == [
        ("metadata.annotations.topology.cluster.x-k8s.io/upgrade-concurrency", "Invalid value", detail)
    ]


# --- the ClusterClass: missing, not reconciled, unreadable -------------------------------------------


def test_cluster_class_that_is_found_and_reconciled_gives_no_warning() -> None:
    assert check(cluster()).warnings == []


def test_missing_cluster_class_is_a_warning_not_an_error() -> None:
    result = check(cluster(class_name="absent"))
    assert result.errors == []
    assert result.warnings == [
        "Cluster refers to ClusterClass default/absent in the topology but it does not exist. Cluster topology has "
        "not been fully validated. The ClusterClass must be created to reconcile the Cluster"
    ]


def test_unreconciled_cluster_class_is_a_warning_and_skips_class_aware_checks() -> None:
    reader = world(cluster_class(is_reconciled=False))
    result = check(cluster(machine_pools=[pool("mp-0", class_name="undefined")]), reader=reader)
    assert result.errors == []
    assert result.warnings == [
        "Cluster refers to ClusterClass default/class1 but this ClusterClass hasn't yet been reconciled. "
        "Cluster topology has not been fully validated."
    ]


class _BrokenReader:
    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Any:
        raise ConnectionError("connection refused")

    def list(self, *args: Any) -> list[Any]:
        raise ConnectionError("connection refused")


def test_cluster_class_that_cannot_be_read_is_an_internal_error() -> None:
    obj = cluster()
    result = validate_cluster(obj, reader=_BrokenReader())
    assert errors(result) == [("spec.topology.class", "Internal error", "connection refused")]


def test_cluster_class_is_reconciled_needs_observed_generation_and_variables_reconciled() -> None:
    cc = cluster_class()
    assert cluster_class_is_reconciled(cc)
    stale = {**cc, "metadata": {**cc["metadata"], "generation": 2}}
    assert not cluster_class_is_reconciled(stale)
    failed = {**cc, "status": {**cc["status"], "conditions": [{"type": "VariablesReconciled", "status": "False"}]}}
    assert not cluster_class_is_reconciled(failed)
    unknown = {**cc, "status": {**cc["status"], "conditions": [{"type": "VariablesReconciled", "status": "Unknown"}]}}
    assert cluster_class_is_reconciled(unknown)
    assert not cluster_class_is_reconciled({**cc, "status": {"observedGeneration": 1}})
    assert not cluster_class_is_reconciled({"status": "nonsense"})


# --- worker topologies against the ClusterClass (A24, spec §10.10/§10.11) ------------------------------


def test_machine_pool_topologies_that_are_unique_and_defined_in_the_cluster_class_pass() -> None:
    # "pass if MachinePoolTopologies are unique and defined in ClusterClass" and
    # "should pass when MachinePools names in a Topology are unique"
    assert check(cluster(machine_pools=[pool("mp-0"), pool("mp-1")])).errors == []


def test_machine_pool_topologies_that_share_a_defined_class_pass() -> None:
    reader = world(cluster_class(mp_classes=["a", "b"]))
    assert check(cluster(machine_pools=[pool("mp-0", "a"), pool("mp-1", "a")]), reader=reader).errors == []


def test_machine_pool_topology_with_a_class_not_defined_in_the_cluster_class_fails() -> None:
    # "fail if MachinePoolTopologies are unique but not defined in ClusterClass"
    reader = world(cluster_class(mp_classes=["linux"]))
    result = check(cluster(machine_pools=[pool("mp-0", "linux"), pool("mp-1", "windows")]), reader=reader)
    assert rendered(result) == [
        'spec.topology.workers.machinePools[1].class: Invalid value: "windows": MachinePoolClass with name '
        '"windows" does not exist in ClusterClass "class1"'
    ]


def test_machine_pool_class_must_be_a_machine_pool_class_not_a_machine_deployment_class() -> None:
    reader = world(cluster_class(md_classes=["md-only"], mp_classes=["mp-only"]))
    result = check(cluster(machine_pools=[pool("mp-0", "md-only")]), reader=reader)
    assert fields(result) == ["spec.topology.workers.machinePools[0].class"]


def test_duplicated_machine_pool_names_fail() -> None:
    # "should return error when duplicated MachinePools names exists in a Topology"
    result = check(cluster(machine_pools=[pool("mp-0"), pool("mp-1"), pool("mp-0")]))
    assert errors(result) == [
        (
            "spec.topology.workers.machinePools[2].name",
            "Invalid value",
            'name must be unique. MachinePool with name "mp-0" is defined more than once',
        )
    ]


def test_duplicated_machine_deployment_names_fail() -> None:
    result = check(cluster(machine_deployments=[deployment("w"), deployment("w")]))
    assert errors(result) == [
        (
            "spec.topology.workers.machineDeployments[1].name",
            "Invalid value",
            'name must be unique. MachineDeployment with name "w" is defined more than once',
        )
    ]


def test_a_machine_deployment_and_a_machine_pool_may_share_a_name() -> None:
    assert check(cluster(machine_deployments=[deployment("w")], machine_pools=[pool("w")])).errors == []


def test_empty_machine_pool_name_fails() -> None:
    # "fail if MachinePoolTopologies name is empty"
    assert errors(check(cluster(machine_pools=[pool(""), pool("")]))) == [
        ("spec.topology.workers.machinePools[0].name", "Required value", "name must not be empty"),
        ("spec.topology.workers.machinePools[1].name", "Required value", "name must not be empty"),
    ]


def test_machine_pool_name_of_63_characters_passes() -> None:
    assert check(cluster(machine_pools=[pool("p" * 63)])).errors == []


def test_machine_pool_name_longer_than_63_characters_fails() -> None:
    # "fail if MachinePoolTopology name is longer than 63 characters"
    name = "p" * 64
    assert errors(check(cluster(machine_pools=[pool(name)]))) == [
        (
            "spec.topology.workers.machinePools[0].name",
            "Invalid value",
            "must be a valid label value must be no more than 63 characters",
        )
    ]


def test_machine_pool_name_that_is_not_a_label_value_fails() -> None:
    result = check(cluster(machine_pools=[pool("my pool")]))
    assert fields(result) == ["spec.topology.workers.machinePools[0].name"]
    assert "must be a valid label value a valid label must be" in result.errors[0].detail


def test_machine_pool_names_are_checked_even_while_the_cluster_class_is_missing() -> None:
    # Stricter than upstream, which checks names only once the ClusterClass is found and reconciled.
    result = check(cluster(class_name="absent", machine_pools=[pool("mp-0"), pool("mp-0"), pool("")]))
    assert fields(result) == [
        "spec.topology.workers.machinePools[1].name",
        "spec.topology.workers.machinePools[2].name",
    ]
    assert result.warnings  # the class itself is still only a warning


def test_classes_are_not_checked_while_the_cluster_class_is_missing() -> None:
    assert check(cluster(class_name="absent", machine_pools=[pool("mp-0", "anything")])).errors == []


# --- replicas: rejected when negative, which upstream forgot (spec §6.1.3) -------------------------------


def test_zero_and_positive_replicas_pass() -> None:
    obj = cluster(
        control_plane={"replicas": 3},
        machine_deployments=[deployment("md-0", replicas=0)],
        machine_pools=[pool("mp-0", replicas=0), pool("mp-1", replicas=5)],
    )
    assert check(obj).errors == []


def test_negative_machine_pool_replicas_are_rejected_unlike_upstream() -> None:
    result = check(cluster(machine_pools=[pool("mp-0", replicas=1), pool("mp-1", replicas=-1)]))
    assert rendered(result) == [
        "spec.topology.workers.machinePools[1].replicas: Invalid value: -1: must be greater than or equal to 0"
    ]


def test_negative_machine_deployment_and_control_plane_replicas_are_rejected() -> None:
    obj = cluster(control_plane={"replicas": -3}, machine_deployments=[deployment("md-0", replicas=-2)])
    assert errors(check(obj)) == [
        ("spec.topology.controlPlane.replicas", "Invalid value", "must be greater than or equal to 0"),
        ("spec.topology.workers.machineDeployments[0].replicas", "Invalid value", "must be greater than or equal to 0"),
    ]


def test_replicas_that_are_not_integers_are_rejected() -> None:
    obj = cluster(machine_pools=[pool("mp-0", replicas="3"), pool("mp-1", replicas=True), pool("mp-2", replicas=2**31)])
    assert errors(check(obj)) == [
        ("spec.topology.workers.machinePools[0].replicas", "Invalid value", "must be an integer"),
        ("spec.topology.workers.machinePools[1].replicas", "Invalid value", "must be an integer"),
        ("spec.topology.workers.machinePools[2].replicas", "Invalid value", "must be less than or equal to 2147483647"),
    ]


def test_negative_replicas_are_rejected_even_while_the_cluster_class_is_missing() -> None:
    result = check(cluster(class_name="absent", machine_pools=[pool("mp-0", replicas=-1)]))
    assert fields(result) == ["spec.topology.workers.machinePools[0].replicas"]


# --- MachineHealthChecks (control plane and MachineDeployments; MachinePools have none) ---------------


def test_control_plane_machine_health_check_with_machine_infrastructure_passes() -> None:
    reader = world(cluster_class(machine_infrastructure=True))
    mhc = {"enable": True, "maxUnhealthy": "40%", "nodeStartupTimeout": "10m", "unhealthyRange": "[1-3]"}
    assert check(cluster(control_plane={"machineHealthCheck": mhc}), reader=reader).errors == []


def test_control_plane_machine_health_check_without_machine_infrastructure_is_forbidden() -> None:
    result = check(cluster(control_plane={"machineHealthCheck": {"maxUnhealthy": 1}}))
    assert errors(result) == [
        (
            "spec.topology.controlPlane.machineHealthCheck",
            "Forbidden",
            "can be set only if spec.controlPlane.machineInfrastructure is set in ClusterClass",
        )
    ]


def test_machine_health_check_fields_are_validated() -> None:
    reader = world(cluster_class(machine_infrastructure=True))
    mhc = {
        "nodeStartupTimeout": "10s",
        "maxUnhealthy": "abc",
        "unhealthyRange": "1-3",
        "remediationTemplate": {"kind": "R", "name": "r", "namespace": "other"},
    }
    path = "spec.topology.controlPlane.machineHealthCheck"
    assert errors(check(cluster(control_plane={"machineHealthCheck": mhc}), reader=reader)) == [
        (f"{path}.nodeStartupTimeout", "Invalid value", "must be at least 30s"),
        (
            f"{path}.maxUnhealthy",
            "Invalid value",
            "must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a "
            "percentage",
        ),
        (f"{path}.unhealthyRange", "Invalid value", "should match '^\\[[0-9]+-[0-9]+\\]$'"),
        (f"{path}.remediationTemplate.namespace", "Invalid value", "must match metadata.namespace"),
    ]


def test_remediation_template_namespace_is_defaulted() -> None:
    reader = world(cluster_class(machine_infrastructure=True))
    obj = cluster(control_plane={"machineHealthCheck": {"remediationTemplate": {"kind": "R", "name": "r"}}})
    defaulted, result = admit(obj, reader=reader)
    assert defaulted["spec"]["topology"]["controlPlane"]["machineHealthCheck"]["remediationTemplate"]["namespace"] == (
        "default"
    )
    assert result.errors == []


def test_enabling_a_machine_health_check_defined_in_the_class_passes() -> None:
    reader = world(cluster_class(machine_infrastructure=True, cp_mhc={"maxUnhealthy": 1}, md_mhc={"maxUnhealthy": 1}))
    obj = cluster(
        control_plane={"machineHealthCheck": {"enable": True}},
        machine_deployments=[deployment("md-0", machineHealthCheck={"enable": True})],
    )
    assert check(obj, reader=reader).errors == []


def test_machine_pool_health_checks_are_held_to_the_machine_deployment_rules() -> None:
    """clusterclass's extension (upstream's MachinePool topologies have no machineHealthCheck): the same rules and
    the same field paths as a MachineDeployment's."""
    reader = world(cluster_class(mp_mhc={"maxUnhealthy": 1}))
    obj = cluster(
        machine_pools=[
            pool("mp-0", machineHealthCheck={"enable": True}),
            pool("mp-1", machineHealthCheck={"nodeStartupTimeout": "10s", "unhealthyRange": "1-3"}),
        ]
    )
    path = "spec.topology.workers.machinePools[1].machineHealthCheck"
    assert errors(check(obj, reader=reader)) == [
        (f"{path}.nodeStartupTimeout", "Invalid value", "must be at least 30s"),
        (f"{path}.unhealthyRange", "Invalid value", "should match '^\\[[0-9]+-[0-9]+\\]$'"),
    ]
    defined_nowhere = world(cluster_class())
    assert errors(
        check(cluster(machine_pools=[pool("mp-0", machineHealthCheck={"enable": True})]), reader=defined_nowhere)
    ) == [
        (
            "spec.topology.workers.machinePools[0].machineHealthCheck.enable",
            "Forbidden",
            "cannot be set to true as MachineHealthCheck definition is not available in the Cluster topology or the "
            "ClusterClass",
        )
    ]


def test_a_machine_pool_remediation_template_namespace_is_defaulted() -> None:
    reader = world(cluster_class())
    mhc = {"remediationTemplate": {"kind": "R", "name": "r"}}
    defaulted, result = admit(cluster(machine_pools=[pool("mp-0", machineHealthCheck=mhc)]), reader=reader)
    check_ = defaulted["spec"]["topology"]["workers"]["machinePools"][0]["machineHealthCheck"]
    assert check_["remediationTemplate"]["namespace"] == "default"
    assert result.errors == []


def test_enabling_a_machine_health_check_defined_nowhere_is_forbidden() -> None:
    reader = world(cluster_class(machine_infrastructure=True))
    obj = cluster(
        control_plane={"machineHealthCheck": {"enable": True}},
        machine_deployments=[deployment("md-0", machineHealthCheck={"enable": True})],
    )
    detail = (
        "cannot be set to true as MachineHealthCheck definition is not available in the Cluster topology or the "
        "ClusterClass"
    )
    assert errors(check(obj, reader=reader)) == [
        ("spec.topology.controlPlane.machineHealthCheck.enable", "Forbidden", detail),
        ("spec.topology.workers.machineDeployments[0].machineHealthCheck.enable", "Forbidden", detail),
    ]


# --- malformed documents give field errors -----------------------------------------------------------------


def test_wrongly_typed_parts_are_field_errors() -> None:
    obj = cluster()
    obj["metadata"]["name"] = 5
    obj["spec"]["infrastructureRef"] = "ref"
    obj["spec"]["topology"]["workers"] = {
        "machinePools": [{"class": WORKER_CLASS, "name": 7}, "x"],
        "machineDeployments": {},
    }
    obj["spec"]["topology"]["controlPlane"] = []
    assert errors(check(obj)) == [
        ("metadata.name", "Invalid value", "must be a string"),
        ("spec.infrastructureRef", "Invalid value", "must be an object"),
        ("spec.topology.workers.machineDeployments", "Invalid value", "must be a list"),
        ("spec.topology.workers.machinePools[1]", "Invalid value", "must be an object"),
        ("spec.topology.controlPlane", "Invalid value", "must be an object"),
        ("spec.topology.workers.machinePools[0].name", "Invalid value", "must be a string"),
    ]


def test_topology_that_is_not_an_object_is_a_field_error() -> None:
    obj = cluster()
    obj["spec"]["topology"] = ["class1"]
    assert errors(check(obj)) == [("spec.topology", "Invalid value", "must be an object")]


def test_validate_delete_never_refuses() -> None:
    assert validate_cluster_delete(cluster(machine_pools=[pool("mp-0", replicas=-1)])).allowed


def test_nodes_are_not_read_on_create() -> None:
    nodes = Nodes()
    check(cluster(machine_pools=[pool("mp-0")]), nodes=nodes)
    assert nodes.asked == []


def test_worker_class_name_shared_by_md_and_mp_classes() -> None:
    # The same class name may be used by a MachineDeploymentClass and a MachinePoolClass (spec §1.2).
    obj = cluster(machine_deployments=[deployment("w", WORKER_CLASS)], machine_pools=[pool("w", WORKER_CLASS)])
    assert check(obj).errors == []
