"""ClusterClass defaulting and validation (spec §6.2, A25; upstream clusterclass_test.go, §10.12).

Every rule has a passing and a failing case. The MachinePool cases of §10.12 keep their upstream
names in the docstrings.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from cc_support import (
    BOOTSTRAP_V1,
    FailingReader,
    cluster,
    cluster_class,
    errors_of,
    fields_of,
    md_class,
    mp_class,
    reader,
    ref,
    template,
    validate,
    worker_topology,
)

from clusterclass.fielderrors import ErrorType
from clusterclass.topology.check import Gates
from clusterclass.topology.check.clusterclass import (
    default_cluster_class,
    local_object_template_errors,
    validate_cluster_class,
    validate_cluster_class_delete,
)

Obj = dict[str, Any]
R, INV, F, T = ErrorType.REQUIRED, ErrorType.INVALID, ErrorType.FORBIDDEN, ErrorType.TYPE_INVALID


def mp(cc: Obj, i: int = 0) -> Obj:
    entry: Obj = cc["spec"]["workers"]["machinePools"][i]
    return entry


def md(cc: Obj, i: int = 0) -> Obj:
    entry: Obj = cc["spec"]["workers"]["machineDeployments"][i]
    return entry


def without_namespaces(cc: Obj) -> Obj:
    cc = copy.deepcopy(cc)
    spec = cc["spec"]
    holders = [spec["infrastructure"], spec["controlPlane"], spec["controlPlane"]["machineInfrastructure"]]
    for workers in spec["workers"].values():
        for worker in workers:
            holders += [worker["template"]["bootstrap"], worker["template"]["infrastructure"]]
    for holder in holders:
        del holder["ref"]["namespace"]
    return cc


# --- defaulting --------------------------------------------------------------------------------------------


def test_default_namespaces_for_cluster_class() -> None:
    """Upstream: TestClusterClassDefaultNamespaces / "for ClusterClass" (incl. MachinePool class refs)."""
    cc = cluster_class(namespace="ns1")
    bare = without_namespaces(cc)
    assert default_cluster_class(bare) == cc


def test_defaulting_keeps_namespaces_that_are_set() -> None:
    cc = cluster_class()
    mp(cc)["template"]["bootstrap"]["ref"]["namespace"] = "elsewhere"
    assert default_cluster_class(cc) == cc


def test_defaulting_copies_and_is_idempotent() -> None:
    bare = without_namespaces(cluster_class())
    before = copy.deepcopy(bare)
    once = default_cluster_class(bare)
    assert bare == before
    assert default_cluster_class(once) == once
    assert once is not bare


def test_defaulting_without_a_namespace_changes_nothing() -> None:
    bare = without_namespaces(cluster_class())
    del bare["metadata"]["namespace"]
    assert default_cluster_class(bare) == bare


@pytest.mark.parametrize("doc", [None, "x", [], {"spec": 1}, {"metadata": {"namespace": "n"}, "spec": {"workers": 2}}])
def test_defaulting_malformed_documents_returns_a_copy(doc: Any) -> None:
    assert default_cluster_class(doc) == doc


# --- 1. feature gate ----------------------------------------------------------------------------------------


def test_cluster_topology_gate_on_allows() -> None:
    assert validate(cluster_class()).allowed


def test_cluster_class_validation_feature_gated() -> None:
    """Upstream: TestClusterClassValidationFeatureGated (create and update, MP classes in the fixture)."""
    off = Gates(cluster_topology=False)
    expected = [("spec", F, "can be set only if the ClusterTopology feature flag is enabled")]
    assert errors_of(validate(cluster_class(), gates=off)) == expected
    assert errors_of(validate(cluster_class(), cluster_class(), gates=off)) == expected


# --- 2. references ----------------------------------------------------------------------------------------


def test_create_pass() -> None:
    """Upstream: "create pass"."""
    assert validate(cluster_class()).errors == []


@pytest.mark.parametrize("part", ["bootstrap", "infrastructure"])
def test_create_fail_machine_pool_template_has_empty_name(part: str) -> None:
    """Upstream: "create fail machinePool Bootstrap has empty name" / "... Infrastructure has empty name"."""
    cc = cluster_class()
    mp(cc)["template"][part]["ref"]["name"] = ""
    assert errors_of(validate(cc)) == [
        (f"spec.workers.machinePools[0].template.{part}.ref.name", R, "template name must be defined")
    ]


@pytest.mark.parametrize("part", ["bootstrap", "infrastructure"])
def test_create_fail_if_machine_pool_template_has_inconsistent_namespace(part: str) -> None:
    """Upstream: "create fail if machinePool / bootstrap has inconsistent namespace" (and infrastructure)."""
    cc = cluster_class()
    mp(cc)["template"][part]["ref"]["namespace"] = "foo"
    assert errors_of(validate(cc)) == [
        (
            f"spec.workers.machinePools[0].template.{part}.ref.namespace",
            INV,
            "template must be in the same namespace as the ClusterClass (default)",
        )
    ]


@pytest.mark.parametrize("part", ["bootstrap", "infrastructure"])
def test_create_fail_if_bad_template_in_machine_pool(part: str) -> None:
    """Upstream: "create fail if bad template in machinePool Bootstrap" / "... Infrastructure"."""
    cc = cluster_class()
    mp(cc)["template"][part]["ref"]["kind"] = "Generic"
    result = validate(cc)
    assert errors_of(result) == [
        (
            f"spec.workers.machinePools[0].template.{part}.ref.kind",
            INV,
            'template kind must be of form "<name>Template"',
        )
    ]
    assert result.errors[0].value == "Generic"


@pytest.mark.parametrize("part", ["bootstrap", "infrastructure"])
def test_create_fail_with_a_bad_api_version_for_template_in_machine_pool(part: str) -> None:
    """Upstream: "create fail with a bad APIVersion for template in machinePool Bootstrap" / "... Infrastructure"."""
    cc = cluster_class()
    mp(cc)["template"][part]["ref"]["apiVersion"] = "bar/bar/v1"
    assert errors_of(validate(cc)) == [
        (
            f"spec.workers.machinePools[0].template.{part}.ref.apiVersion",
            INV,
            "template apiVersion must be a valid Kubernetes apiVersion: unexpected GroupVersion string: bar/bar/v1",
        )
    ]


def test_error_if_cluster_class_has_multiple_invalid_mp_refs() -> None:
    """Upstream: TestClusterClassReferencesAreValid / "error if clusterClass has multiple invalid mp refs"."""
    cc = cluster_class(machine_pools=[mp_class("a"), mp_class("b")])
    mp(cc, 0)["template"]["infrastructure"]["ref"]["kind"] = "NotAnInfra"
    mp(cc, 1)["template"]["bootstrap"]["ref"]["name"] = ""
    mp(cc, 1)["template"]["infrastructure"]["ref"]["apiVersion"] = ""
    assert fields_of(validate(cc)) == [
        "spec.workers.machinePools[0].template.infrastructure.ref.kind",
        "spec.workers.machinePools[1].template.bootstrap.ref.name",
        "spec.workers.machinePools[1].template.infrastructure.ref.apiVersion",
    ]


@pytest.mark.parametrize(
    ("change", "expected"),
    [
        (lambda t: t.pop("ref"), [("spec.x.ref", R, "template reference must be defined")]),
        (lambda t: t["ref"].update(name=""), [("spec.x.ref.name", R, "template name must be defined")]),
        (lambda t: t["ref"].update(apiVersion=""), [("spec.x.ref.apiVersion", R, "template apiVersion must be defined")]),  # noqa: E501
        (lambda t: t["ref"].update(apiVersion="/"), [("spec.x.ref.apiVersion", R, "template apiVersion must be defined")]),  # noqa: E501
        (lambda t: t["ref"].update(kind="Template"), [("spec.x.ref.kind", INV, 'template kind must be of form "<name>Template"')]),  # noqa: E501
        (lambda t: t["ref"].update(namespace=""), [("spec.x.ref.namespace", INV, "template must be in the same namespace as the ClusterClass (default)")]),  # noqa: E501
        (lambda t: t["ref"].update(name=5), [("spec.x.ref.name", T, "must be a string")]),
        (lambda t: t.update(ref="x"), [("spec.x.ref", T, "must be an object")]),
    ],
)  # fmt: skip
def test_local_object_template_is_valid_fail(change: Any, expected: list[Any]) -> None:
    local = template("GenericInfrastructureClusterTemplate", "x")
    change(local)
    assert errors_of(local_object_template_errors(local, "default", "spec.x")) == expected


def test_local_object_template_is_valid_pass() -> None:
    local = template("GenericInfrastructureClusterTemplate", "x", "v1")  # a core-group apiVersion is valid
    assert local_object_template_errors(local, "default", "spec.x") == []
    local["ref"]["namespace"] = "other"
    assert local_object_template_errors(local, "", "spec.x") == []  # no namespace to compare with


@pytest.mark.parametrize(
    ("path", "field"),
    [
        (("infrastructure",), "spec.infrastructure.ref.name"),
        (("controlPlane",), "spec.controlPlane.ref.name"),
        (("controlPlane", "machineInfrastructure"), "spec.controlPlane.machineInfrastructure.ref.name"),
        (("workers", "machineDeployments", 0, "template", "bootstrap"), "spec.workers.machineDeployments[0].template.bootstrap.ref.name"),  # noqa: E501
        (("workers", "machineDeployments", 0, "template", "infrastructure"), "spec.workers.machineDeployments[0].template.infrastructure.ref.name"),  # noqa: E501
    ],
)  # fmt: skip
def test_every_reference_is_checked(path: tuple[Any, ...], field: str) -> None:
    cc = cluster_class()
    holder: Any = cc["spec"]
    for step in path:
        holder = holder[step]
    holder["ref"]["name"] = ""
    assert fields_of(validate(cc)) == [field]


def test_missing_infrastructure_and_control_plane_are_required() -> None:
    cc = cluster_class()
    del cc["spec"]["infrastructure"], cc["spec"]["controlPlane"]
    assert errors_of(validate(cc)) == [
        ("spec.infrastructure.ref", R, "template reference must be defined"),
        ("spec.controlPlane.ref", R, "template reference must be defined"),
    ]


def test_a_worker_template_of_a_wrong_type_is_one_error() -> None:
    cc = cluster_class()
    mp(cc)["template"] = "nope"
    assert errors_of(validate(cc)) == [("spec.workers.machinePools[0].template", T, "must be an object")]


# --- 3. unique classes --------------------------------------------------------------------------------------


def test_pass_if_machine_pool_classes_are_unique() -> None:
    """Upstream: TestMachinePoolClassesAreUnique / "pass if MachinePoolClasses are unique"."""
    assert validate(cluster_class(machine_pools=[mp_class("a"), mp_class("b")])).errors == []


def test_create_fail_if_duplicated_machine_pool_classes() -> None:
    """Upstream: "create fail if duplicated machinePoolClasses" / "fail if MachinePoolClasses are duplicated"."""
    cc = cluster_class(machine_pools=[mp_class("a"), mp_class("a")])
    assert errors_of(validate(cc)) == [
        (
            "spec.workers.machinePools[1].class",
            INV,
            'MachinePool class must be unique. MachinePool with class "a" is defined more than once',
        )
    ]


def test_fail_if_multiple_machine_pool_classes_are_identical() -> None:
    """Upstream: "fail if multiple MachinePoolClasses are identical"."""
    cc = cluster_class(machine_pools=[mp_class("a"), mp_class("a"), mp_class("b"), mp_class("a")])
    assert fields_of(validate(cc)) == ["spec.workers.machinePools[1].class", "spec.workers.machinePools[3].class"]


def test_duplicated_machine_deployment_classes() -> None:
    cc = cluster_class(machine_deployments=[md_class("a"), md_class("a")])
    assert errors_of(validate(cc)) == [
        (
            "spec.workers.machineDeployments[1].class",
            INV,
            'MachineDeployment class must be unique. MachineDeployment with class "a" is defined more than once',
        )
    ]


def test_md_and_mp_classes_may_share_a_name() -> None:
    assert validate(cluster_class(machine_deployments=[md_class("w")], machine_pools=[mp_class("w")])).errors == []


# --- 4. MachineHealthChecks ---------------------------------------------------------------------------------


def test_control_plane_machine_health_check_with_machine_infrastructure_passes() -> None:
    cc = cluster_class()
    cc["spec"]["controlPlane"]["machineHealthCheck"] = {"maxUnhealthy": "40%", "nodeStartupTimeout": "0s"}
    assert validate(cc).errors == []


def test_control_plane_machine_health_check_needs_machine_infrastructure() -> None:
    cc = cluster_class(machine_infrastructure=False)
    cc["spec"]["controlPlane"]["machineHealthCheck"] = {}
    assert errors_of(validate(cc)) == [
        (
            "spec.controlPlane.machineHealthCheck.machineInfrastructure",
            F,
            "can be set only if spec.controlPlane.machineInfrastructure is set",
        )
    ]


@pytest.mark.parametrize(
    ("mhc", "expected"),
    [
        ({"nodeStartupTimeout": "10s"}, [("nodeStartupTimeout", INV, "must be at least 30s", 10.0)]),
        ({"nodeStartupTimeout": "ten"}, [("nodeStartupTimeout", INV, 'time: invalid duration "ten"', "ten")]),
        ({"maxUnhealthy": "40"}, [("maxUnhealthy", INV, "must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage", "40")]),  # noqa: E501
        ({"maxUnhealthy": "x%"}, [("maxUnhealthy", INV, 'must be either an int or a percentage: invalid value for IntOrString: invalid value "x%": strconv.Atoi: parsing "x": invalid syntax', "x%")]),  # noqa: E501
        ({"remediationTemplate": ref("GenericRemediationTemplate", "r", namespace="other")}, [("remediationTemplate.namespace", INV, "must match metadata.namespace", "other")]),  # noqa: E501
        ({"unhealthyRange": "1-3"}, [("unhealthyRange", INV, "should match '^\\[[0-9]+-[0-9]+\\]$'", "1-3")]),
        ({"unhealthyConditions": [{"type": "Ready", "status": "False"}]}, [("unhealthyConditions[0].timeout", R, "", None)]),  # noqa: E501
    ],
)  # fmt: skip
def test_machine_deployment_machine_health_check_fields(mhc: Obj, expected: list[Any]) -> None:
    cc = cluster_class(machine_deployments=[md_class(machineHealthCheck=mhc)])
    result = validate(cc)
    prefix = "spec.workers.machineDeployments[0].machineHealthCheck."
    assert errors_of(result) == [(prefix + field, kind, detail) for field, kind, detail, _ in expected]
    assert [e.value for e in result.errors if e.type is INV] == [value for *_, value in expected if value is not None]


def test_machine_pool_class_machine_health_check_fields() -> None:
    """clusterclass's extension (upstream's MachinePool classes have no machineHealthCheck): a MachinePool class's
    check is held to a MachineDeployment class's rules, with its own field path."""
    mhc = {"nodeStartupTimeout": "10s", "maxUnhealthy": "40"}
    result = validate(cluster_class(machine_pools=[mp_class(machineHealthCheck=mhc)]))
    prefix = "spec.workers.machinePools[0].machineHealthCheck."
    assert errors_of(result) == [
        (prefix + "nodeStartupTimeout", INV, "must be at least 30s"),
        (prefix + "maxUnhealthy", INV, "must be either an int or a percentage: invalid value for IntOrString: invalid type: string is not a percentage"),  # noqa: E501
    ]  # fmt: skip


