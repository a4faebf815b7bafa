"""Server-side apply field ownership: ``metadata.managedFields`` as kube-apiserver's field manager keeps it.

Pure functions, no store: :func:`apply` computes the object a server-side apply produces, with its
conflicts and ownership; :func:`record_update` computes the ownership after any other write
(create, update, merge or JSON patch). The memory store calls them around its own writes.

What a manager owns is a set of field paths (:mod:`clusterclass.apiserver.apply.fieldpaths`); what counts as
one field inside lists and maps comes from the kind's :class:`~clusterclass.apiserver.apply.fieldtypes.FieldTypes`.
The behaviour is structured-merge-diff's, as kube-apiserver 1.37 runs it, checked against a real one:

- **Apply** sets what the configuration says and makes the applier own exactly the configuration's
  fields. A field another manager owns (any operation) conflicts when the apply changes its value;
  setting the same value shares ownership. Conflicts fail the request (409, one cause per field)
  unless forced, which moves ownership to the applier. A field the applier owned before and no
  longer applies is removed from the object, unless another manager owns it; for list-maps and sets
  that means elements, and a declared field (a schema property) left with nothing anyone owns goes
  as a whole. A map or list that someone still owns but whose every entry goes is left null, as in
  kube, whose validation then refuses the object if the schema does not allow null: the caller's
  schema validation must run on the result.
- **Update** (every non-apply write) gives the writer the fields it added or changed, takes them
  from everyone else, and drops removed fields from every set. A write that changes nothing leaves
  ownership and times alone. Updates carry ``.``-marked nodes for maps and elements they created.
- An object whose ``managedFields`` are empty is not tracked by updates (kube stops tracking once a
  client resets them with ``managedFields: [{}]``); the first apply to such an object first
  records everything in it as owned by ``before-first-apply`` (operation Update), so the apply
  conflicts with it like with any other manager.
- Ownership never includes ``apiVersion``, ``kind`` or the server-set ``metadata`` fields. For a kind
  with a status subresource, writes to the main resource ignore ``status`` and writes to ``status``
  track (and change) only ``status``: :func:`apply` returns the object with that already done.
- Entries are one per (manager, operation, subresource), and per ``apiVersion`` too for Update
  entries; empty ones are dropped; they are sorted Apply before Update, then by time (no time first),
  manager, apiVersion, subresource; more than ten Update entries fold the oldest into
  ``ancient-changes``. An apply or update that changes nothing does not touch its entry's time, so
  a manager whose first apply changed nothing has an entry without ``time``.

- **Versions**: each entry's fields are in its own ``apiVersion``. Given a :class:`Versions` (the kind's other
  served versions and a way to convert to them), what a write changes is compared in every entry's version
  (both objects converted there) to find that entry's conflicts and the fields it loses, as structured-merge-
  diff's updater does; an applier whose last apply was in another version is pruned in that version, what the
  managers own added back version by version (its own new set in the new version). Without one, every version
  is taken to spell its paths the same way.
- An applied configuration may set only fields its type has (given the types' optional ``may_set``): another
  is a 500 ``failed to create typed patch object (...): .spec.x: field not declared in schema``, as
  structured-merge-diff refuses it before anything else (a map's walk stops at its first such field).

The memory store validates, defaults and prunes the returned object with the kind's schema, as
kube-apiserver does after its field manager. Not modelled: kubectl's ``last-applied-configuration``
interplay, type errors in an applied configuration (a string where the schema says boolean: the schema code
validates the object instead, with its own message), and the deduced shape of a value whose type differs
between live and configuration (treated as one changed field).
"""

from __future__ import annotations

import contextlib
import pickle
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Protocol, runtime_checkable

from clusterclass.api.conversion import CONVERSION_DATA_ANNOTATION
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, dig
from clusterclass.apiserver.apply.fieldpaths import (
    LEAF,
    FieldSet,
    key_element,
    path_string,
    raw_difference,
    raw_equal,
    raw_intersection,
    raw_owns_any,
    raw_within,
    value_element,
)
from clusterclass.apiserver.apply.fieldtypes import ITEM, FieldTypes, ListType, Path
from clusterclass.kube.errors import ApiError, BadRequest, Conflict
from clusterclass.kube.gotext import go_json, go_quote
from clusterclass.schema.jsonvalues import json_equal

#: the manager that owns what an object held before its first apply, when nothing tracked it
BEFORE_FIRST_APPLY: Final = "before-first-apply"
#: the manager the oldest Update entries are folded into
ANCIENT_CHANGES: Final = "ancient-changes"
#: how many Update entries an object keeps before folding the oldest
MAX_UPDATE_MANAGERS: Final = 10

APPLY: Final = "Apply"
UPDATE: Final = "Update"

#: paths a writer never owns: kube's stripped set (exact paths, not subtrees), plus the deletion
#: markers, which only the server sets
_STRIPPED = FieldSet.of(
    ("f:apiVersion",),
    ("f:kind",),
    ("f:metadata",),
    *(
        ("f:metadata", "f:" + name)
        for name in (
            "name",
            "namespace",
            "uid",
            "resourceVersion",
            "generation",
            "creationTimestamp",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
            "selfLink",
            "clusterName",
        )
    ),
)
_STATUS = FieldSet.of(("f:status",))
_MISSING: Final[Any] = object()
#: the fields of nothing, to look into an entry that has none under a path
_NO_FIELDS: Final = FieldSet()


# -- what the field manager asks of a kind's types ----------------------------------------------


class Versions(Protocol):
    """A kind's other versions, for entries recorded in them: their field types and conversion to them."""

    def types(self, api_version: str) -> FieldTypes | None:
        """The field types of ``api_version``; None when the kind is not served in it."""
        ...

    def convert(self, obj: Obj, api_version: str) -> Obj | None:
        """``obj`` in ``api_version`` (a new object); None when it cannot be converted."""
        ...


@runtime_checkable
class DeclaredFields(Protocol):
    """Optional: whether a map key is a declared property (False for additionalProperties values)."""

    def is_declared(self, path: Path) -> bool: ...


