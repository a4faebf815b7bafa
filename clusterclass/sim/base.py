"""What every simulated provider controller shares: the context, reads from the caches, writes as patches.

A provider controller here is what one of upstream's is: a reconcile of one kind, fed by watches on
that kind and on the kinds it depends on, reading from the manager's shared informers and writing
with the :class:`~clusterclass.kube.client.Client` — so it runs unchanged against the embedded store
and against a real kube-apiserver.

Writes are merge patches computed from the object as read and the object as the reconcile left it
(upstream's patch helper does the same), sent with the resourceVersion read: if anything changed the
object in between, the write is refused with a Conflict and the key is reconciled again from the new
state, so a stale cache never overwrites another writer's change (the topology controller's
``TopologyReconciled`` condition on a Cluster, for one). Nothing is sent when nothing changed, which
is why a simulation at steady state, or restarted at steady state, writes nothing.
"""

from __future__ import annotations

import logging
import random
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.conversion import CONVERSION_DATA_ANNOTATION, convert, hub_version
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.merge_patch import create_merge_patch
from clusterclass.api.objects import Obj, annotations_of, dig, group_of, labels_of, name_of, namespace_of
from clusterclass.controllers.runtime.controller import Controller, ToKeys, key_of, split_key
from clusterclass.controllers.runtime.events import EventRecorder
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.controllers.runtime.predicates import Predicate, is_paused
from clusterclass.kube.client import Client
from clusterclass.kube.errors import ApiError, NotFound
from clusterclass.kube.gotext import rfc3339
from clusterclass.kube.indexes import CONTROLLER_INDEX, LABEL_INDEX
from clusterclass.kube.informer import Informer
from clusterclass.kube.outcome import created_anyway, delete_retrying
from clusterclass.sim.conditions import paused_condition, set_v1beta2
from clusterclass.sim.timing import NONE, Timing
from clusterclass.sim.versions import SimManager
from clusterclass.sim.workload import WorkloadClusters

logger = logging.getLogger(__name__)

#: the field manager of the providers' patches: controller-runtime's default, the binary's name
FIELD_MANAGER = "manager"
#: the alphabet of Cluster API's random name suffixes (apiserver's generateName alphabet)
NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
#: the Machine fields a MachineDeployment, MachineSet and KCP keep in step in place, with no rollout
NODE_TIMEOUTS = ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout")
#: the simulated providers' default workers per controller (controller-runtime's default is 1, CAPI's 10)
DEFAULT_WORKERS = 4


@dataclass
class SimContext:
    """What the provider controllers of one simulation share."""

    #: the shared manager as the providers use it: in their API version (:mod:`clusterclass.sim.versions`)
    manager: SimManager
    workloads: WorkloadClusters
    timing: Timing = field(default_factory=lambda: NONE)
    rng: random.Random = field(default_factory=random.Random)
    #: wall-clock time, for timestamps the objects carry
    wall: Callable[[], datetime] = field(default=lambda: datetime.now(UTC))
    #: the RuntimeSDK feature gate: a Cluster with a topology is deleted only once ok-to-delete
    runtime_sdk: bool = True
    workers: int = DEFAULT_WORKERS
    #: how many instances a DockerMachinePool may run beyond its replicas while it rolls (None: as many as
    #: it replaces, all at once, as CAPD v1.6 does; 1: one instance at a time)
    pool_max_surge: int | None = None

    def now(self) -> str:
        """ "Now" as Kubernetes writes it (RFC 3339, whole seconds)."""
        return rfc3339(self.wall())

    def suffix(self, length: int = 5) -> str:
        return "".join(self.rng.choice(NAME_ALPHABET) for _ in range(length))

    def lower_alphanumeric(self, length: int) -> str:
        return "".join(self.rng.choice(string.digits + string.ascii_lowercase) for _ in range(length))


def cluster_name_of(obj: Obj) -> str | None:
    """The Cluster an object belongs to: ``spec.clusterName``, else the cluster-name label."""
    return dig(obj, "spec", "clusterName") or labels_of(obj).get(c.LABEL_CLUSTER_NAME)


