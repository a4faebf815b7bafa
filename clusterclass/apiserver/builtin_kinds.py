"""The built-in kinds of the memory store, decoded and prepared as kube-apiserver's typed registries do.

A custom resource is decoded by its CRD (:meth:`clusterclass.apiserver.crd.definitions.CrdInfo.decode`). A built-in
kind has a Go type instead, and kube-apiserver's JSON decoding into it does what this module does
for the few built-in kinds a management cluster needs (Namespace, Secret, ConfigMap, Event, Lease,
CustomResourceDefinition) and a simulated workload cluster adds (Node, Pod):

- ``metadata`` is coerced to ObjectMeta (:func:`~clusterclass.apiserver.objectmeta.coerce_object_meta`);
- top-level fields the type does not have are dropped, reported as ``unknown field "x"`` (a warning
  with ``fieldValidation=Warn``, a 400 with ``Strict``), as the typed decoder drops them;
- a ConfigMap's or Secret's ``data`` holds strings; a Secret's ``data`` values are base64 (a 400
  otherwise), its ``stringData`` is encoded into ``data`` (winning on a shared key) and not kept,
  and its ``type`` defaults to ``Opaque``;
- a new Namespace is ``Active`` with the ``kubernetes`` finalizer; a Namespace always carries the
  ``kubernetes.io/metadata.name`` label, and an update never changes its ``spec.finalizers``.

Verified against kube-apiserver 1.37 where the contract suite pins them down.
"""

from __future__ import annotations

import base64
import binascii
import json
import re
from collections.abc import Mapping
from datetime import datetime

from clusterclass.api.objects import Obj
from clusterclass.apiserver.crd.controllers import condition
from clusterclass.apiserver.crd.definitions import FieldValidation
from clusterclass.apiserver.objectmeta import MalformedMetadata, coerce_object_meta
from clusterclass.kube.errors import BadRequest
from clusterclass.kube.gotext import json_kind

KindKey = tuple[str, str]

#: the ``spec.finalizers`` entry the namespace controller removes once a deleted namespace is empty
NAMESPACE_FINALIZER = "kubernetes"
#: the label kube-apiserver keeps on every Namespace, with its name
NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name"

_COMMON = frozenset({"apiVersion", "kind", "metadata"})

#: the top-level JSON fields of each built-in type
KNOWN_FIELDS: dict[KindKey, frozenset[str]] = {
    ("", "Namespace"): _COMMON | {"spec", "status"},
    ("", "ConfigMap"): _COMMON | {"data", "binaryData", "immutable"},
    ("", "Secret"): _COMMON | {"data", "stringData", "type", "immutable"},
    ("", "Event"): _COMMON
    | {
        "involvedObject",
        "reason",
        "message",
        "source",
        "firstTimestamp",
        "lastTimestamp",
        "count",
        "type",
        "eventTime",
        "series",
        "action",
        "related",
        "reportingComponent",
        "reportingInstance",
    },
    ("coordination.k8s.io", "Lease"): _COMMON | {"spec"},
    ("", "Node"): _COMMON | {"spec", "status"},
    ("", "Pod"): _COMMON | {"spec", "status"},
    ("apiextensions.k8s.io", "CustomResourceDefinition"): _COMMON | {"spec", "status"},
}

_BASE64 = re.compile(r"[A-Za-z0-9+/=]")


def decode(kind_key: KindKey, version: str, obj: Obj, field_validation: FieldValidation = "Warn") -> list[str]:
    """Decode a request body of a built-in kind in place; the warnings to send (``Warn`` only).

    Raises :class:`~clusterclass.kube.errors.BadRequest` with kube-apiserver's message when the
    body does not decode, or has unknown fields and ``field_validation`` is ``Strict``.
    """
    kind = kind_key[1]
    try:
        meta, unknown = coerce_object_meta(obj.get("metadata"))
    except MalformedMetadata as err:
        raise decode_error(kind, version, str(err)) from None
    obj["metadata"] = meta if meta is not None else {}
    known = KNOWN_FIELDS.get(kind_key)
    if known is not None:
        extra = [key for key in obj if key not in known]
        for key in extra:
            del obj[key]
        unknown = [*unknown, *extra]
    if unknown and field_validation == "Strict":
        detail = ", ".join(f"unknown field {json.dumps(path)}" for path in unknown)
        raise decode_error(kind, version, f"strict decoding error: {detail}")
    if kind_key in (("", "ConfigMap"), ("", "Secret")):
        _check_strings(kind, version, obj, "data")
    if kind_key == ("", "Secret"):
        _decode_secret(version, obj)
    if kind_key == ("", "Namespace") and obj["metadata"].get("name"):
        _label_namespace(obj)  # the Namespace defaulting: owned by whoever writes it
    return [f"unknown field {json.dumps(path)}" for path in unknown] if field_validation == "Warn" else []


def decode_error(kind: str, version: str, message: str) -> BadRequest:
    """kube-apiserver's 400 for a body it cannot decode."""
    text = f'{kind} in version "{version}" cannot be handled as a {kind}: {message}'
    return BadRequest.new(text)


