"""Upgrade sequencing (spec §4, Appendix A9, A16–A19): control plane first, then workers a few at a time."""

from __future__ import annotations

from typing import Any

import builders as b
import pytest
from unit_support import (
    CLASS,
    FakeHooks,
    NodesThatMustNotBeAsked,
    World,
    compute,
    current_of,
    existing_worker,
    topology_workers,
)

from clusterclass.api.objects import Obj
from clusterclass.api.views import Topology
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WORKER_KINDS, WorkerKind
from clusterclass.errors import TopologyError
from clusterclass.topology.current import WorkerState
from clusterclass.topology.hooks import HookResponse, HookTracker
from clusterclass.topology.reader import IndexedNodes, NodeReadError
from clusterclass.topology.upgrade import (
    ControlPlaneUpgrade,
    UpgradeTracker,
    WorkerUpgrades,
    control_plane_version,
    is_deferred,
    new_tracker,
    upgrade_concurrency,
    worker_version,
)

KINDS = pytest.mark.parametrize("kind", WORKER_KINDS, ids=lambda k: k.kind)
AFTER_CP_UPGRADE = "AfterControlPlaneUpgrade"
BEFORE_CLUSTER_UPGRADE = "BeforeClusterUpgrade"
BLOCK = HookResponse(retry_after_seconds=30, message="wait")
PASS = HookResponse()

CONTROL_PLANE_STATES = {
    "stable": ControlPlaneUpgrade(),
    "provisioning": ControlPlaneUpgrade(is_provisioning=True),
    "upgrading": ControlPlaneUpgrade(is_upgrading=True),
    "starting": ControlPlaneUpgrade(is_starting_upgrade=True),
    "scaling": ControlPlaneUpgrade(is_scaling=True),
    "pending": ControlPlaneUpgrade(is_pending_upgrade=True),
}


def _topology_entries(kind: WorkerKind, *annotations: dict[str, str] | None) -> list[Any]:
    """Worker topologies ``mp-topology-1``, ``-2``... of ``kind`` carrying the given annotations."""
    entries = [
        b.worker_topology(CLASS[kind.kind], f"mp-topology-{i + 1}", annotations=a) for i, a in enumerate(annotations)
    ]
    return Topology(b.cluster(**topology_workers(kind, *entries))["spec"]["topology"]).workers(kind)


def _state(kind: WorkerKind, name: str, version: str) -> WorkerState:
    worker = existing_worker(kind, World(), name, "unused", version=version)[0]
    return WorkerState(object=worker, bootstrap={}, infrastructure={})


# --- worker version: the decision table of spec §4.5, for both kinds --------------------------------------