def has_owner(obj: Obj, kind: str, name: str | None = None, *, controller: bool | None = None) -> bool:
    for ref in dig(obj, "metadata", "ownerReferences") or []:
        if ref.get("kind") != kind or (name is not None and ref.get("name") != name):
            continue
        if controller is None or bool(ref.get("controller")) == controller:
            return True
    return False


def controller_of(obj: Obj) -> Obj | None:
    """The ownerReference with ``controller: true``, if any."""
    return next((ref for ref in dig(obj, "metadata", "ownerReferences") or [] if ref.get("controller")), None)


def owner_reference(owner: Obj, *, controller: bool = False) -> Obj:
    ref: Obj = {
        "apiVersion": owner["apiVersion"],
        "kind": owner["kind"],
        "name": name_of(owner),
        "uid": dig(owner, "metadata", "uid"),
    }
    if controller:
        ref["controller"] = True
        ref["blockOwnerDeletion"] = True
    return ref


def ensure_owner(obj: Obj, owner: Obj, *, controller: bool = False) -> None:
    """Give ``obj`` an ownerReference to ``owner`` (replacing one to the same kind and name, so a
    recreated owner's new uid is taken); a controller reference is set only if ``obj`` has no other
    controller (upstream refuses to take an object another controller owns)."""
    refs = list(dig(obj, "metadata", "ownerReferences") or [])
    wanted = owner_reference(owner, controller=controller)
    group = group_of(str(owner["apiVersion"]))
    for i, ref in enumerate(refs):
        if ref.get("kind") == owner["kind"] and ref.get("name") == name_of(owner):
            if group_of(str(ref.get("apiVersion", ""))) != group:
                continue
            merged = {**ref, **wanted}
            if not controller and ref.get("controller"):
                merged["controller"] = True
                merged["blockOwnerDeletion"] = ref.get("blockOwnerDeletion", True)
            refs[i] = merged
            obj["metadata"]["ownerReferences"] = refs
            return
    if controller:
        other = controller_of(obj)
        if other is not None:
            raise OwnedByAnother(
                f"{obj.get('kind')} {name_of(obj)} is already controlled by {other.get('kind')} {other.get('name')}"
            )
    refs.append(wanted)
    obj.setdefault("metadata", {})["ownerReferences"] = refs


def remove_owner(obj: Obj, kind: str, name: str) -> None:
    refs = [
        ref
        for ref in dig(obj, "metadata", "ownerReferences") or []
        if not (ref.get("kind") == kind and ref.get("name") == name)
    ]
    obj["metadata"]["ownerReferences"] = refs
    if not refs:
        del obj["metadata"]["ownerReferences"]


class OwnedByAnother(Exception):
    """An object another controller already controls."""


def add_finalizer(obj: Obj, finalizer: str) -> bool:
    finalizers = list(dig(obj, "metadata", "finalizers") or [])
    if finalizer in finalizers:
        return False
    obj.setdefault("metadata", {})["finalizers"] = [*finalizers, finalizer]
    return True


def remove_finalizer(obj: Obj, finalizer: str) -> bool:
    finalizers = list(dig(obj, "metadata", "finalizers") or [])
    if finalizer not in finalizers:
        return False
    finalizers.remove(finalizer)
    if finalizers:
        obj["metadata"]["finalizers"] = finalizers
    else:
        obj["metadata"].pop("finalizers", None)
    return True


def set_label(obj: Obj, key: str, value: str) -> None:
    obj.setdefault("metadata", {}).setdefault("labels", {})[key] = value


def deleting(obj: Obj) -> bool:
    return bool(dig(obj, "metadata", "deletionTimestamp"))


def ref_matches(ref: Obj | None, obj: Obj) -> bool:
    """Whether an object reference (apiVersion's group, kind, name) names ``obj``."""
    return (
        isinstance(ref, dict)
        and ref.get("kind") == obj.get("kind")
        and ref.get("name") == name_of(obj)
        and group_of(str(ref.get("apiVersion", ""))) == group_of(str(obj.get("apiVersion", "")))
    )


