"""MemoryClient: the async Client protocol over a MemoryStore, and JSON patch as kube-apiserver applies it.

The JSON patch cases were checked against kube-apiserver 1.37.2 (negative indices, ``replace`` of a
missing member, ``test`` against null and across types, and the 422 it answers).
"""

from __future__ import annotations

from typing import Any

import pytest
from memory_support import fixed_store

from clusterclass.api.objects import Obj
from clusterclass.apiserver.inprocess_client import MemoryClient
from clusterclass.apiserver.json_patch import MAX_OPERATIONS
from clusterclass.kube.client import Client, ObjectList, Resource
from clusterclass.kube.errors import ApiError, BadRequest, Conflict, Invalid, NotFound

CAPI = "cluster.x-k8s.io/v1beta1"
REJECTED = "the server rejected our request due to an error in our request"


@pytest.fixture
def client() -> MemoryClient:
    return MemoryClient(fixed_store())


def cluster(name: str = "c1", **spec: Any) -> Obj:
    return {"apiVersion": CAPI, "kind": "Cluster", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def config_map(name: str = "cm", **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, "data": data}


async def test_the_client_speaks_the_protocol(client: MemoryClient) -> None:
    protocol: Client = client
    created = await protocol.create(config_map(a="1"))
    assert await protocol.get("v1", "ConfigMap", "cm", namespace="default") == created
    listed = await protocol.list("v1", "ConfigMap", namespace="default")
    assert isinstance(listed, ObjectList) and listed.items == [created]
    assert listed.resource_version == created["metadata"]["resourceVersion"]
    updated = await protocol.update({**created, "data": {"a": "2"}})
    assert updated["data"] == {"a": "2"}
    patched = await protocol.patch("v1", "ConfigMap", "cm", {"data": {"b": "3"}}, namespace="default")
    assert patched["data"] == {"a": "2", "b": "3"}
    assert await protocol.delete("v1", "ConfigMap", "cm", namespace="default") is None
    with pytest.raises(NotFound):
        await protocol.get("v1", "ConfigMap", "cm", namespace="default")
    await protocol.close()


async def test_a_default_client_has_its_own_store() -> None:
    client = MemoryClient()
    assert (await client.get("v1", "Namespace", "default"))["metadata"]["name"] == "default"
    assert (await client.list(CAPI, "Cluster")).items == []


async def test_discovery(client: MemoryClient) -> None:
    assert await client.resource(CAPI, "Cluster") == Resource(
        "cluster.x-k8s.io", "v1beta1", "Cluster", "clusters", True, frozenset({"status"})
    )
    assert await client.resource("v1", "ConfigMap") == Resource("", "v1", "ConfigMap", "configmaps", True)
    namespace = await client.resource("v1", "Namespace")
    assert (namespace.namespaced, namespace.api_version, namespace.subresources) == (False, "v1", {"status"})
    with pytest.raises(NotFound, match="the server could not find the requested resource"):
        await client.resource("example.com/v1", "Widget")


async def test_update_status_and_status_patches_change_only_status(client: MemoryClient) -> None:
    created = await client.create(cluster(paused=True))
    status = await client.update_status({**created, "spec": {"paused": False}, "status": {"phase": "Pending"}})
    assert (status["spec"], status["status"]) == ({"paused": True}, {"phase": "Pending"})
    patched = await client.patch(
        CAPI,
        "Cluster",
        "c1",
        {"spec": {"paused": False}, "status": {"phase": "Provisioning"}},
        namespace="default",
        status=True,
    )
    assert (patched["spec"], patched["status"]) == ({"paused": True}, {"phase": "Provisioning"})
    dry = await client.update_status({**patched, "status": {"phase": "Provisioned"}}, dry_run=True)
    assert dry["status"] == {"phase": "Provisioned"}
    assert (await client.get(CAPI, "Cluster", "c1", namespace="default"))["status"] == {"phase": "Provisioning"}
    with pytest.raises(NotFound):  # ConfigMaps have no status subresource
        await client.patch("v1", "ConfigMap", "x", {}, namespace="default", status=True)


async def test_a_patch_carrying_a_resource_version_is_conditional(client: MemoryClient) -> None:
    created = await client.create(config_map(a="1"))
    await client.patch("v1", "ConfigMap", "cm", {"data": {"a": "2"}}, namespace="default")
    with pytest.raises(Conflict):
        await client.patch(
            "v1",
            "ConfigMap",
            "cm",
            {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}, "data": {"a": "3"}},
            namespace="default",
        )


