"""Which fields each kind can be selected on, as kube-apiserver decides it.

Every kind supports ``metadata.name`` and ``metadata.namespace``; a few built-in kinds support more (a
Secret's ``type``, an Event's ``involvedObject.*``, ``reason``...). Any other field is the 400
kube-apiserver answers: ``field label not supported: spec.x``. The syntax and the matching are the
client side's (:mod:`clusterclass.kube.fieldselectors`); the store checks a selector here before it
lists or watches with it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from clusterclass.kube.errors import BadRequest
from clusterclass.kube.fieldselectors import FieldSelector, parse_field_selector

if TYPE_CHECKING:
    from clusterclass.apiserver.store import KindInfo

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


def parse(text: str | FieldSelector | None, info: KindInfo) -> FieldSelector:
    """The selector ``text`` describes for ``info``; BadRequest for bad syntax or an unsupported field."""
    selector = parse_field_selector(text)
    supported = COMMON_FIELDS | EXTRA_FIELDS.get((info.group, info.kind), frozenset())
    for requirement in selector.requirements:
        if requirement.field not in supported:
            raise BadRequest.new(_unsupported(requirement.field, info, supported))
    return selector


def _unsupported(field: str, info: KindInfo, supported: frozenset[str]) -> str:
    """kube-apiserver's words for a field it cannot select on (ConfigMaps word it their own way)."""
    if (info.group, info.kind) == ("", "ConfigMap"):
        return f'"{field}" is not a known field selector: only ' + ", ".join(f'"{name}"' for name in sorted(supported))
    return f"field label not supported: {field}"
