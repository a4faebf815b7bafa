"""Simulated workload clusters: one small Kubernetes API per Cluster, holding its Nodes and static Pods.

Cluster API reaches a workload cluster through its ``<cluster>-kubeconfig`` Secret: KCP reads the
control-plane Nodes and static Pods there, the Machine and MachinePool controllers find the Nodes of
their machines, the topology controller reads MachinePool Nodes' kubelet versions. Here each workload
cluster is a :class:`~clusterclass.apiserver.store.MemoryStore` without the Cluster API CRDs (kept
in its own SQLite file when the management cluster is persistent), served over TLS by the same front
as the management cluster, on its own port of 127.0.0.1 — the control-plane endpoint the simulated
DockerCluster publishes, as upstream's in-memory provider allocates one port per workload cluster.

The lifecycle follows a real one:

- the DockerCluster controller :meth:`opens <WorkloadClusters.open>` the workload cluster and
  :meth:`reserves <WorkloadClusters.reserve>` its port (the load balancer: the endpoint exists, but
  nothing answers yet);
- the first control-plane machine's kube-apiserver :meth:`starts serving <WorkloadClusters.serve>`
  it, with a serving certificate from the Cluster's own CA (the ``<cluster>-ca`` Secret KCP makes),
  so a kubeconfig signed by that CA works with kubectl too;
- the DockerCluster's deletion :meth:`removes <WorkloadClusters.remove>` it, with its state file.

The simulated providers themselves are the workload cluster's "kubelets": they write its Nodes and
Pods through :attr:`WorkloadCluster.client`, in this process. Controllers that react to Nodes (the
Machine, MachinePool and KCP controllers) register :meth:`handlers <WorkloadClusters.add_handler>`
called on every change of a kind in any workload cluster, through one informer per kind and cluster.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from clusterclass.api.objects import Obj, dig
from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.apiserver.front.serving import Credentials, RunningServer, kubeconfig, start
from clusterclass.kube.certs import CertificateAuthority
from clusterclass.kube.informer import Informer

logger = logging.getLogger(__name__)

LOOPBACK = "127.0.0.1"
SYSTEM_NAMESPACE = "kube-system"
#: the Node index by ``spec.providerID``
PROVIDER_ID_INDEX = "spec.providerID"
#: the kinds whose changes reach the handlers
WATCHED_KINDS: tuple[str, ...] = ("Node", "Pod")
#: the admin user of a workload cluster's kubeconfig, as kubeadm names it
ADMIN_USER = "kubernetes-admin"

Handler = Callable[["WorkloadCluster", Obj], None]


def _provider_id(node: Obj) -> list[str]:
    found = dig(node, "spec", "providerID")
    return [found] if isinstance(found, str) and found else []


@dataclass
class WorkloadCluster:
    """One Cluster's workload API: its store, an in-process client, informers, and its listener."""

    namespace: str
    name: str
    store: MemoryStore
    client: MemoryClient
    informers: dict[str, Informer] = field(default_factory=dict)
    _socket: socket.socket | None = None
    _server: RunningServer | None = None

    @property
    def key(self) -> tuple[str, str]:
        return self.namespace, self.name

    @property
    def port(self) -> int | None:
        """The reserved port of the control-plane endpoint (None until reserved)."""
        return int(self._socket.getsockname()[1]) if self._socket is not None else None

    @property
    def serving(self) -> bool:
        return self._server is not None

    @property
    def url(self) -> str | None:
        return f"https://{LOOPBACK}:{self.port}" if self.port is not None else None

    def node(self, name: str) -> Obj | None:
        return self.informers["Node"].get(name) if "Node" in self.informers else None

    def nodes(self) -> list[Obj]:
        return self.informers["Node"].list() if "Node" in self.informers else []

    def nodes_with_provider_id(self, provider_id: str) -> list[Obj]:
        return self.informers["Node"].by_index(PROVIDER_ID_INDEX, provider_id) if "Node" in self.informers else []

    def pod(self, name: str, namespace: str = SYSTEM_NAMESPACE) -> Obj | None:
        return self.informers["Pod"].get(name, namespace) if "Pod" in self.informers else None

    def config_map(self, name: str, namespace: str = SYSTEM_NAMESPACE) -> Obj | None:
        """Read straight from the store: ConfigMaps are read rarely and not watched."""
        try:
            return self.store.get("v1", "ConfigMap", name, namespace=namespace)
        except Exception:
            return None

    def kubeconfig(self, ca: CertificateAuthority, *, user: str = ADMIN_USER) -> Obj:
        """An admin kubeconfig for this workload cluster, signed by the Cluster's CA (``ca``)."""
        if self.url is None:
            raise RuntimeError(f"the workload cluster {self.namespace}/{self.name} has no endpoint yet")
        client = ca.issue_client(user, ["system:masters"])
        credentials = Credentials(ca.cert_pem, client, client, user)
        document = kubeconfig(self.url, credentials, name=self.name)
        document["contexts"][0]["name"] = f"{user}@{self.name}"
        document["current-context"] = f"{user}@{self.name}"
        return document