async def write(manager: Manager | SimManager, before: Obj, after: Obj) -> Obj:
    """Send what changed from ``before`` to ``after`` as merge patches (object, then status).

    Both carry the resourceVersion read, so a concurrent change makes them Conflict (module doc).
    Returns the object as written (``before`` itself when nothing changed), in ``after``'s version.

    The providers compute in v1beta1 but write (and create: :meth:`ProviderController.create`) a Cluster API kind
    in its hub version, as upstream's controllers do: a v1beta1 write cannot change what the hub restores from the
    conversion-data annotation (a Machine's phase, for one), so both sides are converted, without that annotation,
    and the patch sent in v1beta2.
    """
    written = await _write(manager, before, after, read_back=True)
    assert written is not None
    return written


async def save(manager: Manager | SimManager, before: Obj, after: Obj) -> None:
    """:func:`write`, for a caller that does not read the object as written (its conversion back is skipped)."""
    await _write(manager, before, after, read_back=False)


async def _write(manager: Manager | SimManager, before: Obj, after: Obj, *, read_back: bool) -> Obj | None:
    if before == after:  # most reconciles find nothing to change: not worth two conversions to tell
        return before
    api_version, kind = str(after["apiVersion"]), str(after["kind"])
    client: Any = manager.client
    hub_api_version = _hub_api_version(api_version, kind)
    if hub_api_version is not None:
        hub_before = _in_hub(manager, before, hub_api_version)
        written = await _patch(_unpinned(client), hub_before, _in_hub(manager, after, hub_api_version))
        if written is hub_before:
            return before
        return convert(written, api_version, api_versions=manager.reader.api_versions) if read_back else None
    return await _patch(client, before, after)


def _hub_api_version(api_version: str, kind: str) -> str | None:
    """The apiVersion the providers write ``kind`` in when ``api_version`` is not it: its hub's; else None."""
    hub = hub_version(group_of(api_version), kind)
    if hub is None or api_version.endswith(f"/{hub}"):
        return None
    return f"{group_of(api_version)}/{hub}"


def _in_hub(manager: Manager | SimManager, obj: Obj, hub_api_version: str) -> Obj:
    """``obj`` converted to its hub version for a write, without its conversion-data annotation (:func:`write`)."""
    return convert(_without_conversion_data(obj), hub_api_version, api_versions=manager.reader.api_versions)


def _unpinned(client: Any) -> Any:
    """The client itself under the simulation's version pinning, for a request made in the hub version."""
    return getattr(client, "unpinned", client)


def _without_conversion_data(obj: Obj) -> Obj:
    annotations = dig(obj, "metadata", "annotations")
    if not isinstance(annotations, dict) or CONVERSION_DATA_ANNOTATION not in annotations:
        return obj
    kept = {k: v for k, v in annotations.items() if k != CONVERSION_DATA_ANNOTATION}
    return {**obj, "metadata": {**obj["metadata"], "annotations": kept}}


async def _patch(client: Any, before: Obj, after: Obj) -> Obj:
    api_version, kind = str(after["apiVersion"]), str(after["kind"])
    name, namespace = name_of(after), namespace_of(after) or None
    version = dig(before, "metadata", "resourceVersion")
    main_before = {k: v for k, v in before.items() if k != "status"}
    main_after = {k: v for k, v in after.items() if k != "status"}
    result = before
    patch = create_merge_patch(main_before, main_after)
    if patch:
        patch.setdefault("metadata", {})["resourceVersion"] = version
        result = await client.patch(api_version, kind, name, patch, namespace=namespace, field_manager=FIELD_MANAGER)
        version = dig(result, "metadata", "resourceVersion")
    status_patch = create_merge_patch({"status": before.get("status") or {}}, {"status": after.get("status") or {}})
    if status_patch:
        status_patch["metadata"] = {"resourceVersion": version}
        result = await client.patch(
            api_version, kind, name, status_patch, namespace=namespace, field_manager=FIELD_MANAGER, status=True
        )
    return dict(result)


