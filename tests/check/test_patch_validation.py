"""Patch validation (spec §6.3, A26; upstream patch_validation_test.go, §10.13).

Each rule has a passing and a failing case; the MachinePool selector cases of §10.13 keep their
upstream names in the docstrings.
"""

from __future__ import annotations

from typing import Any

import pytest
from cc_support import (
    BOOTSTRAP_V1,
    CONTROLPLANE_V1,
    INFRA_V1,
    cluster_class,
    errors_of,
    fields_of,
    mp_class,
    template,
    validate,
)

from clusterclass.fielderrors import ErrorType
from clusterclass.topology.check import Gates
from clusterclass.topology.check.patches import BUILTIN_VARIABLES, patch_errors

Obj = dict[str, Any]
R, INV, F, T, NS = (
    ErrorType.REQUIRED,
    ErrorType.INVALID,
    ErrorType.FORBIDDEN,
    ErrorType.TYPE_INVALID,
    ErrorType.NOT_SUPPORTED,
)

MP_INFRA = "GenericInfrastructureMachinePoolTemplate"
MD_INFRA = "GenericInfrastructureMachineTemplate"
BOOTSTRAP = "GenericBootstrapConfigTemplate"
SELECTOR_PATH = "spec.patches[0].definitions[0].selector"
JSON_PATCH_PATH = "spec.patches[0].definitions[0].jsonPatches[0]"


def selector(api_version: str = INFRA_V1, kind: str = MP_INFRA, **match: Any) -> Obj:
    return {"apiVersion": api_version, "kind": kind, "matchResources": match}


def add(path: str = "/spec/template/spec/x", **fields: Any) -> Obj:
    return {"op": "add", "path": path, **(fields or {"value": "v"})}


def inline(name: str = "patch1", sel: Obj | None = None, *json_patches: Obj, **fields: Any) -> Obj:
    sel = sel if sel is not None else selector(machinePoolClass={"names": ["aa"]})
    return {"name": name, "definitions": [{"selector": sel, "jsonPatches": list(json_patches or [add()])}], **fields}


def cc_with(*patches: Obj, **kwargs: Any) -> Obj:
    return cluster_class(patches=list(patches), **kwargs)


def check(*patches: Obj, gates: Gates | None = None, **kwargs: Any) -> list[tuple[str, ErrorType, str]]:
    return errors_of(patch_errors(cc_with(*patches, **kwargs), gates=gates or Gates()))


def test_valid_patches_pass_the_whole_webhook() -> None:
    assert validate(cc_with(inline(), inline("patch2"))).errors == []


def test_no_patches() -> None:
    assert patch_errors(cluster_class()) == []
    assert patch_errors(cluster_class(patches=[])) == []


# --- names ------------------------------------------------------------------------------------------------


def test_patch_name_must_be_defined() -> None:
    assert check(inline("")) == [("spec.patches[0].name", R, "patch name must be defined")]
    patch = inline()
    del patch["name"]
    assert check(patch) == [("spec.patches[0].name", R, "patch name must be defined")]


def test_patch_name_inline_is_reserved() -> None:
    assert check(inline("inline")) == [("spec.patches[0].name", INV, '"inline" can not be used as the name of a patch')]


def test_patch_names_must_be_unique() -> None:
    assert check(inline("a"), inline("b"), inline("a")) == [
        ("spec.patches[2].name", INV, 'patch names must be unique. Patch with name "a" is defined more than once')
    ]


# --- enabledIf ---------------------------------------------------------------------------------------------


def test_enabled_if_that_parses_passes() -> None:
    enabled_if = '{{ if eq .builtin.machinePool.class "aa" }}true{{ end }}{{ semverCompare ">=1.2" "1.3" }}'
    assert check(inline(enabledIf=enabled_if)) == []


def test_enabled_if_must_parse() -> None:
    errors = patch_errors(cc_with(inline(enabledIf="{{ .variableB }")))
    assert fields_of(errors) == ["spec.patches[0].enabledIf"]
    assert errors[0].detail.startswith("template can not be parsed: ")
    assert errors[0].value == "{{ .variableB }"


def test_enabled_if_unknown_function() -> None:
    errors = patch_errors(cc_with(inline(enabledIf="{{ notAFunction 1 }}")))
    assert "notAFunction" in errors[0].detail


