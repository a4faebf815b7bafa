"""Reconciling MachinePools and the objects they reference (spec §10.4), with the controllers running.

Upstream's ``TestReconcileMachinePools`` cases, each written as a change a user makes (to the Cluster or its
ClusterClass) and what the API server holds afterwards; then the server-side apply sequences of
``TestReconcileReferencedObjectSequences`` on a MachinePool's bootstrap config (``KubeadmConfig``) and
infrastructure pool (``DockerMachinePool``): drop a nested field, drop a label with dots, enforce a field a
user changed, keep fields another manager set.

Templates are not watched (as upstream): where a test changes a template in place it reconciles the
Cluster itself, as a resync would.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest
from controller_support import (
    BOOTSTRAP,
    GENERIC_INFRA,
    INFRA,
    Env,
    eventually,
    example_class,
    example_cluster,
    install_generic_kinds,
)

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, dig, name_of

pytestmark = pytest.mark.usefixtures("running")


def class_objects() -> dict[tuple[str, str], Obj]:
    return {(o["kind"], name_of(o)): o for o in example_class()}


def pool_object(pool: Obj, which: str) -> tuple[str, str, str]:
    spec = pool["spec"]["template"]["spec"]
    ref = spec["infrastructureRef"] if which == "infrastructure" else spec["bootstrap"]["configRef"]
    return ref["apiVersion"], ref["kind"], ref["name"]


async def referenced(env: Env, topology_name: str, which: str) -> Obj:
    pool = (await env.machine_pools())[topology_name]
    return await env.get(*pool_object(pool, which))


#: the example ClusterClass's template of each kind a test changes (the workers')
TEMPLATE_NAMES = {
    "KubeadmConfigTemplate": "pools-worker-bootstrap",
    "DockerMachinePoolTemplate": "pools-pool-machines",
    "DockerMachineTemplate": "pools-general-machines",
}


async def change_template_and_reconcile(env: Env, kind: str, change: Callable[[Obj], None]) -> None:
    """Change a class template in place (as a user with kubectl), then reconcile until the cache has it."""
    template = class_objects()[(kind, TEMPLATE_NAMES[kind])]
    change(template)
    applied = (await env.apply(template))[0]
    assert env.controllers is not None

    async def cache_has_it() -> bool:
        cached = env.controllers.manager.reader.get(applied["apiVersion"], kind, env.namespace, name_of(applied))  # type: ignore[union-attr]
        return cached is not None and cached["metadata"]["resourceVersion"] == applied["metadata"]["resourceVersion"]

    await eventually(cache_has_it, what=f"the {kind} change to reach the cache")
    await env.reconcile()


# --- TestReconcileMachinePools -----------------------------------------------------------------------------


async def test_the_infrastructure_pool_is_updated_in_place_and_the_bootstrap_config_rotated(env: Env) -> None:
    """The infrastructure pool keeps its name (it holds the instances; its provider rolls them); a bootstrap spec
    change makes a new config the MachinePool is switched to, and the old one goes (Cluster API #10496)."""
    await env.apply_example()
    await env.wait_reconciled()
    before = {which: await referenced(env, "mp-0", which) for which in ("infrastructure", "bootstrap")}
    await change_template_and_reconcile(
        env,
        "DockerMachinePoolTemplate",
        lambda t: t["spec"]["template"]["spec"]["template"].update(customImage="img:2"),
    )
    await change_template_and_reconcile(
        env,
        "KubeadmConfigTemplate",
        lambda t: t["spec"]["template"]["spec"].update(preKubeadmCommands=["echo hello"]),
    )
    infrastructure, bootstrap = (
        await referenced(env, "mp-0", "infrastructure"),
        await referenced(env, "mp-0", "bootstrap"),
    )
    assert name_of(infrastructure) == name_of(before["infrastructure"])
    assert infrastructure["metadata"]["resourceVersion"] != before["infrastructure"]["metadata"]["resourceVersion"]
    assert infrastructure["spec"]["template"]["customImage"] == "img:2"
    old = name_of(before["bootstrap"])
    assert name_of(bootstrap) != old and name_of(bootstrap).rsplit("-", 1)[0] == old.rsplit("-", 1)[0]
    assert bootstrap["spec"]["preKubeadmCommands"] == ["echo hello"]
    left = [c for c in await env.list(bootstrap["apiVersion"], "KubeadmConfig") if name_of(c) == old]
    assert all(c["metadata"].get("deletionTimestamp") for c in left), "the replaced config was not deleted"
    events = [
        e["message"] for e in await env.list("v1", "Event") if e["reason"] in ("TopologyUpdate", "TopologyCreate")
    ]
    assert f'Updated "DockerMachinePool/{name_of(infrastructure)}"' in events
    assert any(m.startswith(f'Created "KubeadmConfig/{name_of(bootstrap)}"') for m in events)


async def test_a_machine_pool_pending_an_upgrade_is_not_touched_at_all(env: Env) -> None:
    await env.apply_example()
    await env.wait_reconciled()
    await env.settle_control_plane()
    before = await referenced(env, "mp-0", "infrastructure")
    cluster = example_cluster()
    cluster["spec"]["topology"]["version"] = "v1.29.0"
    await env.apply(cluster)
    await env.wait_condition("ClusterUpgrading")
    await change_template_and_reconcile(
        env,
        "DockerMachinePoolTemplate",
        lambda t: t["spec"]["template"]["spec"]["template"].update(customImage="img:2"),
    )
    after = await referenced(env, "mp-0", "infrastructure")
    assert after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]


