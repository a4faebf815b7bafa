"""What runs inside a simulated machine once its bootstrap data ran: the kubelet's Node and the static Pods.

A real machine joins its workload cluster: the kubelet registers a Node (named like the machine's
container, NotReady until the network is up), a control-plane machine runs kube-apiserver,
kube-controller-manager, kube-scheduler and etcd as static Pods in ``kube-system``, and the first one
(``kubeadm init``) writes the ``kube-system/kubeadm-config`` ConfigMap. :class:`Kubelet` does that in
the machine's simulated workload cluster, step by step as :class:`~clusterclass.sim.timing.Timing`
says (``node``, ``apiServer``, ``etcd``), and reports how long until the next step is due.

The Node reports the version the machine was bootstrapped with as ``status.nodeInfo.kubeletVersion``
— exactly the Machine's or MachinePool's version string, which is what the topology controller
compares — a deterministic InternalIP, and the usual conditions. Everything else a Node carries is
plausible filler. A Node marked unhealthy by anyone else is left so (:func:`still_starting`): the simulated machine
is broken, for a MachineHealthCheck to find.
"""

from __future__ import annotations

import contextlib
import hashlib
from collections.abc import Callable
from dataclasses import dataclass, field

from clusterclass.api.objects import Obj, dig
from clusterclass.kube.errors import AlreadyExists, NotFound
from clusterclass.sim.timing import Timing
from clusterclass.sim.workload import SYSTEM_NAMESPACE, WorkloadCluster

CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane"
UNINITIALIZED_TAINT = "node.cluster.x-k8s.io/uninitialized"
STATIC_PODS: tuple[tuple[str, str], ...] = (
    ("kube-apiserver", "apiServer"),
    ("kube-controller-manager", "apiServer"),
    ("kube-scheduler", "apiServer"),
    ("etcd", "etcd"),
)
KUBEADM_CONFIG_MAP = "kubeadm-config"
NOT_READY_MESSAGE = (
    "container runtime network not ready: NetworkReady=false reason:NetworkPluginNotReady "
    "message:Network plugin returns error: cni plugin not initialized"
)


def address_of(name: str) -> str:
    """A stable private address for a machine (172.18.0.0/16, as kind's network)."""
    digest = hashlib.blake2b(name.encode(), digest_size=2).digest()
    return f"172.18.{digest[0]}.{max(digest[1], 2)}"


def _condition(type_: str, status: str, reason: str, message: str, now: str) -> Obj:
    return {
        "type": type_,
        "status": status,
        "reason": reason,
        "message": message,
        "lastHeartbeatTime": now,
        "lastTransitionTime": now,
    }


def node_status(name: str, version: str, *, ready: bool, now: str) -> Obj:
    if ready:
        readiness = _condition("Ready", "True", "KubeletReady", "kubelet is posting ready status", now)
    else:
        readiness = _condition("Ready", "False", "KubeletNotReady", NOT_READY_MESSAGE, now)
    return {
        "conditions": [
            _condition(
                "MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available", now
            ),
            _condition("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure", now),
            _condition("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available", now),
            readiness,
        ],
        "addresses": [{"type": "InternalIP", "address": address_of(name)}, {"type": "Hostname", "address": name}],
        "capacity": {"cpu": "2", "memory": "8141300Ki", "pods": "110", "ephemeral-storage": "102626232Ki"},
        "allocatable": {"cpu": "2", "memory": "8141300Ki", "pods": "110", "ephemeral-storage": "102626232Ki"},
        "nodeInfo": {
            "kubeletVersion": version,
            "kubeProxyVersion": version,
            "containerRuntimeVersion": "containerd://1.7.13",
            "osImage": "Debian GNU/Linux 12 (bookworm)",
            "kernelVersion": "6.1.0-clusterclass-sim",
            "operatingSystem": "linux",
            "architecture": "amd64",
            "machineID": hashlib.md5(name.encode(), usedforsecurity=False).hexdigest(),
            "systemUUID": hashlib.md5(f"uuid/{name}".encode(), usedforsecurity=False).hexdigest(),
            "bootID": hashlib.md5(f"boot/{name}".encode(), usedforsecurity=False).hexdigest(),
        },
    }


