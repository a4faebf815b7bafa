"""CustomResourceDefinitions: parsing, and custom resource writes decoded and validated as kube-apiserver does.

The expected messages were recorded from a real kube-apiserver v1.37.2 with the test CRDs below
installed; ``test_parity_with_the_real_apiserver`` replays the cases against a real one when the
binaries are there (and in CI, where they must be).
"""

from __future__ import annotations

import copy
import json
import time
from typing import Any

import pytest
from support.crds import crd_version, make_crd
from support.real_apiserver import RealApiServer

from clusterclass.apiserver.apply.fieldtypes import ITEM, VALUE
from clusterclass.apiserver.crd.controllers import bundled_crds
from clusterclass.apiserver.crd.definitions import CrdInfo, default_crd, load_bundled_crds, parse_crd
from clusterclass.kube.errors import ApiError, BadRequest, Invalid

BLOCKED = (
    "<nil>: Invalid value: null: some validation rules were not checked because the object was invalid; correct the "
    "existing errors to complete validation"
)


def _schema(spec_properties: dict[str, Any], **spec_extra: Any) -> dict[str, Any]:
    return {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": {"type": "object", "properties": spec_properties, **spec_extra},
            "status": {"type": "object", "properties": {"replicas": {"type": "integer"}, "ready": {"type": "boolean"}}},
        },
    }


WIDGET_CRD: dict[str, Any] = make_crd(
    "test.example.com",
    "Widget",
    [
        crd_version(
            "v1",
            _schema(
                {
                    "name": {"type": "string", "minLength": 3, "maxLength": 10, "pattern": "^[a-z]+$"},
                    "replicas": {
                        "type": "integer",
                        "format": "int32",
                        "minimum": 0,
                        "maximum": 1000000,
                        "default": 1,
                    },
                    "maxReplicas": {"type": "integer", "default": 10},
                    "ratio": {"type": "number", "exclusiveMinimum": True, "minimum": 0, "multipleOf": 0.5},
                    "mode": {"type": "string", "enum": ["a", "b"], "default": "a"},
                    "when": {"type": "string", "format": "date-time"},
                    "tags": {
                        "type": "array",
                        "items": {"type": "string"},
                        "x-kubernetes-list-type": "set",
                        "maxItems": 3,
                    },
                    "ports": {
                        "type": "array",
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["name"],
                        "items": {
                            "type": "object",
                            "required": ["name"],
                            "properties": {"name": {"type": "string"}, "port": {"type": "integer"}},
                        },
                    },
                    "uniq": {"type": "array", "items": {"type": "integer"}, "minItems": 1},
                    "labels": {
                        "type": "object",
                        "additionalProperties": {"type": "string"},
                        "maxProperties": 2,
                        "minProperties": 1,
                    },
                    "nested": {
                        "type": "object",
                        "default": {},
                        "properties": {
                            "a": {"type": "string", "default": "x"},
                            "b": {"type": "object", "properties": {"c": {"type": "integer", "default": 5}}},
                        },
                    },
                    "free": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                        "properties": {"known": {"type": "object", "properties": {"k": {"type": "string"}}}},
                    },
                    "ios": {"x-kubernetes-int-or-string": True},
                    "iosAny": {
                        "x-kubernetes-int-or-string": True,
                        "anyOf": [{"type": "integer"}, {"type": "string"}],
                    },
                    "nullableStr": {"type": "string", "nullable": True},
                    "atomicMap": {
                        "type": "object",
                        "x-kubernetes-map-type": "atomic",
                        "properties": {"x": {"type": "string"}},
                    },
                    "immutable": {
                        "type": "string",
                        "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "is immutable"}],
                    },
                    "emb": {
                        "type": "object",
                        "x-kubernetes-embedded-resource": True,
                        "x-kubernetes-preserve-unknown-fields": True,
                    },
                    "items": {
                        "type": "array",
                        "items": {
                            "type": "object",
                            "properties": {"n": {"type": "integer", "default": 7}, "s": {"type": "string"}},
                        },
                    },
                    "strmap": {"type": "object", "additionalProperties": {"type": "string"}},
                    "objmap": {
                        "type": "object",
                        "additionalProperties": {
                            "type": "object",
                            "properties": {"d": {"type": "string", "default": "dd"}},
                        },
                    },
                    "anything": {"type": "object", "additionalProperties": True},
                    "closed": {"type": "object", "additionalProperties": False},
                },
                required=["name"],
                **{
                    "x-kubernetes-validations": [
                        {
                            "rule": "self.replicas <= self.maxReplicas",
                            "message": "replicas must not exceed maxReplicas",
                        }
                    ]
                },
            ),
            subresources={
                "status": {},
                "scale": {"specReplicasPath": ".spec.replicas", "statusReplicasPath": ".status.replicas"},
            },
        )
    ],
    singular="widget",
    listKind="WidgetList",
)

_LIMITS = {"maxItems": 10}
GADGET_CRD: dict[str, Any] = make_crd(
    "test.example.com",
    "Gadget",
    [
        crd_version(
            "v1",
            _schema(
                {
                    "arr": {
                        "type": "array",
                        **_LIMITS,
                        "items": {"type": "string", "maxLength": 10},
                        "x-kubernetes-validations": [{"rule": "self.size() < 2", "message": "arr too big"}],
                    },
                    "num": {
                        "type": "integer",
                        "x-kubernetes-validations": [
                            {"rule": "self < 5"},
                            {"rule": "self < 6", "messageExpression": "'num too big'"},
                        ],
                    },
                    "m": {
                        "type": "object",
                        "maxProperties": 10,
                        "additionalProperties": {"type": "string", "maxLength": 10},
                        "x-kubernetes-validations": [{"rule": "size(self) < 2"}],
                    },
                    "r": {
                        "type": "object",
                        "properties": {
                            "x": {"type": "string", "maxLength": 10},
                            "y": {"type": "string", "maxLength": 10},
                        },
                        "x-kubernetes-validations": [
                            {
                                "rule": "has(self.x) == has(self.y)",
                                "message": "x and y together",
                                "fieldPath": ".x",
                                "reason": "FieldValueForbidden",
                            },
                            {
                                "rule": "!has(self.x) || self.x != 'bad'",
                                "reason": "FieldValueRequired",
                                "message": "no bad",
                            },
                            {
                                "rule": "!has(self.y) || self.y != 'dup'",
                                "reason": "FieldValueDuplicate",
                                "message": "no dup",
                            },
                        ],
                    },
                    "ios": {
                        "x-kubernetes-int-or-string": True,
                        "x-kubernetes-validations": [
                            {"rule": "type(self) == int ? self < 5 : true", "message": "small"}
                        ],
                    },
                    "keyed": {
                        "type": "array",
                        **_LIMITS,
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["k"],
                        "items": {
                            "type": "object",
                            "required": ["k"],
                            "properties": {
                                "k": {"type": "string", "maxLength": 10},
                                "v": {
                                    "type": "string",
                                    "maxLength": 10,
                                    "x-kubernetes-validations": [{"rule": "self == oldSelf", "message": "v immutable"}],
                                },
                            },
                        },
                    },
                    "listmulti": {
                        "type": "array",
                        **_LIMITS,
                        "x-kubernetes-list-type": "map",
                        "x-kubernetes-list-map-keys": ["a", "b"],
                        "items": {
                            "type": "object",
                            "required": ["a"],
                            "properties": {
                                "a": {"type": "string", "maxLength": 10},
                                "b": {"type": "integer", "default": 0},
                            },
                        },
                    },
                    "atomic": {
                        "type": "array",
                        **_LIMITS,
                        "items": {"type": "object", "properties": {"v": {"type": "string", "maxLength": 10}}},
                        "x-kubernetes-validations": [{"rule": "self.size() < 3"}],
                    },
                }
            ),
        )
    ],
    scope="Cluster",
)


