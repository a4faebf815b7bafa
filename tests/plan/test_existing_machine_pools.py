"""``clusterclass plan`` for a Cluster whose MachinePools already exist.

Upstream's ``clusterctl alpha topology plan`` could not plan such a Cluster at all (spec §0, §9.2
step 11: no workload-cluster tracker); ours must (DECISIONS.md).

Each test first plans ``fixtures/existing-cluster.yaml`` against the upstream quick-start
ClusterClass with a fixed seed, turns the created objects into a settled management cluster
(:func:`plan_helpers.current_state`: uids, statuses, a stable KubeadmControlPlane, Running
MachinePools, the fields other controllers fill in), writes it to ``current/`` one file per
object, then plans ``-f quick-start.yaml -f current/ -f change.yaml`` where ``change.yaml`` holds
whatever the user changed (a Cluster given again is merged over the current one, as upstream's
plan merges it; other objects given again replace the current ones).

The quick-start patches run on every plan (spec §5). The one that matters here is ``customImage``:
it writes ``kindest/node:<version>`` from ``builtin.controlPlane.version``,
``builtin.machineDeployment.version`` and ``builtin.machinePool.version`` into the control plane's
DockerMachineTemplate, the MachineDeployment's DockerMachineTemplate and each DockerMachinePool. So a
version change also rotates the machine templates of the control plane and of an upgrading
MachineDeployment, and updates the DockerMachinePool of an upgrading MachinePool in place, while a
held worker keeps its old version and so its old image (the builtin reads the *desired* version).
"""

from __future__ import annotations

import copy
import itertools
import re
from pathlib import Path

import pytest
from plan_helpers import (
    FIXTURES,
    QUICK_START,
    RANDOM,
    Obj,
    current_state,
    deleted_objects,
    deployment,
    invoke,
    modified_objects,
    node,
    one,
    plan_json,
    pool,
    read_all_yaml,
    read_yaml,
    run_subprocess,
    write_state,
    write_yaml,
)

CLUSTER_FILE = FIXTURES / "existing-cluster.yaml"
SEED = "42"
OLD, NEW = "v1.28.0", "v1.29.0"
EMPTY = {"created": [], "modified": [], "deleted": []}
DEFER = "topology.cluster.x-k8s.io/defer-upgrade"
HOLD = "topology.cluster.x-k8s.io/hold-upgrade-sequence"
CONCURRENCY = "topology.cluster.x-k8s.io/upgrade-concurrency"
NO_CHANGES = 'No changes detected for Cluster "default/my-cluster".'


@pytest.fixture(scope="module")
def first_plan() -> Obj:
    return plan_json("-f", QUICK_START, "-f", CLUSTER_FILE, "--seed", SEED)


class World:
    """The settled management cluster of one test, and planning changes against it."""

    def __init__(self, objects: list[Obj], tmp_path: Path) -> None:
        self.objects = objects
        self.tmp_path = tmp_path
        self._runs = itertools.count()

    # -- the current objects -----------------------------------------------------------------------

    @property
    def cluster(self) -> Obj:
        return self.objects[0]

    def changed_cluster(self) -> Obj:
        """A copy of the Cluster to edit and give as ``change.yaml``."""
        return copy.deepcopy(self.cluster)

    def topology_pools(self, cluster: Obj | None = None) -> list[Obj]:
        return (cluster or self.cluster)["spec"]["topology"]["workers"]["machinePools"]

    @property
    def kcp(self) -> Obj:
        return one(self.objects, "KubeadmControlPlane")

    def pool(self, kind: str, topology_name: str) -> Obj:
        return pool(self.objects, kind, topology_name)

    def pool_name(self, topology_name: str) -> str:
        return str(self.pool("MachinePool", topology_name)["metadata"]["name"])

    def md(self, kind: str = "MachineDeployment") -> Obj:
        return deployment(self.objects, kind, "md-0")

    @property
    def cp_machine_template(self) -> Obj:
        name = self.kcp["spec"]["machineTemplate"]["infrastructureRef"]["name"]
        (template,) = [
            o for o in self.objects if o["kind"] == "DockerMachineTemplate" and o["metadata"]["name"] == name
        ]
        return template

    def set_control_plane(self, spec_version: str, status_version: str) -> None:
        """The control plane as the reconcile that set ``spec.version`` left it.

        That reconcile also rotated the control plane's machine template to one whose customImage
        (quick-start ``customImage`` patch) names ``spec_version``; the template keeps its name here,
        which the planner cannot tell from a rotation since it reuses the referenced name.
        """
        self.kcp["spec"]["version"] = spec_version
        self.kcp["status"]["version"] = status_version
        self.cp_machine_template["spec"]["template"]["spec"]["customImage"] = f"kindest/node:{spec_version}"

    def set_version(self, version: str) -> None:
        """The Cluster's topology version, as stored (no change file needed)."""
        self.cluster["spec"]["topology"]["version"] = version

    def set_node_refs(self, topology_name: str, *node_names: str) -> None:
        self.pool("MachinePool", topology_name)["status"]["nodeRefs"] = [
            {"apiVersion": "v1", "kind": "Node", "name": name} for name in node_names
        ]

    # -- planning ------------------------------------------------------------------------------------

    def args(self, *changes: Obj, nodes: list[Obj] | None = None) -> list[str | Path]:
        run = self.tmp_path / f"run-{next(self._runs)}"
        args: list[str | Path] = ["-f", QUICK_START, "-f", write_state(run / "current", self.objects)]
        if changes:
            args += ["-f", write_yaml(run / "change.yaml", *changes)]
        if nodes is not None:
            # as `kubectl get nodes -o yaml` saves them
            args += ["-f", write_yaml(run / "nodes.yaml", {"apiVersion": "v1", "kind": "List", "items": nodes})]
        return [*args, "--seed", SEED]

    def plan(self, *changes: Obj, nodes: list[Obj] | None = None) -> tuple[Obj, str]:
        """The JSON plan and the text plan of the current state with ``changes`` applied."""
        args = self.args(*changes, nodes=nodes)
        data = plan_json(*args)
        result = invoke(*args)
        assert result.exit_code == 0, result.output
        assert "error" not in result.stdout
        return data, result.stdout


