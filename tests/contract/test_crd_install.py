"""Installing a CustomResourceDefinition through the client: it is served, its schema is used, and it can go away."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from contract_support import WATCH_GUARD, causes

from clusterclass.kube.client import Client, Resource
from clusterclass.kube.errors import Invalid, NotFound

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
    return {
        "apiVersion": CRD_API,
        "kind": "CustomResourceDefinition",
        "metadata": {"name": f"widgets.{group}"},
        "spec": {
            "group": group,
            "names": {"plural": "widgets", "singular": "widget", "kind": "Widget", "listKind": "WidgetList"},
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": schema},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


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
