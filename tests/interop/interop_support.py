"""One management cluster of upstream's own managers, with clusterclass or upstream as its topology controller.

:class:`Stack` is a real kube-apiserver (with kube-controller-manager's garbage collector, as a real cluster
collects owned objects), a release's CRDs and webhooks, upstream's four managers (:mod:`support.upstream_capi`)
and — unless upstream's own topology controller runs — ``clusterclass run``; with :meth:`Stack.start_pools`, the
simulated DockerMachinePool as the MachinePools' only infrastructure provider. Tests write as a user does, through
an admin client, and read what upstream's e2e framework reads.

:func:`topology_objects` is what a topology controller wrote for a Cluster, normalized for comparison: every
object it owns with only the fields it sets (name, labels, annotations, owner references, spec without the fields
providers write there; of the Cluster its refs and TopologyReconciled), random name suffixes replaced by ``?????``,
so the same Cluster reconciled by clusterclass and by upstream compares equal.
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import re
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from support.real_apiserver import Binaries, RealApiServer
from support.upstream_capi import (
    InMemoryData,
    OurTopologyController,
    Release,
    SimulatedMachinePools,
    UpstreamCapi,
    docker_pool_crds,
)

from clusterclass.api.objects import Obj, dig, labels_of, name_of
from clusterclass.describe.collect import collect
from clusterclass.describe.readiness import pending
from clusterclass.kube.client import Client
from clusterclass.kube.errors import ApiError, NotFound

#: who reconciles topologies in a :class:`Stack`
OURS, UPSTREAM = "clusterclass", "upstream"

#: a guard, not a speed target
GUARD = 240.0

#: Kubernetes' random name suffix (``SimpleNameGenerator``), five of these characters
_SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}"


@dataclass(frozen=True)
class Kinds:
    """The apiVersions a release's management cluster serves its kinds in (its storage versions)."""

    core: str
    bootstrap: str
    control_plane: str
    infrastructure: str
    infrastructure_cluster: str
    infrastructure_machine_template: str
    #: the DockerMachinePool's apiVersion as the release's topology controller writes it (its contract version)
    machine_pool_infrastructure: str

    @classmethod
    def of(cls, release: Release) -> Kinds:
        if release.minor >= 11:
            return cls(
                "cluster.x-k8s.io/v1beta2",
                "bootstrap.cluster.x-k8s.io/v1beta2",
                "controlplane.cluster.x-k8s.io/v1beta2",
                "infrastructure.cluster.x-k8s.io/v1beta2",
                "DevCluster",
                "DevMachineTemplate",
                "infrastructure.cluster.x-k8s.io/v1beta2",
            )
        return cls(
            "cluster.x-k8s.io/v1beta1",
            "bootstrap.cluster.x-k8s.io/v1beta1",
            "controlplane.cluster.x-k8s.io/v1beta1",
            "infrastructure.cluster.x-k8s.io/v1alpha1",
            "InMemoryCluster",
            "InMemoryMachineTemplate",
            "infrastructure.cluster.x-k8s.io/v1beta1",
        )

    def topology_kinds(self) -> list[tuple[str, str]]:
        """The kinds a topology controller writes for a Cluster (KubeadmConfigs: only its MachinePools')."""
        return [
            (self.core, "Cluster"),
            (self.core, "MachineDeployment"),
            (self.core, "MachinePool"),
            (self.core, "MachineHealthCheck"),
            (self.control_plane, "KubeadmControlPlane"),
            (self.bootstrap, "KubeadmConfigTemplate"),
            (self.infrastructure, self.infrastructure_cluster),
            (self.infrastructure, self.infrastructure_machine_template),
            (self.bootstrap, "KubeadmConfig"),
            (self.machine_pool_infrastructure, "DockerMachinePool"),
        ]

    def cluster_kinds(self) -> list[tuple[str, str]]:
        """Every kind a Cluster's life creates in its namespace, for "nothing is left"."""
        machine = self.infrastructure_machine_template.removesuffix("Template")
        return [
            *self.topology_kinds(),
            (self.core, "MachineSet"),
            (self.core, "Machine"),
            (self.infrastructure, machine),
        ]