async def test_dry_run_delete_stores_nothing(client: MemoryClient) -> None:
    await client.create(config_map())
    held = config_map("held")
    held["metadata"]["finalizers"] = ["example.com/x"]
    await client.create(held)
    before = client.store.resource_version
    assert await client.delete("v1", "ConfigMap", "cm", namespace="default", dry_run=True) is None
    would = await client.delete("v1", "ConfigMap", "held", namespace="default", dry_run=True)
    assert would is not None and would["metadata"]["deletionTimestamp"]
    assert client.store.resource_version == before
    assert "deletionTimestamp" not in (await client.get("v1", "ConfigMap", "held", namespace="default"))["metadata"]


async def test_writes_record_their_manager_and_the_default_one_is_clusterclass(client: MemoryClient) -> None:
    created = await client.create(config_map(a="1"))
    [entry] = created["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == ("clusterclass", "Update", "v1")
    assert entry["fieldsV1"] == {"f:data": {".": {}, "f:a": {}}}
    patched = await client.patch("v1", "ConfigMap", "cm", {"data": {"b": "2"}}, namespace="default", field_manager="p")
    assert {e["manager"]: e["fieldsV1"] for e in patched["metadata"]["managedFields"]} == {
        "clusterclass": {"f:data": {".": {}, "f:a": {}}},
        "p": {"f:data": {"f:b": {}}},
    }


async def test_apply_creates_updates_and_conflicts(client: MemoryClient) -> None:
    applied = await client.apply(config_map(a="1"), field_manager="one")
    [entry] = applied["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["fieldsV1"]) == ("one", "Apply", {"f:data": {"f:a": {}}})
    again = await client.apply(config_map(a="1"), field_manager="one")
    assert again == applied  # nothing changed: no write
    with pytest.raises(Conflict) as err:
        await client.apply(config_map(a="2"), field_manager="two")
    assert err.value.details["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "one"', "field": ".data.a"}
    ]
    forced = await client.apply(config_map(a="2"), field_manager="two", force=True)
    assert forced["data"] == {"a": "2"}
    assert [e["manager"] for e in forced["metadata"]["managedFields"]] == ["two"]
    removed = await client.apply(config_map(b="3"), field_manager="two")
    assert removed["data"] == {"b": "3"}  # fields no longer applied are removed


async def test_apply_runs_the_schema_and_the_status_subresource(client: MemoryClient) -> None:
    kcp_version = "controlplane.cluster.x-k8s.io/v1beta1"
    control_plane = {
        "apiVersion": kcp_version,
        "kind": "KubeadmControlPlane",
        "metadata": {"name": "kcp", "namespace": "default"},
        "spec": {
            "version": "v1.30.0",
            "kubeadmConfigSpec": {},
            "machineTemplate": {
                "infrastructureRef": {
                    "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                    "kind": "DockerMachineTemplate",
                    "name": "t",
                }
            },
        },
    }
    created = await client.apply(control_plane, field_manager="me")
    # defaulted by the v1beta1 schema, not owned by the applier
    assert created["spec"]["rolloutStrategy"] == {"rollingUpdate": {"maxSurge": 1}, "type": "RollingUpdate"}
    assert "f:rolloutStrategy" not in created["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]
    with pytest.raises(Invalid):
        await client.apply({**control_plane, "spec": {**control_plane["spec"], "version": ""}}, field_manager="me")
    status = await client.apply(
        {"apiVersion": kcp_version, "kind": "KubeadmControlPlane", "metadata": {"name": "kcp", "namespace": "default"},
         "status": {"replicas": 3}},
        field_manager="status-writer",
        status=True,
    )  # fmt: skip
    assert status["status"] == {"replicas": 3}
    assert status["spec"] == created["spec"]
    entry = next(e for e in status["metadata"]["managedFields"] if e["manager"] == "status-writer")
    assert entry["subresource"] == "status"
    with pytest.raises(NotFound):
        await client.apply(
            {
                "apiVersion": kcp_version,
                "kind": "KubeadmControlPlane",
                "metadata": {"name": "x", "namespace": "default"},
            },
            field_manager="me",
            status=True,
        )


async def test_apply_dry_run_and_resource_version_precondition(client: MemoryClient) -> None:
    dry = await client.apply(config_map(a="1"), field_manager="me", dry_run=True)
    assert dry["metadata"]["managedFields"][0]["manager"] == "me"
    with pytest.raises(NotFound):
        await client.get("v1", "ConfigMap", "cm", namespace="default")
    created = await client.apply(config_map(a="1"), field_manager="me")
    await client.apply(config_map(a="2"), field_manager="me")
    stale = config_map(a="3")
    stale["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    with pytest.raises(Conflict):
        await client.apply(stale, field_manager="me")


# -- JSON patch ---------------------------------------------------------------------------------------


async def json_patch(client: MemoryClient, operations: Any) -> Obj:
    return await client.patch(CAPI, "Cluster", "c1", operations, patch_type="json", namespace="default")


@pytest.fixture
async def blocks(client: MemoryClient) -> MemoryClient:
    await client.create(cluster(clusterNetwork={"services": {"cidrBlocks": ["a", "b", "c"]}}))
    return client


def cidr_blocks(obj: Obj) -> list[str]:
    return list(obj["spec"]["clusterNetwork"]["services"]["cidrBlocks"])


BLOCKS = "/spec/clusterNetwork/services/cidrBlocks"


@pytest.mark.parametrize(
    ("operations", "expected"),
    [
        ([{"op": "add", "path": f"{BLOCKS}/-", "value": "z"}], ["a", "b", "c", "z"]),
        ([{"op": "add", "path": f"{BLOCKS}/-1", "value": "z"}], ["a", "b", "c", "z"]),  # counts after insertion
        ([{"op": "add", "path": f"{BLOCKS}/0", "value": "z"}], ["z", "a", "b", "c"]),
        ([{"op": "remove", "path": f"{BLOCKS}/-1"}], ["a", "b"]),
        ([{"op": "replace", "path": f"{BLOCKS}/-2", "value": "R"}], ["a", "R", "c"]),
        ([{"op": "move", "from": f"{BLOCKS}/0", "path": f"{BLOCKS}/-"}], ["b", "c", "a"]),
        ([{"op": "copy", "from": f"{BLOCKS}/-1", "path": f"{BLOCKS}/0"}], ["c", "a", "b", "c"]),
        ([{"op": "test", "path": f"{BLOCKS}/1", "value": "b"}, {"op": "remove", "path": f"{BLOCKS}/1"}], ["a", "c"]),
    ],
)
async def test_json_patch_operations(blocks: MemoryClient, operations: list[Obj], expected: list[str]) -> None:
    assert cidr_blocks(await json_patch(blocks, operations)) == expected


async def test_json_patch_replace_of_a_missing_member_adds_it(blocks: MemoryClient) -> None:
    patched = await json_patch(blocks, [{"op": "replace", "path": "/spec/paused", "value": True}])
    assert patched["spec"]["paused"] is True
    assert patched["metadata"]["generation"] == 2


async def test_json_patch_test_of_a_missing_member_against_null_holds(blocks: MemoryClient) -> None:
    patched = await json_patch(
        blocks,
        [{"op": "test", "path": "/spec/paused", "value": None}, {"op": "add", "path": "/spec/paused", "value": True}],
    )
    assert patched["spec"]["paused"] is True


@pytest.mark.parametrize(
    "operations",
    [
        [{"op": "test", "path": f"{BLOCKS}/0", "value": "x"}],
        [{"op": "add", "path": "/spec/paused", "value": True}, {"op": "test", "path": "/spec/paused", "value": 1}],
        [{"op": "remove", "path": "/spec/nope"}],
        [{"op": "add", "path": "/spec/missing/child", "value": 1}],
        [{"op": "replace", "path": f"{BLOCKS}/9", "value": "R"}],
        [{"op": "add", "path": f"{BLOCKS}/-9", "value": "R"}],
        [{"op": "bogus", "path": "/spec"}],
        [{"op": "add", "value": 1}],
        [{"op": "add", "path": "/spec/x"}],
        ["not an operation"],
    ],
)
async def test_json_patch_that_does_not_apply_is_rejected_as_kube_apiserver_rejects_it(
    blocks: MemoryClient, operations: list[Any]
) -> None:
    before = await blocks.get(CAPI, "Cluster", "c1", namespace="default")
    with pytest.raises(Invalid) as err:
        await json_patch(blocks, operations)
    assert (err.value.code, err.value.reason, err.value.message, err.value.details) == (422, "Invalid", REJECTED, {})
    assert await blocks.get(CAPI, "Cluster", "c1", namespace="default") == before


async def test_json_patch_body_must_be_a_list(blocks: MemoryClient) -> None:
    with pytest.raises(BadRequest) as err:
        await json_patch(blocks, {"op": "replace"})
    assert err.value.message == (
        "error decoding patch: json: cannot unmarshal object into Go value of type []handlers.jsonPatchOp"
    )


async def test_json_patch_has_an_operation_limit(blocks: MemoryClient) -> None:
    operations = [{"op": "test", "path": "/kind", "value": "Cluster"}] * (MAX_OPERATIONS + 1)
    with pytest.raises(ApiError) as err:
        await json_patch(blocks, operations)
    assert (err.value.code, err.value.reason) == (413, "RequestEntityTooLarge")


async def test_json_patch_follows_update_rules(blocks: MemoryClient) -> None:
    with pytest.raises(BadRequest, match="does not match the name"):
        await json_patch(blocks, [{"op": "replace", "path": "/metadata/name", "value": "other"}])
    with pytest.raises(Invalid, match=r"metadata\.uid: Invalid value"):
        await json_patch(blocks, [{"op": "replace", "path": "/metadata/uid", "value": "other"}])
    status_ignored = await json_patch(blocks, [{"op": "add", "path": "/status", "value": {"phase": "x"}}])
    assert "status" not in status_ignored


async def test_unknown_patch_type(blocks: MemoryClient) -> None:
    with pytest.raises(ApiError) as err:
        await blocks.patch(CAPI, "Cluster", "c1", {}, patch_type="strategic", namespace="default")  # type: ignore[arg-type]
    assert err.value.code == 415


async def test_patched_objects_share_nothing_with_the_patch(blocks: MemoryClient) -> None:
    value = {"cidrBlocks": ["x"]}
    operations = [{"op": "replace", "path": "/spec/clusterNetwork/services", "value": value}]
    await json_patch(blocks, operations)
    merge = {"spec": {"clusterNetwork": {"pods": {"cidrBlocks": ["y"]}}}}
    await blocks.patch(CAPI, "Cluster", "c1", merge, namespace="default")
    value["cidrBlocks"].append("changed")
    merge["spec"]["clusterNetwork"]["pods"]["cidrBlocks"].append("changed")
    stored = await blocks.get(CAPI, "Cluster", "c1", namespace="default")
    assert stored["spec"]["clusterNetwork"] == {"services": {"cidrBlocks": ["x"]}, "pods": {"cidrBlocks": ["y"]}}