@pytest.fixture
def world(first_plan: Obj, tmp_path: Path) -> World:
    return World(current_state(first_plan), tmp_path)


def only_modification(data: Obj, kind: str, name: str) -> Obj:
    assert data["created"] == [] and data["deleted"] == []
    assert modified_objects(data) == [(kind, name)]
    modification: Obj = data["modified"][0]
    return modification


# --- (a) nothing changed --------------------------------------------------------------------------


def test_first_plan_creates_what_the_state_is_built_from(first_plan: Obj) -> None:
    kinds = [o["kind"] for o in first_plan["created"]]
    assert kinds.count("MachinePool") == 2 and kinds.count("MachineDeployment") == 1
    assert modified_objects(first_plan) == [("Cluster", "my-cluster")]


def test_unchanged_input_plans_no_changes(world: World) -> None:
    data, text = world.plan()
    assert data == EMPTY
    assert NO_CHANGES in text
    assert "note:" not in text and "warning:" not in text


def test_unchanged_cluster_given_again_plans_no_changes(world: World) -> None:
    data, text = world.plan(world.changed_cluster())
    assert data == EMPTY
    assert NO_CHANGES in text


def test_unchanged_input_in_a_real_process(world: World) -> None:
    outcome = run_subprocess("plan", *world.args())
    assert outcome.exit_code == 0, outcome.output
    assert NO_CHANGES in outcome.stdout
    assert outcome.stderr == ""
    assert "Traceback" not in outcome.output


def test_fields_set_by_other_controllers_are_left_alone(world: World) -> None:
    """providerIDList, dataSecretName, webhook defaults, status: not the topology's business (A15)."""
    mp = world.pool("MachinePool", "mp-0")
    mp["spec"]["providerIDList"].append("docker:////extra")
    mp["status"]["replicas"] = 7
    world.pool("DockerMachinePool", "mp-0")["spec"]["providerIDList"] = []
    world.pool("KubeadmConfig", "mp-0")["status"]["dataSecretName"] = "somewhere"
    data, _ = world.plan()
    assert data == EMPTY


# --- (b) replicas and metadata of one MachinePool -------------------------------------------------


def test_changing_machine_pool_replicas_modifies_only_that_machine_pool(world: World) -> None:
    cluster = world.changed_cluster()
    world.topology_pools(cluster)[1]["replicas"] = 4
    data, text = world.plan(cluster)

    name = world.pool_name("mp-1")
    modification = only_modification(data, "MachinePool", name)
    assert modification["before"]["spec"]["replicas"] == 1
    assert modification["after"]["spec"]["replicas"] == 4
    # only replicas changed; what other controllers set is kept
    expected = copy.deepcopy(modification["before"])
    expected["spec"]["replicas"] = 4
    assert modification["after"] == expected
    assert "-  replicas: 1\n" in modification["diff"]
    assert "+  replicas: 4\n" in modification["diff"]
    assert f"--- MachinePool default/{name} (current)" in modification["diff"]

    assert f"  ~ modified MachinePool default/{name}\n" in text
    assert "-  replicas: 1" in text and "+  replicas: 4" in text
    assert text.count("~ modified") == 1


def test_changing_machine_pool_labels_does_not_touch_its_objects(world: World) -> None:
    """Topology metadata goes to the MachinePool and its template metadata only (spec §2.5)."""
    cluster = world.changed_cluster()
    world.topology_pools(cluster)[0]["metadata"] = {"labels": {"tier": "gold"}, "annotations": {"a": "b"}}
    data, _ = world.plan(cluster)
    after = only_modification(data, "MachinePool", world.pool_name("mp-0"))["after"]
    assert after["metadata"]["labels"]["tier"] == "gold"
    assert after["metadata"]["annotations"] == {"a": "b"}
    assert after["spec"]["template"]["metadata"]["labels"]["tier"] == "gold"
    assert after["spec"]["template"]["metadata"]["annotations"] == {"a": "b"}


def test_changing_machine_pool_failure_domains(world: World) -> None:
    cluster = world.changed_cluster()
    world.topology_pools(cluster)[0]["failureDomains"] = ["fd1", "fd2"]
    data, _ = world.plan(cluster)
    after = only_modification(data, "MachinePool", world.pool_name("mp-0"))["after"]
    assert after["spec"]["failureDomains"] == ["fd1", "fd2"]


# --- (c) upgrades: control plane first, then MachinePools one at a time ---------------------------


