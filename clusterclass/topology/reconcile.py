"""Reconcile state (spec §3) as a sequence of steps, without I/O: one place decides what a reconcile does.

``plan`` and the controller must make the same decisions: which objects to create, which to update in
place and which to rotate, what to skip while an upgrade is pending, what to delete, in which order, and
where to stop on an error. They differ only in how they *find out* whether an object changed (offline:
merge the intent over the current object; the controller: a server-side-apply dry run) and in what
*doing* a step means (``plan`` records it; the controller writes through the API, records events and
waits for its cache).

So the decisions live here, in :func:`reconcile_steps`, a generator that yields one :data:`Step` at a
time and is sent back the answer (the "sans-I/O" shape: the protocol logic never touches a socket):

- :class:`Diff` asks what applying the topology-owned fields of a desired object would change
  (answer: a :class:`DiffResult`);
- :class:`LiveTopologyNames` asks for the topology names of the Cluster's MachineDeployments or
  MachinePools as the API server has them right now, not as a cache saw them, so a stale cache never
  creates a duplicate worker (answer: a set of names; offline, the current state's);
- :class:`LiveLeftovers` asks the API server (not a cache) for what an earlier attempt made for an object it
  never got to create — its process died between the two writes, or the create's answer was lost — so the
  retry deletes them instead of leaking a set per attempt (answer: a list of objects; offline, none);
- :class:`EnsureShim`, :class:`Create`, :class:`Update` and :class:`Delete` are the writes (answer: the
  object as stored, for the creates; None otherwise).

A driver runs the generator to the end (:func:`drive`). A write that fails is *thrown into* the generator
as a :class:`~clusterclass.errors.TopologyError`, where the step that made it adds upstream's context
(``failed to reconcile MachinePool/c1-mp-0-x7k2p: ...``) and the reconcile stops, as upstream's does
at the first error. :func:`clusterclass.topology.changes.compute_changes` is the offline driver; the
controller's is :mod:`clusterclass.controllers.topology.state`.

What the steps encode (spec §3.1–§3.5, §4.7, Appendix A10–A13):

- order: the Cluster shim, the InfrastructureCluster, the control plane (its MachineHealthCheck, its
  machine template, the object), the Cluster's refs, MachineDeployments, then MachinePools, each kind
  create → update → delete;
- a worker pending create is not created, one pending an upgrade is not touched (a MachineDeployment's
  MachineHealthCheck still is), a control plane pending an upgrade is not touched (its
  MachineHealthCheck still is);
- MachineDeployment templates, the control plane machine template and a MachinePool's bootstrap config are
  *rotated* when their spec changes (a new object with a fresh name, the holder's ref switched to it; for the
  bootstrap config beyond upstream, which patches it in place: :meth:`_Reconcile.update_machine_pool`);
  metadata-only changes are made in place; a MachinePool's infrastructure pool is changed *in place* and must
  keep its name, API group, kind and namespace (strict compatibility);
- a removed worker is deleted; what it references goes with it (its own controllers delete that);
- before a worker, or a control plane's machine template, is created, what an earlier attempt made for it and
  left unreferenced is deleted (beyond upstream, which leaves it to be collected with the Cluster).
"""

from __future__ import annotations

import contextlib
import copy
import random
from collections.abc import Callable, Generator
from dataclasses import dataclass
from typing import Any, Literal

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

Path = tuple[str, ...]
Paths = tuple[Path, ...]

#: where the control plane, MachineDeployments and MachinePools keep their Kubernetes version
CONTROL_PLANE_VERSION: Path = contract.ControlPlane.VERSION
WORKER_VERSION: Path = ("spec", "template", "spec", "version")
CONTROL_PLANE_REF: Path = ("spec", "controlPlaneRef")


# --- the steps ---------------------------------------------------------------------------------------------


