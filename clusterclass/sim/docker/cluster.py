"""The DockerCluster provider (providers-spec §2.9.1): the load balancer, i.e. the control-plane endpoint.

CAPD runs a haproxy container per Cluster as its control-plane endpoint. Here the "load balancer" is
the simulated workload cluster's listener on 127.0.0.1 (:mod:`clusterclass.sim.workload`): once the
Cluster controller owns the DockerCluster, the ``loadBalancer`` step opens the workload cluster,
reserves its port and, if ``spec.controlPlaneEndpoint.host`` is empty, publishes ``127.0.0.1`` and
that port as the endpoint; then ``status.ready`` and ``LoadBalancerAvailable``. The listener starts
answering when the first control-plane machine's kube-apiserver runs — and again after a restart of
the simulation, from here, once that has happened. Deleting the DockerCluster deletes the workload
cluster.
"""

from __future__ import annotations

from clusterclass.api import constants as c
from clusterclass.api.conditions import false, set_conditions, summary, true
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, dig, name_of, namespace_of
from clusterclass.sim.base import ProviderController, add_finalizer, deleting
from clusterclass.sim.docker.kubelet import KUBEADM_CONFIG_MAP
from clusterclass.sim.kubeadm.bootstrap import SECRETS_SELECTOR
from clusterclass.sim.kubeadm.certificates import cluster_ca
from clusterclass.sim.workload import LOOPBACK, WorkloadCluster

INFRASTRUCTURE_API_VERSION = "infrastructure.cluster.x-k8s.io/v1beta1"
DOCKER_CLUSTER = "DockerCluster"
FINALIZER = "dockercluster.infrastructure.cluster.x-k8s.io"
LOAD_BALANCER_AVAILABLE = "LoadBalancerAvailable"


def owning_cluster(obj: Obj) -> str | None:
    ref = next((r for r in dig(obj, "metadata", "ownerReferences") or [] if r.get("kind") == c.KIND_CLUSTER), None)
    return str(ref["name"]) if ref else None


async def serve_when_up(controller: ProviderController, workload: WorkloadCluster, cluster: Obj) -> None:
    """Start the workload cluster's listener once its API server runs (the kubeadm-config exists) and the
    Cluster's CA Secret is there to sign the serving certificate."""
    if workload.serving or workload.port is None or workload.config_map(KUBEADM_CONFIG_MAP) is None:
        return
    secrets = await controller.manager.informer("v1", "Secret", field_selector=SECRETS_SELECTOR)
    secret = secrets.get(f"{name_of(cluster)}-ca", namespace_of(cluster))
    ca = cluster_ca(secret) if secret is not None else None
    if ca is not None:
        await controller.context.workloads.serve(workload, ca)


class DockerClusterController(ProviderController):
    name = "dockercluster-controller"
    api_version = INFRASTRUCTURE_API_VERSION
    kind = DOCKER_CLUSTER

    async def setup_watches(self) -> None:
        clusters = await self.manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER)
        self.controller.watch(clusters, self._of_cluster)

    def _of_cluster(self, cluster: Obj) -> list[str]:
        ref = dig(cluster, "spec", "infrastructureRef")
        if isinstance(ref, dict) and ref.get("kind") == DOCKER_CLUSTER:
            return [f"{namespace_of(cluster)}/{ref.get('name')}"]
        return []

    async def reconcile(self, current: Obj) -> float | None:
        namespace = namespace_of(current)
        cluster_name = owning_cluster(current)
        if cluster_name is None:
            return None
        cluster = await self.cluster(namespace, cluster_name)
        if self.paused(current, cluster):
            return None
        docker_cluster = json_copy(current)
        now = self.context.now()
        if deleting(docker_cluster):
            set_conditions(docker_cluster, [false(LOAD_BALANCER_AVAILABLE, "Deleting", "Info")], now)
            set_conditions(docker_cluster, [summary(docker_cluster, [LOAD_BALANCER_AVAILABLE])], now)
            await self.context.workloads.remove(namespace, cluster_name)
            await self.release(current, docker_cluster, FINALIZER)
            return None
        if cluster is None:
            return None
        if add_finalizer(docker_cluster, FINALIZER):
            await self.save(current, docker_cluster)
            return None
        status = docker_cluster.setdefault("status", {})
        domains = dig(docker_cluster, "spec", "failureDomains")
        if domains:
            status["failureDomains"] = json_copy(domains)
        else:
            status.pop("failureDomains", None)
        requeue = await self._load_balancer(docker_cluster, cluster)
        set_conditions(
            docker_cluster,
            [summary(docker_cluster, [LOAD_BALANCER_AVAILABLE], step_counter=True)],
            self.context.now(),
        )
        await self.save(current, docker_cluster)
        return requeue

    async def _load_balancer(self, docker_cluster: Obj, cluster: Obj) -> float | None:
        uid = str(dig(docker_cluster, "metadata", "uid"))
        status = docker_cluster["status"]
        now = self.context.now()
        workload = await self.context.workloads.open(namespace_of(cluster), name_of(cluster))
        if not status.get("ready"):
            left = self.timing.remaining("loadBalancer", uid)
            if left > 0:
                return left
            if self.timing.fails(
                "loadBalancer", uid, name_of(docker_cluster), self.annotations_for_failures(docker_cluster, cluster)
            ):
                where = f"{namespace_of(docker_cluster)}/{name_of(docker_cluster)}"
                message = f"failed to create load balancer for DockerCluster {where}: simulated failure"
                set_conditions(
                    docker_cluster,
                    [false(LOAD_BALANCER_AVAILABLE, "LoadBalancerProvisioningFailed", "Warning", message)],
                    now,
                )
                return max(self.timing.wait("loadBalancer", uid), self.timing.requeue(5))
            self.timing.done("loadBalancer", uid)
        endpoint = docker_cluster.setdefault("spec", {}).setdefault("controlPlaneEndpoint", {})
        try:
            port = self.context.workloads.reserve(workload, int(endpoint.get("port") or 0))
        except OSError as err:
            message = f"cannot listen on {LOOPBACK}:{endpoint.get('port')}: {err.strerror or err}"
            set_conditions(
                docker_cluster,
                [false(LOAD_BALANCER_AVAILABLE, "LoadBalancerProvisioningFailed", "Warning", message)],
                now,
            )
            return self.timing.requeue(30)
        if not endpoint.get("host"):
            endpoint["host"] = LOOPBACK
            endpoint["port"] = port
        elif not endpoint.get("port"):
            endpoint["port"] = port
        status["ready"] = True
        set_conditions(docker_cluster, [true(LOAD_BALANCER_AVAILABLE)], now)
        await serve_when_up(self, workload, cluster)
        return None
