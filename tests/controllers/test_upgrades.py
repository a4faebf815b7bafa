"""Upgrade sequencing with the controllers running (spec §4, §4.8): control plane first, then the workers.

The test plays the other controllers: it reports the control plane's version and readiness as
KubeadmControlPlane does, and a MachinePool's Nodes (in its workload cluster) and ``status.nodeRefs`` as
the MachinePool controller does. The topology controller decides everything else: when the control plane
takes the new version, which MachinePools and MachineDeployments follow, how many at a time
(``upgrade-concurrency``), and which wait (``defer-upgrade``, ``hold-upgrade-sequence``), and it says so in
``TopologyReconciled``.
"""

from __future__ import annotations

import pytest
from controller_support import Env, eventually, example_class, example_cluster

from clusterclass.api import constants as c
from clusterclass.api.objects import dig, name_of

pytestmark = pytest.mark.usefixtures("running")

OLD, NEW = "v1.28.0", "v1.29.0"


def version_of(worker: dict) -> str:
    return str(dig(worker, "spec", "template", "spec", "version"))


async def converged_at_old_version(env: Env, annotations: dict[str, dict[str, str]] | None = None) -> dict:
    """The example Cluster reconciled, its control plane and MachinePools settled at v1.28.0.

    ``annotations`` go on MachinePool topologies, by topology name.
    """
    cluster = example_cluster()
    for pool in cluster["spec"]["topology"]["workers"]["machinePools"]:
        if pool["name"] in (annotations or {}):
            pool.setdefault("metadata", {})["annotations"] = (annotations or {})[pool["name"]]
    await env.apply(*example_class())
    await env.apply(cluster)
    await env.wait_reconciled()
    await env.settle_control_plane()
    for pool in (await env.machine_pools()).values():
        await env.set_pool_nodes(pool, OLD)
    await env.wait_reconciled()
    return cluster


async def wait_message(env: Env, message: str, *, whole: bool = True) -> None:
    """Wait until TopologyReconciled says ``message`` (or, not ``whole``, says it among other lines)."""

    async def says_so() -> bool:
        found = str((await env.condition() or {}).get("message"))
        return found == message if whole else message in found.splitlines()

    await eventually(says_so, what=f"TopologyReconciled to say {message!r}")


async def bump(env: Env, cluster: dict, version: str = NEW, **annotations: str) -> None:
    cluster["spec"]["topology"]["version"] = version
    if annotations:
        cluster["metadata"].setdefault("annotations", {}).update(annotations)
    await env.apply(cluster)


async def test_the_control_plane_upgrades_first_then_one_machine_pool_at_a_time(env: Env) -> None:
    cluster = await converged_at_old_version(env)
    await bump(env, cluster)

    async def control_plane_started() -> bool:
        return (await env.control_plane())["spec"]["version"] == NEW

    await eventually(control_plane_started, what="the control plane to take the new version")
    # upstream v1.14's words (the v1beta1 condition of a v1beta2 Cluster is its v1beta2 one in v1beta1's form)
    md = (await env.machine_deployments())["md-0"]
    pools = await env.machine_pools()
    await wait_message(
        env,
        f"Cluster is upgrading to {NEW}\n"
        f"  * KubeadmControlPlane upgrading to version {NEW}\n"
        f"  * MachineDeployment {name_of(md)} pending upgrade to version {NEW}\n"
        f"  * MachinePools {name_of(pools['mp-0'])}, {name_of(pools['mp-1'])} pending upgrade to version {NEW}",
    )
    assert (await env.condition() or {})["reason"] == "ClusterUpgrading"
    assert {t: version_of(p) for t, p in (await env.machine_pools()).items()} == {"mp-0": OLD, "mp-1": OLD}

    # the control plane finishes: the first MachinePool and the MachineDeployment pick the version up
    await env.settle_control_plane(version=NEW)

    async def first_pool_upgrading() -> bool:
        pools = await env.machine_pools()
        return version_of(pools["mp-0"]) == NEW and version_of(pools["mp-1"]) == OLD

    await eventually(first_pool_upgrading, what="mp-0 to upgrade")
    pools = await env.machine_pools()
    assert version_of((await env.machine_deployments())["md-0"]) == NEW
    # once the MachineDeployment has taken the version (it has no Machines to roll here), what is left: mp-1 waits
    # for mp-0, whose Nodes still run the old kubelet
    await wait_message(
        env,
        f"Cluster is upgrading to {NEW}\n"
        f"  * MachinePool {name_of(pools['mp-0'])} upgrading to version {NEW}\n"
        f"  * MachinePool {name_of(pools['mp-1'])} pending upgrade to version {NEW}",
    )
    assert (await env.condition() or {})["reason"] == "ClusterUpgrading"

    # mp-0's Nodes report the new kubelet: mp-1 goes next
    await env.set_pool_nodes(pools["mp-0"], NEW)

    async def second_pool_upgrading() -> bool:
        return version_of((await env.machine_pools())["mp-1"]) == NEW

    await eventually(second_pool_upgrading, what="mp-1 to upgrade")
    await env.set_pool_nodes((await env.machine_pools())["mp-1"], NEW)
    await env.wait_reconciled()
    events = [e["message"] for e in await env.list("v1", "Event") if e["reason"] == "TopologyUpdate"]
    for pool in (await env.machine_pools()).values():
        assert f'Updated "MachinePool/{name_of(pool)}" with version change from {OLD} to {NEW}' in events


