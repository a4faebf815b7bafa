"""Reading a Cluster's objects through the Client: what is read, what is skipped, what fails."""

from __future__ import annotations

from typing import Any

import pytest
from describe_builders import NOW, docker_machine, false, kubeadm_config, machine, sample_cluster
from describe_store import write_objects
from describe_tables import names, text

from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.describe import ClusterObjects, TreeOptions, build_tree, collect, render_table
from clusterclass.describe.collect import ClusterApiNotServed
from clusterclass.kube.client import ObjectList, Resource
from clusterclass.kube.errors import ApiError, NotFound


class Recording:
    """A Client that forwards to ``inner`` and records every get and list as (verb, kind, name)."""

    def __init__(self, inner: Any, *, not_served: frozenset[str] = frozenset(), failing: str = "") -> None:
        self.inner = inner
        self.calls: list[tuple[str, str, str]] = []
        self.not_served = not_served
        self.failing = failing

    async def resource(self, api_version: str, kind: str) -> Resource:
        if kind in self.not_served:
            raise NotFound.new("the server could not find the requested resource")
        result: Resource = await self.inner.resource(api_version, kind)
        return result

    async def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Any:
        self.calls.append(("get", kind, name))
        await self.resource(api_version, kind)
        if kind == self.failing:
            raise ApiError.new("etcdserver: request timed out")
        return await self.inner.get(api_version, kind, name, namespace=namespace)

    async def list(self, api_version: str, kind: str, **options: Any) -> ObjectList:
        self.calls.append(("list", kind, ""))
        await self.resource(api_version, kind)
        result: ObjectList = await self.inner.list(api_version, kind, **options)
        return result


@pytest.fixture
def client() -> MemoryClient:
    return MemoryClient(MemoryStore())


async def test_what_is_collected_prints_as_the_objects_themselves(client: MemoryClient) -> None:
    cluster, objects = sample_cluster(rollout=True)
    stored_cluster, *stored = await write_objects(client, [cluster, *objects])
    for options in (TreeOptions(), TreeOptions(echo=True, show_templates=True, show_machinesets=True)):
        collected = await collect(client, namespace="default", name="c1", options=options)
        online = render_table(build_tree(collected, options), now=NOW).plain
        offline = render_table(build_tree(ClusterObjects.of(stored_cluster, stored), options), now=NOW).plain
        assert online == offline
    assert text(stored_cluster, stored) == text(cluster, objects)


async def test_machines_merged_into_a_group_cost_no_request(client: MemoryClient) -> None:
    cluster, objects = sample_cluster()
    await write_objects(client, [cluster, *objects])
    recording = Recording(client)
    await collect(recording, namespace="default", name="c1")  # type: ignore[arg-type]
    assert sorted(recording.calls) == [
        ("get", "Cluster", "c1"),
        ("get", "DockerCluster", "c1-x7k2p"),
        ("get", "DockerMachine", "c1-4bq9d-2bz8q"),
        ("get", "DockerMachinePool", "c1-mp-0-rhx9v"),
        ("get", "KubeadmConfig", "c1-4bq9d-2bz8q"),
        ("get", "KubeadmConfig", "c1-mp-0-config-zcq4t"),
        ("get", "KubeadmControlPlane", "c1-4bq9d"),
        ("list", "Machine", ""),
        ("list", "MachineDeployment", ""),
        ("list", "MachinePool", ""),
        ("list", "MachineSet", ""),
    ]


async def test_templates_are_read_only_when_shown(client: MemoryClient) -> None:
    cluster, objects = sample_cluster()
    await write_objects(client, [cluster, *objects])
    recording = Recording(client)
    await collect(recording, namespace="default", name="c1", options=TreeOptions(show_templates=True))  # type: ignore[arg-type]
    templates = sorted(call for call in recording.calls if call[1].endswith("Template"))
    assert templates == [
        ("get", "DockerMachineTemplate", "c1-control-plane-8n2ds"),
        ("get", "DockerMachineTemplate", "c1-md-0-infra-vb7qz"),
        ("get", "KubeadmConfigTemplate", "c1-md-0-bootstrap-9xk2f"),
    ]


async def test_references_to_missing_objects_and_unserved_kinds_are_left_out(client: MemoryClient) -> None:
    cluster, objects = sample_cluster()
    kcp = next(o for o in objects if o["kind"] == "KubeadmControlPlane")
    missing = machine(
        "c1-4bq9d-zzzzz",
        kcp,
        [false("Ready", 30, "WaitingForInfrastructure")],
        infrastructure=docker_machine("never-written", []),
        bootstrap=kubeadm_config("never-either", []),
        control_plane=True,
    )
    unserved = machine("c1-4bq9d-yyyyy", kcp, [false("Ready", 20, "Odd", "Warning")], control_plane=True)
    # a kind nothing serves (in the core group: a Cluster API kind without a CRD has no version to be read back at)
    unserved["spec"]["infrastructureRef"] = {
        "apiVersion": "v1",
        "kind": "FooMachine",
        "name": "c1-4bq9d-yyyyy",
        "namespace": "default",
    }
    objects = [o for o in objects if o["kind"] != "DockerCluster"] + [missing, unserved]
    await write_objects(client, [cluster, *objects])
    collected = await collect(client, namespace="default", name="c1", options=TreeOptions(echo=True))
    printed = render_table(build_tree(collected, TreeOptions(echo=True)), now=NOW).plain
    assert names(printed)[:8] == [
        "Cluster/c1",
        "├─ControlPlane - KubeadmControlPlane/c1-4bq9d",
        "│ ├─Machine/c1-4bq9d-2bz8q",
        "│ │ ├─BootstrapConfig - KubeadmConfig/c1-4bq9d-2bz8q",
        "│ │ └─MachineInfrastructure - DockerMachine/c1-4bq9d-2bz8q",
        "│ ├─Machine/c1-4bq9d-yyyyy",
        "│ └─Machine/c1-4bq9d-zzzzz",
        "└─Workers",
    ]


async def test_a_kind_the_server_does_not_serve_lists_as_empty(client: MemoryClient) -> None:
    cluster, objects = sample_cluster()
    await write_objects(client, [cluster, *objects])
    recording = Recording(client, not_served=frozenset({"MachinePool", "KubeadmControlPlane"}))
    collected = await collect(recording, namespace="default", name="c1")  # type: ignore[arg-type]
    assert collected.machine_pools == []
    printed = render_table(build_tree(collected), now=NOW).plain
    assert "MachinePool" not in printed and "ControlPlane" not in printed
    assert "Other" in printed  # the control-plane and MachinePool Machines belong nowhere now


async def test_other_api_errors_are_raised(client: MemoryClient) -> None:
    cluster, objects = sample_cluster()
    await write_objects(client, [cluster, *objects])
    with pytest.raises(ApiError, match="request timed out"):
        await collect(Recording(client, failing="DockerCluster"), namespace="default", name="c1")  # type: ignore[arg-type]


async def test_a_missing_cluster_is_not_found(client: MemoryClient) -> None:
    with pytest.raises(NotFound) as raised:
        await collect(client, namespace="default", name="nope")
    assert str(raised.value) == 'clusters.cluster.x-k8s.io "nope" not found'


async def test_a_server_without_cluster_api_says_so(client: MemoryClient) -> None:
    with pytest.raises(ClusterApiNotServed, match=r"does not serve Cluster in cluster\.x-k8s\.io/v1beta1"):
        await collect(Recording(client, not_served=frozenset({"Cluster"})), namespace="default", name="c1")  # type: ignore[arg-type]
