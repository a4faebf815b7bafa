"""The parsed form of a CEL expression, and the static analyses we run on it.

The CEL backend compiles an expression and can serialise the result as the standard
``cel.expr.CheckedExpr`` protocol buffer. :func:`decode` reads that buffer (with a small
wire-format reader of our own: the backend ships no Python message classes and the schema is a
dozen fields) into the frozen node classes below. Macros (``all``, ``exists``, ``map``,
``filter``, ``cel.bind``...) already arrive expanded into :class:`Comprehension` nodes.

Two analyses use the tree:

- :func:`identifiers` lists the variables an expression reads, so a rule that reads ``oldSelf``
  is known to be a transition rule;
- :func:`selected_fields` yields every ``self.a.b`` chain, so a field the schema does not declare
  is reported as ``undefined field`` the way Kubernetes' type-checked compile does.

The cost estimate that bounds evaluation lives in :mod:`celcost`.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any


class DecodeError(Exception):
    """The serialised expression is not what the CEL protocol buffers describe."""


@dataclass(frozen=True)
class Const:
    value: Any


@dataclass(frozen=True)
class Ident:
    name: str


@dataclass(frozen=True)
class Select:
    operand: Node
    field: str
    test_only: bool


@dataclass(frozen=True)
class Call:
    function: str
    target: Node | None
    args: tuple[Node, ...]


@dataclass(frozen=True)
class ListLit:
    elements: tuple[Node, ...]


@dataclass(frozen=True)
class MapLit:
    entries: tuple[tuple[Node, Node], ...]


@dataclass(frozen=True)
class Comprehension:
    iter_var: str
    iter_var2: str
    iter_range: Node
    accu_var: str
    accu_init: Node
    loop_condition: Node
    loop_step: Node
    result: Node


Node = Const | Ident | Select | Call | ListLit | MapLit | Comprehension

_MAX_DEPTH = 500


def decode(serialized: bytes) -> Node:
    """The expression tree inside a serialised ``google.protobuf.Any`` of a Checked/ParsedExpr."""
    payload = b""
    type_url = ""
    for number, value in _fields(serialized):
        if number == 1 and isinstance(value, bytes):
            type_url = value.decode("utf-8", "replace")
        elif number == 2 and isinstance(value, bytes):
            payload = value
    expr_field = 4 if type_url.endswith("CheckedExpr") else 2
    for number, value in _fields(payload):
        if number == expr_field and isinstance(value, bytes):
            return _expr(value, 0)
    raise DecodeError(f"no expression in {type_url or 'the serialised message'}")


def _expr(buf: bytes, depth: int) -> Node:
    if depth > _MAX_DEPTH:
        raise DecodeError("expression nested too deeply")
    for number, value in _fields(buf):
        if not isinstance(value, bytes):
            continue
        if number == 3:
            return Const(_constant(value))
        if number == 4:
            return Ident(_string(value, 1))
        if number == 5:
            return _select(value, depth)
        if number == 6:
            return _call(value, depth)
        if number == 7:
            return ListLit(tuple(_expr(v, depth + 1) for n, v in _fields(value) if n == 1 and isinstance(v, bytes)))
        if number == 8:
            return _struct(value, depth)
        if number == 9:
            return _comprehension(value, depth)
    return Const(None)


def _select(buf: bytes, depth: int) -> Select:
    operand: Node = Const(None)
    field, test_only = "", False
    for number, value in _fields(buf):
        if number == 1 and isinstance(value, bytes):
            operand = _expr(value, depth + 1)
        elif number == 2 and isinstance(value, bytes):
            field = value.decode("utf-8", "replace")
        elif number == 3 and isinstance(value, int):
            test_only = bool(value)
    return Select(operand, field, test_only)


def _call(buf: bytes, depth: int) -> Call:
    target: Node | None = None
    function = ""
    args: list[Node] = []
    for number, value in _fields(buf):
        if not isinstance(value, bytes):
            continue
        if number == 1:
            target = _expr(value, depth + 1)
        elif number == 2:
            function = value.decode("utf-8", "replace")
        elif number == 3:
            args.append(_expr(value, depth + 1))
    return Call(function, target, tuple(args))


def _struct(buf: bytes, depth: int) -> MapLit:
    entries: list[tuple[Node, Node]] = []
    for number, entry in _fields(buf):
        if number != 2 or not isinstance(entry, bytes):
            continue
        key: Node = Const(None)
        val: Node = Const(None)
        for n, v in _fields(entry):
            if n == 2 and isinstance(v, bytes):
                key = Const(v.decode("utf-8", "replace"))
            elif n == 3 and isinstance(v, bytes):
                key = _expr(v, depth + 1)
            elif n == 4 and isinstance(v, bytes):
                val = _expr(v, depth + 1)
        entries.append((key, val))
    return MapLit(tuple(entries))


def _comprehension(buf: bytes, depth: int) -> Comprehension:
    names = {1: "", 3: "", 8: ""}
    nodes: dict[int, Node] = {}
    for number, value in _fields(buf):
        if not isinstance(value, bytes):
            continue
        if number in names:
            names[number] = value.decode("utf-8", "replace")
        elif number in (2, 4, 5, 6, 7):
            nodes[number] = _expr(value, depth + 1)
    empty = Const(None)
    return Comprehension(
        iter_var=names[1],
        iter_var2=names[8],
        iter_range=nodes.get(2, empty),
        accu_var=names[3],
        accu_init=nodes.get(4, empty),
        loop_condition=nodes.get(5, Const(True)),
        loop_step=nodes.get(6, empty),
        result=nodes.get(7, empty),
    )


def _constant(buf: bytes) -> Any:
    for number, value in _fields(buf):
        if number == 1:
            return None
        if number == 2 and isinstance(value, int):
            return bool(value)
        if number == 3 and isinstance(value, int):
            return value - (1 << 64) if value >= 1 << 63 else value
        if number == 4 and isinstance(value, int):
            return value
        if number == 5 and isinstance(value, int):
            return float(struct.unpack("<d", value.to_bytes(8, "little"))[0])
        if number == 6 and isinstance(value, bytes):
            return value.decode("utf-8", "replace")
        if number == 7 and isinstance(value, bytes):
            return value
    return None


def _string(buf: bytes, wanted: int) -> str:
    for number, value in _fields(buf):
        if number == wanted and isinstance(value, bytes):
            return value.decode("utf-8", "replace")
    return ""


def _fields(buf: bytes) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) pairs of one protocol buffer message: ints for varint/fixed, bytes for LEN."""
    pos = 0
    while pos < len(buf):
        tag, pos = _varint(buf, pos)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            value, pos = _varint(buf, pos)
            yield number, value
        elif wire == 1:
            if pos + 8 > len(buf):
                raise DecodeError("truncated fixed64")
            yield number, int.from_bytes(buf[pos : pos + 8], "little")
            pos += 8
        elif wire == 2:
            length, pos = _varint(buf, pos)
            if pos + length > len(buf):
                raise DecodeError("truncated field")
            yield number, buf[pos : pos + length]
            pos += length
        elif wire == 5:
            if pos + 4 > len(buf):
                raise DecodeError("truncated fixed32")
            yield number, int.from_bytes(buf[pos : pos + 4], "little")
            pos += 4
        else:
            raise DecodeError(f"unsupported wire type {wire}")