@pytest.mark.parametrize("function", ["randInt 1 5", "now", "uuidv4", 'env "HOME"', 'shuffle "abc"'])
def test_templates_using_non_deterministic_functions_are_refused(function: str) -> None:
    # Deliberate difference: upstream's hermetic Sprig map still has randInt, shuffle, genCA, ...; our
    # engine leaves every non-deterministic function out, so such a template could never render. It is
    # refused at admission instead of failing every reconcile.
    template_ = "{{ " + function + " }}"
    errors = patch_errors(cc_with(inline("p", None, add(valueFrom={"template": template_}), enabledIf=template_)))
    assert fields_of(errors) == ["spec.patches[0].enabledIf", f"{JSON_PATCH_PATH}.valueFrom.template"]
    assert all(e.detail.startswith("template can not be parsed: ") for e in errors)


# --- definitions or external -------------------------------------------------------------------------------


def test_one_of_definitions_or_external_must_be_defined() -> None:
    assert check({"name": "p"}) == [("spec.patches[0]", R, "one of definitions or external must be defined")]


def test_only_one_of_definitions_or_external_can_be_defined() -> None:
    assert check(inline(external={"generateExtension": "g"})) == [
        ("spec.patches[0]", INV, "only one of definitions or external can be defined")
    ]


def test_external_generate_patch_passes() -> None:
    assert check({"name": "p", "external": {"generateExtension": "g", "discoverVariablesExtension": "d"}}) == []


def test_external_patch_with_only_a_validate_extension_is_valid() -> None:
    # DECISIONS.md: a validate-only external patch is valid (upstream's webhook accepts it too).
    assert check({"name": "p", "external": {"validateExtension": "v"}}) == []


def test_external_patch_needs_an_extension() -> None:
    assert check({"name": "p", "external": {"discoverVariablesExtension": "d"}}) == [
        ("spec.patches[0].external", INV, "one of validateExtension and generateExtension must be defined")
    ]


def test_external_patch_needs_the_runtime_sdk_gate() -> None:
    assert check({"name": "p", "external": {"generateExtension": "g"}}, gates=Gates(runtime_sdk=False)) == [
        ("spec.patches[0].external", F, "patch.external can be used only if the RuntimeSDK feature flag is enabled")
    ]


# --- JSON patches -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("op", ["add", "replace", "remove"])
def test_supported_ops(op: str) -> None:
    json_patch = {"op": op, "path": "/spec/template/spec/x"} | ({} if op == "remove" else {"value": 1})
    assert check(inline("p", None, json_patch)) == []


def test_unsupported_op() -> None:
    json_patch = {"op": "drop", "path": "/spec/x", "value": 1}
    errors = patch_errors(cc_with(inline("p", None, json_patch)))
    assert errors_of(errors) == [(f"{JSON_PATCH_PATH}.op", NS, 'supported values: "add", "remove", "replace"')]
    assert errors[0].value == json_patch


def test_path_must_start_with_spec() -> None:
    assert check(inline("p", None, add("/metadata/labels"))) == [
        (f"{JSON_PATCH_PATH}.path", INV, 'jsonPatch path must start with "/spec/"')
    ]
    assert check(inline("p", None, add("/spec"))) == [
        (f"{JSON_PATCH_PATH}.path", INV, 'jsonPatch path must start with "/spec/"')
    ]


@pytest.mark.parametrize("path", ["/spec/list/0", "/spec/list/-", "/spec/list/0/x", "/spec/a-1/b"])
def test_add_may_prepend_or_append(path: str) -> None:
    assert check(inline("p", None, add(path))) == []


@pytest.mark.parametrize("path", ["/spec/list/1", "/spec/list/-1", "/spec/list/007"])
def test_add_may_not_address_other_indices(path: str) -> None:
    assert check(inline("p", None, add(path))) == [
        (f"{JSON_PATCH_PATH}.path", INV, 'arrays can only be accessed using "0" (prepend) or "-" (append)')
    ]


@pytest.mark.parametrize("op", ["replace", "remove"])
def test_replace_and_remove_may_not_address_array_elements(op: str) -> None:
    json_patch = {"op": op, "path": "/spec/list/0/x/3", "value": 1}
    assert check(inline("p", None, json_patch)) == [
        (f"{JSON_PATCH_PATH}.path", INV, f"elements in arrays can not be accessed in a {op} operation"),
        (f"{JSON_PATCH_PATH}.path", INV, f"elements in arrays can not be accessed in a {op} operation"),
    ]