@pytest.fixture(scope="module")
def widget() -> CrdInfo:
    return parse_crd(WIDGET_CRD)


@pytest.fixture(scope="module")
def gadget() -> CrdInfo:
    return parse_crd(GADGET_CRD)


def widget_obj(spec: dict[str, Any], name: str = "w", **meta: Any) -> dict[str, Any]:
    return {
        "apiVersion": "test.example.com/v1",
        "kind": "Widget",
        "metadata": {"name": name, "namespace": "p", **meta},
        "spec": spec,
    }


def gadget_obj(spec: dict[str, Any], name: str = "g") -> dict[str, Any]:
    return {"apiVersion": "test.example.com/v1", "kind": "Gadget", "metadata": {"name": name}, "spec": spec}


def create(info: CrdInfo, obj: dict[str, Any], field_validation: Any = "Ignore") -> dict[str, Any]:
    """The memory store's create path in kube-apiserver's order; the stored object, or the ApiError raised."""
    version = obj["apiVersion"].split("/")[1]
    decoded = copy.deepcopy(obj)
    info.decode(decoded, version, field_validation=field_validation)
    errors = info.create_errors(decoded, version)
    if errors:
        raise info.invalid(decoded["metadata"]["name"], errors)
    return decoded


def update(info: CrdInfo, new: dict[str, Any], old: dict[str, Any], *, status: bool = False) -> dict[str, Any]:
    version = new["apiVersion"].split("/")[1]
    decoded = copy.deepcopy(new)
    info.decode(decoded, version, field_validation="Ignore")
    if status:
        decoded = {**copy.deepcopy(old), "status": decoded.get("status")}
    errors = info.update_errors(decoded, old, version, status=status)
    if errors:
        raise info.invalid(decoded["metadata"]["name"], errors)
    return decoded


def outcome(error: ApiError) -> tuple[int, str, list[str]]:
    """Code, message, and the causes in a stable order (kube-apiserver orders some of them at random)."""
    causes = sorted(json.dumps(c, sort_keys=True) for c in (error.details.get("causes") or []))
    return error.code, error.message, causes


# -- create: one case per rule, with the Status message kube-apiserver sends ------------------------

