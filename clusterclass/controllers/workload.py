"""Reading the Nodes of a Cluster's workload cluster: upstream's "cluster cache", behind one small interface.

MachinePool upgrade detection (spec §4.3) compares the kubelet version of each Node in a MachinePool's
``status.nodeRefs`` with the pool's version. Those Nodes live in the *workload* cluster, not the
management cluster. The topology pipeline reads them synchronously through the
:class:`~clusterclass.topology.reader.NodeReader` protocol; :class:`WorkloadClusters` adds what a
controller needs around it: :meth:`~WorkloadClusters.prepare` makes the Nodes of one Cluster readable
before a reconcile runs the pipeline (and fails with a clear error when they cannot be), and
:meth:`~WorkloadClusters.forget` releases what a Cluster that is gone held.

Two implementations:

- :class:`KubeconfigWorkloadClusters` for a real management cluster: it reads the Cluster's
  ``<cluster>-kubeconfig`` Secret (key ``value``, as Cluster API writes it) from the manager's cache of
  ``cluster.x-k8s.io/secret`` Secrets, keeps one :class:`~clusterclass.kube.http.HttpClient` and one Node
  informer per workload cluster, reused across reconciles, rebuilt when the Secret changes, closed by
  ``forget``. Nodes are read from that informer's cache, so a converged reconcile asks the workload
  cluster nothing.
- :class:`StaticWorkloadClusters` for tests: Nodes given in memory.

Per DECISIONS.md the pipeline asks only for pools with ``status.nodeRefs``, so a new Cluster whose
workload API server is not up yet reconciles (upstream v1.11 behaviour).
"""

from __future__ import annotations

import asyncio
import base64
import logging
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol

import yaml

from clusterclass.api.objects import Obj, dig, name_of, namespace_of
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.kube.client import Client
from clusterclass.kube.http import HttpClient
from clusterclass.kube.http.kubeconfig import Config, parse_kubeconfig
from clusterclass.kube.informer import Informer
from clusterclass.topology.reader import NodeReadError
from clusterclass.topology.shim import CLUSTER_SECRET_TYPE
from clusterclass.yamlio import SAFE_LOADER

logger = logging.getLogger(__name__)

#: Cluster API's name for a Cluster's admin kubeconfig Secret, and the key holding the kubeconfig
KUBECONFIG_SUFFIX = "-kubeconfig"
KUBECONFIG_KEY = "value"
#: how long a reconcile waits for a new workload cluster's first list of Nodes
CONNECT_TIMEOUT = 10.0


def cluster_key(cluster: Obj) -> tuple[str, str]:
    return namespace_of(cluster), name_of(cluster)


def kubeconfig_in_secret(secret: Obj) -> Config:
    """The kubeconfig a ``<cluster>-kubeconfig`` Secret holds (key ``value``); :class:`NodeReadError` saying what
    is wrong with it when it holds none that can be used."""
    encoded = dig(secret, "data", KUBECONFIG_KEY)
    if not isinstance(encoded, str):
        raise NodeReadError(f"the kubeconfig Secret {name_of(secret)} has no {KUBECONFIG_KEY!r} key")
    try:
        document = yaml.load(base64.b64decode(encoded), Loader=SAFE_LOADER)
        return parse_kubeconfig(document, path=f"secret/{namespace_of(secret)}/{name_of(secret)}")
    except Exception as err:
        raise NodeReadError(f"the kubeconfig in Secret {name_of(secret)} is not usable: {err}") from err


class WorkloadClusters(Protocol):
    """The Nodes of workload clusters, for the topology controller (module doc)."""

    async def prepare(self, cluster: Obj) -> None:
        """Make the Nodes of ``cluster`` readable with :meth:`get_node`; NodeReadError when they cannot be."""
        ...

    def get_node(self, cluster: Obj, name: str) -> Obj | None:
        """The Node ``name`` of ``cluster``'s workload cluster (NodeReadError when it cannot be read)."""
        ...

    async def forget(self, namespace: str, name: str) -> None:
        """Release what the Cluster ``namespace/name`` held (it is gone)."""
        ...

    async def close(self) -> None:
        """Release everything."""
        ...


