"""The DockerMachinePool provider (providers-spec §2.9.3): a MachinePool's instances as DockerMachines.

As CAPD v1.6 does it, a DockerMachinePool backs its pool with MachinePool Machines: it sets
``status.infrastructureMachineKind: DockerMachine`` and creates one DockerMachine per instance
(``worker-<6 characters>``, labelled with the pool and owned — not controlled — by the
DockerMachinePool); the MachinePool controller gives each a Machine, which then provisions it like
any other. An instance's image is fixed when it is created: ``spec.template.customImage``, else
``kindest/node:<MachinePool version>`` (kept on the DockerMachine as
:data:`~clusterclass.sim.docker.machine.ANNOTATION_IMAGE`, standing in for the container's image).

Rollout: an instance is built from its image and (:data:`ANNOTATION_BUILD`, a hash) the infrastructure template's
fields and the MachinePool's bootstrap data Secret. When any of them changes — the MachinePool's version, the
custom image, ``preLoadImages`` or ``extraMounts``, or the bootstrap config the MachinePool references (the
topology rotates it on a change, Cluster API #10496) — no instance matches any more and all ``replicas``
replacements are created at once (or, with the simulation's ``pool_max_surge``, that many at a time: 1 rolls one
instance at a time); as they become ready, the surplus is deleted through the instances' Machines, outdated ones
first. Upstream's CAPD replaces instances for an image change only, so new bootstrap data or template fields reach
only instances created later. ``spec.providerIDList`` lists the instances' providerIDs, and the pool is ready only
while exactly ``replicas`` instances exist and all have one.

In a Cluster whose infrastructure is not the simulated DockerCluster (upstream's in-memory provider, beside
upstream's own managers), there are no DockerMachines to provision: the pool is a *managed* pool
(:mod:`clusterclass.sim.docker.managedpool`), its instances Nodes it registers in the workload cluster itself,
replaced by the same rule.
"""

from __future__ import annotations

import asyncio

from clusterclass.api import constants as c
from clusterclass.api.conditions import READY, false, find, set_conditions, summary, true
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, annotations_of, dig, labels_of, name_of, namespace_of
from clusterclass.kube.indexes import OWNER_INDEX
from clusterclass.sim.base import (
    ProviderController,
    SimContext,
    add_finalizer,
    controller_of,
    delete_if_present,
    deleting,
    owner_reference,
)
from clusterclass.sim.docker.cluster import INFRASTRUCTURE_API_VERSION
from clusterclass.sim.docker.kubelet import kubelet_of
from clusterclass.sim.docker.machine import (
    ANNOTATION_BUILD,
    ANNOTATION_IMAGE,
    ANNOTATION_VERSION,
    DOCKER_MACHINE,
    LABEL_POOL_NAME,
    POOL_TEMPLATE_FIELDS,
    instance_build,
    is_current,
)
from clusterclass.sim.docker.managedpool import (
    ManagedPools,
    WorkloadUnreachable,
    is_managed,
    kubelet_version,
    pool_nodes,
    register_node,
    remove_node,
)

DOCKER_MACHINE_POOL = "DockerMachinePool"
FINALIZER = "dockermachinepool.infrastructure.cluster.x-k8s.io"
REPLICAS_READY = "ReplicasReady"
ANNOTATION_DELETE_MACHINE = "cluster.x-k8s.io/delete-machine"
CACHE_WAIT = 10.0


def image_for(version: str | None, custom_image: str | None) -> str:
    return custom_image or f"kindest/node:{version}"


