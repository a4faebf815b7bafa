"""The ClusterClass controller (spec §7.2, upstream's ``clusterclass_controller_test.go``), with MachinePool classes."""

from __future__ import annotations

import pytest
from controller_support import (
    CAPI,
    GENERIC_INFRA,
    Env,
    eventually,
    example_class,
    install_generic_kinds,
    v1beta2_example_class,
)

from clusterclass.api.objects import Obj, dig, name_of

pytestmark = pytest.mark.usefixtures("running")


async def reconciled_class(env: Env, name: str = "pools") -> Obj:
    async def done() -> bool:
        cc = await env.get(CAPI, "ClusterClass", name)
        return bool(dig(cc, "status", "observedGeneration") == cc["metadata"]["generation"])

    await eventually(done, what=f"ClusterClass {name} to be reconciled")
    return await env.get(CAPI, "ClusterClass", name)


def condition(cc: Obj, type_: str) -> Obj:
    return next(c for c in cc["status"]["conditions"] if c["type"] == type_)


async def test_every_template_is_owned_by_the_class_machine_pool_classes_included(env: Env) -> None:
    await env.apply(*example_class())
    cc = await reconciled_class(env)
    owner = {"apiVersion": CAPI, "kind": "ClusterClass", "name": "pools", "uid": cc["metadata"]["uid"]}
    for obj in example_class():
        if obj["kind"] == "ClusterClass":
            continue
        template = await env.get(obj["apiVersion"], obj["kind"], name_of(obj))
        assert template["metadata"]["ownerReferences"] == [owner], obj["kind"]
    assert condition(cc, "VariablesReconciled")["status"] == "True"


async def test_v1beta1_template_refs_are_outdated_once_the_crds_serve_the_v1beta2_contract(env: Env) -> None:
    """v1.14's CRDs label v1beta2 for contract v1beta2, so a class still pointing at v1beta1 templates is told so,
    in both generations of the condition (the v1beta1 one as v1.6 words it, the v1beta2 one as v1.14 does)."""
    await env.apply(*example_class())
    cc = await reconciled_class(env)
    legacy = condition(cc, "RefVersionsUpToDate")
    assert (legacy["status"], legacy["reason"], legacy["severity"]) == ("False", "OutdatedRefVersions", "Warning")
    expected = (
        f'Ref "infrastructure.cluster.x-k8s.io/v1beta1, Kind=DockerClusterTemplate {env.namespace}/pools-cluster" '
        f'should be "infrastructure.cluster.x-k8s.io/v1beta2, Kind=DockerClusterTemplate {env.namespace}/pools-cluster"'
    )
    assert expected in legacy["message"]
    current = next(x for x in cc["status"]["v1beta2"]["conditions"] if x["type"] == "RefVersionsUpToDate")
    assert (current["status"], current["reason"]) == ("False", "RefVersionsNotUpToDate")
    assert "* DockerClusterTemplate pools-cluster: current: v1beta1, latest: v1beta2" in current["message"].split("\n")


async def test_a_v1beta2_class_has_its_refs_up_to_date(env: Env) -> None:
    await env.apply(*v1beta2_example_class())
    cc = await reconciled_class(env, "quick-start-pools")
    assert condition(cc, "RefVersionsUpToDate")["status"] == "True"
    current = next(x for x in cc["status"]["v1beta2"]["conditions"] if x["type"] == "RefVersionsUpToDate")
    assert (current["status"], current["reason"], current["message"]) == ("True", "RefVersionsUpToDate", "")


async def test_status_variables_mirror_the_inline_variables_sorted(env: Env) -> None:
    objects = example_class()
    cc = next(o for o in objects if o["kind"] == "ClusterClass")
    cc["spec"]["variables"] = [
        {"name": "zone", "required": True, "schema": {"openAPIV3Schema": {"type": "string"}}},
        {"name": "image", "required": False, "schema": {"openAPIV3Schema": {"type": "string", "default": "x"}}},
    ]
    await env.apply(*objects)
    reconciled = await reconciled_class(env)
    assert reconciled["status"]["variables"] == [
        {
            "name": "image",
            "definitions": [
                {"from": "inline", "required": False, "schema": {"openAPIV3Schema": {"type": "string", "default": "x"}}}
            ],
        },
        {
            "name": "zone",
            "definitions": [{"from": "inline", "required": True, "schema": {"openAPIV3Schema": {"type": "string"}}}],
        },
    ]


async def test_a_missing_template_keeps_the_class_unreconciled(env: Env) -> None:
    objects = [o for o in example_class() if o["kind"] != "DockerMachinePoolTemplate"]
    await env.apply(*objects)
    assert env.controllers is not None

    expected = (
        "Could not find external object for the ClusterClass. refGroupVersionKind: "
        "infrastructure.cluster.x-k8s.io/v1beta1, Kind=DockerMachinePoolTemplate, refName: pools-pool-machines"
    )

    async def failed() -> bool:
        return env.controllers is not None and env.controllers.clusterclass.controller.stats.last_error == expected

    await eventually(failed, what="the ClusterClass reconcile to fail on the missing template")
    cc = await env.get(CAPI, "ClusterClass", "pools")
    assert dig(cc, "status", "observedGeneration") is None
    # the template appears: the retried reconcile succeeds
    await env.apply(*[o for o in example_class() if o["kind"] == "DockerMachinePoolTemplate"])
    assert (await reconciled_class(env))["status"]["observedGeneration"] == cc["metadata"]["generation"]


async def test_a_ref_to_an_older_version_is_reported(env: Env) -> None:
    """RefVersionsUpToDate names refs to a version older than the newest the CRD serves for the contract."""
    await install_generic_kinds(env.direct)
    objects = example_class()
    cc = next(o for o in objects if o["kind"] == "ClusterClass")
    old = "infrastructure.cluster.x-k8s.io/v1alpha4"
    cc["spec"]["workers"]["machinePools"][0]["template"]["infrastructure"]["ref"] = {
        "apiVersion": old,
        "kind": "GenericInfrastructureMachinePoolTemplate",
        "name": "generic",
    }
    await env.apply(*objects)
    await env.apply(
        {
            "apiVersion": GENERIC_INFRA,
            "kind": "GenericInfrastructureMachinePoolTemplate",
            "metadata": {"name": "generic"},
            "spec": {"template": {"spec": {}}},
        }
    )
    reconciled = await reconciled_class(env)
    outdated = condition(reconciled, "RefVersionsUpToDate")
    assert (outdated["status"], outdated["reason"], outdated["severity"]) == ("False", "OutdatedRefVersions", "Warning")
    assert (
        f'Ref "{old}, Kind=GenericInfrastructureMachinePoolTemplate {env.namespace}/generic" should be '
        f'"{GENERIC_INFRA}, Kind=GenericInfrastructureMachinePoolTemplate {env.namespace}/generic"'
    ) in outdated["message"]