def test_replace_without_indices_passes() -> None:
    assert check(inline("p", None, {"op": "replace", "path": "/spec/list/-", "value": 1})) == []


def test_remove_needs_no_value() -> None:
    assert check(inline("p", None, {"op": "remove", "path": "/spec/x"})) == []


@pytest.mark.parametrize("op", ["add", "replace"])
def test_add_and_replace_need_a_value_or_value_from(op: str) -> None:
    json_patch = {"op": op, "path": "/spec/x"}
    assert check(inline("p", None, json_patch)) == [
        (JSON_PATCH_PATH, INV, "jsonPatch must define one of value or valueFrom")
    ]
    json_patch["value"] = None  # a null value is no value
    assert check(inline("p", None, json_patch)) == [
        (JSON_PATCH_PATH, INV, "jsonPatch must define one of value or valueFrom")
    ]


def test_value_and_value_from_exclude_each_other() -> None:
    json_patch = add(value=1, valueFrom={"variable": "builtin.cluster.name"})
    assert check(inline("p", None, json_patch)) == [
        (JSON_PATCH_PATH, INV, "jsonPatch can not define both value and valueFrom")
    ]


@pytest.mark.parametrize("value", [{"a": [1, 2.5, None, True]}, "s", 0, False, []])
def test_json_values_pass(value: Any) -> None:
    assert check(inline("p", None, add(value=value))) == []


@pytest.mark.parametrize("value", [float("nan"), {"a": float("inf")}, {1: "x"}, {"a": {1, 2}}, b"x"])
def test_value_must_be_valid_json(value: Any) -> None:
    assert check(inline("p", None, add(value=value))) == [
        (f"{JSON_PATCH_PATH}.value", INV, "jsonPatch Value is invalid JSON")
    ]


def test_value_from_needs_template_or_variable() -> None:
    assert check(inline("p", None, add(valueFrom={}))) == [
        (f"{JSON_PATCH_PATH}.valueFrom", INV, "valueFrom must set either template or variable")
    ]


def test_value_from_template_and_variable_exclude_each_other() -> None:
    assert check(inline("p", None, add(valueFrom={"template": "x", "variable": "builtin"}))) == [
        (f"{JSON_PATCH_PATH}.valueFrom", INV, "valueFrom can not set both template and variable"),
        (f"{JSON_PATCH_PATH}.valueFrom.variable", INV, "variable with name builtin cannot be found"),
    ]


def test_value_from_template_that_parses() -> None:
    template_ = '{{ index .mpConfig .builtin.machinePool.class | replace "+" "_" }}'
    assert check(inline("p", None, add(valueFrom={"template": template_}))) == []


def test_value_from_template_must_parse() -> None:
    errors = patch_errors(cc_with(inline("p", None, add(valueFrom={"template": "{{ .a "}))))
    assert fields_of(errors) == [f"{JSON_PATCH_PATH}.valueFrom.template"]
    assert errors[0].detail.startswith("template can not be parsed: ")


@pytest.mark.parametrize("variable", sorted(BUILTIN_VARIABLES - {"builtin"}))
def test_every_builtin_variable_is_accepted(variable: str) -> None:
    assert check(inline("p", None, add(valueFrom={"variable": variable}))) == []


def test_builtin_machine_pool_variables_are_in_the_list() -> None:
    assert {v for v in BUILTIN_VARIABLES if v.startswith("builtin.machinePool")} == {
        "builtin.machinePool",
        "builtin.machinePool.class",
        "builtin.machinePool.name",
        "builtin.machinePool.replicas",
        "builtin.machinePool.topologyName",
        "builtin.machinePool.version",
        "builtin.machinePool.bootstrap.configRef.name",
        "builtin.machinePool.infrastructureRef.name",
    }
    assert len(BUILTIN_VARIABLES) == 33


