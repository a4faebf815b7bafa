"""The topology pipeline's :class:`~clusterclass.topology.reader.Reader` over informer caches.

A controller's reconcile runs the pure pipeline, which reads the management cluster through the
synchronous ``Reader`` protocol. Reading the API server for every lookup would cost a round trip
each and see a different moment per read; the controller instead reads what its
:class:`~clusterclass.kube.informer.Informer` caches hold, as controller-runtime's cache-backed
client does. :class:`CacheReader` is that reader, with the semantics of
:class:`~clusterclass.apiserver.store_reader.StoreReader` (the same reader over a store in this process),
so the pipeline cannot tell them apart:

- lookups are by API group and kind; an object is answered in the version asked for, converted from the
  informer's (:mod:`clusterclass.api.conversion`, as the API server would serve it) when the conversions know
  both versions of the kind, else in the informer's version. The conversion of each object's current
  resourceVersion is kept (one per object and version asked for), so a reconcile that reads an object again
  pays for one conversion;
- ``get`` returns None for a missing object; the namespace ``""`` names a cluster-scoped object,
  and asking for a namespaced kind with ``""`` is the store's BadRequest;
- ``list`` returns the objects in exactly the namespace asked for (``""``: cluster-scoped ones
  only) whose labels match, ordered by name;
- every object returned is the caller's own deep copy: the pipeline may change it without
  touching the cache other readers share.

What a cache cannot answer is an error, never an empty answer the pipeline would take for "does
not exist" (and then create a duplicate or delete a child): a kind no informer watches, a
namespace outside the informer's, or an informer that has not finished its first list. An
informer restricted by a label or field selector only holds matching objects; reads see no others
(the topology controller's Secret informer holds only Secrets of type ``cluster.x-k8s.io/secret``,
which are all it reads).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Mapping

from clusterclass.api.contracts import bundled_contracts
from clusterclass.api.conversion import ApiVersions, ConversionError, conversion_for, convert
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, group_of, labels_of, name_of, namespace_of
from clusterclass.errors import ClusterClassError
from clusterclass.kube.errors import BadRequest
from clusterclass.kube.indexes import LABEL_INDEX, NAMESPACE_INDEX, object_key
from clusterclass.kube.informer import Informer
from clusterclass.kube.selectors import from_labels


class CacheError(ClusterClassError):
    """A read the informer caches cannot answer (a reconcile raising it is retried later).

    ``api_version`` and ``kind`` say what was asked for, so a controller can start an informer for it
    and read again (controller-runtime's cache starts informers on first use the same way).
    """

    def __init__(self, message: str, *, api_version: str, kind: str) -> None:
        super().__init__(message)
        self.api_version = api_version
        self.kind = kind


class NotCached(CacheError):
    """No informer holds the kind, or the namespace, that was asked for."""


class NotSynced(CacheError):
    """The informer holding the kind has not finished its first list yet."""


class CacheReader:
    """A :class:`~clusterclass.topology.reader.Reader` over informers, one or more per kind (module doc).

    A kind's cache is the union of its informers that cover the namespace asked for: informers of
    one kind may each watch a namespace, or each a label selector (a controller's parents and its
    children); an informer of all namespaces covers every namespace.
    """

    #: conversions kept (objects × versions asked for)
    CONVERTED_KEPT = 50_000

    def __init__(self, informers: Iterable[Informer] = (), *, api_versions: ApiVersions | None = None) -> None:
        self._informers: dict[tuple[str, str], list[Informer]] = {}
        #: the reference versions a conversion writes: the management cluster's CRDs (the manager sets them)
        self.api_versions: ApiVersions = api_versions if api_versions is not None else bundled_contracts()
        #: (uid, apiVersion) → (resourceVersion, conversion): one entry per object and version, replaced when the
        #: object changes (keyed by resourceVersion too, the entries of every earlier version of an object filled
        #: it: most of 50,000 entries at 1000 Clusters were conversions no read could ask for again)
        self._converted: OrderedDict[tuple[str, str], tuple[str, Obj]] = OrderedDict()
        for informer in informers:
            self.add(informer)

    def _served(self, obj: Obj, api_version: str) -> Obj:
        """A copy of cached ``obj`` in ``api_version`` (module doc)."""
        have = str(obj.get("apiVersion") or "")
        if have == api_version or "/" not in api_version:
            return json_copy(obj)  # type: ignore[no-any-return]
        group, _, version = api_version.rpartition("/")
        conversion = conversion_for(group, str(obj.get("kind") or ""))
        known = conversion.versions if conversion is not None else ()
        if version not in known or have.rpartition("/")[2] not in known:
            return json_copy(obj)  # type: ignore[no-any-return]
        meta = obj.get("metadata") or {}
        key = (str(meta.get("uid") or id(obj)), api_version)
        resource_version = str(meta.get("resourceVersion") or "")
        kept = self._converted.get(key)
        converted = kept[1] if kept is not None and kept[0] == resource_version and resource_version else None
        if converted is None:
            try:
                converted = convert(obj, api_version, api_versions=self.api_versions)
            except ConversionError as err:
                raise CacheError(
                    f"cannot serve {obj.get('kind')} {name_of(obj)} as {api_version}: {err}",
                    api_version=api_version,
                    kind=str(obj.get("kind")),
                ) from err
            self._converted[key] = (resource_version, converted)
            if len(self._converted) > self.CONVERTED_KEPT:
                self._converted.popitem(last=False)
        self._converted.move_to_end(key)
        return json_copy(converted)  # type: ignore[no-any-return]

    def add(self, informer: Informer) -> None:
        """Serve reads of the informer's group and kind from it."""
        self._informers.setdefault((group_of(informer.api_version), informer.kind), []).append(informer)

    def informers_of(self, api_version: str, kind: str) -> list[Informer]:
        """Every informer of ``kind``'s group and kind, synced or not."""
        return list(self._informers.get((group_of(api_version), kind), ()))

    def informers_for(self, api_version: str, kind: str, namespace: str) -> list[Informer]:
        """The informers that hold ``kind`` in ``namespace``, all synced; NotCached or NotSynced otherwise."""
        group = group_of(api_version)
        what = f"{kind}.{group}" if group else kind
        # "" asks for cluster-scoped objects: a namespaced kind has none, whichever informer says so
        found = [
            informer
            for informer in self._informers.get((group, kind), ())
            if informer.namespace in (None, namespace) or not namespace or not _namespaced(informer)
        ]
        if not found:
            where = f" in namespace {namespace!r}" if self._informers.get((group, kind)) else ""
            raise NotCached(f"no informer caches {what}{where}", api_version=api_version, kind=kind)
        if not all(informer.has_synced for informer in found):
            raise NotSynced(f"the cache of {what} has not synced yet", api_version=api_version, kind=kind)
        return found

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        informers = self.informers_for(api_version, kind, namespace)
        for informer in informers:
            if _namespaced(informer):
                if not namespace:
                    resource = informer.resource
                    plural = resource.group_resource if resource else kind
                    raise BadRequest.new(f"the request needs a namespace: {plural} is namespaced")
                found = informer.cache.get(object_key(namespace, name))
            else:
                found = informer.cache.get(object_key(None, name))
            if found is not None:
                return self._served(found, api_version)
        return None

    def list(self, api_version: str, kind: str, namespace: str, labels: Mapping[str, str | None]) -> list[Obj]:
        selector = from_labels(labels)
        found: dict[str, Obj] = {}
        for informer in self.informers_for(api_version, kind, namespace):
            for obj in _candidates(informer, namespace, labels):
                if namespace_of(obj) == namespace and selector.matches(labels_of(obj)):
                    found.setdefault(name_of(obj), obj)
        return [self._served(found[name], api_version) for name in sorted(found)]


def _namespaced(informer: Informer) -> bool:
    """Whether the informer's kind is namespaced; a synced informer knows from discovery."""
    return informer.resource is None or informer.resource.namespaced


def _candidates(informer: Informer, namespace: str, labels: Mapping[str, str | None]) -> Iterable[Obj]:
    """The fewest cached objects that can match: through the label or namespace index when possible."""
    cache = informer.cache
    if cache.has_index(LABEL_INDEX):
        for key, value in sorted(labels.items()):
            if value is not None:
                return cache.by_index(LABEL_INDEX, f"{key}={value}")
    if namespace:
        return cache.by_index(NAMESPACE_INDEX, namespace)
    return cache.items()
