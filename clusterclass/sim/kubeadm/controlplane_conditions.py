"""A KubeadmControlPlane's v1beta2 conditions, as upstream v1.14's KCP controller sets them.

``Initialized`` follows ``status.initialized`` (the workload cluster's kubeadm-config exists); ``Available`` asks
for an initialized control plane with its certificates, etcd quorum (more than half the members healthy) and at
least one Machine whose API server, controller manager, scheduler, etcd Pod and etcd member are all healthy;
``MachinesReady`` and ``MachinesUpToDate`` aggregate its Machines; ``ScalingUp``/``ScalingDown`` compare its
Machines with ``spec.replicas``.

Every control-plane Machine is an etcd member here (the simulated workload cluster runs stacked etcd), and the
per-Machine health is what the controller keeps in the Machines' conditions (``APIServerPodHealthy`` & co.).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime

from clusterclass.api.conditions import MetaCondition, is_true
from clusterclass.api.objects import Obj, dig
from clusterclass.sim import conditions as v1beta2

INITIALIZED = "Initialized"
#: the Machine conditions that make its control plane components healthy
COMPONENTS = ("APIServerPodHealthy", "ControllerManagerPodHealthy", "SchedulerPodHealthy")
ETCD = ("EtcdPodHealthy", "EtcdMemberHealthy")


def initialized(kcp: Obj) -> MetaCondition:
    if dig(kcp, "status", "initialized") is True:
        return MetaCondition(INITIALIZED, "True", "Initialized")
    return MetaCondition(INITIALIZED, "False", "NotInitialized")


def available(kcp: Obj, machines: Sequence[Obj], *, certificates: bool) -> MetaCondition:
    if dig(kcp, "status", "initialized") is not True:
        return MetaCondition(v1beta2.AVAILABLE, "False", "NotAvailable", "Control plane not yet initialized")
    healthy_components = sum(
        1 for m in machines if dig(m, "spec", "providerID") and all(is_true(m, type_) for type_ in (*COMPONENTS, *ETCD))
    )
    members = [m for m in machines if dig(m, "status", "nodeRef")]
    healthy_members = sum(1 for m in members if is_true(m, "EtcdMemberHealthy"))
    quorum = len(members) // 2 + 1
    is_deleting = bool(dig(kcp, "metadata", "deletionTimestamp"))
    if not is_deleting and healthy_members >= quorum and healthy_components >= 1 and certificates:
        return MetaCondition(v1beta2.AVAILABLE, "True", "Available")
    messages = []
    if is_deleting:
        messages.append("* Control plane metadata.deletionTimestamp is set")
    if not certificates:
        messages.append("* Control plane certificates are not available")
    if healthy_members < quorum:
        required = f"at least {quorum} healthy member required for etcd quorum"
        if healthy_members == 0:
            messages.append(f"* There are no healthy etcd member, {required}")
        elif healthy_members == 1:
            messages.append(f"* 1 of {len(members)} etcd members is healthy, {required}")
        else:
            messages.append(f"* {healthy_members} of {len(members)} etcd members are healthy, {required}")
    if healthy_components < 1:
        messages.append("* There are no Machines with healthy control plane components, at least 1 required")
    return MetaCondition(v1beta2.AVAILABLE, "False", "NotAvailable", "\n".join(messages))


def control_plane_conditions(
    kcp: Obj, machines: Sequence[Obj], *, certificates: bool, now: datetime
) -> list[MetaCondition]:
    """Every v1beta2 condition the KCP owns, from the KCP and its Machines as they are now."""
    desired = int(dig(kcp, "spec", "replicas") or 1)
    if dig(kcp, "metadata", "deletionTimestamp"):
        desired = 0
    settled = v1beta2.settled_for_up_to_date(machines, now)
    return [
        initialized(kcp),
        available(kcp, machines, certificates=certificates),
        *v1beta2.scaling_conditions(len(machines), desired),
        v1beta2.machines_condition(machines, v1beta2.READY, v1beta2.MACHINES_READY, v1beta2.READY_REASONS),
        v1beta2.machines_condition(
            settled, v1beta2.UP_TO_DATE, v1beta2.MACHINES_UP_TO_DATE, v1beta2.UP_TO_DATE_REASONS
        ),
        v1beta2.deleting_condition(kcp),
        v1beta2.paused_condition(kcp, None),
    ]