@pytest.mark.parametrize(
    ("which", "kind", "api_version"),
    [("infrastructure", "GenericInfrastructureMachinePoolTemplate", GENERIC_INFRA)],
)
async def test_a_changed_kind_of_machine_pool_object_fails_the_reconcile(
    env: Env, which: str, kind: str, api_version: str
) -> None:
    """A MachinePool's infrastructure pool is strictly compatible: same name, group, kind and namespace (spec §0).
    Its bootstrap config is rotated, so a new kind is a new config (``tests/unit/test_changes.py``)."""
    await install_generic_kinds(env.direct)
    await env.apply_example()
    await env.wait_reconciled()
    current = await referenced(env, "mp-0", which)
    await env.apply(
        {"apiVersion": api_version, "kind": kind, "metadata": {"name": "generic"}, "spec": {"template": {"spec": {}}}}
    )
    cluster_class = class_objects()[("ClusterClass", "pools")]
    cluster_class["spec"]["workers"]["machinePools"][0]["template"][which]["ref"] = {
        "apiVersion": api_version,
        "kind": kind,
        "name": "generic",
    }
    await env.apply(cluster_class)
    condition = await env.wait_condition("TopologyReconcileFailed")
    assert condition["message"].startswith("error reconciling the Cluster topology: failed to reconcile MachinePool/")
    group_kind = f"{current['kind']}.{current['apiVersion'].split('/')[0]}"
    assert (
        f"apiVersion.kind of {group_kind}/{name_of(current)} cannot be changed "
        f'from "{current["kind"]}" to "{kind.removesuffix("Template")}"'
    ) in condition["message"]
    assert name_of(await referenced(env, "mp-0", which)) == name_of(current)


async def test_create_update_and_delete_in_one_reconcile(env: Env) -> None:
    await env.apply_example()
    await env.wait_reconciled()
    pools = await env.machine_pools()
    cluster = example_cluster()
    entries = cluster["spec"]["topology"]["workers"]["machinePools"]
    entries[0]["replicas"] = 5
    cluster["spec"]["topology"]["workers"]["machinePools"] = [
        entries[0],
        {"class": "pool", "name": "mp-2", "replicas": 2},
    ]
    await env.apply(cluster)

    async def done() -> bool:
        now = await env.machine_pools()
        return sorted(now) == ["mp-0", "mp-2"] and now["mp-0"]["spec"]["replicas"] == 5

    await eventually(done, what="mp-1 deleted, mp-0 updated and mp-2 created")
    now = await env.machine_pools()
    assert name_of(now["mp-0"]) == name_of(pools["mp-0"])
    await env.wait_reconciled()


