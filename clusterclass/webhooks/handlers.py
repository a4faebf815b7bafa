"""The admission webhooks for Cluster, ClusterClass and MachinePool: upstream's paths, names and answers.

Every rule lives in :mod:`clusterclass.topology.check`, which ``clusterclass validate`` and the controller use too;
this module only adapts a request to it. :data:`WEBHOOKS` is the one list of the webhooks served — path, name,
resource, operations, mutating or validating, as upstream's ``config/webhook/manifests.yaml`` declares them — from
which the server routes and the manifests in ``config/webhook`` are made.

What a webhook reads of the management cluster comes from the manager's informer caches (as upstream's webhooks
read through the manager's cached client): the ClusterClass of a Cluster, the Clusters using a ClusterClass, and
for the version-bump guard the control plane, MachineDeployments, Machines and MachinePools. The MachinePool part of
that guard reads Nodes of the workload cluster through the controllers'
:class:`~clusterclass.controllers.workload.WorkloadClusters`. As upstream, a Cluster's ClusterClass is waited for
(every 200 ms, up to 2 s) when it exists but its controller has not reconciled its latest generation yet.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Literal

import jsonpatch

from clusterclass.api import constants as c
from clusterclass.api.conversion import ConversionError
from clusterclass.api.objects import Obj, dig, name_of, namespace_of
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.controllers.workload import WorkloadClusters
from clusterclass.kube.cache_reader import CacheReader
from clusterclass.kube.errors import make_status
from clusterclass.topology.check import Gates, Result, invalid_status
from clusterclass.topology.check.cluster import (
    cluster_class_is_reconciled,
    default_cluster,
    topology_variable_errors,
    validate_cluster,
    validate_cluster_delete,
    with_v1beta1_empty_metadata,
)
from clusterclass.topology.check.clusterclass import (
    default_cluster_class,
    validate_cluster_class,
    validate_cluster_class_delete,
)
from clusterclass.topology.check.machinepool import default_machine_pool, validate_machine_pool
from clusterclass.topology.shapes import from_pipeline, pipeline_version, to_pipeline, user_errors, user_message
from clusterclass.webhooks.review import AdmissionRequest, AdmissionResponse, allowed, denied, patched

logger = logging.getLogger(__name__)

#: upstream polls for a reconciled ClusterClass this often, this long (spec §6.1.1)
CLASS_POLL_INTERVAL = 0.2
CLASS_POLL_TIMEOUT = 2.0
#: how long a webhook waits for a workload cluster's Nodes: well within kube-apiserver's 10 s webhook timeout, so a
#: workload cluster that does not answer blocks the version bump with a message instead of failing the request
WORKLOAD_TIMEOUT = 5.0

WebhookType = Literal["mutating", "validating"]

#: the Cluster API versions the webhooks are registered for, the configuration's path version first
SERVED_VERSIONS: tuple[str, ...] = ("v1beta2", "v1beta1")


@dataclass(frozen=True)
class Webhook:
    """One webhook as its configuration declares it."""

    name: str
    type: WebhookType
    kind: str
    resource: str
    operations: tuple[str, ...]

    def path_of(self, version: str) -> str:
        """controller-runtime's path: ``/<mutate|validate>-<group with dashes>-<version>-<lowercase kind>``."""
        verb = "mutate" if self.type == "mutating" else "validate"
        group = c.CLUSTER_GROUP.replace(".", "-")
        return f"/{verb}-{group}-{version}-{self.kind.lower()}"

    @property
    def path(self) -> str:
        """The path the configuration names: upstream v1.14's (its webhooks are registered for v1beta2)."""
        return self.path_of(SERVED_VERSIONS[0])

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path the server answers it on: v1beta1's too, for configurations made before v1beta2."""
        return tuple(self.path_of(version) for version in SERVED_VERSIONS)

    @property
    def api_group(self) -> str:
        return c.CLUSTER_GROUP

    @property
    def api_versions(self) -> tuple[str, ...]:
        """The versions its rules match: both, so that an object reaches it in the version the user wrote (and an
        error names its fields in that version), where upstream's match v1beta2 only."""
        return SERVED_VERSIONS