@runtime_checkable
class KnownFields(Protocol):
    """Optional: whether a field exists in the type at all (an applied configuration may set no other)."""

    def may_set(self, path: Path) -> bool: ...


@runtime_checkable
class ListKeyDefaults(Protocol):
    """Optional: the schema defaults of a list-map's key fields, used when an element omits one."""

    def list_key_defaults(self, path: Path) -> Mapping[str, Any]: ...


class _TypedError(Exception):
    """A value that does not fit its type (a duplicate list-map key, say); ``path`` says where."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


class _Types:
    """A kind's :class:`FieldTypes` with its optional methods looked up once per call."""

    __slots__ = ("declares", "defaults", "known", "types")

    def __init__(self, types: FieldTypes) -> None:
        self.types = types
        self.declares = types if isinstance(types, DeclaredFields) else None
        self.defaults = types if isinstance(types, ListKeyDefaults) else None
        self.known = types if isinstance(types, KnownFields) else None


#: the JSON scalar types, which are leaves wherever they are
_SCALARS = frozenset({str, int, float, bool, type(None)})


class _Cursor:
    """A place in a kind's schema during one call, with the :class:`FieldTypes` answers for it cached.

    Every walk below descends the object and its cursor together, so each path is built and asked
    about once per call however many walks pass it. Paths carry the object's own map keys and
    :data:`ITEM` for list elements.
    """

    __slots__ = ("_atomic", "_declared", "_elements", "_fields", "_item", "_list", "element", "path", "types")

    def __init__(self, types: _Types, path: Path, element: str = "") -> None:
        self.types = types
        self.path = path
        #: this place's fieldsV1 element when it is a map field (``f:name``)
        self.element = element
        self._fields: dict[str, _Cursor] = {}
        self._item: _Cursor | None = None
        self._list: tuple[ListType, tuple[str, ...]] | None = None
        self._atomic: bool | None = None
        self._declared: bool | None = None
        #: list elements' path elements by the element's identity (the element is kept alive with it)
        self._elements: dict[int, tuple[Any, str]] = {}

    def field(self, name: str) -> _Cursor:
        found = self._fields.get(name)
        if found is None:
            found = self._fields[name] = _Cursor(self.types, (*self.path, name), "f:" + name)
        return found

    def item(self) -> _Cursor:
        if self._item is None:
            self._item = _Cursor(self.types, (*self.path, ITEM))
        return self._item

    @classmethod
    def root(cls, types: FieldTypes) -> _Cursor:
        return cls(_Types(types), ())

    def list_type(self) -> tuple[ListType, tuple[str, ...]]:
        if self._list is None:
            self._list = self.types.types.list_type(self.path)
        return self._list

    def atomic(self) -> bool:
        """Whether the map here is one field (the root never is)."""
        if self._atomic is None:
            self._atomic = bool(self.path) and self.types.types.map_is_atomic(self.path)
        return self._atomic

    def exists(self) -> bool:
        """Whether the type has a field here (asked of configurations only, so not cached)."""
        known = self.types.known
        return known is None or known.may_set(self.path)

    def declared(self) -> bool:
        if self._declared is None:
            declares = self.types.declares
            self._declared = declares is None or bool(declares.is_declared(self.path))
        return self._declared

    def element_of(self, item: Any, index: int) -> str:
        """The path element of an element of the ``set`` or ``map`` list here."""
        cached = self._elements.get(id(item))
        if cached is not None and cached[0] is item:
            return cached[1]
        kind, keys = self.list_type()
        if kind == "set":
            if isinstance(item, dict | list):
                raise _TypedError(f"element {index}: associative list without keys has an element that's a map type")
            element = value_element(item)
        elif not isinstance(item, dict):
            raise _TypedError(f"element {index}: associative list with keys may not have non-map elements")
        else:
            key: dict[str, Any] = {}
            for name in keys:
                if name in item:
                    key[name] = item[name]
                elif self.types.defaults is not None:
                    defaults = self.types.defaults.list_key_defaults(self.path)
                    if name in defaults:
                        key[name] = defaults[name]
            element = key_element(key)
        self._elements[id(item)] = (item, element)
        return element


Trail = tuple[Any, str] | None


def _trail_path(trail: Trail) -> list[str]:
    """The path elements of a trail, a linked list ``(parent, element)`` kept instead of growing tuples."""
    out: list[str] = []
    while trail is not None:
        trail, element = trail
        out.append(element)
    out.reverse()
    return out


# -- walks over objects ---------------------------------------------------------------------------


def _field_set(root: _Cursor, obj: Obj, *, allow_duplicates: bool) -> FieldSet:
    """The paths ``obj`` sets (kube's ``ToFieldSet``); duplicate list keys are an error unless allowed."""
    node = FieldSet()
    _collect(root, obj, node, allow_duplicates)
    return node


def _collect(cursor: _Cursor, value: Any, node: FieldSet, allow_duplicates: bool) -> None:
    if isinstance(value, dict):
        if cursor.atomic():
            node.member = True
            return
        children = node.children
        for name, sub in value.items():
            if type(sub) in _SCALARS:
                children["f:" + name] = LEAF
                continue
            sub_cursor = cursor.field(name)
            if isinstance(sub, dict | list):
                child = FieldSet()
                try:
                    _collect(sub_cursor, sub, child, allow_duplicates)
                except _TypedError as error:
                    error.path.insert(0, sub_cursor.element)
                    raise
                if (isinstance(sub, dict) and not sub) or not sub_cursor.declared():
                    child.member = True
                if child.member or child.children:
                    children[sub_cursor.element] = child
            else:
                children[sub_cursor.element] = FieldSet(True)
    elif isinstance(value, list):
        kind, _ = cursor.list_type()
        if kind == "atomic":
            node.member = True
            return
        item_cursor = cursor.item()
        for index, item in enumerate(value):
            element = cursor.element_of(item, index)
            existing = node.children.get(element)
            if existing is not None and not allow_duplicates:
                raise _TypedError(f"duplicate entries for key {path_string([element])}")
            item_node = existing if existing is not None else FieldSet()
            node.children[element] = item_node
            try:
                _collect(item_cursor, item, item_node, allow_duplicates)
            except _TypedError as error:
                error.path.insert(0, element)
                raise
            item_node.member = True
    else:
        node.member = True


