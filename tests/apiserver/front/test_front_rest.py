"""The REST semantics of the front, request by request, against the in-process app.

Expected codes and messages are kube-apiserver 1.37's own, read from a real server with the same
requests (see the report of the helper that wrote this front).
"""

from __future__ import annotations

from typing import Any

import pytest
from front_support import Api

from clusterclass.apiserver.store import MemoryStore

CM = "/api/v1/namespaces/default/configmaps"
CL = "/apis/cluster.x-k8s.io/v1beta1/namespaces/default/clusters"
CAPI = "cluster.x-k8s.io/v1beta1"


def config_map(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, **extra}


def cluster(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": CAPI, "kind": "Cluster", "metadata": {"name": name}, **extra}


# -- reads ---------------------------------------------------------------------------------------------


async def test_create_then_get_and_list(api: Api) -> None:
    status, created = await api.call("POST", CM, config_map("a", data={"k": "v"}))
    assert status == 201
    assert created["metadata"]["namespace"] == "default"
    assert created["metadata"]["uid"] and created["metadata"]["resourceVersion"]
    status, got = await api.call("GET", f"{CM}/a")
    assert (status, got) == (200, created)
    status, listed = await api.call("GET", CM)
    assert status == 200
    assert listed["kind"] == "ConfigMapList" and listed["apiVersion"] == "v1"
    assert [item["metadata"]["name"] for item in listed["items"]] == ["a"]
    assert int(listed["metadata"]["resourceVersion"]) >= int(created["metadata"]["resourceVersion"])


async def test_list_across_namespaces_and_by_selectors(api: Api) -> None:
    await api.call("POST", "/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "n2"}})
    await api.call("POST", CL, cluster("c1", metadata={"name": "c1", "labels": {"tier": "a"}}))
    await api.call("POST", CL.replace("default", "n2"), cluster("c2", metadata={"name": "c2", "labels": {"tier": "b"}}))
    everywhere = "/apis/cluster.x-k8s.io/v1beta1/clusters"
    status, listed = await api.call("GET", everywhere)
    assert status == 200
    assert [(i["metadata"]["namespace"], i["metadata"]["name"]) for i in listed["items"]] == [
        ("default", "c1"),
        ("n2", "c2"),
    ]
    _, by_label = await api.call("GET", f"{everywhere}?labelSelector=tier%3Db")
    assert [i["metadata"]["name"] for i in by_label["items"]] == ["c2"]
    _, by_field = await api.call("GET", f"{everywhere}?fieldSelector=metadata.namespace%3Ddefault")
    assert [i["metadata"]["name"] for i in by_field["items"]] == ["c1"]
    _, not_name = await api.call("GET", f"{everywhere}?fieldSelector=metadata.name!%3Dc1")
    assert [i["metadata"]["name"] for i in not_name["items"]] == ["c2"]


async def test_bad_selectors_are_400(api: Api) -> None:
    status, body = await api.call("GET", f"{CL}?fieldSelector=spec.paused%3Dtrue")
    assert (status, body["reason"], body["message"]) == (400, "BadRequest", "field label not supported: spec.paused")
    status, body = await api.call("GET", f"{CM}?fieldSelector=data.x%3D1")
    assert body["message"] == '"data.x" is not a known field selector: only "metadata.name", "metadata.namespace"'
    status, body = await api.call("GET", f"{CM}?labelSelector=a%20in%20")
    assert (status, body["reason"]) == (400, "BadRequest")


async def test_unknown_paths_and_methods(api: Api) -> None:
    not_found = "the server could not find the requested resource"
    for path in (
        "/api/v1/widgets",
        "/apis/cluster.x-k8s.io/v1beta1/clusters/x",  # namespaced kind by name without a namespace
        "/api/v1/namespaces/default/namespaces",  # cluster-scoped kind under a namespace
        f"{CM}/a/status",  # no status subresource
        "/apis/nope.io/v1/things",
        "/nonsense",
    ):
        status, body = await api.call("GET", path)
        assert (status, body["reason"], body["message"]) == (404, "NotFound", not_found), path
    status, body = await api.call("POST", f"{CM}/a", config_map("a"))
    assert (status, body["reason"]) == (405, "MethodNotAllowed")


async def test_get_missing_object_is_not_found_with_details(api: Api) -> None:
    status, body = await api.call("GET", f"{CL}/nope")
    assert status == 404
    assert body["message"] == 'clusters.cluster.x-k8s.io "nope" not found'
    assert body["details"] == {"name": "nope", "kind": "clusters", "group": "cluster.x-k8s.io"}


# -- create and update -------------------------------------------------------------------------------


async def test_body_must_match_the_path(api: Api) -> None:
    status, body = await api.call("POST", CM, {**config_map("a"), "metadata": {"name": "a", "namespace": "other"}})
    assert (status, body["message"]) == (
        400,
        "the namespace of the provided object does not match the namespace sent on the request",
    )
    await api.call("POST", CM, config_map("a"))
    status, body = await api.call("PUT", f"{CM}/b", config_map("a"))
    assert (status, body["message"]) == (400, "the name of the object (a) does not match the name on the URL (b)")
    status, body = await api.call("POST", CL, {**cluster("x"), "apiVersion": "cluster.x-k8s.io/v1alpha9"})
    assert (status, body["message"]) == (
        400,
        "the API version in the data (cluster.x-k8s.io/v1alpha9) does not match the expected API version "
        "(cluster.x-k8s.io/v1beta1)",
    )


async def test_wrong_kind_is_400_for_builtin_and_422_for_custom_resources(api: Api) -> None:
    status, body = await api.call("POST", CM, {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "x1"}})
    assert (status, body["message"]) == (
        400,
        'Secret in version "v1" cannot be handled as a ConfigMap: converting (v1.Secret) to (core.ConfigMap): '
        "unknown conversion",
    )
    status, body = await api.call("POST", CL, {"apiVersion": CAPI, "kind": "Machine", "metadata": {"name": "x1"}})
    assert status == 422
    assert (
        body["message"] == 'Machine.cluster.x-k8s.io "x1" is invalid: kind: Invalid value: "Machine": must be Cluster'
    )
    assert body["details"]["causes"] == [
        {"reason": "FieldValueInvalid", "message": 'Invalid value: "Machine": must be Cluster', "field": "kind"}
    ]


async def test_builtin_kinds_may_leave_out_kind_custom_resources_may_not(api: Api) -> None:
    status, created = await api.call("POST", CM, {"metadata": {"name": "bare"}})
    assert status == 201 and created["kind"] == "ConfigMap" and created["apiVersion"] == "v1"
    status, body = await api.call("POST", CL, {"metadata": {"name": "x1"}})
    assert status == 400
    assert body["message"] == (
        "the object provided is unrecognized (must be of type Cluster): "
        """Object 'Kind' is missing in '{"metadata":{"name":"x1"}}'"""
    )


async def test_body_that_is_not_json_is_400(api: Api) -> None:
    status, body = await api.call("POST", CM, raw=b'{"metadata":{"name":"x1"')
    assert status == 400
    assert body["message"].startswith(
        "the object provided is unrecognized (must be of type ConfigMap): couldn't get version/kind; json parse error"
    )


async def test_duplicate_fields_follow_field_validation(api: Api) -> None:
    raw = b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"x3","name":"x4"}}'
    status, body = await api.call("POST", f"{CM}?fieldValidation=Strict", raw=raw)
    assert (status, body["message"]) == (
        400,
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: '
        'duplicate field "metadata.name"',
    )
    status, headers, created = await api.response("POST", f"{CM}?fieldValidation=Warn", raw=raw)
    assert (status, created["metadata"]["name"]) == (201, "x4")
    assert headers["Warning"] == '299 - "duplicate field \\"metadata.name\\""'
    ignored = raw.replace(b"x3", b"x5").replace(b"x4", b"x6")
    status, created = await api.call("POST", f"{CM}?fieldValidation=Ignore", raw=ignored)
    assert (status, created["metadata"]["name"]) == (201, "x6")