class WorkloadClusters:
    """Every simulated workload cluster of this process (module doc).

    ``state_dir`` keeps each one in ``<state_dir>/<namespace>/<name>.db``; None keeps them in memory.
    """

    def __init__(self, *, state_dir: Path | None = None) -> None:
        self.state_dir = state_dir
        self._clusters: dict[tuple[str, str], WorkloadCluster] = {}
        self._handlers: list[tuple[str, Handler]] = []
        self._lock = asyncio.Lock()

    def __len__(self) -> int:
        return len(self._clusters)

    def add_handler(self, kind: str, handler: Handler) -> None:
        """Call ``handler(workload_cluster, obj)`` on every add, update and delete of ``kind`` anywhere."""
        if kind not in WATCHED_KINDS:
            raise ValueError(f"{kind} is not watched in workload clusters (only {', '.join(WATCHED_KINDS)})")
        self._handlers.append((kind, handler))
        for cluster in self._clusters.values():
            self._attach(cluster, kind, handler)

    def get(self, namespace: str, name: str) -> WorkloadCluster | None:
        return self._clusters.get((namespace, name))

    def _state_path(self, namespace: str, name: str) -> Path | None:
        if self.state_dir is None:
            return None
        return self.state_dir / namespace / f"{name}.db"

    async def open(self, namespace: str, name: str) -> WorkloadCluster:
        """The workload cluster of Cluster ``namespace/name``, created (or loaded from its file) if needed."""
        async with self._lock:
            found = self._clusters.get((namespace, name))
            if found is not None:
                return found
            path = self._state_path(namespace, name)
            if path is not None:
                path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)  # its Secrets are its owner's alone
            store = MemoryStore(state_path=path, cluster_api_crds=False)
            try:
                store.get("v1", "Namespace", SYSTEM_NAMESPACE)
            except Exception:
                store.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": SYSTEM_NAMESPACE}})
            cluster = WorkloadCluster(namespace, name, store, MemoryClient(store))
            for kind in WATCHED_KINDS:
                informer = Informer(cluster.client, "v1", kind)
                if kind == "Node":
                    informer.add_index(PROVIDER_ID_INDEX, _provider_id)
                cluster.informers[kind] = informer
                informer.start()
            for informer in cluster.informers.values():
                await informer.wait_for_sync()
            self._clusters[(namespace, name)] = cluster
            for kind, handler in self._handlers:
                self._attach(cluster, kind, handler)
            return cluster

    def _attach(self, cluster: WorkloadCluster, kind: str, handler: Handler) -> None:
        informer = cluster.informers[kind]
        informer.add_event_handler(
            on_add=lambda obj: handler(cluster, obj),
            on_update=lambda _old, new: handler(cluster, new),
            on_delete=lambda obj, _unknown: handler(cluster, obj),
        )

    def reserve(self, cluster: WorkloadCluster, port: int = 0) -> int:
        """Bind (but do not yet serve) the endpoint's port; ``0`` picks a free one. OSError when taken."""
        if cluster._socket is not None:
            if port in (0, cluster.port):
                return int(cluster.port or 0)
            raise OSError(f"the workload cluster already has port {cluster.port}")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind((LOOPBACK, port))
        except OSError:
            sock.close()
            raise
        sock.setblocking(False)
        cluster._socket = sock
        return int(sock.getsockname()[1])

    async def serve(self, cluster: WorkloadCluster, ca: CertificateAuthority) -> None:
        """Start answering on the reserved port, with a serving certificate from ``ca`` (idempotent)."""
        if cluster._server is not None:
            return
        if cluster._socket is None:
            raise RuntimeError(f"the workload cluster {cluster.namespace}/{cluster.name} has no port reserved")
        server_pair = ca.issue_server(["localhost", LOOPBACK])
        credentials = Credentials(ca.cert_pem, server_pair, server_pair, ADMIN_USER)
        cluster._server = await start(cluster.store, credentials=credentials, sock=cluster._socket)
        logger.info("workload cluster %s/%s serving at %s", cluster.namespace, cluster.name, cluster.url)

    async def _stop(self, cluster: WorkloadCluster) -> None:
        if cluster._server is not None:
            await cluster._server.stop()
            cluster._server = None
        if cluster._socket is not None:
            cluster._socket.close()
            cluster._socket = None
        for informer in cluster.informers.values():
            await informer.stop()
        await cluster.client.close()
        cluster.store.close()

    async def remove(self, namespace: str, name: str) -> None:
        """Delete the workload cluster of ``namespace/name``: stop serving, drop its objects and file."""
        async with self._lock:
            cluster = self._clusters.pop((namespace, name), None)
            if cluster is not None:
                await self._stop(cluster)
            path = self._state_path(namespace, name)
            if path is not None:
                for suffix in ("", "-wal", "-shm", "-journal"):
                    with contextlib.suppress(FileNotFoundError):
                        os.unlink(f"{path}{suffix}")

    async def close(self) -> None:
        """Stop every workload cluster, keeping their state files."""
        async with self._lock:
            for cluster in list(self._clusters.values()):
                await self._stop(cluster)
            self._clusters.clear()