def test_version_bump_upgrades_the_control_plane_and_holds_machine_pools(world: World) -> None:
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["version"] = NEW
    data, text = world.plan(cluster)

    kcp = world.kcp["metadata"]["name"]
    old_template = world.cp_machine_template
    # customImage follows builtin.controlPlane.version: the control plane's machine template rotates
    (new_template,) = data["created"]
    assert new_template["kind"] == "DockerMachineTemplate"
    assert re.fullmatch(rf"my-cluster-{RANDOM}", new_template["metadata"]["name"])
    assert new_template["metadata"]["name"] != old_template["metadata"]["name"]
    assert new_template["spec"]["template"]["spec"]["customImage"] == f"kindest/node:{NEW}"
    assert old_template["spec"]["template"]["spec"]["customImage"] == f"kindest/node:{OLD}"
    assert deleted_objects(data) == [("DockerMachineTemplate", old_template["metadata"]["name"])]
    # held workers keep their version, so their images do not change either
    assert modified_objects(data) == [("KubeadmControlPlane", kcp)]
    modification = data["modified"][0]
    assert modification["before"]["spec"]["version"] == OLD
    assert modification["after"]["spec"]["version"] == NEW
    assert (
        modification["after"]["spec"]["machineTemplate"]["infrastructureRef"]["name"]
        == (new_template["metadata"]["name"])
    )
    assert f"-  version: {OLD}\n+  version: {NEW}\n" in modification["diff"]

    mp0, mp1 = world.pool_name("mp-0"), world.pool_name("mp-1")
    assert f"Cluster default/my-cluster (ClusterClass quick-start, version {NEW})" in text
    assert f"note: control plane starts upgrading to {NEW}" in text
    assert f"note: MachinePools pending upgrade: {', '.join(sorted([mp0, mp1]))}" in text
    assert f"note: MachineDeployments pending upgrade: {world.md()['metadata']['name']}" in text


def test_pending_machine_pool_gets_no_change_at_all(world: World) -> None:
    """While an upgrade is pending for a pool, nothing is applied to it, not even replicas (§2.9)."""
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["version"] = NEW
    world.topology_pools(cluster)[1]["replicas"] = 5
    data, _ = world.plan(cluster)
    assert modified_objects(data) == [("KubeadmControlPlane", world.kcp["metadata"]["name"])]


def test_machine_pools_wait_while_the_control_plane_upgrades(world: World) -> None:
    world.set_version(NEW)
    world.set_control_plane(NEW, OLD)
    data, text = world.plan()
    assert data == EMPTY
    assert NO_CHANGES in text
    assert "note: control plane is upgrading" in text
    assert "note: MachinePools pending upgrade:" in text


def test_after_the_control_plane_the_first_machine_pool_upgrades(world: World) -> None:
    world.set_version(NEW)
    world.set_control_plane(NEW, NEW)
    data, text = world.plan()

    mp0, mp1 = world.pool_name("mp-0"), world.pool_name("mp-1")
    md = world.md()["metadata"]["name"]
    old_md_template = world.md("DockerMachineTemplate")["metadata"]["name"]
    infra0 = world.pool("DockerMachinePool", "mp-0")["metadata"]["name"]
    # MachineDeployments and MachinePools have independent concurrency: one of each (A19).
    # The upgrading MachineDeployment's DockerMachineTemplate rotates to the new image; the upgrading
    # MachinePool's DockerMachinePool is updated in place, before the MachinePool (spec §3.3).
    (new_md_template,) = data["created"]
    assert new_md_template["kind"] == "DockerMachineTemplate"
    assert new_md_template["spec"]["template"]["spec"]["customImage"] == f"kindest/node:{NEW}"
    assert deleted_objects(data) == [("DockerMachineTemplate", old_md_template)]
    assert modified_objects(data) == [("MachineDeployment", md), ("DockerMachinePool", infra0), ("MachinePool", mp0)]
    md_change, infra_change, pool_change = data["modified"]
    assert (
        md_change["after"]["spec"]["template"]["spec"]["infrastructureRef"]["name"]
        == (new_md_template["metadata"]["name"])
    )
    assert infra_change["before"]["spec"]["template"] == {"customImage": f"kindest/node:{OLD}"}
    assert infra_change["after"]["spec"]["template"] == {"customImage": f"kindest/node:{NEW}"}
    assert f"-    customImage: kindest/node:{OLD}\n+    customImage: kindest/node:{NEW}\n" in infra_change["diff"]
    assert pool_change["before"]["spec"]["template"]["spec"]["version"] == OLD
    assert pool_change["after"]["spec"]["template"]["spec"]["version"] == NEW
    assert f"-      version: {OLD}\n+      version: {NEW}\n" in pool_change["diff"]
    assert f"note: MachinePools upgrading: {mp0}" in text
    assert f"note: MachinePools pending upgrade: {mp1}" in text
    assert "control plane" not in text.replace("(ClusterClass", "")


def test_upgrade_concurrency_two_upgrades_both_machine_pools(world: World) -> None:
    world.set_version(NEW)
    world.set_control_plane(NEW, NEW)
    cluster = world.changed_cluster()
    cluster["metadata"].setdefault("annotations", {})[CONCURRENCY] = "2"
    data, text = world.plan(cluster)

    mp0, mp1 = world.pool_name("mp-0"), world.pool_name("mp-1")
    pools = [m for m in data["modified"] if m["after"]["kind"] == "MachinePool"]
    assert [m["after"]["metadata"]["name"] for m in pools] == [mp0, mp1]
    assert all(m["after"]["spec"]["template"]["spec"]["version"] == NEW for m in pools)
    # the annotation is not something the topology writes to the Cluster
    assert "Cluster" not in [m["after"]["kind"] for m in data["modified"]]
    assert f"note: MachinePools upgrading: {mp0}, {mp1}" in text
    assert "pending upgrade" not in text


