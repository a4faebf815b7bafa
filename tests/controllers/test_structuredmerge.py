"""Server-side apply as upstream's topology controller does it (spec §3.6): intents, change detection, the cache.

The pure parts (which fields an intent carries, what a dry run's answer is compared on) are checked directly;
change detection against each backend, including an ownership change nobody else would notice.
"""

from __future__ import annotations

import copy
from typing import Any

from controller_support import Env, eventually, example_class, example_cluster

from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.controllers import DEFAULT_SYNC_PERIOD
from clusterclass.controllers.topology.structuredmerge import (
    OBJECT_PATHS,
    AnswerCache,
    ServerSideApply,
    _cleaned,
    filter_object,
    intent_of,
    request_id,
)
from clusterclass.kube.workqueue import FakeClock

DESIRED: Obj = {
    "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
    "kind": "DockerCluster",
    "metadata": {
        "name": "c1-abcde",
        "namespace": "ns",
        "labels": {"cluster.x-k8s.io/cluster-name": "c1"},
        "annotations": {},
        "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": "c1-shim", "uid": "u1"}],
        "finalizers": ["not-ours"],
    },
    "spec": {"controlPlaneEndpoint": {"host": "", "port": 0}, "loadBalancer": {}},
    "status": {"ready": True},
}


def test_an_intent_carries_only_what_the_topology_owns() -> None:
    intent = intent_of(
        DESIRED,
        current=None,
        ignore=(("spec", "controlPlaneEndpoint", "host"), ("spec", "controlPlaneEndpoint", "port")),
    )
    assert intent == {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
        "kind": "DockerCluster",
        "metadata": {
            "name": "c1-abcde",
            "namespace": "ns",
            "labels": {"cluster.x-k8s.io/cluster-name": "c1"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Secret", "name": "c1-shim", "uid": "u1"}],
        },
        "spec": {"loadBalancer": {}},
    }  # no status, finalizers, empty annotations, nor the endpoint its ignored fields leave empty; as upstream's
    # filter, the empty loadBalancer the object has on purpose stays


def test_a_map_empty_on_purpose_stays_in_the_intent() -> None:
    # the in-memory DevCluster of upstream's e2e ClusterClass picks its backend by having an empty one
    desired = {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
        "kind": "DevCluster",
        "metadata": {"name": "c1-abcde", "namespace": "ns"},
        "spec": {"backend": {"inMemory": {}}},
    }
    intent = intent_of(desired, current=None, ignore=(("spec", "controlPlaneEndpoint"),))
    assert intent["spec"] == {"backend": {"inMemory": {}}}


def test_an_update_carries_the_current_uid_so_a_recreated_object_is_not_written() -> None:
    current = {**DESIRED, "metadata": {**DESIRED["metadata"], "uid": "live-uid", "resourceVersion": "7"}}
    assert intent_of(DESIRED, current=current)["metadata"]["uid"] == "live-uid"
    assert (
        "uid" not in intent_of({**DESIRED, "metadata": {**DESIRED["metadata"], "uid": "x"}}, current=None)["metadata"]
    )


def test_of_the_cluster_only_two_labels_and_two_refs() -> None:
    cluster = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "c1", "team": "a"}},
        "spec": {"infrastructureRef": {"name": "i"}, "controlPlaneRef": {"name": "cp"}, "topology": {"version": "v1"}},
    }
    assert intent_of(cluster, current=None, cluster=True) == {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "c1"}},
        "spec": {"infrastructureRef": {"name": "i"}, "controlPlaneRef": {"name": "cp"}},
    }


