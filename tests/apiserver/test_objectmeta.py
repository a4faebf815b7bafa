"""ObjectMeta as kube-apiserver 1.37 decodes and validates it on every write.

Every expected message below was recorded from a real kube-apiserver v1.37.2 (custom resources of a
test CRD); the parity tests in ``test_crds.py`` replay a selection against the real server.
"""

from __future__ import annotations

from typing import Any

import pytest

from clusterclass.apiserver.causes import aggregate, to_causes
from clusterclass.apiserver.objectmeta import (
    MalformedMetadata,
    coerce_object_meta,
    finalizer_warnings,
    validate_managed_fields,
    validate_object_meta,
    validate_object_meta_update,
)

SUBDOMAIN = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
NAME_PART = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric "
    "character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)
LABEL_VALUE = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and "
    "end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is "
    "'(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')"
)
LABEL_KEY = (
    "a valid label key must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' "
    "(e.g. 'example.com/MyName')"
)


def obj(**meta: Any) -> dict[str, Any]:
    return {"apiVersion": "test.example.com/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "p", **meta}}


def texts(errors: Any) -> list[str]:
    """``field: message`` of every cause, as kube-apiserver's aggregate prints each."""
    return [f"{c['field']}: {c['message']}" for c in to_causes(errors)]


# -- names ----------------------------------------------------------------------------------------


def test_a_valid_object_has_no_errors() -> None:
    assert validate_object_meta(obj(labels={"app": "x", "example.com/tier": ""}), namespaced=True) == []


@pytest.mark.parametrize(
    ("meta", "expected"),
    [
        ({"name": "Bad_Name"}, [f'metadata.name: Invalid value: "Bad_Name": {SUBDOMAIN}']),
        ({"name": "a" * 254}, [f'metadata.name: Invalid value: "{"a" * 254}": must be no more than 253 characters']),
        ({"name": ""}, ["metadata.name: Required value: name or generateName is required"]),
        (
            {"name": "Bad_657k2", "generateName": "Bad_"},
            [
                f'metadata.generateName: Invalid value: "Bad_": {SUBDOMAIN}',
                f'metadata.name: Invalid value: "Bad_657k2": {SUBDOMAIN}',
            ],
        ),
        ({"name": "ok-x", "generateName": "ok-"}, []),  # a generateName may end in "-"
    ],
)
def test_names_are_dns_subdomains(meta: dict[str, Any], expected: list[str]) -> None:
    assert texts(validate_object_meta(obj(**meta), namespaced=True)) == expected


def test_namespace_is_required_on_namespaced_kinds_and_forbidden_on_the_others() -> None:
    no_namespace = {"metadata": {"name": "w"}}
    assert texts(validate_object_meta(no_namespace, namespaced=True)) == ["metadata.namespace: Required value"]
    assert texts(validate_object_meta(obj(), namespaced=False)) == [
        "metadata.namespace: Forbidden: not allowed on this type"
    ]


def test_update_rechecks_names_only_as_path_segments() -> None:
    assert validate_object_meta(obj(name="Bad_Name"), namespaced=True, path_segment_names=True) == []
    assert texts(validate_object_meta(obj(name="a/b%"), namespaced=True, path_segment_names=True)) == [
        "metadata.name: Invalid value: \"a/b%\": may not contain '/'",
        "metadata.name: Invalid value: \"a/b%\": may not contain '%'",
    ]


# -- labels and annotations -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("labels", "expected"),
    [
        ({"bad key!": "v"}, [f'metadata.labels: Invalid value: "bad key!": {NAME_PART}']),
        ({"ok": "bad value!"}, [f'metadata.labels: Invalid value: "bad value!": {LABEL_VALUE}']),
        ({"x/y/z": ""}, [f'metadata.labels: Invalid value: "x/y/z": {LABEL_KEY}']),
        ({"/a": "b"}, ['metadata.labels: Invalid value: "/a": prefix part must be non-empty']),
        ({"Pre.fix/a": "b"}, [f'metadata.labels: Invalid value: "Pre.fix/a": prefix part {SUBDOMAIN}']),
        (
            {"a" * 64: "a" * 64},
            [
                f'metadata.labels: Invalid value: "{"a" * 64}": name part must be no more than 63 bytes',
                f'metadata.labels: Invalid value: "{"a" * 64}": must be no more than 63 bytes',
            ],
        ),
        (
            {"a" * 254 + "/b": "x"},
            [f'metadata.labels: Invalid value: "{"a" * 254}/b": prefix part must be no more than 253 bytes'],
        ),
    ],
)
def test_label_keys_and_values(labels: dict[str, str], expected: list[str]) -> None:
    assert texts(validate_object_meta(obj(labels=labels), namespaced=True)) == expected


