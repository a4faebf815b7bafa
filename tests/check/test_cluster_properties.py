"""Property tests: Cluster admission never raises, and defaulting is idempotent.

Documents are valid Clusters (and the ClusterClass, control plane, workers they are judged against)
with random parts replaced, removed or added, plus documents of pure noise. Whatever comes in,
:func:`validate_cluster` returns a :class:`Result` of field errors and string warnings, and
:func:`default_cluster` applied twice gives what it gives once.
"""

from __future__ import annotations

import copy
from typing import Any

from check_support import (
    Nodes,
    assert_only_field_errors,
    b,
    cluster,
    cluster_class,
    control_plane,
    deployment,
    json_values,
    keys,
    machine,
    machine_deployment,
    machine_pool,
    mutated,
    pool,
    variable,
    world,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusterclass.topology.check import Gates
from clusterclass.topology.check.cluster import default_cluster, validate_cluster

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

VARIABLES = [
    variable("location", {"type": "string", "default": "us-east", "enum": ["us-east", "eu-west"]}, required=True),
    variable(
        "httpProxy",
        {
            "type": "object",
            "properties": {
                "enabled": {"type": "boolean"},
                "url": {"type": "string", "default": "http://localhost:3128"},
                "ports": {"type": "array", "items": {"type": "integer", "minimum": 1}},
            },
        },
    ),
    variable("cpu", {"type": "integer", "default": 2, "maximum": 64}),
]


def base_cluster(version: str = "v1.20.0") -> dict[str, Any]:
    obj = cluster(
        version=version,
        annotations={"topology.cluster.x-k8s.io/upgrade-concurrency": "2"},
        control_plane={"replicas": 3, "metadata": {"labels": {"a": "b"}}, "machineHealthCheck": {"enable": True}},
        control_plane_ref=control_plane(),
        infrastructure_ref={"apiVersion": b.INFRA_V1, "kind": "DockerCluster", "name": "cluster1"},
        machine_deployments=[
            deployment("md1", replicas=1, machineHealthCheck={"maxUnhealthy": "40%", "nodeStartupTimeout": "10m"}),
        ],
        machine_pools=[
            pool("pool1", replicas=2, variables={"overrides": [{"name": "httpProxy", "value": {"enabled": True}}]}),
            pool("pool2", failureDomains=["a"], annotations={"x": "y"}),
        ],
        variables=[{"name": "location", "value": "eu-west"}, {"name": "cpu", "value": 4}],
    )
    obj["spec"]["clusterNetwork"] = {"pods": {"cidrBlocks": ["192.168.0.0/16"]}}
    return obj


def base_world_objects() -> list[dict[str, Any]]:
    labels = b.owned_labels("cluster1", **{b.DEPLOYMENT_NAME: "md1"})
    return [
        cluster_class(variables=VARIABLES, machine_infrastructure=True, cp_mhc={"maxUnhealthy": 1}),
        cluster_class("class2", variables=VARIABLES),
        control_plane(),
        machine_deployment("cluster1-md1", "v1.19.1"),
        machine("m1", "v1.19.1", labels),
        machine_pool("cluster1-pool1", "v1.19.1", node_refs=["node1", "node2"]),
    ]


nodes_strategy = st.sampled_from(
    [None, Nodes({"node1": "v1.19.1", "node2": "v1.19.1"}), Nodes({"node1": "v1.18.0"}), Nodes(unknown=True)]
)


@SETTINGS
@given(
    doc=mutated(base_cluster()),
    reconciled=st.booleans(),
    gates=st.builds(Gates, cluster_topology=st.booleans()),
)
def test_create_of_a_mutated_cluster_gives_only_field_errors(doc: Any, reconciled: bool, gates: Gates) -> None:
    reader = world(*base_world_objects())
    defaulted = default_cluster(doc, reader=reader, is_reconciled=lambda cc: reconciled)
    assert_only_field_errors(validate_cluster(defaulted, reader=reader, gates=gates))
    assert_only_field_errors(validate_cluster(doc, reader=reader, gates=gates))


@SETTINGS
@given(
    doc=mutated(base_cluster("v1.20.0")),
    old=mutated(base_cluster("v1.19.1"), max_mutations=2),
    nodes=nodes_strategy,
    annotate=st.sampled_from([None, "unsafe.topology.cluster.x-k8s.io/disable-update-version-check"]),
)
def test_update_of_a_mutated_cluster_gives_only_field_errors(doc: Any, old: Any, nodes: Any, annotate: Any) -> None:
    reader = world(*base_world_objects())
    if annotate and isinstance(doc.get("metadata"), dict) and isinstance(doc["metadata"].get("annotations"), dict):
        doc["metadata"]["annotations"][annotate] = ""
    defaulted = default_cluster(doc, reader=reader)
    assert_only_field_errors(validate_cluster(defaulted, old, reader=reader, nodes=nodes))


@SETTINGS
@given(
    cc=mutated(cluster_class(variables=VARIABLES, machine_infrastructure=True), max_mutations=5),
    cp=mutated(control_plane("v1.19.1", "v1.19.0"), max_mutations=3),
    pool_object=mutated(machine_pool("cluster1-pool1", "v1.19.1", node_refs=["node1"]), max_mutations=3),
    md_object=mutated(machine_deployment("cluster1-md1", "v1.19.1"), max_mutations=3),
    nodes=nodes_strategy,
)
def test_malformed_objects_in_the_world_give_only_field_errors(
    cc: Any, cp: Any, pool_object: Any, md_object: Any, nodes: Any
) -> None:
    reader = world(cc, cp, pool_object, md_object, cluster_class("class2", variables=VARIABLES))
    new = base_cluster("v1.20.0")
    old = base_cluster("v1.19.1")
    defaulted = default_cluster(new, reader=reader, is_reconciled=lambda _: True)
    result = validate_cluster(defaulted, old, reader=reader, nodes=nodes, is_reconciled=lambda _: True)
    assert_only_field_errors(result)
    changed = copy.deepcopy(defaulted)
    changed["spec"]["topology"]["class"] = "class2"
    assert_only_field_errors(validate_cluster(changed, old, reader=reader, nodes=nodes))


@SETTINGS
@given(doc=st.dictionaries(keys, json_values, max_size=5), old=st.none() | st.dictionaries(keys, json_values))
def test_noise_gives_only_field_errors(doc: Any, old: Any) -> None:
    reader = world(*base_world_objects())
    assert_only_field_errors(validate_cluster(default_cluster(doc, reader=reader), old, reader=reader))


@SETTINGS
@given(spec=json_values, topology=json_values)
def test_noise_under_spec_and_topology_gives_only_field_errors(spec: Any, topology: Any) -> None:
    reader = world(*base_world_objects())
    for doc in ({**base_cluster(), "spec": spec}, {**base_cluster(), "spec": {"topology": topology}}):
        assert_only_field_errors(validate_cluster(default_cluster(doc, reader=reader), reader=reader))


@SETTINGS
@given(doc=mutated(base_cluster(), max_mutations=6), reconciled=st.booleans())
def test_defaulting_is_idempotent(doc: Any, reconciled: bool) -> None:
    reader = world(*base_world_objects())
    once = default_cluster(doc, reader=reader, is_reconciled=lambda cc: reconciled)
    twice = default_cluster(once, reader=reader, is_reconciled=lambda cc: reconciled)
    assert twice == once


@SETTINGS
@given(doc=st.dictionaries(keys, json_values, max_size=5))
def test_defaulting_noise_is_idempotent(doc: Any) -> None:
    reader = world(*base_world_objects())
    once = default_cluster(doc, reader=reader)
    assert default_cluster(once, reader=reader) == once


@SETTINGS
@given(cc=mutated(cluster_class(variables=VARIABLES), max_mutations=6))
def test_defaulting_against_a_malformed_cluster_class_is_idempotent_and_never_raises(cc: Any) -> None:
    reader = world(cc)
    once = default_cluster(base_cluster(), reader=reader, is_reconciled=lambda _: True)
    assert default_cluster(once, reader=reader, is_reconciled=lambda _: True) == once
    assert_only_field_errors(validate_cluster(once, reader=reader, is_reconciled=lambda _: True))