def _undeclared(cursor: _Cursor, value: Any, trail: list[str], found: list[str]) -> None:
    """Append to ``found`` the fields of ``value`` the type does not have, as structured-merge-diff's validation of
    a typed value reports them: a map's walk stops at its first such field; its other fields are walked."""
    if isinstance(value, dict):
        for name, sub in value.items():
            sub_cursor = cursor.field(name)
            if not sub_cursor.exists():
                found.append(f"{path_string([*trail, sub_cursor.element])}: field not declared in schema")
                return
            if isinstance(sub, dict | list):
                _undeclared(sub_cursor, sub, [*trail, sub_cursor.element], found)
    elif isinstance(value, list):
        kind, _ = cursor.list_type()
        item_cursor = cursor.item()
        for index, item in enumerate(value):
            if not isinstance(item, dict | list):
                continue
            element = f"i:{index}"
            if kind != "atomic":
                with contextlib.suppress(_TypedError):  # reported when the configuration becomes a field set
                    element = cursor.element_of(item, index)
            _undeclared(item_cursor, item, [*trail, element], found)


def _merge(cursor: _Cursor, live: Any, config: Any, trail: Trail, diff: _Diff) -> Any:
    """``config`` merged onto ``live``: maps and non-atomic lists by element, everything else replaced.

    A leaf whose value is the same as live's keeps live's (``3`` stays an int when ``3.0`` is applied).
    What the merge adds and changes goes into ``diff``, which is then live's difference from the
    result (a merge removes nothing), unless ``diff.exact`` had to be given up.
    """
    if isinstance(config, dict):
        if isinstance(live, dict) and not cursor.atomic():
            out: dict[str, Any] = {}
            for name, value in live.items():
                applied = config.get(name, _MISSING)
                if applied is _MISSING:
                    out[name] = json_copy(value)
                elif type(applied) is type(value) and type(value) in _SCALARS and applied == value:
                    out[name] = value
                else:
                    sub = cursor.field(name)
                    out[name] = _merge(sub, value, applied, (trail, sub.element), diff)
            for name, value in config.items():
                if name not in live:
                    sub = cursor.field(name)
                    out[name] = json_copy(value)
                    diff.add(sub, value, (trail, sub.element))
            return out
    elif isinstance(config, list):
        if isinstance(live, list):
            kind, _ = cursor.list_type()
            if kind != "atomic":
                return _merge_list(cursor, live, config, trail, diff)
    elif type(live) is type(config) and live == config:
        return live
    if json_equal(live, config):
        return json_copy(live)
    if (config is None and isinstance(live, dict | list)) or (live is None and isinstance(config, dict | list)):
        diff.exact = False  # null against a map or list: the comparison says what changed
    elif trail is not None:
        diff.modified.insert(_trail_path(trail))
    return json_copy(config)


def _merge_list(cursor: _Cursor, live: list[Any], config: list[Any], trail: Trail, diff: _Diff) -> list[Any]:
    """Merge two set or map lists element by element, in structured-merge-diff's order.

    Elements only in the live list keep their place; elements in both follow the configuration's
    order; new elements go where the configuration puts them relative to those. A live element that
    appears twice is replaced by the configured one.
    """
    item_cursor = cursor.item()
    config_elements = [cursor.element_of(item, i) for i, item in enumerate(config)]
    try:
        live_elements = [cursor.element_of(item, i) for i, item in enumerate(live)]
    except _TypedError as error:
        error.message = "live object: " + error.message
        raise
    configured = dict(zip(config_elements, config, strict=True))
    present: dict[str, Any] = {}
    duplicated: set[str] = set()
    for element, item in zip(live_elements, live, strict=True):
        if element in present:
            duplicated.add(element)
            diff.exact = False
        else:
            present[element] = item
    shared = [e for e in config_elements if e in present]
    shared_at = 0

    def next_shared() -> str | None:
        return shared[shared_at] if shared_at < len(shared) else None

    def merged(element: str) -> Any:
        order.append(element)
        value = configured[element]
        if element in duplicated:
            return json_copy(value)
        base = present.get(element, _MISSING)
        if base is _MISSING:
            diff.add(item_cursor, value, (trail, element))
            return json_copy(value)
        return _merge(item_cursor, base, value, (trail, element), diff)

    out: list[Any] = []
    order: list[str] = []
    done: set[str] = set()
    li = ci = 0
    while li < len(live) or ci < len(config):
        if li < len(live) and ci < len(config):
            element = live_elements[li]
            if element == config_elements[ci]:
                done.add(element)
                out.append(merged(element))
                li += 1
                ci += 1
                shared_at += 1 if next_shared() is not None else 0
                continue
            upcoming = next_shared()
            if element in configured and upcoming is not None and upcoming != element:
                li += 1
                continue
        if li < len(live):
            element = live_elements[li]
            if element not in configured:
                order.append(element)
                out.append(json_copy(live[li]))
                li += 1
                continue
            if element in done:
                li += 1
                continue
        if ci < len(config):
            element = config_elements[ci]
            done.add(element)
            out.append(merged(element))
            ci += 1
            if next_shared() == element:
                shared_at += 1
    if order != live_elements:
        diff.reordered = True
    return out


@dataclass
class _Diff:
    """What changed between two objects: added and removed paths (with every node under them) and changed leaves.

    ``reordered`` says that some set or map list holds its elements in another order or with
    duplicates, which the three sets cannot show; ``exact`` is cleared by a merge that cannot
    tell its difference exactly (live duplicates), so that it is compared instead. A merge with
    no other owner to check leaves ``detailed`` off and only notes that something was added.
    """

    added: FieldSet = field(default_factory=FieldSet)
    modified: FieldSet = field(default_factory=FieldSet)
    removed: FieldSet = field(default_factory=FieldSet)
    reordered: bool = False
    exact: bool = True
    #: whether added subtrees are recorded path by path (only ``grew`` is set otherwise)
    detailed: bool = True
    grew: bool = False

    def add(self, cursor: _Cursor, value: Any, trail: Trail) -> None:
        if self.detailed:
            _subtree(cursor, value, _node(self.added, trail))
        else:
            self.grew = True

    def changed(self) -> bool:
        return self.grew or not self.empty()

    def empty(self) -> bool:
        return self.added.empty() and self.modified.empty() and self.removed.empty()

    def filtered(self, keep: Callable[[FieldSet], FieldSet]) -> _Diff:
        return _Diff(keep(self.added), keep(self.modified), keep(self.removed), self.reordered)


