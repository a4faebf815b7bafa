"""The lifecycle-hook seam (spec §4.9): where the topology controller calls hooks, and what their answers do.

A fake :class:`~clusterclass.controllers.topology.hooks.HookCaller` records the calls and answers with a
``retryAfterSeconds`` the test chooses, as an extension would. The Runtime SDK issue replaces it with real
HTTPS calls; what the topology does with the answers is pinned here.
"""

from __future__ import annotations

import pytest
from controller_support import Env, eventually, example_class, example_cluster

from clusterclass.api.objects import Obj, dig
from clusterclass.controllers.topology.hooks import ANNOTATION_OK_TO_DELETE, LifecycleHooks
from clusterclass.topology.hooks import ANNOTATION_PENDING_HOOKS, HookResponse

OLD, NEW = "v1.28.0", "v1.29.0"


class FakeExtensions:
    """Answers hooks as told: ``blocking[hook] = seconds`` blocks it with that retry; records every call."""

    def __init__(self) -> None:
        self.blocking: dict[str, int] = {}
        self.calls: list[tuple[str, Obj]] = []

    async def call(self, hook: str, cluster: Obj, request: Obj) -> HookResponse:
        self.calls.append((hook, request))
        seconds = self.blocking.get(hook, 0)
        return HookResponse(seconds, f"{hook} says wait" if seconds else "")

    def called(self, hook: str) -> list[Obj]:
        return [request for name, request in self.calls if name == hook]


@pytest.fixture
async def hooked(env: Env) -> tuple[Env, FakeExtensions]:
    extensions = FakeExtensions()
    controllers = env.new_controllers()
    controllers.topology.hooks = extensions
    controllers.topology.lifecycle = LifecycleHooks(extensions, controllers.topology.ssa)
    env.controllers = await controllers.start()
    return env, extensions


async def test_before_cluster_create_holds_everything_until_it_lets_go(hooked: tuple[Env, FakeExtensions]) -> None:
    env, extensions = hooked
    extensions.blocking["BeforeClusterCreate"] = 30
    await env.apply(*example_class(), example_cluster())
    # upstream v1.14's words (the v1beta1 condition of a v1beta2 Cluster is its v1beta2 one in v1beta1's form)
    condition = await env.wait_condition("ClusterCreating")
    assert condition["message"] == (
        "Following hooks are blocking Cluster topology creation: BeforeClusterCreate: BeforeClusterCreate says wait"
    )
    assert await env.machine_pools() == {} and "infrastructureRef" not in (await env.cluster())["spec"]
    assert env.controllers is not None and env.controllers.topology.controller.queue.waiting == 1  # requeued later
    extensions.blocking.clear()
    await env.reconcile()
    await env.wait_reconciled()
    assert sorted(await env.machine_pools()) == ["mp-0", "mp-1"]
    assert ANNOTATION_PENDING_HOOKS in (await env.cluster())["metadata"]["annotations"]  # AfterControlPlaneInitialized
    # the annotation is written in the stored version: an entry in another one costs kube-apiserver a conversion of
    # its fields on every later write of the Cluster
    stored = await env.get("cluster.x-k8s.io/v1beta2", "Cluster", "demo")
    ours = {(e["manager"], e["apiVersion"]) for e in stored["metadata"]["managedFields"] if e["manager"] != "test"}
    assert ours and {version for _, version in ours} == {"cluster.x-k8s.io/v1beta2"}, ours  # "test" wrote v1beta1


