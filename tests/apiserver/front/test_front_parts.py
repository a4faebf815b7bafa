"""The front's small parts on their own: strategic merge patch, protobuf bodies, JSONPath, field selectors, Accept."""

from __future__ import annotations

import base64
from typing import Any

import pytest

from clusterclass.apiserver import fieldselectors as fieldselector
from clusterclass.apiserver.front import jsonpath, protobuf
from clusterclass.apiserver.front.catalog import human_duration
from clusterclass.apiserver.front.negotiation import negotiate
from clusterclass.apiserver.front.strategic import strategic_merge_patch
from clusterclass.apiserver.store import KindInfo
from clusterclass.kube.errors import ApiError, BadRequest

CONFIG_MAPS = KindInfo(
    group="", kind="ConfigMap", plural="configmaps", namespaced=True, status_subresource=False, generation=False
)
CLUSTERS = KindInfo(
    group="cluster.x-k8s.io",
    kind="Cluster",
    plural="clusters",
    namespaced=True,
    status_subresource=True,
    generation=True,
)

# -- strategic merge patch ---------------------------------------------------------------------------

BASE: dict[str, Any] = {
    "metadata": {
        "name": "cm",
        "labels": {"a": "1", "b": "2"},
        "finalizers": ["x/a", "x/b"],
        "ownerReferences": [
            {"uid": "u1", "kind": "A", "name": "one"},
            {"uid": "u2", "kind": "B", "name": "two"},
        ],
    },
    "data": {"k": "v", "gone": "soon"},
}


@pytest.mark.parametrize(
    ("patch", "expected"),
    [
        # maps merge, null deletes
        ({"data": {"gone": None, "new": "n"}}, {**BASE, "data": {"k": "v", "new": "n"}}),
        # finalizers are a set: values are added, not replaced
        (
            {"metadata": {"finalizers": ["x/c", "x/a"]}},
            {**BASE, "metadata": {**BASE["metadata"], "finalizers": ["x/a", "x/b", "x/c"]}},
        ),
        # ... and removed with $deleteFromPrimitiveList
        (
            {"metadata": {"$deleteFromPrimitiveList/finalizers": ["x/a"]}},
            {**BASE, "metadata": {**BASE["metadata"], "finalizers": ["x/b"]}},
        ),
        # ... and ordered with $setElementOrder
        (
            {"metadata": {"$setElementOrder/finalizers": ["x/b", "x/a"]}},
            {**BASE, "metadata": {**BASE["metadata"], "finalizers": ["x/b", "x/a"]}},
        ),
        # ownerReferences merge by uid; $patch: delete removes one
        (
            {"metadata": {"ownerReferences": [{"uid": "u2", "name": "renamed"}, {"uid": "u1", "$patch": "delete"}]}},
            {
                **BASE,
                "metadata": {**BASE["metadata"], "ownerReferences": [{"uid": "u2", "kind": "B", "name": "renamed"}]},
            },
        ),
        # $patch: replace on a map replaces it whole
        ({"data": {"$patch": "replace", "only": "this"}}, {**BASE, "data": {"only": "this"}}),
        # $patch: delete on a map removes it
        ({"data": {"$patch": "delete"}}, {"metadata": BASE["metadata"]}),
        # $retainKeys keeps only the listed keys
        ({"data": {"$retainKeys": ["k"], "k": "w"}}, {**BASE, "data": {"k": "w"}}),
        # lists without a strategy are replaced
        ({"spec": {"list": [1, 2]}}, {**BASE, "spec": {"list": [1, 2]}}),
    ],
)
def test_strategic_merge_patch(patch: dict[str, Any], expected: dict[str, Any]) -> None:
    assert strategic_merge_patch(BASE, patch) == expected
    assert BASE["metadata"]["finalizers"] == ["x/a", "x/b"]  # the original is never changed


def test_strategic_merge_patch_errors() -> None:
    with pytest.raises(BadRequest, match="does not contain declared merge key: uid"):
        strategic_merge_patch(BASE, {"metadata": {"ownerReferences": [{"name": "no-uid"}]}})
    with pytest.raises(BadRequest, match="Unknown patch type: bogus"):
        strategic_merge_patch(BASE, {"data": {"$patch": "bogus"}})
    with pytest.raises(BadRequest, match="may not delete the whole object"):
        strategic_merge_patch(BASE, {"$patch": "delete"})


# -- protobuf ----------------------------------------------------------------------------------------


def _varint(value: int) -> bytes:
    value &= (1 << 64) - 1
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _field(number: int, payload: bytes | int | str) -> bytes:
    if isinstance(payload, int):
        return _varint(number << 3) + _varint(payload)
    data = payload.encode() if isinstance(payload, str) else payload
    return _varint(number << 3 | 2) + _varint(len(data)) + data


def _entry(number: int, key: str, value: bytes | str) -> bytes:
    return _field(number, _field(1, key) + _field(2, value))


def _envelope(api_version: str, kind: str, raw: bytes) -> bytes:
    type_meta = _field(1, api_version) + _field(2, kind)
    return protobuf.MAGIC + _field(1, type_meta) + _field(2, raw) + _field(3, "") + _field(4, "")