CREATE_CASES: list[tuple[str, dict[str, Any], str]] = [
    (
        "type",
        {"name": "abc", "replicas": "x"},
        '[spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string", '
        ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected int64, "
        f"{BLOCKED}]",
    ),
    (
        "float for int32",
        {"name": "abc", "replicas": 3.5},
        '[spec.replicas: Invalid value: "float64": spec.replicas in body must be of type int32: "float64", '
        '<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.replicas, '
        ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3.5 is of the type float64, expected int64, "
        f"{BLOCKED}]",
    ),
    (
        "bool for int32",
        {"name": "abc", "replicas": True},
        '[spec.replicas: Invalid value: "": spec.replicas in body must be of type int32: "", '
        ".spec.replicas: Invalid value: 0: .spec.replicas accessor error: true is of the type bool, expected int64, "
        f"{BLOCKED}]",
    ),
    (
        "beyond int32",
        {"name": "abc", "replicas": 3000000000},
        '[<nil>: Invalid value: "": Checked value must be of type integer with format int32 in spec.replicas, '
        "spec.replicas: Invalid value: 3000000000: spec.replicas in body should be less than or equal to 1000000, "
        ".spec.replicas: Invalid value: 3000000000: should be less than or equal to 2147483647, "
        "spec: Invalid value: replicas must not exceed maxReplicas]",
    ),
    (
        "fraction for integer",
        {"name": "abc", "maxReplicas": 2.5},
        '[spec.maxReplicas: Invalid value: "number": spec.maxReplicas in body must be of type integer: "number", '
        '<nil>: Invalid value: "": Checked value must be of type integer (default format) in spec.maxReplicas, '
        f"{BLOCKED}]",
    ),
    (
        "maximum",
        {"name": "abc", "replicas": 2000000},
        "[spec.replicas: Invalid value: 2000000: spec.replicas in body should be less than or equal to 1000000, "
        "spec: Invalid value: replicas must not exceed maxReplicas]",
    ),
    (
        "minimum",
        {"name": "abc", "replicas": -1},
        "[spec.replicas: Invalid value: -1: spec.replicas in body should be greater than or equal to 0, "
        ".spec.replicas: Invalid value: -1: should be a non-negative integer]",
    ),
    (
        "exclusive minimum and an integer against a fractional multipleOf",
        {"name": "abc", "ratio": 0},
        "[spec.ratio: Invalid value: 0: factor MultipleOf declared for spec.ratio must be positive: 0, "
        "spec.ratio: Invalid value: 0: spec.ratio in body should be greater than 0]",
    ),
    (
        "multipleOf",
        {"name": "abc", "ratio": 0.7},
        "spec.ratio: Invalid value: 0.7: spec.ratio in body should be a multiple of 0.5",
    ),
    (
        "enum",
        {"name": "abc", "mode": "c"},
        f'[spec.mode: Unsupported value: "c": supported values: "a", "b", {BLOCKED}]',
    ),
    (
        "enum and type",
        {"name": "abc", "mode": 5},
        '[spec.mode: Invalid value: "integer": spec.mode in body must be of type string: "integer", '
        f'spec.mode: Unsupported value: 5: supported values: "a", "b", {BLOCKED}]',
    ),
    ("maxLength", {"name": "abcdefghijkl"}, f"[spec.name: Too long: may not be more than 10 bytes, {BLOCKED}]"),
    ("minLength", {"name": "ab"}, 'spec.name: Invalid value: "ab": spec.name in body should be at least 3 chars long'),
    ("pattern", {"name": "ABCD"}, "spec.name: Invalid value: \"ABCD\": spec.name in body should match '^[a-z]+$'"),
    ("required", {}, f"[spec.name: Required value, {BLOCKED}]"),
    (
        "format",
        {"name": "abc", "when": "yesterday"},
        f'[spec.when: Invalid value: "yesterday": spec.when in body must be of type date-time: "yesterday", {BLOCKED}]',
    ),
    (
        "format decides the type error of a number",
        {"name": "abc", "when": 5},
        f'[spec.when: Invalid value: "int64": spec.when in body must be of type date-time: "int64", {BLOCKED}]',
    ),
    (
        "format decides the type error of an object",
        {"name": "abc", "when": {"a": 1}},
        f'[spec.when: Invalid value: "": spec.when in body must be of type date-time: "", {BLOCKED}]',
    ),
    ("set duplicate", {"name": "abc", "tags": ["a", "a"]}, 'spec.tags[1]: Duplicate value: "a"'),
    (
        "maxItems",
        {"name": "abc", "tags": ["a", "b", "c", "d"]},
        f"[spec.tags: Too many: 4: must have at most 3 items, {BLOCKED}]",
    ),
    (
        "map duplicate",
        {"name": "abc", "ports": [{"name": "a"}, {"name": "a", "port": 2}]},
        'spec.ports[1]: Duplicate value: {"name":"a"}',
    ),
    (
        "map item not an object",
        {"name": "abc", "ports": ["x"]},
        '[spec.ports[0]: Invalid value: "string": spec.ports[0] in body must be of type object: "string", '
        f'spec.ports[0]: Invalid value: "x": must be an object for an array of list-type map, {BLOCKED}]',
    ),
    ("item required", {"name": "abc", "ports": [{"port": 1}]}, f"[spec.ports[0].name: Required value, {BLOCKED}]"),
    (
        "item type",
        {"name": "abc", "items": [{"n": "x"}]},
        '[spec.items[0].n: Invalid value: "string": spec.items[0].n in body must be of type integer: "string", '
        f"{BLOCKED}]",
    ),
    (
        "minItems",
        {"name": "abc", "uniq": []},
        "spec.uniq: Invalid value: 0: spec.uniq in body should have at least 1 items",
    ),
    (
        "maxProperties",
        {"name": "abc", "labels": {"a": "1", "b": "2", "c": "3"}},
        f"[spec.labels: Too many: 3: must have at most 2 items, {BLOCKED}]",
    ),
    (
        "minProperties",
        {"name": "abc", "labels": {}},
        "spec.labels: Invalid value: 0: spec.labels in body should have at least 1 properties",
    ),
    (
        "map value type",
        {"name": "abc", "labels": {"a": 5}},
        '[spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer", '
        f"{BLOCKED}]",
    ),
    (
        "int-or-string",
        {"name": "abc", "ios": True},
        f'[spec.ios: Invalid value: "boolean": spec.ios in body must be of type integer,string: "boolean", {BLOCKED}]',
    ),
    (
        "int-or-string with anyOf",
        {"name": "abc", "iosAny": True},
        '[spec.iosAny: Invalid value: "boolean": spec.iosAny in body must be of type integer,string: "boolean", '
        '<nil>: Invalid value: "": "spec.iosAny" must validate at least one schema (anyOf), '
        f'spec.iosAny: Invalid value: "boolean": spec.iosAny in body must be of type integer: "boolean", {BLOCKED}]',
    ),
    (
        "null array item",
        {"name": "abc", "tags": [None]},
        f'[spec.tags[0]: Invalid value: "null": spec.tags[0] in body must be of type string: "null", {BLOCKED}]',
    ),
    ("CEL rule", {"name": "abc", "replicas": 20}, "spec: Invalid value: replicas must not exceed maxReplicas"),
    (
        "an integral float where CEL wants an integer",
        {"name": "abc", "replicas": 3.0},
        "[.spec.replicas: Invalid value: 0: .spec.replicas accessor error: 3 is of the type float64, expected int64, "
        'spec: Invalid value: "object": invalid data, expected int, got float64 evaluating rule: replicas must not '
        "exceed maxReplicas]",
    ),
    (
        "CEL rule blocked",
        {"name": "abc", "replicas": 20, "mode": "zz"},
        f'[spec.mode: Unsupported value: "zz": supported values: "a", "b", {BLOCKED}]',
    ),
    (
        "object given a string",
        {"name": "abc", "nested": "x"},
        f'[spec.nested: Invalid value: "string": spec.nested in body must be of type object: "string", {BLOCKED}]',
    ),
    (
        "embedded resource",
        {"name": "abc", "emb": {"foo": 1}},
        f"[spec.emb.apiVersion: Required value, spec.emb.kind: Required value, {BLOCKED}]",
    ),
    (
        "additionalProperties false",
        {"name": "abc", "closed": {"x": 1}},
        'spec.closed: Invalid value: "x": spec.closed.x in body is a forbidden property',
    ),
]


