"""Builtin variables (spec §5.3): what a ClusterClass patch knows about the Cluster it patches.

Patches see one variable named ``builtin``. Every template gets ``builtin.cluster``; control plane
templates also get ``builtin.controlPlane``, MachineDeployment templates ``builtin.machineDeployment``
and MachinePool templates ``builtin.machinePool``. Values come from the *desired* objects, so a
worker held back by upgrade sequencing sees its current version, and a new MachinePool sees the
names its bootstrap config and infrastructure machine pool will get. Keys with empty values are
left out, replicas only appear when the topology sets them, and the key order matches upstream's
JSON so rendered templates print the same.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from clusterclass.api import contract
from clusterclass.api.objects import Obj, dig, name_of, namespace_of
from clusterclass.api.views import Topology
from clusterclass.topology.desired import DesiredWorker


def _family_of_blocks(blocks: list[str]) -> str:
    """The family of one list of CIDR blocks: at most two, each a valid CIDR."""
    if len(blocks) > 2:
        return "Invalid"
    versions = set()
    for block in blocks:
        if "/" not in block:
            return "Invalid"
        try:
            versions.add(ipaddress.ip_network(block, strict=False).version)
        except ValueError:
            return "Invalid"
    if versions == {4, 6}:
        return "DualStack"
    return {frozenset({4}): "IPv4", frozenset({6}): "IPv6"}.get(frozenset(versions), "Invalid")


def _ip_family(pods: list[str], services: list[str]) -> str:
    """IPv4, IPv6, DualStack or Invalid from the pod and service CIDR blocks, as upstream decides.

    No blocks at all means IPv4; with only one list that list decides; with both, dual-stack pods
    decide, otherwise the two families must agree.
    """
    if not pods and not services:
        return "IPv4"
    pod_family = _family_of_blocks(pods)
    if pod_family == "Invalid" and pods:
        return "Invalid"
    if not services:
        return pod_family
    service_family = _family_of_blocks(services)
    if service_family == "Invalid" or not pods:
        return service_family
    if pod_family == "DualStack":
        return "DualStack"
    return pod_family if pod_family == service_family else "Invalid"


def cluster_builtin(cluster: Obj, topology: Topology) -> dict[str, Any]:
    builtin: dict[str, Any] = {
        "name": name_of(cluster),
        "namespace": namespace_of(cluster),
        "topology": {"version": topology.version, "class": topology.class_name},
    }
    network = dig(cluster, "spec", "clusterNetwork")
    if isinstance(network, dict):
        pods = [str(b) for b in dig(network, "pods", "cidrBlocks") or []]
        services = [str(b) for b in dig(network, "services", "cidrBlocks") or []]
        values: dict[str, Any] = {}
        if network.get("serviceDomain"):
            values["serviceDomain"] = network["serviceDomain"]
        # Upstream's JSON has ``omitempty`` on both lists: an empty list is left out like a missing one.
        if services:
            values["services"] = services
        if pods:
            values["pods"] = pods
        values["ipFamily"] = _ip_family(pods, services)
        builtin["network"] = values
    return {"cluster": builtin}


def control_plane_builtin(control_plane: Obj, machine_template: Obj | None, topology: Topology) -> dict[str, Any]:
    builtin: dict[str, Any] = {
        "version": dig(control_plane, *contract.ControlPlane.VERSION),
        "name": name_of(control_plane),
    }
    if topology.control_plane_replicas is not None:
        builtin["replicas"] = dig(control_plane, *contract.ControlPlane.REPLICAS)
    if machine_template is not None:
        builtin["machineTemplate"] = {"infrastructureRef": {"name": name_of(machine_template)}}
    return {"controlPlane": {k: v for k, v in builtin.items() if v not in (None, "")}}


def worker_builtin(worker: DesiredWorker) -> dict[str, Any]:
    """``builtin.machineDeployment`` or ``builtin.machinePool`` for one desired worker."""
    obj = worker.object
    builtin: dict[str, Any] = {
        "version": dig(obj, "spec", "template", "spec", "version"),
        "class": worker.topology.class_name,
        "name": name_of(obj),
        "topologyName": worker.topology.name,
    }
    replicas = dig(obj, "spec", "replicas")
    if replicas is not None:
        builtin["replicas"] = replicas
    bootstrap_name = name_of(worker.bootstrap)
    if bootstrap_name:
        builtin["bootstrap"] = {"configRef": {"name": bootstrap_name}}
    infrastructure_name = name_of(worker.infrastructure)
    if infrastructure_name:
        builtin["infrastructureRef"] = {"name": infrastructure_name}
    return {worker.topology.kind.naming_key: {k: v for k, v in builtin.items() if v not in (None, "")}}
