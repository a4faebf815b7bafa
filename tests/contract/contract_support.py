"""Builders and small helpers for the contract tests (objects stay plain dicts)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Any

from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj
from clusterclass.kube.client import Client, WatchEvent
from clusterclass.kube.errors import ApiError

CAPI = "cluster.x-k8s.io/v1beta1"
#: the storage version of every Cluster API kind (v1beta1 is served too, converted by the conversion webhook)
CAPI_V1BETA2 = "cluster.x-k8s.io/v1beta2"
#: a Cluster's spec that survives the round trip through v1beta2 unchanged (``paused: false`` does not: v1beta2's
#: ``paused`` is a ``*bool`` with omitempty, so upstream's conversion drops a false one)
CLUSTER_SPEC: dict[str, Any] = {"controlPlaneEndpoint": {"host": "cp.example.com", "port": 6443}}


@dataclass
class Backend:
    """One backend under test: its name, a client, and how to make its watch history too old."""

    name: str
    client: Client
    #: after this, a watch of ConfigMaps from any resourceVersion read before it raises Gone
    expire_history: Callable[[], Awaitable[None]]


#: how long a helper waits for a watch event or a condition before the test fails (a guard, not a speed check)
WATCH_GUARD = 30.0


async def eventually(condition: Callable[[], bool]) -> None:
    """Wait until ``condition()`` holds, failing the test after :data:`WATCH_GUARD`."""
    async with asyncio.timeout(WATCH_GUARD):
        while not condition():
            await asyncio.sleep(0.01)


def config_map(
    namespace: str, name: str, data: dict[str, str] | None = None, *, labels: dict[str, str] | None = None, **meta: Any
) -> Obj:
    metadata: dict[str, Any] = {"name": name, "namespace": namespace, **meta}
    if labels is not None:
        metadata["labels"] = labels
    obj: Obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": metadata}
    if data is not None:
        obj["data"] = data
    return obj


def cluster(namespace: str, name: str, spec: dict[str, Any] | None = None, **meta: Any) -> Obj:
    """A Cluster API Cluster: a custom resource with a status subresource."""
    return {
        "apiVersion": CAPI,
        "kind": "Cluster",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": spec if spec is not None else json_copy(CLUSTER_SPEC),
    }


def machine_set(namespace: str, name: str, spec: dict[str, Any] | None = None, **meta: Any) -> Obj:
    """A valid Cluster API MachineSet (its schema has required fields and an enum)."""
    default_spec: dict[str, Any] = {
        "clusterName": "c1",
        "selector": {"matchLabels": {"set": name}},
        "template": {
            "metadata": {"labels": {"set": name}},
            "spec": {
                "clusterName": "c1",
                "bootstrap": {"dataSecretName": "boot"},
                "infrastructureRef": {"apiVersion": "v1", "kind": "ConfigMap", "name": "infra"},
            },
        },
    }
    return {
        "apiVersion": CAPI,
        "kind": "MachineSet",
        "metadata": {"name": name, "namespace": namespace, **meta},
        "spec": spec if spec is not None else default_spec,
    }


#: what KubeadmControlPlane v1beta1's schema defaults ``spec.rolloutStrategy`` to (v1beta2's has no default)
ROLLOUT_STRATEGY_DEFAULT: dict[str, Any] = {"rollingUpdate": {"maxSurge": 1}, "type": "RollingUpdate"}


def control_plane(namespace: str, name: str, **spec: Any) -> Obj:
    """A valid KubeadmControlPlane v1beta1: its schema defaults ``spec.rolloutStrategy`` when it is missing."""
    return {
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta1",
        "kind": "KubeadmControlPlane",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "version": "v1.30.0",
            "kubeadmConfigSpec": {},
            "machineTemplate": {
                "infrastructureRef": {
                    "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                    "kind": "DockerMachineTemplate",
                    "name": "t",
                }
            },
            **spec,
        },
    }


#: the cause kube-apiserver adds when a schema's CEL rules (``x-kubernetes-validations``) were not run because
#: of other errors; every v1.14 Cluster API schema has such rules somewhere
RULES_NOT_CHECKED = ("FieldValueInvalid", "<nil>")


def rv(obj: Obj) -> int:
    """The object's resourceVersion as a number (kube-apiserver's are etcd revisions)."""
    return int(obj["metadata"]["resourceVersion"])


def causes(error: ApiError) -> list[tuple[str, str]]:
    """(reason, field) of each cause in the error's details, sorted."""
    return sorted((str(c.get("reason", "")), str(c.get("field", ""))) for c in error.details.get("causes", []))


def fields_of(error: ApiError) -> set[str]:
    return {str(c.get("field", "")) for c in error.details.get("causes", [])}


def assert_status(error: ApiError, code: int, reason: str) -> None:
    """The error carries a Kubernetes Status with this code and reason."""
    assert error.status.get("kind") == "Status"
    assert error.status.get("status") == "Failure"
    assert (error.code, error.reason) == (code, reason)
    assert error.status.get("code") == code


class Events:
    """Reads a watch stream event by event, with a guard so a missing event fails instead of hanging."""

    def __init__(self, stream: AsyncIterator[WatchEvent]) -> None:
        self._stream = stream.__aiter__()

    async def next(self) -> WatchEvent:
        async with asyncio.timeout(WATCH_GUARD):
            return await self._stream.__anext__()

    async def next_change(self) -> WatchEvent:
        """The next event that is not a BOOKMARK."""
        while True:
            event = await self.next()
            if event["type"] != "BOOKMARK":
                return event

    async def take(self, count: int) -> list[WatchEvent]:
        return [await self.next_change() for _ in range(count)]

    async def until(self, done: Callable[[WatchEvent], bool]) -> list[WatchEvent]:
        seen: list[WatchEvent] = []
        while True:
            event = await self.next()
            seen.append(event)
            if done(event):
                return seen

    async def rest(self) -> list[WatchEvent]:
        """Every event until the server ends the stream."""
        seen: list[WatchEvent] = []
        async with asyncio.timeout(WATCH_GUARD):
            async for event in self._stream:
                seen.append(event)
        return seen

    async def close(self) -> None:
        """End the watch: every backend's watch is an async generator."""
        await self._stream.aclose()  # type: ignore[attr-defined]


def summary(events: list[WatchEvent]) -> list[tuple[str, str | None]]:
    """(type, name) of each event, for readable comparisons."""
    return [(e["type"], e["object"].get("metadata", {}).get("name")) for e in events]
