"""Desired MachinePools and MachineDeployments (spec §2.5, §2.6, §2.8, Appendix A1–A8)."""

from __future__ import annotations

import re
from typing import Any

import builders as b
import pytest
from unit_support import CLASS, World, compute, existing_worker, topology_workers

from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WORKER_KINDS, WorkerKind
from clusterclass.errors import ObjectKey, TopologyError
from clusterclass.topology.desired import DesiredWorker

KINDS = pytest.mark.parametrize("kind", WORKER_KINDS, ids=lambda k: k.kind)
RANDOM = "[bcdfghjklmnpqrstvwxz2456789]{5}"
ABSENT = object()
CLUSTER_OWNER = {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "Cluster", "name": "cluster1", "uid": "cluster1-uid"}
TOPOLOGY_NAME = "big-pool-of-machines"


def lookup(obj: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if not isinstance(obj, dict) or step not in obj:
            return ABSENT
        obj = obj[step]
    return obj


def desired(
    kind: WorkerKind,
    world: World | None = None,
    existing: list[dict[str, Any]] | None = None,
    *,
    seed: int = 0,
    cluster_name: str = "cluster1",
    topology_name: str = TOPOLOGY_NAME,
    **topology_fields: Any,
) -> DesiredWorker:
    """The desired worker for one topology entry of ``kind`` using the world's class."""
    world = world or World()
    entry = b.worker_topology(CLASS[kind.kind], topology_name, **topology_fields)
    cluster = b.cluster(cluster_name, **topology_workers(kind, entry))
    computation = compute(cluster, [*world.objects(), *(existing or [])], seed=seed)
    return computation.desired.workers(kind)[topology_name]


def world_with_class(kind: WorkerKind, **class_fields: Any) -> World:
    return World(**{"mp_class_fields" if kind is MACHINE_POOL else "md_class_fields": class_fields})


# --- metadata --------------------------------------------------------------------------------------------


@KINDS
def test_labels_are_topology_over_class_plus_the_enforced_labels_on_object_and_template(kind: WorkerKind) -> None:
    world = world_with_class(kind, labels={"shared": "class", "classOnly": "c"})
    worker = desired(kind, world, labels={"shared": "topology", "topologyOnly": "t"}).object
    expected = {
        "shared": "topology",
        "classOnly": "c",
        "topologyOnly": "t",
        b.CLUSTER_NAME: "cluster1",
        b.OWNED: "",
        kind.name_label: TOPOLOGY_NAME,
    }
    assert worker["metadata"]["labels"] == expected
    assert worker["spec"]["template"]["metadata"]["labels"] == expected


@pytest.mark.parametrize(
    ("topology_annotations", "class_annotations", "expected"),
    [
        ({"shared": "topology"}, {"shared": "class", "classOnly": "c"}, {"shared": "topology", "classOnly": "c"}),
        ({b.DEFER_UPGRADE: "", b.HOLD_UPGRADE_SEQUENCE: "", "kept": "k"}, None, {"kept": "k"}),
        (None, {b.DEFER_UPGRADE: "", "kept": "k"}, {"kept": "k"}),
        ({b.DEFER_UPGRADE: ""}, None, ABSENT),
        (None, None, ABSENT),
    ],
)
@KINDS
def test_annotations_are_topology_over_class_without_upgrade_sequencing_ones(
    kind: WorkerKind, topology_annotations: Any, class_annotations: Any, expected: Any
) -> None:
    world = world_with_class(kind, annotations=class_annotations)
    worker = desired(kind, world, annotations=topology_annotations).object
    assert lookup(worker, ("metadata", "annotations")) == expected
    assert lookup(worker, ("spec", "template", "metadata", "annotations")) == expected


# --- fields: topology value if set, else class value, else absent ---------------------------------------

MACHINE_SPEC = ("spec", "template", "spec")
ON_DELETE, ROLLING = {"type": "OnDelete"}, {"type": "RollingUpdate"}


@pytest.mark.parametrize(
    ("kind", "field", "topology_value", "class_value", "path", "expected"),
    [
        (MACHINE_POOL, "minReadySeconds", 10, 20, ("spec", "minReadySeconds"), 10),
        (MACHINE_POOL, "minReadySeconds", None, 20, ("spec", "minReadySeconds"), 20),
        (MACHINE_POOL, "minReadySeconds", 0, 20, ("spec", "minReadySeconds"), 0),
        (MACHINE_POOL, "minReadySeconds", None, None, ("spec", "minReadySeconds"), ABSENT),
        (MACHINE_POOL, "failureDomains", ["C"], ["A", "B"], ("spec", "failureDomains"), ["C"]),
        (MACHINE_POOL, "failureDomains", None, ["A", "B"], ("spec", "failureDomains"), ["A", "B"]),
        (MACHINE_POOL, "failureDomains", [], ["A", "B"], ("spec", "failureDomains"), ABSENT),
        (MACHINE_POOL, "failureDomains", None, None, ("spec", "failureDomains"), ABSENT),
        (MACHINE_POOL, "nodeDrainTimeout", "10s", "20s", (*MACHINE_SPEC, "nodeDrainTimeout"), "10s"),
        (MACHINE_POOL, "nodeDrainTimeout", None, "20s", (*MACHINE_SPEC, "nodeDrainTimeout"), "20s"),
        (MACHINE_POOL, "nodeVolumeDetachTimeout", "10s", "20s", (*MACHINE_SPEC, "nodeVolumeDetachTimeout"), "10s"),
        (MACHINE_POOL, "nodeVolumeDetachTimeout", None, "20s", (*MACHINE_SPEC, "nodeVolumeDetachTimeout"), "20s"),
        (MACHINE_POOL, "nodeDeletionTimeout", "10s", "20s", (*MACHINE_SPEC, "nodeDeletionTimeout"), "10s"),
        (MACHINE_POOL, "nodeDeletionTimeout", None, None, (*MACHINE_SPEC, "nodeDeletionTimeout"), ABSENT),
        (MACHINE_DEPLOYMENT, "minReadySeconds", 10, 20, ("spec", "minReadySeconds"), 10),
        (MACHINE_DEPLOYMENT, "minReadySeconds", None, 20, ("spec", "minReadySeconds"), 20),
        (MACHINE_DEPLOYMENT, "failureDomain", "fd-t", "fd-c", (*MACHINE_SPEC, "failureDomain"), "fd-t"),
        (MACHINE_DEPLOYMENT, "failureDomain", None, "fd-c", (*MACHINE_SPEC, "failureDomain"), "fd-c"),
        (MACHINE_DEPLOYMENT, "failureDomain", None, None, (*MACHINE_SPEC, "failureDomain"), ABSENT),
        (MACHINE_DEPLOYMENT, "strategy", ON_DELETE, ROLLING, ("spec", "strategy"), ON_DELETE),
        (MACHINE_DEPLOYMENT, "strategy", None, ROLLING, ("spec", "strategy"), ROLLING),
        (MACHINE_DEPLOYMENT, "strategy", None, None, ("spec", "strategy"), ABSENT),
        (MACHINE_DEPLOYMENT, "nodeDrainTimeout", "10s", "20s", (*MACHINE_SPEC, "nodeDrainTimeout"), "10s"),
        (MACHINE_DEPLOYMENT, "nodeDeletionTimeout", None, "20s", (*MACHINE_SPEC, "nodeDeletionTimeout"), "20s"),
    ],
)  # fmt: skip
def test_overridable_field_takes_topology_then_class_value(
    kind: WorkerKind, field: str, topology_value: Any, class_value: Any, path: tuple[str, ...], expected: Any
) -> None:
    world = world_with_class(kind, **({field: class_value} if class_value is not None else {}))
    topology = {field: topology_value} if topology_value is not None else {}
    assert lookup(desired(kind, world, **topology).object, path) == expected


@KINDS
def test_machine_pool_fields_absent_from_the_other_kind(kind: WorkerKind) -> None:
    worker = desired(kind, world_with_class(kind, failureDomains=["A"], failureDomain="fd"), strategy={"type": "X"})
    if kind is MACHINE_POOL:
        assert lookup(worker.object, ("spec", "strategy")) is ABSENT
        assert lookup(worker.object, ("spec", "selector")) is ABSENT
        assert lookup(worker.object, (*MACHINE_SPEC, "failureDomain")) is ABSENT
    else:
        assert lookup(worker.object, ("spec", "failureDomains")) is ABSENT


@pytest.mark.parametrize(
    ("current_replicas", "topology_replicas", "expected"),
    [
        (None, 5, 5),
        (None, None, ABSENT),
        (3, 5, 5),
        (3, None, ABSENT),
    ],
)
@KINDS
def test_replicas_come_only_from_the_topology(
    kind: WorkerKind, current_replicas: Any, topology_replicas: Any, expected: Any
) -> None:
    world = World()
    existing = existing_worker(kind, world, "existing-1", TOPOLOGY_NAME, replicas=current_replicas)
    topology = {"replicas": topology_replicas} if topology_replicas is not None else {}
    assert lookup(desired(kind, world, existing, **topology).object, ("spec", "replicas")) == expected


@KINDS
def test_worker_spec_basics(kind: WorkerKind) -> None:
    world = World()
    worker = desired(kind, world).object
    machine_spec = worker["spec"]["template"]["spec"]
    assert (worker["apiVersion"], worker["kind"]) == ("cluster.x-k8s.io/v1beta1", kind.kind)
    assert worker["metadata"]["namespace"] == "default"
    assert worker["spec"]["clusterName"] == machine_spec["clusterName"] == "cluster1"
    assert machine_spec["version"] == "v1.2.3"


# --- existing workers keep their names ---------------------------------------------------------------------


@KINDS
def test_existing_worker_keeps_its_name_and_the_names_of_its_references(kind: WorkerKind) -> None:
    world = World()
    existing = existing_worker(kind, world, "existing-pool-1", TOPOLOGY_NAME, replicas=3)
    worker = desired(kind, world, existing, replicas=5, labels={"l": "v"})
    machine_spec = worker.object["spec"]["template"]["spec"]
    assert worker.object["metadata"]["name"] == "existing-pool-1"
    assert (
        machine_spec["bootstrap"]["configRef"]["name"]
        == worker.bootstrap["metadata"]["name"]
        == "existing-pool-1-bootstrap"
    )
    assert (
        machine_spec["infrastructureRef"]["name"]
        == worker.infrastructure["metadata"]["name"]
        == "existing-pool-1-infra"
    )
    assert worker.object["spec"]["replicas"] == 5
    assert worker.object["metadata"]["labels"]["l"] == "v"


@pytest.mark.parametrize(
    ("kind", "ref", "current_kind", "expected_version"),
    [
        (MACHINE_POOL, "bootstrap", "KubeadmConfig", "v1alpha4"),
        (MACHINE_POOL, "infrastructure", "DockerMachinePool", "v1alpha4"),
        (MACHINE_DEPLOYMENT, "bootstrap", "KubeadmConfigTemplate", "v1alpha4"),
        (MACHINE_DEPLOYMENT, "infrastructure", "DockerMachineTemplate", "v1alpha4"),
        (MACHINE_POOL, "bootstrap", "OldKubeadmConfig", "v1beta1"),
        (MACHINE_DEPLOYMENT, "infrastructure", "OldDockerMachineTemplate", "v1beta1"),
    ],
)
def test_ref_keeps_the_current_api_version_while_group_and_kind_are_unchanged(
    kind: WorkerKind, ref: str, current_kind: str, expected_version: str
) -> None:
    world = World()
    existing = existing_worker(kind, world, "existing-pool-1", TOPOLOGY_NAME)
    referenced = existing[1] if ref == "bootstrap" else existing[2]
    group = referenced["apiVersion"].split("/")[0]
    referenced.update(apiVersion=f"{group}/v1alpha4", kind=current_kind)
    machine_spec = existing[0]["spec"]["template"]["spec"]
    if ref == "bootstrap":
        machine_spec["bootstrap"]["configRef"] = b.ref(referenced)
    else:
        machine_spec["infrastructureRef"] = b.ref(referenced)
    worker = desired(kind, world, existing)
    machine_spec = worker.object["spec"]["template"]["spec"]
    desired_ref = machine_spec["bootstrap"]["configRef"] if ref == "bootstrap" else machine_spec["infrastructureRef"]
    desired_object = getattr(worker, ref)
    assert desired_ref["apiVersion"] == f"{group}/{expected_version}"
    assert (desired_ref["kind"], desired_ref["name"]) == (desired_object["kind"], desired_object["metadata"]["name"])
    assert desired_object["apiVersion"] == f"{group}/v1beta1"


@KINDS
def test_unknown_class_is_an_error_on_the_topology_entry(kind: WorkerKind) -> None:
    entry = b.worker_topology("windows-worker", "w0")
    cluster = b.cluster(**topology_workers(kind, b.worker_topology(CLASS[kind.kind], "ok"), entry))
    with pytest.raises(TopologyError) as err:
        compute(cluster, World().objects())
    assert err.value.message == (
        f'failed to compute {kind.kind}s: failed to compute {kind.kind} for topology "w0": '
        f"{kind.kind} class windows-worker not found in default/class1"
    )
    assert err.value.obj == ObjectKey("cluster.x-k8s.io", "Cluster", "default", "cluster1")
    assert err.value.field == f"spec.topology.workers.{kind.list_key}[1].class"


# --- MachinePool bootstrap config and infrastructure machine pool objects ------------------------------------


@pytest.mark.parametrize(
    ("which", "kind", "group_kind"),
    [
        ("bootstrap", "KubeadmConfig", "KubeadmConfigTemplate.bootstrap.cluster.x-k8s.io"),
        ("infrastructure", "DockerMachinePool", "DockerMachinePoolTemplate.infrastructure.cluster.x-k8s.io"),
    ],
)
def test_machine_pool_objects_are_cloned_from_the_template_spec_template(
    which: str, kind: str, group_kind: str
) -> None:
    world = World(
        mp_bootstrap=b.kubeadm_config_template(
            "mp-bootstrap", template_labels={"tpl": "l"}, template_annotations={"tpl": "a"}
        ),
        mp_infrastructure=b.docker_machine_pool_template(
            "mp-infra", template_labels={"tpl": "l"}, template_annotations={"tpl": "a"}
        ),
        mp_class_fields={"labels": {"classLabel": "x"}, "annotations": {"classAnnotation": "x"}},
    )
    source = world.mp_bootstrap if which == "bootstrap" else world.mp_infrastructure
    pool = desired(MACHINE_POOL, world, labels={"topologyLabel": "y"}, annotations={"topologyAnnotation": "y"})
    obj = getattr(pool, which)
    assert (obj["apiVersion"], obj["kind"]) == (source["apiVersion"], kind)
    assert obj["metadata"]["namespace"] == "default"
    assert obj["metadata"]["labels"] == {
        "tpl": "l",
        b.CLUSTER_NAME: "cluster1",
        b.OWNED: "",
        b.POOL_NAME: TOPOLOGY_NAME,
    }
    assert obj["metadata"]["annotations"] == {
        "tpl": "a",
        b.CLONED_FROM_NAME: source["metadata"]["name"],
        b.CLONED_FROM_GROUPKIND: group_kind,
    }
    assert obj["metadata"]["ownerReferences"] == [CLUSTER_OWNER]
    assert obj["spec"] == source["spec"]["template"]["spec"]
    assert re.fullmatch(f"cluster1-{TOPOLOGY_NAME}-{RANDOM}", obj["metadata"]["name"])


@pytest.mark.parametrize(
    ("template_kind", "object_kind"),
    [
        ("GenericBootstrapConfigTemplate", "GenericBootstrapConfig"),
        ("TestBootstrapConfigTemplate", "TestBootstrapConfig"),
    ],
)
def test_machine_pool_object_kind_is_the_template_kind_without_template(template_kind: str, object_kind: str) -> None:
    world = World(mp_bootstrap=b.generic_template(template_kind, "generic", api_version=b.BOOTSTRAP_V1))
    assert desired(MACHINE_POOL, world).bootstrap["kind"] == object_kind


def test_machine_pool_references_point_at_its_objects_not_at_the_templates() -> None:
    pool = desired(MACHINE_POOL)
    machine_spec = pool.object["spec"]["template"]["spec"]
    assert machine_spec["bootstrap"]["configRef"] == {
        "apiVersion": "bootstrap.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmConfig",
        "namespace": "default",
        "name": pool.bootstrap["metadata"]["name"],
    }
    assert machine_spec["infrastructureRef"] == {
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
        "kind": "DockerMachinePool",
        "namespace": "default",
        "name": pool.infrastructure["metadata"]["name"],
    }
    assert machine_spec["bootstrap"]["configRef"]["name"] != "mp-bootstrap"
    assert machine_spec["infrastructureRef"]["name"] != "mp-infra"


def test_machine_pool_has_no_owner_references() -> None:
    pool = desired(MACHINE_POOL, World())
    assert "ownerReferences" not in pool.object["metadata"]
    machine_spec = pool.object["spec"]["template"]["spec"]
    assert "providerIDList" not in pool.object["spec"]
    assert not {"failureDomain", "providerID"} & set(machine_spec)
    assert "dataSecretName" not in machine_spec["bootstrap"]
    assert "status" not in pool.object


# --- MachineDeployment templates, selector and health check ------------------------------------------------


@pytest.mark.parametrize(
    ("which", "kind"),
    [
        ("bootstrap", "KubeadmConfigTemplate"),
        ("infrastructure", "DockerMachineTemplate"),
    ],
)
def test_machine_deployment_templates_are_copies_of_the_class_templates(which: str, kind: str) -> None:
    annotations = {b.LAST_APPLIED: "{}", "kept": "k"}
    world = World(
        md_bootstrap=b.kubeadm_config_template("md-bootstrap", labels={"tpl": "l"}, annotations=annotations),
        md_infrastructure=b.docker_machine_template("md-infra", labels={"tpl": "l"}, annotations=annotations),
    )
    source = world.md_bootstrap if which == "bootstrap" else world.md_infrastructure
    template = getattr(desired(MACHINE_DEPLOYMENT, world), which)
    assert (template["apiVersion"], template["kind"]) == (source["apiVersion"], kind)
    assert template["metadata"]["labels"] == {
        "tpl": "l",
        b.CLUSTER_NAME: "cluster1",
        b.OWNED: "",
        b.DEPLOYMENT_NAME: TOPOLOGY_NAME,
    }
    assert template["metadata"]["annotations"] == {
        "kept": "k",
        b.CLONED_FROM_NAME: source["metadata"]["name"],
        b.CLONED_FROM_GROUPKIND: f"{kind}.{source['apiVersion'].split('/')[0]}",
    }
    assert template["metadata"]["ownerReferences"] == [CLUSTER_OWNER]
    assert template["spec"] == source["spec"]
    assert re.fullmatch(f"cluster1-{TOPOLOGY_NAME}-{RANDOM}", template["metadata"]["name"])


def test_machine_deployment_selector_matches_its_machines() -> None:
    deployment = desired(MACHINE_DEPLOYMENT).object
    assert deployment["spec"]["selector"] == {
        "matchLabels": {b.CLUSTER_NAME: "cluster1", b.OWNED: "", b.DEPLOYMENT_NAME: TOPOLOGY_NAME}
    }


#: what upstream v1.14's MachineHealthCheck webhook defaults (v1.6's also set maxUnhealthy: 100%)
MHC_DEFAULTS = {"nodeStartupTimeout": "10m0s"}


@pytest.mark.parametrize(
    ("class_check", "topology_check", "expected"),
    [
        (None, None, None),
        ({"maxUnhealthy": "40%"}, None, {"maxUnhealthy": "40%", "nodeStartupTimeout": "10m0s"}),
        ({"maxUnhealthy": "40%"}, {"enable": True}, {"maxUnhealthy": "40%", "nodeStartupTimeout": "10m0s"}),
        ({"maxUnhealthy": "40%"}, {"enable": False}, None),
        ({"maxUnhealthy": "40%"}, {"unhealthyRange": "[1-3]"}, {**MHC_DEFAULTS, "unhealthyRange": "[1-3]"}),
        (None, {"nodeStartupTimeout": "5m"}, {"nodeStartupTimeout": "5m0s"}),  # Go form
        (None, {"enable": True}, None),
        (None, {"enable": False, "maxUnhealthy": "40%"}, None),
        ({}, None, MHC_DEFAULTS),
    ],
)
@KINDS
def test_worker_health_check(kind: WorkerKind, class_check: Any, topology_check: Any, expected: Any) -> None:
    """Both kinds the same way: a MachinePool's check is clusterclass's extension of upstream's API (upstream makes
    none for a pool) and selects the pool's Machines by its topology name, as a MachineDeployment's does."""
    world = world_with_class(kind, **({"machineHealthCheck": class_check} if class_check is not None else {}))
    topology = {"machineHealthCheck": topology_check} if topology_check is not None else {}
    worker = desired(kind, world, **topology)
    check = worker.machine_health_check
    if expected is None:
        assert check is None
        return
    assert check is not None
    assert check["metadata"]["name"] == worker.object["metadata"]["name"]
    assert check["metadata"]["ownerReferences"] == [CLUSTER_OWNER]
    assert check["spec"] == {
        "clusterName": "cluster1",
        "selector": {"matchLabels": {b.OWNED: "", kind.name_label: TOPOLOGY_NAME}},
        **expected,
    }
    # the Machines the check selects: the worker's template labels carry the selector
    template_labels = worker.object["spec"]["template"]["metadata"]["labels"]
    assert check["spec"]["selector"]["matchLabels"].items() <= template_labels.items()


# --- names --------------------------------------------------------------------------------------------------


@KINDS
def test_new_worker_names_are_prefix_plus_five_random_characters(kind: WorkerKind) -> None:
    worker = desired(kind)
    for obj in (worker.object, worker.bootstrap, worker.infrastructure):
        assert re.fullmatch(f"cluster1-{TOPOLOGY_NAME}-{RANDOM}", obj["metadata"]["name"])


@KINDS
def test_long_names_keep_58_characters_and_get_5_random_ones(kind: WorkerKind) -> None:
    cluster_name, topology_name = "c" * 40, "t" * 30
    prefix = f"{cluster_name}-{topology_name}-"
    worker = desired(kind, cluster_name=cluster_name, topology_name=topology_name)
    for obj in (worker.object, worker.bootstrap, worker.infrastructure):
        name = obj["metadata"]["name"]
        assert len(name) == 63
        assert name[:58] == prefix[:58]
        assert re.fullmatch(RANDOM, name[58:])


@pytest.mark.parametrize(
    ("kind", "template", "expected"),
    [
        (MACHINE_POOL, "{{ .cluster.name }}-pool-{{ .machinePool.topologyName }}", f"cluster1-pool-{TOPOLOGY_NAME}"),
        (MACHINE_DEPLOYMENT, "{{ .machineDeployment.topologyName }}-md", f"{TOPOLOGY_NAME}-md"),
        (MACHINE_POOL, "{{ .cluster.name }}-{{ .random }}", f"cluster1-{RANDOM}"),
    ],
)
def test_worker_name_follows_the_class_naming_strategy(kind: WorkerKind, template: str, expected: str) -> None:
    world = world_with_class(kind, namingStrategy={"template": template})
    assert re.fullmatch(expected, desired(kind, world).object["metadata"]["name"])


@pytest.mark.parametrize(
    ("kind", "template"),
    [
        (MACHINE_POOL, "{{ .machineDeployment.topologyName }}"),
        (MACHINE_DEPLOYMENT, "{{ .machinePool.topologyName }}"),
    ],
)
def test_naming_strategy_with_an_unknown_key_is_an_error_on_the_class(kind: WorkerKind, template: str) -> None:
    world = world_with_class(kind, namingStrategy={"template": template})
    with pytest.raises(TopologyError) as err:
        desired(kind, world)
    assert f"failed to generate name for {kind.kind}" in err.value.message
    assert err.value.obj == ObjectKey("cluster.x-k8s.io", "ClusterClass", "default", "class1")
    assert err.value.field == f"spec.workers.{kind.list_key}[0].namingStrategy.template"


def test_naming_strategy_still_renders_for_an_existing_worker() -> None:
    world = world_with_class(MACHINE_POOL, namingStrategy={"template": "{{ .nope }}"})
    existing = existing_worker(MACHINE_POOL, world, "existing-pool-1", TOPOLOGY_NAME)
    with pytest.raises(TopologyError, match="failed to generate name for MachinePool"):
        desired(MACHINE_POOL, world, existing)


def _all_generated_names(seed: int) -> list[str]:
    cluster = b.cluster(
        machine_pools=[b.worker_topology("mp-class", "mp-0"), b.worker_topology("mp-class", "mp-1")],
        machine_deployments=[b.worker_topology("md-class", "md-0")],
    )
    state = compute(cluster, World().objects(), seed=seed).desired
    names = [state.infrastructure_cluster["metadata"]["name"], state.control_plane["metadata"]["name"]]
    for worker in [*state.machine_deployments.values(), *state.machine_pools.values()]:
        names += [worker.object["metadata"]["name"], worker.bootstrap["metadata"]["name"]]
        names.append(worker.infrastructure["metadata"]["name"])
    return names


def test_same_seed_same_names() -> None:
    assert _all_generated_names(7) == _all_generated_names(7)
    assert _all_generated_names(7) != _all_generated_names(8)
    assert len(set(_all_generated_names(7))) == len(_all_generated_names(7))


def test_workers_are_computed_in_topology_order() -> None:
    entries = [b.worker_topology("mp-class", name) for name in ("zeta", "alpha", "mid")]
    state = compute(b.cluster(machine_pools=entries), World().objects()).desired
    assert list(state.machine_pools) == ["zeta", "alpha", "mid"]


@KINDS
def test_no_topology_entries_means_no_desired_workers(kind: WorkerKind) -> None:
    world = World()
    existing = existing_worker(kind, world, "existing-pool-1", TOPOLOGY_NAME)
    computation = compute(b.cluster(), [*world.objects(), *existing])
    assert computation.desired.workers(kind) == {}
    assert list(computation.current.workers(kind)) == [TOPOLOGY_NAME]


@pytest.mark.parametrize(
    ("written", "go_form"),
    [("5m", "5m0s"), ("90s", "1m30s"), ("1h", "1h0m0s"), ("1.5h", "1h30m0s"), ("100ms", "100ms"), ("0", "0s")],
)
@KINDS
def test_worker_timeouts_are_written_as_go_formats_durations(kind: WorkerKind, written: str, go_form: str) -> None:
    """Upstream builds the worker from typed values, so every Duration comes out in Go's form."""
    world = world_with_class(kind, nodeDrainTimeout=written)
    worker = desired(kind, world, nodeDeletionTimeout=written)
    assert lookup(worker.object, (*MACHINE_SPEC, "nodeDrainTimeout")) == go_form
    assert lookup(worker.object, (*MACHINE_SPEC, "nodeDeletionTimeout")) == go_form


def test_machine_deployment_health_check_durations_are_written_as_go_formats_them() -> None:
    check = {
        "nodeStartupTimeout": "15m",
        "unhealthyConditions": [{"type": "Ready", "status": "False", "timeout": "300s"}],
    }
    world = world_with_class(MACHINE_DEPLOYMENT, machineHealthCheck=check)
    health_check = desired(MACHINE_DEPLOYMENT, world).machine_health_check
    assert health_check is not None
    assert health_check["spec"]["nodeStartupTimeout"] == "15m0s"
    assert health_check["spec"]["unhealthyConditions"] == [{"type": "Ready", "status": "False", "timeout": "5m0s"}]
