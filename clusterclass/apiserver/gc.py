"""Owner-reference garbage collection for the embedded store: :class:`GarbageCollector`.

A real cluster deletes dependents in kube-controller-manager's garbage collector; the embedded
management cluster has no kube-controller-manager, so its store runs this one. It follows the
collector's documented behaviour and its algorithm (a dependency graph fed by every change, an
"attempt to delete" and an "attempt to orphan" work list), restated here from what it does:

- **Background** (an owner removed from storage): each dependent is examined. An owner reference is
  *dangling* when no object of that kind and name exists where the owner must live, or one exists
  with another ``uid``; *waiting* when the owner is being deleted in the foreground; *solid*
  otherwise. A dependent with no solid reference is deleted (in the foreground when one of its
  owners is waiting and it has dependents of its own, otherwise with the policy its own
  ``orphan``/``foregroundDeletion`` finalizer asks for, else in the background). A dependent that
  keeps a solid owner only loses its dangling and waiting references.
- **Foreground** (an owner whose deletion started with the ``foregroundDeletion`` finalizer, which the
  API server adds for ``propagationPolicy: Foreground``): every dependent is examined as above, so
  dependents without other owners are deleted, recursively in the foreground for those that have
  dependents themselves. The collector removes the owner's finalizer (and so the owner) once no
  dependent that references it with ``blockOwnerDeletion: true`` exists any more; a dependent held
  by its own finalizers keeps holding the owner. Dependents without ``blockOwnerDeletion`` are still
  deleted but do not hold the owner. When a dependent's owner and one of the dependent's own
  dependents are both deleting in the foreground, the dependent's references are made non-blocking
  first, so that a cycle cannot hold every object forever. A dependent created while its owner already
  waits is examined only when something else makes the owner look again (a blocking dependent going
  away), as in kube-controller-manager.
- **Orphan** (deletion started with the ``orphan`` finalizer, for ``propagationPolicy: Orphan``): the
  owner's references are removed from every dependent, then the finalizer from the owner.
- **Scopes**: owner references carry no namespace. A namespaced dependent's owner is looked up in the
  dependent's own namespace (or cluster-wide for a cluster-scoped kind), so an owner in another
  namespace is dangling and the dependent is collected once all its owners are gone. A
  cluster-scoped dependent that names a namespaced kind is unresolvable: it is never collected and
  its other references are left alone. When the owner named by a reference does exist in another
  namespace, a ``Warning`` Event with reason ``OwnerRefInvalidNamespace`` is recorded about the
  dependent (in the ``default`` namespace for a cluster-scoped one), as kube-controller-manager does.
- A reference to a kind the store does not serve is neither solid nor dangling: the dependent waits
  (kube-controller-manager retries until discovery knows the kind); :meth:`GarbageCollector.kinds_changed`
  retries such dependents after a kind is registered.

The one difference from kube-controller-manager: collection is **eager**. The store reports every
stored change (:meth:`~GarbageCollector.observe_stored`, :meth:`~GarbageCollector.observe_removed`) and
calls :meth:`~GarbageCollector.run_pending` before it answers a write, so a whole cascade has happened
when ``delete`` returns, in a deterministic order. kube-controller-manager converges eventually and in
parallel; clients must not rely on either, and a controller written for the real cluster is unaffected.
The API answer itself is unchanged: a foreground delete still returns the object marked with
``deletionTimestamp`` and ``foregroundDeletion`` (watchers see it, then its removal).

Every rule above was checked against kube-controller-manager v1.37.2 (built from its Go module, run
with only its ``garbagecollector`` controller against a real kube-apiserver): the same scenarios as
``tests/apiserver/test_gc.py`` end the same way there, and its Event has the fields written here.

The collector acts only through the store's public, synchronous calls (:class:`GcStore`), as
kube-controller-manager acts only through the API; it never touches the store's internals. The
rules for which finalizers a delete request adds are the API server's, not the collector's, and are
in :func:`deletion_finalizers` so the store can apply them.
"""

