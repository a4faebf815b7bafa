"""An in-process API server store with kube-apiserver's semantics: :class:`MemoryStore`.

The embedded management cluster and most tests run against this store instead of a real
kube-apiserver, so it keeps the rules a controller depends on, the way the API server's generic
registry, the CRD strategy and the controllers of kube-controller-manager apply them:

- every write gets the next value of one global ``resourceVersion`` counter; a write that changes
  nothing is not a write and keeps it;
- ``uid`` and ``creationTimestamp`` are set on create (the clock is injectable) and never change;
- custom resources carry ``metadata.generation``: 1 on create, bumped when anything but metadata
  (and ``status``, for kinds with a status subresource) changes, and when deletion starts;
- a kind with a status subresource (in the request's version) drops ``status`` on create and ignores
  it on update; :meth:`MemoryStore.update_status` changes nothing else;
- ``update`` with a stale ``resourceVersion`` is a Conflict, and so is one whose ``uid`` is not the
  object's; one without a resourceVersion is unconditional for built-in kinds and Invalid for
  custom resources;
- delete of an object with finalizers marks it (``deletionTimestamp``) and the update that removes
  the last finalizer removes it; no new finalizer may be added once deletion started; the
  propagation policy adds ``orphan`` or ``foregroundDeletion`` as kube-apiserver does;
- namespaced objects need their Namespace; ``default`` exists from the start;
- ``dry_run`` runs every check and stores nothing; every object returned is the caller's copy;
- every write is recorded for :meth:`MemoryStore.watch` (see :mod:`clusterclass.apiserver.watch_cache`).

Kinds must be registered: the built-in kinds a management cluster needs (Namespace, Secret,
ConfigMap, Event, Lease, CustomResourceDefinition) are, a new store installs the bundled Cluster
API CRDs (:mod:`clusterclass.crds`, with Cluster API's conversion webhook), and creating a
``CustomResourceDefinition`` registers its kind (deleting it removes its objects, then the kind).

Custom resources are stored as kube-apiserver stores them: in their CRD's storage version, keys in
the order etcd holds them (sorted). Every read, list and watch event is converted to the version asked
for, and every write is decoded, defaulted and validated in the version of the request, then
converted to the storage version; a patch applies to the object as served in its version, and a
write that changes nothing in storage is not a write. How a CRD converts is its
``spec.conversion``: strategy ``None`` rewrites ``apiVersion`` (and prunes to the target version's
schema); strategy ``Webhook`` on a Cluster API kind runs :mod:`clusterclass.api.conversion` in process,
exactly what the conversion webhook ``clusterclass run`` serves answers a real kube-apiserver
(down-converted objects carry the ``cluster.x-k8s.io/conversion-data`` annotation), and a conversion
that fails is that webhook's 500. Each version has its own subresources (DockerMachineTemplate has a
status subresource in v1beta2 only), and server-side apply keeps each managedFields entry in its own
apiVersion, comparing a write in every entry's version (:class:`~clusterclass.apiserver.apply.fieldmanager.Versions`).

What the embedded cluster's controllers would do later, the store does at the end of the write
that causes it, before the write returns: the garbage collector (:mod:`clusterclass.apiserver.gc`)
collects dependents, the namespace controller empties a deleted Namespace and removes it, the CRD
finalizer removes a deleted CRD's objects, and the CRD controllers accept names and mark a new CRD
Established. Those follow-up writes get their own resourceVersions and watch events; the answer to
the write is still what the write itself did, as kube-apiserver answers.

Writes are transactional: the changes one call makes (with every follow-up write) are kept in
memory, committed to the state file when there is one (:mod:`clusterclass.apiserver.persistence`), and
only then published to watches; a failure undoes them all. A store opened on an existing state
file starts with its objects (CRDs first, to serve their kinds) and resourceVersion.

Every write is decoded and validated as kube-apiserver does it: custom resources through their
CRD (:mod:`clusterclass.apiserver.crd.definitions`: pruning, defaulting, schema and ObjectMeta validation), built-in
kinds through :mod:`clusterclass.apiserver.builtin_kinds`. Server-side apply and the ``managedFields``
of every write are :mod:`clusterclass.apiserver.apply.fieldmanager`'s, with the CRD schemas' list and map types.
The CRD lifecycle steps are computed in :mod:`clusterclass.apiserver.crd.controllers`.
"""

from __future__ import annotations

import asyncio
import functools
import marshal
import os
import random
import threading
import uuid
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, Literal, NoReturn

from clusterclass import fielderrors as fe
from clusterclass.api.contracts import CrdContracts, version_priority
from clusterclass.api.conversion import ApiVersions, ConversionError
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.merge_patch import merge_patch
from clusterclass.api.objects import Obj, split_api_version
from clusterclass.apiserver import builtin_kinds as builtins
from clusterclass.apiserver import fieldselectors
from clusterclass.apiserver.apply.fieldmanager import apply as ssa_apply
from clusterclass.apiserver.apply.fieldmanager import record_update
from clusterclass.apiserver.apply.fieldtypes import FieldTypes, ObjectMetaTypes
from clusterclass.apiserver.builtin_kinds import NAMESPACE_FINALIZER
from clusterclass.apiserver.causes import invalid_error, qualified_kind, to_causes
from clusterclass.apiserver.crd import controllers as crds
from clusterclass.apiserver.crd.controllers import CRD_API_VERSION as CRD_API_VERSION
from clusterclass.apiserver.crd.controllers import CRD_CLEANUP_FINALIZER as CRD_CLEANUP_FINALIZER
from clusterclass.apiserver.crd.controllers import CRD_CONTROLLER, CRD_KIND
from clusterclass.apiserver.crd.controllers import bundled_crds as bundled_crds
from clusterclass.apiserver.crd.definitions import GROUP as CRD_GROUP
from clusterclass.apiserver.crd.definitions import CrdInfo, FieldValidation, defaulted_spec, parse_crd
from clusterclass.apiserver.etcdlimits import size_error
from clusterclass.apiserver.gc import GarbageCollector, deletion_finalizers
from clusterclass.apiserver.json_patch import apply_json_patch
from clusterclass.apiserver.object_index import ObjectBucket
from clusterclass.apiserver.objectmeta import (
    dns1123_label_errors,
    finalizer_warnings,
    validate_object_meta,
    validate_object_meta_update,
)
from clusterclass.apiserver.persistence import Key, SqliteState
from clusterclass.apiserver.served_versions import ServedVersions
from clusterclass.apiserver.watch_cache import (
    DEFAULT_BOOKMARK_INTERVAL,
    DEFAULT_BUFFER_SIZE,
    DEFAULT_HISTORY_SIZE,
    Change,
    KindKey,
    MemoryWatch,
    WatchHub,
    wake,
)
from clusterclass.kube.client import (
    DEFAULT_FIELD_MANAGER,
    LabelSelector,
    ObjectList,
    PatchType,
    Preconditions,
    PropagationPolicy,
    Resource,
    object_kind,
    parse_label_selector,
)
from clusterclass.kube.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    make_status,
)
from clusterclass.kube.fieldselectors import FieldSelector
from clusterclass.kube.gotext import go_quote, rfc3339

DEFAULT_NAMESPACE = "default"
PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")

#: who the namespace controller writes as (managedFields), as on a real cluster
NAMESPACE_CONTROLLER = "kube-controller-manager"

#: plurals the simple English rules of :func:`plural_of` get wrong
PLURAL_OVERRIDES = {"Endpoints": "endpoints"}


def plural_of(kind: str) -> str:
    """The resource name of ``kind``: lower case, then ``-ies`` / ``-es`` / ``-s`` (``Policy`` → ``policies``)."""
    if kind in PLURAL_OVERRIDES:
        return PLURAL_OVERRIDES[kind]
    lower = kind.lower()
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    return lower + "s"