def test_valid_machine_deployment_machine_health_check() -> None:
    mhc = {
        "unhealthyConditions": [{"type": "Ready", "status": "Unknown", "timeout": "300s"}],
        "maxUnhealthy": 3,
        "unhealthyRange": "[1-3]",
        "nodeStartupTimeout": "30s",
        "remediationTemplate": ref("GenericRemediationTemplate", "r"),
    }
    assert validate(cluster_class(machine_deployments=[md_class(machineHealthCheck=mhc)])).errors == []


# --- 5. naming strategies --------------------------------------------------------------------------------


def test_should_not_return_error_for_valid_naming_strategy_template() -> None:
    """Upstream: "should not return error for valid namingStrategy.template" (MP and MD and CP)."""
    cc = cluster_class(
        machine_deployments=[
            md_class(namingStrategy={"template": "{{ .cluster.name }}-md-{{ .machineDeployment.topologyName }}"})
        ],
        machine_pools=[
            mp_class(
                namingStrategy={"template": "{{ .cluster.name }}-md-{{ .machinePool.topologyName }}-{{ .random }}"}
            )
        ],
    )
    cc["spec"]["controlPlane"]["namingStrategy"] = {"template": "{{ .cluster.name }}-cp-{{ .random }}"}
    assert validate(cc).errors == []


