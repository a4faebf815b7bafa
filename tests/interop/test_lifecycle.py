"""A Cluster's whole life on upstream's own core, kubeadm and in-memory managers, with either topology controller.

Upstream's in-memory e2e ClusterClass and Cluster (:class:`support.upstream_capi.InMemoryData`) at v1.6.8 and at
v1.14.0. With clusterclass as the topology controller (upstream's core manager at ``ClusterTopology=false``) and
then with upstream's own (``ClusterTopology=true``, clusterclass not running), the same steps pass:

- create: the control plane, the MachineDeployment and the MachinePool reach Ready on upstream's controllers (the
  MachinePool's infrastructure is clusterclass's simulated DockerMachinePool, the in-memory provider having none:
  :class:`support.upstream_capi.SimulatedMachinePools`);
- upgrade: the control plane first — no worker Machine and no MachinePool at the new version while a
  control-plane Machine is at the old one — then the workers, until every Machine and every pool Node runs it;
- scale the MachineDeployment and the MachinePool; change the ClusterClass (its worker infrastructure template),
  which rolls the workers onto the new template;
- delete: nothing of the Cluster is left.

After each step the objects the topology controller wrote are kept (:func:`interop_support.topology_objects`), and
the last test compares clusterclass's with upstream's, step by step: equal but for random name suffixes.
"""

from __future__ import annotations

import copy
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from conftest import release_or_skip
from interop_support import OURS, UPSTREAM, Stack, differences, nothing_left, topology_objects

from clusterclass.api.objects import Obj, dig, labels_of, name_of
from clusterclass.kube.client import Client
from clusterclass.kube.http import HttpClient

RELEASES = ("v1.6.8", "v1.14.0")
CLUSTER = "interop"

#: what each owner's run wrote after each step: (release, owner) → step → objects
WRITTEN: dict[tuple[str, str], dict[str, dict[str, Obj]]] = {}


@pytest.fixture
async def stack(
    request: pytest.FixtureRequest, controller_manager_binaries: object, tmp_path: Path
) -> AsyncIterator[Stack]:
    version, owner = request.param
    started = Stack(release_or_skip(version), owner, tmp_path / "stack", controller_manager_binaries).start()  # type: ignore[arg-type]
    try:
        await started.start_pools()
        yield started
    finally:
        await started.stop_pools()
        started.stop()


def _worker_infrastructure_ref(cluster_class: Obj) -> Obj:
    worker = cluster_class["spec"]["workers"]["machineDeployments"][0]
    return (
        worker["infrastructure"]["templateRef"]
        if "templateRef" in worker.get("infrastructure", {})
        else (worker["template"]["infrastructure"]["ref"])
    )


async def _pool(stack: Stack, client: Client, namespace: str) -> Obj:
    (pool,) = (await client.list(stack.kinds.core, "MachinePool", namespace=namespace)).items
    return pool


def _pool_at(pool: Obj, version: str, replicas: int) -> bool:
    """The MachinePool at ``version`` with ``replicas`` Nodes, all of them ready (upstream's counters)."""
    status = pool.get("status") or {}
    ready = status.get("readyReplicas")
    if ready is None:  # v1beta2 keeps the v1beta1 counter under deprecated
        ready = dig(status, "deprecated", "v1beta1", "readyReplicas")
    return (
        dig(pool, "spec", "template", "spec", "version") == version
        and len(status.get("nodeRefs") or []) == replicas
        and ready == replicas
    )


async def _machines(stack: Stack, client: Client, namespace: str) -> tuple[list[Obj], list[Obj]]:
    """The Cluster's control-plane Machines and its MachineDeployment Machines."""
    machines = (await client.list(stack.kinds.core, "Machine", namespace=namespace)).items
    control_plane = [m for m in machines if "cluster.x-k8s.io/control-plane" in labels_of(m)]
    workers = [m for m in machines if "cluster.x-k8s.io/deployment-name" in labels_of(m)]
    return control_plane, workers