def _check_strings(kind: str, version: str, obj: Obj, field: str) -> None:
    values = obj.get(field)
    if values is None:
        return
    go_type = "[]uint8" if kind == "Secret" else "string"
    if not isinstance(values, Mapping):
        raise decode_error(
            kind, version, f"json: cannot unmarshal {json_kind(values)} into Go struct field {kind}.{field} of type "
            f"map[string]{go_type}",
        )  # fmt: skip
    for value in values.values():
        if value is not None and not isinstance(value, str):
            raise decode_error(
                kind,
                version,
                f"json: cannot unmarshal {json_kind(value)} into Go struct field {kind}.{field} of type {go_type}",
            )


def _decode_secret(version: str, obj: Obj) -> None:
    data: dict[str, str] = {key: value or "" for key, value in (obj.get("data") or {}).items()}
    for value in data.values():
        offset = _base64_error(value)
        if offset is not None:
            raise decode_error("Secret", version, f"illegal base64 data at input byte {offset}")
    string_data = obj.pop("stringData", None)
    if string_data is not None:
        _check_strings("Secret", version, {"stringData": string_data}, "stringData")
        for key, value in string_data.items():
            data[key] = base64.b64encode((value or "").encode()).decode()
    if data:
        obj["data"] = data
    else:
        obj.pop("data", None)
    if not obj.get("type"):
        obj["type"] = "Opaque"


def _base64_error(text: str) -> int | None:
    """The byte offset Go's base64 decoder reports for ``text``, or None when it decodes."""
    for i, char in enumerate(text):
        if not _BASE64.match(char):
            return i
    try:
        base64.b64decode(text, validate=True)
    except (binascii.Error, ValueError):
        padding = text.find("=")
        return padding if padding >= 0 else len(text) - len(text) % 4
    return None


#: the Go zero value of each built-in type that has always-present maps: what kube-apiserver's field
#: manager compares a create against (so ``f:spec`` gets no ``"."`` mark), verified on 1.37
_ZERO: dict[KindKey, Obj] = {
    ("", "Namespace"): {"spec": {}, "status": {}},
    ("coordination.k8s.io", "Lease"): {"spec": {}},
    ("", "Event"): {"involvedObject": {}, "source": {}},
    ("apiextensions.k8s.io", "CustomResourceDefinition"): {"spec": {"names": {}}, "status": {"acceptedNames": {}}},
}


def zero_value(kind_key: KindKey, obj: Obj) -> Obj | None:
    """The empty object a create of ``obj`` is compared against by the field manager (None: nothing at all)."""
    zero = _ZERO.get(kind_key)
    if zero is None:
        return None
    return {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), "metadata": {}, **zero}


# -- Namespaces -----------------------------------------------------------------------------------


def prepare_namespace(ns: Obj) -> None:
    """A new Namespace is Active with the ``kubernetes`` finalizer (the registry's strategy) and its name label."""
    spec: Obj = ns["spec"] if isinstance(ns.get("spec"), dict) else {}
    finalizers = list(spec.get("finalizers") or [])
    if NAMESPACE_FINALIZER not in finalizers:
        finalizers.append(NAMESPACE_FINALIZER)
    ns["spec"] = {**spec, "finalizers": finalizers}
    ns["status"] = {"phase": "Active"}
    _label_namespace(ns)


def update_namespace(new: Obj, old: Obj) -> None:
    """An update never changes a Namespace's ``spec.finalizers`` (only ``/finalize`` does) nor its name label."""
    finalizers = (old.get("spec") or {}).get("finalizers")
    spec = dict(new.get("spec") or {}) if isinstance(new.get("spec"), dict) else {}
    if finalizers is None:
        spec.pop("finalizers", None)
    else:
        spec["finalizers"] = finalizers
    new["spec"] = spec
    _label_namespace(new)


def _label_namespace(ns: Obj) -> None:
    meta = ns["metadata"]
    labels = meta.get("labels") if isinstance(meta.get("labels"), dict) else {}
    meta["labels"] = {**labels, NAMESPACE_NAME_LABEL: meta["name"]}


def namespace_conditions(remaining: dict[str, int], finalizers: dict[str, int], now: datetime) -> list[Obj]:
    """The conditions the namespace controller reports while a deleted namespace still has content.

    ``remaining`` counts objects by resource (``configmaps``, ``clusters.cluster.x-k8s.io``) and
    ``finalizers`` the objects holding each finalizer, as kube-controller-manager words them.
    """
    resources = ", ".join(f"{resource} has {count} resource instances" for resource, count in sorted(remaining.items()))
    held = ", ".join(f"{finalizer} in {count} resource instances" for finalizer, count in sorted(finalizers.items()))
    return [
        condition("NamespaceDeletionDiscoveryFailure", "False", "ResourcesDiscovered",
                  "All resources successfully discovered", now),
        condition("NamespaceDeletionGroupVersionParsingFailure", "False", "ParsedGroupVersions",
                  "All legacy kube types successfully parsed", now),
        condition("NamespaceDeletionContentFailure", "False", "ContentDeleted",
                  "All content successfully deleted, may be waiting on finalization", now),
        condition("NamespaceContentRemaining", "True", "SomeResourcesRemain",
                  f"Some resources are remaining: {resources}", now),
        condition("NamespaceFinalizersRemaining", "True", "SomeFinalizersRemain",
                  f"Some content in the namespace has finalizers remaining: {held}", now)
        if finalizers
        else condition("NamespaceFinalizersRemaining", "False", "ContentHasNoFinalizers",
                       "All content-preserving finalizers finished", now),
    ]  # fmt: skip