class StaticWorkloadClusters:
    """Workload-cluster Nodes held in memory, by Cluster, for tests (and anything that simulates them)."""

    def __init__(self) -> None:
        self.nodes: dict[tuple[str, str], dict[str, Obj]] = {}
        #: Clusters whose workload cluster cannot be reached, with the error to give
        self.unreachable: dict[tuple[str, str], str] = {}

    def set_nodes(self, namespace: str, cluster: str, nodes: Iterable[Obj]) -> None:
        self.nodes[(namespace, cluster)] = {name_of(node): node for node in nodes}

    async def prepare(self, cluster: Obj) -> None:
        problem = self.unreachable.get(cluster_key(cluster))
        if problem is not None:
            raise NodeReadError(problem)

    def get_node(self, cluster: Obj, name: str) -> Obj | None:
        key = cluster_key(cluster)
        if key in self.unreachable:
            raise NodeReadError(self.unreachable[key])
        node = self.nodes.get(key, {}).get(name)
        if node is None:
            raise NodeReadError(f'nodes "{name}" not found')
        return node

    async def forget(self, namespace: str, name: str) -> None:
        self.nodes.pop((namespace, name), None)

    async def close(self) -> None:
        self.nodes.clear()


@dataclass
class _Connection:
    secret_version: str
    client: Client
    nodes: Informer


class KubeconfigWorkloadClusters:
    """Workload clusters reached through their ``<cluster>-kubeconfig`` Secrets (module doc).

    The Secrets are read from the manager's informer of ``cluster.x-k8s.io/secret`` Secrets.
    """

    def __init__(
        self,
        manager: Manager,
        *,
        connect_timeout: float = CONNECT_TIMEOUT,
        resync_period: float | None = None,
    ) -> None:
        self.manager = manager
        self.connect_timeout = connect_timeout
        self.resync_period = resync_period
        self._connections: dict[tuple[str, str], _Connection] = {}
        self._locks: dict[tuple[str, str], asyncio.Lock] = {}

    async def _secret(self, cluster: Obj) -> Obj:
        namespace, name = cluster_key(cluster)
        secrets = await self.manager.informer("v1", "Secret", field_selector=f"type={CLUSTER_SECRET_TYPE}")
        secret = secrets.get(name + KUBECONFIG_SUFFIX, namespace)
        if secret is None:
            raise NodeReadError(f"the kubeconfig Secret {namespace}/{name}{KUBECONFIG_SUFFIX} does not exist")
        return secret

    async def prepare(self, cluster: Obj) -> None:
        key = cluster_key(cluster)
        secret = await self._secret(cluster)
        version = str(dig(secret, "metadata", "resourceVersion") or "")
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            connection = self._connections.get(key)
            if connection is not None and connection.secret_version == version and connection.nodes.running:
                if connection.nodes.has_synced:
                    return
            else:
                if connection is not None:
                    await self._close(connection)
                connection = self._connect(secret, version)
                self._connections[key] = connection
            try:
                async with asyncio.timeout(self.connect_timeout):
                    synced = await connection.nodes.wait_for_sync()
            except TimeoutError:
                synced = False
            if not synced:
                raise NodeReadError(
                    f"the workload cluster of {key[0]}/{key[1]} did not answer within {self.connect_timeout:g}s"
                )

    def _connect(self, secret: Obj, version: str) -> _Connection:
        client = HttpClient(kubeconfig_in_secret(secret), request_timeout=self.connect_timeout)
        nodes = Informer(client, "v1", "Node", resync_period=self.resync_period)
        nodes.start()
        return _Connection(version, client, nodes)

    def get_node(self, cluster: Obj, name: str) -> Obj | None:
        connection = self._connections.get(cluster_key(cluster))
        if connection is None or not connection.nodes.has_synced:
            raise NodeReadError("the workload cluster's Nodes are not cached yet")
        node = connection.nodes.get(name)
        if node is None:
            raise NodeReadError(f'nodes "{name}" not found')
        return node

    def nodes_informer(self, namespace: str, name: str) -> Informer | None:
        connection = self._connections.get((namespace, name))
        return connection.nodes if connection is not None else None

    async def forget(self, namespace: str, name: str) -> None:
        connection = self._connections.pop((namespace, name), None)
        self._locks.pop((namespace, name), None)
        if connection is not None:
            await self._close(connection)

    async def _close(self, connection: _Connection) -> None:
        await connection.nodes.stop()
        await connection.client.close()

    async def close(self) -> None:
        for key in list(self._connections):
            await self.forget(*key)
