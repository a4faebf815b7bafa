"""Current state: what already exists for one Cluster (spec §2.3).

Read through a :class:`Reader`: the InfrastructureCluster and ControlPlane the Cluster points at,
the control plane's machine template and MachineHealthCheck, the Cluster's shim Secret while it
matters (:mod:`~clusterclass.topology.shim`), and every MachineDeployment and
MachinePool labelled as topology-owned for this Cluster, keyed by their topology name label, with
the bootstrap and infrastructure objects (MachinePool) or templates (MachineDeployment) they
reference.

It also gathers what upgrade sequencing needs to know, so the desired-state computation itself
stays free of I/O: the Machines of each MachineDeployment, and the workload-cluster Nodes of each
MachinePool that has ``status.nodeRefs`` (only those: a pool without nodeRefs never needs the
workload cluster, which is the upstream v1.11 behaviour we adopt, see DECISIONS.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterclass.api import constants as c
from clusterclass.api.conversion import ConversionError
from clusterclass.api.objects import Obj, describe, dig, key_of, labels_of, name_of
from clusterclass.api.refs import align_ref, ref_key
from clusterclass.api.views import Cluster, Worker
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WorkerKind
from clusterclass.errors import ObjectKey, TopologyError
from clusterclass.topology.blueprint import Blueprint
from clusterclass.topology.reader import NodeReader, NodeReadError, Reader
from clusterclass.topology.shim import SECRET_API_VERSION, SECRET_KIND, needs_shim, shim_is_done, shim_name


@dataclass
class WorkerState:
    """One existing MachineDeployment or MachinePool and what it references."""

    object: Obj
    bootstrap: Obj
    infrastructure: Obj
    machine_health_check: Obj | None = None
    #: MachineDeployments: the Machines selected by the deployment (upgrade detection)
    machines: list[Obj] = field(default_factory=list)
    #: MachinePools: node name → Node from the workload cluster, None when unknown (offline)
    nodes: dict[str, Obj | None] = field(default_factory=dict)


@dataclass
class CurrentState:
    cluster: Obj
    infrastructure_cluster: Obj | None = None
    control_plane: Obj | None = None
    control_plane_infrastructure_machine_template: Obj | None = None
    control_plane_machine_health_check: Obj | None = None
    machine_deployments: dict[str, WorkerState] = field(default_factory=dict)
    machine_pools: dict[str, WorkerState] = field(default_factory=dict)
    #: the Cluster's shim Secret (spec §3.2), read only while it matters: when the InfrastructureCluster
    #: or the ControlPlane is about to be created, or when the shim has served and should go
    cluster_shim: Obj | None = None

    def workers(self, kind: WorkerKind) -> dict[str, WorkerState]:
        return self.machine_pools if kind is MACHINE_POOL else self.machine_deployments


def get_current_state(cluster: Obj, blueprint: Blueprint, reader: Reader, nodes: NodeReader) -> CurrentState:
    view = Cluster(cluster)
    state = CurrentState(cluster=cluster)

    infra_ref = view.infrastructure_ref
    if infra_ref is not None:
        state.infrastructure_cluster = _read_owned(
            reader,
            align_ref(infra_ref, blueprint.infrastructure_cluster_template),
            view.namespace,
            "InfrastructureCluster",
            view.key,
            "spec.infrastructureRef",
        )

    cp_ref = view.control_plane_ref
    if cp_ref is not None:
        cp = _read_owned(
            reader,
            align_ref(cp_ref, blueprint.control_plane_template),
            view.namespace,
            "ControlPlane",
            view.key,
            "spec.controlPlaneRef",
        )
        state.control_plane = cp
        machine_template = blueprint.control_plane_infrastructure_machine_template
        if machine_template is not None:
            ref_path = blueprint.contract_of(cp).MACHINE_TEMPLATE_INFRASTRUCTURE_REF
            machine_ref = dig(cp, *ref_path)
            if not isinstance(machine_ref, dict):
                raise TopologyError(
                    f"failed to get {'.'.join(ref_path)} for {describe(cp)}",
                    obj=ref_key(cp_ref, view.namespace),
                    field=".".join(ref_path),
                )
            state.control_plane_infrastructure_machine_template = _read_owned(
                reader,
                _versioned(align_ref(machine_ref, machine_template), blueprint),
                view.namespace,
                "ControlPlane InfrastructureMachineTemplate",
                key_of(cp),
                "spec.machineTemplate.infrastructureRef",
            )
            state.control_plane_machine_health_check = reader.get(
                c.CLUSTER_API_VERSION, c.KIND_MACHINE_HEALTH_CHECK, view.namespace, name_of(cp)
            )

    if needs_shim(state.infrastructure_cluster, state.control_plane) or shim_is_done(
        cluster, state.infrastructure_cluster, state.control_plane
    ):
        state.cluster_shim = reader.get(SECRET_API_VERSION, SECRET_KIND, view.namespace, shim_name(view.name))

    for kind in (MACHINE_DEPLOYMENT, MACHINE_POOL):
        state.workers(kind).update(_read_workers(kind, view, blueprint, reader, nodes))
    return state


def _versioned(ref: Obj, blueprint: Blueprint) -> Obj:
    """A contract reference (``{apiGroup, kind, name}``) with the apiVersion its CRD's contract says to read it in."""
    if ref.get("apiVersion") or not ref.get("kind"):
        return ref
    group = str(ref.get("apiGroup") or "")
    try:
        api_version = blueprint.contracts.api_version(group, str(ref["kind"]))
    except ConversionError as err:
        raise TopologyError(f"failed to read {ref.get('kind')} {ref.get('name')}: {err}") from err
    return {**{k: v for k, v in ref.items() if k != "apiGroup"}, "apiVersion": api_version}


