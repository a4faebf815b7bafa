"""Field selectors (``?fieldSelector=type=cluster.x-k8s.io/secret``): their syntax, and matching objects.

A controller lists and watches a few kinds through a field selector so that its cache holds only what
it reads: the topology controller caches the Secrets of type ``cluster.x-k8s.io/secret`` (the Cluster
shim, the workload kubeconfigs), never every Secret of the management cluster.

The grammar is kube-apiserver's: ``field=value``, ``field==value`` or ``field!=value``, joined by commas,
with ``\\`` escaping ``,``, ``=`` and ``!`` inside values. A field is a dotted path into the object;
which fields a kind may be selected on is the server's business (the embedded API server checks it in
:mod:`clusterclass.apiserver.fieldselectors`). Written here rather than taken from a library: the Python
Kubernetes clients pass the string through and never parse or match it.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterclass.api.objects import Obj, dig
from clusterclass.kube.errors import BadRequest


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    value: str
    equal: bool

    def matches(self, obj: Obj) -> bool:
        return (field_value(obj, self.field) == self.value) == self.equal

    def __str__(self) -> str:
        escaped = "".join("\\" + char if char in "\\,=!" else char for char in self.value)
        return f"{self.field}{'=' if self.equal else '!='}{escaped}"


@dataclass(frozen=True)
class FieldSelector:
    """Requirements that must all hold; none selects everything."""

    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, obj: Obj) -> bool:
        return all(requirement.matches(obj) for requirement in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements

    @property
    def fields(self) -> frozenset[str]:
        return frozenset(requirement.field for requirement in self.requirements)

    def and_(self, requirement: FieldRequirement) -> FieldSelector:
        return FieldSelector((*self.requirements, requirement))

    def __str__(self) -> str:
        return ",".join(str(requirement) for requirement in self.requirements)


EVERYTHING = FieldSelector()


def field_value(obj: Obj, path: str) -> str:
    """The value a selector compares at ``path`` (a missing field reads as ``""``, as the server's)."""
    if path == "source":  # an Event's source: its component, or the newer reportingComponent
        value = dig(obj, "source", "component") or obj.get("reportingComponent")
    else:
        value = dig(obj, *path.split("."))
    return "" if value is None else str(value)


def parse_field_selector(text: str | FieldSelector | None) -> FieldSelector:
    """The selector ``text`` says; BadRequest with kube-apiserver's words when it does not parse."""
    if isinstance(text, FieldSelector):
        return text
    if not text or not text.strip():
        return EVERYTHING
    requirements = []
    for term in _split(text, ","):
        term = term.strip()
        if term:
            field, value, equal = _term(term, text)
            requirements.append(FieldRequirement(field, _unescape(value), equal))
    return FieldSelector(tuple(requirements))


def _split(text: str, separator: str) -> list[str]:
    """``text`` split at unescaped ``separator`` characters (escapes are kept)."""
    parts, current, escaped = [], [], False
    for char in text:
        if escaped:
            current.append("\\" + char)
            escaped = False
        elif char == "\\":
            escaped = True
        elif char == separator:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    if escaped:
        raise BadRequest.new(f"invalid field selector: {text!r}: trailing backslash")
    parts.append("".join(current))
    return parts


def _unescape(value: str) -> str:
    out, escaped = [], False
    for char in value:
        if escaped:
            if char not in "\\,=!":
                raise BadRequest.new(f"invalid field selector value {value!r}: invalid escape sequence \\{char}")
            out.append(char)
            escaped = False
        elif char == "\\":
            escaped = True
        else:
            out.append(char)
    return "".join(out)


def _term(term: str, text: str) -> tuple[str, str, bool]:
    """The field, the value and whether they must be equal, of one ``field<op>value`` term."""
    for operator, equal in (("!=", False), ("==", True), ("=", True)):
        index = _find_operator(term, operator)
        if index >= 0:
            return term[:index].strip(), term[index + len(operator) :].strip(), equal
    raise BadRequest.new(f"invalid selector: '{text}'; can't understand '{term}'")


def _find_operator(term: str, operator: str) -> int:
    """The index of the first unescaped ``operator`` in ``term``; -1 when there is none."""
    index = 0
    while index < len(term):
        if term[index] == "\\":
            index += 2
            continue
        if term.startswith(operator, index):
            return index
        index += 1
    return -1