#: the webhooks served, in upstream's order (names and operations from its config/webhook/manifests.yaml)
WEBHOOKS: tuple[Webhook, ...] = (
    Webhook("default.cluster.cluster.x-k8s.io", "mutating", c.KIND_CLUSTER, "clusters", ("CREATE", "UPDATE")),
    Webhook(
        "default.clusterclass.cluster.x-k8s.io",
        "mutating",
        c.KIND_CLUSTER_CLASS,
        "clusterclasses",
        ("CREATE", "UPDATE"),
    ),
    Webhook(
        "default.machinepool.cluster.x-k8s.io", "mutating", c.KIND_MACHINE_POOL, "machinepools", ("CREATE", "UPDATE")
    ),
    Webhook(
        "validation.cluster.cluster.x-k8s.io", "validating", c.KIND_CLUSTER, "clusters", ("CREATE", "UPDATE", "DELETE")
    ),
    Webhook(
        "validation.clusterclass.cluster.x-k8s.io",
        "validating",
        c.KIND_CLUSTER_CLASS,
        "clusterclasses",
        ("CREATE", "UPDATE", "DELETE"),
    ),
    Webhook(
        "validation.machinepool.cluster.x-k8s.io",
        "validating",
        c.KIND_MACHINE_POOL,
        "machinepools",
        ("CREATE", "UPDATE"),
    ),
)

Handler = Callable[[AdmissionRequest], Awaitable[AdmissionResponse]]


def as_the_api_server_sends_it(request: AdmissionRequest) -> AdmissionRequest:
    """``request`` with its objects' ``metadata.namespace`` (and a new object's name) filled in from the request, as
    kube-apiserver sets them before admission; ValueError for an object whose ``metadata`` is not an object (which
    kube-apiserver would not have decoded). The handlers then always see where an object lives."""
    objects: list[Obj | None] = []
    for obj in (request.object, request.old_object):
        if obj is None:
            objects.append(None)
            continue
        metadata = obj.get("metadata", {})
        if metadata is None:
            metadata = {}
        if not isinstance(metadata, dict):
            raise ValueError("metadata: must be an object")
        filled = dict(metadata)
        if request.namespace and not filled.get("namespace"):
            filled["namespace"] = request.namespace
        if request.name and not filled.get("name") and not filled.get("generateName"):
            filled["name"] = request.name
        objects.append({**obj, "metadata": filled} if filled != metadata or "metadata" not in obj else obj)
    if objects == [request.object, request.old_object]:
        return request
    return replace(request, object=objects[0], old_object=objects[1])


