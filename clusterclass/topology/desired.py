"""Desired state: every object one Cluster's topology should have (spec §2.4–§2.9).

:func:`compute_desired_state` is a pure function of the blueprint, the current state and a
random generator (for new names). It runs in upstream's order, because later steps read earlier
results: the InfrastructureCluster, the control plane's machine template, which workers are
already upgrading, the ControlPlane (whose version gates the workers), its MachineHealthCheck, the
Cluster's refs, then every MachineDeployment and every MachinePool in topology-list order, and
finally the patch engine.

Workers of both kinds are computed by one function (:func:`_compute_worker`): the rules for
labels, annotations, names, versions, replicas and overridable fields are the same. Where upstream
differs, the :class:`WorkerKind` says how: MachineDeployment bootstrap/infrastructure are templates
(template-to-template), MachinePool ones are objects (template-to-object) that are changed in place.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from clusterclass.api import constants as c
from clusterclass.api.durations import MACHINE_TIMEOUT_FIELDS, go_duration
from clusterclass.api.objects import Obj, dig, name_of, set_path
from clusterclass.api.refs import desired_ref, owner_reference_to
from clusterclass.api.views import Cluster, WorkerTopology
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WorkerKind
from clusterclass.errors import TopologyError
from clusterclass.topology import health, names
from clusterclass.topology.blueprint import Blueprint
from clusterclass.topology.clone import template_to_object, template_to_template
from clusterclass.topology.current import CurrentState
from clusterclass.topology.hooks import HookTracker, LifecycleHooks, is_pending
from clusterclass.topology.metadata import merge_maps, topology_labels, without_upgrade_sequencing
from clusterclass.topology.patches import NoPatches, PatchEngine
from clusterclass.topology.shim import shim_owner_reference
from clusterclass.topology.upgrade import (
    UpgradeTracker,
    control_plane_version,
    mark_upgrading_workers,
    new_tracker,
    worker_version,
)

if TYPE_CHECKING:
    from clusterclass.topology.patches.external import ExtensionCalls


@dataclass
class DesiredWorker:
    """A desired MachineDeployment or MachinePool with its bootstrap and infrastructure.

    For MachineDeployments ``bootstrap``/``infrastructure`` are templates; for MachinePools they are
    the bootstrap config object and the infrastructure machine pool object.
    """

    topology: WorkerTopology
    object: Obj
    bootstrap: Obj
    infrastructure: Obj
    machine_health_check: Obj | None = None


@dataclass
class DesiredState:
    cluster: Obj
    infrastructure_cluster: Obj
    control_plane: Obj
    control_plane_infrastructure_machine_template: Obj | None = None
    control_plane_machine_health_check: Obj | None = None
    machine_deployments: dict[str, DesiredWorker] = field(default_factory=dict)
    machine_pools: dict[str, DesiredWorker] = field(default_factory=dict)

    def workers(self, kind: WorkerKind) -> dict[str, DesiredWorker]:
        return self.machine_pools if kind is MACHINE_POOL else self.machine_deployments


@dataclass
class Computation:
    """Everything one desired-state computation produced, for reconcile, plan and conditions."""

    blueprint: Blueprint
    current: CurrentState
    desired: DesiredState
    upgrades: UpgradeTracker
    hooks: HookTracker
    warnings: list[str]


def _carry_shim_owner(current: Obj | None, cluster_name: str) -> list[Obj] | None:
    """Keep an existing ownerReference to the Cluster's shim Secret (spec §3.2) so apply keeps it."""
    ref = shim_owner_reference(current, cluster_name)
    return [ref] if ref is not None else None


def _pick(topology_value: Any, class_value: Any) -> Any:
    """Topology value if set, else the class value; an empty list means "unset" in the object."""
    value = topology_value if topology_value is not None else class_value
    if value is None or value == []:
        return None
    return copy.deepcopy(value)


