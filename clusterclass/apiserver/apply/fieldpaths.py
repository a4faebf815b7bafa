"""Sets of field paths, the unit of server-side apply ownership, in kube-apiserver's ``FieldsV1`` form.

A manager in ``metadata.managedFields`` owns a *set of paths*. kube-apiserver (structured-merge-diff)
writes that set as a trie of JSON objects, ``fieldsV1``, whose keys are path elements:

- ``f:<name>`` a field of a map (``f:spec``, ``f:replicas``, ``f:app`` inside ``labels``);
- ``k:{"name":"a","port":80}`` an element of a list-map, its key fields in name order, as compact
  JSON with Go's HTML escaping (``"<"`` is written ``"\\u003c"``);
- ``v:"finalizer"`` / ``v:10`` an element of a set list, by its JSON value.

A path is owned ("a member") when its node is empty (``"f:replicas": {}``) or, for a node that also
has owned descendants, when it carries ``".": {}``. Nodes that only lead to owned descendants are
not owned themselves: ``"f:spec": {"f:replicas": {}}`` owns ``.spec.replicas`` but not ``.spec``.

:class:`FieldSet` is that trie in memory, with the set algebra the field manager needs (union,
difference, intersection, the recursive difference that filters out ignored subtrees) and kube's
iteration order, which decides the order of conflicts in an error message. Path elements are kept
as their ``fieldsV1`` strings, so decoding and encoding are a walk; the helpers here build those
strings from values. The object walks that produce and consume these sets live in
:mod:`clusterclass.apiserver.apply.fieldmanager`.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any

from clusterclass.api.objects import is_int
from clusterclass.kube.gotext import go_float, go_json, go_quote

#: the fieldsV1 key that marks a node with children as owned itself
SELF = "."


class FieldSet:
    """A set of field paths as a trie; a node is owned when ``member`` is set.

    Sets built by the field manager are treated as values: the algebra returns new sets and may
    share unchanged subtrees between them, so a set is never modified after it is built.
    """

    __slots__ = ("children", "member")

    def __init__(self, member: bool = False, children: dict[str, FieldSet] | None = None) -> None:
        self.member = member
        self.children: dict[str, FieldSet] = children if children is not None else {}

    # -- building -------------------------------------------------------------------------------

    def child(self, element: str) -> FieldSet:
        """The node under ``element``, created when missing (only while building a set)."""
        node = self.children.get(element)
        if node is None or node is LEAF:
            node = self.children[element] = FieldSet(node is LEAF)
        return node

    def insert(self, path: Sequence[str]) -> None:
        """Own ``path`` (only while building a set)."""
        node = self
        for element in path:
            node = node.child(element)
        node.member = True

    @classmethod
    def of(cls, *paths: Sequence[str]) -> FieldSet:
        result = cls()
        for path in paths:
            result.insert(path)
        return result

    # -- fieldsV1 -------------------------------------------------------------------------------

    @classmethod
    def from_fields_v1(cls, raw: Any) -> FieldSet:
        """Decode ``fieldsV1``; ValueError when it is not a trie of JSON objects with known elements."""
        if not isinstance(raw, Mapping):
            raise ValueError("fieldsV1 must be a JSON object")
        return _decode(raw, root=True)

    def to_fields_v1(self) -> dict[str, Any]:
        """Encode as ``fieldsV1``, keys in kube's order (``.`` first, then fields, keys, values)."""
        return _encode(self, root=True)

    # -- queries --------------------------------------------------------------------------------

    def empty(self) -> bool:
        return not self.member and not self.children

    def __bool__(self) -> bool:
        return not self.empty()

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FieldSet):
            return NotImplemented
        return self.member == other.member and self.children == other.children

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"FieldSet({self.to_fields_v1()!r})"

    def has(self, path: Sequence[str]) -> bool:
        node: FieldSet | None = self
        for element in path:
            node = node.children.get(element) if node is not None else None
        return node is not None and node.member and bool(path)

    def issubset(self, other: FieldSet) -> bool:
        """Whether every owned path of this set is owned in ``other``."""
        if self.member and not other.member:
            return False
        for element, node in self.children.items():
            theirs = other.children.get(element)
            if theirs is None:
                if not node.empty():
                    return False
            elif not node.issubset(theirs):
                return False
        return True

    def paths(self) -> Iterator[tuple[str, ...]]:
        """Every owned path in kube's order: a node's owned elements first, then its subtrees, each sorted."""
        yield from _iterate(self, ())

    # -- algebra --------------------------------------------------------------------------------

    def union(self, other: FieldSet) -> FieldSet:
        if other.empty():
            return self
        if self.empty():
            return other
        children = dict(self.children)
        for element, node in other.children.items():
            mine = children.get(element)
            children[element] = node if mine is None else mine.union(node)
        return FieldSet(self.member or other.member, children)

    def difference(self, other: FieldSet) -> FieldSet:
        """The paths owned here and not in ``other`` (exact paths: descendants are kept)."""
        if other.empty() or self.empty():
            return self
        children: dict[str, FieldSet] = {}
        for element, node in self.children.items():
            theirs = other.children.get(element)
            kept = node if theirs is None else node.difference(theirs)
            if not kept.empty():
                children[element] = kept
        return FieldSet(self.member and not other.member, children)

    def intersection(self, other: FieldSet) -> FieldSet:
        children: dict[str, FieldSet] = {}
        small, large = (self, other) if len(self.children) <= len(other.children) else (other, self)
        for element, node in small.children.items():
            theirs = large.children.get(element)
            if theirs is not None:
                common = node.intersection(theirs)
                if not common.empty():
                    children[element] = common
        return FieldSet(self.member and other.member, children)

    def without(self, other: FieldSet) -> FieldSet:
        """The paths owned here that are neither owned in ``other`` nor below a path owned in it.

        structured-merge-diff's recursive difference, used to leave out ignored subtrees (``status``
        on the main resource of a kind with a status subresource, for instance).
        """
        if other.empty() or self.empty():
            return self
        children: dict[str, FieldSet] = {}
        for element, node in self.children.items():
            theirs = other.children.get(element)
            if theirs is None:
                children[element] = node
            elif not theirs.member:
                kept = node.without(theirs)
                if not kept.empty():
                    children[element] = kept
        return FieldSet(self.member and not other.member, children)

    def only(self, elements: Iterable[str]) -> FieldSet:
        """This set restricted to the top-level ``elements`` (the root is never owned)."""
        children = {e: self.children[e] for e in elements if e in self.children}
        return FieldSet(False, children)


