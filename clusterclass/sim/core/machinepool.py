"""The core MachinePool controller (providers-spec §2.6): bootstrap data, the infrastructure pool, nodeRefs.

A MachinePool adopts its bootstrap config (a KubeadmConfig object, not a template) and its
infrastructure pool (a DockerMachinePool), copies the config's data Secret name into
``spec.template.spec.bootstrap.dataSecretName`` on every reconcile, and, while the infrastructure
pool is ready, copies its ``spec.providerIDList`` and ``status.replicas`` (a changed list resets the
ready and available counters). It then matches the providerIDs with the workload cluster's Nodes to
build ``status.nodeRefs`` and count ready and available replicas — and, as upstream v1.6 does, skips
that while ``replicas == readyReplicas == len(nodeRefs)``, which keeps the old nodeRefs during an
infrastructure rollout while their Nodes run. Unlike upstream it does not skip when a nodeRef is stale: its Node
is gone, has another uid (a Node registered again under the same name, as a reimaged instance does) or a
providerID the pool no longer lists. Upstream compares the counts only, so its nodeRefs keep a replaced Node's uid
for good (Cluster API #12388); here they are rebuilt, and ``describe`` and the topology's upgrade check read the
Nodes that run. When the infrastructure pool names an ``infrastructureMachineKind``, each of its machines gets a
MachinePool Machine (no version, no bootstrap config of its own). A MachinePool Machine a MachineHealthCheck marked
for remediation is deleted (its infrastructure machine with it), and the infrastructure pool brings a replacement
instance: what Cluster API PR #11392 proposes; upstream's MachinePool remediates nothing.

Deleting a MachinePool deletes its bootstrap config and infrastructure pool, waits until both are
gone, then deletes Nodes it still names that the pool no longer lists, and lets the pool go.
"""

from __future__ import annotations

import asyncio

from clusterclass.api import constants as c
from clusterclass.api.conditions import MetaCondition, false, mirror, set_conditions, summary, true
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, annotations_of, dig, labels_of, name_of, namespace_of
from clusterclass.errors import ClusterClassError
from clusterclass.kube.indexes import CONTROLLER_INDEX, LABEL_INDEX
from clusterclass.sim import conditions as v1beta2
from clusterclass.sim.base import (
    ProviderController,
    add_finalizer,
    delete_if_present,
    deleting,
    ensure_owner,
    owner_reference,
    requeue_min,
    set_label,
    set_v1beta2_counters,
)
from clusterclass.sim.core.machine import (
    ANNOTATION_OWNER_KIND,
    ANNOTATION_OWNER_NAME,
    UNINITIALIZED_TAINT,
    synced_label,
)
from clusterclass.sim.core.machinehealthcheck import remediate
from clusterclass.sim.workload import WorkloadCluster
from clusterclass.topology import versions

FINALIZER = "machinepool.cluster.x-k8s.io"
LABEL_POOL_NAME = c.LABEL_MACHINE_POOL_NAME
BOOTSTRAP_READY = "BootstrapReady"
INFRASTRUCTURE_READY = "InfrastructureReady"
REPLICAS_READY = "ReplicasReady"
CACHE_WAIT = 10.0


class MachinePoolError(ClusterClassError):
    pass


