"""Server-side apply field ownership: ``metadata.managedFields`` as kube-apiserver's field manager keeps it.

Pure functions, no store: :func:`apply` computes the object a server-side apply produces, with its
conflicts and ownership; :func:`record_update` computes the ownership after any other write
(create, update, merge or JSON patch). The memory store calls them around its own writes.

What a manager owns is a set of field paths (:mod:`clusterclass.kube.fieldpaths`); what counts as
one field inside lists and maps comes from the kind's :class:`~clusterclass.kube.fieldtypes.FieldTypes`.
The behaviour is structured-merge-diff's, as kube-apiserver 1.37 runs it, checked against a real one:

- **Apply** sets what the configuration says and makes the applier own exactly the configuration's
  fields. A field another manager owns (any operation) conflicts when the apply changes its value;
  setting the same value shares ownership. Conflicts fail the request (409, one cause per field)
  unless forced, which moves ownership to the applier. A field the applier owned before and no
  longer applies is removed from the object, unless another manager owns it; for list-maps and sets
  that means elements, and a declared field (a schema property) left with nothing anyone owns goes
  as a whole.
- **Update** (every non-apply write) gives the writer the fields it added or changed, takes them
  from everyone else, and drops removed fields from every set. A write that changes nothing leaves
  ownership and times alone. Updates carry ``.``-marked nodes for maps and elements they created.
- An object whose ``managedFields`` are empty is not tracked by updates (kube stops tracking once a
  client resets them with ``managedFields: []`` or ``[{}]``); the first apply to such an object first
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

Not modelled: conversion between versions of a kind (paths are taken as the same in every version),
kubectl's ``last-applied-configuration`` interplay, unknown-field and type errors (the schema code
validates the object), and the deduced shape of a value whose type differs between live and
configuration (treated as one changed field).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Final, Protocol, runtime_checkable

from clusterclass.api.objects import Obj, dig
from clusterclass.kube.errors import ApiError, BadRequest, Conflict
from clusterclass.kube.fieldpaths import FieldSet, go_json, go_quote, key_element, path_string, value_element
from clusterclass.kube.fieldtypes import ITEM, FieldTypes, ListType, Path

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


# -- what the field manager asks of a kind's types ----------------------------------------------


@runtime_checkable
class DeclaredFields(Protocol):
    """Optional: whether a map key is a declared property (False for additionalProperties values)."""

    def is_declared(self, path: Path) -> bool: ...


@runtime_checkable
class ListKeyDefaults(Protocol):
    """Optional: the schema defaults of a list-map's key fields, used when an element omits one."""

    def list_key_defaults(self, path: Path) -> Mapping[str, Any]: ...


class _Shape:
    """One call's view of a kind's :class:`FieldTypes`, cached by path.

    Paths carry the object's own map keys and :data:`ITEM` for list elements.
    """

    def __init__(self, types: FieldTypes) -> None:
        self._types = types
        self._lists: dict[Path, tuple[ListType, tuple[str, ...]]] = {}
        self._atomic: dict[Path, bool] = {}
        self._declared: dict[Path, bool] = {}
        self._declares = isinstance(types, DeclaredFields)
        self._defaults = isinstance(types, ListKeyDefaults)

    def list_type(self, path: Path) -> tuple[ListType, tuple[str, ...]]:
        found = self._lists.get(path)
        if found is None:
            found = self._lists[path] = self._types.list_type(path)
        return found

    def map_atomic(self, path: Path) -> bool:
        found = self._atomic.get(path)
        if found is None:
            # an owner reference is one field (OwnerReference is a +structType=atomic in kube)
            found = path == ("metadata", "ownerReferences", ITEM) or self._types.map_is_atomic(path)
            self._atomic[path] = found
        return found

    def declared(self, path: Path) -> bool:
        if not self._declares:
            return True
        found = self._declared.get(path)
        if found is None:
            found = self._declared[path] = bool(self._types.is_declared(path))  # type: ignore[attr-defined]
        return found

    def key_defaults(self, path: Path) -> Mapping[str, Any]:
        if not self._defaults:
            return {}
        defaults: Mapping[str, Any] = self._types.list_key_defaults(path)  # type: ignore[attr-defined]
        return defaults