async def test_write_options_are_checked(api: Api) -> None:
    status, body = await api.call("POST", f"{CM}?dryRun=foo", config_map("a"))
    assert status == 422
    assert (
        body["message"]
        == 'CreateOptions.meta.k8s.io "" is invalid: dryRun: Unsupported value: ["foo"]: supported values: "All"'
    )
    assert body["details"]["kind"] == "CreateOptions" and body["details"]["group"] == "meta.k8s.io"
    status, body = await api.call("PUT", f"{CM}/a?fieldValidation=Bogus", config_map("a"))
    assert body["message"] == (
        'UpdateOptions.meta.k8s.io "" is invalid: fieldValidation: Unsupported value: "Bogus": supported values: '
        '"", "Ignore", "Strict", "Warn"'
    )
    status, body = await api.call("POST", f"{CM}?fieldManager={'m' * 129}", config_map("a"))
    assert (
        body["message"]
        == 'CreateOptions.meta.k8s.io "" is invalid: fieldManager: Too long: may not be more than 128 bytes'
    )


async def test_update_with_stale_resource_version_conflicts(api: Api) -> None:
    _, created = await api.call("POST", CM, config_map("a", data={"k": "1"}))
    status, updated = await api.call("PUT", f"{CM}/a", {**created, "data": {"k": "2"}})
    assert status == 200 and updated["data"] == {"k": "2"}
    status, body = await api.call("PUT", f"{CM}/a", {**created, "data": {"k": "3"}})
    assert (status, body["reason"]) == (409, "Conflict")
    assert "the object has been modified" in body["message"]


