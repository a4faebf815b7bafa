"""MachinePool admission (spec §1.4, §6.5): defaulting, the autoscaler-aware replica rule, validation."""

from __future__ import annotations

import copy
from typing import Any

import pytest
from check_support import b, errors, fields, rendered

from clusterclass.topology.check import Gates
from clusterclass.topology.check.machinepool import (
    ReplicasAnnotationError,
    default_machine_deployment_replicas,
    default_machine_pool,
    default_machine_pool_replicas,
    default_replicas,
    validate_machine_pool,
)

MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"


def mp(
    *,
    replicas: int | None = None,
    annotations: dict[str, str] | None = None,
    version: str | None = "v1.28.0",
    config_ref: bool = True,
    namespace: str | None = None,
) -> dict[str, Any]:
    built = b.machine_pool(
        "mp",
        "pool",
        bootstrap={"apiVersion": b.BOOTSTRAP_V1, "kind": "KubeadmConfig", "name": "cfg"} if config_ref else None,
        infrastructure={"apiVersion": b.INFRA_V1, "kind": "DockerMachinePool", "name": "infra"},
        version=version,
        replicas=replicas,
    )
    if annotations:
        built["metadata"]["annotations"] = dict(annotations)
    if namespace is not None:
        built["spec"]["template"]["spec"]["bootstrap"].get("configRef", {})["namespace"] = namespace
        built["spec"]["template"]["spec"]["infrastructureRef"]["namespace"] = namespace
    return built


def admit(obj: dict[str, Any], old: dict[str, Any] | None = None, **kwargs: Any) -> Any:
    return validate_machine_pool(default_machine_pool(obj, old), old, **kwargs)


# --- defaulting -----------------------------------------------------------------------------------------


