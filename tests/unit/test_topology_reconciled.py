"""``TopologyReconciled`` (spec §7.1, §10.6): upstream's ``TestReconcileTopologyReconciledCondition`` cases."""

from __future__ import annotations

from typing import Any

import pytest

from clusterclass.api.conditions import Condition, with_conditions
from clusterclass.topology.conditions import (
    CLUSTER_CLASS_NOT_RECONCILED_MESSAGE,
    blocking_message,
    legacy_condition,
    name_list,
    topology_reconciled,
    topology_reconciled_v1beta2,
)
from clusterclass.topology.hooks import HookResponse, HookTracker
from clusterclass.topology.upgrade import UpgradeTracker

CLUSTER = {"metadata": {"name": "c1"}, "spec": {"topology": {"version": "v1.22.0"}}}
RECONCILED_CLASS = {"metadata": {"generation": 2}, "status": {"observedGeneration": 2}}


def tracker(**changes: Any) -> UpgradeTracker:
    upgrades = UpgradeTracker()
    for path, value in changes.items():
        part, attribute = path.split("__")
        setattr(getattr(upgrades, part), attribute, value)
    return upgrades


def condition(upgrades: UpgradeTracker | None = None, **kwargs: Any) -> Condition:
    return topology_reconciled(cluster=CLUSTER, cluster_class=RECONCILED_CLASS, upgrades=upgrades, **kwargs)


@pytest.mark.parametrize(
    ("upgrades", "reason", "message"),
    [
        (
            tracker(control_plane__is_pending_upgrade=True, machine_pools__upgrading={"mp0-abc123"}),
            "ControlPlaneUpgradePending",
            "Control plane rollout and upgrade to version v1.22.0 on hold. MachinePool(s) mp0-abc123 are upgrading",
        ),
        (
            tracker(
                control_plane__is_upgrading=True, control_plane__version="v1.22.0", machine_pools__pending_upgrade={"mp0-abc123"}  # noqa: E501
            ),
            "MachinePoolsUpgradePending",
            "MachinePool(s) mp0-abc123 rollout and upgrade to version v1.22.0 on hold. Control plane is upgrading to version v1.22.0",  # noqa: E501
        ),
        (
            tracker(control_plane__is_scaling=True, machine_pools__pending_upgrade={"mp0-abc123"}),
            "MachinePoolsUpgradePending",
            "MachinePool(s) mp0-abc123 rollout and upgrade to version v1.22.0 on hold. Control plane is reconciling desired replicas",  # noqa: E501
        ),
        (
            tracker(control_plane__is_scaling=True, machine_pools__pending_create={"mp0"}),
            "MachinePoolsCreatePending",
            "MachinePool(s) for Topologies mp0 creation on hold. Control plane is reconciling desired replicas",
        ),
        (
            tracker(machine_pools__pending_upgrade={"mp1-abc123"}, machine_pools__upgrading={"mp0-abc123"}),
            "MachinePoolsUpgradePending",
            "MachinePool(s) mp1-abc123 rollout and upgrade to version v1.22.0 on hold. MachinePool(s) mp0-abc123 are upgrading",  # noqa: E501
        ),
        (
            tracker(machine_pools__deferred={"mp1-abc123"}),
            "MachinePoolsUpgradeDeferred",
            "MachinePool(s) mp1-abc123 rollout and upgrade to version v1.22.0 deferred.",
        ),
        (
            tracker(machine_deployments__pending_upgrade={"md1"}, machine_pools__pending_upgrade={"mp1"}),
            "MachineDeploymentsUpgradePending",
            "MachineDeployment(s) md1 rollout and upgrade to version v1.22.0 on hold.",
        ),
        (
            tracker(control_plane__is_provisioning=True, machine_deployments__pending_create={"md0"}),
            "MachineDeploymentsCreatePending",
            "MachineDeployment(s) for Topologies md0 creation on hold. Control plane is completing initial provisioning",  # noqa: E501
        ),
    ],
)  # fmt: skip
def test_an_upgrade_in_flight_says_what_is_held_and_why(upgrades: UpgradeTracker, reason: str, message: str) -> None:
    got = condition(upgrades)
    assert (got.status, got.reason, got.severity, got.message) == ("False", reason, "Info", message)


@pytest.mark.parametrize(
    "upgrades",
    [
        tracker(control_plane__is_upgrading=True),  # no workers to hold
        tracker(control_plane__is_scaling=True),
        tracker(machine_pools__upgrading={"mp0"}),  # picked the version up: nothing waits
        UpgradeTracker(),
    ],
)
def test_true_when_nothing_waits(upgrades: UpgradeTracker) -> None:
    assert condition(upgrades) == Condition("TopologyReconciled", "True")


