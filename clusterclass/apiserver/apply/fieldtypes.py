"""How server-side apply sees the shape of a kind: which lists are maps or sets, which maps are atomic.

Field ownership (``metadata.managedFields``) is tracked per field, and what a "field" is inside a
list or a map depends on the schema, as in structured-merge-diff:

- a list is ``atomic`` (owned and replaced as a whole; the default for a custom resource without
  ``x-kubernetes-list-type``), a ``set`` of scalars (each value owned on its own, ``v:`` in
  fieldsV1), or a ``map`` keyed by ``x-kubernetes-list-map-keys`` (each element owned on its own,
  ``k:{...}`` in fieldsV1);
- a map is granular (each key owned on its own) unless the schema says
  ``x-kubernetes-map-type: atomic``, or it is a scalar-valued free-form map, which stays granular.

Paths are tuples of field names from the object root; ``ITEM`` stands for "any element of this
list" and ``VALUE`` for "any value of this map" (``additionalProperties``). The schema-backed
implementation lives with the CRD code; :class:`ObjectMetaTypes` knows only what every object has.
"""

from __future__ import annotations

from typing import Literal, Protocol

from clusterclass.apiserver.objectmeta import OBJECT_META_FIELDS

ListType = Literal["atomic", "set", "map"]
Path = tuple[str, ...]

#: a path element standing for any element of a list
ITEM = "[]"
#: a path element standing for any value of a map without fixed properties
VALUE = "{}"


class FieldTypes(Protocol):
    """The list and map types of one kind in one version."""

    def list_type(self, path: Path) -> tuple[ListType, tuple[str, ...]]:
        """The type of the list at ``path`` and, for a ``map`` list, its key fields (in order)."""
        ...

    def map_is_atomic(self, path: Path) -> bool:
        """Whether the object at ``path`` is owned and replaced as a whole."""
        ...


class ObjectMetaTypes:
    """The types every kind shares: ``metadata`` as kube-apiserver declares it; everything else atomic.

    ``metadata.finalizers`` is a set, ``metadata.ownerReferences`` a map keyed by ``uid`` whose elements
    are atomic (``OwnerReference`` is a ``structType=atomic``), labels and annotations granular maps.
    Used for kinds without a schema (built-in kinds here) and as the fallback of schema-backed types for
    ``metadata``.
    """

    def list_type(self, path: Path) -> tuple[ListType, tuple[str, ...]]:
        if path == ("metadata", "finalizers"):
            return "set", ()
        if path == ("metadata", "ownerReferences"):
            return "map", ("uid",)
        return "atomic", ()

    def map_is_atomic(self, path: Path) -> bool:
        return path == ("metadata", "ownerReferences", ITEM)

    def may_set(self, path: Path) -> bool:
        """Whether a field at ``path`` exists in the type: ObjectMeta's are checked; the rest is not known here."""
        if len(path) > 1 and path[0] == "metadata":
            return meta_may_set(path)
        return True


#: the fields of an ``OwnerReference`` and of a ``ManagedFieldsEntry``
OWNER_REFERENCE_FIELDS = frozenset({"apiVersion", "kind", "name", "uid", "controller", "blockOwnerDeletion"})
MANAGED_FIELDS_ENTRY_FIELDS = frozenset(
    {"manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"}
)


def meta_may_set(path: Path) -> bool:
    """Whether ``path`` (from ``metadata``) is a field ObjectMeta has: its own fields, those of its owner
    references and managedFields entries; labels and annotations take any key."""
    if len(path) == 2:
        return path[1] in OBJECT_META_FIELDS
    if len(path) == 4 and path[2] == ITEM:
        if path[1] == "ownerReferences":
            return path[3] in OWNER_REFERENCE_FIELDS
        if path[1] == "managedFields":
            return path[3] in MANAGED_FIELDS_ENTRY_FIELDS
    return True
