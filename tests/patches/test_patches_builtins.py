"""Builtin variables and the user variables each patch sees (spec §5.3, A21, A23; upstream's
TestMachinePool, TestMachineDeployment, TestControlPlane and TestGlobal of §10.8).

Builtins are captured through the engine itself: a patch writes ``valueFrom.variable: builtin`` (or
``{{ toJson . }}`` for all variables) into each template, so the test sees exactly what a patch of
that template would.
"""

from __future__ import annotations

from typing import Any

import builders as b
import pytest
from patch_support import (
    BOOTSTRAP_TEMPLATE,
    CONTROL_PLANE,
    INFRA_CLUSTER,
    MACHINE_POOL_TEMPLATE,
    MACHINE_TEMPLATE,
    PatchWorld,
    add,
    apply_engine,
    cluster,
    compute,
    definition,
    deployment,
    inline_patch,
    overrides,
    pool,
)

from clusterclass.api.views import Topology
from clusterclass.topology import builtins
from clusterclass.topology.desired import DesiredState
from clusterclass.topology.reader import IndexedNodes

ALL_WORKERS = {"machineDeploymentClass": {"names": ["*"]}, "machinePoolClass": {"names": ["*"]}}
CAPTURE = add("/spec/template/spec/builtin", variable="builtin")


def capture_world(**kwargs: Any) -> PatchWorld:
    """Every template of the world gets ``builtin`` at ``spec.template.spec.builtin``."""
    return PatchWorld(
        patches=[
            inline_patch(
                "capture",
                definition(INFRA_CLUSTER, {"infrastructureCluster": True}, CAPTURE),
                definition(CONTROL_PLANE, {"controlPlane": True}, CAPTURE),
                definition(
                    MACHINE_TEMPLATE, {"controlPlane": True, "machineDeploymentClass": {"names": ["*"]}}, CAPTURE
                ),
                definition(BOOTSTRAP_TEMPLATE, ALL_WORKERS, CAPTURE),
                definition(MACHINE_POOL_TEMPLATE, ALL_WORKERS, CAPTURE),
            )
        ],
        **kwargs,
    )


def name(obj: dict[str, Any]) -> str:
    return str(obj["metadata"]["name"])


# --- builtin.cluster -------------------------------------------------------------------------------------

V4, V4B, V6, V6B = "10.0.0.0/8", "192.168.0.0/16", "fd00::/8", "2001:db8::/64"

#: (id, clusterNetwork, builtin.cluster.network) — upstream's GetIPFamily and omitempty JSON
NETWORK_CASES: list[tuple[str, Any, Any]] = [
    ("no clusterNetwork", None, None),
    ("empty clusterNetwork", {}, {"ipFamily": "IPv4"}),
    ("IPv4", {"pods": {"cidrBlocks": [V4]}, "services": {"cidrBlocks": [V4B]}}, {"services": [V4B], "pods": [V4], "ipFamily": "IPv4"}),  # noqa: E501
    ("IPv6", {"pods": {"cidrBlocks": [V6]}, "services": {"cidrBlocks": [V6B]}}, {"services": [V6B], "pods": [V6], "ipFamily": "IPv6"}),  # noqa: E501
    ("DualStack pods decide", {"pods": {"cidrBlocks": [V4, V6]}, "services": {"cidrBlocks": [V4B]}}, {"services": [V4B], "pods": [V4, V6], "ipFamily": "DualStack"}),  # noqa: E501
    ("DualStack both", {"pods": {"cidrBlocks": [V6, V4]}, "services": {"cidrBlocks": [V4B, V6B]}}, {"services": [V4B, V6B], "pods": [V6, V4], "ipFamily": "DualStack"}),  # noqa: E501
    ("dual-stack services, IPv4 pods: Invalid", {"pods": {"cidrBlocks": [V4]}, "services": {"cidrBlocks": [V4B, V6B]}}, {"services": [V4B, V6B], "pods": [V4], "ipFamily": "Invalid"}),  # noqa: E501
    ("family mismatch: Invalid", {"pods": {"cidrBlocks": [V4]}, "services": {"cidrBlocks": [V6]}}, {"services": [V6], "pods": [V4], "ipFamily": "Invalid"}),  # noqa: E501
    ("too many CIDRs: Invalid", {"pods": {"cidrBlocks": [V4, V4B, V6]}}, {"pods": [V4, V4B, V6], "ipFamily": "Invalid"}),  # noqa: E501
    ("unparsable CIDR: Invalid", {"pods": {"cidrBlocks": ["not-a-cidr"]}, "services": {"cidrBlocks": [V4B]}}, {"services": [V4B], "pods": ["not-a-cidr"], "ipFamily": "Invalid"}),  # noqa: E501
    ("address without prefix: Invalid", {"services": {"cidrBlocks": ["10.0.0.1"]}}, {"services": ["10.0.0.1"], "ipFamily": "Invalid"}),  # noqa: E501
    ("invalid services: Invalid", {"pods": {"cidrBlocks": [V4]}, "services": {"cidrBlocks": ["x/y"]}}, {"services": ["x/y"], "pods": [V4], "ipFamily": "Invalid"}),  # noqa: E501
    ("services only", {"services": {"cidrBlocks": [V6]}}, {"services": [V6], "ipFamily": "IPv6"}),
    ("pods only", {"pods": {"cidrBlocks": [V4]}}, {"pods": [V4], "ipFamily": "IPv4"}),
    ("empty lists are left out", {"pods": {"cidrBlocks": []}, "services": {"cidrBlocks": []}}, {"ipFamily": "IPv4"}),
    ("lists without cidrBlocks", {"pods": {}, "services": {}}, {"ipFamily": "IPv4"}),
    ("serviceDomain", {"serviceDomain": "cluster.local", "pods": {"cidrBlocks": [V4]}}, {"serviceDomain": "cluster.local", "pods": [V4], "ipFamily": "IPv4"}),  # noqa: E501
    ("empty serviceDomain is left out", {"serviceDomain": ""}, {"ipFamily": "IPv4"}),
]  # fmt: skip


