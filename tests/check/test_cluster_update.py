"""Cluster admission on update (spec §6.1.2 step 8, §6.1.4, §6.4, §10.11): class, version, class change.

The version-bump guard cases follow upstream's ``TestClusterTopologyValidation`` and
``Test_validateTopologyMachinePoolVersions`` (v1.7): the stored Cluster runs v1.19.1 with control
plane ``cluster1-cp``; the update asks for v1.20.2.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from check_support import (
    Nodes,
    b,
    check,
    cluster,
    cluster_class,
    control_plane,
    deployment,
    errors,
    fields,
    machine,
    machine_deployment,
    machine_pool,
    pool,
    rendered,
    world,
)

from clusterclass.topology.check.cluster import validate_cluster

UNSAFE_CLASS = "unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check"
UNSAFE_VERSION = "unsafe.topology.cluster.x-k8s.io/disable-update-version-check"
VERSION_GUARD = "minor version update cannot happen at this time: "


def stored(version: str = "v1.19.1", **kwargs: Any) -> dict[str, Any]:
    """The Cluster as stored: with the control plane ref the topology controller set."""
    return cluster(version=version, control_plane_ref=control_plane(), **kwargs)


def updated(version: str = "v1.20.2", **kwargs: Any) -> dict[str, Any]:
    return cluster(version=version, control_plane_ref=control_plane(), **kwargs)


def upgrade_world(*objects: dict[str, Any], cp: dict[str, Any] | None = None) -> Any:
    return world(cluster_class(), cp if cp is not None else control_plane(), *objects)


# --- removing the topology, adding a class ---------------------------------------------------------------


def test_keeping_the_topology_passes() -> None:
    assert check(updated("v1.19.1"), stored(), reader=upgrade_world()).errors == []


def test_removing_the_topology_is_forbidden() -> None:
    new = stored()
    del new["spec"]["topology"]
    assert errors(check(new, stored(), reader=upgrade_world())) == [
        ("spec.topology", "Forbidden", "cannot be removed from an existing Cluster")
    ]


def _without_topology() -> dict[str, Any]:
    old = stored()
    del old["spec"]["topology"]
    return old


def test_setting_a_class_on_an_existing_cluster_is_forbidden() -> None:
    assert errors(check(updated("v1.19.1"), _without_topology(), reader=upgrade_world())) == [
        ("spec.topology.class", "Forbidden", "class cannot be set on an existing Cluster")
    ]


def test_setting_a_class_on_an_existing_cluster_is_allowed_with_the_unsafe_annotation() -> None:
    new = updated("v1.22.0", annotations={UNSAFE_CLASS: ""})
    # Returns early: not even the version jump from the (absent) old version is judged.
    assert check(new, _without_topology(), reader=upgrade_world()).errors == []


def test_update_with_a_missing_cluster_class_is_an_internal_error() -> None:
    result = check(updated("v1.19.1", class_name="absent"), stored(class_name="absent"), reader=upgrade_world())
    assert errors(result) == [
        ("spec.topology.class", "Internal error", 'clusterclasses.cluster.x-k8s.io "absent" not found')
    ]
    assert result.warnings  # the create-time warning is still given


def test_update_with_an_unreconciled_cluster_class_still_checks_versions() -> None:
    reader = world(cluster_class(is_reconciled=False), control_plane())
    result = check(updated("v1.18.0"), stored(), reader=reader)
    assert fields(result) == ["spec.topology.version"]


# --- version decrease and jumps -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ("v1.19.1", "v1.19.1"),
        ("v1.19.1", "v1.19.2"),
        ("v1.19.1", "v1.20.0"),
        ("v1.19.1", "v1.20.2"),
        ("v1.19.1", "v1.19.1+build.1"),
        ("v1.19.1+build.1", "v1.19.1+build.2"),
        ("v1.19.1-rc.1", "v1.19.1"),
    ],
)
def test_same_version_patch_bumps_and_one_minor_pass(old: str, new: str) -> None:
    assert check(updated(new), stored(old), reader=upgrade_world()).errors == []


def test_decreasing_the_version_fails() -> None:
    assert rendered(check(updated("v1.18.1"), stored(), reader=upgrade_world())) == [
        'spec.topology.version: Invalid value: "v1.18.1": version cannot be decreased from "1.19.1" to "1.18.1"'
    ]


def test_decreasing_the_build_metadata_fails() -> None:
    result = check(updated("v1.19.1+build.1"), stored("v1.19.1+build.2"), reader=upgrade_world())
    assert errors(result) == [
        (
            "spec.topology.version",
            "Invalid value",
            'version cannot be decreased from "1.19.1+build.2" to "1.19.1+build.1"',
        )
    ]


@pytest.mark.parametrize(("new", "shown"), [("v1.21.0", "1.21.0"), ("v1.22.3", "1.22.3"), ("v2.0.0", "2.0.0")])
def test_increasing_by_two_minors_or_more_is_forbidden(new: str, shown: str) -> None:
    assert errors(check(updated(new), stored(), reader=upgrade_world())) == [
        ("spec.topology.version", "Forbidden", f'version cannot be increased from "1.19.1" to "{shown}"')
    ]


def test_the_unsafe_version_annotation_skips_every_version_check_with_a_warning() -> None:
    cp = control_plane(status_version=None)  # provisioning: would block a minor bump
    result = check(updated("v1.18.0", annotations={UNSAFE_VERSION: ""}), stored(), reader=upgrade_world(cp=cp))
    assert result.errors == []
    assert result.warnings == [
        'Skipping version validation for Cluster because annotation "unsafe.topology.cluster.x-k8s.io/'
        'disable-update-version-check" is set.'
    ]


def test_unparsable_old_version_is_reported() -> None:
    result = check(updated("v1.19.1"), stored("garbage"), reader=upgrade_world())
    assert errors(result) == [
        ("spec.topology.version", "Invalid value", "old version must be a valid semantic version")
    ]


# --- the version-bump guard: control plane ---------------------------------------------------------------


def test_should_update_if_cluster_is_fully_upgraded_and_up_to_date() -> None:
    objects = [
        machine_deployment("cluster1-md1", "v1.19.1"),
        machine("m1", "v1.19.1", b.owned_labels("cluster1", **{b.DEPLOYMENT_NAME: "md1"})),
        machine_pool("cluster1-pool1", "v1.19.1", node_refs=["node1"]),
    ]
    nodes = Nodes({"node1": "v1.19.1"})
    result = check(updated(), stored(), reader=upgrade_world(*objects), nodes=nodes)
    assert result.errors == []
    assert result.warnings == []
    assert nodes.asked == ["node1"]


def test_should_block_update_if_control_plane_is_not_at_the_old_version() -> None:
    result = check(updated(), stored(), reader=upgrade_world(cp=control_plane("v1.19.0", "v1.19.0")))
    assert errors(result) == [
        (
            "spec.topology.version",
            "Invalid value",
            VERSION_GUARD + "blocking version update due to ControlPlane version check: ControlPlane version "
            '"1.19.0" does not match the current version "1.19.1"',
        )
    ]


def test_should_block_update_if_control_plane_is_provisioning() -> None:
    result = check(updated(), stored(), reader=upgrade_world(cp=control_plane(status_version=None)))
    assert [e.detail for e in result.errors] == [
        VERSION_GUARD + "blocking version update due to ControlPlane version check: ControlPlane is currently "
        "provisioning"
    ]


def test_should_block_update_if_control_plane_is_upgrading() -> None:
    result = check(updated(), stored(), reader=upgrade_world(cp=control_plane("v1.19.1", "v1.19.0")))
    assert [e.detail for e in result.errors] == [
        VERSION_GUARD + "blocking version update due to ControlPlane version check: ControlPlane is still "
        "completing a previous upgrade"
    ]


def test_should_block_update_if_the_control_plane_cannot_be_read() -> None:
    result = check(updated(), stored(), reader=world(cluster_class()))
    assert [e.detail for e in result.errors] == [
        VERSION_GUARD + "blocking version update due to ControlPlane version check: failed to get ControlPlane "
        "object: KubeadmControlPlane default/cluster1-cp not found"
    ]


def test_patch_bumps_skip_the_guard() -> None:
    reader = upgrade_world(cp=control_plane(status_version=None))
    assert check(updated("v1.19.5"), stored(), reader=reader).errors == []


# --- the version-bump guard: MachineDeployments ----------------------------------------------------------


def test_should_block_update_if_md_is_not_yet_upgraded() -> None:
    objects = [machine_deployment("cluster1-md1", "v1.18.1"), machine_deployment("cluster1-md2", "v1.19.1")]
    result = check(updated(), stored(), reader=upgrade_world(*objects))
    assert [e.detail for e in result.errors] == [
        VERSION_GUARD + "blocking version update due to MachineDeployment version check: there are "
        "MachineDeployments still completing a previous upgrade: [cluster1-md1]"
    ]


def test_should_block_update_if_md_machines_are_still_rolling_out() -> None:
    labels = b.owned_labels("cluster1", **{b.DEPLOYMENT_NAME: "md1"})
    objects = [
        machine_deployment("cluster1-md1", "v1.19.1"),
        machine("m-new", "v1.19.1", labels),
        machine("m-old", "v1.18.1", labels),
    ]
    result = check(updated(), stored(), reader=upgrade_world(*objects))
    assert "MachineDeployments still completing a previous upgrade: [cluster1-md1]" in result.errors[0].detail


def test_should_block_update_if_an_md_machine_has_no_version() -> None:
    labels = b.owned_labels("cluster1", **{b.DEPLOYMENT_NAME: "md1"})
    objects = [machine_deployment("cluster1-md1", "v1.19.1"), machine("m1", None, labels)]
    result = check(updated(), stored(), reader=upgrade_world(*objects))
    assert result.errors[0].detail.startswith(
        VERSION_GUARD + "blocking version update due to MachineDeployment version check: failed to check if "
        "MachineDeployment is upgrading: failed to check if MachineDeployment cluster1-md1 is upgrading"
    )


def test_mds_of_other_clusters_do_not_block() -> None:
    other = b.machine_deployment(
        "other-md", "md1", bootstrap=None, infrastructure=None, cluster_name="other", version="v1.10.0"
    )
    assert check(updated(), stored(), reader=upgrade_world(other)).errors == []


# --- the version-bump guard: MachinePools (spec §10.11 Test_validateTopologyMachinePoolVersions) ------------


def test_should_update_if_no_machine_pool_exists() -> None:
    nodes = Nodes()
    assert check(updated(), stored(machine_pools=[pool("pool1")]), reader=upgrade_world(), nodes=nodes).errors == []
    assert nodes.asked == []


def test_should_update_if_machine_pools_are_fully_upgraded_and_up_to_date() -> None:
    objects = [machine_pool("cluster1-pool1", "v1.19.1", node_refs=["node1", "node2"])]
    nodes = Nodes({"node1": "v1.19.1", "node2": "v1.19.1"})
    assert check(updated(), stored(), reader=upgrade_world(*objects), nodes=nodes).errors == []


def test_should_block_update_if_mp_is_not_yet_upgraded() -> None:
    # "should block update if mp is not yet upgraded": cluster1-pool1 still at v1.18.1, v1.19.1 → v1.20.2
    objects = [machine_pool("cluster1-pool1", "v1.18.1"), machine_pool("cluster1-pool2", "v1.19.1", topology="p2")]
    result = check(updated(), stored(), reader=upgrade_world(*objects), nodes=Nodes())
    assert rendered(result) == [
        'spec.topology.version: Invalid value: "v1.20.2": '
        + VERSION_GUARD
        + "blocking version update due to MachinePool version check: there are MachinePools still completing a "
        "previous upgrade: [cluster1-pool1]"
    ]


def test_should_block_update_if_machine_pool_is_upgrading() -> None:
    objects = [machine_pool("cluster1-pool1", "v1.19.1", node_refs=["node1"])]
    result = check(updated(), stored(), reader=upgrade_world(*objects), nodes=Nodes({"node1": "v1.18.1"}))
    assert [e.detail for e in result.errors] == [
        VERSION_GUARD + "blocking version update due to MachinePool version check: there are MachinePools still "
        "completing a previous upgrade: [cluster1-pool1]"
    ]


def test_should_block_update_if_it_cannot_get_the_node_of_a_machine_pool() -> None:
    objects = [machine_pool("cluster1-pool1", "v1.19.1", node_refs=["node1"])]
    result = check(updated(), stored(), reader=upgrade_world(*objects), nodes=Nodes())
    assert [e.detail for e in result.errors] == [
        VERSION_GUARD + "blocking version update due to MachinePool version check: failed to check if MachinePool "
        "is upgrading: failed to check if MachinePool cluster1-pool1 is upgrading: failed to get Node node1"
    ]


def test_vendor_suffixed_kubelets_do_not_look_upgrading() -> None:
    # DECISIONS.md: kubelet versions are compared ignoring build metadata.
    objects = [machine_pool("cluster1-pool1", "v1.19.1", node_refs=["node1"])]
    nodes = Nodes({"node1": "v1.19.1+vmware.1"})
    assert check(updated(), stored(), reader=upgrade_world(*objects), nodes=nodes).errors == []


def test_unknown_nodes_warn_instead_of_blocking() -> None:
    objects = [machine_pool("cluster1-pool1", "v1.19.1", node_refs=["node1"])]
    for nodes in (None, Nodes(unknown=True)):
        result = check(updated(), stored(), reader=upgrade_world(*objects), nodes=nodes)
        assert result.errors == []
        assert result.warnings == [
            "Could not check whether MachinePool cluster1-pool1 is still upgrading: its Nodes node1 could not be "
            "read from the workload cluster; the minor version update is allowed without that check."
        ]


def test_machine_pools_without_node_refs_never_ask_the_workload_cluster() -> None:
    objects = [machine_pool("cluster1-pool1", "v1.19.1")]
    nodes = Nodes()
    assert check(updated(), stored(), reader=upgrade_world(*objects), nodes=nodes).errors == []
    assert nodes.asked == []


def test_every_blocking_check_is_aggregated() -> None:
    objects = [machine_deployment("cluster1-md1", "v1.18.1"), machine_pool("cluster1-pool1", "v1.18.1")]
    result = check(updated(), stored(), reader=upgrade_world(*objects, cp=control_plane(status_version=None)))
    assert [e.detail for e in result.errors] == [
        VERSION_GUARD + "[blocking version update due to ControlPlane version check: ControlPlane is currently "
        "provisioning, blocking version update due to MachineDeployment version check: there are "
        "MachineDeployments still completing a previous upgrade: [cluster1-md1], blocking version update due to "
        "MachinePool version check: there are MachinePools still completing a previous upgrade: [cluster1-pool1]]"
    ]


# --- class change (spec §6.4, §10.11 TestClusterTopologyValidationForTopologyClassChange) -----------------


def _class_change_world(new_cc: dict[str, Any]) -> Any:
    return world(cluster_class("class1"), new_cc, control_plane())


def _changed(**kwargs: Any) -> Any:
    return check(
        updated("v1.19.1", class_name="class2", machine_pools=[pool("pool1")]),
        stored(machine_pools=[pool("pool1")]),
        reader=_class_change_world(cluster_class("class2", **kwargs)),
    )


def test_accept_class_change_with_a_compatible_machine_pool_class_infrastructure_template() -> None:
    infra = b.docker_machine_pool_template("another-name")
    infra["apiVersion"] = "infrastructure.cluster.x-k8s.io/v1beta2"
    assert _changed(mp_infrastructure=infra, md_infrastructure=b.docker_machine_template("x")).errors == []


def test_accept_class_change_with_an_incompatible_machine_pool_class_bootstrap_template() -> None:
    bootstrap = b.generic_template("OtherBootstrapConfigTemplate", "b", api_version="other.x-k8s.io/v1")
    assert _changed(mp_bootstrap=bootstrap).errors == []


def test_accept_class_change_with_a_deleted_machine_deployment_and_machine_pool_class() -> None:
    result = check(
        updated("v1.19.1", class_name="class2"),
        stored(),
        reader=_class_change_world(cluster_class("class2", md_classes=[], mp_classes=[])),
    )
    assert result.errors == []


def test_accept_class_change_with_an_added_machine_deployment_and_machine_pool_class() -> None:
    cc = cluster_class("class2", md_classes=["default-worker", "new"], mp_classes=["default-worker", "new"])
    assert check(updated("v1.19.1", class_name="class2"), stored(), reader=_class_change_world(cc)).errors == []


def test_reject_class_change_with_an_incompatible_kind_change_to_machine_pool_infrastructure_template() -> None:
    infra = b.generic_template("OtherMachinePoolTemplate", "mp-infra")
    assert errors(_changed(mp_infrastructure=infra)) == [
        (
            "spec.workers.machinePools[0].ref.kind",
            "Forbidden",
            'apiVersion.kind cannot be changed from "DockerMachinePoolTemplate" to "OtherMachinePoolTemplate" to '
            "prevent incompatible changes in the Clusters",
        )
    ]


def test_reject_class_change_with_an_incompatible_api_group_change_to_machine_pool_infrastructure_template() -> None:
    infra = b.docker_machine_pool_template("mp-infra")
    infra["apiVersion"] = "other.infrastructure.x-k8s.io/v1beta1"
    assert fields(_changed(mp_infrastructure=infra)) == ["spec.workers.machinePools[0].ref.apiVersion"]


def test_class_change_from_a_class_that_cannot_be_found_is_forbidden() -> None:
    reader = world(cluster_class("class2"), control_plane())
    result = check(updated("v1.19.1", class_name="class2"), stored(), reader=reader)
    assert errors(result) == [
        (
            "spec.topology.class",
            "Forbidden",
            'valid ClusterClass with name "class1" could not be retrieved, change from class "class1" to class '
            '"class2" cannot be validated. Error: clusterclasses.cluster.x-k8s.io "class1" not found',
        )
    ]


def test_class_change_from_an_unreconciled_class_is_forbidden() -> None:
    reader = world(cluster_class("class1", is_reconciled=False), cluster_class("class2"), control_plane())
    result = check(updated("v1.19.1", class_name="class2"), stored(), reader=reader)
    assert [e.detail for e in result.errors] == [
        'valid ClusterClass with name "class1" could not be retrieved, change from class "class1" to class '
        '"class2" cannot be validated. Error: ClusterClass is not successfully reconciled'
    ]


def test_update_is_judged_on_the_new_object_not_the_old_one() -> None:
    old = stored(machine_pools=[pool("mp-0", replicas=-1)])
    new = copy.deepcopy(old)
    new["spec"]["topology"]["workers"]["machinePools"][0]["replicas"] = 2
    assert check(new, old, reader=upgrade_world()).errors == []


def test_old_object_of_the_wrong_type_counts_as_an_update_of_nothing() -> None:
    result = validate_cluster(updated("v1.19.1"), "garbage", reader=upgrade_world())  # type: ignore[arg-type]
    assert fields(result) == ["spec.topology.class"]


def test_machine_deployments_of_the_standard_world_are_checked_too() -> None:
    assert check(updated("v1.19.1", machine_deployments=[deployment("md1")]), stored(), reader=upgrade_world()).allowed


def test_class_change_to_an_unreconciled_class_is_checked_against_it_as_read() -> None:
    # Upstream compares against a nil ClusterClass here (an internal error); we judge the class we read.
    infra = b.generic_template("OtherMachinePoolTemplate", "mp-infra")
    new_cc = cluster_class("class2", mp_infrastructure=infra, is_reconciled=False)
    result = check(updated("v1.19.1", class_name="class2"), stored(), reader=_class_change_world(new_cc))
    assert fields(result) == ["spec.workers.machinePools[0].ref.kind"]
    assert result.warnings
