"""Cluster defaulting (spec §6.1.1): ref namespaces, the ``v`` prefix, variables when the class is reconciled."""

from __future__ import annotations

import copy
from typing import Any

from check_support import cluster, cluster_class, deployment, pool, variable, world

from clusterclass.topology.check.cluster import default_cluster

LOCATION = variable("location", {"type": "string", "default": "us-east"})


def test_ref_namespaces_are_defaulted_to_the_cluster_namespace() -> None:
    obj = cluster()
    obj["spec"]["infrastructureRef"] = {"kind": "DockerCluster", "name": "x"}
    obj["spec"]["controlPlaneRef"] = {"kind": "KubeadmControlPlane", "name": "y", "namespace": ""}
    defaulted = default_cluster(obj, reader=world())
    assert defaulted["spec"]["infrastructureRef"]["namespace"] == "default"
    assert defaulted["spec"]["controlPlaneRef"]["namespace"] == "default"


def test_ref_namespaces_already_set_are_kept() -> None:
    obj = cluster()
    obj["spec"]["infrastructureRef"] = {"kind": "DockerCluster", "name": "x", "namespace": "other"}
    assert default_cluster(obj, reader=world())["spec"]["infrastructureRef"]["namespace"] == "other"


def test_v_is_prepended_to_the_version() -> None:
    assert default_cluster(cluster(version="1.28.0"), reader=world())["spec"]["topology"]["version"] == "v1.28.0"
    assert default_cluster(cluster(version="v1.28.0"), reader=world())["spec"]["topology"]["version"] == "v1.28.0"


def test_input_is_not_mutated() -> None:
    obj = cluster(version="1.28.0", variables=[])
    before = copy.deepcopy(obj)
    default_cluster(obj, reader=world(cluster_class(variables=[LOCATION])))
    assert obj == before


def test_variables_are_defaulted_when_the_class_is_found_and_reconciled() -> None:
    defaulted = default_cluster(cluster(), reader=world(cluster_class(variables=[LOCATION])))
    assert defaulted["spec"]["topology"]["variables"] == [{"name": "location", "value": "us-east"}]


def test_variables_are_not_defaulted_when_the_class_is_missing() -> None:
    defaulted = default_cluster(cluster(class_name="absent"), reader=world(cluster_class(variables=[LOCATION])))
    assert "variables" not in defaulted["spec"]["topology"]


def test_variables_are_not_defaulted_when_the_class_is_not_reconciled() -> None:
    reader = world(cluster_class(variables=[LOCATION], is_reconciled=False))
    assert "variables" not in default_cluster(cluster(), reader=reader)["spec"]["topology"]


def test_an_offline_caller_may_count_every_class_as_reconciled() -> None:
    reader = world(cluster_class(variables=[LOCATION], is_reconciled=False))
    defaulted = default_cluster(cluster(), reader=reader, is_reconciled=lambda cc: True)
    assert defaulted["spec"]["topology"]["variables"] == [{"name": "location", "value": "us-east"}]


def test_no_variables_key_is_added_when_nothing_is_defaulted() -> None:
    assert "variables" not in default_cluster(cluster(), reader=world(cluster_class()))["spec"]["topology"]


def test_variables_that_are_not_a_list_are_left_for_validation() -> None:
    obj = cluster(variables="nonsense")  # type: ignore[arg-type]
    defaulted = default_cluster(obj, reader=world(cluster_class(variables=[LOCATION])))
    assert defaulted["spec"]["topology"]["variables"] == "nonsense"


def test_class_read_errors_leave_variables_alone() -> None:
    class Broken:
        def get(self, *args: Any) -> Any:
            raise RuntimeError("boom")

        def list(self, *args: Any) -> list[Any]:
            return []

    defaulted = default_cluster(cluster(version="1.2.3"), reader=Broken())
    assert defaulted["spec"]["topology"]["version"] == "v1.2.3"
    assert "variables" not in defaulted["spec"]["topology"]


