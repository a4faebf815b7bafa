"""The controllers: the topology (Cluster) controller and the ClusterClass controller, on a small runtime.

``runtime/`` is the glue (manager, controllers, predicates, events, logs); ``workload`` reads the Nodes
of a Cluster's workload cluster; ``topology/`` reconciles Clusters with a topology (``cluster``), by
server-side apply (``structuredmerge``), doing the steps of :mod:`clusterclass.topology.reconcile`
(``state``), and deletes MachineDeployment templates nothing uses (``templates``); ``clusterclass``
reconciles ClusterClasses. Everything talks to the management cluster through one
:class:`~clusterclass.kube.client.Client`, so the same code runs against the embedded API server and
against a real kube-apiserver.

Start them from Python with :class:`Controllers`::

    from clusterclass.apiserver import MemoryClient, MemoryStore
    from clusterclass.controllers import Controllers

    async with Controllers(MemoryClient(MemoryStore())) as running:
        ...  # apply a ClusterClass and a Cluster; running.topology.controller.stats counts reconciles
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from clusterclass.controllers.clusterclass import ClusterClassController, VariableDiscovery, no_discovery
from clusterclass.controllers.runtime.controller import DEFAULT_WORKERS
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.controllers.runtime.metrics import Metrics
from clusterclass.controllers.topology.cluster import ClusterTopologyController, TopologyOptions
from clusterclass.controllers.topology.hooks import HookCaller, NoExtensions
from clusterclass.controllers.topology.templates import TemplateCleanup
from clusterclass.controllers.workload import KubeconfigWorkloadClusters, WorkloadClusters
from clusterclass.kube.client import Client
from clusterclass.topology.patches import PatchEngine

#: controller-runtime's and Cluster API's default ``--sync-period``: every object is reconciled this often
DEFAULT_SYNC_PERIOD = 600.0


@dataclass
class ControllerOptions:
    """The knobs of ``clusterclass run`` that reach the controllers (upstream's flag names in comments)."""

    #: ``--namespace``: watch one namespace only
    namespace: str | None = None
    #: ``--watch-filter``: only objects labelled ``cluster.x-k8s.io/watch-filter=<value>``
    watch_filter: str | None = None
    #: ``--clustertopology-concurrency``
    topology_workers: int = DEFAULT_WORKERS
    #: ``--clusterclass-concurrency``
    clusterclass_workers: int = DEFAULT_WORKERS
    #: ``--sync-period`` in seconds (None: never resync)
    sync_period: float | None = DEFAULT_SYNC_PERIOD
    #: where random name suffixes come from
    rng: random.Random = field(default_factory=random.Random)
    #: the ``RuntimeSDK`` feature gate: lifecycle hooks are called (on by default, DECISIONS.md)
    runtime_sdk: bool = True


class Controllers:
    """The topology, ClusterClass and template-cleanup controllers on one :class:`Manager`.

    ``workload`` reads workload-cluster Nodes (default: through each Cluster's kubeconfig Secret);
    ``patches`` runs ClusterClass patches (default: inline patches); ``hooks`` calls lifecycle hooks
    (default: no extension registered, nothing ever blocks; none at all with ``runtime_sdk=False``);
    ``discovery`` discovers variables of external patches (default: none); ``metrics`` is where the controllers
    report (default: a registry of the manager's own).
    """

    def __init__(
        self,
        client: Client,
        options: ControllerOptions | None = None,
        *,
        workload: WorkloadClusters | None = None,
        patches: PatchEngine | None = None,
        hooks: HookCaller | None = None,
        discovery: VariableDiscovery = no_discovery,
        metrics: Metrics | None = None,
    ) -> None:
        self.options = options or ControllerOptions()
        self.manager = Manager(
            client, namespace=self.options.namespace, resync_period=self.options.sync_period, metrics=metrics
        )
        self.workload: WorkloadClusters = workload or KubeconfigWorkloadClusters(self.manager)
        self.topology = ClusterTopologyController(
            self.manager,
            workload=self.workload,
            options=TopologyOptions(
                workers=self.options.topology_workers, watch_filter=self.options.watch_filter, rng=self.options.rng
            ),
            patches=patches,
            hooks=(hooks or NoExtensions()) if self.options.runtime_sdk else None,
        )
        self.clusterclass = ClusterClassController(
            self.manager,
            workers=self.options.clusterclass_workers,
            watch_filter=self.options.watch_filter,
            discovery=discovery,
        )
        self.templates = TemplateCleanup(self.manager, watch_filter=self.options.watch_filter)

    async def start(self, *, reconcile: bool = True) -> Controllers:
        """Set the controllers up, start the informers, wait for their first lists, start the workers.

        ``reconcile=False`` starts only the caches (a replica waiting to be elected leader); the workers start
        with :meth:`Manager.start_controllers <clusterclass.controllers.runtime.manager.Manager.start_controllers>`.
        """
        await self.clusterclass.setup()
        await self.topology.setup()
        await self.templates.setup()
        await self.manager.start(controllers=reconcile)
        return self

    async def stop(self) -> None:
        """Graceful: in-flight reconciles finish, then informers and workload-cluster clients close."""
        await self.manager.stop()
        await self.workload.close()

    async def __aenter__(self) -> Controllers:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


__all__ = ["ControllerOptions", "Controllers", "Manager"]