def _compare(root: _Cursor, old: Obj, new: Obj) -> _Diff:
    diff = _Diff()
    _compare_value(root, old, new, None, diff)
    return diff


def _node(root: FieldSet, trail: Trail) -> FieldSet:
    node = root
    for element in _trail_path(trail):
        node = node.child(element)
    return node


def _compare_value(cursor: _Cursor, old: Any, new: Any, trail: Trail, diff: _Diff) -> None:
    old_map, new_map = isinstance(old, dict), isinstance(new, dict)
    if (old_map and (new_map or new is None)) or (new_map and old is None):
        # a null map compares as an empty one: its entries change, the map itself does not
        if cursor.atomic():
            if not json_equal(old, new):
                diff.modified.insert(_trail_path(trail))
            return
        old, new = old or {}, new or {}
        for name, value in old.items():
            sub = cursor.field(name)
            other = new.get(name, _MISSING)
            if other is _MISSING:
                _subtree(sub, value, _node(diff.removed, (trail, sub.element)))
            elif type(value) is type(other) and type(value) in _SCALARS:
                if value != other:
                    diff.modified.insert(_trail_path((trail, sub.element)))
            elif type(value) is type(other) and json_equal(value, other):
                continue  # an equal map or list holds no difference (most of an object, in most writes)
            else:
                _compare_value(sub, value, other, (trail, sub.element), diff)
        for name, value in new.items():
            if name not in old:
                sub = cursor.field(name)
                _subtree(sub, value, _node(diff.added, (trail, sub.element)))
        return
    old_list, new_list = isinstance(old, list), isinstance(new, list)
    if (old_list and (new_list or new is None)) or (new_list and old is None):
        kind, _ = cursor.list_type()
        if kind != "atomic":
            item_cursor = cursor.item()
            old, new = old or [], new or []
            before = _index(cursor, old)
            after = _index(cursor, new)
            if len(before) != len(old) or len(after) != len(new) or list(before) != list(after):
                diff.reordered = True
            for element, item in before.items():
                other = after.get(element, _MISSING)
                if other is _MISSING:
                    _subtree(item_cursor, item, _node(diff.removed, (trail, element)))
                else:
                    _compare_value(item_cursor, item, other, (trail, element), diff)
            for element, item in after.items():
                if element not in before:
                    _subtree(item_cursor, item, _node(diff.added, (trail, element)))
            return
    if trail is not None and not json_equal(old, new):
        diff.modified.insert(_trail_path(trail))


def _index(cursor: _Cursor, items: list[Any]) -> dict[str, Any]:
    """The elements of a set or map list by path element; the first of duplicates wins."""
    index: dict[str, Any] = {}
    for i, item in enumerate(items):
        index.setdefault(cursor.element_of(item, i), item)
    return index


def _subtree(cursor: _Cursor, value: Any, node: FieldSet) -> None:
    """Mark ``node`` and every field, element and leaf under it (``value`` was added or removed)."""
    node.member = True
    if isinstance(value, dict):
        if not cursor.atomic():
            for name, sub in value.items():
                field_cursor = cursor.field(name)
                _subtree(field_cursor, sub, node.child(field_cursor.element))
    elif isinstance(value, list):
        kind, _ = cursor.list_type()
        if kind != "atomic":
            item_cursor = cursor.item()
            for i, item in enumerate(value):
                _subtree(item_cursor, item, node.child(cursor.element_of(item, i)))


def _remove(cursor: _Cursor, value: Any, remove: FieldSet) -> Any:
    """``value`` without the owned paths of ``remove`` (each with everything under it).

    A map or list that loses every entry this way becomes null, as in structured-merge-diff (so
    kube-apiserver then refuses an apply that empties a field which may not be null).
    """
    if isinstance(value, dict):
        if not value or cursor.atomic():
            return value
        out: dict[str, Any] = {}
        for name, sub in value.items():
            node = remove.children.get("f:" + name)
            if node is None:
                out[name] = sub
            elif not node.member:
                out[name] = _remove(cursor.field(name), sub, node) if node.children else sub
        return out or None
    if isinstance(value, list) and value:
        kind, _ = cursor.list_type()
        if kind == "atomic":
            return value
        item_cursor = cursor.item()
        kept: list[Any] = []
        for i, item in enumerate(value):
            node = remove.children.get(cursor.element_of(item, i))
            if node is None:
                kept.append(item)
            elif not node.member:
                kept.append(_remove(item_cursor, item, node) if node.children else item)
        return kept or None
    return value


def _with_declared_parents(cursor: _Cursor, node: FieldSet) -> FieldSet:
    """The set plus every declared field that leads to an owned path (``EnsureNamedFieldsAreMembers``).

    Owning ``.spec.replicas`` then also means owning ``.spec``, so that removing what a manager
    owned removes a declared parent as a whole; a map key under additionalProperties does not count.
    """
    if not node.children:
        return node
    children: dict[str, FieldSet] = {}
    for element, child in node.children.items():
        is_field = element[0] == "f"
        sub = cursor.field(element[2:]) if is_field else cursor.item()
        grown = _with_declared_parents(sub, child)
        if grown.children and not grown.member and is_field and sub.declared():
            grown = FieldSet(True, grown.children)
        children[element] = grown
    return FieldSet(node.member, children)