from __future__ import annotations

import contextlib
import logging
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any, NamedTuple, Protocol

from clusterclass.api.objects import Obj, owner_references_of, split_api_version
from clusterclass.kube.client import Preconditions, PropagationPolicy
from clusterclass.kube.errors import AlreadyExists, ApiError, NotFound
from clusterclass.kube.gotext import rfc3339

log = logging.getLogger(__name__)

#: the finalizer that holds an owner until its blocking dependents are gone (``metav1.FinalizerDeleteDependents``)
FOREGROUND_FINALIZER = "foregroundDeletion"
#: the finalizer that holds an owner until its dependents no longer reference it (``metav1.FinalizerOrphanDependents``)
ORPHAN_FINALIZER = "orphan"
#: the field manager of the collector's writes, as kube-controller-manager's appear on a real cluster
FIELD_MANAGER = "kube-controller-manager"
#: ``source.component`` of the collector's Events
EVENT_COMPONENT = "garbage-collector-controller"
INVALID_NAMESPACE_REASON = "OwnerRefInvalidNamespace"


class Scope(Protocol):
    """What the collector needs to know of a kind: whether its objects live in a namespace."""

    @property
    def namespaced(self) -> bool: ...


class GcStore(Protocol):
    """The store's calls the collector uses: the API a kube-controller-manager would use, synchronously.

    ``kind_info`` raises an :class:`~clusterclass.kube.errors.ApiError` for a kind the store does not serve.
    """

    def kind_info(self, api_version: str, kind: str) -> Scope: ...

    def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj: ...

    def create(self, obj: Obj, *, field_manager: str | None = ...) -> Obj: ...

    def patch_merge(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Obj,
        *,
        namespace: str | None = ...,
        field_manager: str | None = ...,
    ) -> Obj: ...

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = ...,
        preconditions: Preconditions | None = ...,
        propagation_policy: PropagationPolicy | None = ...,
    ) -> Obj | None: ...


def deletion_finalizers(finalizers: Sequence[str], policy: PropagationPolicy | None) -> list[str] | None:
    """The finalizers a delete request leaves on an object, or None when it leaves them as they are.

    The API server's rule (``deletionFinalizersForGarbageCollection``): ``Orphan`` puts ``orphan``
    and ``Foreground`` puts ``foregroundDeletion`` in place of whichever of the two was there;
    ``Background`` removes both. Without a policy the object's own ``orphan`` or
    ``foregroundDeletion`` finalizer decides (the first one listed), and without either it is
    ``Background``. An object left with finalizers is marked deleted instead of removed; one whose
    finalizers a new delete changed is marked again.
    """
    if policy is None:
        chosen = next((f for f in finalizers if f in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)), None)
    else:
        chosen = {"Orphan": ORPHAN_FINALIZER, "Foreground": FOREGROUND_FINALIZER}.get(policy)
    kept = [f for f in finalizers if f not in (ORPHAN_FINALIZER, FOREGROUND_FINALIZER)]
    wanted = [*kept, chosen] if chosen else kept
    return None if set(wanted) == set(finalizers) else wanted


class OwnerRef(NamedTuple):
    api_version: str
    kind: str
    name: str
    uid: str
    block: bool

    @property
    def group(self) -> str:
        try:
            return split_api_version(self.api_version)[0]
        except ValueError:
            return self.api_version


@dataclass
class _Node:
    """What the collector remembers of one stored object (the dependency graph's node)."""

    uid: str
    api_version: str
    kind: str
    namespace: str
    name: str
    owners: tuple[OwnerRef, ...]
    deleting: bool
    orphaning: bool
    deleting_dependents: bool

    @property
    def group(self) -> str:
        return split_api_version(self.api_version)[0]


def _owner_refs(obj: Obj) -> tuple[OwnerRef, ...]:
    return tuple(
        OwnerRef(
            str(ref.get("apiVersion") or ""),
            str(ref.get("kind") or ""),
            str(ref.get("name") or ""),
            str(ref.get("uid") or ""),
            ref.get("blockOwnerDeletion") is True,
        )
        for ref in owner_references_of(obj)
    )


