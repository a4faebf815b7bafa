"""The core Cluster controller (providers-spec §2.2): readiness, the endpoint, phases, and deletion order.

It adopts the Cluster's InfrastructureCluster and control plane (controller ownerReference, which
lets the topology controller delete the shim Secret), copies their readiness into
``status.infrastructureReady`` / ``status.controlPlaneReady`` and the mirrored conditions, copies the
infrastructure's ``spec.controlPlaneEndpoint`` once, marks ``ControlPlaneInitialized`` from the
control plane's ``status.initialized`` (sticky), and derives ``status.phase`` (``Pending``,
``Provisioning``, ``Provisioned``, ``Failed``, ``Deleting``; there is no ``Running``).

Deleting a Cluster deletes its workers first — MachinePools, then MachineDeployments, MachineSets
and worker Machines — then the control plane, then the infrastructure, and only then lets the Cluster
go. With the RuntimeSDK gate on, a Cluster with a topology waits for the topology controller's
``runtime.cluster.x-k8s.io/ok-to-delete`` first (the BeforeClusterDelete hook).
"""

from __future__ import annotations

from clusterclass.api import constants as c
from clusterclass.api.conditions import (
    Condition,
    false,
    find,
    is_true,
    meta_conditions_of,
    mirror,
    set_conditions,
    summary,
    true,
)
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, annotations_of, dig, labels_of, name_of, namespace_of
from clusterclass.sim import conditions as v1beta2
from clusterclass.sim.base import (
    ProviderController,
    add_finalizer,
    delete_if_present,
    deleting,
    has_owner,
    requeue_min,
)
from clusterclass.sim.core import cluster_conditions as cc

FINALIZER = "cluster.cluster.x-k8s.io"
ANNOTATION_OK_TO_DELETE = "runtime.cluster.x-k8s.io/ok-to-delete"

INFRASTRUCTURE_READY = "InfrastructureReady"
CONTROL_PLANE_READY = "ControlPlaneReady"
CONTROL_PLANE_INITIALIZED = "ControlPlaneInitialized"
#: the order in which descendants are deleted (workers before anything they depend on)
DELETION_ORDER = (c.KIND_MACHINE_POOL, c.KIND_MACHINE_DEPLOYMENT, c.KIND_MACHINE_SET, c.KIND_MACHINE)


def endpoint_valid(endpoint: object) -> bool:
    return isinstance(endpoint, dict) and bool(endpoint.get("host")) and bool(endpoint.get("port"))


def failure_from(obj: Obj, status: Obj) -> None:
    """Copy a referenced object's ``status.failureReason``/``failureMessage`` into ``status``."""
    reason, message = dig(obj, "status", "failureReason"), dig(obj, "status", "failureMessage")
    where = (
        f'Failure detected from referenced resource {obj["apiVersion"]}, Kind={obj["kind"]} with name "{name_of(obj)}"'
    )
    if reason:
        status["failureReason"] = reason
    if message:
        status["failureMessage"] = f"{where}: {message}"


