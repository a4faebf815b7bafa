"""Current state: the topology-owned objects that already exist for a Cluster (spec §2.3, §2.7, §10.2)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import builders as b
import pytest
from unit_support import CLASS, World, blueprint_of, existing_worker, index, topology_workers

from clusterclass.api.refs import align_ref
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WORKER_KINDS, WorkerKind
from clusterclass.errors import ObjectKey, TopologyError
from clusterclass.topology.current import get_current_state
from clusterclass.topology.reader import NoNodes, ObjectIndex

KINDS = pytest.mark.parametrize("kind", WORKER_KINDS, ids=lambda k: k.kind)


class RecordingReader:
    """An ObjectIndex that remembers the apiVersion every ``get`` asked for."""

    def __init__(self, objects: ObjectIndex) -> None:
        self.objects = objects
        self.gets: list[tuple[str, str, str]] = []

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> dict[str, Any] | None:
        self.gets.append((api_version, kind, name))
        return self.objects.get(api_version, kind, namespace, name)

    def list(self, api_version: str, kind: str, namespace: str, labels: Mapping[str, str]) -> list[dict[str, Any]]:
        return self.objects.list(api_version, kind, namespace, labels)


def _cluster(kind: WorkerKind, *topology_names: str) -> dict[str, Any]:
    return b.cluster(**topology_workers(kind, *(b.worker_topology(CLASS[kind.kind], n) for n in topology_names)))


def _current(cluster: dict[str, Any], objects: list[dict[str, Any]]) -> Any:
    return get_current_state(cluster, blueprint_of(cluster, objects), index(cluster, objects), NoNodes())


@KINDS
def test_unmanaged_workers_and_workers_of_other_clusters_are_ignored(kind: WorkerKind) -> None:
    world = World()
    unmanaged = existing_worker(kind, world, "unmanaged", "w1")
    del unmanaged[0]["metadata"]["labels"][b.OWNED]
    foreign = existing_worker(kind, world, "foreign", "w1", cluster_name="cluster2")
    cluster = _cluster(kind, "w1")
    assert _current(cluster, [*world.objects(), *unmanaged, *foreign]).workers(kind) == {}


@KINDS
def test_worker_without_topology_name_label_is_an_error(kind: WorkerKind) -> None:
    world = World()
    worker = existing_worker(kind, world, "nameless", "w1")
    del worker[0]["metadata"]["labels"][kind.name_label]
    with pytest.raises(TopologyError) as err:
        _current(_cluster(kind, "w1"), [*world.objects(), *worker])
    assert err.value.message == f"failed to find label {kind.name_label} in {kind.kind}/nameless"
    assert err.value.obj == ObjectKey("cluster.x-k8s.io", kind.kind, "default", "nameless")
    assert err.value.field == f"metadata.labels[{kind.name_label}]"


@KINDS
def test_two_workers_with_the_same_topology_name_are_an_error(kind: WorkerKind) -> None:
    world = World()
    first, second = existing_worker(kind, world, "a", "mp1"), existing_worker(kind, world, "b", "mp1")
    with pytest.raises(TopologyError) as err:
        _current(_cluster(kind, "mp1"), [*world.objects(), *first, *second])
    assert err.value.message == f"duplicate {kind.kind}/b found for label {kind.name_label}: mp1"


@KINDS
def test_full_read_keys_workers_by_topology_name_with_their_bootstrap_and_infrastructure(kind: WorkerKind) -> None:
    world = World()
    worker, bootstrap, infrastructure = existing_worker(kind, world, "mp1-abcde", "mp1")
    state = _current(_cluster(kind, "mp1"), [*world.objects(), worker, bootstrap, infrastructure])
    assert list(state.workers(kind)) == ["mp1"]
    read = state.workers(kind)["mp1"]
    assert (read.object, read.bootstrap, read.infrastructure) == (worker, bootstrap, infrastructure)


def test_full_read_of_a_machine_pool_has_the_bootstrap_config_and_infrastructure_machine_pool_objects() -> None:
    world = World()
    objects = existing_worker(MACHINE_POOL, world, "mp1-abcde", "mp1")
    read = _current(_cluster(MACHINE_POOL, "mp1"), [*world.objects(), *objects]).machine_pools["mp1"]
    assert (read.bootstrap["kind"], read.infrastructure["kind"]) == ("KubeadmConfig", "DockerMachinePool")
    assert read.machine_health_check is None


def test_full_read_of_a_cluster_has_infrastructure_cluster_and_control_plane() -> None:
    world = World(machine_infrastructure=b.docker_machine_template("cp-machines"))
    infra = b.cloned_object(world.infrastructure_cluster, "cluster1-infra")
    machines = b.cloned_object(world.machine_infrastructure, "cluster1-cp-machines", as_template=True)
    cp = b.control_plane(machine_template_ref=machines)
    check = b.obj(b.CLUSTER_V1, "MachineHealthCheck", "cluster1-cp")
    cluster = b.cluster(infrastructure_ref=infra, control_plane_ref=cp)
    state = _current(cluster, [*world.objects(), infra, machines, cp, check])
    assert state.infrastructure_cluster == infra
    assert state.control_plane == cp
    assert state.control_plane_infrastructure_machine_template == machines
    assert state.control_plane_machine_health_check == check


@KINDS
def test_worker_whose_topology_entry_was_removed_is_still_read_with_unaligned_refs(kind: WorkerKind) -> None:
    world = World()
    worker, bootstrap, infrastructure = existing_worker(kind, world, "mp2-abcde", "mp2")
    old_version = "bootstrap.cluster.x-k8s.io/v1alpha4"
    worker["spec"]["template"]["spec"]["bootstrap"]["configRef"]["apiVersion"] = old_version
    cluster = _cluster(kind)  # no topology entry for mp2
    objects = [*world.objects(), worker, bootstrap, infrastructure]
    reader = RecordingReader(index(cluster, objects))
    state = get_current_state(cluster, blueprint_of(cluster, objects), reader, NoNodes())
    assert list(state.workers(kind)) == ["mp2"]
    assert (old_version, bootstrap["kind"], "mp2-abcde-bootstrap") in reader.gets


@KINDS
def test_refs_of_a_worker_in_the_topology_are_read_in_the_class_templates_version(kind: WorkerKind) -> None:
    """A MachineDeployment's bootstrap ref names the class's template kind, a MachinePool's the kind that template
    stamps out (KubeadmConfig for KubeadmConfigTemplate); either is read in the template's version, as v1.14 reads
    every reference in the version its contract names, so current and desired compare in one version."""
    world = World()
    worker, bootstrap, infrastructure = existing_worker(kind, world, "mp1-abcde", "mp1")
    worker["spec"]["template"]["spec"]["bootstrap"]["configRef"]["apiVersion"] = "bootstrap.cluster.x-k8s.io/v1alpha4"
    cluster = _cluster(kind, "mp1")
    objects = [*world.objects(), worker, bootstrap, infrastructure]
    reader = RecordingReader(index(cluster, objects))
    get_current_state(cluster, blueprint_of(cluster, objects), reader, NoNodes())
    assert ("bootstrap.cluster.x-k8s.io/v1beta1", bootstrap["kind"], "mp1-abcde-bootstrap") in reader.gets


@KINDS
def test_worker_without_bootstrap_config_ref_is_an_error(kind: WorkerKind) -> None:
    world = World()
    worker, _, infrastructure = existing_worker(kind, world, "mp1-abcde", "mp1")
    del worker["spec"]["template"]["spec"]["bootstrap"]["configRef"]
    with pytest.raises(TopologyError) as err:
        _current(_cluster(kind, "mp1"), [*world.objects(), worker, infrastructure])
    assert err.value.message == f"{kind.kind}/mp1-abcde does not have a reference to a Bootstrap Config"
    assert err.value.field == "spec.template.spec.bootstrap.configRef"


@pytest.mark.parametrize(
    ("kind", "noun"),
    [
        (MACHINE_POOL, "InfrastructureMachinePool"),
        (MACHINE_DEPLOYMENT, "InfrastructureMachineTemplate"),
    ],
)
def test_worker_with_an_empty_infrastructure_ref_name_is_an_error(kind: WorkerKind, noun: str) -> None:
    world = World()
    worker, bootstrap, _ = existing_worker(kind, world, "mp1-abcde", "mp1")
    worker["spec"]["template"]["spec"]["infrastructureRef"]["name"] = ""
    with pytest.raises(TopologyError) as err:
        _current(_cluster(kind, "mp1"), [*world.objects(), worker, bootstrap])
    assert err.value.message == f"{kind.kind}/mp1-abcde does not have a reference to a {noun}"
    assert err.value.field == "spec.template.spec.infrastructureRef"


@pytest.mark.parametrize(
    ("kind", "unowned", "what"),
    [
        (MACHINE_POOL, 1, "bootstrap object referenced from MachinePool/mp1-abcde"),
        (MACHINE_POOL, 2, "infrastructure object referenced from MachinePool/mp1-abcde"),
        (MACHINE_DEPLOYMENT, 1, "bootstrap template referenced from MachineDeployment/mp1-abcde"),
        (MACHINE_DEPLOYMENT, 2, "infrastructure template referenced from MachineDeployment/mp1-abcde"),
    ],
)
def test_referenced_objects_must_be_topology_owned(kind: WorkerKind, unowned: int, what: str) -> None:
    world = World()
    objects = existing_worker(kind, world, "mp1-abcde", "mp1")
    del objects[unowned]["metadata"]["labels"][b.OWNED]
    with pytest.raises(TopologyError) as err:
        _current(_cluster(kind, "mp1"), [*world.objects(), *objects])
    assert "is not topology owned" in err.value.message
    assert what in err.value.message
    assert err.value.field == f"metadata.labels[{b.OWNED}]"


@KINDS
def test_worker_whose_topology_names_an_unknown_class_is_an_error(kind: WorkerKind) -> None:
    world = World()
    objects = existing_worker(kind, world, "mp1-abcde", "mp1")
    cluster = b.cluster(**topology_workers(kind, b.worker_topology("no-such-class", "mp1")))
    with pytest.raises(TopologyError) as err:
        _current(cluster, [*world.objects(), *objects])
    assert err.value.message == f"failed to find {kind.kind} class no-such-class in ClusterClass"


@pytest.mark.parametrize(
    ("where", "missing"),
    [
        ("infrastructure_ref", "infrastructure cluster"),
        ("control_plane_ref", "control plane"),
    ],
)
def test_cluster_level_objects_must_be_topology_owned(where: str, missing: str) -> None:
    world = World()
    infra = b.cloned_object(world.infrastructure_cluster, "cluster1-infra")
    cp = b.control_plane()
    target = infra if where == "infrastructure_ref" else cp
    del target["metadata"]["labels"][b.OWNED]
    cluster = b.cluster(infrastructure_ref=infra, control_plane_ref=cp)
    with pytest.raises(TopologyError, match="is not topology owned"):
        _current(cluster, [*world.objects(), infra, cp])


def test_machine_deployment_state_has_its_health_check_and_machines() -> None:
    world = World()
    objects = existing_worker(MACHINE_DEPLOYMENT, world, "md1-abcde", "md1")
    selector = objects[0]["spec"]["selector"]["matchLabels"]
    machines = [b.machine("m1", version="v1.2.2", labels=selector), b.machine("m2", version="v1.2.2", labels={})]
    check = b.obj(b.CLUSTER_V1, "MachineHealthCheck", "md1-abcde")
    state = _current(_cluster(MACHINE_DEPLOYMENT, "md1"), [*world.objects(), *objects, *machines, check])
    read = state.machine_deployments["md1"]
    assert read.machine_health_check == check
    assert [m["metadata"]["name"] for m in read.machines] == ["m1"]


# --- apiVersion alignment (spec §2.7) ------------------------------------------------------------------

TEMPLATE = {"apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2", "kind": "DockerMachinePool"}


@pytest.mark.parametrize(
    ("ref_api_version", "ref_kind", "expected"),
    [
        ("infrastructure.cluster.x-k8s.io/v1beta1", "DockerMachinePool", "infrastructure.cluster.x-k8s.io/v1beta2"),
        ("infrastructure.cluster.x-k8s.io/v1beta1", "OtherMachinePool", "infrastructure.cluster.x-k8s.io/v1beta1"),
        ("other.example.com/v1beta1", "DockerMachinePool", "other.example.com/v1beta1"),
    ],
)
def test_align_ref_takes_the_template_api_version_only_for_the_same_group_and_kind(
    ref_api_version: str, ref_kind: str, expected: str
) -> None:
    ref = {"apiVersion": ref_api_version, "kind": ref_kind, "name": "x", "namespace": "default"}
    aligned = align_ref(ref, TEMPLATE)
    assert aligned == {**ref, "apiVersion": expected}


@pytest.mark.parametrize("bad", ["", "a/b/c", "/v1"])
def test_align_ref_rejects_an_invalid_api_version(bad: str) -> None:
    with pytest.raises(TopologyError, match="invalid apiVersion"):
        align_ref({"apiVersion": bad, "kind": "DockerMachinePool", "name": "x"}, TEMPLATE)


@KINDS
def test_worker_ref_with_an_invalid_api_version_is_a_topology_error(kind: WorkerKind) -> None:
    world = World()
    objects = existing_worker(kind, world, "mp1-abcde", "mp1")
    objects[0]["spec"]["template"]["spec"]["infrastructureRef"]["apiVersion"] = "not/a/version"
    with pytest.raises(TopologyError, match="invalid apiVersion"):
        _current(_cluster(kind, "mp1"), [*world.objects(), *objects])


def test_cluster_ref_with_an_invalid_api_version_is_a_topology_error() -> None:
    world = World()
    cluster = b.cluster(control_plane_ref={"apiVersion": "", "kind": "KubeadmControlPlane", "name": "cp"})
    with pytest.raises(TopologyError, match="invalid apiVersion"):
        _current(cluster, world.objects())


@pytest.mark.parametrize(
    ("missing", "field"),
    [
        (1, "spec.template.spec.bootstrap.configRef"),
        (2, "spec.template.spec.infrastructureRef"),
    ],
)
@KINDS
def test_missing_referenced_object_is_reported_on_the_worker_ref(kind: WorkerKind, missing: int, field: str) -> None:
    world = World()
    objects = existing_worker(kind, world, "mp1-abcde", "mp1")
    del objects[missing]
    with pytest.raises(TopologyError) as err:
        _current(_cluster(kind, "mp1"), [*world.objects(), *objects])
    assert err.value.message.endswith("not found")
    assert (err.value.obj, err.value.field) == (ObjectKey("cluster.x-k8s.io", kind.kind, "default", "mp1-abcde"), field)
