"""Create, read, update, delete: identity, resourceVersion, timestamps, names, namespaces, concurrency."""

from __future__ import annotations

import re

import pytest
from contract_support import assert_status, causes, cluster, config_map, rv

from clusterclass.kube.client import Client
from clusterclass.kube.errors import AlreadyExists, BadRequest, Conflict, Forbidden, Invalid, NotFound

RFC3339 = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$")


async def test_create_sets_uid_resource_version_and_creation_timestamp(client: Client, namespace: str) -> None:
    created = await client.create(config_map(namespace, "a", {"k": "v"}))
    meta = created["metadata"]
    assert meta["name"] == "a" and meta["namespace"] == namespace
    assert isinstance(meta["uid"], str) and len(meta["uid"]) == 36
    assert rv(created) > 0
    assert RFC3339.match(meta["creationTimestamp"])
    assert "generation" not in meta  # ConfigMaps keep no generation
    assert created["data"] == {"k": "v"}
    assert await client.get("v1", "ConfigMap", "a", namespace=namespace) == created


async def test_uids_are_unique_and_survive_updates(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    b = await client.create(config_map(namespace, "b"))
    assert a["metadata"]["uid"] != b["metadata"]["uid"]
    updated = await client.update({**a, "data": {"x": "1"}})
    assert updated["metadata"]["uid"] == a["metadata"]["uid"]
    assert updated["metadata"]["creationTimestamp"] == a["metadata"]["creationTimestamp"]


async def test_server_owned_metadata_in_an_update_is_ignored(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    meta = {**a["metadata"], "creationTimestamp": "2001-01-01T00:00:00Z"}
    updated = await client.update({**a, "metadata": meta, "data": {"x": "1"}})
    assert updated["metadata"]["creationTimestamp"] == a["metadata"]["creationTimestamp"]


async def test_an_update_with_another_uid_is_a_conflict(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    with pytest.raises(Conflict) as conflict:
        await client.update({**a, "metadata": {**a["metadata"], "uid": "00000000-0000-0000-0000-000000000000"}})
    assert_status(conflict.value, 409, "Conflict")


async def test_resource_versions_increase_with_every_write(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    b = await client.create(config_map(namespace, "b"))
    a2 = await client.update({**a, "data": {"x": "1"}})
    b2 = await client.patch("v1", "ConfigMap", "b", {"data": {"y": "2"}}, namespace=namespace)
    assert rv(a) < rv(b) < rv(a2) < rv(b2)
    listed = await client.list("v1", "ConfigMap", namespace=namespace)
    assert int(listed.resource_version) >= rv(b2)
    assert [o["metadata"]["name"] for o in listed.items] == ["a", "b"]


async def test_an_update_that_changes_nothing_keeps_the_resource_version(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a", {"k": "v"}), field_manager="m")
    again = await client.update(a, field_manager="m")
    assert rv(again) == rv(a)
    assert again == a


async def test_generate_name_appends_a_random_suffix(client: Client, namespace: str) -> None:
    created = await client.create(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"generateName": "gen-", "namespace": namespace}}
    )
    name = created["metadata"]["name"]
    assert re.fullmatch(r"gen-[a-z0-9]{5}", name)
    assert created["metadata"]["generateName"] == "gen-"


async def test_create_of_an_existing_name_is_already_exists(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a"))
    with pytest.raises(AlreadyExists) as exists:
        await client.create(config_map(namespace, "a"))
    assert_status(exists.value, 409, "AlreadyExists")
    assert exists.value.details["name"] == "a"
    assert exists.value.details["kind"] == "configmaps"
    assert exists.value.message == 'configmaps "a" already exists'


async def test_a_custom_resource_that_exists_names_its_group(client: Client, namespace: str) -> None:
    await client.create(cluster(namespace, "c1"))
    with pytest.raises(AlreadyExists) as exists:
        await client.create(cluster(namespace, "c1"))
    assert exists.value.details == {"name": "c1", "group": "cluster.x-k8s.io", "kind": "clusters"}
    assert exists.value.message == 'clusters.cluster.x-k8s.io "c1" already exists'


async def test_get_of_a_missing_object_is_not_found(client: Client, namespace: str) -> None:
    with pytest.raises(NotFound) as missing:
        await client.get("v1", "ConfigMap", "nope", namespace=namespace)
    assert_status(missing.value, 404, "NotFound")
    assert missing.value.details == {"name": "nope", "kind": "configmaps"}
    assert missing.value.message == 'configmaps "nope" not found'
    with pytest.raises(NotFound) as missing_cr:
        await client.get("cluster.x-k8s.io/v1beta1", "Cluster", "nope", namespace=namespace)
    assert missing_cr.value.message == 'clusters.cluster.x-k8s.io "nope" not found'


async def test_objects_live_in_their_namespace(client: Client, namespace: str) -> None:
    other = (await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "o-"}}))[
        "metadata"
    ]["name"]
    await client.create(config_map(namespace, "a", {"in": "first"}))
    await client.create(config_map(other, "a", {"in": "second"}))
    assert (await client.get("v1", "ConfigMap", "a", namespace=other))["data"] == {"in": "second"}
    with pytest.raises(NotFound):
        await client.get("v1", "ConfigMap", "b", namespace=other)
    everywhere = await client.list("v1", "ConfigMap", label_selector=None)
    mine = [o for o in everywhere.items if o["metadata"]["namespace"] in (namespace, other)]
    assert sorted((o["metadata"]["namespace"], o["metadata"]["name"]) for o in mine) == sorted(
        [(namespace, "a"), (other, "a")]
    )


async def test_a_missing_namespace_is_not_found(client: Client) -> None:
    with pytest.raises(NotFound) as missing:
        await client.create(config_map("no-such-namespace", "a"))
    assert_status(missing.value, 404, "NotFound")
    assert missing.value.details == {"name": "no-such-namespace", "kind": "namespaces"}
    assert missing.value.message == 'namespaces "no-such-namespace" not found'
    with pytest.raises(NotFound):
        await client.create(cluster("no-such-namespace", "c1"))


async def test_a_terminating_namespace_takes_no_new_objects(client: Client, namespace: str) -> None:
    # a finalizer on its content holds the namespace in Terminating even where a namespace controller runs
    await client.create(config_map(namespace, "keep", finalizers=["example.com/hold"]))
    marked = await client.delete("v1", "Namespace", namespace)
    assert marked is not None and marked["metadata"]["deletionTimestamp"]
    assert marked["status"]["phase"] == "Terminating"
    assert (await client.get("v1", "Namespace", namespace))["status"]["phase"] == "Terminating"
    with pytest.raises(Forbidden) as refused:
        await client.create(config_map(namespace, "new"))
    assert_status(refused.value, 403, "Forbidden")
    assert causes(refused.value) == [("NamespaceTerminating", "metadata.namespace")]
    assert refused.value.message == (
        f'configmaps "new" is forbidden: unable to create new content in namespace {namespace} '
        "because it is being terminated"
    )
    with pytest.raises(Forbidden):
        await client.create(cluster(namespace, "c1"))
    # what is already there can still be changed
    kept = await client.get("v1", "ConfigMap", "keep", namespace=namespace)
    await client.update({**kept, "data": {"still": "writable"}})


async def test_a_stale_resource_version_is_a_conflict(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    await client.update({**a, "data": {"x": "1"}})
    with pytest.raises(Conflict) as conflict:
        await client.update({**a, "data": {"x": "2"}})
    assert_status(conflict.value, 409, "Conflict")
    assert conflict.value.details == {"name": "a", "kind": "configmaps"}
    assert conflict.value.message == (
        'Operation cannot be fulfilled on configmaps "a": the object has been modified; '
        "please apply your changes to the latest version and try again"
    )
    assert (await client.get("v1", "ConfigMap", "a", namespace=namespace))["data"] == {"x": "1"}


async def test_a_stale_resource_version_in_a_merge_patch_is_a_conflict(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    await client.update({**a, "data": {"x": "1"}})
    with pytest.raises(Conflict):
        await client.patch(
            "v1",
            "ConfigMap",
            "a",
            {"metadata": {"resourceVersion": a["metadata"]["resourceVersion"]}},
            namespace=namespace,
        )


async def test_a_config_map_may_be_updated_without_a_resource_version(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    meta = {k: v for k, v in a["metadata"].items() if k != "resourceVersion"}
    updated = await client.update({**a, "metadata": meta, "data": {"x": "1"}})
    assert rv(updated) > rv(a)


async def test_a_custom_resource_update_needs_a_resource_version(client: Client, namespace: str) -> None:
    c = await client.create(cluster(namespace, "c1"))
    meta = {k: v for k, v in c["metadata"].items() if k != "resourceVersion"}
    with pytest.raises(Invalid) as invalid:
        await client.update({**c, "metadata": meta, "spec": {"paused": True}})
    assert_status(invalid.value, 422, "Invalid")
    assert causes(invalid.value) == [("FieldValueInvalid", "metadata.resourceVersion")]


async def test_update_of_a_missing_object_is_not_found(client: Client, namespace: str) -> None:
    with pytest.raises(NotFound):
        await client.update(
            {
                **config_map(namespace, "nope"),
                "metadata": {"name": "nope", "namespace": namespace, "resourceVersion": "1"},
            }
        )


async def test_invalid_names_and_labels_are_invalid(client: Client, namespace: str) -> None:
    with pytest.raises(Invalid) as bad_name:
        await client.create(config_map(namespace, "Not_A_Name"))
    assert_status(bad_name.value, 422, "Invalid")
    assert causes(bad_name.value) == [("FieldValueInvalid", "metadata.name")]
    assert bad_name.value.details["name"] == "Not_A_Name" and bad_name.value.details["kind"] == "ConfigMap"
    with pytest.raises(Invalid) as bad_label:
        await client.create(config_map(namespace, "a", labels={"a": "not a label value"}))
    assert causes(bad_label.value) == [("FieldValueInvalid", "metadata.labels")]
    with pytest.raises(Invalid) as bad_cr_name:
        await client.create(cluster(namespace, "Not_A_Name"))
    assert causes(bad_cr_name.value) == [("FieldValueInvalid", "metadata.name")]
    assert bad_cr_name.value.details["kind"] == "Cluster" and bad_cr_name.value.details["group"] == "cluster.x-k8s.io"


async def test_delete_removes_an_object_without_finalizers(client: Client, namespace: str) -> None:
    await client.create(config_map(namespace, "a"))
    assert await client.delete("v1", "ConfigMap", "a", namespace=namespace) is None
    with pytest.raises(NotFound):
        await client.get("v1", "ConfigMap", "a", namespace=namespace)
    with pytest.raises(NotFound) as again:
        await client.delete("v1", "ConfigMap", "a", namespace=namespace)
    assert again.value.details == {"name": "a", "kind": "configmaps"}


async def test_delete_preconditions_must_hold(client: Client, namespace: str) -> None:
    a = await client.create(config_map(namespace, "a"))
    with pytest.raises(Conflict) as wrong_uid:
        await client.delete(
            "v1", "ConfigMap", "a", namespace=namespace, preconditions={"uid": "00000000-0000-0000-0000-000000000000"}
        )
    assert_status(wrong_uid.value, 409, "Conflict")
    updated = await client.update({**a, "data": {"x": "1"}})
    with pytest.raises(Conflict):
        await client.delete(
            "v1",
            "ConfigMap",
            "a",
            namespace=namespace,
            preconditions={"resourceVersion": a["metadata"]["resourceVersion"]},
        )
    assert await client.get("v1", "ConfigMap", "a", namespace=namespace) == updated
    gone = await client.delete(
        "v1",
        "ConfigMap",
        "a",
        namespace=namespace,
        preconditions={"uid": a["metadata"]["uid"], "resourceVersion": updated["metadata"]["resourceVersion"]},
    )
    assert gone is None


async def test_cluster_scoped_objects_have_no_namespace(client: Client) -> None:
    created = await client.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"generateName": "scope-"}})
    assert "namespace" not in created["metadata"]
    assert created["status"] == {"phase": "Active"}
    assert created["spec"] == {"finalizers": ["kubernetes"]}
    name = created["metadata"]["name"]
    assert (await client.get("v1", "Namespace", name))["metadata"]["uid"] == created["metadata"]["uid"]
    assert created["metadata"]["labels"] == {"kubernetes.io/metadata.name": name}


async def test_a_bad_label_selector_is_a_bad_request(client: Client, namespace: str) -> None:
    with pytest.raises(BadRequest) as bad:
        await client.list("v1", "ConfigMap", namespace=namespace, label_selector="a in (")
    assert_status(bad.value, 400, "BadRequest")
