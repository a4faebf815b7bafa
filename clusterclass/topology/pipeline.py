"""One Cluster from objects to desired state: ClusterClass → blueprint → current → desired.

This is the entry point ``plan`` and the controller share; each stage lives in its own module
(``blueprint``, ``current``, ``desired``) and this function only calls them in order.
"""

from __future__ import annotations

import random

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj
from clusterclass.api.views import Cluster
from clusterclass.errors import TopologyError
from clusterclass.topology.blueprint import get_blueprint
from clusterclass.topology.current import get_current_state
from clusterclass.topology.desired import Computation, compute_desired_state
from clusterclass.topology.hooks import LifecycleHooks
from clusterclass.topology.patches import PatchEngine
from clusterclass.topology.reader import NodeReader, Reader


def get_cluster_class(cluster: Obj, reader: Reader) -> Obj:
    """The ClusterClass a Cluster's topology names, in the Cluster's namespace."""
    view = Cluster(cluster)
    topology = view.topology
    if topology is None:
        raise TopologyError("Cluster has no spec.topology", obj=view.key, field="spec.topology")
    if not topology.class_name:
        raise TopologyError("spec.topology.class must be set", obj=view.key, field="spec.topology.class")
    cluster_class = reader.get(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS, view.namespace, topology.class_name)
    if cluster_class is None:
        raise TopologyError(
            f"failed to get ClusterClass {view.namespace}/{topology.class_name}: not found",
            obj=view.key,
            field="spec.topology.class",
        )
    return cluster_class


def compute_topology(
    cluster: Obj,
    reader: Reader,
    *,
    nodes: NodeReader,
    rng: random.Random,
    patches: PatchEngine | None = None,
    hooks: LifecycleHooks | None = None,
) -> Computation:
    """Read the ClusterClass, its templates and the Cluster's current objects; compute desired."""
    cluster_class = get_cluster_class(cluster, reader)
    blueprint = get_blueprint(cluster_class, cluster, reader)
    current = get_current_state(cluster, blueprint, reader, nodes)
    return compute_desired_state(blueprint, current, rng=rng, patches=patches, hooks=hooks)