class DockerMachinePoolController(ProviderController):
    name = "dockermachinepool-controller"
    api_version = INFRASTRUCTURE_API_VERSION
    kind = DOCKER_MACHINE_POOL

    def __init__(self, context: SimContext) -> None:
        super().__init__(context)
        self.managed = ManagedPools()

    async def close(self) -> None:
        await self.managed.close()

    async def setup_watches(self) -> None:
        self.pools = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE_POOL, self._of_pool)
        self.docker_machines = await self.watched_informer(
            INFRASTRUCTURE_API_VERSION, DOCKER_MACHINE, self.through_owner
        )
        self.machines = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE, self._of_machine)
        await self.watch_clusters()

    def _of_pool(self, pool: Obj) -> list[str]:
        ref = dig(pool, "spec", "template", "spec", "infrastructureRef")
        if isinstance(ref, dict) and ref.get("kind") == DOCKER_MACHINE_POOL:
            return [f"{namespace_of(pool)}/{ref.get('name')}"]
        return []

    def _of_machine(self, machine: Obj) -> list[str]:
        """A MachinePool Machine wakes the DockerMachinePool of its DockerMachine (deletions, annotations)."""
        ref = dig(machine, "spec", "infrastructureRef") or {}
        if ref.get("kind") != DOCKER_MACHINE or LABEL_POOL_NAME not in labels_of(machine):
            return []
        docker_machine = self.docker_machines.get(str(ref.get("name")), namespace_of(machine))
        return self.through_owner(docker_machine) if docker_machine is not None else []

    def _instances(self, docker_pool: Obj) -> list[Obj]:
        owned = self.docker_machines.by_index(OWNER_INDEX, str(dig(docker_pool, "metadata", "uid")))
        return sorted(owned, key=name_of)

    def _machine_of(self, instance: Obj) -> Obj | None:
        owner = controller_of(instance)
        if owner is None or owner.get("kind") != c.KIND_MACHINE:
            return None
        return self.machines.get(str(owner.get("name")), namespace_of(instance))

    async def reconcile(self, current: Obj) -> float | None:
        owner = controller_of(current)
        if owner is None or owner.get("kind") != c.KIND_MACHINE_POOL:
            return None
        namespace = namespace_of(current)
        pool = self.pools.get(str(owner.get("name")), namespace)
        if pool is None:
            return None
        cluster = await self.cluster(namespace, labels_of(pool).get(c.LABEL_CLUSTER_NAME))
        if self.paused(current, cluster):
            return None
        docker_pool = json_copy(current)
        instances = self._instances(docker_pool)
        if deleting(docker_pool):
            if cluster is not None and is_managed(cluster):
                return await self._delete_managed(current, docker_pool, cluster)
            return await self._delete(current, docker_pool, instances)
        if cluster is None or not dig(cluster, "spec", "infrastructureRef", "kind"):
            # which kind of pool this is depends on the Cluster's infrastructure (module doc): until the Cluster
            # names it, nothing is decided. A pool taken for a Docker one before its Cluster's refs were seen
            # (upstream's topology controller creates the pools while the Cluster's refs are on their way) kept
            # infrastructureMachineKind set, and upstream's MachinePool controller then waited for Machines a
            # managed pool never has; the Cluster's watch brings it back here once the refs are set
            return None
        if is_managed(cluster):
            return await self._reconcile_managed(current, docker_pool, pool, cluster)
        status = docker_pool.setdefault("status", {})
        added = add_finalizer(docker_pool, FINALIZER)
        if added or status.get("infrastructureMachineKind") != DOCKER_MACHINE:
            status["infrastructureMachineKind"] = DOCKER_MACHINE
            await self.save(current, docker_pool)
            return None
        if not dig(pool, "spec", "template", "spec", "bootstrap", "dataSecretName"):
            return None
        requeue = await self._instances_in_step(docker_pool, pool, cluster, instances)
        set_conditions(docker_pool, [summary(docker_pool, [REPLICAS_READY])], self.context.now())
        status["observedGeneration"] = dig(docker_pool, "metadata", "generation")
        await self.save(current, docker_pool)
        return requeue

    async def _instances_in_step(self, docker_pool: Obj, pool: Obj, cluster: Obj, instances: list[Obj]) -> float | None:
        namespace = namespace_of(docker_pool)
        replicas = int(dig(pool, "spec", "replicas") if dig(pool, "spec", "replicas") is not None else 1)
        version = dig(pool, "spec", "template", "spec", "version")
        template = dig(docker_pool, "spec", "template") or {}
        wanted = image_for(version, template.get("customImage"))
        build = instance_build(docker_pool, pool)
        live = [m for m in instances if not deleting(m)]
        matching = [m for m in live if is_current(m, wanted, build)]
        domains = list(dig(pool, "spec", "failureDomains") or [])
        made: list[Obj] = []
        missing = max(replicas - len(matching), 0)
        surge = self.context.pool_max_surge
        if surge is not None:  # a rolling replacement: at most replicas + surge instances at a time, counting the
            # ones being deleted (their containers are still there); without them a deletion still in progress let
            # one more replacement start
            missing = min(missing, max(replicas + surge - len(instances), 0))
        for _ in range(missing):
            suffix = self.context.lower_alphanumeric(6)
            spec = {field: json_copy(template[field]) for field in POOL_TEMPLATE_FIELDS if template.get(field)}
            labels = {c.LABEL_CLUSTER_NAME: name_of(cluster), LABEL_POOL_NAME: name_of(pool)}
            if domains:
                labels["docker.sim.clusterclass.dev/failure-domain"] = self.context.rng.choice(domains)
            created = await self.create(
                {
                    "apiVersion": INFRASTRUCTURE_API_VERSION,
                    "kind": DOCKER_MACHINE,
                    "metadata": {
                        "name": f"worker-{suffix}",
                        "namespace": namespace,
                        "labels": labels,
                        "annotations": {
                            ANNOTATION_IMAGE: wanted,
                            ANNOTATION_BUILD: build,
                            ANNOTATION_VERSION: str(kubelet_of(wanted, version) or ""),
                        },
                        "ownerReferences": [owner_reference(docker_pool)],
                    },
                    "spec": spec,
                }
            )
            live.append(created)
            made.append(created)
        await self._wait_visible(made)
        # the delete-machine annotation of an instance's Machine marks the instance first in line
        for i, instance in enumerate(live):
            machine = self._machine_of(instance)
            if (
                machine is not None
                and ANNOTATION_DELETE_MACHINE in annotations_of(machine)
                and ANNOTATION_DELETE_MACHINE not in annotations_of(instance)
            ):
                marked = json_copy(instance)
                marked["metadata"].setdefault("annotations", {})[ANNOTATION_DELETE_MACHINE] = annotations_of(machine)[
                    ANNOTATION_DELETE_MACHINE
                ]
                live[i] = await self.write(instance, marked)

        def ready(instance: Obj) -> bool:
            condition = find(instance, READY)
            return dig(instance, "status", "ready") is True or (
                condition is not None and condition.get("status") == "True"
            )

        over = sum(1 for m in live if ready(m)) - replicas
        if over > 0:
            outdated = [m for m in live if not is_current(m, wanted, build)]
            current = [m for m in live if m not in outdated and ready(m)]
            marked_first = sorted(
                outdated, key=lambda m: (ANNOTATION_DELETE_MACHINE not in annotations_of(m), name_of(m))
            )
            marked_first += sorted(
                current, key=lambda m: (ANNOTATION_DELETE_MACHINE not in annotations_of(m), name_of(m))
            )
            for instance in marked_first:
                if over <= 0:
                    break
                machine = self._machine_of(instance)
                if machine is None:
                    continue
                if not deleting(machine):
                    await delete_if_present(
                        self.manager.client, c.CLUSTER_API_VERSION, c.KIND_MACHINE, name_of(machine), namespace
                    )
                over -= 1
        # deleting instances still count (their containers are not gone yet), as upstream lists them
        remaining = self._instances(docker_pool) or live
        provider_ids = [
            str(dig(m, "spec", "providerID")) for m in sorted(remaining, key=name_of) if dig(m, "spec", "providerID")
        ]
        complete = len(provider_ids) == replicas and len(remaining) == replicas
        reported = [
            instance_status(
                name_of(m), dig(m, "spec", "providerID"), annotations_of(m).get(ANNOTATION_VERSION), ready(m)
            )
            for m in sorted(remaining, key=name_of)
        ]
        return self._report(docker_pool, cluster, provider_ids, reported, ready=complete, requeue=10)

    def _report(
        self,
        docker_pool: Obj,
        cluster: Obj,
        provider_ids: list[str],
        instances: list[Obj],
        *,
        ready: bool,
        requeue: float,
    ) -> float | None:
        """Write the instances into the pool (``spec.providerIDList``, ``status.replicas``, ``status.instances``
        with each one's version, as CAPD's) and whether it is ready; when it is not, look again after ``requeue``
        seconds. Both kinds of pool report alike."""
        docker_pool["spec"]["providerIDList"] = provider_ids
        if not docker_pool["spec"].get("providerID"):
            docker_pool["spec"]["providerID"] = f"docker:////{name_of(cluster)}-dmp-{name_of(docker_pool)}"
        status = docker_pool.setdefault("status", {})
        status["replicas"] = len(instances)
        status["instances"] = instances
        status["ready"] = ready
        if ready:
            set_conditions(docker_pool, [true(REPLICAS_READY)], self.context.now())
            return None
        set_conditions(docker_pool, [false(REPLICAS_READY, "WaitingForReplicasReady", "Info")], self.context.now())
        return self.timing.requeue(requeue)

    # --- a managed pool (module doc) ----------------------------------------------------------------------------

    async def _reconcile_managed(self, current: Obj, docker_pool: Obj, pool: Obj, cluster: Obj) -> float | None:
        if add_finalizer(docker_pool, FINALIZER):
            await self.save(current, docker_pool)
            return None
        if not dig(pool, "spec", "template", "spec", "bootstrap", "dataSecretName"):
            return None
        try:
            requeue = await self._managed_in_step(docker_pool, pool, cluster)
        except WorkloadUnreachable as unreachable:
            set_conditions(
                docker_pool,
                [false(REPLICAS_READY, "WorkloadClusterUnreachable", "Warning", str(unreachable))],
                self.context.now(),
            )
            requeue = self.timing.requeue(5)
        set_conditions(docker_pool, [summary(docker_pool, [REPLICAS_READY])], self.context.now())
        docker_pool["status"]["observedGeneration"] = dig(docker_pool, "metadata", "generation")
        await self.save(current, docker_pool)
        return requeue

    async def _managed_in_step(self, docker_pool: Obj, pool: Obj, cluster: Obj) -> float | None:
        """The managed pool's Nodes in step with the MachinePool: the Docker replacement rule, on Nodes."""
        workload = await self.managed.client(self.manager.client, cluster)
        replicas = int(dig(pool, "spec", "replicas") if dig(pool, "spec", "replicas") is not None else 1)
        version = dig(pool, "spec", "template", "spec", "version")
        wanted = image_for(version, (dig(docker_pool, "spec", "template") or {}).get("customImage"))
        build = instance_build(docker_pool, pool)
        nodes = await pool_nodes(workload, docker_pool)
        matching = [n for n in nodes if is_current(n, wanted, build)]
        missing = max(replicas - len(matching), 0)
        if self.context.pool_max_surge is not None:
            missing = min(missing, max(replicas + self.context.pool_max_surge - len(nodes), 0))
        for _ in range(missing):
            name = f"{name_of(docker_pool)}-{self.context.lower_alphanumeric(6)}"
            node = await register_node(
                workload, docker_pool, name, wanted, build, kubelet_version(wanted, version), self.context.now()
            )
            nodes.append(node)
            matching.append(node)
        surplus = len(nodes) - replicas
        # matching Nodes are Ready as soon as they exist: the outdated ones go first, then the newest extras
        for node in [n for n in nodes if not is_current(n, wanted, build)] + sorted(
            matching, key=name_of, reverse=True
        ):
            if surplus <= 0 or (is_current(node, wanted, build) and len(matching) <= replicas):
                break
            await remove_node(workload, node)
            nodes.remove(node)
            if node in matching:
                matching.remove(node)
            surplus -= 1
        provider_ids = [str(dig(n, "spec", "providerID")) for n in sorted(nodes, key=name_of)]
        ready = len(nodes) == replicas and len(matching) == replicas
        reported = [
            instance_status(
                name_of(n), dig(n, "spec", "providerID"), dig(n, "status", "nodeInfo", "kubeletVersion"), True
            )
            for n in sorted(nodes, key=name_of)
        ]  # a managed pool's Nodes are Ready as soon as they exist
        return self._report(docker_pool, cluster, provider_ids, reported, ready=ready, requeue=1)

    async def _delete_managed(self, current: Obj, docker_pool: Obj, cluster: Obj) -> float | None:
        """Deregister the pool's Nodes; a workload cluster that is gone (its Cluster being deleted) took them."""
        try:
            workload = await self.managed.client(self.manager.client, cluster)
            for node in await pool_nodes(workload, docker_pool):
                await remove_node(workload, node)
        except WorkloadUnreachable:
            if not deleting(cluster):
                return self.timing.requeue(5)
        await self.release(current, json_copy(current), FINALIZER)
        return None

    async def _wait_visible(self, created: list[Obj]) -> None:
        """Wait (briefly) until the new instances are in the cache, so the next reconcile does not make more."""
        try:
            async with asyncio.timeout(CACHE_WAIT):
                while any(self.docker_machines.get(name_of(m), namespace_of(m)) is None for m in created):
                    await asyncio.sleep(0.005)
        except TimeoutError:
            pass

    async def _delete(self, current: Obj, docker_pool: Obj, instances: list[Obj]) -> float | None:
        namespace = namespace_of(docker_pool)
        for instance in instances:
            machine = self._machine_of(instance)
            if machine is not None:
                if not deleting(machine):
                    await delete_if_present(
                        self.manager.client, c.CLUSTER_API_VERSION, c.KIND_MACHINE, name_of(machine), namespace
                    )
            elif not deleting(instance):
                await delete_if_present(
                    self.manager.client, INFRASTRUCTURE_API_VERSION, DOCKER_MACHINE, name_of(instance), namespace
                )
        if instances:
            return self.timing.requeue(10)
        await self.release(current, json_copy(current), FINALIZER)
        return None


def instance_status(name: str, provider_id: object, version: object, ready: bool) -> Obj:
    """One entry of ``status.instances`` (CAPD's ``DockerMachinePoolInstanceStatus``): the version is what the
    instance runs, which is how the MachinePool counts its up-to-date replicas."""
    entry: Obj = {"instanceName": name, "ready": ready, "bootstrapped": ready}
    if provider_id:
        entry["providerID"] = str(provider_id)
    if version:
        entry["version"] = str(version)
    return entry