@pytest.mark.parametrize(("spec", "message"), [c[1:] for c in CREATE_CASES], ids=[c[0] for c in CREATE_CASES])
def test_create_is_refused_as_kube_apiserver_refuses_it(widget: CrdInfo, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(Invalid) as invalid:
        create(widget, widget_obj(spec))
    assert invalid.value.message == f'Widget.test.example.com "w" is invalid: {message}'
    assert invalid.value.status["details"]["kind"] == "Widget"
    assert invalid.value.status["details"]["group"] == "test.example.com"


def test_every_error_is_one_cause(widget: CrdInfo) -> None:
    with pytest.raises(Invalid) as invalid:
        create(widget, widget_obj({"name": "A", "replicas": "x", "mode": "c", "tags": ["a", "a"]}))
    assert invalid.value.details["causes"] == [
        {
            "reason": "FieldValueNotSupported",
            "message": 'Unsupported value: "c": supported values: "a", "b"',
            "field": "spec.mode",
        },
        {
            "reason": "FieldValueInvalid",
            "message": 'Invalid value: "A": spec.name in body should be at least 3 chars long',
            "field": "spec.name",
        },
        {
            "reason": "FieldValueTypeInvalid",
            "message": 'Invalid value: "string": spec.replicas in body must be of type integer: "string"',
            "field": "spec.replicas",
        },
        {
            "reason": "FieldValueInvalid",
            "message": "Invalid value: 0: .spec.replicas accessor error: x is of the type string, expected int64",
            "field": ".spec.replicas",
        },
        {"reason": "FieldValueDuplicate", "message": 'Duplicate value: "a"', "field": "spec.tags[1]"},
        {
            "reason": "FieldValueInvalid",
            "message": BLOCKED.removeprefix("<nil>: "),
            "field": "<nil>",
        },
    ]


# -- decoding: pruning and defaulting -------------------------------------------------------------


def test_defaults_fill_missing_and_null_fields_where_the_parent_exists(widget: CrdInfo) -> None:
    stored = create(
        widget,
        widget_obj({"name": "abc", "items": [{}, {"n": None}], "objmap": {"k": {}, "j": None}, "nested": {"b": {}}}),
    )
    assert stored["spec"] == {
        "name": "abc",
        "replicas": 1,
        "maxReplicas": 10,
        "mode": "a",
        "items": [{"n": 7}, {"n": 7}],
        "objmap": {"k": {"d": "dd"}},
        "nested": {"a": "x", "b": {"c": 5}},
    }
    assert create(widget, widget_obj({"name": "abc", "nested": None}))["spec"]["nested"] == {"a": "x"}


def test_nulls_without_a_default_are_dropped_unless_nullable(widget: CrdInfo) -> None:
    spec = create(widget, widget_obj({"name": "abc", "nullableStr": None, "when": None, "strmap": {"a": None}}))["spec"]
    assert spec["nullableStr"] is None
    assert "when" not in spec
    assert spec["strmap"] == {}


def test_unknown_fields_are_pruned_and_reported(widget: CrdInfo) -> None:
    obj = widget_obj(
        {
            "name": "abc",
            "bogus": 1,
            "nested": {"zz": 1, "b": {"yy": 2}},
            "free": {"x": 1, "known": {"k": "v", "drop": 1}},
            "items": [{"s": "a", "q": 1}],
            "objmap": {"k": {"e": 1}},
            "anything": {"x": {"y": 1}, "z": 1, "w": [{"a": 1}]},
            "emb": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x", "bogus": 1}, "data": {"a": "b"}},
        },
        bogus=1,
    )
    obj["extra"] = 1
    decoded = copy.deepcopy(obj)
    warnings = parse_crd(WIDGET_CRD).decode(decoded, "v1", field_validation="Warn")
    assert warnings == [
        'unknown field "metadata.bogus"',
        'unknown field "extra"',
        'unknown field "spec.anything.w[0].a"',
        'unknown field "spec.anything.x.y"',
        'unknown field "spec.bogus"',
        'unknown field "spec.emb.metadata.bogus"',
        'unknown field "spec.free.known.drop"',
        'unknown field "spec.items[0].q"',
        'unknown field "spec.nested.b.yy"',
        'unknown field "spec.nested.zz"',
        'unknown field "spec.objmap.k.e"',
    ]
    spec = decoded["spec"]
    assert spec["free"] == {"known": {"k": "v"}, "x": 1}
    assert spec["anything"] == {"w": [{}], "x": {}, "z": 1}
    assert spec["emb"] == {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}, "data": {"a": "b"}}
    assert spec["nested"] == {"a": "x", "b": {"c": 5}}
    with pytest.raises(BadRequest) as strict:
        widget.decode(copy.deepcopy(obj), "v1", field_validation="Strict")
    assert strict.value.message.startswith(
        'Widget in version "v1" cannot be handled as a Widget: strict decoding error: unknown field "metadata.bogus", '
        'unknown field "extra", unknown field "spec.anything.w[0].a"'
    )
    assert widget.decode(copy.deepcopy(obj), "v1", field_validation="Ignore") == []


def test_malformed_metadata_is_a_bad_request(widget: CrdInfo) -> None:
    with pytest.raises(BadRequest) as bad:
        widget.decode(widget_obj({"name": "abc"}, labels={"a": 1}), "v1")
    assert bad.value.message == (
        'Widget in version "v1" cannot be handled as a Widget: json: cannot unmarshal number into Go struct field '
        "ObjectMeta.labels of type string"
    )


def test_reads_prune_and_default_with_the_current_schema(widget: CrdInfo) -> None:
    stored = widget_obj({"name": "abc", "gone": 1})
    widget.read(stored)
    assert stored["spec"] == {"name": "abc", "replicas": 1, "maxReplicas": 10, "mode": "a", "nested": {"a": "x"}}


# -- updates --------------------------------------------------------------------------------------


@pytest.fixture
def stored_widget(widget: CrdInfo) -> dict[str, Any]:
    spec = {
        "name": "abc",
        "immutable": "x",
        "tags": ["a"],
        "items": [{"n": 1}],
        "labels": {"a": "b"},
        "ports": [{"name": "a"}],
    }
    obj = create(widget, widget_obj(spec, name="u1"))
    obj["metadata"].update(uid="uid-1", resourceVersion="7", generation=1, creationTimestamp="2026-01-02T03:04:05Z")
    return obj


def changed(obj: dict[str, Any], **spec: Any) -> dict[str, Any]:
    new = copy.deepcopy(obj)
    new["spec"].update(spec)
    return new


def test_update_reports_objectmeta_problems_three_times_and_says_them_once(
    widget: CrdInfo, stored_widget: dict[str, Any]
) -> None:
    new = copy.deepcopy(stored_widget)
    new["metadata"]["labels"] = {"bad key!": "v"}
    with pytest.raises(Invalid) as invalid:
        update(widget, new, stored_widget)
    causes = invalid.value.details["causes"]
    assert len(causes) == 3 and all(c == causes[0] for c in causes)
    assert invalid.value.message.count("bad key!") == 1