async def test_template_metadata_is_enforced(env: Env) -> None:
    """Upstream's "Enforce template metadata": a label the topology sets, removed by a user, comes back."""
    await env.apply_example()
    await env.wait_reconciled()
    pool = (await env.machine_pools())["mp-0"]
    labels = dict(pool["spec"]["template"]["metadata"]["labels"])
    edited = {k: v for k, v in labels.items() if k != c.LABEL_CLUSTER_NAME}
    await env.direct.patch(
        "cluster.x-k8s.io/v1beta1",
        "MachinePool",
        name_of(pool),
        {"spec": {"template": {"metadata": {"labels": {c.LABEL_CLUSTER_NAME: None, "foo": "bar"}}}}},
        namespace=env.namespace,
    )
    assert edited

    async def enforced() -> bool:
        template_labels = (await env.machine_pools())["mp-0"]["spec"]["template"]["metadata"]["labels"]
        return template_labels.get(c.LABEL_CLUSTER_NAME) == "demo" and template_labels.get("foo") == "bar"

    await eventually(enforced, what="the label to be put back (and the user's own to stay)")


# --- TestReconcileReferencedObjectSequences, on both MachinePool objects ----------------------------------------

TEMPLATES = {
    "bootstrap": ("KubeadmConfigTemplate", ("spec", "template", "spec"), ()),
    "infrastructure": ("DockerMachinePoolTemplate", ("spec", "template", "spec"), ("template",)),
}
BOTH = pytest.mark.parametrize("which", ["bootstrap", "infrastructure"])


def _at(obj: Obj, path: tuple[str, ...]) -> Any:
    for step in path:
        obj = obj.setdefault(step, {})
    return obj


def template_spec_change(which: str, change: Callable[[Obj], None]) -> Callable[[Obj], None]:
    """A change to what becomes the object's ``spec`` (the template's ``spec.template.spec``)."""
    _, path, inner = TEMPLATES[which]
    return lambda template: change(_at(template, (*path, *inner)))


def object_spec(obj: Obj, which: str) -> Obj:
    return _at(obj, ("spec", *TEMPLATES[which][2]))


#: per object: a nested field set then dropped from the class; a field the topology owns, and the value a user
#: changes it to
FIELDS: dict[str, dict[str, Any]] = {
    "bootstrap": {
        "nested": ({"ntp": {"servers": ["pool.ntp.org"], "enabled": True}}, {"ntp": {"servers": ["pool.ntp.org"]}}),
        "owned": ("format", "cloud-config", "ignition"),
    },
    "infrastructure": {
        "nested": ({"customImage": "img:1", "preLoadImages": ["a"]}, {"preLoadImages": ["a"]}),
        "owned": ("customImage", "img:topology", "img:user"),
    },
}


@BOTH
async def test_a_nested_field_dropped_from_the_class_is_dropped(env: Env, which: str) -> None:
    await env.apply_example()
    await env.wait_reconciled()
    kind = TEMPLATES[which][0]
    before, after = FIELDS[which]["nested"]
    await change_template_and_reconcile(env, kind, template_spec_change(which, lambda s: s.update(before)))
    spec = object_spec(await referenced(env, "mp-0", which), which)
    assert {k: spec.get(k) for k in before} == before
    await change_template_and_reconcile(
        env, kind, template_spec_change(which, lambda s: ([s.pop(k, None) for k in before], s.update(after)))
    )
    spec = object_spec(await referenced(env, "mp-0", which), which)
    assert {k: spec.get(k) for k in before if k in after or k in spec} == after


@BOTH
async def test_a_label_with_dots_dropped_from_the_class_is_dropped(env: Env, which: str) -> None:
    await env.apply_example()
    await env.wait_reconciled()
    kind = TEMPLATES[which][0]

    def labels(value: dict[str, str] | None) -> Callable[[Obj], None]:
        def change(template: Obj) -> None:
            # (no empty maps in an apply: kube-apiserver would turn a map whose fields all go into null)
            if value is None:
                template["spec"]["template"].pop("metadata", None)
            else:
                template["spec"]["template"]["metadata"] = {"labels": value}

        return change

    await change_template_and_reconcile(env, kind, labels({"example.com/owner.team": "storage"}))
    assert (await referenced(env, "mp-0", which))["metadata"]["labels"]["example.com/owner.team"] == "storage"
    await change_template_and_reconcile(env, kind, labels(None))
    assert "example.com/owner.team" not in (await referenced(env, "mp-0", which))["metadata"]["labels"]


