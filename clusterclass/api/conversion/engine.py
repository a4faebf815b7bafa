"""The conversion engine: a kind's versions as an ordered list of steps, run forwards or backwards.

Cluster API's API versions of a kind differ in a bounded way: a field renamed or moved (``spec.topology.class``
→ ``spec.topology.classRef.name``), a value re-encoded (a ``metav1.Duration`` → whole seconds, an
``ObjectReference`` → ``{apiGroup, kind, name}``), a field only one version has (dropped on the way to the
other, or kept in the conversion-data annotation), and a boolean that became a pointer (so that an explicit
``false`` can be told from an unset one). Everything else has the same name and shape in both versions.

So a :class:`SpokeConversion` says only what differs, as an ordered tuple of steps over field paths; every
field no step names is copied as it is. Converting spoke → hub runs the steps in order; hub → spoke runs
them in reverse, each undone. Because the steps are data, the same list also translates a field path
between versions (:meth:`SpokeConversion.path_to_hub`), which is how an error about
``spec.topology.class`` reaches a v1beta2 user as ``spec.topology.classRef.name``.

A path is a tuple of field names where ``[]`` (:data:`EACH`) stands for every item of a list; a step whose
source and destination both go through a list keeps each item's index. Which empty structs a step leaves
behind is explicit: a move removes the structs it empties that only its source version spells (below the
common prefix of its paths), a struct both versions share stays unless an :class:`Empty` or
:class:`OmitEmpty` step says it goes — as a Go struct stays unless its field is ``omitempty``/``omitzero``.
Steps that are not moves (:class:`Custom`) are for the few rules that are not about one field (recursive
schema booleans).

Why our own engine: Go's conversion-gen works on typed structs; the objects here stay plain dicts end to
end (unknown provider fields are kept), and no Python library converts between Kubernetes API versions.
"""

from __future__ import annotations

import itertools
import json
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Protocol

from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj
from clusterclass.errors import ClusterClassError

#: A path step meaning "every item of this list".
EACH: Final = "[]"

Path = tuple[str, ...]

#: The annotation a down-converted object keeps its hub form in (upstream's ``utilconversion.DataAnnotation``).
CONVERSION_DATA_ANNOTATION: Final = "cluster.x-k8s.io/conversion-data"


class _Missing:
    """The value of a field that is not there (distinct from JSON null)."""

    def __repr__(self) -> str:
        return "MISSING"

    def __bool__(self) -> bool:
        return False


MISSING: Any = _Missing()


class ConversionError(ClusterClassError):
    """An object that cannot be converted: a value that does not parse, a reference whose version is unknown.

    ``field`` is the path of the offending field in the object being converted.
    """

    def __init__(self, message: str, *, field: str | None = None) -> None:
        super().__init__(f"{field}: {message}" if field else message)
        self.message = message
        self.field = field


class ApiVersions(Protocol):
    """Which apiVersion to write in a reference that names only a group and kind (a v1beta2 contract ref).

    Upstream asks the API server for the kind's CRD and takes the newest version its contract labels name
    (``cluster.x-k8s.io/v1beta2: v1beta2``); offline, the bundled CRDs and the objects at hand answer.
    """

    def api_version(self, group: str, kind: str) -> str:
        """``group/version`` for ``kind``; raises :class:`ConversionError` when it cannot be told."""
        ...


@dataclass(frozen=True)
class Context:
    """What a step may need besides the value: the object's namespace, reference versions, restored hub data."""

    namespace: str
    api_versions: ApiVersions
    #: the hub object kept in the spoke's conversion-data annotation (spoke → hub only), or None
    restored: Obj | None = None


@dataclass(frozen=True)
class Transform:
    """How a value is re-encoded between the versions: ``to_hub(value, ctx, path)`` and ``to_spoke``.

    Either may answer :data:`MISSING` to leave the field out; ``path`` is the concrete path of the value in
    the object it came from, for errors.
    """

    to_hub: Callable[[Any, Context, str], Any]
    to_spoke: Callable[[Any, Context, str], Any]


def _same(value: Any, _ctx: Context, _path: str) -> Any:
    return value


SAME: Final = Transform(_same, _same)