def set_v1beta2_counters(status: Obj, *, ready: int, available: int, up_to_date: int) -> None:
    """The replica counters with v1beta2 semantics, kept under ``status.v1beta2`` of a v1beta1 object (what v1.14's
    controllers write and a v1beta2 read shows as ``status.readyReplicas`` & co.; the v1beta1 counters beside them
    keep their old meaning, under ``status.deprecated.v1beta1`` of the v1beta2 object)."""
    v1beta2 = status.setdefault("v1beta2", {})
    v1beta2.update({"readyReplicas": ready, "availableReplicas": available, "upToDateReplicas": up_to_date})


def copy_node_timeouts(source: Obj, target: Obj) -> None:
    """The node timeouts of the Machine spec ``source`` set on ``target`` (and those ``source`` lacks removed)."""
    for timeout in NODE_TIMEOUTS:
        if timeout in source:
            target[timeout] = source[timeout]
        else:
            target.pop(timeout, None)


class ProviderController:
    """One simulated controller: a reconcile of :attr:`kind` with its watches (module doc).

    Subclasses set :attr:`name`, :attr:`api_version` and :attr:`kind`, implement :meth:`reconcile`
    (given the cached object, shared and read-only: change a :func:`json_copy` and :meth:`write` it;
    return seconds to requeue or None) and add watches in :meth:`setup_watches`.
    """

    name = ""
    api_version = ""
    kind = ""

    def __init__(self, context: SimContext) -> None:
        self.context = context
        self.manager = context.manager
        self.timing = context.timing
        self.controller = Controller(self.name, self._reconcile, workers=context.workers, clock=self.manager.clock)
        self.events: EventRecorder = self.manager.event_recorder(self.name)
        self.informer: Informer | None = None
        self._dynamic: set[tuple[str, str]] = set()

    async def setup(self) -> None:
        self.informer = await self.manager.informer(self.api_version, self.kind)
        self.controller.watch(self.informer)
        await self.setup_watches()
        self.manager.add(self.controller)

    async def setup_watches(self) -> None:
        """Watches besides the controller's own kind."""

    async def close(self) -> None:
        """Release what the provider holds besides its manager's informers (by default nothing)."""

    async def _reconcile(self, key: str) -> float | None:
        assert self.informer is not None
        namespace, name = split_key(key)
        found = self.informer.get(name, namespace)
        if found is None:
            return await self.gone(namespace or "", name)
        return await self.reconcile(found)

    async def reconcile(self, current: Obj) -> float | None:
        raise NotImplementedError

    async def gone(self, namespace: str, name: str) -> float | None:
        """The object was deleted (a chance to drop what was kept for it)."""
        return None

    # -- reading --------------------------------------------------------------------------------------

    async def watched_informer(self, api_version: str, kind: str, to_keys: ToKeys) -> Informer:
        """The shared informer of ``kind``; the first call also maps its events to keys of this controller."""
        informer = await self.manager.informer(api_version, kind)
        marker = (group_of(api_version), kind)
        if marker not in self._dynamic:
            self._dynamic.add(marker)
            self.controller.watch(informer, to_keys)
        return informer

    async def get_ref(self, ref: Obj | None, namespace: str, to_keys: ToKeys | None = None) -> Obj | None:
        """The object ``ref`` names (from the cache), watching its kind mapped by ``to_keys``
        (default: through its controller ownerReference of this controller's kind)."""
        if not isinstance(ref, dict) or not ref.get("kind") or not ref.get("name"):
            return None
        informer = await self.watched_informer(
            str(ref.get("apiVersion", "")), str(ref["kind"]), to_keys or self.through_controller
        )
        return informer.get(str(ref["name"]), str(ref.get("namespace") or namespace))

    def through_controller(self, obj: Obj) -> list[str]:
        """Map an object to the key of its controller, when that is of this controller's kind."""
        owner = controller_of(obj)
        if owner is None or owner.get("kind") != self.kind:
            return []
        return [f"{namespace_of(obj)}/{owner.get('name')}"]

    def through_owner(self, obj: Obj) -> list[str]:
        """Map an object to every owner of this controller's kind."""
        return [
            f"{namespace_of(obj)}/{ref.get('name')}"
            for ref in dig(obj, "metadata", "ownerReferences") or []
            if ref.get("kind") == self.kind
        ]

    async def cluster(self, namespace: str, name: str | None) -> Obj | None:
        if not name:
            return None
        clusters = await self.manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER)
        return clusters.get(name, namespace)

    def in_cluster(self, informer: Informer, namespace: str, cluster: str) -> list[Obj]:
        """Objects of ``informer`` labelled with ``cluster`` as their cluster-name, in ``namespace``."""
        return [
            obj
            for obj in informer.by_index(LABEL_INDEX, f"{c.LABEL_CLUSTER_NAME}={cluster}")
            if namespace_of(obj) == namespace
        ]

    def of_cluster(self, cluster: Obj) -> list[str]:
        """Keys of this controller's objects in ``cluster`` (a Cluster watch's mapping)."""
        assert self.informer is not None
        return [key_of(obj) for obj in self.in_cluster(self.informer, namespace_of(cluster), name_of(cluster))]

    async def watch_clusters(self, *predicates: Predicate) -> None:
        clusters = await self.manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER)
        self.controller.watch(clusters, self.of_cluster, *predicates)

    @staticmethod
    def paused(obj: Obj, cluster: Obj | None) -> bool:
        return is_paused(obj) or (cluster is not None and is_paused(cluster))

    async def pause(self, current: Obj, cluster: Obj | None) -> bool:
        """Whether reconciling ``current`` is paused; if so its v1beta2 ``Paused`` condition says why (as upstream's
        core and kubeadm controllers keep it; the reconcile path sets it False)."""
        if not self.paused(current, cluster):
            return False
        paused = json_copy(current)
        set_v1beta2(paused, [paused_condition(current, cluster)], self.context.now())
        if paused != current:
            await self.save(current, paused)
        return True

    # -- writing --------------------------------------------------------------------------------------

    async def create(self, obj: Obj, *, field_manager: str | None = None) -> Obj:
        """Create ``obj`` (named by the caller); when the create fails in a way that does not say whether it was
        made (a 5xx, a timeout), the object found under its name instead (:mod:`clusterclass.kube.outcome`), so a
        lost answer neither duplicates it nor gets what was made for it cleaned up."""
        api_version = str(obj.get("apiVersion"))
        hub_api_version = _hub_api_version(api_version, str(obj.get("kind")))
        client: Any = self.manager.client
        if hub_api_version is not None:
            # created in the hub version, as upstream's controllers create (their managedFields entry is then
            # the hub's, which the providers' later writes, in the hub too, update without a conversion)
            obj = _in_hub(self.manager, obj, hub_api_version)
            client = _unpinned(client)
        try:
            created: Obj = await client.create(obj, field_manager=field_manager)
        except ApiError as err:
            found = await created_anyway(client, obj, err)
            if found is None:
                raise
            created = found
        if hub_api_version is None:
            return created
        return convert(created, api_version, api_versions=self.manager.reader.api_versions)

    async def write(self, before: Obj, after: Obj) -> Obj:
        """Send what changed from ``before`` to ``after`` (:func:`write`); the object as written."""
        return await write(self.manager, before, after)

    async def save(self, before: Obj, after: Obj) -> None:
        """Send what changed from ``before`` to ``after``, not reading the result back (:func:`save`)."""
        await save(self.manager, before, after)

    async def release(self, current: Obj, final: Obj, finalizer: str) -> bool:
        """Write ``final`` (the last status of a deleting object), then remove ``finalizer``, letting it go.

        Two writes, status first: once the finalizer is gone the object may be gone too. Whether it was held.
        """
        written = await self.write(current, final)
        released = json_copy(written)
        if not remove_finalizer(released, finalizer):
            return False
        await self.save(written, released)
        return True

    async def adopt(self, obj: Obj, owner: Obj, cluster_name: str) -> Obj:
        """Upstream's external-object reconcile: ``owner`` becomes ``obj``'s controller (the ownerReference of
        whoever cloned it for the owner, the owner's own controller, goes), with the cluster-name label."""
        adopted = json_copy(obj)
        creator = controller_of(owner)
        if creator is not None:
            refs = [
                ref
                for ref in dig(adopted, "metadata", "ownerReferences") or []
                if not (ref.get("kind") == creator.get("kind") and ref.get("name") == creator.get("name"))
            ]
            adopted["metadata"]["ownerReferences"] = refs
        ensure_owner(adopted, owner, controller=True)
        set_label(adopted, c.LABEL_CLUSTER_NAME, cluster_name)
        return await self.write(obj, adopted) if adopted != obj else obj

    async def sync_machines_in_place(
        self, machines: list[Obj], labels: dict[str, str], annotations: dict[str, str], template_spec: Obj
    ) -> None:
        """Keep owned Machines in step with their owner's template without a rollout, as upstream's MachineSet
        and KubeadmControlPlane both do: ``labels`` and ``annotations`` merged onto each Machine and onto its
        infrastructure machine and bootstrap config, the node timeouts copied from ``template_spec``.
        ``machines`` is updated with what was written."""
        for i, machine in enumerate(machines):
            if deleting(machine):
                continue
            updated = json_copy(machine)
            updated["metadata"]["labels"] = {**labels_of(machine), **labels}
            if annotations:
                updated["metadata"]["annotations"] = {**annotations_of(machine), **annotations}
            copy_node_timeouts(template_spec, updated["spec"])
            if updated != machine:
                machines[i] = await self.write(machine, updated)
            refs = (dig(machine, "spec", "infrastructureRef"), dig(machine, "spec", "bootstrap", "configRef"))
            await self.sync_metadata(refs, namespace_of(machine), labels, annotations)

    async def sync_metadata(
        self, refs: Iterable[Obj | None], namespace: str, labels: dict[str, str], annotations: dict[str, str]
    ) -> None:
        """Merge ``labels`` and ``annotations`` onto the objects ``refs`` name (a Machine's infrastructure
        machine and bootstrap config, as the MachineSet and KCP keep them in step with the Machine)."""
        for ref in refs:
            part = await self.get_ref(ref, namespace, lambda _obj: [])
            if part is None or deleting(part):
                continue
            changed = json_copy(part)
            changed["metadata"]["labels"] = {**labels_of(part), **labels}
            if annotations:
                changed["metadata"]["annotations"] = {**annotations_of(part), **annotations}
            if changed != part:
                await self.save(part, changed)

    def annotations_for_failures(self, obj: Obj, cluster: Obj | None) -> Iterable[dict[str, str]]:
        return [annotations_of(obj), annotations_of(cluster)] if cluster is not None else [annotations_of(obj)]