def test_precedence_deleted_then_error_then_class_then_hooks() -> None:
    deleting = {**CLUSTER, "metadata": {"name": "c1", "deletionTimestamp": "2024-01-01T00:00:00Z"}}
    assert topology_reconciled(cluster=deleting, error=RuntimeError("x")).reason == "Deleted"
    failed = condition(
        tracker(control_plane__is_pending_upgrade=True), error=RuntimeError("failed to create MachinePool")
    )
    assert (failed.reason, failed.severity, failed.message) == (
        "TopologyReconcileFailed",
        "Error",
        "failed to create MachinePool",
    )
    stale = topology_reconciled(
        cluster=CLUSTER, cluster_class={"metadata": {"generation": 3}, "status": {"observedGeneration": 2}}
    )
    assert (stale.reason, stale.message) == ("ClusterClassNotReconciled", CLUSTER_CLASS_NOT_RECONCILED_MESSAGE)
    hooks = HookTracker(responses={"BeforeClusterUpgrade": HookResponse(10, "msg"), "Other": HookResponse(0, "fine")})
    blocked = condition(tracker(control_plane__is_pending_upgrade=True), hooks=hooks)
    assert (blocked.reason, blocked.message) == (
        "LifecycleHookBlocking",
        'hook "BeforeClusterUpgrade" is blocking: msg',
    )


def test_the_class_not_reconciled_message_is_upstreams_to_the_letter() -> None:
    assert "A ClusterClass is reconciled if.status.observedGeneration == .metadata.generation is true." in (
        CLUSTER_CLASS_NOT_RECONCILED_MESSAGE
    )


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        (["d", "a", "c", "b"], "a, b, c, d"),
        (["a", "b", "c", "d", "e"], "a, b, c, d, e"),
        (["f", "a", "b", "c", "d", "e"], "a, b, c, d, e, ..."),
    ],
)
def test_name_lists_are_sorted_and_cut_after_five(names: list[str], expected: str) -> None:
    assert name_list(names) == expected


def test_setting_a_condition_keeps_the_others_and_its_own_time_when_unchanged() -> None:
    existing = [
        {"type": "Ready", "status": "True", "lastTransitionTime": "t0"},
        {"type": "TopologyReconciled", "status": "True", "lastTransitionTime": "t1"},
    ]
    assert with_conditions(existing, [Condition("TopologyReconciled", "True")], "t2") is None
    changed = with_conditions(existing, [Condition("TopologyReconciled", "False", "Deleted", severity="Info")], "t2")
    assert changed == [
        {"type": "Ready", "status": "True", "lastTransitionTime": "t0"},
        {
            "type": "TopologyReconciled",
            "status": "False",
            "severity": "Info",
            "lastTransitionTime": "t2",
            "reason": "Deleted",
        },
    ]


# --- upstream v1.14: the v1beta2 decision, and the v1beta1 condition a v1beta2 Cluster keeps beside it -----------


def v1beta2(upgrades: UpgradeTracker | None = None, cluster: Any = None, **kwargs: Any) -> Any:
    return topology_reconciled_v1beta2(
        cluster=cluster or CLUSTER, cluster_class=RECONCILED_CLASS, upgrades=upgrades, **kwargs
    )


def test_a_pending_after_cluster_upgrade_keeps_the_cluster_upgrading() -> None:
    """v1.14 counts the upgrade done only once AfterClusterUpgrade has been called (its pending-hooks mark)."""
    marked = {
        "metadata": {"name": "c1", "annotations": {"runtime.cluster.x-k8s.io/pending-hooks": "AfterClusterUpgrade"}},
        "spec": {"topology": {"version": "v1.22.0"}},
    }
    upgrading = v1beta2(UpgradeTracker(), cluster=marked)
    assert (upgrading.status, upgrading.reason, upgrading.message) == (
        "False",
        "ClusterUpgrading",
        "Cluster is upgrading to v1.22.0",
    )
    assert v1beta2(UpgradeTracker()).status == "True"


def test_the_v1beta1_form_of_a_decision_is_v1_14s() -> None:
    upgrading = v1beta2(tracker(machine_deployments__upgrading={"md-0-abc"}), control_plane=None)
    assert legacy_condition(upgrading) == Condition(
        "TopologyReconciled",
        "False",
        "ClusterUpgrading",
        "Cluster is upgrading to v1.22.0\n  * MachineDeployment md-0-abc upgrading to version v1.22.0",
        "Info",
    )  # upstream v1.6 said True here: a MachineDeployment upgrading holds nothing back
    failed = v1beta2(error=RuntimeError("failed to create MachinePool"))
    assert legacy_condition(failed) == Condition(
        "TopologyReconciled", "False", "TopologyReconcileFailed", "failed to create MachinePool", "Error"
    )
    assert legacy_condition(v1beta2(UpgradeTracker())) == Condition("TopologyReconciled", "True")


def test_blocking_hooks_are_told_in_v1_14s_words() -> None:
    hooks = HookTracker(
        responses={
            "BeforeClusterDelete": HookResponse(10, "draining"),
            "Quiet": HookResponse(5, ""),
            "Fine": HookResponse(0, "done"),
        }
    )
    assert (
        blocking_message(hooks, "delete") == "Following hooks are blocking delete: BeforeClusterDelete: draining; Quiet"
    )
    deleting = {"metadata": {"name": "c1", "deletionTimestamp": "2026-01-01T00:00:00Z"}, "spec": CLUSTER["spec"]}
    condition = v1beta2(cluster=deleting, hooks=hooks)
    assert (condition.reason, condition.message) == (
        "Deleting",
        "Cluster is deleting. Following hooks are blocking delete: BeforeClusterDelete: draining; Quiet",
    )
    assert blocking_message(HookTracker(), "delete") == ""