#: (exists, control plane, others upgrading, concurrency, AfterControlPlaneUpgrade, annotations, version, recorded)
WORKER_VERSION_CASES = [
    ("new worker, control plane stable: not pending create", False, "stable", 0, 1, None, None, "v1.2.3", {}),
    ("new worker, control plane scaling: pending create", False, "scaling", 0, 1, None, None, "v1.2.3", {"pending_create": {"mp-topology-1"}}),  # noqa: E501
    ("new worker, control plane upgrading: pending create", False, "upgrading", 0, 1, None, None, "v1.2.3", {"pending_create": {"mp-topology-1"}}),  # noqa: E501
    ("new worker, AfterControlPlaneUpgrade blocking: pending create", False, "stable", 0, 1, BLOCK, None, "v1.2.3", {"pending_create": {"mp-topology-1"}}),  # noqa: E501
    ("upgrade deferred", True, "stable", 0, 1, None, {b.DEFER_UPGRADE: ""}, "v1.2.2", {"pending_upgrade": {"mp-1"}, "deferred": {"mp-1"}}),  # noqa: E501
    ("control plane upgrading", True, "upgrading", 0, 1, None, None, "v1.2.2", {"pending_upgrade": {"mp-1"}}),
    ("control plane starting upgrade", True, "starting", 0, 1, None, None, "v1.2.2", {"pending_upgrade": {"mp-1"}}),
    ("control plane scaling", True, "scaling", 0, 1, None, None, "v1.2.2", {"pending_upgrade": {"mp-1"}}),
    ("control plane pending upgrade", True, "pending", 0, 1, None, None, "v1.2.2", {"pending_upgrade": {"mp-1"}}),
    ("control plane provisioning counts as stable", True, "provisioning", 0, 1, None, None, "v1.2.3", {"upgrading": {"mp-1"}}),  # noqa: E501
    ("control plane stable, no worker upgrading", True, "stable", 0, 1, None, None, "v1.2.3", {"upgrading": {"mp-1"}}),
    ("others upgrading below the limit but AfterControlPlaneUpgrade blocking", True, "stable", 1, 2, BLOCK, None, "v1.2.2", {"pending_upgrade": {"mp-1"}}),  # noqa: E501
    ("others upgrading, concurrency limit not reached", True, "stable", 1, 2, None, None, "v1.2.3", {"upgrading": {"mp-1"}}),  # noqa: E501
    ("others upgrading, concurrency limit reached", True, "stable", 2, 2, None, None, "v1.2.2", {"pending_upgrade": {"mp-1"}}),  # noqa: E501
    ("AfterControlPlaneUpgrade answered but not blocking", True, "stable", 0, 1, PASS, None, "v1.2.3", {"upgrading": {"mp-1"}}),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("exists", "cp", "others", "concurrency", "hook", "annotations", "version", "recorded"),
    [case[1:] for case in WORKER_VERSION_CASES],
    ids=[case[0] for case in WORKER_VERSION_CASES],
)
@KINDS
def test_worker_version(
    kind: WorkerKind,
    exists: bool,
    cp: str,
    others: int,
    concurrency: int,
    hook: HookResponse | None,
    annotations: dict[str, str] | None,
    version: str,
    recorded: dict[str, set[str]],
) -> None:
    other_names = {f"other-{i}" for i in range(others)}
    tracker = UpgradeTracker(control_plane=CONTROL_PLANE_STATES[cp])
    tracker.workers(kind).max_concurrency = concurrency
    tracker.workers(kind).upgrading.update(other_names)
    hooks = HookTracker(responses={AFTER_CP_UPGRADE: hook} if hook else {})
    got = worker_version(
        desired="v1.2.3",
        topology_workers=_topology_entries(kind, annotations),
        index=0,
        current=_state(kind, "mp-1", "v1.2.2") if exists else None,
        tracker=tracker,
        hook_tracker=hooks,
    )
    assert got == version
    upgrades = tracker.workers(kind)
    assert upgrades.pending_create == recorded.get("pending_create", set())
    assert upgrades.pending_upgrade == recorded.get("pending_upgrade", set())
    assert upgrades.deferred == recorded.get("deferred", set())
    assert upgrades.upgrading == other_names | recorded.get("upgrading", set())
    other_kind = tracker.machine_deployments if kind is MACHINE_POOL else tracker.machine_pools
    assert other_kind == WorkerUpgrades()


@pytest.mark.parametrize("cp", ["stable", "upgrading", "scaling", "pending"])
@KINDS
def test_worker_already_at_the_desired_version_keeps_it_and_records_nothing(kind: WorkerKind, cp: str) -> None:
    tracker = UpgradeTracker(control_plane=CONTROL_PLANE_STATES[cp])
    got = worker_version(
        desired="v1.2.3",
        topology_workers=_topology_entries(kind, {b.DEFER_UPGRADE: ""}),
        index=0,
        current=_state(kind, "mp-1", "v1.2.3"),
        tracker=tracker,
        hook_tracker=HookTracker(responses={AFTER_CP_UPGRADE: BLOCK}),
    )
    assert got == "v1.2.3"
    assert tracker.workers(kind).idle


@KINDS
def test_a_worker_whose_instances_run_the_new_version_takes_it_without_waiting_for_itself(kind: WorkerKind) -> None:
    """Its own version write was lost after its infrastructure's went through: its Machines or Nodes run the new
    version, so it counts as upgrading and holds the one concurrency slot; it takes the version at once (found by
    tests/e2e/test_e2e_faults.py: a conflict on a MachinePool's version write left it waiting for itself)."""
    state = _state(kind, "mp-1", "v1.2.2")
    if kind is MACHINE_POOL:
        state.nodes = {"n1": b.node("n1", "v1.2.3")}
    else:
        state.machines = [b.machine("m1", version="v1.2.3", labels={})]
    tracker = UpgradeTracker(control_plane=CONTROL_PLANE_STATES["stable"])
    tracker.workers(kind).upgrading.add("mp-1")  # what mark_upgrading_workers finds: instances and spec disagree
    got = worker_version(
        desired="v1.2.3",
        topology_workers=_topology_entries(kind, None),
        index=0,
        current=state,
        tracker=tracker,
        hook_tracker=HookTracker(),
    )
    assert got == "v1.2.3"
    assert tracker.workers(kind).pending_upgrade == set()
    # one that is upgrading toward the old version (its instances behind) still waits for a slot
    behind = _state(kind, "mp-2", "v1.2.2")
    if kind is MACHINE_POOL:
        behind.nodes = {"n2": b.node("n2", "v1.2.1")}
    else:
        behind.machines = [b.machine("m2", version="v1.2.1", labels={})]
    tracker.workers(kind).upgrading.add("mp-2")
    got = worker_version(
        desired="v1.2.3",
        topology_workers=_topology_entries(kind, None),
        index=0,
        current=behind,
        tracker=tracker,
        hook_tracker=HookTracker(),
    )
    assert got == "v1.2.2"
    assert tracker.workers(kind).pending_upgrade == {"mp-2"}