def test_should_return_error_for_invalid_machine_pool_naming_strategy_template() -> None:
    """Upstream: "should return error for invalid MachinePool namingStrategy.template"."""
    cc = cluster_class(machine_pools=[mp_class(namingStrategy={"template": "template-mp-{{ .cluster.name"})])
    result = validate(cc)
    assert fields_of(result) == ["spec.workers.machinePools[0].namingStrategy.template"]
    assert result.errors[0].type is INV
    assert result.errors[0].value == "template-mp-{{ .cluster.name"
    assert result.errors[0].detail.startswith("invalid MachinePool name template: ")


def test_invalid_machine_pool_naming_strategy_not_rfc_1123() -> None:
    """Upstream: "... when the generated name does not conform to RFC 1123" (a trailing "-")."""
    cc = cluster_class(machine_pools=[mp_class(namingStrategy={"template": "template-mp-{{ .cluster.name }}-"})])
    result = validate(cc)
    assert fields_of(result) == ["spec.workers.machinePools[0].namingStrategy.template"]
    assert result.errors[0].detail.startswith("a lowercase RFC 1123 subdomain must consist of")


def test_naming_strategies_fail_on_missing_keys() -> None:
    # A MachinePool template cannot use the MachineDeployment's key: names render with missing keys as errors.
    cc = cluster_class(machine_pools=[mp_class(namingStrategy={"template": "{{ .machineDeployment.topologyName }}"})])
    assert validate(cc).errors[0].detail.startswith("invalid MachinePool name template: ")