async def test_update_of_missing_object_is_not_found_except_for_leases(api: Api) -> None:
    status, _ = await api.call("PUT", f"{CM}/nx", config_map("nx"))
    assert status == 404
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "nx"}, "spec": {}}
    status, created = await api.call("PUT", "/apis/coordination.k8s.io/v1/namespaces/default/leases/nx", lease)
    assert status == 201 and created["metadata"]["uid"]


async def test_a_deprecated_version_warns_on_every_answer(api: Api) -> None:
    """As kube-apiserver: every request in v1beta1 (deprecated in favour of v1beta2) warns first, errors included,
    and an error answer carries the write's decoding warnings too; each text once."""
    deprecated = '299 - "cluster.x-k8s.io/v1beta1 Cluster is deprecated; use cluster.x-k8s.io/v1beta2 Cluster"'
    body = cluster("c1", spec={"paused": True, "bogus": 1})
    status, headers, _ = await api.response("POST", CL, body)
    assert status == 201
    assert headers.getall("Warning") == [deprecated, '299 - "unknown field \\"spec.bogus\\""']
    status, headers, _ = await api.response("POST", CL, body)
    assert status == 409
    assert headers.getall("Warning") == [deprecated, '299 - "unknown field \\"spec.bogus\\""']
    for path in (f"{CL}/c1", f"{CL}/missing", CL, f"{CL}/c1/status", f"{CL}?watch=1&timeoutSeconds=1"):
        status, headers, _ = await api.response("GET", path)
        assert headers.getall("Warning") == [deprecated], path
    status, headers, _ = await api.response("GET", CL.replace("v1beta1", "v1beta2"))
    assert status == 200 and "Warning" not in headers
    # a version deprecated with no newer one that is not
    status, headers, _ = await api.response(
        "GET", "/apis/infrastructure.cluster.x-k8s.io/v1beta2/namespaces/default/dockermachinetemplates"
    )
    assert headers.getall("Warning") == [
        '299 - "infrastructure.cluster.x-k8s.io/v1beta2 DockerMachineTemplate is deprecated"'
    ]


async def test_status_subresource(api: Api) -> None:
    _, created = await api.call("POST", CL, cluster("c1", spec={"paused": True}, status={"phase": "ignored"}))
    assert "status" not in created
    endpoint = {"host": "cp.example.com", "port": 6443}
    status, updated = await api.call(
        "PUT",
        f"{CL}/c1/status",
        {**created, "spec": {"controlPlaneEndpoint": endpoint}, "status": {"phase": "Provisioned"}},
    )
    assert status == 200
    assert updated["status"] == {"phase": "Provisioned"} and updated["spec"] == {"paused": True}
    status, got = await api.call("GET", f"{CL}/c1/status")
    assert (status, got["status"]) == (200, {"phase": "Provisioned"})
    status, _ = await api.call("PUT", f"{CM}/x/status", config_map("x"))
    assert status == 404


