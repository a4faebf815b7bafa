"""The Runtime SDK end to end: extensions written with the Python SDK, served over HTTPS, called by the controllers.

The example extension (``clusterclass/examples/extension.py``) runs in this process, registered by an ExtensionConfig
as ``clusterclass up --example-extension`` registers it; the ClusterClass variant ``quick-start-extension`` has its
patches generated and its variables discovered by it, and the simulated providers bring its Cluster up. Lifecycle
hooks answer from the ConfigMap ``<cluster>-test-extension-hookresponses``, as upstream's e2e drives its extension.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest
from e2e_support import CAPI, CONTROL_PLANE, INFRA, SimEnv, eventually, example_class

from clusterclass.api.conditions import find
from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.runtimesdk import Extension, ExtensionFailure
from clusterclass.up.extension import ServedExtension, serve_example_extension, variant_objects

CLUSTER = "demo-extension"
NEW = "v1.29.0"


@pytest.fixture
async def served(env: SimEnv) -> AsyncIterator[ServedExtension]:
    extension = await serve_example_extension(env.client)
    try:
        yield extension
    finally:
        await extension.stop()


async def apply_variant(env: SimEnv, **cluster_changes: Any) -> None:
    await env.apply(*example_class())
    objects = variant_objects()
    for obj in objects:
        if obj["kind"] == "Cluster":
            obj["spec"]["topology"].update(cluster_changes)
    await env.apply(*objects)


async def hook_responses(env: SimEnv, **responses: Obj | None) -> None:
    """Set (or, with None, clear) the preloaded answers of hooks for the Cluster."""
    name = f"{CLUSTER}-test-extension-hookresponses"
    data = {
        f"{hook}-preloadedResponse": json.dumps(value) if value is not None else None
        for hook, value in responses.items()
    }
    existing = await env.find("v1", "ConfigMap", name)
    if existing is None:
        await env.client.create(
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": env.namespace},
                "data": {k: v for k, v in data.items() if v is not None},
            }
        )
    else:
        await env.patch("v1", "ConfigMap", name, {"data": data})


async def recorded(env: SimEnv, hook: str) -> str | None:
    config_map = await env.find("v1", "ConfigMap", f"{CLUSTER}-test-extension-hookresponses")
    return dig(config_map, "data", f"{hook}-actualResponseStatus") if config_map else None


async def condition(env: SimEnv, name: str = CLUSTER) -> Obj:
    return find(await env.get(CAPI, "Cluster", name), "TopologyReconciled") or {}


async def wait_condition(env: SimEnv, reason: str, message: str | None = None, name: str = CLUSTER) -> None:
    async def matches() -> bool:
        found = await condition(env, name)
        return found.get("reason") == reason and (message is None or message in str(found.get("message")))

    await eventually(matches, what=f"TopologyReconciled {reason} {message or ''}")


async def pool_versions(env: SimEnv) -> set[str]:
    return {str(dig(p, "spec", "template", "spec", "version")) for p in await env.list(CAPI, "MachinePool")}


async def test_the_extension_patches_machine_pool_templates_and_its_variables_are_discovered(
    env: SimEnv, served: ServedExtension
) -> None:
    await apply_variant(env)
    await env.wait_ready(CLUSTER)
    config = await env.client.get(served.extension_config["apiVersion"], "ExtensionConfig", "example-extension")
    assert dig(config, "status", "conditions")[0]["type"] == "Discovered"
    assert "generate-patches.example-extension" in [h["name"] for h in config["status"]["handlers"]]
    cluster_class = await env.get(CAPI, "ClusterClass", "quick-start-extension")
    discovered = {v["name"]: v["definitions"] for v in cluster_class["status"]["variables"]}
    assert discovered["imageRepository"] == [
        {"from": "example", "required": True, "schema": discovered["imageRepository"][0]["schema"]}
    ]
    assert set(discovered) == {"imageRepository", "kubeadmControlPlaneMaxSurge"}
    # the extension's patches reached the DockerMachinePool object and the DockerCluster
    (docker_pool,) = await env.list(INFRA, "DockerMachinePool")
    assert docker_pool["spec"]["template"]["customImage"] == "kindest/node:v1.28.0"
    (docker_cluster,) = await env.list(INFRA, "DockerCluster")
    assert docker_cluster["spec"]["loadBalancer"] == {"imageRepository": "kindest"}
    # an upgrade changes the pool's image in place, and its instances are replaced at the new version
    await env.patch_topology(CLUSTER, {"version": NEW})
    objects = await env.wait_ready(CLUSTER)
    (docker_pool,) = await env.list(INFRA, "DockerMachinePool")
    assert docker_pool["spec"]["template"]["customImage"] == f"kindest/node:{NEW}"
    (pool,) = objects.machine_pools
    workload = env.workload(CLUSTER)
    kubelets = {
        dig(workload.node(ref["name"]), "status", "nodeInfo", "kubeletVersion") for ref in pool["status"]["nodeRefs"]
    }
    assert kubelets == {NEW}


async def test_an_upgrade_waits_for_before_cluster_upgrade_then_pools_wait_for_after_control_plane_upgrade(
    env: SimEnv, served: ServedExtension
) -> None:
    await apply_variant(env)
    await env.wait_ready(CLUSTER)
    blocking = {"Status": "Success", "RetryAfterSeconds": 1, "Message": "waiting for the maintenance window"}
    await hook_responses(env, BeforeClusterUpgrade=blocking)
    await env.patch_topology(CLUSTER, {"version": NEW})
    # upstream v1.14's words (the v1beta1 condition of a v1beta2 Cluster is its v1beta2 one in v1beta1's form)
    await wait_condition(
        env,
        "ClusterUpgrading",
        "Following hooks are blocking upgrade: BeforeClusterUpgrade: waiting for the maintenance window",
    )
    (control_plane,) = await env.list(CONTROL_PLANE, "KubeadmControlPlane")
    assert control_plane["spec"]["version"] == "v1.28.0"

    # release the upgrade, but hold the workers once the control plane is done
    await hook_responses(
        env, BeforeClusterUpgrade=None, AfterControlPlaneUpgrade={**blocking, "Message": "smoke tests"}
    )
    await wait_condition(
        env, "ClusterUpgrading", "Following hooks are blocking upgrade: AfterControlPlaneUpgrade: smoke tests"
    )

    async def control_plane_upgraded() -> bool:
        (cp,) = await env.list(CONTROL_PLANE, "KubeadmControlPlane")
        return dig(cp, "status", "version") == NEW

    await eventually(control_plane_upgraded, what="the control plane at the new version")
    assert await pool_versions(env) == {"v1.28.0"}  # held: MachinePools are not upgraded yet
    (deployment,) = await env.list(CAPI, "MachineDeployment")
    assert deployment["spec"]["template"]["spec"]["version"] == "v1.28.0"

    await hook_responses(env, AfterControlPlaneUpgrade=None)
    await env.wait_ready(CLUSTER)
    assert await pool_versions(env) == {NEW}

    async def after_cluster_upgrade_called() -> bool:
        return await recorded(env, "AfterClusterUpgrade") == "Success"

    await eventually(after_cluster_upgrade_called, what="AfterClusterUpgrade to be called")
    cluster = await env.get(CAPI, "Cluster", CLUSTER)
    assert "runtime.cluster.x-k8s.io/pending-hooks" not in (cluster["metadata"].get("annotations") or {})


async def test_before_cluster_create_and_before_cluster_delete_hold_until_released(
    env: SimEnv, served: ServedExtension
) -> None:
    blocking = {"Status": "Success", "RetryAfterSeconds": 1, "Message": "not yet"}
    await hook_responses(env, BeforeClusterCreate=blocking, BeforeClusterDelete=blocking)
    await apply_variant(env)
    await wait_condition(
        env, "ClusterCreating", "Following hooks are blocking Cluster topology creation: BeforeClusterCreate: not yet"
    )
    assert await env.list(CAPI, "MachinePool") == []  # nothing is created while the hook blocks
    await hook_responses(env, BeforeClusterCreate=None)
    await env.wait_ready(CLUSTER)

    async def after_control_plane_initialized_called() -> bool:  # the topology controller's next reconcile calls it
        return await recorded(env, "AfterControlPlaneInitialized") == "Success"

    await eventually(after_control_plane_initialized_called, what="AfterControlPlaneInitialized to be called")

    await env.client.delete(CAPI, "Cluster", CLUSTER, namespace=env.namespace)
    await wait_condition(
        env, "Deleting", "Cluster is deleting. Following hooks are blocking delete: BeforeClusterDelete"
    )
    cluster = await env.get(CAPI, "Cluster", CLUSTER)
    assert "runtime.cluster.x-k8s.io/ok-to-delete" not in (cluster["metadata"].get("annotations") or {})
    assert len(await env.list(CAPI, "MachinePool")) == 1  # held: nothing is deleted yet
    await hook_responses(env, BeforeClusterDelete=None)

    async def gone() -> bool:
        return await env.find(CAPI, "Cluster", CLUSTER) is None and not await env.list(CAPI, "MachinePool")

    await eventually(gone, what="the Cluster and its MachinePools to be deleted")


@pytest.mark.parametrize("policy", ["Fail", "Ignore"])
async def test_a_hook_whose_extension_is_down_blocks_or_is_ignored_by_its_failure_policy(
    env: SimEnv, policy: str
) -> None:
    gate = Extension("gate")

    @gate.before_cluster_create("gate", failure_policy=policy, timeout_seconds=1)
    async def allow(request: Obj) -> Obj:
        return {}

    extension = await serve_example_extension(env.client, extension=gate, name="gate")

    async def discovered() -> bool:
        config = await env.client.get("runtime.cluster.x-k8s.io/v1alpha1", "ExtensionConfig", "gate")
        return bool(dig(config, "status", "handlers"))

    await eventually(discovered, what="the gate extension to be discovered")
    await extension.stop()  # the extension goes away; its ExtensionConfig stays
    await env.apply_example()  # the bundled example: inline patches, no extension needed but the gate
    if policy == "Ignore":
        await env.wait_ready("demo")
    else:
        await wait_condition(env, "TopologyReconcileFailed", 'failed to call extension handler "gate.gate"', "demo")
        assert await env.list(CAPI, "MachinePool") == []


def discovering(**answers: Any) -> Extension:
    """An extension whose DiscoverVariables handlers (by name) answer as given."""
    extension = Extension("vars")
    for name, answer in answers.items():

        def handler(request: Obj, answer: Any = answer) -> Obj:
            if isinstance(answer, str):
                raise ExtensionFailure(answer)
            return {"variables": answer}

        extension.discover_variables(name.replace("_", "-"))(handler)

    @extension.validate_topology("valid")
    def valid(request: Obj) -> Obj:
        return {}

    return extension


def variable(name: str, schema_type: str) -> Obj:
    return {"name": name, "required": False, "schema": {"openAPIV3Schema": {"type": schema_type}}}


def variables_reconciled(cluster_class: Obj) -> Obj:
    conditions = dig(cluster_class, "status", "conditions") or []
    return next((c for c in conditions if c["type"] == "VariablesReconciled"), {})


async def class_with_discovering_patches(env: SimEnv, *handlers: str, until: Callable[[Obj], bool]) -> Obj:
    """The example ClusterClass as ``discovering``, with a validate-only patch per DiscoverVariables handler of the
    ``vars`` extension; returned once ``until`` holds for it (the first reconciles may run before the extension
    is discovered)."""
    (cluster_class,) = [o for o in example_class() if o["kind"] == "ClusterClass"]
    cluster_class["metadata"]["name"] = "discovering"
    cluster_class["spec"]["patches"] = [
        {
            "name": handler,
            "external": {"validateExtension": "valid.vars", "discoverVariablesExtension": f"{handler}.vars"},
        }
        for handler in handlers
    ]
    cluster_class["spec"].pop("variables", None)
    await env.apply(*[o for o in example_class() if o["kind"] != "ClusterClass"], cluster_class)

    async def done() -> bool:
        return until(await env.get(CAPI, "ClusterClass", "discovering"))

    await eventually(done, what="the ClusterClass's variables to be reconciled as expected")
    return await env.get(CAPI, "ClusterClass", "discovering")


async def test_variables_discovered_from_two_patches_that_disagree_conflict(env: SimEnv) -> None:
    extension = await serve_example_extension(
        env.client,
        extension=discovering(first=[variable("x", "string")], second=[variable("x", "integer")]),
        name="vars",
    )
    try:
        cluster_class = await class_with_discovering_patches(
            env, "first", "second", until=lambda cc: variables_reconciled(cc).get("status") == "True"
        )
    finally:
        await extension.stop()
    (x,) = cluster_class["status"]["variables"]
    assert x["definitionsConflict"] is True
    assert [d["from"] for d in x["definitions"]] == ["first", "second"]


async def test_variable_discovery_failures_say_which_patch_and_why(env: SimEnv) -> None:
    extension = await serve_example_extension(
        env.client,
        extension=discovering(broken="the backend is down", twice=[variable("y", "string"), variable("y", "string")]),
        name="vars",
    )
    try:
        cluster_class = await class_with_discovering_patches(
            env,
            "broken",
            "twice",
            until=lambda cc: "patch broken returned" in str(variables_reconciled(cc).get("message")),
        )
    finally:
        await extension.stop()
    reconciled = variables_reconciled(cluster_class)
    assert (reconciled["status"], reconciled["reason"], reconciled["severity"]) == (
        "False",
        "VariableDiscoveryFailed",
        "Error",
    )
    assert reconciled["message"] == (
        'VariableDiscovery failed: [patch broken returned status "Failure" with message "the backend is down", '
        'variable "y" is defined multiple times in variable discovery response from patch "twice"]'
    )
    assert "observedGeneration" not in cluster_class["status"]
    assert name_of(cluster_class) == "discovering"
