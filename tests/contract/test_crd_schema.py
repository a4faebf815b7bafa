"""The Cluster API CRD schemas at work: defaulting, pruning and validation, in apiextensions' order."""

from __future__ import annotations

from typing import Any

import pytest
from contract_support import (
    CAPI,
    CAPI_V1BETA2,
    ROLLOUT_STRATEGY_DEFAULT,
    RULES_NOT_CHECKED,
    assert_status,
    causes,
    cluster,
    control_plane,
    machine_set,
)

from clusterclass.kube.client import Client
from clusterclass.kube.errors import Invalid


async def test_create_defaults_missing_fields(client: Client, namespace: str) -> None:
    created = await client.create(control_plane(namespace, "kcp"))
    assert created["spec"]["rolloutStrategy"] == ROLLOUT_STRATEGY_DEFAULT
    zero_surge = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}
    explicit = await client.create(control_plane(namespace, "explicit", rolloutStrategy=zero_surge))
    assert explicit["spec"]["rolloutStrategy"] == zero_surge


async def test_update_defaults_a_removed_field_again(client: Client, namespace: str) -> None:
    created = await client.create(control_plane(namespace, "kcp"))
    spec = {k: v for k, v in created["spec"].items() if k != "rolloutStrategy"}
    # without the conversion-data annotation too, so nothing but the v1beta1 schema's default can bring it back
    meta = {k: v for k, v in created["metadata"].items() if k != "annotations"}
    updated = await client.update({**created, "metadata": meta, "spec": {**spec, "replicas": 3}})
    assert updated["spec"]["rolloutStrategy"] == ROLLOUT_STRATEGY_DEFAULT
    assert updated["spec"]["replicas"] == 3


async def test_nested_defaults_apply_only_where_the_parent_exists(client: Client, namespace: str) -> None:
    def template(spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
            "kind": "KubeadmControlPlaneTemplate",
            "metadata": {"name": "t", "namespace": namespace},
            "spec": {"template": {"spec": spec}},
        }

    created = await client.create(template({"kubeadmConfigSpec": {}}), field_manager="creator")
    assert created["spec"]["template"]["spec"]["rolloutStrategy"] == {
        "rollingUpdate": {"maxSurge": 1},
        "type": "RollingUpdate",
    }
    # the defaults are recorded as set by the writer whose request they completed
    [entry] = created["metadata"]["managedFields"]
    assert entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:rolloutStrategy"] == {
        ".": {},
        "f:rollingUpdate": {".": {}, "f:maxSurge": {}},
        "f:type": {},
    }
    without_spec = template({"kubeadmConfigSpec": {}})
    without_spec["metadata"]["name"] = "u"
    without_spec["spec"] = {"template": {}}
    with pytest.raises(Invalid) as invalid:
        await client.create(without_spec)
    assert causes(invalid.value) == [RULES_NOT_CHECKED, ("FieldValueRequired", "spec.template.spec")]


async def test_unknown_fields_are_pruned(client: Client, namespace: str) -> None:
    obj = machine_set(namespace, "ms")
    obj["spec"]["notInTheSchema"] = {"a": 1}
    obj["spec"]["template"]["spec"]["alsoUnknown"] = "x"
    obj["topLevelUnknown"] = True
    created = await client.create(obj)
    assert "notInTheSchema" not in created["spec"]
    assert "alsoUnknown" not in created["spec"]["template"]["spec"]
    assert "topLevelUnknown" not in created
    assert created["spec"]["clusterName"] == "c1"
    stored = await client.get(CAPI, "MachineSet", "ms", namespace=namespace)
    assert stored == created


async def test_preserve_unknown_fields_keep_anything(client: Client, namespace: str) -> None:
    value = {"nested": {"list": [1, "two", {"three": None}], "flag": True}, "n": 1.5}
    obj = cluster(
        namespace,
        "c1",
        {"topology": {"class": "cc", "version": "v1.30.0", "variables": [{"name": "v", "value": value}]}},
    )
    created = await client.create(obj)
    assert created["spec"]["topology"]["variables"] == [{"name": "v", "value": value}]


async def test_missing_required_fields_are_invalid(client: Client, namespace: str) -> None:
    with pytest.raises(Invalid) as invalid:
        await client.create(machine_set(namespace, "ms", {"template": {"spec": {"clusterName": "c1"}}}))
    assert_status(invalid.value, 422, "Invalid")
    assert causes(invalid.value) == [
        ("FieldValueRequired", "spec.clusterName"),
        ("FieldValueRequired", "spec.selector"),
        ("FieldValueRequired", "spec.template.spec.bootstrap"),
        ("FieldValueRequired", "spec.template.spec.infrastructureRef"),
    ]
    assert invalid.value.details["name"] == "ms"
    assert invalid.value.details["group"] == "cluster.x-k8s.io"
    assert invalid.value.details["kind"] == "MachineSet"
    assert invalid.value.message.startswith('MachineSet.cluster.x-k8s.io "ms" is invalid: ')


async def test_wrong_types_enums_and_lengths_are_invalid(client: Client, namespace: str) -> None:
    obj = machine_set(namespace, "ms")
    obj["spec"].update({"minReadySeconds": "five", "deletePolicy": "Sometimes", "clusterName": ""})
    with pytest.raises(Invalid) as invalid:
        await client.create(obj)
    assert causes(invalid.value) == [
        ("FieldValueInvalid", "spec.clusterName"),
        ("FieldValueNotSupported", "spec.deletePolicy"),
        ("FieldValueTypeInvalid", "spec.minReadySeconds"),
    ]


async def test_patterns_are_checked(client: Client, namespace: str) -> None:
    topology = {
        "class": "cc",
        "version": "v1.30.0",
        "controlPlane": {"machineHealthCheck": {"unhealthyRange": "three to five"}},
    }
    with pytest.raises(Invalid) as invalid:
        await client.create(cluster(namespace, "c1", {"topology": topology}))
    assert causes(invalid.value) == [
        ("FieldValueInvalid", "spec.topology.controlPlane.machineHealthCheck.unhealthyRange")
    ]


async def test_updates_are_validated(client: Client, namespace: str) -> None:
    created = await client.create(machine_set(namespace, "ms"))
    with pytest.raises(Invalid) as invalid:
        await client.update({**created, "spec": {**created["spec"], "deletePolicy": "Sometimes"}})
    assert causes(invalid.value) == [("FieldValueNotSupported", "spec.deletePolicy")]


async def test_status_is_validated_against_its_schema(client: Client, namespace: str) -> None:
    created = await client.create(cluster(namespace, "c1"))
    with pytest.raises(Invalid) as invalid:
        await client.update_status({**created, "status": {"infrastructureReady": "yes"}})
    assert causes(invalid.value) == [RULES_NOT_CHECKED, ("FieldValueTypeInvalid", "status.infrastructureReady")]
    pruned = await client.update_status({**created, "status": {"phase": "Provisioned", "unknown": 1}})
    assert pruned["status"] == {"phase": "Provisioned"}


async def test_metadata_of_a_custom_resource_is_not_pruned_into_spec(client: Client, namespace: str) -> None:
    # in the storage version: a v1beta1 answer carries the conversion-data annotation besides the object's own
    obj = cluster(namespace, "c1", labels={"a": "b"}, annotations={"note": "kept"}, finalizers=["example.com/f"])
    created = await client.create({**obj, "apiVersion": CAPI_V1BETA2})
    assert created["metadata"]["labels"] == {"a": "b"}
    assert created["metadata"]["annotations"] == {"note": "kept"}
    assert created["metadata"]["finalizers"] == ["example.com/f"]