def test_a_dry_run_answer_is_compared_on_our_own_apply_ownership_only() -> None:
    answer = {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {
            "name": "x",
            "annotations": {
                "topology.cluster.x-k8s.io/dry-run": "",
                "cluster.x-k8s.io/conversion-data": "{}",
                "kept": "1",
            },
            "resourceVersion": "9",
            "managedFields": [
                {
                    "manager": "capi-topology",
                    "operation": "Apply",
                    "time": "t",
                    "fieldsV1": {
                        "f:metadata": {"f:annotations": {"f:topology.cluster.x-k8s.io/dry-run": {}, "f:kept": {}}}
                    },
                },
                {"manager": "capi-topology", "operation": "Update", "fieldsV1": {"f:spec": {}}},
                {"manager": "kubectl", "operation": "Apply", "fieldsV1": {"f:spec": {}}},
                {
                    "manager": "capi-topology",
                    "operation": "Apply",
                    "subresource": "status",
                    "fieldsV1": {"f:status": {}},
                },
            ],
        },
    }
    assert _cleaned(answer, OBJECT_PATHS) == {
        "apiVersion": "v1",
        "kind": "X",
        "metadata": {
            "name": "x",
            "annotations": {"kept": "1"},
            "managedFields": [
                {
                    "manager": "capi-topology",
                    "operation": "Apply",
                    "fieldsV1": {"f:metadata": {"f:annotations": {"f:kept": {}}}},
                }
            ],
        },
    }


def test_no_change_answers_expire_once_unused() -> None:
    clock = FakeClock()
    cache = AnswerCache(ttl=600, clock=clock)
    current = {"apiVersion": "v1", "kind": "X", "metadata": {"name": "x", "namespace": "n", "resourceVersion": "3"}}
    key = request_id(current, {"spec": {"a": 1}})
    assert key.startswith("v1, Kind=X.n/x.rv3.") and key != request_id(current, {"spec": {"a": 2}})
    cache.add(key)
    clock.advance(599)
    assert key in cache  # used: kept another 600 s from now
    clock.advance(599)
    assert key in cache
    clock.advance(601)
    assert key not in cache


def test_an_answer_used_at_every_resync_is_never_asked_again() -> None:
    """Upstream forgets an answer 10 minutes after making it, so every 10-minute resync of an idle Cluster costs its
    dry runs again; ours outlives three sync periods from its last use (docs/upstream-differences.md)."""
    clock = FakeClock()
    cache = AnswerCache(clock=clock)
    assert cache.ttl >= 3 * DEFAULT_SYNC_PERIOD
    cache.add("answer")
    for _ in range(12):  # two idle hours of resyncs, each a little late
        clock.advance(DEFAULT_SYNC_PERIOD + 5)
        assert "answer" in cache


def test_an_answer_outlives_status_writes_but_not_what_the_dry_runs_read() -> None:
    """Upstream keys its answers on the resourceVersion, so each provider status write costs two dry runs again; ours
    on what the answer depends on: a status write (new resourceVersion, same generation) or another manager's entry
    keeps it; a spec change (generation), a label, an annotation, an ownerReference, the uid or our own entry do not."""
    ours = {"manager": "capi-topology", "operation": "Apply", "apiVersion": "v1", "fieldsV1": {"f:spec": {}}}
    status = {"manager": "provider", "operation": "Update", "subresource": "status", "fieldsV1": {"f:status": {}}}
    current: Obj = {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
        "kind": "DockerMachinePool",
        "metadata": {
            "name": "p",
            "namespace": "n",
            "uid": "u1",
            "generation": 2,
            "resourceVersion": "10",
            "labels": {"a": "b"},
            "managedFields": [{**ours, "time": "2026-12-06T00:00:00Z"}, status],
        },
        "spec": {"x": 1},
        "status": {"ready": False},
    }
    intent = {"spec": {"x": 1}}
    key = request_id(current, intent)

    def changed(**metadata: Any) -> Obj:
        return {**current, "metadata": {**current["metadata"], **metadata}}

    status_written = {
        **changed(resourceVersion="11", managedFields=[{**ours, "time": "2026-12-06T00:01:00Z"}, status]),
        "status": {"ready": True},
    }
    assert request_id(status_written, intent) == key
    assert request_id(changed(managedFields=[ours]), intent) == key  # another manager's entry is not read
    # nor the conversion data a read in another version than the stored one carries (it follows the status)
    converted = changed(annotations={"cluster.x-k8s.io/conversion-data": '{"status":{"ready":true}}'})
    assert request_id(converted, intent) == request_id(changed(annotations={}), intent)
    for different in (
        changed(generation=3),
        changed(labels={"a": "c"}),
        changed(annotations={"k": "v"}),
        changed(ownerReferences=[{"kind": "MachinePool", "name": "p", "uid": "u0"}]),
        changed(uid="u2"),
        changed(managedFields=[{**ours, "fieldsV1": {"f:spec": {"f:x": {}}}}, status]),
    ):
        assert request_id(different, intent) != key