class MayExist(TopologyError):
    """A write that failed as far as the caller knows, but whose object may exist: nothing made for it may be cleaned
    up (a failed create's clean-up must not delete what a created object references). Every other TopologyError
    of a write means it was not made."""


class NotVisibleInCache(MayExist):
    """A write succeeded but the controller's cache did not show it in time: the object exists."""


class OutcomeUnknown(MayExist):
    """A create answered with an error that does not say whether it was applied (a 5xx, a timeout, a lost
    connection) and whose object could not be looked up afterwards either."""


@dataclass(frozen=True)
class DiffResult:
    """What ``current`` becomes with the intent applied, and whether anything (or the spec) changes."""

    after: Obj
    has_changes: bool
    has_spec_changes: bool


@dataclass(frozen=True)
class Diff:
    """What would applying the topology-owned fields of ``desired`` change on ``current``? Answer: DiffResult.

    ``ignore`` lists fields of ``desired`` the topology leaves to others (an empty control plane
    endpoint); ``cluster`` marks the Cluster, of which the topology owns only two labels and two refs.
    """

    current: Obj
    desired: Obj
    ignore: Paths = ()
    cluster: bool = False


@dataclass(frozen=True)
class LiveTopologyNames:
    """The topology names of the Cluster's workers of ``kind`` on the API server now. Answer: a set."""

    kind: WorkerKind


@dataclass(frozen=True)
class LiveLeftovers:
    """Objects of ``like``'s apiVersion and kind in its namespace on the API server now, with every label of
    ``labels`` and none of ``without``: what an earlier attempt made before the object that was to reference them
    (which the caller knows does not exist). With ``unless_cluster_has``, none when the Cluster on the API server
    has that field set (the holder exists after all). Answer: a list of objects."""

    like: Obj
    labels: dict[str, str]
    without: tuple[str, ...] = ()
    unless_cluster_has: Path | None = None


@dataclass(frozen=True)
class EnsureShim:
    """Create the Cluster shim Secret, or read it if it exists. Answer: the shim as stored."""

    obj: Obj
    note: str = "owns the new objects until the Cluster does"


@dataclass(frozen=True)
class Create:
    """Create ``obj``. Answer: the object as stored.

    ``replaces`` is the template a rotation replaces; ``wait_for_cache`` asks the controller to wait
    until its cache shows the new object before going on (upstream does for MachineDeployments and
    MachinePools, so the next reconcile cannot miss them).
    """

    obj: Obj
    ignore: Paths = ()
    replaces: Obj | None = None
    wait_for_cache: bool = False
    note: str = ""


@dataclass(frozen=True)
class Update:
    """Apply the topology-owned fields of ``desired`` to ``current``, which ``diff`` says changes. Answer: None.

    ``metadata_only``: a template whose spec is unchanged, patched in place instead of rotated.
    ``version``: where the object keeps its Kubernetes version, so an event can say it changed.
    """

    current: Obj
    desired: Obj
    diff: DiffResult
    ignore: Paths = ()
    cluster: bool = False
    metadata_only: bool = False
    wait_for_cache: bool = False
    version: Path | None = None
    note: str = ""


#: who deletes: the topology now; the object's owner's controller (a deleted worker's bootstrap and
#: infrastructure); or the topology once nothing uses it any more (a MachineDeployment template replaced by
#: rotation stays while a MachineSet still references it)
DeleteWhen = Literal["now", "with_owner", "when_unused"]


@dataclass(frozen=True)
class Delete:
    """Delete ``obj`` (``when``: see :data:`DeleteWhen`; ``owner`` is the holder for the last two). Answer: None."""

    obj: Obj
    when: DeleteWhen = "now"
    owner: Obj | None = None
    note: str = ""


Step = Diff | LiveTopologyNames | LiveLeftovers | EnsureShim | Create | Update | Delete
Steps = Generator[Step, Any, None]