@dataclass(frozen=True)
class KindInfo:
    """What the store knows of one kind: what a CRD or a built-in registration would say."""

    group: str
    kind: str
    plural: str
    namespaced: bool
    status_subresource: bool
    #: whether the server keeps metadata.generation (every custom resource; few built-in kinds)
    generation: bool
    versions: frozenset[str] = field(default_factory=frozenset)
    #: the name of the CRD that serves this kind; "" for built-in kinds and plain registrations
    crd: str = ""
    #: whether some served version has a ``scale`` subresource
    scale_subresource: bool = False
    #: the parsed CRD (schemas for decoding, defaulting, validation, field types); None for built-in kinds
    schema: CrdInfo | None = field(default=None, compare=False, repr=False)
    #: the versions with a status subresource, when the CRD's versions differ (None: ``status_subresource`` for all)
    status_versions: frozenset[str] | None = None
    #: the versions with a scale subresource, when the CRD's versions differ (None: ``scale_subresource`` for all)
    scale_versions: frozenset[str] | None = None

    def has_status(self, api_version: str) -> bool:
        """Whether the kind has a status subresource in ``api_version`` (``group/version`` or a bare version).

        A CRD's versions each have their own subresources (kube-apiserver serves each version with its own
        strategy): in a version without one, ``status`` is written with the rest of the object.
        """
        if self.status_versions is None:
            return self.status_subresource
        return api_version.rpartition("/")[2] in self.status_versions

    def has_scale(self, api_version: str) -> bool:
        """Whether the kind has a scale subresource in ``api_version`` (``group/version`` or a bare version)."""
        if self.scale_versions is None:
            return self.scale_subresource
        return api_version.rpartition("/")[2] in self.scale_versions

    @property
    def resource(self) -> str:
        """``clusters.cluster.x-k8s.io``; ``configmaps`` for the core group."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def qualified_kind(self) -> str:
        """``Cluster.cluster.x-k8s.io``; ``ConfigMap`` for the core group."""
        return qualified_kind(self)

    @property
    def unconditional_update(self) -> bool:
        """Whether an update without ``metadata.resourceVersion`` is allowed.

        The kinds that keep ``metadata.generation`` here (custom resources, CRDs) are the ones whose
        strategy refuses it; the other built-in kinds allow it.
        """
        return not self.generation


#: (apiVersion, kind, namespaced, status subresource, generation): the built-in kinds of every store
BUILTIN_KINDS: tuple[tuple[str, str, bool, bool, bool], ...] = (
    ("v1", "Namespace", False, True, False),
    ("v1", "Secret", True, False, False),
    ("v1", "ConfigMap", True, False, False),
    ("v1", "Event", True, False, False),
    ("coordination.k8s.io/v1", "Lease", True, False, False),
    (CRD_API_VERSION, CRD_KIND, False, True, True),
    # what a workload cluster's API serves the Cluster API controllers (simulated providers keep Nodes
    # and the control plane's static Pods in one store per workload cluster)
    ("v1", "Node", False, True, False),
    ("v1", "Pod", True, True, False),
)

#: the alphabet of apiserver's generateName suffixes (no vowels, no confusable characters)
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"

#: the ``Warning`` texts a write sends
Warnings = list[str]
#: (namespace, name) inside one kind
NameKey = tuple[str, str]

_OBJECT_META_TYPES = ObjectMetaTypes()
_NAMESPACE: KindKey = ("", "Namespace")
_EVENT: KindKey = ("", "Event")
_CRD: KindKey = (CRD_GROUP, CRD_KIND)


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _stored_copy(obj: Obj) -> Obj:
    """A deep copy of a stored object: ``marshal`` is the fastest deep copy of plain JSON data in CPython."""
    try:
        copied: Obj = marshal.loads(marshal.dumps(obj))
    except ValueError:  # something marshal does not know (a client stored a non-JSON value)
        copied = json_copy(obj)
    return copied


_MISSING = object()


def _same_except(old: Obj, new: Obj, ignored: tuple[str, ...]) -> bool:
    """Whether two objects agree on every top-level field but ``apiVersion`` and ``ignored``."""
    keys = (old.keys() | new.keys()) - {"apiVersion", *ignored}
    return all(old.get(key, _MISSING) == new.get(key, _MISSING) for key in keys)


@dataclass
class _Transaction:
    """The changes of one outermost write call, until they are committed and published."""

    start_version: int
    #: (kind, name key, what was stored before), in order, to undo a failed write
    undo: list[tuple[KindKey, NameKey, Obj | None]] = field(default_factory=list)
    changes: list[tuple[KindKey, Change]] = field(default_factory=list)
    #: net effect for the state file: key → stored object, or None when deleted
    net: dict[Key, Obj | None] = field(default_factory=dict)
    #: follow-up work of kube-controller-manager's controllers: ("namespace" | "crd", name)
    work: list[tuple[str, str]] = field(default_factory=list)
    #: (kind, its registration before) for every kind registered or removed, to undo a failed write
    kinds_before: list[tuple[KindKey, KindInfo | None]] = field(default_factory=list)
    #: kinds removed: their watches end once this transaction's events are published
    removed_kinds: list[KindKey] = field(default_factory=list)


class MemoryStore:
    """The synchronous engine of the in-process API server, with kube-apiserver's rules.

    ``clock`` gives creation and deletion timestamps; ``rng`` the ``generateName`` suffixes;
    ``new_uid`` the object UIDs (uuid4 by default). All three are for reproducible tests.

    ``state_path`` keeps the objects in a SQLite file (:mod:`clusterclass.apiserver.persistence`): every
    write is committed there before it returns, and a store opened on an existing file starts with
    its objects and resourceVersion. ``durability`` ``"NORMAL"`` trades power-loss safety for speed.
    ``cluster_api_crds`` False starts a new store without the bundled Cluster API CRDs: a workload
    cluster's API server, which serves Nodes and Pods but no Cluster API kinds.

    ``history_size`` (changes kept per kind for watches from a resourceVersion), ``watch_buffer``
    (events a watch may have waiting before it is terminated) and ``bookmark_interval`` (seconds of
    quiet before a bookmark) tune :meth:`watch`.

    The store is safe to use from several threads: every call holds one lock.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] = _utc_now,
        rng: random.Random | None = None,
        new_uid: Callable[[], str] | None = None,
        state_path: str | os.PathLike[str] | None = None,
        durability: Literal["FULL", "NORMAL"] = "FULL",
        history_size: int = DEFAULT_HISTORY_SIZE,
        watch_buffer: int = DEFAULT_BUFFER_SIZE,
        bookmark_interval: float = DEFAULT_BOOKMARK_INTERVAL,
        cluster_api_crds: bool = True,
    ) -> None:
        self._clock = clock
        self._cluster_api_crds = cluster_api_crds
        self._rng = rng or random.Random()
        self._new_uid = new_uid or (lambda: str(uuid.uuid4()))
        self._lock = threading.RLock()
        self._kinds: dict[KindKey, KindInfo] = {}
        self._objects: dict[KindKey, ObjectBucket] = {}
        self._resource_version = 0
        self._transaction: _Transaction | None = None
        self._hub = WatchHub(
            self._lock,
            lambda: self._resource_version,
            history_size=history_size,
            buffer_size=watch_buffer,
            bookmark_interval=bookmark_interval,
        )
        self._gc = GarbageCollector(self, clock=clock)
        self._api_versions = _StoreApiVersions(self)
        self._served_versions = ServedVersions()
        self._state = SqliteState(state_path, synchronous=durability) if state_path is not None else None
        stored: list[Obj] = []
        if self._state is not None:
            stored, self._resource_version = self._state.load()
        for api_version, kind, namespaced, status, generation in BUILTIN_KINDS:
            self.register_kind(
                api_version, kind, namespaced=namespaced, status_subresource=status, generation=generation
            )
        if stored:
            self._restore(stored)
        else:
            self._bootstrap()

    def _bootstrap(self) -> None:
        """A new cluster: namespace ``default`` and (unless left out) the Cluster API CRDs, at resourceVersion 1.

        The CRDs are installed as kube-apiserver would hold them once established (defaulted names,
        ``NamesAccepted`` and ``Established``), as one bootstrap transaction, so a new store starts at
        resourceVersion 1 like an empty one. Their uids derive from their names (the ``new_uid``
        sequence starts with the namespace), and they share their (never modified) specs with every
        other store in the process.
        """
        with self._writing():
            self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": DEFAULT_NAMESPACE}})
            if not self._cluster_api_crds:
                return
            now = rfc3339(self._clock())
            parsed = crds.bundled_crd_infos()
            for crd in crds.bundled_crds():
                name = crd["metadata"]["name"]
                installed = {
                    **crd,
                    "metadata": {
                        **crd["metadata"],
                        "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"clusterclass:crd:{name}")),
                        "creationTimestamp": now,
                        "generation": 1,
                    },
                    "spec": defaulted_spec(crd["spec"]),
                }
                self._put(self._kinds[_CRD], installed, bump=False)
                self._install_crd(installed, parsed[name], bump=False)

    def close(self) -> None:
        """End every watch and close the state file; the store is not used afterwards."""
        with self._lock:
            for kind_key in list(self._kinds):
                self._hub.drop_kind(kind_key)
            if self._state is not None:
                self._state.close()

    # -- kinds ---------------------------------------------------------------------------------------

    def register_kind(
        self,
        api_version: str,
        kind: str,
        *,
        namespaced: bool = True,
        status_subresource: bool = True,
        generation: bool = True,
        plural: str | None = None,
    ) -> KindInfo:
        """Serve ``kind`` in ``api_version`` (as installing its CRD would); other versions stay served.

        ``generation`` says whether the server keeps ``metadata.generation`` (true for every custom
        resource; an update must then carry ``metadata.resourceVersion``). ``plural`` defaults to
        :func:`plural_of`.
        """
        group, version = split_api_version(api_version)
        with self._lock, self._writing():
            known = self._kinds.get((group, kind))
            versions = (known.versions if known else frozenset()) | {version}
            return self._register(
                KindInfo(
                    group=group,
                    kind=kind,
                    plural=plural or plural_of(kind),
                    namespaced=namespaced,
                    status_subresource=status_subresource,
                    generation=generation,
                    versions=versions,
                )
            )

    def _register(self, info: KindInfo) -> KindInfo:
        kind_key = (info.group, info.kind)
        if kind_key not in self._kinds:
            self._hub.history(kind_key)  # the watch window of a new kind starts now
        before = self._kinds.get(kind_key)
        if self._transaction is not None:
            self._transaction.kinds_before.append((kind_key, before))
        self._kinds[kind_key] = info
        self._served_versions.clear()  # a conversion, or the schema it prunes to, may have changed
        if info.schema is not None and before is not None and before.schema is not info.schema:
            self._reread(kind_key, info.schema)
        self._objects.setdefault(kind_key, ObjectBucket())
        self._gc.kinds_changed()
        return info

    def _reread(self, kind_key: KindKey, schema: CrdInfo) -> None:
        """Stored objects as reads now serve them: pruned and defaulted with a changed CRD's schema.

        kube-apiserver applies the current schema on every read from etcd; the memory store applies
        it once, when the schema changes (and on start), without a write: no resourceVersion, no event.
        """
        bucket = self._objects.get(kind_key) or ObjectBucket()
        for name_key, obj in list(bucket.items()):
            fresh = schema.read(_stored_copy(obj))
            if fresh != obj:
                bucket[name_key] = fresh
                if self._transaction is not None:
                    self._transaction.undo.append((kind_key, name_key, obj))

    def kinds(self) -> list[KindInfo]:
        """Every registered kind, by group and kind."""
        with self._lock:
            return [self._kinds[key] for key in sorted(self._kinds)]

    def kind_info(self, api_version: str, kind: str) -> KindInfo:
        """The registration serving ``kind`` in ``api_version``; NotFound as from the server otherwise."""
        try:
            group, version = split_api_version(api_version)
        except ValueError as err:
            raise BadRequest.new(str(err)) from err
        info = self._kinds.get((group, kind))
        if info is None or version not in info.versions:
            raise NotFound.new("the server could not find the requested resource")
        return info

    def resource(self, api_version: str, kind: str) -> Resource:
        """Discovery: how ``kind`` is served in ``api_version``; NotFound when it is not."""
        with self._lock:
            info = self.kind_info(api_version, kind)
            group, version = split_api_version(api_version)
            subresources = {"status"} if info.has_status(version) else set()
            if info.has_scale(version):
                subresources.add("scale")
            return Resource(group, version, kind, info.plural, info.namespaced, frozenset(subresources))

    # -- reads ---------------------------------------------------------------------------------------

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the latest write."""
        return str(self._resource_version)

    def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        with self._lock:
            info = self.kind_info(api_version, kind)
            stored = self._stored(info, self._namespace(info, namespace), name)
            return self._serve(stored, api_version, info)

    def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: str | FieldSelector | None = None,
    ) -> ObjectList:
        """The matching objects, ordered by namespace and name, and the store's resourceVersion."""
        with self._lock:
            info = self.kind_info(api_version, kind)
            selector = parse_label_selector(label_selector)
            fields = fieldselectors.parse(field_selector, info)
            wanted = namespace if info.namespaced else None
            bucket = self._objects[(info.group, info.kind)]
            candidates = bucket.candidates(selector)
            names = {r.value for r in fields.requirements if r.field == "metadata.name" and r.equal}
            if len(names) == 1 and (wanted or not info.namespaced):  # one object by name, e.g. a Cluster's own
                only = (wanted or "", names.pop())
                candidates = [only] if only in bucket else []
            keys = sorted(
                key
                for key in candidates
                if (not wanted or key[0] == wanted) and selector.matches(bucket[key]["metadata"].get("labels"))
            )
            items = [self._serve(bucket[key], api_version, info) for key in keys if fields.matches(bucket[key])]
            return ObjectList(items, self.resource_version)

    def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: str | FieldSelector | None = None,
        resource_version: str | None = None,
        bookmarks: bool = True,
        timeout_seconds: float | None = None,
    ) -> MemoryWatch:
        """Changes to matching objects as an async iterator of watch events (:mod:`clusterclass.apiserver.watch_cache`).

        ``resource_version`` None, ``""`` or ``"0"``: an ``ADDED`` for every matching object first;
        otherwise every change after it, or :class:`~clusterclass.kube.errors.Gone` when the
        history no longer reaches back that far.
        """
        with self._lock:
            info = self.kind_info(api_version, kind)
            selector = parse_label_selector(label_selector)
            fields = fieldselectors.parse(field_selector, info)
            start = self._watch_start(resource_version)
            kind_key = (info.group, info.kind)
            wanted = namespace if info.namespaced and namespace else None
            bucket = self._objects[kind_key]
            return self._hub.open(
                kind_key,
                api_version=api_version,
                kind=kind,
                namespace=wanted,
                selector=selector,
                fields=fields,
                resource_version=start,
                current_objects=lambda: ((key[0], bucket[key]) for key in sorted(bucket)),
                bookmarks=bookmarks,
                timeout_seconds=timeout_seconds,
                serve=functools.partial(
                    _served_at, schema=info.schema, api_versions=self._api_versions, memo=self._served_versions
                ),
            )

    def compact(self) -> None:
        """Forget all watch history, as etcd compaction does: a watch from any resourceVersion read so far is Gone.

        The store's resourceVersion moves on by one (no object changes, no event), so that a list
        afterwards answers a resourceVersion that can be watched from; open watches go on.
        """
        with self._lock:
            self._resource_version += 1
            if self._state is not None:
                self._state.commit(self._resource_version, [], [])
            self._hub.compact(self._resource_version)

    def watch_count(self) -> int:
        """How many watches are open."""
        with self._lock:
            return self._hub.watch_count()

    def _watch_start(self, resource_version: str | None) -> int | None:
        """The resourceVersion a watch starts after; None to start with the current objects.

        One the store has not reached yet is accepted, and the watch waits for it, as kube-apiserver's
        watch cache does; one that is not a number is refused with kube-apiserver's 500.
        """
        if resource_version in (None, "", "0"):
            return None
        text = str(resource_version)
        if not text.isdigit():
            raise ApiError(
                {
                    "kind": "Status",
                    "apiVersion": "v1",
                    "metadata": {},
                    "status": "Failure",
                    "message": f'resourceVersion: Invalid value: "{text}": strconv.ParseUint: parsing "{text}": '
                    "invalid syntax",
                    "code": 500,
                }
            )
        return int(text)

    # -- writes --------------------------------------------------------------------------------------

    def create(
        self,
        obj: Obj,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation = "Warn",
        warnings: Warnings | None = None,
    ) -> Obj:
        """Create ``obj`` (``metadata.generateName`` names it when it has no name); the object as stored.

        ``field_validation`` is kube-apiserver's ``fieldValidation`` for unknown fields (``Strict``
        refuses them; ``Warn``, the default, drops them and reports each); the warnings a write sends
        (unknown fields, finalizer names without a domain) are appended to ``warnings`` when given.
        """
        with self._lock:
            return self._create(
                obj,
                dry_run=dry_run,
                field_manager=field_manager,
                field_validation=field_validation,
                warnings=warnings,
            )

    def _create(
        self,
        obj: Obj,
        *,
        dry_run: bool,
        field_manager: str | None,
        field_validation: FieldValidation,
        warnings: Warnings | None,
        applied: bool = False,
    ) -> Obj:
        """Create; ``applied``: ``obj`` is the result of an apply and carries its managedFields already."""
        api_version, info = self._object_kind(obj)
        new = json_copy(obj)
        found = self._decode(info, new, api_version, field_validation, applied=applied)
        if warnings is not None:
            warnings.extend(found)  # decoding warns whatever the write then answers, as kube-apiserver's decoder
        meta = new["metadata"]
        namespace = self._namespace(info, meta.get("namespace"), what="the object")
        if info.namespaced:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        if meta.get("resourceVersion"):
            raise ApiError.new("resourceVersion should not be set on objects to be created")
        name = self._choose_name(info, namespace, meta)
        self._check_kind_open(info, name)
        if info.namespaced:
            self._check_namespace_open(info, namespace, name)
        if not applied:
            self._record(info, None, new, field_manager, api_version)
        for system_field in ("deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
            meta.pop(system_field, None)
        meta["uid"] = self._new_uid()
        meta["creationTimestamp"] = rfc3339(self._clock())
        if info.generation:
            meta["generation"] = 1
        if info.has_status(api_version):
            new.pop("status", None)
        kind_key = (info.group, info.kind)
        if kind_key == _NAMESPACE:
            builtins.prepare_namespace(new)
        self._validate(info, new, None, api_version)
        crd_info = self._prepare_crd(new, None) if kind_key == _CRD else None
        if (namespace, name) in self._objects[kind_key]:
            raise AlreadyExists.new(f'{info.resource} "{name}" already exists', details=self._details(info, name))
        if warnings is not None:
            warnings.extend(finalizer_warnings(new))
        stored = self._storable(info, new)
        if dry_run:
            return self._serve(stored, api_version, info)
        with self._writing():
            self._put(info, stored)
            if crd_info is not None:
                self._install_crd(new, crd_info)
        return self._serve(stored, api_version, info)

    def update(
        self,
        obj: Obj,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation = "Warn",
        warnings: Warnings | None = None,
    ) -> Obj:
        """Replace the object (see :meth:`create` for ``field_validation`` and ``warnings``)."""
        with self._lock:
            return self._update(
                obj,
                status_only=False,
                dry_run=dry_run,
                field_manager=field_manager,
                field_validation=field_validation,
                warnings=warnings,
            )

    def update_status(
        self,
        obj: Obj,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation = "Warn",
        warnings: Warnings | None = None,
    ) -> Obj:
        """Replace only the ``status`` of the object (the status subresource)."""
        with self._lock:
            return self._update(
                obj,
                status_only=True,
                dry_run=dry_run,
                field_manager=field_manager,
                field_validation=field_validation,
                warnings=warnings,
            )

    def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        *,
        patch_type: PatchType = "merge",
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        status: bool = False,
        field_validation: FieldValidation = "Warn",
        warnings: Warnings | None = None,
    ) -> Obj:
        """Patch the object as served in ``api_version``, then store it with the rules of :meth:`update`.

        ``patch_type`` ``"merge"`` is a JSON merge patch (RFC 7386), ``"json"`` a JSON patch
        (RFC 6902, :mod:`clusterclass.apiserver.json_patch`). ``status`` patches through the status
        subresource (:meth:`update_status`'s rules). A patch that sets ``metadata.resourceVersion``
        makes the write conditional on it, as on kube-apiserver.
        """
        with self._lock:
            info = self.kind_info(api_version, kind)
            if status and not info.has_status(api_version):
                raise subresource_not_found(info, name)
            namespace = self._namespace(info, namespace)
            stored = self._stored(info, namespace, name)
            # both patch functions copy what they patch: the stored object itself is safe to hand them
            current = stored if stored.get("apiVersion") == api_version else self._serve(stored, api_version, info)
            if patch_type == "merge":
                if not isinstance(patch, dict):
                    raise BadRequest.new("the merge patch must be a JSON object")
                patched = merge_patch(current, patch)
            elif patch_type == "json":
                patched = apply_json_patch(current, patch)
            else:
                raise ApiError(
                    make_status(415, "UnsupportedMediaType", f"the patch type {patch_type!r} is not supported")
                )
            if not isinstance(patched, dict) or not isinstance(patched.get("metadata"), dict):
                raise BadRequest.new("metadata: must be an object")
            if patched.get("apiVersion") != api_version or patched.get("kind") != kind:
                raise BadRequest.new(f"the patch may not change apiVersion or kind of {info.resource} {name!r}")
            if patched["metadata"].get("name") != name:
                raise BadRequest.new(
                    f"the name of the object ({patched['metadata'].get('name')}) does not match the name "
                    f"on the URL ({name})"
                )
            if info.namespaced and patched["metadata"].get("namespace") != namespace:
                raise BadRequest.new(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            return self._update(
                patched,
                status_only=status,
                dry_run=dry_run,
                patched=True,
                owned=True,
                field_manager=field_manager,
                field_validation=field_validation,
                warnings=warnings,
            )

    def patch_merge(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Obj,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
    ) -> Obj:
        """A JSON merge patch: :meth:`patch` with ``patch_type="merge"``."""
        return self.patch(
            api_version, kind, name, patch, namespace=namespace, dry_run=dry_run, field_manager=field_manager
        )

    def apply(
        self,
        obj: Obj,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        status: bool = False,
        field_validation: FieldValidation = "Warn",
        warnings: Warnings | None = None,
    ) -> Obj:
        """Server-side apply ``obj`` as ``field_manager`` (see :mod:`~clusterclass.apiserver.apply.fieldmanager`).

        A missing object is created. The applied object then goes through :meth:`create` or
        :meth:`update`'s rules (decoding,
        defaulting, validation, generation), as kube-apiserver treats an apply patch; a
        ``metadata.resourceVersion`` in ``obj`` is a precondition. ``status`` applies through the
        status subresource (the object must exist).
        """
        with self._lock:
            api_version, info = self._object_kind(obj)
            meta = obj["metadata"]
            name = meta.get("name")
            if status and not info.has_status(api_version):
                raise subresource_not_found(info, str(name or ""))
            if not name or not isinstance(name, str):
                raise BadRequest.new("resource name may not be empty")
            namespace = self._namespace(info, meta.get("namespace"), what="the object")
            stored = self._objects[(info.group, info.kind)].get((namespace, name))
            if stored is None and status:
                raise NotFound.new(f'{info.resource} "{name}" not found', details=self._details(info, name))
            live = None if stored is None else self._serve(stored, api_version, info)
            result = ssa_apply(
                live,
                obj,
                manager=field_manager,
                force=force,
                types=self._field_types(info, api_version),
                subresource="status" if status else None,
                has_status_subresource=info.has_status(api_version),
                api_version=api_version,
                now=rfc3339(self._clock()),
                versions=self._versions(info),
            )
            if stored is None:
                return self._create(
                    result,
                    dry_run=dry_run,
                    field_manager=field_manager,
                    field_validation=field_validation,
                    warnings=warnings,
                    applied=True,
                )
            return self._update(
                result,
                status_only=status,
                dry_run=dry_run,
                patched=True,
                field_manager=field_manager,
                field_validation=field_validation,
                warnings=warnings,
                applied=True,
            )

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy | None = None,
        dry_run: bool = False,
    ) -> Obj | None:
        """Delete the object: None when it is gone, the object when finalizers still hold it.

        ``propagation_policy`` None lets the object's own ``orphan`` / ``foregroundDeletion``
        finalizer decide, else ``Background``, kube-apiserver's default for every kind here.
        What the controllers do after a delete (collecting garbage, emptying a Namespace, removing a
        CRD's objects) is done before this returns, but the answer is what the delete itself did,
        as kube-apiserver's: an empty Namespace is returned Terminating, and is already gone.
        """
        with self._lock:
            info = self.kind_info(api_version, kind)
            if propagation_policy is not None and propagation_policy not in PROPAGATION_POLICIES:
                detail = (
                    f"Unsupported value: {go_quote(str(propagation_policy))}: supported values: "
                    '"Foreground", "Background", "Orphan", "nil"'
                )
                raise Invalid(
                    make_status(
                        422,
                        "Invalid",
                        f'DeleteOptions.meta.k8s.io "" is invalid: propagationPolicy: {detail}',
                        details={
                            "group": "meta.k8s.io",
                            "kind": "DeleteOptions",
                            "causes": [
                                {"reason": "FieldValueNotSupported", "message": detail, "field": "propagationPolicy"}
                            ],
                        },
                    )
                )
            namespace = self._namespace(info, namespace)
            stored = self._stored(info, namespace, name)
            meta = stored["metadata"]
            for field_name, label, why in (
                ("uid", "UID", "deleted and then recreated"),
                ("resourceVersion", "ResourceVersion", "modified"),
            ):
                wanted = (preconditions or {}).get(field_name)
                if wanted is not None and wanted != meta.get(field_name):
                    details = {"name": name, "kind": info.kind, **({"group": info.group} if info.group else {})}
                    raise Conflict.new(
                        f'Operation cannot be fulfilled on {info.qualified_kind} "{name}": the {label} in the '
                        f"precondition ({wanted}) does not match the {label} in record ({meta.get(field_name, '')}). "
                        f"The object might have been {why}",
                        details=details,
                    )
            if dry_run:
                marked = self._marked_for_deletion(info, stored, propagation_policy)
                return None if marked is None else self._serve(marked, api_version, info)
            with self._writing():
                marked = self._delete_object(info, stored, propagation_policy)
            return None if marked is None else self._serve(marked, api_version, info)

    # -- internals: writes ---------------------------------------------------------------------------

    def _update(
        self,
        obj: Obj,
        *,
        status_only: bool,
        dry_run: bool,
        patched: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation = "Warn",
        warnings: Warnings | None = None,
        applied: bool = False,
        owned: bool = False,
    ) -> Obj:
        """Update (or, ``patched``, store a patched copy of) the object; the uid is a precondition of an update.

        ``applied``: ``obj`` is the result of an apply and carries its managedFields already. ``owned``:
        ``obj`` is the store's own (a patch result shares nothing with the caller), so it is not copied.
        """
        api_version, info = self._object_kind(obj)
        if status_only and not info.has_status(api_version):
            raise subresource_not_found(info, str(obj["metadata"].get("name") or ""))
        kind_key = (info.group, info.kind)
        incoming = obj if owned else json_copy(obj)
        found = self._decode(info, incoming, api_version, field_validation, applied=applied)
        if warnings is not None:
            warnings.extend(found)
        meta = incoming["metadata"]
        name = str(meta.get("name") or "")
        if not name:
            raise BadRequest.new("resource name may not be empty")
        namespace = self._namespace(info, meta.get("namespace"), what="the object")
        stored_old = self._stored(info, namespace, name)
        # the update is checked against the stored object as served in the request's version, as kube-apiserver
        # converts it for the strategy; the result is stored in the storage version
        old = stored_old if stored_old.get("apiVersion") == api_version else self._serve(stored_old, api_version, info)
        old_meta = old["metadata"]
        wanted_version = meta.get("resourceVersion")
        wanted_uid = meta.get("uid")
        if wanted_uid and wanted_uid != old_meta["uid"] and not patched:
            key = "/".join(part for part in ("/registry", info.group, info.plural, namespace, name) if part)
            raise Conflict.new(
                f'Operation cannot be fulfilled on {info.resource} "{name}": StorageError: invalid object, Code: 4, '
                f"Key: {key}, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: "
                f"UID in precondition: {wanted_uid}, UID in object meta: {old_meta['uid']}",
                details=self._details(info, name),
            )
        if not wanted_version and not info.unconditional_update:
            if info.schema is not None:
                raise info.schema.resource_version_required(name)
            self._raise_invalid(
                info, name, "metadata.resourceVersion", "FieldValueInvalid",
                "Invalid value: 0x0: must be specified for an update",
            )  # fmt: skip
        if wanted_version and wanted_version != old_meta["resourceVersion"]:
            raise Conflict.new(
                f'Operation cannot be fulfilled on {info.resource} "{name}": the object has been modified; '
                "please apply your changes to the latest version and try again",
                details=self._details(info, name),
            )
        if status_only:
            new = {key: value for key, value in old.items() if key != "status"}
            new["metadata"] = dict(old_meta)
            if "status" in incoming:
                new["status"] = incoming["status"]
            if applied:
                new["metadata"].pop("managedFields", None)
                if meta.get("managedFields"):
                    new["metadata"]["managedFields"] = meta["managedFields"]
            else:
                self._record(info, old, new, field_manager, api_version, subresource="status")
        else:
            new = incoming
            if not applied:
                self._record(info, old, new, field_manager, api_version)
            new_meta = new["metadata"]
            # what an update can never change (rest.BeforeUpdate); other changes to system fields are invalid
            new_meta["creationTimestamp"] = old_meta["creationTimestamp"]
            for system_field in ("generation", "deletionTimestamp", "deletionGracePeriodSeconds"):
                if system_field in old_meta:
                    new_meta[system_field] = old_meta[system_field]
                elif system_field == "generation":
                    new_meta.pop(system_field, None)
            if not new_meta.get("uid"):
                new_meta["uid"] = old_meta["uid"]
            if info.namespaced:
                new_meta["namespace"] = namespace
            else:
                new_meta.pop("namespace", None)
            if info.has_status(api_version):
                if "status" in old:
                    new["status"] = old["status"]
                else:
                    new.pop("status", None)
            if kind_key == _NAMESPACE:
                builtins.update_namespace(new, old)
            if info.generation and old_meta.get("generation"):
                ignored = ("metadata", "status") if info.has_status(api_version) else ("metadata",)
                if not _same_except(old, new, ignored):
                    new_meta["generation"] = old_meta["generation"] + 1
        new["apiVersion"] = api_version
        new["metadata"]["resourceVersion"] = old_meta["resourceVersion"]
        self._validate(info, new, old, api_version, status=status_only)
        crd_info = self._prepare_crd(new, old) if kind_key == _CRD and not status_only else None
        if warnings is not None:
            warnings.extend(finalizer_warnings(new, old))
        stored_new = self._storable(info, new)
        if _same_except(stored_old, stored_new, ()) or dry_run:
            return self._serve(stored_new, api_version, info)
        with self._writing():
            if new["metadata"].get("deletionTimestamp") and not _holds(kind_key, new):
                # removed; kube-apiserver answers with the object as sent (at the old resourceVersion) and
                # watchers see the last stored state, finalizers included, at the removal's resourceVersion
                self._drop(info, stored_old)
                self._after_removal(info, stored_old)
                return _served(new, api_version)
            self._put(info, stored_new)
            if crd_info is not None:
                self._install_crd(new, crd_info)
        return self._serve(stored_new, api_version, info)

    def _serve(self, obj: Obj, api_version: str, info: KindInfo) -> Obj:
        """``obj`` as served in ``api_version``; a stored object's conversion is shared (:mod:`.served_versions`)."""
        bucket = self._objects.get((info.group, info.kind))
        stored = bucket is not None and obj is bucket.get(_name_key(info, obj))
        memo = self._served_versions if stored else None
        return _served(obj, api_version, info.schema, self._api_versions, memo)

    def _storable(self, info: KindInfo, obj: Obj) -> Obj:
        """``obj`` (decoded, validated, in its request version) as it is stored: in the storage version."""
        schema = info.schema
        if schema is None:
            return obj
        try:
            return schema.to_storage(obj, self._api_versions)
        except ConversionError as err:
            raise conversion_failed(schema, schema.api_version(schema.storage_version), err) from None

    def _versions(self, info: KindInfo) -> _KindVersions | None:
        """The kind's versions for managedFields entries recorded in another one (None: it has only one)."""
        if info.schema is None or len(info.versions) < 2:
            return None
        return _KindVersions(self, info)

    def _field_types(self, info: KindInfo, api_version: str) -> FieldTypes:
        """How server-side apply sees the kind in ``api_version``: its CRD schema's, or ObjectMeta's only."""
        if info.schema is not None:
            version = info.schema.versions.get(split_api_version(api_version)[1])
            if version is not None:
                types: FieldTypes = version.field_types
                return types
        return _OBJECT_META_TYPES

    def _record(
        self,
        info: KindInfo,
        old: Obj | None,
        new: Obj,
        manager: str | None,
        api_version: str,
        *,
        subresource: str | None = None,
    ) -> None:
        """Set ``new``'s managedFields for a create (``old`` None), update or patch by ``manager``."""
        before = old if old is not None else builtins.zero_value((info.group, info.kind), new)
        entries = record_update(
            before,
            new,
            manager=manager or DEFAULT_FIELD_MANAGER,
            types=self._field_types(info, api_version),
            subresource=subresource,
            has_status_subresource=info.has_status(api_version),
            api_version=api_version,
            now=rfc3339(self._clock()),
            versions=self._versions(info),
        )
        meta = new["metadata"]
        if entries:
            meta["managedFields"] = entries
        else:
            meta.pop("managedFields", None)

    def _decode(
        self, info: KindInfo, obj: Obj, api_version: str, field_validation: FieldValidation, *, applied: bool = False
    ) -> Warnings:
        """Decode a request body in place (prune, coerce metadata, default); the warnings it gives.

        The result of an apply keeps its ``null`` values, for validation to refuse as kube-apiserver does.
        """
        version = split_api_version(api_version)[1]
        if info.schema is not None:
            return info.schema.decode(obj, version, field_validation=field_validation, keep_nulls=applied)
        return builtins.decode((info.group, info.kind), version, obj, field_validation)

    def _validate(self, info: KindInfo, new: Obj, old: Obj | None, api_version: str, *, status: bool = False) -> None:
        """Every check of a create (``old`` None) or an update, raised as one ``Invalid``, as kube-apiserver does."""
        name = str(new["metadata"].get("name") or "")
        crd_info = info.schema
        if crd_info is not None:
            version = split_api_version(api_version)[1]
            errors = (
                crd_info.create_errors(new, version)
                if old is None
                else crd_info.update_errors(new, old, version, status=status)
            )
            if errors:
                raise crd_info.invalid(name, errors)
            return
        if (info.group, info.kind) == _EVENT:
            return  # core Events get only their legacy checks, none of which are on metadata
        errors = validate_object_meta(new, info.namespaced)
        if (info.group, info.kind) == _NAMESPACE and name:
            # a Namespace's name is a DNS label (ValidateNamespaceName), not a subdomain
            errors = [fe.invalid("metadata.name", name, message) for message in dns1123_label_errors(name)] + [
                e for e in errors if e.field != "metadata.name"
            ]
        if old is not None:
            seen = {(e.field, e.type, e.detail) for e in errors}
            errors.extend(e for e in validate_object_meta_update(new, old) if (e.field, e.type, e.detail) not in seen)
        if errors:
            raise invalid_error(info, name, to_causes(errors))

    def _delete_object(self, info: KindInfo, stored: Obj, policy: PropagationPolicy | None) -> Obj | None:
        """Delete ``stored``: remove it (None), or mark it when finalizers hold it (inside a transaction)."""
        marked = self._marked_for_deletion(info, stored, policy)
        if marked is None:
            self._drop(info, stored)
            self._after_removal(info, stored)
        elif marked is not stored:
            self._put(info, marked)
            kind_key = (info.group, info.kind)
            if kind_key == _NAMESPACE:
                self._queue("namespace", marked["metadata"]["name"])
            elif kind_key == _CRD:
                self._queue("crd", marked["metadata"]["name"])
        return marked

    def _marked_for_deletion(self, info: KindInfo, stored: Obj, policy: PropagationPolicy | None) -> Obj | None:
        """What deleting ``stored`` leaves: None when it goes at once, else the marked object.

        ``stored`` itself when the delete changes nothing (already being deleted, same finalizers).
        The finalizers ``propagation_policy`` asks for are :func:`~clusterclass.apiserver.gc.deletion_finalizers`.
        """
        kind_key = (info.group, info.kind)
        meta = stored["metadata"]
        now = self._clock()
        if kind_key == _CRD and not meta.get("deletionTimestamp"):
            return crds.marked_for_deletion(stored, now)
        wanted = deletion_finalizers(meta.get("finalizers") or [], policy)
        if meta.get("deletionTimestamp") and wanted is None:
            return stored
        marked = {**stored, "metadata": dict(meta)}
        marked_meta = marked["metadata"]
        if wanted is not None:
            marked_meta["finalizers"] = wanted
            if not wanted:
                del marked_meta["finalizers"]
        if not _holds(kind_key, marked):
            return None
        if meta.get("deletionTimestamp"):
            return marked
        if info.generation and marked_meta.get("generation"):
            marked_meta["generation"] += 1
        marked_meta["deletionTimestamp"] = rfc3339(now)
        if kind_key == _NAMESPACE:
            marked["status"] = {**(marked.get("status") or {}), "phase": "Terminating"}
        else:
            marked_meta["deletionGracePeriodSeconds"] = 0
        return marked

    @contextmanager
    def _writing(self) -> Iterator[_Transaction]:
        """The transaction of the outermost write call: follow-up work, commit, then publication."""
        if self._transaction is not None:
            yield self._transaction
            return
        transaction = self._transaction = _Transaction(self._resource_version)
        try:
            yield transaction
            self._settle(transaction)
            if self._state is not None and transaction.net:
                puts = [(key, obj) for key, obj in transaction.net.items() if obj is not None]
                deletes = [key for key, obj in transaction.net.items() if obj is None]
                self._state.commit(self._resource_version, puts, deletes)
        except BaseException:
            self._undo(transaction)
            raise
        finally:
            self._transaction = None
        woken: list[asyncio.Future[None]] = []
        for kind_key, change in transaction.changes:
            self._hub.publish(kind_key, change, woken)
        wake(woken)
        for kind_key in transaction.removed_kinds:
            if kind_key not in self._kinds:
                self._hub.drop_kind(kind_key)

    def _settle(self, transaction: _Transaction) -> None:
        """Run the controllers' follow-up work (namespaces, CRDs, garbage collection) until none is left."""
        while True:
            while transaction.work:
                what, name = transaction.work.pop(0)
                if what == "namespace":
                    self._sync_namespace(name)
                else:
                    self._sync_crd(name)
            self._gc.run_pending()
            if not transaction.work:
                return

    def _undo(self, transaction: _Transaction) -> None:
        for kind_key, name_key, previous in reversed(transaction.undo):
            bucket = self._objects.setdefault(kind_key, ObjectBucket())
            if previous is None:
                bucket.pop(name_key, None)
            else:
                bucket[name_key] = previous
        self._resource_version = transaction.start_version
        for kind_key, before in reversed(transaction.kinds_before):
            if before is None:
                self._kinds.pop(kind_key, None)
            else:
                self._kinds[kind_key] = before
        # the collector saw the undone changes: it starts again from what is stored
        self._gc = GarbageCollector(self, clock=self._clock)
        for bucket in self._objects.values():
            for obj in bucket.values():
                self._gc.observe_stored(obj)

    def _put(self, info: KindInfo, obj: Obj, *, bump: bool = True) -> None:
        """Store ``obj`` (which the store owns from now on, never to change it) at the next resourceVersion.

        ``bump`` False writes it at the current resourceVersion, as one etcd transaction writes many keys.
        """
        transaction = self._transaction
        assert transaction is not None, "writes happen inside _writing()"
        kind_key = (info.group, info.kind)
        meta = obj["metadata"]
        name_key = (meta.get("namespace", "") if info.namespaced else "", meta["name"])
        too_large = size_error(obj, f"/registry/{info.group}/{info.resource}/{name_key[0]}/{name_key[1]}")
        if too_large is not None:
            raise too_large  # before anything changed: the transaction's earlier writes are undone
        bucket = self._objects[kind_key]
        previous = bucket.get(name_key)
        if bump:
            self._resource_version += 1
        meta["resourceVersion"] = str(self._resource_version)
        bucket[name_key] = obj
        transaction.undo.append((kind_key, name_key, previous))
        transaction.net[(*kind_key, *name_key)] = obj
        change = Change(self._resource_version, "MODIFIED" if previous else "ADDED", name_key[0], obj, previous)
        transaction.changes.append((kind_key, change))
        self._gc.observe_stored(obj)

    def _put_as(self, info: KindInfo, old: Obj, new: Obj, manager: str, subresource: str | None = "status") -> None:
        """A controller's write of ``new`` over ``old``, recorded in managedFields as that controller's."""
        self._record(info, old, new, manager, str(new.get("apiVersion") or ""), subresource=subresource)
        self._put(info, new)

    def _drop(self, info: KindInfo, stored: Obj) -> None:
        """Remove ``stored`` at the next resourceVersion."""
        transaction = self._transaction
        assert transaction is not None, "writes happen inside _writing()"
        kind_key = (info.group, info.kind)
        meta = stored["metadata"]
        name_key = (meta.get("namespace", "") if info.namespaced else "", meta["name"])
        del self._objects[kind_key][name_key]
        self._resource_version += 1
        transaction.undo.append((kind_key, name_key, stored))
        transaction.net[(*kind_key, *name_key)] = None
        transaction.changes.append((kind_key, Change(self._resource_version, "DELETED", name_key[0], None, stored)))
        self._gc.observe_removed(stored)

    def _after_removal(self, info: KindInfo, removed: Obj) -> None:
        """Follow-up work once ``removed`` is gone: a terminating namespace or CRD may now be empty."""
        kind_key = (info.group, info.kind)
        namespace = removed["metadata"].get("namespace", "") if info.namespaced else ""
        if namespace:
            ns = self._objects[_NAMESPACE].get(("", namespace))
            if ns is not None and ns["metadata"].get("deletionTimestamp"):
                self._queue("namespace", namespace)
        if info.crd:
            crd = self._objects[_CRD].get(("", info.crd))
            if crd is not None and crd["metadata"].get("deletionTimestamp"):
                self._queue("crd", info.crd)
        if kind_key == _CRD:
            self._uninstall_crd(removed)

    def _queue(self, what: str, name: str) -> None:
        transaction = self._transaction
        assert transaction is not None
        if (what, name) not in transaction.work:
            transaction.work.append((what, name))

    # -- internals: the namespace controller ---------------------------------------------------------

    def _sync_namespace(self, name: str) -> None:
        """kube-controller-manager's namespace controller, for one terminating namespace.

        Deletes everything in it (finalizers respected); once it is empty removes ``kubernetes``
        from ``spec.finalizers``, which removes the namespace unless ``metadata.finalizers`` remain.
        While content remains, ``status.conditions`` say what is left, as the controller reports.
        """
        ns = self._objects[_NAMESPACE].get(("", name))
        if ns is None or not ns["metadata"].get("deletionTimestamp"):
            return
        remaining: dict[str, int] = {}
        finalizers: dict[str, int] = {}
        for kind_key, bucket in list(self._objects.items()):
            info = self._kinds.get(kind_key)
            if info is None or not info.namespaced:
                continue
            for name_key, obj in sorted(bucket.items()):
                if name_key[0] != name:
                    continue
                if not obj["metadata"].get("deletionTimestamp"):
                    self._delete_object(info, obj, "Background")
                current = bucket.get(name_key)
                if current is not None:
                    remaining[info.resource] = remaining.get(info.resource, 0) + 1
                    for finalizer in current["metadata"].get("finalizers") or []:
                        finalizers[finalizer] = finalizers.get(finalizer, 0) + 1
        ns = self._objects[_NAMESPACE][("", name)]
        info = self._kinds[_NAMESPACE]
        if remaining:
            status = dict(ns.get("status") or {})
            for condition in builtins.namespace_conditions(remaining, finalizers, self._clock()):
                status = crds.with_condition(status, condition)
            if status != ns.get("status"):
                self._put_as(info, ns, {**ns, "metadata": dict(ns["metadata"]), "status": status}, NAMESPACE_CONTROLLER)
            return
        spec_finalizers = list((ns.get("spec") or {}).get("finalizers") or [])
        if NAMESPACE_FINALIZER in spec_finalizers:
            spec_finalizers.remove(NAMESPACE_FINALIZER)
            ns = {**ns, "metadata": dict(ns["metadata"]), "spec": {**ns["spec"], "finalizers": spec_finalizers}}
            if not spec_finalizers:
                del ns["spec"]["finalizers"]
            self._put_as(info, self._objects[_NAMESPACE][("", name)], ns, NAMESPACE_CONTROLLER, "finalize")
        if not _holds(_NAMESPACE, ns):
            self._drop(info, ns)

    # -- internals: CustomResourceDefinitions --------------------------------------------------------

    def _prepare_crd(self, crd: Obj, old: Obj | None) -> CrdInfo:
        """Check and default a CRD written by a client (create: ``old`` None), as its registry does."""
        crd["spec"] = defaulted_spec(crd["spec"]) if isinstance(crd.get("spec"), dict) else crd.get("spec")
        crd_info = parse_crd(crd)
        info = self._kinds[_CRD]
        name = crd_info.name
        if old is not None:
            for path, before, after in (
                ("spec.scope", old["spec"].get("scope"), crd["spec"].get("scope")),
                ("spec.group", old["spec"].get("group"), crd["spec"].get("group")),
            ):
                if before != after:
                    detail = f"Invalid value: {go_quote(str(after))}: field is immutable"
                    self._raise_invalid(info, name, path, "FieldValueInvalid", detail)
        known = self._kinds.get((crd_info.group, crd_info.kind))
        if known is not None and known.crd and known.crd != name:
            # kube-apiserver accepts the CRD and reports NamesAccepted False; refusing it is simpler and clearer
            self._raise_invalid(
                info, name, "spec.names.kind", "FieldValueInvalid",
                f"Invalid value: {go_quote(crd_info.kind)}: the kind is already served by {known.crd}",
            )  # fmt: skip
        if old is None:
            crd["status"] = crds.created_status(crd_info)
        return crd_info

    def _crd_info(self, name: str, crd_info: CrdInfo) -> KindInfo:
        """The kind a parsed CRD serves."""
        served = [crd_info.versions[version] for version in crd_info.served_versions]
        with_status = frozenset(version.name for version in served if version.status_subresource)
        with_scale = frozenset(version.name for version in served if version.scale is not None)
        names = frozenset(version.name for version in served)
        return KindInfo(
            group=crd_info.group,
            kind=crd_info.kind,
            plural=crd_info.plural,
            namespaced=crd_info.namespaced,
            status_subresource=bool(with_status),
            generation=True,
            versions=names,
            crd=name,
            scale_subresource=bool(with_scale),
            schema=crd_info,
            status_versions=with_status if with_status and with_status != names else None,
            scale_versions=with_scale if with_scale and with_scale != names else None,
        )

    def _install_crd(self, crd: Obj, crd_info: CrdInfo, *, bump: bool = True) -> None:
        """Serve the CRD's kind in its served versions, then accept its names and mark it Established."""
        if crd["metadata"].get("deletionTimestamp"):
            return
        self._register(self._crd_info(crd["metadata"]["name"], crd_info))
        status = crds.established_status(crd, crd_info, self._clock())
        if status != crd.get("status"):
            updated = {**crd, "metadata": dict(crd["metadata"]), "status": status}
            if bump:
                self._put_as(self._kinds[_CRD], crd, updated, CRD_CONTROLLER)
            else:
                self._put(self._kinds[_CRD], updated, bump=False)

    def _sync_crd(self, name: str) -> None:
        """The CRD finalizer controller: a deleted CRD's objects are deleted, then the CRD and its kind go."""
        crd = self._objects[_CRD].get(("", name))
        if crd is None or not crd["metadata"].get("deletionTimestamp"):
            return
        if CRD_CLEANUP_FINALIZER not in (crd["metadata"].get("finalizers") or []):
            return
        crd_info = self._kinds[_CRD]
        now = self._clock()
        info = next((info for info in self._kinds.values() if info.crd == name), None)
        if info is not None:
            bucket = self._objects[(info.group, info.kind)]
            for name_key in sorted(bucket):
                obj = bucket.get(name_key)
                if obj is not None and not obj["metadata"].get("deletionTimestamp"):
                    self._delete_object(info, obj, None)
            if bucket:
                waiting = crds.deleting_instances(crd, now)
                if waiting != crd:
                    self._put_as(crd_info, crd, waiting, CRD_CONTROLLER)
                return
        done = crds.instances_deleted(crd, now)
        if _holds(_CRD, done):
            self._put_as(crd_info, crd, done, CRD_CONTROLLER)
        else:
            self._drop(crd_info, crd)
            self._uninstall_crd(crd)

    def _uninstall_crd(self, crd: Obj) -> None:
        """Stop serving a removed CRD's kind (its objects are gone); its watches end after this write."""
        transaction = self._transaction
        assert transaction is not None
        name = crd["metadata"]["name"]
        for kind_key, info in list(self._kinds.items()):
            if info.crd == name:
                transaction.kinds_before.append((kind_key, info))
                transaction.removed_kinds.append(kind_key)
                del self._kinds[kind_key]

    # -- internals: persistence ----------------------------------------------------------------------

    def _restore(self, stored: Iterable[Obj]) -> None:
        """Rebuild the store from a state file: CRDs first (registering their kinds), then the rest."""
        objects = list(stored)
        for crd in (obj for obj in objects if (_group(obj), obj.get("kind")) == _CRD):
            # a CRD being deleted too: its remaining objects must still be readable and finalizable
            self._register(self._crd_info(crd["metadata"]["name"], parse_crd(crd)))
        for obj in objects:
            group, kind = _group(obj), str(obj.get("kind"))
            info = self._kinds.get((group, kind))
            meta = obj["metadata"]
            namespace = str(meta.get("namespace") or "")
            bucket = self._objects.setdefault((group, kind), ObjectBucket())
            bucket[(namespace if info is None or info.namespaced else "", meta["name"])] = obj
            self._gc.observe_stored(obj)
        for kind_key, info in self._kinds.items():
            if info.schema is not None:
                self._reread(kind_key, info.schema)
        with self._writing():
            # what a crash interrupted: garbage to collect, namespaces and CRDs half deleted
            for kind_key, what in ((_NAMESPACE, "namespace"), (_CRD, "crd")):
                for (_, name), obj in sorted(self._objects[kind_key].items()):
                    if obj["metadata"].get("deletionTimestamp"):
                        self._queue(what, name)

    # -- internals: checks ---------------------------------------------------------------------------

    def _object_kind(self, obj: Any) -> tuple[str, KindInfo]:
        api_version, kind, _ = object_kind(obj)
        return api_version, self.kind_info(api_version, kind)

    def _namespace(self, info: KindInfo, namespace: Any, *, what: str = "the request") -> str:
        """The namespace part of a key: "" for cluster-scoped kinds (a namespace given is ignored)."""
        if not info.namespaced:
            return ""
        if not namespace or not isinstance(namespace, str):
            raise BadRequest.new(f"{what} needs a namespace: {info.resource} is namespaced")
        return str(namespace)

    def _stored(self, info: KindInfo, namespace: str, name: str) -> Obj:
        stored = self._objects[(info.group, info.kind)].get((namespace, name))
        if stored is None:
            raise NotFound.new(f'{info.resource} "{name}" not found', details=self._details(info, name))
        return stored

    def _choose_name(self, info: KindInfo, namespace: str, meta: Obj) -> str:
        """The object's name, generated from ``generateName`` when it has none ("" when neither is given)."""
        name = meta.get("name")
        generate = meta.get("generateName")
        if not name and generate and isinstance(generate, str):
            bucket = self._objects[(info.group, info.kind)]
            for _ in range(8):
                name = generate + "".join(self._rng.choice(_NAME_ALPHABET) for _ in range(5))
                if (namespace, name) not in bucket:
                    break
            meta["name"] = name
        return name if isinstance(name, str) else ""

    def _check_kind_open(self, info: KindInfo, name: str) -> None:
        """A custom resource cannot be created while its CRD is being deleted."""
        crd = self._objects[_CRD].get(("", info.crd)) if info.crd else None
        if crd is not None and crd["metadata"].get("deletionTimestamp"):
            raise Forbidden.new(
                f'{info.resource} "{name}" is forbidden: create not allowed while custom resource definition '
                "is terminating",
                details=self._details(info, name),
            )

    def _check_namespace_open(self, info: KindInfo, namespace: str, name: str) -> None:
        ns = self._objects[_NAMESPACE].get(("", namespace))
        if ns is None:
            raise NotFound.new(f'namespaces "{namespace}" not found', details={"name": namespace, "kind": "namespaces"})
        if ns["metadata"].get("deletionTimestamp"):
            details = self._details(info, name)
            details["causes"] = [
                {
                    "reason": "NamespaceTerminating",
                    "message": f"namespace {namespace} is being terminated",
                    "field": "metadata.namespace",
                }
            ]
            raise Forbidden.new(
                f'{info.resource} "{name}" is forbidden: unable to create new content in namespace {namespace} '
                "because it is being terminated",
                details=details,
            )

    def _details(self, info: KindInfo, name: str) -> dict[str, Any]:
        details: dict[str, Any] = {"name": name, "kind": info.plural}
        if info.group:
            details["group"] = info.group
        return details

    def _raise_invalid(self, info: KindInfo, name: str, field_path: str, reason: str, detail: str) -> NoReturn:
        raise invalid_error(info, name, [{"reason": reason, "message": detail, "field": field_path}])


