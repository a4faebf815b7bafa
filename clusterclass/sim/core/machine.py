"""The core Machine controller (providers-spec §2.5): bootstrap, infrastructure, the Node, phases, deletion.

A Machine adopts its bootstrap config and infrastructure machine (it becomes their controller and
drops the ownerReference of whoever cloned them), waits for the config's data Secret and copies its
name into ``spec.bootstrap.dataSecretName``, waits for the infrastructure to be ready and copies its
``spec.providerID`` and addresses, then finds the workload-cluster Node with that providerID, sets
``status.nodeRef`` once and ``status.nodeInfo`` every time, labels and annotates the Node as Cluster API
does and removes its ``node.cluster.x-k8s.io/uninitialized`` taint. ``NodeHealthy`` reports the
Node's conditions; ``Ready`` summarises infrastructure, bootstrap and health (with "N of 2 completed"
while provisioning). MachinePool Machines have no bootstrap config, so their phases go
``Pending`` → ``Provisioned`` → ``Running``.

Deleting a Machine runs the pre-drain hooks, drains (instantly: a simulated workload cluster runs no
Pods), runs the pre-terminate hooks, deletes the infrastructure machine and waits until it is gone,
then the bootstrap config, then the Node, and only then removes the finalizer.
"""

from __future__ import annotations

from clusterclass.api import constants as c
from clusterclass.api.conditions import (
    READY,
    Condition,
    MetaCondition,
    false,
    find,
    meta_conditions_of,
    mirror,
    set_conditions,
    summary,
    true,
)
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, annotations_of, dig, labels_of, name_of, namespace_of
from clusterclass.errors import ClusterClassError
from clusterclass.kube.indexes import LABEL_INDEX
from clusterclass.sim import conditions as v1beta2
from clusterclass.sim.base import (
    ProviderController,
    add_finalizer,
    controller_of,
    delete_if_present,
    deleting,
    ensure_owner,
    requeue_min,
    set_label,
)
from clusterclass.sim.core import machine_conditions as mc
from clusterclass.sim.core.cluster import failure_from
from clusterclass.sim.core.rollout import template_differences
from clusterclass.sim.workload import WorkloadCluster

FINALIZER = "machine.cluster.x-k8s.io"
PROVIDER_ID_INDEX = "spec.providerID"

BOOTSTRAP_READY = "BootstrapReady"
INFRASTRUCTURE_READY = "InfrastructureReady"
NODE_HEALTHY = "NodeHealthy"
HEALTH_CHECK_SUCCEEDED = "HealthCheckSucceeded"
OWNER_REMEDIATED = "OwnerRemediated"
DRAINING_SUCCEEDED = "DrainingSucceeded"
VOLUME_DETACH_SUCCEEDED = "VolumeDetachSucceeded"
PRE_DRAIN_HOOK_SUCCEEDED = "PreDrainDeleteHookSucceeded"
PRE_TERMINATE_HOOK_SUCCEEDED = "PreTerminateDeleteHookSucceeded"

PRE_DRAIN_HOOK_PREFIX = "pre-drain.delete.hook.machine.cluster.x-k8s.io"
PRE_TERMINATE_HOOK_PREFIX = "pre-terminate.delete.hook.machine.cluster.x-k8s.io"
EXCLUDE_DRAINING = "machine.cluster.x-k8s.io/exclude-node-draining"
UNINITIALIZED_TAINT = "node.cluster.x-k8s.io/uninitialized"
ANNOTATION_MACHINE = "cluster.x-k8s.io/machine"
ANNOTATION_OWNER_KIND = "cluster.x-k8s.io/owner-kind"
ANNOTATION_OWNER_NAME = "cluster.x-k8s.io/owner-name"
ANNOTATION_LABELS_FROM_MACHINE = "cluster.x-k8s.io/labels-from-machine"
#: label domains a Machine's labels are synced to its Node from (with their subdomains)
NODE_LABEL_DOMAINS = ("node-role.kubernetes.io", "node-restriction.kubernetes.io", "node.cluster.x-k8s.io")
NODE_PRESSURES = ("MemoryPressure", "DiskPressure", "PIDPressure")