# --- worker version through the whole pipeline ------------------------------------------------------------


def _stable_control_plane(version: str = "v1.2.3") -> Obj:
    return b.control_plane(version=version, status_version=version, replicas=2)


def _other_upgrading_worker(kind: WorkerKind, world: World) -> tuple[list[Obj], Obj, IndexedNodes]:
    """A worker ``other`` at the desired version whose Machines/Nodes are still at the old one."""
    objects = existing_worker(kind, world, "other", "other", version="v1.2.3", node_refs=["n1"])
    if kind is MACHINE_DEPLOYMENT:
        objects.append(b.machine("m1", version="v1.2.2", labels=objects[0]["spec"]["selector"]["matchLabels"]))
    return objects, b.worker_topology(CLASS[kind.kind], "other"), IndexedNodes([b.node("n1", "v1.2.2")])


@pytest.mark.parametrize(
    ("exists", "other_upgrading", "concurrency", "expected"),
    [
        (False, False, "1", "v1.2.3"),
        (False, True, "1", "v1.2.3"),
        (True, True, "1", "v1.2.2"),
        (True, True, "2", "v1.2.3"),
    ],
    ids=[
        "new worker takes the topology version",
        "new worker takes the topology version while another worker upgrades",
        "existing worker waits when another upgrades and the concurrency limit is reached",
        "existing worker upgrades when another upgrades below the concurrency limit",
    ],
)
@KINDS
def test_worker_version_with_a_stable_control_plane(
    kind: WorkerKind, exists: bool, other_upgrading: bool, concurrency: str, expected: str
) -> None:
    world = World()
    cp = _stable_control_plane()
    objects = [*world.objects(), cp]
    entries = []
    nodes = IndexedNodes([])
    if other_upgrading:
        other_objects, other_entry, nodes = _other_upgrading_worker(kind, world)
        objects += other_objects
        entries.append(other_entry)
    if exists:
        objects += existing_worker(kind, world, "mp-1", "mp-topology-1", version="v1.2.2")
    entries.append(b.worker_topology(CLASS[kind.kind], "mp-topology-1"))
    cluster = b.cluster(
        annotations={b.UPGRADE_CONCURRENCY: concurrency},
        control_plane={"replicas": 2},
        control_plane_ref=cp,
        **topology_workers(kind, *entries),
    )
    computation = compute(cluster, objects, nodes=nodes)
    worker = computation.desired.workers(kind)["mp-topology-1"].object
    assert worker["spec"]["template"]["spec"]["version"] == expected
    assert ("other" in computation.upgrades.workers(kind).upgrading) is other_upgrading


@pytest.mark.parametrize(
    ("response", "existing_version", "recorded"),
    [
        (BLOCK, "v1.2.2", "pending_upgrade"),
        (PASS, "v1.2.3", "upgrading"),
    ],
    ids=["blocking hook holds the worker", "non-blocking hook releases the worker"],
)
@KINDS
def test_after_control_plane_upgrade_hook_holds_workers(
    kind: WorkerKind, response: HookResponse, existing_version: str, recorded: str
) -> None:
    world = World()
    cp = _stable_control_plane()
    objects = [*world.objects(), cp, *existing_worker(kind, world, "mp-1", "mp-topology-1", version="v1.2.2")]
    entries = [b.worker_topology(CLASS[kind.kind], "mp-topology-1"), b.worker_topology(CLASS[kind.kind], "new-one")]
    cluster = b.cluster(
        annotations={b.PENDING_HOOKS: f"AfterClusterUpgrade,{AFTER_CP_UPGRADE}"},
        control_plane={"replicas": 2},
        control_plane_ref=cp,
        **topology_workers(kind, *entries),
    )
    hooks = FakeHooks({AFTER_CP_UPGRADE: response})
    computation = compute(cluster, objects, hooks=hooks)
    assert hooks.calls == [(AFTER_CP_UPGRADE, {"kubernetesVersion": "v1.2.3"})]
    worker = computation.desired.workers(kind)["mp-topology-1"].object
    assert worker["spec"]["template"]["spec"]["version"] == existing_version
    upgrades = computation.upgrades.workers(kind)
    assert getattr(upgrades, recorded) == {"mp-1"}
    assert upgrades.pending_create == ({"new-one"} if response.blocking else set())
    assert (AFTER_CP_UPGRADE in computation.hooks.marked_done) is not response.blocking


