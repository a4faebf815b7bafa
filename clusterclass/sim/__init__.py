"""Simulated providers: Cluster API's core controllers, kubeadm and Docker, with simulated workload clusters.

Everything a ClusterClass-based Cluster needs besides the topology controller, as controllers over
the same :class:`~clusterclass.kube.client.Client` and controller runtime, so they run on the
embedded management cluster and against a real kube-apiserver alike:

- ``core/``: the Cluster, MachineDeployment, MachineSet, Machine, MachinePool and MachineHealthCheck controllers;
- ``kubeadm/``: the KubeadmControlPlane and KubeadmConfig (bootstrap) providers, with the Cluster's
  certificates and kubeconfig Secret;
- ``docker/``: DockerCluster, DockerMachine and DockerMachinePool — the quick-start's infrastructure,
  with each machine's kubelet (``kubelet``);
- ``workload``: a small API server per Cluster holding its Nodes and static Pods, served on the
  control-plane endpoint, reached through the ``<cluster>-kubeconfig`` Secret like a real one;
- ``timing``: how long each step takes (seeded jitter, zero for tests) and injected failures.

:class:`Simulation` puts them on a :class:`~clusterclass.controllers.runtime.manager.Manager` — usually
the topology controllers' own, so all share one set of informers::

    controllers = Controllers(client)
    simulation = Simulation(controllers.manager, timing=timing.NONE)
    await simulation.setup()
    await controllers.start()
"""

from __future__ import annotations

import random
from collections.abc import Callable, Iterable
from datetime import UTC, datetime

from clusterclass.api.objects import dig, namespace_of
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.kube.errors import ApiError
from clusterclass.sim.base import DEFAULT_WORKERS, ProviderController, SimContext
from clusterclass.sim.core.cluster import ClusterController
from clusterclass.sim.core.machine import MachineController
from clusterclass.sim.core.machinedeployment import MachineDeploymentController
from clusterclass.sim.core.machinehealthcheck import MachineHealthCheckController
from clusterclass.sim.core.machinepool import MachinePoolController
from clusterclass.sim.core.machineset import MachineSetController
from clusterclass.sim.docker.cluster import (
    DOCKER_CLUSTER,
    INFRASTRUCTURE_API_VERSION,
    DockerClusterController,
    owning_cluster,
)
from clusterclass.sim.docker.kubelet import KUBEADM_CONFIG_MAP
from clusterclass.sim.docker.machine import DockerMachineController
from clusterclass.sim.docker.machinepool import DockerMachinePoolController
from clusterclass.sim.kubeadm.bootstrap import KubeadmConfigController
from clusterclass.sim.kubeadm.certificates import cluster_ca
from clusterclass.sim.kubeadm.controlplane import KubeadmControlPlaneController
from clusterclass.sim.timing import NONE, Timing
from clusterclass.sim.versions import SimManager, sim_cache_version
from clusterclass.sim.workload import WorkloadClusters

#: every simulated controller, in the order they are set up
PROVIDERS: tuple[type[ProviderController], ...] = (
    ClusterController,
    MachineDeploymentController,
    MachineSetController,
    MachineController,
    MachinePoolController,
    MachineHealthCheckController,
    KubeadmControlPlaneController,
    KubeadmConfigController,
    DockerClusterController,
    DockerMachineController,
    DockerMachinePoolController,
)


class Simulation:
    """The simulated providers on ``manager`` (module doc).

    ``workloads`` holds the simulated workload clusters (default: in memory); ``timing`` the step
    durations and failures; ``rng`` the random name suffixes; ``runtime_sdk`` whether a Cluster with
    a topology waits for the topology controller's ok-to-delete before its deletion proceeds;
    ``pool_max_surge`` how a DockerMachinePool rolls (None: every replacement at once, as CAPD; 1: one
    instance at a time); ``providers`` which of :data:`PROVIDERS` run (default all): beside other providers'
    real controllers — upstream's core and kubeadm managers, say — only the ones they lack.
    """

    def __init__(
        self,
        manager: Manager,
        *,
        workloads: WorkloadClusters | None = None,
        timing: Timing | None = None,
        rng: random.Random | None = None,
        runtime_sdk: bool = True,
        workers: int = DEFAULT_WORKERS,
        wall: Callable[[], datetime] | None = None,
        pool_max_surge: int | None = None,
        providers: Iterable[type[ProviderController]] = PROVIDERS,
    ) -> None:
        self.workloads = workloads if workloads is not None else WorkloadClusters()
        if manager.informers:
            raise RuntimeError("create the Simulation before anything asks its manager for informers")
        manager.cache_version = sim_cache_version  # the providers read their informers directly (sim.versions)
        self.context = SimContext(
            SimManager(manager),
            self.workloads,
            timing=timing or NONE,
            rng=rng or random.Random(),
            runtime_sdk=runtime_sdk,
            workers=workers,
            wall=wall or (lambda: datetime.now(UTC)),
            pool_max_surge=pool_max_surge,
        )
        chosen = set(providers)
        if unknown := chosen - set(PROVIDERS):
            raise ValueError(f"not simulated providers: {sorted(p.__name__ for p in unknown)}")
        self.providers = [provider(self.context) for provider in PROVIDERS if provider in chosen]

    async def setup(self) -> Simulation:
        """Bring back the workload clusters of existing Clusters, then register every provider's informers,
        watches and controller (before the manager starts)."""
        await self.restore()
        for provider in self.providers:
            await provider.setup()
        return self

    async def restore(self) -> None:
        """Reopen the workload cluster of every ready DockerCluster, on its endpoint's port, serving again
        if its API server had come up: what a restarted simulation finds already running, so nothing
        it reads (Nodes, the endpoint) looks gone and nothing gets rewritten."""
        client = self.context.manager.client
        try:
            docker_clusters = (await client.list(INFRASTRUCTURE_API_VERSION, DOCKER_CLUSTER)).items
        except ApiError:
            return
        for docker_cluster in docker_clusters:
            cluster = owning_cluster(docker_cluster)
            port = dig(docker_cluster, "spec", "controlPlaneEndpoint", "port")
            if cluster is None or dig(docker_cluster, "status", "ready") is not True or not port:
                continue
            namespace = namespace_of(docker_cluster)
            workload = await self.workloads.open(namespace, cluster)
            try:
                self.workloads.reserve(workload, int(port))
            except OSError:
                continue  # the DockerCluster's reconcile reports it
            if workload.config_map(KUBEADM_CONFIG_MAP) is None:
                continue
            try:
                secret = await client.get("v1", "Secret", f"{cluster}-ca", namespace=namespace)
            except ApiError:
                continue
            ca = cluster_ca(secret)
            if ca is not None:
                await self.workloads.serve(workload, ca)

    async def close(self) -> None:
        """Stop serving the workload clusters and drop the providers' connections to workload clusters (call
        after the manager has stopped)."""
        for provider in self.providers:
            await provider.close()
        await self.workloads.close()

    def provider(self, name: str) -> ProviderController:
        return next(p for p in self.providers if p.name == name)


__all__ = ["PROVIDERS", "Simulation", "Timing", "WorkloadClusters"]
