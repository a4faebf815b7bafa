"""Server-side apply: managedFields, ownership, conflicts and force, removal of fields no longer applied."""

from __future__ import annotations

from typing import Any

import pytest
from contract_support import (
    CLUSTER_SPEC,
    ROLLOUT_STRATEGY_DEFAULT,
    RULES_NOT_CHECKED,
    assert_status,
    causes,
    cluster,
    config_map,
    control_plane,
    machine_set,
    rv,
)

from clusterclass.kube.client import Client
from clusterclass.kube.errors import Conflict, Invalid


def entries(obj: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """managedFields by manager name (each test uses each manager once per operation)."""
    return {e["manager"]: e for e in obj["metadata"].get("managedFields", [])}


def owned(obj: dict[str, Any], manager: str) -> dict[str, Any]:
    return dict(entries(obj)[manager]["fieldsV1"])


async def test_apply_creates_and_records_the_manager(client: Client, namespace: str) -> None:
    created = await client.apply(config_map(namespace, "a", {"x": "1"}, labels={"l": "v"}), field_manager="m1")
    assert created["data"] == {"x": "1"}
    assert created["metadata"]["labels"] == {"l": "v"}
    assert created["metadata"]["uid"] and rv(created) > 0
    [entry] = created["metadata"]["managedFields"]
    assert {k: v for k, v in entry.items() if k != "time"} == {
        "manager": "m1",
        "operation": "Apply",
        "apiVersion": "v1",
        "fieldsType": "FieldsV1",
        "fieldsV1": {"f:data": {"f:x": {}}, "f:metadata": {"f:labels": {"f:l": {}}}},
    }
    assert entry["time"]


async def test_create_and_update_record_update_entries(client: Client, namespace: str) -> None:
    created = await client.create(config_map(namespace, "a", {"x": "1"}, labels={"l": "v"}), field_manager="editor")
    [entry] = created["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == ("editor", "Update", "v1")
    assert entry["fieldsV1"] == {
        "f:data": {".": {}, "f:x": {}},
        "f:metadata": {"f:labels": {".": {}, "f:l": {}}},
    }
    updated = await client.update({**created, "data": {"x": "1", "y": "2"}}, field_manager="other")
    assert owned(updated, "other") == {"f:data": {"f:y": {}}}
    assert owned(updated, "editor") == entry["fieldsV1"]


async def test_the_default_field_manager_is_clusterclass(client: Client, namespace: str) -> None:
    created = await client.create(config_map(namespace, "a", {"x": "1"}))
    assert [e["manager"] for e in created["metadata"]["managedFields"]] == ["clusterclass"]


async def test_applying_the_same_configuration_again_changes_nothing(client: Client, namespace: str) -> None:
    first = await client.apply(config_map(namespace, "a", {"x": "1"}), field_manager="m1")
    again = await client.apply(config_map(namespace, "a", {"x": "1"}), field_manager="m1")
    assert rv(again) == rv(first)
    assert again == first


async def test_a_different_value_owned_by_another_manager_is_a_conflict(client: Client, namespace: str) -> None:
    await client.apply(config_map(namespace, "a", {"x": "1", "y": "1"}), field_manager="m1")
    with pytest.raises(Conflict) as conflict:
        await client.apply(config_map(namespace, "a", {"x": "2", "y": "2"}), field_manager="m2")
    assert_status(conflict.value, 409, "Conflict")
    assert causes(conflict.value) == [("FieldManagerConflict", ".data.x"), ("FieldManagerConflict", ".data.y")]
    assert conflict.value.message.startswith('Apply failed with 2 conflicts: conflicts with "m1":')
    assert (await client.get("v1", "ConfigMap", "a", namespace=namespace))["data"] == {"x": "1", "y": "1"}


async def test_force_takes_the_fields_over(client: Client, namespace: str) -> None:
    await client.apply(config_map(namespace, "a", {"x": "1", "y": "1"}), field_manager="m1")
    forced = await client.apply(config_map(namespace, "a", {"x": "2"}), field_manager="m2", force=True)
    assert forced["data"] == {"x": "2", "y": "1"}
    assert owned(forced, "m1") == {"f:data": {"f:y": {}}}
    assert owned(forced, "m2") == {"f:data": {"f:x": {}}}


async def test_force_can_leave_a_manager_with_nothing(client: Client, namespace: str) -> None:
    await client.apply(config_map(namespace, "a", {"x": "1"}), field_manager="m1")
    forced = await client.apply(config_map(namespace, "a", {"x": "2"}), field_manager="m2", force=True)
    assert list(entries(forced)) == ["m2"]


async def test_the_same_value_is_shared_without_conflict(client: Client, namespace: str) -> None:
    await client.apply(config_map(namespace, "a", {"x": "1", "y": "1"}), field_manager="m1")
    shared = await client.apply(config_map(namespace, "a", {"x": "1"}), field_manager="m2")
    assert owned(shared, "m1") == {"f:data": {"f:x": {}, "f:y": {}}}
    assert owned(shared, "m2") == {"f:data": {"f:x": {}}}
    # m1 lets go of x: m2 still owns it, so it stays; y has no other owner, so it goes
    released = await client.apply(config_map(namespace, "a", {}), field_manager="m1")
    assert released["data"] == {"x": "1"}
    assert owned(released, "m1") == {"f:data": {}}  # an empty map applied is still owned
    assert owned(released, "m2") == {"f:data": {"f:x": {}}}
    # applying nothing at all leaves the manager out of managedFields
    nothing = await client.apply(config_map(namespace, "a"), field_manager="m1")
    assert nothing["data"] == {"x": "1"}
    assert list(entries(nothing)) == ["m2"]


async def test_fields_no_longer_applied_are_removed(client: Client, namespace: str) -> None:
    await client.apply(config_map(namespace, "a", {"x": "1", "y": "2"}, labels={"a": "1", "b": "2"}), field_manager="m")
    smaller = await client.apply(config_map(namespace, "a", {"x": "1"}, labels={"a": "1"}), field_manager="m")
    assert smaller["data"] == {"x": "1"}
    assert smaller["metadata"]["labels"] == {"a": "1"}
    assert owned(smaller, "m") == {"f:data": {"f:x": {}}, "f:metadata": {"f:labels": {"f:a": {}}}}


async def test_fields_set_by_an_update_are_not_removed_by_apply(client: Client, namespace: str) -> None:
    created = await client.create(config_map(namespace, "a", {"mine": "1"}), field_manager="editor")
    applied = await client.apply(config_map(namespace, "a", {"x": "1"}), field_manager="m")
    assert applied["data"] == {"mine": "1", "x": "1"}
    assert rv(applied) > rv(created)
    again = await client.apply(config_map(namespace, "a", {}), field_manager="m")
    assert again["data"] == {"mine": "1"}


async def test_an_update_that_changes_an_applied_field_takes_it_over(client: Client, namespace: str) -> None:
    applied = await client.apply(config_map(namespace, "a", {"x": "1"}), field_manager="m1")
    edited = await client.update({**applied, "data": {"x": "2"}}, field_manager="editor")
    assert "m1" not in entries(edited)
    assert owned(edited, "editor") == {"f:data": {"f:x": {}}}
    with pytest.raises(Conflict) as conflict:
        await client.apply(config_map(namespace, "a", {"x": "1"}), field_manager="m1")
    assert causes(conflict.value) == [("FieldManagerConflict", ".data.x")]
    assert '"editor"' in conflict.value.message


async def test_labels_are_owned_key_by_key(client: Client, namespace: str) -> None:
    await client.apply(config_map(namespace, "a", labels={"one": "1"}), field_manager="m1")
    both = await client.apply(config_map(namespace, "a", labels={"two": "2"}), field_manager="m2")
    assert both["metadata"]["labels"] == {"one": "1", "two": "2"}


async def test_finalizers_are_a_set(client: Client, namespace: str) -> None:
    await client.apply(config_map(namespace, "a", finalizers=["example.com/x"]), field_manager="m1")
    both = await client.apply(config_map(namespace, "a", finalizers=["example.com/y"]), field_manager="m2")
    assert both["metadata"]["finalizers"] == ["example.com/x", "example.com/y"]
    assert owned(both, "m2") == {"f:metadata": {"f:finalizers": {'v:"example.com/y"': {}}}}
    dropped = await client.apply(config_map(namespace, "a"), field_manager="m1")
    assert dropped["metadata"]["finalizers"] == ["example.com/y"]


async def test_lists_of_a_custom_resource_without_list_type_are_atomic(client: Client, namespace: str) -> None:
    def with_blocks(blocks: list[str]) -> dict[str, Any]:
        return cluster(namespace, "c1", {"clusterNetwork": {"pods": {"cidrBlocks": blocks}}})

    first = await client.apply(with_blocks(["10.0.0.0/16"]), field_manager="m1")
    assert owned(first, "m1") == {"f:spec": {"f:clusterNetwork": {"f:pods": {"f:cidrBlocks": {}}}}}
    with pytest.raises(Conflict) as conflict:
        await client.apply(with_blocks(["10.0.0.0/16", "10.1.0.0/16"]), field_manager="m2")
    assert causes(conflict.value) == [("FieldManagerConflict", ".spec.clusterNetwork.pods.cidrBlocks")]
    shared = await client.apply(with_blocks(["10.0.0.0/16"]), field_manager="m2")
    assert shared["spec"]["clusterNetwork"]["pods"]["cidrBlocks"] == ["10.0.0.0/16"]


async def test_apply_of_a_custom_resource_bumps_generation_on_spec_changes(client: Client, namespace: str) -> None:
    created = await client.apply(cluster(namespace, "c1", {"paused": False}), field_manager="m")
    assert created["metadata"]["generation"] == 1
    changed = await client.apply(cluster(namespace, "c1", {"paused": True}), field_manager="m")
    assert changed["metadata"]["generation"] == 2
    labelled = await client.apply(
        {
            **cluster(namespace, "c1", {"paused": True}),
            "metadata": {"name": "c1", "namespace": namespace, "labels": {"a": "b"}},
        },
        field_manager="m",
    )
    assert labelled["metadata"]["generation"] == 2


async def test_apply_ignores_status_and_apply_status_changes_only_status(client: Client, namespace: str) -> None:
    created = await client.apply({**cluster(namespace, "c1"), "status": {"phase": "Provisioned"}}, field_manager="m")
    assert "status" not in created
    applied = await client.apply(
        {**cluster(namespace, "c1", {"paused": True}), "status": {"phase": "Provisioned"}},
        field_manager="status-writer",
        status=True,
    )
    assert applied["status"] == {"phase": "Provisioned"}
    assert applied["spec"] == CLUSTER_SPEC
    entry = entries(applied)["status-writer"]
    assert entry["operation"] == "Apply" and entry["subresource"] == "status"
    assert entry["fieldsV1"] == {"f:status": {"f:phase": {}}}
    assert "subresource" not in entries(applied)["m"]


async def test_apply_defaults_and_validates_custom_resources(client: Client, namespace: str) -> None:
    applied = await client.apply(control_plane(namespace, "kcp"), field_manager="m")
    assert applied["spec"]["rolloutStrategy"] == ROLLOUT_STRATEGY_DEFAULT
    assert "f:rolloutStrategy" not in owned(applied, "m")["f:spec"]
    with pytest.raises(Invalid) as invalid:
        await client.apply(machine_set(namespace, "bad", {"clusterName": "c1"}), field_manager="m")
    assert ("FieldValueRequired", "spec.selector") in causes(invalid.value)


async def test_apply_with_a_stale_resource_version_is_a_conflict(client: Client, namespace: str) -> None:
    first = await client.apply(config_map(namespace, "a", {"x": "1"}), field_manager="m")
    await client.apply(config_map(namespace, "a", {"x": "2"}), field_manager="m")
    stale = config_map(namespace, "a", {"x": "3"}, resourceVersion=first["metadata"]["resourceVersion"])
    with pytest.raises(Conflict):
        await client.apply(stale, field_manager="m")


async def test_atomic_maps_are_owned_whole(client: Client, namespace: str) -> None:
    def with_ref(ref: dict[str, str]) -> dict[str, Any]:
        return cluster(namespace, "c1", {"infrastructureRef": ref})

    first = await client.apply(with_ref({"apiVersion": "v1", "kind": "ConfigMap", "name": "a"}), field_manager="m1")
    assert owned(first, "m1") == {"f:spec": {"f:infrastructureRef": {}}}
    with pytest.raises(Conflict) as conflict:
        await client.apply(with_ref({"name": "a"}), field_manager="m2")
    assert causes(conflict.value) == [("FieldManagerConflict", ".spec.infrastructureRef")]
    replaced = await client.apply(with_ref({"name": "b"}), field_manager="m2", force=True)
    # replaced whole: nothing of m1's reference is left (the namespace is the v1beta2 round trip's: a v1beta2
    # reference has none, and the conversion back to v1beta1 gives it the object's)
    assert replaced["spec"]["infrastructureRef"] == {"name": "b", "namespace": namespace}


async def test_owner_references_are_a_map_keyed_by_uid(client: Client, namespace: str) -> None:
    def ref(uid: str, name: str) -> dict[str, str]:
        return {"apiVersion": "v1", "kind": "ConfigMap", "name": name, "uid": uid}

    # owners that exist: where a garbage collector runs, dangling references would be collected
    one = (await client.create(config_map(namespace, "p1")))["metadata"]["uid"]
    two = (await client.create(config_map(namespace, "p2")))["metadata"]["uid"]
    await client.apply(config_map(namespace, "a", ownerReferences=[ref(one, "p1")]), field_manager="m1")
    both = await client.apply(config_map(namespace, "a", ownerReferences=[ref(two, "p2")]), field_manager="m2")
    assert [r["uid"] for r in both["metadata"]["ownerReferences"]] == [one, two]
    # each reference is owned whole (an atomic struct), under its key
    assert owned(both, "m2") == {"f:metadata": {"f:ownerReferences": {f'k:{{"uid":"{two}"}}': {}}}}
    dropped = await client.apply(config_map(namespace, "a"), field_manager="m1")
    assert [r["uid"] for r in dropped["metadata"]["ownerReferences"]] == [two]


def _control_plane_with_null_tags(namespace: str, name: str) -> dict[str, Any]:
    return {
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmControlPlane",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "version": "v1.28.0",
            "machineTemplate": {
                "infrastructureRef": {
                    "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                    "kind": "DockerMachineTemplate",
                    "name": "t",
                }
            },
            "kubeadmConfigSpec": {
                "clusterConfiguration": {"dns": {"imageRepository": "registry.k8s.io/coredns", "imageTag": None}}
            },
        },
    }


async def test_a_null_the_schema_does_not_allow_is_dropped_from_a_create(client: Client, namespace: str) -> None:
    created = await client.create(_control_plane_with_null_tags(namespace, "created"))
    assert created["spec"]["kubeadmConfigSpec"]["clusterConfiguration"] == {
        "dns": {"imageRepository": "registry.k8s.io/coredns"}
    }


async def test_a_null_the_schema_does_not_allow_is_refused_by_an_apply(client: Client, namespace: str) -> None:
    """An applied configuration is not a request body: its nulls are not pruned, so validation refuses them
    (what the upstream quick-start ClusterClass's etcd and CoreDNS patches produce with empty variables)."""
    with pytest.raises(Invalid) as raised:
        await client.apply(_control_plane_with_null_tags(namespace, "applied"), field_manager="test", force=True)
    path = "spec.kubeadmConfigSpec.clusterConfiguration.dns.imageTag"
    assert causes(raised.value) == [RULES_NOT_CHECKED, ("FieldValueTypeInvalid", path)]
    assert f'{path}: Invalid value: "null": {path} in body must be of type string: "null"' in str(raised.value)