@BOTH
async def test_a_field_the_topology_owns_is_enforced_after_a_user_changes_it(env: Env, which: str) -> None:
    await env.apply_example()
    await env.wait_reconciled()
    kind = TEMPLATES[which][0]
    field, ours, theirs = FIELDS[which]["owned"]
    await change_template_and_reconcile(env, kind, template_spec_change(which, lambda s: s.update({field: ours})))
    obj = await referenced(env, "mp-0", which)
    assert object_spec(obj, which)[field] == ours
    inner = TEMPLATES[which][2]
    await env.direct.patch(
        obj["apiVersion"], obj["kind"], name_of(obj), _nest(inner, {field: theirs}), namespace=env.namespace
    )

    async def enforced() -> bool:
        await env.reconcile()
        return bool(object_spec(await referenced(env, "mp-0", which), which)[field] == ours)

    await eventually(enforced, what="the topology's value to come back")


#: (shared, topology only, other manager only) fields of the object's spec, as paths inside ``spec``
KEPT_FIELDS: dict[str, tuple[tuple[tuple[str, ...], Any], ...]] = {
    "bootstrap": (
        (("preKubeadmCommands",), ["echo both"]),
        (("postKubeadmCommands",), ["echo topology"]),
        (("verbosity",), 5),
    ),
    "infrastructure": (
        (("template", "customImage"), "img:both"),
        (("template", "extraMounts"), [{"containerPath": "/x", "hostPath": "/y"}]),
        (("providerIDList",), ["docker:////theirs"]),
    ),
}


def _put(spec: Obj, path: tuple[str, ...], value: Any) -> None:
    _at(spec, path[:-1])[path[-1]] = value


def _get(spec: Obj, path: tuple[str, ...]) -> Any:
    return dig(spec, *path)


@pytest.mark.parametrize("which", ["infrastructure"])
async def test_fields_another_manager_set_are_kept(env: Env, which: str) -> None:
    """A field only another manager set stays; one the class stops setting goes only if the topology alone owned it.
    (A bootstrap config is rotated on a spec change: its successor carries only what the topology sets.)"""
    await env.apply_example()
    await env.wait_reconciled()
    kind = TEMPLATES[which][0]
    (shared, shared_value), (mine, mine_value), (theirs, theirs_value) = KEPT_FIELDS[which]

    def class_sets(both: bool) -> Callable[[Obj], None]:
        def change(template: Obj) -> None:
            spec = _at(template, TEMPLATES[which][1])  # what becomes the object's spec
            if both:
                _put(spec, shared, shared_value)
                _put(spec, mine, mine_value)

        return change

    await change_template_and_reconcile(env, kind, class_sets(True))
    obj = await referenced(env, "mp-0", which)
    other: Obj = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "metadata": {"name": name_of(obj), "namespace": env.namespace},
        "spec": {},
    }
    _put(other["spec"], shared, shared_value)
    _put(other["spec"], theirs, theirs_value)
    await env.direct.apply(other, field_manager="someone-else")
    await change_template_and_reconcile(env, kind, class_sets(False))
    spec = (await referenced(env, "mp-0", which))["spec"]
    assert _get(spec, theirs) == theirs_value  # never ours
    assert _get(spec, shared) == shared_value  # the other manager still owns it
    assert _get(spec, mine) is None  # only the topology owned it


def _nest(path: tuple[str, ...], fields: Obj) -> Obj:
    inner: Obj = dict(fields)
    for step in reversed(path):
        inner = {step: inner}
    return {"spec": inner}


async def test_cluster_class_changes_reach_both_kinds_of_worker(env: Env) -> None:
    """A MachineDeployment rotates its templates; a MachinePool's objects change in place (spec §0)."""
    await env.apply_example()
    await env.wait_reconciled()
    md = (await env.machine_deployments())["md-0"]
    old_template = md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"]
    await change_template_and_reconcile(
        env, "KubeadmConfigTemplate", lambda t: t["spec"]["template"]["spec"].update(preKubeadmCommands=["x"])
    )
    md = (await env.machine_deployments())["md-0"]
    new_template = md["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"]
    assert new_template != old_template
    # no MachineSet uses the old template: it is deleted at once
    assert {name_of(t) for t in await env.list(BOOTSTRAP, "KubeadmConfigTemplate")} == {
        "pools-worker-bootstrap",
        new_template,
    }
    events = [e["message"] for e in await env.list("v1", "Event")]
    assert (
        f'Created "KubeadmConfigTemplate/{new_template}" as a replacement for "{old_template}" (template rotation)'
        in events
    )
    assert dig(await referenced(env, "mp-0", "bootstrap"), "spec", "preKubeadmCommands") == ["x"]