def _meta(name: str) -> bytes:
    zero_time = _field(1, protobuf.ZERO_TIME_SECONDS) + _field(2, 0)
    return _field(1, name) + _field(2, "") + _field(3, "") + _field(6, "") + _field(7, 0) + _field(8, zero_time)


def test_protobuf_secret_as_kubectl_create_sends_it() -> None:
    raw = _field(1, _meta("s1") + _entry(11, "app", "web")) + _entry(2, "a", b"\x00b") + _field(3, "Opaque")
    decoded = protobuf.decode(_envelope("v1", "Secret", raw), kind="Secret")
    assert decoded == {
        "kind": "Secret",
        "apiVersion": "v1",
        "metadata": {"name": "s1", "labels": {"app": "web"}},
        "data": {"a": base64.b64encode(b"\x00b").decode()},
        "type": "Opaque",
    }


def test_protobuf_namespace_and_config_map() -> None:
    namespace = protobuf.decode(
        _envelope("v1", "Namespace", _field(1, _meta("n1")) + _field(2, b"") + _field(3, _field(1, ""))),
        kind="Namespace",
    )
    assert namespace == {"kind": "Namespace", "apiVersion": "v1", "metadata": {"name": "n1"}, "spec": {}, "status": {}}
    config_map = protobuf.decode(
        _envelope("v1", "ConfigMap", _field(1, _meta("c1")) + _entry(2, "k", "v") + _field(4, 0)), kind="ConfigMap"
    )
    assert config_map == {
        "kind": "ConfigMap",
        "apiVersion": "v1",
        "metadata": {"name": "c1"},
        "data": {"k": "v"},
        "immutable": False,
    }


def test_protobuf_of_other_kinds_or_garbage_is_refused() -> None:
    with pytest.raises(ApiError) as refused:
        protobuf.decode(_envelope("apps/v1", "Deployment", b""), kind="Deployment")
    assert refused.value.code == 415
    with pytest.raises(BadRequest, match="invalid protobuf"):
        protobuf.decode(protobuf.MAGIC + b"\x0a\x05ab", kind="ConfigMap")
    with pytest.raises(BadRequest, match="missing protobuf prefix"):
        protobuf.decode(b"{}", kind="ConfigMap")


# -- JSONPath, field selectors, Accept, ages ---------------------------------------------------------

MACHINE = {
    "metadata": {
        "labels": {"cluster.x-k8s.io/cluster-name": "c1"},
        "ownerReferences": [{"kind": "MachineSet", "name": "ms"}],
    },
    "status": {
        "conditions": [{"type": "Ready", "status": "True"}, {"type": "Other", "status": "False"}],
        "replicas": 3,
    },
}


@pytest.mark.parametrize(
    ("path", "found"),
    [
        (".status.replicas", [3]),
        (".metadata.labels['cluster\\.x-k8s\\.io/cluster-name']", ["c1"]),
        ('.status.conditions[?(@.type=="Ready")].status', ["True"]),
        (".status.conditions[*].type", ["Ready", "Other"]),
        (".status.conditions[1].status", ["False"]),
        ('.metadata.ownerReferences[?(@.kind=="Machine")].name', []),
        (".spec.missing", []),
    ],
)
def test_printer_column_paths(path: str, found: list[Any]) -> None:
    assert jsonpath.find(path, MACHINE) == found


def test_unsupported_printer_column_path() -> None:
    with pytest.raises(jsonpath.JsonPathError):
        jsonpath.compile_path(".status..replicas | length")


def test_field_selectors() -> None:
    obj = {"metadata": {"name": "a,b", "namespace": "default"}}
    assert fieldselector.parse(r"metadata.name=a\,b", CONFIG_MAPS).matches(obj)
    assert fieldselector.parse("metadata.namespace!=default", CLUSTERS).matches(obj) is False
    assert fieldselector.parse("metadata.name==x,metadata.namespace=default", CLUSTERS).matches(obj) is False
    assert fieldselector.parse("", CLUSTERS).empty
    with pytest.raises(BadRequest, match=r"^field label not supported: spec\.x$"):
        fieldselector.parse("spec.x=1", CLUSTERS)
    with pytest.raises(BadRequest, match="can't understand"):
        fieldselector.parse("metadata.name", CLUSTERS)


def test_accept_negotiation() -> None:
    kubectl_get = ",".join(
        [
            "application/json;as=Table;v=v1;g=meta.k8s.io",
            "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
            "application/json",
        ]
    )
    assert negotiate(kubectl_get, table=True).representation == "table"
    assert negotiate(kubectl_get).representation == "json"  # endpoints that serve no tables fall back
    assert negotiate(None).representation == "json"
    assert negotiate("*/*", table=True).representation == "json"
    with pytest.raises(ApiError) as refused:
        negotiate("application/vnd.kubernetes.protobuf")
    assert refused.value.code == 406


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [
        (-5, "<invalid>"),
        (-1, "0s"),
        (59, "59s"),
        (119, "119s"),
        (150, "2m30s"),
        (600, "10m"),
        (3 * 3600 + 60, "3h1m"),
        (10 * 3600, "10h"),
        (50 * 3600, "2d2h"),
        (30 * 86400, "30d"),
        (800 * 86400, "2y70d"),
        (3000 * 86400, "8y"),
    ],
)
def test_ages_read_like_kubectl(seconds: int, shown: str) -> None:
    assert human_duration(seconds) == shown
