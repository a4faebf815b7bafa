"""One Cluster from objects to desired state: ClusterClass → blueprint → current → desired.

This is the entry point ``plan`` and the controller share; each stage lives in its own module
(``blueprint``, ``current``, ``desired``) and this function only calls them in order.
"""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Iterator
from typing import TYPE_CHECKING

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, dig, key_of
from clusterclass.api.views import Cluster
from clusterclass.api.workers import WORKER_KINDS
from clusterclass.errors import TopologyError
from clusterclass.topology.blueprint import get_blueprint
from clusterclass.topology.check.cluster import (
    default_topology_variables,
    topology_variable_errors,
    worker_entries,
    worker_topology_errors,
)
from clusterclass.topology.current import get_current_state
from clusterclass.topology.desired import Computation, compute_desired_state
from clusterclass.topology.hooks import LifecycleHooks
from clusterclass.topology.patches import PatchEngine
from clusterclass.topology.reader import NodeReader, Reader
from clusterclass.topology.variables import variable_definitions

if TYPE_CHECKING:
    from clusterclass.topology.patches.external import ExtensionCalls


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


def check_topology_shape(cluster: Obj) -> None:
    """Refuse a topology the pipeline cannot make sense of, naming the field.

    A stored Cluster has passed admission; this guard keeps a computation over anything else (a test,
    a benchmark, a Cluster written before admission ran) from producing objects with empty or clashing
    names. The worker rules are admission's own (``check.cluster.worker_topology_errors``).
    """
    key = key_of(cluster)
    topology = dig(cluster, "spec", "topology")
    if not isinstance(topology.get("version"), str) or not topology["version"]:
        raise TopologyError("must be a non-empty string", obj=key, field="spec.topology.version")
    for kind in WORKER_KINDS:
        entries = dig(topology, "workers", kind.list_key)
        field = f"spec.topology.workers.{kind.list_key}"
        if entries is None:
            continue
        if not isinstance(entries, list):
            raise TopologyError("must be a list", obj=key, field=field)
        for index, entry in enumerate(entries):
            if not isinstance(entry, dict):
                raise TopologyError("must be an object", obj=key, field=f"{field}[{index}]")
        errors = worker_topology_errors(kind, worker_entries(topology, kind), None)
        if errors:
            raise errors[0].topology_error(key)


def defaulted_variables(cluster: Obj, cluster_class: Obj) -> Obj:
    """``cluster`` with its variables defaulted and validated as admission does (§2.1 step 7).

    Returns a copy; raises TopologyError listing every field error. The rules are admission's own
    (``check.cluster``), so a reconcile never judges variables differently from the webhook.
    """
    definitions = variable_definitions(cluster_class)  # parsed once for every value checked
    defaulted = copy.deepcopy(cluster)
    topology = defaulted["spec"]["topology"]
    default_topology_variables(topology, definitions)
    errors = topology_variable_errors(topology, definitions)
    if errors:
        raise TopologyError(
            "invalid variables: " + "; ".join(str(e) for e in errors), obj=key_of(cluster), field=errors[0].field
        )
    return defaulted


def compute_topology(
    cluster: Obj,
    reader: Reader,
    *,
    nodes: NodeReader,
    rng: random.Random,
    patches: PatchEngine | None = None,
    hooks: LifecycleHooks | None = None,
    extensions: ExtensionCalls | None = None,
    stage_context: bool = False,
) -> Computation:
    """Read the ClusterClass, its templates and the Cluster's current objects; compute desired.

    With ``stage_context`` an error says which stage failed, in upstream's controller's words (``error
    reading the ClusterClass: ...``, ``error reading current state of the Cluster topology: ...``, ``error
    computing the desired state of the Cluster topology: ...``): what the controller's condition says.
    ``plan`` names the file and field instead.
    """
    cluster_class = get_cluster_class(cluster, reader)
    check_topology_shape(cluster)
    cluster = defaulted_variables(cluster, cluster_class)
    with _stage("error reading the ClusterClass", stage_context):
        blueprint = get_blueprint(cluster_class, cluster, reader)
    with _stage("error reading current state of the Cluster topology", stage_context):
        current = get_current_state(cluster, blueprint, reader, nodes)
    with _stage("error computing the desired state of the Cluster topology", stage_context):
        return compute_desired_state(blueprint, current, rng=rng, patches=patches, hooks=hooks, extensions=extensions)


@contextlib.contextmanager
def _stage(context: str, enabled: bool) -> Iterator[None]:
    try:
        yield
    except TopologyError as err:
        if not enabled:
            raise
        raise err.wrap(context) from err
