"""MemoryStore: the API-server semantics of every Client call, each one passing and failing."""

from __future__ import annotations

import re
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from memory_support import fixed_store

from clusterclass.api.objects import Obj
from clusterclass.apiserver.inprocess_client import MemoryClient
from clusterclass.apiserver.store import MemoryStore, bundled_crds, plural_of
from clusterclass.kube.client import Client
from clusterclass.kube.errors import AlreadyExists, ApiError, BadRequest, Conflict, Forbidden, Invalid, NotFound

CAPI = "cluster.x-k8s.io/v1beta1"
T0 = datetime(2026, 1, 2, 3, 4, 5, 678, tzinfo=UTC)


class Clock:
    def __init__(self) -> None:
        self.now = T0

    def __call__(self) -> datetime:
        return self.now


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def store(clock: Clock) -> MemoryStore:
    return fixed_store(clock=clock)


def cluster(name: str = "c1", namespace: str = "default", **extra: Any) -> Obj:
    obj: Obj = {"apiVersion": CAPI, "kind": "Cluster", "metadata": {"name": name, "namespace": namespace}}
    obj.update(extra)
    return obj


def config_map(name: str = "cm", namespace: str = "default", **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


def exactly(message: str) -> str:
    """A ``pytest.raises(match=...)`` pattern for exactly ``message``."""
    return "^" + re.escape(message) + "$"


def status_of(err: pytest.ExceptionInfo[ApiError]) -> tuple[type[ApiError], int, str, str]:
    return type(err.value), err.value.code, err.value.reason, err.value.message


async def test_memory_client_is_a_client(store: MemoryStore) -> None:
    client: Client = MemoryClient(store)
    assert (await client.get("v1", "Namespace", "default"))["metadata"]["name"] == "default"


# -- create -------------------------------------------------------------------------------------------


def test_create_sets_system_metadata(store: MemoryStore) -> None:
    before = int(store.resource_version)
    created = store.create(cluster(spec={"paused": False}, status={"phase": "Provisioned"}))
    meta = created["metadata"]
    assert meta["uid"] == "uid-2"  # uid-1 is the default Namespace
    assert meta["creationTimestamp"] == "2026-01-02T03:04:05Z"
    assert meta["generation"] == 1
    assert meta["resourceVersion"] == str(before + 1) == store.resource_version
    assert "status" not in created  # the status subresource drops status on create
    assert store.get(CAPI, "Cluster", "c1", namespace="default") == created


def test_create_keeps_status_for_kinds_without_status_subresource(store: MemoryStore) -> None:
    store.register_kind("example.com/v1", "Thing", status_subresource=False)
    thing = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t", "namespace": "default"}}
    assert store.create({**thing, "status": {"x": 1}})["status"] == {"x": 1}


def test_builtin_kinds_have_no_generation(store: MemoryStore) -> None:
    assert "generation" not in store.create(config_map(a="1"))["metadata"]


def test_create_ignores_client_set_system_fields(store: MemoryStore) -> None:
    obj = cluster()
    obj["metadata"].update(
        {"generation": 7, "deletionTimestamp": "2020-01-01T00:00:00Z", "deletionGracePeriodSeconds": 30, "uid": "x"}
    )
    meta = store.create(obj)["metadata"]
    assert (meta["generation"], meta["uid"]) == (1, "uid-2")
    assert "deletionTimestamp" not in meta and "deletionGracePeriodSeconds" not in meta


def test_create_refuses_a_resource_version(store: MemoryStore) -> None:
    obj = cluster()
    obj["metadata"]["resourceVersion"] = "5"
    with pytest.raises(ApiError) as err:
        store.create(obj)
    assert status_of(err) == (
        ApiError,
        500,
        "InternalError",
        "resourceVersion should not be set on objects to be created",
    )


def test_create_duplicate_is_already_exists(store: MemoryStore) -> None:
    store.create(cluster())
    with pytest.raises(AlreadyExists) as err:
        store.create(cluster())
    assert status_of(err) == (AlreadyExists, 409, "AlreadyExists", 'clusters.cluster.x-k8s.io "c1" already exists')
    assert err.value.details == {"name": "c1", "group": "cluster.x-k8s.io", "kind": "clusters"}


def test_same_name_in_another_namespace_or_kind_is_fine(store: MemoryStore) -> None:
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    store.create(cluster())
    store.create(cluster(namespace="other"))
    store.create(config_map("c1"))
    assert len(store.list(CAPI, "Cluster")[0]) == 2


def test_create_in_a_missing_namespace(store: MemoryStore) -> None:
    with pytest.raises(NotFound) as err:
        store.create(cluster(namespace="nowhere"))
    assert status_of(err) == (NotFound, 404, "NotFound", 'namespaces "nowhere" not found')


def test_namespaced_object_needs_a_namespace(store: MemoryStore) -> None:
    obj = cluster()
    del obj["metadata"]["namespace"]
    with pytest.raises(BadRequest, match="needs a namespace"):
        store.create(obj)


def test_cluster_scoped_objects_drop_a_namespace(store: MemoryStore) -> None:
    ns = store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x", "namespace": "default"}})
    assert "namespace" not in ns["metadata"]
    assert ns["status"] == {"phase": "Active"}
    assert store.get("v1", "Namespace", "x", namespace="ignored")["metadata"]["uid"] == ns["metadata"]["uid"]


def test_generate_name(store: MemoryStore) -> None:
    obj = cluster(name="")
    obj["metadata"]["generateName"] = "c-"
    first = store.create(obj)["metadata"]["name"]
    second = store.create(obj)["metadata"]["name"]
    assert first != second
    for name in (first, second):
        assert name.startswith("c-") and len(name) == 7
        assert set(name[2:]) <= set("bcdfghjklmnpqrstvwxz2456789")


@pytest.mark.parametrize(
    ("kind", "name", "message"),
    [
        (
            "Cluster",
            "",
            # with the cause kube-apiserver adds for the CEL rules it did not run (the schema has some)
            'Cluster.cluster.x-k8s.io "" is invalid: [metadata.name: Required value: name or generateName is required,',
        ),
        (
            "Cluster",
            "Bad_Name",
            'Cluster.cluster.x-k8s.io "Bad_Name" is invalid: metadata.name: Invalid value: "Bad_Name": '
            "a lowercase RFC 1123 subdomain",
        ),
        ("Cluster", "x" * 254, "must be no more than 253 characters"),
        ("Namespace", "a.b", 'Namespace "a.b" is invalid: metadata.name: Invalid value: "a.b": a lowercase RFC 1123'),
        ("Namespace", "n" * 64, "must be no more than 63 characters"),
    ],
)
def test_create_invalid_names(store: MemoryStore, kind: str, name: str, message: str) -> None:
    obj = cluster(name) if kind == "Cluster" else {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}
    with pytest.raises(Invalid) as err:
        store.create(obj)
    assert err.value.code == 422
    assert message in err.value.message
    assert err.value.details["causes"][0]["field"] == "metadata.name"


@pytest.mark.parametrize(
    ("obj", "error", "message"),
    [
        ([], BadRequest, "must be a JSON object"),
        ({"kind": "Cluster", "metadata": {}}, BadRequest, "Object 'apiVersion' is missing"),
        ({"apiVersion": CAPI, "metadata": {}}, BadRequest, "Object 'Kind' is missing"),
        ({"apiVersion": CAPI, "kind": "Cluster"}, BadRequest, "Object 'metadata' is missing"),
        ({"apiVersion": "a/b/c", "kind": "Cluster", "metadata": {}}, BadRequest, "unexpected GroupVersion"),
        ({"apiVersion": CAPI, "kind": "Unknown", "metadata": {"name": "x"}}, NotFound, "the server could not find"),
        ({"apiVersion": "cluster.x-k8s.io/v9", "kind": "Cluster", "metadata": {"name": "x"}}, NotFound, "could not"),
    ],
)
def test_create_malformed_or_unknown(store: MemoryStore, obj: Any, error: type[ApiError], message: str) -> None:
    with pytest.raises(error, match=message):
        store.create(obj)


def test_dry_run_create_stores_nothing(store: MemoryStore) -> None:
    before = store.resource_version
    created = store.create(cluster(), dry_run=True)
    assert created["metadata"]["uid"] and created["metadata"]["creationTimestamp"]
    assert "resourceVersion" not in created["metadata"]
    assert store.resource_version == before
    with pytest.raises(NotFound):
        store.get(CAPI, "Cluster", "c1", namespace="default")
    store.create(cluster())
    with pytest.raises(AlreadyExists):
        store.create(cluster(), dry_run=True)


# -- get and list -------------------------------------------------------------------------------------


def test_get_missing(store: MemoryStore) -> None:
    with pytest.raises(NotFound) as err:
        store.get(CAPI, "Cluster", "c1", namespace="default")
    assert status_of(err) == (NotFound, 404, "NotFound", 'clusters.cluster.x-k8s.io "c1" not found')
    with pytest.raises(NotFound, match=exactly('configmaps "x" not found')):
        store.get("v1", "ConfigMap", "x", namespace="default")
    with pytest.raises(NotFound, match=exactly("the server could not find the requested resource")):
        store.get("example.com/v1", "Widget", "x", namespace="default")
    with pytest.raises(BadRequest):
        store.get(CAPI, "Cluster", "c1")


def test_returned_objects_are_copies(store: MemoryStore) -> None:
    obj = cluster(spec={"topology": {"class": "cc", "version": "v1"}})
    created = store.create(obj)
    obj["spec"]["topology"]["version"] = "mutated input"
    created["spec"]["topology"]["version"] = "mutated create result"
    got = store.get(CAPI, "Cluster", "c1", namespace="default")
    got["spec"]["topology"]["version"] = "mutated get result"
    store.list(CAPI, "Cluster")[0][0]["spec"]["topology"]["version"] = "mutated list result"
    assert store.get(CAPI, "Cluster", "c1", namespace="default")["spec"]["topology"]["version"] == "v1"


def test_objects_are_served_in_every_registered_version(store: MemoryStore) -> None:
    store.register_kind("cluster.x-k8s.io/v1beta2", "Cluster")
    store.create(cluster())
    assert store.get("cluster.x-k8s.io/v1beta2", "Cluster", "c1", namespace="default")["apiVersion"] == (
        "cluster.x-k8s.io/v1beta2"
    )
    assert store.get(CAPI, "Cluster", "c1", namespace="default")["apiVersion"] == CAPI


def test_list_filters_by_namespace_and_labels(store: MemoryStore) -> None:
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    for ns, name, labels in [
        ("default", "b", {"app": "web"}),
        ("default", "a", {"app": "db"}),
        ("other", "c", {"app": "web", "tier": "front"}),
        ("default", "d", {}),
    ]:
        obj = config_map(name, ns)
        obj["metadata"]["labels"] = labels
        store.create(obj)

    def names(**kwargs: Any) -> list[str]:
        items, version = store.list("v1", "ConfigMap", **kwargs)
        assert version == store.resource_version
        return [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in items]

    assert names() == ["default/a", "default/b", "default/d", "other/c"]
    assert names(namespace="default") == ["default/a", "default/b", "default/d"]
    assert names(label_selector="app=web") == ["default/b", "other/c"]
    assert names(label_selector="app") == ["default/a", "default/b", "other/c"]
    assert names(label_selector="!app") == ["default/d"]
    assert names(namespace="other", label_selector={"matchLabels": {"tier": "front"}}) == ["other/c"]
    assert names(label_selector="app notin (web)") == ["default/a", "default/d"]
    assert names(namespace="empty") == []
    assert [o["metadata"]["name"] for o in store.list("v1", "Namespace", namespace="x")[0]] == ["default", "other"]


def test_list_with_a_bad_selector_is_bad_request(store: MemoryStore) -> None:
    with pytest.raises(BadRequest, match="unable to parse label selector"):
        store.list("v1", "ConfigMap", label_selector="a in (")
    with pytest.raises(NotFound):
        store.list("v1", "Widget")


# -- update -------------------------------------------------------------------------------------------


def test_update_bumps_resource_version_and_generation_on_spec_change(store: MemoryStore) -> None:
    created = store.create(cluster(spec={"paused": True}))
    created["spec"]["controlPlaneEndpoint"] = {"host": "cp.example.com", "port": 6443}
    updated = store.update(created)
    assert updated["metadata"]["generation"] == 2
    assert int(updated["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]


def test_metadata_only_change_keeps_generation(store: MemoryStore) -> None:
    created = store.create(cluster(spec={"paused": False}))
    created["metadata"]["labels"] = {"a": "b"}
    updated = store.update(created)
    assert updated["metadata"]["generation"] == 1
    assert updated["metadata"]["labels"] == {"a": "b"}
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]


def test_update_ignores_status_for_status_subresource_kinds(store: MemoryStore) -> None:
    created = store.create(cluster(spec={}))
    created["status"] = {"phase": "Provisioned"}
    updated = store.update(created)
    assert "status" not in updated
    assert updated["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]  # a no-op


def test_update_of_a_kind_without_status_subresource_writes_status_and_bumps_generation(store: MemoryStore) -> None:
    store.register_kind("example.com/v1", "Thing", status_subresource=False)
    thing = {"apiVersion": "example.com/v1", "kind": "Thing", "metadata": {"name": "t", "namespace": "default"}}
    created = store.create({**thing, "spec": {}})
    created["status"] = {"x": 1}
    updated = store.update(created)
    assert updated["status"] == {"x": 1}
    assert updated["metadata"]["generation"] == 2


def test_noop_update_writes_nothing(store: MemoryStore) -> None:
    created = store.create(cluster(spec={"paused": False}))
    before = store.resource_version
    assert store.update(created) == created
    assert store.resource_version == before


def test_update_with_stale_resource_version_is_conflict(store: MemoryStore) -> None:
    created = store.create(cluster(spec={"paused": False}))
    store.update({**created, "spec": {"paused": True}})
    with pytest.raises(Conflict) as err:
        store.update({**created, "spec": {"paused": False, "x": 1}})
    assert status_of(err) == (
        Conflict,
        409,
        "Conflict",
        'Operation cannot be fulfilled on clusters.cluster.x-k8s.io "c1": the object has been modified; '
        "please apply your changes to the latest version and try again",
    )


def test_update_without_resource_version_is_unconditional_for_built_in_kinds(store: MemoryStore) -> None:
    created = store.create(config_map(a="1"))
    updated = store.update(config_map(a="2"))
    assert updated["data"] == {"a": "2"}
    assert updated["metadata"]["uid"] == created["metadata"]["uid"]
    assert updated["metadata"]["creationTimestamp"] == "2026-01-02T03:04:05Z"


def test_custom_resource_update_needs_a_resource_version(store: MemoryStore) -> None:
    store.create(cluster(spec={"paused": False}))
    with pytest.raises(Invalid) as err:
        store.update(cluster(spec={"paused": True}))
    assert err.value.message == (  # named after the resource, not the kind: the registry refuses it before validation
        'clusters.cluster.x-k8s.io "c1" is invalid: metadata.resourceVersion: Invalid value: 0: '
        "must be specified for an update"
    )


def test_update_keeps_system_metadata(store: MemoryStore, clock: Clock) -> None:
    created = store.create(cluster(spec={}))
    clock.now += timedelta(hours=1)
    changed = cluster(spec={})
    changed["metadata"].update(
        {
            "creationTimestamp": "2000-01-01T00:00:00Z",
            "generation": 40,
            "resourceVersion": created["metadata"]["resourceVersion"],
        }
    )
    updated = store.update(changed)
    assert updated == created
    changed["metadata"]["deletionTimestamp"] = "2000-01-01T00:00:00Z"
    with pytest.raises(Invalid) as err:  # only a delete starts deletion
        store.update(changed)
    assert {c["field"] for c in err.value.details["causes"]} == {"metadata.deletionTimestamp"}


def test_update_with_another_uid_fails_its_uid_precondition(store: MemoryStore) -> None:
    created = store.create(cluster())
    created["metadata"]["uid"] = "other"
    with pytest.raises(Conflict) as err:
        store.update(created)
    assert err.value.message == (
        'Operation cannot be fulfilled on clusters.cluster.x-k8s.io "c1": StorageError: invalid object, Code: 4, '
        "Key: /registry/cluster.x-k8s.io/clusters/default/c1, ResourceVersion: 0, AdditionalErrorMsg: "
        "Precondition failed: UID in precondition: other, UID in object meta: uid-2"
    )


@pytest.mark.parametrize(
    ("change", "error", "message"),
    [
        ({"name": "missing"}, NotFound, 'clusters.cluster.x-k8s.io "missing" not found'),
        ({"name": ""}, BadRequest, "resource name may not be empty"),
        ({"namespace": "nowhere"}, NotFound, 'clusters.cluster.x-k8s.io "c1" not found'),
    ],
)
def test_update_failures(store: MemoryStore, change: dict[str, str], error: type[ApiError], message: str) -> None:
    store.create(cluster())
    obj = cluster()
    obj["metadata"].update(change)
    with pytest.raises(error) as err:
        store.update(obj)
    assert err.value.message == message


def test_dry_run_update_stores_nothing(store: MemoryStore) -> None:
    created = store.create(cluster(spec={"paused": False}))
    before = store.resource_version
    result = store.update({**created, "spec": {"paused": True}}, dry_run=True)
    assert result["spec"] == {"paused": True}
    assert result["metadata"]["generation"] == 2
    assert result["metadata"]["resourceVersion"] == before
    assert store.get(CAPI, "Cluster", "c1", namespace="default") == created
    with pytest.raises(Conflict):
        store.update({**created, "metadata": {**created["metadata"], "resourceVersion": "1"}}, dry_run=True)


# -- status -------------------------------------------------------------------------------------------


def test_update_status_changes_only_status(store: MemoryStore) -> None:
    created = store.create(cluster(spec={"paused": True}))
    changed = {
        **created,
        "metadata": {**created["metadata"], "labels": {"ignored": "yes"}},
        "spec": {"paused": False},
        "status": {"phase": "Provisioned"},
    }
    updated = store.update_status(changed)
    assert updated["status"] == {"phase": "Provisioned"}
    assert updated["spec"] == {"paused": True}
    assert "labels" not in updated["metadata"]
    assert updated["metadata"]["generation"] == 1
    assert updated["metadata"]["resourceVersion"] != created["metadata"]["resourceVersion"]
    removed = store.update_status({k: v for k, v in updated.items() if k != "status"})
    assert "status" not in removed


def test_update_status_conflicts_and_unknown_subresource(store: MemoryStore) -> None:
    created = store.create(cluster())
    store.update_status({**created, "status": {"phase": "Pending"}})
    with pytest.raises(Conflict):
        store.update_status({**created, "status": {"phase": "Provisioning"}})
    store.create(config_map())
    with pytest.raises(NotFound, match="the server could not find the requested resource"):
        store.update_status({**config_map(), "status": {}})


# -- merge patch --------------------------------------------------------------------------------------


def test_patch_merge(store: MemoryStore) -> None:
    store.create(cluster(spec={"paused": False, "topology": {"class": "a", "version": "v1"}}))
    patched = store.patch_merge(
        CAPI,
        "Cluster",
        "c1",
        {"metadata": {"labels": {"x": "y"}}, "spec": {"paused": None, "topology": {"version": "v2"}}},
        namespace="default",
    )
    assert patched["spec"] == {"topology": {"class": "a", "version": "v2"}}
    assert patched["metadata"]["labels"] == {"x": "y"}
    assert patched["metadata"]["generation"] == 2
    assert store.get(CAPI, "Cluster", "c1", namespace="default") == patched


def test_patch_merge_follows_update_rules(store: MemoryStore) -> None:
    created = store.create(cluster(spec={"paused": True}))
    status_ignored = store.patch_merge(CAPI, "Cluster", "c1", {"status": {"phase": "x"}}, namespace="default")
    assert "status" not in status_ignored
    assert status_ignored["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    store.patch_merge(CAPI, "Cluster", "c1", {"spec": {"paused": None}}, namespace="default")
    with pytest.raises(Conflict):
        store.patch_merge(
            CAPI, "Cluster", "c1", {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}},
            namespace="default",
        )  # fmt: skip
    before = store.resource_version
    dry = store.patch_merge(CAPI, "Cluster", "c1", {"spec": {"paused": True}}, namespace="default", dry_run=True)
    assert dry["spec"] == {"paused": True}
    assert store.resource_version == before


@pytest.mark.parametrize(
    ("patch", "error", "message"),
    [
        ({"metadata": {"name": "other"}}, BadRequest, r"the name of the object \(other\) does not match"),
        ({"metadata": {"namespace": "x"}}, BadRequest, "does not match the namespace sent on the request"),
        ({"kind": "Machine"}, BadRequest, "may not change apiVersion or kind"),
        ({"metadata": None}, BadRequest, "metadata: must be an object"),
        ({"metadata": {"uid": "u"}}, Invalid, "field is immutable"),
    ],
)  # fmt: skip
def test_patch_merge_failures(store: MemoryStore, patch: Obj, error: type[ApiError], message: str) -> None:
    store.create(cluster())
    with pytest.raises(error, match=message):
        store.patch_merge(CAPI, "Cluster", "c1", patch, namespace="default")


def test_patch_merge_missing_object_or_bad_patch(store: MemoryStore) -> None:
    with pytest.raises(NotFound, match=exactly('clusters.cluster.x-k8s.io "c1" not found')):
        store.patch_merge(CAPI, "Cluster", "c1", {}, namespace="default")
    store.create(cluster())
    with pytest.raises(BadRequest, match="must be a JSON object"):
        store.patch_merge(CAPI, "Cluster", "c1", ["x"], namespace="default")  # type: ignore[arg-type]


# -- delete and finalizers ----------------------------------------------------------------------------


def test_delete_without_finalizers_removes(store: MemoryStore) -> None:
    store.create(cluster())
    before = int(store.resource_version)
    assert store.delete(CAPI, "Cluster", "c1", namespace="default") is None
    assert int(store.resource_version) == before + 1
    with pytest.raises(NotFound):
        store.get(CAPI, "Cluster", "c1", namespace="default")
    with pytest.raises(NotFound, match=exactly('clusters.cluster.x-k8s.io "c1" not found')):
        store.delete(CAPI, "Cluster", "c1", namespace="default")


def test_delete_with_finalizers_marks_then_last_finalizer_removal_deletes(store: MemoryStore, clock: Clock) -> None:
    obj = cluster(spec={})
    obj["metadata"]["finalizers"] = ["a", "b"]
    store.create(obj)
    clock.now += timedelta(minutes=5)
    marked = store.delete(CAPI, "Cluster", "c1", namespace="default")
    assert marked is not None
    assert marked["metadata"]["deletionTimestamp"] == "2026-01-02T03:09:05Z"
    assert marked["metadata"]["deletionGracePeriodSeconds"] == 0
    assert marked["metadata"]["generation"] == 2
    assert store.get(CAPI, "Cluster", "c1", namespace="default") == marked

    again = store.delete(CAPI, "Cluster", "c1", namespace="default")
    assert again == marked  # deleting again changes nothing

    marked["metadata"]["finalizers"] = ["b"]
    one_left = store.update(marked)
    assert one_left["metadata"]["deletionTimestamp"] == "2026-01-02T03:09:05Z"

    one_left["metadata"]["finalizers"] = []
    last = store.update(one_left)
    # kube-apiserver answers with the object as updated, at the resourceVersion it had (verified on 1.37)
    assert "finalizers" not in last["metadata"]
    assert last["metadata"]["resourceVersion"] == one_left["metadata"]["resourceVersion"]
    with pytest.raises(NotFound):
        store.get(CAPI, "Cluster", "c1", namespace="default")


def test_finalizer_removal_by_merge_patch_deletes(store: MemoryStore) -> None:
    obj = cluster()
    obj["metadata"]["finalizers"] = ["a"]
    store.create(obj)
    store.delete(CAPI, "Cluster", "c1", namespace="default")
    store.patch_merge(CAPI, "Cluster", "c1", {"metadata": {"finalizers": None}}, namespace="default")
    assert store.list(CAPI, "Cluster")[0] == []


def test_update_cannot_clear_a_deletion_timestamp(store: MemoryStore) -> None:
    obj = cluster(spec={})
    obj["metadata"]["finalizers"] = ["a"]
    store.create(obj)
    marked = store.delete(CAPI, "Cluster", "c1", namespace="default")
    assert marked is not None
    del marked["metadata"]["deletionTimestamp"]
    assert store.update(marked)["metadata"]["deletionTimestamp"] == "2026-01-02T03:04:05Z"


def test_no_new_finalizers_while_deleting(store: MemoryStore) -> None:
    obj = cluster()
    obj["metadata"]["finalizers"] = ["a"]
    store.create(obj)
    marked = store.delete(CAPI, "Cluster", "c1", namespace="default")
    assert marked is not None
    marked["metadata"]["finalizers"] = ["a", "new"]
    with pytest.raises(Invalid) as err:
        store.update(marked)
    assert err.value.message == (
        'Cluster.cluster.x-k8s.io "c1" is invalid: metadata.finalizers: Forbidden: no new finalizers can be added '
        'if the object is being deleted, found new finalizers []string{"new"}'
    )
    cause = {
        "reason": "FieldValueForbidden",
        "message": err.value.message.split("metadata.finalizers: ")[1],
        "field": "metadata.finalizers",
    }
    assert err.value.details["causes"] == [cause, cause]  # kube-apiserver checks a custom resource's metadata twice
    assert store.get(CAPI, "Cluster", "c1", namespace="default")["metadata"]["finalizers"] == ["a"]


def test_finalizers_may_be_added_before_deletion(store: MemoryStore) -> None:
    created = store.create(cluster())
    created["metadata"]["finalizers"] = ["a"]
    assert store.update(created)["metadata"]["finalizers"] == ["a"]


@pytest.mark.parametrize(
    ("preconditions", "message"),
    [
        (
            {"uid": "wrong"},
            "the UID in the precondition (wrong) does not match the UID in record (uid-2). "
            "The object might have been deleted and then recreated",
        ),
        (
            {"resourceVersion": "1"},
            "the ResourceVersion in the precondition (1) does not match the ResourceVersion in record (2). "
            "The object might have been modified",
        ),
    ],
)
def test_delete_preconditions_fail(store: MemoryStore, preconditions: Any, message: str) -> None:
    store.create(cluster())
    with pytest.raises(Conflict) as err:
        store.delete(CAPI, "Cluster", "c1", namespace="default", preconditions=preconditions)
    # as kube-apiserver 1.37 words it: the qualified kind, not the resource
    assert err.value.message == f'Operation cannot be fulfilled on Cluster.cluster.x-k8s.io "c1": {message}'
    assert err.value.details == {"name": "c1", "group": "cluster.x-k8s.io", "kind": "Cluster"}
    assert store.get(CAPI, "Cluster", "c1", namespace="default")


def test_delete_preconditions_hold(store: MemoryStore) -> None:
    meta = store.create(cluster())["metadata"]
    preconditions = {"uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}
    assert store.delete(CAPI, "Cluster", "c1", namespace="default", preconditions=preconditions) is None  # type: ignore[arg-type]


def test_delete_propagation_policy(store: MemoryStore) -> None:
    # with a spec: v1beta2 (the storage version, which the garbage collector writes in) requires one
    store.create(cluster(spec={"paused": True}))
    with pytest.raises(Invalid) as err:
        store.delete(CAPI, "Cluster", "c1", namespace="default", propagation_policy="Sideways")  # type: ignore[arg-type]
    assert err.value.message == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Sideways": '
        'supported values: "Foreground", "Background", "Orphan", "nil"'
    )
    assert err.value.details["causes"][0]["field"] == "propagationPolicy"
    answer = store.delete(CAPI, "Cluster", "c1", namespace="default", propagation_policy="Foreground")
    assert answer is not None and answer["metadata"]["finalizers"] == ["foregroundDeletion"]
    with pytest.raises(NotFound):  # no dependents: the garbage collector removed it before the answer
        store.get(CAPI, "Cluster", "c1", namespace="default")


# -- namespaces ---------------------------------------------------------------------------------------


def test_default_namespace_exists_from_the_start(store: MemoryStore) -> None:
    names = [o["metadata"]["name"] for o in store.list("v1", "Namespace")[0]]
    assert names == ["default"]


def test_deleting_a_namespace_deletes_its_content_and_terminates_it_until_finalizers_are_done(
    store: MemoryStore,
) -> None:
    """The namespace controller's work: content deleted at once, the namespace waits for finalizers."""
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    store.create(config_map("plain", "ns"))
    held = config_map("held", "ns")
    held["metadata"]["finalizers"] = ["example.com/hold"]
    store.create(held)
    store.create(cluster("c1", "ns"))
    assert store.delete("v1", "Namespace", "ns") is not None
    terminating = store.get("v1", "Namespace", "ns")
    assert terminating["status"]["phase"] == "Terminating"
    assert terminating["metadata"]["deletionTimestamp"]
    assert terminating["spec"] == {"finalizers": ["kubernetes"]}
    conditions = {c["type"]: (c["status"], c["reason"], c["message"]) for c in terminating["status"]["conditions"]}
    assert conditions["NamespaceContentRemaining"] == (
        "True",
        "SomeResourcesRemain",
        "Some resources are remaining: configmaps has 1 resource instances",
    )
    assert conditions["NamespaceFinalizersRemaining"] == (
        "True",
        "SomeFinalizersRemain",
        "Some content in the namespace has finalizers remaining: example.com/hold in 1 resource instances",
    )
    assert [o["metadata"]["name"] for o in store.list("v1", "ConfigMap", namespace="ns").items] == ["held"]
    assert store.list(CAPI, "Cluster", namespace="ns").items == []
    with pytest.raises(Forbidden) as err:
        store.create(config_map("b", "ns"))
    assert status_of(err) == (
        Forbidden,
        403,
        "Forbidden",
        'configmaps "b" is forbidden: unable to create new content in namespace ns because it is being terminated',
    )
    store.patch("v1", "ConfigMap", "held", {"metadata": {"finalizers": None}}, namespace="ns")
    with pytest.raises(NotFound, match='namespaces "ns" not found'):
        store.get("v1", "Namespace", "ns")


def test_a_namespace_finalizer_holds_the_emptied_namespace(store: MemoryStore) -> None:
    ns = {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns", "finalizers": ["example.com/x"]}}
    store.create(ns)
    store.create(config_map("a", "ns"))
    assert store.delete("v1", "Namespace", "ns") is not None
    terminating = store.get("v1", "Namespace", "ns")
    assert "finalizers" not in terminating["spec"]  # the namespace controller is done
    assert store.list("v1", "ConfigMap", namespace="ns").items == []
    store.patch("v1", "Namespace", "ns", {"metadata": {"finalizers": None}})
    with pytest.raises(NotFound):
        store.get("v1", "Namespace", "ns")


def test_namespaces_carry_the_kubernetes_finalizer_which_updates_cannot_change(store: MemoryStore) -> None:
    created = store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}, "spec": {}})
    assert created["spec"] == {"finalizers": ["kubernetes"]}
    assert created["status"] == {"phase": "Active"}
    created["spec"] = {"finalizers": []}
    assert store.update(created)["spec"] == {"finalizers": ["kubernetes"]}


def test_deleting_an_empty_namespace_removes_it(store: MemoryStore) -> None:
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    answer = store.delete("v1", "Namespace", "ns")
    assert answer is not None and answer["status"]["phase"] == "Terminating"  # as the API server answers
    with pytest.raises(NotFound):
        store.get("v1", "Namespace", "ns")


# -- the kind registry --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "plural"),
    [
        ("Cluster", "clusters"),
        ("ClusterClass", "clusterclasses"),
        ("MachineHealthCheck", "machinehealthchecks"),
        ("Policy", "policies"),
        ("Gateway", "gateways"),
        ("Box", "boxes"),
        ("Patch", "patches"),
        ("Mesh", "meshes"),
        ("Endpoints", "endpoints"),
    ],
)
def test_plural_of(kind: str, plural: str) -> None:
    assert plural_of(kind) == plural


