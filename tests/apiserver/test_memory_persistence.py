"""MemoryStore(state_path=...): every acknowledged write survives a restart, and nothing else does."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from memory_support import fixed_store
from support.crds import crd_version, make_crd

from clusterclass.api.objects import Obj
from clusterclass.apiserver.persistence import SqliteState, StateError
from clusterclass.apiserver.store import MemoryStore
from clusterclass.kube.errors import Gone, NotFound

CAPI = "cluster.x-k8s.io/v1beta1"


def open_store(path: Path, **options: Any) -> MemoryStore:
    return fixed_store(state_path=path, **options)


def config_map(name: str, namespace: str = "default", **data: str) -> Obj:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": namespace}, "data": data}


def widget_crd() -> Obj:
    schema = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}
    return make_crd("example.com", "Widget", [crd_version("v1", schema, subresources={"status": {}})])


def snapshot(store: MemoryStore) -> dict[str, list[Obj]]:
    return {
        f"{info.group}/{info.kind}": store.list(
            f"{info.group}/{min(info.versions)}" if info.group else "v1", info.kind
        ).items
        for info in store.kinds()
    }


def test_a_new_state_file_starts_with_the_default_namespace(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    open_store(path).close()
    with SqliteState(path, readonly=True) as state:
        objects, resource_version = state.load()
    assert [o["metadata"]["name"] for o in objects if o["kind"] == "Namespace"] == ["default"]
    assert sum(1 for o in objects if o["kind"] == "CustomResourceDefinition") == 18
    assert resource_version == 1


def test_everything_written_is_there_after_a_restart(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = open_store(path)
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    kept = store.create(config_map("kept", "ns", a="1"))
    store.create(config_map("gone"))
    store.delete("v1", "ConfigMap", "gone", namespace="default")
    store.patch("v1", "ConfigMap", "kept", {"data": {"b": "2"}}, namespace="ns")
    store.create({"apiVersion": CAPI, "kind": "Cluster", "metadata": {"name": "c", "namespace": "ns"}, "spec": {}})
    store.patch(CAPI, "Cluster", "c", {"status": {"phase": "Provisioned"}}, namespace="ns", status=True)
    before, last = snapshot(store), store.resource_version
    store.close()

    restarted = open_store(path)
    assert snapshot(restarted) == before
    assert restarted.resource_version == last
    again = restarted.create(config_map("new"))
    assert int(again["metadata"]["resourceVersion"]) == int(last) + 1
    assert restarted.get("v1", "ConfigMap", "kept", namespace="ns")["metadata"]["uid"] == kept["metadata"]["uid"]
    restarted.close()


def test_custom_resource_definitions_come_back_before_their_objects(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = open_store(path)
    store.create(widget_crd())
    store.create({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "default"}})
    store.close()

    restarted = open_store(path)
    assert restarted.resource("example.com/v1", "Widget").plural == "widgets"
    assert restarted.get("example.com/v1", "Widget", "w", namespace="default")["metadata"]["generation"] == 1
    crd = restarted.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "widgets.example.com")
    assert {c["type"] for c in crd["status"]["conditions"]} == {"NamesAccepted", "Established"}
    restarted.close()


def test_dry_run_and_refused_writes_store_nothing(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = open_store(path)
    store.create(config_map("dry"), dry_run=True)
    with pytest.raises(NotFound):
        store.create(config_map("x", "nowhere"))
    last = store.resource_version
    store.close()
    restarted = open_store(path)
    assert restarted.list("v1", "ConfigMap").items == []
    assert restarted.resource_version == last
    restarted.close()


def test_a_watch_from_before_the_restart_is_gone(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = open_store(path)
    listed_at = store.list("v1", "ConfigMap").resource_version
    store.create(config_map("a"))
    store.close()
    restarted = open_store(path)
    with pytest.raises(Gone, match=f"too old resource version: {listed_at} "):
        restarted.watch("v1", "ConfigMap", resource_version=listed_at)
    restarted.watch("v1", "ConfigMap", resource_version=restarted.resource_version).close()
    restarted.close()


def test_a_half_deleted_namespace_is_finished_on_start(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = open_store(path)
    store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ns"}})
    store.create(config_map("a", "ns"))
    store.close()
    with SqliteState(path) as state:  # a crash after the namespace was marked, before its content went
        objects, resource_version = state.load()
        ns = next(o for o in objects if o["kind"] == "Namespace" and o["metadata"]["name"] == "ns")
        ns["metadata"]["deletionTimestamp"] = "2026-01-02T03:04:05Z"
        ns["status"]["phase"] = "Terminating"
        state.commit(resource_version + 1, [(("", "Namespace", "", "ns"), ns)], [])
    restarted = open_store(path)
    with pytest.raises(NotFound):
        restarted.get("v1", "Namespace", "ns")
    assert restarted.list("v1", "ConfigMap", namespace="ns").items == []
    restarted.close()
    with SqliteState(path, readonly=True) as state:
        assert [o["metadata"]["name"] for o in state.load()[0] if o["kind"] == "Namespace"] == ["default"]


async def test_a_write_the_state_file_refuses_is_not_acknowledged_and_leaves_no_trace(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = open_store(path)
    store.create(config_map("a"))
    before, last = snapshot(store), store.resource_version
    watch = store.watch("v1", "ConfigMap", resource_version=last, bookmarks=False)
    state = store._state
    assert state is not None
    state.close()  # the file is gone from under the store: every commit now fails
    with pytest.raises(StateError):
        store.create(config_map("b"))
    with pytest.raises(StateError):
        store.delete("v1", "ConfigMap", "a", namespace="default")
    assert snapshot(store) == before
    assert store.resource_version == last
    store.close()  # ends the watch: it saw nothing of the refused writes
    assert [event async for event in watch] == []


def test_a_second_store_on_the_same_file_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = open_store(path)
    with pytest.raises(StateError, match="already open for writing"):
        open_store(path)
    store.close()


def test_normal_durability_is_accepted(tmp_path: Path) -> None:
    path = tmp_path / "state.db"
    store = open_store(path, durability="NORMAL")
    store.create(config_map("a"))
    store.close()
    assert open_store(path).get("v1", "ConfigMap", "a", namespace="default")["metadata"]["name"] == "a"