def test_annotation_keys_are_qualified_names_in_any_case() -> None:
    annotations = {"UPPER": "ok", "Bad Key": "v", "A/B": "x"}
    assert texts(validate_object_meta(obj(annotations=annotations), namespaced=True)) == [
        f'metadata.annotations: Invalid value: "Bad Key": {NAME_PART}'
    ]


def test_annotations_may_total_256_kib() -> None:
    at_limit = {"a": "x" * (256 * 1024 - 1)}
    assert validate_object_meta(obj(annotations=at_limit), namespaced=True) == []
    over = {"a": "x" * (256 * 1024)}
    assert texts(validate_object_meta(obj(annotations=over), namespaced=True)) == [
        "metadata.annotations: Too long: may not be more than 262144 bytes"
    ]


# -- finalizers and owners ------------------------------------------------------------------------


def test_finalizer_names_and_the_exclusive_deletion_finalizers() -> None:
    finalizers = ["bad finalizer", "noslash", "example.com/ok", "orphan", "foregroundDeletion"]
    assert texts(validate_object_meta(obj(finalizers=finalizers), namespaced=True)) == [
        f'metadata.finalizers: Invalid value: "bad finalizer": {NAME_PART}',
        'metadata.finalizers: Invalid value: ["bad finalizer","noslash","example.com/ok","orphan","foregroundDeletion"]'
        ": finalizer orphan and foregroundDeletion cannot be both set",
    ]


def test_finalizers_without_a_domain_are_warned_about_once_added() -> None:
    new = obj(finalizers=["noslash", "z.example.com/ok", "bad finalizer"])
    assert finalizer_warnings(new) == [
        'metadata.finalizers: "noslash": prefer a domain-qualified finalizer name to avoid accidental conflicts '
        "with other finalizer writers"
    ]
    assert finalizer_warnings(new, old=obj(finalizers=["noslash"])) == []


def test_owner_references() -> None:
    owners = [
        {"apiVersion": "", "kind": "", "name": "", "uid": ""},
        {"apiVersion": "v1", "kind": "Event", "name": "e", "uid": "u1"},
        {"apiVersion": "a/b", "kind": "K", "name": "n1", "uid": "u2", "controller": True},
        {"apiVersion": "a/b", "kind": "K", "name": "n2", "uid": "u3", "controller": True},
        {"apiVersion": "a/b/c", "kind": "K", "name": "n", "uid": "u4"},
    ]
    assert texts(validate_object_meta(obj(ownerReferences=owners), namespaced=True)) == [
        "metadata.ownerReferences[0].apiVersion: Required value: must not be empty",
        "metadata.ownerReferences[0].kind: Required value: must not be empty",
        "metadata.ownerReferences[0].name: Required value: must not be empty",
        "metadata.ownerReferences[0].uid: Required value: must not be empty",
        'metadata.ownerReferences[1]: Invalid value: {"apiVersion":"v1","kind":"Event","name":"e","uid":"u1"}: '
        "/v1, Kind=Event is disallowed from being an owner",
        'metadata.ownerReferences: Invalid value: [{"apiVersion":"","kind":"","name":"","uid":""},'
        '{"apiVersion":"v1","kind":"Event","name":"e","uid":"u1"},'
        '{"apiVersion":"a/b","kind":"K","name":"n1","uid":"u2","controller":true},'
        '{"apiVersion":"a/b","kind":"K","name":"n2","uid":"u3","controller":true},'
        '{"apiVersion":"a/b/c","kind":"K","name":"n","uid":"u4"}]: '
        'Only one reference can have Controller set to true. Found "true" in references for K/n1 and K/n2',
        'metadata.ownerReferences[4].apiVersion: Invalid value: "a/b/c": must be <group>/<version> or <version>',
    ]


def test_managed_fields_are_not_part_of_the_write_checks() -> None:
    entries = [{"manager": "m", "operation": "Bogus", "fieldsType": "X"}]
    assert validate_object_meta(obj(managedFields=entries), namespaced=True) == []
    assert texts(validate_managed_fields(entries, "metadata.managedFields")) == [
        'metadata.managedFields[0].operation: Invalid value: "Bogus": must be `Apply` or `Update`',
        'metadata.managedFields[0].fieldsType: Invalid value: "X": must be `FieldsV1`',
    ]


# -- updates --------------------------------------------------------------------------------------


