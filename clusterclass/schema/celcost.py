"""An upper bound on the work a CEL expression can do on given inputs, computed before running it.

CEL has no unbounded loops, but a rule can still be made to run for hours: nested ``all`` over a
large list is polynomial with the nesting depth as exponent, and ``cel.bind`` or ``replace`` can
double a string at each step. Kubernetes guards against this with a static cost estimate from the
schema's ``maxItems``/``maxLength`` and a runtime cost counter; the CEL backend we use exposes
neither (only a fixed budget of 10,000 comprehension iterations per evaluation), so we estimate
the cost ourselves, with the *actual* inputs, and refuse to run a rule whose bound is too high.

Each expression gets a :class:`Bound` for its result: ``length`` bounds the length of the value
(string, list or map), ``total`` its total size (elements plus characters), and nested bounds
cover its list items, map values and map keys. Costs count elementary steps: one per node, plus
the length of strings and lists an operation has to walk or copy. The bound is deliberately
coarse but safe: operations we do not model are charged the size of all their arguments,
comprehensions are charged their iteration count times the cost of one iteration with the
accumulator at its largest, and the growing accumulator of ``map``/``filter`` is charged as an
append rather than a copy (the backend appends in place). All numbers saturate at :data:`CAP`,
so even an exponential bound stays cheap to compute.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from clusterclass.schema.celast import Call, Comprehension, Const, Ident, ListLit, MapLit, Node, Select

CAP = 10**15
ITERATION_BUDGET = 10_000  # the backend stops any evaluation after this many comprehension iterations
_NUMBER_TEXT = 32  # longest text of a number, timestamp or duration
_MAX_DEPTH = 400


@dataclass(frozen=True)
class Bound:
    """Bounds of a value: its ``length`` (string, list or map), its ``total`` size, and the bounds of
    its list items / map values (``item``) and map keys (``key``) when known."""

    length: int
    total: int
    item: Bound | None = None
    key: Bound | None = None

    def union(self, other: Bound) -> Bound:
        return Bound(
            max(self.length, other.length),
            max(self.total, other.total),
            _union(self.item, other.item),
            _union(self.key, other.key),
        )

    def element(self) -> Bound:
        """The bound of anything selected or indexed out of this value."""
        return self.item if self.item is not None else Bound(self.length, self.total)

    def member(self) -> Bound:
        """The bound of a comprehension variable iterating over this value (list item or map key)."""
        if self.item is None and self.key is None:
            return Bound(self.length, self.total)
        return _union(self.item, self.key) or SCALAR


def _union(a: Bound | None, b: Bound | None) -> Bound | None:
    if a is None:
        return b
    if b is None:
        return a
    return a.union(b)


SCALAR = Bound(0, 1)
_UNKNOWN = Bound(CAP, CAP)


def _cap(n: int) -> int:
    return n if n < CAP else CAP


def measure(value: Any, depth: int = 0) -> Bound:
    """The bound of a concrete value."""
    if depth > _MAX_DEPTH:
        return _UNKNOWN
    if isinstance(value, str | bytes):
        return Bound(len(value), len(value) + 1)
    if isinstance(value, list):
        items = [measure(v, depth + 1) for v in value]
        return Bound(len(value), _cap(1 + sum(b.total for b in items)), _union_all(items))
    if isinstance(value, dict):
        keys = [measure(k, depth + 1) for k in value]
        values = [measure(v, depth + 1) for v in value.values()]
        total = 1 + sum(b.total for b in keys) + sum(b.total for b in values)
        return Bound(len(value), _cap(total), _union_all(values), _union_all(keys))
    return SCALAR


def _union_all(bounds: list[Bound]) -> Bound | None:
    result: Bound | None = None
    for bound in bounds:
        result = _union(result, bound)
    return result


def estimate(node: Node, variables: Mapping[str, Bound]) -> int:
    """An upper bound on the cost of evaluating ``node`` with the given variable bounds."""
    cost, _ = _Estimator().estimate(node, dict(variables), 0)
    return cost


class _Estimator:
    def __init__(self) -> None:
        self.appendable: Counter[str] = Counter()

    def estimate(self, node: Node, env: dict[str, Bound], depth: int) -> tuple[int, Bound]:
        if depth > _MAX_DEPTH:
            return CAP, Bound(CAP, CAP)
        if isinstance(node, Const):
            if isinstance(node.value, str | bytes):
                return 1, Bound(len(node.value), len(node.value) + 1)
            return 1, SCALAR
        if isinstance(node, Ident):
            return 1, env.get(node.name, SCALAR)
        if isinstance(node, Select):
            cost, bound = self.estimate(node.operand, env, depth + 1)
            return _cap(cost + 1), SCALAR if node.test_only else bound.element()
        if isinstance(node, ListLit | MapLit):
            return self.literal(node, env, depth)
        if isinstance(node, Comprehension):
            return self.comprehension(node, env, depth)
        return self.call(node, env, depth)

    def literal(self, node: ListLit | MapLit, env: dict[str, Bound], depth: int) -> tuple[int, Bound]:
        cost, total = 1, 1
        keys: list[Bound] = []
        values: list[Bound] = []
        pairs: list[tuple[Node | None, Node]] = (
            [(None, e) for e in node.elements] if isinstance(node, ListLit) else list(node.entries)
        )
        for key, value in pairs:
            if key is not None:
                c, b = self.estimate(key, env, depth + 1)
                cost, total = cost + c, total + b.total
                keys.append(b)
            c, b = self.estimate(value, env, depth + 1)
            cost, total = cost + c, total + b.total
            values.append(b)
        return _cap(cost), Bound(len(pairs), _cap(total), _union_all(values), _union_all(keys))

    def comprehension(self, node: Comprehension, env: dict[str, Bound], depth: int) -> tuple[int, Bound]:
        range_cost, range_bound = self.estimate(node.iter_range, env, depth + 1)
        iterations = min(range_bound.length, ITERATION_BUDGET)
        init_cost, first = self.estimate(node.accu_init, env, depth + 1)
        element = range_bound.member()
        inner = dict(env)
        for name in (node.iter_var, node.iter_var2):
            if name:
                inner[name] = element
        inner[node.accu_var] = first
        self.appendable[node.accu_var] += 1
        _, after_one = self.estimate(node.loop_step, inner, depth + 1)
        grown = Bound(
            _cap(first.length + iterations * max(0, after_one.length - first.length)),
            _cap(first.total + iterations * max(0, after_one.total - first.total)),
            after_one.item,
            after_one.key,
        )
        inner[node.accu_var] = grown.union(after_one)
        condition_cost, _ = self.estimate(node.loop_condition, inner, depth + 1)
        step_cost, _ = self.estimate(node.loop_step, inner, depth + 1)
        self.appendable[node.accu_var] -= 1
        result_cost, result = self.estimate(node.result, inner, depth + 1)
        cost = range_cost + init_cost + iterations * (condition_cost + step_cost + 1) + result_cost
        return _cap(cost), result

    def call(self, node: Call, env: dict[str, Bound], depth: int) -> tuple[int, Bound]:
        operands = ((node.target,) if node.target is not None else ()) + node.args
        costs: list[int] = []
        bounds: list[Bound] = []
        for operand in operands:
            c, b = self.estimate(operand, env, depth + 1)
            costs.append(c)
            bounds.append(b)
        work, result = self.operation(node, operands, bounds)
        return _cap(sum(costs) + work + 1), result

    def operation(self, node: Call, operands: tuple[Node, ...], b: list[Bound]) -> tuple[int, Bound]:
        """The work of the call itself and the bound of its result, given its operands' bounds."""
        fn = node.function
        a = b[0] if b else SCALAR
        second = b[1] if len(b) > 1 else SCALAR
        if fn == "_+_" and len(b) == 2:
            accumulating = isinstance(operands[0], Ident) and self.appendable[operands[0].name] > 0
            work = second.total if accumulating else a.total + second.total
            joined = Bound(_cap(a.length + second.length), _cap(a.total + second.total))
            return work, Bound(joined.length, joined.total, _union(a.item, second.item), _union(a.key, second.key))
        if fn in _SCALAR_RESULT:
            return 1 + max((x.length for x in b), default=0), SCALAR
        if fn in ("_==_", "_!=_"):
            return min(a.total, second.total), SCALAR
        if fn in ("_<_", "_<=_", "_>_", "_>=_"):
            return min(a.length, second.length), SCALAR
        if fn in ("_?_:_",):
            return 1, b[1].union(b[2]) if len(b) == 3 else a
        if fn in _ELEMENT_OF_OPERAND:
            return 1 + second.length, a.element()
        if fn in _SAME_AS_OPERAND:
            return 1, a
        if fn == "orValue" and len(b) == 2:
            return 1, a.union(second)
        if fn in ("@in",):
            return a.total + second.total, SCALAR
        if fn in _LINEAR_TESTS:
            return sum(x.length for x in b), SCALAR
        if fn in ("string", "bytes", "base64.encode", "base64.decode", "strings.quote", "quote"):
            size = _cap(2 * a.total + _NUMBER_TEXT)
            return a.total + 1, Bound(size, size + 1)
        if fn in _CASE_AND_TRIM:
            return a.length, a
        if fn == "replace" and len(b) >= 3:
            size = _cap(a.length * (b[2].length + 1) + b[2].length)
            return size + a.length, Bound(size, size + 1)
        if fn == "split":
            return a.length, Bound(a.length + 1, _cap(2 * a.length + 2), Bound(a.length, a.length + 1))
        if fn in ("join", "format"):
            size = _cap(a.total + second.total * _NUMBER_TEXT + a.length * second.length)
            return size, Bound(size, size + 1)
        total = _cap(sum(x.total for x in b))
        return total, Bound(_cap(sum(x.length for x in b)), total, _union_all([x.element() for x in b]))