async def test_dry_run_stores_nothing(api: Api, store: MemoryStore) -> None:
    before = store.resource_version
    status, created = await api.call("POST", f"{CM}?dryRun=All", config_map("dry"))
    assert status == 201 and created["metadata"]["name"] == "dry"
    assert (await api.call("GET", f"{CM}/dry"))[0] == 404
    _, real = await api.call("POST", CM, config_map("real", data={"a": "1"}))
    status, updated = await api.call("PUT", f"{CM}/real?dryRun=All", {**real, "data": {"a": "2"}})
    assert status == 200 and updated["data"] == {"a": "2"}
    status, patched = await api.call(
        "PATCH", f"{CM}/real?dryRun=All", {"data": {"b": "3"}}, content_type="application/merge-patch+json"
    )
    assert status == 200 and patched["data"] == {"a": "1", "b": "3"}
    status, _ = await api.call("DELETE", f"{CM}/real?dryRun=All")
    assert status == 200
    assert (await api.call("GET", f"{CM}/real"))[1] == real
    assert int(store.resource_version) == int(before) + 1


async def test_field_manager_defaults_to_the_user_agent_product(api: Api) -> None:
    async with api.client.post(CM, json=config_map("ua"), headers={"User-Agent": "my-tool/1.2 (linux)"}) as response:
        created = await response.json()
    managers = [entry.get("manager") for entry in created["metadata"].get("managedFields") or []]
    assert managers in ([], ["my-tool"])  # managedFields appear once the store tracks them


# -- delete ------------------------------------------------------------------------------------------


async def test_delete_answers_success_status_with_uid(api: Api) -> None:
    _, created = await api.call("POST", CL, cluster("c1"))
    status, body = await api.call("DELETE", f"{CL}/c1")
    assert status == 200
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Success",
        "details": {"name": "c1", "group": "cluster.x-k8s.io", "kind": "clusters", "uid": created["metadata"]["uid"]},
    }
    assert (await api.call("GET", f"{CL}/c1"))[0] == 404


async def test_delete_held_by_finalizer_answers_the_marked_object(api: Api) -> None:
    await api.call("POST", CM, config_map("held", metadata={"name": "held", "finalizers": ["example.com/hold"]}))
    status, body = await api.call("DELETE", f"{CM}/held", {"kind": "DeleteOptions", "apiVersion": "v1"})
    assert status == 200
    assert body["kind"] == "ConfigMap" and body["metadata"]["deletionTimestamp"]


async def test_delete_options_from_body_and_query(api: Api) -> None:
    _, created = await api.call("POST", CM, config_map("a"))
    status, body = await api.call("DELETE", f"{CM}/a", {"preconditions": {"uid": "other"}})
    assert (status, body["reason"]) == (409, "Conflict")
    status, body = await api.call("DELETE", f"{CM}/a", {"propagationPolicy": "Bogus"})
    assert status == 422
    assert body["message"] == (
        'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: Unsupported value: "Bogus": supported values: '
        '"Foreground", "Background", "Orphan", "nil"'
    )
    status, _ = await api.call("DELETE", f"{CM}/a", {"dryRun": ["All"]})
    assert status == 200 and (await api.call("GET", f"{CM}/a"))[0] == 200
    status, body = await api.call(
        "DELETE", f"{CM}/a?propagationPolicy=Foreground", {"preconditions": {"uid": created["metadata"]["uid"]}}
    )
    assert status == 200