def test_update_against_the_stored_object() -> None:
    old = obj(uid="u1", resourceVersion="5", generation=3, creationTimestamp="2026-01-02T03:04:05Z")
    new = obj(uid="u2", resourceVersion="5", generation=2, creationTimestamp="2026-01-02T03:04:05Z")
    new["metadata"]["name"] = "renamed"
    assert texts(validate_object_meta_update(new, old)) == [
        "metadata.generation: Invalid value: 2: must not be decremented",
        'metadata.name: Invalid value: "renamed": field is immutable',
        'metadata.uid: Invalid value: "u2": field is immutable',
    ]
    unversioned = obj(uid="u1", generation=3, creationTimestamp="2026-01-02T03:04:05Z")
    assert texts(validate_object_meta_update(unversioned, old)) == [
        'metadata.resourceVersion: Invalid value: "": must be specified for an update'
    ]


def test_no_finalizer_may_be_added_once_deletion_started() -> None:
    old = obj(resourceVersion="1", finalizers=["a.io/x"], deletionTimestamp="2026-01-02T03:04:05Z")
    new = obj(resourceVersion="1", finalizers=["a.io/x", "b.io/y"], deletionTimestamp="2026-01-02T03:04:05Z")
    assert texts(validate_object_meta_update(new, old)) == [
        "metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new "
        'finalizers []string{"b.io/y"}'
    ]


def test_aggregate_joins_repeated_causes_once() -> None:
    old = obj(resourceVersion="1")
    new = obj(resourceVersion="1", labels={"bad key!": "v"})
    causes = to_causes(validate_object_meta_update(new, old) + validate_object_meta_update(new, old))
    assert len(causes) == 2
    assert aggregate(causes) == f'metadata.labels: Invalid value: "bad key!": {NAME_PART}'


# -- decoding -------------------------------------------------------------------------------------


def test_decoding_keeps_objectmeta_fields_only() -> None:
    meta = {
        "name": "w",
        "bogus": 1,
        "labels": {"a": None, "b": "x"},
        "annotations": {},
        "finalizers": [],
        "generation": 0,
        "generateName": "",
        "creationTimestamp": "2020-01-01T00:00:00.5+02:00",
        "ownerReferences": [{"kind": "K", "name": "n", "uid": "u", "controller": False, "extra": 1}],
    }
    coerced, unknown = coerce_object_meta(meta)
    assert unknown == ["metadata.bogus"]
    assert coerced == {
        "name": "w",
        "creationTimestamp": "2019-12-31T22:00:00Z",
        "labels": {"a": "", "b": "x"},
        "ownerReferences": [{"apiVersion": "", "kind": "K", "name": "n", "uid": "u", "controller": False}],
    }


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        ({"labels": {"a": 1}}, "json: cannot unmarshal number into Go struct field ObjectMeta.labels of type string"),
        (
            {"labels": ["a"]},
            "json: cannot unmarshal array into Go struct field ObjectMeta.labels of type map[string]string",
        ),
        (
            {"finalizers": "a"},
            "json: cannot unmarshal string into Go struct field ObjectMeta.finalizers of type []string",
        ),
        (
            {"finalizers": [1]},
            "json: cannot unmarshal number into Go struct field ObjectMeta.finalizers of type string",
        ),
        ({"generation": "1"}, "json: cannot unmarshal string into Go struct field ObjectMeta.generation of type int64"),
        ({"name": 5}, "json: cannot unmarshal number into Go struct field ObjectMeta.name of type string"),
        (
            {"ownerReferences": [{"apiVersion": "v1", "kind": "K", "name": "n", "uid": "u", "controller": "yes"}]},
            "json: cannot unmarshal string into Go struct field OwnerReference.ownerReferences.controller of type bool",
        ),
        (
            {"creationTimestamp": "yesterday"},
            'parsing time "yesterday" as "2006-01-02T15:04:05Z07:00": cannot parse "yesterday" as "2006"',
        ),
    ],
)
def test_malformed_metadata_fails_with_gos_decoding_error(meta: dict[str, Any], message: str) -> None:
    with pytest.raises(MalformedMetadata) as raised:
        coerce_object_meta({"name": "w", **meta})
    assert str(raised.value) == message


def test_metadata_that_is_not_an_object() -> None:
    with pytest.raises(MalformedMetadata) as raised:
        coerce_object_meta("x")
    assert str(raised.value) == "json: cannot unmarshal string into Go value of type v1.ObjectMeta"


def test_stored_objects_lose_malformed_fields_instead_of_failing() -> None:
    coerced, _ = coerce_object_meta({"name": "w", "labels": {"a": 1}, "generation": 2}, drop_malformed=True)
    assert coerced == {"name": "w", "generation": 2}