def _prune(root: _Cursor, merged: Obj, last: FieldSet, owned: FieldSet) -> Obj:
    """Remove what the applier owned before and no manager owns now (``owned`` includes its new set).

    structured-merge-diff's three steps: drop everything last applied; add back whatever someone
    owns; then remove only what was last applied and did not come back, so fields nobody owns that
    the applier never had (defaults, for instance) stay.
    """
    last_named = _with_declared_parents(root, last)
    owned_named = _with_declared_parents(root, owned)
    merged_set = _with_declared_parents(root, _field_set(root, merged, allow_duplicates=True))
    dropped = _remove(root, merged, last_named)
    dropped_set = _with_declared_parents(root, _field_set(root, dropped, allow_duplicates=True))
    restored = _remove(root, merged, merged_set.difference(dropped_set.union(owned_named)))
    restored_set = _with_declared_parents(root, _field_set(root, restored, allow_duplicates=True))
    result: Obj = _remove(root, merged, merged_set.difference(restored_set).intersection(last_named))
    return result


# -- managedFields entries ----------------------------------------------------------------------


@dataclass(frozen=True)
class _Id:
    """Who an entry belongs to: Apply entries ignore the apiVersion, Update entries keep one per version."""

    manager: str
    operation: str
    api_version: str
    subresource: str

    @classmethod
    def of(cls, manager: str, operation: str, api_version: str, subresource: str) -> _Id:
        return cls(manager, operation, "" if operation == APPLY else api_version, subresource)

    def json(self) -> str:
        """The identifier kube sorts managers by (the entry without time and fields, as JSON)."""
        parts = [f'"manager":{go_json(self.manager)}', f'"operation":{go_json(self.operation)}']
        if self.api_version:
            parts.append(f'"apiVersion":{go_json(self.api_version)}')
        if self.subresource:
            parts.append(f'"subresource":{go_json(self.subresource)}')
        return "{" + ",".join(parts) + "}"

    def printed(self) -> str:
        """The manager as conflict messages name it: ``"mgr" with subresource "status" using v1``."""
        text = go_quote(self.manager)
        if self.subresource:
            text += f" with subresource {go_quote(self.subresource)}"
        if self.operation == UPDATE:
            text += f" using {self.api_version}"
        return text


class _Entry:
    """One managedFields entry; a stored entry's fields are decoded only when something needs them."""

    __slots__ = ("_fields", "api_version", "ident", "raw", "time")

    def __init__(
        self,
        ident: _Id,
        api_version: str,
        time: str | None,
        *,
        fields: FieldSet | None = None,
        raw: Mapping[str, Any] | None = None,
    ) -> None:
        self.ident = ident
        self.api_version = api_version
        self.time = time
        self._fields = fields
        #: the entry as stored, reused as it is while nothing about it changes
        self.raw = raw

    @property
    def raw_fields(self) -> Any:
        return (self.raw or {}).get("fieldsV1") or {}

    @property
    def fields(self) -> FieldSet:
        if self._fields is None:
            try:
                self._fields = FieldSet.from_fields_v1(self.raw_fields)
            except ValueError:
                self._fields = FieldSet()
        return self._fields

    def empty(self) -> bool:
        return (
            self.fields.empty() if self._fields is not None or self.raw is None else not raw_owns_any(self.raw_fields)
        )

    def with_fields(self, fields: FieldSet) -> _Entry:
        return _Entry(self.ident, self.api_version, self.time, fields=fields)

    def without(self, lost: FieldSet) -> _Entry:
        """This entry without the paths of ``lost``; itself when it owns none of them."""
        if self.common(lost).empty():
            return self
        if self._fields is None and self.raw is not None:
            raw = dict(self.raw)
            raw["fieldsV1"] = raw_difference(self.raw_fields, lost)
            return _Entry(self.ident, self.api_version, self.time, raw=raw)
        return self.with_fields(self.fields.difference(lost))

    def common(self, other: FieldSet) -> FieldSet:
        """The paths this entry shares with ``other``."""
        if self._fields is None:
            return raw_intersection(self.raw_fields, other)
        return self.fields.intersection(other)

    def encode(self) -> dict[str, Any]:
        if self.raw is not None:
            copied: dict[str, Any] = pickle.loads(pickle.dumps(dict(self.raw), pickle.HIGHEST_PROTOCOL))
            return copied
        entry: dict[str, Any] = {
            "manager": self.ident.manager,
            "operation": self.ident.operation,
            "apiVersion": self.api_version,
        }
        if self.time is not None:
            entry["time"] = self.time
        entry["fieldsType"] = "FieldsV1"
        entry["fieldsV1"] = self.fields.to_fields_v1()
        if self.ident.subresource:
            entry["subresource"] = self.ident.subresource
        return entry


Managers = dict[_Id, _Entry]


class _DecodeError(ValueError):
    pass


def _decode(raw: Any) -> Managers:
    """The entries of ``metadata.managedFields``; _DecodeError when kube would refuse to read them."""
    if raw is None:
        return {}
    if not isinstance(raw, list):
        raise _DecodeError("managedFields must be a list")
    managers: Managers = {}
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise _DecodeError(f"managed fields entry {index} is not an object")
        operation = item.get("operation")
        if operation not in (APPLY, UPDATE):
            raise _DecodeError("operation must be `Apply` or `Update`")
        api_version = item.get("apiVersion")
        if not isinstance(api_version, str) or not api_version:
            raise _DecodeError("apiVersion must not be empty")
        fields_type = item.get("fieldsType")
        if fields_type != "FieldsV1":
            raise _DecodeError(f"invalid fieldsType {fields_type!r} in managed fields entry {index}")
        if not isinstance(item.get("fieldsV1") or {}, dict):
            raise _DecodeError(f"invalid fieldsV1 in managed fields entry {index}")
        time = item.get("time")
        ident = _Id.of(str(item.get("manager") or ""), operation, api_version, str(item.get("subresource") or ""))
        managers[ident] = _Entry(ident, api_version, time if isinstance(time, str) else None, raw=item)
    return managers


def _decode_or_empty(raw: Any) -> Managers:
    try:
        return _decode(raw)
    except _DecodeError:
        return {}