def test_deferred_machine_pool_gives_its_slot_to_the_next(world: World) -> None:
    world.set_version(NEW)
    world.set_control_plane(NEW, NEW)
    cluster = world.changed_cluster()
    world.topology_pools(cluster)[0]["metadata"] = {"annotations": {DEFER: ""}}
    data, text = world.plan(cluster)

    mp0, mp1 = world.pool_name("mp-0"), world.pool_name("mp-1")
    assert [n for k, n in modified_objects(data) if k == "MachinePool"] == [mp1]
    assert f"note: MachinePools upgrade deferred: {mp0}" in text
    assert f"note: MachinePools upgrading: {mp1}" in text


def test_hold_upgrade_sequence_defers_this_and_later_machine_pools(world: World) -> None:
    world.set_version(NEW)
    world.set_control_plane(NEW, NEW)
    cluster = world.changed_cluster()
    world.topology_pools(cluster)[0]["metadata"] = {"annotations": {HOLD: ""}}
    data, text = world.plan(cluster)
    assert [k for k, _ in modified_objects(data)] == ["MachineDeployment"]
    assert f"note: MachinePools upgrade deferred: {world.pool_name('mp-0')}, {world.pool_name('mp-1')}" in text


def test_version_bump_text_output_in_a_real_process(world: World) -> None:
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["version"] = NEW
    outcome = run_subprocess("plan", *world.args(cluster))
    assert outcome.exit_code == 0, outcome.output
    assert f"note: control plane starts upgrading to {NEW}" in outcome.stdout
    assert "note: MachinePools pending upgrade:" in outcome.stdout
    assert "Traceback" not in outcome.output


# --- (d) removing workers ---------------------------------------------------------------------------


def test_removed_machine_pool_topology_is_deleted_with_its_objects(world: World) -> None:
    cluster = world.changed_cluster()
    del world.topology_pools(cluster)[1]
    data, text = world.plan(cluster)

    mp = world.pool("MachinePool", "mp-1")
    infra = world.pool("DockerMachinePool", "mp-1")
    config = world.pool("KubeadmConfig", "mp-1")
    assert data["created"] == [] and data["modified"] == []
    assert data["deleted"] == [
        {"apiVersion": o["apiVersion"], "kind": o["kind"], "namespace": "default", "name": o["metadata"]["name"]}
        for o in (mp, infra, config)
    ]
    for obj in (mp, infra, config):
        assert f"  - deleted  {obj['kind']} default/{obj['metadata']['name']}" in text
    assert f"(deleted with MachinePool/{mp['metadata']['name']})" in text
    # mp-0 is untouched
    assert world.pool_name("mp-0") not in text


def test_removing_every_machine_pool_deletes_them_all(world: World) -> None:
    cluster = world.changed_cluster()
    # The Cluster given again is merged over the current one (RFC 7386): a list is replaced whole, and a
    # field is removed by null, not by leaving it out (which keeps the current value).
    cluster["spec"]["topology"]["workers"]["machinePools"] = []
    data, _ = world.plan(cluster)
    assert data["created"] == [] and data["modified"] == []
    assert sorted(deleted_objects(data)) == sorted(
        (kind, world.pool(kind, name)["metadata"]["name"])
        for kind in ("MachinePool", "DockerMachinePool", "KubeadmConfig")
        for name in ("mp-0", "mp-1")
    )


def test_removed_machine_deployment_is_deleted_with_its_templates(world: World) -> None:
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["workers"]["machineDeployments"] = None  # null removes it (RFC 7386)
    data, _ = world.plan(cluster)
    assert data["created"] == [] and data["modified"] == []
    assert deleted_objects(data) == [
        (kind, world.md(kind)["metadata"]["name"])
        for kind in ("MachineDeployment", "DockerMachineTemplate", "KubeadmConfigTemplate")
    ]


def test_added_machine_pool_topology_is_created(world: World) -> None:
    cluster = world.changed_cluster()
    world.topology_pools(cluster).append({"class": "default-worker", "name": "mp-2", "replicas": 1})
    data, _ = world.plan(cluster)
    assert data["modified"] == [] and data["deleted"] == []
    assert [o["kind"] for o in data["created"]] == ["DockerMachinePool", "KubeadmConfig", "MachinePool"]
    for obj in data["created"]:
        assert re.fullmatch(rf"my-cluster-mp-2-{RANDOM}", obj["metadata"]["name"])
    infra, config, mp = data["created"]
    for owned in (infra, config):
        assert [o["uid"] for o in owned["metadata"]["ownerReferences"]] == [world.cluster["metadata"]["uid"]]
    assert "ownerReferences" not in mp["metadata"]
    assert mp["spec"]["template"]["spec"]["version"] == OLD