class _TypedError(Exception):
    """A value that does not fit its type (a duplicate list-map key, say); ``path`` says where."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message
        self.path: list[str] = []


def _element(shape: _Shape, path: Path, kind: ListType, keys: tuple[str, ...], item: Any, index: int) -> str:
    """The path element of one element of a ``set`` or ``map`` list."""
    if kind == "set":
        if isinstance(item, dict | list):
            raise _TypedError(f"element {index}: associative list without keys has an element that's a map type")
        return value_element(item)
    if not isinstance(item, dict):
        raise _TypedError(f"element {index}: associative list with keys may not have non-map elements")
    key: dict[str, Any] = {}
    for name in keys:
        if name in item:
            key[name] = item[name]
        else:
            defaults = shape.key_defaults(path)
            if name in defaults:
                key[name] = defaults[name]
    return key_element(key)


# -- walks over objects ---------------------------------------------------------------------------


def field_set(types: FieldTypes, obj: Obj) -> FieldSet:
    """The paths an applied configuration sets (kube's ``ToFieldSet``); duplicates are an error."""
    return _field_set(_Shape(types), obj, allow_duplicates=False)


def _field_set(shape: _Shape, obj: Obj, *, allow_duplicates: bool) -> FieldSet:
    root = FieldSet()
    _collect(shape, obj, (), root, allow_duplicates)
    return root


def _collect(shape: _Shape, value: Any, path: Path, node: FieldSet, allow_duplicates: bool) -> None:
    if isinstance(value, dict):
        if path and shape.map_atomic(path):
            node.member = True
            return
        for name, sub in value.items():
            sub_path = (*path, name)
            child = FieldSet()
            try:
                _collect(shape, sub, sub_path, child, allow_duplicates)
            except _TypedError as error:
                error.path.insert(0, "f:" + name)
                raise
            if sub is None or (isinstance(sub, dict) and not sub) or not shape.declared(sub_path):
                child.member = True
            if child.member or child.children:
                node.children["f:" + name] = child
    elif isinstance(value, list):
        kind, keys = shape.list_type(path)
        if kind == "atomic":
            node.member = True
            return
        item_path = (*path, ITEM)
        for index, item in enumerate(value):
            element = _element(shape, path, kind, keys, item, index)
            existing = node.children.get(element)
            if existing is not None and not allow_duplicates:
                raise _TypedError(f"duplicate entries for key {path_string([element])}")
            item_node = existing if existing is not None else FieldSet()
            node.children[element] = item_node
            try:
                _collect(shape, item, item_path, item_node, allow_duplicates)
            except _TypedError as error:
                error.path.insert(0, element)
                raise
            item_node.member = True
    else:
        node.member = True


def _copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_copy(v) for v in value]
    return value


def json_equal(a: Any, b: Any) -> bool:
    """Equality of JSON values: ``1 == 1.0``, but ``True != 1``; a null field differs from a missing one."""
    if isinstance(a, dict):
        if not isinstance(b, dict) or len(a) != len(b):
            return False
        for key, value in a.items():
            other = b.get(key, _MISSING)
            if other is _MISSING or not json_equal(value, other):
                return False
        return True
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b
    return type(a) is type(b) and bool(a == b)