def parse_path(text: str) -> Path:
    """``spec.workers.machineDeployments[].class`` → ``("spec", "workers", "machineDeployments", "[]", "class")``."""
    steps: list[str] = []
    for part in text.split("."):
        while part.endswith(EACH):
            part = part[: -len(EACH)]
            if part:
                steps.append(part)
            part = ""
            steps.append(EACH)
        if part:
            steps.append(part)
    return tuple(steps)


def render_path(path: Sequence[str | int]) -> str:
    """A concrete path as Kubernetes prints it: ``spec.workers.machinePools[2].class``."""
    text = ""
    for step in path:
        if isinstance(step, int):
            text += f"[{step}]"
        elif step.startswith("["):
            text += step  # a bracketed key kept from an error path (``variables[foo]``)
        else:
            text = f"{text}.{step}" if text else step
    return text


# --- walking concrete fields ------------------------------------------------------------------


def _matches(holder: Any, pattern: Path, prefix: tuple[str | int, ...] = ()) -> Iterable[tuple[str | int, ...]]:
    """Every concrete path (list steps as ints) under ``holder`` that ``pattern`` names and that exists."""
    if EACH not in pattern:  # most patterns name one field: a plain walk (every conversion runs dozens of them)
        current = holder
        for step in pattern:
            if not isinstance(current, dict) or step not in current:
                return ()
            current = current[step]
        return ((*prefix, *pattern),)
    return _each_match(holder, pattern, prefix)


def _each_match(holder: Any, pattern: Path, prefix: tuple[str | int, ...]) -> Iterator[tuple[str | int, ...]]:
    if not pattern:
        yield prefix
        return
    step, rest = pattern[0], pattern[1:]
    if step == EACH:
        if isinstance(holder, list):
            for i, item in enumerate(holder):
                yield from _matches(item, rest, (*prefix, i))
        return
    if isinstance(holder, dict) and step in holder:
        yield from _matches(holder[step], rest, (*prefix, step))


def _concrete(pattern: Path, indices: Sequence[int]) -> tuple[str | int, ...]:
    """``pattern`` with its ``[]`` steps replaced by ``indices`` in order."""
    it = iter(indices)
    out: list[str | int] = []
    for step in pattern:
        if step == EACH:
            try:
                out.append(next(it))
            except StopIteration:
                raise ValueError(f"pattern {pattern} has more list steps than the source") from None
        else:
            out.append(step)
    return tuple(out)


def get_at(obj: Any, path: Sequence[str | int]) -> Any:
    """The value at a concrete path, or :data:`MISSING`."""
    current = obj
    for step in path:
        if isinstance(step, int):
            if not isinstance(current, list) or step >= len(current):
                return MISSING
            current = current[step]
        else:
            if not isinstance(current, dict) or step not in current:
                return MISSING
            current = current[step]
    return current


def set_at(obj: Obj, path: Sequence[str | int], value: Any) -> None:
    """Set ``value`` at a concrete path, creating the maps on the way (list items must exist)."""
    current: Any = obj
    for step, following in itertools.pairwise(path):
        if isinstance(step, int):
            current = current[step]
            continue
        child = current.get(step)
        if not isinstance(child, dict | list):
            child = [] if isinstance(following, int) else {}
            current[step] = child
        current = child
    current[path[-1]] = value


def pop_at(obj: Obj, path: Sequence[str | int], *, keep: int | None = None) -> Any:
    """Remove and return the value at a concrete path (:data:`MISSING` if absent).

    Without ``keep`` nothing else goes: the struct that held the field stays, even empty (whether it is written
    is the business of an :func:`empty` or :func:`omit_empty` step, as it is of the Go type's ``omitempty``).
    With ``keep`` the maps the removal leaves empty are removed too, but never the first ``keep`` steps of
    ``path`` nor past a list item: a :class:`Move` keeps the common prefix of its source and destination, so
    moving ``status.v1beta2.conditions`` to ``status.conditions`` removes an emptied ``status.v1beta2`` (a
    struct only the spoke spells) but never ``status``, and a same-path move removes nothing above the field.
    """
    parents: list[tuple[Any, str | int]] = []
    current: Any = obj
    for step in path[:-1]:
        nxt = get_at(current, (step,))
        if nxt is MISSING:
            return MISSING
        parents.append((current, step))
        current = nxt
    last = path[-1]
    if isinstance(last, int) or not isinstance(current, dict) or last not in current:
        return MISSING
    value = current.pop(last)
    if keep is None:
        return value
    for parent, step in reversed(parents[keep:]):
        child = parent[step]
        if isinstance(step, str) and isinstance(child, dict) and not child:
            del parent[step]
        else:
            break
    return value