@pytest.mark.parametrize(
    ("where", "noun"),
    [("controlPlane", "ControlPlane"), ("machineDeployments", "MachineDeployment")],
)
def test_control_plane_and_machine_deployment_naming_strategies(where: str, noun: str) -> None:
    cc = cluster_class()
    holder = cc["spec"]["controlPlane"] if where == "controlPlane" else md(cc)
    holder["namingStrategy"] = {"template": "{{ .cluster.name"}
    field = "spec.controlPlane" if where == "controlPlane" else "spec.workers.machineDeployments[0]"
    result = validate(cc)
    assert fields_of(result) == [f"{field}.namingStrategy.template"]
    assert result.errors[0].detail.startswith(f"invalid {noun} name template: ")


def test_too_long_names_are_shortened_before_the_dns_check() -> None:
    cc = cluster_class(machine_pools=[mp_class(namingStrategy={"template": "a" * 100})])
    assert validate(cc).errors == []


# --- 6. variables ------------------------------------------------------------------------------------------


def test_valid_variables_pass() -> None:
    variable = {"name": "cpu", "required": True, "schema": {"openAPIV3Schema": {"type": "integer"}}}
    cc = cluster_class(variables=[variable])
    assert validate(cc).errors == []


def test_invalid_variable_definitions_are_reported() -> None:
    cc = cluster_class(variables=[{"name": "builtin", "required": False, "schema": {"openAPIV3Schema": {"type": "x"}}}])
    assert fields_of(validate(cc))[0] == "spec.variables[0].name"