def _merge(shape: _Shape, live: Any, config: Any, path: Path) -> Any:
    """``config`` merged onto ``live``: maps and non-atomic lists by element, everything else replaced.

    A leaf whose value is the same as live's keeps live's (``3`` stays an int when ``3.0`` is applied).
    """
    if isinstance(config, dict) and isinstance(live, dict) and not (path and shape.map_atomic(path)):
        out: dict[str, Any] = {}
        for name, value in live.items():
            out[name] = _merge(shape, value, config[name], (*path, name)) if name in config else _copy(value)
        for name, value in config.items():
            if name not in live:
                out[name] = _copy(value)
        return out
    if isinstance(config, list) and isinstance(live, list):
        kind, keys = shape.list_type(path)
        if kind != "atomic":
            return _merge_list(shape, live, config, path, kind, keys)
    return _copy(live) if json_equal(live, config) else _copy(config)


def _merge_list(
    shape: _Shape, live: list[Any], config: list[Any], path: Path, kind: ListType, keys: tuple[str, ...]
) -> list[Any]:
    """Merge two set or map lists element by element, in structured-merge-diff's order.

    Elements only in the live list keep their place; elements in both follow the configuration's
    order; new elements go where the configuration puts them relative to those. A live element that
    appears twice is replaced by the configured one.
    """
    item_path = (*path, ITEM)
    config_elements = [_element(shape, path, kind, keys, item, i) for i, item in enumerate(config)]
    try:
        live_elements = [_element(shape, path, kind, keys, item, i) for i, item in enumerate(live)]
    except _TypedError as error:
        error.message = "live object: " + error.message
        raise
    configured = dict(zip(config_elements, config, strict=True))
    present: dict[str, Any] = {}
    duplicated: set[str] = set()
    for element, item in zip(live_elements, live, strict=True):
        if element in present:
            duplicated.add(element)
        else:
            present[element] = item
    shared = [e for e in config_elements if e in present]
    shared_at = 0

    def next_shared() -> str | None:
        return shared[shared_at] if shared_at < len(shared) else None

    def merged(element: str) -> Any:
        base = _MISSING if element in duplicated else present.get(element, _MISSING)
        value = configured[element]
        return _copy(value) if base is _MISSING else _merge(shape, base, value, item_path)

    out: list[Any] = []
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
                out.append(_copy(live[li]))
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
    return out


@dataclass
class _Diff:
    """What changed between two objects: added and removed paths (with every node under them) and changed leaves."""

    added: FieldSet = field(default_factory=FieldSet)
    modified: FieldSet = field(default_factory=FieldSet)
    removed: FieldSet = field(default_factory=FieldSet)

    def empty(self) -> bool:
        return self.added.empty() and self.modified.empty() and self.removed.empty()

    def filtered(self, keep: Callable[[FieldSet], FieldSet]) -> _Diff:
        return _Diff(keep(self.added), keep(self.modified), keep(self.removed))


def _compare(shape: _Shape, old: Obj, new: Obj) -> _Diff:
    diff = _Diff()
    _compare_value(shape, old, new, (), (), diff)
    return diff


def _node(root: FieldSet, prefix: tuple[str, ...]) -> FieldSet:
    node = root
    for element in prefix:
        node = node.child(element)
    return node


def _compare_value(shape: _Shape, old: Any, new: Any, path: Path, prefix: tuple[str, ...], diff: _Diff) -> None:
    if isinstance(old, dict) and isinstance(new, dict):
        if path and shape.map_atomic(path):
            if not json_equal(old, new):
                diff.modified.insert(prefix)
            return
        for name, value in old.items():
            other = new.get(name, _MISSING)
            if other is _MISSING:
                _subtree(shape, value, (*path, name), _node(diff.removed, (*prefix, "f:" + name)))
            else:
                _compare_value(shape, value, other, (*path, name), (*prefix, "f:" + name), diff)
        for name, value in new.items():
            if name not in old:
                _subtree(shape, value, (*path, name), _node(diff.added, (*prefix, "f:" + name)))
        return
    if isinstance(old, list) and isinstance(new, list):
        kind, keys = shape.list_type(path)
        if kind != "atomic":
            item_path = (*path, ITEM)
            before = _index(shape, old, path, kind, keys)
            after = _index(shape, new, path, kind, keys)
            for element, item in before.items():
                other = after.get(element, _MISSING)
                if other is _MISSING:
                    _subtree(shape, item, item_path, _node(diff.removed, (*prefix, element)))
                else:
                    _compare_value(shape, item, other, item_path, (*prefix, element), diff)
            for element, item in after.items():
                if element not in before:
                    _subtree(shape, item, item_path, _node(diff.added, (*prefix, element)))
            return
    if prefix and not json_equal(old, new):
        diff.modified.insert(prefix)