def test_defaulting_sets_label_min_ready_seconds_namespaces_and_version_prefix() -> None:
    obj = mp(version="1.28.0")
    for ref in (
        obj["spec"]["template"]["spec"]["bootstrap"]["configRef"],
        obj["spec"]["template"]["spec"]["infrastructureRef"],
    ):
        ref.pop("namespace", None)
    defaulted = default_machine_pool(obj)
    assert defaulted["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "cluster1"
    assert defaulted["spec"]["minReadySeconds"] == 0
    assert defaulted["spec"]["replicas"] == 1
    machine = defaulted["spec"]["template"]["spec"]
    assert machine["bootstrap"]["configRef"]["namespace"] == "default"
    assert machine["infrastructureRef"]["namespace"] == "default"
    assert machine["version"] == "v1.28.0"


def test_defaulting_keeps_what_is_set() -> None:
    obj = mp(replicas=4, namespace="elsewhere")
    obj["spec"]["minReadySeconds"] = 9
    defaulted = default_machine_pool(obj)
    assert defaulted["spec"]["replicas"] == 4
    assert defaulted["spec"]["minReadySeconds"] == 9
    assert defaulted["spec"]["template"]["spec"]["infrastructureRef"]["namespace"] == "elsewhere"


def test_on_a_v1beta2_management_cluster_the_defaults_are_upstream_v1_14s() -> None:
    """v1.14's webhook sets a 10s node deletion timeout and no longer a zero minReadySeconds (v1.6's does)."""
    defaulted = default_machine_pool(mp(), v1beta2_server=True)
    assert defaulted["spec"]["template"]["spec"]["nodeDeletionTimeout"] == "10s"
    assert "minReadySeconds" not in defaulted["spec"]
    assert "nodeDeletionTimeout" not in default_machine_pool(mp())["spec"]["template"]["spec"]
    kept = mp()
    kept["spec"]["template"]["spec"]["nodeDeletionTimeout"] = "1m"
    assert default_machine_pool(kept, v1beta2_server=True)["spec"]["template"]["spec"]["nodeDeletionTimeout"] == "1m0s"


def test_defaulting_does_not_mutate_its_input() -> None:
    obj = mp(version="1.28.0")
    before = copy.deepcopy(obj)
    default_machine_pool(obj)
    assert obj == before


def test_the_cluster_name_label_follows_spec_cluster_name() -> None:
    obj = mp()
    obj["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = "stale"
    assert default_machine_pool(obj)["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] == "cluster1"


# --- replicas: the autoscaler-aware rule (v1.8+ for MachinePools, v1.6 for MachineDeployments) ---------------


def test_replicas_default_to_one_without_autoscaler_annotations() -> None:
    assert default_machine_pool(mp())["spec"]["replicas"] == 1


def test_replicas_default_to_one_with_only_one_autoscaler_annotation() -> None:
    assert default_machine_pool(mp(annotations={MIN: "3"}))["spec"]["replicas"] == 1


def test_replicas_default_to_the_minimum_on_create() -> None:
    assert default_machine_pool(mp(annotations={MIN: "3", MAX: "7"}))["spec"]["replicas"] == 3


@pytest.mark.parametrize(("old_replicas", "expected"), [(None, 3), (1, 3), (5, 5), (9, 7), (3, 3), (7, 7)])
def test_replicas_on_update_are_the_old_replicas_clamped_into_min_max(old_replicas: int | None, expected: int) -> None:
    old = mp(replicas=old_replicas, annotations={MIN: "3", MAX: "7"})
    new = mp(annotations={MIN: "3", MAX: "7"})
    assert default_machine_pool(new, old)["spec"]["replicas"] == expected


def test_replicas_set_on_the_object_win_over_the_annotations() -> None:
    assert default_machine_pool(mp(replicas=10, annotations={MIN: "3", MAX: "7"}))["spec"]["replicas"] == 10


def test_unparsable_autoscaler_annotation_leaves_replicas_unset_and_fails_validation() -> None:
    obj = mp(annotations={MIN: "three", MAX: "7"})
    defaulted = default_machine_pool(obj)
    assert "replicas" not in defaulted["spec"]
    assert errors(validate_machine_pool(defaulted)) == [
        (
            f"metadata.annotations.{MIN}",
            "Invalid value",
            f'failed to calculate MachinePool replicas value: could not parse the value of the "{MIN}" annotation: '
            'strconv.ParseInt: parsing "three": invalid syntax',
        )
    ]


def test_autoscaler_annotation_out_of_int32_range_is_unparsable() -> None:
    with pytest.raises(ReplicasAnnotationError) as raised:
        default_replicas({MIN: "1", MAX: "2147483648"}, None, create=True, noun="MachinePool")
    assert raised.value.error.field == f"metadata.annotations.{MAX}"
    assert raised.value.error.detail.endswith('strconv.ParseInt: parsing "2147483648": value out of range')


def test_machine_deployments_share_the_rule() -> None:
    md = b.machine_deployment("md", "md", bootstrap=None, infrastructure=None)
    md["metadata"]["annotations"] = {MIN: "2", MAX: "4"}
    assert default_machine_deployment_replicas(md) == 2
    old = copy.deepcopy(md)
    old["spec"]["replicas"] = 10
    assert default_machine_deployment_replicas(md, old) == 4
    md["spec"]["replicas"] = 6
    assert default_machine_deployment_replicas(md, old) == 6
    assert default_machine_pool_replicas(mp()) == 1


def test_machine_deployment_replica_annotation_errors_name_the_kind() -> None:
    md = b.machine_deployment("md", "md", bootstrap=None, infrastructure=None)
    md["metadata"]["annotations"] = {MIN: "2", MAX: "x"}
    with pytest.raises(ReplicasAnnotationError, match="failed to calculate MachineDeployment replicas value"):
        default_machine_deployment_replicas(md)


# --- validation -------------------------------------------------------------------------------------------


def test_a_defaulted_machine_pool_passes() -> None:
    assert admit(mp()).errors == []


def test_everything_is_forbidden_with_the_machine_pool_gate_off() -> None:
    assert errors(admit(mp(), gates=Gates(machine_pool=False))) == [
        ("spec", "Forbidden", "can be set only if the MachinePool feature flag is enabled")
    ]


def test_a_data_secret_name_is_enough_without_a_config_ref() -> None:
    obj = mp(config_ref=False)
    obj["spec"]["template"]["spec"]["bootstrap"]["dataSecretName"] = "secret"
    assert admit(obj).errors == []


def test_bootstrap_config_ref_or_data_secret_name_is_required() -> None:
    assert errors(admit(mp(config_ref=False))) == [
        (
            "spec.template.spec.bootstrap.data",
            "Required value",
            "expected either spec.bootstrap.dataSecretName or spec.bootstrap.configRef to be populated",
        )
    ]


def test_refs_in_another_namespace_fail() -> None:
    assert rendered(admit(mp(namespace="other"))) == [
        'spec.template.spec.bootstrap.configRef.namespace: Invalid value: "other": must match metadata.namespace',
        'spec.template.spec.infrastructureRef.namespace: Invalid value: "other": must match metadata.namespace',
    ]


def test_missing_infrastructure_ref_fails() -> None:
    obj = mp()
    del obj["spec"]["template"]["spec"]["infrastructureRef"]
    assert rendered(admit(obj)) == ["spec.template.spec.infrastructureRef: Required value"]


def test_unchanged_cluster_name_passes_on_update() -> None:
    old = default_machine_pool(mp())
    assert admit(mp(), old).errors == []


def test_cluster_name_is_immutable() -> None:
    old = default_machine_pool(mp())
    new = mp()
    new["spec"]["clusterName"] = "cluster2"
    new["spec"]["template"]["spec"]["clusterName"] = "cluster2"
    assert errors(admit(new, old)) == [("spec.clusterName", "Forbidden", "field is immutable")]


def test_cluster_name_is_required() -> None:
    obj = mp()
    del obj["spec"]["clusterName"]
    assert rendered(admit(obj)) == ["spec.clusterName: Required value"]


@pytest.mark.parametrize("version", ["v1.28.0", "1.28.0", "v1.28.0-rc.1+build", None])
def test_kube_semver_versions_pass(version: str | None) -> None:
    assert admit(mp(version=version)).errors == []


@pytest.mark.parametrize("version", ["v1.28", "latest", "v1.28.0 "])
def test_other_versions_fail(version: str) -> None:
    prefixed = version if version.startswith("v") else "v" + version
    assert rendered(admit(mp(version=version))) == [
        f'spec.template.spec.version: Invalid value: "{prefixed}": must be a valid semantic version'
    ]


def test_valid_template_metadata_passes() -> None:
    obj = mp()
    obj["spec"]["template"]["metadata"] = {"labels": {"a": "b"}, "annotations": {"example.com/x": "y"}}
    assert admit(obj).errors == []


def test_invalid_template_metadata_fails() -> None:
    obj = mp()
    obj["spec"]["template"]["metadata"] = {"labels": {"a": "not valid"}}
    assert fields(admit(obj)) == ["spec.template.metadata.labels"]


def test_zero_replicas_pass() -> None:
    assert admit(mp(replicas=0)).errors == []


def test_negative_machine_pool_object_replicas_are_rejected_unlike_upstream() -> None:
    assert rendered(admit(mp(replicas=-1))) == ["spec.replicas: Invalid value: -1: must be greater than or equal to 0"]


def test_negative_autoscaler_minimum_gives_negative_replicas_which_are_rejected() -> None:
    assert fields(admit(mp(annotations={MIN: "-2", MAX: "3"}))) == ["spec.replicas"]


def test_malformed_machine_pools_are_field_errors() -> None:
    result = admit({"metadata": {"name": "mp"}, "spec": {"template": {"spec": "nope"}, "replicas": "1"}})
    assert errors(result) == [
        ("spec.template.spec", "Invalid value", "must be an object"),
        (
            "spec.template.spec.bootstrap.data",
            "Required value",
            "expected either spec.bootstrap.dataSecretName or spec.bootstrap.configRef to be populated",
        ),
        ("spec.template.spec.infrastructureRef", "Required value", ""),
        ("spec.clusterName", "Required value", ""),
        ("spec.replicas", "Invalid value", "must be an integer"),
    ]


def test_defaulting_writes_durations_as_go_formats_them() -> None:
    obj = mp()
    obj["spec"]["template"]["spec"].update(nodeDrainTimeout="90s", nodeDeletionTimeout="10m")
    machine = default_machine_pool(obj)["spec"]["template"]["spec"]
    assert (machine["nodeDrainTimeout"], machine["nodeDeletionTimeout"]) == ("1m30s", "10m0s")