# --- 7. patches (details in test_patch_validation.py) --------------------------------------------------------


def test_patch_errors_are_part_of_validation() -> None:
    cc = cluster_class(patches=[{"name": "inline", "external": {"generateExtension": "g"}}])
    assert errors_of(validate(cc)) == [
        ("spec.patches[0].name", INV, '"inline" can not be used as the name of a patch'),
    ]


# --- 8. metadata ---------------------------------------------------------------------------------------------


def test_should_return_error_for_invalid_machine_pool_labels_and_annotations() -> None:
    """Upstream: "should return error for invalid machine pool labels and annotations"."""
    cc = cluster_class(
        machine_pools=[
            mp_class(
                template={
                    "metadata": {"labels": {"foo": "$invalid-key", "bar": "x" * 64}, "annotations": {"/invalid": "v"}},
                    "bootstrap": template("GenericBootstrapConfigTemplate", "b", BOOTSTRAP_V1),
                    "infrastructure": template("GenericInfrastructureMachinePoolTemplate", "i"),
                }
            )
        ]
    )
    assert fields_of(validate(cc)) == [
        "spec.workers.machinePools[0].template.metadata.labels",
        "spec.workers.machinePools[0].template.metadata.labels",
        "spec.workers.machinePools[0].template.metadata.annotations",
    ]


def test_valid_metadata_passes() -> None:
    cc = cluster_class()
    metadata = {"labels": {"a.io/b": "c"}, "annotations": {"x": "anything at all"}}
    mp(cc)["template"]["metadata"] = metadata
    md(cc)["template"]["metadata"] = metadata
    cc["spec"]["controlPlane"]["metadata"] = metadata
    assert validate(cc).errors == []


@pytest.mark.parametrize("where", ["controlPlane", "machineDeployments"])
def test_invalid_control_plane_and_machine_deployment_metadata(where: str) -> None:
    cc = cluster_class()
    bad = {"labels": {"bad key": "v"}}
    if where == "controlPlane":
        cc["spec"]["controlPlane"]["metadata"] = bad
        field = "spec.controlPlane.metadata.labels"
    else:
        md(cc)["template"]["metadata"] = bad
        field = "spec.workers.machineDeployments[0].template.metadata.labels"
    assert fields_of(validate(cc)) == [field]