def test_machine_pool_added_during_a_control_plane_upgrade_waits(world: World) -> None:
    """New workers are not created while the control plane is not stable (spec §4.5 rule 1)."""
    world.set_version(NEW)
    world.set_control_plane(NEW, OLD)
    cluster = world.changed_cluster()
    world.topology_pools(cluster).append({"class": "default-worker", "name": "mp-2"})
    data, text = world.plan(cluster)
    assert data == EMPTY
    assert "note: MachinePools creation pending until the control plane is stable: mp-2" in text


# --- (e) workload-cluster Nodes ---------------------------------------------------------------------


def test_node_on_the_old_version_keeps_the_pool_upgrading(world: World) -> None:
    """A pool whose Nodes are not all at its version is upgrading: the CP must not start (§4.4 7)."""
    world.set_node_refs("mp-0", "mp-0-node-a", "mp-0-node-b")
    nodes = [node("mp-0-node-a", OLD), node("mp-0-node-b", "v1.27.3")]
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["version"] = NEW
    data, text = world.plan(cluster, nodes=nodes)

    assert data == EMPTY
    assert f"note: control plane upgrade to {NEW} is pending" in text
    assert f"note: MachinePools upgrading: {world.pool_name('mp-0')}" in text
    assert "warning:" not in text


def test_nodes_at_the_pool_version_let_the_control_plane_upgrade(world: World) -> None:
    world.set_node_refs("mp-0", "mp-0-node-a", "mp-0-node-b")
    # a vendor build suffix is the same release (DECISIONS.md: compare ignoring build metadata)
    nodes = [node("mp-0-node-a", OLD), node("mp-0-node-b", f"{OLD}+vmware.1")]
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["version"] = NEW
    data, text = world.plan(cluster, nodes=nodes)
    assert modified_objects(data) == [("KubeadmControlPlane", world.kcp["metadata"]["name"])]
    assert f"note: control plane starts upgrading to {NEW}" in text
    assert "warning:" not in text


def test_upgrading_pool_takes_the_only_slot(world: World) -> None:
    """mp-0 already has the new version but a Node still runs the old one: mp-1 keeps waiting."""
    world.set_version(NEW)
    world.set_control_plane(NEW, NEW)
    world.pool("MachinePool", "mp-0")["spec"]["template"]["spec"]["version"] = NEW
    world.set_node_refs("mp-0", "mp-0-node-a", "mp-0-node-b")
    nodes = [node("mp-0-node-a", NEW), node("mp-0-node-b", OLD)]
    data, text = world.plan(nodes=nodes)
    assert "MachinePool" not in [k for k, _ in modified_objects(data)]
    assert f"note: MachinePools upgrading: {world.pool_name('mp-0')}" in text
    assert f"note: MachinePools pending upgrade: {world.pool_name('mp-1')}" in text

    # once every Node runs the new version, mp-1 gets its turn
    nodes = [node("mp-0-node-a", NEW), node("mp-0-node-b", NEW)]
    data, text = world.plan(nodes=nodes)
    assert [n for k, n in modified_objects(data) if k == "MachinePool"] == [world.pool_name("mp-1")]
    assert f"note: MachinePools upgrading: {world.pool_name('mp-1')}" in text


def test_pool_with_node_refs_but_no_nodes_given_warns_and_plans(world: World) -> None:
    world.set_node_refs("mp-0", "mp-0-node-a")
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["version"] = NEW
    data, text = world.plan(cluster)

    # unknown Nodes: assumed not upgrading, so the control plane starts its upgrade
    assert modified_objects(data) == [("KubeadmControlPlane", world.kcp["metadata"]["name"])]
    mp0 = world.pool_name("mp-0")
    assert f"warning: cannot tell whether MachinePool {mp0} is upgrading" in text
    assert "mp-0-node-a" in text
    assert world.pool_name("mp-1") not in text.split("warning:")[1]  # no nodeRefs, nothing to ask

    outcome = run_subprocess("plan", *world.args(cluster))
    assert outcome.exit_code == 0, outcome.output
    assert "warning: cannot tell whether MachinePool" in outcome.stdout
    assert "Traceback" not in outcome.output


def test_nodes_of_another_cluster_are_not_used(world: World) -> None:
    world.set_node_refs("mp-0", "shared-name")
    nodes = [node("shared-name", "v1.27.3", cluster="someone-else")]
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["version"] = NEW
    data, text = world.plan(cluster, nodes=nodes)
    assert modified_objects(data) == [("KubeadmControlPlane", world.kcp["metadata"]["name"])]
    assert "warning: cannot tell whether MachinePool" in text


def test_pools_without_node_refs_need_no_nodes(world: World) -> None:
    """Only pools with status.nodeRefs ask the workload cluster (upstream v1.11, DECISIONS.md)."""
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["version"] = NEW
    _, text = world.plan(cluster)
    assert "warning:" not in text


# --- (f) ClusterClass template changes ------------------------------------------------------------


def quick_start_template(kind: str, name: str) -> Obj:
    (template,) = [o for o in read_all_yaml(QUICK_START) if o["kind"] == kind and o["metadata"]["name"] == name]
    return template


