"""Field selectors (``?fieldSelector=metadata.name=c1``), for the fields kube-apiserver supports.

kubectl relies on them: ``kubectl get KIND NAME -w`` and ``kubectl wait`` list and watch with
``metadata.name=<name>``. Every kind supports ``metadata.name`` and ``metadata.namespace``; a few
built-in kinds support more (a Secret's ``type``, an Event's ``involvedObject.*``, ``reason``...).
Any other field is the 400 kube-apiserver answers: ``field label not supported: spec.x``.

The grammar is ``field=value``, ``field==value`` or ``field!=value``, joined by commas, with ``\\``
escaping ``,``, ``=`` and ``!`` inside values.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterclass.api.objects import Obj, dig
from clusterclass.apiserver.store import KindInfo
from clusterclass.kube.errors import BadRequest

COMMON_FIELDS = frozenset({"metadata.name", "metadata.namespace"})
EXTRA_FIELDS: dict[tuple[str, str], frozenset[str]] = {
    ("", "Secret"): frozenset({"type"}),
    ("", "Namespace"): frozenset({"status.phase"}),
    ("", "Event"): frozenset(
        {
            "involvedObject.kind",
            "involvedObject.namespace",
            "involvedObject.name",
            "involvedObject.uid",
            "involvedObject.apiVersion",
            "involvedObject.resourceVersion",
            "involvedObject.fieldPath",
            "reason",
            "reportingComponent",
            "source",
            "type",
        }
    ),
}


@dataclass(frozen=True)
class FieldRequirement:
    field: str
    value: str
    equal: bool

    def matches(self, obj: Obj) -> bool:
        return (_field_value(obj, self.field) == self.value) == self.equal


@dataclass(frozen=True)
class FieldSelector:
    requirements: tuple[FieldRequirement, ...] = ()

    def matches(self, obj: Obj) -> bool:
        return all(requirement.matches(obj) for requirement in self.requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements


def _field_value(obj: Obj, path: str) -> str:
    if path == "source":
        value = dig(obj, "source", "component") or obj.get("reportingComponent")
    else:
        value = dig(obj, *path.split("."))
    return "" if value is None else str(value)


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


def parse(text: str | None, info: KindInfo) -> FieldSelector:
    """The selector ``text`` describes for ``info``; BadRequest for bad syntax or an unsupported field."""
    if not text or not text.strip():
        return FieldSelector()
    supported = COMMON_FIELDS | EXTRA_FIELDS.get((info.group, info.kind), frozenset())
    requirements = []
    for term in _split(text, ","):
        term = term.strip()
        if term:
            field, value, equal = _term(term, text)
            if field not in supported:
                raise BadRequest.new(_unsupported(field, info, supported))
            requirements.append(FieldRequirement(field, _unescape(value), equal))
    return FieldSelector(tuple(requirements))


def _unsupported(field: str, info: KindInfo, supported: frozenset[str]) -> str:
    """kube-apiserver's words for a field it cannot select on (ConfigMaps word it their own way)."""
    if (info.group, info.kind) == ("", "ConfigMap"):
        return f'"{field}" is not a known field selector: only ' + ", ".join(f'"{name}"' for name in sorted(supported))
    return f"field label not supported: {field}"


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