async def test_an_upgrade_passes_through_every_hook(hooked: tuple[Env, FakeExtensions]) -> None:
    env, extensions = hooked
    cluster = example_cluster()
    await env.apply(*example_class(), cluster)
    await env.wait_reconciled()
    await env.settle_control_plane()
    for pool in (await env.machine_pools()).values():
        await env.set_pool_nodes(pool, OLD)
    await env.wait_reconciled()

    extensions.blocking["BeforeClusterUpgrade"] = 60
    cluster["spec"]["topology"]["version"] = NEW
    await env.apply(cluster)
    condition = await env.wait_condition("ClusterUpgrading")
    assert condition["message"].startswith(
        f"Cluster is upgrading to {NEW}\n"
        "  * Following hooks are blocking upgrade: BeforeClusterUpgrade: BeforeClusterUpgrade says wait\n"
        f"  * KubeadmControlPlane pending upgrade to version {NEW}\n"
    )
    assert extensions.called("BeforeClusterUpgrade")[-1] == {"fromKubernetesVersion": OLD, "toKubernetesVersion": NEW}
    assert (await env.control_plane())["spec"]["version"] == OLD

    extensions.blocking = {"AfterControlPlaneUpgrade": 60}
    await env.reconcile()

    async def pending(*hooks: str) -> bool:
        return (dig(await env.cluster(), "metadata", "annotations", ANNOTATION_PENDING_HOOKS) or "") == ",".join(hooks)

    await eventually(lambda: pending("AfterClusterUpgrade", "AfterControlPlaneUpgrade"), what="the hooks to be marked")
    assert (await env.control_plane())["spec"]["version"] == NEW
    await env.settle_control_plane(version=NEW)

    async def after_control_plane_upgrade_blocks() -> bool:
        condition = await env.condition()
        return condition is not None and "blocking upgrade: AfterControlPlaneUpgrade" in condition.get("message", "")

    await eventually(after_control_plane_upgrade_blocks, what="AfterControlPlaneUpgrade to block the workers")
    assert (await env.condition() or {}).get("reason") == "ClusterUpgrading"
    assert {dig(p, "spec", "template", "spec", "version") for p in (await env.machine_pools()).values()} == {OLD}

    extensions.blocking.clear()
    await env.reconcile()
    await eventually(lambda: pending("AfterClusterUpgrade"), what="AfterControlPlaneUpgrade to be done")
    for topology_name in ("mp-0", "mp-1"):

        async def upgraded(name: str = topology_name) -> bool:
            return dig((await env.machine_pools())[name], "spec", "template", "spec", "version") == NEW

        await eventually(upgraded, what=f"{topology_name} to upgrade")
        await env.set_pool_nodes((await env.machine_pools())[topology_name], NEW)
    await eventually(lambda: pending(), what="AfterClusterUpgrade to be called")
    assert extensions.called("AfterClusterUpgrade") == [{"kubernetesVersion": NEW}]
    await env.wait_reconciled()


async def test_before_cluster_delete_decides_when_the_cluster_may_go(hooked: tuple[Env, FakeExtensions]) -> None:
    env, extensions = hooked
    cluster = example_cluster()
    cluster["metadata"]["finalizers"] = ["test.example.com/hold"]  # stands in for the core Cluster controller's
    await env.apply(*example_class(), cluster)
    await env.wait_reconciled()
    extensions.blocking["BeforeClusterDelete"] = 20
    await env.direct.delete("cluster.x-k8s.io/v1beta1", "Cluster", "demo", namespace=env.namespace)
    condition = await env.wait_condition("Deleting")
    assert condition["severity"] == "Info"
    assert condition["message"] == (
        "Cluster is deleting. Following hooks are blocking delete: BeforeClusterDelete: BeforeClusterDelete says wait"
    )
    await eventually(lambda: _called(extensions, "BeforeClusterDelete"), what="BeforeClusterDelete to be called")
    assert ANNOTATION_OK_TO_DELETE not in (await env.cluster())["metadata"].get("annotations", {})
    extensions.blocking.clear()
    await env.reconcile()
    assert ANNOTATION_OK_TO_DELETE in (await env.cluster())["metadata"]["annotations"]
    await env.direct.patch(
        "cluster.x-k8s.io/v1beta1", "Cluster", "demo", {"metadata": {"finalizers": None}}, namespace=env.namespace
    )


async def _called(extensions: FakeExtensions, hook: str) -> bool:
    return bool(extensions.called(hook))


async def test_without_the_runtime_sdk_no_hook_state_is_written(env: Env) -> None:
    controllers = env.new_controllers()
    controllers.topology.hooks = None
    controllers.topology.lifecycle = None
    env.controllers = await controllers.start()
    await env.apply(*example_class(), example_cluster())
    cluster = await env.wait_reconciled()
    assert ANNOTATION_PENDING_HOOKS not in (cluster["metadata"].get("annotations") or {})