# --- deferral ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotations", "deferred"),
    [
        ([{b.DEFER_UPGRADE: ""}, None, {b.HOLD_UPGRADE_SEQUENCE: ""}, None], [True, False, True, True]),
        ([None, {b.HOLD_UPGRADE_SEQUENCE: ""}], [False, True]),
        ([{b.DEFER_UPGRADE: "any value"}, None], [True, False]),
        ([{b.HOLD_UPGRADE_SEQUENCE: ""}, {b.DEFER_UPGRADE: ""}, None], [True, True, True]),
        ([{"unrelated": ""}, None], [False, False]),
    ],
)
@KINDS
def test_is_deferred(kind: WorkerKind, annotations: list[dict[str, str] | None], deferred: list[bool]) -> None:
    entries = _topology_entries(kind, *annotations)
    assert [is_deferred(entries, i) for i in range(len(entries))] == deferred


def _both_kinds_cluster(
    md_annotations: dict[str, str] | None, mp_annotations: dict[str, str] | None, **cluster: Any
) -> tuple[Obj, list[Obj]]:
    """Cluster with one MD ``md-0`` and one MP ``mp-0`` at v1.2.2, control plane stable at v1.2.3."""
    world = World()
    cp = _stable_control_plane()
    objects = [
        *world.objects(),
        cp,
        *existing_worker(MACHINE_DEPLOYMENT, world, "md-0-obj", "md-0"),
        *existing_worker(MACHINE_POOL, world, "mp-0-obj", "mp-0"),
    ]
    built = b.cluster(
        control_plane={"replicas": 2},
        control_plane_ref=cp,
        machine_deployments=[b.worker_topology("md-class", "md-0", annotations=md_annotations)],
        machine_pools=[b.worker_topology("mp-class", "mp-0", annotations=mp_annotations)],
        **cluster,
    )
    return built, objects


@pytest.mark.parametrize(
    ("md_annotations", "mp_annotations", "md_deferred", "mp_deferred"),
    [
        ({b.HOLD_UPGRADE_SEQUENCE: ""}, None, True, False),
        (None, {b.HOLD_UPGRADE_SEQUENCE: ""}, False, True),
        ({b.DEFER_UPGRADE: ""}, {b.DEFER_UPGRADE: ""}, True, True),
        (None, None, False, False),
    ],
)
def test_machine_deployment_and_machine_pool_lists_are_deferred_independently(
    md_annotations: Any, mp_annotations: Any, md_deferred: bool, mp_deferred: bool
) -> None:
    cluster, objects = _both_kinds_cluster(md_annotations, mp_annotations)
    upgrades = compute(cluster, objects).upgrades
    assert (upgrades.machine_deployments.deferred == {"md-0-obj"}) is md_deferred
    assert (upgrades.machine_pools.deferred == {"mp-0-obj"}) is mp_deferred
    assert (upgrades.machine_deployments.upgrading == {"md-0-obj"}) is not md_deferred
    assert (upgrades.machine_pools.upgrading == {"mp-0-obj"}) is not mp_deferred


# --- concurrency ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("annotation", "expected"),
    [
        (None, 1),
        ("1", 1),
        ("3", 3),
        ("0", 1),
        ("-2", 1),
        ("abc", 1),
        ("2.5", 1),
        ("", 1),
    ],
)
def test_upgrade_concurrency_annotation(annotation: str | None, expected: int) -> None:
    cluster = b.cluster(annotations={b.UPGRADE_CONCURRENCY: annotation} if annotation is not None else None)
    assert upgrade_concurrency(cluster) == expected
    tracker = new_tracker(cluster)
    assert tracker.machine_deployments.max_concurrency == tracker.machine_pools.max_concurrency == expected


def test_machine_deployments_and_machine_pools_have_separate_concurrency_slots() -> None:
    cluster, objects = _both_kinds_cluster(None, None)
    computation = compute(cluster, objects)
    assert computation.upgrades.machine_deployments.upgrading == {"md-0-obj"}
    assert computation.upgrades.machine_pools.upgrading == {"mp-0-obj"}
    assert computation.desired.machine_deployments["md-0"].object["spec"]["template"]["spec"]["version"] == "v1.2.3"
    assert computation.desired.machine_pools["mp-0"].object["spec"]["template"]["spec"]["version"] == "v1.2.3"


