"""StoreReader: the topology pipeline reading from a MemoryStore computes what it computes offline.

The example ClusterClass with MachinePools (``examples/machinepools``) is created in a store; the
pipeline then runs twice over the same objects, once through :class:`StoreReader` and once through
:class:`ObjectIndex`, and must agree. After the planned creates and updates are written to the store,
a second round finds the MachineDeployment and MachinePools it created (a labelled list through the
store) and again agrees with the offline reader.
"""

from __future__ import annotations

import copy
import random
from pathlib import Path

import pytest

from clusterclass.api.objects import Obj
from clusterclass.apiserver.store import MemoryStore
from clusterclass.apiserver.store_reader import StoreReader
from clusterclass.kube.errors import BadRequest, NotFound
from clusterclass.plan.loader import load
from clusterclass.topology.changes import compute_changes
from clusterclass.topology.desired import Computation
from clusterclass.topology.pipeline import compute_topology
from clusterclass.topology.reader import NoNodes, ObjectIndex, Reader

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "machinepools"
CAPI = "cluster.x-k8s.io/v1beta1"


def config_map(name: str, labels: dict[str, str]) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": "default", "labels": labels},
    }


def test_client_reader_is_a_reader() -> None:
    reader: Reader = StoreReader(MemoryStore())
    assert reader.get("v1", "Namespace", "", "default") is not None


def test_get_returns_none_for_a_missing_object() -> None:
    reader = StoreReader(MemoryStore())
    assert reader.get(CAPI, "Cluster", "default", "nope") is None
    assert reader.get("example.com/v1", "Unknown", "default", "nope") is None


def test_list_translates_the_label_map() -> None:
    store = MemoryStore()
    for name, labels in [("b", {"app": "web", "tier": "x"}), ("a", {"app": "web"}), ("c", {"tier": "x"})]:
        store.create(config_map(name, labels))
    reader = StoreReader(store)
    names = [o["metadata"]["name"] for o in reader.list("v1", "ConfigMap", "default", {"app": "web"})]
    assert names == ["a", "b"]
    names = [o["metadata"]["name"] for o in reader.list("v1", "ConfigMap", "default", {"tier": None})]
    assert names == ["b", "c"]
    assert reader.list("v1", "ConfigMap", "other", {}) == []
    assert reader.list("v1", "ConfigMap", "", {}) == []  # not every namespace, as ObjectIndex
    assert [o["metadata"]["name"] for o in reader.list("v1", "Namespace", "", {})] == ["default"]


def test_errors_other_than_not_found_propagate() -> None:
    reader = StoreReader(MemoryStore())
    with pytest.raises(BadRequest):
        reader.get(CAPI, "Cluster", "", "no-namespace")
    with pytest.raises(NotFound):
        reader.list("example.com/v1", "Unknown", "default", {})


def _all_objects(store: MemoryStore) -> list[Obj]:
    objects: list[Obj] = []
    for info in store.kinds():
        version = sorted(info.versions)[-1]
        objects.extend(store.list(f"{info.group}/{version}" if info.group else version, info.kind)[0])
    return objects


def _desired_objects(computation: Computation) -> dict[str, object]:
    """Every desired object by role; worker topologies are views without equality, so compare objects."""
    desired = computation.desired
    found: dict[str, object] = {
        "cluster": desired.cluster,
        "infrastructure_cluster": desired.infrastructure_cluster,
        "control_plane": desired.control_plane,
        "control_plane_template": desired.control_plane_infrastructure_machine_template,
        "control_plane_health_check": desired.control_plane_machine_health_check,
    }
    for workers in (desired.machine_deployments, desired.machine_pools):
        for name, worker in workers.items():
            found[name] = (worker.object, worker.bootstrap, worker.infrastructure, worker.machine_health_check)
    return found


def _compute_both(store: MemoryStore) -> tuple[Computation, Computation]:
    cluster = store.get(CAPI, "Cluster", "demo", namespace="default")
    through_store = compute_topology(cluster, StoreReader(store), nodes=NoNodes(), rng=random.Random(7))
    offline = compute_topology(cluster, ObjectIndex(_all_objects(store)), nodes=NoNodes(), rng=random.Random(7))
    return through_store, offline


def test_pipeline_over_the_store_matches_the_offline_index() -> None:
    store = MemoryStore()
    for obj in load([str(EXAMPLES)]).objects:
        store.create(obj)

    through_store, offline = _compute_both(store)
    assert _desired_objects(through_store) == _desired_objects(offline)
    assert through_store.current == offline.current
    assert through_store.warnings == offline.warnings
    assert sorted(through_store.desired.machine_pools) == ["mp-0", "mp-1"]
    assert sorted(through_store.desired.machine_deployments) == ["md-0"]
    assert through_store.current.machine_pools == {}

    changes = compute_changes(through_store, rng=random.Random(7))
    assert changes
    shim_uid = ""
    for change in changes:
        obj = copy.deepcopy(change.object)
        for ref in obj["metadata"].get("ownerReferences", []):
            if ref["kind"] == "Secret":  # the shim's uid is known once it is created, as a controller sees it
                ref["uid"] = shim_uid
        if change.action == "create":
            created = store.create(obj)
            if created["kind"] == "Secret":
                shim_uid = created["metadata"]["uid"]
        elif change.action == "update":
            store.update(obj)

    second, second_offline = _compute_both(store)
    assert _desired_objects(second) == _desired_objects(second_offline)
    assert second.current == second_offline.current
    assert sorted(second.current.machine_pools) == ["mp-0", "mp-1"]
    assert sorted(second.current.machine_deployments) == ["md-0"]
    assert second.current.infrastructure_cluster is not None
    assert second.current.control_plane is not None
    assert not [c for c in compute_changes(second, rng=random.Random(7)) if c.action == "create"]
