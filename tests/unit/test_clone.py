"""Cloning templates into objects and templates (spec §2.6)."""

from __future__ import annotations

from typing import Any

import builders as b
import pytest

from clusterclass.topology.clone import cloned_from_annotations, template_to_object, template_to_template


@pytest.mark.parametrize(
    ("api_version", "kind", "expected"),
    [
        ("infrastructure.cluster.x-k8s.io/v1beta1", "DockerMachinePoolTemplate", "DockerMachinePoolTemplate.infrastructure.cluster.x-k8s.io"),  # noqa: E501
        ("bootstrap.cluster.x-k8s.io/v1beta1", "KubeadmConfigTemplate", "KubeadmConfigTemplate.bootstrap.cluster.x-k8s.io"),  # noqa: E501
        ("v1", "ConfigMap", "ConfigMap"),
    ],
)  # fmt: skip
def test_cloned_from_group_kind(api_version: str, kind: str, expected: str) -> None:
    source = b.obj(api_version, kind, "source")
    assert cloned_from_annotations(source) == {b.CLONED_FROM_NAME: "source", b.CLONED_FROM_GROUPKIND: expected}


def _template_with_server_fields() -> dict[str, Any]:
    template = b.docker_machine_pool_template(
        "tpl",
        labels={"outer": "l"},
        annotations={"outer": "a", b.LAST_APPLIED: "{}"},
        template_labels={"inner": "l", b.CLUSTER_NAME: "wrong"},
        template_annotations={"inner": "a", b.CLONED_FROM_NAME: "forged"},
    )
    for metadata in (template["metadata"], template["spec"]["template"]["metadata"]):
        metadata.update(uid="u", resourceVersion="7", finalizers=["f"], ownerReferences=[{"kind": "ClusterClass"}])
    return template


def test_template_to_object() -> None:
    owner = {"apiVersion": b.CLUSTER_V1, "kind": "Cluster", "name": "c1", "uid": "c1-uid"}
    obj = template_to_object(
        _template_with_server_fields(),
        cluster_name="c1",
        namespace="ns",
        name="c1-pool-abcde",
        labels={"caller": "l", "inner": "caller"},
        annotations={"caller": "a"},
        owner_references=[owner],
    )
    assert obj == {
        "apiVersion": b.INFRA_V1,
        "kind": "DockerMachinePool",
        "metadata": {
            "name": "c1-pool-abcde",
            "namespace": "ns",
            "labels": {"inner": "caller", "caller": "l", b.CLUSTER_NAME: "c1", b.OWNED: ""},
            "annotations": {
                "inner": "a",
                "caller": "a",
                b.CLONED_FROM_NAME: "tpl",
                b.CLONED_FROM_GROUPKIND: "DockerMachinePoolTemplate.infrastructure.cluster.x-k8s.io",
            },
            "ownerReferences": [owner],
        },
        "spec": {"template": {"customImage": "kindest/node:v1.28.0"}},
    }


def test_template_to_object_takes_kind_and_api_version_from_the_inner_template_when_set() -> None:
    template = b.docker_machine_pool_template("tpl")
    template["spec"]["template"].update(apiVersion="other.example.com/v2", kind="Special")
    obj = template_to_object(template, cluster_name="c1", namespace="ns", name="n")
    assert (obj["apiVersion"], obj["kind"]) == ("other.example.com/v2", "Special")
    assert "ownerReferences" not in obj["metadata"]


def test_template_to_template() -> None:
    owner = {"apiVersion": b.CLUSTER_V1, "kind": "Cluster", "name": "c1", "uid": "c1-uid"}
    source = _template_with_server_fields()
    copied = template_to_template(
        source, cluster_name="c1", namespace="ns", name="c1-md-abcde", labels={"caller": "l"}, owner_references=[owner]
    )
    assert copied == {
        "apiVersion": b.INFRA_V1,
        "kind": "DockerMachinePoolTemplate",
        "metadata": {
            "name": "c1-md-abcde",
            "namespace": "ns",
            "labels": {"outer": "l", "caller": "l", b.CLUSTER_NAME: "c1", b.OWNED: ""},
            "annotations": {
                "outer": "a",
                b.CLONED_FROM_NAME: "tpl",
                b.CLONED_FROM_GROUPKIND: "DockerMachinePoolTemplate.infrastructure.cluster.x-k8s.io",
            },
            "ownerReferences": [owner],
        },
        "spec": source["spec"],
    }
    assert copied["spec"] is not source["spec"]