@pytest.mark.parametrize(
    ("concurrency", "upgrading", "pending"),
    [
        ("1", ["w-a"], ["w-b", "w-c"]),
        ("2", ["w-a", "w-b"], ["w-c"]),
        ("5", ["w-a", "w-b", "w-c"], []),
    ],
)
@KINDS
def test_earlier_topology_entries_win_the_concurrency_slots(
    kind: WorkerKind, concurrency: str, upgrading: list[str], pending: list[str]
) -> None:
    world = World()
    cp = _stable_control_plane()
    objects = [*world.objects(), cp]
    entries = []
    for topology_name in ("c", "a", "b"):  # object names sort differently from the topology order
        objects += existing_worker(kind, world, f"w-{topology_name}", topology_name)
    for topology_name in ("a", "b", "c"):
        entries.append(b.worker_topology(CLASS[kind.kind], topology_name))
    cluster = b.cluster(
        annotations={b.UPGRADE_CONCURRENCY: concurrency},
        control_plane={"replicas": 2},
        control_plane_ref=cp,
        **topology_workers(kind, *entries),
    )
    upgrades = compute(cluster, objects).upgrades.workers(kind)
    assert sorted(upgrades.upgrading) == upgrading
    assert sorted(upgrades.pending_upgrade) == pending


@KINDS
def test_workers_already_upgrading_take_the_slots_first(kind: WorkerKind) -> None:
    world = World()
    cp = _stable_control_plane()
    other_objects, other_entry, nodes = _other_upgrading_worker(kind, world)
    objects = [*world.objects(), cp, *other_objects, *existing_worker(kind, world, "mp-1", "first")]
    cluster = b.cluster(
        control_plane={"replicas": 2},
        control_plane_ref=cp,
        **topology_workers(kind, b.worker_topology(CLASS[kind.kind], "first"), other_entry),
    )
    upgrades = compute(cluster, objects, nodes=nodes).upgrades.workers(kind)
    assert upgrades.upgrading == {"other"}
    assert upgrades.pending_upgrade == {"mp-1"}


# --- control plane version (spec §4.4) ---------------------------------------------------------------------

#: (control plane (spec.version, status.version, spec.replicas, status counts), replicas managed, workers
#:  upgrading (md, mp), BeforeClusterUpgrade response, expected version, expected control plane flags)
CP_CASES = [
    ("no current control plane", None, False, (0, 0), None, "v1.2.3", {}),
    ("provisioning: no status.version", ("v1.2.2", None, 3, 3), True, (0, 0), None, "v1.2.2", {"is_provisioning": True, "is_pending_upgrade": True}),  # noqa: E501
    ("provisioning at the desired version", ("v1.2.3", None, 3, 3), True, (0, 0), None, "v1.2.3", {"is_provisioning": True}),  # noqa: E501
    ("upgrading: spec.version ahead of status.version", ("v1.2.2", "v1.2.1", 3, 3), True, (0, 0), None, "v1.2.2", {"is_upgrading": True, "is_pending_upgrade": True}),  # noqa: E501
    ("upgrading: only build metadata ahead", ("v1.2.3+foo.2", "v1.2.3+foo.1", 3, 3), True, (0, 0), None, "v1.2.3+foo.2", {"is_upgrading": True, "is_pending_upgrade": True}),  # noqa: E501
    ("at desired version and stable", ("v1.2.3", "v1.2.3", 3, 3), True, (0, 0), None, "v1.2.3", {}),
    ("scaling with topology replicas set", ("v1.2.2", "v1.2.2", 3, 2), True, (0, 0), None, "v1.2.2", {"is_scaling": True, "is_pending_upgrade": True}),  # noqa: E501
    ("scaling ignored without topology replicas", ("v1.2.2", "v1.2.2", 3, 2), False, (0, 0), None, "v1.2.3", {"is_starting_upgrade": True}),  # noqa: E501
    ("machine deployments still upgrading hold the control plane", ("v1.2.2", "v1.2.2", 3, 3), True, (1, 0), None, "v1.2.2", {"is_pending_upgrade": True}),  # noqa: E501
    ("machine pools still upgrading hold the control plane", ("v1.2.2", "v1.2.2", 3, 3), True, (0, 1), None, "v1.2.2", {"is_pending_upgrade": True}),  # noqa: E501
    ("BeforeClusterUpgrade blocking", ("v1.2.2", "v1.2.2", 3, 3), True, (0, 0), BLOCK, "v1.2.2", {"is_pending_upgrade": True}),  # noqa: E501
    ("BeforeClusterUpgrade passing: upgrade starts", ("v1.2.2", "v1.2.2", 3, 3), True, (0, 0), PASS, "v1.2.3", {"is_starting_upgrade": True}),  # noqa: E501
    ("Runtime SDK off: upgrade starts", ("v1.2.2", "v1.2.2", 3, 3), True, (0, 0), None, "v1.2.3", {"is_starting_upgrade": True}),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("cp", "replicas_managed", "workers_upgrading", "before_upgrade", "version", "flags"),
    [case[1:] for case in CP_CASES],
    ids=[case[0] for case in CP_CASES],
)
def test_control_plane_version(
    cp: tuple[str, str | None, int, int] | None,
    replicas_managed: bool,
    workers_upgrading: tuple[int, int],
    before_upgrade: HookResponse | None,
    version: str,
    flags: dict[str, bool],
) -> None:
    current = None
    if cp is not None:
        spec_version, status_version, replicas, status_replicas = cp
        current = b.control_plane(
            version=spec_version, status_version=status_version, replicas=replicas, status_replicas=status_replicas
        )
    tracker = UpgradeTracker()
    tracker.machine_deployments.upgrading.update(f"md-{i}" for i in range(workers_upgrading[0]))
    tracker.machine_pools.upgrading.update(f"mp-{i}" for i in range(workers_upgrading[1]))
    hooks = FakeHooks({BEFORE_CLUSTER_UPGRADE: before_upgrade}) if before_upgrade is not None else None
    hook_tracker = HookTracker()
    got = control_plane_version(
        desired="v1.2.3",
        current_cp=current,
        cluster=b.cluster(),
        replicas_managed=replicas_managed,
        tracker=tracker,
        hook_tracker=hook_tracker,
        hooks=hooks,
    )
    assert got == version
    assert tracker.control_plane == ControlPlaneUpgrade(**flags)


