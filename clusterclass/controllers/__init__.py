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

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj
from clusterclass.controllers.clusterclass import ClusterClassController, VariableDiscovery, no_discovery
from clusterclass.controllers.extensionconfig import ExtensionConfigController
from clusterclass.controllers.extensions import RuntimeSDK
from clusterclass.controllers.runtime.controller import DEFAULT_WORKERS, key_of
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.controllers.runtime.metrics import Metrics
from clusterclass.controllers.topology.cluster import ClusterTopologyController, TopologyOptions
from clusterclass.controllers.topology.hooks import HookCaller
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
    """The topology, ClusterClass, template-cleanup and ExtensionConfig controllers on one :class:`Manager`.

    ``workload`` reads workload-cluster Nodes (default: through each Cluster's kubeconfig Secret);
    ``patches`` runs ClusterClass patches (default: inline and external patches); with the Runtime SDK on
    (``options.runtime_sdk``, the default) lifecycle hooks, external patches and variable discovery call the
    Runtime Extensions registered by ExtensionConfigs (:attr:`runtime_sdk`) — ``hooks`` and ``discovery`` replace
    those calls (tests give fakes); ``metrics`` is where the controllers report (default: a registry of the
    manager's own).
    """

    def __init__(
        self,
        client: Client,
        options: ControllerOptions | None = None,
        *,
        workload: WorkloadClusters | None = None,
        patches: PatchEngine | None = None,
        hooks: HookCaller | None = None,
        discovery: VariableDiscovery | None = None,
        metrics: Metrics | None = None,
    ) -> None:
        self.options = options or ControllerOptions()
        self.manager = Manager(
            client, namespace=self.options.namespace, resync_period=self.options.sync_period, metrics=metrics
        )
        self.workload: WorkloadClusters = workload or KubeconfigWorkloadClusters(self.manager)
        #: None with the Runtime SDK off
        self.runtime_sdk = RuntimeSDK(self.manager) if self.options.runtime_sdk else None
        sdk = self.runtime_sdk
        self.topology = ClusterTopologyController(
            self.manager,
            workload=self.workload,
            options=TopologyOptions(
                workers=self.options.topology_workers, watch_filter=self.options.watch_filter, rng=self.options.rng
            ),
            patches=patches,
            hooks=(hooks or sdk) if sdk is not None else None,
            extensions=sdk,
        )
        self.clusterclass = ClusterClassController(
            self.manager,
            workers=self.options.clusterclass_workers,
            watch_filter=self.options.watch_filter,
            discovery=discovery or (sdk.discover_variables if sdk is not None else no_discovery),
        )
        self.templates = TemplateCleanup(self.manager, watch_filter=self.options.watch_filter)
        self.extension_configs = (
            ExtensionConfigController(self.manager, sdk.client, watch_filter=self.options.watch_filter)
            if sdk is not None
            else None
        )

    async def start(self, *, reconcile: bool = True) -> Controllers:
        """Set the controllers up, start the informers, wait for their first lists, start the workers.

        ``reconcile=False`` starts only the caches (a replica waiting to be elected leader); the workers start
        with :meth:`Manager.start_controllers <clusterclass.controllers.runtime.manager.Manager.start_controllers>`.
        """
        await self.clusterclass.setup()
        await self.topology.setup()
        await self.templates.setup()
        if self.runtime_sdk is not None and self.extension_configs is not None:
            await self.runtime_sdk.setup()
            await self.extension_configs.setup()
            await self._watch_extension_configs(self.runtime_sdk)
        await self.manager.start(controllers=reconcile)
        return self

    async def _watch_extension_configs(self, sdk: RuntimeSDK) -> None:
        """A change of an ExtensionConfig reconciles the ClusterClasses naming its handlers (their variables)."""
        assert sdk.extension_configs is not None
        classes = await self.manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS)

        def classes_using(extension_config: Obj) -> list[str]:
            return [key_of(cc) for cc in sdk.cluster_classes_using(extension_config, classes.list())]

        self.clusterclass.controller.watch(sdk.extension_configs, classes_using)

    async def stop(self) -> None:
        """Graceful: in-flight reconciles finish, then informers and workload-cluster clients close."""
        await self.manager.stop()
        await self.workload.close()
        if self.runtime_sdk is not None:
            await self.runtime_sdk.close()

    async def __aenter__(self) -> Controllers:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


__all__ = ["ControllerOptions", "Controllers", "Manager"]