def common_prefix(a: Sequence[str | int], b: Sequence[str | int]) -> int:
    """How many leading steps two concrete paths share."""
    count = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        count += 1
    return count


def _indices(path: Sequence[str | int]) -> list[int]:
    return [step for step in path if isinstance(step, int)]


# --- steps ------------------------------------------------------------------------------------


class Step(Protocol):
    def to_hub(self, obj: Obj, ctx: Context) -> None: ...

    def to_spoke(self, obj: Obj, ctx: Context) -> None: ...

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]: ...

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]: ...

    def placed(self, base: Path) -> Step:
        """The same step for the struct it describes placed at ``base`` (see :func:`under`)."""
        ...


def _is_zero(value: Any) -> bool:
    return value is MISSING or value is None or value is False or value == 0 or value == "" or value == {}


def _rebase(path: tuple[str | int, ...], old: Path, new: Path) -> tuple[str | int, ...] | None:
    """``path`` with the prefix matching pattern ``old`` replaced by ``new`` (indices kept), or None."""
    if len(path) < len(old):
        return None
    indices: list[int] = []
    for step, want in zip(path, old, strict=False):
        if want == EACH:
            if not isinstance(step, int):
                return None
            indices.append(step)
        elif step != want:
            return None
    return (*_concrete(new, indices), *path[len(old) :])


@dataclass(frozen=True)
class Move:
    """A field that lives at ``spoke`` in the spoke version and at ``hub`` in the hub version.

    ``transform`` re-encodes the value. ``zero_intent`` is for a value type that became a pointer
    (``bool`` → ``*bool``, a Duration → ``*int32`` seconds): a zero spoke value reaches the hub unset unless
    the restored hub data says it was set to zero on purpose, and a zero hub value is left out of the spoke
    (Go's ``omitempty``), as upstream's ``Convert_bool_To_Pointer_bool`` and friends do.

    Moving a field out of a struct removes the structs it leaves empty below the common prefix of the two
    paths (:func:`pop_at`): those only one version spells (``machineHealthCheck`` → ``healthCheck``), never one
    both share — a same-path move (an omitted zero) leaves the struct that held the field where it was.
    """

    spoke: Path
    hub: Path
    transform: Transform = SAME
    zero_intent: bool = False

    def __post_init__(self) -> None:
        if self.spoke.count(EACH) != self.hub.count(EACH):
            raise ValueError(f"move {self.spoke} → {self.hub}: both sides need the same list steps")

    def to_hub(self, obj: Obj, ctx: Context) -> None:
        for src in list(_matches(obj, self.spoke)):
            dst = _concrete(self.hub, _indices(src))
            value = pop_at(obj, src, keep=common_prefix(src, dst))
            converted = self.transform.to_hub(value, ctx, render_path(src)) if value is not MISSING else MISSING
            if self.zero_intent and _is_zero(converted):
                converted = MISSING
                restored = get_at(ctx.restored, dst) if ctx.restored is not None else MISSING
                if restored is not MISSING and _is_zero(restored) and restored is not None:
                    converted = restored
            if converted is not MISSING:
                set_at(obj, dst, converted)
        if self.zero_intent and ctx.restored is not None:
            self._restore_zero_where_absent(obj, ctx)

    def _restore_zero_where_absent(self, obj: Obj, ctx: Context) -> None:
        """A zero the spoke could not hold at all (its ``omitempty`` dropped it) comes back from the hub data."""
        hub_data = ctx.restored
        if hub_data is None:
            return
        for dst in _matches(hub_data, self.hub):
            restored = get_at(hub_data, dst)
            if not _is_zero(restored) or restored is None or get_at(obj, dst) is not MISSING:
                continue
            if _same_list_shapes(obj, hub_data, dst):
                set_at(obj, dst, json_copy(restored))

    def to_spoke(self, obj: Obj, ctx: Context) -> None:
        for src in list(_matches(obj, self.hub)):
            dst = _concrete(self.spoke, _indices(src))
            value = pop_at(obj, src, keep=common_prefix(src, dst))
            if self.zero_intent and _is_zero(value):
                continue
            converted = self.transform.to_spoke(value, ctx, render_path(src)) if value is not MISSING else MISSING
            if converted is not MISSING:
                set_at(obj, dst, converted)

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return _rebase(path, self.spoke, self.hub) or path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return _rebase(path, self.hub, self.spoke) or path

    def placed(self, base: Path) -> Move:
        return Move((*base, *self.spoke), (*base, *self.hub), self.transform, self.zero_intent)