def test_before_cluster_upgrade_is_asked_with_both_versions_and_marks_the_after_hooks_pending() -> None:
    hooks = FakeHooks({BEFORE_CLUSTER_UPGRADE: PASS})
    hook_tracker = HookTracker()
    control_plane_version(
        desired="v1.2.3",
        current_cp=b.control_plane(version="v1.2.2", status_version="v1.2.2"),
        cluster=b.cluster(),
        replicas_managed=False,
        tracker=UpgradeTracker(),
        hook_tracker=hook_tracker,
        hooks=hooks,
    )
    assert hooks.calls == [
        (BEFORE_CLUSTER_UPGRADE, {"fromKubernetesVersion": "v1.2.2", "toKubernetesVersion": "v1.2.3"})
    ]
    assert hook_tracker.marked_pending == {AFTER_CP_UPGRADE, "AfterClusterUpgrade"}
    assert hook_tracker.responses == {BEFORE_CLUSTER_UPGRADE: PASS}


def test_blocking_before_cluster_upgrade_marks_nothing_pending() -> None:
    hook_tracker = HookTracker()
    control_plane_version(
        desired="v1.2.3",
        current_cp=b.control_plane(version="v1.2.2", status_version="v1.2.2"),
        cluster=b.cluster(),
        replicas_managed=False,
        tracker=UpgradeTracker(),
        hook_tracker=hook_tracker,
        hooks=FakeHooks({BEFORE_CLUSTER_UPGRADE: BLOCK}),
    )
    assert hook_tracker.marked_pending == set()
    assert hook_tracker.is_blocking(BEFORE_CLUSTER_UPGRADE)


@pytest.mark.parametrize(
    ("pending_hooks", "response", "called", "done"),
    [
        (AFTER_CP_UPGRADE, PASS, True, True),
        (f"AfterClusterUpgrade,{AFTER_CP_UPGRADE}", BLOCK, True, False),
        ("AfterClusterUpgrade", PASS, False, False),
        (None, PASS, False, False),
    ],
)
def test_after_control_plane_upgrade_is_called_only_when_pending_and_at_the_desired_version(
    pending_hooks: str | None, response: HookResponse, called: bool, done: bool
) -> None:
    hooks = FakeHooks({AFTER_CP_UPGRADE: response})
    hook_tracker = HookTracker()
    version = control_plane_version(
        desired="v1.2.3",
        current_cp=b.control_plane(version="v1.2.3", status_version="v1.2.3"),
        cluster=b.cluster(annotations={b.PENDING_HOOKS: pending_hooks} if pending_hooks else None),
        replicas_managed=False,
        tracker=UpgradeTracker(),
        hook_tracker=hook_tracker,
        hooks=hooks,
    )
    assert version == "v1.2.3"
    assert bool(hooks.calls) is called
    assert (AFTER_CP_UPGRADE in hook_tracker.marked_done) is done