def _index(shape: _Shape, items: list[Any], path: Path, kind: ListType, keys: tuple[str, ...]) -> dict[str, Any]:
    """The elements of a set or map list by path element; the first of duplicates wins."""
    index: dict[str, Any] = {}
    for i, item in enumerate(items):
        index.setdefault(_element(shape, path, kind, keys, item, i), item)
    return index


def _subtree(shape: _Shape, value: Any, path: Path, node: FieldSet) -> None:
    """Mark ``node`` and every field, element and leaf under it (``value`` was added or removed)."""
    node.member = True
    if isinstance(value, dict):
        if not shape.map_atomic(path):
            for name, sub in value.items():
                _subtree(shape, sub, (*path, name), node.child("f:" + name))
    elif isinstance(value, list):
        kind, keys = shape.list_type(path)
        if kind != "atomic":
            item_path = (*path, ITEM)
            for i, item in enumerate(value):
                _subtree(shape, item, item_path, node.child(_element(shape, path, kind, keys, item, i)))


def _remove(shape: _Shape, value: Any, remove: FieldSet, path: Path) -> Any:
    """``value`` without the owned paths of ``remove`` (each with everything under it)."""
    if isinstance(value, dict):
        if not value or (path and shape.map_atomic(path)):
            return value
        out: dict[str, Any] = {}
        for name, sub in value.items():
            node = remove.children.get("f:" + name)
            if node is None:
                out[name] = sub
            elif not node.member:
                out[name] = _remove(shape, sub, node, (*path, name)) if node.children else sub
        return out
    if isinstance(value, list) and value:
        kind, keys = shape.list_type(path)
        if kind == "atomic":
            return value
        item_path = (*path, ITEM)
        kept: list[Any] = []
        for i, item in enumerate(value):
            node = remove.children.get(_element(shape, path, kind, keys, item, i))
            if node is None:
                kept.append(item)
            elif not node.member:
                kept.append(_remove(shape, item, node, item_path) if node.children else item)
        return kept
    return value


def _with_declared_parents(shape: _Shape, node: FieldSet, path: Path) -> FieldSet:
    """The set plus every declared field that leads to an owned path (``EnsureNamedFieldsAreMembers``).

    Owning ``.spec.replicas`` then also means owning ``.spec``, so that removing what a manager
    owned removes a declared parent as a whole; a map key under additionalProperties does not count.
    """
    if not node.children:
        return node
    children: dict[str, FieldSet] = {}
    for element, child in node.children.items():
        sub = (*path, element[2:]) if element[0] == "f" else (*path, ITEM)
        grown = _with_declared_parents(shape, child, sub)
        if grown.children and not grown.member and element[0] == "f" and shape.declared(sub):
            grown = FieldSet(True, grown.children)
        children[element] = grown
    return FieldSet(node.member, children)


def _prune(shape: _Shape, merged: Obj, last: FieldSet, owned: FieldSet) -> Obj:
    """Remove what the applier owned before and no manager owns now (``owned`` includes its new set).

    structured-merge-diff's three steps: drop everything last applied; add back whatever someone
    owns; then remove only what was last applied and did not come back, so fields nobody owns that
    the applier never had (defaults, for instance) stay.
    """
    last_named = _with_declared_parents(shape, last, ())
    owned_named = _with_declared_parents(shape, owned, ())
    merged_set = _with_declared_parents(shape, _field_set(shape, merged, allow_duplicates=True), ())
    dropped = _remove(shape, merged, last_named, ())
    dropped_set = _with_declared_parents(shape, _field_set(shape, dropped, allow_duplicates=True), ())
    restored = _remove(shape, merged, merged_set.difference(dropped_set.union(owned_named)), ())
    restored_set = _with_declared_parents(shape, _field_set(shape, restored, allow_duplicates=True), ())
    result: Obj = _remove(shape, merged, merged_set.difference(restored_set).intersection(last_named), ())
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


