"""External patches in the pure engine (spec §5.1, §5.2, §8.2, §8.3; §10.9's external cases as our own).

The extension is a :class:`patch_support.FakeExtensions`: what the engine asks is recorded, what it answers is
given. The same requests through a real extension over HTTPS are in ``tests/runtimesdk``.
"""

from __future__ import annotations

import base64
import dataclasses
import json
from typing import Any

import pytest
from patch_support import FakeExtensions, cluster, compute, inline_patch, overrides, pool
from test_patches_engine import (
    CC_KEY,
    MP_CLASS,
    TOPO1,
    TOPO2,
    add,
    generic_cluster,
    generic_world,
    mp_definitions,
    pool_specs,
)

from clusterclass.api.objects import Obj
from clusterclass.errors import TopologyError
from clusterclass.topology.patches.external import ExtensionCallFailed

GENERATE = "generate-patches.ext"
VALIDATE = "validate-topology.ext"


def external(name: str, *, generate: str | None = GENERATE, validate: str | None = None, **settings: str) -> Obj:
    spec: dict[str, Any] = {}
    if generate:
        spec["generateExtension"] = generate
    if validate:
        spec["validateExtension"] = validate
    if settings:
        spec["settings"] = settings
    return {"name": name, "external": spec}


def definition_from(patch: str) -> Obj:
    """A status variable definition of any schema, discovered from ``patch``."""
    return {"from": patch, "required": False, "schema": {"openAPIV3Schema": {}}}


def encode(document: Any) -> str:
    return base64.b64encode(json.dumps(document).encode()).decode()


def patch_items(request: Obj, kind: str, operations: list[Obj], patch_type: str = "JSONPatch") -> list[Obj]:
    """One answer item per request item of holder ``kind`` (MachinePool, MachineDeployment, Cluster...)."""
    return [
        {"uid": item["uid"], "patchType": patch_type, "patch": encode(operations)}
        for item in request["items"]
        if item["holderReference"]["kind"] == kind
    ]


def test_generated_json_patches_reach_the_machine_pools_objects() -> None:
    def answer(request: Obj) -> Obj:
        return {"status": "Success", "items": patch_items(request, "MachinePool", [add("/spec/template/spec/a", 1)])}

    world = generic_world(external("ext"))
    extensions = FakeExtensions({GENERATE: answer})
    desired = compute(generic_cluster(), world.objects(), extensions=extensions).desired
    for topology in (TOPO1, TOPO2):
        assert pool_specs(desired, topology) == ({"a": 1}, {"a": 1})
    assert desired.machine_deployments["default-worker-topo1"].infrastructure["spec"] == {"template": {"spec": {}}}
    ((hook, handler, request, settings),) = extensions.calls
    assert (hook, handler, request["kind"], settings) == ("GeneratePatches", GENERATE, "GeneratePatchesRequest", {})