def _read_owned(
    reader: Reader, ref: Obj, default_namespace: str, what: str, holder: ObjectKey, holder_field: str
) -> Obj:
    """The object ``ref`` points at, which must exist and carry the topology-owned label.

    A missing object is reported against the field of the object holding the ref.
    """
    key = ref_key(ref, default_namespace)
    obj = reader.get(str(ref.get("apiVersion") or ""), key.kind, key.namespace, key.name)
    if obj is None:
        raise TopologyError(f"failed to read {key} ({what}): not found", obj=holder, field=holder_field)
    if c.LABEL_TOPOLOGY_OWNED not in labels_of(obj):
        raise TopologyError(
            f"{key} ({what}) is not topology owned: it lacks the label {c.LABEL_TOPOLOGY_OWNED}",
            obj=key,
            field=f"metadata.labels[{c.LABEL_TOPOLOGY_OWNED}]",
        )
    return obj


def _read_workers(
    kind: WorkerKind, cluster: Cluster, blueprint: Blueprint, reader: Reader, nodes: NodeReader
) -> dict[str, WorkerState]:
    """Every topology-owned MachineDeployment or MachinePool of the Cluster, by topology name."""
    # The owned label only has to be present, whatever its value, as upstream selects it.
    selector: dict[str, str | None] = {c.LABEL_CLUSTER_NAME: cluster.name, c.LABEL_TOPOLOGY_OWNED: None}
    objects = reader.list(c.CLUSTER_API_VERSION, kind.kind, cluster.namespace, selector)
    topology = blueprint.topology
    classes = {t.name: t.class_name for t in topology.workers(kind)}
    found: dict[str, WorkerState] = {}
    for obj in objects:
        worker = Worker(obj)
        topology_name = worker.labels.get(kind.name_label, "")
        if not topology_name:
            raise TopologyError(
                f"failed to find label {kind.name_label} in {describe(obj)}",
                obj=worker.key,
                field=f"metadata.labels[{kind.name_label}]",
            )
        if topology_name in found:
            raise TopologyError(
                f"duplicate {describe(obj)} found for label {kind.name_label}: {topology_name}",
                obj=worker.key,
                field=f"metadata.labels[{kind.name_label}]",
            )
        bootstrap_ref = worker.bootstrap_ref
        if bootstrap_ref is None:
            raise TopologyError(
                f"{describe(obj)} does not have a reference to a Bootstrap Config",
                obj=worker.key,
                field="spec.template.spec.bootstrap.configRef",
            )
        infra_ref = worker.infrastructure_ref
        if infra_ref is None or not infra_ref.get("name"):
            raise TopologyError(
                f"{describe(obj)} does not have a reference to a {kind.infrastructure_noun}",
                obj=worker.key,
                field="spec.template.spec.infrastructureRef",
            )
        # Align refs with the class templates only while the topology still has this worker;
        # a removed worker is read as it is, since it is about to be deleted.
        if topology_name in classes:
            class_name = classes[topology_name]
            worker_blueprint = blueprint.workers(kind).get(class_name)
            if worker_blueprint is None:
                raise TopologyError(
                    f"failed to find {kind.noun} class {class_name} in ClusterClass",
                    obj=blueprint.cluster_class.key,
                    field=f"spec.workers.{kind.list_key}",
                )
            bootstrap_ref = align_ref(bootstrap_ref, worker_blueprint.bootstrap_template)
            infra_ref = align_ref(infra_ref, worker_blueprint.infrastructure_template)
        what = "template" if kind.uses_templates else "object"
        state = WorkerState(
            object=obj,
            bootstrap=_read_owned(
                reader,
                bootstrap_ref,
                cluster.namespace,
                f"bootstrap {what} referenced from {describe(obj)}",
                worker.key,
                "spec.template.spec.bootstrap.configRef",
            ),
            infrastructure=_read_owned(
                reader,
                infra_ref,
                cluster.namespace,
                f"infrastructure {what} referenced from {describe(obj)}",
                worker.key,
                "spec.template.spec.infrastructureRef",
            ),
        )
        if kind.has_machine_health_check:
            state.machine_health_check = reader.get(
                c.CLUSTER_API_VERSION, c.KIND_MACHINE_HEALTH_CHECK, cluster.namespace, worker.name
            )
        # What upgrade detection reads differs on purpose: a MachineDeployment's Machines live in the
        # management cluster; a MachinePool has no Machines, only Nodes in the workload cluster.
        if kind is MACHINE_POOL:
            state.nodes = _read_nodes(cluster, worker, nodes)
        elif worker.version is not None:
            state.machines = reader.list(
                c.CLUSTER_API_VERSION, c.KIND_MACHINE, cluster.namespace, worker.selector_labels
            )
        found[topology_name] = state
    return found


def _read_nodes(cluster: Cluster, pool: Worker, nodes: NodeReader) -> dict[str, Obj | None]:
    """The workload Nodes behind a MachinePool's ``status.nodeRefs`` (none asked if it has none)."""
    if pool.version is None:
        return {}
    found: dict[str, Obj | None] = {}
    for ref in pool.node_refs:
        node_name = str(ref.get("name") or "")
        try:
            found[node_name] = nodes.get_node(cluster.raw, node_name)
        except NodeReadError as err:
            raise TopologyError(
                "failed to check if any MachinePool is upgrading: "
                f"failed to check if MachinePool {pool.name} is upgrading: failed to get Node {node_name}: {err}",
                obj=pool.key,
                field="status.nodeRefs",
            ) from err
    return found
