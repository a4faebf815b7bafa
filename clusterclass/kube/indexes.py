"""An informer's local cache: objects by ``namespace/name`` plus secondary indexes.

A controller asks its cache questions the API cannot answer in one call: "which MachinePools does
this Cluster own?", "which Clusters use ClusterClass ``ns/quick-start``?". Scanning every cached
object per event would make each reconcile cost the size of the management cluster, so the cache
keeps *indexes*: an index function maps an object to the values it is found under, and
:meth:`IndexedCache.by_index` returns the objects under one value. This is client-go's
``cache.Indexer``; :mod:`clusterclass.kube.informer` fills it from list and watch.

Ready-made index functions cover what the topology controllers look up: labels
(:func:`index_by_label`, values ``key=value``), owners (:func:`index_by_owner`, every
ownerReference's uid, and :func:`index_by_controller`, only the controller's) and the ClusterClass
a Cluster's topology uses (:func:`index_by_topology_class`, ``namespace/name``).

The cache holds the objects themselves, never copies: whatever it returns is shared and must be
treated as read-only (copy before changing), as with client-go's indexer. Readers that hand objects
to code that may change them (:class:`~clusterclass.kube.cache_reader.CacheReader`) copy.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any

from clusterclass.api.objects import Obj, dig, labels_of, name_of, namespace_of, owner_references_of

#: maps an object to the index values it is found under (none: not in this index)
IndexFunc = Callable[[Obj], Iterable[str]]

NAMESPACE_INDEX = "namespace"
LABEL_INDEX = "label"
OWNER_INDEX = "owner"
CONTROLLER_INDEX = "controller"
TOPOLOGY_CLASS_INDEX = "topology.class"


def object_key(namespace: str | None, name: str) -> str:
    """The cache key: ``namespace/name``, or ``name`` for a cluster-scoped object (client-go's)."""
    return f"{namespace}/{name}" if namespace else name


def key_of_object(obj: Mapping[str, Any]) -> str:
    return object_key(namespace_of(obj), name_of(obj))


# -- ready-made index functions --------------------------------------------------------------------


def index_by_namespace(obj: Obj) -> list[str]:
    """The object's namespace (cluster-scoped objects are not indexed); every informer has it."""
    namespace = namespace_of(obj)
    return [namespace] if namespace else []


def index_by_label(obj: Obj) -> list[str]:
    """``key=value`` for every label: ``by_index(LABEL_INDEX, "cluster.x-k8s.io/cluster-name=c1")``."""
    return [f"{key}={value}" for key, value in labels_of(obj).items()]


def _owner_references(obj: Obj) -> list[Mapping[str, Any]]:
    return [ref for ref in owner_references_of(obj) if ref.get("uid")]


def index_by_owner(obj: Obj) -> list[str]:
    """The uid of every owner: everything a Cluster owns is ``by_index(OWNER_INDEX, cluster_uid)``.

    By uid, not name: an owner deleted and created again under the same name is another owner,
    and its predecessor's children are not its own.
    """
    return [str(ref["uid"]) for ref in _owner_references(obj)]


def index_by_controller(obj: Obj) -> list[str]:
    """The uid of the owner with ``controller: true`` (at most one, as the API server enforces)."""
    return [str(ref["uid"]) for ref in _owner_references(obj) if ref.get("controller") is True]


def index_by_topology_class(obj: Obj) -> list[str]:
    """``namespace/name`` of the ClusterClass a Cluster's managed topology uses.

    The class lives in the Cluster's namespace unless ``spec.topology.classNamespace`` (newer
    Cluster API) says otherwise, so the value is namespace-qualified: two namespaces' classes of
    one name never mix. A Cluster without a topology is not indexed.
    """
    topology = dig(obj, "spec", "topology")
    if not isinstance(topology, Mapping):
        return []
    name = topology.get("class")
    if not isinstance(name, str) or not name:
        return []
    namespace = topology.get("classNamespace") or namespace_of(obj)
    return [f"{namespace}/{name}"]


#: the indexes :meth:`IndexedCache.add_standard_indexes` adds
STANDARD_INDEXES: Mapping[str, IndexFunc] = {
    LABEL_INDEX: index_by_label,
    OWNER_INDEX: index_by_owner,
    CONTROLLER_INDEX: index_by_controller,
    TOPOLOGY_CLASS_INDEX: index_by_topology_class,
}


# -- the cache -------------------------------------------------------------------------------------


class UnknownIndex(KeyError):
    """An index that was never added (a KeyError: the name is the missing key)."""


class IndexedCache:
    """Objects by key with secondary indexes; every read returns shared, read-only objects."""

    def __init__(self) -> None:
        self._objects: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = {}
        #: index name → value → keys of the objects under it
        self._indexes: dict[str, dict[str, set[str]]] = {}
        #: index name → key → the values the object was indexed under (to unindex it on change)
        self._values: dict[str, dict[str, tuple[str, ...]]] = {}

    # -- indexes --

    def add_index(self, name: str, func: IndexFunc) -> None:
        """Index every object, present and future, by ``func``; a name is added once."""
        if name in self._indexers:
            raise ValueError(f"index {name!r} already exists")
        self._indexers[name] = func
        self._indexes[name] = {}
        self._values[name] = {}
        for key, obj in self._objects.items():
            self._index_one(name, key, obj)

    def add_standard_indexes(self) -> None:
        """The label, owner, controller and topology-class indexes (those not added yet)."""
        for name, func in STANDARD_INDEXES.items():
            if name not in self._indexers:
                self.add_index(name, func)

    def by_index(self, name: str, value: str) -> list[Obj]:
        """Objects found under ``value`` in index ``name``, ordered by key; KeyError for an unknown index."""
        return [self._objects[key] for key in sorted(self._index(name).get(value, ()))]

    def index_values(self, name: str) -> list[str]:
        """Every value index ``name`` has objects under, sorted."""
        return sorted(self._index(name))

    def _index(self, name: str) -> dict[str, set[str]]:
        index = self._indexes.get(name)
        if index is None:
            raise UnknownIndex(name)
        return index

    def _index_one(self, name: str, key: str, obj: Obj) -> None:
        values = tuple(dict.fromkeys(self._indexers[name](obj)))
        if values:
            self._values[name][key] = values
        index = self._indexes[name]
        for value in values:
            index.setdefault(value, set()).add(key)

    def _unindex_one(self, name: str, key: str) -> None:
        index = self._indexes[name]
        for value in self._values[name].pop(key, ()):
            keys = index.get(value)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del index[value]

    # -- objects --

    def put(self, obj: Obj) -> Obj | None:
        """Store ``obj`` (the cache keeps this dict); returns the object it replaced."""
        key = key_of_object(obj)
        old = self._objects.get(key)
        self._objects[key] = obj
        for name in self._indexers:
            if old is not None:
                self._unindex_one(name, key)
            self._index_one(name, key, obj)
        return old

    def remove(self, key: str) -> Obj | None:
        """Drop the object under ``key``; returns it, or None when there was none."""
        old = self._objects.pop(key, None)
        if old is not None:
            for name in self._indexers:
                self._unindex_one(name, key)
        return old

    def get(self, key: str) -> Obj | None:
        return self._objects.get(key)

    def items(self) -> list[Obj]:
        """Every object, ordered by key."""
        return [self._objects[key] for key in sorted(self._objects)]

    def __len__(self) -> int:
        return len(self._objects)

    def has_index(self, name: str) -> bool:
        return name in self._indexers

    def __contains__(self, key: object) -> bool:
        return key in self._objects

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._objects))