@dataclass
class _Entry:
    ident: _Id
    api_version: str
    fields: FieldSet
    time: str | None
    #: the entry as it came in, reused when nothing about it changed
    raw: Mapping[str, Any] | None = None

    def encode(self) -> dict[str, Any]:
        if self.raw is not None:
            return _copy(dict(self.raw))  # type: ignore[no-any-return]
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
        try:
            fields = FieldSet.from_fields_v1(item.get("fieldsV1") or {})
        except ValueError as error:
            raise _DecodeError(str(error)) from None
        time = item.get("time")
        ident = _Id.of(str(item.get("manager") or ""), operation, api_version, str(item.get("subresource") or ""))
        managers[ident] = _Entry(ident, api_version, fields, time if isinstance(time, str) else None, item)
    return managers


def _decode_or_empty(raw: Any) -> Managers:
    try:
        return _decode(raw)
    except _DecodeError:
        return {}


def _is_reset(raw: Any) -> bool:
    """``managedFields: []`` or ``[{}]`` sent by a client: forget all ownership."""
    if not isinstance(raw, list):
        return False
    if not raw:
        return True
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
            managers[bucket] = _Entry(bucket, entry.api_version, managers.pop(first).fields, None)
        held = managers[bucket]
        managers[bucket] = _Entry(bucket, entry.api_version, entry.fields.union(held.fields), entry.time)
        del managers[ident]
        count -= 1


def _replace(entry: _Entry, fields: FieldSet) -> _Entry:
    return entry if fields is entry.fields else _Entry(entry.ident, entry.api_version, fields, entry.time)


def _drop_empty(managers: Managers) -> None:
    for ident in [i for i, e in managers.items() if e.fields.empty()]:
        del managers[ident]


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