def test_transition_rules_run_on_update(widget: CrdInfo, stored_widget: dict[str, Any]) -> None:
    with pytest.raises(Invalid) as invalid:
        update(widget, changed(stored_widget, immutable="y"), stored_widget)
    assert (
        invalid.value.message
        == 'Widget.test.example.com "u1" is invalid: spec.immutable: Invalid value: "y": is immutable'
    )


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"replicas": "x"},
            'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
        ),
        (
            {"items": [{"n": 1}, {"n": "x"}]},
            'spec.items[1].n: Invalid value: "string": spec.items[1].n in body must be of type integer: "string"',
        ),
        (
            {"ports": [{"name": "a"}, {"name": "b", "port": "x"}]},
            'spec.ports[1].port: Invalid value: "string": spec.ports[1].port in body must be of type integer: "string"',
        ),
        (
            {"free": {"known": {"k": 5}}},
            'spec.free.known.k: Invalid value: "integer": spec.free.known.k in body must be of type string: "integer"',
        ),
    ],
)
def test_updates_report_full_paths(
    widget: CrdInfo, stored_widget: dict[str, Any], change: dict[str, Any], message: str
) -> None:
    with pytest.raises(Invalid) as invalid:
        update(widget, changed(stored_widget, **change), stored_widget)
    assert invalid.value.details["causes"][0]["field"] == message.split(":")[0]
    assert f"{message}" in invalid.value.message


def test_status_updates_name_paths_inside_status(widget: CrdInfo, stored_widget: dict[str, Any]) -> None:
    new = copy.deepcopy(stored_widget)
    new["status"] = {"replicas": 1, "ready": "x"}
    with pytest.raises(Invalid) as invalid:
        update(widget, new, stored_widget, status=True)
    assert invalid.value.message == (
        'Widget.test.example.com "u1" is invalid: [status.ready: Invalid value: "string": ready in body must be of '
        f'type boolean: "string", {BLOCKED}]'
    )
    new["status"] = {"replicas": "x"}
    with pytest.raises(Invalid) as invalid:
        update(widget, new, stored_widget, status=True)
    assert [c["field"] for c in invalid.value.details["causes"]] == ["status.replicas", ".status.replicas", "<nil>"]


def test_unchanged_invalid_values_are_ratcheted(stored_widget: dict[str, Any]) -> None:
    tightened = copy.deepcopy(WIDGET_CRD)
    spec_props = tightened["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]
    spec_props["name"]["maxLength"] = 2
    spec_props["tags"]["maxItems"] = 0
    spec_props["labels"]["additionalProperties"] = {"type": "integer"}
    strict = parse_crd(tightened)
    assert (
        update(strict, changed(stored_widget, nested={"a": "changed"}), stored_widget)["spec"]["nested"]["a"]
        == "changed"
    )
    assert update(strict, changed(stored_widget, tags=["a"], mode="b"), stored_widget)["spec"]["mode"] == "b"
    for change, field in (
        ({"name": "abd"}, "spec.name"),
        ({"labels": {"a": "b", "z": "c"}}, "spec.labels.z"),
        ({"tags": ["b"]}, "spec.tags"),
    ):
        with pytest.raises(Invalid) as invalid:
            update(strict, changed(stored_widget, **change), stored_widget)
        assert [c["field"] for c in invalid.value.details["causes"]] == [field, "<nil>"]


def test_custom_resources_allow_no_unconditional_update(widget: CrdInfo) -> None:
    error = widget.resource_version_required("u1")
    assert error.message == (
        'widgets.test.example.com "u1" is invalid: metadata.resourceVersion: Invalid value: 0: must be specified for '
        "an update"
    )
    assert error.details["kind"] == "widgets"


# -- CEL ------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ({"arr": ["a", "b"]}, "spec.arr: Invalid value: arr too big"),
        ({"num": 7}, "[spec.num: Invalid value: 7: failed rule: self < 5, spec.num: Invalid value: 7: num too big]"),
        ({"m": {"a": "1", "b": "2"}}, "spec.m: Invalid value: failed rule: size(self) < 2"),
        ({"r": {"x": "1"}}, "spec.r.x: Forbidden: x and y together"),
        ({"r": {"x": "bad", "y": "dup"}}, "[spec.r: Required value: no bad, spec.r: Duplicate value]"),
        ({"ios": 7}, "spec.ios: Invalid value: 7: small"),
        ({"listmulti": [{"a": "x"}, {"a": "x", "b": 0}]}, 'spec.listmulti[1]: Duplicate value: {"a":"x","b":0}'),
        (
            {"keyed": [{"k": "a"}, {"k": "a"}, {"v": "q"}]},
            f'[spec.keyed[2].k: Required value, spec.keyed[1]: Duplicate value: {{"k":"a"}}, {BLOCKED}]',
        ),
        ({"atomic": [{"v": "1"}, {"v": "2"}, {"v": "3"}]}, "spec.atomic: Invalid value: failed rule: self.size() < 3"),
    ],
)
def test_cel_rules(gadget: CrdInfo, spec: dict[str, Any], message: str) -> None:
    with pytest.raises(Invalid) as invalid:
        create(gadget, gadget_obj(spec))
    assert invalid.value.message == f'Gadget.test.example.com "g" is invalid: {message}'


def test_cel_transition_rules_follow_map_list_keys(gadget: CrdInfo) -> None:
    old = create(gadget, gadget_obj({"keyed": [{"k": "a", "v": "1"}, {"k": "b", "v": "2"}]}))
    old["metadata"]["resourceVersion"] = "1"
    reordered = copy.deepcopy(old)
    reordered["spec"]["keyed"] = [{"k": "b", "v": "2"}, {"k": "a", "v": "1"}, {"k": "c", "v": "3"}]
    update(gadget, reordered, old)
    reordered["spec"]["keyed"][1]["v"] = "1x"
    with pytest.raises(Invalid) as invalid:
        update(gadget, reordered, old)
    assert (
        invalid.value.message
        == 'Gadget.test.example.com "g" is invalid: spec.keyed[1].v: Invalid value: "1x": v immutable'
    )


# -- parsing CRDs ---------------------------------------------------------------------------------


def crd_with(mutate: Any) -> dict[str, Any]:
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"a": {"type": "string"}}}}}
    crd = make_crd("x.example.com", "Thing", [crd_version("v1", schema)])
    mutate(crd)
    return crd


def _spec_schema(crd: dict[str, Any]) -> dict[str, Any]:
    return crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]  # type: ignore[no-any-return]