def drive(steps: Steps, answer: Callable[[Step], Any]) -> None:
    """Run ``steps`` to the end, answering each with ``answer`` (a synchronous driver).

    An exception ``answer`` raises is thrown into the generator, so the step that caused it adds its
    context; it then comes out of this call.
    """
    try:
        step = next(steps)
        while True:
            try:
                reply = answer(step)
            except TopologyError as err:
                step = steps.throw(err)
            else:
                step = steps.send(reply)
    except StopIteration:
        return


# --- intents and compatibility ------------------------------------------------------------------------------


def infrastructure_cluster_ignore_paths(desired: Obj) -> Paths:
    """An empty desired control plane endpoint must not clobber the one the provider filled in."""
    ignore = []
    contract_ = contract.InfrastructureCluster
    if dig(desired, *contract_.CONTROL_PLANE_ENDPOINT_HOST) == "":
        ignore.append(contract_.CONTROL_PLANE_ENDPOINT_HOST)
    if dig(desired, *contract_.CONTROL_PLANE_ENDPOINT_PORT) == 0:
        ignore.append(contract_.CONTROL_PLANE_ENDPOINT_PORT)
    return tuple(ignore)


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


# --- the walk ---------------------------------------------------------------------------------------------


def reconcile_steps(computation: Computation, rng: random.Random) -> Steps:
    """Every step a reconcile of ``computation`` takes, in upstream's order (module doc)."""
    return _Reconcile(computation, rng).run()