async def test_upgrade_concurrency_lets_both_machine_pools_upgrade_together(env: Env) -> None:
    cluster = await converged_at_old_version(env)
    await bump(env, cluster, **{c.ANNOTATION_UPGRADE_CONCURRENCY: "2"})
    await eventually(lambda: _cp_version_is(env, NEW), what="the control plane to start")
    await env.settle_control_plane(version=NEW)

    async def both() -> bool:
        return {version_of(p) for p in (await env.machine_pools()).values()} == {NEW}

    await eventually(both, what="both MachinePools to upgrade")


async def test_a_deferred_machine_pool_gives_its_slot_to_the_next(env: Env) -> None:
    cluster = await converged_at_old_version(env, {"mp-0": {c.ANNOTATION_DEFER_UPGRADE: ""}})
    await bump(env, cluster)
    await eventually(lambda: _cp_version_is(env, NEW), what="the control plane to start")
    await env.settle_control_plane(version=NEW)

    async def next_one() -> bool:
        pools = await env.machine_pools()
        return version_of(pools["mp-1"]) == NEW and version_of(pools["mp-0"]) == OLD

    await eventually(next_one, what="mp-1 to take the slot")
    await env.set_pool_nodes((await env.machine_pools())["mp-1"], NEW)
    condition = await env.wait_condition("MachinePoolsUpgradeDeferred")
    pools = await env.machine_pools()
    assert condition["message"] == (
        f"Cluster is upgrading to {NEW}\n  * MachinePool {name_of(pools['mp-0'])} upgrade to version {NEW} deferred "
        "using topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence annotations"
    )
    # the deferral annotations never reach the MachinePool
    assert c.ANNOTATION_DEFER_UPGRADE not in (pools["mp-0"]["metadata"].get("annotations") or {})


async def test_hold_upgrade_sequence_holds_this_and_later_machine_pools(env: Env) -> None:
    cluster = await converged_at_old_version(env, {"mp-0": {c.ANNOTATION_HOLD_UPGRADE_SEQUENCE: ""}})
    await bump(env, cluster)
    await eventually(lambda: _cp_version_is(env, NEW), what="the control plane to start")
    await env.settle_control_plane(version=NEW)

    async def deployment_upgraded() -> bool:
        return version_of((await env.machine_deployments())["md-0"]) == NEW

    await eventually(deployment_upgraded, what="the MachineDeployment to upgrade")
    await env.settled()
    assert {version_of(p) for p in (await env.machine_pools()).values()} == {OLD}
    condition = await env.wait_condition("MachinePoolsUpgradeDeferred")
    pools = await env.machine_pools()
    assert condition["message"] == (
        f"Cluster is upgrading to {NEW}\n  * MachinePools {name_of(pools['mp-0'])}, {name_of(pools['mp-1'])} "
        f"upgrade to version {NEW} deferred using topology.cluster.x-k8s.io/defer-upgrade or hold-upgrade-sequence "
        "annotations"
    )


async def test_a_machine_pool_added_while_the_control_plane_upgrades_waits_to_be_created(env: Env) -> None:
    cluster = await converged_at_old_version(env)
    await bump(env, cluster)
    await eventually(lambda: _cp_version_is(env, NEW), what="the control plane to start")
    cluster["spec"]["topology"]["workers"]["machinePools"].append({"class": "pool", "name": "mp-2", "replicas": 1})
    await env.apply(cluster)
    await wait_message(
        env, "  * MachinePool mp-2 creation deferred while control plane upgrade is in progress", whole=False
    )
    assert (await env.condition() or {})["reason"] == "ClusterUpgrading"
    await env.settled()
    assert "mp-2" not in await env.machine_pools()
    await env.settle_control_plane(version=NEW)

    async def created() -> bool:
        return "mp-2" in await env.machine_pools()

    await eventually(created, what="mp-2 to be created once the control plane is stable")
    assert version_of((await env.machine_pools())["mp-2"]) == NEW


async def _cp_version_is(env: Env, version: str) -> bool:
    return bool((await env.control_plane())["spec"]["version"] == version)
