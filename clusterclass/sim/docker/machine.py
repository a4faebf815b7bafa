"""The DockerMachine provider (providers-spec §2.9.2): a machine's container, its bootstrap, its providerID.

A DockerMachine acts once a Machine controls it. It waits for the Cluster's infrastructure and for
bootstrap data (a worker also for the control plane to be initialized), then "creates its container"
(``ContainerProvisioned``) and runs the bootstrap data — the ``vm`` step, ``BootstrapExecSucceeded``
(``Repeating bootstrap`` when it fails) — after which the machine's kubelet joins the workload
cluster (:mod:`.kubelet`). As CAPD does, the providerID (``docker:////<container>``) is written on
the Node and the DockerMachine only once the control plane is initialized, even for the first
control-plane machine. The container is named like the Machine (prefixed with the Cluster's name
if it is not already), or like the DockerMachine for MachinePool machines, whose bootstrap data and
version come from their MachinePool and the instance's image.

Deleting a DockerMachine stops its container: the static Pods go, the Node stays until the Machine
deletes it.
"""

from __future__ import annotations

import hashlib
import json

from clusterclass.api import constants as c
from clusterclass.api.conditions import false, find, is_true, set_conditions, summary, true
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, annotations_of, dig, labels_of, name_of, namespace_of
from clusterclass.kube.indexes import LABEL_INDEX
from clusterclass.sim.base import ProviderController, add_finalizer, controller_of, deleting
from clusterclass.sim.docker.cluster import INFRASTRUCTURE_API_VERSION, serve_when_up
from clusterclass.sim.docker.kubelet import Kubelet, address_of, kubelet_of
from clusterclass.sim.workload import WorkloadCluster

DOCKER_MACHINE = "DockerMachine"
FINALIZER = "dockermachine.infrastructure.cluster.x-k8s.io"
LABEL_POOL_NAME = c.LABEL_MACHINE_POOL_NAME
#: on a MachinePool's DockerMachine: the image and Kubernetes version its container was created with
ANNOTATION_IMAGE = "docker.sim.clusterclass.dev/image"
ANNOTATION_VERSION = "docker.sim.clusterclass.dev/version"

#: what a pool instance was built from besides its image (:mod:`clusterclass.sim.docker.machinepool`, "Rollout"): a
#: hash of the template's fields and the bootstrap data Secret; an instance without it (made before it existed) is
#: judged by its image alone
ANNOTATION_BUILD = "docker.sim.clusterclass.dev/build"


#: the infrastructure pool template's fields an instance is made from
POOL_TEMPLATE_FIELDS = ("customImage", "preLoadImages", "extraMounts")


def instance_build(docker_pool: Obj, pool: Obj) -> str:
    """The build a pool instance made now gets (:data:`ANNOTATION_BUILD`)."""
    template = dig(docker_pool, "spec", "template") or {}
    parts: Obj = {field: template.get(field) for field in POOL_TEMPLATE_FIELDS if template.get(field)}
    parts["dataSecretName"] = dig(pool, "spec", "template", "spec", "bootstrap", "dataSecretName")
    return hashlib.sha256(json.dumps(parts, sort_keys=True).encode()).hexdigest()[:12]


def is_current(instance: Obj, image: str, build: str) -> bool:
    """Whether an instance (a DockerMachine, a managed pool's Node) runs ``image`` and ``build``."""
    annotations = annotations_of(instance)
    return annotations.get(ANNOTATION_IMAGE) == image and annotations.get(ANNOTATION_BUILD, build) == build


CONTAINER_PROVISIONED = "ContainerProvisioned"
BOOTSTRAP_EXEC_SUCCEEDED = "BootstrapExecSucceeded"
CONTROL_PLANE_INITIALIZED = "ControlPlaneInitialized"
PROVIDER_ID_PREFIX = "docker:////"


def container_name(cluster: str, name: str) -> str:
    """CAPD's container name: ``name`` if it starts with the Cluster's name, else ``<cluster>-<name>``."""
    return name if name.startswith(cluster) else f"{cluster}-{name}"