def test_register_kind(store: MemoryStore) -> None:
    info = store.register_kind("example.com/v1", "Widget", namespaced=False, status_subresource=False)
    assert (info.resource, info.qualified_kind, info.versions) == (
        "widgets.example.com",
        "Widget.example.com",
        frozenset({"v1"}),
    )
    widget = store.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}, "spec": {}})
    assert widget["metadata"]["generation"] == 1
    assert store.register_kind("example.com/v2", "Widget", plural="widgetz").versions == {"v1", "v2"}
    with pytest.raises(NotFound, match=exactly('widgetz.example.com "x" not found')):
        store.get("example.com/v2", "Widget", "x", namespace="default")


def test_the_cluster_api_crds_are_installed_and_serve_their_kinds(store: MemoryStore) -> None:
    """Every bundled Cluster API CRD is stored, Established, and its kinds served as it says."""
    crds = bundled_crds()
    assert len(crds) == 18
    for crd in crds:
        spec = crd["spec"]
        stored = store.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", crd["metadata"]["name"])
        assert stored["spec"]["versions"] == spec["versions"]
        assert stored["metadata"]["resourceVersion"] == "1"
        assert {c["type"]: c["status"] for c in stored["status"]["conditions"]} == {
            "NamesAccepted": "True",
            "Established": "True",
        }
        for version in spec["versions"]:
            if not version.get("served"):
                continue
            info = store.kind_info(f"{spec['group']}/{version['name']}", spec["names"]["kind"])
            assert info.plural == spec["names"]["plural"]
            assert info.namespaced == (spec["scope"] == "Namespaced")
            assert info.has_status(version["name"]) == ("status" in (version.get("subresources") or {}))
            assert info.generation and info.crd == crd["metadata"]["name"]
