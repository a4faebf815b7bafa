"""Request bodies in Kubernetes protobuf, for the few built-in kinds kubectl sends that way.

kubectl's typed clients (``kubectl create namespace|configmap|secret``) send their object as
``application/vnd.kubernetes.protobuf`` and accept JSON back. Nothing else in the front needs
protobuf: every other kubectl command, the Python client and our own HTTP backend speak JSON, and
answers are always JSON (clients that send protobuf list JSON as acceptable too).

The envelope is the magic ``k8s\\x00`` followed by a ``runtime.Unknown`` message (``typeMeta`` = 1
with ``apiVersion`` = 1 and ``kind`` = 2, ``raw`` = 2 holding the object's own message). The object
messages are decoded with the field numbers of ``k8s.io/api/core/v1/generated.proto`` for
Namespace, ConfigMap and Secret (and ``ObjectMeta`` from apimachinery), into the JSON form
kube-apiserver would have decoded: zero values that Go's JSON leaves out are left out, bytes become
base64, timestamps RFC 3339. Any other kind in protobuf is 415, as for a media type we do not read.

Decoding only, a few dozen lines of wire format: not worth a protobuf dependency and generated code.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterator
from datetime import UTC, datetime
from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.apiserver.front.responses import unknown_media_type
from clusterclass.kube.errors import BadRequest
from clusterclass.kube.gotext import rfc3339

MEDIA_TYPE = "application/vnd.kubernetes.protobuf"
MAGIC = b"k8s\x00"
#: seconds of Go's zero time (0001-01-01), which a non-pointer metav1.Time encodes when unset
ZERO_TIME_SECONDS = -62135596800

# A schema maps a field number to (JSON name, type); types: "string", "bytes", "int64", "bool",
# "time", "strings" (repeated string), "map" (map<string,string>), "bytemap" (map<string,bytes>),
# "json" (FieldsV1: raw JSON bytes), or a nested schema (dict), or [schema] for a repeated message.
Schema = dict[int, tuple[str, Any]]

TIME: Schema = {1: ("seconds", "int64"), 2: ("nanos", "int64")}
OWNER_REFERENCE: Schema = {
    1: ("kind", "string"),
    3: ("name", "string"),
    4: ("uid", "string"),
    5: ("apiVersion", "string"),
    6: ("controller", "bool"),
    7: ("blockOwnerDeletion", "bool"),
}
MANAGED_FIELDS_ENTRY: Schema = {
    1: ("manager", "string"),
    2: ("operation", "string"),
    3: ("apiVersion", "string"),
    4: ("time", "time"),
    6: ("fieldsType", "string"),
    7: ("fieldsV1", "json"),
    8: ("subresource", "string"),
}
OBJECT_META: Schema = {
    1: ("name", "string"),
    2: ("generateName", "string"),
    3: ("namespace", "string"),
    4: ("selfLink", "string"),
    5: ("uid", "string"),
    6: ("resourceVersion", "string"),
    7: ("generation", "int64"),
    8: ("creationTimestamp", "time"),
    9: ("deletionTimestamp", "time"),
    10: ("deletionGracePeriodSeconds", "int64"),
    11: ("labels", "map"),
    12: ("annotations", "map"),
    13: ("ownerReferences", [OWNER_REFERENCE]),
    14: ("finalizers", "strings"),
    17: ("managedFields", [MANAGED_FIELDS_ENTRY]),
}
NAMESPACE_CONDITION: Schema = {
    1: ("type", "string"),
    2: ("status", "string"),
    4: ("lastTransitionTime", "time"),
    5: ("reason", "string"),
    6: ("message", "string"),
}

#: (apiVersion, kind) -> schema of the object message
KINDS: dict[tuple[str, str], Schema] = {
    ("v1", "Namespace"): {
        1: ("metadata", OBJECT_META),
        2: ("spec", {1: ("finalizers", "strings")}),
        3: ("status", {1: ("phase", "string"), 2: ("conditions", [NAMESPACE_CONDITION])}),
    },
    ("v1", "ConfigMap"): {
        1: ("metadata", OBJECT_META),
        2: ("data", "map"),
        3: ("binaryData", "bytemap"),
        4: ("immutable", "bool"),
    },
    ("v1", "Secret"): {
        1: ("metadata", OBJECT_META),
        2: ("data", "bytemap"),
        3: ("type", "string"),
        4: ("stringData", "map"),
        5: ("immutable", "bool"),
    },
}
#: fields a pointer in Go, so kept even when false
_POINTER_BOOLS = frozenset({"immutable", "controller", "blockOwnerDeletion"})


class _Malformed(ValueError):
    pass


def _varint(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if position >= len(data):
            raise _Malformed("truncated varint")
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, position
        shift += 7
        if shift > 63:
            raise _Malformed("varint too long")


def _fields(data: bytes) -> Iterator[tuple[int, int, Any]]:
    """(field number, wire type, value) of each field of one message; values are ints or bytes."""
    position = 0
    value: int | bytes
    while position < len(data):
        key, position = _varint(data, position)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, position = _varint(data, position)
        elif wire == 2:
            length, position = _varint(data, position)
            if position + length > len(data):
                raise _Malformed("truncated field")
            value, position = data[position : position + length], position + length
        elif wire == 1:
            value, position = int.from_bytes(data[position : position + 8], "little"), position + 8
        elif wire == 5:
            value, position = int.from_bytes(data[position : position + 4], "little"), position + 4
        else:
            raise _Malformed(f"unsupported wire type {wire}")
        yield number, wire, value


def _signed(value: int) -> int:
    return value - (1 << 64) if value >= 1 << 63 else value


def _text(value: Any) -> str:
    if not isinstance(value, bytes):
        raise _Malformed("expected a length-delimited string")
    return value.decode()


def _time(value: bytes) -> str | None:
    parts = _message(value, TIME)
    seconds = parts.get("seconds", 0)
    if seconds == ZERO_TIME_SECONDS and not parts.get("nanos"):
        return None
    return rfc3339(datetime.fromtimestamp(seconds, UTC))


def _map_entry(value: bytes, binary: bool) -> tuple[str, str]:
    key, item = "", b""
    for number, _, field_value in _fields(value):
        if number == 1:
            key = _text(field_value)
        elif number == 2:
            item = field_value
    if binary:
        return key, base64.b64encode(item).decode()
    return key, item.decode() if isinstance(item, bytes) else str(item)


def _message(data: bytes, schema: Schema) -> dict[str, Any]:
    """The JSON form of one message, zero values left out as Go's ``omitempty`` does."""
    result: dict[str, Any] = {}
    for number, _, value in _fields(data):
        known = schema.get(number)
        if known is None:
            continue
        name, kind = known
        if isinstance(kind, dict):
            result[name] = _message(_bytes(value), kind)
        elif isinstance(kind, list):
            result.setdefault(name, []).append(_message(_bytes(value), kind[0]))
        elif kind == "string":
            result[name] = _text(value)
        elif kind == "bytes":
            result[name] = base64.b64encode(_bytes(value)).decode()
        elif kind == "int64":
            result[name] = _signed(int(value))
        elif kind == "bool":
            result[name] = bool(value)
        elif kind == "time":
            result[name] = _time(_bytes(value))
        elif kind == "strings":
            result.setdefault(name, []).append(_text(value))
        elif kind in ("map", "bytemap"):
            key, item = _map_entry(_bytes(value), kind == "bytemap")
            result.setdefault(name, {})[key] = item
        elif kind == "json":
            raw = _message(_bytes(value), {1: ("raw", "bytes")}).get("raw")
            result[name] = json.loads(base64.b64decode(raw)) if raw else {}
    return {name: value for name, value in result.items() if name in _POINTER_BOOLS or value not in ("", 0, None)}


def _bytes(value: Any) -> bytes:
    if not isinstance(value, bytes):
        raise _Malformed("expected a length-delimited field")
    return value


def decode(body: bytes, *, kind: str) -> Obj:
    """The object in a protobuf request body for a ``kind`` endpoint; 415 for a kind we cannot read."""
    if not body.startswith(MAGIC):
        raise BadRequest.new(f"the object provided is unrecognized (must be of type {kind}): missing protobuf prefix")
    try:
        envelope = dict((number, value) for number, _, value in _fields(body[len(MAGIC) :]))
        type_meta = _message(_bytes(envelope.get(1, b"")), {1: ("apiVersion", "string"), 2: ("kind", "string")})
        api_version, found_kind = type_meta.get("apiVersion", ""), type_meta.get("kind", "")
        schema = KINDS.get((api_version, found_kind))
        if schema is None:
            raise unknown_media_type()
        obj = _message(_bytes(envelope.get(2, b"")), schema)
    except (_Malformed, UnicodeDecodeError, ValueError) as err:
        raise BadRequest.new(
            f"the object provided is unrecognized (must be of type {kind}): invalid protobuf: {err}"
        ) from err
    return {"kind": found_kind, "apiVersion": api_version, **obj}