class DockerMachineController(ProviderController):
    name = "dockermachine-controller"
    api_version = INFRASTRUCTURE_API_VERSION
    kind = DOCKER_MACHINE

    async def setup_watches(self) -> None:
        self.machines = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE, self._of_machine)
        self.pools = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE_POOL, self._of_pool)
        await self.watch_clusters()

    def _of_machine(self, machine: Obj) -> list[str]:
        ref = dig(machine, "spec", "infrastructureRef")
        if isinstance(ref, dict) and ref.get("kind") == DOCKER_MACHINE:
            return [f"{namespace_of(machine)}/{ref.get('name')}"]
        return []

    def _of_pool(self, pool: Obj) -> list[str]:
        assert self.informer is not None
        return [
            f"{namespace_of(m)}/{name_of(m)}"
            for m in self.informer.by_index(LABEL_INDEX, f"{LABEL_POOL_NAME}={name_of(pool)}")
            if namespace_of(m) == namespace_of(pool)
        ]

    async def reconcile(self, current: Obj) -> float | None:
        owner = controller_of(current)
        if owner is None or owner.get("kind") != c.KIND_MACHINE:
            return None
        namespace = namespace_of(current)
        machine = self.machines.get(str(owner.get("name")), namespace)
        if machine is None:
            return None
        cluster_name = labels_of(machine).get(c.LABEL_CLUSTER_NAME) or str(dig(machine, "spec", "clusterName"))
        cluster = await self.cluster(namespace, cluster_name)
        if self.paused(current, cluster):
            return None
        docker_machine = json_copy(current)
        pool_name = labels_of(docker_machine).get(LABEL_POOL_NAME)
        container = container_name(cluster_name, name_of(docker_machine) if pool_name else name_of(machine))
        workload = self.context.workloads.get(namespace, cluster_name)
        control_plane = c.LABEL_CONTROL_PLANE in labels_of(machine)
        now = self.context.now()
        uid = str(dig(docker_machine, "metadata", "uid"))
        if deleting(docker_machine):
            if workload is not None:
                await Kubelet(workload, self.timing, container, "", control_plane, uid).stop()
            set_conditions(docker_machine, [false(CONTAINER_PROVISIONED, "Deleting", "Info")], now)
            await self.release(current, docker_machine, FINALIZER)
            return None
        if cluster is None:
            return None
        if add_finalizer(docker_machine, FINALIZER):
            await self.save(current, docker_machine)
            return None
        requeue = await self._provision(docker_machine, machine, cluster, container, control_plane, workload, pool_name)
        provisioning = not deleting(docker_machine) and not dig(docker_machine, "spec", "providerID")
        set_conditions(
            docker_machine,
            [summary(docker_machine, [CONTAINER_PROVISIONED, BOOTSTRAP_EXEC_SUCCEEDED], step_counter=provisioning)],
            self.context.now(),
        )
        await self.save(current, docker_machine)
        return requeue

    def _bootstrap_source(
        self, docker_machine: Obj, machine: Obj, pool_name: str | None
    ) -> tuple[str | None, str | None]:
        """(data Secret name, Kubernetes version) the machine boots with."""
        if pool_name:
            pool = self.pools.get(pool_name, namespace_of(docker_machine))
            if pool is None:
                return None, None
            version = annotations_of(docker_machine).get(ANNOTATION_VERSION) or dig(
                pool, "spec", "template", "spec", "version"
            )
            return dig(pool, "spec", "template", "spec", "bootstrap", "dataSecretName"), version
        version = dig(machine, "spec", "version")
        custom = dig(docker_machine, "spec", "customImage")
        if custom:
            version = kubelet_of(str(custom), version)
        return dig(machine, "spec", "bootstrap", "dataSecretName"), version

    async def _provision(
        self,
        docker_machine: Obj,
        machine: Obj,
        cluster: Obj,
        container: str,
        control_plane: bool,
        workload: WorkloadCluster | None,
        pool_name: str | None,
    ) -> float | None:
        now = self.context.now()
        status = docker_machine.setdefault("status", {})
        spec = docker_machine.setdefault("spec", {})
        uid = str(dig(docker_machine, "metadata", "uid"))
        if dig(cluster, "status", "infrastructureReady") is not True:
            set_conditions(
                docker_machine, [false(CONTAINER_PROVISIONED, "WaitingForClusterInfrastructure", "Info")], now
            )
            return None
        if workload is None:
            return self.timing.requeue(5)
        data_secret, version = self._bootstrap_source(docker_machine, machine, pool_name)
        initialized = is_true(cluster, CONTROL_PLANE_INITIALIZED)
        annotations = self.annotations_for_failures(docker_machine, cluster)

        def fails(step: str) -> bool:
            return self.timing.fails(step, uid, name_of(docker_machine), annotations)

        kubelet = Kubelet(
            workload, self.timing, container, str(version or ""), control_plane, uid, fails, spec.get("providerID")
        )
        if spec.get("providerID"):
            # the providerID is set only once the bootstrap ran: it says so even when the status write that said it
            # was lost (spec and status are two writes; a conflict on the second left the machine without its kubelet)
            status["ready"] = True
            set_conditions(docker_machine, [true(CONTAINER_PROVISIONED), true(BOOTSTRAP_EXEC_SUCCEEDED)], now)
            self._addresses(status, container)
            return await kubelet.run(now)
        if not data_secret:
            reason = (
                "WaitingForControlPlaneAvailable"
                if not control_plane and not initialized
                else "WaitingForBootstrapData"
            )
            set_conditions(docker_machine, [false(CONTAINER_PROVISIONED, reason, "Info")], now)
            return None
        set_conditions(docker_machine, [true(CONTAINER_PROVISIONED)], now)
        if find(docker_machine, BOOTSTRAP_EXEC_SUCCEEDED) is None:
            set_conditions(docker_machine, [false(BOOTSTRAP_EXEC_SUCCEEDED, "Bootstrapping", "Info")], now)
        # bootstrapped once BootstrapExecSucceeded is True (CAPD v1.6 also kept spec.bootstrapped, gone in v1.14)
        if not is_true(docker_machine, BOOTSTRAP_EXEC_SUCCEEDED):
            left = self.timing.remaining("vm", uid)
            if left > 0:
                return left
            if fails("vm"):
                set_conditions(
                    docker_machine,
                    [false(BOOTSTRAP_EXEC_SUCCEEDED, "BootstrapFailed", "Warning", "Repeating bootstrap")],
                    now,
                )
                self.events.warning(
                    docker_machine, "BootstrapFailed", f"Bootstrapping {container} failed: simulated failure"
                )
                return max(self.timing.wait("vm", uid), self.timing.requeue(5))
            self.timing.done("vm", uid)
        set_conditions(docker_machine, [true(BOOTSTRAP_EXEC_SUCCEEDED)], now)
        self._addresses(status, container)
        waiting = await kubelet.run(now)
        await serve_when_up(self, workload, cluster)
        if dig(cluster, "spec", "controlPlaneRef") and not initialized:
            return min(x for x in (waiting, self.timing.requeue(15)) if x is not None)
        provider_id = PROVIDER_ID_PREFIX + container
        node = workload.node(container)
        if node is not None and dig(node, "spec", "providerID") != provider_id:
            await workload.client.patch(
                "v1", "Node", container, {"spec": {"providerID": provider_id}}, field_manager="manager"
            )
        spec["providerID"] = provider_id
        status["ready"] = True
        return waiting

    @staticmethod
    def _addresses(status: Obj, container: str) -> None:
        address = address_of(container)
        status["addresses"] = [
            {"type": "Hostname", "address": container},
            {"type": "InternalIP", "address": address},
            {"type": "ExternalIP", "address": address},
        ]
