"""Cluster admission (spec §6.1): what the Cluster webhooks default and refuse, on create and update.

:func:`default_cluster` is the mutating webhook: it returns a defaulted copy with the Cluster's
namespace on its infrastructure and control plane refs (and on topology MachineHealthCheck
remediation templates, as upstream does since v1.7), every Duration in Go's form (``5m`` → ``5m0s``,
as upstream's typed webhook writes it back), a ``v`` in front of
``spec.topology.version``, and — when the ClusterClass exists and is reconciled — the variables and
every MachineDeployment/MachinePool ``variables.overrides`` defaulted against its definitions.

:func:`validate_cluster` is the validating webhook, run on the defaulted Cluster (``old`` is the
stored Cluster on update). Errors are field errors with upstream's paths and messages; warnings
(a ClusterClass that does not exist or is not reconciled yet, a skipped version check, MachinePool
Nodes that could not be seen) are kept apart. In upstream order:

- the name is a valid label value; the refs are in the Cluster's namespace; CIDR blocks parse;
- with a topology: the ``ClusterTopology`` gate; a class; a ``KubeSemver`` version; metadata
  syntax of the control plane and every worker topology; the upgrade-concurrency annotation; then the
  ClusterClass: missing or not reconciled is a warning, and only a found, reconciled class enables
  the class-aware checks (worker classes exist, MachineHealthChecks, variables against their
  schemas);
- on update: a topology may not be removed, or a class set on a Cluster that had none (unless
  ``unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check``); the version may not
  decrease or jump two minors, and a one-minor bump waits until the control plane,
  MachineDeployments and MachinePools all run the old version (the v1.7+ guard, skipped with
  ``unsafe.topology.cluster.x-k8s.io/disable-update-version-check``); a class change must be
  compatible with the old class (spec §6.4).

Where we are stricter than upstream (each listed in ``docs/upstream-differences.md``): negative
replicas in the topology are refused (spec §6.1.3); worker topology names are checked (non-empty,
label value, unique) even while the ClusterClass is missing; MachinePools whose Nodes cannot be seen
do not block a minor bump but produce a warning, and kubelet versions are compared ignoring build
metadata (DECISIONS.md). Nothing here raises on malformed input: wrong types are field errors.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Mapping
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.api import constants as c
from clusterclass.api.durations import DURATION_PATHS, normalize_durations
from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.api.views import Worker
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WORKER_KINDS, WorkerKind
from clusterclass.errors import ClusterClassError
from clusterclass.fielderrors import FieldError
from clusterclass.schema.formats import is_cidr
from clusterclass.topology import versions
from clusterclass.topology.check.compatibility import cluster_classes_compatible
from clusterclass.topology.check.gates import Gates
from clusterclass.topology.check.healthchecks import machine_health_check_class_errors
from clusterclass.topology.check.machinepool import replicas_errors
from clusterclass.topology.check.result import Result
from clusterclass.topology.check.syntax import go_parse_int, is_kube_semver, label_value_errors, metadata_errors
from clusterclass.topology.current import WorkerState
from clusterclass.topology.health import is_zero
from clusterclass.topology.reader import NodeReader, Reader
from clusterclass.topology.upgrade import worker_is_upgrading
from clusterclass.topology.variables import (
    default_cluster_variables,
    default_override_variables,
    validate_cluster_variables,
    validate_override_variables,
)
from clusterclass.topology.variables.definitions import Definitions

ANNOTATION_UNSAFE_UPDATE_CLASS_NAME = "unsafe.topology.cluster.x-k8s.io/disable-update-class-name-check"
ANNOTATION_UNSAFE_UPDATE_VERSION = "unsafe.topology.cluster.x-k8s.io/disable-update-version-check"
CONDITION_VARIABLES_RECONCILED = "VariablesReconciled"

TOPOLOGY = "spec.topology"
CLASS = "spec.topology.class"
VERSION = "spec.topology.version"


IsReconciled = Callable[[Obj], bool]
DEFAULT_GATES = Gates()


def _namespace(obj: Mapping[str, Any]) -> str:
    value = dig(obj, "metadata", "namespace")
    return value if isinstance(value, str) else ""


def _annotations(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    value = dig(obj, "metadata", "annotations")
    return value if isinstance(value, dict) else {}


def _topology_of(obj: Mapping[str, Any] | None) -> Any:
    return dig(obj, "spec", "topology") if obj is not None else None


# --- the ClusterClass ----------------------------------------------------------------------------


def always_reconciled(cc: Obj) -> bool:
    """For offline checks: a ClusterClass given as input counts as reconciled (no controller ran)."""
    return True


def cluster_class_is_reconciled(cc: Obj) -> bool:
    """Whether the ClusterClass controller has caught up with ``cc`` (spec §6.1.1).

    ``metadata.generation`` equals ``status.observedGeneration`` (both 0 when absent) and the
    ``VariablesReconciled`` condition is present and not ``False``.
    """
    generation = dig(cc, "metadata", "generation")
    observed = dig(cc, "status", "observedGeneration")
    if (generation or 0) != (observed or 0):
        return False
    conditions = dig(cc, "status", "conditions")
    if not isinstance(conditions, list):
        return False
    for condition in conditions:
        if isinstance(condition, dict) and condition.get("type") == CONDITION_VARIABLES_RECONCILED:
            return condition.get("status") != "False"
    return False


def _get_cluster_class(reader: Reader, namespace: str, name: str) -> tuple[Obj | None, str | None]:
    """The ClusterClass, or None when it does not exist; the second value is a read error."""
    try:
        cc = reader.get(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS, namespace, name)
    except Exception as err:  # a reader's failure is reported, never raised through admission
        return None, str(err) or type(err).__name__
    return (cc if isinstance(cc, dict) else None), None


def _not_found(name: str) -> str:
    return f"clusterclasses.cluster.x-k8s.io {fe.quote(name)} not found"


# --- defaulting ----------------------------------------------------------------------------------


def _default_ref_namespace(ref: Any, namespace: str) -> None:
    if isinstance(ref, dict) and ref.get("namespace") in (None, ""):
        ref["namespace"] = namespace


def worker_entries(topology: Mapping[str, Any], kind: WorkerKind) -> list[tuple[int, dict[str, Any]]]:
    """The well-formed entries of one worker list of a topology, with their indices."""
    workers = topology.get("workers")
    entries = workers.get(kind.list_key) if isinstance(workers, dict) else None
    if not isinstance(entries, list):
        return []
    return [(i, entry) for i, entry in enumerate(entries) if isinstance(entry, dict)]


def _worker_path(kind: WorkerKind, index: int) -> str:
    return f"{TOPOLOGY}.workers.{kind.list_key}[{index}]"


def with_v1beta1_empty_metadata(cluster: Obj) -> Obj:
    """``cluster`` as upstream v1.6's typed Cluster webhook answers it beyond its defaults: Go writes a struct field
    tagged ``omitempty`` even when it is empty, so its round trip adds ``controlPlane: {metadata: {}}`` and a
    ``metadata: {}`` on every MachineDeployment and MachinePool topology. Only a management cluster serving Clusters
    in v1beta1 alone runs that webhook (v1.14's v1beta2 types omit empty structs); clusterclass serving it there
    answers the same, so a Cluster stored by either reads the same. A copy; malformed parts are left alone."""
    result: Obj = copy.deepcopy(cluster)
    topology = dig(result, "spec", "topology")
    if not isinstance(topology, dict):
        return result
    control_plane = topology.setdefault("controlPlane", {})
    if isinstance(control_plane, dict) and control_plane.get("metadata") is None:
        control_plane["metadata"] = {}
    for kind in WORKER_KINDS:
        for _, entry in worker_entries(topology, kind):
            if entry.get("metadata") is None:
                entry["metadata"] = {}
    return result


def default_cluster(cluster: Obj, *, reader: Reader, is_reconciled: IsReconciled = cluster_class_is_reconciled) -> Obj:
    """A defaulted deep copy of ``cluster`` (spec §6.1.1); never raises on malformed input.

    Variables are defaulted only when the ClusterClass is found in ``reader`` and ``is_reconciled``
    says its definitions are current; otherwise (as upstream) they are left for the controller.
    """
    try:
        result: Obj = copy.deepcopy(cluster)
    except RecursionError:
        return cluster  # too deeply nested to copy: validation reports what is wrong with it
    if not isinstance(result, dict):
        return result
    namespace = _namespace(result)
    spec = result.get("spec")
    if not isinstance(spec, dict):
        return result
    _default_ref_namespace(spec.get("infrastructureRef"), namespace)
    _default_ref_namespace(spec.get("controlPlaneRef"), namespace)
    topology = spec.get("topology")
    if not isinstance(topology, dict):
        return result
    normalize_durations(result, DURATION_PATHS[c.KIND_CLUSTER])  # as upstream's typed round trip writes them

    version = topology.get("version")
    if isinstance(version, str) and not version.startswith("v"):
        topology["version"] = "v" + version
    control_plane = topology.get("controlPlane")
    if isinstance(control_plane, dict):
        _default_remediation_namespace(control_plane, namespace)
    for kind in WORKER_KINDS:
        if kind.has_machine_health_check:
            for _, entry in worker_entries(topology, kind):
                _default_remediation_namespace(entry, namespace)

    class_name = topology.get("class")
    if not isinstance(class_name, str) or not class_name:
        return result
    cc, _ = _get_cluster_class(reader, namespace, class_name)
    if cc is None or not is_reconciled(cc):
        return result

    default_topology_variables(topology, cc)
    return result


def default_topology_variables(topology: dict[str, Any], cluster_class: Definitions) -> None:
    """Default, in place, a topology's variables and every worker's overrides (spec §5.9).

    The one place both admission and the reconcile (spec §2.1 step 7) default variables.
    """
    variables = topology.get("variables")
    if variables is None or isinstance(variables, list):
        defaulted = default_cluster_variables(variables, cluster_class)
        if defaulted or variables is not None:
            topology["variables"] = defaulted
    for kind in WORKER_KINDS:
        for index, entry in worker_entries(topology, kind):
            holder = entry.get("variables")
            overrides = holder.get("overrides") if isinstance(holder, dict) else None
            if isinstance(holder, dict) and isinstance(overrides, list) and overrides:
                field = f"{_worker_path(kind, index)}.variables.overrides"
                holder["overrides"] = default_override_variables(overrides, cluster_class, field=field)


def topology_variable_errors(
    topology: Mapping[str, Any],
    cluster_class: Definitions,
    *,
    old_topology: Mapping[str, Any] | None = None,
    workers: dict[WorkerKind, list[tuple[int, dict[str, Any]]]] | None = None,
) -> list[FieldError]:
    """Every error of a topology's variables and overrides against ``cluster_class`` (spec §5.9).

    The one place both admission and the reconcile validate variables; ``old_topology`` lets CEL
    transition rules compare with the stored values.
    """
    old_topology = old_topology or {}
    if workers is None:
        workers = {kind: worker_entries(topology, kind) for kind in WORKER_KINDS}
    old_variables = old_topology.get("variables")
    errors = validate_cluster_variables(
        topology.get("variables"),
        cluster_class,
        old_values=old_variables if isinstance(old_variables, list) else None,
    )
    for kind in WORKER_KINDS:
        old_overrides = _overrides_by_name(old_topology, kind)
        for index, entry in workers[kind]:
            path = fe.child(_worker_path(kind, index), "variables")
            holder = entry.get("variables")
            if holder is None:
                continue
            if not isinstance(holder, dict):
                errors.append(fe.type_invalid(path, holder, "must be an object"))
                continue
            overrides = holder.get("overrides")
            if overrides is None or overrides == []:
                continue
            name = entry.get("name")
            errors.extend(
                validate_override_variables(
                    overrides,
                    cluster_class,
                    field=fe.child(path, "overrides"),
                    old_values=old_overrides.get(name) if isinstance(name, str) else None,
                )
            )
    return errors


def _default_remediation_namespace(holder: Mapping[str, Any], namespace: str) -> None:
    mhc = holder.get("machineHealthCheck")
    if isinstance(mhc, dict):
        _default_ref_namespace(mhc.get("remediationTemplate"), namespace)


# --- validation ----------------------------------------------------------------------------------


def validate_cluster_delete(cluster: Obj) -> Result:
    """Deleting a Cluster is never refused by admission (spec §6.1.2)."""
    del cluster
    return Result()


def validate_cluster(
    cluster: Obj,
    old: Obj | None = None,
    *,
    reader: Reader,
    nodes: NodeReader | None = None,
    gates: Gates = DEFAULT_GATES,
    is_reconciled: IsReconciled = cluster_class_is_reconciled,
) -> Result:
    """Every Cluster webhook rule (spec §6.1.2-§6.1.4) for a create (``old`` None) or an update.

    ``reader`` sees the management cluster (ClusterClasses, the control plane, MachineDeployments,
    Machines, MachinePools); ``nodes`` the workload cluster's Nodes, for the MachinePool part of the
    version-bump guard (None: unknown, which warns instead of blocking).
    """
    result = Result()
    if not isinstance(cluster, dict):
        result.errors.append(fe.type_invalid("", cluster, "must be an object"))
        return result
    stored: Obj | None = None
    if old is not None:
        stored = old if isinstance(old, dict) else {}
    _ClusterCheck(cluster, stored, reader, nodes, gates, is_reconciled, result).run()
    return result


class _ClusterCheck:
    """One validation of one Cluster: the inputs and the result being built."""

    def __init__(
        self,
        cluster: Obj,
        old: Obj | None,
        reader: Reader,
        nodes: NodeReader | None,
        gates: Gates,
        is_reconciled: IsReconciled,
        result: Result,
    ) -> None:
        self.cluster = cluster
        self.old = old
        self.reader = reader
        self.nodes = nodes
        self.gates = gates
        self.is_reconciled = is_reconciled
        self.errors = result.errors
        self.warnings = result.warnings
        self.namespace = _namespace(cluster)
        name = dig(cluster, "metadata", "name")
        self.name = name if isinstance(name, str) else ""
        self.annotations = _annotations(cluster)

    def add(self, error: FieldError) -> None:
        if error not in self.errors:
            self.errors.append(error)

    def run(self) -> None:
        self.check_name()
        spec = self.cluster.get("spec")
        if spec is not None and not isinstance(spec, dict):
            self.add(fe.type_invalid("spec", spec, "must be an object"))
        spec = spec if isinstance(spec, dict) else {}
        for key in ("infrastructureRef", "controlPlaneRef"):
            self.check_ref_namespace(spec.get(key), f"spec.{key}")
        self.check_cluster_network(spec.get("clusterNetwork"))

        topology = spec.get("topology")
        if topology is not None:
            if isinstance(topology, dict):
                self.check_topology(topology)
            else:
                self.add(fe.type_invalid(TOPOLOGY, topology, "must be an object"))
        if self.old is not None and _topology_of(self.old) is not None and topology is None:
            self.add(fe.forbidden(TOPOLOGY, "cannot be removed from an existing Cluster"))

    # --- the Cluster itself ------------------------------------------------------------------------

    def check_name(self) -> None:
        name = dig(self.cluster, "metadata", "name")
        if name is None:
            return
        if not isinstance(name, str):
            self.add(fe.type_invalid("metadata.name", name, "must be a string"))
            return
        for message in label_value_errors(name):
            self.add(fe.invalid("metadata.name", name, f"must be a valid label value {message}"))

    def check_ref_namespace(self, ref: Any, path: str) -> None:
        if ref is None:
            return
        if not isinstance(ref, dict):
            self.add(fe.type_invalid(path, ref, "must be an object"))
            return
        namespace = ref.get("namespace")
        namespace = "" if namespace is None else namespace
        if namespace != self.namespace:
            self.add(fe.invalid(fe.child(path, "namespace"), namespace, "must match metadata.namespace"))

    def check_cluster_network(self, network: Any) -> None:
        path = "spec.clusterNetwork"
        if network is None:
            return
        if not isinstance(network, dict):
            self.add(fe.type_invalid(path, network, "must be an object"))
            return
        for part in ("pods", "services"):
            block = network.get(part)
            block_path = fe.child(path, part)
            if block is None:
                continue
            if not isinstance(block, dict):
                self.add(fe.type_invalid(block_path, block, "must be an object"))
                continue
            cidrs = block.get("cidrBlocks")
            cidrs_path = fe.child(block_path, "cidrBlocks")
            if cidrs is None:
                continue
            if not isinstance(cidrs, list):
                self.add(fe.type_invalid(cidrs_path, cidrs, "must be a list"))
                continue
            for i, cidr in enumerate(cidrs):
                if not isinstance(cidr, str) or not is_cidr(cidr):
                    self.add(fe.invalid(fe.index(cidrs_path, i), cidr, f"invalid CIDR address: {cidr}"))

    # --- the topology ------------------------------------------------------------------------------

    def check_topology(self, topology: dict[str, Any]) -> None:
        if not self.gates.cluster_topology:
            self.add(fe.forbidden(TOPOLOGY, "can be set only if the ClusterTopology feature flag is enabled"))
            return
        class_name = topology.get("class")
        if class_name is None or class_name == "":
            self.add(fe.required(CLASS, "class cannot be empty"))
            return
        if not isinstance(class_name, str):
            self.add(fe.type_invalid(CLASS, class_name, "must be a string"))
            return

        version = topology.get("version")
        if version is None:
            self.add(fe.required(VERSION))
        elif not is_kube_semver(version):
            self.add(fe.invalid(VERSION, version, "version must be a valid semantic version"))

        workers = self.worker_entries(topology)
        control_plane = topology.get("controlPlane")
        if control_plane is not None and not isinstance(control_plane, dict):
            self.add(fe.type_invalid(f"{TOPOLOGY}.controlPlane", control_plane, "must be an object"))
        control_plane = control_plane if isinstance(control_plane, dict) else {}
        self.errors.extend(metadata_errors(control_plane.get("metadata"), f"{TOPOLOGY}.controlPlane.metadata"))
        for kind in WORKER_KINDS:
            for index, entry in workers[kind]:
                self.errors.extend(metadata_errors(entry.get("metadata"), f"{_worker_path(kind, index)}.metadata"))
        self.errors.extend(replicas_errors(control_plane.get("replicas"), f"{TOPOLOGY}.controlPlane.replicas"))
        for kind in WORKER_KINDS:
            for index, entry in workers[kind]:
                self.errors.extend(replicas_errors(entry.get("replicas"), f"{_worker_path(kind, index)}.replicas"))
        self.check_upgrade_concurrency()

        cc, read_error = _get_cluster_class(self.reader, self.namespace, class_name)
        if read_error is not None:
            self.add(fe.internal(CLASS, read_error))
            return
        reconciled = cc is not None and self.is_reconciled(cc)
        ref = f"{self.namespace}/{class_name}"
        if cc is None:
            self.warnings.append(
                f"Cluster refers to ClusterClass {ref} in the topology but it does not exist. "
                "Cluster topology has not been fully validated. "
                "The ClusterClass must be created to reconcile the Cluster"
            )
        elif not reconciled:
            self.warnings.append(
                f"Cluster refers to ClusterClass {ref} but this ClusterClass hasn't yet been reconciled. "
                "Cluster topology has not been fully validated."
            )
        for kind in WORKER_KINDS:
            self.errors.extend(worker_topology_errors(kind, workers[kind], cc if reconciled else None))
        if cc is not None and reconciled:
            self.errors.extend(_machine_health_check_errors(control_plane, workers, cc, self.namespace))
            self.errors.extend(self.variable_errors(topology, workers, cc))

        if self.old is not None:
            self.check_update(topology, class_name, cc)

    def worker_entries(self, topology: Mapping[str, Any]) -> dict[WorkerKind, list[tuple[int, dict[str, Any]]]]:
        """Each kind's well-formed worker topologies; malformed parts are reported once, here."""
        found: dict[WorkerKind, list[tuple[int, dict[str, Any]]]] = {kind: [] for kind in WORKER_KINDS}
        workers = topology.get("workers")
        if workers is None:
            return found
        if not isinstance(workers, dict):
            self.add(fe.type_invalid(f"{TOPOLOGY}.workers", workers, "must be an object"))
            return found
        for kind in WORKER_KINDS:
            entries = workers.get(kind.list_key)
            path = f"{TOPOLOGY}.workers.{kind.list_key}"
            if entries is None:
                continue
            if not isinstance(entries, list):
                self.add(fe.type_invalid(path, entries, "must be a list"))
                continue
            for index, entry in enumerate(entries):
                if isinstance(entry, dict):
                    found[kind].append((index, entry))
                else:
                    self.add(fe.type_invalid(fe.index(path, index), entry, "must be an object"))
        return found

    def check_upgrade_concurrency(self) -> None:
        key = c.ANNOTATION_UPGRADE_CONCURRENCY
        if key not in self.annotations:
            return
        value = self.annotations[key]
        path = fe.child("metadata.annotations", key)
        try:
            concurrency = go_parse_int(value, 64, "Atoi")
        except ValueError as err:
            self.add(fe.invalid(path, value, f"could not parse the value of the annotation: {err}"))
            return
        if concurrency < 1:
            self.add(fe.invalid(path, value, "value cannot be less than 1"))

    def variable_errors(
        self,
        topology: Mapping[str, Any],
        workers: dict[WorkerKind, list[tuple[int, dict[str, Any]]]],
        cc: Obj,
    ) -> list[FieldError]:
        old_topology = _topology_of(self.old)
        return topology_variable_errors(
            topology, cc, old_topology=old_topology if isinstance(old_topology, dict) else None, workers=workers
        )

    # --- updates -----------------------------------------------------------------------------------

    def check_update(self, topology: Mapping[str, Any], class_name: str, cc: Obj | None) -> None:
        assert self.old is not None
        if cc is None:
            self.add(fe.internal(CLASS, _not_found(class_name)))
            return
        old_topology = _topology_of(self.old)
        old_class = old_topology.get("class") if isinstance(old_topology, dict) else None
        if not isinstance(old_topology, dict) or not isinstance(old_class, str) or not old_class:
            if ANNOTATION_UNSAFE_UPDATE_CLASS_NAME in self.annotations:
                return
            self.add(fe.forbidden(CLASS, "class cannot be set on an existing Cluster"))
            return

        version = topology.get("version")
        new_version = versions.parse(version) if isinstance(version, str) else None
        if new_version is None and version is not None:
            self.add(fe.invalid(VERSION, version, "version must be a valid semantic version"))
        old_text = old_topology.get("version")
        old_version = versions.parse(old_text) if isinstance(old_text, str) else None
        if old_version is None:
            self.add(fe.invalid(VERSION, old_text, "old version must be a valid semantic version"))

        if ANNOTATION_UNSAFE_UPDATE_VERSION in self.annotations:
            key = fe.quote(ANNOTATION_UNSAFE_UPDATE_VERSION)
            self.warnings.append(f"Skipping version validation for Cluster because annotation {key} is set.")
        elif new_version is not None and old_version is not None and isinstance(version, str):
            error = self.version_change_error(version, new_version, old_version)
            if error is not None:
                self.add(error)

        if old_class != class_name:
            old_cc, read_error = _get_cluster_class(self.reader, self.namespace, old_class)
            problem = read_error
            if problem is None and old_cc is None:
                problem = _not_found(old_class)
            if problem is None and old_cc is not None and not self.is_reconciled(old_cc):
                problem = "ClusterClass is not successfully reconciled"
            if problem is not None or old_cc is None:
                self.add(
                    fe.forbidden(
                        CLASS,
                        f"valid ClusterClass with name {fe.quote(old_class)} could not be retrieved, change from class "
                        f"{fe.quote(old_class)} to class {fe.quote(class_name)} cannot be validated. Error: {problem}",
                    )
                )
                return
            self.errors.extend(cluster_classes_compatible(old_cc, cc))

    def version_change_error(self, text: str, new: versions.Version, old: versions.Version) -> FieldError | None:
        """Decrease, two-minor jump, or a one-minor bump while the last upgrade is unfinished."""
        order = versions.compare(new, old, with_build_tags=True)
        if order == 0:
            return None
        change = f"from {fe.quote(_semver(old))} to {fe.quote(_semver(new))}"
        if order < 0:
            return fe.invalid(VERSION, text, f"version cannot be decreased {change}")
        if _at_least(new, old.major, old.minor + 2):
            return fe.forbidden(VERSION, f"version cannot be increased {change}")
        if not _at_least(new, old.major, old.minor + 1):
            return None
        problems = self.version_bump_blockers(old)
        if not problems:
            return None
        return fe.invalid(VERSION, text, f"minor version update cannot happen at this time: {_aggregate(problems)}")

    # --- the version-bump guard (spec §6.1.4) ------------------------------------------------------

    def version_bump_blockers(self, old_version: versions.Version) -> list[str]:
        problems: list[str] = []
        checks: list[tuple[str, Callable[[versions.Version], str | None]]] = [
            ("ControlPlane", self.control_plane_blocker),
            ("MachineDeployment", lambda old: self.workers_blocker(MACHINE_DEPLOYMENT, old)),
            ("MachinePool", lambda old: self.workers_blocker(MACHINE_POOL, old)),
        ]
        for what, check in checks:
            problem = check(old_version)
            if problem is not None:
                problems.append(f"blocking version update due to {what} version check: {problem}")
        return problems

    def control_plane_blocker(self, old_version: versions.Version) -> str | None:
        assert self.old is not None
        ref = dig(self.old, "spec", "controlPlaneRef")
        if not isinstance(ref, dict):
            return "failed to get ControlPlane object: cannot get object - object reference not set"
        kind, name = str(ref.get("kind") or ""), str(ref.get("name") or "")
        namespace = ref.get("namespace")
        namespace = namespace if isinstance(namespace, str) and namespace else self.namespace
        try:
            cp = self.reader.get(str(ref.get("apiVersion") or ""), kind, namespace, name)
        except Exception as err:  # a reader's failure blocks the bump, as upstream
            return f"failed to get ControlPlane object: {err}"
        if cp is None:
            return f"failed to get ControlPlane object: {kind} {namespace}/{name} not found"
        spec_version = dig(cp, "spec", "version")
        if not isinstance(spec_version, str):
            return "failed to get ControlPlane version: .spec.version not found"
        parsed = versions.parse(spec_version)
        if parsed is None:
            return "failed to parse version of ControlPlane"
        if versions.compare(parsed, old_version) != 0:
            current = fe.quote(_semver(old_version))
            return f"ControlPlane version {fe.quote(_semver(parsed))} does not match the current version {current}"
        status_version = dig(cp, "status", "version")
        if not isinstance(status_version, str) or not status_version:
            return "ControlPlane is currently provisioning"
        if versions.is_newer_including_build(spec_version, status_version):
            return "ControlPlane is still completing a previous upgrade"
        return None

    def owned_workers(self, kind: WorkerKind) -> list[Obj]:
        selector: dict[str, str | None] = {c.LABEL_CLUSTER_NAME: self.name, c.LABEL_TOPOLOGY_OWNED: None}
        objects = self.reader.list(c.CLUSTER_API_VERSION, kind.kind, self.namespace, selector)
        return sorted((o for o in objects if isinstance(o, dict)), key=name_of)

    def workers_blocker(self, kind: WorkerKind, old_version: versions.Version) -> str | None:
        """Why the workers of ``kind`` block a minor version bump: one still at another version, or still
        rolling one out. MachineDeployments and MachinePools share this walk; only how "still rolling out"
        is read differs (Machines in the management cluster vs Nodes in the workload cluster)."""
        try:
            objects = self.owned_workers(kind)
        except Exception as err:  # a reader's failure blocks the bump, as upstream
            return f"failed to read {kind.noun}s for managed topology: {err}"
        upgrading: list[str] = []
        for obj in objects:
            worker = Worker(obj)
            problem = _worker_version_problem(kind, worker)
            if problem is not None:
                return problem
            assert worker.version is not None
            parsed = versions.parse(worker.version)
            assert parsed is not None
            if versions.compare(parsed, old_version) != 0:
                upgrading.append(worker.name)
                continue
            rolling_out = self.deployment_rolling_out if kind is MACHINE_DEPLOYMENT else self.pool_rolling_out
            still_rolling_out, failure = rolling_out(worker)
            if failure is not None:
                return failure
            if still_rolling_out:
                upgrading.append(worker.name)
        if upgrading:
            return f"there are {kind.noun}s still completing a previous upgrade: [{', '.join(upgrading)}]"
        return None

    def deployment_rolling_out(self, worker: Worker) -> tuple[bool, str | None]:
        """Whether a MachineDeployment's Machines are not all at its version (or why that is unknown)."""
        try:
            machines = self.reader.list(
                c.CLUSTER_API_VERSION, c.KIND_MACHINE, worker.namespace or self.namespace, worker.selector_labels
            )
            state = WorkerState(object=worker.raw, bootstrap={}, infrastructure={}, machines=machines)
            return worker_is_upgrading(MACHINE_DEPLOYMENT, state), None
        except ClusterClassError as err:
            return False, f"failed to check if MachineDeployment is upgrading: {err}"
        except Exception as err:  # a reader's failure blocks the bump, as upstream
            return False, f"failed to check if MachineDeployment is upgrading: failed to list machines: {err}"

    def pool_rolling_out(self, worker: Worker) -> tuple[bool, str | None]:
        """Whether a MachinePool's Nodes report another kubelet version (or why that is unknown).

        Nodes this check cannot know (offline, no Node reader) allow the bump with a warning.
        """
        node_states: dict[str, Obj | None] = {}
        for ref in worker.node_refs:
            node_name = str(ref.get("name") or "")
            if self.nodes is None:
                node_states[node_name] = None
                continue
            try:
                node_states[node_name] = self.nodes.get_node(self.old or self.cluster, node_name)
            except Exception:  # NodeReadError, or any other failure of the workload cluster reader
                return False, (
                    "failed to check if MachinePool is upgrading: failed to check if MachinePool "
                    f"{worker.name} is upgrading: failed to get Node {node_name}"
                )
        state = WorkerState(object=worker.raw, bootstrap={}, infrastructure={}, nodes=node_states)
        if worker_is_upgrading(MACHINE_POOL, state):
            return True, None
        unknown = sorted(name for name, node in node_states.items() if node is None)
        if unknown:
            self.warnings.append(
                f"Could not check whether MachinePool {worker.name} is still upgrading: its Nodes "
                f"{', '.join(unknown)} could not be read from the workload cluster; "
                "the minor version update is allowed without that check."
            )
        return False, None


# --- helpers of the checks -----------------------------------------------------------------------


def _semver(version: versions.Version) -> str:
    """A version as blang/semver prints it: no ``v``, pre-release after ``-``, build after ``+``."""
    text = f"{version.major}.{version.minor}.{version.patch}"
    if version.pre:
        text += "-" + ".".join(version.pre)
    if version.build:
        text += "+" + ".".join(version.build)
    return text


def _at_least(version: versions.Version, major: int, minor: int) -> bool:
    return versions.compare(version, versions.Version(major, minor, 0, (), ())) >= 0


def _aggregate(messages: list[str]) -> str:
    """Kubernetes' error aggregate: one message alone, several as ``[a, b]`` (repeats dropped)."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else "[" + ", ".join(unique) + "]"


def _worker_version_problem(kind: WorkerKind, worker: Worker) -> str | None:
    version = worker.version
    if version is None or versions.parse(version) is None:
        shown = version if version is not None else ""
        return (
            f"failed to parse {kind.noun}'s {fe.quote(f'{worker.namespace}/{worker.name}')} version {fe.quote(shown)}"
        )
    return None


def _overrides_by_name(topology: Mapping[str, Any], kind: WorkerKind) -> dict[str, list[Any]]:
    found: dict[str, list[Any]] = {}
    for _, entry in worker_entries(topology, kind):
        name = entry.get("name")
        overrides = dig(entry, "variables", "overrides")
        if isinstance(name, str) and isinstance(overrides, list):
            found.setdefault(name, overrides)
    return found


def worker_topology_errors(
    kind: WorkerKind, entries: list[tuple[int, dict[str, Any]]], cc: Obj | None
) -> list[FieldError]:
    """Names (valid label values, non-empty, unique) and, given the ClusterClass, classes (defined in it)."""
    errors: list[FieldError] = []
    classes: set[str] | None = None
    cc_name = name_of(cc) if cc is not None else ""
    if cc is not None:
        entries_of_class = dig(cc, "spec", "workers", kind.list_key)
        classes = {
            str(wc.get("class"))
            for wc in (entries_of_class if isinstance(entries_of_class, list) else [])
            if isinstance(wc, dict) and isinstance(wc.get("class"), str)
        }
    names: set[str] = set()
    for index, entry in entries:
        path = _worker_path(kind, index)
        name_path = fe.child(path, "name")
        name = entry.get("name")
        if name is not None and not isinstance(name, str):
            errors.append(fe.type_invalid(name_path, name, "must be a string"))
        elif name:
            for message in label_value_errors(name):
                errors.append(fe.invalid(name_path, name, f"must be a valid label value {message}"))

        class_name = entry.get("class")
        class_path = fe.child(path, "class")
        if class_name is None:
            errors.append(fe.required(class_path))
        elif not isinstance(class_name, str):
            errors.append(fe.type_invalid(class_path, class_name, "must be a string"))
        elif classes is not None and class_name not in classes:
            detail = (
                f"{kind.noun}Class with name {fe.quote(class_name)} does not exist in ClusterClass {fe.quote(cc_name)}"
            )
            errors.append(fe.invalid(class_path, class_name, detail))

        if not isinstance(name, str):
            if name is None:
                errors.append(fe.required(name_path, "name must not be empty"))
            continue
        if name == "":
            errors.append(fe.required(name_path, "name must not be empty"))
            continue
        if name in names:
            detail = f"name must be unique. {kind.noun} with name {fe.quote(name)} is defined more than once"
            errors.append(fe.invalid(name_path, name, detail))
        names.add(name)
    return errors


def _mhc_topology_errors(
    mhc: Any, path: str, namespace: str, class_mhc: Any, cp_without_machines: bool
) -> list[FieldError]:
    if mhc is None:
        return []
    if not isinstance(mhc, dict):
        return [fe.type_invalid(path, mhc, "must be an object")]
    errors: list[FieldError] = []
    zero = is_zero(mhc)
    if not zero:
        if cp_without_machines:
            detail = "can be set only if spec.controlPlane.machineInfrastructure is set in ClusterClass"
            errors.append(fe.forbidden(path, detail))
        errors.extend(machine_health_check_class_errors(mhc, path, namespace))
    enable = mhc.get("enable")
    if enable is not None and not isinstance(enable, bool):
        errors.append(fe.type_invalid(fe.child(path, "enable"), enable, "must be a boolean"))
    elif enable is True and zero and class_mhc is None:
        detail = (
            "cannot be set to true as MachineHealthCheck definition is not available in the Cluster topology "
            "or the ClusterClass"
        )
        errors.append(fe.forbidden(fe.child(path, "enable"), detail))
    return errors


def _machine_health_check_errors(
    control_plane: Mapping[str, Any],
    workers: Mapping[WorkerKind, list[tuple[int, dict[str, Any]]]],
    cc: Obj,
    namespace: str,
) -> list[FieldError]:
    """Topology MachineHealthChecks: the control plane's and every worker's (MachineDeployments, and MachinePools
    as clusterclass extends them — docs/upstream-differences.md)."""
    cp_class = dig(cc, "spec", "controlPlane")
    cp_class = cp_class if isinstance(cp_class, dict) else {}
    errors = _mhc_topology_errors(
        control_plane.get("machineHealthCheck"),
        f"{TOPOLOGY}.controlPlane.machineHealthCheck",
        namespace,
        cp_class.get("machineHealthCheck"),
        cp_without_machines=cp_class.get("machineInfrastructure") is None,
    )
    for kind in WORKER_KINDS:
        if not kind.has_machine_health_check:
            continue
        classes = dig(cc, "spec", "workers", kind.list_key)
        by_class = {
            wc["class"]: wc
            for wc in (classes if isinstance(classes, list) else [])
            if isinstance(wc, dict) and isinstance(wc.get("class"), str)
        }
        for index, entry in workers[kind]:
            mhc = entry.get("machineHealthCheck")
            worker_class = by_class.get(entry.get("class")) if isinstance(entry.get("class"), str) else None
            path = f"{_worker_path(kind, index)}.machineHealthCheck"
            # An undefined class is reported already; then only the topology's own fields are checked.
            class_mhc = {} if worker_class is None else worker_class.get("machineHealthCheck")
            errors.extend(_mhc_topology_errors(mhc, path, namespace, class_mhc, cp_without_machines=False))
    return errors