def _is_reset(raw: Any) -> bool:
    """``managedFields: [{}]`` sent by a client: forget all ownership.

    An empty list does not reset (it reads as "no managedFields sent"), as kube documents and does
    for custom resources; its typed built-in kinds do take ``[]`` as a reset too.
    """
    if not isinstance(raw, list):
        return False
    return len(raw) == 1 and isinstance(raw[0], Mapping) and not any(v not in (None, "") for v in raw[0].values())


def _seconds(time: str | None) -> float:
    if not time:
        return 0.0
    try:
        return datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp() // 1
    except ValueError:
        return 0.0


def _encode(managers: Managers) -> list[dict[str, Any]]:
    entries = sorted(
        managers.values(),
        key=lambda e: (e.ident.operation, _seconds(e.time), e.ident.manager, e.api_version, e.ident.subresource),
    )
    return [entry.encode() for entry in entries]


def _cap(managers: Managers) -> None:
    """Fold the oldest Update entries into ``ancient-changes`` (one per apiVersion) beyond ten of them."""
    updaters = [ident for ident in managers if ident.operation == UPDATE]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda i: (_seconds(managers[i].time), i.json()))
    first_of_version: dict[str, _Id] = {}
    count = len(updaters)
    for ident in updaters:
        if count <= MAX_UPDATE_MANAGERS:
            break
        entry = managers.get(ident)
        if entry is None:
            continue
        bucket = _Id.of(ANCIENT_CHANGES, UPDATE, entry.api_version, "")
        first = first_of_version.get(entry.api_version)
        if first is None:
            first_of_version[entry.api_version] = ident
            continue
        if ident == bucket:
            continue
        if bucket not in managers:
            managers[bucket] = _Entry(bucket, entry.api_version, None, fields=managers.pop(first).fields)
        held = managers[bucket]
        managers[bucket] = _Entry(bucket, entry.api_version, entry.time, fields=entry.fields.union(held.fields))
        del managers[ident]
        count -= 1


# -- the two operations -------------------------------------------------------------------------


def _ignored(subresource: str | None, has_status_subresource: bool) -> Callable[[FieldSet], FieldSet]:
    """Which paths a write through this endpoint may own (kube's reset fields)."""
    if subresource == "status":
        return lambda s: s.only(("f:status",))
    if has_status_subresource:
        return lambda s: s.without(_STATUS)
    return lambda s: s


def _body(obj: Obj) -> Obj:
    """``obj`` without ``metadata.managedFields`` (shallow: the rest is shared, never modified)."""
    body = dict(obj)
    meta = body.get("metadata")
    if isinstance(meta, dict) and "managedFields" in meta:
        body["metadata"] = {k: v for k, v in meta.items() if k != "managedFields"}
    return body


def _empty_like(obj: Obj) -> Obj:
    """The empty object of ``obj``'s kind, which kube compares a create against."""
    return {k: obj[k] for k in ("apiVersion", "kind") if k in obj}


class _PerVersion:
    """The difference one write makes, in the write's version and (converted on demand) in every other version
    some entry was recorded in, filtered to what the endpoint may own."""

    def __init__(
        self,
        api_version: str,
        old: Obj,
        new: Obj,
        seen: _Diff,
        versions: Versions | None,
        keep: Callable[[FieldSet], FieldSet],
    ) -> None:
        self._api_version = api_version
        self._old, self._new = old, new
        self._versions = versions
        self._keep = keep
        self._diffs: dict[str, _Diff | None] = {api_version: seen}

    def _touched(self) -> set[str]:
        """The top-level fields (``f:status``...) this write changed, in its own version."""
        seen = self._diffs[self._api_version]
        assert seen is not None
        return {*seen.added.children, *seen.modified.children, *seen.removed.children}

    def _cannot_touch(self, entry: _Entry) -> bool:
        """Whether this write leaves ``entry`` (of another version) as it is, told without converting the object.

        A conversion keeps status in status (and spec in spec); of metadata it changes only the conversion-data
        annotation, which holds the object without its metadata. So a write that changed only ``status``
        cannot take a field from an entry that owns neither status nor that annotation.
        """
        if self._touched() != {"f:status"} or "f:status" in entry.fields.children:
            return False
        annotations = entry.fields.children.get("f:metadata", _NO_FIELDS).children.get("f:annotations", _NO_FIELDS)
        return f"f:{CONVERSION_DATA_ANNOTATION}" not in annotations.children

    def diff(self, api_version: str) -> _Diff | None:
        """The difference in ``api_version``; None when the write cannot be seen there (the entry is dropped).

        A write that changed only metadata changed the same in every version (a conversion changes no metadata
        but the conversion-data annotation, which holds everything else): its own difference serves them all.
        """
        if api_version in self._diffs:
            return self._diffs[api_version]
        diff: _Diff | None = self._diffs[self._api_version]
        if self._touched() <= {"f:metadata"} and self._versions is not None:
            if self._versions.types(api_version) is None:
                diff = None
            self._diffs[api_version] = diff
            return diff
        if self._versions is not None:
            types = self._versions.types(api_version)
            old = self._versions.convert(self._old, api_version) if types is not None else None
            new = self._versions.convert(self._new, api_version) if old is not None else None
            if types is None or old is None or new is None:
                diff = None
            else:
                try:
                    diff = _compare(_Cursor.root(types), _body(old), _body(new)).filtered(self._keep)
                except _TypedError:
                    diff = None
        self._diffs[api_version] = diff
        return diff

    def without_lost(self, managers: Managers) -> Managers:
        """Every entry without the fields this write added, changed or removed, each in its own version."""
        result: Managers = {}
        for ident, entry in managers.items():
            if entry.api_version != self._api_version and self._cannot_touch(entry):
                result[ident] = entry
                continue
            diff = self.diff(entry.api_version)
            if diff is None:
                continue
            kept = entry.without(diff.added.union(diff.modified).union(diff.removed))
            if not kept.empty():
                result[ident] = kept
        return result