# --- MachineDeployment templates: deleted once nothing uses them ----------------------------------------------------


async def test_rotated_templates_stay_while_a_machine_set_uses_them(env: Env) -> None:
    await env.apply_example()
    await env.wait_reconciled()
    md = (await env.machine_deployments())["md-0"]
    old = md["spec"]["template"]["spec"]["infrastructureRef"]["name"]
    labels = {c.LABEL_TOPOLOGY_OWNED: "", c.LABEL_CLUSTER_NAME: "demo", c.LABEL_MACHINE_DEPLOYMENT_NAME: name_of(md)}
    machine_set = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineSet",
        "metadata": {"name": f"{name_of(md)}-ms1", "labels": labels},
        "spec": {"clusterName": "demo", "selector": {"matchLabels": labels}, "template": md["spec"]["template"]},
    }
    await env.apply(machine_set)

    async def has_finalizer() -> bool:
        found = await env.get("cluster.x-k8s.io/v1beta1", "MachineSet", f"{name_of(md)}-ms1")
        return "machineset.topology.cluster.x-k8s.io" in (found["metadata"].get("finalizers") or [])

    await eventually(has_finalizer, what="the MachineSet helper to add its finalizer")
    await change_template_and_reconcile(
        env, "DockerMachineTemplate", lambda t: t["spec"]["template"]["spec"].update(customImage="img:2")
    )
    md = (await env.machine_deployments())["md-0"]
    assert md["spec"]["template"]["spec"]["infrastructureRef"]["name"] != old
    templates = {name_of(t) for t in await env.list(INFRA, "DockerMachineTemplate")}
    assert old in templates  # the old MachineSet still uses it

    await env.direct.delete("cluster.x-k8s.io/v1beta1", "MachineSet", f"{name_of(md)}-ms1", namespace=env.namespace)

    async def old_template_gone() -> bool:
        return old not in {name_of(t) for t in await env.list(INFRA, "DockerMachineTemplate")}

    await eventually(old_template_gone, what="the old template to go with its last MachineSet")

    async def machine_set_gone() -> bool:
        return await env.list("cluster.x-k8s.io/v1beta1", "MachineSet") == []

    await eventually(machine_set_gone, what="the helper to release the MachineSet")

    # the MachineDeployment removed from the topology takes its templates with it
    current = {name_of(t) for t in await env.list(INFRA, "DockerMachineTemplate")}
    cluster = example_cluster()
    cluster["spec"]["topology"]["workers"]["machineDeployments"] = []
    await env.apply(cluster)

    async def deployment_gone() -> bool:
        return await env.machine_deployments() == {}

    await eventually(deployment_gone, what="the MachineDeployment to be deleted (its finalizer removed)")
    left = {name_of(t) for t in await env.list(INFRA, "DockerMachineTemplate")}
    assert md["spec"]["template"]["spec"]["infrastructureRef"]["name"] not in left
    assert left < current


async def test_the_provider_s_control_plane_endpoint_is_never_clobbered(env: Env) -> None:
    """Upstream's ignore paths: an empty desired endpoint leaves the one the provider wrote."""
    await env.apply_example()
    cluster = await env.wait_reconciled()
    ref = cluster["spec"]["infrastructureRef"]
    await env.direct.patch(
        ref["apiVersion"],
        ref["kind"],
        ref["name"],
        {"spec": {"controlPlaneEndpoint": {"host": "10.0.0.1", "port": 6443}}},
        namespace=env.namespace,
    )
    await env.reconcile(times=2)
    infra = await env.get(ref["apiVersion"], ref["kind"], ref["name"])
    assert infra["spec"]["controlPlaneEndpoint"] == {"host": "10.0.0.1", "port": 6443}
