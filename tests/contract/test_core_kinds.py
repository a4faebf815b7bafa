"""The core kinds a management cluster needs: Namespace, Secret, ConfigMap, Event, coordination Lease."""

from __future__ import annotations

import pytest
from contract_support import assert_status, rv

from clusterclass.kube.client import Client
from clusterclass.kube.errors import BadRequest, Conflict


async def test_a_secret_turns_string_data_into_data_and_defaults_its_type(client: Client, namespace: str) -> None:
    created = await client.create(
        {
            "apiVersion": "v1",
            "kind": "Secret",
            "metadata": {"name": "s", "namespace": namespace},
            "stringData": {"a": "b"},
            "data": {"c": "ZA=="},
        }
    )
    assert created["data"] == {"a": "Yg==", "c": "ZA=="}
    assert "stringData" not in created
    assert created["type"] == "Opaque"
    assert await client.get("v1", "Secret", "s", namespace=namespace) == created


async def test_secret_data_must_be_base64(client: Client, namespace: str) -> None:
    with pytest.raises(BadRequest) as bad:
        await client.create(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": "s", "namespace": namespace},
                "data": {"c": "not base64!"},
            }
        )
    assert_status(bad.value, 400, "BadRequest")


async def test_a_lease_can_be_taken_over_only_from_its_current_version(client: Client, namespace: str) -> None:
    lease = {
        "apiVersion": "coordination.k8s.io/v1",
        "kind": "Lease",
        "metadata": {"name": "leader", "namespace": namespace},
        "spec": {"holderIdentity": "one", "leaseDurationSeconds": 15},
    }
    created = await client.create(lease)
    assert created["spec"] == lease["spec"]
    assert "generation" not in created["metadata"]
    taken = await client.update({**created, "spec": {**created["spec"], "holderIdentity": "two"}})
    assert rv(taken) > rv(created)
    with pytest.raises(Conflict):
        await client.update({**created, "spec": {**created["spec"], "holderIdentity": "three"}})
    assert (await client.get("coordination.k8s.io/v1", "Lease", "leader", namespace=namespace))["spec"][
        "holderIdentity"
    ] == "two"


async def test_an_event_about_an_object(client: Client, namespace: str) -> None:
    created = await client.create(
        {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"generateName": "c1.", "namespace": namespace},
            "involvedObject": {
                "apiVersion": "cluster.x-k8s.io/v1beta1",
                "kind": "Cluster",
                "name": "c1",
                "namespace": namespace,
            },
            "reason": "TopologyCreate",
            "message": "Created MachinePool",
            "type": "Normal",
            "count": 1,
        }
    )
    assert created["metadata"]["name"].startswith("c1.")
    assert created["involvedObject"]["name"] == "c1"
    assert (created["reason"], created["message"], created["type"], created["count"]) == (
        "TopologyCreate",
        "Created MachinePool",
        "Normal",
        1,
    )
    listed = await client.list("v1", "Event", namespace=namespace)
    assert [e["metadata"]["name"] for e in listed.items] == [created["metadata"]["name"]]