class ClusterController(ProviderController):
    name = "cluster-controller"
    api_version = c.CLUSTER_API_VERSION
    kind = c.KIND_CLUSTER

    async def setup_watches(self) -> None:
        for kind in DELETION_ORDER:
            await self.watched_informer(c.CLUSTER_API_VERSION, kind, self._cluster_of_descendant)

    def _cluster_of_descendant(self, obj: Obj) -> list[str]:
        cluster = labels_of(obj).get(c.LABEL_CLUSTER_NAME)
        return [f"{namespace_of(obj)}/{cluster}"] if cluster else []

    async def reconcile(self, current: Obj) -> float | None:
        if await self.pause(current, current):
            return None
        cluster = json_copy(current)
        if deleting(cluster):
            return await self._delete(current, cluster)
        if add_finalizer(cluster, FINALIZER):
            await self.save(current, cluster)
            return None
        requeue: float | None = None
        status = cluster.setdefault("status", {})
        status.setdefault("infrastructureReady", False)
        status.setdefault("controlPlaneReady", False)
        spec = cluster.get("spec") or {}
        if not (
            isinstance(spec.get("topology"), dict)
            and not (spec.get("infrastructureRef") and spec.get("controlPlaneRef"))
        ):
            requeue = requeue_min(await self._infrastructure(cluster), await self._control_plane(cluster))
        self._phase(cluster)
        set_conditions(cluster, [summary(cluster, [CONTROL_PLANE_READY, INFRASTRUCTURE_READY])], self.context.now())
        await self._set_v1beta2(cluster)
        status["observedGeneration"] = dig(cluster, "metadata", "generation")
        await self.save(current, cluster)
        return requeue

    # -- v1beta2 status -------------------------------------------------------------------------------

    async def _descendants(self, cluster: Obj) -> cc.Descendants:
        namespace, name = namespace_of(cluster), name_of(cluster)
        informers = {kind: await self.manager.informer(c.CLUSTER_API_VERSION, kind) for kind in DELETION_ORDER}
        workload = self.context.workloads.get(namespace, name)
        return cc.Descendants(
            infrastructure=await self.get_ref(dig(cluster, "spec", "infrastructureRef"), namespace),
            control_plane=await self.get_ref(dig(cluster, "spec", "controlPlaneRef"), namespace),
            machine_deployments=self.in_cluster(informers[c.KIND_MACHINE_DEPLOYMENT], namespace, name),
            machine_pools=self.in_cluster(informers[c.KIND_MACHINE_POOL], namespace, name),
            machines=self.in_cluster(informers[c.KIND_MACHINE], namespace, name),
            connected=workload is not None and workload.serving,
        )

    async def _cluster_class(self, cluster: Obj) -> Obj | None:
        topology = dig(cluster, "spec", "topology")
        if not isinstance(topology, dict) or not topology.get("class"):
            return None
        classes = await self.manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS)
        return classes.get(str(topology["class"]), str(topology.get("classNamespace") or namespace_of(cluster)))

    async def _set_v1beta2(self, cluster: Obj, stage: cc.DeletionStage | None = None) -> None:
        """The Cluster's v1beta2 counters and conditions (:mod:`~clusterclass.sim.core.cluster_conditions`)."""
        found = await self._descendants(cluster)
        status = cluster.setdefault("status", {}).setdefault("v1beta2", {})
        status["controlPlane"] = cc.control_plane_counters(cluster, found.control_plane)
        status["workers"] = cc.worker_counters([*found.machine_deployments, *found.machine_pools])
        for key in ("controlPlane", "workers"):
            if not status[key]:
                del status[key]
        now = self.context.now()
        v1beta2.set_v1beta2(
            cluster,
            [
                cc.remote_connection_probe(cluster, found.connected),
                cc.infrastructure_ready(cluster, found.infrastructure),
                cc.control_plane_available(cluster, found.control_plane),
                cc.control_plane_initialized(cluster, found),
                cc.workers_available(found.machine_deployments),
                *cc.machines_conditions(found.machines, self.context.wall()),
                cc.deleting(cluster, stage),
                v1beta2.paused_condition(cluster, cluster),
            ],
            now,
        )
        available = cc.available(cluster, await self._cluster_class(cluster), meta_conditions_of(cluster))
        v1beta2.set_v1beta2(cluster, [available], now)

    async def _infrastructure(self, cluster: Obj) -> float | None:
        ref = dig(cluster, "spec", "infrastructureRef")
        if not ref:
            return None
        infra = await self.get_ref(ref, namespace_of(cluster))
        if infra is None:
            return self.timing.requeue(30)
        infra = await self.adopt(infra, cluster, name_of(cluster))
        status = cluster["status"]
        failure_from(infra, status)
        if deleting(infra):
            return None
        ready = dig(infra, "status", "ready") is True
        if ready != status.get("infrastructureReady"):
            self.events.normal(
                cluster,
                "InfrastructureReady",
                f"Cluster {name_of(cluster)} InfrastructureReady is now {str(ready).lower()}",
            )
        status["infrastructureReady"] = ready
        set_conditions(cluster, [mirror(infra, INFRASTRUCTURE_READY, "WaitingForInfrastructure")], self.context.now())
        if not ready:
            return None
        infra_endpoint = dig(infra, "spec", "controlPlaneEndpoint")
        if not endpoint_valid(dig(cluster, "spec", "controlPlaneEndpoint")) and endpoint_valid(infra_endpoint):
            cluster["spec"]["controlPlaneEndpoint"] = {"host": infra_endpoint["host"], "port": infra_endpoint["port"]}
        domains = dig(infra, "status", "failureDomains")
        if domains:
            status["failureDomains"] = json_copy(domains)
        else:
            status.pop("failureDomains", None)
        return None

    async def _control_plane(self, cluster: Obj) -> float | None:
        ref = dig(cluster, "spec", "controlPlaneRef")
        if not ref:
            return self._initialized_from_machines(cluster)
        control_plane = await self.get_ref(ref, namespace_of(cluster))
        if control_plane is None:
            return self.timing.requeue(30)
        control_plane = await self.adopt(control_plane, cluster, name_of(cluster))
        status = cluster["status"]
        failure_from(control_plane, status)
        if deleting(control_plane):
            return None
        ready = dig(control_plane, "status", "ready") is True
        if ready != status.get("controlPlaneReady"):
            self.events.normal(
                cluster,
                "ControlPlaneReady",
                f"Cluster {name_of(cluster)} ControlPlaneReady is now {str(ready).lower()}",
            )
        status["controlPlaneReady"] = ready
        changes: list[Condition | None] = [mirror(control_plane, CONTROL_PLANE_READY, "WaitingForControlPlane")]
        if not is_true(cluster, CONTROL_PLANE_INITIALIZED):
            if dig(control_plane, "status", "initialized") is True:
                changes.append(true(CONTROL_PLANE_INITIALIZED))
            else:
                changes.append(
                    false(
                        CONTROL_PLANE_INITIALIZED,
                        "WaitingForControlPlaneProviderInitialized",
                        "Info",
                        "Waiting for control plane provider to indicate the control plane has been initialized",
                    )
                )
        set_conditions(cluster, changes, self.context.now())
        return None

    def _initialized_from_machines(self, cluster: Obj) -> float | None:
        """Without a control plane object: initialized once a control-plane Machine has a nodeRef."""
        if is_true(cluster, CONTROL_PLANE_INITIALIZED):
            return None
        machines = self.manager.reader.list(
            c.CLUSTER_API_VERSION,
            c.KIND_MACHINE,
            namespace_of(cluster),
            {c.LABEL_CLUSTER_NAME: name_of(cluster), c.LABEL_CONTROL_PLANE: None},
        )
        if any(dig(machine, "status", "nodeRef") for machine in machines):
            condition = true(CONTROL_PLANE_INITIALIZED)
        else:
            condition = false(
                CONTROL_PLANE_INITIALIZED,
                "MissingNodeRef",
                "Info",
                "Waiting for the first control plane machine to have its status.nodeRef set",
            )
        set_conditions(cluster, [condition], self.context.now())
        return None

    def _phase(self, cluster: Obj) -> None:
        status = cluster.setdefault("status", {})
        spec = cluster.get("spec") or {}
        phase = "Pending"
        if spec.get("infrastructureRef"):
            phase = "Provisioning"
        if status.get("infrastructureReady") and endpoint_valid(spec.get("controlPlaneEndpoint")):
            phase = "Provisioned"
        if status.get("failureReason") or status.get("failureMessage"):
            phase = "Failed"
        if deleting(cluster):
            phase = "Deleting"
        if status.get("phase") != phase:
            self.events.normal(cluster, phase, f"Cluster {name_of(cluster)} is {phase}")
        status["phase"] = phase

    # -- deletion -------------------------------------------------------------------------------------

    async def _delete(self, current: Obj, cluster: Obj) -> float | None:
        namespace, name = namespace_of(cluster), name_of(cluster)
        if (
            self.context.runtime_sdk
            and isinstance(dig(cluster, "spec", "topology"), dict)
            and ANNOTATION_OK_TO_DELETE not in annotations_of(cluster)
        ):
            await self._set_v1beta2(
                cluster, cc.DeletionStage("WaitingForBeforeDeleteHook", "Waiting for BeforeClusterDelete hook")
            )
            await self.save(current, cluster)
            return None
        remaining: dict[str, list[str]] = {}
        has_control_plane = bool(dig(cluster, "spec", "controlPlaneRef"))
        for kind in DELETION_ORDER:
            informer = await self.manager.informer(c.CLUSTER_API_VERSION, kind)
            for obj in self.in_cluster(informer, namespace, name):
                if kind == c.KIND_MACHINE and has_control_plane and c.LABEL_CONTROL_PLANE in labels_of(obj):
                    continue
                remaining.setdefault(kind, []).append(name_of(obj))
                if has_owner(obj, c.KIND_CLUSTER, name) and not deleting(obj):
                    await delete_if_present(self.manager.client, c.CLUSTER_API_VERSION, kind, name_of(obj), namespace)
        if remaining:
            self._phase(cluster)
            lines = [
                cc.pending_names(label, remaining[kind])
                for kind, label in (
                    (c.KIND_MACHINE_DEPLOYMENT, "MachineDeployments"),
                    (c.KIND_MACHINE_SET, "MachineSets"),
                    (c.KIND_MACHINE_POOL, "MachinePools"),
                    (c.KIND_MACHINE, "Machines"),
                )
                if remaining.get(kind)
            ]
            await self._set_v1beta2(cluster, cc.DeletionStage("WaitingForWorkersDeletion", "\n".join(lines)))
            await self.save(current, cluster)
            return self.timing.requeue(5)
        for ref_field, condition, reason in (
            ("controlPlaneRef", CONTROL_PLANE_READY, "WaitingForControlPlaneDeletion"),
            ("infrastructureRef", INFRASTRUCTURE_READY, "WaitingForInfrastructureDeletion"),
        ):
            ref = dig(cluster, "spec", ref_field)
            if not ref:
                continue
            part = await self.get_ref(ref, namespace)
            if part is not None:
                gone = (
                    mirror(part, condition, "Deleting")
                    if find(part, "Ready") is not None
                    else false(condition, "Deleting", "Info")
                )
                set_conditions(cluster, [gone], self.context.now())
                if not deleting(part):
                    await delete_if_present(
                        self.manager.client, str(ref["apiVersion"]), str(ref["kind"]), str(ref["name"]), namespace
                    )
                self._phase(cluster)
                await self._set_v1beta2(cluster, cc.DeletionStage(reason, f"Waiting for {ref['kind']} to be deleted"))
                await self.save(current, cluster)
                return None
            set_conditions(cluster, [false(condition, "Deleted", "Info")], self.context.now())
        self._phase(cluster)
        await self._set_v1beta2(cluster, cc.DeletionStage("DeletionCompleted", "Deletion completed"))
        if await self.release(current, cluster, FINALIZER):
            self.events.normal(cluster, "Deleted", f"Cluster {name} has been deleted")
        return None
