"""Resource URLs: which kind, namespace, name and subresource a request path names.

kube-apiserver serves every kind under the same grammar, for the core group under ``/api/v1`` and
for the others under ``/apis/<group>/<version>``::

    .../<plural>                                  cluster-scoped collection, or every namespace
    .../<plural>/<name>[/<subresource>]           a cluster-scoped object
    .../namespaces/<ns>/<plural>                  a namespace's collection
    .../namespaces/<ns>/<plural>/<name>[/<sub>]   a namespaced object

with one twist: ``/api/v1/namespaces/<name>/status`` (and ``/finalize``) is the Namespace's own
subresource, not a kind called ``status``. A plural that is not served in that group version, a
namespaced kind addressed by name without a namespace, or a cluster-scoped kind under
``namespaces/`` is the plain 404 kube-apiserver answers for a path it does not serve.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterclass.apiserver.front.responses import not_found
from clusterclass.apiserver.store import KindInfo, MemoryStore
from clusterclass.kube.errors import BadRequest

#: the subresources a path may name; which ones a kind has is checked by the handler
SUBRESOURCES = frozenset({"status", "finalize", "scale"})


@dataclass(frozen=True)
class Target:
    """What a resource path addresses: a collection (``name`` None) or one object."""

    info: KindInfo
    version: str
    #: the namespace in the path; None for cluster-scoped kinds and for lists across namespaces
    namespace: str | None
    name: str | None
    subresource: str | None

    @property
    def api_version(self) -> str:
        return f"{self.info.group}/{self.version}" if self.info.group else self.version

    @property
    def kind(self) -> str:
        return self.info.kind


def find_kind(store: MemoryStore, group: str, version: str, plural: str) -> KindInfo | None:
    """The kind served as ``plural`` in ``group/version``, if any."""
    for info in store.kinds():
        if info.group == group and info.plural == plural and version in info.versions:
            return info
    return None


def resolve(store: MemoryStore, group: str, version: str, segments: list[str]) -> Target:
    """The target of the path segments after ``/api/v1`` or ``/apis/<group>/<version>``; 404 otherwise."""
    if any(not segment for segment in segments):
        raise not_found()
    namespace: str | None = None
    rest = segments
    if len(segments) >= 3 and segments[0] == "namespaces" and not (group == "" and segments[2] in SUBRESOURCES):
        namespace, rest = segments[1], segments[2:]
    if not rest or len(rest) > 3:
        raise not_found()
    info = find_kind(store, group, version, rest[0])
    if info is None:
        raise not_found()
    name = rest[1] if len(rest) > 1 else None
    subresource = rest[2] if len(rest) > 2 else None
    if subresource is not None and subresource not in SUBRESOURCES:
        raise not_found()
    if namespace is not None and not info.namespaced:
        raise not_found()
    if info.namespaced and name is not None and namespace is None:
        raise not_found()
    _check_segment_names(namespace, name)
    return Target(info, version, namespace, name, subresource)


def _check_segment_names(*names: str | None) -> None:
    """``.`` and ``..`` can never name an object (kube-apiserver refuses them before anything else)."""
    for name in names:
        if name in (".", ".."):
            raise BadRequest.new(f'name may not be "{name}"')
