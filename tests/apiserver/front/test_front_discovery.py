"""Discovery and OpenAPI: what clients read to find resources and to decide on server-side validation."""

from __future__ import annotations

from typing import Any

from front_support import Api

from clusterclass.apiserver.crd.definitions import load_bundled_crds
from clusterclass.apiserver.store import MemoryStore

AGGREGATED = (
    "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,"
    "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
)


def install_cluster_crd(store: MemoryStore) -> None:
    """Store the Cluster CRD object, as kube-apiserver holds it, so its names and columns are known."""
    [crd] = [crd for crd in load_bundled_crds() if crd["metadata"]["name"] == "clusters.cluster.x-k8s.io"]
    try:
        store.create(crd)
    except Exception:  # already installed by the store itself
        store.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "clusters.cluster.x-k8s.io")


async def test_core_group(api: Api) -> None:
    status, versions = await api.call("GET", "/api")
    assert status == 200
    assert versions["kind"] == "APIVersions" and versions["versions"] == ["v1"]
    status, resources = await api.call("GET", "/api/v1")
    assert (resources["kind"], resources["groupVersion"]) == ("APIResourceList", "v1")
    by_name = {resource["name"]: resource for resource in resources["resources"]}
    assert by_name["configmaps"] == {
        "name": "configmaps",
        "singularName": "configmap",
        "namespaced": True,
        "kind": "ConfigMap",
        "verbs": ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"],
        "shortNames": ["cm"],
    }
    assert by_name["namespaces"]["namespaced"] is False
    assert "deletecollection" not in by_name["namespaces"]["verbs"]
    assert by_name["namespaces/status"]["verbs"] == ["get", "patch", "update"]


async def test_named_groups(api: Api) -> None:
    _, groups = await api.call("GET", "/apis")
    names = [group["name"] for group in groups["groups"]]
    assert "cluster.x-k8s.io" in names and "coordination.k8s.io" in names
    status, group = await api.call("GET", "/apis/cluster.x-k8s.io")
    # both versions served, the newest first and preferred (kube-apiserver's version priority), as a real one says
    assert status == 200 and group["versions"] == [
        {"groupVersion": "cluster.x-k8s.io/v1beta2", "version": "v1beta2"},
        {"groupVersion": "cluster.x-k8s.io/v1beta1", "version": "v1beta1"},
    ]
    assert group["preferredVersion"] == {"groupVersion": "cluster.x-k8s.io/v1beta2", "version": "v1beta2"}
    _, resources = await api.call("GET", "/apis/cluster.x-k8s.io/v1beta1")
    by_name = {resource["name"]: resource for resource in resources["resources"]}
    assert by_name["clusters"]["kind"] == "Cluster" and by_name["clusters"]["namespaced"] is True
    assert by_name["clusters/status"]["kind"] == "Cluster"
    for missing in ("/apis/nope.io", "/apis/nope.io/v1", "/apis/cluster.x-k8s.io/v9"):
        assert (await api.call("GET", missing))[0] == 404


async def test_names_and_categories_come_from_the_stored_crd(api: Api, store: MemoryStore) -> None:
    install_cluster_crd(store)
    _, resources = await api.call("GET", "/apis/cluster.x-k8s.io/v1beta1")
    clusters = next(resource for resource in resources["resources"] if resource["name"] == "clusters")
    assert clusters["shortNames"] == ["cl"] and clusters["categories"] == ["cluster-api"]
    assert clusters["singularName"] == "cluster"


async def test_aggregated_discovery(api: Api) -> None:
    status, headers, body = await api.response("GET", "/apis", Accept=AGGREGATED)
    assert status == 200
    assert headers["Content-Type"] == "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
    assert (body["kind"], body["apiVersion"]) == ("APIGroupDiscoveryList", "apidiscovery.k8s.io/v2")
    capi = next(item for item in body["items"] if item["metadata"].get("name") == "cluster.x-k8s.io")
    assert [version["version"] for version in capi["versions"]] == ["v1beta2", "v1beta1"]
    for version in capi["versions"]:
        clusters = next(resource for resource in version["resources"] if resource["resource"] == "clusters")
        assert clusters["responseKind"] == {
            "group": "cluster.x-k8s.io",
            "version": version["version"],
            "kind": "Cluster",
        }
        assert clusters["scope"] == "Namespaced"
        assert clusters["subresources"] == [
            {"subresource": "status", "responseKind": clusters["responseKind"], "verbs": ["get", "patch", "update"]}
        ]
    # subresources are per version: DockerMachineTemplate has a status subresource in v1beta2 only
    infra = next(item for item in body["items"] if item["metadata"].get("name") == "infrastructure.cluster.x-k8s.io")
    templates = {
        version["version"]: next(r for r in version["resources"] if r["resource"] == "dockermachinetemplates")
        for version in infra["versions"]
    }
    assert [s["subresource"] for s in templates["v1beta2"]["subresources"]] == ["status"]
    assert "subresources" not in templates["v1beta1"]
    _, _, core = await api.response("GET", "/api", Accept=AGGREGATED)
    [core_group] = core["items"]
    assert "name" not in core_group["metadata"]
    assert {resource["resource"] for resource in core_group["versions"][0]["resources"]} >= {"namespaces", "secrets"}


async def test_plain_discovery_when_aggregated_is_not_asked_for(api: Api) -> None:
    _status, headers, body = await api.response("GET", "/apis", Accept="application/json")
    assert headers["Content-Type"] == "application/json" and body["kind"] == "APIGroupList"


async def test_openapi_v3_says_patch_takes_field_validation(api: Api) -> None:
    _, index = await api.call("GET", "/openapi/v3")
    entry = index["paths"]["apis/cluster.x-k8s.io/v1beta1"]
    assert entry["serverRelativeURL"].startswith("/openapi/v3/apis/cluster.x-k8s.io/v1beta1?hash=")
    _, document = await api.call("GET", entry["serverRelativeURL"])
    path = document["paths"]["/apis/cluster.x-k8s.io/v1beta1/namespaces/{namespace}/clusters/{name}"]
    patch: dict[str, Any] = path["patch"]
    assert patch["x-kubernetes-group-version-kind"] == {
        "group": "cluster.x-k8s.io",
        "version": "v1beta1",
        "kind": "Cluster",
    }
    assert {parameter["name"] for parameter in patch["parameters"]} >= {"fieldValidation", "dryRun", "fieldManager"}
    schema = document["components"]["schemas"]["io.x-k8s.cluster.v1beta1.Cluster"]
    assert schema["x-kubernetes-group-version-kind"] == [patch["x-kubernetes-group-version-kind"]]
    assert "topology" in schema["properties"]["spec"]["properties"]  # from the CRD: kubectl explain reads it
    assert schema["properties"]["metadata"] == {
        "$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
    }
    core = (await api.call("GET", "/openapi/v3/api/v1"))[1]
    assert core["components"] == {"schemas": {}}  # built-in kinds: kubectl uses its compiled-in types
    assert "/api/v1/namespaces/{name}" in core["paths"]
    assert (await api.call("GET", "/openapi/v3/apis/nope.io/v1"))[0] == 404
    assert (await api.call("GET", "/openapi/v2"))[0] == 404