def _name_key(info: KindInfo, obj: Obj) -> NameKey:
    meta = obj.get("metadata") or {}
    return (str(meta.get("namespace") or "") if info.namespaced else "", str(meta.get("name") or ""))


def _group(obj: Obj) -> str:
    return split_api_version(str(obj.get("apiVersion") or "v1"))[0]


def _holds(kind_key: KindKey, obj: Obj) -> bool:
    """Whether finalizers keep ``obj`` stored once it is deleted (a Namespace's ``spec.finalizers`` too)."""
    if obj["metadata"].get("finalizers"):
        return True
    return kind_key == _NAMESPACE and bool((obj.get("spec") or {}).get("finalizers"))


def _served(
    obj: Obj,
    api_version: str,
    schema: CrdInfo | None = None,
    api_versions: ApiVersions | None = None,
    memo: ServedVersions | None = None,
) -> Obj:
    """A deep copy of stored ``obj`` as served in ``api_version``.

    Served in another version than it is stored in, a custom resource is converted (its CRD's strategy:
    ``None`` rewrites apiVersion, ``Webhook`` runs the Cluster API conversions) and pruned to that version's
    schema. A conversion that fails is kube-apiserver's 500 for a failing conversion webhook. With ``memo``
    (``obj`` is the object stored now), the conversion is shared by every reader of that object in that version.
    """
    if schema is None or obj.get("apiVersion") == api_version:
        served = _stored_copy(obj)
        served["apiVersion"] = api_version
        return served
    converted = memo.get(obj, api_version) if memo is not None else None
    if converted is None:
        try:
            converted = schema.convert(obj, split_api_version(api_version)[1], api_versions, stored=True)
        except ConversionError as err:
            raise conversion_failed(schema, api_version, err) from None
        converted["apiVersion"] = api_version
        if memo is not None:
            memo.put(obj, api_version, converted)
        else:
            return converted
    return _stored_copy(converted)