@dataclass
class Stack:
    """A release's managers on a real kube-apiserver, with ``owner`` reconciling topologies (module doc)."""

    release: Release
    owner: str
    workdir: Path
    binaries: Binaries
    audit: bool = False
    api: RealApiServer = field(init=False)
    capi: UpstreamCapi = field(init=False)
    ours: OurTopologyController | None = field(init=False, default=None)
    pools: SimulatedMachinePools | None = field(init=False, default=None)

    def __post_init__(self) -> None:
        self.data = InMemoryData(self.release)
        self.kinds = Kinds.of(self.release)

    def start(self) -> Stack:
        self.api = RealApiServer(self.binaries, controller_manager=True, bundled_crds=False, audit=self.audit).start()
        try:
            self.capi = UpstreamCapi(self.api, self.release, self.workdir, upstream_topology=self.owner == UPSTREAM)
            self.capi.install(extra_crds=docker_pool_crds(self.release, self.api))
            self.capi.start_all()
            if self.owner == OURS:
                self.ours = OurTopologyController(self.capi).start()
        except BaseException:
            self.stop()
            raise
        return self

    async def start_pools(self) -> Stack:
        """The MachinePools' infrastructure provider (:class:`~support.upstream_capi.SimulatedMachinePools`), in
        the caller's event loop: start it there after :meth:`start`, stop it there before :meth:`stop`."""
        self.pools = await SimulatedMachinePools(self.api.kubeconfig).start()
        return self

    async def stop_pools(self) -> None:
        if self.pools is not None:
            await self.pools.stop()
            self.pools = None

    def stop(self) -> None:
        if self.ours is not None:
            with contextlib.suppress(Exception):
                self.ours.stop()
        if hasattr(self, "capi"):
            self.capi.stop_all()
        self.api.stop()

    def logs(self) -> str:
        ours = f"\n--- clusterclass\n{self.ours.tail()}" if self.ours is not None else ""
        pools = f"\n--- simulated DockerMachinePool: {self.pools.last_error()}" if self.pools is not None else ""
        return self.capi.logs() + ours + pools

    # -- user actions -----------------------------------------------------------------------------------------

    async def create(self, client: Client, objects: list[Obj]) -> None:
        """Create ``objects`` as a user would (admission included), retrying while the webhooks start serving."""
        for obj in objects:
            await retry_while_webhooks_start(lambda obj=obj: client.create(obj))  # type: ignore[misc]

    async def wait(self, check: Callable[[], Awaitable[bool]], what: str, guard: float = GUARD) -> None:
        deadline = time.monotonic() + guard
        while time.monotonic() < deadline:
            if await check():
                return
            await asyncio.sleep(0.5)
        raise AssertionError(f"timed out after {guard:g}s waiting for {what}\n{self.logs()}")

    async def wait_ready(self, client: Client, namespace: str, name: str, guard: float = GUARD) -> None:
        last: list[str] = []

        async def ready() -> bool:
            nonlocal last
            last = pending(await collect(client, namespace=namespace, name=name))
            return not last

        try:
            await self.wait(ready, f"Cluster {namespace}/{name} to be ready", guard)
        except AssertionError as failure:
            raise AssertionError(f"still pending: {last}\n{failure}") from None

    async def wait_settled(self, client: Client, namespace: str, name: str) -> None:
        """Until the Cluster carries no trace of an upgrade (its AfterClusterUpgrade called, the upgrade-step gone)."""

        async def settled() -> bool:
            cluster = await client.get(self.kinds.core, "Cluster", name, namespace=namespace)
            annotations = cluster["metadata"].get("annotations") or {}
            return not any(key in annotations for key in UPGRADE_ANNOTATIONS)

        await self.wait(settled, f"Cluster {namespace}/{name} to be done upgrading")


#: the label the topology puts on a MachinePool and the objects it writes for it
POOL_LABEL = "topology.cluster.x-k8s.io/pool-name"

#: what a topology controller keeps on a Cluster while an upgrade is still being wound up
UPGRADE_ANNOTATIONS = ("runtime.cluster.x-k8s.io/pending-hooks", "topology.internal.cluster.x-k8s.io/upgrade-step")


async def retry_while_webhooks_start(call: Callable[[], Awaitable[Any]], guard: float = 30.0) -> Any:
    """``call()``, again while a webhook answers "connection refused" (a manager still starting its server)."""
    deadline = time.monotonic() + guard
    while True:
        try:
            return await call()
        except ApiError as error:
            if "connection refused" not in str(error) or time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.5)


# --- what a topology controller wrote -------------------------------------------------------------------------


def _owner(reference: Obj) -> Obj:
    return {
        k: reference[k] for k in ("apiVersion", "kind", "name", "controller", "blockOwnerDeletion") if k in reference
    }


def _topology_reconciled(cluster: Obj) -> Obj | None:
    for condition in dig(cluster, "status", "conditions") or []:
        if condition.get("type") == "TopologyReconciled":
            return {k: condition.get(k) for k in ("status", "reason")}
    for condition in dig(cluster, "status", "v1beta2", "conditions") or []:
        if condition.get("type") == "TopologyReconciled":
            return {k: condition.get(k) for k in ("status", "reason")}
    return None


#: spec fields of topology-owned objects that their providers write, not the topology: the instances of a pool
#: (the infrastructure provider's, copied by the core MachinePool controller) and a pool's join token (the kubeadm
#: bootstrap provider's)
PROVIDER_FIELDS: dict[str, tuple[tuple[str, ...], ...]] = {
    "MachinePool": (("providerIDList",),),
    "DockerMachinePool": (("providerIDList",), ("providerID",)),
    "KubeadmConfig": (("joinConfiguration", "discovery", "bootstrapToken"),),
}


def _without_provider_fields(kind: str, spec: Any) -> Any:
    if not isinstance(spec, dict) or kind not in PROVIDER_FIELDS:
        return spec
    spec = copy.deepcopy(spec)
    for path in PROVIDER_FIELDS[kind]:
        parent = spec
        for key in path[:-1]:
            parent = parent.get(key) if isinstance(parent, dict) else None
        if isinstance(parent, dict):
            parent.pop(path[-1], None)
    return spec