@pytest.mark.parametrize(("network", "expected"), [c[1:] for c in NETWORK_CASES], ids=[c[0] for c in NETWORK_CASES])
def test_cluster_builtin(network: Any, expected: Any) -> None:
    the_cluster = cluster(name="cluster1", version="v1.21.1", class_name="clusterClass1", namespace="ns1")
    if network is not None:
        the_cluster["spec"]["clusterNetwork"] = network
    got = builtins.cluster_builtin(the_cluster, Topology(the_cluster["spec"]["topology"]))
    want: dict[str, Any] = {
        "name": "cluster1",
        "namespace": "ns1",
        "topology": {"version": "v1.21.1", "class": "clusterClass1"},
    }
    if expected is not None:
        want["network"] = expected
    assert got == {"cluster": want}
    # upstream's JSON field order, so a rendered {{ .builtin }} reads the same
    assert list(got["cluster"]) == list(want)
    if expected is not None:
        assert list(got["cluster"]["network"]) == list(expected)


# --- builtins as each template sees them -------------------------------------------------------------------------


def test_every_template_sees_its_own_builtins() -> None:
    the_cluster = cluster(
        control_plane={"replicas": 3},
        machine_deployments=[deployment("md-0", replicas=2)],
        machine_pools=[pool("mp-0", replicas=3), pool("mp-1")],
    )
    the_cluster["spec"]["clusterNetwork"] = {"pods": {"cidrBlocks": [V4]}}
    desired = compute(the_cluster, capture_world().objects()).desired
    cluster_builtin = {
        "name": "cluster1",
        "namespace": "default",
        "topology": {"version": "v1.2.3", "class": "class1"},
        "network": {"pods": [V4], "ipFamily": "IPv4"},
    }
    cp, machine_template = desired.control_plane, desired.control_plane_infrastructure_machine_template
    assert machine_template is not None
    cp_builtin = {
        "version": "v1.2.3",
        "name": name(cp),
        "replicas": 3,
        "machineTemplate": {"infrastructureRef": {"name": name(machine_template)}},
    }
    assert desired.infrastructure_cluster["spec"]["builtin"] == {"cluster": cluster_builtin}
    assert cp["spec"]["builtin"] == {"cluster": cluster_builtin, "controlPlane": cp_builtin}
    assert machine_template["spec"]["template"]["spec"]["builtin"] == {
        "cluster": cluster_builtin,
        "controlPlane": cp_builtin,
    }

    md = desired.machine_deployments["md-0"]
    md_builtin = {
        "version": "v1.2.3",
        "class": "md-class",
        "name": name(md.object),
        "topologyName": "md-0",
        "replicas": 2,
        "bootstrap": {"configRef": {"name": name(md.bootstrap)}},
        "infrastructureRef": {"name": name(md.infrastructure)},
    }
    for template in (md.bootstrap, md.infrastructure):
        seen = template["spec"]["template"]["spec"]["builtin"]
        assert seen == {"cluster": cluster_builtin, "machineDeployment": md_builtin}
        assert list(seen["machineDeployment"]) == list(md_builtin)

    for topology_name, replicas in (("mp-0", 3), ("mp-1", None)):
        mp = desired.machine_pools[topology_name]
        mp_builtin: dict[str, Any] = {
            "version": "v1.2.3",
            "class": "mp-class",
            "name": name(mp.object),
            "topologyName": topology_name,
        }
        if replicas is not None:
            mp_builtin["replicas"] = replicas
        mp_builtin["bootstrap"] = {"configRef": {"name": name(mp.bootstrap)}}  # the KubeadmConfig object
        mp_builtin["infrastructureRef"] = {"name": name(mp.infrastructure)}  # the DockerMachinePool object
        # both objects of a MachinePool see the same variables, at the object's spec
        for obj in (mp.bootstrap, mp.infrastructure):
            seen = obj["spec"]["builtin"]
            assert seen == {"cluster": cluster_builtin, "machinePool": mp_builtin}
            assert list(seen["machinePool"]) == list(mp_builtin)
        assert mp.object["spec"]["template"]["spec"]["bootstrap"]["configRef"]["name"] == name(mp.bootstrap)


