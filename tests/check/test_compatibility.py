"""Compatibility of objects and ClusterClasses (spec §6.4; upstream compatibility_test.go, §10.10).

Each rule has a passing and a failing case; the MachinePool cases of §10.10 appear under their
upstream names. The reconcile's use of the same checks (reconcile.py) is pinned at the end.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from cc_support import BOOTSTRAP_V1, INFRA_V1, cluster_class, errors_of, md_class, mp_class, template

from clusterclass.errors import TopologyError
from clusterclass.fielderrors import ErrorType
from clusterclass.topology import reconcile as changes
from clusterclass.topology.check.compatibility import (
    cluster_classes_compatible,
    local_object_templates_compatible,
    objects_compatible,
    objects_in_same_namespace,
    objects_strictly_compatible,
)

Obj = dict[str, Any]
F = ErrorType.FORBIDDEN


def obj(api_version: str = INFRA_V1, kind: str = "DockerMachinePool", name: str = "pool", namespace: str = "default"):
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace}}


# --- objects ----------------------------------------------------------------------------------------


def test_objects_strictly_compatible_pass() -> None:
    assert objects_strictly_compatible(obj(), obj(api_version="infrastructure.cluster.x-k8s.io/v1beta2")) == []


@pytest.mark.parametrize(
    ("desired", "expected"),
    [
        (obj(name="other"), [("metadata.name", F, 'metadata.name of DockerMachinePool.infrastructure.cluster.x-k8s.io/pool cannot be changed from "pool" to "other" to prevent incompatible changes in the Cluster')]),  # noqa: E501
        (obj(api_version="infra.example.com/v1"), [("metadata.apiVersion", F, 'apiVersion.group of DockerMachinePool.infrastructure.cluster.x-k8s.io/pool cannot be changed from "infrastructure.cluster.x-k8s.io" to "infra.example.com" to prevent incompatible changes in the Cluster')]),  # noqa: E501
        (obj(kind="AzureMachinePool"), [("metadata.kind", F, 'apiVersion.kind of DockerMachinePool.infrastructure.cluster.x-k8s.io/pool cannot be changed from "DockerMachinePool" to "AzureMachinePool" to prevent incompatible changes in the Cluster')]),  # noqa: E501
        (obj(namespace="other"), [("metadata.namespace", F, 'metadata.namespace of DockerMachinePool.infrastructure.cluster.x-k8s.io/pool cannot be changed from "default" to "other" because templates must be in the same namespace as the Cluster')]),  # noqa: E501
    ],
)  # fmt: skip
def test_objects_strictly_compatible_fail(desired: Obj, expected: list[Any]) -> None:
    assert errors_of(objects_strictly_compatible(obj(), desired)) == expected


def test_objects_compatible_allows_a_new_name() -> None:
    assert objects_compatible(obj(), obj(name="pool-2")) == []


def test_objects_compatible_refuses_group_kind_and_namespace_changes() -> None:
    desired = obj(api_version="infra.example.com/v1", kind="Other", namespace="elsewhere")
    assert [e.field for e in objects_compatible(obj(), desired)] == [
        "metadata.apiVersion",
        "metadata.kind",
        "metadata.namespace",
    ]


def test_objects_in_same_namespace_allows_group_and_kind_changes() -> None:
    assert objects_in_same_namespace(obj(), obj(api_version="infra.example.com/v1", kind="Other")) == []


def test_objects_in_same_namespace_refuses_a_namespace_change() -> None:
    assert [e.field for e in objects_in_same_namespace(obj(), obj(namespace="x"))] == ["metadata.namespace"]


def test_core_group_renders_without_a_dot() -> None:
    errors = objects_strictly_compatible(obj(api_version="v1", kind="ConfigMap"), obj(api_version="v1", kind="Secret"))
    assert errors[0].detail.startswith("apiVersion.kind of ConfigMap/pool ")


# --- LocalObjectTemplatesAreCompatible -------------------------------------------------------------------


def test_local_object_templates_allow_name_and_version_changes() -> None:
    current = template("DockerMachinePoolTemplate", "a")
    desired = template("DockerMachinePoolTemplate", "b", "infrastructure.cluster.x-k8s.io/v1beta2")
    assert local_object_templates_compatible(current, desired, "spec.infrastructure") == []


@pytest.mark.parametrize(
    ("desired", "expected"),
    [
        (template("DockerMachinePoolTemplate", "a", "infra.example.com/v1"), [("spec.x.ref.apiVersion", F, 'apiVersion.group cannot be changed from "infrastructure.cluster.x-k8s.io" to "infra.example.com" to prevent incompatible changes in the Clusters')]),  # noqa: E501
        (template("AzureMachinePoolTemplate", "a"), [("spec.x.ref.kind", F, 'apiVersion.kind cannot be changed from "DockerMachinePoolTemplate" to "AzureMachinePoolTemplate" to prevent incompatible changes in the Clusters')]),  # noqa: E501
        (template("DockerMachinePoolTemplate", "a", namespace="other"), [("spec.x.ref.namespace", F, "templates must be in the same namespace as the ClusterClass (default)")]),  # noqa: E501
    ],
)  # fmt: skip
def test_local_object_templates_refuse_group_kind_and_namespace_changes(desired: Obj, expected: list[Any]) -> None:
    current = template("DockerMachinePoolTemplate", "a")
    assert errors_of(local_object_templates_compatible(current, desired, "spec.x")) == expected


@pytest.mark.parametrize("missing", [None, {}, {"ref": None}, "not an object", {"ref": "x"}])
def test_local_object_templates_without_a_ref_are_not_compared(missing: Any) -> None:
    present = template("DockerMachinePoolTemplate", "a")
    assert local_object_templates_compatible(missing, present, "spec.x") == []
    assert local_object_templates_compatible(present, missing, "spec.x") == []


# --- ClusterClassesAreCompatible ---------------------------------------------------------------------------


def _mp_infra(cc: Obj, i: int = 0) -> Obj:
    ref: Obj = cc["spec"]["workers"]["machinePools"][i]["template"]["infrastructure"]["ref"]
    return ref


def _mp_bootstrap(cc: Obj, i: int = 0) -> Obj:
    ref: Obj = cc["spec"]["workers"]["machinePools"][i]["template"]["bootstrap"]["ref"]
    return ref


def test_cluster_classes_compatible_pass_when_unchanged() -> None:
    assert cluster_classes_compatible(cluster_class(), cluster_class()) == []


def test_pass_for_incompatible_ref_in_machine_pool_class_bootstrap_template_cluster_classes() -> None:
    """Upstream: TestClusterClassesAreCompatible / "pass for incompatible ref in MachinePoolClass bootstrapTemplate"."""
    new = cluster_class()
    _mp_bootstrap(new).update(apiVersion="bootstrap.other.io/v1", kind="TalosConfigTemplate", name="talos")
    assert cluster_classes_compatible(cluster_class(), new) == []


def test_pass_if_machine_pool_class_is_removed_from_cluster_class() -> None:
    """Upstream: "pass if machinePoolClass is removed from ClusterClass" (usage is checked by the webhook)."""
    assert cluster_classes_compatible(cluster_class(), cluster_class(machine_pools=[])) == []


def test_pass_if_machine_pool_classes_are_compatible() -> None:
    """Upstream: TestMachinePoolClassesAreCompatible / "pass if MachinePoolClasses are compatible"."""
    new = cluster_class()
    _mp_infra(new).update(apiVersion="infrastructure.cluster.x-k8s.io/v1beta2", name="infra-2")
    _mp_bootstrap(new).update(kind="OtherBootstrapConfigTemplate")
    new["spec"]["workers"]["machinePools"][0]["template"]["metadata"] = {"labels": {"x": "y"}}
    assert cluster_classes_compatible(cluster_class(), new) == []


def test_pass_if_a_machine_pool_class_is_added() -> None:
    new = cluster_class(machine_pools=[mp_class("aa"), mp_class("bb", infrastructure=template("OtherTemplate", "o"))])
    assert cluster_classes_compatible(cluster_class(), new) == []


def test_error_if_machine_pool_class_has_multiple_incompatible_references() -> None:
    """Upstream: "error if MachinePoolClass has multiple incompatible references" (infra kind and group)."""
    new = cluster_class()
    _mp_infra(new).update(apiVersion="infra.example.com/v1", kind="OtherMachinePoolTemplate")
    assert errors_of(cluster_classes_compatible(cluster_class(), new)) == [
        (
            "spec.workers.machinePools[0].ref.apiVersion",
            F,
            'apiVersion.group cannot be changed from "infrastructure.cluster.x-k8s.io" to "infra.example.com" to '
            "prevent incompatible changes in the Clusters",
        ),
        (
            "spec.workers.machinePools[0].ref.kind",
            F,
            'apiVersion.kind cannot be changed from "GenericInfrastructureMachinePoolTemplate" to '
            '"OtherMachinePoolTemplate" to prevent incompatible changes in the Clusters',
        ),
    ]


def test_machine_pool_error_path_uses_the_index_in_the_old_list() -> None:
    old = cluster_class(machine_pools=[mp_class("a"), mp_class("b")])
    new = cluster_class(machine_pools=[mp_class("b", infrastructure=template("OtherTemplate", "x"))])
    assert [e.field for e in cluster_classes_compatible(old, new)] == ["spec.workers.machinePools[1].ref.kind"]


def test_machine_deployment_bootstrap_may_change_kind_but_not_infrastructure() -> None:
    new = cluster_class(
        machine_deployments=[
            md_class(bootstrap=template("TalosConfigTemplate", "t", BOOTSTRAP_V1), infrastructure=template("X", "y"))
        ]
    )
    assert [e.field for e in cluster_classes_compatible(cluster_class(), new)] == [
        "spec.workers.machineDeployments[0].ref.kind"
    ]


def test_md_and_mp_classes_of_the_same_name_are_compared_with_their_own_kind() -> None:
    # Class "aa" exists as MD and MP class; changing only the MP class's infrastructure kind is one error.
    new = cluster_class()
    _mp_infra(new)["kind"] = "OtherMachinePoolTemplate"
    assert [e.field for e in cluster_classes_compatible(cluster_class(), new)] == [
        "spec.workers.machinePools[0].ref.kind"
    ]


@pytest.mark.parametrize(
    ("path", "field"),
    [
        (("infrastructure",), "spec.infrastructure.ref.kind"),
        (("controlPlane",), "spec.controlPlane.ref.kind"),
        (("controlPlane", "machineInfrastructure"), "spec.controlPlane.machineInfrastructure.ref.kind"),
    ],
)
def test_cluster_and_control_plane_templates_must_keep_their_kind(path: tuple[str, ...], field: str) -> None:
    new = cluster_class()
    holder = new["spec"]
    for step in path:
        holder = holder[step]
    holder["ref"]["kind"] = "SomethingElseTemplate"
    assert [e.field for e in cluster_classes_compatible(cluster_class(), new)] == [field]


def test_control_plane_machine_infrastructure_is_compared_only_when_both_have_one() -> None:
    assert cluster_classes_compatible(cluster_class(), cluster_class(machine_infrastructure=False)) == []
    assert cluster_classes_compatible(cluster_class(machine_infrastructure=False), cluster_class()) == []


@pytest.mark.parametrize("which", ["old", "new"])
def test_nil_cluster_class_is_an_error(which: str) -> None:
    label = "current" if which == "old" else "desired"
    args = (None, cluster_class()) if which == "old" else (cluster_class(), None)
    assert errors_of(cluster_classes_compatible(*args)) == [
        ("", ErrorType.INVALID, f"could not compare ClusterClass compatibility: {label} ClusterClass must not be nil")
    ]


def test_malformed_cluster_classes_compare_without_raising() -> None:
    broken = {"spec": {"workers": {"machinePools": ["x", {"class": 1, "template": "y"}], "machineDeployments": 3}}}
    assert cluster_classes_compatible(broken, cluster_class()) == []
    assert cluster_classes_compatible({"spec": "x"}, {"spec": None}) == []


# --- the reconcile uses the same checks ------------------------------------------------------------------


def test_changes_check_compatible_raises_with_every_problem() -> None:
    current = obj()
    desired = copy.deepcopy(obj(name="other", kind="AzureMachinePool"))
    with pytest.raises(TopologyError) as err:
        changes.check_compatible(current, desired, changes.STRICT)
    assert err.value.message == "; ".join(e.detail for e in objects_strictly_compatible(current, desired))
    assert err.value.message.count("to prevent incompatible changes in the Cluster") == 2


@pytest.mark.parametrize(
    ("check", "passes"),
    [(changes.STRICT, False), (changes.SAME_GROUP_KIND_NAMESPACE, True), (changes.SAME_NAMESPACE, True)],
)
def test_changes_checks_are_the_compatibility_functions(check: changes.Compatibility, passes: bool) -> None:
    current, desired = obj(), obj(name="renamed")
    if passes:
        changes.check_compatible(current, desired, check)
    else:
        with pytest.raises(TopologyError):
            changes.check_compatible(current, desired, check)