@pytest.mark.parametrize(
    "variable", ["builtin.machinePool.metadata.labels", "builtin.cluster.uid", "builtin.machinePool.foo"]
)
def test_unknown_builtin_variables_are_refused(variable: str) -> None:
    assert check(inline("p", None, add(valueFrom={"variable": variable}))) == [
        (f"{JSON_PATCH_PATH}.valueFrom.variable", INV, "not a defined builtin variable")
    ]


VARIABLES = [{"name": "myObj", "required": False, "schema": {"openAPIV3Schema": {"type": "object"}}}]


@pytest.mark.parametrize("variable", ["myObj", "myObj.list[0].field", "myObj[2]", ".myObj"])
def test_inline_variables_are_accepted_by_their_top_level_name(variable: str) -> None:
    assert check(inline("p", None, add(valueFrom={"variable": variable})), variables=VARIABLES) == []


@pytest.mark.parametrize("variable", ["other", "other.myObj", "", "..", "builtin"])
def test_unknown_variables_are_refused(variable: str) -> None:
    assert check(inline("p", None, add(valueFrom={"variable": variable})), variables=VARIABLES) == [
        (f"{JSON_PATCH_PATH}.valueFrom.variable", INV, f"variable with name {variable} cannot be found")
    ]


def test_discovered_variables_are_not_known_to_the_webhook() -> None:
    cc = cc_with(inline("p", None, add(valueFrom={"variable": "discovered"})))
    cc["status"] = {"variables": [{"name": "discovered", "definitions": [{"from": "ext", "required": False}]}]}
    assert fields_of(patch_errors(cc)) == [f"{JSON_PATCH_PATH}.valueFrom.variable"]


# --- selectors ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "match",
    [
        {},
        {"infrastructureCluster": False, "controlPlane": False},
        {"machineDeploymentClass": {}, "machinePoolClass": {}},
        {"machineDeploymentClass": {"names": []}, "machinePoolClass": {"names": []}},
    ],
)
def test_error_if_selectors_are_all_set_to_false_or_empty(match: Obj) -> None:
    """Upstream: "error if selectors are all set to false or empty" (incl. an empty machinePoolClass)."""
    sel = selector(**match)
    errors = patch_errors(cc_with(inline("p", sel)))
    assert errors_of(errors) == [(SELECTOR_PATH, INV, "no selector enabled")]
    assert errors[0].value == sel


def test_error_if_selector_targets_an_empty_machine_pool_class_infrastructure_template() -> None:
    """Upstream: "error if selector targets an empty MachinePoolClass InfrastructureTemplate"."""
    sel = {"apiVersion": INFRA_V1, "kind": MP_INFRA, "matchResources": {"machinePoolClass": {"names": []}}}
    assert check(inline("p", sel)) == [(SELECTOR_PATH, INV, "no selector enabled")]
    del sel["matchResources"]
    assert check(inline("p", sel)) == [(SELECTOR_PATH, INV, "no selector enabled")]


def test_pass_if_selector_targets_an_existing_md_class_and_mp_class_bootstrap_template() -> None:
    """Upstream: "pass if selector targets an existing MachineDeploymentClass and MachinePoolClass
    BootstrapTemplate"."""
    sel = selector(
        BOOTSTRAP_V1, BOOTSTRAP, machineDeploymentClass={"names": ["aa"]}, machinePoolClass={"names": ["aa"]}
    )
    assert check(inline("p", sel)) == []


def test_pass_if_selector_targets_an_existing_machine_pool_class_infrastructure_template() -> None:
    """Upstream: "pass if selector targets an existing MachinePoolClass InfrastructureTemplate"."""
    assert check(inline("p", selector(machinePoolClass={"names": ["aa"]}))) == []


def test_error_if_selector_targets_a_non_existing_machine_pool_class_infrastructure_template() -> None:
    """Upstream: "error if selector targets a non-existing MachinePoolClass InfrastructureTemplate" (class bb
    uses a different kind)."""
    pools = [mp_class("aa"), mp_class("bb", infrastructure=template("OtherMachinePoolTemplate", "other"))]
    assert check(inline("p", selector(machinePoolClass={"names": ["bb"]})), machine_pools=pools) == [
        (
            f"{SELECTOR_PATH}.matchResources.machinePoolClass.names[0]",
            INV,
            "selector is enabled but matches neither the bootstrap ref nor the infrastructure ref of a MachinePool "
            "class",
        )
    ]