def test_the_request_has_upstreams_items_holders_and_variables() -> None:
    world = dataclasses.replace(
        generic_world(external("ext")),
        status_variables=[
            {"name": "region", "definitions": [{"from": "ext", "required": False, "schema": {"openAPIV3Schema": {}}}]},
            {
                "name": "other",
                "definitions": [{"from": "inline", "required": False, "schema": {"openAPIV3Schema": {}}}],
            },
        ],
    )
    the_cluster = generic_cluster(
        variables=[{"name": "region", "value": "eu"}, {"name": "other", "value": "not for ext"}],
        topo1={"variables": overrides({"name": "region", "value": "us"})},
    )
    extensions = FakeExtensions()
    desired = compute(the_cluster, world.objects(), extensions=extensions).desired
    ((_, _, request, _),) = extensions.calls
    holders = [(i["holderReference"]["kind"], i["holderReference"]["fieldPath"]) for i in request["items"]]
    # infrastructure cluster and control plane first, then the MachineDeployment, then the MachinePools
    assert holders[:2] == [("Cluster", "spec.infrastructureRef"), ("Cluster", "spec.controlPlaneRef")]
    assert (
        holders[-4:]
        == [
            ("MachinePool", "spec.template.spec.bootstrap.configRef"),
            ("MachinePool", "spec.template.spec.infrastructureRef"),
        ]
        * 2
    )
    pool_item = request["items"][-1]
    mp = desired.machine_pools[TOPO2].object
    assert pool_item["holderReference"] == {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachinePool",
        "namespace": mp["metadata"]["namespace"],
        "name": mp["metadata"]["name"],
        "fieldPath": "spec.template.spec.infrastructureRef",
    }
    # the item's object is the template as read (metadata included), not the MachinePool's object
    assert pool_item["object"]["kind"] == "GenericInfrastructureMachinePoolTemplate"
    assert pool_item["object"]["metadata"]["name"] == "mp-infra"
    # global variables: only those defined for this patch, and builtin with the cluster
    names = [v["name"] for v in request["variables"]]
    assert names == ["builtin", "region"]
    assert {v["name"]: v["value"] for v in request["variables"]}["region"] == "eu"
    builtin = {v["name"]: v["value"] for v in request["variables"]}["builtin"]
    assert set(builtin) == {"cluster"}
    # item variables: the pool's overrides for this patch and builtin.machinePool only
    topo1_name = desired.machine_pools[TOPO1].object["metadata"]["name"]
    topo1_item = next(i for i in request["items"] if i["holderReference"]["name"] == topo1_name)
    item_variables = {v["name"]: v["value"] for v in topo1_item["variables"]}
    assert item_variables["region"] == "us"
    assert set(item_variables["builtin"]) == {"machinePool"}
    assert item_variables["builtin"]["machinePool"]["topologyName"] == TOPO1
    assert item_variables["builtin"]["machinePool"]["class"] == MP_CLASS
    assert len({i["uid"] for i in request["items"]}) == len(request["items"])


def test_requests_are_the_same_on_every_run_so_answers_can_be_reused() -> None:
    world = generic_world(external("ext"))
    first, second = FakeExtensions(), FakeExtensions()
    compute(generic_cluster(), world.objects(), extensions=first, seed=3)
    compute(generic_cluster(), world.objects(), extensions=second, seed=3)
    assert first.calls == second.calls


def test_merge_patches_apply_and_only_the_spec_is_kept() -> None:
    def answer(request: Obj) -> Obj:
        merge = {"spec": {"template": {"spec": {"b": "merged"}}}, "metadata": {"labels": {"x": "y"}}}
        return {"status": "Success", "items": patch_items(request, "MachinePool", [merge][0], "JSONMergePatch")}

    world = generic_world(external("ext"))
    desired = compute(generic_cluster(), world.objects(), extensions=FakeExtensions({GENERATE: answer})).desired
    assert pool_specs(desired, TOPO1) == ({"b": "merged"}, {"b": "merged"})
    assert "labels" not in desired.machine_pools[TOPO1].infrastructure["metadata"] or "x" not in (
        desired.machine_pools[TOPO1].infrastructure["metadata"].get("labels") or {}
    )


def test_an_external_patch_sees_earlier_patches_and_later_patches_see_it() -> None:
    seen: list[Any] = []

    def answer(request: Obj) -> Obj:
        pools = [i for i in request["items"] if i["holderReference"]["kind"] == "MachinePool"]
        seen.extend(i["object"]["spec"]["template"]["spec"].get("first") for i in pools)
        return {
            "status": "Success",
            "items": patch_items(request, "MachinePool", [add("/spec/template/spec/second", 2)]),
        }

    world = generic_world(
        inline_patch("first", *mp_definitions(add("/spec/template/spec/first", 1))),
        external("ext"),
        inline_patch("third", *mp_definitions(add("/spec/template/spec/third", 3))),
    )
    desired = compute(generic_cluster(), world.objects(), extensions=FakeExtensions({GENERATE: answer})).desired
    assert seen == [1, 1, 1, 1]
    assert pool_specs(desired, TOPO1) == ({"first": 1, "second": 2, "third": 3},) * 2


def test_settings_of_the_patch_go_with_the_call() -> None:
    extensions = FakeExtensions()
    compute(generic_cluster(), generic_world(external("ext", zone="a")).objects(), extensions=extensions)
    assert extensions.calls[0][3] == {"zone": "a"}