@pytest.mark.parametrize(
    "stack",
    [(version, owner) for version in RELEASES for owner in (OURS, UPSTREAM)],
    ids=[f"{version}-{owner}" for version in RELEASES for owner in (OURS, UPSTREAM)],
    indirect=True,
)
async def test_a_clusters_life(stack: Stack) -> None:
    written = WRITTEN.setdefault((stack.release.version, stack.owner), {})
    client = HttpClient.from_kubeconfig(stack.api.kubeconfig)
    try:
        namespace = stack.api.create_namespace("interop-")
        new = stack.data.versions[1]
        kinds = stack.kinds

        # create
        cluster_class = stack.data.cluster_class(namespace)
        await stack.create(client, cluster_class)
        cluster = stack.data.cluster(CLUSTER, namespace, control_plane=1, workers=2)
        await stack.create(client, [cluster])
        await stack.wait_ready(client, namespace, CLUSTER)
        written["created"] = await topology_objects(client, kinds, namespace, CLUSTER)
        assert {key.split()[0] for key in written["created"]} >= {
            "Cluster",
            "KubeadmControlPlane",
            "MachineDeployment",
            "MachineHealthCheck",
            "MachinePool",
            "KubeadmConfig",
            "DockerMachinePool",
            kinds.infrastructure_cluster,
        }
        assert _pool_at(await _pool(stack, client, namespace), stack.data.versions[0], 2)

        # upgrade: the control plane first, then the workers
        await client.patch(
            kinds.core, "Cluster", CLUSTER, {"spec": {"topology": {"version": new}}}, namespace=namespace
        )
        seen_order_violation: list[str] = []

        async def upgraded() -> bool:
            control_plane, workers = await _machines(stack, client, namespace)
            # a control-plane Machine being deleted is on its way out (KCP has replaced it)
            cp_behind = [
                name_of(m)
                for m in control_plane
                if dig(m, "spec", "version") != new and not dig(m, "metadata", "deletionTimestamp")
            ]
            workers_ahead = [name_of(m) for m in workers if dig(m, "spec", "version") == new]
            pool = await _pool(stack, client, namespace)
            if dig(pool, "spec", "template", "spec", "version") == new:
                workers_ahead.append(f"MachinePool {name_of(pool)}")
            if cp_behind and workers_ahead:
                seen_order_violation.append(f"workers {workers_ahead} at {new} while {cp_behind} are not")
            return (
                bool(control_plane)
                and not cp_behind
                and bool(workers)
                and all(dig(m, "spec", "version") == new for m in workers)
                and _pool_at(pool, new, 2)
            )

        await stack.wait(upgraded, f"every Machine and the MachinePool at {new}")
        assert seen_order_violation == []
        await stack.wait_ready(client, namespace, CLUSTER)
        await stack.wait_settled(client, namespace, CLUSTER)
        written["upgraded"] = await topology_objects(client, kinds, namespace, CLUSTER)

        # scale the MachineDeployment and the MachinePool
        await client.patch(
            kinds.core,
            "Cluster",
            CLUSTER,
            [
                {"op": "replace", "path": "/spec/topology/workers/machineDeployments/0/replicas", "value": 3},
                {"op": "replace", "path": "/spec/topology/workers/machinePools/0/replicas", "value": 3},
            ],
            patch_type="json",
            namespace=namespace,
        )

        async def scaled() -> bool:
            return len((await _machines(stack, client, namespace))[1]) == 3 and _pool_at(
                await _pool(stack, client, namespace), new, 3
            )

        await stack.wait(scaled, "three worker Machines and three pool Nodes")
        await stack.wait_ready(client, namespace, CLUSTER)
        written["scaled"] = await topology_objects(client, kinds, namespace, CLUSTER)

        # change the ClusterClass: a new worker infrastructure template, which rolls the workers
        (class_name,) = [name_of(d) for d in cluster_class if d["kind"] == "ClusterClass"]
        current_class = await client.get(kinds.core, "ClusterClass", class_name, namespace=namespace)
        old_ref = _worker_infrastructure_ref(current_class)
        template = await client.get(old_ref["apiVersion"], old_ref["kind"], old_ref["name"], namespace=namespace)
        renewed = copy.deepcopy(template)
        renewed["metadata"] = {"name": f"{old_ref['name']}-v2", "namespace": namespace}
        renewed["spec"]["template"].setdefault("metadata", {}).setdefault("labels", {})["interop/template"] = "v2"
        await stack.create(client, [renewed])
        _worker_infrastructure_ref(current_class)["name"] = renewed["metadata"]["name"]
        await client.update(current_class)

        infrastructure_machine = kinds.infrastructure_machine_template.removesuffix("Template")

        async def rolled() -> bool:
            machines = (await client.list(kinds.infrastructure, infrastructure_machine, namespace=namespace)).items
            workers = [m for m in machines if "cluster.x-k8s.io/deployment-name" in labels_of(m)]
            templates = await client.list(
                kinds.infrastructure, kinds.infrastructure_machine_template, namespace=namespace
            )
            clones = {
                name_of(t) for t in templates.items if "topology.cluster.x-k8s.io/deployment-name" in labels_of(t)
            }
            machine_sets = (await client.list(kinds.core, "MachineSet", namespace=namespace)).items
            in_use = {dig(ms, "spec", "template", "spec", "infrastructureRef", "name") for ms in machine_sets}
            # rolled, and no template clone left that no MachineSet uses (v1.6 keeps one old MachineSet, scaled to
            # zero, by its default revisionHistoryLimit, and so its template; v1.14 deletes both)
            return (
                len(workers) == 3
                and all(labels_of(m).get("interop/template") == "v2" for m in workers)
                and clones <= in_use
            )

        await stack.wait(rolled, "the workers rolled onto the new template")
        await stack.wait_ready(client, namespace, CLUSTER)
        written["rebased"] = await topology_objects(client, kinds, namespace, CLUSTER)

        # delete
        await client.delete(kinds.core, "Cluster", CLUSTER, namespace=namespace)

        left: list[str] = []

        async def gone() -> bool:
            nonlocal left
            left = await nothing_left(client, kinds, namespace)
            return not left

        try:
            await stack.wait(gone, "nothing of the Cluster left")
        except AssertionError as failure:
            raise AssertionError(f"still there: {left}\n{failure}") from None
    finally:
        await client.close()


@pytest.mark.parametrize("version", RELEASES)
def test_both_topology_controllers_write_the_same_objects(version: str) -> None:
    ours, upstream = WRITTEN.get((version, OURS)), WRITTEN.get((version, UPSTREAM))
    if not ours or not upstream:
        pytest.skip(f"needs both runs of test_a_clusters_life for {version} (run the module whole)")
    found = {}
    for step in ("created", "upgraded", "scaled", "rebased"):
        assert sorted(ours.get(step, {})) == sorted(upstream.get(step, {})), step
        lines = differences(ours[step], upstream[step])
        if lines:
            found[step] = lines
    assert not found, "\n".join(f"{step}: {line}" for step, lines in found.items() for line in lines)