def test_control_plane_holds_while_a_machine_deployment_and_a_machine_pool_upgrade() -> None:
    world = World()
    cp = _stable_control_plane("v1.2.2")
    md_objects = existing_worker(MACHINE_DEPLOYMENT, world, "md-0-obj", "md-0", version="v1.2.2")
    md_objects.append(b.machine("m1", version="v1.2.1", labels=md_objects[0]["spec"]["selector"]["matchLabels"]))
    mp_objects = existing_worker(MACHINE_POOL, world, "mp-0-obj", "mp-0", version="v1.2.2", node_refs=["n1"])
    cluster = b.cluster(
        control_plane={"replicas": 2},
        control_plane_ref=cp,
        machine_deployments=[b.worker_topology("md-class", "md-0")],
        machine_pools=[b.worker_topology("mp-class", "mp-0")],
    )
    nodes = IndexedNodes([b.node("n1", "v1.2.1")])
    computation = compute(cluster, [*world.objects(), cp, *md_objects, *mp_objects], nodes=nodes)
    assert computation.desired.control_plane["spec"]["version"] == "v1.2.2"
    assert computation.upgrades.control_plane.is_pending_upgrade
    assert computation.upgrades.machine_deployments.upgrading == {"md-0-obj"}
    assert computation.upgrades.machine_pools.upgrading == {"mp-0-obj"}


# --- "is this worker upgrading?" (spec §4.3) ---------------------------------------------------------------


def _pool_cluster(node_refs: list[str] | None, version: str | None = "v1.28.0") -> tuple[Obj, list[Obj]]:
    world = World()
    objects = existing_worker(MACHINE_POOL, world, "pool-obj", "pool", version="v1.28.0", node_refs=node_refs)
    if version is None:
        del objects[0]["spec"]["template"]["spec"]["version"]
    cluster = b.cluster(version="v1.28.0", machine_pools=[b.worker_topology("mp-class", "pool")])
    return cluster, [*world.objects(), *objects]


@pytest.mark.parametrize("node_refs", [None, []], ids=["no nodeRefs", "empty nodeRefs"])
def test_machine_pool_without_node_refs_never_asks_the_workload_cluster(node_refs: list[str] | None) -> None:
    cluster, objects = _pool_cluster(node_refs)
    nodes = NodesThatMustNotBeAsked()
    computation = compute(cluster, objects, nodes=nodes)
    assert nodes.asked == []
    assert computation.current.machine_pools["pool"].nodes == {}
    assert computation.upgrades.machine_pools.upgrading == set()
    assert computation.warnings == []


def test_machine_pool_without_a_version_never_asks_the_workload_cluster() -> None:
    cluster, objects = _pool_cluster(["n1"], version=None)
    nodes = NodesThatMustNotBeAsked()
    computation = compute(cluster, objects, nodes=nodes)
    assert nodes.asked == []
    assert computation.current.machine_pools["pool"].nodes == {}


@pytest.mark.parametrize(
    ("kubelet_version", "upgrading"),
    [
        ("v1.28.0+vmware.1", False),
        ("v1.28.0", False),
        ("v1.27.3", True),
        ("v1.28.1+vmware.1", True),
        ("v1.28.0-rc.1", True),
        ("not-a-version", True),
    ],
)
def test_kubelet_build_metadata_does_not_make_a_pool_upgrading(kubelet_version: str, upgrading: bool) -> None:
    cluster, objects = _pool_cluster(["n1", "n2"])
    nodes = IndexedNodes([b.node("n1", "v1.28.0"), b.node("n2", kubelet_version)])
    computation = compute(cluster, objects, nodes=nodes)
    assert (computation.upgrades.machine_pools.upgrading == {"pool-obj"}) is upgrading


def test_node_without_kubelet_version_makes_a_pool_upgrading() -> None:
    cluster, objects = _pool_cluster(["n1"])
    bare = b.obj("v1", "Node", "n1", namespace=None)
    assert compute(cluster, objects, nodes=IndexedNodes([bare])).upgrades.machine_pools.upgrading == {"pool-obj"}