S = "spec.validation.openAPIV3Schema.properties[spec]"
V1 = (
    '{"Name":"v1","Served":true,"Storage":%s,"Deprecated":false,"DeprecationWarning":null,"Schema":null,'
    '"Subresources":null,"AdditionalPrinterColumns":null,"SelectableFields":null}'
)
CRD_CASES: list[tuple[str, Any, list[str]]] = [
    (
        "no storage version",
        lambda c: c["spec"]["versions"][0].update(storage=False),
        [
            f"spec.versions: Invalid value: [{V1 % 'false'}]: must have exactly one version marked as storage version",
            "status.storedVersions: Invalid value: null: must have at least one stored version",
        ],
    ),
    (
        "no schema",
        lambda c: c["spec"]["versions"][0].pop("schema"),
        ["spec.versions[0].schema.openAPIV3Schema: Required value"],
    ),
    (
        "name",
        lambda c: c["metadata"].update(name="other.x.example.com"),
        ['metadata.name: Invalid value: "other.x.example.com": must be spec.names.plural+"."+spec.group'],
    ),
    (
        "scope",
        lambda c: c["spec"].update(scope="Global"),
        ['spec.scope: Unsupported value: "Global": supported values: "Cluster", "Namespaced"'],
    ),
    (
        "group",
        lambda c: (c["spec"].update(group="nodot"), c["metadata"].update(name="things.nodot")),
        ['spec.group: Invalid value: "nodot": should be a domain with at least one dot'],
    ),
    (
        "type missing",
        lambda c: _spec_schema(c)["properties"].update(a={"description": "x"}),
        [f"{S}.properties[a].type: Required value: must not be empty for specified object fields"],
    ),
    (
        "listKind",
        lambda c: c["spec"]["names"].update(listKind="Thing"),
        ['spec.names.listKind: Invalid value: "Thing": kind and listKind may not be the same'],
    ),
    (
        "root type",
        lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"].update(type="string"),
        ['spec.validation.openAPIV3Schema.type: Invalid value: "string": must be object at the root'],
    ),
    (
        "default of the wrong type",
        lambda c: _spec_schema(c)["properties"]["a"].update(default=5),
        [f'{S}.properties[a].default: Invalid value: "integer":  in body must be of type string: "integer"'],
    ),
    (
        "default with unknown fields",
        lambda c: _spec_schema(c).update(default={"zz": 1}),
        [f'{S}.default: Invalid value: {{"zz":1}}: must not have unknown fields'],
    ),
    (
        "properties and additionalProperties",
        lambda c: _spec_schema(c).update(additionalProperties={"type": "string"}),
        [f"{S}.additionalProperties: Forbidden: additionalProperties and properties are mutual exclusive"],
    ),
    (
        "map list without keys",
        lambda c: _spec_schema(c)["properties"].update(
            l={
                "type": "array",
                "x-kubernetes-list-type": "map",
                "items": {"type": "object", "properties": {"k": {"type": "string"}}},
            }
        ),
        [
            f"{S}.properties[l].x-kubernetes-list-map-keys: Required value: must not be empty if "
            "x-kubernetes-list-type is map"
        ],
    ),
    (
        "map list key neither required nor defaulted",
        lambda c: _spec_schema(c)["properties"].update(
            l={
                "type": "array",
                "x-kubernetes-list-type": "map",
                "x-kubernetes-list-map-keys": ["k"],
                "items": {"type": "object", "properties": {"k": {"type": "string"}}},
            }
        ),
        [
            f"{S}.properties[l].items.properties[k].default: Required value: this property is in "
            "x-kubernetes-list-map-keys, so it must have a default or be a required property"
        ],
    ),
    (
        "set of granular objects",
        lambda c: _spec_schema(c)["properties"].update(
            l={"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "object"}}
        ),
        [
            f"{S}.properties[l].items.x-kubernetes-map-type: Invalid value: null: must be atomic as item of a list "
            "with x-kubernetes-list-type=set"
        ],
    ),
    (
        "metadata schema",
        lambda c: c["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"].update(
            metadata={"type": "object", "properties": {"labels": {"type": "object"}}}
        ),
        [
            "spec.validation.openAPIV3Schema.properties[metadata]: Forbidden: must not specify anything other "
            "than name and generateName, but metadata is implicitly specified"
        ],
    ),
    (
        "CEL type error",
        lambda c: _spec_schema(c)["properties"]["a"].update({"x-kubernetes-validations": [{"rule": "self.foo == 1"}]}),
        [
            f'{S}.properties[a].x-kubernetes-validations[0].rule: Invalid value: {{"Rule":"self.foo == 1","Message":"",'
            '"MessageExpression":"","Reason":null,"FieldPath":"","OptionalOldSelf":null}: compilation failed: ERROR: '
            "<input>:1:5: type 'string' does not support field selection\n | self.foo == 1\n | ....^"
        ],
    ),
    (
        "preserve-unknown-fields false",
        lambda c: _spec_schema(c).update({"x-kubernetes-preserve-unknown-fields": False}),
        [f"{S}.x-kubernetes-preserve-unknown-fields: Invalid value: false: must be true or undefined"],
    ),
    (
        "a second version's schema",
        lambda c: c["spec"]["versions"].append(
            {
                "name": "v2",
                "served": True,
                "storage": False,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"a": {"type": "strin"}}}},
            }
        ),
        [
            'spec.versions[1].schema.openAPIV3Schema.properties[a].type: Unsupported value: "strin": supported values: '
            '"array", "boolean", "integer", "number", "object", "string"'
        ],
    ),
    (
        "scale paths",
        lambda c: c["spec"]["versions"][0].update(
            subresources={"scale": {"specReplicasPath": "spec.r", "statusReplicasPath": ".spec.r"}}
        ),
        [
            'spec.subresources.scale.specReplicasPath: Invalid value: "spec.r": must be a simple json path starting '
            "with .",
            'spec.subresources.scale.statusReplicasPath: Invalid value: ".spec.r": should be a json path under .status',
        ],
    ),
    (
        "pattern",
        lambda c: _spec_schema(c)["properties"].update(a={"type": "string", "pattern": "(?=x)"}),
        [
            f'{S}.properties[a].pattern: Invalid value: "(?=x)": must be a valid regular expression, but isn\'t: '
            "error parsing regexp: invalid or unsupported Perl syntax: `(?=`"
        ],
    ),
    (
        "array without items",
        lambda c: _spec_schema(c)["properties"].update(a={"type": "array"}),
        [f"{S}.properties[a].items: Required value: must be specified"],
    ),
    (
        "uniqueItems",
        lambda c: _spec_schema(c)["properties"].update(
            a={"type": "array", "items": {"type": "string"}, "uniqueItems": True}
        ),
        [
            f"{S}.properties[a].uniqueItems: Forbidden: uniqueItems cannot be set to true since the runtime "
            "complexity becomes quadratic"
        ],
    ),
]


