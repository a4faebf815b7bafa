"""What ``clusterclass run`` runs against a real management cluster, assembled in one place.

The pieces are the library's: an :class:`~clusterclass.kube.http.HttpClient` for the kube-apiserver (its requests
counted into ``rest_client_requests_total``), the topology and ClusterClass controllers
(:class:`~clusterclass.controllers.Controllers`), optionally the simulated providers (``--sim``), the admission
webhooks (:mod:`clusterclass.webhooks`), the metrics and probe endpoints (:mod:`clusterclass.run.endpoints`) and
leader election (:mod:`~clusterclass.controllers.runtime.leaderelection`).

The order is controller-runtime's manager's:

1. the caches start and list, the webhook server and the endpoints start — every replica serves webhooks and
   probes, elected or not;
2. with ``--leader-elect``, the replica campaigns for the Lease; once it leads (or at once without leader
   election) the controllers' workers start;
3. on :meth:`ControllerProcess.stop` (SIGTERM): no new reconciles, the ones in flight finish, the Lease is
   released so a standby takes over at once, then the servers close;
4. a leader that cannot renew its Lease within the deadline stops reconciling and the process ends with
   :attr:`ControllerProcess.lost` set (the command exits 1, and the Deployment restarts it), as controller-runtime
   does.
"""

from __future__ import annotations

import asyncio
import logging
import random
from dataclasses import dataclass, field
from pathlib import Path

from clusterclass.controllers import ControllerOptions, Controllers
from clusterclass.controllers.runtime.controller import DEFAULT_WORKERS
from clusterclass.controllers.runtime.leaderelection import LeaderElectionConfig, LeaderElector, default_identity
from clusterclass.controllers.runtime.metrics import Metrics
from clusterclass.kube.http import HttpClient
from clusterclass.run.endpoints import Endpoints
from clusterclass.sim import Simulation
from clusterclass.sim.timing import Timing
from clusterclass.webhooks import AdmissionHandlers, CertificateWatcher, WebhookServer
from clusterclass.webhooks.server import DEFAULT_CERT_DIR, DEFAULT_PORT

logger = logging.getLogger(__name__)

#: upstream's lease name is ``controller-leader-election-capi``; ours must differ so both can run side by side
DEFAULT_LEADER_ELECTION_ID = "controller-leader-election-clusterclass"
IN_CLUSTER_NAMESPACE_FILE = Path("/var/run/secrets/kubernetes.io/serviceaccount/namespace")


def default_lease_namespace() -> str:
    """The Pod's namespace when running in a cluster, else ``default``."""
    try:
        return IN_CLUSTER_NAMESPACE_FILE.read_text().strip() or "default"
    except OSError:
        return "default"


@dataclass
class RunOptions:
    """The flags of ``clusterclass run`` (upstream's names in the comments)."""

    #: ``--kubeconfig``; None: ``KUBECONFIG``, then in-cluster, then ``~/.kube/config``
    kubeconfig: str | None = None
    context: str | None = None
    #: ``--leader-elect`` and its timings, ``--leader-election-id``, ``--leader-election-namespace``
    leader_elect: bool = False
    lease_duration: float = 15.0
    renew_deadline: float = 10.0
    retry_period: float = 2.0
    leader_election_id: str = DEFAULT_LEADER_ELECTION_ID
    leader_election_namespace: str | None = None
    identity: str = field(default_factory=default_identity)
    #: ``--namespace``, ``--watch-filter``, ``--sync-period`` (seconds)
    namespace: str | None = None
    watch_filter: str | None = None
    sync_period: float | None = 600.0
    #: ``--clustertopology-concurrency``, ``--clusterclass-concurrency``
    topology_workers: int = DEFAULT_WORKERS
    clusterclass_workers: int = DEFAULT_WORKERS
    #: ``--metrics-bind-addr`` and ``--health-addr`` as (host, port), None: off
    metrics_address: tuple[str, int] | None = ("127.0.0.1", 8080)
    health_address: tuple[str, int] | None = ("0.0.0.0", 9440)
    #: ``--webhook-port`` (0: no webhook server), ``--webhook-cert-dir``
    webhook_port: int = DEFAULT_PORT
    webhook_cert_dir: str = DEFAULT_CERT_DIR
    webhook_host: str = "0.0.0.0"
    #: ``--sim``: the simulated providers in this process, with these step timings
    sim: Timing | None = None
    seed: int | None = None