def _served_at(
    obj: Obj,
    api_version: str,
    resource_version: int,
    schema: CrdInfo | None = None,
    api_versions: ApiVersions | None = None,
    memo: ServedVersions | None = None,
) -> Obj:
    """A copy of stored ``obj`` in ``api_version``, carrying ``resource_version`` (for watch events)."""
    served = _served(obj, api_version, schema, api_versions, memo)
    served["metadata"]["resourceVersion"] = str(resource_version)
    return served


def subresource_not_found(info: KindInfo, name: str) -> NotFound:
    """kube-apiserver's 404 for a subresource the kind does not have in the request's version.

    A built-in kind's path is not served at all; a CRD's handler answers every path under an object and, for a
    subresource the version does not have, says the object is not found.
    """
    if info.schema is None:
        return NotFound.new("the server could not find the requested resource")
    details: dict[str, Any] = {"name": name, "group": info.group, "kind": info.plural}
    return NotFound.new(f'{info.resource} "{name}" not found', details=details)


def conversion_failed(schema: CrdInfo, api_version: str, err: ConversionError) -> ApiError:
    """kube-apiserver's answer when a CRD's conversion webhook fails: 500 ``conversion webhook for ... failed``."""
    return ApiError(
        make_status(500, "InternalError", f"conversion webhook for {api_version}, Kind={schema.kind} failed: {err}")
    )


