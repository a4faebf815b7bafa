"""Every write of the memory store is decoded and validated as kube-apiserver does it.

Custom resources go through their CRD's schema (pruning, defaulting, validation, the read path);
built-in kinds through their typed decoding and ObjectMeta validation. Messages and field paths are
kube-apiserver 1.37's (the CRD side is :mod:`clusterclass.apiserver.crd.definitions`'s, checked in its own tests).
"""

from __future__ import annotations

from typing import Any

import pytest
from memory_support import fixed_store
from support.crds import crd_version, make_crd

from clusterclass.api.objects import Obj
from clusterclass.apiserver.store import CRD_API_VERSION, CRD_KIND, MemoryStore
from clusterclass.kube.errors import BadRequest, Invalid

CAPI = "cluster.x-k8s.io/v1beta1"


@pytest.fixture
def store() -> MemoryStore:
    return fixed_store()


def cluster(name: str = "c1", **spec: Any) -> Obj:
    return {"apiVersion": CAPI, "kind": "Cluster", "metadata": {"name": name, "namespace": "default"}, "spec": spec}


def config_map(name: str = "cm", **fields: Any) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "default"}, **fields}


def widget_crd(*versions: tuple[str, Obj]) -> Obj:
    return make_crd(
        "example.com",
        "Widget",
        [crd_version(name, schema, storage=i == 0) for i, (name, schema) in enumerate(versions)],
    )


def object_schema(**properties: Obj) -> Obj:
    return {"type": "object", "properties": {"spec": {"type": "object", "properties": properties}}}


def test_unknown_fields_are_pruned_with_a_warning(store: MemoryStore) -> None:
    warnings: list[str] = []
    created = store.create(cluster(paused=True, bogus=1), warnings=warnings)
    assert created["spec"] == {"paused": True}
    assert warnings == ['unknown field "spec.bogus"']


def test_strict_field_validation_refuses_unknown_fields(store: MemoryStore) -> None:
    with pytest.raises(BadRequest) as err:
        store.create(cluster(bogus=1), field_validation="Strict")
    assert err.value.message == (
        'Cluster in version "v1beta1" cannot be handled as a Cluster: strict decoding error: unknown field "spec.bogus"'
    )
    with pytest.raises(BadRequest, match='unknown field "spec"'):
        store.create(config_map(spec={}), field_validation="Strict")


def test_built_in_kinds_drop_fields_their_type_does_not_have(store: MemoryStore) -> None:
    warnings: list[str] = []
    created = store.create(config_map(data={"a": "b"}, spec={"x": 1}), warnings=warnings)
    assert "spec" not in created
    assert warnings == ['unknown field "spec"']
    ignored: list[str] = []
    store.update({**created, "other": 1}, field_validation="Ignore", warnings=ignored)
    assert ignored == []


def test_metadata_is_coerced_to_object_meta(store: MemoryStore) -> None:
    obj = config_map()
    obj["metadata"].update({"finalizers": [], "labels": {}, "unknown": "x"})
    meta = store.create(obj)["metadata"]
    assert "finalizers" not in meta and "labels" not in meta and "unknown" not in meta
    bad = config_map("bad")
    bad["metadata"]["labels"] = {"a": 1}
    with pytest.raises(BadRequest, match=r'^ConfigMap in version "v1" cannot be handled as a ConfigMap: json: '):
        store.create(bad)


def test_configmap_data_must_be_strings(store: MemoryStore) -> None:
    with pytest.raises(BadRequest) as err:
        store.create(config_map(data={"a": 1}))
    assert err.value.message == (
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: json: cannot unmarshal number into Go struct '
        "field ConfigMap.data of type string"
    )


def test_secrets_encode_string_data_and_check_base64(store: MemoryStore) -> None:
    secret = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s", "namespace": "default"}}
    created = store.create({**secret, "stringData": {"a": "b"}, "data": {"a": "eA==", "c": "ZA=="}})
    assert created["data"] == {"a": "Yg==", "c": "ZA=="}  # stringData wins
    assert created["type"] == "Opaque" and "stringData" not in created
    with pytest.raises(BadRequest) as err:
        store.create({**secret, "metadata": {**secret["metadata"], "name": "t"}, "data": {"c": "not base64!"}})
    assert (
        err.value.message == 'Secret in version "v1" cannot be handled as a Secret: illegal base64 data at input byte 3'
    )


def test_schema_defaults_apply_on_create_and_update(store: MemoryStore) -> None:
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
    default = {"rollingUpdate": {"maxSurge": 1}, "type": "RollingUpdate"}  # v1beta1's schema default
    created = store.create(control_plane)
    assert created["spec"]["rolloutStrategy"] == default
    del created["spec"]["rolloutStrategy"]
    del created["metadata"]["annotations"]  # the conversion data, so only the default can bring it back
    assert store.update(created)["spec"]["rolloutStrategy"] == default
    zero = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}
    patched = store.patch(
        kcp_version, "KubeadmControlPlane", "kcp", {"spec": {"rolloutStrategy": zero}}, namespace="default"
    )
    assert patched["spec"]["rolloutStrategy"] == zero


