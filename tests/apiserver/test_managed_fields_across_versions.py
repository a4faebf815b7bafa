"""managedFields entries recorded in another version than a write's, as kube-apiserver keeps them.

A Cluster API kind is stored in v1beta2; the topology controller applies in v1beta1 while the providers write in
v1beta2. Every write takes the fields it changed from each entry *in that entry's version*, which means
converting the object — except where the answer is known without it (a status-only write cannot touch an entry
owning no status; a metadata-only write changes the same fields in every version). These tests pin that the
shortcuts give exactly what the conversion gives.
"""

from __future__ import annotations

from typing import Any

import pytest

from clusterclass.apiserver.apply import fieldmanager
from clusterclass.apiserver.inprocess_client import MemoryClient

V1BETA1 = "cluster.x-k8s.io/v1beta1"
V1BETA2 = "cluster.x-k8s.io/v1beta2"


def cluster() -> dict[str, Any]:
    return {
        "apiVersion": V1BETA1,
        "kind": "Cluster",
        "metadata": {"name": "c", "namespace": "default", "labels": {"team": "a"}},
        "spec": {"paused": False, "clusterNetwork": {"pods": {"cidrBlocks": ["10.0.0.0/16"]}}},
    }


async def history(client: MemoryClient) -> list[list[dict[str, Any]]]:
    """The managedFields after each of a mix of writes by an applier (v1beta1) and a provider (v1beta2)."""
    seen = []
    applied = await client.apply(cluster(), field_manager="topology")
    seen.append([{k: v for k, v in e.items() if k != "time"} for e in applied["metadata"]["managedFields"]])

    async def patch(body: dict[str, Any], *, status: bool = False) -> None:
        current = await client.get(V1BETA2, "Cluster", "c", namespace="default")
        body.setdefault("metadata", {})["resourceVersion"] = current["metadata"]["resourceVersion"]
        written = await client.patch(
            V1BETA2, "Cluster", "c", body, namespace="default", field_manager="provider", status=status
        )
        seen.append([{k: v for k, v in e.items() if k != "time"} for e in written["metadata"]["managedFields"]])

    provisioning = {"phase": "Provisioning", "initialization": {"infrastructureProvisioned": True}}
    await patch({"status": provisioning}, status=True)
    await patch({"metadata": {"finalizers": ["cluster.cluster.x-k8s.io"]}})
    await patch({"metadata": {"labels": {"team": "b"}}})  # a label the applier owns
    await patch({"status": {"phase": "Provisioned"}}, status=True)
    await patch({"spec": {"paused": True}})  # a spec field the applier owns
    return seen


async def test_the_shortcuts_give_what_converting_gives(monkeypatch: pytest.MonkeyPatch) -> None:
    fast = await history(MemoryClient())
    with monkeypatch.context() as patched:
        patched.setattr(fieldmanager._PerVersion, "_cannot_touch", lambda self, entry: False)
        patched.setattr(fieldmanager._PerVersion, "_touched", lambda self: {"f:spec", "f:status"})
        slow = await history(MemoryClient())
    assert fast == slow


async def test_a_v1beta2_write_takes_what_it_changed_from_a_v1beta1_applier() -> None:
    seen = await history(MemoryClient())
    topology = [next(e for e in entries if e["manager"] == "topology") for entries in seen]
    assert all(e["apiVersion"] == V1BETA1 for e in topology)
    assert "f:team" in topology[2]["fieldsV1"]["f:metadata"]["f:labels"]  # status and finalizer writes took nothing
    assert topology[1]["fieldsV1"] == topology[0]["fieldsV1"]
    assert "f:labels" not in topology[3]["fieldsV1"].get("f:metadata", {})  # the label write took the label
    assert "f:paused" not in topology[5]["fieldsV1"]["f:spec"]  # the spec write took paused
    assert "f:clusterNetwork" in topology[5]["fieldsV1"]["f:spec"]