#: an owned path with nothing under it, shared by every set that has one (never modified:
#: :meth:`FieldSet.child` replaces it before building under it)
LEAF = FieldSet(True)
_NOTHING = FieldSet()


def _decode(raw: Mapping[str, Any], *, root: bool = False) -> FieldSet:
    if not raw and not root:
        return LEAF
    node = FieldSet(member=not root and SELF in raw)
    for element, sub in raw.items():
        if element == SELF:
            continue
        if not isinstance(sub, Mapping) or len(element) < 2 or element[1] != ":" or element[0] not in "fkvi":
            raise ValueError(f"invalid fieldsV1 element {element!r}")
        node.children[element] = _decode(sub)
    return node


def _encode(node: FieldSet, *, root: bool = False) -> dict[str, Any]:
    out: dict[str, Any] = {}
    if node.member and node.children and not root:
        out[SELF] = {}
    for element in sorted(node.children, key=element_order):
        out[element] = _encode(node.children[element])
    return out


def _iterate(node: FieldSet, prefix: tuple[str, ...]) -> Iterator[tuple[str, ...]]:
    ordered = sorted(node.children, key=element_order)
    for element in ordered:
        if node.children[element].member:
            yield (*prefix, element)
    for element in ordered:
        child = node.children[element]
        if child.children:
            yield from _iterate(child, (*prefix, element))


# -- the same operations on fieldsV1 as stored, without decoding it -----------------------------------
#
# A write usually touches a handful of paths while each entry owns hundreds: these walk only the
# small side and leave the stored fieldsV1 as it is wherever nothing changes.


def raw_owns_any(raw: Any) -> bool:
    """Whether the fieldsV1 ``raw`` owns any path."""
    return isinstance(raw, dict) and any(k != "." for k in raw)


def raw_intersection(raw: Any, other: FieldSet) -> FieldSet:
    """``other`` ∩ the set ``raw`` (fieldsV1) encodes, walking only ``other``."""
    children: dict[str, FieldSet] = {}
    if isinstance(raw, dict):
        for element, node in other.children.items():
            sub = raw.get(element)
            if isinstance(sub, dict):
                common = raw_intersection(sub, node) if node.children else _NOTHING
                if node.member and (not sub or "." in sub):
                    common = FieldSet(True, common.children)
                if not common.empty():
                    children[element] = common
    return FieldSet(False, children)