class MachineError(ClusterClassError):
    pass


def _provider_id(machine: Obj) -> list[str]:
    found = dig(machine, "spec", "providerID")
    return [found] if isinstance(found, str) and found else []


def synced_label(key: str) -> bool:
    domain = key.split("/", 1)[0] if "/" in key else ""
    return any(domain == d or domain.endswith("." + d) for d in NODE_LABEL_DOMAINS)


def node_health(node: Obj) -> Condition:
    """``NodeHealthy`` from a Node's conditions (Ready, and the memory, disk and PID pressures)."""
    conditions = {str(x.get("type")): x for x in dig(node, "status", "conditions") or [] if isinstance(x, dict)}
    failing = []
    unknown = 0
    for type_ in (READY, *NODE_PRESSURES):
        found = conditions.get(type_)
        status = found.get("status") if found else "Unknown"
        if status == "Unknown":
            unknown += 1
        elif (type_ == READY) != (status == "True"):
            failing.append(f"Node condition {type_} is {status}.")
    if failing:
        return false(NODE_HEALTHY, "NodeConditionsFailed", "Warning", " ".join(failing))
    if unknown == 1 + len(NODE_PRESSURES):
        return Condition(NODE_HEALTHY, "Unknown", "NodeConditionsFailed", "Node conditions are unknown.")
    return true(NODE_HEALTHY)


def node_ready_since(node: Obj | None) -> str | None:
    """When a Node's Ready condition last turned True (None: it is not Ready)."""
    if node is None:
        return None
    ready = find(node, READY)
    if ready is None or ready.get("status") != "True":
        return None
    return str(ready.get("lastTransitionTime") or "")


