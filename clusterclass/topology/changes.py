"""The changes a reconcile makes to go from current to desired state (spec §3), as data.

:func:`compute_changes` walks a :class:`Computation` in reconcile order (InfrastructureCluster,
control plane, Cluster, MachineDeployments, MachinePools; creates before updates before deletes)
and returns the list of :class:`Change` records a reconcile would perform, applying the same
decisions the reconcile makes:

- the Cluster shim Secret comes first: created (and added as an owner of the new objects) while the
  InfrastructureCluster or ControlPlane is about to be created, deleted once it has served (spec §3.2);

- objects marked pending-create are not created, workers pending an upgrade are not touched
  (a MachineDeployment's MachineHealthCheck still is), a control plane pending an upgrade is not
  touched (its MachineHealthCheck still is);
- MachineDeployment templates and the control plane machine template are *rotated* when their
  spec changes: a new template with a fresh name is created and the holder's ref switches to it,
  the old template is deleted; metadata-only changes are made in place;
- MachinePool bootstrap and infrastructure objects are changed *in place*, and must stay the same
  name, API group, kind and namespace (strict compatibility), else the Cluster fails;
- a removed worker is deleted with what it references (its controller cascades those deletes).

Whether an object changed is decided by a :class:`Differ`. :class:`TwoWayMerge` is the offline
one ``plan`` uses: the desired intent is merged over the current object and compared, which sees
every change of a field the topology sets but not ownership changes; the controller plugs in
server-side-apply dry-run later.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from clusterclass.api import constants as c
from clusterclass.api import contract
from clusterclass.api.objects import Obj, describe, dig, key_of, name_of, set_path
from clusterclass.api.refs import desired_ref
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WorkerKind
from clusterclass.errors import TopologyError
from clusterclass.fielderrors import FieldError
from clusterclass.topology import names
from clusterclass.topology.check import compatibility
from clusterclass.topology.current import WorkerState
from clusterclass.topology.desired import Computation, DesiredWorker
from clusterclass.topology.shim import needs_shim, shim_is_done, shim_secret, with_shim_owner

Action = Literal["create", "update", "delete"]


@dataclass
class Change:
    """One create, update or delete. Read-only: ``after`` shares unchanged parts with ``before``."""

    action: Action
    #: the object as it is (update, delete)
    before: Obj | None
    #: the object as it will be (create: the intent sent; update: current with the intent applied)
    after: Obj | None
    note: str = ""

    @property
    def object(self) -> Obj:
        obj = self.after if self.after is not None else self.before
        assert obj is not None
        return obj


@dataclass
class Diff:
    after: Obj
    has_changes: bool
    has_spec_changes: bool


class Differ(Protocol):
    def diff(self, current: Obj, intent: Obj) -> Diff:
        """What ``current`` becomes when ``intent`` (only topology-owned fields) is applied."""
        ...


def merge(base: Any, patch: Any) -> Any:
    """``patch`` laid over ``base``: maps merge key by key, anything else replaces.

    Unlike an RFC 7386 merge patch, a null in ``patch`` is a value to set, not a deletion: the
    intent is desired content, and a patch may well set a field to null.
    """
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = dict(base)
    for key, value in patch.items():
        merged[key] = merge(base.get(key), value)
    return merged


class TwoWayMerge:
    """The offline :class:`Differ`: merge the intent over the current object and compare."""

    def diff(self, current: Obj, intent: Obj) -> Diff:
        # ``merge`` copies what the intent sets and shares the rest with ``current``: changes are
        # read-only records, so the sharing is safe and saves copying every object.
        after = merge(current, intent)
        return Diff(
            after=after,
            has_changes=after != current,
            has_spec_changes=after.get("spec") != current.get("spec"),
        )


# --- intents: the part of a desired object the topology owns -------------------------------------


def update_intent(desired: Obj, ignore: tuple[tuple[str, ...], ...] = ()) -> Obj:
    """Labels, annotations and spec of ``desired`` (what the topology sets on an existing object)."""
    intent: Obj = {}
    metadata = {k: desired["metadata"][k] for k in ("labels", "annotations") if desired["metadata"].get(k)}
    if metadata:
        intent["metadata"] = metadata
    if "spec" in desired:
        intent["spec"] = desired["spec"]  # not copied: ``merge`` copies what it takes
    if ignore:
        intent = copy.deepcopy(intent)  # removing ignored fields must not touch the desired object
        for path in ignore:
            _remove_path(intent, path)
    return intent


def cluster_intent(desired_cluster: Obj) -> Obj:
    """The Cluster fields the topology owns: two labels and the two refs."""
    labels = dig(desired_cluster, "metadata", "labels") or {}
    return {
        "metadata": {"labels": {k: labels[k] for k in (c.LABEL_CLUSTER_NAME, c.LABEL_TOPOLOGY_OWNED) if k in labels}},
        "spec": {k: desired_cluster["spec"][k] for k in ("infrastructureRef", "controlPlaneRef")},
    }


def _remove_path(obj: Obj, path: tuple[str, ...]) -> None:
    parents = [obj]
    for step in path[:-1]:
        child = parents[-1].get(step)
        if not isinstance(child, dict):
            return
        parents.append(child)
    parents[-1].pop(path[-1], None)
    for depth in range(len(parents) - 1, 0, -1):  # prune maps left empty
        if not parents[depth]:
            parents[depth - 1].pop(path[depth - 1], None)


def infrastructure_cluster_ignore_paths(desired: Obj) -> tuple[tuple[str, ...], ...]:
    """An empty desired control plane endpoint must not clobber the one the provider filled in."""
    ignore = []
    contract_ = contract.InfrastructureCluster
    if dig(desired, *contract_.CONTROL_PLANE_ENDPOINT_HOST) == "":
        ignore.append(contract_.CONTROL_PLANE_ENDPOINT_HOST)
    if dig(desired, *contract_.CONTROL_PLANE_ENDPOINT_PORT) == 0:
        ignore.append(contract_.CONTROL_PLANE_ENDPOINT_PORT)
    return tuple(ignore)


# --- compatibility checks -------------------------------------------------------------------------

Compatibility = Callable[[Obj, Obj], list[FieldError]]

#: name, API group, kind and namespace unchanged: InfrastructureCluster, control plane, MachinePool objects
STRICT: Compatibility = compatibility.objects_strictly_compatible
#: API group, kind and namespace unchanged: MachineDeployment infrastructure templates, control plane machine template
SAME_GROUP_KIND_NAMESPACE: Compatibility = compatibility.objects_compatible
#: namespace unchanged: MachineDeployment bootstrap templates
SAME_NAMESPACE: Compatibility = compatibility.objects_in_same_namespace


def check_compatible(current: Obj, desired: Obj, check: Compatibility) -> None:
    """Raise a :class:`TopologyError` about ``current`` when ``check`` finds ``desired`` incompatible."""
    problems = check(current, desired)
    if problems:
        raise TopologyError("; ".join(problem.detail for problem in problems), obj=key_of(current))


# --- the walk ---------------------------------------------------------------------------------


class _Planner:
    def __init__(self, computation: Computation, differ: Differ, rng: random.Random) -> None:
        self.computation = computation
        self.differ = differ
        self.rng = rng
        self.changes: list[Change] = []

    def create(self, desired: Obj, note: str = "") -> None:
        self.changes.append(Change("create", None, desired, note))

    def delete(self, current: Obj, note: str = "") -> None:
        self.changes.append(Change("delete", current, None, note))

    def update(self, current: Obj, intent: Obj, note: str = "") -> Diff:
        diff = self.differ.diff(current, intent)
        if diff.has_changes:
            self.changes.append(Change("update", current, diff.after, note))
        return diff

    def referenced_object(self, current: Obj | None, desired: Obj, ignore: tuple[tuple[str, ...], ...] = ()) -> None:
        """InfrastructureCluster, ControlPlane, MachinePool objects: create, or update in place."""
        if current is None:
            self.create(desired)
            return
        check_compatible(current, desired, STRICT)
        self.update(current, update_intent(desired, ignore))

    def rotated_template(
        self, current: Obj | None, desired: Obj, prefix: str, check: Compatibility
    ) -> tuple[Obj, Obj | None]:
        """A template the holder references: create it, update its metadata, or rotate it.

        Returns the template the holder should reference and the one it replaces, if any.
        """
        if current is None:
            self.create(desired)
            return desired, None
        check_compatible(current, desired, check)
        diff = self.differ.diff(current, update_intent(desired))
        # A template of another group or kind is a new object: it needs a new template, never a patch.
        same_kind = (key_of(current).group, key_of(current).kind) == (key_of(desired).group, key_of(desired).kind)
        if same_kind and not diff.has_changes:
            return desired, None
        if same_kind and not diff.has_spec_changes:
            self.changes.append(Change("update", current, diff.after, "metadata changes"))
            return desired, None
        rotated = copy.deepcopy(desired)
        rotated["metadata"]["name"] = names.simple_name(prefix, self.rng)
        self.create(rotated, f"template rotation: replaces {describe(current)}")
        return rotated, current

    def health_check(self, current: Obj | None, desired: Obj | None) -> None:
        if desired is None:
            if current is not None:
                self.delete(current)
            return
        if current is None:
            self.create(desired)
        else:
            self.update(current, update_intent(desired))

    # --- stages -----------------------------------------------------------------------------------

    def run(self) -> list[Change]:
        current, desired = self.computation.current, self.computation.desired
        shim = self.cluster_shim()
        infrastructure_cluster = desired.infrastructure_cluster
        if shim is not None:
            infrastructure_cluster = with_shim_owner(infrastructure_cluster, shim)
        self.referenced_object(
            current.infrastructure_cluster,
            infrastructure_cluster,
            infrastructure_cluster_ignore_paths(infrastructure_cluster),
        )
        self.control_plane(shim)
        self.update(current.cluster, cluster_intent(desired.cluster))
        for kind in (MACHINE_DEPLOYMENT, MACHINE_POOL):
            self.workers(kind)
        return self.changes

    def cluster_shim(self) -> Obj | None:
        """Create the shim when a top-level object is about to be created, delete it once it has served.

        Returns the shim the new objects get as an extra owner, or None.
        """
        current = self.computation.current
        if needs_shim(current.infrastructure_cluster, current.control_plane):
            if current.cluster_shim is not None:
                return current.cluster_shim
            shim = shim_secret(current.cluster)
            self.create(shim, "owns the new objects until the Cluster does")
            return shim
        if current.cluster_shim is not None and shim_is_done(
            current.cluster, current.infrastructure_cluster, current.control_plane
        ):
            self.delete(current.cluster_shim, "the Cluster owns its InfrastructureCluster and ControlPlane now")
        return None

    def control_plane(self, shim: Obj | None) -> None:
        current, desired = self.computation.current, self.computation.desired
        self.health_check(current.control_plane_machine_health_check, desired.control_plane_machine_health_check)
        if self.computation.upgrades.control_plane.is_pending_upgrade:
            return
        cp = desired.control_plane if shim is None else with_shim_owner(desired.control_plane, shim)
        replaced = None
        template = desired.control_plane_infrastructure_machine_template
        if template is not None:
            cluster_name = name_of(desired.cluster)
            template, replaced = self.rotated_template(
                current.control_plane_infrastructure_machine_template,
                template,
                names.control_plane_machine_template_prefix(cluster_name),
                SAME_GROUP_KIND_NAMESPACE,
            )
            cp = copy.deepcopy(cp)
            path = contract.ControlPlane.MACHINE_TEMPLATE_INFRASTRUCTURE_REF
            set_path(cp, path, desired_ref(dig(cp, *path), template))
        self.referenced_object(current.control_plane, cp)
        if replaced is not None:
            self.delete(replaced, "replaced by template rotation")

    def workers(self, kind: WorkerKind) -> None:
        current = self.computation.current.workers(kind)
        desired = self.computation.desired.workers(kind)
        upgrades = self.computation.upgrades.workers(kind)
        for topology_name, worker in desired.items():
            if topology_name not in current and topology_name not in upgrades.pending_create:
                self.create_worker(worker)
        for topology_name, worker in desired.items():
            if topology_name in current:
                state = current[topology_name]
                try:
                    self.update_worker(kind, state, worker, name_of(state.object) in upgrades.pending_upgrade)
                except TopologyError as err:
                    raise err.wrap(f"failed to reconcile {describe(state.object)}") from err
        for topology_name, state in current.items():
            if topology_name not in desired:
                self.delete_worker(kind, state)

    def create_worker(self, worker: DesiredWorker) -> None:
        self.create(worker.infrastructure)
        self.create(worker.bootstrap)
        self.create(worker.object)
        if worker.machine_health_check is not None:
            self.create(worker.machine_health_check)

    def update_worker(self, kind: WorkerKind, state: WorkerState, worker: DesiredWorker, pending: bool) -> None:
        if kind.has_machine_health_check:
            self.health_check(state.machine_health_check, worker.machine_health_check)
        if pending:
            return
        if not kind.uses_templates:
            self.referenced_object(state.infrastructure, worker.infrastructure)
            self.referenced_object(state.bootstrap, worker.bootstrap)
            self.update(state.object, update_intent(worker.object))
            return
        prefix = names.worker_object_prefix(name_of(self.computation.current.cluster), worker.topology.name)
        infrastructure, old_infrastructure = self.rotated_template(
            state.infrastructure, worker.infrastructure, prefix, SAME_GROUP_KIND_NAMESPACE
        )
        bootstrap, old_bootstrap = self.rotated_template(state.bootstrap, worker.bootstrap, prefix, SAME_NAMESPACE)
        obj = copy.deepcopy(worker.object)
        machine_spec = obj["spec"]["template"]["spec"]
        machine_spec["infrastructureRef"] = desired_ref(machine_spec["infrastructureRef"], infrastructure)
        machine_spec["bootstrap"]["configRef"] = desired_ref(machine_spec["bootstrap"]["configRef"], bootstrap)
        self.update(state.object, update_intent(obj))
        # The replaced templates go once no MachineSet uses them; the plan shows them as going.
        for old in (old_infrastructure, old_bootstrap):
            if old is not None:
                self.delete(old, "replaced by template rotation; deleted once no MachineSet uses it")

    def delete_worker(self, kind: WorkerKind, state: WorkerState) -> None:
        if state.machine_health_check is not None:
            self.delete(state.machine_health_check)
        self.delete(state.object)
        cascade = f"deleted with {describe(state.object)}"
        self.delete(state.infrastructure, cascade)
        self.delete(state.bootstrap, cascade)


def compute_changes(
    computation: Computation, *, differ: Differ | None = None, rng: random.Random | None = None
) -> list[Change]:
    """Every create, update and delete a reconcile of ``computation`` performs, in order."""
    return _Planner(computation, differ or TwoWayMerge(), rng or random.Random()).run()
