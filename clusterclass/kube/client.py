"""The one way this project talks to a management cluster: the :class:`Client` protocol.

Two backends implement it: :class:`~clusterclass.kube.memory.MemoryStore` (the embedded management
cluster and fast tests) and, later, an HTTP client for a real kube-apiserver. Both speak plain-dict
objects, raise :mod:`clusterclass.kube.errors` types, and follow kube-apiserver's semantics, which a
shared contract test suite pins down.

The pure topology pipeline does not know this protocol; it reads through
:class:`~clusterclass.topology.reader.Reader`. :class:`ClientReader` is the thin adapter between
the two: a missing object becomes None, a Reader label map becomes a label selector.

Not here yet, on purpose: server-side apply, watch, discovery and CRD schemas.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Literal, Protocol, TypedDict

from clusterclass.api.objects import Obj, name_of, namespace_of
from clusterclass.kube.errors import NotFound
from clusterclass.kube.selectors import Selector, from_labels

#: a label selector in any form a Client accepts: the string form, a parsed Selector, or a
#: ``metav1.LabelSelector`` dict; None selects everything
LabelSelector = str | Selector | Mapping[str, Any]

PropagationPolicy = Literal["Background", "Foreground", "Orphan"]


class Preconditions(TypedDict, total=False):
    """What must still hold for a delete to go ahead (``metav1.Preconditions``)."""

    uid: str
    resourceVersion: str


class Client(Protocol):
    """Read and write access to the objects of one API server.

    ``namespace`` is None for cluster-scoped kinds; a namespaced ``list`` with None lists every
    namespace. Writes take the namespace and name from the object. Every object returned is the
    caller's own copy.
    """

    def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        """The object; raises :class:`~clusterclass.kube.errors.NotFound` when it does not exist."""
        ...

    def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
    ) -> tuple[list[Obj], str]:
        """The matching objects, ordered by namespace and name, and the list's resourceVersion."""
        ...

    def create(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        """Create ``obj`` (``metadata.generateName`` names it when it has no name); the object as stored."""
        ...

    def update(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        """Replace the object; a ``metadata.resourceVersion`` that is not the current one is a Conflict.

        For kinds with a status subresource, changes to ``status`` are ignored.
        """
        ...

    def update_status(self, obj: Obj) -> Obj:
        """Replace only the ``status`` of the object (the status subresource)."""
        ...

    def patch_merge(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Obj,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
    ) -> Obj:
        """Apply a JSON merge patch (RFC 7386) with the rules of :meth:`update`."""
        ...

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy = "Background",
    ) -> Obj | None:
        """Delete the object: None when it is gone, or the object when finalizers still hold it."""
        ...


class ClientReader:
    """A :class:`~clusterclass.topology.reader.Reader` over a :class:`Client`.

    The Reader's namespace ``""`` (cluster-scoped) becomes None, and ``list`` keeps only objects in
    exactly the namespace asked for, as :class:`~clusterclass.topology.reader.ObjectIndex` does (so
    ``""`` never lists a namespaced kind across all namespaces). A NotFound on ``get`` becomes None.
    Any other API error propagates (a namespaced kind asked for with ``""`` is a BadRequest): the
    pipeline must not mistake an unreachable server for a missing object.
    """

    def __init__(self, client: Client) -> None:
        self.client = client

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        try:
            return self.client.get(api_version, kind, name, namespace=namespace or None)
        except NotFound:
            return None

    def list(self, api_version: str, kind: str, namespace: str, labels: Mapping[str, str | None]) -> list[Obj]:
        items, _ = self.client.list(api_version, kind, namespace=namespace or None, label_selector=from_labels(labels))
        return sorted((obj for obj in items if namespace_of(obj) == namespace), key=name_of)