class MachinePoolController(ProviderController):
    name = "machinepool-controller"
    api_version = c.CLUSTER_API_VERSION
    kind = c.KIND_MACHINE_POOL

    async def setup_watches(self) -> None:
        await self.watch_clusters()
        self.machines = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE, self.through_controller)
        self.context.workloads.add_handler("Node", self._node_changed)

    def _node_changed(self, workload: WorkloadCluster, node: Obj) -> None:
        assert self.informer is not None
        for pool in self.in_cluster(self.informer, workload.namespace, workload.name):
            self.controller.enqueue(f"{namespace_of(pool)}/{name_of(pool)}")

    def _by_pool_label(self, obj: Obj) -> list[str]:
        pool = labels_of(obj).get(LABEL_POOL_NAME)
        return [f"{namespace_of(obj)}/{pool}"] if pool else []

    async def reconcile(self, current: Obj) -> float | None:
        namespace = namespace_of(current)
        cluster_name = str(dig(current, "spec", "clusterName") or "")
        cluster = await self.cluster(namespace, cluster_name)
        if await self.pause(current, cluster):
            return None
        pool = json_copy(current)
        set_label(pool, c.LABEL_CLUSTER_NAME, cluster_name)
        if deleting(pool):
            return await self._delete(current, pool, cluster)
        if cluster is None:
            raise MachinePoolError(f"failed to get Cluster {namespace}/{cluster_name} for MachinePool {name_of(pool)}")
        if add_finalizer(pool, FINALIZER):
            await self.save(current, pool)
            return None
        ensure_owner(pool, cluster)
        status = pool.setdefault("status", {})
        status.setdefault("bootstrapReady", False)
        status.setdefault("infrastructureReady", False)
        errors: list[str] = []
        requeue: float | None = None
        # after a failing phase the later ones still run, their results discarded (providers-spec 2.6; a Machine
        # stops at its first failing phase)
        for phase in (self._bootstrap, self._infrastructure, self._node_refs):
            try:
                result = await phase(pool, cluster)
            except MachinePoolError as err:
                errors.append(str(err))
                continue
            if not errors:
                requeue = requeue_min(requeue, result)
        self._phase(pool)
        set_conditions(
            pool, [summary(pool, [BOOTSTRAP_READY, INFRASTRUCTURE_READY, REPLICAS_READY])], self.context.now()
        )
        infra = await self.get_ref(dig(pool, "spec", "template", "spec", "infrastructureRef"), namespace)
        if infra is not None:
            self._v1beta2_counters(pool, infra)
        if not errors:
            status["observedGeneration"] = dig(pool, "metadata", "generation")
        await self.save(current, pool)
        if errors:
            raise MachinePoolError("; ".join(errors))
        return requeue

    # -- phases ---------------------------------------------------------------------------------------

    async def _bootstrap(self, pool: Obj, cluster: Obj) -> float | None:
        bootstrap = pool["spec"]["template"]["spec"].setdefault("bootstrap", {})
        status = pool["status"]
        ref = bootstrap.get("configRef")
        if not ref:
            if bootstrap.get("dataSecretName"):
                status["bootstrapReady"] = True
                set_conditions(pool, [true(BOOTSTRAP_READY)], self.context.now())
                return None
            raise MachinePoolError(
                f"MachinePool {name_of(pool)} has neither a bootstrap configRef nor a dataSecretName"
            )
        config = await self.get_ref(ref, namespace_of(pool))
        if config is None:
            raise MachinePoolError(
                f'failed to retrieve {ref.get("kind")} external object "{namespace_of(pool)}"/"{ref.get("name")}"'
            )
        predecessor = bootstrap.get("dataSecretName") not in (None, name_of(config))
        if predecessor and dig(config, "status", "ready") is not True:
            # the configRef was switched to a new config (the topology rotates it on a change): the data Secret the
            # pool names is its predecessor's. Upstream keeps it, and its kubeadm bootstrap provider then adopts that
            # name for the new config instead of generating new data (Cluster API #8858, #10496); it is cleared,
            # and written, before the new config is adopted, so the new config's own data reaches the instances
            del bootstrap["dataSecretName"]
            status["bootstrapReady"] = False
            set_conditions(pool, [false(BOOTSTRAP_READY, "WaitingForDataSecret", "Info")], self.context.now())
            return None  # the write of the pool brings it back
        config = await self.adopt(config, pool, name_of(cluster))
        if deleting(config):
            return None
        set_conditions(pool, [mirror(config, BOOTSTRAP_READY, "WaitingForDataSecret")], self.context.now())
        if dig(config, "status", "ready") is not True:
            status["bootstrapReady"] = False
            return None
        secret = dig(config, "status", "dataSecretName")
        if not secret:
            raise MachinePoolError(
                f"retrieved empty dataSecretName from bootstrap provider for MachinePool {name_of(pool)}"
            )
        bootstrap["dataSecretName"] = secret
        status["bootstrapReady"] = True
        return None

    async def _infrastructure(self, pool: Obj, cluster: Obj) -> float | None:
        ref = pool["spec"]["template"]["spec"].get("infrastructureRef") or {}
        status = pool["status"]
        infra = await self.get_ref(ref, namespace_of(pool))
        now = self.context.now()
        if infra is None:
            if status.get("infrastructureReady"):
                status["failureReason"] = "InvalidConfiguration"
                status["failureMessage"] = (
                    f"MachinePool infrastructure resource {ref.get('apiVersion')}, Kind={ref.get('kind')} with name "
                    f'"{ref.get("name")}" has been deleted after being ready'
                )
            message = f"could not find infra reference of kind {ref.get('kind')} with name {ref.get('name')}"
            set_conditions(pool, [false(INFRASTRUCTURE_READY, "IncorrectExternalRef", "Error", message)], now)
            raise MachinePoolError(message)
        infra = await self.adopt(infra, pool, name_of(cluster))
        if deleting(infra):
            return None
        ready = dig(infra, "status", "ready") is True
        status["infrastructureReady"] = ready
        set_conditions(pool, [mirror(infra, INFRASTRUCTURE_READY, "WaitingForInfrastructure")], now)
        await self._pool_machines(pool, infra, cluster)
        # the unhealthy Machines a MachineHealthCheck marked go, and the infrastructure pool replaces their
        # instances (Cluster API PR #11392's proposal; upstream's MachinePool does not remediate)
        await remediate(self, pool, self.machines.by_index(CONTROLLER_INDEX, str(dig(pool, "metadata", "uid"))))
        if not ready:
            return None
        provider_ids = list(dig(infra, "spec", "providerIDList") or [])
        status["replicas"] = int(dig(infra, "status", "replicas") or 0)
        if not provider_ids and status["replicas"] != 0:
            return None
        if provider_ids != list(dig(pool, "spec", "providerIDList") or []):
            pool["spec"]["providerIDList"] = provider_ids
            status["readyReplicas"] = 0
            status["availableReplicas"] = 0
            status["unavailableReplicas"] = status["replicas"]
        return None

    def _v1beta2_counters(self, pool: Obj, infra: Obj) -> None:
        """v1.14's counters: with MachinePool Machines, those whose v1beta2 Ready, Available and UpToDate are
        True; without, upstream counts every replica ready and available and ``spec.replicas`` up to date.

        Up to date, beyond upstream (Cluster API #10059): where the infrastructure pool reports its instances'
        versions (``status.instances[].version``, as CAPD's does), the instances that run the MachinePool's version,
        and the v1beta2 condition ``MachinesUpToDate`` (upstream's open PR #13929 adds it for pools with Machines):
        False while any instance runs another version. Upstream's counter stays at ``spec.replicas`` through an
        upgrade (and its ``observedGeneration`` catches up before any condition changes), so nothing in the pool's
        own status says it is upgrading; this condition turns False as soon as pool and instances disagree, which
        the topology reads (:mod:`clusterclass.topology.upgrade`)."""
        status = pool["status"]
        if dig(infra, "status", "infrastructureMachineKind"):
            selector = f"{LABEL_POOL_NAME}={name_of(pool)}"
            machines = [
                m for m in self.machines.by_index(LABEL_INDEX, selector) if namespace_of(m) == namespace_of(pool)
            ]
            ready, available, up_to_date = v1beta2.counters(machines)
        else:
            ready = available = int(status.get("replicas") or 0)
            up_to_date = int(dig(pool, "spec", "replicas") or 0)
        running = instance_versions(infra)
        version = dig(pool, "spec", "template", "spec", "version")
        if running is not None and isinstance(version, str):
            outdated = sum(not versions.same_ignoring_build(v, version) for v in running)
            up_to_date = len(running) - outdated
            v1beta2.set_v1beta2(pool, [machines_up_to_date(outdated, len(running), version)], self.context.now())
        set_v1beta2_counters(status, ready=ready, available=available, up_to_date=up_to_date)

    async def _pool_machines(self, pool: Obj, infra: Obj, cluster: Obj) -> None:
        """A MachinePool Machine for each infrastructure machine of the pool (its labels kept in step)."""
        kind = dig(infra, "status", "infrastructureMachineKind")
        if not kind:
            return
        infra_machines = await self.watched_informer(str(infra["apiVersion"]), str(kind), self._by_pool_label)
        namespace = namespace_of(pool)
        selector = f"{LABEL_POOL_NAME}={name_of(pool)}"
        wanted = [m for m in infra_machines.by_index(LABEL_INDEX, selector) if namespace_of(m) == namespace]
        wanted = [m for m in wanted if labels_of(m).get(c.LABEL_CLUSTER_NAME) == name_of(cluster)]
        machines = [m for m in self.machines.by_index(LABEL_INDEX, selector) if namespace_of(m) == namespace]
        by_infra = {dig(m, "spec", "infrastructureRef", "name"): m for m in machines}
        template_meta = dig(pool, "spec", "template", "metadata") or {}
        labels = {
            **(template_meta.get("labels") or {}),
            LABEL_POOL_NAME: name_of(pool),
            c.LABEL_CLUSTER_NAME: name_of(cluster),
        }
        annotations = dict(template_meta.get("annotations") or {})
        created = []
        for infra_machine in wanted:
            machine = by_infra.get(name_of(infra_machine))
            if machine is not None:
                updated = json_copy(machine)
                updated["metadata"]["labels"] = {**labels_of(machine), **labels}
                if annotations:
                    updated["metadata"]["annotations"] = {**annotations_of(machine), **annotations}
                if updated != machine and not deleting(machine):
                    await self.save(machine, updated)
                continue
            if deleting(infra_machine):
                continue
            created.append(
                await self.create(
                    {
                        "apiVersion": c.CLUSTER_API_VERSION,
                        "kind": c.KIND_MACHINE,
                        "metadata": {
                            "name": f"{name_of(pool)}-{self.context.suffix()}",
                            "namespace": namespace,
                            "labels": labels,
                            "annotations": annotations,
                            "ownerReferences": [owner_reference(pool, controller=True)],
                        },
                        "spec": {
                            "clusterName": name_of(cluster),
                            "bootstrap": {},
                            "infrastructureRef": {
                                "apiVersion": infra_machine["apiVersion"],
                                "kind": infra_machine["kind"],
                                "name": name_of(infra_machine),
                                "namespace": namespace,
                            },
                        },
                    },
                    field_manager="machinepool-controller",
                )
            )
        if created:
            try:
                async with asyncio.timeout(CACHE_WAIT):
                    while any(self.machines.get(name_of(m), namespace) is None for m in created):
                        await asyncio.sleep(0.005)
            except TimeoutError:
                pass

    async def _node_refs(self, pool: Obj, cluster: Obj) -> float | None:
        status = pool["status"]
        now = self.context.now()
        replicas = int(status.get("replicas") or 0)
        ready_replicas = int(status.get("readyReplicas") or 0)
        node_refs = list(status.get("nodeRefs") or [])
        provider_ids = list(dig(pool, "spec", "providerIDList") or [])
        workload = self.context.workloads.get(namespace_of(pool), name_of(cluster))
        if (
            replicas == ready_replicas
            and len(node_refs) == ready_replicas
            and (workload is None or _refs_current(node_refs, workload, set(provider_ids)))
        ):
            set_conditions(pool, [true(REPLICAS_READY)], now)
            return None
        if not provider_ids and int(dig(pool, "spec", "replicas") or 0) != 0:
            return None
        if workload is None:
            return None
        listed = set(provider_ids)
        for ref in node_refs:
            node = workload.node(str(ref.get("name")))
            if node is not None and dig(node, "spec", "providerID") not in listed:
                await delete_if_present(workload.client, "v1", "Node", name_of(node), None)
        available = ready = 0
        refs = []
        matched = []
        for provider_id in provider_ids:
            nodes = workload.nodes_with_provider_id(provider_id)
            if not nodes:
                continue
            node = nodes[0]
            matched.append(node)
            available += 1
            if any(
                x.get("type") == "Ready" and x.get("status") == "True" for x in dig(node, "status", "conditions") or []
            ):
                ready += 1
            refs.append(
                {"kind": "Node", "apiVersion": "v1", "name": name_of(node), "uid": dig(node, "metadata", "uid")}
            )
        if provider_ids and not refs:
            return None
        status["readyReplicas"] = ready
        status["availableReplicas"] = available
        status["unavailableReplicas"] = replicas - available
        if refs != node_refs:
            self.events.normal(pool, "SuccessfulSetNodeRefs", f"Set nodeRefs to {len(refs)} Nodes")
        status["nodeRefs"] = refs
        await self._annotate_nodes(workload, matched, pool, cluster)
        if replicas != ready or len(refs) != ready:
            set_conditions(pool, [false(REPLICAS_READY, "WaitingForReplicasReady", "Info")], now)
            return self.timing.requeue(30)
        set_conditions(pool, [true(REPLICAS_READY)], now)
        return None

    async def _annotate_nodes(self, workload: WorkloadCluster, nodes: list[Obj], pool: Obj, cluster: Obj) -> None:
        annotations = {
            c.ANNOTATION_NODE_CLUSTER_NAME: name_of(cluster),
            c.ANNOTATION_NODE_CLUSTER_NAMESPACE: namespace_of(cluster),
            ANNOTATION_OWNER_KIND: c.KIND_MACHINE_POOL,
            ANNOTATION_OWNER_NAME: name_of(pool),
        }
        template_labels = dig(pool, "spec", "template", "metadata", "labels") or {}
        synced = {k: v for k, v in template_labels.items() if synced_label(k)}
        for node in nodes:
            patch: Obj = {}
            missing = {k: v for k, v in annotations.items() if annotations_of(node).get(k) != v}
            if missing:
                patch.setdefault("metadata", {})["annotations"] = missing
            labels = {k: v for k, v in synced.items() if labels_of(node).get(k) != v}
            if labels:
                patch.setdefault("metadata", {})["labels"] = labels
            taints = dig(node, "spec", "taints") or []
            kept = [t for t in taints if t.get("key") != UNINITIALIZED_TAINT]
            if len(kept) != len(taints):
                patch["spec"] = {"taints": kept or None}
            if patch:
                await workload.client.patch("v1", "Node", name_of(node), patch, field_manager="manager")

    def _phase(self, pool: Obj) -> None:
        status = pool.setdefault("status", {})
        spec = pool["spec"]
        replicas = int(spec.get("replicas") if spec.get("replicas") is not None else 1)
        ready = int(status.get("readyReplicas") or 0)
        scaling = "Scaling" if c.ANNOTATION_REPLICAS_MANAGED_BY in annotations_of(pool) else None
        phase = "Pending"
        if status.get("bootstrapReady") and not status.get("infrastructureReady"):
            phase = "Provisioning"
        if status.get("nodeRefs"):
            phase = "Provisioned"
        if status.get("infrastructureReady") and replicas == ready:
            phase = "Running"
        if status.get("infrastructureReady") and replicas > ready:
            phase = scaling or "ScalingUp"
        if status.get("infrastructureReady") and replicas < ready:
            phase = scaling or "ScalingDown"
        if status.get("failureReason") or status.get("failureMessage"):
            phase = "Failed"
        if deleting(pool):
            phase = "Deleting"
        status["phase"] = phase

    # -- deletion -------------------------------------------------------------------------------------

    async def _delete(self, current: Obj, pool: Obj, cluster: Obj | None) -> float | None:
        namespace = namespace_of(pool)
        template = dig(pool, "spec", "template", "spec") or {}
        waiting = False
        for ref in (dig(template, "bootstrap", "configRef"), template.get("infrastructureRef")):
            found = await self.get_ref(ref, namespace)
            if found is None:
                continue
            waiting = True
            if not deleting(found):
                await delete_if_present(
                    self.manager.client, found["apiVersion"], found["kind"], name_of(found), namespace
                )
        self._phase(pool)
        if waiting:
            await self.save(current, pool)
            return None
        workload = self.context.workloads.get(namespace, name_of(cluster)) if cluster is not None else None
        if workload is not None:
            listed = set(dig(pool, "spec", "providerIDList") or [])
            for ref in dig(pool, "status", "nodeRefs") or []:
                node = workload.node(str(ref.get("name")))
                if node is not None and dig(node, "spec", "providerID") not in listed:
                    await delete_if_present(workload.client, "v1", "Node", name_of(node), None)
        await self.release(current, pool, FINALIZER)
        return None