def _node_of(obj: Obj) -> _Node:
    meta = obj["metadata"]
    finalizers = meta.get("finalizers") or []
    deleting = bool(meta.get("deletionTimestamp"))
    return _Node(
        uid=str(meta.get("uid") or ""),
        api_version=str(obj["apiVersion"]),
        kind=str(obj["kind"]),
        namespace=str(meta.get("namespace") or ""),
        name=str(meta["name"]),
        owners=_owner_refs(obj),
        deleting=deleting,
        orphaning=deleting and ORPHAN_FINALIZER in finalizers,
        deleting_dependents=deleting and FOREGROUND_FINALIZER in finalizers,
    )


class _Unresolvable(Exception):
    """A reference not classifiable now (kind not served) or ever (namespaced owner of a cluster-scoped object)."""

    def __init__(self, retry: bool) -> None:
        super().__init__()
        self.retry = retry


class GarbageCollector:
    """kube-controller-manager's garbage collector for one embedded store (see the module docstring).

    The store calls :meth:`observe_stored` for every object it stores (created or changed, and every
    object it loads at start), :meth:`observe_removed` for every object it removes, and
    :meth:`run_pending` before it answers a write, all while holding its lock. ``clock`` (the store's) stamps Events.
    """

    def __init__(self, store: GcStore, *, clock: Callable[[], datetime]) -> None:
        self._store = store
        self._clock = clock
        self._nodes: dict[str, _Node] = {}
        #: owner uid → uids of the objects that reference it (whether the owner exists or not), in order seen
        self._dependents: dict[str, dict[str, None]] = {}
        self._attempt_to_delete: OrderedDict[str, None] = OrderedDict()
        self._attempt_to_orphan: OrderedDict[str, None] = OrderedDict()
        #: dependents waiting for a kind the store does not serve yet
        self._waiting_for_kinds: dict[str, None] = {}
        #: items whose last attempt failed; tried again on the next run
        self._failed: dict[tuple[str, str], None] = {}
        self._reported: set[tuple[str, str]] = set()
        self._running = False

    # -- what the store reports ----------------------------------------------------------------------

    def observe_stored(self, obj: Obj) -> None:
        """``obj`` was created or changed (as stored): update the graph and queue the work it causes."""
        new = _node_of(obj)
        if not new.uid:
            return
        old = self._nodes.get(new.uid)
        self._nodes[new.uid] = new
        old_owners = old.owners if old else ()
        if old_owners != new.owners:
            self._owners_changed(new, old_owners)
        if old is None:
            self._owner_observed(new)
        if new.orphaning and not (old and old.orphaning):
            self._attempt_to_orphan[new.uid] = None
        elif new.deleting_dependents and not (old and old.deleting_dependents):
            for dependent in self._dependents.get(new.uid, {}):
                self._enqueue(dependent)
            self._enqueue(new.uid)

    def observe_removed(self, obj: Obj) -> None:
        """``obj`` was removed from storage: its dependents are examined, and owners waiting for it."""
        uid = str(obj["metadata"].get("uid") or "")
        node = self._nodes.pop(uid, None)
        if node is None:
            return
        for ref in node.owners:
            self._unlink(ref.uid, uid)
        for dependent in self._dependents.get(uid, {}):
            self._enqueue(dependent)
        for ref in node.owners:
            owner = self._nodes.get(ref.uid)
            if owner is not None and owner.deleting_dependents:
                self._enqueue(owner.uid)

    def kinds_changed(self) -> None:
        """A kind was registered: dependents waiting for their owners' kinds are examined again."""
        for uid in self._waiting_for_kinds:
            self._enqueue(uid)
        self._waiting_for_kinds.clear()

    def run_pending(self) -> None:
        """Do all queued work, and the work it causes, until none is left. Reentrant calls return at once."""
        if self._running:
            return
        self._running = True
        try:
            for queue, uid in self._failed:
                (self._attempt_to_orphan if queue == "orphan" else self._attempt_to_delete)[uid] = None
            self._failed.clear()
            while self._attempt_to_orphan or self._attempt_to_delete:
                if self._attempt_to_orphan:
                    queue, (uid, _) = "orphan", self._attempt_to_orphan.popitem(last=False)
                else:
                    queue, (uid, _) = "delete", self._attempt_to_delete.popitem(last=False)
                try:
                    if queue == "orphan":
                        self._orphan_dependents(uid)
                    else:
                        self._attempt_to_delete_item(uid)
                except ApiError as err:
                    node = self._nodes.get(uid)
                    log.warning("garbage collection of %s failed, will retry: %s", _describe(node, uid), err)
                    self._failed[(queue, uid)] = None
        finally:
            self._running = False

    # -- the graph -----------------------------------------------------------------------------------

    def _enqueue(self, uid: str) -> None:
        self._attempt_to_delete.setdefault(uid, None)

    def _unlink(self, owner_uid: str, dependent_uid: str) -> None:
        dependents = self._dependents.get(owner_uid)
        if dependents is not None:
            dependents.pop(dependent_uid, None)
            if not dependents:
                del self._dependents[owner_uid]

    def _owners_changed(self, node: _Node, old_owners: tuple[OwnerRef, ...]) -> None:
        new_by_uid = {ref.uid: ref for ref in node.owners}
        old_by_uid = {ref.uid: ref for ref in old_owners}
        for uid, old_ref in old_by_uid.items():
            new_ref = new_by_uid.get(uid)
            if new_ref is None:
                self._unlink(uid, node.uid)
            # an owner waiting for its blocking dependents may be free now
            if old_ref.block and (new_ref is None or not new_ref.block):
                owner = self._nodes.get(uid)
                if owner is not None and owner.deleting_dependents:
                    self._enqueue(uid)
        suspicious = False
        for uid, ref in new_by_uid.items():
            if uid in old_by_uid:
                continue
            self._dependents.setdefault(uid, {})[node.uid] = None
            owner = self._nodes.get(uid)
            if owner is None:
                # kube-controller-manager adds a "virtual" owner and checks whether it exists: the same
                # as examining the dependent
                suspicious = True
            elif owner.namespace and owner.namespace != node.namespace:
                self._report_invalid_namespace(node, ref)
                suspicious = True
            elif (owner.group, owner.kind, owner.name) != (ref.group, ref.kind, ref.name):
                suspicious = True
        if suspicious:
            self._enqueue(node.uid)

    def _owner_observed(self, owner: _Node) -> None:
        """A new object: dependents that named its uid before it was seen, from another namespace, are wrong."""
        for uid in self._dependents.get(owner.uid, {}):
            dependent = self._nodes.get(uid)
            if dependent is None:
                continue
            ref = next(r for r in dependent.owners if r.uid == owner.uid)
            if owner.namespace and dependent.namespace != owner.namespace:
                self._report_invalid_namespace(dependent, ref)
                self._enqueue(uid)
            elif (owner.group, owner.kind, owner.name) != (ref.group, ref.kind, ref.name):
                self._enqueue(uid)

    # -- attempt to delete ---------------------------------------------------------------------------

    def _attempt_to_delete_item(self, uid: str) -> None:
        node = self._nodes.get(uid)
        if node is None or (node.deleting and not node.deleting_dependents):
            return  # gone, or on its one-way trip to removal: its dependents are examined when it is removed
        latest = self._latest(node)
        if latest is None:
            return
        if node.deleting_dependents:
            self._process_deleting_dependents(node)
            return
        refs = _owner_refs(latest)
        if not refs:
            return
        try:
            solid, dangling, waiting = self._classify(node, refs)
        except _Unresolvable as unresolvable:
            if unresolvable.retry:
                self._waiting_for_kinds[uid] = None
            return
        if solid:
            if dangling or waiting:
                self._remove_owner_refs(node, latest, {ref.uid for ref in (*dangling, *waiting)})
            return
        if waiting and self._dependents.get(uid):
            if any(self._nodes[d].deleting_dependents for d in self._dependents[uid] if d in self._nodes):
                # the owner waits for this object and this object for a dependent: unblock to break a cycle
                self._unblock_owner_refs(node, latest)
                latest = self._latest(node)
                if latest is None:
                    return
            self._delete(node, latest, "Foreground")
            return
        finalizers = latest["metadata"].get("finalizers") or []
        if ORPHAN_FINALIZER in finalizers:
            policy: PropagationPolicy = "Orphan"
        elif FOREGROUND_FINALIZER in finalizers:
            policy = "Foreground"
        else:
            policy = "Background"
        self._delete(node, latest, policy)

    def _classify(
        self, node: _Node, refs: tuple[OwnerRef, ...]
    ) -> tuple[list[OwnerRef], list[OwnerRef], list[OwnerRef]]:
        """The references split into solid, dangling and waiting (owner deleting in the foreground)."""
        solid: list[OwnerRef] = []
        dangling: list[OwnerRef] = []
        waiting: list[OwnerRef] = []
        for ref in refs:
            try:
                namespaced = self._store.kind_info(ref.api_version, ref.kind).namespaced
            except ApiError:
                log.info("%s: owner kind %s %s is not served; waiting", _describe(node), ref.api_version, ref.kind)
                raise _Unresolvable(retry=True) from None
            if namespaced and not node.namespace:
                log.info("%s: a cluster-scoped object cannot have a namespaced owner (%s)", _describe(node), ref.kind)
                raise _Unresolvable(retry=False)
            try:
                owner = self._store.get(
                    ref.api_version, ref.kind, ref.name, namespace=node.namespace if namespaced else None
                )
            except NotFound:
                dangling.append(ref)
                continue
            meta = owner["metadata"]
            if meta.get("uid") != ref.uid:
                dangling.append(ref)
            elif meta.get("deletionTimestamp") and FOREGROUND_FINALIZER in (meta.get("finalizers") or []):
                waiting.append(ref)
            else:
                solid.append(ref)
        return solid, dangling, waiting

    def _process_deleting_dependents(self, owner: _Node) -> None:
        """An owner deleting in the foreground: release it when no blocking dependent is left."""
        blocking = [
            dependent
            for uid in self._dependents.get(owner.uid, {})
            if (dependent := self._nodes.get(uid)) is not None
            and any(ref.uid == owner.uid and ref.block for ref in dependent.owners)
        ]
        if not blocking:
            self._remove_finalizer(owner, FOREGROUND_FINALIZER)
            return
        for dependent in blocking:
            if not dependent.deleting_dependents:
                self._enqueue(dependent.uid)

    # -- attempt to orphan ---------------------------------------------------------------------------

    def _orphan_dependents(self, uid: str) -> None:
        owner = self._nodes.get(uid)
        if owner is None or not owner.orphaning:
            return
        for dependent_uid in list(self._dependents.get(uid, {})):
            dependent = self._nodes.get(dependent_uid)
            if dependent is None:
                continue
            latest = self._latest(dependent)
            if latest is not None:
                self._remove_owner_refs(dependent, latest, {uid})
        self._remove_finalizer(owner, ORPHAN_FINALIZER)

    # -- writes, through the store's API -------------------------------------------------------------

    def _latest(self, node: _Node) -> Obj | None:
        """The object as stored now; None when it is gone or replaced by another with the same name."""
        try:
            obj = self._store.get(node.api_version, node.kind, node.name, namespace=node.namespace or None)
        except NotFound:
            return None
        return obj if obj["metadata"].get("uid") == node.uid else None

    def _patch_metadata(self, node: _Node, latest: Obj, metadata: dict[str, Any]) -> None:
        """A merge patch of ``metadata`` guarded by the resourceVersion read (as kube-controller-manager's)."""
        patch = {"metadata": {**metadata, "resourceVersion": latest["metadata"]["resourceVersion"]}}
        with contextlib.suppress(NotFound):
            self._store.patch_merge(
                node.api_version,
                node.kind,
                node.name,
                patch,
                namespace=node.namespace or None,
                field_manager=FIELD_MANAGER,
            )

    def _remove_owner_refs(self, node: _Node, latest: Obj, uids: set[str]) -> None:
        refs = latest["metadata"].get("ownerReferences") or []
        kept = [ref for ref in refs if not (isinstance(ref, dict) and ref.get("uid") in uids)]
        if len(kept) != len(refs):
            self._patch_metadata(node, latest, {"ownerReferences": kept or None})

    def _unblock_owner_refs(self, node: _Node, latest: Obj) -> None:
        refs = latest["metadata"].get("ownerReferences") or []
        unblocked = [
            {**ref, "blockOwnerDeletion": False} if isinstance(ref, dict) and ref.get("blockOwnerDeletion") else ref
            for ref in refs
        ]
        if unblocked != refs:
            self._patch_metadata(node, latest, {"ownerReferences": unblocked})

    def _remove_finalizer(self, node: _Node, finalizer: str) -> None:
        latest = self._latest(node)
        if latest is None:
            return
        finalizers = latest["metadata"].get("finalizers") or []
        if finalizer in finalizers:
            kept = [f for f in finalizers if f != finalizer]
            self._patch_metadata(node, latest, {"finalizers": kept or None})

    def _delete(self, node: _Node, latest: Obj, policy: PropagationPolicy) -> None:
        log.debug("garbage collector deletes %s (%s)", _describe(node), policy)
        with contextlib.suppress(NotFound):
            self._store.delete(
                node.api_version,
                node.kind,
                node.name,
                namespace=node.namespace or None,
                preconditions={"uid": node.uid, "resourceVersion": latest["metadata"]["resourceVersion"]},
                propagation_policy=policy,
            )

    def _report_invalid_namespace(self, dependent: _Node, ref: OwnerRef) -> None:
        """The Warning Event kube-controller-manager records about a reference to an owner in another namespace."""
        if (dependent.uid, ref.uid) in self._reported:
            return
        self._reported.add((dependent.uid, ref.uid))
        now = self._clock()
        stamp = rfc3339(now)
        involved: Obj = {"kind": dependent.kind, "name": dependent.name, "uid": dependent.uid}
        if dependent.namespace:
            involved["namespace"] = dependent.namespace
        involved["apiVersion"] = dependent.api_version
        coordinates = (
            f"[{ref.api_version}/{ref.kind}, namespace: {dependent.namespace}, name: {ref.name}, uid: {ref.uid}]"
        )
        event: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"namespace": dependent.namespace or "default"},
            "involvedObject": involved,
            "reason": INVALID_NAMESPACE_REASON,
            "message": f'ownerRef {coordinates} does not exist in namespace "{dependent.namespace}"',
            "source": {"component": EVENT_COMPONENT},
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
            "type": "Warning",
            "eventTime": None,
            "reportingComponent": EVENT_COMPONENT,
            "reportingInstance": "",
        }
        nanos = int(now.timestamp() * 1_000_000) * 1000
        for attempt in range(16):
            event["metadata"]["name"] = f"{dependent.name}.{nanos + attempt:x}"
            try:
                self._store.create(event, field_manager=FIELD_MANAGER)
                return
            except AlreadyExists:
                continue
            except ApiError as err:  # e.g. the namespace is terminating: the Event is lost, as with a real recorder
                log.warning("cannot record event about %s: %s", _describe(dependent), err)
                return


def _describe(node: _Node | None, uid: str = "") -> str:
    if node is None:
        return f"object with uid {uid}"
    where = f"{node.namespace}/{node.name}" if node.namespace else node.name
    return f"{node.kind} {where}"
