"""Cluster API kinds in two versions: stored in v1beta2, read, listed, watched and written in v1beta1 or v1beta2.

The CRDs serve v1beta1 (deprecated) and v1beta2 (stored) and convert through Cluster API's conversion webhook:
on the real server the harness's webhook (``clusterclass.webhooks.conversion``), in the embedded store the same
conversions in process. So every backend must answer alike: the field moves (``spec.topology.class`` is
``spec.topology.classRef.name`` in v1beta2), the ``cluster.x-k8s.io/conversion-data`` annotation on every
v1beta1 answer (the hub object without its metadata, so that nothing is lost on the way back) and on no v1beta2
one, one uid and resourceVersion whatever the version, and server-side apply entries that keep their own
apiVersion, conflicts between them included.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from contract_support import CAPI, CAPI_V1BETA2, Events, assert_status, causes, rv, summary

from clusterclass.api.objects import Obj
from clusterclass.kube.client import Client
from clusterclass.kube.errors import ApiError, Conflict, NotFound

CONVERSION_DATA = "cluster.x-k8s.io/conversion-data"

#: the same topology in each version's spelling
V1BETA1_TOPOLOGY: dict[str, Any] = {"class": "quick-start", "version": "v1.30.0", "controlPlane": {"replicas": 3}}
V1BETA2_TOPOLOGY: dict[str, Any] = {
    "classRef": {"name": "quick-start"},
    "version": "v1.30.0",
    "controlPlane": {"replicas": 3},
}


def cluster_in(api_version: str, namespace: str, name: str, spec: dict[str, Any], **meta: Any) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": spec,
    }


def annotations(obj: Obj) -> dict[str, str]:
    return dict(obj["metadata"].get("annotations") or {})


def hub_without_metadata(obj: Obj) -> dict[str, Any]:
    """What a down-converted object keeps in its conversion-data annotation (upstream's ``MarshalData``)."""
    return {key: value for key, value in obj.items() if key != "metadata"}


def entries(obj: Obj) -> dict[str, tuple[str, dict[str, Any]]]:
    """managedFields by manager: (apiVersion, fieldsV1)."""
    return {e["manager"]: (e["apiVersion"], e["fieldsV1"]) for e in obj["metadata"].get("managedFields") or []}


# -- reads ------------------------------------------------------------------------------------------


async def test_a_cluster_written_in_v1beta1_is_read_in_v1beta2(client: Client, namespace: str) -> None:
    created = await client.create(
        cluster_in(CAPI, namespace, "c1", {"topology": V1BETA1_TOPOLOGY}, labels={"team": "a"})
    )
    assert (created["apiVersion"], created["spec"]) == (CAPI, {"topology": V1BETA1_TOPOLOGY})

    newer = await client.get(CAPI_V1BETA2, "Cluster", "c1", namespace=namespace)
    assert (newer["apiVersion"], newer["kind"]) == (CAPI_V1BETA2, "Cluster")
    assert newer["spec"] == {"topology": V1BETA2_TOPOLOGY}
    assert newer["metadata"]["labels"] == {"team": "a"}
    assert CONVERSION_DATA not in annotations(newer)
    # one object, whatever the version it is read in
    for key in ("uid", "resourceVersion", "generation", "creationTimestamp"):
        assert newer["metadata"][key] == created["metadata"][key]

    # a v1beta1 answer carries the stored (hub) object in its annotation
    older = await client.get(CAPI, "Cluster", "c1", namespace=namespace)
    assert older == created
    assert set(annotations(older)) == {CONVERSION_DATA}
    assert json.loads(annotations(older)[CONVERSION_DATA]) == hub_without_metadata(newer)


async def test_a_cluster_written_in_v1beta2_is_read_in_v1beta1(client: Client, namespace: str) -> None:
    # paused: false is kept in v1beta2 (a *bool) and lost in v1beta1 (a bool), but for the annotation
    spec = {"paused": False, "topology": V1BETA2_TOPOLOGY}
    created = await client.create(cluster_in(CAPI_V1BETA2, namespace, "c1", spec, annotations={"note": "mine"}))
    assert (created["apiVersion"], created["spec"]) == (CAPI_V1BETA2, spec)
    assert annotations(created) == {"note": "mine"}

    older = await client.get(CAPI, "Cluster", "c1", namespace=namespace)
    assert older["apiVersion"] == CAPI
    assert older["spec"] == {"topology": V1BETA1_TOPOLOGY}
    assert annotations(older)["note"] == "mine"
    assert json.loads(annotations(older)[CONVERSION_DATA]) == hub_without_metadata(created)
    assert rv(older) == rv(created)

    # written back in v1beta1 with the annotation, the v1beta2 object loses nothing; without it, what v1beta1
    # cannot say is gone (and only the storage form changed: the generation stays)
    labelled = await client.update({**older, "metadata": {**older["metadata"], "labels": {"a": "b"}}})
    assert labelled["spec"] == {"topology": V1BETA1_TOPOLOGY}
    assert (await client.get(CAPI_V1BETA2, "Cluster", "c1", namespace=namespace))["spec"] == spec
    bare = {k: v for k, v in labelled["metadata"].items() if k != "annotations"}
    rewritten = await client.update({**labelled, "metadata": {**bare, "annotations": {"note": "mine"}}})
    assert rv(rewritten) > rv(labelled) and rewritten["metadata"]["generation"] == 1
    newer = await client.get(CAPI_V1BETA2, "Cluster", "c1", namespace=namespace)
    assert newer["spec"] == {"topology": V1BETA2_TOPOLOGY}
    assert annotations(newer) == {"note": "mine"}


async def test_list_in_either_version(client: Client, namespace: str) -> None:
    await client.create(cluster_in(CAPI, namespace, "old", {"topology": V1BETA1_TOPOLOGY}, labels={"gen": "1"}))
    await client.create(cluster_in(CAPI_V1BETA2, namespace, "new", {"topology": V1BETA2_TOPOLOGY}, labels={"gen": "2"}))

    older = await client.list(CAPI, "Cluster", namespace=namespace)
    assert [(o["apiVersion"], o["metadata"]["name"], o["spec"]) for o in older.items] == [
        (CAPI, "new", {"topology": V1BETA1_TOPOLOGY}),
        (CAPI, "old", {"topology": V1BETA1_TOPOLOGY}),
    ]
    assert all(CONVERSION_DATA in annotations(o) for o in older.items)

    newer = await client.list(CAPI_V1BETA2, "Cluster", namespace=namespace)
    assert [(o["apiVersion"], o["metadata"]["name"], o["spec"]) for o in newer.items] == [
        (CAPI_V1BETA2, "new", {"topology": V1BETA2_TOPOLOGY}),
        (CAPI_V1BETA2, "old", {"topology": V1BETA2_TOPOLOGY}),
    ]
    assert not any(CONVERSION_DATA in annotations(o) for o in newer.items)
    assert [rv(o) for o in newer.items] == [rv(o) for o in older.items]

    selected = await client.list(CAPI_V1BETA2, "Cluster", namespace=namespace, label_selector="gen=1")
    assert [(o["metadata"]["name"], o["apiVersion"]) for o in selected.items] == [("old", CAPI_V1BETA2)]


async def test_watch_in_either_version(client: Client, namespace: str) -> None:
    listed = await client.list(CAPI, "Cluster", namespace=namespace)
    older = Events(client.watch(CAPI, "Cluster", namespace=namespace, resource_version=listed.resource_version))
    newer = Events(client.watch(CAPI_V1BETA2, "Cluster", namespace=namespace, resource_version=listed.resource_version))
    try:
        await client.create(cluster_in(CAPI_V1BETA2, namespace, "c1", {"topology": V1BETA2_TOPOLOGY}))
        await client.patch(CAPI, "Cluster", "c1", {"spec": {"topology": {"class": "other"}}}, namespace=namespace)
        await client.delete(CAPI_V1BETA2, "Cluster", "c1", namespace=namespace)
        seen_older = await older.take(3)
        seen_newer = await newer.take(3)
    finally:
        await older.close()
        await newer.close()
    expected = [("ADDED", "c1"), ("MODIFIED", "c1"), ("DELETED", "c1")]
    assert summary(seen_older) == summary(seen_newer) == expected
    assert [rv(e["object"]) for e in seen_older] == [rv(e["object"]) for e in seen_newer]
    assert {e["object"]["apiVersion"] for e in seen_older} == {CAPI}
    assert {e["object"]["apiVersion"] for e in seen_newer} == {CAPI_V1BETA2}
    assert [e["object"]["spec"]["topology"]["class"] for e in seen_older] == ["quick-start", "other", "other"]
    assert [e["object"]["spec"]["topology"]["classRef"] for e in seen_newer] == [
        {"name": "quick-start"},
        {"name": "other"},
        {"name": "other"},
    ]
    assert all(CONVERSION_DATA in annotations(e["object"]) for e in seen_older)
    assert not any(CONVERSION_DATA in annotations(e["object"]) for e in seen_newer)


# -- writes -----------------------------------------------------------------------------------------


async def test_a_merge_patch_in_v1beta1_of_an_object_stored_in_v1beta2(client: Client, namespace: str) -> None:
    created = await client.create(
        cluster_in(CAPI_V1BETA2, namespace, "c1", {"topology": V1BETA2_TOPOLOGY}), field_manager="creator"
    )
    patched = await client.patch(
        CAPI, "Cluster", "c1", {"spec": {"topology": {"class": "other"}}}, namespace=namespace, field_manager="patcher"
    )
    # the patch applies to the object as v1beta1 serves it; the rest of the object is kept
    assert patched["apiVersion"] == CAPI
    assert patched["spec"] == {"topology": {**V1BETA1_TOPOLOGY, "class": "other"}}
    assert patched["metadata"]["generation"] == 2 and rv(patched) > rv(created)
    newer = await client.get(CAPI_V1BETA2, "Cluster", "c1", namespace=namespace)
    assert newer["spec"] == {"topology": {**V1BETA2_TOPOLOGY, "classRef": {"name": "other"}}}
    # each writer's fields in its own version: the patcher's in v1beta1; the creator lost classRef.name
    owners = entries(newer)
    assert owners["patcher"] == (CAPI, {"f:spec": {"f:topology": {"f:class": {}}}})
    creator_version, creator_fields = owners["creator"]
    assert creator_version == CAPI_V1BETA2
    assert "f:name" not in creator_fields["f:spec"]["f:topology"]["f:classRef"]
    assert "f:replicas" in creator_fields["f:spec"]["f:topology"]["f:controlPlane"]

    # a JSON patch in v1beta1 names v1beta1's paths
    json_patched = await client.patch(
        CAPI,
        "Cluster",
        "c1",
        [
            {"op": "test", "path": "/spec/topology/class", "value": "other"},
            {"op": "replace", "path": "/spec/topology/version", "value": "v1.31.0"},
        ],
        patch_type="json",
        namespace=namespace,
    )
    assert json_patched["spec"]["topology"]["version"] == "v1.31.0"
    assert (await client.get(CAPI_V1BETA2, "Cluster", "c1", namespace=namespace))["spec"]["topology"] == {
        **V1BETA2_TOPOLOGY,
        "classRef": {"name": "other"},
        "version": "v1.31.0",
    }


async def test_apply_in_both_versions_by_two_managers(client: Client, namespace: str) -> None:
    older = await client.apply(cluster_in(CAPI, namespace, "c1", {"topology": V1BETA1_TOPOLOGY}), field_manager="old")
    newer = await client.apply(
        cluster_in(CAPI_V1BETA2, namespace, "c1", {"topology": V1BETA2_TOPOLOGY}), field_manager="new"
    )
    # the same values in each version's spelling: shared, no conflict, and only the managedFields change
    assert newer["spec"] == {"topology": V1BETA2_TOPOLOGY}
    assert older["metadata"]["generation"] == newer["metadata"]["generation"] == 1
    owners = entries(newer)
    assert owners["old"] == (
        CAPI,
        {"f:spec": {"f:topology": {"f:class": {}, "f:controlPlane": {"f:replicas": {}}, "f:version": {}}}},
    )
    assert owners["new"] == (
        CAPI_V1BETA2,
        {
            "f:spec": {
                "f:topology": {"f:classRef": {"f:name": {}}, "f:controlPlane": {"f:replicas": {}}, "f:version": {}}
            }
        },
    )

    # another class conflicts with both, each at the field in its own version
    other_class = cluster_in(CAPI_V1BETA2, namespace, "c1", {"topology": {"classRef": {"name": "other"}}})
    with pytest.raises(Conflict) as conflict:
        await client.apply(other_class, field_manager="third")
    assert causes(conflict.value) == [
        ("FieldManagerConflict", ".spec.topology.class"),
        ("FieldManagerConflict", ".spec.topology.classRef.name"),
    ]
    assert {c["message"] for c in conflict.value.details["causes"]} == {'conflict with "old"', 'conflict with "new"'}

    # forced: the field leaves both, in their versions; the v1beta1 applier now conflicts with a v1beta2 one
    forced = await client.apply(other_class, field_manager="third", force=True)
    assert forced["spec"]["topology"]["classRef"] == {"name": "other"}
    owners = entries(forced)
    assert "f:class" not in owners["old"][1]["f:spec"]["f:topology"]
    assert "f:classRef" not in owners["new"][1]["f:spec"]["f:topology"]
    assert owners["third"] == (CAPI_V1BETA2, {"f:spec": {"f:topology": {"f:classRef": {"f:name": {}}}}})
    with pytest.raises(Conflict) as back:
        await client.apply(cluster_in(CAPI, namespace, "c1", {"topology": V1BETA1_TOPOLOGY}), field_manager="old")
    assert causes(back.value) == [("FieldManagerConflict", ".spec.topology.classRef.name")]
    assert back.value.details["causes"][0]["message"] == 'conflict with "third"'


async def test_an_applier_moving_to_v1beta2_stops_owning_what_it_no_longer_applies(
    client: Client, namespace: str
) -> None:
    spec = {"paused": True, "topology": V1BETA1_TOPOLOGY}
    await client.apply(cluster_in(CAPI, namespace, "c1", spec), field_manager="m")
    moved = await client.apply(
        cluster_in(CAPI_V1BETA2, namespace, "c1", {"topology": {**V1BETA2_TOPOLOGY, "version": "v1.31.0"}}),
        field_manager="m",
    )
    # what m applied in v1beta1 and no longer applies (paused) is removed, found in m's last apply's version
    assert moved["spec"] == {"topology": {**V1BETA2_TOPOLOGY, "version": "v1.31.0"}}
    assert [(e["manager"], e["apiVersion"]) for e in moved["metadata"]["managedFields"]] == [("m", CAPI_V1BETA2)]


async def test_an_apply_in_v1beta2_may_not_use_v1beta1_fields(client: Client, namespace: str) -> None:
    config = cluster_in(CAPI_V1BETA2, namespace, "c1", {"topology": V1BETA1_TOPOLOGY})
    with pytest.raises(ApiError) as refused:
        await client.apply(config, field_manager="m")
    assert_status(refused.value, 500, "InternalError")
    assert refused.value.message == (
        f"failed to create typed patch object ({namespace}/c1; cluster.x-k8s.io/v1beta2, Kind=Cluster): "
        ".spec.topology.class: field not declared in schema"
    )
    with pytest.raises(NotFound):
        await client.get(CAPI_V1BETA2, "Cluster", "c1", namespace=namespace)


# -- per-version subresources and the installed CRDs ------------------------------------------------


DOCKER = "infrastructure.cluster.x-k8s.io"


def docker_machine_template(api_version: str, namespace: str, name: str) -> Obj:
    return {
        "apiVersion": api_version,
        "kind": "DockerMachineTemplate",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {"template": {"spec": {"extraMounts": [{"containerPath": "/a", "hostPath": "/b"}]}}},
    }


async def test_subresources_are_per_version(client: Client, namespace: str) -> None:
    """DockerMachineTemplate has a status (and a status subresource) in v1beta2 only."""
    assert (await client.resource(f"{DOCKER}/v1beta1", "DockerMachineTemplate")).subresources == frozenset()
    assert (await client.resource(f"{DOCKER}/v1beta2", "DockerMachineTemplate")).subresources == {"status"}
    created = await client.create(docker_machine_template(f"{DOCKER}/v1beta2", namespace, "t"))
    capacity = {"capacity": {"cpu": "2"}}
    with_status = await client.update_status({**created, "status": capacity})
    assert with_status["status"] == capacity and with_status["metadata"]["generation"] == 1

    older = await client.get(f"{DOCKER}/v1beta1", "DockerMachineTemplate", "t", namespace=namespace)
    assert "status" not in older  # v1beta1 has none: kept in the annotation
    assert json.loads(annotations(older)[CONVERSION_DATA])["status"] == capacity
    with pytest.raises(NotFound) as missing:
        await client.update_status({**older, "status": capacity})
    assert missing.value.details == {"name": "t", "group": DOCKER, "kind": "dockermachinetemplates"}
    with pytest.raises(NotFound) as missing:
        await client.patch(
            f"{DOCKER}/v1beta1", "DockerMachineTemplate", "t", {"status": capacity}, namespace=namespace, status=True
        )
    assert missing.value.details == {"name": "t", "group": DOCKER, "kind": "dockermachinetemplates"}

    # a v1beta1 write carrying the annotation keeps the v1beta2 status
    mounts = [{"containerPath": "/a", "hostPath": "/b", "readOnly": True}]
    older["spec"]["template"]["spec"]["extraMounts"] = mounts
    updated = await client.update(older)
    assert updated["metadata"]["generation"] == 2
    newer = await client.get(f"{DOCKER}/v1beta2", "DockerMachineTemplate", "t", namespace=namespace)
    assert newer["status"] == capacity and newer["spec"]["template"]["spec"]["extraMounts"] == mounts

    # and v1beta1's schema has no status to apply
    config = {**docker_machine_template(f"{DOCKER}/v1beta1", namespace, "u"), "status": capacity}
    with pytest.raises(ApiError) as refused:
        await client.apply(config, field_manager="m")
    assert_status(refused.value, 500, "InternalError")
    assert refused.value.message.endswith(".status: field not declared in schema")


async def test_the_installed_cluster_api_crds_convert_through_a_webhook(client: Client) -> None:
    crd = await client.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "clusters.cluster.x-k8s.io")
    assert crd["metadata"]["labels"] == {"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"}
    versions = [(v["name"], v["served"], v["storage"], v.get("deprecated", False)) for v in crd["spec"]["versions"]]
    assert versions == [("v1beta1", True, False, True), ("v1beta2", True, True, False)]
    conversion = crd["spec"]["conversion"]
    assert conversion["strategy"] == "Webhook"
    assert conversion["webhook"]["conversionReviewVersions"] == ["v1"]
    assert crd["status"]["storedVersions"] == ["v1beta2"]