def _same_list_shapes(obj: Obj, restored: Obj, path: tuple[str | int, ...]) -> bool:
    """Whether ``path``'s value may be restored into ``obj`` from ``restored``: every list it steps through
    exists in both with the same length (so an index names the same item), and nothing on the way is a
    scalar in ``obj``. Upstream matches restored items by position in the same way where lengths agree."""
    current: Any = obj
    other: Any = restored
    for step in path[:-1]:
        if isinstance(step, int):
            if not isinstance(current, list) or not isinstance(other, list) or len(current) != len(other):
                return False
            current, other = current[step], other[step]
            continue
        if current is MISSING:
            other = other.get(step, MISSING) if isinstance(other, dict) else MISSING
            continue
        if not isinstance(current, dict):
            return False
        current = current.get(step, MISSING)
        other = other.get(step, MISSING) if isinstance(other, dict) else MISSING
    return current is MISSING or isinstance(current, dict)


def Intent(path: str) -> Move:
    """A boolean (or number) that became a pointer in the hub, at the same path in both versions."""
    parsed = parse_path(path)
    return Move(parsed, parsed, zero_intent=True)


@dataclass(frozen=True)
class Drop:
    """A spoke-only field the hub has no place for: dropped on the way up, as upstream does."""

    spoke: Path

    def placed(self, base: Path) -> Drop:
        return Drop((*base, *self.spoke))

    def to_hub(self, obj: Obj, ctx: Context) -> None:
        for src in list(_matches(obj, self.spoke)):
            pop_at(obj, src)

    def to_spoke(self, obj: Obj, ctx: Context) -> None:
        return None

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path


@dataclass(frozen=True)
class HubOnly:
    """A hub field the spoke has no place for: left out of the spoke (the conversion-data annotation keeps
    it) and restored from that annotation on the way back."""

    hub: Path

    def placed(self, base: Path) -> HubOnly:
        return HubOnly((*base, *self.hub))

    def to_hub(self, obj: Obj, ctx: Context) -> None:
        if ctx.restored is None:
            return
        for dst in list(_matches(ctx.restored, self.hub)):
            if get_at(obj, dst) is MISSING and _same_list_shapes(obj, ctx.restored, dst):
                set_at(obj, dst, json_copy(get_at(ctx.restored, dst)))

    def to_spoke(self, obj: Obj, ctx: Context) -> None:
        for src in list(_matches(obj, self.hub)):
            pop_at(obj, src)

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path


@dataclass(frozen=True)
class Empty:
    """A struct the other version spells differently, removed when it is left empty: ``spoke`` after the moves
    out of it (spoke → hub), ``hub`` before the moves out of it (hub → spoke), as Go's typed round trip drops
    an empty struct behind a nil pointer. A side that is None has no such struct (``status.v1beta2`` is only
    the spoke's, ``status.deprecated`` only the hub's)."""

    spoke: Path | None
    hub: Path | None

    def placed(self, base: Path) -> Empty:
        return Empty(_placed(base, self.spoke), _placed(base, self.hub))

    def to_hub(self, obj: Obj, ctx: Context) -> None:
        if self.spoke is not None:
            _drop_empty(obj, self.spoke)

    def to_spoke(self, obj: Obj, ctx: Context) -> None:
        if self.hub is not None:
            _drop_empty(obj, self.hub)

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path


def _placed(base: Path, path: Path | None) -> Path | None:
    return None if path is None else (*base, *path)


def _drop_empty(obj: Obj, pattern: Path) -> None:
    for found in list(_matches(obj, pattern)):
        if get_at(obj, found) in ({}, None):
            pop_at(obj, found)


