"""Discovery: from apiVersion and kind to the resource, its scope and its subresources."""

from __future__ import annotations

import pytest

from clusterclass.kube.client import Client, Resource
from clusterclass.kube.errors import NotFound

CASES = [
    ("v1", "ConfigMap", Resource("", "v1", "ConfigMap", "configmaps", True, frozenset())),
    ("v1", "Secret", Resource("", "v1", "Secret", "secrets", True, frozenset())),
    ("v1", "Event", Resource("", "v1", "Event", "events", True, frozenset())),
    (
        "coordination.k8s.io/v1",
        "Lease",
        Resource("coordination.k8s.io", "v1", "Lease", "leases", True, frozenset()),
    ),
    (
        "cluster.x-k8s.io/v1beta1",
        "Cluster",
        Resource("cluster.x-k8s.io", "v1beta1", "Cluster", "clusters", True, frozenset({"status"})),
    ),
    (
        "cluster.x-k8s.io/v1beta1",
        "ClusterClass",
        Resource("cluster.x-k8s.io", "v1beta1", "ClusterClass", "clusterclasses", True, frozenset({"status"})),
    ),
    (
        "cluster.x-k8s.io/v1beta1",
        "MachineDeployment",
        Resource(
            "cluster.x-k8s.io",
            "v1beta1",
            "MachineDeployment",
            "machinedeployments",
            True,
            frozenset({"status", "scale"}),
        ),
    ),
    (
        "cluster.x-k8s.io/v1beta1",
        "MachinePool",
        Resource("cluster.x-k8s.io", "v1beta1", "MachinePool", "machinepools", True, frozenset({"status", "scale"})),
    ),
    (
        "infrastructure.cluster.x-k8s.io/v1beta1",
        "DockerMachineTemplate",
        Resource(
            "infrastructure.cluster.x-k8s.io",
            "v1beta1",
            "DockerMachineTemplate",
            "dockermachinetemplates",
            True,
            frozenset(),
        ),
    ),
    # the storage version of each; subresources are per version (DockerMachineTemplate's status is v1beta2's)
    (
        "cluster.x-k8s.io/v1beta2",
        "Cluster",
        Resource("cluster.x-k8s.io", "v1beta2", "Cluster", "clusters", True, frozenset({"status"})),
    ),
    (
        "infrastructure.cluster.x-k8s.io/v1beta2",
        "DockerMachineTemplate",
        Resource(
            "infrastructure.cluster.x-k8s.io",
            "v1beta2",
            "DockerMachineTemplate",
            "dockermachinetemplates",
            True,
            frozenset({"status"}),
        ),
    ),
]


@pytest.mark.parametrize(("api_version", "kind", "expected"), CASES, ids=[f"{c[1]}-{c[0]}" for c in CASES])
async def test_resource_of_a_kind(client: Client, api_version: str, kind: str, expected: Resource) -> None:
    assert await client.resource(api_version, kind) == expected


async def test_namespaces_are_cluster_scoped(client: Client) -> None:
    namespaces = await client.resource("v1", "Namespace")
    assert (namespaces.plural, namespaces.namespaced) == ("namespaces", False)
    assert "status" in namespaces.subresources


@pytest.mark.parametrize(
    ("api_version", "kind"),
    [
        ("v1", "NoSuchKind"),
        ("cluster.x-k8s.io/v1beta1", "NoSuchKind"),
        ("no.such.group/v1", "Thing"),
        ("cluster.x-k8s.io/v1alpha4", "Cluster"),  # a version the CRD no longer serves
    ],
)
async def test_an_unknown_kind_is_not_found(client: Client, api_version: str, kind: str) -> None:
    with pytest.raises(NotFound):
        await client.resource(api_version, kind)


async def test_requests_for_an_unknown_kind_are_not_found(client: Client, namespace: str) -> None:
    with pytest.raises(NotFound):
        await client.get("no.such.group/v1", "Thing", "x", namespace=namespace)
    with pytest.raises(NotFound):
        await client.list("cluster.x-k8s.io/v1beta1", "NoSuchKind", namespace=namespace)
    with pytest.raises(NotFound):
        await client.create({"apiVersion": "no.such.group/v1", "kind": "Thing", "metadata": {"name": "x"}})