def test_schema_validation_lists_every_cause(store: MemoryStore) -> None:
    with pytest.raises(Invalid) as err:
        store.create(
            {"apiVersion": CAPI, "kind": "MachineSet", "metadata": {"name": "ms", "namespace": "default"}, "spec": {}}
        )
    fields = {cause["field"] for cause in err.value.details["causes"]}
    assert {"spec.clusterName", "spec.selector"} <= fields
    assert err.value.message.startswith('MachineSet.cluster.x-k8s.io "ms" is invalid: [')
    assert err.value.details["group"] == "cluster.x-k8s.io" and err.value.details["kind"] == "MachineSet"


@pytest.mark.parametrize("write", ["update", "patch", "dry_run"])
def test_validation_runs_on_every_write(store: MemoryStore, write: str) -> None:
    created = store.create(cluster(paused=True))
    with pytest.raises(Invalid) as err:
        if write == "update":
            store.update({**created, "spec": {"paused": "yes"}})
        elif write == "patch":
            store.patch(CAPI, "Cluster", "c1", {"spec": {"paused": "yes"}}, namespace="default")
        else:
            store.create(cluster("c2", paused="yes"), dry_run=True)
    # with the CEL rules skipped because of the type error ("<nil>": kube-apiserver's cause for that)
    assert [c["field"] for c in err.value.details["causes"]] == ["spec.paused", "<nil>"]


def test_status_is_pruned_and_validated_too(store: MemoryStore) -> None:
    created = store.create(cluster())
    warnings: list[str] = []
    updated = store.update_status({**created, "status": {"phase": "Provisioned", "bogus": 1}}, warnings=warnings)
    assert updated["status"] == {"phase": "Provisioned"}
    assert warnings == ['unknown field "status.bogus"']
    with pytest.raises(Invalid) as err:
        store.update_status({**updated, "status": {"infrastructureReady": "yes"}})
    assert [c["field"] for c in err.value.details["causes"]] == ["status.infrastructureReady", "<nil>"]


def test_a_schema_change_shows_on_read_of_stored_objects_without_a_write(store: MemoryStore) -> None:
    store.create(widget_crd(("v1", object_schema(size={"type": "integer"}, colour={"type": "string"}))))
    store.create(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"size": 3, "colour": "red"},
        }
    )
    before = store.get("example.com/v1", "Widget", "w", namespace="default")
    crd = store.get(CRD_API_VERSION, CRD_KIND, "widgets.example.com")
    crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"] = object_schema(
        size={"type": "integer"}, shape={"type": "string", "default": "round"}
    )
    store.update(crd)
    after = store.get("example.com/v1", "Widget", "w", namespace="default")
    assert after["spec"] == {"size": 3, "shape": "round"}  # pruned and defaulted as read
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


def test_another_served_version_is_pruned_to_its_schema(store: MemoryStore) -> None:
    store.create(
        widget_crd(
            ("v1", object_schema(size={"type": "integer"}, colour={"type": "string"})),
            ("v2", object_schema(size={"type": "integer"})),
        )
    )
    store.create(
        {
            "apiVersion": "example.com/v1",
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": "default"},
            "spec": {"size": 3, "colour": "red"},
        }
    )
    assert store.get("example.com/v2", "Widget", "w", namespace="default")["spec"] == {"size": 3}
    assert store.get("example.com/v1", "Widget", "w", namespace="default")["spec"] == {"size": 3, "colour": "red"}


def test_object_meta_is_validated_for_built_in_kinds(store: MemoryStore) -> None:
    bad = config_map("Not_A_Name")
    bad["metadata"]["labels"] = {"a": "not a label value"}
    with pytest.raises(Invalid) as err:
        store.create(bad)
    assert [(c["reason"], c["field"]) for c in err.value.details["causes"]] == [
        ("FieldValueInvalid", "metadata.name"),
        ("FieldValueInvalid", "metadata.labels"),
    ]
    assert err.value.details["kind"] == "ConfigMap"


def test_events_are_not_held_to_object_meta_name_rules(store: MemoryStore) -> None:
    event = {
        "apiVersion": "v1",
        "kind": "Event",
        "metadata": {"generateName": "c1.", "namespace": "default"},
        "involvedObject": {"kind": "Cluster", "name": "c1", "namespace": "default"},
        "reason": "R",
    }
    assert store.create(event)["metadata"]["name"].startswith("c1.")


def test_status_writes_record_the_status_subresource(store: MemoryStore) -> None:
    created = store.create(cluster(), field_manager="creator")
    updated = store.update_status({**created, "status": {"phase": "Provisioned"}}, field_manager="status-writer")
    entries = {(e["manager"], e.get("subresource")): e["fieldsV1"] for e in updated["metadata"]["managedFields"]}
    assert entries[("status-writer", "status")] == {"f:status": {".": {}, "f:phase": {}}}
    assert ("creator", None) in entries
