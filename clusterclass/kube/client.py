"""The one way this project talks to a management cluster: the :class:`Client` protocol.

Backends implement it: the in-process memory store (the embedded management cluster and fast
tests; :class:`~clusterclass.apiserver.store.MemoryStore` is its synchronous engine) and an HTTP client
that speaks the Kubernetes REST API to a real kube-apiserver or to the embedded store served over
HTTP. All speak plain-dict objects, raise :mod:`clusterclass.kube.errors` types, and follow
kube-apiserver's semantics, which one contract test suite (``tests/contract``) holds them to.

The protocol is asynchronous because the controllers, the webhooks and the embedded API front share
one event loop; a memory backend answers without awaiting anything real.

The pure topology pipeline does not know this protocol; it reads through
:class:`~clusterclass.topology.reader.Reader` (the controllers give it their informer caches).
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, NamedTuple, Protocol, TypedDict

from clusterclass.api.objects import Obj
from clusterclass.kube.errors import BadRequest
from clusterclass.kube.fieldselectors import FieldSelector
from clusterclass.kube.selectors import Selector, SelectorError, as_selector

#: a label selector in any form a Client accepts: the string form, a parsed Selector, or a
#: ``metav1.LabelSelector`` dict; None selects everything
LabelSelector = str | Selector | Mapping[str, Any]

PropagationPolicy = Literal["Background", "Foreground", "Orphan"]

#: ``merge``: JSON merge patch (RFC 7386); ``json``: JSON patch (RFC 6902), a list of operations
PatchType = Literal["merge", "json"]

WatchEventType = Literal["ADDED", "MODIFIED", "DELETED", "BOOKMARK"]

#: the manager every backend records a non-apply write under when the caller names none
#: (kube-apiserver takes the User-Agent up to its first "/", which is the same word)
DEFAULT_FIELD_MANAGER = "clusterclass"


class Preconditions(TypedDict, total=False):
    """What must still hold for a delete to go ahead (``metav1.Preconditions``)."""

    uid: str
    resourceVersion: str


class WatchEvent(TypedDict):
    """One event of a watch stream, as kube-apiserver sends it.

    A ``BOOKMARK`` carries an object with only ``apiVersion``, ``kind`` and
    ``metadata.resourceVersion`` (and, for the end of initial events, an annotation): it says the
    stream has seen every change up to that resourceVersion. ``ERROR`` events never reach callers:
    a backend raises the :class:`~clusterclass.kube.errors.ApiError` they carry instead (``Gone``
    for a resourceVersion that is too old).
    """

    type: WatchEventType
    object: Obj


@dataclass(frozen=True)
class Resource:
    """What discovery says about one kind in one group version."""

    group: str
    version: str
    kind: str
    #: the resource name in URLs: ``clusters``
    plural: str
    namespaced: bool
    #: ``status``, ``scale``...
    subresources: frozenset[str] = field(default_factory=frozenset)

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    @property
    def group_resource(self) -> str:
        """How errors name the resource: ``clusters.cluster.x-k8s.io``; ``configmaps`` for the core group."""
        return f"{self.plural}.{self.group}" if self.group else self.plural


#: a field selector as a caller gives it: the string form or a parsed :class:`FieldSelector`
FieldSelectorLike = str | FieldSelector


def parse_label_selector(label_selector: LabelSelector | None) -> Selector:
    """A request's label selector, parsed; BadRequest when it does not parse, as kube-apiserver answers."""
    try:
        return as_selector(label_selector)
    except SelectorError as err:
        raise BadRequest.new(str(err)) from err


def object_kind(obj: Any) -> tuple[str, str, dict[str, Any]]:
    """The ``apiVersion``, ``kind`` and ``metadata`` of an object sent to be written.

    Raises :class:`~clusterclass.kube.errors.BadRequest` with kube-apiserver's message when one is
    missing, so every backend refuses a malformed object the same way before looking anything up.
    """
    if not isinstance(obj, dict):
        raise BadRequest.new("the object must be a JSON object")
    api_version, kind, meta = obj.get("apiVersion"), obj.get("kind"), obj.get("metadata")
    if not api_version or not isinstance(api_version, str):
        raise BadRequest.new("Object 'apiVersion' is missing")
    if not kind or not isinstance(kind, str):
        raise BadRequest.new("Object 'Kind' is missing")
    if not isinstance(meta, dict):
        raise BadRequest.new("Object 'metadata' is missing or not an object")
    return api_version, kind, meta


class ObjectList(NamedTuple):
    """The result of a list: the items, ordered by namespace and name, and the list's resourceVersion.

    Watching from ``resource_version`` sees every change made after the list was read.
    """

    items: list[Obj]
    resource_version: str


class Client(Protocol):
    """Read and write access to the objects of one API server.

    ``namespace`` is None for cluster-scoped kinds; a namespaced ``list`` or ``watch`` with None
    covers every namespace. Writes take the namespace and name from the object. Every object
    returned is the caller's own copy. ``field_manager`` names who makes a change in
    ``metadata.managedFields``; a backend picks a default for non-apply writes without one.
    """

    async def resource(self, api_version: str, kind: str) -> Resource:
        """Discovery: how ``kind`` is served in ``api_version``; NotFound when it is not."""
        ...

    async def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        """The object; raises :class:`~clusterclass.kube.errors.NotFound` when it does not exist."""
        ...

    async def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
    ) -> ObjectList:
        """The matching objects and the list's resourceVersion (field selectors: :mod:`.fieldselectors`)."""
        ...

    def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
        resource_version: str | None = None,
        bookmarks: bool = True,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        """Changes to matching objects after ``resource_version``, until the server ends the stream.

        Without ``resource_version`` the stream starts with an ``ADDED`` event for every matching
        object. A resourceVersion older than the server keeps history for raises
        :class:`~clusterclass.kube.errors.Gone` (at once or from the iterator): list again.
        An object that stops matching the selectors arrives as ``DELETED``, one that starts matching
        as ``ADDED``. ``timeout_seconds`` asks the server to end the stream after that long.
        """
        ...

    async def create(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        """Create ``obj`` (``metadata.generateName`` names it when it has no name); the object as stored."""
        ...

    async def update(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        """Replace the object; a ``metadata.resourceVersion`` that is not the current one is a Conflict.

        For kinds with a status subresource, changes to ``status`` are ignored.
        """
        ...

    async def update_status(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        """Replace only the ``status`` of the object (the status subresource)."""
        ...

    async def apply(
        self,
        obj: Obj,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        status: bool = False,
    ) -> Obj:
        """Server-side apply ``obj`` as ``field_manager`` (creating it when missing).

        Fields another manager owns with a different value are a Conflict unless ``force``, which
        takes them over. Fields this manager applied before and leaves out now are removed unless
        another manager also owns them. ``status`` applies to the status subresource.
        """
        ...

    async def patch(
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
    ) -> Obj:
        """Patch the object with the rules of :meth:`update` (of :meth:`update_status` with ``status``)."""
        ...

    async def delete(
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
        """Delete the object: None when it is gone, or the object when finalizers still hold it.

        ``propagation_policy`` None is the server's default for the kind (``Background``).
        """
        ...

    async def close(self) -> None:
        """Release connections; the client is not used afterwards."""
        ...
