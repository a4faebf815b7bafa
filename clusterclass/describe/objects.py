"""What ``describe cluster`` knows about one Cluster: :class:`ClusterObjects`, read once, then only looked at.

The tree (:mod:`clusterclass.describe.tree`) is built from this value and nothing else, so it can be
built from objects read through a :class:`~clusterclass.kube.client.Client`
(:mod:`clusterclass.describe.collect`) or from objects a test writes by hand, with the same result.

Lists hold what listing by the label ``cluster.x-k8s.io/cluster-name=<cluster>`` in the Cluster's
namespace returns, ordered by name as the API server orders them. Every object found through a
reference (infrastructure cluster, control plane, infrastructure machines, bootstrap configs,
templates) is in :attr:`ClusterObjects.referenced`, looked up the way clusterctl resolves a
reference: by group, kind and name, always in the Cluster's namespace.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, group_of, key_of, labels_of, name_of, namespace_of
from clusterclass.errors import ObjectKey

ADDONS_GROUP = "addons.cluster.x-k8s.io"
ADDONS_API_VERSION = "addons.cluster.x-k8s.io/v1beta1"
KIND_RESOURCE_SET_BINDING = "ClusterResourceSetBinding"
KIND_RESOURCE_SET = "ClusterResourceSet"

#: the kinds that are listed by the cluster-name label, and the field of :class:`ClusterObjects` they go in
LISTED_KINDS: dict[str, str] = {
    c.KIND_MACHINE: "machines",
    c.KIND_MACHINE_DEPLOYMENT: "machine_deployments",
    c.KIND_MACHINE_SET: "machine_sets",
    c.KIND_MACHINE_POOL: "machine_pools",
}


@dataclass
class ClusterObjects:
    """One Cluster and the objects of it that the tree shows."""

    cluster: Obj
    machines: list[Obj] = field(default_factory=list)
    machine_deployments: list[Obj] = field(default_factory=list)
    machine_sets: list[Obj] = field(default_factory=list)
    machine_pools: list[Obj] = field(default_factory=list)
    #: every object read through a reference, by its version-independent key
    referenced: dict[ObjectKey, Obj] = field(default_factory=dict)
    #: the ClusterResourceSetBinding named as the Cluster (read only for ``--show-resourcesets``)
    resource_set_binding: Obj | None = None

    @property
    def namespace(self) -> str:
        return namespace_of(self.cluster)

    @property
    def name(self) -> str:
        return name_of(self.cluster)

    def key_for(self, ref: Any) -> ObjectKey | None:
        """The key ``ref`` points at (in the Cluster's namespace), or None for a ref without kind or name."""
        if not isinstance(ref, Mapping) or not ref.get("kind") or not ref.get("name"):
            return None
        return ObjectKey(group_of(str(ref.get("apiVersion") or "")), str(ref["kind"]), self.namespace, str(ref["name"]))

    def lookup(self, ref: Any) -> Obj | None:
        """The object ``ref`` points at, if it was read (it may not exist, or its kind may not be served)."""
        key = self.key_for(ref)
        return self.referenced.get(key) if key is not None else None

    def add_referenced(self, obj: Obj) -> None:
        self.referenced[key_of(obj)] = obj

    @classmethod
    def of(cls, cluster: Obj, objects: Iterable[Obj]) -> ClusterObjects:
        """The objects of ``cluster`` among ``objects``, sorted as listing and reading them would.

        Machines, MachineDeployments, MachineSets and MachinePools count when they are in the
        Cluster's namespace with its cluster-name label; the ClusterResourceSetBinding when it is named
        as the Cluster; anything else in the Cluster's namespace can be found through a reference.
        """
        found = cls(cluster)
        for obj in objects:
            if namespace_of(obj) != found.namespace:
                continue
            kind = str(obj.get("kind") or "")
            group = group_of(str(obj.get("apiVersion") or ""))
            if group == c.CLUSTER_GROUP and kind in LISTED_KINDS:
                if labels_of(obj).get(c.LABEL_CLUSTER_NAME) == found.name:
                    getattr(found, LISTED_KINDS[kind]).append(obj)
            elif group == ADDONS_GROUP and kind == KIND_RESOURCE_SET_BINDING:
                if name_of(obj) == found.name:
                    found.resource_set_binding = obj
            else:
                found.add_referenced(obj)
        for attribute in LISTED_KINDS.values():
            getattr(found, attribute).sort(key=name_of)
        return found