# Functions with a scalar result whose work is at most linear in the length of their operands.
_SCALAR_RESULT = frozenset(
    {
        "_&&_",
        "_||_",
        "!_",
        "-_",
        "_-_",
        "_*_",
        "_/_",
        "_%_",
        "@not_strictly_false",
        "not_strictly_false",
        "size",
        "int",
        "uint",
        "double",
        "bool",
        "type",
        "duration",
        "timestamp",
        "hasValue",
        "charAt",
        "getFullYear",
        "getMonth",
        "getDate",
        "getDayOfMonth",
        "getDayOfWeek",
        "getDayOfYear",
        "getHours",
        "getMinutes",
        "getSeconds",
        "getMilliseconds",
        "math.ceil",
        "math.floor",
        "math.round",
        "math.trunc",
        "math.abs",
        "math.sign",
        "math.isNaN",
        "math.isInf",
        "math.isFinite",
    }
)
_ELEMENT_OF_OPERAND = frozenset({"_[_]", "_[?_]", "_?._"})
_SAME_AS_OPERAND = frozenset({"dyn", "value", "optional.of", "optional.ofNonZeroValue"})
_LINEAR_TESTS = frozenset(
    {"contains", "startsWith", "endsWith", "matches", "indexOf", "lastIndexOf", "math.greatest", "math.least"}
)
_CASE_AND_TRIM = frozenset({"lowerAscii", "upperAscii", "trim", "reverse", "substring"})