# --- 9. updates ---------------------------------------------------------------------------------------------


def test_update_pass_in_case_of_no_changes() -> None:
    """Upstream: "update pass in case of no changes"."""
    assert validate(cluster_class(), cluster_class()).errors == []


def test_update_pass_if_a_machine_deployment_and_machine_pool_changes_in_a_compatible_way() -> None:
    """Upstream: "update pass if a machine deployment and machine pool changes in a compatible way"."""
    new = cluster_class()
    for worker in (md(new), mp(new)):
        worker["template"]["infrastructure"]["ref"]["name"] = "infra-2"
        worker["template"]["infrastructure"]["ref"]["apiVersion"] = "infrastructure.cluster.x-k8s.io/v1beta2"
        worker["template"]["bootstrap"]["ref"]["kind"] = "OtherBootstrapTemplate"
    assert validate(new, cluster_class()).errors == []


def test_update_fails_a_machine_pool_changes_in_an_incompatible_way() -> None:
    """Upstream: "update fails a machine pool changes in an incompatible way" (infra kind change)."""
    new = cluster_class()
    mp(new)["template"]["infrastructure"]["ref"]["kind"] = "OtherMachinePoolTemplate"
    assert errors_of(validate(new, cluster_class())) == [
        (
            "spec.workers.machinePools[0].ref.kind",
            F,
            'apiVersion.kind cannot be changed from "GenericInfrastructureMachinePoolTemplate" to '
            '"OtherMachinePoolTemplate" to prevent incompatible changes in the Clusters',
        )
    ]


def test_update_pass_if_a_machine_deployment_or_machine_pool_class_gets_added() -> None:
    """Upstream: "update pass if a machine deployment or machine pool class gets added"."""
    new = cluster_class(
        machine_deployments=[md_class("aa"), md_class("bb")], machine_pools=[mp_class(), mp_class("bb")]
    )
    assert validate(new, cluster_class()).errors == []


def test_update_fails_if_a_duplicated_machine_pool_class_gets_added() -> None:
    """Upstream: "update fails if a duplicated machine pool class gets added"."""
    new = cluster_class(machine_pools=[mp_class("aa"), mp_class("aa")])
    assert fields_of(validate(new, cluster_class())) == ["spec.workers.machinePools[1].class"]


def test_pass_if_a_machine_deployment_class_or_machine_pool_class_not_in_use_gets_removed() -> None:
    """Upstream: TestClusterClassValidationWithClusterAwareChecks / "pass if a MachineDeploymentClass or
    MachinePoolClass not in use gets removed"."""
    old = cluster_class(
        machine_deployments=[md_class("aa"), md_class("bb")], machine_pools=[mp_class(), mp_class("bb")]
    )
    user = cluster(
        "c1", machine_deployments=[worker_topology("md1", "aa")], machine_pools=[worker_topology("mp1", "aa")]
    )
    assert validate(cluster_class(), old, clusters=[user]).errors == []


def test_error_if_a_machine_pool_class_in_use_gets_removed() -> None:
    """Upstream: "error if a MachinePoolClass in use gets removed"."""
    old = cluster_class(machine_pools=[mp_class("aa"), mp_class("bb")])
    user = cluster("c1", machine_pools=[worker_topology("mp1", "bb")])
    assert errors_of(validate(cluster_class(), old, clusters=[user])) == [
        ("spec.workers.machinePools", F, 'MachinePoolClass "bb" cannot be deleted because it is used by Cluster "c1"')
    ]


def test_error_if_many_machine_pool_classes_used_in_multiple_clusters_are_removed() -> None:
    """Upstream: "error if many MachinePoolClasses, used in multiple Clusters using the modified ClusterClass, are
    removed" (one error per use)."""
    old = cluster_class(machine_pools=[mp_class("aa"), mp_class("bb"), mp_class("cc")])
    users = [
        cluster("c1", machine_pools=[worker_topology("mp1", "bb"), worker_topology("mp2", "cc")]),
        cluster("c2", machine_pools=[worker_topology("mp1", "bb"), worker_topology("mp2", "aa")]),
        cluster("c3", machine_pools=[worker_topology("mp1", "bb")]),
    ]
    details = [e.detail for e in validate(cluster_class(), old, clusters=users).errors]
    assert details == [
        'MachinePoolClass "bb" cannot be deleted because it is used by Cluster "c1"',
        'MachinePoolClass "cc" cannot be deleted because it is used by Cluster "c1"',
        'MachinePoolClass "bb" cannot be deleted because it is used by Cluster "c2"',
        'MachinePoolClass "bb" cannot be deleted because it is used by Cluster "c3"',
    ]