def test_changed_machine_pool_template_updates_objects_in_place(world: World) -> None:
    template = quick_start_template("DockerMachinePoolTemplate", "quick-start-default-worker-machinepooltemplate")
    # (not customImage: the customImage patch sets that, whatever the template says)
    template["spec"]["template"]["spec"]["template"] = {"preLoadImages": ["kindest/kindnetd:v20230511"]}
    data, text = world.plan(template)

    infra0, infra1 = world.pool("DockerMachinePool", "mp-0"), world.pool("DockerMachinePool", "mp-1")
    assert data["created"] == [] and data["deleted"] == []
    assert modified_objects(data) == [
        ("DockerMachinePool", infra0["metadata"]["name"]),
        ("DockerMachinePool", infra1["metadata"]["name"]),
    ]
    for modification, current in zip(data["modified"], (infra0, infra1), strict=True):
        assert modification["before"] == current
        assert modification["after"]["metadata"] == current["metadata"]  # same name, uid, owners
        assert modification["after"]["spec"]["template"] == {
            "preLoadImages": ["kindest/kindnetd:v20230511"],
            "customImage": f"kindest/node:{OLD}",
        }
        assert modification["after"]["spec"]["providerIDList"] == current["spec"]["providerIDList"]
        assert "+    preLoadImages:\n+    - kindest/kindnetd:v20230511\n" in modification["diff"]
    # the MachinePools keep referencing the same objects: nothing to change there
    assert "MachinePool" not in [k for k, _ in modified_objects(data)]
    assert "template rotation" not in text


def test_changed_machine_deployment_template_is_rotated(world: World) -> None:
    template = quick_start_template("DockerMachineTemplate", "quick-start-default-worker-machinetemplate")
    template["spec"]["template"]["spec"]["preLoadImages"] = ["kindest/kindnetd:v20230511"]
    data, text = world.plan(template)

    old = world.md("DockerMachineTemplate")
    md = world.md()
    (new,) = data["created"]
    assert new["kind"] == "DockerMachineTemplate"
    assert re.fullmatch(rf"my-cluster-md-0-{RANDOM}", new["metadata"]["name"])
    assert new["metadata"]["name"] != old["metadata"]["name"]
    assert new["spec"]["template"]["spec"]["preLoadImages"] == ["kindest/kindnetd:v20230511"]
    assert new["spec"]["template"]["spec"]["customImage"] == f"kindest/node:{OLD}"  # patched as before
    assert new["metadata"]["labels"] == old["metadata"]["labels"]

    assert modified_objects(data) == [("MachineDeployment", md["metadata"]["name"])]
    modification = data["modified"][0]
    ref = modification["after"]["spec"]["template"]["spec"]["infrastructureRef"]
    assert ref == {**md["spec"]["template"]["spec"]["infrastructureRef"], "name": new["metadata"]["name"]}
    assert deleted_objects(data) == [("DockerMachineTemplate", old["metadata"]["name"])]
    assert f"(template rotation: replaces DockerMachineTemplate/{old['metadata']['name']})" in text
    # the control plane's machine template is another template: untouched
    assert world.kcp["metadata"]["name"] not in text


def test_shared_bootstrap_template_change_rotates_for_deployments_and_pools(world: World) -> None:
    """The quick-start uses one KubeadmConfigTemplate for the MD class and the MP class: the MachineDeployment gets a
    new template and each MachinePool a new config (beyond upstream, which patches the pools' configs in place:
    Cluster API #10496), each holder switched to its new one and the old ones deleted."""
    template = quick_start_template("KubeadmConfigTemplate", "quick-start-default-worker-bootstraptemplate")
    template["spec"]["template"]["spec"]["joinConfiguration"]["nodeRegistration"] = {
        "name": "{{ ds.meta_data.hostname }}"
    }
    data, _ = world.plan(template)

    old_md_template = world.md("KubeadmConfigTemplate")
    old_configs = [world.pool("KubeadmConfig", pool)["metadata"]["name"] for pool in ("mp-0", "mp-1")]
    assert [o["kind"] for o in data["created"]] == ["KubeadmConfigTemplate", "KubeadmConfig", "KubeadmConfig"]
    created = [o["metadata"]["name"] for o in data["created"]]
    assert created[0] != old_md_template["metadata"]["name"] and not set(created[1:]) & set(old_configs)
    assert modified_objects(data) == [
        ("MachineDeployment", world.md()["metadata"]["name"]),
        ("MachinePool", world.pool_name("mp-0")),
        ("MachinePool", world.pool_name("mp-1")),
    ]
    pool_refs = [m["after"]["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"] for m in data["modified"][1:]]
    assert pool_refs == created[1:]
    assert sorted(deleted_objects(data)) == sorted(
        [("KubeadmConfigTemplate", old_md_template["metadata"]["name"])]
        + [("KubeadmConfig", name) for name in old_configs]
    )


def test_changed_control_plane_machine_template_is_rotated(world: World) -> None:
    template = quick_start_template("DockerMachineTemplate", "quick-start-control-plane")
    template["spec"]["template"]["spec"]["preLoadImages"] = ["kindest/kindnetd:v20230511"]
    data, _ = world.plan(template)

    old = world.kcp["spec"]["machineTemplate"]["infrastructureRef"]["name"]
    (new,) = data["created"]
    assert re.fullmatch(rf"my-cluster-{RANDOM}", new["metadata"]["name"]) and new["metadata"]["name"] != old
    assert new["spec"]["template"]["spec"]["preLoadImages"] == ["kindest/kindnetd:v20230511"]
    assert new["spec"]["template"]["spec"]["customImage"] == f"kindest/node:{OLD}"
    assert modified_objects(data) == [("KubeadmControlPlane", world.kcp["metadata"]["name"])]
    after = data["modified"][0]["after"]
    assert after["spec"]["machineTemplate"]["infrastructureRef"]["name"] == new["metadata"]["name"]
    assert deleted_objects(data) == [("DockerMachineTemplate", old)]