def raw_difference(raw: dict[str, Any], lost: FieldSet) -> dict[str, Any]:
    """The fieldsV1 ``raw`` without the paths of ``lost``, in fieldsV1's own form; untouched parts are shared."""
    out = dict(raw)
    for element, node in lost.children.items():
        sub = raw.get(element)
        if not isinstance(sub, dict):
            continue
        owned = not sub or "." in sub
        if node.member and owned:
            sub = {k: v for k, v in sub.items() if k != "."}
            owned = False
        if node.children and sub:
            sub = raw_difference(sub, node)
        children = any(k != "." for k in sub)
        if children:
            out[element] = sub
        elif owned:
            out[element] = {}
        else:
            del out[element]
    return out


def raw_within(raw: Any, fields: FieldSet) -> bool:
    """Whether every path ``raw`` (fieldsV1) owns is owned in ``fields``, without decoding it."""
    if not isinstance(raw, dict):
        return False
    for element, sub in raw.items():
        if element == ".":
            continue
        node = fields.children.get(element)
        if node is None or not isinstance(sub, dict):
            return False
        if (not sub or "." in sub) and not node.member:
            return False
        if sub and not raw_within(sub, node):
            return False
    return True


def raw_equal(raw: Any, fields: FieldSet) -> bool:
    """Whether ``raw`` (fieldsV1) encodes exactly ``fields``."""
    if not isinstance(raw, dict):
        return False
    count = 0
    for element, sub in raw.items():
        if element == ".":
            continue
        count += 1
        node = fields.children.get(element)
        if node is None or not isinstance(sub, dict) or (not sub or "." in sub) != node.member:
            return False
        if not raw_equal(sub, node):
            return False
    return count == len(fields.children)


# -- path elements ------------------------------------------------------------------------------


def key_element(key: Mapping[str, Any]) -> str:
    """The element of a list-map entry whose key fields are ``key`` (written in name order)."""
    if len(key) == 1:
        for name, value in key.items():
            return "k:{" + go_json(name) + ":" + go_json(value) + "}"
    return "k:{" + ",".join(go_json(name) + ":" + go_json(key[name]) for name in sorted(key)) + "}"


def value_element(value: Any) -> str:
    """The element of a set entry."""
    return "v:" + go_json(value)


@lru_cache(maxsize=8192)
def element_order(element: str) -> tuple[Any, ...]:
    """Sort key of a path element as structured-merge-diff orders them.

    Fields come first by name, then list-map keys (field by field, values compared as below), then
    set values: numbers (ints and floats numerically), strings, booleans, lists, maps, null.
    """
    kind, body = element[0], element[2:]
    if kind == "f":
        return (0, body)
    try:
        decoded = json.loads(body)
    except ValueError:
        return (4, body)
    if kind == "k" and isinstance(decoded, dict):
        return (1, tuple((name, _value_order(decoded[name])) for name in sorted(decoded)))
    if kind == "v":
        return (2, _value_order(decoded))
    if kind == "i" and is_int(decoded):
        return (3, decoded)
    return (4, body)


def _value_order(value: Any) -> tuple[Any, ...]:
    if isinstance(value, bool):
        return (2, value)
    if isinstance(value, int | float):
        return (0, value)
    if isinstance(value, str):
        return (1, value)
    if isinstance(value, list):
        return (3, tuple(_value_order(v) for v in value))
    if isinstance(value, dict):
        return (4, tuple((k, _value_order(value[k])) for k in sorted(value)))
    return (5,)


def path_string(path: Sequence[str]) -> str:
    """A path as kube prints it in conflicts: ``.spec.items[name="a",port=80].value``, ``.x[="v"]``."""
    parts: list[str] = []
    for element in path:
        kind, body = element[0], element[2:]
        if kind == "f":
            parts.append("." + body)
        elif kind == "k":
            key = json.loads(body)
            parts.append("[" + ",".join(f"{name}={go_value_string(key[name])}" for name in sorted(key)) + "]")
        elif kind == "v":
            parts.append(f"[={go_value_string(json.loads(body))}]")
        else:
            parts.append(f"[{body}]")
    return "".join(parts)


# -- structured-merge-diff's printing of values (JSON as Go writes it is in gotext) -----------------


def go_value_string(value: Any) -> str:
    """How structured-merge-diff prints a key or set value in a path: strings quoted, numbers as ``%v``."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, list):
        return "[" + ",".join(go_value_string(v) for v in value) + "]"
    if isinstance(value, Mapping):
        return "".join(f"{k}={go_value_string(v)}" for k, v in value.items())
    return str(value)
