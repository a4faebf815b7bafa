"""Running the controllers end to end in a test: a counting Client, the example objects, waiting helpers.

Tests drive the controllers as upstream's envtest tests do: real API server semantics (the embedded store,
or a real kube-apiserver), the controllers running, and the statuses other controllers would write (a
control plane's version, a MachinePool's nodeRefs, workload Nodes) set by the test itself.

- :class:`FailingClient` wraps the controllers' Client, counts every request by verb (the library's
  :class:`~clusterclass.kube.counting.CountingClient`), so a test can say "100 reconciles of a converged
  Cluster made no write and no non-watch read", and can make chosen requests fail.
- :class:`Env` is one test's world: a namespace of its own, the controllers watching only that namespace,
  a direct (uncounted) client for the test's own writes, in-memory workload Nodes, and helpers to load
  the bundled example ClusterClass into the namespace and wait for things.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import random
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from support.crds import crd_version, make_crd

import clusterclass
from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.controllers import ControllerOptions, Controllers
from clusterclass.controllers.workload import StaticWorkloadClusters
from clusterclass.kube.client import Client
from clusterclass.kube.counting import CountingClient
from clusterclass.kube.errors import AlreadyExists, NotFound
from clusterclass.plan.loader import load
from clusterclass.up.example import EXAMPLES as BUNDLED_EXAMPLES

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "machinepools"
CAPI = c.CLUSTER_API_VERSION
INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta1"
CONTROL_PLANE = "controlplane.cluster.x-k8s.io/v1beta1"
#: the versions references name when read back from the management cluster (Cluster API v1.14's CRDs): v1beta2
#: references carry no version, and a v1beta1 read is given the newest version of the newest contract
INFRA_REF = "infrastructure.cluster.x-k8s.io/v1beta2"
BOOTSTRAP_REF = "bootstrap.cluster.x-k8s.io/v1beta2"
CONTROL_PLANE_REF = "controlplane.cluster.x-k8s.io/v1beta2"

#: a guard, not a speed check: how long a wait may take before the test fails
GUARD = 30.0


class FailingClient(CountingClient):
    """The library's :class:`~clusterclass.kube.counting.CountingClient`, able to make chosen requests fail.

    ``fail`` is given the verb and the object (or kind) and returns an exception to raise, or None.
    """

    def __init__(self, inner: Client) -> None:
        super().__init__(inner)
        self.fail: Callable[[str, Any], Exception | None] | None = None

    def _count(self, verb: str, what: Any) -> None:
        super()._count(verb, what)
        if self.fail is not None:
            error = self.fail(verb, what)
            if error is not None:
                raise error


async def eventually(check: Callable[[], Awaitable[bool]], *, what: str = "the condition") -> None:
    """Wait until ``await check()`` is true; fail after :data:`GUARD` seconds."""
    try:
        async with asyncio.timeout(GUARD):
            while not await check():
                await asyncio.sleep(0.01)
    except TimeoutError:
        raise AssertionError(f"timed out waiting for {what}") from None


def in_namespace(objects: list[Obj], namespace: str) -> list[Obj]:
    """Copies of ``objects`` moved to ``namespace`` (template refs of a ClusterClass follow)."""
    moved = []
    for obj in objects:
        obj = copy.deepcopy(obj)
        obj["metadata"]["namespace"] = namespace
        moved.append(obj)
    return moved


def example_class() -> list[Obj]:
    """The bundled ClusterClass ``pools`` and its templates."""
    return [o for o in load([str(EXAMPLES / "clusterclass.yaml")]).objects]


def v1beta2_example_class() -> list[Obj]:
    """The ClusterClass of the bundled v1beta2 example (``clusterclass/examples/quick-start.yaml``) and its
    templates, all in v1beta2."""
    path = Path(clusterclass.__file__).parent / "examples" / BUNDLED_EXAMPLES["v1beta2"]
    return [o for o in load([str(path)]).objects if o["kind"] != "Cluster"]


def example_cluster(name: str = "demo") -> Obj:
    cluster = copy.deepcopy(load([str(EXAMPLES / "cluster.yaml")]).objects[0])
    cluster["metadata"]["name"] = name
    return cluster


class Env:
    """One test's management cluster and controllers (module doc)."""

    def __init__(self, direct: Client, namespace: str, *, seed: int = 7, topology_workers: int = 2) -> None:
        self.direct = direct
        self.namespace = namespace
        self.client = FailingClient(direct)
        self.workload = StaticWorkloadClusters()
        self.seed = seed
        self.topology_workers = topology_workers
        self.controllers: Controllers | None = None

    def new_controllers(self, *, through_kubeconfigs: bool = False) -> Controllers:
        """New controllers; workload Nodes in memory, or (``through_kubeconfigs``) read as on a real cluster."""
        return Controllers(
            self.client,
            ControllerOptions(
                namespace=self.namespace,
                topology_workers=self.topology_workers,
                clusterclass_workers=2,
                sync_period=None,
                rng=random.Random(self.seed),
            ),
            workload=None if through_kubeconfigs else self.workload,
        )

    async def start(self) -> Controllers:
        self.controllers = await self.new_controllers().start()
        return self.controllers

    async def stop(self) -> None:
        if self.controllers is not None:
            await self.controllers.stop()
            self.controllers = None

    async def restart(self) -> Controllers:
        """Stop the controllers and start new ones (a process restart: empty caches, fresh answers)."""
        await self.stop()
        self.seed += 1
        return await self.start()

    # -- objects ---------------------------------------------------------------------------------------

    async def apply(self, *objects: Obj) -> list[Obj]:
        """Create or change ``objects`` as a user does (server-side apply, manager ``test``)."""
        applied = []
        for obj in in_namespace(list(objects), self.namespace):
            applied.append(await self.direct.apply(obj, field_manager="test", force=True))
        return applied

    async def apply_example(self, *cluster_names: str) -> None:
        await self.apply(*example_class())
        await self.apply(*(example_cluster(name) for name in cluster_names or ("demo",)))

    async def get(self, api_version: str, kind: str, name: str) -> Obj:
        return await self.direct.get(api_version, kind, name, namespace=self.namespace)

    async def list(self, api_version: str, kind: str, **labels: str) -> list[Obj]:
        selector = {"matchLabels": labels} if labels else None
        return (await self.direct.list(api_version, kind, namespace=self.namespace, label_selector=selector)).items

    async def cluster(self, name: str = "demo") -> Obj:
        return await self.get(CAPI, c.KIND_CLUSTER, name)

    async def topology_objects(self, kind: str, api_version: str = CAPI, cluster: str = "demo") -> list[Obj]:
        return [
            o
            for o in await self.list(api_version, kind)
            if dig(o, "metadata", "labels", c.LABEL_CLUSTER_NAME) == cluster
        ]

    async def condition(self, name: str = "demo", type_: str = "TopologyReconciled") -> Obj | None:
        cluster = await self.cluster(name)
        return next((x for x in dig(cluster, "status", "conditions") or [] if x.get("type") == type_), None)

    async def wait_reconciled(self, name: str = "demo") -> Obj:
        """Wait until the Cluster's ``TopologyReconciled`` is True and the controllers are idle; the Cluster."""

        async def reconciled() -> bool:
            condition = await self.condition(name)
            return condition is not None and condition.get("status") == "True"

        await eventually(reconciled, what=f"Cluster {name} to be TopologyReconciled")
        await self.settled()
        return await self.cluster(name)

    async def wait_condition(self, reason: str, name: str = "demo") -> Obj:
        async def has_reason() -> bool:
            condition = await self.condition(name)
            return condition is not None and condition.get("reason") == reason

        await eventually(has_reason, what=f"TopologyReconciled reason {reason}")
        condition = await self.condition(name)
        assert condition is not None
        return condition

    async def settled(self) -> None:
        """Wait until no controller has work queued, in flight or scheduled, three checks in a row."""
        assert self.controllers is not None
        controllers = self.controllers
        quiet = 0

        async def idle() -> bool:
            nonlocal quiet
            # keys scheduled for later (a hook's retryAfterSeconds, a backoff) are not work in hand
            busy = any(len(ctrl.queue) or ctrl.queue.processing for ctrl in controllers.manager.controllers)
            quiet = 0 if busy else quiet + 1
            await asyncio.sleep(0.02)
            return quiet >= 3

        await eventually(idle, what="the controllers to be idle")
        for recorder in controllers.manager.recorders:
            await recorder.flush()

    async def reconcile(self, name: str = "demo", times: int = 1) -> None:
        """Have the topology controller reconcile Cluster ``name`` ``times`` times (as a resync would).

        Through the controller's queue, never beside it: two reconciles of one Cluster at once could
        both decide to create the same MachinePool, which the queue exists to prevent.
        """
        assert self.controllers is not None
        controller = self.controllers.topology.controller
        key = f"{self.namespace}/{name}"
        for _ in range(times):
            before = controller.stats.total
            controller.enqueue(key)

            async def done(before: int = before) -> bool:
                return (
                    controller.stats.total > before
                    and key not in controller.queue.processing
                    and key not in controller.queue.queued()
                )

            await eventually(done, what=f"a reconcile of {key}")

    # -- what other controllers would write ----------------------------------------------------------------

    async def set_status(self, obj: Obj, status: Obj) -> Obj:
        """Merge ``status`` into ``obj``'s status, as its own controller would."""
        return await self.direct.patch(
            str(obj["apiVersion"]),
            str(obj["kind"]),
            name_of(obj),
            {"status": status},
            namespace=self.namespace,
            status=True,
        )

    async def control_plane(self, cluster: str = "demo") -> Obj:
        (cp,) = await self.topology_objects("KubeadmControlPlane", CONTROL_PLANE, cluster)
        return cp

    async def adopt(self, cluster: str = "demo") -> None:
        """What the core Cluster controller does first: own the InfrastructureCluster and the ControlPlane."""
        owner = await self.cluster(cluster)
        ref = {
            "apiVersion": CAPI,
            "kind": "Cluster",
            "name": cluster,
            "uid": owner["metadata"]["uid"],
            "controller": True,
            "blockOwnerDeletion": True,
        }
        for target in (owner["spec"]["infrastructureRef"], owner["spec"]["controlPlaneRef"]):
            obj = await self.get(target["apiVersion"], target["kind"], target["name"])
            references = obj["metadata"].get("ownerReferences") or []
            if any(r.get("uid") == ref["uid"] for r in references):
                continue
            await self.direct.patch(
                target["apiVersion"],
                target["kind"],
                target["name"],
                {"metadata": {"ownerReferences": [*references, ref]}},
                namespace=self.namespace,
            )

    async def settle_control_plane(self, cluster: str = "demo", version: str | None = None) -> Obj:
        """The control plane adopted by its Cluster, at its ``spec.version``, every replica ready (as KCP says),
        and the Cluster saying so (``ControlPlaneInitialized``, as the core Cluster controller does)."""
        await self.adopt(cluster)
        owner = await self.cluster(cluster)
        conditions = [x for x in dig(owner, "status", "conditions") or [] if x.get("type") != "ControlPlaneInitialized"]
        initialized = {
            "type": "ControlPlaneInitialized",
            "status": "True",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
        if len(conditions) == len(dig(owner, "status", "conditions") or []):
            await self.set_status(owner, {"conditions": [*conditions, initialized]})
        cp = await self.control_plane(cluster)
        replicas = dig(cp, "spec", "replicas") or 1
        return await self.set_status(
            cp,
            {
                "version": version or cp["spec"]["version"],
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": replicas,
                "unavailableReplicas": 0,
                "initialized": True,
                "ready": True,
            },
        )

    async def machine_pools(self, cluster: str = "demo") -> dict[str, Obj]:
        return {
            dig(mp, "metadata", "labels", c.LABEL_POOL_NAME): mp
            for mp in await self.topology_objects(c.KIND_MACHINE_POOL, CAPI, cluster)
        }

    async def machine_deployments(self, cluster: str = "demo") -> dict[str, Obj]:
        return {
            dig(md, "metadata", "labels", c.LABEL_DEPLOYMENT_NAME): md
            for md in await self.topology_objects(c.KIND_MACHINE_DEPLOYMENT, CAPI, cluster)
        }

    async def set_pool_nodes(
        self, pool: Obj, kubelet_version: str, count: int | None = None, cluster: str = "demo"
    ) -> None:
        """The pool's Nodes in its workload cluster at ``kubelet_version``, and its ``status.nodeRefs``."""
        count = count if count is not None else int(dig(pool, "spec", "replicas") or 1)
        # new Nodes for a new version, as a rolling pool replaces its instances
        names = [f"{name_of(pool)}-{kubelet_version.replace('.', '-')}-{i}" for i in range(count)]
        nodes = dict(self.workload.nodes.get((self.namespace, cluster), {}))
        for node_name in names:
            nodes[node_name] = {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": node_name},
                "status": {"nodeInfo": {"kubeletVersion": kubelet_version}},
            }
        self.workload.set_nodes(self.namespace, cluster, nodes.values())
        await self.set_status(pool, {"nodeRefs": [{"apiVersion": "v1", "kind": "Node", "name": n} for n in names]})


def resource_versions(objects: list[Obj]) -> dict[tuple[str, str], str]:
    return {(o["kind"], name_of(o)): str(dig(o, "metadata", "resourceVersion")) for o in objects}


# -- test kinds -----------------------------------------------------------------------------------------

#: a kind of bootstrap config and an infrastructure pool kind other than the Docker provider's, as
#: upstream's tests use "generic" kinds: for the ClusterClass changes MachinePools must refuse
GENERIC_BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta1"
GENERIC_INFRA = "infrastructure.cluster.x-k8s.io/v1beta1"
GENERIC_KINDS = (
    (GENERIC_BOOTSTRAP, "GenericBootstrapConfigTemplate"),
    (GENERIC_BOOTSTRAP, "GenericBootstrapConfig"),
    (GENERIC_INFRA, "GenericInfrastructureMachinePoolTemplate"),
    (GENERIC_INFRA, "GenericInfrastructureMachinePool"),
)


def generic_crd(api_version: str, kind: str) -> Obj:
    group, version = api_version.split("/")
    schema = {
        "type": "object",
        "properties": {"spec": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}},
    }
    # an older version still served, as Cluster API's CRDs serve theirs for a while
    crd = make_crd(group, kind, [crd_version("v1alpha4", schema, storage=False), crd_version(version, schema)])
    crd["metadata"]["labels"] = {"cluster.x-k8s.io/v1beta1": f"v1alpha4_{version}"}
    return crd


async def install_generic_kinds(client: Client) -> None:
    """Install the generic test kinds (once per API server: CRDs are cluster-scoped) and wait until served."""
    for api_version, kind in GENERIC_KINDS:
        with contextlib.suppress(AlreadyExists):
            await client.create(generic_crd(api_version, kind))

    async def served() -> bool:
        for api_version, kind in GENERIC_KINDS:
            try:
                await client.resource(api_version, kind)
            except NotFound:
                return False
        return True

    await eventually(served, what="the generic test kinds to be served")