def is_empty(value: Any) -> bool:
    """The zero value Go's ``omitempty``/``omitzero`` leaves out of an optional field whose v1beta2 schema refuses
    it: null, ``""``, ``0``, ``[]`` or ``{}`` (never ``false``: no schema refuses a boolean's zero)."""
    if value is None or value in ("", [], {}):
        return True
    return isinstance(value, int | float) and not isinstance(value, bool) and value == 0


@dataclass(frozen=True)
class OmitEmpty:
    """An optional field at the same path in both versions that the hub leaves out when it is empty: Go's
    ``omitempty``/``omitzero`` on a field whose v1beta2 schema refuses the zero value (``minItems``,
    ``minLength``, ``minProperties`` or ``minimum`` of 1), where v1beta1 takes it (``bootCommands: []``, a
    template's ``metadata: {}``, ``observedGeneration: 0``).

    Going up the value is removed when :func:`is_empty`; going down nothing happens (a valid hub has none, and
    v1beta1 takes what there is). Placed last in a table, innermost first (:func:`omit_empty`), so that a
    struct is looked at after every move out of it and after its own fields. Only the maps the removal leaves
    empty that are listed themselves go (see :func:`pop_at`).
    """

    path: Path

    def placed(self, base: Path) -> OmitEmpty:
        return OmitEmpty((*base, *self.path))

    def to_hub(self, obj: Obj, ctx: Context) -> None:
        for found in list(_matches(obj, self.path)):
            if is_empty(get_at(obj, found)):
                pop_at(obj, found)

    def to_spoke(self, obj: Obj, ctx: Context) -> None:
        return None

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path


def omit_empty(*paths: str) -> list[OmitEmpty]:
    """:class:`OmitEmpty` steps for ``paths``, innermost first (a struct after the fields inside it)."""
    parsed = [parse_path(path) for path in paths]
    if len(set(parsed)) != len(parsed):
        raise ValueError(f"omit_empty: a path is listed twice in {paths}")
    return [OmitEmpty(path) for path in sorted(parsed, key=len, reverse=True)]


def holders(obj: Any, pattern: Path) -> Iterator[dict[str, Any]]:
    """Every map at ``pattern`` (``[]`` for every list item) that exists in ``obj``."""
    if not pattern:
        if isinstance(obj, dict):
            yield obj
        return
    step, rest = pattern[0], pattern[1:]
    if step == EACH:
        for item in obj if isinstance(obj, list) else ():
            yield from holders(item, rest)
    elif isinstance(obj, dict) and step in obj:
        yield from holders(obj[step], rest)


@dataclass(frozen=True)
class SpokeDefault:
    """A field v1beta1 requires (Go writes it even when zero) that v1beta2 may leave out: coming down it gets
    ``value`` where it is missing — creating the maps on the way for a path through no list, only in existing
    items otherwise. Going up nothing happens (an :func:`empty` step removes
    an empty struct again)."""

    path: Path
    value: Any

    def placed(self, prefix: Path) -> SpokeDefault:
        return SpokeDefault((*prefix, *self.path), self.value)

    def to_hub(self, obj: Obj, ctx: Context) -> None:
        return None

    def to_spoke(self, obj: Obj, ctx: Context) -> None:
        if EACH not in self.path:
            if get_at(obj, self.path) is MISSING:
                set_at(obj, self.path, json_copy(self.value))
            return
        for holder in holders(obj, self.path[:-1]):
            holder.setdefault(self.path[-1], json_copy(self.value))

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path


def spoke_default(path: str, value: Any) -> SpokeDefault:
    return SpokeDefault(parse_path(path), value)


@dataclass(frozen=True)
class Custom:
    """A rule that is not about one field: ``to_hub(obj, ctx)`` and ``to_spoke(obj, ctx)`` edit in place."""

    hub_fn: Callable[[Obj, Context], None]
    spoke_fn: Callable[[Obj, Context], None]

    def placed(self, base: Path) -> Custom:
        raise ValueError("a Custom step works on the whole object and cannot be placed under a struct")

    def to_hub(self, obj: Obj, ctx: Context) -> None:
        self.hub_fn(obj, ctx)

    def to_spoke(self, obj: Obj, ctx: Context) -> None:
        self.spoke_fn(obj, ctx)

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path