def test_machine_pool_selector_does_not_match_machine_deployment_templates() -> None:
    sel = selector(INFRA_V1, MD_INFRA, machinePoolClass={"names": ["aa"]})  # the MD class aa's infra kind
    assert fields_of(patch_errors(cc_with(inline("p", sel)))) == [
        f"{SELECTOR_PATH}.matchResources.machinePoolClass.names[0]"
    ]


def test_selector_apiversion_must_match_exactly() -> None:
    sel = selector("infrastructure.cluster.x-k8s.io/v1beta2", machinePoolClass={"names": ["aa"]})
    assert fields_of(patch_errors(cc_with(inline("p", sel)))) == [
        f"{SELECTOR_PATH}.matchResources.machinePoolClass.names[0]"
    ]


@pytest.mark.parametrize(
    ("pattern", "detail"),
    [
        ("a*a", '"*" rune can only appear at the beginning, or ending of the selector'),
        ("*a*", 'selector can at most contain a single "*" rune'),
        ("*a b", "selector does not comply with the Kubernetes naming standards"),
        ("-*", "selector does not comply with the Kubernetes naming standards"),
    ],
)
def test_error_if_selector_targets_a_bad_pattern_for_matching_machine_pool_class(pattern: str, detail: str) -> None:
    """Upstream: "error if selector targets a bad pattern for matching MachinePoolClass InfrastructureTemplate"."""
    sel = selector(machinePoolClass={"names": [pattern, "does-not-exist"]})
    errors = patch_errors(cc_with(inline("p", sel)))
    # A bad pattern ends the check of the list: "does-not-exist" is not reported.
    assert errors_of(errors) == [(f"{SELECTOR_PATH}.matchResources.machinePoolClass.names[0]", INV, detail)]
    assert errors[0].value == pattern


@pytest.mark.parametrize("pattern", ["a*", "*-worker", "*"])
def test_pass_if_selector_targets_existing_machine_pool_classes_with_patterns(pattern: str) -> None:
    """Upstream: "pass if selector targets an existing MachinePoolClass InfrastructureTemplate with prefix *" /
    "... with suffix *" / "pass if selector targets all existing MachinePoolClass InfrastructureTemplate with *"."""
    pools = [mp_class("aa-worker"), mp_class("bb-worker")]
    assert check(inline("p", selector(machinePoolClass={"names": [pattern]})), machine_pools=pools) == []


def test_patterns_that_match_no_class() -> None:
    pools = [mp_class("aa-worker")]
    assert fields_of(patch_errors(cc_with(inline("p", selector(machinePoolClass={"names": ["b*"]})), machine_pools=pools))) == [  # noqa: E501
        f"{SELECTOR_PATH}.matchResources.machinePoolClass.names[0]"
    ]  # fmt: skip


def test_an_empty_name_matches_no_class() -> None:
    # Deliberate difference: upstream's webhook would match "" against a class without a name; the
    # patch engine never matches an empty name, and the webhook agrees with the engine.
    pools = [mp_class("aa"), mp_class("")]
    sel = selector(machinePoolClass={"names": [""]})
    assert fields_of(patch_errors(cc_with(inline("p", sel), machine_pools=pools))) == [
        f"{SELECTOR_PATH}.matchResources.machinePoolClass.names[0]"
    ]


def test_each_name_is_checked() -> None:
    sel = selector(machinePoolClass={"names": ["aa", "zz", "aa", "yy"]})
    assert fields_of(patch_errors(cc_with(inline("p", sel)))) == [
        f"{SELECTOR_PATH}.matchResources.machinePoolClass.names[1]",
        f"{SELECTOR_PATH}.matchResources.machinePoolClass.names[3]",
    ]


def test_machine_deployment_class_selector() -> None:
    assert check(inline("p", selector(INFRA_V1, MD_INFRA, machineDeploymentClass={"names": ["a*"]}))) == []
    assert check(inline("p", selector(INFRA_V1, MD_INFRA, machineDeploymentClass={"names": ["b"]}))) == [
        (
            f"{SELECTOR_PATH}.matchResources.machineDeploymentClass.names[0]",
            INV,
            "selector is enabled but matches neither the bootstrap ref nor the infrastructure ref of a "
            "MachineDeployment class",
        )
    ]