def test_a_failed_generation_names_the_patch() -> None:
    def fail(request: Obj) -> Obj:
        raise ExtensionCallFailed('failed to call extension handler "generate-patches.ext": got failure response')

    with pytest.raises(TopologyError) as caught:
        compute(
            generic_cluster(), generic_world(external("ext")).objects(), extensions=FakeExtensions({GENERATE: fail})
        )
    assert str(caught.value) == (
        'failed to apply patches: failed to generate patches for patch "ext": '
        'failed to call extension handler "generate-patches.ext": got failure response'
    )
    assert (caught.value.obj, caught.value.field) == (CC_KEY, "spec.patches[0].external")


@pytest.mark.parametrize(
    ("answer_items", "problem"),
    [
        ([{"uid": "nobody", "patchType": "JSONPatch", "patch": encode([])}], "no request item has uid 'nobody'"),
        ([{"uid": "UID", "patchType": "JSONPatch", "patch": "%%%"}], "the patch is not base64 JSON"),
        ([{"uid": "UID", "patchType": "StrategicMerge", "patch": encode({})}], "unknown patchType 'StrategicMerge'"),
        (
            [{"uid": "UID", "patchType": "JSONPatch", "patch": encode([{"op": "remove", "path": "/spec/x"}])}],
            "items[0]",
        ),
    ],
)
def test_an_answer_that_cannot_be_applied_names_the_patch_and_the_item(answer_items: list[Obj], problem: str) -> None:
    def answer(request: Obj) -> Obj:
        uid = request["items"][-1]["uid"]
        return {"items": [{**item, "uid": uid if item["uid"] == "UID" else item["uid"]} for item in answer_items]}

    world = generic_world(external("ext"))
    with pytest.raises(TopologyError) as caught:
        compute(generic_cluster(), world.objects(), extensions=FakeExtensions({GENERATE: answer}))
    assert str(caught.value).startswith('failed to apply patches: failed to apply patches for patch "ext": ')
    assert problem in str(caught.value)


def test_validation_failure_names_the_patch_and_sees_the_final_templates() -> None:
    requests: list[Obj] = []

    def validate(request: Obj) -> Obj:
        requests.append(request)
        raise ExtensionCallFailed('failed to call extension handler "validate-topology.ext": got failure response')

    world = generic_world(
        external("check", generate=None, validate=VALIDATE),
        inline_patch("later", *mp_definitions(add("/spec/template/spec/late", True))),
    )
    with pytest.raises(TopologyError) as caught:
        compute(generic_cluster(), world.objects(), extensions=FakeExtensions({VALIDATE: validate}))
    assert 'validation of patch "check" failed' in str(caught.value)
    pools = [i for i in requests[0]["items"] if i["holderReference"]["kind"] == "MachinePool"]
    assert all(i["object"]["spec"]["template"]["spec"] == {"late": True} for i in pools)


def test_validation_gets_the_variables_of_its_own_patch() -> None:
    """DECISIONS.md: each validating patch gets its own variables (upstream sends the last patch's to all)."""
    world = dataclasses.replace(
        generic_world(external("a", generate=None, validate=VALIDATE), external("b")),
        status_variables=[
            {"name": "va", "definitions": [definition_from("a")]},
            {"name": "vb", "definitions": [definition_from("b")]},
        ],
    )
    extensions = FakeExtensions()
    the_cluster = generic_cluster(variables=[{"name": "va", "value": 1}, {"name": "vb", "value": 2}])
    compute(the_cluster, world.objects(), extensions=extensions)
    validation = next(c for c in extensions.calls if c[0] == "ValidateTopology")
    assert [v["name"] for v in validation[2]["variables"]] == ["builtin", "va"]


def test_a_machine_pool_topology_without_overrides_gets_only_builtins() -> None:
    world = generic_world(external("ext"))
    extensions = FakeExtensions()
    compute(cluster(machine_pools=[pool(TOPO1, MP_CLASS)]), world.objects(), extensions=extensions)
    pools = [i for i in extensions.calls[0][2]["items"] if i["holderReference"]["kind"] == "MachinePool"]
    assert [[v["name"] for v in i["variables"]] for i in pools] == [["builtin"], ["builtin"]]