def move(spoke: str, hub: str, transform: Transform = SAME, *, zero_intent: bool = False) -> Move:
    """A :class:`Move` from two dotted paths (``[]`` for list items)."""
    return Move(parse_path(spoke), parse_path(hub), transform, zero_intent)


def drop(spoke: str) -> Drop:
    return Drop(parse_path(spoke))


def hub_only(hub: str) -> HubOnly:
    return HubOnly(parse_path(hub))


def empty(spoke: str | None, hub: str | None) -> Empty:
    """An :class:`Empty` from two dotted paths (None: the version has no such struct)."""
    return Empty(None if spoke is None else parse_path(spoke), None if hub is None else parse_path(hub))


FieldStep = Move | Drop | HubOnly | Empty | OmitEmpty


def under(prefix: str, steps: Sequence[Step]) -> list[Step]:
    """``steps`` written relative to a struct, placed under ``prefix`` (the same struct appears in many kinds)."""
    base = parse_path(prefix)
    return [step.placed(base) for step in steps]


# --- a kind's conversion ----------------------------------------------------------------------


@dataclass(frozen=True)
class SpokeConversion:
    """How one spoke version of a kind differs from the hub: ``steps`` in spoke → hub order."""

    version: str
    steps: tuple[Step, ...]
    #: whether hub → spoke keeps the hub object in the conversion-data annotation (upstream does for the
    #: kinds whose hub holds what the spoke cannot)
    keeps_data: bool = True

    def to_hub(self, obj: Obj, hub_api_version: str, ctx: Context) -> Obj:
        out: Obj = json_copy(obj)
        restored = take_conversion_data(out)
        out["apiVersion"] = hub_api_version
        step_ctx = Context(ctx.namespace, ctx.api_versions, restored)
        for step in self.steps:
            step.to_hub(out, step_ctx)
        return out

    def to_spoke(self, obj: Obj, spoke_api_version: str, ctx: Context) -> Obj:
        out: Obj = json_copy(obj)
        take_conversion_data(out)  # a hub object never carries one; a stale copy must not leak down
        out["apiVersion"] = spoke_api_version
        for step in reversed(self.steps):
            step.to_spoke(out, ctx)
        if self.keeps_data:
            put_conversion_data(out, obj)
        return out

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        for step in self.steps:
            path = step.path_to_hub(path)
        return path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        for step in reversed(self.steps):
            path = step.path_to_spoke(path)
        return path


@dataclass(frozen=True)
class KindConversion:
    """Every served version of one kind: the hub (the storage version) and the spokes that convert to it."""

    group: str
    kind: str
    hub: str
    spokes: Mapping[str, SpokeConversion] = field(default_factory=dict)

    @property
    def versions(self) -> tuple[str, ...]:
        return (self.hub, *self.spokes)


# --- the conversion-data annotation ----------------------------------------------------------


def take_conversion_data(obj: Obj) -> Obj | None:
    """Remove the conversion-data annotation from ``obj`` and answer the hub object it holds (or None)."""
    metadata = obj.get("metadata")
    if not isinstance(metadata, dict):
        return None
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict) or CONVERSION_DATA_ANNOTATION not in annotations:
        return None
    text = annotations.pop(CONVERSION_DATA_ANNOTATION)
    if not annotations:
        del metadata["annotations"]
    try:
        data = json.loads(text) if isinstance(text, str) else None
    except ValueError:
        return None  # as upstream: data that does not parse restores nothing (it fails there; see docs)
    return data if isinstance(data, dict) else None


def put_conversion_data(obj: Obj, hub: Obj) -> None:
    """Keep ``hub`` (without its metadata, as upstream's ``MarshalDataUnsafeNoCopy``) in ``obj``'s annotation."""
    data = {k: v for k, v in hub.items() if k != "metadata"}
    text = json.dumps(data, separators=(",", ":"), ensure_ascii=False, sort_keys=False)
    metadata = obj.setdefault("metadata", {})
    if not isinstance(metadata, dict):
        return
    annotations = metadata.get("annotations")
    if not isinstance(annotations, dict):
        annotations = {}
        metadata["annotations"] = annotations
    annotations[CONVERSION_DATA_ANNOTATION] = text