def test_machine_pool_overrides_are_defaulted_but_never_added() -> None:
    proxy = variable(
        "httpProxy",
        {
            "type": "object",
            "properties": {"enabled": {"type": "boolean"}, "url": {"type": "string", "default": "http://proxy"}},
        },
    )
    obj = cluster(
        machine_pools=[
            pool("mp-0", variables={"overrides": [{"name": "httpProxy", "value": {"enabled": True}}]}),
            pool("mp-1"),
            pool("mp-2", variables={"overrides": []}),
        ]
    )
    pools = default_cluster(obj, reader=world(cluster_class(variables=[proxy, LOCATION])))["spec"]["topology"]
    machine_pools = pools["workers"]["machinePools"]
    assert machine_pools[0]["variables"]["overrides"] == [
        {"name": "httpProxy", "value": {"enabled": True, "url": "http://proxy"}}
    ]
    assert "variables" not in machine_pools[1]
    assert machine_pools[2]["variables"] == {"overrides": []}


def test_malformed_documents_are_returned_without_raising() -> None:
    reader = world(cluster_class(variables=[LOCATION]))
    malformed: list[dict[str, Any]] = [
        {},
        {"spec": 5},
        {"spec": {"topology": []}},
        {"metadata": [], "spec": {"topology": {"class": 5}}},
    ]
    for obj in malformed:
        assert default_cluster(obj, reader=reader) == obj


def test_durations_are_written_back_as_go_formats_them() -> None:
    """Upstream's webhook decodes the Cluster into typed structs: a ``5m`` timeout is stored as ``5m0s``."""
    obj = cluster(
        control_plane={
            "nodeDrainTimeout": "5m",
            "machineHealthCheck": {"nodeStartupTimeout": "1h", "unhealthyConditions": [{"timeout": "90s"}]},
        },
        machine_deployments=[
            deployment("md1", nodeDeletionTimeout="30m", machineHealthCheck={"nodeStartupTimeout": "600s"})
        ],
        machine_pools=[pool("mp1", nodeVolumeDetachTimeout="1.5h")],
    )
    topology = default_cluster(obj, reader=world())["spec"]["topology"]
    assert topology["controlPlane"]["nodeDrainTimeout"] == "5m0s"
    assert topology["controlPlane"]["machineHealthCheck"] == {
        "nodeStartupTimeout": "1h0m0s",
        "unhealthyConditions": [{"timeout": "1m30s"}],
    }
    deployment_topology = topology["workers"]["machineDeployments"][0]
    assert deployment_topology["nodeDeletionTimeout"] == "30m0s"
    assert deployment_topology["machineHealthCheck"]["nodeStartupTimeout"] == "10m0s"
    assert topology["workers"]["machinePools"][0]["nodeVolumeDetachTimeout"] == "1h30m0s"


def test_a_duration_go_cannot_parse_is_left_for_validation() -> None:
    obj = cluster(machine_pools=[pool("mp1", nodeDrainTimeout="five minutes")])
    defaulted = default_cluster(obj, reader=world())
    assert defaulted["spec"]["topology"]["workers"]["machinePools"][0]["nodeDrainTimeout"] == "five minutes"


def test_upstream_v1_6s_typed_webhook_adds_empty_metadata_to_every_topology_part() -> None:
    """v1.6's webhook answers ``metadata: {}`` on the control plane and every worker (Go's omitempty on structs);
    clusterclass serving Clusters on a v1beta1-only management cluster answers the same."""
    from clusterclass.topology.check.cluster import with_v1beta1_empty_metadata

    cluster = {
        "spec": {
            "topology": {
                "class": "c",
                "version": "v1.28.0",
                "workers": {
                    "machineDeployments": [{"class": "a", "name": "md-0"}],
                    "machinePools": [{"class": "b", "name": "mp-0", "metadata": {"labels": {"x": "y"}}}],
                },
            }
        }
    }
    answered = with_v1beta1_empty_metadata(cluster)
    topology = answered["spec"]["topology"]
    assert topology["controlPlane"] == {"metadata": {}}
    assert topology["workers"]["machineDeployments"][0]["metadata"] == {}
    assert topology["workers"]["machinePools"][0]["metadata"] == {"labels": {"x": "y"}}
    assert "controlPlane" not in cluster["spec"]["topology"], "the input is not changed"
    assert with_v1beta1_empty_metadata({"spec": {}}) == {"spec": {}}