class _Reconcile:
    def __init__(self, computation: Computation, rng: random.Random) -> None:
        self.computation = computation
        self.current = computation.current
        self.desired = computation.desired
        self.upgrades = computation.upgrades
        self.rng = rng

    def run(self) -> Steps:
        shim = yield from self.cluster_shim()
        infrastructure_cluster = self.desired.infrastructure_cluster
        if shim is not None:
            infrastructure_cluster = with_shim_owner(infrastructure_cluster, shim)
        yield from self.referenced_object(
            self.current.infrastructure_cluster,
            infrastructure_cluster,
            ignore=infrastructure_cluster_ignore_paths(infrastructure_cluster),
        )
        new_control_plane_template = yield from self.control_plane(shim)
        # the Cluster's refs to a new control plane: when that write fails, the control plane goes with the shim
        # (garbage collection), and the machine template made for it here (the Cluster owns it) is deleted now
        yield from self.holder_write(self.cluster(), new_control_plane_template)
        for kind in (MACHINE_DEPLOYMENT, MACHINE_POOL):
            yield from self.workers(kind)

    # --- the Cluster shim (spec §3.2) ------------------------------------------------------------------

    def cluster_shim(self) -> Generator[Step, Any, Obj | None]:
        """Ensure the shim while a top-level object is about to be created; delete it once it has served.

        Returns the shim the new objects get as an extra owner, or None.
        """
        current = self.current
        if needs_shim(current.infrastructure_cluster, current.control_plane):
            if current.cluster_shim is not None:
                return current.cluster_shim
            stored: Obj = yield EnsureShim(shim_secret(current.cluster))
            return stored
        if current.cluster_shim is not None and shim_is_done(
            current.cluster, current.infrastructure_cluster, current.control_plane
        ):
            yield Delete(current.cluster_shim, note="the Cluster owns its InfrastructureCluster and ControlPlane now")
        return None

    # --- building blocks --------------------------------------------------------------------------------

    def update_if_changed(
        self,
        current: Obj,
        desired: Obj,
        *,
        ignore: Paths = (),
        cluster: bool = False,
        wait_for_cache: bool = False,
        version: Path | None = None,
    ) -> Steps:
        diff: DiffResult = yield Diff(current, desired, ignore, cluster)
        if diff.has_changes:
            yield Update(
                current, desired, diff, ignore, cluster=cluster, wait_for_cache=wait_for_cache, version=version
            )

    def referenced_object(
        self,
        current: Obj | None,
        desired: Obj,
        *,
        ignore: Paths = (),
        version: Path | None = None,
        wait_for_cache: bool = False,
    ) -> Steps:
        """InfrastructureCluster, ControlPlane, MachinePool objects: create, or update in place (spec §3.5)."""
        if current is None:
            yield Create(desired, ignore=ignore, wait_for_cache=wait_for_cache)
            return
        check_compatible(current, desired, STRICT)
        yield from self.update_if_changed(current, desired, ignore=ignore, version=version)

    def rotated_template(
        self, current: Obj | None, desired: Obj, prefix: str, check: Compatibility
    ) -> Generator[Step, Any, tuple[Obj, Obj | None]]:
        """A template the holder references: create it, update its metadata, or rotate it.

        Returns the template the holder should reference and the one it replaces, if any.
        """
        if current is None:
            yield Create(desired)
            return desired, None
        check_compatible(current, desired, check)
        diff: DiffResult = yield Diff(current, desired)
        # A template of another group or kind is a new object: it needs a new template, never a patch.
        same_kind = (key_of(current).group, key_of(current).kind) == (key_of(desired).group, key_of(desired).kind)
        if same_kind and not diff.has_changes:
            return desired, None
        if same_kind and not diff.has_spec_changes:
            yield Update(current, desired, diff, metadata_only=True, note="metadata changes")
            return desired, None
        rotated = copy.deepcopy(desired)
        rotated["metadata"]["name"] = names.simple_name(prefix, self.rng)
        yield Create(rotated, replaces=current, note=f"template rotation: replaces {describe(current)}")
        return rotated, current

    def health_check(self, current: Obj | None, desired: Obj | None) -> Steps:
        if desired is None:
            if current is not None:
                yield Delete(current)
            return
        if current is None:
            yield Create(desired)
        else:
            yield from self.update_if_changed(current, desired)

    # --- stages -------------------------------------------------------------------------------------------

    def control_plane(self, shim: Obj | None) -> Generator[Step, Any, list[Obj]]:
        """The control plane, its machine template and health check; returns the machine template made for a new
        control plane (nothing but it references the template until the Cluster does)."""
        current, desired = self.current, self.desired
        yield from self.health_check(
            current.control_plane_machine_health_check, desired.control_plane_machine_health_check
        )
        if self.upgrades.control_plane.is_pending_upgrade:
            return []
        cp = desired.control_plane if shim is None else with_shim_owner(desired.control_plane, shim)
        replaced = None
        made: list[Obj] = []
        template = desired.control_plane_infrastructure_machine_template
        if template is not None:
            current_template = current.control_plane_infrastructure_machine_template
            if current_template is None and current.control_plane is None:
                # a machine template of this Cluster that is not a worker's, made by an attempt that did not live to
                # point the Cluster at its control plane (that control plane goes with the shim)
                yield from self.leftovers(
                    LiveLeftovers(
                        template,
                        {c.LABEL_CLUSTER_NAME: name_of(desired.cluster), c.LABEL_TOPOLOGY_OWNED: ""},
                        without=(MACHINE_DEPLOYMENT.name_label, MACHINE_POOL.name_label),
                        unless_cluster_has=CONTROL_PLANE_REF,
                    )
                )
            template, replaced = yield from self.rotated_template(
                current_template,
                template,
                names.control_plane_machine_template_prefix(name_of(desired.cluster)),
                SAME_GROUP_KIND_NAMESPACE,
            )
            if current_template is None or replaced is not None:
                made.append(template)  # created just now: only the control plane will reference it
            cp = copy.deepcopy(cp)
            cp_contract = self.computation.blueprint.control_plane_contract
            path = cp_contract.MACHINE_TEMPLATE_INFRASTRUCTURE_REF
            set_path(cp, path, cp_contract.infrastructure_ref(desired_ref(dig(cp, *path), template)))
        yield from self.holder_write(
            self.referenced_object(current.control_plane, cp, version=CONTROL_PLANE_VERSION), made
        )
        if replaced is not None:
            yield Delete(replaced, note="replaced by template rotation")
        return made if current.control_plane is None else []

    def cluster(self) -> Steps:
        yield from self.update_if_changed(self.current.cluster, self.desired.cluster, cluster=True, wait_for_cache=True)

    def workers(self, kind: WorkerKind) -> Steps:
        current = self.current.workers(kind)
        desired = self.desired.workers(kind)
        upgrades = self.upgrades.workers(kind)
        to_create = [name for name in desired if name not in current and name not in upgrades.pending_create]
        if to_create:
            live: set[str] = yield LiveTopologyNames(kind)
            for topology_name in to_create:
                if topology_name not in live:  # else only a stale cache made it look missing
                    yield from self.create_worker(kind, desired[topology_name])
        for topology_name, worker in desired.items():
            if topology_name in current:
                state = current[topology_name]
                try:
                    yield from self.update_worker(
                        kind, state, worker, name_of(state.object) in upgrades.pending_upgrade
                    )
                except TopologyError as err:
                    raise err.wrap(f"failed to reconcile {describe(state.object)}") from err
        for topology_name, state in current.items():
            if topology_name not in desired:
                yield from self.delete_worker(kind, state)

    def create_worker(self, kind: WorkerKind, worker: DesiredWorker) -> Steps:
        """Infrastructure, bootstrap, then the worker; what a failed create made first is deleted again.

        Upstream v1.6 leaves the bootstrap and infrastructure objects of a failed MachinePool create
        behind, a new pair on every retry (spec §3.8); we clean up, as upstream later does for
        MachineDeployments (docs/upstream-differences.md).
        """
        # no worker of this topology name exists on the API server (LiveTopologyNames): whatever carries its labels
        # was made by an attempt that did not live to create the worker
        labels = {
            c.LABEL_CLUSTER_NAME: name_of(self.current.cluster),
            c.LABEL_TOPOLOGY_OWNED: "",
            kind.name_label: worker.topology.name,
        }
        for made_first in (worker.infrastructure, worker.bootstrap):
            yield from self.leftovers(LiveLeftovers(made_first, labels))
        created: list[Obj] = []
        try:
            created.append((yield Create(worker.infrastructure)))
            created.append((yield Create(worker.bootstrap)))
        except TopologyError as err:
            yield from self.clean_up(created)
            raise err.wrap(f"failed to create {kind.kind}") from err
        yield from self.holder_write(self.create_one(Create(worker.object, wait_for_cache=True)), created)
        if worker.machine_health_check is not None:
            yield Create(worker.machine_health_check)

    @staticmethod
    def create_one(step: Create) -> Steps:
        yield step

    def holder_write(self, steps: Steps, made_for_it: list[Obj]) -> Steps:
        """``steps`` — the write of an object that references ``made_for_it``, just created — and, when it fails,
        their clean-up, so a failed write leaks nothing (its retry makes new ones under new names). An object that
        may exist (:class:`MayExist`) keeps what it references: the next reconcile finds it."""
        if not made_for_it:
            yield from steps
            return
        try:
            yield from steps
        except MayExist:
            raise
        except TopologyError:
            yield from self.clean_up(made_for_it)
            raise

    def leftovers(self, step: LiveLeftovers) -> Steps:
        """Delete what ``step`` finds; best effort, as a failed create's clean-up (the Cluster still owns it)."""
        found: list[Obj] | None = yield step
        for obj in found or []:
            with contextlib.suppress(TopologyError):
                yield Delete(obj, note="left by an earlier attempt that did not create what references it")

    def clean_up(self, created: list[Obj]) -> Steps:
        """Best effort: a failed delete is left to garbage collection, which takes it with the Cluster."""
        for obj in reversed(created):
            with contextlib.suppress(TopologyError):
                yield Delete(obj, note="cleanup after a failed create")

    def update_worker(self, kind: WorkerKind, state: WorkerState, worker: DesiredWorker, pending: bool) -> Steps:
        if kind.has_machine_health_check:
            yield from self.health_check(state.machine_health_check, worker.machine_health_check)
        if pending:
            return
        prefix = names.worker_object_prefix(name_of(self.current.cluster), worker.topology.name)
        if not kind.uses_templates:
            yield from self.update_machine_pool(state, worker, prefix)
            return
        # MachineDeployments: templates rotate on a spec change, and the MachineDeployment switches to them.
        infrastructure, old_infrastructure = yield from self.rotated_template(
            state.infrastructure, worker.infrastructure, prefix, SAME_GROUP_KIND_NAMESPACE
        )
        bootstrap, old_bootstrap = yield from self.rotated_template(
            state.bootstrap, worker.bootstrap, prefix, SAME_NAMESPACE
        )
        obj = copy.deepcopy(worker.object)
        machine_spec = obj["spec"]["template"]["spec"]
        machine_spec["infrastructureRef"] = desired_ref(machine_spec["infrastructureRef"], infrastructure)
        machine_spec["bootstrap"]["configRef"] = desired_ref(machine_spec["bootstrap"]["configRef"], bootstrap)
        rotated = [new for new, old in ((infrastructure, old_infrastructure), (bootstrap, old_bootstrap)) if old]
        yield from self.holder_write(
            self.update_if_changed(state.object, obj, wait_for_cache=True, version=WORKER_VERSION), rotated
        )
        for old in (old_infrastructure, old_bootstrap):
            if old is not None:
                yield Delete(
                    old,
                    when="when_unused",
                    owner=state.object,
                    note="replaced by template rotation; deleted once no MachineSet uses it",
                )

    def update_machine_pool(self, state: WorkerState, worker: DesiredWorker, prefix: str) -> Steps:
        """A MachinePool's infrastructure pool is changed in place; its bootstrap config is rotated on a spec change.

        The infrastructure pool is the one object that holds the pool's instances, and its provider replaces the
        instances a template change outdates, at its own surge and unavailability. The bootstrap config is an object
        stamped out of the class's template: patched in place, as upstream does, its new data would reach only
        instances created later, because the signal pool providers honour is a new ``bootstrap.configRef`` name
        (Cluster API #10496, #8858; the contract upstream's PR #13280 writes down). So a bootstrap spec change makes
        a new config under a fresh name, the MachinePool is switched to it (its controller follows the new config's
        data Secret, and the infrastructure provider rolls the instances built from the old one), and the old config
        is deleted. Metadata-only changes stay in place.
        """
        yield from self.referenced_object(state.infrastructure, worker.infrastructure)
        bootstrap, old_bootstrap = yield from self.rotated_template(
            state.bootstrap, worker.bootstrap, prefix, SAME_NAMESPACE
        )
        obj = worker.object
        if old_bootstrap is not None:
            obj = copy.deepcopy(obj)
            spec = obj["spec"]["template"]["spec"]
            spec["bootstrap"]["configRef"] = desired_ref(spec["bootstrap"]["configRef"], bootstrap)
        yield from self.holder_write(
            self.update_if_changed(state.object, obj, wait_for_cache=True, version=WORKER_VERSION),
            [bootstrap] if old_bootstrap is not None else [],
        )
        if old_bootstrap is not None:
            # at once, where a MachineDeployment's replaced template waits until no MachineSet uses it: a MachinePool
            # has no MachineSets, and nothing but the pool referenced its config
            yield Delete(old_bootstrap, note="replaced by rotation: the MachinePool references its successor")

    def delete_worker(self, kind: WorkerKind, state: WorkerState) -> Steps:
        if state.machine_health_check is not None:
            yield Delete(state.machine_health_check)
        yield Delete(state.object)
        cascade = f"deleted with {describe(state.object)}"
        yield Delete(state.infrastructure, when="with_owner", owner=state.object, note=cascade)
        yield Delete(state.bootstrap, when="with_owner", owner=state.object, note=cascade)