@pytest.mark.parametrize(
    ("machines_up_to_date", "upgrading"),
    [("False", True), ("True", False), ("Unknown", False), (None, False)],
)
def test_a_pool_whose_own_status_says_machines_are_not_up_to_date_is_upgrading_without_any_node(
    machines_up_to_date: str | None, upgrading: bool
) -> None:
    """Cluster API #10059: the pool's own v1beta2 ``MachinesUpToDate`` is the signal, even while its nodeRefs are
    empty (a managed pool mid-rollout) and no Node can be asked; without the condition (upstream v1.14's pools) the
    Nodes decide."""
    cluster, objects = _pool_cluster([])
    pool = next(o for o in objects if o["kind"] == "MachinePool")
    if machines_up_to_date is not None:
        pool.setdefault("status", {})["v1beta2"] = {
            "conditions": [{"type": "MachinesUpToDate", "status": machines_up_to_date, "reason": "NotUpToDate"}]
        }
    nodes = NodesThatMustNotBeAsked()
    computation = compute(cluster, objects, nodes=nodes)
    assert nodes.asked == []
    assert (computation.upgrades.machine_pools.upgrading == {"pool-obj"}) is upgrading


class UnreachableWorkloadCluster:
    def get_node(self, cluster: Obj, name: str) -> Obj | None:
        raise NodeReadError("connection refused")


def test_unreachable_workload_cluster_is_a_topology_error() -> None:
    cluster, objects = _pool_cluster(["n1"])
    with pytest.raises(TopologyError) as err:
        compute(cluster, objects, nodes=UnreachableWorkloadCluster())
    assert err.value.message.startswith("failed to check if any MachinePool is upgrading")
    assert "pool-obj" in err.value.message
    assert "n1" in err.value.message
    assert "connection refused" in err.value.message


def test_unknown_node_is_a_warning_and_the_pool_is_assumed_not_upgrading() -> None:
    cluster, objects = _pool_cluster(["n1", "n2"])
    computation = compute(cluster, objects, nodes=IndexedNodes([b.node("n1", "v1.28.0")]))
    assert computation.upgrades.machine_pools.upgrading == set()
    assert computation.current.machine_pools["pool"].nodes["n2"] is None
    assert len(computation.warnings) == 1
    assert "pool-obj" in computation.warnings[0]
    assert "n2" in computation.warnings[0]


def test_nodes_of_another_cluster_are_not_used() -> None:
    cluster, objects = _pool_cluster(["n1"])
    nodes = IndexedNodes([b.node("n1", "v1.27.0", cluster_name="someone-else")])
    computation = compute(cluster, objects, nodes=nodes)
    assert computation.current.machine_pools["pool"].nodes == {"n1": None}
    assert computation.upgrades.machine_pools.upgrading == set()


def _deployment_cluster(machine_versions: list[str | None]) -> tuple[Obj, list[Obj]]:
    world = World()
    objects = existing_worker(MACHINE_DEPLOYMENT, world, "md-obj", "md", version="v1.28.0")
    selector = objects[0]["spec"]["selector"]["matchLabels"]
    for i, version in enumerate(machine_versions):
        objects.append(b.machine(f"m{i}", version=version, labels=selector))
    objects.append(b.machine("elsewhere", version="v1.0.0", labels={b.CLUSTER_NAME: "cluster1"}))
    cluster = b.cluster(version="v1.28.0", machine_deployments=[b.worker_topology("md-class", "md")])
    return cluster, [*world.objects(), *objects]


@pytest.mark.parametrize(
    ("machine_versions", "upgrading"),
    [
        ([], False),
        (["v1.28.0", "v1.28.0"], False),
        (["v1.28.0", "v1.27.0"], True),
        (["v1.28.0+build.1"], True),
    ],
)
def test_machine_deployment_is_upgrading_while_a_machine_has_another_version(
    machine_versions: list[str | None], upgrading: bool
) -> None:
    cluster, objects = _deployment_cluster(machine_versions)
    assert (compute(cluster, objects).upgrades.machine_deployments.upgrading == {"md-obj"}) is upgrading


def test_machine_without_version_is_an_error() -> None:
    cluster, objects = _deployment_cluster(["v1.28.0", None])
    with pytest.raises(TopologyError) as err:
        compute(cluster, objects)
    assert "md-obj" in err.value.message
    assert err.value.field == "spec.version"


def test_current_state_asks_for_every_node_ref_of_a_pool() -> None:
    cluster, objects = _pool_cluster(["n1", "n2"])
    nodes = IndexedNodes([b.node("n1", "v1.28.0"), b.node("n2", "v1.28.0")])
    assert set(current_of(cluster, objects, nodes).machine_pools["pool"].nodes) == {"n1", "n2"}


def test_first_reconcile_creates_workers_together_with_the_control_plane() -> None:
    cluster = b.cluster(
        machine_deployments=[b.worker_topology("md-class", "md-0")],
        machine_pools=[b.worker_topology("mp-class", "mp-0")],
    )
    computation = compute(cluster, World().objects())
    assert computation.upgrades.control_plane.is_stable
    assert computation.upgrades.machine_deployments.idle
    assert computation.upgrades.machine_pools.idle