def test_error_if_a_machine_deployment_class_in_use_gets_removed() -> None:
    old = cluster_class(machine_deployments=[md_class("aa"), md_class("bb")])
    user = cluster("c1", machine_deployments=[worker_topology("md1", "bb")])
    assert errors_of(validate(cluster_class(), old, clusters=[user])) == [
        (
            "spec.workers.machineDeployments",
            F,
            'MachineDeploymentClass "bb" cannot be deleted because it is used by Cluster "c1"',
        )
    ]


def test_removing_an_mp_class_used_only_as_an_md_class_passes() -> None:
    old = cluster_class(
        machine_deployments=[md_class("aa"), md_class("bb")], machine_pools=[mp_class(), mp_class("bb")]
    )
    new = cluster_class(machine_deployments=[md_class("aa"), md_class("bb")])
    user = cluster("c1", machine_deployments=[worker_topology("md1", "bb")])
    assert validate(new, old, clusters=[user]).errors == []


def test_clusters_of_other_classes_and_namespaces_do_not_count() -> None:
    old = cluster_class(machine_pools=[mp_class("aa"), mp_class("bb")])
    others = [
        cluster("c1", "other-class", machine_pools=[worker_topology("mp1", "bb")]),
        cluster("c2", namespace="elsewhere", machine_pools=[worker_topology("mp1", "bb")]),
    ]
    assert validate(cluster_class(), old, clusters=others).errors == []


def test_clusters_that_cannot_be_listed_are_an_internal_error() -> None:
    result = validate_cluster_class(cluster_class(), cluster_class(), reader=FailingReader())
    assert errors_of(result) == [
        ("", ErrorType.INTERNAL, "Clusters using ClusterClass class1 can not be retrieved: connection refused")
    ]


def _relying(name: str, **topology: Any) -> Obj:
    built = cluster(name, machine_deployments=[worker_topology("md1", "aa", **topology)])
    built["spec"]["topology"]["controlPlane"] = {"machineHealthCheck": {"enable": True}}
    return built


def test_dropping_a_machine_health_check_a_cluster_relies_on_is_forbidden() -> None:
    old = cluster_class(machine_deployments=[md_class(machineHealthCheck={"maxUnhealthy": 1})])
    old["spec"]["controlPlane"]["machineHealthCheck"] = {"maxUnhealthy": 1}
    users = [_relying("c1", machineHealthCheck={"enable": True}), _relying("c2", machineHealthCheck={"enable": True})]
    assert errors_of(validate(cluster_class(), old, clusters=users)) == [
        ("spec.controlPlane.machineHealthCheck", F, 'MachineHealthCheck cannot be deleted because it is used by Cluster(s) "c1,c2"'),  # noqa: E501
        ("spec.workers.machineDeployments[0].machineHealthCheck", F, 'MachineHealthCheck cannot be deleted because it is used by Cluster(s) "c1,c2"'),  # noqa: E501
    ]  # fmt: skip


def test_dropping_a_machine_pool_health_check_a_cluster_relies_on_is_forbidden() -> None:
    old = cluster_class(machine_pools=[mp_class(machineHealthCheck={"maxUnhealthy": 1})])
    user = cluster("c1", machine_pools=[worker_topology("mp1", "aa", machineHealthCheck={"enable": True})])
    assert errors_of(validate(cluster_class(), old, clusters=[user])) == [
        ("spec.workers.machinePools[0].machineHealthCheck", F, 'MachineHealthCheck cannot be deleted because it is used by Cluster(s) "c1"'),  # noqa: E501
    ]  # fmt: skip


def test_dropping_a_machine_health_check_no_cluster_relies_on_passes() -> None:
    old = cluster_class(machine_deployments=[md_class(machineHealthCheck={"maxUnhealthy": 1})])
    user = _relying("c1", machineHealthCheck={"enable": True, "maxUnhealthy": 2})  # defines its own
    user["spec"]["topology"]["controlPlane"] = {"machineHealthCheck": {"enable": False}}
    assert validate(cluster_class(), old, clusters=[user]).errors == []


# --- delete -----------------------------------------------------------------------------------------------


def test_delete_of_an_unused_cluster_class_passes() -> None:
    assert validate_cluster_class_delete(cluster_class(), reader=reader(cluster("c1", "other"))).errors == []