def test_changing_a_machine_pool_bootstrap_kind_rotates_to_the_new_kind(world: World) -> None:
    """A MachinePool's bootstrap config is rotated (Cluster API #10496), so its kind may change as a
    MachineDeployment's bootstrap template's may: a TalosConfig replaces the KubeadmConfig."""
    (cc,) = [o for o in read_all_yaml(QUICK_START) if o["kind"] == "ClusterClass"]
    cc["spec"]["workers"]["machinePools"][0]["template"]["bootstrap"]["ref"] = {
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1alpha3",
        "kind": "TalosConfigTemplate",
        "name": "talos",
    }
    talos = {
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1alpha3",
        "kind": "TalosConfigTemplate",
        "metadata": {"name": "talos"},
        "spec": {"template": {"spec": {"generateType": "worker"}}},
    }
    data, _ = world.plan(cc, talos)
    assert "TalosConfig" in [o["kind"] for o in data["created"]]
    config0 = world.pool("KubeadmConfig", "mp-0")["metadata"]["name"]
    assert ("KubeadmConfig", config0) in deleted_objects(data)


# --- reading what exists ----------------------------------------------------------------------------


def test_state_exported_as_one_kubectl_list(world: World, first_plan: Obj) -> None:
    """``kubectl get ... -A -o yaml > current.yaml``: one List, server fields and managedFields included."""
    items = copy.deepcopy(world.objects)
    for obj in items:
        obj["metadata"]["generation"] = 1
        obj["metadata"]["managedFields"] = [
            {
                "manager": "capi-topology",
                "operation": "Apply",
                "apiVersion": obj["apiVersion"],
                "fieldsType": "FieldsV1",
            }
        ]
    current = write_yaml(
        world.tmp_path / "current.yaml",
        {"apiVersion": "v1", "kind": "List", "metadata": {"resourceVersion": ""}, "items": items},
    )
    assert plan_json("-f", QUICK_START, "-f", current) == EMPTY
    cluster = copy.deepcopy(world.cluster)
    cluster["spec"]["topology"]["version"] = NEW
    change = write_yaml(world.tmp_path / "cluster-v1.29.yaml", cluster)
    data = plan_json("-f", QUICK_START, "-f", current, "-f", change)
    assert modified_objects(data) == [("KubeadmControlPlane", world.kcp["metadata"]["name"])]


def test_refs_at_an_older_api_version_are_kept(world: World) -> None:
    """Same group and kind: the current ref's apiVersion stays, so nothing changes (spec §2.7, A8)."""
    mp = world.pool("MachinePool", "mp-0")
    mp["spec"]["template"]["spec"]["bootstrap"]["configRef"]["apiVersion"] = "bootstrap.cluster.x-k8s.io/v1alpha4"
    world.pool("KubeadmConfig", "mp-0")["apiVersion"] = "bootstrap.cluster.x-k8s.io/v1alpha4"
    data, _ = world.plan()
    assert data == EMPTY


def test_machine_pools_not_owned_by_the_topology_are_ignored(world: World) -> None:
    handmade = copy.deepcopy(world.pool("MachinePool", "mp-1"))
    handmade["metadata"]["name"] = "handmade"
    del handmade["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"]
    other_cluster = copy.deepcopy(world.pool("MachinePool", "mp-1"))
    other_cluster["metadata"]["name"] = "someone-elses"
    other_cluster["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = "another-cluster"
    world.objects += [handmade, other_cluster]
    data, _ = world.plan()
    assert data == EMPTY


def plan_failure(world: World) -> str:
    result = invoke(*world.args())
    assert result.exit_code == 1, result.output
    assert "Traceback" not in result.output
    assert result.stdout.startswith("Cluster default/my-cluster\n  error: ")
    return result.stdout


def test_duplicate_pool_name_label_is_an_error_naming_the_file(world: World) -> None:
    duplicate = copy.deepcopy(world.pool("MachinePool", "mp-0"))
    duplicate["metadata"]["name"] = "my-cluster-mp-0-zzzzz"  # listed after the original
    world.objects.append(duplicate)
    out = plan_failure(world)
    assert "current/MachinePool_my-cluster-mp-0-zzzzz.yaml:1: MachinePool default/my-cluster-mp-0-zzzzz: " in out
    assert (
        "metadata.labels[topology.cluster.x-k8s.io/pool-name]: duplicate MachinePool/my-cluster-mp-0-zzzzz "
        "found for label topology.cluster.x-k8s.io/pool-name: mp-0"
    ) in out


def test_machine_pool_without_pool_name_label_is_an_error(world: World) -> None:
    name = world.pool_name("mp-0")
    del world.pool("MachinePool", "mp-0")["metadata"]["labels"]["topology.cluster.x-k8s.io/pool-name"]
    out = plan_failure(world)
    assert f"current/MachinePool_{name}.yaml:1: MachinePool default/{name}: " in out
    assert f"failed to find label topology.cluster.x-k8s.io/pool-name in MachinePool/{name}" in out


def test_machine_pool_object_not_topology_owned_is_an_error(world: World) -> None:
    config = world.pool("KubeadmConfig", "mp-0")
    del config["metadata"]["labels"]["topology.cluster.x-k8s.io/owned"]
    out = plan_failure(world)
    name = config["metadata"]["name"]
    assert f"current/KubeadmConfig_{name}.yaml:1: KubeadmConfig default/{name}: " in out
    assert "is not topology owned" in out


def test_missing_machine_pool_object_is_reported_against_the_ref(world: World) -> None:
    infra = world.pool("DockerMachinePool", "mp-1")
    world.objects.remove(infra)
    out = plan_failure(world)
    mp = world.pool_name("mp-1")
    assert f"current/MachinePool_{mp}.yaml:1: MachinePool default/{mp}: spec.template.spec.infrastructureRef: " in out
    assert f"DockerMachinePool default/{infra['metadata']['name']}" in out
    assert "not found" in out


def test_machine_deployment_machines_on_an_old_version_hold_the_control_plane(world: World) -> None:
    """Machines given as input tell whether a MachineDeployment is still rolling out (spec §4.3)."""
    md = world.md()
    machine = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "Machine",
        "metadata": {"name": "md-machine", "namespace": "default", "labels": md["spec"]["selector"]["matchLabels"]},
        "spec": {"clusterName": "my-cluster", "version": "v1.27.3"},
    }
    world.objects.append(machine)
    cluster = world.changed_cluster()
    cluster["spec"]["topology"]["version"] = NEW
    data, text = world.plan(cluster)
    assert data == EMPTY
    assert f"note: control plane upgrade to {NEW} is pending" in text
    assert f"note: MachineDeployments upgrading: {md['metadata']['name']}" in text