class MachineController(ProviderController):
    name = "machine-controller"
    api_version = c.CLUSTER_API_VERSION
    kind = c.KIND_MACHINE

    async def setup_watches(self) -> None:
        assert self.informer is not None
        self.informer.add_index(PROVIDER_ID_INDEX, _provider_id)
        await self.watch_clusters()
        self.context.workloads.add_handler("Node", self._node_changed)

    def _node_changed(self, workload: WorkloadCluster, node: Obj) -> None:
        assert self.informer is not None
        provider_id = dig(node, "spec", "providerID")
        if not provider_id:
            return
        for machine in self.informer.by_index(PROVIDER_ID_INDEX, provider_id):
            if namespace_of(machine) == workload.namespace:
                self.controller.enqueue(f"{namespace_of(machine)}/{name_of(machine)}")

    async def reconcile(self, current: Obj) -> float | None:
        namespace = namespace_of(current)
        cluster_name = dig(current, "spec", "clusterName")
        cluster = await self.cluster(namespace, cluster_name)
        if await self.pause(current, cluster):
            return None
        machine = json_copy(current)
        set_label(machine, c.LABEL_CLUSTER_NAME, str(cluster_name))
        if deleting(machine):
            return await self._delete(current, machine, cluster)
        if cluster is None:
            return None
        if add_finalizer(machine, FINALIZER):
            await self.save(current, machine)
            return None
        labels = labels_of(machine)
        if controller_of(machine) is None and c.LABEL_MACHINE_SET_NAME not in labels:
            ensure_owner(machine, cluster)
        status = machine.setdefault("status", {})
        status.setdefault("bootstrapReady", False)
        status.setdefault("infrastructureReady", False)
        errors: list[str] = []
        requeue: float | None = None
        # a failing phase stops the later ones (providers-spec 2.5.1); the MachinePool runs them all instead
        for phase in (self._bootstrap, self._infrastructure, self._node):
            try:
                requeue = requeue_min(requeue, await phase(machine, cluster))
            except MachineError as err:
                errors.append(str(err))
                break
        self._finish(machine)
        requeue = requeue_min(requeue, await self._set_v1beta2(machine, cluster))
        if not errors:
            status["observedGeneration"] = dig(machine, "metadata", "generation")
        await self.save(current, machine)
        if errors:
            raise MachineError("; ".join(errors))
        return requeue

    # -- v1beta2 conditions ---------------------------------------------------------------------------

    async def _set_v1beta2(
        self, machine: Obj, cluster: Obj | None, stage: mc.DeletionStage | None = None
    ) -> float | None:
        """The Machine's v1beta2 conditions (:mod:`~clusterclass.sim.core.machine_conditions`); the seconds until
        it may turn Available, if it waits for ``minReadySeconds``."""
        now = self.context.now()
        namespace = namespace_of(machine)
        config_ref = dig(machine, "spec", "bootstrap", "configRef")
        config = (
            mc.Referenced(str(config_ref.get("kind") or ""), await self.get_ref(config_ref, namespace))
            if isinstance(config_ref, dict) and config_ref.get("name")
            else None
        )
        infra_ref = dig(machine, "spec", "infrastructureRef") or {}
        infra = mc.Referenced(str(infra_ref.get("kind") or ""), await self.get_ref(infra_ref, namespace))
        changes: list[MetaCondition | None] = [
            mc.bootstrap_config_ready(machine, config),
            mc.infrastructure_ready(machine, infra),
            mc.deleting(machine, stage),
            MetaCondition(mc.UPDATING, "False", "NotUpdating"),
            await self._up_to_date(machine),
            v1beta2.paused_condition(machine, cluster),
        ]
        if cluster is not None:
            workload = self.context.workloads.get(namespace, name_of(cluster))
            provider_id = dig(machine, "spec", "providerID")
            nodes = workload.nodes_with_provider_id(provider_id) if workload is not None and provider_id else []
            changes += mc.node_conditions(
                machine,
                cluster,
                nodes[0] if nodes else None,
                connected=workload is not None and workload.serving,
                infra_kind=infra.kind,
            )
        v1beta2.set_v1beta2(machine, changes, now)
        v1beta2.set_v1beta2(machine, [mc.ready(machine, meta_conditions_of(machine))], now)
        available, wait = mc.available(machine, meta_conditions_of(machine), self.context.wall())
        v1beta2.set_v1beta2(machine, [available], now)
        return wait  # minReadySeconds are real seconds (the Machine's own setting), not one of upstream's periods

    async def _up_to_date(self, machine: Obj) -> MetaCondition | None:
        """``UpToDate`` for a MachineDeployment's Machine (its MachineSet's template against the deployment's) or
        a MachinePool's (up to date unless deleting); a control-plane Machine's is its KubeadmControlPlane's word."""
        namespace = namespace_of(machine)
        labels = labels_of(machine)
        if c.LABEL_MACHINE_POOL_NAME in labels:
            if dig(machine, "metadata", "deletionTimestamp"):
                return MetaCondition(v1beta2.UP_TO_DATE, "False", "NotUpToDate", "Machine is being deleted")
            return mc.up_to_date([])
        owner = controller_of(machine)
        if owner is None or owner.get("kind") != c.KIND_MACHINE_SET:
            return None
        machine_set = await self.get_ref({**owner, "namespace": namespace}, namespace, self._machines_of_set)
        deployment_ref = controller_of(machine_set) if machine_set is not None else None
        if machine_set is None or deployment_ref is None or deployment_ref.get("kind") != c.KIND_MACHINE_DEPLOYMENT:
            return None
        deployment = await self.get_ref(deployment_ref, namespace, self._machines_of_deployment)
        if deployment is None:
            return None
        differences = template_differences(
            dig(machine_set, "spec", "template") or {}, dig(deployment, "spec", "template") or {}
        )
        return mc.up_to_date(differences)

    def _machines_of_set(self, machine_set: Obj) -> list[str]:
        return self._labelled(machine_set, c.LABEL_MACHINE_SET_NAME)

    def _machines_of_deployment(self, deployment: Obj) -> list[str]:
        return self._labelled(deployment, c.LABEL_MACHINE_DEPLOYMENT_NAME)

    def _labelled(self, owner: Obj, label: str) -> list[str]:
        assert self.informer is not None
        namespace = namespace_of(owner)
        return [
            f"{namespace}/{name_of(m)}"
            for m in self.informer.by_index(LABEL_INDEX, f"{label}={name_of(owner)}")
            if namespace_of(m) == namespace
        ]

    def _finish(self, machine: Obj) -> None:
        provisioning = not deleting(machine) and not dig(machine, "spec", "providerID")
        ready = summary(
            machine,
            [INFRASTRUCTURE_READY, BOOTSTRAP_READY, HEALTH_CHECK_SUCCEEDED, OWNER_REMEDIATED],
            step_counter=provisioning,
            step_counter_if_only=[BOOTSTRAP_READY, INFRASTRUCTURE_READY],
        )
        set_conditions(machine, [ready], self.context.now())
        self._phase(machine)

    def _phase(self, machine: Obj) -> None:
        status = machine.setdefault("status", {})
        phase = "Pending"
        if status.get("bootstrapReady") and not status.get("infrastructureReady"):
            phase = "Provisioning"
        if dig(machine, "spec", "providerID"):
            phase = "Provisioned"
        if status.get("nodeRef") and status.get("infrastructureReady"):
            phase = "Running"
        if status.get("failureReason") or status.get("failureMessage"):
            phase = "Failed"
        if deleting(machine):
            phase = "Deleting"
        if status.get("phase") != phase:
            status["phase"] = phase
            status["lastUpdated"] = self.context.now()

    # -- the phases -----------------------------------------------------------------------------------

    async def _bootstrap(self, machine: Obj, cluster: Obj) -> float | None:
        bootstrap = machine["spec"].setdefault("bootstrap", {})
        ref = bootstrap.get("configRef")
        status = machine["status"]
        if not ref:
            if bootstrap.get("dataSecretName"):
                status["bootstrapReady"] = True
                set_conditions(machine, [true(BOOTSTRAP_READY)], self.context.now())
            return None
        config = await self.get_ref(ref, namespace_of(machine))
        if config is None:
            return self.timing.requeue(30)
        config = await self.adopt(config, machine, name_of(cluster))
        failure_from(config, status)
        if bootstrap.get("dataSecretName"):
            status["bootstrapReady"] = True
            set_conditions(machine, [true(BOOTSTRAP_READY)], self.context.now())
            return None
        set_conditions(machine, [mirror(config, BOOTSTRAP_READY, "WaitingForDataSecret")], self.context.now())
        if dig(config, "status", "ready") is not True:
            return None
        secret = dig(config, "status", "dataSecretName")
        if not secret:
            raise MachineError(f"retrieved empty dataSecretName from bootstrap provider for Machine {name_of(machine)}")
        bootstrap["dataSecretName"] = secret
        status["bootstrapReady"] = True
        return None

    async def _infrastructure(self, machine: Obj, cluster: Obj) -> float | None:
        ref = dig(machine, "spec", "infrastructureRef")
        status = machine["status"]
        infra = await self.get_ref(ref, namespace_of(machine))
        if infra is None:
            if status.get("infrastructureReady"):
                status["failureReason"] = "InvalidConfiguration"
                status["failureMessage"] = (
                    f"Machine infrastructure resource {ref.get('apiVersion')}, Kind={ref.get('kind')} with name "
                    f'"{ref.get("name")}" has been deleted after being ready'
                )
                raise MachineError(status["failureMessage"])
            return self.timing.requeue(30)
        infra = await self.adopt(infra, machine, name_of(cluster))
        failure_from(infra, status)
        ready = dig(infra, "status", "ready") is True
        status["infrastructureReady"] = ready
        set_conditions(machine, [mirror(infra, INFRASTRUCTURE_READY, "WaitingForInfrastructure")], self.context.now())
        if not ready:
            return None
        provider_id = dig(infra, "spec", "providerID")
        if not provider_id:
            raise MachineError(
                f"retrieved empty spec.providerID from infrastructure provider for Machine {name_of(machine)}"
            )
        addresses = dig(infra, "status", "addresses")
        if addresses:
            status["addresses"] = json_copy(addresses)
        domain = dig(infra, "spec", "failureDomain")
        if domain:
            machine["spec"]["failureDomain"] = domain
        machine["spec"]["providerID"] = provider_id
        return None

    async def _node(self, machine: Obj, cluster: Obj) -> float | None:
        provider_id = dig(machine, "spec", "providerID")
        status = machine["status"]
        now = self.context.now()
        if not provider_id:
            set_conditions(machine, [false(NODE_HEALTHY, "WaitingForNodeRef", "Info")], now)
            return None
        workload = self.context.workloads.get(namespace_of(machine), name_of(cluster))
        nodes = workload.nodes_with_provider_id(provider_id) if workload is not None else []
        if not nodes:
            if status.get("nodeRef"):
                set_conditions(machine, [false(NODE_HEALTHY, "NodeNotFound", "Error")], now)
                raise MachineError(f"no matching Node for Machine {name_of(machine)} with providerID {provider_id}")
            set_conditions(machine, [false(NODE_HEALTHY, "NodeProvisioning", "Warning")], now)
            return None
        assert workload is not None
        node = nodes[0]
        if not status.get("nodeRef"):
            status["nodeRef"] = {
                "kind": "Node",
                "apiVersion": "v1",
                "name": name_of(node),
                "uid": dig(node, "metadata", "uid"),
            }
            self.events.normal(machine, "SuccessfulSetNodeRef", name_of(node))
        info = dig(node, "status", "nodeInfo")
        if info:
            status["nodeInfo"] = json_copy(info)
        await self._label_node(workload, node, machine, cluster)
        set_conditions(machine, [node_health(node)], now)
        return None

    async def _label_node(self, workload: WorkloadCluster, node: Obj, machine: Obj, cluster: Obj) -> None:
        owner = controller_of(machine)
        annotations = {
            c.ANNOTATION_NODE_CLUSTER_NAME: name_of(cluster),
            c.ANNOTATION_NODE_CLUSTER_NAMESPACE: namespace_of(cluster),
            ANNOTATION_MACHINE: name_of(machine),
        }
        if owner is not None:
            annotations[ANNOTATION_OWNER_KIND] = str(owner.get("kind"))
            annotations[ANNOTATION_OWNER_NAME] = str(owner.get("name"))
        synced = {key: value for key, value in labels_of(machine).items() if synced_label(key)}
        if synced:
            annotations[ANNOTATION_LABELS_FROM_MACHINE] = ",".join(sorted(synced))
        patch: Obj = {}
        current_annotations = annotations_of(node)
        wanted_annotations = {k: v for k, v in annotations.items() if current_annotations.get(k) != v}
        if wanted_annotations:
            patch.setdefault("metadata", {})["annotations"] = wanted_annotations
        current_labels = labels_of(node)
        wanted_labels = {k: v for k, v in synced.items() if current_labels.get(k) != v}
        if wanted_labels:
            patch.setdefault("metadata", {})["labels"] = wanted_labels
        taints = dig(node, "spec", "taints") or []
        kept = [t for t in taints if t.get("key") != UNINITIALIZED_TAINT]
        if len(kept) != len(taints):
            patch["spec"] = {"taints": kept or None}
        if patch:
            await workload.client.patch("v1", "Node", name_of(node), patch, field_manager="manager")

    # -- deletion -------------------------------------------------------------------------------------

    async def _delete(self, current: Obj, machine: Obj, cluster: Obj | None) -> float | None:
        namespace = namespace_of(machine)
        status = machine.setdefault("status", {})
        now = self.context.now()
        self._phase(machine)
        node_ref = status.get("nodeRef")
        delete_node = (
            cluster is not None and not deleting(cluster) and bool(node_ref) and not self._last_control_plane(machine)
        )
        annotations = annotations_of(machine)
        if delete_node:
            hooks = sorted(key for key in annotations if key.startswith(PRE_DRAIN_HOOK_PREFIX))
            if hooks:
                set_conditions(machine, [false(PRE_DRAIN_HOOK_SUCCEEDED, "WaitingExternalHook", "Info")], now)
                stage = mc.DeletionStage(
                    "WaitingForPreDrainHook", f"Waiting for pre-drain hooks to succeed (hooks: {','.join(hooks)})"
                )
                await self._set_v1beta2(machine, cluster, stage)
                await self.save(current, machine)
                return None
            set_conditions(machine, [true(PRE_DRAIN_HOOK_SUCCEEDED)], now)
            if EXCLUDE_DRAINING not in annotations:
                set_conditions(machine, [true(DRAINING_SUCCEEDED)], now)
            set_conditions(machine, [true(VOLUME_DETACH_SUCCEEDED)], now)
        hooks = sorted(key for key in annotations if key.startswith(PRE_TERMINATE_HOOK_PREFIX))
        if hooks:
            set_conditions(machine, [false(PRE_TERMINATE_HOOK_SUCCEEDED, "WaitingExternalHook", "Info")], now)
            stage = mc.DeletionStage(
                "WaitingForPreTerminateHook", f"Waiting for pre-terminate hooks to succeed (hooks: {','.join(hooks)})"
            )
            await self._set_v1beta2(machine, cluster, stage)
            await self.save(current, machine)
            return None
        set_conditions(machine, [true(PRE_TERMINATE_HOOK_SUCCEEDED), false(NODE_HEALTHY, "Deleting", "Info")], now)
        self._finish(machine)
        parts = (
            (dig(machine, "spec", "infrastructureRef"), "WaitingForInfrastructureDeletion"),
            (dig(machine, "spec", "bootstrap", "configRef"), "WaitingForBootstrapDeletion"),
        )
        for ref, reason in parts:
            if not isinstance(ref, dict) or not ref.get("name"):
                continue
            found = await self.get_ref(ref, namespace)
            if found is not None:
                if not deleting(found):
                    await delete_if_present(
                        self.manager.client, str(ref["apiVersion"]), str(ref["kind"]), str(ref["name"]), namespace
                    )
                stage = mc.DeletionStage(reason, f"Waiting for {ref['kind']} to be deleted")
                await self._set_v1beta2(machine, cluster, stage)
                await self.save(current, machine)
                return None
        if delete_node and cluster is not None:
            workload = self.context.workloads.get(namespace, name_of(cluster))
            if workload is not None:
                await delete_if_present(workload.client, "v1", "Node", str(node_ref["name"]), None)
        await self._set_v1beta2(machine, cluster, mc.DeletionStage("DeletionCompleted", "Deletion completed"))
        await self.release(current, machine, FINALIZER)
        return None

    def _last_control_plane(self, machine: Obj) -> bool:
        """Whether this is the last control-plane Machine of its Cluster (its Node stays)."""
        if c.LABEL_CONTROL_PLANE not in labels_of(machine):
            return False
        assert self.informer is not None
        cluster = labels_of(machine).get(c.LABEL_CLUSTER_NAME, "")
        others = [
            m
            for m in self.in_cluster(self.informer, namespace_of(machine), cluster)
            if c.LABEL_CONTROL_PLANE in labels_of(m) and name_of(m) != name_of(machine) and not deleting(m)
        ]
        return not others