@pytest.mark.parametrize(("mutate", "expected"), [c[1:] for c in CRD_CASES], ids=[c[0] for c in CRD_CASES])
def test_crds_are_checked_as_the_crd_registry_checks_them(mutate: Any, expected: list[str]) -> None:
    crd = crd_with(mutate)
    with pytest.raises(Invalid) as invalid:
        parse_crd(crd)
    causes = [f"{c['field']}: {c['message']}" for c in invalid.value.details["causes"]]
    assert causes == expected
    name = crd["metadata"]["name"]
    assert invalid.value.message.startswith(f'CustomResourceDefinition.apiextensions.k8s.io "{name}" is invalid: ')


def test_crds_the_registry_accepts() -> None:
    for mutate in (
        lambda c: c["spec"]["versions"][0].update(served=False),
        lambda c: _spec_schema(c)["properties"].update(a={"type": "object", "additionalProperties": False}),
        lambda c: _spec_schema(c)["properties"].update(a={"type": "string", "enum": [1, "a"]}),
    ):
        parse_crd(crd_with(mutate))


def test_defaulted_crd_names_and_conversion() -> None:
    crd = default_crd(crd_with(lambda c: None))
    assert crd["spec"]["names"] == {"plural": "things", "kind": "Thing", "singular": "thing", "listKind": "ThingList"}
    assert crd["spec"]["conversion"] == {"strategy": "None"}


def test_the_bundled_cluster_api_crds() -> None:
    """Upstream Cluster API v1.14's CRDs: every kind serves v1beta1 (v1alpha1 for ExtensionConfig) and v1beta2,
    stores v1beta2, and carries both contract labels; installed, those serving several versions convert through
    the conversion webhook."""
    crds = load_bundled_crds()
    assert len(crds) == 18
    infos = {info.kind: info for info in map(parse_crd, crds)}
    cluster = infos["Cluster"]
    assert (cluster.resource, cluster.storage_version, cluster.served_versions) == (
        "clusters.cluster.x-k8s.io",
        "v1beta2",
        ["v1beta1", "v1beta2"],
    )
    assert cluster.short_names == ("cl",) and cluster.categories == ("cluster-api",) and cluster.namespaced
    extension_config = infos["ExtensionConfig"]
    assert not extension_config.namespaced
    assert (extension_config.storage_version, extension_config.served_versions) == ("v1beta2", ["v1alpha1", "v1beta2"])
    for crd in crds:
        kind = crd["spec"]["names"]["kind"]
        assert infos[kind].storage_version == "v1beta2", kind
        assert crd["metadata"]["labels"] == {
            "cluster.x-k8s.io/v1beta1": "v1beta1",
            "cluster.x-k8s.io/v1beta2": "v1beta2",
        }
        assert "conversion" not in crd["spec"], kind  # the files name no webhook: installing adds it
        assert not infos[kind].converts  # as a CRD with strategy None: apiVersion rewritten only
    for version in ("v1beta1", "v1beta2"):
        md = infos["MachineDeployment"].versions[version]
        assert md.status_subresource and md.scale is not None and md.scale.spec_replicas_path == ".spec.replicas"
    # subresources are per version: DockerMachineTemplate has a status (and a status subresource) in v1beta2 only
    assert not infos["DockerMachineTemplate"].versions["v1beta1"].status_subresource
    assert infos["DockerMachineTemplate"].versions["v1beta2"].status_subresource
    assert parse_crd(load_bundled_crds()[0]) is parse_crd(crds[0])  # compiled once per spec
    crds[0]["spec"]["group"] = "changed"
    assert load_bundled_crds()[0]["spec"]["group"] != "changed"  # callers get copies


def test_installed_cluster_api_crds_convert_through_the_webhook() -> None:
    """What every store installs: the bundled CRDs with Cluster API's conversion webhook, as ``config/crd`` and
    clusterctl install them (the embedded cluster answers it in process)."""
    installed = bundled_crds()
    assert [crd["metadata"]["name"] for crd in installed] == [crd["metadata"]["name"] for crd in load_bundled_crds()]
    for crd in installed:
        assert crd["spec"]["conversion"] == {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "service": {
                        "namespace": "clusterclass-system",
                        "name": "clusterclass-webhook-service",
                        "path": "/convert",
                        "port": 443,
                    }
                },
            },
        }
        info = parse_crd(crd)
        assert (info.conversion, info.converts) == ("Webhook", True)


def test_cluster_api_defaults_and_refusals() -> None:
    infos = {info.kind: info for info in map(parse_crd, load_bundled_crds())}
    kcpt = {
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmControlPlaneTemplate",
        "metadata": {"name": "t", "namespace": "p"},
        "spec": {"template": {"spec": {"kubeadmConfigSpec": {}}}},
    }
    stored = create(infos["KubeadmControlPlaneTemplate"], kcpt)
    assert stored["spec"]["template"]["spec"]["rolloutStrategy"] == {
        "rollingUpdate": {"maxSurge": 1},
        "type": "RollingUpdate",
    }
    md = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachineDeployment",
        "metadata": {"name": "m", "namespace": "p"},
        "spec": {
            "clusterName": "c",
            "selector": {},
            "template": {"spec": {"clusterName": "c", "bootstrap": {}, "infrastructureRef": {}}},
            "strategy": {"rollingUpdate": {"maxSurge": True}},
        },
    }
    with pytest.raises(Invalid) as invalid:
        create(infos["MachineDeployment"], md)
    assert outcome(invalid.value)[2] == sorted(
        json.dumps(c, sort_keys=True)
        for c in [
            {
                "reason": "FieldValueTypeInvalid",
                "message": 'Invalid value: "boolean": spec.strategy.rollingUpdate.maxSurge in body must be of type '
                'integer,string: "boolean"',
                "field": "spec.strategy.rollingUpdate.maxSurge",
            },
            {
                "reason": "FieldValueInvalid",
                "message": 'Invalid value: "": "spec.strategy.rollingUpdate.maxSurge" must validate at least one '
                "schema (anyOf)",
                "field": "<nil>",
            },
            {
                "reason": "FieldValueTypeInvalid",
                "message": 'Invalid value: "boolean": spec.strategy.rollingUpdate.maxSurge in body must be of type '
                'integer: "boolean"',
                "field": "spec.strategy.rollingUpdate.maxSurge",
            },
        ]
    )


