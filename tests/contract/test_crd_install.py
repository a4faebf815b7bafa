"""Installing a CustomResourceDefinition through the client: it is served, its schema is used, and it can go away."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from contract_support import WATCH_GUARD, causes
from support.crds import crd_version, make_crd

from clusterclass.kube.client import Client, Resource
from clusterclass.kube.errors import Conflict, Invalid, NotFound

CRD_API = "apiextensions.k8s.io/v1"


def widget_crd(group: str) -> dict[str, Any]:
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "required": ["size"],
                "properties": {
                    "size": {"type": "string", "enum": ["small", "large"]},
                    "count": {"type": "integer", "default": 3, "minimum": 1},
                    "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": True},
                },
            },
            "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}},
        },
    }
    version = crd_version("v1", schema, subresources={"status": {}})
    return make_crd(group, "Widget", [version], singular="widget", listKind="WidgetList")


async def served(client: Client, api_version: str, kind: str) -> Resource:
    """Wait until discovery serves the kind (a CRD becomes Established shortly after it is created)."""
    async with asyncio.timeout(WATCH_GUARD):
        while True:
            try:
                return await client.resource(api_version, kind)
            except NotFound:
                await asyncio.sleep(0.1)


async def gone(client: Client, api_version: str, kind: str, name: str, namespace: str) -> None:
    async with asyncio.timeout(WATCH_GUARD):
        while True:
            try:
                await client.get(api_version, kind, name, namespace=namespace)
            except NotFound:
                return
            await asyncio.sleep(0.1)


@pytest.fixture
def group(namespace: str) -> str:
    """A group of its own for each test: CRDs are cluster-scoped and the real server lives for the session."""
    return f"{namespace}.contract.example.com"


async def test_a_created_crd_is_served_with_its_schema(client: Client, namespace: str, group: str) -> None:
    crd = await client.create(widget_crd(group))
    assert crd["metadata"]["name"] == f"widgets.{group}"
    api_version = f"{group}/v1"
    assert await served(client, api_version, "Widget") == Resource(
        group, "v1", "Widget", "widgets", True, frozenset({"status"})
    )
    widget = await client.create(
        {
            "apiVersion": api_version,
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": namespace},
            "spec": {"size": "small", "unknown": 1, "extra": {"anything": ["goes"]}},
            "status": {"ready": True},
        }
    )
    assert widget["spec"] == {"size": "small", "count": 3, "extra": {"anything": ["goes"]}}
    assert "status" not in widget
    assert widget["metadata"]["generation"] == 1
    with pytest.raises(Invalid) as invalid:
        await client.create(
            {
                "apiVersion": api_version,
                "kind": "Widget",
                "metadata": {"name": "bad", "namespace": namespace},
                "spec": {"size": "medium", "count": 0},
            }
        )
    assert causes(invalid.value) == [("FieldValueInvalid", "spec.count"), ("FieldValueNotSupported", "spec.size")]
    assert invalid.value.details["group"] == group and invalid.value.details["kind"] == "Widget"


async def test_deleting_a_crd_removes_its_objects(client: Client, namespace: str, group: str) -> None:
    await client.create(widget_crd(group))
    api_version = f"{group}/v1"
    await served(client, api_version, "Widget")
    await client.create(
        {
            "apiVersion": api_version,
            "kind": "Widget",
            "metadata": {"name": "w", "namespace": namespace},
            "spec": {"size": "large"},
        }
    )
    await client.delete(CRD_API, "CustomResourceDefinition", f"widgets.{group}")
    await gone(client, CRD_API, "CustomResourceDefinition", f"widgets.{group}", "")
    with pytest.raises(NotFound):
        await client.get(api_version, "Widget", "w", namespace=namespace)


async def test_empty_names_and_a_missing_conversion_are_defaulted(client: Client, group: str) -> None:
    crd = widget_crd(group)
    crd["spec"]["names"].update(singular="", listKind="")
    created = await client.create(crd)
    names = created["spec"]["names"]
    assert (names["singular"], names["listKind"]) == ("widget", "WidgetList")
    assert created["spec"]["conversion"] == {"strategy": "None"}


@pytest.mark.parametrize("conversion", [{}, {"strategy": ""}])
async def test_a_conversion_without_a_strategy_is_invalid(client: Client, group: str, conversion: Any) -> None:
    crd = widget_crd(group)
    crd["spec"]["conversion"] = conversion
    with pytest.raises(Invalid) as raised:
        await client.create(crd)
    assert causes(raised.value) == [("FieldValueRequired", "spec.conversion.strategy")]


async def test_non_nullable_nulls_are_pruned_under_preserve_unknown_fields(
    client: Client, namespace: str, group: str
) -> None:
    spec_schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {
            "size": {"type": "string"},
            "nested": {"type": "object", "properties": {"name": {"type": "string"}}},
            "note": {"type": "string", "nullable": True},
        },
    }
    schema = {"type": "object", "properties": {"spec": spec_schema}}
    await client.create(make_crd(group, "Sprocket", [crd_version("v1", schema)]))
    api_version = f"{group}/v1"
    await served(client, api_version, "Sprocket")
    created = await client.create(
        {
            "apiVersion": api_version,
            "kind": "Sprocket",
            "metadata": {"name": "s", "namespace": namespace},
            "spec": {"size": None, "nested": {"name": None}, "note": None, "unknown": None},
        }
    )
    # a known field that may not be null is dropped (not refused), also below a preserving node;
    # a nullable one and an unknown one under preserve-unknown-fields keep their null
    assert created["spec"] == {"nested": {}, "note": None, "unknown": None}


@pytest.mark.parametrize(
    ("field_path", "valid"),
    [
        (".size", True),
        (".labels['any-key']", True),
        (".labels.key", True),
        (".missing", False),
        ("size", False),
        (".size.deeper", False),
        (".tags[0]", False),
        ("not a path", False),
    ],
)
async def test_a_rule_field_path_must_name_a_field_of_its_schema(
    client: Client, group: str, field_path: str, valid: bool
) -> None:
    spec_schema = {
        "type": "object",
        "properties": {
            "size": {"type": "string"},
            "labels": {"type": "object", "additionalProperties": {"type": "string"}},
            "tags": {"type": "array", "items": {"type": "string"}},
        },
        "x-kubernetes-validations": [{"rule": "true", "fieldPath": field_path}],
    }
    crd = make_crd(group, "Rule", [crd_version("v1", {"type": "object", "properties": {"spec": spec_schema}})])
    if valid:
        await client.create(crd)
        return
    with pytest.raises(Invalid) as raised:
        await client.create(crd)
    field = "spec.validation.openAPIV3Schema.properties[spec].x-kubernetes-validations[0].fieldPath"
    assert causes(raised.value) == [("FieldValueInvalid", field)]
    assert "must be a valid path" in raised.value.message


async def test_conflicts_print_number_keys_as_go_prints_them(client: Client, namespace: str, group: str) -> None:
    item = {"type": "object", "required": ["k"], "properties": {"k": {"type": "number"}, "v": {"type": "string"}}}
    items = {"type": "array", "x-kubernetes-list-type": "map", "x-kubernetes-list-map-keys": ["k"], "items": item}
    schema = {"type": "object", "properties": {"spec": {"type": "object", "properties": {"items": items}}}}
    await client.create(make_crd(group, "Dial", [crd_version("v1", schema)]))
    api_version = f"{group}/v1"
    await served(client, api_version, "Dial")

    def dial(value: str) -> dict[str, Any]:
        keys = (0.00001, 1500000.5, 2.5e21)
        return {
            "apiVersion": api_version,
            "kind": "Dial",
            "metadata": {"name": "d", "namespace": namespace},
            "spec": {"items": [{"k": k, "v": value} for k in keys]},
        }

    await client.apply(dial("a"), field_manager="a")
    with pytest.raises(Conflict) as raised:
        await client.apply(dial("b"), field_manager="b")
    # structured-merge-diff prints a float key with %v: exponent form below 1e-4 and from 1e+06
    assert raised.value.message.splitlines()[1:] == [
        "- .spec.items[k=1e-05].v",
        "- .spec.items[k=1.5000005e+06].v",
        "- .spec.items[k=2.5e+21].v",
    ]


def gadget_crd(group: str) -> dict[str, Any]:
    """A kind without a status subresource, with a list-map and a set: what the Cluster API CRDs do not exercise."""
    schema = {
        "type": "object",
        "properties": {
            "spec": {
                "type": "object",
                "properties": {
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
                    "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
                },
            },
            "status": {"type": "object", "properties": {"phase": {"type": "string"}}},
        },
    }
    return make_crd(group, "Gadget", [crd_version("v1", schema)], singular="gadget", listKind="GadgetList")


async def test_without_a_status_subresource_status_is_part_of_the_object(
    client: Client, namespace: str, group: str
) -> None:
    await client.create(gadget_crd(group))
    api_version = f"{group}/v1"
    assert (await served(client, api_version, "Gadget")).subresources == frozenset()
    created = await client.create(
        {
            "apiVersion": api_version,
            "kind": "Gadget",
            "metadata": {"name": "g", "namespace": namespace},
            "spec": {"tags": ["a"]},
            "status": {"phase": "New"},
        }
    )
    assert created["status"] == {"phase": "New"}
    assert created["metadata"]["generation"] == 1
    updated = await client.update({**created, "status": {"phase": "Old"}})
    assert updated["status"] == {"phase": "Old"}
    assert updated["metadata"]["generation"] == 2  # every change but metadata counts
    labelled = await client.update({**updated, "metadata": {**updated["metadata"], "labels": {"a": "b"}}})
    assert labelled["metadata"]["generation"] == 2
    with pytest.raises(NotFound):
        await client.update_status({**labelled, "status": {"phase": "Gone"}})


async def test_apply_merges_list_maps_by_key_and_sets_by_value(client: Client, namespace: str, group: str) -> None:
    await client.create(gadget_crd(group))
    api_version = f"{group}/v1"
    await served(client, api_version, "Gadget")

    def gadget(spec: dict[str, Any]) -> dict[str, Any]:
        return {
            "apiVersion": api_version,
            "kind": "Gadget",
            "metadata": {"name": "g", "namespace": namespace},
            "spec": spec,
        }

    await client.apply(gadget({"ports": [{"name": "http", "port": 80}], "tags": ["x"]}), field_manager="m1")
    both = await client.apply(gadget({"ports": [{"name": "metrics", "port": 9090}], "tags": ["y"]}), field_manager="m2")
    assert both["spec"] == {
        "ports": [{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}],
        "tags": ["x", "y"],
    }
    [m2] = [e for e in both["metadata"]["managedFields"] if e["manager"] == "m2"]
    assert m2["fieldsV1"] == {
        "f:spec": {
            "f:ports": {'k:{"name":"metrics"}': {".": {}, "f:name": {}, "f:port": {}}},
            "f:tags": {'v:"y"': {}},
        }
    }
    with pytest.raises(Conflict) as conflict:
        await client.apply(gadget({"ports": [{"name": "http", "port": 8080}]}), field_manager="m2")
    assert causes(conflict.value) == [("FieldManagerConflict", '.spec.ports[name="http"].port')]
    dropped = await client.apply(gadget({"ports": [{"name": "http", "port": 80}]}), field_manager="m1")
    assert dropped["spec"] == {
        "ports": [{"name": "http", "port": 80}, {"name": "metrics", "port": 9090}],
        "tags": ["y"],
    }