def _refs_current(node_refs: list[Obj], workload: WorkloadCluster, provider_ids: set[str]) -> bool:
    """Whether every nodeRef names a Node that exists with that uid and a providerID the pool lists (module doc)."""
    for ref in node_refs:
        node = workload.node(str(ref.get("name")))
        if node is None or dig(node, "metadata", "uid") != ref.get("uid"):
            return False
        if dig(node, "spec", "providerID") not in provider_ids:
            return False
    return True


def instance_versions(infra: Obj) -> list[str] | None:
    """The versions the infrastructure pool's instances run (``status.instances[].version``), or None when it does
    not report every one."""
    instances = dig(infra, "status", "instances")
    if not isinstance(instances, list) or not instances:
        return None
    found = [i.get("version") for i in instances if isinstance(i, dict)]
    if len(found) != len(instances) or not all(isinstance(v, str) and v for v in found):
        return None
    return [str(v) for v in found]


def machines_up_to_date(outdated: int, instances: int, version: str) -> MetaCondition:
    """``MachinesUpToDate`` of a pool whose infrastructure reports its instances' versions (``_v1beta2_counters``)."""
    if outdated:
        return MetaCondition(
            v1beta2.MACHINES_UP_TO_DATE,
            "False",
            "NotUpToDate",
            f"* {outdated} of {instances} instances do not run version {version}",
        )
    return MetaCondition(v1beta2.MACHINES_UP_TO_DATE, "True", "UpToDate")
