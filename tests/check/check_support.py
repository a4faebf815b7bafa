"""Builders and fakes for the Cluster and MachinePool admission tests.

The standard world: ClusterClass ``class1`` in ``default`` with MachineDeployment class
``default-worker`` and MachinePool class ``default-worker`` (the same name for both kinds, as
upstream's fixtures use), reconciled unless asked otherwise. :func:`admit` runs the admission chain
the API server runs: defaulting, then validation of the defaulted object.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

_TESTS = str(Path(__file__).resolve().parent.parent)
if _TESTS not in sys.path:
    sys.path.insert(0, _TESTS)

import builders  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from clusterclass.fielderrors import FieldError  # noqa: E402
from clusterclass.topology.check import Gates, Result  # noqa: E402
from clusterclass.topology.check.cluster import default_cluster, validate_cluster  # noqa: E402
from clusterclass.topology.reader import NodeReader, NodeReadError, ObjectIndex  # noqa: E402

b = builders  # the shared builders; test modules import them from here as ``b``

Obj = dict[str, Any]
NS = b.NAMESPACE
WORKER_CLASS = "default-worker"


def reconciled(cc: Obj, generation: int = 1) -> Obj:
    """``cc`` as the ClusterClass controller leaves it after a successful reconcile."""
    cc = copy.deepcopy(cc)
    cc["metadata"]["generation"] = generation
    status = cc.setdefault("status", {})
    status["observedGeneration"] = generation
    status["conditions"] = [{"type": "VariablesReconciled", "status": "True"}]
    variables = cc.get("spec", {}).get("variables")
    if variables:
        status["variables"] = [
            {
                "name": v["name"],
                "definitionsConflict": False,
                "definitions": [{"from": "inline", "required": v.get("required", False), "schema": v["schema"]}],
            }
            for v in variables
        ]
    return cc


def variable(name: str, schema: Obj, *, required: bool = False) -> Obj:
    return {"name": name, "required": required, "schema": {"openAPIV3Schema": schema}}


def cluster_class(
    name: str = "class1",
    *,
    variables: list[Obj] | None = None,
    md_classes: list[str] | None = None,
    mp_classes: list[str] | None = None,
    mp_infrastructure: Obj | None = None,
    md_infrastructure: Obj | None = None,
    mp_bootstrap: Obj | None = None,
    machine_infrastructure: bool = False,
    cp_mhc: Obj | None = None,
    md_mhc: Obj | None = None,
    mp_mhc: Obj | None = None,
    is_reconciled: bool = True,
) -> Obj:
    md_infra = md_infrastructure or b.docker_machine_template("md-infra")
    mp_infra = mp_infrastructure or b.docker_machine_pool_template("mp-infra")
    md_fields: Obj = {"machineHealthCheck": md_mhc} if md_mhc is not None else {}
    mp_fields: Obj = {"machineHealthCheck": mp_mhc} if mp_mhc is not None else {}
    cc = b.cluster_class(
        name,
        infrastructure=b.docker_cluster_template(),
        control_plane=b.kubeadm_control_plane_template(),
        machine_infrastructure=b.docker_machine_template("cp-infra") if machine_infrastructure else None,
        control_plane_fields={"machineHealthCheck": cp_mhc} if cp_mhc is not None else None,
        machine_deployments=[
            b.worker_class(c, b.kubeadm_config_template("md-bootstrap"), md_infra, **md_fields)
            for c in (md_classes if md_classes is not None else [WORKER_CLASS])
        ],
        machine_pools=[
            b.worker_class(c, mp_bootstrap or b.kubeadm_config_template("mp-bootstrap"), mp_infra, **mp_fields)
            for c in (mp_classes if mp_classes is not None else [WORKER_CLASS])
        ],
    )
    if variables:
        cc["spec"]["variables"] = variables
    return reconciled(cc) if is_reconciled else cc


def cluster(
    name: str = "cluster1",
    *,
    version: str = "v1.19.1",
    class_name: str = "class1",
    machine_deployments: list[Obj] | None = None,
    machine_pools: list[Obj] | None = None,
    variables: list[Obj] | None = None,
    annotations: dict[str, str] | None = None,
    control_plane: Obj | None = None,
    control_plane_ref: Obj | None = None,
    infrastructure_ref: Obj | None = None,
) -> Obj:
    built = b.cluster(
        name,
        class_name=class_name,
        version=version,
        annotations=annotations,
        machine_deployments=machine_deployments,
        machine_pools=machine_pools,
        control_plane=control_plane,
        control_plane_ref=control_plane_ref,
        infrastructure_ref=infrastructure_ref,
    )
    if variables is not None:
        built["spec"]["topology"]["variables"] = variables
    return built


def pool(name: str, class_name: str = WORKER_CLASS, **fields: Any) -> Obj:
    """A MachinePoolTopology."""
    return b.worker_topology(class_name, name, **fields)


def deployment(name: str, class_name: str = WORKER_CLASS, **fields: Any) -> Obj:
    """A MachineDeploymentTopology."""
    return b.worker_topology(class_name, name, **fields)


def world(*objects: Obj) -> ObjectIndex:
    return ObjectIndex(copy.deepcopy(list(objects)))


def admit(
    obj: Obj,
    old: Obj | None = None,
    *,
    reader: ObjectIndex | None = None,
    nodes: NodeReader | None = None,
    gates: Gates | None = None,
) -> tuple[Obj, Result]:
    """Default then validate ``obj`` against ``reader`` (the standard world when None)."""
    reader = reader if reader is not None else world(cluster_class())
    defaulted = default_cluster(obj, reader=reader)
    return defaulted, validate_cluster(defaulted, old, reader=reader, nodes=nodes, gates=gates or Gates())


def check(obj: Obj, old: Obj | None = None, **kwargs: Any) -> Result:
    return admit(obj, old, **kwargs)[1]


def errors(result: Result) -> list[tuple[str, str, str]]:
    """(field, Kubernetes error type, detail) of every error."""
    return [(e.field, e.type.display, e.detail) for e in result.errors]


def fields(result: Result) -> list[str]:
    return [e.field for e in result.errors]


def rendered(result: Result) -> list[str]:
    return [str(e) for e in result.errors]


class Nodes:
    """A workload cluster with these Nodes (name → kubelet version); others fail like a NotFound."""

    def __init__(self, kubelets: dict[str, str] | None = None, *, unknown: bool = False) -> None:
        self.kubelets = kubelets or {}
        self.unknown = unknown
        self.asked: list[str] = []

    def get_node(self, cluster: Obj, name: str) -> Obj | None:
        self.asked.append(name)
        if name in self.kubelets:
            return {
                "apiVersion": "v1",
                "kind": "Node",
                "metadata": {"name": name},
                "status": {"nodeInfo": {"kubeletVersion": self.kubelets[name]}},
            }
        if self.unknown:
            return None
        raise NodeReadError(f'nodes "{name}" not found')


def control_plane(version: str = "v1.19.1", status_version: str | None = "v1.19.1") -> Obj:
    """The Cluster's KubeadmControlPlane ``cluster1-cp``; ``status_version`` None: still provisioning."""
    return b.control_plane("cluster1-cp", version=version, status_version=status_version, replicas=1)