class _KindVersions:
    """One kind's served versions, as the field manager asks for them (``fieldmanager.Versions``)."""

    def __init__(self, store: MemoryStore, info: KindInfo) -> None:
        self._store = store
        self._info = info

    def types(self, api_version: str) -> FieldTypes | None:
        try:
            version = split_api_version(api_version)[1]
        except ValueError:
            return None
        if version not in self._info.versions:
            return None
        return self._store._field_types(self._info, api_version)

    def convert(self, obj: Obj, api_version: str) -> Obj | None:
        schema = self._info.schema
        if schema is None:
            return None
        try:
            return self._store._serve(obj, api_version, self._info)
        except ApiError:
            return None


class _StoreApiVersions:
    """The store's CRDs as the :class:`~clusterclass.api.conversion.ApiVersions` of its conversions: a contract
    reference ``{apiGroup, kind}`` is read at the newest version of the newest contract its CRD labels name.

    A kind whose CRD has no contract labels, or a built-in kind (tests point references at ConfigMaps), is read at
    its newest served version, what discovery would prefer.
    """

    def __init__(self, store: MemoryStore) -> None:
        self._store = store

    def api_version(self, group: str, kind: str) -> str:
        info = self._store._kinds.get((group, kind))
        crd = self._store._objects[_CRD].get(("", info.crd)) if info is not None and info.crd else None
        contracts = CrdContracts([crd] if crd is not None else [])
        if info is not None and (crd is None or not contracts.labelled(group, kind)):
            newest = max(info.versions, key=version_priority)
            return f"{group}/{newest}" if group else newest
        return contracts.api_version(group, kind)