def _update(
    root: _Cursor,
    old: Obj,
    new: Obj,
    managers: Managers,
    ident: _Id,
    api_version: str,
    keep: Callable[[FieldSet], FieldSet],
    now: str,
    versions: Versions | None = None,
) -> Managers:
    """Ownership after ``ident`` wrote ``new`` over ``old`` without apply."""
    diff = _compare(root, old, new)
    if diff.empty():
        return managers
    seen = diff.filtered(keep)
    result = _PerVersion(api_version, old, new, seen, versions, keep).without_lost(managers)
    changed = keep(diff.added.union(diff.modified)).difference(_STRIPPED)
    if not changed.empty():
        previous = result.get(ident)
        fields = changed if previous is None else changed.union(previous.fields)
        result[ident] = _Entry(ident, api_version, now, fields=fields)
    return result


def record_update(
    old: Obj | None,
    new: Obj,
    *,
    manager: str,
    types: FieldTypes,
    subresource: str | None,
    has_status_subresource: bool,
    api_version: str,
    now: str,
    versions: Versions | None = None,
) -> list[dict[str, Any]]:
    """The ``managedFields`` for ``new`` after ``manager`` wrote it by create, update or patch (operation Update).

    ``old`` is the stored object (None on create; an object without ``metadata.uid`` also counts as
    a create, so a caller may pass the empty object of a built-in kind); ``new`` is the object as
    the client sent it, before the server adds its own fields, and with the ``metadata.managedFields``
    the client sent: an absent or empty list keeps the stored ownership, ``[{}]`` clears it, any
    other valid list replaces it (as kube allows). Writes through a subresource always keep
    the stored ownership. Never raises for the object's shape: when ownership cannot be computed,
    kube drops it, and so does this (``[]``).
    """
    keep = _ignored(subresource, has_status_subresource)
    creating = old is None or not dig(old, "metadata", "uid")
    stored = _decode_or_empty(dig(old, "metadata", "managedFields"))
    sent = dig(new, "metadata", "managedFields")
    if subresource:
        managers = stored
    elif _is_reset(sent):
        managers = {}
    else:
        managers = _decode_or_empty(sent) or stored
    if not managers and not creating:
        return []
    ident = _Id.of(manager, UPDATE, api_version, subresource or "")
    before = _body(old) if old is not None else _empty_like(new)
    try:
        managers = _update(_Cursor.root(types), before, _body(new), managers, ident, api_version, keep, now, versions)
    except _TypedError:
        return []
    _cap(managers)
    return _encode(managers)


def apply(
    live: Obj | None,
    config: Obj,
    *,
    manager: str,
    force: bool,
    types: FieldTypes,
    subresource: str | None,
    has_status_subresource: bool,
    api_version: str,
    now: str,
    versions: Versions | None = None,
) -> Obj:
    """The object after ``manager`` applies ``config`` onto ``live`` (None: the apply creates it).

    The result carries the new ``metadata.managedFields`` (none when nobody owns anything) and, for
    a kind with a status subresource, keeps live's ``status`` on the main resource and only takes
    ``status`` through the status subresource. Raises :class:`Conflict` for fields other managers
    own with other values unless ``force``; :class:`BadRequest` for a configuration that carries
    ``managedFields`` or another apiVersion or kind; :class:`ApiError` (500, as kube) for duplicate
    list keys and other values that do not fit the kind's list types. Inputs are never modified.
    """
    _check_config(config, api_version, live)
    root = _Cursor.root(types)
    keep = _ignored(subresource, has_status_subresource)
    ident = _Id.of(manager, APPLY, api_version, subresource or "")
    live_body = _body(live) if live is not None else _empty_like(config)
    managers = _decode_or_empty(dig(live, "metadata", "managedFields"))
    if live is not None and not managers:
        first = _Id.of(BEFORE_FIRST_APPLY, UPDATE, api_version, subresource or "")
        try:
            managers = _update(root, _empty_like(live_body), live_body, {}, first, api_version, keep, now)
        except _TypedError as error:
            raise _typed_error("live", live_body, error) from None
    undeclared: list[str] = []
    _undeclared(root, config, [], undeclared)
    if undeclared:
        detail = undeclared[0] if len(undeclared) == 1 else "\n  ".join(["errors:", *undeclared])
        raise ApiError.new(f"failed to create typed patch object ({_where(config)}): {detail}")
    try:
        applied = keep(_field_set(root, config, allow_duplicates=False))
    except _TypedError as error:
        raise _typed_error("patch", config, error) from None
    previous = managers.pop(ident, None)
    mine = applied.difference(_STRIPPED)
    kept = previous is not None and previous.raw is not None and raw_equal(previous.raw_fields, mine)
    try:
        diff = _Diff(detailed=bool(managers))
        merged = _merge(root, live_body, config, None, diff)
        if previous is not None and not kept and not _raw_or_set_within(previous, applied):
            if previous.api_version == api_version or versions is None:
                owned = applied
                for entry in managers.values():
                    owned = owned.union(entry.fields)
                merged = _prune(root, merged, previous.fields, owned)
            else:
                merged = _prune_in_version(root, merged, applied, previous, managers, versions, api_version)
            diff = _compare(root, live_body, merged)
        elif not diff.exact:
            diff = _compare(root, live_body, merged)
    except _TypedError as error:
        raise _typed_error("live", live_body, error) from None
    seen = diff.filtered(keep)
    touched = seen.added.union(seen.modified)
    per_version = _PerVersion(api_version, live_body, merged, seen, versions, keep)
    conflicts: dict[_Id, FieldSet] = {}
    if not touched.empty():
        for other, entry in managers.items():
            theirs = per_version.diff(entry.api_version)
            if theirs is None:
                continue
            common = entry.common(theirs.added.union(theirs.modified))
            if not common.empty():
                conflicts[other] = common
    if conflicts and not force:
        raise _conflict(conflicts)
    managers = per_version.without_lost(managers)
    changed = diff.changed() or (diff.reordered and not json_equal(live_body, merged))
    if not mine.empty():
        if kept and not changed and previous is not None and previous.api_version == api_version:
            managers[ident] = previous
        else:
            time = now if changed else (previous.time if previous is not None else None)
            managers[ident] = _Entry(ident, api_version, time, fields=mine)
    _cap(managers)
    result = _restrict(live_body, merged, subresource, has_status_subresource) if changed else merged
    entries = _encode(managers)
    meta = result.setdefault("metadata", {})
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)
    return result


