"""Garbage collection in the embedded store, held to kube-controller-manager's behaviour.

The real kube-apiserver in the contract suite runs no kube-controller-manager, so these tests are the
collector's reference: background, foreground and orphan propagation, dangling references matched by
uid, finalizers on dependents holding a foreground deletion, and the namespace rules of owner
references. Each scenario here was also run against kube-controller-manager v1.37.2 (garbagecollector
controller only, on a real kube-apiserver) and ended the same way there. Collection is eager in the
embedded store: a cascade is complete when the write returns.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_support import fixed_store

from clusterclass.api.objects import Obj
from clusterclass.api.refs import owner_reference_to
from clusterclass.apiserver.gc import FOREGROUND_FINALIZER, ORPHAN_FINALIZER, GcStore, deletion_finalizers
from clusterclass.apiserver.persistence import SqliteState
from clusterclass.apiserver.store import MemoryStore
from clusterclass.kube.client import PropagationPolicy
from clusterclass.kube.errors import NotFound

HOLD = "example.com/hold"
THING = "example.com/v1"


def new_store(**kwargs: Any) -> MemoryStore:
    store = fixed_store(**kwargs)
    store.register_kind(THING, "ClusterThing", namespaced=False, status_subresource=False)
    return store


@pytest.fixture
def store() -> MemoryStore:
    return new_store()


def ref(owner: Obj, *, block: bool = False, controller: bool = False) -> dict[str, Any]:
    """An ownerReference to ``owner`` as stored."""
    reference = owner_reference_to(owner)
    if controller:
        reference["controller"] = True
    if block:
        reference["blockOwnerDeletion"] = True
    return reference


def config_map(
    store: MemoryStore,
    name: str,
    *owners: dict[str, Any],
    namespace: str = "default",
    finalizers: tuple[str, ...] = (),
) -> Obj:
    meta: dict[str, Any] = {"name": name, "namespace": namespace}
    if owners:
        meta["ownerReferences"] = list(owners)
    if finalizers:
        meta["finalizers"] = list(finalizers)
    return store.create({"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta})


def thing(store: MemoryStore, name: str, *owners: dict[str, Any]) -> Obj:
    meta: dict[str, Any] = {"name": name}
    if owners:
        meta["ownerReferences"] = list(owners)
    return store.create({"apiVersion": THING, "kind": "ClusterThing", "metadata": meta})


def namespace(store: MemoryStore, name: str) -> Obj:
    return store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})


def current(store: MemoryStore, obj: Obj) -> Obj | None:
    """``obj`` as stored now, None when it (that uid) is gone."""
    meta = obj["metadata"]
    try:
        found = store.get(obj["apiVersion"], obj["kind"], meta["name"], namespace=meta.get("namespace"))
    except NotFound:
        return None
    return found if found["metadata"]["uid"] == meta["uid"] else None


def exists(store: MemoryStore, obj: Obj) -> bool:
    return current(store, obj) is not None


def delete(store: MemoryStore, obj: Obj, policy: PropagationPolicy | None = None) -> Obj | None:
    meta = obj["metadata"]
    return store.delete(
        obj["apiVersion"], obj["kind"], meta["name"], namespace=meta.get("namespace"), propagation_policy=policy
    )


def release(store: MemoryStore, obj: Obj, finalizer: str = HOLD) -> None:
    """Remove ``finalizer``, as the controller that put it there would when its cleanup is done."""
    latest = current(store, obj)
    assert latest is not None
    meta = latest["metadata"]
    meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != finalizer]
    store.update(latest)


def owner_uids(store: MemoryStore, obj: Obj) -> list[str]:
    latest = current(store, obj)
    assert latest is not None
    return [r["uid"] for r in latest["metadata"].get("ownerReferences") or []]


def events(store: MemoryStore, namespace: str = "default") -> list[Obj]:
    items, _ = store.list("v1", "Event", namespace=namespace)
    return items


def test_the_memory_store_offers_the_collector_what_it_needs(store: MemoryStore) -> None:
    needs: GcStore = store
    assert needs.kind_info("v1", "ConfigMap").namespaced


# -- background ---------------------------------------------------------------------------------------


def test_background_deletion_removes_a_chain_of_dependents(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner, controller=True))
    grandchild = config_map(store, "grandchild", ref(child))
    bystander = config_map(store, "bystander")

    assert delete(store, owner) is None
    assert not exists(store, child)
    assert not exists(store, grandchild)
    assert exists(store, bystander)


def test_no_policy_is_background_for_an_object_without_gc_finalizers(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner))
    delete(store, owner, None)
    assert not exists(store, child)


def test_a_dependent_with_another_owner_only_loses_the_reference_to_the_deleted_one(store: MemoryStore) -> None:
    first, second = config_map(store, "first"), config_map(store, "second")
    child = config_map(store, "child", ref(first), ref(second, block=True))

    delete(store, first)
    assert owner_uids(store, child) == [second["metadata"]["uid"]]
    latest = current(store, child)
    assert latest is not None
    assert latest["metadata"]["ownerReferences"] == [ref(second, block=True)]

    delete(store, second)
    assert not exists(store, child)


def test_an_owner_held_by_its_finalizer_keeps_its_dependents_until_it_is_removed(store: MemoryStore) -> None:
    owner = config_map(store, "owner", finalizers=(HOLD,))
    child = config_map(store, "child", ref(owner))

    marked = delete(store, owner, "Background")
    assert marked is not None and marked["metadata"]["deletionTimestamp"]
    assert exists(store, child)  # being deleted is a one-way trip, but the owner still exists

    release(store, owner)
    assert not exists(store, owner)
    assert not exists(store, child)


def test_a_dependent_with_finalizers_is_marked_and_stays_until_released(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner), finalizers=(HOLD,))

    delete(store, owner)
    latest = current(store, child)
    assert latest is not None and latest["metadata"]["deletionTimestamp"]
    release(store, child)
    assert not exists(store, child)


def test_a_reference_to_an_owner_that_never_existed_is_dangling(store: MemoryStore) -> None:
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "no-such-uid"}
    orphan = config_map(store, "orphan", ghost)
    assert not exists(store, orphan)  # kube-controller-manager collects it as soon as it sees it


def test_a_reference_matches_by_uid_not_by_name(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    impostor = {**ref(owner), "uid": "an-earlier-owner-with-this-name"}
    child = config_map(store, "child", impostor)
    assert exists(store, owner)
    assert not exists(store, child)


def test_a_dependent_with_a_solid_owner_loses_only_its_dangling_references(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    ghost = {"apiVersion": "v1", "kind": "ConfigMap", "name": "ghost", "uid": "no-such-uid"}
    child = config_map(store, "child", ghost, ref(owner))
    assert owner_uids(store, child) == [owner["metadata"]["uid"]]


def test_a_dependent_in_the_middle_of_a_chain_is_removed_before_its_own_dependents(store: MemoryStore) -> None:
    """Background: the child goes first, then the grandchild once it sees the child is gone."""
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner))
    grandchild = config_map(store, "grandchild", ref(child), finalizers=(HOLD,))
    delete(store, owner)
    assert not exists(store, child)
    latest = current(store, grandchild)
    assert latest is not None and latest["metadata"]["deletionTimestamp"]


def test_a_collected_dependent_honours_its_own_orphan_finalizer(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner), finalizers=(ORPHAN_FINALIZER,))
    grandchild = config_map(store, "grandchild", ref(child))

    delete(store, owner)
    assert not exists(store, child)
    assert exists(store, grandchild)
    assert owner_uids(store, grandchild) == []


# -- foreground ---------------------------------------------------------------------------------------


def test_foreground_deletion_marks_the_owner_and_waits_for_blocking_dependents(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner, block=True), finalizers=(HOLD,))

    answer = delete(store, owner, "Foreground")
    assert answer is not None
    assert answer["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]
    assert answer["metadata"]["deletionTimestamp"]
    latest_child = current(store, child)
    assert latest_child is not None and latest_child["metadata"]["deletionTimestamp"]
    latest_owner = current(store, owner)
    assert latest_owner is not None and latest_owner["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]

    release(store, child)
    assert not exists(store, child)
    assert not exists(store, owner)


def test_foreground_deletion_without_dependents_removes_the_owner(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    answer = delete(store, owner, "Foreground")
    assert answer is not None and answer["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]  # what the API answers
    assert not exists(store, owner)  # and then the collector releases it


def test_dependents_without_block_owner_deletion_do_not_hold_the_owner(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner), finalizers=(HOLD,))

    delete(store, owner, "Foreground")
    assert not exists(store, owner)
    latest = current(store, child)
    assert latest is not None and latest["metadata"]["deletionTimestamp"]  # deleted all the same


def test_foreground_deletion_is_recursive_for_dependents_that_have_dependents(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner, block=True))
    grandchild = config_map(store, "grandchild", ref(child, block=True), finalizers=(HOLD,))
    leaf = config_map(store, "leaf", ref(owner, block=True))

    delete(store, owner, "Foreground")
    assert not exists(store, leaf)  # no dependents of its own: deleted in the background
    latest_child = current(store, child)
    assert latest_child is not None
    assert latest_child["metadata"]["finalizers"] == [FOREGROUND_FINALIZER]  # deleted in the foreground
    assert exists(store, owner)

    release(store, grandchild)
    assert not exists(store, grandchild)
    assert not exists(store, child)
    assert not exists(store, owner)


def test_a_dependent_with_another_solid_owner_is_released_from_a_foreground_owner(store: MemoryStore) -> None:
    keeper, leaving = config_map(store, "keeper"), config_map(store, "leaving")
    child = config_map(store, "child", ref(keeper), ref(leaving, block=True))

    delete(store, leaving, "Foreground")
    assert not exists(store, leaving)
    assert owner_uids(store, child) == [keeper["metadata"]["uid"]]


def test_foreground_deletion_of_an_ownership_cycle_finishes(store: MemoryStore) -> None:
    a = config_map(store, "a")
    b = config_map(store, "b", ref(a, block=True))
    latest_a = current(store, a)
    assert latest_a is not None
    latest_a["metadata"]["ownerReferences"] = [ref(b, block=True)]
    store.update(latest_a)

    delete(store, a, "Foreground")
    assert not exists(store, a)
    assert not exists(store, b)


def test_a_later_background_delete_drops_the_foreground_finalizer(store: MemoryStore) -> None:
    owner = config_map(store, "owner", finalizers=(HOLD,))
    child = config_map(store, "child", ref(owner, block=True), finalizers=(HOLD,))
    delete(store, owner, "Foreground")
    delete(store, owner, "Background")
    latest = current(store, owner)
    assert latest is not None and latest["metadata"]["finalizers"] == [HOLD]
    release(store, owner)
    assert not exists(store, owner)
    release(store, child)
    assert not exists(store, child)


def test_a_foreground_finalizer_set_by_the_user_decides_a_delete_without_policy(store: MemoryStore) -> None:
    owner = config_map(store, "owner", finalizers=(FOREGROUND_FINALIZER,))
    child = config_map(store, "child", ref(owner, block=True), finalizers=(HOLD,))
    delete(store, owner)
    assert exists(store, owner)
    release(store, child)
    assert not exists(store, owner)


def test_a_dependent_created_under_a_waiting_owner_goes_when_the_owner_looks_again(store: MemoryStore) -> None:
    """As kube-controller-manager: nothing examines the late dependent until a blocking one goes away."""
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner, block=True), finalizers=(HOLD,))
    delete(store, owner, "Foreground")
    waiting_owner = current(store, owner)
    assert waiting_owner is not None
    late = config_map(store, "late", ref(waiting_owner, block=True))
    assert exists(store, late)

    release(store, child)
    assert not exists(store, late)
    assert not exists(store, owner)


# -- orphan -------------------------------------------------------------------------------------------


def test_orphan_deletion_removes_the_owner_and_keeps_the_dependents(store: MemoryStore) -> None:
    owner, other = config_map(store, "owner"), config_map(store, "other")
    child = config_map(store, "child", ref(owner, block=True))
    shared = config_map(store, "shared", ref(owner), ref(other))

    answer = delete(store, owner, "Orphan")
    assert answer is not None and answer["metadata"]["finalizers"] == [ORPHAN_FINALIZER]
    assert not exists(store, owner)
    latest = current(store, child)
    assert latest is not None and "ownerReferences" not in latest["metadata"]
    assert owner_uids(store, shared) == [other["metadata"]["uid"]]


def test_orphaning_releases_only_its_own_finalizer(store: MemoryStore) -> None:
    owner = config_map(store, "owner", finalizers=(HOLD,))
    child = config_map(store, "child", ref(owner))
    delete(store, owner, "Orphan")
    latest = current(store, owner)
    assert latest is not None and latest["metadata"]["finalizers"] == [HOLD]
    assert owner_uids(store, child) == []
    release(store, owner)
    assert exists(store, child)


# -- scopes -------------------------------------------------------------------------------------------


def test_a_namespaced_dependent_may_have_a_cluster_scoped_owner(store: MemoryStore) -> None:
    owner = thing(store, "owner")
    child = config_map(store, "child", ref(owner))
    assert exists(store, child)
    delete(store, owner)
    assert not exists(store, child)


def test_a_cluster_scoped_dependent_may_have_a_cluster_scoped_owner(store: MemoryStore) -> None:
    owner = thing(store, "owner")
    child = thing(store, "child", ref(owner))
    delete(store, owner)
    assert not exists(store, child)


def test_an_owner_in_another_namespace_is_dangling_and_reported(store: MemoryStore) -> None:
    namespace(store, "elsewhere")
    owner = config_map(store, "owner", namespace="elsewhere")
    child = config_map(store, "child", ref(owner))  # in "default"

    assert not exists(store, child)
    assert exists(store, owner)
    [event] = events(store)
    assert event["type"] == "Warning"
    assert event["reason"] == "OwnerRefInvalidNamespace"
    assert event["message"] == (
        f"ownerRef [v1/ConfigMap, namespace: default, name: owner, uid: {owner['metadata']['uid']}] "
        'does not exist in namespace "default"'
    )
    assert event["involvedObject"] == {
        "kind": "ConfigMap",
        "namespace": "default",
        "name": "child",
        "uid": child["metadata"]["uid"],
        "apiVersion": "v1",
    }
    assert event["source"] == {"component": "garbage-collector-controller"}
    assert event["reportingComponent"] == "garbage-collector-controller"
    assert event["firstTimestamp"] == event["lastTimestamp"] == "2026-01-02T03:04:05Z"
    assert event["count"] == 1
    assert event["metadata"]["name"].startswith("child.")


def test_a_cluster_scoped_dependent_of_a_namespaced_owner_is_never_collected(store: MemoryStore) -> None:
    owner = config_map(store, "owner")
    gone = thing(store, "gone")
    child = thing(store, "child", ref(owner), ref(gone))
    delete(store, gone)

    assert exists(store, child)
    assert len(owner_uids(store, child)) == 2  # unresolvable: even its dangling reference is left alone
    [event] = events(store, "default")  # reported in "default", the namespace of cluster-scoped events
    assert event["reason"] == "OwnerRefInvalidNamespace"
    assert event["message"] == (
        f"ownerRef [v1/ConfigMap, namespace: , name: owner, uid: {owner['metadata']['uid']}] "
        'does not exist in namespace ""'
    )
    assert "namespace" not in event["involvedObject"]

    delete(store, owner)
    assert exists(store, child)


def test_a_reference_to_a_kind_not_served_waits_until_the_kind_exists(store: MemoryStore) -> None:
    ghost = {"apiVersion": "example.com/v1", "kind": "Widget", "name": "w", "uid": "no-such-uid"}
    child = config_map(store, "child", ghost)
    assert exists(store, child)  # kube-controller-manager cannot tell: it retries

    store.register_kind("example.com/v1", "Widget")
    assert not exists(store, child)


# -- the API server's part: which finalizers a delete leaves ------------------------------------------


@pytest.mark.parametrize(
    ("finalizers", "policy", "expected"),
    [
        ([], "Background", None),
        ([], None, None),
        ([], "Foreground", ["foregroundDeletion"]),
        ([], "Orphan", ["orphan"]),
        (["x"], "Background", None),
        (["foregroundDeletion"], "Background", []),
        (["x", "foregroundDeletion"], None, None),
        (["orphan", "x"], None, None),
        (["orphan", "x"], "Foreground", ["x", "foregroundDeletion"]),
        (["foregroundDeletion", "x"], "Orphan", ["x", "orphan"]),
        (["orphan"], "Orphan", None),
    ],
)
def test_deletion_finalizers_follow_kube_apiserver(
    finalizers: list[str], policy: PropagationPolicy | None, expected: list[str] | None
) -> None:
    """Each row was checked against kube-apiserver v1.37.2 with a ConfigMap."""
    assert deletion_finalizers(finalizers, policy) == expected


# -- with persistence ---------------------------------------------------------------------------------


def test_garbage_left_in_the_state_file_is_collected_when_the_store_starts(tmp_path: Path) -> None:
    """A crash between a removal and its cascade leaves dependents of a missing owner: the next start collects them."""
    path = tmp_path / "state.db"
    store = new_store(state_path=path)
    owner = config_map(store, "owner")
    child = config_map(store, "child", ref(owner))
    store.close()

    with SqliteState(path) as state:  # the owner's removal was written; the cascade was not
        _, resource_version = state.load()
        state.commit(resource_version + 1, [], [("", "ConfigMap", "default", "owner")])

    restarted = new_store(state_path=path)
    try:
        assert not exists(restarted, owner)
        assert not exists(restarted, child)
    finally:
        restarted.close()
    with SqliteState(path) as state:
        names = [o["metadata"]["name"] for o in state.load()[0]]
    assert "child" not in names


# -- any sequence of deletions leaves the store collected -------------------------------------------------


def assert_collected(store: MemoryStore) -> None:
    """What kube-controller-manager converges to: no dangling reference, no owner waiting for nothing."""
    items, _ = store.list("v1", "ConfigMap", namespace="default")
    by_uid = {o["metadata"]["uid"]: o for o in items}
    for obj in items:
        meta = obj["metadata"]
        refs = meta.get("ownerReferences") or []
        finalizers = meta.get("finalizers") or []
        assert ORPHAN_FINALIZER not in finalizers, meta["name"]
        if not meta.get("deletionTimestamp"):
            for reference in refs:
                owner = by_uid.get(reference["uid"])
                assert owner is not None, f"{meta['name']} keeps a dangling reference"
                assert FOREGROUND_FINALIZER not in (owner["metadata"].get("finalizers") or []), meta["name"]
            continue
        assert finalizers, f"{meta['name']} is deleted but not removed"
        if FOREGROUND_FINALIZER in finalizers:
            blocking = [
                o
                for o in items
                for r in o["metadata"].get("ownerReferences") or []
                if r["uid"] == meta["uid"] and r.get("blockOwnerDeletion")
            ]
            assert blocking, f"{meta['name']} waits in the foreground for no dependent"


@given(
    graph=st.lists(
        st.tuples(st.sets(st.integers(0, 7), max_size=3), st.booleans(), st.booleans()), min_size=2, max_size=8
    ),
    steps=st.lists(
        st.tuples(st.integers(0, 7), st.sampled_from([None, "Background", "Foreground", "Orphan", "release"])),
        max_size=12,
    ),
)
@settings(max_examples=60, deadline=None)
def test_any_deletions_leave_the_store_collected(
    graph: list[tuple[set[int], bool, bool]], steps: list[tuple[int, PropagationPolicy | str | None]]
) -> None:
    """A random ownership graph (each object owned by some earlier ones, some blocking, some held by a
    finalizer), then random deletes with every policy and finalizer releases."""
    store = new_store()
    objects: list[Obj] = []
    for i, (owners, block, held) in enumerate(graph):
        refs = [ref(objects[o], block=block) for o in sorted(owners) if o < i and exists(store, objects[o])]
        objects.append(config_map(store, f"cm-{i}", *refs, finalizers=(HOLD,) if held else ()))
    assert_collected(store)
    for index, action in steps:
        target = objects[index % len(objects)]
        latest = current(store, target)
        if latest is None:
            continue
        if action == "release":
            if HOLD in (latest["metadata"].get("finalizers") or []):
                release(store, target)
        else:
            delete(store, target, action)  # type: ignore[arg-type]
        assert_collected(store)
