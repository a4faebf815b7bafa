"""The management cluster ``clusterclass up`` runs: the embedded store, its API, the controllers, the providers.

One process holds all of it. :class:`EmbeddedManagementCluster` opens the store (from the state file
when there is one), serves it over TLS for kubectl (:mod:`clusterclass.apiserver.front`), and runs
the topology and ClusterClass controllers (:class:`~clusterclass.controllers.Controllers`) and the
simulated providers (:class:`~clusterclass.sim.Simulation`) on one shared manager. The controllers
talk to the store through the in-process :class:`~clusterclass.apiserver.MemoryClient` — the same
``Client`` protocol they use against a real kube-apiserver — and reach each workload cluster through
its kubeconfig Secret over HTTPS, as on a real management cluster.
"""

from __future__ import annotations

import errno
import logging
import random

from clusterclass.api.objects import Obj
from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.apiserver.front.serving import Credentials, RunningServer, kubeconfig, start
from clusterclass.controllers import ControllerOptions, Controllers
from clusterclass.sim import Simulation
from clusterclass.sim.timing import Timing
from clusterclass.sim.workload import WorkloadClusters
from clusterclass.up.state import StateLayout

logger = logging.getLogger(__name__)


class EmbeddedManagementCluster:
    """Store, API front, controllers and simulated providers in this process (module doc).

    ``layout`` None keeps everything in memory; ``port`` None reuses the last run's port when it is
    free, else any free port; ``seed`` makes names and step jitter repeat.
    """

    def __init__(
        self,
        *,
        layout: StateLayout | None,
        timing: Timing,
        port: int | None = None,
        seed: int | None = None,
        topology_workers: int = 10,
        pool_max_surge: int | None = None,
    ) -> None:
        self.layout = layout
        self.timing = timing
        self.requested_port = port
        self.seed = seed
        self.topology_workers = topology_workers
        self.pool_max_surge = pool_max_surge
        self.store: MemoryStore | None = None
        self.client: MemoryClient | None = None
        self.server: RunningServer | None = None
        self.controllers: Controllers | None = None
        self.simulation: Simulation | None = None
        self.resumed = False

    async def start(self) -> EmbeddedManagementCluster:
        layout = self.layout
        if layout is not None:
            self.resumed = layout.exists
            layout.prepare()
            self.store = MemoryStore(state_path=layout.state_file, durability="NORMAL")
            credentials = layout.credentials()
        else:
            self.store = MemoryStore()
            credentials = Credentials.generate()
        self.server = await self._serve(credentials)
        if layout is not None:
            layout.remember_port(self.server.port)
        self.client = MemoryClient(self.store)
        rng = random.Random(self.seed)
        self.controllers = Controllers(
            self.client, ControllerOptions(rng=random.Random(rng.random()), topology_workers=self.topology_workers)
        )
        workloads = WorkloadClusters(state_dir=layout.workloads if layout is not None else None)
        self.simulation = Simulation(
            self.controllers.manager,
            workloads=workloads,
            timing=self.timing,
            rng=random.Random(rng.random()),
            pool_max_surge=self.pool_max_surge,
        )
        await self.simulation.setup()
        await self.controllers.start()
        return self

    async def _serve(self, credentials: Credentials) -> RunningServer:
        assert self.store is not None
        if self.requested_port is not None:
            return await start(self.store, port=self.requested_port, credentials=credentials)
        last = self.layout.last_port() if self.layout is not None else None
        if last:
            try:
                return await start(self.store, port=last, credentials=credentials)
            except OSError as err:
                if err.errno != errno.EADDRINUSE:
                    raise
                logger.info("port %s of the last run is taken; listening on another", last)
        return await start(self.store, port=0, credentials=credentials)

    @property
    def url(self) -> str:
        assert self.server is not None
        return self.server.url

    def kubeconfig(self) -> Obj:
        assert self.server is not None
        return kubeconfig(self.server.url, self.server.credentials)

    async def stop(self) -> None:
        """Graceful: reconciles in flight finish, watches close, the state file is flushed and closed."""
        if self.controllers is not None:
            await self.controllers.stop()
        if self.simulation is not None:
            await self.simulation.close()
        if self.server is not None:
            await self.server.stop()
        if self.client is not None:
            await self.client.close()
        if self.store is not None:
            self.store.close()

    async def __aenter__(self) -> EmbeddedManagementCluster:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


__all__ = ["EmbeddedManagementCluster"]