def machine_pool(name: str, version: str, *, node_refs: list[str] | None = None, topology: str = "pool1") -> Obj:
    return b.machine_pool(
        name,
        topology,
        bootstrap={"apiVersion": b.BOOTSTRAP_V1, "kind": "KubeadmConfig", "name": f"{name}-bootstrap"},
        infrastructure={"apiVersion": b.INFRA_V1, "kind": "DockerMachinePool", "name": f"{name}-infra"},
        version=version,
        node_refs=node_refs,
    )


def machine_deployment(name: str, version: str, *, topology: str = "md1") -> Obj:
    return b.machine_deployment(
        name,
        topology,
        bootstrap={"apiVersion": b.BOOTSTRAP_V1, "kind": "KubeadmConfigTemplate", "name": f"{name}-bootstrap"},
        infrastructure={"apiVersion": b.INFRA_V1, "kind": "DockerMachineTemplate", "name": f"{name}-infra"},
        version=version,
    )


def machine(name: str, version: str | None, labels: dict[str, str]) -> Obj:
    return b.machine(name, version=version, labels=labels)


# --- hypothesis: random JSON and random mutations of valid documents ------------------------------------------

keys = st.sampled_from(
    ["name", "class", "version", "replicas", "metadata", "labels", "annotations", "variables", "overrides", "value"]
) | st.text(max_size=8)
scalars = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(2**40), max_value=2**40)
    | st.floats(allow_nan=False)
    | st.text(max_size=12)
    | st.sampled_from(["", "v1.19.1", "1.20.0", "v1.21.0", "default-worker", "class1", "-1", "10.0.0.0/8", "abc"])
)
json_values = st.recursive(
    scalars,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=4),
    max_leaves=12,
)


def _paths(doc: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(doc, dict):
        for key, value in doc.items():
            found.extend(_paths(value, (*prefix, key)))
    elif isinstance(doc, list):
        for i, value in enumerate(doc):
            found.extend(_paths(value, (*prefix, i)))
    return found


def _parent(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path[:-1]:
        doc = doc[step]
    return doc


@st.composite
def mutated(draw: st.DrawFn, base: Any, max_mutations: int = 4) -> Any:
    """``base`` with up to ``max_mutations`` random replacements, removals and insertions."""
    doc = copy.deepcopy(base)
    for _ in range(draw(st.integers(min_value=0, max_value=max_mutations))):
        paths = [p for p in _paths(doc) if p]
        if not paths:
            break
        path = draw(st.sampled_from(paths))
        parent = _parent(doc, path)
        action = draw(st.sampled_from(["replace", "remove", "insert"]))
        if action == "replace":
            parent[path[-1]] = draw(json_values)
        elif action == "remove":
            if isinstance(parent, dict):
                del parent[path[-1]]
            else:
                parent.pop(path[-1])
        else:
            target = parent[path[-1]]
            if isinstance(target, dict):
                target[draw(keys)] = draw(json_values)
            elif isinstance(target, list):
                target.append(draw(json_values))
    return doc


def assert_only_field_errors(result: Any) -> None:
    assert isinstance(result, Result)
    assert all(isinstance(e, FieldError) for e in result.errors)
    assert all(isinstance(e.field, str) and isinstance(e.detail, str) for e in result.errors)
    assert all(isinstance(w, str) for w in result.warnings)
    for error in result.errors:
        str(error)  # renders