async def test_delete_collection_by_label(api: Api) -> None:
    for name, tier in (("a", "x"), ("b", "x"), ("c", "y")):
        await api.call("POST", CM, config_map(name, metadata={"name": name, "labels": {"tier": tier}}))
    status, body = await api.call("DELETE", f"{CM}?labelSelector=tier%3Dx")
    assert status == 200
    assert body["kind"] == "ConfigMapList"
    assert sorted(item["metadata"]["name"] for item in body["items"]) == ["a", "b"]
    _, left = await api.call("GET", CM)
    assert [item["metadata"]["name"] for item in left["items"]] == ["c"]


# -- tables and metadata -----------------------------------------------------------------------------

TABLE = (
    "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"
)


async def test_list_as_table_for_kubectl_get(api: Api) -> None:
    await api.call("POST", CM, config_map("a", data={"x": "1", "y": "2"}))
    status, table = await api.call("GET", CM, accept=TABLE)
    assert status == 200
    assert (table["kind"], table["apiVersion"]) == ("Table", "meta.k8s.io/v1")
    assert [column["name"] for column in table["columnDefinitions"]] == ["Name", "Data", "Age"]
    [row] = table["rows"]
    assert row["cells"][:2] == ["a", 2]
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["metadata"]["name"] == "a"
    _, whole = await api.call("GET", f"{CM}?includeObject=Object", accept=TABLE)
    assert whole["rows"][0]["object"]["data"] == {"x": "1", "y": "2"}
    _, single = await api.call("GET", f"{CM}/a", accept=TABLE)
    assert [row["cells"][0] for row in single["rows"]] == ["a"]


async def test_partial_object_metadata(api: Api) -> None:
    await api.call("POST", CM, config_map("a", data={"x": "1"}))
    accept = "application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io"
    status, body = await api.call("GET", CM, accept=accept)
    assert status == 200 and body["kind"] == "PartialObjectMetadataList"
    assert body["items"][0] == {
        "kind": "PartialObjectMetadata",
        "apiVersion": "meta.k8s.io/v1",
        "metadata": body["items"][0]["metadata"],
    }


async def test_protobuf_only_is_not_acceptable(api: Api) -> None:
    status, body = await api.call("GET", CM, accept="application/vnd.kubernetes.protobuf")
    assert (status, body["reason"]) == (406, "NotAcceptable")
    status, _ = await api.call("GET", CM, accept="application/vnd.kubernetes.protobuf,application/json")
    assert status == 200


@pytest.mark.parametrize("path", ["/version", "/healthz", "/readyz?verbose", "/livez/ping"])
async def test_version_and_health(api: Api, path: str) -> None:
    status, body = await api.call("GET", path)
    assert status == 200
    if path == "/version":
        assert (body["major"], body["minor"]) == ("1", "37")


# -- scale -------------------------------------------------------------------------------------------

MD = "/apis/cluster.x-k8s.io/v1beta1/namespaces/default/machinedeployments"


def machine_deployment(name: str, replicas: int) -> dict[str, Any]:
    template = {
        "metadata": {"labels": {"a": "b"}},
        "spec": {
            "clusterName": "c1",
            "bootstrap": {"dataSecretName": "x"},
            "infrastructureRef": {"kind": "X", "name": "y"},
        },
    }
    spec = {"clusterName": "c1", "replicas": replicas, "selector": {"matchLabels": {"a": "b"}}, "template": template}
    return {"apiVersion": CAPI, "kind": "MachineDeployment", "metadata": {"name": name}, "spec": spec}


async def test_scale_subresource(api: Api) -> None:
    _, created = await api.call("POST", MD, machine_deployment("md1", 2))
    status, scale = await api.call("GET", f"{MD}/md1/scale")
    assert status == 200
    assert scale == {
        "kind": "Scale",
        "apiVersion": "autoscaling/v1",
        "metadata": {
            key: created["metadata"][key]
            for key in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")
        },
        "spec": {"replicas": 2},
        "status": {"replicas": 0},
    }
    status, patched = await api.call(
        "PATCH", f"{MD}/md1/scale", {"spec": {"replicas": 5}}, content_type="application/merge-patch+json"
    )
    assert (status, patched["spec"]) == (200, {"replicas": 5})
    assert (await api.call("GET", f"{MD}/md1"))[1]["spec"]["replicas"] == 5
    status, body = await api.call("PUT", f"{MD}/md1/scale", scale)  # scale still has the old resourceVersion
    assert (status, body["reason"]) == (409, "Conflict")
    status, replaced = await api.call("PUT", f"{MD}/md1/scale", {**patched, "spec": {"replicas": 1}})
    assert (status, replaced["spec"]) == (200, {"replicas": 1})
    assert (await api.call("GET", f"{CL}/c1/scale"))[0] == 404  # Cluster has no scale subresource