class ControllerProcess:
    """The client, controllers, webhooks, endpoints and leader election of one ``clusterclass run`` (module doc)."""

    def __init__(self, options: RunOptions, *, client: HttpClient | None = None) -> None:
        self.options = options
        self.metrics = Metrics()
        self._client = client
        self.client: HttpClient | None = None
        self.controllers: Controllers | None = None
        self.simulation: Simulation | None = None
        self.webhooks: WebhookServer | None = None
        self.endpoints: Endpoints | None = None
        self.elector: LeaderElector | None = None
        self._election: asyncio.Task[None] | None = None
        #: set when leadership was lost (the process must end with an error)
        self.lost = asyncio.Event()
        self._stopping = False

    async def start(self) -> ControllerProcess:
        """Caches, webhooks and endpoints; then leader election or, without it, the controllers at once."""
        options = self.options
        certificates = CertificateWatcher(options.webhook_cert_dir) if options.webhook_port else None
        if self._client is not None:
            self.client = self._client
            self.client.on_response = self.metrics.observe_request
        else:
            self.client = HttpClient.from_environment(
                options.kubeconfig, context=options.context, on_response=self.metrics.observe_request
            )
        rng = random.Random(options.seed)
        self.controllers = Controllers(
            self.client,
            ControllerOptions(
                namespace=options.namespace,
                watch_filter=options.watch_filter,
                topology_workers=options.topology_workers,
                clusterclass_workers=options.clusterclass_workers,
                sync_period=options.sync_period,
                rng=random.Random(rng.random()),
            ),
            metrics=self.metrics,
        )
        manager = self.controllers.manager
        if options.sim is not None:
            self.simulation = Simulation(manager, timing=options.sim, rng=random.Random(rng.random()))
            await self.simulation.setup()
        checks = {"informer-sync": lambda: None if manager.synced else "the caches have not listed everything yet"}
        if certificates is not None:
            # before the caches list: on a v1beta2 management cluster their v1beta1 lists go through the conversion
            # webhook this server answers (config/crd points the Cluster API CRDs at it)
            handlers = AdmissionHandlers(manager, workload=self.controllers.workload)
            self.webhooks = WebhookServer(
                handlers,
                self.metrics,
                certificates,
                host=options.webhook_host,
                port=options.webhook_port,
                conversion=lambda: manager.reader.api_versions,
            )
            await self.webhooks.start()
            webhooks = self.webhooks
            checks["webhook"] = lambda: None if webhooks.serving else "the webhook server is not serving"
        await self.controllers.start(reconcile=False)
        self.endpoints = await Endpoints(self.metrics, options.metrics_address, options.health_address, checks).start()
        if options.leader_elect:
            self.elector = LeaderElector(
                self.client,
                LeaderElectionConfig(
                    name=options.leader_election_id,
                    namespace=options.leader_election_namespace or default_lease_namespace(),
                    identity=options.identity,
                    lease_duration=options.lease_duration,
                    renew_deadline=options.renew_deadline,
                    retry_period=options.retry_period,
                ),
                on_started_leading=self._lead,
                on_stopped_leading=self._stopped_leading,
                metrics=self.metrics,
                events=manager.event_recorder("clusterclass-leader-election"),
            )
            self._election = asyncio.ensure_future(self.elector.run())
        else:
            await self._lead()
        return self

    async def _lead(self) -> None:
        assert self.controllers is not None
        logger.info("starting the controllers")
        self.controllers.manager.start_controllers()

    def _stopped_leading(self) -> None:
        if not self._stopping:
            logger.error("leader election lost: stopping")
            self.lost.set()

    @property
    def leading(self) -> bool:
        """Whether this process reconciles (always, without leader election)."""
        return self.elector.is_leader if self.elector is not None else self.controllers is not None

    async def stop(self) -> None:
        """Graceful (module doc, step 3): reconciles in flight finish, the Lease is released, servers close."""
        self._stopping = True
        if self.controllers is not None:
            await self.controllers.stop()
        if self.elector is not None:
            self.elector.stop()
        if self._election is not None:
            await asyncio.gather(self._election, return_exceptions=True)
        if self.simulation is not None:
            await self.simulation.close()
        if self.webhooks is not None:
            await self.webhooks.stop()
        if self.endpoints is not None:
            await self.endpoints.stop()
        if self.client is not None and self._client is None:
            await self.client.close()