def _prune_in_version(
    root: _Cursor,
    merged: Obj,
    applied: FieldSet,
    previous: _Entry,
    managers: Managers,
    versions: Versions,
    api_version: str,
) -> Obj:
    """:func:`_prune` when the applier's last apply was in another version, as structured-merge-diff's updater
    prunes: in the last apply's version, drop everything it applied; then, version by version (that one first),
    add back what the managers of the version own (the applier's new set is in ``api_version``); then add back
    what was dropped but not last applied; and convert the result back to ``api_version``. Every step converts
    the objects it compares as the kind's conversion does. When a conversion is not possible nothing is pruned.
    """
    last_version = previous.api_version
    owned_at: dict[str, FieldSet] = {api_version: applied}
    for entry in managers.values():
        owned_at[entry.api_version] = owned_at.get(entry.api_version, FieldSet()).union(entry.fields)
    roots: dict[str, _Cursor] = {api_version: root}
    converted: dict[str, Obj] = {api_version: merged}

    def in_version(version: str) -> tuple[_Cursor, Obj] | None:
        if version not in roots:
            types = versions.types(version)
            obj = versions.convert(merged, version) if types is not None else None
            if types is None or obj is None:
                return None
            roots[version], converted[version] = _Cursor.root(types), _body(obj)
        return roots[version], converted[version]

    def named(cursor: _Cursor, fields: FieldSet) -> FieldSet:
        return _with_declared_parents(cursor, fields)

    def fields_of(cursor: _Cursor, obj: Obj) -> FieldSet:
        return named(cursor, _field_set(cursor, obj, allow_duplicates=True))

    last = in_version(last_version)
    if last is None:
        return merged
    last_root, last_merged = last
    pruned, pruned_version = _remove(last_root, last_merged, named(last_root, previous.fields)), last_version
    for version in sorted(owned_at, key=lambda v: v != last_version):
        found = in_version(version)
        pruned_there = versions.convert(pruned, version) if pruned_version != version else pruned
        if found is None or pruned_there is None:
            return merged
        cursor, merged_there = found
        keep = fields_of(cursor, _body(pruned_there)).union(named(cursor, owned_at[version]))
        pruned = _remove(cursor, merged_there, fields_of(cursor, merged_there).difference(keep))
        pruned_version = version
    pruned_last = versions.convert(pruned, last_version) if pruned_version != last_version else pruned
    if pruned_last is None:
        return merged
    dangling = fields_of(last_root, last_merged).difference(fields_of(last_root, _body(pruned_last)))
    result = _remove(last_root, last_merged, dangling.intersection(named(last_root, previous.fields)))
    back = versions.convert(result, api_version)
    return merged if back is None else _body(back)


def _raw_or_set_within(entry: _Entry, fields: FieldSet) -> bool:
    """Whether everything ``entry`` owns is in ``fields`` (decoding the entry only if it already is)."""
    if entry.raw is not None and entry._fields is None:
        return raw_within(entry.raw_fields, fields)
    return entry.fields.issubset(fields)


def _restrict(live: Obj, merged: Obj, subresource: str | None, has_status_subresource: bool) -> Obj:
    """What the write may change: only ``status`` through the status subresource, all but it otherwise."""
    if subresource == "status":
        result: Obj = json_copy(live)
        if "status" in merged:
            result["status"] = merged["status"]
        else:
            result.pop("status", None)
        return result
    if has_status_subresource:
        if "status" in live:
            merged["status"] = json_copy(live["status"])
        else:
            merged.pop("status", None)
    return merged


def _check_config(config: Obj, api_version: str, live: Obj | None) -> None:
    """kube's checks of an apply configuration, in its order: the kind first, then managedFields."""
    if not isinstance(config, dict):
        raise BadRequest.new("the apply configuration must be an object")
    if config.get("apiVersion") != api_version or (live is not None and config.get("kind") != live.get("kind")):
        raise BadRequest.new(f"invalid object type: {_gvk(config)}")
    meta = config.get("metadata")
    if isinstance(meta, dict) and meta.get("managedFields") is not None:
        raise BadRequest.new("metadata.managedFields must be nil")


def _gvk(obj: Obj) -> str:
    """A kind as Go prints a GroupVersionKind: ``cluster.x-k8s.io/v1beta1, Kind=Cluster``, ``/v1, Kind=ConfigMap``."""
    api_version = str(obj.get("apiVersion") or "")
    group, _, version = api_version.rpartition("/")
    return f"{group}/{version}, Kind={obj.get('kind') or ''}"


def _where(obj: Obj) -> str:
    return f"{dig(obj, 'metadata', 'namespace') or ''}/{dig(obj, 'metadata', 'name') or ''}; {_gvk(obj)}"


def _typed_error(what: str, obj: Obj, error: _TypedError) -> ApiError:
    """kube's message when a value does not fit the kind's types (a 500 there too)."""
    prefix = path_string(error.path)
    detail = f"{prefix}: {error.message}" if prefix else error.message
    return ApiError.new(f"failed to create typed {what} object ({_where(obj)}): {detail}")


def _conflict(conflicts: Mapping[_Id, FieldSet]) -> Conflict:
    """kube's apply conflict: one cause per field, the message grouped by manager."""
    ordered = sorted(conflicts, key=_Id.json)
    found = [(ident, path_string(path)) for ident in ordered for path in conflicts[ident].paths()]
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {ident.printed()}", "field": where}
        for ident, where in found
    ]
    if len(found) == 1:
        ident, where = found[0]
        message = f"Apply failed with 1 conflict: conflict with {ident.printed()}: {where}"
    else:
        lines: list[str] = []
        for ident in ordered:
            lines.append(f"conflicts with {ident.printed()}:")
            lines.extend(f"- {where}" for who, where in found if who == ident)
        message = f"Apply failed with {len(found)} conflicts: " + "\n".join(lines)
    error = Conflict.new(message, details={"causes": causes})
    assert isinstance(error, Conflict)
    return error