def test_filtering_keeps_label_keys_with_dots_whole() -> None:
    obj = {"metadata": {"labels": {"a.b/c": "1", "d": "2"}}}
    assert filter_object(obj, (("metadata", "labels", "a.b/c"),)) == {"metadata": {"labels": {"a.b/c": "1"}}}


async def test_a_field_another_manager_took_over_is_taken_back(running: Env) -> None:
    """A forced apply by another manager takes the field and its ownership; the topology takes both back."""
    env = running
    await env.apply(*example_class(), example_cluster())
    await env.wait_reconciled()
    pool = (await env.machine_pools())["mp-0"]
    ref = pool["spec"]["template"]["spec"]["infrastructureRef"]
    infra = await env.get(ref["apiVersion"], ref["kind"], ref["name"])
    images = infra["spec"]["template"]["preLoadImages"]
    taken = {
        "apiVersion": infra["apiVersion"],
        "kind": infra["kind"],
        "metadata": {"name": name_of(infra), "namespace": env.namespace},
        "spec": {"template": {"preLoadImages": ["stolen"]}},
    }
    await env.direct.apply(taken, field_manager="thief", force=True)

    def ours(obj: Obj) -> bool:
        return any(
            entry["manager"] == "capi-topology"
            and "f:preLoadImages" in entry.get("fieldsV1", {}).get("f:spec", {}).get("f:template", {})
            for entry in obj["metadata"]["managedFields"]
        )

    assert not ours(await env.get(ref["apiVersion"], ref["kind"], ref["name"]))

    async def taken_back() -> bool:
        await env.reconcile()
        obj = await env.get(ref["apiVersion"], ref["kind"], ref["name"])
        return ours(obj) and obj["spec"]["template"]["preLoadImages"] == images

    await eventually(taken_back, what="capi-topology to own the field, and its value, again")


async def test_change_detection_sends_two_dry_runs_once_then_nothing(running: Env) -> None:
    env = running
    await env.apply(*example_class(), example_cluster())
    await env.wait_reconciled()
    assert env.controllers is not None
    computation = await env.controllers.topology._compute(await env.cluster())
    current, desired = computation.current.control_plane, computation.desired.control_plane
    assert current is not None
    manager = env.controllers.manager  # written in the version the controller writes (v1beta2), as its own SSA
    ssa = ServerSideApply(
        env.direct, write_versions=manager.preferred_version, api_versions=manager.reader.api_versions
    )
    first = await ssa.diff(current, desired)
    assert not first.has_changes and ssa.counts.dry_runs == 2
    second = await ssa.diff(current, desired)
    assert not second.has_changes and (ssa.counts.dry_runs, ssa.counts.cache_hits) == (2, 1)
    changed = {**desired, "spec": {**desired["spec"], "replicas": 5}}
    third = await ssa.diff(current, changed)
    assert third.has_changes and third.has_spec_changes and ssa.counts.dry_runs == 4
    relabelled = {**desired, "metadata": {**desired["metadata"], "labels": {**desired["metadata"]["labels"], "x": "y"}}}
    fourth = await ssa.diff(current, relabelled)
    assert fourth.has_changes and not fourth.has_spec_changes


def test_expired_answers_are_swept_when_the_cache_has_doubled() -> None:
    """Not on every add: with many live answers that made each add copy the whole cache."""
    clock = FakeClock()
    cache = AnswerCache(ttl=600, clock=clock, sweep_floor=4)
    for i in range(4):
        cache.add(f"old-{i}")
    clock.advance(601)
    cache.add("new-0")  # at the floor: the four expired ids go
    assert len(cache) == 1
    for i in range(1, 9):
        cache.add(f"new-{i}")
    assert len(cache) == 9  # all live: the sweeps at 4 and 8 kept them, the next one is at 16
    clock.advance(601)
    for i in range(7):
        cache.add(f"newer-{i}")
    assert len(cache) == 16  # expired ids stay until then
    cache.add("last")
    assert len(cache) == 8 and "last" in cache and "new-8" not in cache