def _update(
    shape: _Shape,
    old: Obj,
    new: Obj,
    managers: Managers,
    ident: _Id,
    api_version: str,
    keep: Callable[[FieldSet], FieldSet],
    now: str,
) -> Managers:
    """Ownership after ``ident`` wrote ``new`` over ``old`` without apply."""
    diff = _compare(shape, old, new)
    if diff.empty():
        return managers
    seen = diff.filtered(keep)
    taken = seen.added.union(seen.modified).union(seen.removed)
    result: Managers = {}
    for other, entry in managers.items():
        result[other] = _replace(entry, entry.fields.difference(taken)) if taken else entry
    _drop_empty(result)
    changed = keep(diff.added.union(diff.modified)).difference(_STRIPPED)
    if not changed.empty():
        previous = result.get(ident)
        fields = changed if previous is None else changed.union(previous.fields)
        result[ident] = _Entry(ident, api_version, fields, now)
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
) -> list[dict[str, Any]]:
    """The ``managedFields`` for ``new`` after ``manager`` wrote it by create, update or patch (operation Update).

    ``old`` is the stored object (None on create; an object without ``metadata.uid`` also counts as
    a create, so a caller may pass the empty object of a built-in kind); ``new`` is the object as
    the client sent it, before the server adds its own fields, and with the ``metadata.managedFields``
    the client sent: an absent or empty list keeps the stored ownership, ``[]`` or ``[{}]`` clears
    it, any other valid list replaces it (as kube allows). Writes through a subresource always keep
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
    shape = _Shape(types)
    ident = _Id.of(manager, UPDATE, api_version, subresource or "")
    before = _body(old) if old is not None else _empty_like(new)
    try:
        managers = _update(shape, before, _body(new), managers, ident, api_version, keep, now)
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
) -> Obj:
    """The object after ``manager`` applies ``config`` onto ``live`` (None: the apply creates it).

    The result carries the new ``metadata.managedFields`` (none when nobody owns anything) and, for
    a kind with a status subresource, keeps live's ``status`` on the main resource and only takes
    ``status`` through the status subresource. Raises :class:`Conflict` for fields other managers
    own with other values unless ``force``; :class:`BadRequest` for a configuration that carries
    ``managedFields`` or another apiVersion; :class:`ApiError` (500, as kube) for duplicate list
    keys and other values that do not fit the kind's list types. Inputs are never modified.
    """
    _check_config(config, api_version, live)
    shape = _Shape(types)
    keep = _ignored(subresource, has_status_subresource)
    ident = _Id.of(manager, APPLY, api_version, subresource or "")
    live_body = _body(live) if live is not None else _empty_like(config)
    managers = _decode_or_empty(dig(live, "metadata", "managedFields"))
    if live is not None and not managers:
        first = _Id.of(BEFORE_FIRST_APPLY, UPDATE, api_version, subresource or "")
        try:
            managers = _update(shape, _empty_like(live_body), live_body, {}, first, api_version, keep, now)
        except _TypedError as error:
            raise _typed_error("live", live_body, error) from None
    try:
        applied = keep(_field_set(shape, config, allow_duplicates=False))
    except _TypedError as error:
        raise _typed_error("patch", config, error) from None
    try:
        merged = _merge(shape, live_body, config, ())
        previous = managers.pop(ident, None)
        if previous is not None and not previous.fields.issubset(applied):
            owned = applied
            for entry in managers.values():
                owned = owned.union(entry.fields)
            merged = _prune(shape, merged, previous.fields, owned)
        diff = _compare(shape, live_body, merged).filtered(keep)
    except _TypedError as error:
        raise _typed_error("live", live_body, error) from None
    touched = diff.added.union(diff.modified)
    conflicts: dict[_Id, FieldSet] = {}
    if not touched.empty():
        for other, entry in managers.items():
            common = entry.fields.intersection(touched)
            if not common.empty():
                conflicts[other] = common
    if conflicts and not force:
        raise _conflict(conflicts)
    lost = touched.union(diff.removed)
    if not lost.empty():
        managers = {other: _replace(entry, entry.fields.difference(lost)) for other, entry in managers.items()}
        _drop_empty(managers)
    changed = not json_equal(live_body, merged)
    time = now if changed else (previous.time if previous is not None else None)
    mine = applied.difference(_STRIPPED)
    if not mine.empty():
        managers[ident] = _Entry(ident, api_version, mine, time)
    _cap(managers)
    result = _restrict(live_body, merged, subresource, has_status_subresource) if changed else _copy(live_body)
    entries = _encode(managers)
    meta = result.setdefault("metadata", {})
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)
    return result


def _restrict(live: Obj, merged: Obj, subresource: str | None, has_status_subresource: bool) -> Obj:
    """What the write may change: only ``status`` through the status subresource, all but it otherwise."""
    if subresource == "status":
        result: Obj = _copy(live)
        if "status" in merged:
            result["status"] = merged["status"]
        else:
            result.pop("status", None)
        return result
    if has_status_subresource:
        if "status" in live:
            merged["status"] = _copy(live["status"])
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


def _typed_error(what: str, obj: Obj, error: _TypedError) -> ApiError:
    """kube's message when a value does not fit the kind's types (a 500 there too)."""
    where = f"{dig(obj, 'metadata', 'namespace') or ''}/{dig(obj, 'metadata', 'name') or ''}; {_gvk(obj)}"
    prefix = path_string(error.path)
    detail = f"{prefix}: {error.message}" if prefix else error.message
    return ApiError.new(f"failed to create typed {what} object ({where}): {detail}")


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