def still_starting(node: Obj) -> bool:
    """Whether a Node's readiness is the kubelet's own "not ready yet" of registration (or not reported yet).

    Only such a Node is brought to Ready. A Node something else marked unhealthy — the node lifecycle controller's
    ``Ready: Unknown`` when a kubelet stops posting, a user's ``kubectl patch node --subresource=status`` standing in
    for a broken machine — stays so, as on a machine that really broke: that is what a MachineHealthCheck catches.
    """
    ready = next((x for x in dig(node, "status", "conditions") or [] if x.get("type") == "Ready"), None)
    return ready is None or (ready.get("status") == "False" and ready.get("reason") == "KubeletNotReady")


def kubelet_of(image: str, fallback: str | None) -> str | None:
    """The kubelet a node image runs: the tag of a ``kindest/node`` image (``_`` back to ``+``), else ``fallback``."""
    repository, _, tag = image.rpartition(":")
    if repository.endswith("kindest/node") and tag.startswith("v"):
        return tag.replace("_", "+")
    return fallback


def is_ready(obj: Obj | None) -> bool:
    return obj is not None and any(
        x.get("type") == "Ready" and x.get("status") == "True" for x in dig(obj, "status", "conditions") or []
    )


@dataclass
class Kubelet:
    """The kubelet (and kubeadm) of one simulated machine (module doc)."""

    workload: WorkloadCluster
    timing: Timing
    #: the Node's name: the machine's container name
    node: str
    version: str
    control_plane: bool
    #: the uid the step clocks and jitter are keyed by (the infrastructure machine's)
    uid: str
    #: whether a step (``node``, ``apiServer``, ``etcd``) fails this time (see :meth:`Timing.fails`)
    fails: Callable[[str], bool] = field(default=lambda _step: False)
    #: the providerID to put on the Node (CAPD patches it once the control plane is initialized)
    provider_id: str | None = None

    async def run(self, now: str) -> float | None:
        """Move the Node and Pods one step on; seconds until the next step is due (None: all done)."""
        node = self.workload.node(self.node)
        if node is None:
            node = await self._register(now)
        if self.provider_id and dig(node, "spec", "providerID") != self.provider_id:
            node = await self.workload.client.patch(
                "v1", "Node", self.node, {"spec": {"providerID": self.provider_id}}, field_manager="manager"
            )
        waits: list[float] = []
        if not is_ready(node) and still_starting(node):
            left = self.timing.remaining("node", self.uid)
            if left > 0:
                waits.append(left)
            elif self.fails("node"):
                waits.append(max(self.timing.wait("node", self.uid), self.timing.requeue(10)))
            else:
                self.timing.done("node", self.uid)
                await self.workload.client.patch(
                    "v1", "Node", self.node, {"status": node_status(self.node, self.version, ready=True, now=now)},
                    status=True, field_manager="kubelet",
                )  # fmt: skip
        if self.control_plane:
            for component, step in STATIC_PODS:
                wait = await self._static_pod(component, step, now)
                if wait is not None:
                    waits.append(wait)
        return min(waits) if waits else None

    async def _register(self, now: str) -> Obj:
        labels = {
            "kubernetes.io/hostname": self.node,
            "kubernetes.io/os": "linux",
            "kubernetes.io/arch": "amd64",
            "beta.kubernetes.io/os": "linux",
            "beta.kubernetes.io/arch": "amd64",
        }
        taints = []
        if self.control_plane:
            labels[CONTROL_PLANE_ROLE] = ""
            taints.append({"key": CONTROL_PLANE_ROLE, "effect": "NoSchedule"})
        else:
            taints.append({"key": UNINITIALIZED_TAINT, "effect": "NoSchedule"})
        with contextlib.suppress(AlreadyExists):
            await self.workload.client.create(
                {
                    "apiVersion": "v1",
                    "kind": "Node",
                    "metadata": {
                        "name": self.node,
                        "labels": labels,
                        "annotations": {
                            "kubeadm.alpha.kubernetes.io/cri-socket": "unix:///var/run/containerd/containerd.sock"
                        },
                    },
                    "spec": {"taints": taints},
                },
                field_manager="kubelet",
            )
        return await self.workload.client.patch(
            "v1", "Node", self.node, {"status": node_status(self.node, self.version, ready=False, now=now)},
            status=True, field_manager="kubelet",
        )  # fmt: skip

    async def _static_pod(self, component: str, step: str, now: str) -> float | None:
        name = f"{component}-{self.node}"
        pod = self.workload.pod(name)
        if pod is None:
            try:
                pod = await self.workload.client.create(
                    {
                        "apiVersion": "v1",
                        "kind": "Pod",
                        "metadata": {
                            "name": name,
                            "namespace": SYSTEM_NAMESPACE,
                            "labels": {"component": component, "tier": "control-plane"},
                            "annotations": {"kubernetes.io/config.source": "file"},
                        },
                        "spec": {
                            "nodeName": self.node,
                            "priorityClassName": "system-node-critical",
                            "containers": [{"name": component, "image": f"registry.k8s.io/{component}:{self.version}"}],
                        },
                    },
                    field_manager="kubelet",
                )
            except AlreadyExists:  # created a moment ago; the cache has not seen it yet
                return max(self.timing.requeue(1), 0.01)
            await self.workload.client.patch(
                "v1", "Pod", name, {"status": {"phase": "Pending"}}, namespace=SYSTEM_NAMESPACE, status=True,
                field_manager="kubelet",
            )  # fmt: skip
        if dig(pod, "status", "phase") == "Running" and is_ready(pod):
            if component == "kube-apiserver":
                await self._kubeadm_config(now)
            return None
        left = self.timing.remaining(step, f"{self.uid}/{component}")
        if left > 0:
            return left
        if self.fails(step):
            return max(self.timing.wait(step, f"{self.uid}/{component}"), self.timing.requeue(10))
        self.timing.done(step, f"{self.uid}/{component}")
        await self.workload.client.patch(
            "v1", "Pod", name, {"status": _running(component, self.version, now)}, namespace=SYSTEM_NAMESPACE,
            status=True, field_manager="kubelet",
        )  # fmt: skip
        if component == "kube-apiserver":
            await self._kubeadm_config(now)
        return None

    async def _kubeadm_config(self, now: str) -> None:
        """``kubeadm init`` leaves the cluster's configuration in ``kube-system/kubeadm-config``."""
        if self.workload.config_map(KUBEADM_CONFIG_MAP) is not None:
            return
        with contextlib.suppress(AlreadyExists):
            await self.workload.client.create(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": KUBEADM_CONFIG_MAP, "namespace": SYSTEM_NAMESPACE},
                    "data": {
                        "ClusterConfiguration": (
                            "apiVersion: kubeadm.k8s.io/v1beta3\nkind: ClusterConfiguration\n"
                            f"kubernetesVersion: {self.version}\n"
                        )
                    },
                }
            )

    async def stop(self) -> None:
        """The machine is gone: its static Pods stop (the Node object stays until Cluster API deletes it)."""
        if not self.control_plane:
            return
        for component, _ in STATIC_PODS:
            with contextlib.suppress(NotFound):
                await self.workload.client.delete("v1", "Pod", f"{component}-{self.node}", namespace=SYSTEM_NAMESPACE)


def _running(component: str, version: str, now: str) -> Obj:
    return {
        "phase": "Running",
        "conditions": [
            {"type": "Initialized", "status": "True", "lastTransitionTime": now},
            {"type": "Ready", "status": "True", "lastTransitionTime": now},
            {"type": "ContainersReady", "status": "True", "lastTransitionTime": now},
            {"type": "PodScheduled", "status": "True", "lastTransitionTime": now},
        ],
        "containerStatuses": [
            {
                "name": component,
                "ready": True,
                "started": True,
                "restartCount": 0,
                "image": f"registry.k8s.io/{component}:{version}",
                "state": {"running": {"startedAt": now}},
            }
        ],
        "startTime": now,
    }
