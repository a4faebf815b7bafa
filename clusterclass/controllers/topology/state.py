"""The controller's driver of the reconcile steps: what each step means against a real API server.

:func:`clusterclass.topology.reconcile.reconcile_steps` decides what a reconcile does; this module does
it (spec §3):

- :class:`~clusterclass.topology.reconcile.Diff`: a server-side-apply dry run through
  :class:`~clusterclass.controllers.topology.structuredmerge.ServerSideApply` (free when its answer cache
  knows the object has not changed);
- :class:`~clusterclass.topology.reconcile.LiveTopologyNames`: a list straight from the API server, not
  the cache, so a stale cache cannot create a second MachinePool or MachineDeployment for one topology;
- :class:`~clusterclass.topology.reconcile.LiveLeftovers`: a list straight from the API server too (and, where
  the step asks, a read of the Cluster there), so only what an earlier attempt left is found, never what a cache
  has not caught up with;
- :class:`~clusterclass.topology.reconcile.EnsureShim`: create the shim Secret, or read it if it exists;
- :class:`~clusterclass.topology.reconcile.Create` / ``Update``: server-side apply as ``capi-topology``,
  an Event on the Cluster (on the MachineHealthCheck for its own changes), and, where the step asks,
  waiting until the cache shows the write, so the next reconcile reads its own writes;
- :class:`~clusterclass.topology.reconcile.Delete`: delete now; leave to the owner's controller; or
  delete a replaced MachineDeployment template only once no MachineSet uses it (else the MachineSet
  helper does when the last one goes).

A failed write is turned into a :class:`~clusterclass.errors.TopologyError` whose text is what the
``TopologyReconciled`` condition will say; a failed create drops the object's generated name from it
(upstream's ``createErrorWithoutObjectName``), so one failure does not look like a new one on every retry.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, describe, dig, group_of, key_of, labels_of, name_of, namespace_of
from clusterclass.api.workers import WorkerKind
from clusterclass.controllers.runtime.events import EventRecorder
from clusterclass.controllers.topology.structuredmerge import ServerSideApply
from clusterclass.errors import TopologyError
from clusterclass.kube import outcome
from clusterclass.kube.cache_reader import CacheReader
from clusterclass.kube.client import Client
from clusterclass.kube.errors import AlreadyExists, ApiError, NotFound
from clusterclass.topology.reconcile import (
    Create,
    Delete,
    Diff,
    EnsureShim,
    LiveLeftovers,
    LiveTopologyNames,
    NotVisibleInCache,
    OutcomeUnknown,
    Step,
    Steps,
    Update,
)

logger = logging.getLogger(__name__)

CREATE_REASON = "TopologyCreate"
UPDATE_REASON = "TopologyUpdate"
DELETE_REASON = "TopologyDelete"

#: upstream polls its cache this often, this long, after its own writes
CACHE_POLL_INTERVAL = 0.005
CACHE_WAIT_TIMEOUT = 5.0


def group_kind(obj: Obj) -> str:
    """``Kind.group`` (``Kind`` for the core group), as Go prints a GroupKind."""
    group = group_of(str(obj.get("apiVersion", "")))
    return f"{obj.get('kind')}.{group}" if group else str(obj.get("kind"))


def create_error_without_object_name(error: Exception, obj: Obj) -> str:
    """What a failed create says in the condition: the kind and the field causes, never the generated name."""
    if isinstance(error, ApiError):
        details = error.details
        if details:
            what = (
                f"{details.get('kind', obj.get('kind'))}.{details.get('group', group_of(str(obj.get('apiVersion'))))}"
            )
            causes = [
                f"{cause.get('reason', '')}: {cause.get('field', '')}: {cause.get('message', '')}"
                for cause in details.get("causes") or []
            ]
            return f"failed to create {what}: {' '.join(causes)}" if causes else f"failed to create {what}"
    return f"failed to create {group_kind(obj)}"


def _version(obj: Obj, path: tuple[str, ...] | None) -> str | None:
    value = dig(obj, *path) if path else None
    return value if isinstance(value, str) and value else None


class StateDriver:
    """Runs one reconcile's steps for ``cluster`` against ``client`` (module doc)."""

    def __init__(
        self,
        *,
        client: Client,
        reader: CacheReader,
        apply: ServerSideApply,
        events: EventRecorder,
        cluster: Obj,
        machine_sets_of: Callable[[Obj], list[Obj]] | None = None,
    ) -> None:
        self.client = client
        self.reader = reader
        self.ssa = apply
        self.events = events
        self.cluster = cluster
        #: the MachineSets of a MachineDeployment, from the cache (None: the kind is not served)
        self.machine_sets_of = machine_sets_of
        #: writes made, for logs and tests
        self.writes = 0

    async def run(self, steps: Steps) -> None:
        """Answer every step; a failed write is thrown into the steps, which add context and stop."""
        try:
            step = next(steps)
            while True:
                try:
                    reply = await self.answer(step)
                except TopologyError as err:
                    step = steps.throw(err)
                else:
                    step = steps.send(reply)
        except StopIteration:
            return

    async def answer(self, step: Step) -> Any:
        if isinstance(step, Diff):
            return await self._diff(step)
        if isinstance(step, LiveTopologyNames):
            return await self._live_topology_names(step.kind)
        if isinstance(step, LiveLeftovers):
            return await self._live_leftovers(step)
        if isinstance(step, EnsureShim):
            return await self._ensure_shim(step.obj)
        if isinstance(step, Create):
            return await self._create(step)
        if isinstance(step, Update):
            await self._update(step)
            return None
        await self._delete(step)
        return None

    # --- steps --------------------------------------------------------------------------------------------

    async def _diff(self, step: Diff) -> Any:
        try:
            return await self.ssa.diff(step.current, step.desired, ignore=step.ignore, cluster=step.cluster)
        except ApiError as err:
            raise TopologyError(
                f"failed to create patch helper for {describe(step.current)}: {err}", obj=key_of(step.current)
            ) from err

    async def _live_topology_names(self, kind: WorkerKind) -> set[str]:
        cluster_name, namespace = name_of(self.cluster), namespace_of(self.cluster)
        try:
            listed = await self.client.list(
                c.CLUSTER_API_VERSION,
                kind.kind,
                namespace=namespace,
                label_selector={"matchLabels": {c.LABEL_CLUSTER_NAME: cluster_name, c.LABEL_TOPOLOGY_OWNED: ""}},
            )
        except ApiError as err:
            raise TopologyError(f"failed to read {kind.kind}s for managed topology: {err}") from err
        return {labels_of(obj).get(kind.name_label, "") for obj in listed.items} - {""}

    async def _live_leftovers(self, step: LiveLeftovers) -> list[Obj]:
        api_version, kind = str(step.like.get("apiVersion")), str(step.like.get("kind"))
        expressions = [{"key": label, "operator": "DoesNotExist"} for label in step.without]
        try:
            if step.unless_cluster_has is not None:
                # a list of one (the topology's roles list Clusters, they do not get them)
                clusters = await self.client.list(
                    str(self.cluster.get("apiVersion")),
                    c.KIND_CLUSTER,
                    namespace=namespace_of(self.cluster),
                    field_selector=f"metadata.name={name_of(self.cluster)}",
                )
                if any(dig(cluster, *step.unless_cluster_has) for cluster in clusters.items):
                    return []
            listed = await self.client.list(
                api_version,
                kind,
                namespace=namespace_of(step.like),
                label_selector={"matchLabels": dict(step.labels), "matchExpressions": expressions},
            )
        except ApiError as err:
            raise TopologyError(f"failed to read {kind}s left by an earlier reconcile: {err}") from err
        return [
            {**obj, "apiVersion": api_version, "kind": kind}
            for obj in listed.items
            if not dig(obj, "metadata", "deletionTimestamp")
        ]

    async def _ensure_shim(self, shim: Obj) -> Obj:
        self.writes += 1
        try:
            return await self.client.create(await self.ssa.with_owner_versions(shim))
        except AlreadyExists:
            pass
        except ApiError as err:
            raise TopologyError(f"failed to create the cluster shim object: {err}") from err
        try:
            return await self.client.get("v1", "Secret", name_of(shim), namespace=namespace_of(shim))
        except ApiError as err:
            raise TopologyError(f"failed to read the cluster shim object: {err}") from err

    def _event_target(self, obj: Obj) -> Obj:
        """Changes are told on the Cluster; a MachineHealthCheck's on itself, as upstream does."""
        return obj if obj.get("kind") == c.KIND_MACHINE_HEALTH_CHECK else self.cluster

    async def _create(self, step: Create) -> Obj:
        obj = step.obj
        self.writes += 1
        try:
            created = await self.ssa.apply(obj, ignore=step.ignore)
        except ApiError as err:
            logger.warning("failed to create %s: %s", describe(obj), err)
            found = await self._made_anyway(obj, err)
            if found is None:
                raise TopologyError(create_error_without_object_name(err, obj), obj=key_of(obj)) from err
            logger.info("%s was created although its create failed: %s", describe(obj), err)
            created = found
        if step.replaces is not None:
            message = (
                f'Created "{describe(created)}" as a replacement for "{name_of(step.replaces)}" (template rotation)'
            )
        else:
            message = f'Created "{describe(created)}"'
        self.events.normal(self._event_target(created), CREATE_REASON, message)
        logger.info("created %s", describe(created))
        if step.wait_for_cache:
            await self._wait_for_cache(created, f"failed waiting for {obj.get('kind')} {obj.get('kind')}", "create")
        return created

    async def _made_anyway(self, obj: Obj, err: ApiError) -> Obj | None:
        """After a failed create: the object when it exists anyway (its answer was lost), None when the create surely
        did not happen; :class:`OutcomeUnknown` keeps the caller from cleaning up what it may reference."""
        try:
            return await outcome.created_anyway(self.client, obj, err)
        except outcome.OutcomeUnknown as unknown:
            raise OutcomeUnknown(create_error_without_object_name(unknown, obj), obj=key_of(obj)) from err

    async def _may_have_changed(self, step: Update) -> bool:
        """After an update answered with an error that does not say whether it happened: False only when it surely
        did not — the object's generation (for a spec change; other writers rarely touch a spec) or resourceVersion
        is still the one the update started from. What was made for the update is cleaned up only then."""
        current = step.current
        key = "generation" if step.diff.has_spec_changes else "resourceVersion"
        try:
            live = await outcome.lookup(self.client, current)
        except outcome.OutcomeUnknown:
            return True
        return live is not None and bool(dig(live, "metadata", key) != dig(current, "metadata", key))

    async def _update(self, step: Update) -> None:
        current = step.current
        self.writes += 1
        try:
            updated = await self.ssa.apply(step.desired, current=current, ignore=step.ignore, cluster=step.cluster)
        except ApiError as err:
            message = f"failed to patch {describe(current)}: {err}"
            if outcome.may_have_been_applied(err) and await self._may_have_changed(step):
                raise OutcomeUnknown(message, obj=key_of(current)) from err
            raise TopologyError(message, obj=key_of(current)) from err
        message = f'Updated "{describe(current)}"'
        if step.metadata_only:
            message += " (metadata changes)"
        old_version, new_version = _version(current, step.version), _version(step.desired, step.version)
        if old_version and new_version and old_version != new_version:
            message += f" with version change from {old_version} to {new_version}"
        self.events.normal(self._event_target(current), UPDATE_REASON, message)
        logger.info("updated %s", describe(current))
        if step.wait_for_cache:
            await self._wait_for_cache(updated, f"failed waiting for {describe(current)}", "update")

    async def _delete(self, step: Delete) -> None:
        obj = step.obj
        if step.when == "with_owner":
            return  # its owner's controller deletes it (the MachinePool controller, the MachineDeployment helper)
        if step.when == "when_unused" and self._used_by_a_machine_set(obj, step.owner):
            return  # the MachineSet helper deletes it with the last MachineSet that uses it
        is_shim = obj.get("kind") == "Secret"
        self.writes += 1
        try:
            await outcome.delete_retrying(
                self.client, str(obj.get("apiVersion")), str(obj.get("kind")), name_of(obj), namespace=namespace_of(obj)
            )
        except NotFound:
            pass
        except ApiError as err:
            what = "the cluster shim object" if is_shim else describe(obj)
            raise TopologyError(f"failed to delete {what}: {err}", obj=key_of(obj)) from err
        if not is_shim:
            self.events.normal(self._event_target(obj), DELETE_REASON, f'Deleted "{describe(obj)}"')
        logger.info("deleted %s", describe(obj))

    def _used_by_a_machine_set(self, template: Obj, deployment: Obj | None) -> bool:
        if deployment is None or self.machine_sets_of is None:
            return False
        for machine_set in self.machine_sets_of(deployment):
            spec = dig(machine_set, "spec", "template", "spec") or {}
            for ref in (spec.get("infrastructureRef"), dig(spec, "bootstrap", "configRef")):
                if (
                    isinstance(ref, dict)
                    and ref.get("kind") == template.get("kind")
                    and ref.get("name") == name_of(template)
                ):
                    return True
        return False

    async def _wait_for_cache(self, written: Obj, failure: str, what: str) -> None:
        """Poll the cache until it shows ``written`` (its resourceVersion or a newer one)."""
        wanted = int(dig(written, "metadata", "resourceVersion") or 0)
        api_version, kind = str(written.get("apiVersion")), str(written.get("kind"))
        try:
            async with asyncio.timeout(CACHE_WAIT_TIMEOUT):
                while True:
                    cached = self.reader.get(api_version, kind, namespace_of(written), name_of(written))
                    if cached is not None and int(dig(cached, "metadata", "resourceVersion") or 0) >= wanted:
                        return
                    await asyncio.sleep(CACHE_POLL_INTERVAL)
        except TimeoutError:
            # upstream's message names the kind twice (it passes the kind where the name belongs)
            raise NotVisibleInCache(f"{failure} to be visible in the cache after {what}", obj=key_of(written)) from None