# --- the user's own Cluster file, given again ------------------------------------------------------------------


def test_the_users_own_cluster_file_plans_only_the_real_change(world: World) -> None:
    """Upstream's plan merges a Cluster given again over the stored one (JSON merge patch, spec §9.2 step 3).

    The user's file has none of what the controllers set (``spec.infrastructureRef``,
    ``spec.controlPlaneRef``, the topology labels, defaulted variables, status): merged, those stay, and
    only the control plane's replicas change, instead of a brand-new InfrastructureCluster and ControlPlane.
    """
    cluster = read_yaml(CLUSTER_FILE)
    assert "infrastructureRef" not in cluster["spec"] and "controlPlaneRef" not in cluster["spec"]
    cluster["spec"]["topology"]["controlPlane"]["replicas"] = 3
    data, text = world.plan(cluster)
    modification = only_modification(data, "KubeadmControlPlane", world.kcp["metadata"]["name"])
    assert modification["after"]["spec"]["replicas"] == 3
    assert "+ created" not in text


def test_the_users_own_cluster_file_unchanged_plans_no_changes(world: World) -> None:
    data, text = world.plan(read_yaml(CLUSTER_FILE))
    assert data == EMPTY
    assert NO_CHANGES in text


def test_other_objects_given_again_replace_the_current_ones(world: World) -> None:
    """Only Clusters are merged, as upstream: a DockerMachinePool given again without a field lacks it."""
    docker_pool = copy.deepcopy(world.pool("DockerMachinePool", "mp-0"))
    del docker_pool["spec"]["template"]["customImage"]
    data, _ = world.plan(docker_pool)
    modification = only_modification(data, "DockerMachinePool", docker_pool["metadata"]["name"])
    assert modification["after"]["spec"]["template"]["customImage"] == f"kindest/node:{OLD}"


# --- Durations in Go's form ----------------------------------------------------------------------------------


def test_durations_are_planned_in_go_form_and_a_cluster_upstream_wrote_shows_no_change(tmp_path: Path) -> None:
    """Upstream writes every Duration as Go formats it (``5m0s``): in the objects it creates, and in the
    Cluster its webhook defaults. A management cluster upstream wrote must plan no change when the user's
    file says ``5m``."""
    cluster = read_yaml(CLUSTER_FILE)
    topology = cluster["spec"]["topology"]
    topology["controlPlane"]["nodeDrainTimeout"] = "90s"
    topology["workers"]["machinePools"][0]["nodeDeletionTimeout"] = "5m"
    topology["workers"]["machineDeployments"][0]["nodeVolumeDetachTimeout"] = "1h"
    user_file = write_yaml(tmp_path / "cluster.yaml", cluster)
    first = plan_json("-f", QUICK_START, "-f", user_file, "--seed", SEED)
    stored = first["modified"][0]["after"]["spec"]["topology"]  # the Cluster as admission stored it
    assert stored["controlPlane"]["nodeDrainTimeout"] == "1m30s"
    assert stored["workers"]["machinePools"][0]["nodeDeletionTimeout"] == "5m0s"
    assert stored["workers"]["machineDeployments"][0]["nodeVolumeDetachTimeout"] == "1h0m0s"
    kcp = one(first["created"], "KubeadmControlPlane")
    assert kcp["spec"]["machineTemplate"]["nodeDrainTimeout"] == "1m30s"
    assert pool(first["created"], "MachinePool", "mp-0")["spec"]["template"]["spec"]["nodeDeletionTimeout"] == "5m0s"
    md = deployment(first["created"], "MachineDeployment", "md-0")
    assert md["spec"]["template"]["spec"]["nodeVolumeDetachTimeout"] == "1h0m0s"

    current = write_state(tmp_path / "current", current_state(first))
    again = plan_json("-f", QUICK_START, "-f", current, "-f", user_file, "--seed", SEED)
    assert again == EMPTY