def test_control_plane_builtin_without_replicas_or_machine_template() -> None:
    """``replicas`` only when the topology sets them; ``machineTemplate`` only when the class has one."""
    world = capture_world(machine_infrastructure=None)
    desired = compute(cluster(), world.objects()).desired
    assert desired.control_plane["spec"]["builtin"]["controlPlane"] == {
        "version": "v1.2.3",
        "name": name(desired.control_plane),
    }


def test_control_plane_replicas_builtin_reads_the_desired_object() -> None:
    cp = b.kubeadm_control_plane_template("cp")
    desired = compute(cluster(control_plane={"replicas": 0}), capture_world(control_plane=cp).objects()).desired
    assert desired.control_plane["spec"]["builtin"]["controlPlane"]["replicas"] == 0


def test_machine_deployment_builtin_without_replicas() -> None:
    desired = compute(cluster(machine_deployments=[deployment("md-0")]), capture_world().objects()).desired
    seen = desired.machine_deployments["md-0"].bootstrap["spec"]["template"]["spec"]["builtin"]["machineDeployment"]
    assert "replicas" not in seen
    assert seen["topologyName"] == "md-0"


# --- builtins come from the desired objects: held versions and existing names -----------------------------------


def existing_pool(world: PatchWorld, mp_name: str, topology_name: str, version: str) -> list[dict[str, Any]]:
    """A MachinePool an earlier reconcile created, with its KubeadmConfig and DockerMachinePool."""
    label = {b.POOL_NAME: topology_name}
    bootstrap = b.cloned_object(world.mp_bootstrap, f"{mp_name}-config", labels=label)
    infrastructure = b.cloned_object(world.mp_infrastructure, f"{mp_name}-infra", labels=label)
    mp = b.machine_pool(
        mp_name, topology_name, bootstrap=bootstrap, infrastructure=infrastructure, version=version, replicas=2
    )
    return [mp, bootstrap, infrastructure]


def test_machine_pool_builtin_version_lags_the_topology_while_held() -> None:
    """The control plane is upgrading to v1.2.3: the existing pool stays at v1.2.2 and its patches see that
    (spec §4.5, A21)."""
    world = capture_world(machine_infrastructure=None)  # an existing control plane without a machine template
    cp = b.control_plane(version="v1.2.3", status_version="v1.2.2", replicas=1)
    objects = [*world.objects(), cp, *existing_pool(world, "mp-old", "mp-0", "v1.2.2")]
    the_cluster = cluster(
        control_plane={"replicas": 1},
        control_plane_ref=cp,
        machine_pools=[pool("mp-0", replicas=2)],
    )
    computation = compute(the_cluster, objects)
    desired = computation.desired
    held = desired.machine_pools["mp-0"]
    assert held.object["spec"]["template"]["spec"]["version"] == "v1.2.2"
    for obj in (held.bootstrap, held.infrastructure):
        seen = obj["spec"]["builtin"]
        assert seen["cluster"]["topology"]["version"] == "v1.2.3"
        assert seen["machinePool"] == {
            "version": "v1.2.2",
            "class": "mp-class",
            "name": "mp-old",
            "topologyName": "mp-0",
            "replicas": 2,
            "bootstrap": {"configRef": {"name": "mp-old-config"}},
            "infrastructureRef": {"name": "mp-old-infra"},
        }
    assert desired.control_plane["spec"]["builtin"]["controlPlane"]["version"] == "v1.2.3"
    assert "mp-old" in computation.upgrades.machine_pools.pending_upgrade