def test_infrastructure_cluster_selector() -> None:
    good = selector(INFRA_V1, "GenericInfrastructureClusterTemplate", infrastructureCluster=True)
    assert check(inline("p", good)) == []
    assert check(inline("p", selector(infrastructureCluster=True))) == [
        (
            f"{SELECTOR_PATH}.matchResources.infrastructureCluster",
            INV,
            "selector is enabled but does not match the infrastructure ref",
        )
    ]


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [(CONTROLPLANE_V1, "GenericControlPlaneTemplate"), (INFRA_V1, "GenericInfrastructureMachineTemplate")],
)
def test_control_plane_selector_matches_the_template_or_its_machine_infrastructure(api_version: str, kind: str) -> None:
    assert check(inline("p", selector(api_version, kind, controlPlane=True))) == []


def test_control_plane_selector_that_matches_nothing() -> None:
    sel = selector(INFRA_V1, "GenericInfrastructureMachineTemplate", controlPlane=True)
    assert check(inline("p", sel), machine_infrastructure=False) == [
        (
            f"{SELECTOR_PATH}.matchResources.controlPlane",
            INV,
            "selector is enabled but matches neither the controlPlane ref nor the controlPlane "
            "machineInfrastructure ref",
        )
    ]


def test_every_enabled_part_must_match() -> None:
    # Upstream (since v1.5) reports each enabled part that matches nothing, not only "no match at all".
    sel = selector(INFRA_V1, MP_INFRA, infrastructureCluster=True, machinePoolClass={"names": ["aa"]})
    assert fields_of(patch_errors(cc_with(inline("p", sel)))) == [
        f"{SELECTOR_PATH}.matchResources.infrastructureCluster"
    ]


# --- malformed patches ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("patches", "expected"),
    [
        ("x", [("spec.patches", T, "must be a list")]),
        (["x"], [("spec.patches[0]", T, "must be an object")]),
        ([{"name": 1, "external": {"generateExtension": "g"}}], [("spec.patches[0].name", T, "must be a string")]),
        ([{"name": "p", "external": "g"}], [("spec.patches[0].external", T, "must be an object")]),
        ([{"name": "p", "definitions": {}}], [("spec.patches[0].definitions", T, "must be a list")]),
        ([{"name": "p", "definitions": [1]}], [("spec.patches[0].definitions[0]", T, "must be an object")]),
        ([{"name": "p", "enabledIf": True, "external": {"generateExtension": "g"}}], [("spec.patches[0].enabledIf", T, "must be a string")]),  # noqa: E501
        ([{"name": "p", "external": {"generateExtension": 1}}], [("spec.patches[0].external.generateExtension", T, "must be a string")]),  # noqa: E501
        ([{"name": "p", "external": {"generateExtension": "g", "settings": {"a": 1}}}], [("spec.patches[0].external.settings[a]", T, "must be a string")]),  # noqa: E501
    ],
)  # fmt: skip
def test_wrong_types_are_field_errors(patches: Any, expected: list[Any]) -> None:
    assert errors_of(patch_errors(cluster_class(patches=patches))) == expected


def test_wrong_types_inside_definitions() -> None:
    json_patches = [5, {"op": 1, "path": 2}, {"op": "add", "path": "/spec/x", "valueFrom": "v"}]
    sel = {"apiVersion": 1, "kind": MP_INFRA, "matchResources": {"machinePoolClass": {"names": ["aa", 3]}}}
    cc = cc_with({"name": "p", "definitions": [{"selector": sel, "jsonPatches": json_patches}]})
    base = "spec.patches[0].definitions[0]"
    assert errors_of(patch_errors(cc)) == [
        (f"{base}.jsonPatches[0]", T, "must be an object"),
        (f"{base}.jsonPatches[1].op", T, "must be a string"),
        (f"{base}.jsonPatches[1].path", T, "must be a string"),
        (f"{base}.jsonPatches[2].valueFrom", T, "must be an object"),
        (f"{base}.selector.apiVersion", T, "must be a string"),
        (f"{base}.selector.matchResources.machinePoolClass.names[0]", INV, "selector is enabled but matches neither the bootstrap ref nor the infrastructure ref of a MachinePool class"),  # noqa: E501
        (f"{base}.selector.matchResources.machinePoolClass.names[1]", T, "must be a string"),
    ]  # fmt: skip