class _Computer:
    """Holds the inputs of one computation so the steps read like the spec's list."""

    def __init__(
        self,
        blueprint: Blueprint,
        current: CurrentState,
        rng: random.Random,
        hooks: LifecycleHooks | None,
    ) -> None:
        self.blueprint = blueprint
        self.current = current
        self.rng = rng
        self.lifecycle_hooks = hooks
        self.cluster = Cluster(current.cluster)
        self.upgrades = new_tracker(current.cluster)
        self.hook_tracker = HookTracker()
        self.warnings: list[str] = []

    # --- control plane side -------------------------------------------------------------------

    def infrastructure_cluster(self) -> Obj:
        current = self.current.infrastructure_cluster
        ref = self.cluster.infrastructure_ref
        name = names.simple_name(names.infrastructure_cluster_prefix(self.cluster.name), self.rng)
        if ref and ref.get("name"):
            name = str(ref["name"])
        return template_to_object(
            self.blueprint.infrastructure_cluster_template,
            cluster_name=self.cluster.name,
            namespace=self.cluster.namespace,
            name=name,
            owner_references=_carry_shim_owner(current, self.cluster.name),
        )

    def control_plane_machine_template(self) -> Obj | None:
        template = self.blueprint.control_plane_infrastructure_machine_template
        if template is None:
            return None
        current_cp = self.current.control_plane
        current_ref = (
            dig(current_cp, *self.blueprint.contract_of(current_cp).MACHINE_TEMPLATE_INFRASTRUCTURE_REF)
            if current_cp is not None
            else None
        )
        name = names.simple_name(names.control_plane_machine_template_prefix(self.cluster.name), self.rng)
        if isinstance(current_ref, dict) and current_ref.get("name"):
            name = str(current_ref["name"])
        return template_to_template(
            template,
            cluster_name=self.cluster.name,
            namespace=self.cluster.namespace,
            name=name,
            owner_references=[owner_reference_to(self.current.cluster)],
        )

    def control_plane(self, machine_template: Obj | None) -> Obj:
        cc = self.blueprint.cluster_class
        cp_class = cc.control_plane
        topology = self.blueprint.topology
        labels = topology_labels(
            self.cluster.name, merge_maps(topology.control_plane_metadata.labels, cp_class.metadata.labels)
        )
        annotations = merge_maps(topology.control_plane_metadata.annotations, cp_class.metadata.annotations)
        try:
            name = names.strategy_name(cp_class.naming_template, {"cluster": {"name": self.cluster.name}}, self.rng)
        except names.NamingError as err:
            raise TopologyError(
                f"failed to compute ControlPlane: failed to generate name for ControlPlane: {err}",
                obj=cc.key,
                field="spec.controlPlane.namingStrategy.template",
            ) from err
        current_ref = self.cluster.control_plane_ref
        if current_ref and current_ref.get("name"):
            name = str(current_ref["name"])
        cp = template_to_object(
            self.blueprint.control_plane_template,
            cluster_name=self.cluster.name,
            namespace=self.cluster.namespace,
            name=name,
            labels=labels,
            annotations=annotations,
            owner_references=_carry_shim_owner(self.current.control_plane, self.cluster.name),
        )
        cp_contract = self.blueprint.control_plane_contract
        if machine_template is not None:
            current_cp = self.current.control_plane
            current_ref = (
                dig(current_cp, *self.blueprint.contract_of(current_cp).MACHINE_TEMPLATE_INFRASTRUCTURE_REF)
                if current_cp is not None
                else None
            )
            set_path(
                cp,
                cp_contract.MACHINE_TEMPLATE_INFRASTRUCTURE_REF,
                cp_contract.infrastructure_ref(
                    desired_ref(current_ref if isinstance(current_ref, dict) else None, machine_template)
                ),
            )
            existing = dig(cp, *cp_contract.MACHINE_TEMPLATE_METADATA) or {}
            metadata: Obj = {}
            machine_labels = merge_maps(labels, existing.get("labels"))
            machine_annotations = merge_maps(annotations, existing.get("annotations"))
            if machine_labels:
                metadata["labels"] = machine_labels
            if machine_annotations:
                metadata["annotations"] = machine_annotations
            set_path(cp, cp_contract.MACHINE_TEMPLATE_METADATA, metadata)
        if topology.control_plane_replicas is not None:
            set_path(cp, cp_contract.REPLICAS, topology.control_plane_replicas)
        for duration_field in MACHINE_TIMEOUT_FIELDS:
            value = _pick(topology.control_plane.get(duration_field), cp_class.get(duration_field))
            if value is not None:
                set_path(
                    cp,
                    cp_contract.timeout_path(duration_field),
                    cp_contract.timeout_value(duration_field, go_duration(value)),
                )
        current_cp = self.current.control_plane
        version = control_plane_version(
            desired=topology.version,
            current_cp=self.current.control_plane,
            cluster=self.current.cluster,
            replicas_managed=topology.control_plane_replicas is not None,
            tracker=self.upgrades,
            hook_tracker=self.hook_tracker,
            hooks=self.lifecycle_hooks,
            contract=self.blueprint.contract_of(self.current.control_plane)
            if self.current.control_plane
            else cp_contract,
        )
        set_path(cp, cp_contract.VERSION, version)
        return cp

    def control_plane_health_check(self, cp: Obj) -> Obj | None:
        if not self.blueprint.has_control_plane_infrastructure_machine:
            return None
        check = health.effective_check(
            self.blueprint.control_plane_machine_health_check,
            self.blueprint.topology.control_plane.get("machineHealthCheck"),
        )
        if check is None:
            return None
        return health.machine_health_check(
            name=name_of(cp),
            namespace=self.cluster.namespace,
            cluster_name=self.cluster.name,
            owner=owner_reference_to(self.current.cluster),
            selector={c.LABEL_TOPOLOGY_OWNED: "", c.LABEL_CONTROL_PLANE: ""},
            check=check,
        )

    def cluster_object(self, infrastructure_cluster: Obj, cp: Obj) -> Obj:
        cluster = copy.deepcopy(self.current.cluster)
        metadata = cluster.setdefault("metadata", {})
        metadata["labels"] = topology_labels(self.cluster.name, metadata.get("labels"))
        annotations = dict(metadata.get("annotations") or {})
        step = self._upgrade_step(cp)
        if step is not None:
            annotations[c.ANNOTATION_UPGRADE_STEP] = step
        else:
            annotations.pop(c.ANNOTATION_UPGRADE_STEP, None)
        if annotations:
            metadata["annotations"] = annotations
        else:
            metadata.pop("annotations", None)
        spec = cluster.setdefault("spec", {})
        spec["infrastructureRef"] = desired_ref(self.cluster.infrastructure_ref, infrastructure_cluster)
        spec["controlPlaneRef"] = desired_ref(self.cluster.control_plane_ref, cp)
        return cluster

    def _upgrade_step(self, cp: Obj) -> str | None:
        """The control plane's desired version while the Cluster upgrades: upstream v1.14's upgrade-step annotation,
        set while ``AfterClusterUpgrade`` is pending on the current Cluster (v1.14 with the Runtime SDK, which
        clusterclass always runs; offline, ``plan`` predicts what that controller writes)."""
        version = dig(cp, "spec", "version")
        if version and is_pending(self.current.cluster, c.HOOK_AFTER_CLUSTER_UPGRADE):
            return str(version)
        return None

    # --- workers ---------------------------------------------------------------------------------

    def workers(self, kind: WorkerKind) -> dict[str, DesiredWorker]:
        topology_workers = self.blueprint.topology.workers(kind)
        computed: dict[str, DesiredWorker] = {}
        for index, topology in enumerate(topology_workers):
            try:
                computed[topology.name] = self._compute_worker(topology_workers, index)
            except TopologyError as err:
                raise err.wrap(f'failed to compute {kind.noun} for topology "{topology.name}"').wrap(
                    f"failed to compute {kind.noun}s"
                ) from err
        return computed

    def _compute_worker(self, topology_workers: list[WorkerTopology], index: int) -> DesiredWorker:
        topology = topology_workers[index]
        kind = topology.kind
        cc = self.blueprint.cluster_class
        worker_blueprint = self.blueprint.workers(kind).get(topology.class_name)
        worker_class = cc.worker_class(kind, topology.class_name)
        if worker_blueprint is None or worker_class is None:
            raise TopologyError(
                f"{kind.noun} class {topology.class_name} not found in {cc.namespace}/{cc.name}",
                obj=self.cluster.key,
                field=f"{topology.field}.class",
            )
        current = self.current.workers(kind).get(topology.name)
        cluster_name, namespace = self.cluster.name, self.cluster.namespace
        current_worker = current.object if current else None
        current_bootstrap_ref = dig(current_worker, "spec", "template", "spec", "bootstrap", "configRef")
        current_infra_ref = dig(current_worker, "spec", "template", "spec", "infrastructureRef")
        prefix = names.worker_object_prefix(cluster_name, topology.name)
        # MachineDeployments reference templates (copied whole, rotated on change); MachinePools reference
        # objects stamped out of the templates (changed in place). See WorkerKind.uses_templates.
        clone = template_to_template if kind.uses_templates else template_to_object
        owner = [owner_reference_to(self.current.cluster)]
        pool_label = {kind.name_label: topology.name}

        def cloned(template: Obj, current_ref: Any) -> Obj:
            name = names.simple_name(prefix, self.rng)
            if current is not None and isinstance(current_ref, dict) and current_ref.get("name"):
                name = str(current_ref["name"])
            return clone(
                template,
                cluster_name=cluster_name,
                namespace=namespace,
                name=name,
                labels=pool_label,
                owner_references=owner,
            )

        what = "template" if kind.uses_templates else "object"
        try:
            bootstrap = cloned(worker_blueprint.bootstrap_template, current_bootstrap_ref)
        except TopologyError as err:
            raise err.wrap(f'failed to compute bootstrap {what} for topology "{topology.name}"') from err
        try:
            infrastructure = cloned(worker_blueprint.infrastructure_template, current_infra_ref)
        except TopologyError as err:
            raise err.wrap(f'failed to compute infrastructure {what} for topology "{topology.name}"') from err

        version = worker_version(
            desired=self.blueprint.topology.version,
            topology_workers=topology_workers,
            index=index,
            current=current,
            tracker=self.upgrades,
            hook_tracker=self.hook_tracker,
        )

        try:
            name = names.strategy_name(
                worker_class.naming_template,
                {"cluster": {"name": cluster_name}, kind.naming_key: {"topologyName": topology.name}},
                self.rng,
            )
        except names.NamingError as err:
            raise TopologyError(
                f"failed to generate name for {kind.noun}: {err}",
                obj=cc.key,
                field=f"{worker_class.field}.namingStrategy.template",
            ) from err
        if current is not None:
            name = name_of(current.object)

        labels = merge_maps(topology.metadata.labels, worker_blueprint.metadata.labels) or {}
        labels = topology_labels(cluster_name, labels)
        labels[kind.name_label] = topology.name
        annotations = without_upgrade_sequencing(
            merge_maps(topology.metadata.annotations, worker_blueprint.metadata.annotations)
        )
        template_metadata: Obj = {"labels": dict(labels)}
        if annotations:
            template_metadata["annotations"] = dict(annotations)

        machine_spec: Obj = {
            "clusterName": cluster_name,
            "bootstrap": {"configRef": desired_ref(_as_ref(current_bootstrap_ref, current), bootstrap)},
            "infrastructureRef": desired_ref(_as_ref(current_infra_ref, current), infrastructure),
            "version": version,
        }
        for duration_field in MACHINE_TIMEOUT_FIELDS:
            value = _pick(topology.get(duration_field), worker_class.get(duration_field))
            if value is not None:
                machine_spec[duration_field] = go_duration(value)

        spec: Obj = {"clusterName": cluster_name}
        if topology.replicas is not None:
            spec["replicas"] = topology.replicas
        if kind.has_strategy:
            spec["selector"] = {
                "matchLabels": {
                    c.LABEL_CLUSTER_NAME: cluster_name,
                    c.LABEL_TOPOLOGY_OWNED: "",
                    kind.name_label: topology.name,
                }
            }
        spec["template"] = {"metadata": template_metadata, "spec": machine_spec}
        min_ready = _pick(topology.get("minReadySeconds"), worker_class.get("minReadySeconds"))
        if min_ready is not None:
            spec["minReadySeconds"] = min_ready
        if kind.has_strategy:
            strategy = _pick(topology.get("strategy"), worker_class.get("strategy"))
            if strategy is not None:
                spec["strategy"] = strategy
        failure_domains = _pick(topology.get(kind.failure_domain_field), worker_class.get(kind.failure_domain_field))
        metadata: Obj = {"name": name, "namespace": namespace, "labels": labels}
        if annotations:
            metadata["annotations"] = annotations
        worker: Obj = {"apiVersion": c.CLUSTER_API_VERSION, "kind": kind.kind, "metadata": metadata, "spec": spec}
        if failure_domains is not None:
            set_path(worker, kind.failure_domain_path, failure_domains)

        check = None
        if kind.has_machine_health_check:
            health_check_class = health.effective_check(
                worker_blueprint.machine_health_check, topology.machine_health_check
            )
            if health_check_class is not None:
                check = health.machine_health_check(
                    name=name,
                    namespace=namespace,
                    cluster_name=cluster_name,
                    owner=owner_reference_to(self.current.cluster),
                    selector={c.LABEL_TOPOLOGY_OWNED: "", kind.name_label: topology.name},
                    check=health_check_class,
                )
        return DesiredWorker(topology, worker, bootstrap, infrastructure, check)