# -- field types for server-side apply -------------------------------------------------------------


def test_field_types_come_from_the_schema(widget: CrdInfo) -> None:
    types = widget.versions["v1"].field_types
    assert types.list_type(("spec", "tags")) == ("set", ())
    assert types.list_type(("spec", "ports")) == ("map", ("name",))
    assert types.list_type(("spec", "items")) == ("atomic", ())
    assert types.list_type(("spec", "free", "unknown", "list")) == ("atomic", ())
    assert types.map_is_atomic(("spec", "atomicMap"))
    assert not types.map_is_atomic(("spec", "nested"))
    assert types.list_type(("metadata", "finalizers")) == ("set", ())
    assert types.list_type(("metadata", "ownerReferences")) == ("map", ("uid",))
    assert types.is_declared(("spec", "nested", "a"))
    assert types.is_declared(("metadata", "labels"))
    assert not types.is_declared(("metadata", "labels", "app"))
    assert not types.is_declared(("spec", "strmap", "k1"))
    assert not types.is_declared(("spec", "free", "x"))
    objmap = parse_crd(WIDGET_CRD).versions["v1"].field_types
    assert objmap.is_declared(("spec", "objmap", "k1", "d"))
    assert objmap.is_declared(("spec", "objmap", VALUE, "d"))
    assert objmap.list_type(("spec", "items", ITEM, "x")) == ("atomic", ())


def test_list_key_defaults(gadget: CrdInfo) -> None:
    types = gadget.versions["v1"].field_types
    assert types.list_key_defaults(("spec", "listmulti")) == {"b": 0}
    assert types.list_key_defaults(("spec", "keyed")) == {}


def test_cluster_api_list_and_map_types() -> None:
    infos = {info.kind: info for info in map(parse_crd, load_bundled_crds())}
    assert infos["ExtensionConfig"].versions["v1alpha1"].field_types.list_type(("status", "handlers")) == (
        "map",
        ("name",),
    )
    assert infos["ExtensionConfig"].versions["v1beta2"].field_types.list_type(("status", "handlers")) == (
        "map",
        ("name",),
    )
    v1beta1 = infos["Cluster"].versions["v1beta1"].field_types
    v1beta2 = infos["Cluster"].versions["v1beta2"].field_types
    # v1beta1's controlPlaneRef is an ObjectReference (atomic); v1beta2's a ContractVersionedObjectReference
    assert v1beta1.map_is_atomic(("spec", "controlPlaneRef"))
    assert not v1beta2.map_is_atomic(("spec", "controlPlaneRef"))
    for types in (v1beta1, v1beta2):
        assert types.list_type(("spec", "topology", "workers", "machineDeployments")) == ("map", ("name",))
    # v1beta2's conditions are metav1.Conditions, a map keyed by type; v1beta1's stay an atomic list
    assert v1beta1.list_type(("status", "conditions")) == ("atomic", ())
    assert v1beta2.list_type(("status", "conditions")) == ("map", ("type",))


# -- parity with the real kube-apiserver ----------------------------------------------------------

PARITY_CASES = [c for c in CREATE_CASES if c[0] not in ("beyond int32", "CEL rule")] + [
    ("ok", {"name": "abc"}, ""),
    ("defaults", {"name": "abc", "items": [{}, {"n": None}], "objmap": {"k": {}, "j": None}}, ""),
]


@pytest.fixture(scope="module")
def real_crds(real_apiserver: RealApiServer) -> RealApiServer:
    real_apiserver.install_crds([WIDGET_CRD, GADGET_CRD])
    return real_apiserver


def test_parity_with_the_real_apiserver(real_crds: RealApiServer, real_namespace: str, widget: CrdInfo) -> None:
    base = f"/apis/test.example.com/v1/namespaces/{real_namespace}/widgets"
    for i, (label, spec, _) in enumerate(PARITY_CASES):
        obj = widget_obj(spec, name=f"w{i}")
        obj["metadata"]["namespace"] = real_namespace
        status, body = real_crds.request("POST", base + "?fieldValidation=Ignore", obj)
        try:
            mine: Any = create(widget, obj)
        except ApiError as error:
            mine = error
        if status == 201:
            assert not isinstance(mine, ApiError), (label, mine)
            assert mine["spec"] == body["spec"], label
        else:
            assert isinstance(mine, ApiError), (label, body)
            real = (
                body["code"],
                body["message"],
                sorted(json.dumps(c, sort_keys=True) for c in body["details"]["causes"]),
            )
            assert outcome(mine) == real, label


def test_reads_follow_a_changed_schema_like_the_real_apiserver(
    real_apiserver: RealApiServer, real_namespace: str
) -> None:
    """A stored object is pruned and defaulted with the schema of the moment it is read (verified on 1.37.2)."""
    crd = copy.deepcopy(WIDGET_CRD)
    crd["metadata"]["name"] = "readers.test.example.com"
    crd["spec"]["names"] = {"plural": "readers", "kind": "Reader"}
    real_apiserver.install_crds([copy.deepcopy(crd)])
    base = f"/apis/test.example.com/v1/namespaces/{real_namespace}/readers"
    obj = {**widget_obj({"name": "abc", "ratio": 1.5}, name="r1"), "kind": "Reader"}
    obj["metadata"]["namespace"] = real_namespace
    status, body = real_apiserver.request("POST", base, obj)
    assert status == 201, body
    spec_schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    del spec_schema["properties"]["ratio"]
    spec_schema["properties"]["added"] = {"type": "string", "default": "later"}
    real_apiserver.install_crds([copy.deepcopy(crd)])
    deadline = time.monotonic() + 30
    while True:  # the new schema reaches the custom resource handler shortly after the CRD update
        status, served = real_apiserver.request("GET", f"{base}/r1")
        assert status == 200, served
        if "added" in served["spec"] or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    stored = copy.deepcopy(body)
    parse_crd(crd).read(stored)
    assert stored["spec"] == served["spec"]
    assert served["spec"]["added"] == "later" and "ratio" not in served["spec"]