def test_delete_of_a_used_cluster_class_is_forbidden() -> None:
    result = validate_cluster_class_delete(cluster_class(), reader=reader(cluster("c1"), cluster("c2")))
    assert errors_of(result) == [("", F, "ClusterClass cannot be deleted because it is used by 2 Cluster(s)")]


def test_delete_when_clusters_cannot_be_listed() -> None:
    result = validate_cluster_class_delete(cluster_class(), reader=FailingReader())
    assert errors_of(result) == [
        ("", ErrorType.INTERNAL, "could not retrieve Clusters using ClusterClass: connection refused")
    ]


# --- structure ----------------------------------------------------------------------------------------------


def test_a_worker_class_without_a_name_is_required() -> None:
    cc = cluster_class()
    del mp(cc)["class"]
    assert errors_of(validate(cc)) == [("spec.workers.machinePools[0].class", R, "")]


@pytest.mark.parametrize(
    ("change", "field"),
    [
        (lambda cc: cc.update(spec=[]), "spec"),
        (lambda cc: cc["spec"].update(workers="x"), "spec.workers"),
        (lambda cc: cc["spec"]["workers"].update(machinePools={}), "spec.workers.machinePools"),
        (lambda cc: cc["spec"]["workers"]["machinePools"].append(7), "spec.workers.machinePools[1]"),
        (lambda cc: mp(cc).update({"class": 3}), "spec.workers.machinePools[0].class"),
        (lambda cc: mp(cc).update(failureDomains="a"), "spec.workers.machinePools[0].failureDomains"),
        (lambda cc: mp(cc).update(failureDomains=["a", 1]), "spec.workers.machinePools[0].failureDomains[1]"),
        (lambda cc: md(cc).update(failureDomain=["a"]), "spec.workers.machineDeployments[0].failureDomain"),
        (lambda cc: mp(cc).update(minReadySeconds="5"), "spec.workers.machinePools[0].minReadySeconds"),
        (lambda cc: mp(cc).update(nodeDrainTimeout="5"), "spec.workers.machinePools[0].nodeDrainTimeout"),
        (lambda cc: cc["spec"]["controlPlane"].update(nodeDeletionTimeout=5), "spec.controlPlane.nodeDeletionTimeout"),
        (lambda cc: md(cc).update(strategy="x"), "spec.workers.machineDeployments[0].strategy"),
        (lambda cc: mp(cc).update(namingStrategy="x"), "spec.workers.machinePools[0].namingStrategy"),
        (lambda cc: mp(cc).update(namingStrategy={"template": 1}), "spec.workers.machinePools[0].namingStrategy.template"),  # noqa: E501
    ],
)  # fmt: skip
def test_wrong_types_are_field_errors(change: Any, field: str) -> None:
    cc = cluster_class()
    change(cc)
    assert fields_of(validate(cc)) == [field]


def test_valid_optional_worker_fields_pass() -> None:
    cc = cluster_class()
    mp(cc).update(failureDomains=["a", "b"], minReadySeconds=5, nodeDrainTimeout="1m", nodeDeletionTimeout="10s")
    md(cc).update(failureDomain="a", strategy={"type": "RollingUpdate"}, nodeVolumeDetachTimeout="5m")
    assert validate(cc).errors == []


def test_a_cluster_class_that_is_not_an_object() -> None:
    result = validate_cluster_class("x", reader=reader())  # type: ignore[arg-type]
    assert errors_of(result) == [("", T, "must be an object")]


def test_defaulting_writes_durations_as_go_formats_them() -> None:
    """Upstream's ClusterClass webhook answers with the typed object: Durations in Go's form."""
    cc = cluster_class()
    cc["spec"]["controlPlane"].update(nodeDrainTimeout="5m", machineHealthCheck={"nodeStartupTimeout": "20m"})
    md(cc).update(nodeVolumeDetachTimeout="120s", machineHealthCheck={"unhealthyConditions": [{"timeout": "1h"}]})
    mp(cc).update(nodeDeletionTimeout="45s")
    defaulted = default_cluster_class(cc)
    assert defaulted["spec"]["controlPlane"]["nodeDrainTimeout"] == "5m0s"
    assert defaulted["spec"]["controlPlane"]["machineHealthCheck"]["nodeStartupTimeout"] == "20m0s"
    assert md(defaulted)["nodeVolumeDetachTimeout"] == "2m0s"
    assert md(defaulted)["machineHealthCheck"]["unhealthyConditions"][0]["timeout"] == "1h0m0s"
    assert mp(defaulted)["nodeDeletionTimeout"] == "45s"