def _normalized(obj: Obj) -> Obj:
    metadata = obj.get("metadata") or {}
    kept: Obj = {
        "apiVersion": obj.get("apiVersion"),
        "kind": obj.get("kind"),
        "metadata": {
            "name": metadata.get("name"),
            "labels": metadata.get("labels") or {},
            # the conversion webhook's bookkeeping, kept by whichever writer used a version that cannot hold a field
            "annotations": {
                k: v for k, v in (metadata.get("annotations") or {}).items() if k != "cluster.x-k8s.io/conversion-data"
            },
            "ownerReferences": sorted(
                (_owner(r) for r in metadata.get("ownerReferences") or []), key=lambda r: (r["kind"], r["name"])
            ),
        },
    }
    if obj.get("kind") == "Cluster":
        spec = obj.get("spec") or {}
        kept["spec"] = {k: spec.get(k) for k in ("infrastructureRef", "controlPlaneRef", "topology")}
        kept["topologyReconciled"] = _topology_reconciled(obj)
    else:
        kept["spec"] = _without_provider_fields(str(obj.get("kind")), obj.get("spec"))
    return kept


def without_suffixes(value: Any, cluster: str) -> Any:
    """``value`` with every ``<cluster>[-<part>...]-<5 random characters>`` name's suffix replaced by ``?????``."""
    pattern = re.compile(rf"\b({re.escape(cluster)}(?:-[a-z0-9]+)*?)-{_SUFFIX}\b")
    return json.loads(pattern.sub(r"\1-?????", json.dumps(value, sort_keys=True)))


def _strings(value: Any) -> set[str]:
    if isinstance(value, dict):
        return set().union(*(_strings(v) for v in value.values())) if value else set()
    if isinstance(value, list):
        return set().union(*(_strings(v) for v in value)) if value else set()
    return {value} if isinstance(value, str) else set()


async def topology_objects(client: Client, kinds: Kinds, namespace: str, cluster: str) -> dict[str, Obj]:
    """What the topology wrote for ``cluster`` (module doc), keyed ``<Kind> <normalized name>``.

    A template clone that nothing references any more is left out: after a rotation the old clone stays as long as
    an old MachineSet uses it (v1.6 keeps one, scaled to zero, by its default revisionHistoryLimit).
    """
    listed_by_kind: dict[tuple[str, str], list[Obj]] = {}
    for api_version, kind in kinds.topology_kinds():
        try:
            listed_by_kind[(api_version, kind)] = (await client.list(api_version, kind, namespace=namespace)).items
        except NotFound:
            continue
    referenced: set[str] = set()
    for (_, kind), listed in listed_by_kind.items():
        if kind in ("Cluster", "MachineDeployment", "MachinePool", "KubeadmControlPlane"):
            for obj in listed:
                referenced |= _strings(obj.get("spec"))
    found: dict[str, Obj] = {}
    for (_, kind), listed in listed_by_kind.items():
        for obj in listed:
            if kind.endswith("Template") and name_of(obj) not in referenced:
                continue
            elif kind == "Cluster":
                if name_of(obj) != cluster:
                    continue
            elif labels_of(obj).get("cluster.x-k8s.io/cluster-name") != cluster:
                continue
            elif kind == "KubeadmConfig" and POOL_LABEL not in labels_of(obj):
                continue  # a Machine's, written by the MachineSet controller
            normalized = without_suffixes(_normalized(obj), cluster)
            key = f"{kind} {normalized['metadata']['name']}"
            if key in found:
                raise AssertionError(f"two {kind}s of {cluster} are {key} but for their suffix: wait until one is gone")
            found[key] = normalized
    return found


def differences(left: Any, right: Any, path: str = "") -> list[str]:
    """Where two normalized values differ, one ``path: left != right`` line each."""
    if isinstance(left, dict) and isinstance(right, dict):
        lines = []
        for key in sorted(set(left) | set(right)):
            lines += differences(left.get(key), right.get(key), f"{path}.{key}" if path else str(key))
        return lines
    if left != right:
        return [f"{path}: {json.dumps(left, sort_keys=True)} != {json.dumps(right, sort_keys=True)}"]
    return []


async def nothing_left(client: Client, kinds: Kinds, namespace: str) -> list[str]:
    """What of a deleted Cluster is still in ``namespace`` (the class's own templates aside)."""
    left = []
    for api_version, kind in kinds.cluster_kinds():
        try:
            items = (await client.list(api_version, kind, namespace=namespace)).items
        except NotFound:
            continue
        for obj in items:
            if kind.endswith("Template") and not labels_of(obj).get("cluster.x-k8s.io/cluster-name"):
                continue
            left.append(f"{kind} {name_of(obj)}")
    secrets = (await client.list("v1", "Secret", namespace=namespace)).items
    left += [f"Secret {name_of(s)}" for s in secrets if s.get("type") == "cluster.x-k8s.io/secret"]
    return left