async def test_a_v1beta2_cluster_is_merge_patched_with_what_differs_and_nothing_else(running: Env) -> None:
    """As upstream v1.14: no dry runs and no capi-topology entry on the Cluster; a merge patch of what differs of its
    two labels, the upgrade-step annotation and the refs, and no request at all when nothing does."""
    env = running
    await env.apply(*example_class(), example_cluster())
    await env.wait_reconciled()
    assert env.controllers is not None
    cluster = await env.cluster()
    assert not [e for e in cluster["metadata"]["managedFields"] if e["manager"] == "capi-topology"]
    computation = await env.controllers.topology._compute(cluster)
    manager = env.controllers.manager
    ssa = ServerSideApply(
        env.direct, write_versions=manager.preferred_version, api_versions=manager.reader.api_versions
    )
    current, desired = computation.current.cluster, computation.desired.cluster
    unchanged = await ssa.diff(current, desired, cluster=True)
    assert not unchanged.has_changes and ssa.counts.dry_runs == 0

    upgrading = copy.deepcopy(desired)
    upgrading["metadata"].setdefault("annotations", {})["topology.internal.cluster.x-k8s.io/upgrade-step"] = "v1.29.0"
    diff = await ssa.diff(current, upgrading, cluster=True)
    assert diff.has_changes and not diff.has_spec_changes and ssa.counts.dry_runs == 0
    patched = await ssa.apply(upgrading, current=current, cluster=True)
    assert patched["metadata"]["annotations"]["topology.internal.cluster.x-k8s.io/upgrade-step"] == "v1.29.0"
    done = await ssa.apply(desired, current=patched, cluster=True)
    assert "topology.internal.cluster.x-k8s.io/upgrade-step" not in (done["metadata"].get("annotations") or {})
    assert dig(done, "spec", "topology") == dig(cluster, "spec", "topology")  # the user's fields untouched


class _RecordingClient:
    """Answers applies with what it was sent; records every intent."""

    def __init__(self) -> None:
        self.applied: list[Obj] = []

    async def apply(self, obj: Obj, **_: object) -> Obj:
        self.applied.append(copy.deepcopy(obj))
        return copy.deepcopy(obj)


HEALTH_CHECK: Obj = {
    "apiVersion": "cluster.x-k8s.io/v1beta1",
    "kind": "MachineHealthCheck",
    "metadata": {"name": "c1-md-0", "namespace": "ns", "labels": {"cluster.x-k8s.io/cluster-name": "c1"}},
    "spec": {
        "clusterName": "c1",
        "selector": {"matchLabels": {"a": "b"}},
        "nodeStartupTimeout": "10m0s",
        "unhealthyConditions": [{"type": "Ready", "status": "False", "timeout": "5m0s"}],
    },
}


async def test_a_health_check_written_in_v1beta1_carries_upstream_v16s_max_unhealthy_default() -> None:
    """Upstream v1.6 applied its checks defaulted by its webhook, maxUnhealthy 100% included; an intent without it
    would take the field over from that apply on the first reconcile after a handover (a write, no spec change).
    Written in v1beta2 (v1.14's generation) the check carries no such default, as v1.14 writes it."""
    for served, expected in (("cluster.x-k8s.io/v1beta1", "100%"), ("cluster.x-k8s.io/v1beta2", None)):
        client = _RecordingClient()

        async def write_versions(api_version: str, kind: str, served: str = served) -> str:
            return served

        ssa = ServerSideApply(client, write_versions=write_versions)  # type: ignore[arg-type]
        await ssa.apply(HEALTH_CHECK)
        (sent,) = client.applied
        assert sent["apiVersion"] == served
        if expected is None:
            assert "maxUnhealthy" not in sent["spec"] and "remediation" not in sent["spec"]
        else:
            assert sent["spec"]["maxUnhealthy"] == expected
    set_by_user = copy.deepcopy(HEALTH_CHECK)
    set_by_user["spec"]["maxUnhealthy"] = 2
    client = _RecordingClient()
    await ServerSideApply(client).apply(set_by_user)  # type: ignore[arg-type]
    assert client.applied[0]["spec"]["maxUnhealthy"] == 2
