"""The blueprint: a ClusterClass together with every template it references (spec §2.2).

The blueprint is read once per Cluster computation through a :class:`Reader`. Any reference that
does not resolve, or a template that has no ``spec.template`` to clone, is an error naming the
ClusterClass field (``spec.workers.machinePools[0].template.infrastructure.ref``) or the template
field (``spec.template``), so the user knows exactly what to fix.

A ref without a namespace is read in the ClusterClass namespace: that is what the ClusterClass
admission webhook would have defaulted it to.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from clusterclass.api import contract
from clusterclass.api.contracts import ContractLookup, bundled_contracts
from clusterclass.api.objects import Obj, dig, key_of
from clusterclass.api.refs import ref_key
from clusterclass.api.views import Cluster, ClusterClass, Metadata, Topology, WorkerClass
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WorkerKind
from clusterclass.errors import TopologyError
from clusterclass.topology.reader import Reader


@dataclass
class WorkerBlueprint:
    """A worker class with the two templates it clones from."""

    kind: WorkerKind
    worker_class: WorkerClass
    metadata: Metadata
    bootstrap_template: Obj
    infrastructure_template: Obj
    machine_health_check: Obj | None = None


@dataclass
class Blueprint:
    cluster_class: ClusterClass
    topology: Topology
    infrastructure_cluster_template: Obj
    control_plane_template: Obj
    control_plane_infrastructure_machine_template: Obj | None = None
    control_plane_machine_health_check: Obj | None = None
    machine_deployments: dict[str, WorkerBlueprint] = field(default_factory=dict)
    machine_pools: dict[str, WorkerBlueprint] = field(default_factory=dict)
    #: which contract each provider kind's version implements (its CRD's labels) and reference versions
    contracts: ContractLookup = field(default_factory=bundled_contracts)

    def workers(self, kind: WorkerKind) -> dict[str, WorkerBlueprint]:
        return self.machine_pools if kind is MACHINE_POOL else self.machine_deployments

    @property
    def control_plane_contract(self) -> contract.ControlPlaneContract:
        """The ControlPlane contract of the object the control plane template stamps out."""
        source = dig(self.control_plane_template, *contract.TEMPLATE) or {}
        api_version = str(source.get("apiVersion") or self.control_plane_template.get("apiVersion") or "")
        kind = str(
            source.get("kind") or contract.object_kind_for_template(str(self.control_plane_template.get("kind")))
        )
        return contract.control_plane(self.contracts.contract_of(api_version, kind))

    def contract_of(self, obj: Obj) -> contract.ControlPlaneContract:
        """The ControlPlane contract of an existing control plane object."""
        return contract.control_plane(
            self.contracts.contract_of(str(obj.get("apiVersion") or ""), str(obj.get("kind")))
        )

    @property
    def has_control_plane_infrastructure_machine(self) -> bool:
        return self.control_plane_infrastructure_machine_template is not None


def get_blueprint(
    cluster_class: Obj, cluster: Obj, reader: Reader, contracts: ContractLookup | None = None
) -> Blueprint:
    """Read the ClusterClass's templates and assemble the blueprint for ``cluster``'s topology."""
    cc = ClusterClass(cluster_class)
    topology = Cluster(cluster).topology
    if topology is None:
        raise TopologyError("Cluster has no spec.topology", obj=key_of(cluster), field="spec.topology")

    infra_template = _read_template(
        reader, cc, cc.infrastructure_ref, "spec.infrastructure.ref", "infrastructure cluster template"
    )
    cp_class = cc.control_plane
    cp_template = _read_template(reader, cc, cp_class.ref, "spec.controlPlane.ref", "control plane template")
    blueprint = Blueprint(
        cluster_class=cc,
        topology=topology,
        infrastructure_cluster_template=infra_template,
        control_plane_template=cp_template,
        contracts=contracts if contracts is not None else bundled_contracts(),
    )
    if cp_class.machine_infrastructure_ref is not None:
        blueprint.control_plane_infrastructure_machine_template = _read_template(
            reader,
            cc,
            cp_class.machine_infrastructure_ref,
            "spec.controlPlane.machineInfrastructure.ref",
            "control plane infrastructure machine template",
        )
        blueprint.control_plane_machine_health_check = cp_class.machine_health_check

    for kind in (MACHINE_DEPLOYMENT, MACHINE_POOL):
        for worker_class in cc.worker_classes(kind):
            blueprint.workers(kind)[worker_class.class_name] = _worker_blueprint(reader, cc, worker_class)
    return blueprint


def _worker_blueprint(reader: Reader, cc: ClusterClass, worker_class: WorkerClass) -> WorkerBlueprint:
    kind = worker_class.kind
    what = f'{kind.noun} class "{worker_class.class_name}"'
    infrastructure = _read_template(
        reader,
        cc,
        worker_class.infrastructure_ref,
        f"{worker_class.field}.template.infrastructure.ref",
        f"{contract.object_kind_for_template(kind.infrastructure_noun)}Template for {cc.namespace}/{cc.name}, {what}",
    )
    bootstrap = _read_template(
        reader,
        cc,
        worker_class.bootstrap_ref,
        f"{worker_class.field}.template.bootstrap.ref",
        f"bootstrap config for {cc.namespace}/{cc.name}, {what}",
    )
    return WorkerBlueprint(
        kind=kind,
        worker_class=worker_class,
        metadata=worker_class.metadata,
        bootstrap_template=bootstrap,
        infrastructure_template=infrastructure,
        machine_health_check=worker_class.machine_health_check if kind.has_machine_health_check else None,
    )


def _read_template(reader: Reader, cc: ClusterClass, ref: Obj | None, field: str, what: str) -> Obj:
    """Resolve a ClusterClass ref to its template; every failure names the ref's field."""
    if ref is None:
        raise TopologyError(f"failed to get {what}: {field} is required", obj=cc.key, field=field)
    for part in ("apiVersion", "kind", "name"):
        if not ref.get(part):
            raise TopologyError(
                f"failed to get {what}: {field}.{part} must be set", obj=cc.key, field=f"{field}.{part}"
            )
    namespace = str(ref.get("namespace") or cc.namespace)
    template = reader.get(str(ref["apiVersion"]), str(ref["kind"]), namespace, str(ref["name"]))
    if template is None:
        target = ref_key(ref, cc.namespace)
        raise TopologyError(f"failed to get {what}: {target} not found", obj=cc.key, field=field)
    # A template without spec.template clones to an empty object, as upstream (v1.11+) tolerates it: its own in-memory
    # e2e ClusterClass has an empty KubeadmControlPlaneTemplate and KubeadmConfigTemplate on purpose.
    found = dig(template, *contract.TEMPLATE)
    if found is not None and not isinstance(found, dict):
        raise TopologyError(
            f"spec.template of {template.get('kind')} {namespace}/{ref['name']} is not an object",
            obj=key_of(template),
            field="spec.template",
        )
    return template
