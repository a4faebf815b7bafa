"""CustomResourceDefinitions in the memory store: installing one serves its kind, deleting one removes its objects.

The steps and messages follow kube-apiserver 1.37 (checked against it): the create answer carries the
defaulted names and an empty status, the apiextensions controllers then accept the names and mark the
CRD Established; a delete adds the ``customresourcecleanup`` finalizer, the finalizer controller
deletes every custom resource (their own finalizers respected) and then lets the CRD go.
"""

from __future__ import annotations

from typing import Any

import pytest
from memory_support import fixed_store
from support.crds import crd_version, make_crd

from clusterclass.api.objects import Obj
from clusterclass.apiserver.store import CRD_API_VERSION, CRD_CLEANUP_FINALIZER, CRD_KIND, MemoryStore
from clusterclass.kube.errors import Forbidden, Invalid, NotFound

WIDGETS = "widgets.example.com"
SCHEMA = {
    "type": "object",
    "properties": {
        "spec": {"type": "object", "properties": {"size": {"type": "integer", "default": 1}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
    },
}


@pytest.fixture
def store() -> MemoryStore:
    return fixed_store()


def widget_crd(*versions: str, scope: str = "Namespaced", **names: Any) -> Obj:
    served = versions or ("v1",)
    return make_crd(
        "example.com",
        "Widget",
        [crd_version(v, SCHEMA, storage=v == served[0], subresources={"status": {}}) for v in served],
        scope=scope,
        **names,
    )


def widget(name: str = "w", *, finalizers: tuple[str, ...] = ()) -> Obj:
    meta: Obj = {"name": name, "namespace": "default"}
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return {"apiVersion": "example.com/v1", "kind": "Widget", "metadata": meta, "spec": {"size": 1}}


def get_crd(store: MemoryStore) -> Obj:
    return store.get(CRD_API_VERSION, CRD_KIND, WIDGETS)


def test_creating_a_crd_serves_its_kind_and_establishes_it(store: MemoryStore) -> None:
    created = store.create(widget_crd())
    assert created["spec"]["names"] == {
        "plural": "widgets",
        "kind": "Widget",
        "singular": "widget",
        "listKind": "WidgetList",
    }
    assert created["spec"]["conversion"] == {"strategy": "None"}
    assert created["status"] == {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": ["v1"],
    }
    assert created["metadata"]["generation"] == 1

    established = get_crd(store)
    assert int(established["metadata"]["resourceVersion"]) > int(created["metadata"]["resourceVersion"])
    assert established["status"]["acceptedNames"] == {
        "plural": "widgets",
        "singular": "widget",
        "kind": "Widget",
        "listKind": "WidgetList",
    }
    conditions = {c["type"]: (c["status"], c["reason"], c["message"]) for c in established["status"]["conditions"]}
    assert conditions == {
        "NamesAccepted": ("True", "NoConflicts", "no conflicts found"),
        "Established": ("True", "InitialNamesAccepted", "the initial names have been accepted"),
    }
    managers = {(e["manager"], e.get("subresource")) for e in established["metadata"]["managedFields"]}
    assert managers == {("clusterclass", None), ("kube-apiserver", "status")}
    resource = store.resource("example.com/v1", "Widget")
    assert (resource.plural, resource.namespaced, resource.subresources) == ("widgets", True, {"status"})
    made = store.create(widget())
    assert made["metadata"]["generation"] == 1
    assert "status" not in store.create({**widget("w2"), "status": {"x": 1}})


def test_a_crd_update_serves_new_versions(store: MemoryStore) -> None:
    store.create(widget_crd())
    crd = get_crd(store)
    crd["spec"]["versions"].append(
        {"name": "v2", "served": True, "storage": False, "schema": {"openAPIV3Schema": SCHEMA}}
    )
    store.update(crd)
    store.create(widget())
    assert store.get("example.com/v2", "Widget", "w", namespace="default")["apiVersion"] == "example.com/v2"


def test_a_crd_is_a_custom_resource_itself(store: MemoryStore) -> None:
    store.create(widget_crd())
    crd = get_crd(store)
    meta = {k: v for k, v in crd["metadata"].items() if k != "resourceVersion"}
    with pytest.raises(Invalid, match="must be specified for an update"):
        store.update({**crd, "metadata": meta})
    crd["spec"]["scope"] = "Cluster"
    with pytest.raises(Invalid, match=r"spec\.scope: Invalid value: \"Cluster\": field is immutable"):
        store.update(crd)


@pytest.mark.parametrize(
    ("change", "path"),
    [
        ({"metadata": {"name": "things.example.com"}}, "metadata.name"),
        ({"spec": {"group": ""}}, "spec.group"),
        ({"spec": {"scope": "Galaxy"}}, "spec.scope"),
        ({"spec": {"versions": []}}, "spec.versions"),
    ],
)
def test_an_invalid_crd_is_refused(store: MemoryStore, change: Obj, path: str) -> None:
    crd = widget_crd()
    for part, values in change.items():
        crd[part] = {**crd[part], **values}
    with pytest.raises(Invalid) as err:
        store.create(crd)
    assert path in {cause["field"] for cause in err.value.details["causes"]}
    with pytest.raises(NotFound):
        store.resource("example.com/v1", "Widget")


def test_deleting_a_crd_deletes_its_objects_then_the_crd(store: MemoryStore) -> None:
    store.create(widget_crd())
    store.create(widget("a"))
    store.create(widget("b"))
    answer = store.delete(CRD_API_VERSION, CRD_KIND, WIDGETS)
    assert answer is not None
    assert answer["metadata"]["finalizers"] == [CRD_CLEANUP_FINALIZER]
    assert answer["metadata"]["generation"] == 1  # the CRD registry's own delete does not bump it
    terminating = {c["type"]: c for c in answer["status"]["conditions"]}["Terminating"]
    assert (terminating["status"], terminating["reason"]) == ("True", "InstanceDeletionPending")
    with pytest.raises(NotFound):
        get_crd(store)
    with pytest.raises(NotFound, match="the server could not find the requested resource"):
        store.list("example.com/v1", "Widget")


def test_a_custom_resource_finalizer_holds_the_crd(store: MemoryStore) -> None:
    store.create(widget_crd())
    store.create(widget("held", finalizers=("example.com/hold",)))
    store.delete(CRD_API_VERSION, CRD_KIND, WIDGETS)
    crd = get_crd(store)
    terminating = {c["type"]: c for c in crd["status"]["conditions"]}["Terminating"]
    assert (terminating["reason"], terminating["message"]) == (
        "InstanceDeletionInProgress",
        "CustomResource deletion is in progress",
    )
    held = store.get("example.com/v1", "Widget", "held", namespace="default")
    assert held["metadata"]["deletionTimestamp"]
    with pytest.raises(Forbidden) as err:
        store.create(widget("new"))
    assert err.value.message == (
        'widgets.example.com "new" is forbidden: create not allowed while custom resource definition is terminating'
    )
    store.patch("example.com/v1", "Widget", "held", {"metadata": {"finalizers": None}}, namespace="default")
    with pytest.raises(NotFound):
        get_crd(store)


def test_a_recreated_crd_starts_empty(store: MemoryStore) -> None:
    store.create(widget_crd())
    store.create(widget("a"))
    store.delete(CRD_API_VERSION, CRD_KIND, WIDGETS)
    store.create(widget_crd())
    assert store.list("example.com/v1", "Widget").items == []


async def test_deleting_a_crd_ends_watches_of_its_kind(store: MemoryStore) -> None:
    store.create(widget_crd())
    store.create(widget("a"))
    watch = store.watch("example.com/v1", "Widget", resource_version=store.resource_version, bookmarks=False)
    store.delete(CRD_API_VERSION, CRD_KIND, WIDGETS)
    events = [event async for event in watch]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [("DELETED", "a")]


def test_cluster_scoped_custom_resources(store: MemoryStore) -> None:
    store.create(widget_crd(scope="Cluster"))
    made = store.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w"}})
    assert "namespace" not in made["metadata"]
    assert store.resource("example.com/v1", "Widget").namespaced is False
