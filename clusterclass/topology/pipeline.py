"""One Cluster from objects to desired state: ClusterClass → blueprint → current → desired.

This is the entry point ``plan`` and the controller share; each stage lives in its own module
(``blueprint``, ``current``, ``desired``) and this function only calls them in order.

The pipeline works on one shape of the Cluster API core kinds: ``cluster.x-k8s.io/v1beta1`` as upstream v1.14
defines it (every v1beta2 field has a place in it, v1beta2 conditions and counters under ``status.v1beta2``).
Readers answer core objects in that version (converting v1beta2 ones, :mod:`clusterclass.topology.reader`), a
Cluster given in v1beta2 is converted on the way in (:func:`pipeline_cluster`), and the desired core objects come
out in it: the caller writes them in the version it speaks (:func:`clusterclass.api.conversion.convert`). Provider
objects stay in their own versions; where the topology writes into them depends on the contract their CRD says
they implement (:mod:`clusterclass.api.contract`).
"""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Iterator
from typing import TYPE_CHECKING

from clusterclass.api import constants as c
from clusterclass.api.contracts import ContractLookup, bundled_contracts
from clusterclass.api.conversion import ConversionError, convert
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


#: the version of the core kinds the pipeline reads and computes
PIPELINE_API_VERSION = c.CLUSTER_API_VERSION


def pipeline_cluster(cluster: Obj, contracts: ContractLookup | None = None) -> Obj:
    """``cluster`` in the pipeline's version (a copy when converted); a Cluster that cannot be converted is an
    error naming the field, in the Cluster's own version."""
    if cluster.get("apiVersion") == PIPELINE_API_VERSION:
        return cluster
    try:
        return convert(cluster, PIPELINE_API_VERSION, api_versions=contracts or bundled_contracts())
    except ConversionError as err:
        raise TopologyError(str(err.message), obj=key_of(cluster), field=err.field) from err


def get_cluster_class(cluster: Obj, reader: Reader) -> Obj:
    """The ClusterClass a Cluster's topology names, in ``classNamespace`` or else the Cluster's namespace."""
    view = Cluster(cluster)
    topology = view.topology
    if topology is None:
        raise TopologyError("Cluster has no spec.topology", obj=view.key, field="spec.topology")
    if not topology.class_name:
        raise TopologyError("spec.topology.class must be set", obj=view.key, field="spec.topology.class")
    namespace = topology.class_namespace or view.namespace
    cluster_class = reader.get(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS, namespace, topology.class_name)
    if cluster_class is None:
        raise TopologyError(
            f"failed to get ClusterClass {namespace}/{topology.class_name}: not found",
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
    contracts: ContractLookup | None = None,
) -> Computation:
    """Read the ClusterClass, its templates and the Cluster's current objects; compute desired.

    With ``stage_context`` an error says which stage failed, in upstream's controller's words (``error
    reading the ClusterClass: ...``, ``error reading current state of the Cluster topology: ...``, ``error
    computing the desired state of the Cluster topology: ...``): what the controller's condition says.
    ``plan`` names the file and field instead.
    """
    contracts = contracts if contracts is not None else bundled_contracts()
    cluster = pipeline_cluster(cluster, contracts)
    cluster_class = get_cluster_class(cluster, reader)
    check_topology_shape(cluster)
    cluster = defaulted_variables(cluster, cluster_class)
    with _stage("error reading the ClusterClass", stage_context):
        blueprint = get_blueprint(cluster_class, cluster, reader, contracts)
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
