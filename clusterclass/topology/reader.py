"""How the topology pipeline reads the world: the :class:`Reader` and :class:`NodeReader` protocols.

The controller implements :class:`Reader` over its informer cache, ``plan`` over the objects in
the input files (:class:`ObjectIndex`). A Reader answers in the version asked for, as an API server
does: the offline index finds objects by group and kind and converts one given in another version of a
kind :mod:`clusterclass.api.conversion` knows (a v1beta2 Cluster read as the pipeline's v1beta1), keeping
provider kinds it does not know in the version they were given.

MachinePool upgrade detection needs Nodes of the *workload* cluster; :class:`NodeReader` is that
one injectable seam (upstream's "cluster cache").
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any, Protocol

from clusterclass.api import constants as c
from clusterclass.api.contracts import bundled_contracts
from clusterclass.api.conversion import ApiVersions, ConversionError, conversion_for, convert
from clusterclass.api.objects import Obj, annotations_of, group_of, key_of, labels_of, name_of, namespace_of
from clusterclass.errors import ClusterClassError, ObjectKey, TopologyError


class Reader(Protocol):
    """Read access to the management cluster."""

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        """The object, or None when it does not exist."""
        ...

    def list(self, api_version: str, kind: str, namespace: str, labels: Mapping[str, str | None]) -> list[Obj]:
        """Objects of a kind in a namespace matching ``labels``: each key with that value, or
        present with any value where the value is None (a label-exists selector)."""
        ...


class NodeReadError(ClusterClassError):
    """The workload cluster could not be asked for a Node (unreachable, forbidden, not found)."""


class NodeReader(Protocol):
    """Read access to the Nodes of a Cluster's workload cluster."""

    def get_node(self, cluster: Obj, name: str) -> Obj | None:
        """The Node ``name`` of ``cluster``'s workload cluster.

        Returns None when this reader cannot know (an offline plan given no Nodes); raises
        :class:`NodeReadError` when the workload cluster was asked and could not answer.
        """
        ...


class ObjectIndex:
    """An in-memory :class:`Reader` over a set of objects, keyed by group, kind, namespace, name.

    Adding an object with the key of one already present replaces it, so later input wins. ``api_versions``
    answers the versions of references a conversion writes (the bundled CRDs' contracts by default); a
    converted object is kept, so asking again returns the same object.
    """

    def __init__(self, objects: Iterable[Obj] = (), *, api_versions: ApiVersions | None = None) -> None:
        self._objects: dict[ObjectKey, Obj] = {}
        self._converted: dict[tuple[ObjectKey, str], Obj] = {}
        self._api_versions = api_versions
        for obj in objects:
            self.add(obj)

    def add(self, obj: Obj) -> None:
        key = key_of(obj)
        self._objects[key] = obj
        for cached in [k for k in self._converted if k[0] == key]:
            del self._converted[cached]

    def _in_version(self, key: ObjectKey, obj: Obj, api_version: str) -> Obj:
        """``obj`` in ``api_version`` when that is another version of a kind the conversions know."""
        if obj.get("apiVersion") == api_version or not _both_known(key, str(obj.get("apiVersion") or ""), api_version):
            return obj  # a version the conversions do not know is answered as it was given, as before they existed
        cached = self._converted.get((key, api_version))
        if cached is None:
            if self._api_versions is None:
                self._api_versions = bundled_contracts()
            try:
                cached = convert(obj, api_version, api_versions=self._api_versions)
            except ConversionError as err:
                raise TopologyError(f"cannot read {key} as {api_version}: {err}", obj=key, field=err.field) from err
            self._converted[(key, api_version)] = cached
        return cached

    def __iter__(self) -> Any:
        return iter(self._objects.values())

    def __len__(self) -> int:
        return len(self._objects)

    def get(self, api_version: str, kind: str, namespace: str, name: str) -> Obj | None:
        key = ObjectKey(group_of(api_version), kind, namespace, name)
        obj = self._objects.get(key)
        return None if obj is None else self._in_version(key, obj, api_version)

    def get_key(self, key: ObjectKey) -> Obj | None:
        return self._objects.get(key)

    def list(self, api_version: str, kind: str, namespace: str, labels: Mapping[str, str | None]) -> list[Obj]:
        group = group_of(api_version)
        found = []
        for key, obj in self._objects.items():
            if key.group != group or key.kind != kind or key.namespace != namespace:
                continue
            obj_labels = labels_of(obj)
            if all(k in obj_labels and (v is None or obj_labels[k] == v) for k, v in labels.items()):
                found.append(self._in_version(key, obj, api_version))
        return sorted(found, key=name_of)


def _both_known(key: ObjectKey, have: str, want: str) -> bool:
    conversion = conversion_for(key.group, key.kind)
    if conversion is None:
        return False
    versions = conversion.versions
    return have.rpartition("/")[2] in versions and want.rpartition("/")[2] in versions


class NoNodes:
    """A :class:`NodeReader` that knows no Node: every MachinePool's nodes are unknown."""

    def get_node(self, cluster: Obj, name: str) -> Obj | None:
        return None


class IndexedNodes:
    """A :class:`NodeReader` over Node objects given offline (``kubectl get nodes -o yaml``).

    Cluster API's Machine and MachinePool controllers annotate every workload Node with
    ``cluster.x-k8s.io/cluster-name`` and ``cluster.x-k8s.io/cluster-namespace``; those annotations
    say which Cluster a given Node belongs to. A Node without them belongs to whichever Cluster
    asks, which is what a user planning a single Cluster expects.
    """

    def __init__(self, nodes: Iterable[Obj]) -> None:
        self._nodes: dict[str, list[Obj]] = {}
        for node in nodes:
            self._nodes.setdefault(name_of(node), []).append(node)

    def get_node(self, cluster: Obj, name: str) -> Obj | None:
        for node in self._nodes.get(name, []):
            annotations = annotations_of(node)
            owner_name = annotations.get(c.ANNOTATION_NODE_CLUSTER_NAME)
            owner_namespace = annotations.get(c.ANNOTATION_NODE_CLUSTER_NAMESPACE)
            if owner_name in (None, name_of(cluster)) and owner_namespace in (None, namespace_of(cluster)):
                return node
        return None
