"""Label selectors on list: every operator, in string and ``metav1.LabelSelector`` form."""

from __future__ import annotations

from typing import Any

import pytest
from contract_support import config_map

from clusterclass.kube.client import Client

OBJECTS = {
    "a": {"tier": "web", "env": "prod"},
    "b": {"tier": "db", "env": "prod"},
    "c": {"tier": "web", "env": "dev"},
    "d": {"env": "test"},
    "e": {},
}

CASES: list[tuple[Any, list[str]]] = [
    ("tier=web", ["a", "c"]),
    ("tier==web", ["a", "c"]),
    ("tier!=web", ["b", "d", "e"]),
    ("env in (prod,dev)", ["a", "b", "c"]),
    ("env notin (prod,dev)", ["d", "e"]),
    ("tier", ["a", "b", "c"]),
    ("!tier", ["d", "e"]),
    ("tier=web,env=prod", ["a"]),
    ("tier,env notin (dev)", ["a", "b"]),
    ("", ["a", "b", "c", "d", "e"]),
    ({"matchLabels": {"tier": "web"}}, ["a", "c"]),
    ({"matchExpressions": [{"key": "env", "operator": "In", "values": ["prod", "test"]}]}, ["a", "b", "d"]),
    ({"matchExpressions": [{"key": "env", "operator": "NotIn", "values": ["prod"]}]}, ["c", "d", "e"]),
    ({"matchExpressions": [{"key": "tier", "operator": "Exists"}]}, ["a", "b", "c"]),
    ({"matchExpressions": [{"key": "tier", "operator": "DoesNotExist"}]}, ["d", "e"]),
    (
        {"matchLabels": {"env": "prod"}, "matchExpressions": [{"key": "tier", "operator": "NotIn", "values": ["db"]}]},
        ["a"],
    ),
    ({}, ["a", "b", "c", "d", "e"]),
]


@pytest.fixture
async def labelled(client: Client, namespace: str) -> str:
    for name, labels in OBJECTS.items():
        await client.create(config_map(namespace, name, labels=labels or None))
    return namespace


@pytest.mark.parametrize(("selector", "expected"), CASES, ids=[str(c[0]) for c in CASES])
async def test_list_by_label_selector(client: Client, labelled: str, selector: Any, expected: list[str]) -> None:
    listed = await client.list("v1", "ConfigMap", namespace=labelled, label_selector=selector)
    assert [o["metadata"]["name"] for o in listed.items] == expected


async def test_a_selector_across_namespaces(client: Client, labelled: str) -> None:
    listed = await client.list("v1", "ConfigMap", label_selector=f"tier=web,kubernetes.io/ns-test notin ({labelled})")
    names = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in listed.items}
    assert {(labelled, "a"), (labelled, "c")} <= names
    assert not {(labelled, n) for n in ("b", "d", "e")} & names