def _varint(buf: bytes, pos: int) -> tuple[int, int]:
    result, shift = 0, 0
    while True:
        if pos >= len(buf) or shift > 63:
            raise DecodeError("bad varint")
        byte = buf[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def children(node: Node) -> tuple[Node, ...]:
    if isinstance(node, Select):
        return (node.operand,)
    if isinstance(node, Call):
        return ((node.target,) if node.target is not None else ()) + node.args
    if isinstance(node, ListLit):
        return node.elements
    if isinstance(node, MapLit):
        return tuple(part for entry in node.entries for part in entry)
    if isinstance(node, Comprehension):
        return (node.iter_range, node.accu_init, node.loop_condition, node.loop_step, node.result)
    return ()


def walk(node: Node) -> Iterator[Node]:
    stack = [node]
    while stack:
        current = stack.pop()
        yield current
        stack.extend(children(current))


def identifiers(node: Node) -> frozenset[str]:
    """Names of the identifiers the expression reads (comprehension variables included)."""
    return frozenset(n.name for n in walk(node) if isinstance(n, Ident))


def selected_fields(node: Node, root: str) -> Iterator[tuple[str, ...]]:
    """Every field chain selected from the variable ``root``: ``self.a.b`` yields ``("a", "b")``.

    ``has(self.a.b)`` counts too. Chains through an index (``self.a[0].b``) stop at the index.
    """
    for current in walk(node):
        if not isinstance(current, Select):
            continue
        chain: list[str] = [current.field]
        operand = current.operand
        while isinstance(operand, Select):
            chain.append(operand.field)
            operand = operand.operand
        if isinstance(operand, Ident) and operand.name == root:
            yield tuple(reversed(chain))
