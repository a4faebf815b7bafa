"""Server-side apply's view of a CRD version: list and map types by path, from the schema.

:class:`SchemaFieldTypes` implements :class:`~clusterclass.apiserver.apply.fieldtypes.FieldTypes` over the
compiled schema (:mod:`clusterclass.apiserver.crd.nodes`), plus the two optional questions the field
manager asks: whether a field is a declared property, and the defaults of a ``map`` list's keys.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from clusterclass.api.jsoncopy import json_copy
from clusterclass.apiserver.apply.fieldtypes import ITEM, VALUE, ListType, ObjectMetaTypes, Path, meta_may_set
from clusterclass.apiserver.crd.nodes import Node
from clusterclass.apiserver.objectmeta import OBJECT_META_FIELDS


class _InMetadata(NamedTuple):
    """A path inside a resource's ``metadata``, from that ``metadata`` (ObjectMeta decides its types)."""

    path: Path


class SchemaFieldTypes:
    """:class:`~clusterclass.apiserver.apply.fieldtypes.FieldTypes` backed by a CRD schema.

    Lists are ``atomic`` unless ``x-kubernetes-list-type`` says ``set`` or ``map`` (with
    ``x-kubernetes-list-map-keys``); objects are granular unless ``x-kubernetes-map-type: atomic``.
    ``metadata`` (of the object and of embedded resources) follows ObjectMeta. A path the schema
    does not describe (below ``x-kubernetes-preserve-unknown-fields``) is an atomic list or a
    granular map. Path steps are field names, :data:`ITEM` and :data:`VALUE`; a concrete map key
    is accepted where :data:`VALUE` is meant.
    """

    def __init__(self, root: Node) -> None:
        self._root = root
        self._meta = ObjectMetaTypes()
        self._cache: dict[Path, Node | _InMetadata | None] = {}

    def list_type(self, path: Path) -> tuple[ListType, tuple[str, ...]]:
        found = self._resolve(path)
        if isinstance(found, _InMetadata):
            return self._meta.list_type(found.path)
        if found is None or found.list_type not in ("set", "map"):
            return "atomic", ()
        if found.list_type == "set":
            return "set", ()
        return "map", found.list_keys

    def map_is_atomic(self, path: Path) -> bool:
        found = self._resolve(path)
        if isinstance(found, _InMetadata):
            return self._meta.map_is_atomic(found.path)
        return found is not None and found.map_type == "atomic"

    def is_declared(self, path: Path) -> bool:
        """Whether the last step of ``path`` is a declared property of its parent object.

        ``apiVersion``, ``kind`` and ``metadata`` of a resource, and ObjectMeta's own fields, are
        declared; map values (``additionalProperties``), list items and fields kept by
        ``x-kubernetes-preserve-unknown-fields`` are not.
        """
        if not path:
            return False
        if len(path) == 1 and path[0] in ("apiVersion", "kind", "metadata"):
            return True
        parent = self._resolve(path[:-1])
        if isinstance(parent, _InMetadata):
            return _meta_declared((*parent.path, path[-1]))
        if parent is None or path[-1] in (ITEM, VALUE):
            return False
        if parent.embedded and path[-1] in ("apiVersion", "kind", "metadata"):
            return True
        return parent.properties is not None and path[-1] in parent.properties

    def may_set(self, path: Path) -> bool:
        """Whether a field at ``path`` exists in the type, as structured-merge-diff types an applied configuration.

        A schema object with properties is a struct: another key is a field not declared in the schema,
        unless the object keeps unknown fields or takes any key (``additionalProperties``). An object without
        properties, a place below ``x-kubernetes-preserve-unknown-fields`` and ObjectMeta's maps take any key.
        """
        if not path:
            return True
        if len(path) == 1 and path[0] in ("apiVersion", "kind", "metadata"):
            return True
        parent = self._resolve(path[:-1])
        if isinstance(parent, _InMetadata):
            return meta_may_set((*parent.path, path[-1]))
        if parent is None or path[-1] in (ITEM, VALUE):
            return True
        if parent.embedded and path[-1] in ("apiVersion", "kind", "metadata"):
            return True
        if parent.preserve or parent.prunes_value or not parent.properties:
            return True
        return path[-1] in parent.properties

    def list_key_defaults(self, path: Path) -> dict[str, Any]:
        """For the ``map`` list at ``path``: the schema defaults of its key fields (used in ``k:{...}``)."""
        found = self._resolve(path)
        if not isinstance(found, Node) or found.list_type != "map" or found.items is None:
            return {}
        defaults: dict[str, Any] = {}
        for key in found.list_keys:
            child = found.items.child(key)
            if child is not None and child.has_default:
                defaults[key] = json_copy(child.default)
        return defaults

    def _resolve(self, path: Path) -> Node | _InMetadata | None:
        if path in self._cache:
            return self._cache[path]
        node: Node | None = self._root
        result: Node | _InMetadata | None = None
        for i, step in enumerate(path):
            if node is None:
                break
            if step == "metadata" and (i == 0 or node.embedded):
                result = _InMetadata(("metadata", *path[i + 1 :]))
                break
            if step == ITEM:
                node = node.items
            elif step == VALUE:
                node = node.additional
            else:
                node = node.child(step)
        else:
            result = node
        self._cache[path] = result
        return result


def _meta_declared(path: Path) -> bool:
    """Whether ``path`` (from ``metadata``) ends at a declared field of ObjectMeta or of its list items."""
    if len(path) == 2:
        return path[1] in OBJECT_META_FIELDS
    return bool(len(path) == 4 and path[1] in ("ownerReferences", "managedFields") and path[2] == ITEM)