def _as_ref(ref: Any, current: Any) -> Obj | None:
    return ref if current is not None and isinstance(ref, dict) else None


def compute_desired_state(
    blueprint: Blueprint,
    current: CurrentState,
    *,
    rng: random.Random,
    patches: PatchEngine | None = None,
    hooks: LifecycleHooks | None = None,
    extensions: ExtensionCalls | None = None,
) -> Computation:
    """Compute every object ``current.cluster``'s topology should have, in upstream's order."""
    computer = _Computer(blueprint, current, rng, hooks)
    infrastructure_cluster = computer.infrastructure_cluster()
    machine_template = computer.control_plane_machine_template()
    for kind in (MACHINE_DEPLOYMENT, MACHINE_POOL):
        mark_upgrading_workers(current, computer.upgrades, kind)
    _warn_unknown_nodes(current, computer.warnings)
    cp = computer.control_plane(machine_template)
    desired = DesiredState(
        cluster=computer.cluster_object(infrastructure_cluster, cp),
        infrastructure_cluster=infrastructure_cluster,
        control_plane=cp,
        control_plane_infrastructure_machine_template=machine_template,
        control_plane_machine_health_check=computer.control_plane_health_check(cp),
    )
    for kind in (MACHINE_DEPLOYMENT, MACHINE_POOL):
        desired.workers(kind).update(computer.workers(kind))
    try:
        (patches or NoPatches()).apply(blueprint, desired, extensions)
    except TopologyError as err:
        raise err.wrap("failed to apply patches") from err
    return Computation(blueprint, current, desired, computer.upgrades, computer.hook_tracker, computer.warnings)


def _warn_unknown_nodes(current: CurrentState, warnings: list[str]) -> None:
    for state in current.machine_pools.values():
        unknown = sorted(node for node, value in state.nodes.items() if value is None)
        if unknown:
            warnings.append(
                f"cannot tell whether MachinePool {name_of(state.object)} is upgrading: its Nodes "
                f"{', '.join(unknown)} are not known (give the workload cluster's Nodes as input); "
                "assuming it is not upgrading"
            )