async def test_scale_in_discovery(api: Api) -> None:
    _, resources = await api.call("GET", "/apis/cluster.x-k8s.io/v1beta1")
    scale = next(resource for resource in resources["resources"] if resource["name"] == "machinedeployments/scale")
    assert (scale["group"], scale["version"], scale["kind"]) == ("autoscaling", "v1", "Scale")


# -- server-side apply -------------------------------------------------------------------------------

APPLY = "application/apply-patch+yaml"


async def test_apply_creates_then_updates_and_conflicts(api: Api) -> None:
    intent = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: ssa\ndata:\n  a: '1'\n"
    status, created = await api.call("PATCH", f"{CM}/ssa?fieldManager=alice", raw=intent.encode(), content_type=APPLY)
    assert status == 201
    assert [entry["manager"] for entry in created["metadata"]["managedFields"]] == ["alice"]
    status, again = await api.call("PATCH", f"{CM}/ssa?fieldManager=alice", raw=intent.encode(), content_type=APPLY)
    assert status == 200 and again["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    other = intent.replace("'1'", "'2'").encode()
    status, body = await api.call("PATCH", f"{CM}/ssa?fieldManager=bob", raw=other, content_type=APPLY)
    assert (status, body["reason"]) == (409, "Conflict")
    assert body["message"] == 'Apply failed with 1 conflict: conflict with "alice": .data.a'
    assert body["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "alice"', "field": ".data.a"}
    ]
    status, forced = await api.call("PATCH", f"{CM}/ssa?fieldManager=bob&force=true", raw=other, content_type=APPLY)
    assert (status, forced["data"]) == (200, {"a": "2"})


async def test_apply_yaml_is_read_as_go_yaml_reads_it(api: Api) -> None:
    # kube-apiserver reads apply bodies with go-yaml v2: a date stays a string (PyYAML's YAML 1.1
    # makes it a date, which a ConfigMap refuses), and 1e3 is a number (a string to PyYAML)
    intent = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: when\ndata:\n  day: 2024-01-01\n"
    status, created = await api.call("PATCH", f"{CM}/when?fieldManager=m", raw=intent.encode(), content_type=APPLY)
    assert (status, created["data"]) == (201, {"day": "2024-01-01"})
    keys = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: keys\ndata:\n  n: a\n  1: b\n  0x10: c\n"
    status, created = await api.call("PATCH", f"{CM}/keys?fieldManager=m", raw=keys.encode(), content_type=APPLY)
    # keys become JSON member names as sigs.k8s.io/yaml makes them
    assert (status, created["data"]) == (201, {"false": "a", "1": "b", "16": "c"})
    # a number where a string belongs: 400 here (kube-apiserver 1.37 answers 500 from its apply)
    number = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: num\ndata:\n  v: 1e3\n"
    status, body = await api.call("PATCH", f"{CM}/num?fieldManager=m", raw=number.encode(), content_type=APPLY)
    assert status == 400 and "cannot unmarshal number into Go struct field ConfigMap.data" in body["message"]


async def test_apply_requests_are_checked(api: Api) -> None:
    status, body = await api.call("PATCH", f"{CM}/ssa", raw=b"apiVersion: v1\nkind: ConfigMap\n", content_type=APPLY)
    assert (status, body["message"]) == (
        422,
        'PatchOptions.meta.k8s.io "" is invalid: fieldManager: Required value: is required for apply patch',
    )
    status, body = await api.call(
        "PATCH", f"{CM}/ssa?fieldManager=m", raw=b"metadata:\n  name: ssa\n", content_type=APPLY
    )
    assert (status, body["message"]) == (400, "invalid object type: /, Kind=")
    status, body = await api.call(
        "PATCH", f"{CM}/ssa?fieldManager=m", raw=b"apiVersion: v1\nmetadata: [\n", content_type=APPLY
    )
    assert (status, body["message"]) == (400, "error encoding patch: yaml: line 2: did not find expected node content")
    status, body = await api.call(
        "PATCH", f"{CM}/ssa?force=true", {"data": {}}, content_type="application/merge-patch+json"
    )
    assert (
        body["message"]
        == 'PatchOptions.meta.k8s.io "" is invalid: force: Forbidden: may not be specified for non-apply patch'
    )


async def test_patch_media_types(api: Api) -> None:
    await api.call("POST", CM, config_map("p"))
    await api.call("POST", CL, cluster("c1"))
    status, body = await api.call("PATCH", f"{CL}/c1", {}, content_type="application/strategic-merge-patch+json")
    assert (status, body["message"]) == (
        415,
        "the body of the request was in an unknown format - accepted media types include: "
        "application/json-patch+json, application/merge-patch+json, application/apply-patch+yaml",
    )
    status, body = await api.call("PATCH", f"{CM}/p", {}, content_type="text/plain")
    assert (status, body["message"]) == (415, "415: Unsupported Media Type")
    status, body = await api.call("PATCH", f"{CM}/p", [1], content_type="application/merge-patch+json")
    assert (
        body["message"]
        == "error decoding patch: json: cannot unmarshal array into Go value of type map[string]interface {}"
    )
    status, body = await api.call(
        "PATCH",
        f"{CM}/p",
        [{"op": "test", "path": "/data/a", "value": "x"}],
        content_type="application/json-patch+json",
    )
    assert (status, body["reason"], body["message"]) == (
        422,
        "Invalid",
        "the server rejected our request due to an error in our request",
    )
    status, patched = await api.call(
        "PATCH",
        f"{CM}/p",
        {"metadata": {"finalizers": ["a.io/x"], "$setElementOrder/finalizers": ["a.io/x"]}, "data": {"k": "v"}},
        content_type="application/strategic-merge-patch+json",
    )
    assert (status, patched["metadata"]["finalizers"], patched["data"]) == (200, ["a.io/x"], {"k": "v"})
    stale = {"metadata": {"resourceVersion": "1"}, "data": {"k": "w"}}
    status, body = await api.call("PATCH", f"{CM}/p", stale, content_type="application/strategic-merge-patch+json")
    assert (status, body["reason"]) == (409, "Conflict")


async def test_builtin_tables_have_kube_apiserver_columns(api: Api) -> None:
    event = {
        "metadata": {"name": "e1"},
        "involvedObject": {"kind": "Cluster", "name": "c1", "namespace": "default"},
        "reason": "Hello",
        "message": "hi there ",
        "type": "Normal",
    }
    await api.call("POST", "/api/v1/namespaces/default/events", event)
    _, table = await api.call("GET", "/api/v1/namespaces/default/events", accept=TABLE)
    columns = [(column["name"], column["priority"]) for column in table["columnDefinitions"]]
    assert columns == [
        ("Last Seen", 0),
        ("Type", 0),
        ("Reason", 0),
        ("Object", 0),
        ("Subobject", 1),
        ("Source", 1),
        ("Message", 0),
        ("First Seen", 1),
        ("Count", 1),
        ("Name", 1),
    ]
    assert table["rows"][0]["cells"][1:] == [
        "Normal",
        "Hello",
        "cluster/c1",
        "",
        "",
        "hi there",
        "<unknown>",
        1,
        "e1",
    ]
    _, crds = await api.call("GET", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", accept=TABLE)
    assert [column["name"] for column in crds["columnDefinitions"]][:4] == ["Name", "Scope", "Versions", "Created At"]
    row = next(row for row in crds["rows"] if row["cells"][0] == "clusters.cluster.x-k8s.io")
    assert row["cells"][1:3] == ["Namespaced", "v1beta1,v1beta2(storage)"]
    assert row["cells"][4:] == ["cluster.x-k8s.io", "Cluster", "cl", True]