class AdmissionHandlers:
    """The six handlers over the manager's caches (module doc); :meth:`handler` finds one by webhook."""

    def __init__(
        self,
        manager: Manager,
        *,
        workload: WorkloadClusters | None = None,
        gates: Gates | None = None,
        class_poll_timeout: float = CLASS_POLL_TIMEOUT,
    ) -> None:
        self.manager = manager
        self.workload = workload
        self.gates = gates or Gates()
        self.class_poll_timeout = class_poll_timeout
        self._handlers: dict[str, Handler] = {
            "default.cluster.cluster.x-k8s.io": self.default_cluster,
            "default.clusterclass.cluster.x-k8s.io": self.default_cluster_class,
            "default.machinepool.cluster.x-k8s.io": self.default_machine_pool,
            "validation.cluster.cluster.x-k8s.io": self.validate_cluster,
            "validation.clusterclass.cluster.x-k8s.io": self.validate_cluster_class,
            "validation.machinepool.cluster.x-k8s.io": self.validate_machine_pool,
        }

    def handler(self, webhook: Webhook) -> Handler:
        """The handler of ``webhook``, seeing the object in the rules' version (module doc) whatever version the
        request carries it in."""
        handle = self._handlers[webhook.name]

        async def versioned(request: AdmissionRequest) -> AdmissionResponse:
            try:
                request = as_the_api_server_sends_it(request)
            except ValueError as err:
                return denied(make_status(400, "BadRequest", f"cannot read the {request.kind}: {err}"))
            return await self._in_pipeline_version(request, handle)

        return versioned

    async def _in_pipeline_version(self, request: AdmissionRequest, handle: Handler) -> AdmissionResponse:
        """Run ``handle`` on the request with its objects in the pipeline's version; translate its field errors
        back to the request's version and make its JSON patch against the object as sent."""
        subject = request.object if request.object is not None else request.old_object
        version = str((subject or {}).get("apiVersion") or "").rpartition("/")[2]
        if subject is None or version == pipeline_version(c.CLUSTER_GROUP, request.kind):
            return await handle(request)
        api_versions = self.manager.reader.api_versions
        try:
            converted = replace(
                request,
                object=to_pipeline(request.object, api_versions) if request.object is not None else None,
                old_object=to_pipeline(request.old_object, api_versions) if request.old_object is not None else None,
                user_version=version,
            )
        except ConversionError as err:
            return denied(make_status(400, "BadRequest", f"cannot read the {request.kind}: {err}"))
        response = await handle(converted)
        if response.patch and converted.object is not None and request.object is not None:
            defaulted = jsonpatch.apply_patch(converted.object, response.patch)
            original = from_pipeline(converted.object, version, api_versions)
            shown = from_pipeline(defaulted, version, api_versions)
            response = patched(original, shown, response.warnings)
        return response

    # -- Cluster ---------------------------------------------------------------------------------------

    async def default_cluster(self, request: AdmissionRequest) -> AdmissionResponse:
        cluster = request.object
        if request.operation not in ("CREATE", "UPDATE") or cluster is None:
            return allowed()
        cluster_class = await self._cluster_class_of(cluster)
        defaulted = await self.manager.read(lambda reader: default_cluster(cluster, reader=reader))
        topology = dig(defaulted, "spec", "topology")
        if cluster_class is not None and isinstance(topology, dict):
            # upstream validates variables in the defaulting webhook too, so both webhooks judge them against
            # one version of the ClusterClass
            old_topology = dig(request.old_object, "spec", "topology") if request.old_object else None
            errors = topology_variable_errors(
                topology, cluster_class, old_topology=old_topology if isinstance(old_topology, dict) else None
            )
            if errors:
                shown = user_errors(c.CLUSTER_GROUP, c.KIND_CLUSTER, request.user_version, errors)
                return denied(invalid_status(c.KIND_CLUSTER, c.CLUSTER_GROUP, name_of(cluster), shown))
        if not await self.manager.serves_v1beta2(c.KIND_CLUSTER):
            defaulted = with_v1beta1_empty_metadata(defaulted)  # what v1.6's webhook answers there
        return patched(cluster, defaulted)

    async def validate_cluster(self, request: AdmissionRequest) -> AdmissionResponse:
        if request.operation == "DELETE":
            return self._verdict(request, validate_cluster_delete(request.subject))
        cluster = request.object
        if cluster is None:
            return allowed()
        await self._cluster_class_of(cluster)
        old = request.old_object if request.operation == "UPDATE" else None
        if old is not None:
            await self._prepare_workload_cluster(old)
        result = await self.manager.read(
            lambda reader: validate_cluster(cluster, old, reader=reader, nodes=self.workload, gates=self.gates)
        )
        return self._verdict(request, result)

    async def _cluster_class_of(self, cluster: Obj) -> Obj | None:
        """The Cluster's ClusterClass once its controller reconciled it, waiting up to 2 s; None otherwise."""
        name = dig(cluster, "spec", "topology", "class")
        if not isinstance(name, str) or not name:
            return None
        namespace = namespace_of(cluster)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self.class_poll_timeout
        while True:
            found = await self.manager.get(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS, namespace, name)
            if found is None:
                return None
            if cluster_class_is_reconciled(found):
                return found
            if loop.time() >= deadline:
                return None
            await asyncio.sleep(CLASS_POLL_INTERVAL)

    async def _prepare_workload_cluster(self, cluster: Obj) -> None:
        """Connect to the workload cluster when a topology-owned MachinePool of the Cluster has Nodes to check."""
        if self.workload is None or not dig(cluster, "spec", "topology"):
            return

        def pools(reader: CacheReader) -> list[Obj]:
            labels = {c.LABEL_CLUSTER_NAME: name_of(cluster), c.LABEL_TOPOLOGY_OWNED: None}
            return reader.list(c.CLUSTER_API_VERSION, c.KIND_MACHINE_POOL, namespace_of(cluster), labels)

        if not any(dig(pool, "status", "nodeRefs") for pool in await self.manager.read(pools)):
            return
        try:
            async with asyncio.timeout(WORKLOAD_TIMEOUT):
                await self.workload.prepare(cluster)
        except Exception as err:  # the guard then reports the Nodes it could not read
            logger.info("workload cluster of %s/%s not readable: %s", namespace_of(cluster), name_of(cluster), err)

    # -- ClusterClass -----------------------------------------------------------------------------------

    async def default_cluster_class(self, request: AdmissionRequest) -> AdmissionResponse:
        if request.operation not in ("CREATE", "UPDATE") or request.object is None:
            return allowed()
        return patched(request.object, default_cluster_class(request.object))

    async def validate_cluster_class(self, request: AdmissionRequest) -> AdmissionResponse:
        if request.operation == "DELETE":
            subject = request.subject
            result = await self.manager.read(lambda reader: validate_cluster_class_delete(subject, reader=reader))
            if result.errors:
                # upstream answers a delete refused with Forbidden (403), not Invalid
                message = "; ".join(error.detail for error in result.errors)
                return denied(
                    make_status(
                        403,
                        "Forbidden",
                        f'ClusterClass.{c.CLUSTER_GROUP} "{name_of(subject)}" is forbidden: {message}',
                        details={"name": name_of(subject), "group": c.CLUSTER_GROUP, "kind": "ClusterClass"},
                    )
                )
            return allowed(result.warnings)
        cc = request.object
        if cc is None:
            return allowed()
        old = request.old_object if request.operation == "UPDATE" else None
        result = await self.manager.read(
            lambda reader: validate_cluster_class(cc, old, reader=reader, gates=self.gates)
        )
        return self._verdict(request, result)

    # -- MachinePool -------------------------------------------------------------------------------------

    async def default_machine_pool(self, request: AdmissionRequest) -> AdmissionResponse:
        if request.operation not in ("CREATE", "UPDATE") or request.object is None:
            return allowed()
        old = request.old_object if request.operation == "UPDATE" else None
        # the defaults of the upstream generation whose API the management cluster serves (v1.14's with v1beta2)
        v1beta2_server = await self.manager.serves_v1beta2(c.KIND_MACHINE_POOL)
        return patched(request.object, default_machine_pool(request.object, old, v1beta2_server=v1beta2_server))

    async def validate_machine_pool(self, request: AdmissionRequest) -> AdmissionResponse:
        if request.object is None:
            return allowed()
        old = request.old_object if request.operation == "UPDATE" else None
        return self._verdict(request, validate_machine_pool(request.object, old, gates=self.gates))

    # -- answers -------------------------------------------------------------------------------------------

    @staticmethod
    def _verdict(request: AdmissionRequest, result: Result) -> AdmissionResponse:
        """Allowed with the warnings, or Invalid naming each field as the request's version spells it."""
        version = request.user_version
        warnings = [user_message(c.CLUSTER_GROUP, request.kind, version, w) for w in result.warnings]
        if result.errors:
            name = name_of(request.subject) or request.name
            errors = user_errors(c.CLUSTER_GROUP, request.kind, version, result.errors)
            return denied(invalid_status(request.kind, c.CLUSTER_GROUP, name, errors), warnings)
        return allowed(warnings)
