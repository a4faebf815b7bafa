"""Hypothesis strategies for custom resources generated from a CRD version's ``openAPIV3Schema``.

:func:`objects` draws one object of a kind in one version: ``apiVersion``, ``kind`` and a small ``metadata``
(always ``name`` and ``namespace``; ``labels`` and ``annotations`` sometimes), then ``spec`` (and sometimes
``status``) from the schema. What the generator honours, node by node:

- ``type`` (object, array, string, integer, number, boolean), ``required``, ``minProperties``, ``enum``,
  ``minimum``/``maximum`` (and the ``int32``/``int64`` ranges), ``minLength``/``maxLength`` (strings stay
  short), ``minItems``/``maxItems`` (at most :data:`LIST_CAP` items beyond the minimum);
- ``x-kubernetes-list-type: map`` (items unique by their ``x-kubernetes-list-map-keys``), ``set`` (unique items),
  ``x-kubernetes-int-or-string``, ``x-kubernetes-preserve-unknown-fields`` (a small JSON value),
  ``format: date-time`` (RFC 3339 in seconds) and ``format: byte`` (base64);
- ``pattern``: a value from a vocabulary (:data:`VOCABULARY`) that matches it, else ``hypothesis``'s
  ``from_regex``; a pattern nothing matches leaves an optional field out;
- the CEL rules the Cluster API CRDs use: unique ``name`` (``self.all(x, self.exists_one(y, x.name == y.name))``),
  a string not in a list (``!(self in [...])``), ``self.matches(...)`` and "exactly one of two fields"
  (``[has(self.a),has(self.b)].filter(x,x==true).size() == 1``);
- by field name, for strings without a pattern: ``name``/``namespace``/``apiVersion``/``kind``/``version`` get
  meaningful values, and the Duration fields (``*Timeout``, ``timeout``, ``ttl``, ``*Period``) Go durations in
  whole seconds, in several spellings (``90s``, ``1m30s``, ``5m``);
- by shape: an ``ObjectReference`` (``apiVersion`` … ``fieldPath``) gets ``{apiVersion, kind, name, namespace}``
  with a Cluster API provider kind and the object's own namespace (never ``uid``, ``resourceVersion`` or
  ``fieldPath``), a contract reference (``{apiGroup, kind, name}``) and a template reference
  (``{apiVersion, kind, name}``) the same targets.

Size is bounded: an object picks a random subset of its optional properties (the ``hot`` ones — those the
conversion touches — three times as likely), at most a few per object, and ``spec`` and ``status`` each have a
budget of values after which only required fields are generated. Each object is also aimed at up to
:data:`TARGETS` hot paths its schema has: every property (and a list item) on the way there is generated, so
deep fields the conversion moves are reached as often as shallow ones. :class:`Hints` adds per-path overrides
(values, skipped fields) — the equivalent of upstream's fuzzer funcs.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from hypothesis import strategies as st

Obj = dict[str, Any]

#: at most this many list items beyond ``minItems`` (and at most this many map entries)
LIST_CAP: Final = 2
#: at most this many optional properties per object (more near the top of the object)
PROPERTY_CAP: Final = 3
TOP_PROPERTY_CAP: Final = 5
#: how many values ``spec`` and ``status`` may hold before only required fields are generated
SPEC_BUDGET: Final = 45
STATUS_BUDGET: Final = 25
#: a hot property is this many times as likely to be picked as another one
HOT_WEIGHT: Final = 3
#: each object is made to reach up to this many hot paths (chosen at random): the properties on the way are
#: generated whatever the budget says
TARGETS: Final = 3

INT32: Final = (-(2**31), 2**31 - 1)
INT64: Final = (-(2**63), 2**63 - 1)

NAMESPACES: Final = ("default", "ns-1")
NAMES: Final = ("a", "b", "web", "node-1", "md-0", "x.y")
DATE_TIMES: Final = ("2024-01-02T03:04:05Z", "2023-12-31T23:59:59Z", "2025-06-07T08:09:10Z")
BASE64: Final = ("YQ==", "aGVsbG8=", "")
KUBERNETES_VERSIONS: Final = ("v1.30.0", "v1.31.2", "v1.32.0-rc.1")
#: what a reference points at: ``(group/version, kind)`` of the Cluster API provider kinds; the version is
#: the hub version every group serves (what the conversion's ApiVersions answers for a contract reference)
REF_TARGETS: Final = (
    ("infrastructure.cluster.x-k8s.io/v1beta2", "DockerCluster"),
    ("infrastructure.cluster.x-k8s.io/v1beta2", "DockerMachineTemplate"),
    ("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane"),
    ("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate"),
)
MAP_KEYS: Final = ("a", "b", "c-d", "example.com/e")
LABEL_VALUES: Final = ("", "v1", "a.b", "x-y")

#: candidate strings for fields with a ``pattern``: at least one matches every pattern of the Cluster API CRDs
VOCABULARY: Final = (
    *NAMES,
    "Foo",
    "DockerCluster",
    "Synced",
    "Probe_1",
    "example.com/Probe",
    "my.domain/check-2",
    "NoReason",
    "Reason:x",
    "v1",
    *KUBERNETES_VERSIONS,
    "infrastructure.cluster.x-k8s.io/v1beta2",
    "cluster.x-k8s.io/v1beta2",
    "infrastructure.cluster.x-k8s.io",
    "[1-3]",
    "[0-10]",
    "1",
    "100Mi",
    "2Gi",
    "500m",
    "1.5",
    "Linux",
    "LVM",
    "0FC63DAF-8483-4772-8E79-3D69D8477DE4",
    "",
)
STRING_ALPHABET: Final = "abcxyz019-_./"

_UNIQUE_NAME_RULE: Final = re.compile(r"self\.all\(x,\s*self\.exists_one\(y,\s*x\.(\w+)\s*==\s*y\.\1\)\)")
_NOT_IN_RULE: Final = re.compile(r"!\(self in \[(.*)\]\)")
_MATCHES_RULE: Final = re.compile(r"self\.matches\('(.*)'\)")
_ONE_OF_RULE: Final = re.compile(
    r"\[has\(self\.(\w+)\),\s*has\(self\.(\w+)\)\]\.filter\(x,\s*x\s*==\s*true\)\.size\(\)\s*==\s*1"
)
#: replica counters: the scale subresource wants them non-negative, whatever the schema says
_COUNTER_NAME: Final = re.compile(r"(^|\.)replicas$|Replicas$")
_DURATION_NAME: Final = re.compile(r"[Tt]imeout|Period$|^ttl$")


class _Missing:
    def __repr__(self) -> str:
        return "MISSING"


#: a value the generator chose not to (or could not) generate: the field is left out
MISSING: Any = _Missing()


# --- paths ------------------------------------------------------------------------------------


def child(path: str, name: str) -> str:
    return f"{path}.{name}" if path else name


def ancestors(path: str) -> Iterable[str]:
    """``path`` and every path it is under: ``a.b[].c`` → ``a.b[].c``, ``a.b[]``, ``a.b``, ``a``."""
    current = path
    while current:
        yield current
        current = current[:-2] if current.endswith(("[]", "{}")) else current.rpartition(".")[0]


def glob(pattern: str) -> re.Pattern[str]:
    """A path pattern: dotted names, ``[]`` for a list item, ``{}`` for a map value, ``*`` for one name and a
    leading ``**.`` for any prefix (``**.files[].path`` matches ``spec.template.spec.files[].path``)."""
    out: list[str] = []
    rest = pattern
    if rest.startswith("**."):
        out.append(r"(?:.*\.)?")
        rest = rest[3:]
    for part in re.split(r"(\*)", rest):
        out.append(r"[^.\[\]{}]*" if part == "*" else re.escape(part))
    return re.compile("".join(out))


# --- hints ------------------------------------------------------------------------------------

#: ``factory(gen, path)`` → the value at ``path`` (or :data:`MISSING`); it may draw with ``gen.draw``
ValueFactory = Callable[["Gen", str], Any]


@dataclass(frozen=True)
class Hints:
    """What the schema does not say: the generator's equivalent of upstream's fuzzer funcs.

    - ``hot``: paths the conversion touches; their properties (and everything under them) are picked more often;
    - ``skip``: path patterns (:func:`glob`) never generated;
    - ``values``: ``(pattern, factory)`` — the value at a matching path comes from the factory, not the schema;
    - ``unique``: ``(pattern, key)`` — the items of a matching list are unique by ``key`` (what the schema does
      not say but validation or the conversion relies on: ClusterClass patches by ``name``);
    - ``durations``: path patterns of strings that are Go durations (besides those :data:`_DURATION_NAME` finds);
    - ``twin``: another version's schema of the kind, whose constraints at the same path are honoured too (see
      :func:`merged`): ``twin_strict`` its ``required``, ranges, ``int32``, patterns, maximum sizes and unique
      names; its minimum sizes (``minItems``, ``minLength``, ``minProperties``, a positive ``minimum``) where the
      twin cannot leave the value out — a required property, a list item, a map value — and, with
      ``twin_non_empty``, also for its optional properties (without, empty and zero optional values are
      generated: a conversion leaves them out where the twin refuses them, as Go's ``omitempty`` does).
    """

    hot: frozenset[str] = frozenset()
    skip: tuple[str, ...] = ()
    values: tuple[tuple[str, ValueFactory], ...] = ()
    unique: tuple[tuple[str, str], ...] = ()
    durations: tuple[str, ...] = ()
    twin: Mapping[str, Any] | None = None
    twin_strict: bool = True
    twin_non_empty: bool = True

    @functools.cached_property
    def _skip(self) -> tuple[re.Pattern[str], ...]:
        return tuple(glob(p) for p in self.skip)

    @functools.cached_property
    def _values(self) -> tuple[tuple[re.Pattern[str], ValueFactory], ...]:
        return tuple((glob(p), f) for p, f in self.values)

    @functools.cached_property
    def _durations(self) -> tuple[re.Pattern[str], ...]:
        return tuple(glob(p) for p in self.durations)

    @functools.cached_property
    def _merged(self) -> dict[tuple[int, str], Mapping[str, Any]]:
        return {}

    def is_duration(self, path: str) -> bool:
        return bool(_DURATION_NAME.search(path.rpartition(".")[2])) or any(p.fullmatch(path) for p in self._durations)

    def effective(self, node: Mapping[str, Any], path: str) -> Mapping[str, Any]:
        """``node`` with the twin's constraints at ``path`` (see :func:`merged`)."""
        if self.twin is None:
            return node
        key = (id(node), path)
        found = self._merged.get(key)
        if found is None:
            non_empty = self.twin_non_empty or _required_in(self.twin, path)
            found = merged(node, schema_at(self.twin, path), strict=self.twin_strict, non_empty=non_empty)
            self._merged[key] = found
        return found

    @functools.cached_property
    def _unique(self) -> tuple[tuple[re.Pattern[str], str], ...]:
        return tuple((glob(p), k) for p, k in self.unique)

    @functools.cached_property
    def _hot_prefixes(self) -> frozenset[str]:
        return frozenset(a for path in self.hot for a in ancestors(path))

    def skipped(self, path: str) -> bool:
        return any(p.fullmatch(path) for p in self._skip)

    def factory(self, path: str) -> ValueFactory | None:
        return next((f for p, f in self._values if p.fullmatch(path)), None)

    def unique_keys(self, path: str) -> list[tuple[str, ...]]:
        return [(key,) for p, key in self._unique if p.fullmatch(path)]

    def is_hot(self, path: str) -> bool:
        """``path`` leads to a hot path or lies under one."""
        return path in self._hot_prefixes or any(a in self.hot for a in ancestors(path))


# --- small values -----------------------------------------------------------------------------

_SCALARS: Final = st.booleans() | st.integers(-3, 3) | st.sampled_from(["", "a", "x-y"])

#: a small JSON value (for ``x-kubernetes-preserve-unknown-fields``): at most four leaves, no nulls
SMALL_JSON: Final = st.recursive(
    _SCALARS,
    lambda inner: st.lists(inner, max_size=2) | st.dictionaries(st.sampled_from(["a", "b", "c"]), inner, max_size=2),
    max_leaves=4,
)
SMALL_JSON_OBJECT: Final = st.dictionaries(st.sampled_from(["a", "b", "c"]), SMALL_JSON, max_size=2)


def go_duration(seconds: int) -> str:
    """Go's ``time.Duration.String()`` of whole seconds: ``0s``, ``45s``, ``1m30s``, ``1h0m5s``."""
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    if minutes:
        return f"{minutes}m{secs}s"
    return f"{secs}s"


def _spellings(seconds: int) -> list[str]:
    spelled = [go_duration(seconds), f"{seconds}s"]
    if seconds and seconds % 60 == 0:
        spelled.append(f"{seconds // 60}m")
    return spelled


#: a Go duration in whole seconds, non-negative (as upstream's fuzzers: ``time.Duration(c.Int31()) * time.Second``);
#: zero often (the conversions treat it specially)
DURATIONS: Final = st.one_of(
    st.just(0), st.integers(0, 4000), st.sampled_from([59, 60, 90, 3600, 3723]), st.integers(0, 2**31 - 1)
).flatmap(lambda s: st.sampled_from(_spellings(s)))


# --- cached strategies (building one costs more than drawing from it) ------------------------------


@functools.cache
def _sampled(values: tuple[Any, ...]) -> st.SearchStrategy[Any]:
    return st.sampled_from(values)


@functools.cache
def _subsets(values: tuple[str, ...], low: int, high: int) -> st.SearchStrategy[list[str]]:
    return st.lists(st.sampled_from(values), unique=True, min_size=low, max_size=high)


@functools.cache
def _integers(low: int, high: int) -> st.SearchStrategy[int]:
    return st.integers(low, high)


@functools.cache
def _texts(low: int, high: int) -> st.SearchStrategy[str]:
    return st.text(STRING_ALPHABET, min_size=low, max_size=high)


@functools.cache
def _bounded_integers(low: int, high: int, zero: bool) -> st.SearchStrategy[int]:
    small = st.integers(max(low, -2), min(high, 5)) if max(low, -2) <= min(high, 5) else st.nothing()
    zeros = st.just(0) if zero or low <= 0 <= high else st.nothing()  # zero often: Go's omitempty drops it
    return st.one_of(zeros, small, st.sampled_from(sorted({low, high})), st.integers(low, high))


# --- the generator ----------------------------------------------------------------------------


@dataclass
class Gen:
    """One draw of an object: the ``draw`` function, the object's namespace, the remaining value budget."""

    draw: Callable[[st.SearchStrategy[Any]], Any]
    root: Mapping[str, Any]
    hints: Hints
    namespace: str
    budget: int = 0
    #: the paths this object must reach (and every path they are under)
    targets: frozenset[str] = frozenset()

    # -- public helpers for value factories ----------------------------------------------------

    def schema_at(self, path: str) -> Mapping[str, Any]:
        """The schema node at ``path`` (``{}`` where the schema has none)."""
        return schema_at(self.root, path)

    def value(self, node: Mapping[str, Any], path: str, depth: int) -> Any:
        """A value for ``node`` at ``path`` (or :data:`MISSING`)."""
        factory = self.hints.factory(path)
        if factory is not None:
            self.budget -= 1
            return factory(self, path)
        node = self.hints.effective(node, path)
        if node.get("x-kubernetes-int-or-string"):
            self.budget -= 1
            return self._int_or_string(node)
        kind = node.get("type")
        if kind == "object":
            return self._object(node, path, depth)
        if kind == "array":
            return self._array(node, path, depth)
        self.budget -= 1
        if kind == "string":
            return self._string(node, path)
        if kind in ("integer", "number"):
            return self._integer(node, non_negative=bool(_COUNTER_NAME.search(path)))
        if kind == "boolean":
            return self.draw(st.booleans())
        if node.get("x-kubernetes-preserve-unknown-fields"):
            return self.draw(SMALL_JSON)
        return MISSING

    def object_with(self, node: Mapping[str, Any], path: str, depth: int, names: Sequence[str]) -> Obj:
        """An object of ``node`` with exactly the properties ``names`` (those that could be generated)."""
        properties = node.get("properties") or {}
        out: Obj = {}
        for name in names:
            value = self.value(properties.get(name, {}), child(path, name), depth + 1)
            if value is not MISSING:
                out[name] = value
        return out

    def reference(self, *, shape: str) -> Obj:
        """A reference to a provider object: ``object`` (an ObjectReference, in the object's namespace),
        ``contract`` (``{apiGroup, kind, name}``) or ``template`` (``{apiVersion, kind, name}``)."""
        api_version, kind = self.draw(_sampled(REF_TARGETS))
        name = self.draw(_sampled(NAMES))
        if shape == "contract":
            return {"apiGroup": api_version.split("/")[0], "kind": kind, "name": name}
        if shape == "template":
            return {"apiVersion": api_version, "kind": kind, "name": name}
        return {"apiVersion": api_version, "kind": kind, "name": name, "namespace": self.namespace}

    # -- nodes ---------------------------------------------------------------------------------

    def _object(self, node: Mapping[str, Any], path: str, depth: int) -> Any:
        properties = node.get("properties")
        if properties:
            shape = _reference_shape(properties)
            if shape is not None:
                self.budget -= 1
                return self.reference(shape=shape)
            return self.object_with(node, path, depth, self._pick(node, path, depth))
        additional = node.get("additionalProperties")
        if isinstance(additional, Mapping):
            return self._map(node, additional, path, depth)
        self.budget -= 1
        if node.get("x-kubernetes-preserve-unknown-fields"):
            return self.draw(SMALL_JSON_OBJECT)
        return {}

    def _pick(self, node: Mapping[str, Any], path: str, depth: int) -> list[str]:
        """Which properties to generate: the required ones, one of each "exactly one of" pair, and a random
        subset of the others (hot ones more likely) while the budget lasts."""
        properties: Mapping[str, Any] = node.get("properties") or {}
        required = [name for name in node.get("required", ()) if name in properties]
        one_of = [pair for rule in _rules(node) if (pair := _one_of(rule)) is not None]
        paired = {name for pair in one_of for name in pair}
        optional = [
            name
            for name in properties
            if name not in required and name not in paired and not self.hints.skipped(child(path, name))
        ]
        chosen = list(required)
        for pair in one_of:
            forced_one = [name for name in pair if child(path, name) in self.targets]
            chosen.append(forced_one[0] if forced_one else self.draw(_sampled(pair)))
        forced = [name for name in optional if child(path, name) in self.targets]
        chosen += forced
        optional = [name for name in optional if name not in forced]
        at_least = max(0, int(node.get("minProperties", 0)) - len(chosen))
        if not optional:
            return chosen
        if self.budget <= 0:
            if at_least:
                chosen += optional[:at_least]
            return chosen
        weighted = [name for name in optional for _ in range(HOT_WEIGHT if self.hints.is_hot(child(path, name)) else 1)]
        cap = TOP_PROPERTY_CAP if depth <= 2 else PROPERTY_CAP
        at_most = min(len(optional), max(at_least, cap))
        picked: list[str] = self.draw(_subsets(tuple(weighted), min(at_least, at_most), at_most))
        return chosen + picked

    def _map(self, node: Mapping[str, Any], values: Mapping[str, Any], path: str, depth: int) -> Obj:
        at_least = int(node.get("minProperties", 0))
        at_most = max(at_least, LIST_CAP if self.budget > 0 else 0)
        keys = self.draw(_subsets(MAP_KEYS, at_least, at_most))
        out: Obj = {}
        for key in keys:
            value = self.value(values, f"{path}{{}}", depth + 1)
            if value is not MISSING:
                out[key] = value
        return out

    def _array(self, node: Mapping[str, Any], path: str, depth: int) -> Any:
        items = node.get("items") or {}
        at_least = int(node.get("minItems", 0))
        at_most = min(int(node.get("maxItems", at_least + LIST_CAP)), at_least + LIST_CAP)
        if f"{path}[]" in self.targets:
            at_least = max(at_least, min(1, at_most))
        count = self.draw(_integers(at_least, max(at_least, at_most))) if self.budget > 0 else at_least
        values = [self.value(items, f"{path}[]", depth + 1) for _ in range(count)]
        values = [v for v in values if v is not MISSING]
        for keys in [*_unique_keys(node), *self.hints.unique_keys(path)]:
            values = _unique_by(values, _fields_of(keys))
        if node.get("x-kubernetes-list-type") == "set":
            values = _unique_by(values, repr)
        return values

    def _string(self, node: Mapping[str, Any], path: str) -> Any:
        if "enum" in node:
            return self.draw(_sampled(tuple(node["enum"])))
        low = int(node.get("minLength", 0))
        high = int(node.get("maxLength", 10**6))
        fmt = node.get("format")
        if fmt == "date-time":
            return self.draw(_sampled(DATE_TIMES))
        if fmt == "byte":
            return self._from(BASE64, low, high)
        patterns = list(node.get("x-patterns", ())) + ([node["pattern"]] if "pattern" in node else [])
        excluded: set[str] = set()
        for rule in _rules(node):
            if m := _MATCHES_RULE.fullmatch(rule):
                patterns.append(m.group(1))
            elif m := _NOT_IN_RULE.fullmatch(rule):
                excluded |= set(re.findall(r"'([^']*)'", m.group(1)))
        name = path.rpartition(".")[2]
        if patterns:
            candidates = [
                v
                for v in VOCABULARY
                if low <= len(v) <= high and v not in excluded and all(re.search(p, v) for p in patterns)
            ]
            if candidates:
                return self.draw(_sampled(tuple(candidates)))
            return self._from_regex(patterns, low, high)
        if self.hints.is_duration(path):
            return self.draw(DURATIONS)
        semantic = {
            "name": NAMES,
            "namespace": (self.namespace,),
            "apiVersion": tuple(api_version for api_version, _ in REF_TARGETS),
            "kind": tuple(kind for _, kind in REF_TARGETS),
            "version": KUBERNETES_VERSIONS,
        }.get(name)
        if semantic is not None:
            found = self._from(semantic, low, high)
            if found is not MISSING:
                return found
        return self.draw(_texts(low, max(low, min(high, 6))))

    def _from(self, values: Sequence[str], low: int, high: int) -> Any:
        fitting = tuple(v for v in values if low <= len(v) <= high)
        return self.draw(_sampled(fitting)) if fitting else MISSING

    def _from_regex(self, patterns: Sequence[str], low: int, high: int) -> Any:
        return self.draw(_regex_strings(tuple(patterns), low, high))

    def _integer(self, node: Mapping[str, Any], *, non_negative: bool = False) -> int:
        low, high = INT32 if node.get("format") == "int32" else INT64
        low = max(low, int(node.get("minimum", 0 if non_negative else low)))
        high = min(high, int(node.get("maximum", high)))
        if node.get("exclusiveMinimum"):
            low += 1
        if node.get("exclusiveMaximum"):
            high -= 1
        return int(self.draw(_bounded_integers(low, high, bool(node.get("x-zero")))))

    def _int_or_string(self, node: Mapping[str, Any]) -> Any:
        pattern = node.get("pattern")
        return self.draw(_int_or_string(pattern))


@functools.cache
def _regex_strings(patterns: tuple[str, ...], low: int, high: int) -> st.SearchStrategy[Any]:
    """A string matching every pattern (or :data:`MISSING` when none turns up): for patterns no word of
    :data:`VOCABULARY` matches."""
    first, *others = patterns
    strategy = st.from_regex(first, fullmatch=True).filter(
        lambda v: low <= len(v) <= min(high, 40) and all(re.search(p, v) for p in others)
    )
    return st.one_of(strategy, st.just(MISSING))


@functools.cache
def _int_or_string(pattern: str | None) -> st.SearchStrategy[Any]:
    strings = [v for v in ("10%", "50%", "0%", "1", "100Mi", "500m") if pattern is None or re.search(pattern, v)]
    return st.one_of(st.integers(0, 5), st.sampled_from(strings))


def schema_at(root: Mapping[str, Any], path: str) -> Mapping[str, Any]:
    """The schema node at ``path`` under ``root`` (``{}`` where the schema has none)."""
    node: Any = root
    for token in re.findall(r"\[\]|\{\}|[^.\[\]{}]+", path):
        if not isinstance(node, Mapping):
            return {}
        if token == "[]":
            node = node.get("items", {})
        elif token == "{}":
            node = node.get("additionalProperties", {})
        else:
            node = (node.get("properties") or {}).get(token, {})
    return node if isinstance(node, Mapping) else {}


def _required_in(root: Mapping[str, Any], path: str) -> bool:
    """Whether the value at ``path`` cannot be left out of an object of ``root``: a list item, a map value, or a
    property its parent requires."""
    if path.endswith(("[]", "{}")):
        return True
    parent, _, name = path.rpartition(".")
    return name in schema_at(root, parent).get("required", ())


def refused_zero(node: Mapping[str, Any]) -> str | None:
    """Why ``node`` refuses its type's zero value (``{}``, ``[]``, ``""``, ``0``), or None: ``minProperties``,
    ``minItems``, ``minLength`` or ``minimum`` of at least 1, or a string ``enum`` without ``""``."""
    kind = node.get("type")
    if node.get("x-kubernetes-int-or-string"):
        return None
    for name, of in (("minProperties", "object"), ("minItems", "array"), ("minLength", "string")):
        if kind == of and int(node.get(name, 0)) >= 1:
            return f"{name}: {node[name]}"
    if kind == "string" and "enum" in node and "" not in node["enum"]:
        return "enum"
    if kind in ("integer", "number") and "minimum" in node:
        minimum = node["minimum"]
        if minimum > 0 or (minimum == 0 and node.get("exclusiveMinimum")):
            return f"minimum: {minimum}"
    return None


def zero_refusing_fields(root: Mapping[str, Any], path: str = "") -> list[tuple[str, str]]:
    """Every optional property under ``root`` (``[]`` for list items) whose schema refuses its zero value, with
    why (:func:`refused_zero`): the fields a Go type writes with ``omitempty``/``omitzero``, so that its zero is
    left out rather than refused. Map values and the object's ``metadata`` are not looked into."""
    found: list[tuple[str, str]] = []
    properties = root.get("properties") if root.get("type") == "object" else None
    for name, prop in (properties or {}).items():
        if not path and name in ("apiVersion", "kind", "metadata"):
            continue
        here = child(path, name)
        why = refused_zero(prop)
        if why is not None and name not in root.get("required", ()):
            found.append((here, why))
        found += zero_refusing_fields(prop, here)
    items = root.get("items") if root.get("type") == "array" else None
    if isinstance(items, Mapping):
        found += zero_refusing_fields(items, f"{path}[]")
    return found


def merged(node: Mapping[str, Any], twin: Mapping[str, Any], *, strict: bool, non_empty: bool) -> Mapping[str, Any]:
    """``node`` that also satisfies ``twin`` (the same field in another version) where both have the field:

    - ``strict``: ``twin``'s ``required`` (of the properties ``node`` has), ``minimum``/``maximum``, ``int32``,
      ``pattern`` (kept as ``x-patterns``: both must match), ``maxLength``/``maxItems`` and its unique-name rules;
    - ``non_empty``: ``twin``'s ``minItems``, ``minLength`` and ``minProperties``, and a positive ``minimum``
      excludes 0 (without it, 0 stays possible: ``x-zero``).

    The twin's ``enum`` and other CEL rules are not merged (a renamed enum value, a rule about fields only one
    version has, must reach the conversion).
    """
    if not twin or node.get("type") != twin.get("type"):
        return node
    out = dict(node)
    if strict:
        properties = node.get("properties") or {}
        required = [*node.get("required", ()), *(n for n in twin.get("required", ()) if n in properties)]
        if required:
            out["required"] = list(dict.fromkeys(required))
        for key, pick in (("minimum", max), ("maximum", min), ("maxLength", min), ("maxItems", min)):
            if key in twin:
                out[key] = pick(node[key], twin[key]) if key in node else twin[key]
        if not non_empty and twin.get("minimum", 0) > 0 and node.get("minimum", 0) <= 0:
            out["x-zero"] = True
        if twin.get("format") == "int32":
            out["format"] = "int32"
        if "pattern" in twin:
            out["x-patterns"] = [twin["pattern"]]
        unique = [
            r for r in twin.get("x-kubernetes-validations", ()) if _UNIQUE_NAME_RULE.fullmatch(str(r.get("rule")))
        ]
        if unique:
            out["x-kubernetes-validations"] = [*node.get("x-kubernetes-validations", ()), *unique]
    if non_empty:
        for key in ("minItems", "minLength", "minProperties"):
            if key in twin:
                out[key] = max(int(node.get(key, 0)), int(twin[key]))
    return out


def _reference_shape(properties: Mapping[str, Any]) -> str | None:
    names = set(properties)
    if {"apiVersion", "kind", "name", "namespace", "uid", "resourceVersion", "fieldPath"} <= names:
        return "object"
    if names == {"apiGroup", "kind", "name"}:
        return "contract"
    if names == {"apiVersion", "kind", "name"}:
        return "template"
    return None


def _rules(node: Mapping[str, Any]) -> list[str]:
    return [str(rule.get("rule", "")) for rule in node.get("x-kubernetes-validations", ())]


def _one_of(rule: str) -> tuple[str, str] | None:
    m = _ONE_OF_RULE.fullmatch(rule.replace(" ", ""))
    return (m.group(1), m.group(2)) if m else None


def _unique_keys(node: Mapping[str, Any]) -> list[tuple[str, ...]]:
    """The keys items must be unique by: a map list's keys, and a field a CEL rule wants unique."""
    keys = []
    if node.get("x-kubernetes-list-type") == "map":
        keys.append(tuple(node.get("x-kubernetes-list-map-keys", ())))
    for rule in _rules(node):
        if m := _UNIQUE_NAME_RULE.fullmatch(rule):
            keys.append((m.group(1),))
    return keys


def _fields_of(keys: tuple[str, ...]) -> Callable[[Any], Any]:
    """An item's values of ``keys`` (what a list-map key or a unique-name rule compares)."""

    def key(item: Any) -> Any:
        return tuple(repr(item.get(k)) if isinstance(item, dict) else None for k in keys)

    return key


def _unique_by(values: list[Any], key: Callable[[Any], Any]) -> list[Any]:
    seen: set[Any] = set()
    out = []
    for value in values:
        k = key(value)
        if k not in seen:
            seen.add(k)
            out.append(value)
    return out


# --- objects ----------------------------------------------------------------------------------


@st.composite
def metadata(draw: Callable[[st.SearchStrategy[Any]], Any], *, namespaced: bool = True) -> Obj:
    """``name`` and ``namespace`` (of a namespaced kind); ``labels`` and ``annotations`` sometimes (small, valid
    keys and values)."""
    meta: Obj = {"name": draw(st.sampled_from(NAMES))}
    if namespaced:
        meta["namespace"] = draw(st.sampled_from(NAMESPACES))
    if draw(st.booleans()):
        meta["labels"] = draw(st.dictionaries(st.sampled_from(MAP_KEYS), st.sampled_from(LABEL_VALUES), max_size=2))
    if draw(st.booleans()):
        meta["annotations"] = draw(st.dictionaries(st.sampled_from(MAP_KEYS), st.sampled_from(NAMES), max_size=2))
    return {k: v for k, v in meta.items() if v != {}}


def objects(
    schema: Mapping[str, Any],
    *,
    api_version: str,
    kind: str,
    hints: Hints | None = None,
    namespaced: bool = True,
    status: bool = True,
) -> st.SearchStrategy[Obj]:
    """Objects of ``kind`` in ``api_version`` drawn from its ``openAPIV3Schema`` (see the module docstring).

    ``spec`` is always generated when the schema has one; ``status`` about half of the time (never without
    ``status``).
    """
    used = hints or Hints()
    properties: Mapping[str, Any] = schema.get("properties") or {}
    reachable = sorted(path for path in used.hot if schema_at(schema, path))

    @st.composite
    def draw_object(draw: Callable[[st.SearchStrategy[Any]], Any]) -> Obj:
        meta = draw(metadata(namespaced=namespaced))
        obj: Obj = {"apiVersion": api_version, "kind": kind, "metadata": meta}
        chosen = (
            draw(st.lists(st.sampled_from(reachable), min_size=1, max_size=TARGETS, unique=True)) if reachable else []
        )
        targets = frozenset(a for path in chosen for a in ancestors(path))
        gen = Gen(draw, schema, used, meta.get("namespace", ""), targets=targets)
        for name, budget in (("spec", SPEC_BUDGET), ("status", STATUS_BUDGET)):
            if name not in properties or used.skipped(name):
                continue
            if name == "status" and not (status and (name in targets or draw(st.booleans()))):
                continue
            gen.budget = budget
            value = gen.value(properties[name], name, 1)
            if value is not MISSING:
                obj[name] = value
        return obj

    return draw_object()
