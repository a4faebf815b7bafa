"""Reading one Cluster's objects from an API server for ``describe cluster``: :func:`collect`.

It reads what clusterctl's discovery reads, through any :class:`~clusterclass.kube.client.Client`:

1. the Cluster (an error if it, or its kind, is not there: that is the one thing describe needs);
2. Machines, MachineDeployments, MachineSets and MachinePools by the label
   ``cluster.x-k8s.io/cluster-name=<name>`` in the Cluster's namespace;
3. the objects the Cluster and the MachinePools reference (infrastructure cluster, control plane,
   bootstrap configs and infrastructure machine pools), and, for ``show_templates``, the control
   plane's machine template and the MachineDeployments' templates;
4. the infrastructure machine and bootstrap config of each Machine the tree shows as itself. Which
   those are is decided by building the tree once without them (:func:`~clusterclass.describe.tree.
   machines_shown`): grouping depends only on the Machines' own ``Ready``, so Machines merged into a
   ``2 Machines...`` row cost no request.

The tree reads the v1beta1 shape of Cluster API's kinds (with v1beta2 conditions under ``status.v1beta2``), so every
kind the conversions know is read in v1beta1, whatever version a reference names: the server converts.

Like clusterctl, it shows what it can: a reference to an object that does not exist, to a kind the
server does not serve, or that the caller may not read is left out of the tree, and a kind that is
not served lists as empty. Any other API error (an unreachable server, say) is raised.
Independent reads run concurrently.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Iterable, Mapping
from typing import Any, TypeVar

from clusterclass.api import constants as c
from clusterclass.api.conversion import in_version
from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.describe.objects import (
    ADDONS_API_VERSION,
    KIND_RESOURCE_SET_BINDING,
    LISTED_KINDS,
    ClusterObjects,
)
from clusterclass.describe.tree import TreeOptions, build_tree, machines_shown
from clusterclass.errors import ClusterClassError, ObjectKey
from clusterclass.kube.client import Client
from clusterclass.kube.errors import BadRequest, Forbidden, NotFound

#: the version the tree reads every Cluster API kind in (module doc)
DESCRIBED_VERSION = "v1beta1"

#: how many reads are in flight at once
CONCURRENCY = 10

#: the errors that leave an object out instead of failing the whole description
_SKIPPED = (NotFound, Forbidden, BadRequest)

T = TypeVar("T")


class ClusterApiNotServed(ClusterClassError):
    """The server does not serve Cluster API's Cluster kind at all."""


async def read_cluster(client: Client, namespace: str, name: str) -> Obj:
    """The Cluster; NotFound (``clusters.cluster.x-k8s.io "x" not found``) when there is none."""
    try:
        await client.resource(c.CLUSTER_API_VERSION, c.KIND_CLUSTER)
    except NotFound as err:
        raise ClusterApiNotServed(
            f"the server does not serve {c.KIND_CLUSTER} in {c.CLUSTER_API_VERSION}: is Cluster API installed?"
        ) from err
    return await client.get(c.CLUSTER_API_VERSION, c.KIND_CLUSTER, name, namespace=namespace)


async def collect(client: Client, *, namespace: str, name: str, options: TreeOptions | None = None) -> ClusterObjects:
    """Every object :func:`~clusterclass.describe.tree.build_tree` shows for the Cluster ``namespace/name``."""
    options = options or TreeOptions()
    reader = _Reader(client, namespace)
    objects = ClusterObjects(await read_cluster(client, namespace, name))
    selector = f"{c.LABEL_CLUSTER_NAME}={name}"
    kinds = list(LISTED_KINDS)
    lists = await reader.all(reader.list(kind, selector) for kind in kinds)
    for kind, items in zip(kinds, lists, strict=True):
        setattr(objects, LISTED_KINDS[kind], items)
    if options.show_resourcesets:
        objects.resource_set_binding = await reader.get(
            {"apiVersion": ADDONS_API_VERSION, "kind": KIND_RESOURCE_SET_BINDING, "name": name}
        )

    cluster = objects.cluster
    refs: list[Any] = [dig(cluster, "spec", "infrastructureRef"), dig(cluster, "spec", "controlPlaneRef")]
    for pool in objects.machine_pools:
        refs.append(dig(pool, "spec", "template", "spec", "bootstrap", "configRef"))
        refs.append(dig(pool, "spec", "template", "spec", "infrastructureRef"))
    if options.show_templates:
        for deployment in objects.machine_deployments:
            refs.append(dig(deployment, "spec", "template", "spec", "bootstrap", "configRef"))
            refs.append(dig(deployment, "spec", "template", "spec", "infrastructureRef"))
    await reader.read_refs(objects, refs)

    control_plane = objects.lookup(dig(cluster, "spec", "controlPlaneRef"))
    if options.show_templates and control_plane is not None:
        await reader.read_refs(objects, [dig(control_plane, "spec", "machineTemplate", "infrastructureRef")])

    shown = machines_shown(build_tree(objects, options))
    machine_refs: list[Any] = []
    for machine in objects.machines:
        if name_of(machine) in shown:
            machine_refs.append(dig(machine, "spec", "infrastructureRef"))
            machine_refs.append(dig(machine, "spec", "bootstrap", "configRef"))
    await reader.read_refs(objects, machine_refs)
    return objects


class _Reader:
    """Reads in the Cluster's namespace, at most :data:`CONCURRENCY` at a time, skipping what cannot be shown."""

    def __init__(self, client: Client, namespace: str) -> None:
        self.client = client
        self.namespace = namespace
        self._slots = asyncio.Semaphore(CONCURRENCY)
        #: every reference read (or tried) already, so none is read twice
        self._tried: set[ObjectKey] = set()

    async def all(self, reads: Iterable[Awaitable[T]]) -> list[T]:
        return list(await asyncio.gather(*reads))

    async def list(self, kind: str, selector: str) -> list[Obj]:
        async with self._slots:
            try:
                found = await self.client.list(
                    c.CLUSTER_API_VERSION, kind, namespace=self.namespace, label_selector=selector
                )
            except NotFound:  # the kind is not served (MachinePools without their feature gate, say)
                return []
        return found.items

    async def get(self, ref: Mapping[str, Any]) -> Obj | None:
        async with self._slots:
            try:
                kind = str(ref["kind"])
                api_version = in_version(str(ref["apiVersion"]), kind, DESCRIBED_VERSION)
                return await self.client.get(api_version, kind, str(ref["name"]), namespace=self.namespace)
            except _SKIPPED:
                return None

    async def read_refs(self, objects: ClusterObjects, refs: Iterable[Any]) -> None:
        """Read each object ``refs`` point at that was not tried yet, into ``objects.referenced``."""
        wanted: dict[ObjectKey, Mapping[str, Any]] = {}
        for ref in refs:
            key = objects.key_for(ref)
            if key is not None and ref.get("apiVersion") and key not in self._tried:
                self._tried.add(key)
                wanted[key] = ref
        found = await self.all(self.get(ref) for ref in wanted.values())
        for key, obj in zip(wanted, found, strict=True):
            if obj is not None:
                objects.referenced[key] = obj
