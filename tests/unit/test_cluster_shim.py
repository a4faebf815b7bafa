"""The Cluster shim (spec §3.2): upstream creates it before the top-level objects and deletes it once it served.

Upstream's ``reconcileClusterShim``: while the InfrastructureCluster or the ControlPlane does not exist, a
Secret ``<cluster>-shim`` (type ``cluster.x-k8s.io/secret``, owned by the Cluster) is created or read, and
added as an owner of the desired InfrastructureCluster and ControlPlane; once both exist, both are owned by
the Cluster and one still lists the shim, the shim is deleted. Owners are matched by kind and name.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import builders as b
from unit_support import World, compute

from clusterclass.topology.changes import Change, compute_changes

Obj = dict[str, Any]

CLUSTER_OWNER = {"apiVersion": b.CLUSTER_V1, "kind": "Cluster", "name": "cluster1", "uid": "cluster1-uid"}
SHIM = {
    "apiVersion": "v1",
    "kind": "Secret",
    "metadata": {"name": "cluster1-shim", "namespace": "default", "ownerReferences": [CLUSTER_OWNER]},
    "type": "cluster.x-k8s.io/secret",
}


def shim(uid: str = "shim-uid") -> Obj:
    stored = copy.deepcopy(SHIM)
    stored["metadata"].update(uid=uid, resourceVersion="5")
    return stored


def shim_owner(uid: str) -> Obj:
    return {"apiVersion": "v1", "kind": "Secret", "name": "cluster1-shim", "uid": uid}


def changes(cluster: Obj, current: list[Obj], world: World | None = None) -> list[Change]:
    world = world or World()
    return compute_changes(compute(cluster, [*world.objects(), *current]), rng=random.Random(1))


def created(found: list[Change], kind: str) -> Obj:
    (obj,) = [c.object for c in found if c.action == "create" and c.object["kind"] == kind]
    return obj


def existing(cluster: Obj, world: World) -> tuple[Obj, Obj, Obj]:
    """The Cluster pointing at its InfrastructureCluster and ControlPlane as a first reconcile created them."""
    desired = compute(cluster, world.objects()).desired
    infrastructure, cp = copy.deepcopy(desired.infrastructure_cluster), copy.deepcopy(desired.control_plane)
    cp["status"] = {"version": "v1.2.3", "replicas": 1, "updatedReplicas": 1, "readyReplicas": 1}
    return copy.deepcopy(desired.cluster), infrastructure, cp


def owned_by(obj: Obj, *owners: Obj) -> Obj:
    obj["metadata"]["ownerReferences"] = list(owners)
    return obj


def test_a_new_cluster_gets_its_shim_first_and_the_shim_owns_the_new_top_level_objects() -> None:
    found = changes(b.cluster(), [])
    assert (found[0].action, found[0].object) == ("create", SHIM)
    for kind in ("DockerCluster", "KubeadmControlPlane"):
        assert created(found, kind)["metadata"]["ownerReferences"] == [shim_owner("")]


def test_an_existing_shim_is_not_created_again_and_its_uid_is_used() -> None:
    found = changes(b.cluster(), [shim()])
    assert [c.object["kind"] for c in found if c.object["kind"] == "Secret"] == []
    for kind in ("DockerCluster", "KubeadmControlPlane"):
        assert created(found, kind)["metadata"]["ownerReferences"] == [shim_owner("shim-uid")]


def test_the_shim_is_created_when_only_the_control_plane_is_missing() -> None:
    """A reconcile that created the InfrastructureCluster and then failed: the next one guards the ControlPlane."""
    world = World()
    cluster, infrastructure, _ = existing(b.cluster(), world)
    del cluster["spec"]["controlPlaneRef"]
    found = changes(cluster, [owned_by(infrastructure, shim_owner("shim-uid"))], world)
    assert found[0].object == SHIM
    assert created(found, "KubeadmControlPlane")["metadata"]["ownerReferences"] == [shim_owner("")]


def test_the_shim_goes_once_the_cluster_owns_both_objects() -> None:
    world = World()
    cluster, infrastructure, cp = existing(b.cluster(), world)
    owned_by(infrastructure, shim_owner("shim-uid"), CLUSTER_OWNER)
    owned_by(cp, CLUSTER_OWNER)
    found = changes(cluster, [infrastructure, cp, shim()], world)
    assert [(c.action, c.object["kind"], c.object["metadata"]["name"]) for c in found] == [
        ("delete", "Secret", "cluster1-shim")
    ]


def test_the_shim_stays_while_the_cluster_does_not_own_both_objects() -> None:
    world = World()
    cluster, infrastructure, cp = existing(b.cluster(), world)
    owned_by(infrastructure, shim_owner("shim-uid"), CLUSTER_OWNER)
    owned_by(cp, shim_owner("shim-uid"))  # the core Cluster controller has not got to it yet
    assert changes(cluster, [infrastructure, cp, shim()], world) == []


def test_a_settled_cluster_neither_reads_nor_touches_a_shim() -> None:
    """Once garbage collection dropped the references to a deleted shim, the shim is not looked for."""
    world = World()
    cluster, infrastructure, cp = existing(b.cluster(), world)
    owned_by(infrastructure, CLUSTER_OWNER)
    owned_by(cp, CLUSTER_OWNER)
    stale = shim()  # even a shim left over (say, recreated by hand) is not the topology's business then
    computation = compute(cluster, [*world.objects(), infrastructure, cp, stale])
    assert computation.current.cluster_shim is None
    assert compute_changes(computation, rng=random.Random(1)) == []


def test_the_carried_shim_reference_is_not_doubled() -> None:
    """An InfrastructureCluster listing the shim keeps one reference to it, however it was carried."""
    world = World()
    cluster, infrastructure, _ = existing(b.cluster(), world)
    del cluster["spec"]["controlPlaneRef"]
    owned_by(infrastructure, shim_owner("shim-uid"))
    computation = compute(cluster, [*world.objects(), infrastructure, shim()])
    assert computation.desired.infrastructure_cluster["metadata"]["ownerReferences"] == [shim_owner("shim-uid")]
    assert compute_changes(computation, rng=random.Random(1))[0].object["kind"] == "KubeadmControlPlane"
