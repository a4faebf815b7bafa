"""JSON merge patch (RFC 7386) and JSON patch (RFC 6902), with kube-apiserver's rules."""

from __future__ import annotations

import pytest
from contract_support import CAPI, assert_status, cluster, config_map, machine_set, rv

from clusterclass.kube.client import Client
from clusterclass.kube.errors import ApiError, Invalid, NotFound


async def test_merge_patch_sets_merges_and_removes(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a", {"keep": "1", "drop": "2"}, labels={"l": "v"}))
    patched = await client.patch(
        "v1",
        "ConfigMap",
        "a",
        {"data": {"drop": None, "new": "3"}, "metadata": {"labels": {"m": "w"}}},
        namespace=namespace,
    )
    assert patched["data"] == {"keep": "1", "new": "3"}
    assert patched["metadata"]["labels"] == {"l": "v", "m": "w"}
    assert rv(patched) > rv(a)
    assert await client.get("v1", "ConfigMap", "a", namespace=namespace) == patched


async def test_merge_patch_replaces_lists(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a", finalizers=["example.com/a", "example.com/b"]))
    patched = await client.patch(
        "v1", "ConfigMap", "a", {"metadata": {"finalizers": ["example.com/c"]}}, namespace=namespace
    )
    assert patched["metadata"]["finalizers"] == ["example.com/c"]


async def test_merge_patch_of_a_custom_resource(client: Client, namespace: str) -> None:
    await client.create(cluster(namespace, "c1", {"paused": True, "controlPlaneEndpoint": {"host": "h", "port": 1}}))
    patched = await client.patch(
        CAPI, "Cluster", "c1", {"spec": {"controlPlaneEndpoint": {"port": 6443}}}, namespace=namespace
    )
    assert patched["spec"] == {"paused": True, "controlPlaneEndpoint": {"host": "h", "port": 6443}}
    assert patched["metadata"]["generation"] == 2


async def test_json_patch_operations(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a", {"a": "1", "b": "2"}, finalizers=["example.com/x"]))
    patched = await client.patch(
        "v1",
        "ConfigMap",
        "a",
        [
            {"op": "test", "path": "/data/a", "value": "1"},
            {"op": "replace", "path": "/data/a", "value": "10"},
            {"op": "add", "path": "/data/c", "value": "3"},
            {"op": "remove", "path": "/data/b"},
            {"op": "copy", "from": "/data/c", "path": "/data/d"},
            {"op": "move", "from": "/data/d", "path": "/data/e"},
            {"op": "add", "path": "/metadata/finalizers/-", "value": "example.com/y"},
            {"op": "add", "path": "/metadata/labels", "value": {"x": "y"}},
        ],
        patch_type="json",
        namespace=namespace,
    )
    assert patched["data"] == {"a": "10", "c": "3", "e": "3"}
    assert patched["metadata"]["finalizers"] == ["example.com/x", "example.com/y"]
    assert patched["metadata"]["labels"] == {"x": "y"}


async def test_json_patch_escapes_slashes_in_keys(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a", labels={"example.com/role": "a"}))
    patched = await client.patch(
        "v1",
        "ConfigMap",
        "a",
        [{"op": "replace", "path": "/metadata/labels/example.com~1role", "value": "b"}],
        patch_type="json",
        namespace=namespace,
    )
    assert patched["metadata"]["labels"] == {"example.com/role": "b"}


async def test_a_failing_json_patch_test_changes_nothing(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a", {"a": "1"}))
    with pytest.raises(ApiError) as failed:
        await client.patch(
            "v1",
            "ConfigMap",
            "a",
            [{"op": "replace", "path": "/data/a", "value": "2"}, {"op": "test", "path": "/data/a", "value": "1"}],
            patch_type="json",
            namespace=namespace,
        )
    assert isinstance(failed.value, Invalid)
    assert_status(failed.value, 422, "Invalid")
    assert await client.get("v1", "ConfigMap", "a", namespace=namespace) == a


async def test_a_json_patch_on_a_missing_path_is_invalid(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a", {"a": "1"}))
    with pytest.raises(Invalid):
        await client.patch(
            "v1", "ConfigMap", "a", [{"op": "remove", "path": "/data/nope"}], patch_type="json", namespace=namespace
        )
    with pytest.raises(Invalid):
        await client.patch(
            "v1",
            "ConfigMap",
            "a",
            [{"op": "replace", "path": "/nope/x", "value": 1}],
            patch_type="json",
            namespace=namespace,
        )


async def test_patch_of_a_missing_object_is_not_found(client: Client, namespace: str) -> None:
    with pytest.raises(NotFound) as missing:
        await client.patch("v1", "ConfigMap", "nope", {"data": {"a": "1"}}, namespace=namespace)
    assert missing.value.details == {"name": "nope", "kind": "configmaps"}
    with pytest.raises(NotFound):
        await client.patch(
            "v1",
            "ConfigMap",
            "nope",
            [{"op": "add", "path": "/data", "value": {}}],
            patch_type="json",
            namespace=namespace,
        )


async def test_a_patch_is_validated_against_the_schema(client: Client, namespace: str) -> None:
    await client.create(machine_set(namespace, "ms"))
    with pytest.raises(Invalid) as invalid:
        await client.patch(CAPI, "MachineSet", "ms", {"spec": {"clusterName": None}}, namespace=namespace)
    assert {c.get("field") for c in invalid.value.details.get("causes", [])} == {"spec.clusterName"}


async def test_a_patch_that_changes_nothing_keeps_the_resource_version(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a", {"a": "1"}), field_manager="m")
    same = await client.patch("v1", "ConfigMap", "a", {"data": {"a": "1"}}, namespace=namespace, field_manager="m")
    assert rv(same) == rv(a)