def owned_or_orphans(informer: Informer, owner: Obj, selector: dict[str, str]) -> tuple[list[Obj], list[Obj]]:
    """The objects ``owner`` controls, and those its ``selector`` matches that no one controls (to adopt),
    in ``owner``'s namespace, by name: found through the controller and label indexes, not a namespace scan."""
    namespace = namespace_of(owner)
    owned = informer.by_index(CONTROLLER_INDEX, str(dig(owner, "metadata", "uid")))
    orphans: list[Obj] = []
    if selector:
        key, value = sorted(selector.items())[0]
        orphans = [
            obj
            for obj in informer.by_index(LABEL_INDEX, f"{key}={value}")
            if namespace_of(obj) == namespace
            and controller_of(obj) is None
            and all(labels_of(obj).get(k) == v for k, v in selector.items())
        ]
    return sorted(owned, key=name_of), sorted(orphans, key=name_of)


def requeue_min(*values: float | None) -> float | None:
    """The soonest of several requeue requests (None: none asked)."""
    asked = [v for v in values if v is not None]
    return min(asked) if asked else None


async def delete_if_present(client: Client, api_version: str, kind: str, name: str, namespace: str | None) -> bool:
    """Delete an object; whether it was there (a NotFound is no error: someone deleted it already). Transient errors
    are retried: what this deletes is mostly a clean-up, which must not leak on one 500."""
    try:
        await delete_retrying(client, api_version, kind, name, namespace=namespace or None)
    except NotFound:
        return False
    return True