def test_control_plane_builtin_version_is_the_desired_one_while_an_upgrade_is_pending() -> None:
    """A MachinePool still upgrading holds the control plane at v1.2.2 though the topology says v1.2.3."""
    world = capture_world(machine_infrastructure=None)
    cp = b.control_plane(version="v1.2.2", status_version="v1.2.2", replicas=1)
    mp_objects = existing_pool(world, "mp-old", "mp-0", "v1.2.2")
    mp_objects[0]["status"] = {"nodeRefs": [{"kind": "Node", "name": "n1"}]}
    objects = [*world.objects(), cp, *mp_objects]
    the_cluster = cluster(control_plane={"replicas": 1}, control_plane_ref=cp, machine_pools=[pool("mp-0")])
    nodes = IndexedNodes([b.node("n1", "v1.2.1", cluster_name="cluster1")])  # the pool is still upgrading
    unpatched = compute(the_cluster, objects, nodes=nodes, patches=False).desired
    assert unpatched.control_plane["spec"]["version"] == "v1.2.2"
    seen = compute(the_cluster, objects, nodes=nodes).desired.control_plane["spec"]["builtin"]
    assert seen["controlPlane"]["version"] == "v1.2.2"
    assert seen["cluster"]["topology"]["version"] == "v1.2.3"


# --- user variables per patch: definitionFrom filtering -------------------------------------------------------------

SEEN = add("/spec/template/spec/seen", template="{{ toJson . }}")


def status_variable(var_name: str, *origins: str) -> dict[str, Any]:
    return {
        "name": var_name,
        "definitions": [
            {"from": origin, "required": False, "schema": {"openAPIV3Schema": {"type": "string"}}} for origin in origins
        ],
    }


def filtering_world() -> PatchWorld:
    """``location`` and ``cpu`` defined inline; ``http-proxy`` only by the external patch ``anotherPatch``."""
    return PatchWorld(
        status_variables=[
            status_variable("cpu", "inline"),
            status_variable("http-proxy", "anotherPatch"),
            status_variable("location", "inline", "anotherPatch"),
        ],
        patches=[inline_patch("p", definition(MACHINE_POOL_TEMPLATE, {"machinePoolClass": {"names": ["*"]}}, SEEN))],
    )


def seen_by_pool(desired: DesiredState, topology_name: str) -> dict[str, Any]:
    seen: dict[str, Any] = desired.machine_pools[topology_name].infrastructure["spec"]["seen"]
    return seen


def test_overrides_for_the_patch_are_kept_others_dropped() -> None:
    """Keep overrides with an empty or matching ``definitionFrom`` that are defined for this patch; drop the one
    for ``anotherPatch`` and ``http-proxy``, which has no definition from ``inline``."""
    the_cluster = cluster(
        variables=[{"name": "location", "value": "cluster-location"}, {"name": "cpu", "value": "cluster-cpu"}],
        machine_pools=[
            pool(
                "mp-0",
                variables=overrides(
                    {"name": "location", "value": "other-patch-location", "definitionFrom": "anotherPatch"},
                    {"name": "cpu", "value": "8", "definitionFrom": "inline"},
                    {"name": "http-proxy", "value": "http://proxy"},
                ),
            ),
            pool("mp-1", variables=overrides({"name": "location", "value": "mp-1-location"})),
            pool("mp-2"),
        ],
    )
    _, desired = apply_engine(the_cluster, filtering_world().objects())
    mp0 = seen_by_pool(desired, "mp-0")
    assert {k: v for k, v in mp0.items() if k != "builtin"} == {"location": "cluster-location", "cpu": "8"}
    assert mp0["builtin"]["machinePool"]["topologyName"] == "mp-0"
    mp1 = seen_by_pool(desired, "mp-1")
    assert {k: v for k, v in mp1.items() if k != "builtin"} == {"location": "mp-1-location", "cpu": "cluster-cpu"}
    # without overrides: the Cluster's variables and the builtins
    mp2 = seen_by_pool(desired, "mp-2")
    assert {k: v for k, v in mp2.items() if k != "builtin"} == {"location": "cluster-location", "cpu": "cluster-cpu"}
    assert set(mp2["builtin"]) == {"cluster", "machinePool"}


def test_cluster_variables_for_another_patch_or_undefined_are_dropped() -> None:
    the_cluster = cluster(
        variables=[
            {"name": "location", "value": "for-another-patch", "definitionFrom": "anotherPatch"},
            {"name": "location", "value": "for-inline", "definitionFrom": "inline"},
            {"name": "http-proxy", "value": "http://proxy"},
            {"name": "builtin", "value": {"cluster": {"name": "spoofed"}}},
        ],
        machine_pools=[pool("mp-0")],
    )
    _, desired = apply_engine(the_cluster, filtering_world().objects())
    seen = seen_by_pool(desired, "mp-0")
    assert {k: v for k, v in seen.items() if k != "builtin"} == {"location": "for-inline"}
    assert seen["builtin"]["cluster"]["name"] == "cluster1"  # a user variable named builtin is ignored
