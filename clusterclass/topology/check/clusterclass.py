"""ClusterClass defaulting and validation (spec §6.2, upstream ``internal/webhooks/clusterclass.go``).

Defaulting (:func:`default_cluster_class`) puts the ClusterClass's namespace on every template
reference that has none. Validation (:func:`validate_cluster_class`) runs, on create and update:

1. the ``ClusterTopology`` gate;
2. template references (:func:`local_object_template_errors`): set, named, in the ClusterClass's
   namespace, of a ``<name>Template`` kind, with a valid apiVersion;
3. MachineDeployment and MachinePool classes unique (each kind on its own: the same name may be
   an MD class and an MP class);
4. MachineHealthCheck classes (control plane, needing ``machineInfrastructure``, and worker classes —
   MachinePool classes' are clusterclass's extension of upstream's API);
5. naming strategies rendered with sample inputs into DNS-1123 subdomains;
6. variable definitions (§5.9);
7. patches (§6.3, :mod:`clusterclass.topology.check.patches`);
8. label and annotation syntax of class metadata;
9. on update only: the change is compatible (§6.4), and against the Clusters using the class, no
   worker class they use is removed and no MachineHealthCheck they rely on is dropped.

:func:`validate_cluster_class_delete` refuses to delete a ClusterClass that Clusters use.

Worker classes are reported by index (``spec.workers.machinePools[2].namingStrategy.template``), as
the spec writes the paths, where upstream keys some paths by class name. Beyond upstream's rules,
fields of a wrong JSON type and a missing ``class`` are field errors too, so a malformed document is
refused with field errors and never makes a rule raise.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Mapping
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.api import constants as c
from clusterclass.api.durations import DURATION_PATHS, MACHINE_TIMEOUT_FIELDS, normalize_durations
from clusterclass.api.objects import Obj, dig, name_of, namespace_of
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WORKER_KINDS, WorkerKind
from clusterclass.fielderrors import FieldError, quote
from clusterclass.topology import names
from clusterclass.topology.check.compatibility import (
    cluster_classes_compatible,
    parse_group_version,
    text,
    worker_class_entries,
)
from clusterclass.topology.check.gates import Gates
from clusterclass.topology.check.healthchecks import machine_health_check_class_errors, parse_duration
from clusterclass.topology.check.patches import patch_errors
from clusterclass.topology.check.result import Result
from clusterclass.topology.check.syntax import dns1123_subdomain_errors, metadata_errors
from clusterclass.topology.health import is_zero
from clusterclass.topology.reader import Reader
from clusterclass.topology.variables.definition_rules import validate_variable_definitions

TEMPLATE_SUFFIX = "Template"

#: Sample inputs the naming strategies are rendered with (upstream's).
SAMPLE_CLUSTER_NAME = "cluster"
SAMPLE_TOPOLOGY_NAMES = {MACHINE_DEPLOYMENT: "mdtopology", MACHINE_POOL: "mptopology"}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _spec(cc: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(cc.get("spec"))


def _control_plane(cc: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(_spec(cc).get("controlPlane"))


def _class_path(kind: WorkerKind, i: int) -> str:
    return f"spec.workers.{kind.list_key}[{i}]"


# --- defaulting ---------------------------------------------------------------------------------------


def template_refs(cc: Mapping[str, Any]) -> list[Any]:
    """Every template reference of ``cc`` that defaulting fills in (whatever its type)."""
    spec = _spec(cc)
    control_plane = _control_plane(cc)
    refs = [
        _mapping(spec.get("infrastructure")).get("ref"),
        control_plane.get("ref"),
        _mapping(control_plane.get("machineInfrastructure")).get("ref"),
    ]
    for kind in WORKER_KINDS:
        for _, worker_class in worker_class_entries(cc, kind):
            template = _mapping(worker_class.get("template"))
            refs.append(_mapping(template.get("bootstrap")).get("ref"))
            refs.append(_mapping(template.get("infrastructure")).get("ref"))
    return refs


def default_cluster_class(cc: Obj) -> Obj:
    """A copy of ``cc`` with its namespace set on every template reference without one.

    The references: ``spec.infrastructure.ref``, ``spec.controlPlane.ref``,
    ``spec.controlPlane.machineInfrastructure.ref`` and each MachineDeployment and MachinePool
    class's ``template.bootstrap.ref`` and ``template.infrastructure.ref``. Durations are written in
    Go's form (``5m0s``), as upstream's typed webhook answers. Idempotent; anything malformed is left
    as it is for validation to report.
    """
    defaulted = copy.deepcopy(cc)
    if not isinstance(defaulted, dict):
        return defaulted
    normalize_durations(defaulted, DURATION_PATHS[c.KIND_CLUSTER_CLASS])
    namespace = dig(defaulted, "metadata", "namespace")
    if not isinstance(namespace, str) or not namespace:
        return defaulted
    for ref in template_refs(defaulted):
        if isinstance(ref, dict) and ref.get("namespace") in (None, ""):
            ref["namespace"] = namespace
    return defaulted


# --- 2. references --------------------------------------------------------------------------------------


def local_object_template_errors(template: Any, namespace: str, path: str) -> list[FieldError]:
    """Upstream ``LocalObjectTemplateIsValid`` for the ``{ref: ...}`` at ``path``."""
    if template is not None and not isinstance(template, Mapping):
        return [fe.wrong_type(path, template, "an object")]
    ref_path = fe.child(path, "ref")
    ref = _mapping(template).get("ref")
    if ref is None:
        return [fe.required(ref_path, "template reference must be defined")]
    if not isinstance(ref, Mapping):
        return [fe.wrong_type(ref_path, ref, "an object")]
    errors: list[FieldError] = []
    fields: dict[str, str] = {}
    for key in ("apiVersion", "kind", "name", "namespace"):
        value = ref.get(key)
        if value is not None and not isinstance(value, str):
            errors.append(fe.wrong_type(fe.child(ref_path, key), value, "a string"))
        else:
            fields[key] = value or ""
    if fields.get("name") == "":
        errors.append(fe.required(fe.child(ref_path, "name"), "template name must be defined"))
    if "namespace" in fields and namespace and fields["namespace"] != namespace:
        errors.append(
            fe.invalid(
                fe.child(ref_path, "namespace"),
                fields["namespace"],
                f"template must be in the same namespace as the ClusterClass ({namespace})",
            )
        )
    kind = fields.get("kind")
    if kind is not None and (len(kind) <= len(TEMPLATE_SUFFIX) or not kind.endswith(TEMPLATE_SUFFIX)):
        errors.append(
            fe.invalid(fe.child(ref_path, "kind"), kind, f'template kind must be of form "<name>{TEMPLATE_SUFFIX}"')
        )
    api_version = fields.get("apiVersion")
    if api_version is not None:
        try:
            group, version = parse_group_version(api_version)
        except ValueError as err:
            errors.append(
                fe.invalid(
                    fe.child(ref_path, "apiVersion"),
                    api_version,
                    f"template apiVersion must be a valid Kubernetes apiVersion: {err}",
                )
            )
        else:
            if not group and not version:
                errors.append(fe.required(fe.child(ref_path, "apiVersion"), "template apiVersion must be defined"))
    return errors


def reference_errors(cc: Mapping[str, Any]) -> list[FieldError]:
    """Upstream ``ClusterClassReferencesAreValid``: every template reference of the class."""
    namespace = namespace_of(cc)
    spec = _spec(cc)
    errors = local_object_template_errors(spec.get("infrastructure"), namespace, "spec.infrastructure")
    control_plane = spec.get("controlPlane")
    errors.extend(local_object_template_errors(control_plane, namespace, "spec.controlPlane"))
    machine_infrastructure = _mapping(control_plane).get("machineInfrastructure")
    if machine_infrastructure is not None:
        errors.extend(
            local_object_template_errors(machine_infrastructure, namespace, "spec.controlPlane.machineInfrastructure")
        )
    for kind in WORKER_KINDS:
        for i, worker_class in worker_class_entries(cc, kind):
            template_path = fe.child(_class_path(kind, i), "template")
            template = worker_class.get("template")
            if template is not None and not isinstance(template, Mapping):
                errors.append(fe.wrong_type(template_path, template, "an object"))
                continue
            for part in ("bootstrap", "infrastructure"):
                errors.extend(
                    local_object_template_errors(_mapping(template).get(part), namespace, fe.child(template_path, part))
                )
    return errors


# --- 3. unique classes ----------------------------------------------------------------------------------


def worker_classes_unique(cc: Mapping[str, Any], kind: WorkerKind) -> list[FieldError]:
    """No two classes of ``kind`` share a name (upstream ``MachineDeploymentClassesAreUnique`` /
    ``MachinePoolClassesAreUnique``)."""
    errors: list[FieldError] = []
    seen: set[str] = set()
    for i, worker_class in worker_class_entries(cc, kind):
        name = worker_class.get("class")
        if name is not None and not isinstance(name, str):
            continue  # a type error, reported with the structure
        name = name or ""
        if name in seen:
            errors.append(
                fe.invalid(
                    fe.child(_class_path(kind, i), "class"),
                    name,
                    f"{kind.noun} class must be unique. {kind.noun} with class {quote(name)} is defined more than once",
                )
            )
        seen.add(name)
    return errors


# --- 4. MachineHealthChecks -----------------------------------------------------------------------------


def machine_health_check_errors(cc: Mapping[str, Any]) -> list[FieldError]:
    """The control plane's MachineHealthCheck (which needs ``machineInfrastructure``) and each worker class's
    (MachineDeployment classes, and MachinePool classes as clusterclass extends them)."""
    namespace = namespace_of(cc)
    errors: list[FieldError] = []
    control_plane = _control_plane(cc)
    mhc = control_plane.get("machineHealthCheck")
    if mhc is not None:
        path = "spec.controlPlane.machineHealthCheck"
        errors.extend(machine_health_check_class_errors(mhc, path, namespace))
        if control_plane.get("machineInfrastructure") is None:
            errors.append(
                fe.forbidden(
                    fe.child(path, "machineInfrastructure"),
                    "can be set only if spec.controlPlane.machineInfrastructure is set",
                )
            )
    for kind in WORKER_KINDS:
        if not kind.has_machine_health_check:
            continue
        for i, worker_class in worker_class_entries(cc, kind):
            mhc = worker_class.get("machineHealthCheck")
            if mhc is not None:
                path = fe.child(_class_path(kind, i), "machineHealthCheck")
                errors.extend(machine_health_check_class_errors(mhc, path, namespace))
    return errors


# --- 5. naming strategies -------------------------------------------------------------------------------


def _naming_errors(holder: Mapping[str, Any], path: str, values: dict[str, Any], noun: str) -> list[FieldError]:
    strategy = holder.get("namingStrategy")
    strategy_path = fe.child(path, "namingStrategy")
    if strategy is None:
        return []
    if not isinstance(strategy, Mapping):
        return [fe.wrong_type(strategy_path, strategy, "an object")]
    template = strategy.get("template")
    template_path = fe.child(strategy_path, "template")
    if template is None:
        return []
    if not isinstance(template, str):
        return [fe.wrong_type(template_path, template, "a string")]
    try:
        name = names.strategy_name(template, values, random.Random(0))
    except Exception as err:  # any failure of the template engine is the template's
        return [fe.invalid(template_path, template, f"invalid {noun} name template: {err}")]
    return [fe.invalid(template_path, template, message) for message in dns1123_subdomain_errors(name)]


def naming_strategy_errors(cc: Mapping[str, Any]) -> list[FieldError]:
    """Each naming strategy, rendered with sample inputs, must give a DNS-1123 subdomain."""
    cluster = {"name": SAMPLE_CLUSTER_NAME}
    errors = _naming_errors(_control_plane(cc), "spec.controlPlane", {"cluster": cluster}, "ControlPlane")
    for kind in WORKER_KINDS:
        values = {"cluster": cluster, kind.naming_key: {"topologyName": SAMPLE_TOPOLOGY_NAMES[kind]}}
        for i, worker_class in worker_class_entries(cc, kind):
            errors.extend(_naming_errors(worker_class, _class_path(kind, i), values, kind.noun))
    return errors


# --- 8. metadata ----------------------------------------------------------------------------------------


def class_metadata_errors(cc: Mapping[str, Any]) -> list[FieldError]:
    errors = metadata_errors(_control_plane(cc).get("metadata"), "spec.controlPlane.metadata")
    for kind in WORKER_KINDS:
        for i, worker_class in worker_class_entries(cc, kind):
            template = worker_class.get("template")
            if isinstance(template, Mapping):
                errors.extend(
                    metadata_errors(template.get("metadata"), fe.child(_class_path(kind, i), "template.metadata"))
                )
    return errors


# --- structure: what a CRD schema would refuse before any rule runs ---------------------------------------


def _check_object(holder: Mapping[str, Any], key: str, path: str, errors: list[FieldError]) -> Mapping[str, Any]:
    value = holder.get(key)
    if value is not None and not isinstance(value, Mapping):
        errors.append(fe.wrong_type(fe.child(path, key), value, "an object"))
    return _mapping(value)


def _check_timeouts(holder: Mapping[str, Any], path: str, errors: list[FieldError]) -> None:
    for key in MACHINE_TIMEOUT_FIELDS:
        parse_duration(holder.get(key), fe.child(path, key), errors)


def structure_errors(cc: Mapping[str, Any]) -> list[FieldError]:
    """Wrong JSON types of the ClusterClass fields the rules do not read themselves, and missing classes."""
    errors: list[FieldError] = []
    spec = _spec(cc)
    control_plane = _check_object(spec, "controlPlane", "spec", errors)
    _check_timeouts(control_plane, "spec.controlPlane", errors)
    workers = _check_object(spec, "workers", "spec", errors)
    for kind in WORKER_KINDS:
        entries = workers.get(kind.list_key)
        list_path = f"spec.workers.{kind.list_key}"
        if entries is None:
            continue
        if not isinstance(entries, list):
            errors.append(fe.wrong_type(list_path, entries, "a list"))
            continue
        for i, worker_class in enumerate(entries):
            path = _class_path(kind, i)
            if not isinstance(worker_class, Mapping):
                errors.append(fe.wrong_type(path, worker_class, "an object"))
                continue
            name = worker_class.get("class")
            if name is None:
                errors.append(fe.required(fe.child(path, "class")))
            elif not isinstance(name, str):
                errors.append(fe.wrong_type(fe.child(path, "class"), name, "a string"))
            _check_timeouts(worker_class, path, errors)
            min_ready = worker_class.get("minReadySeconds")
            if min_ready is not None and (not isinstance(min_ready, int) or isinstance(min_ready, bool)):
                errors.append(fe.wrong_type(fe.child(path, "minReadySeconds"), min_ready, "an integer"))
            domains_key = kind.failure_domain_field
            domains = worker_class.get(domains_key)
            if kind.has_strategy:  # MachineDeployment: one failure domain and a rollout strategy
                if domains is not None and not isinstance(domains, str):
                    errors.append(fe.wrong_type(fe.child(path, domains_key), domains, "a string"))
                _check_object(worker_class, "strategy", path, errors)
            elif domains is not None:
                if not isinstance(domains, list):
                    errors.append(fe.wrong_type(fe.child(path, domains_key), domains, "a list"))
                else:
                    errors.extend(
                        fe.wrong_type(fe.index(fe.child(path, domains_key), k), domain, "a string")
                        for k, domain in enumerate(domains)
                        if not isinstance(domain, str)
                    )
    return errors


# --- 9. updates: the Clusters using the class -----------------------------------------------------------


def clusters_using(reader: Reader, cc: Mapping[str, Any]) -> list[Obj]:
    """The Clusters of ``cc``'s namespace whose ``spec.topology.class`` is ``cc``'s name (may raise)."""
    name = name_of(cc)
    clusters = reader.list(c.CLUSTER_API_VERSION, c.KIND_CLUSTER, namespace_of(cc), {})
    return [
        cluster
        for cluster in clusters
        if isinstance(cluster, Mapping) and dig(cluster, "spec", "topology", "class") == name
    ]


def _topologies(cluster: Mapping[str, Any], kind: WorkerKind) -> list[Mapping[str, Any]]:
    entries = dig(cluster, "spec", "topology", "workers", kind.list_key)
    return [e for e in entries if isinstance(e, Mapping)] if isinstance(entries, list) else []


def _class_names(cc: Mapping[str, Any], kind: WorkerKind) -> list[str]:
    return [text(worker_class.get("class")) for _, worker_class in worker_class_entries(cc, kind)]


def removed_classes_in_use(
    clusters: list[Obj], old_cc: Mapping[str, Any], new_cc: Mapping[str, Any], kind: WorkerKind
) -> list[FieldError]:
    """One error per use, by a Cluster's worker topology, of a class of ``kind`` the update removes."""
    kept = set(_class_names(new_cc, kind))
    removed = {name for name in _class_names(old_cc, kind) if name not in kept}
    if not removed:
        return []
    errors: list[FieldError] = []
    for cluster in clusters:
        for topology in _topologies(cluster, kind):
            class_name = topology.get("class")
            if isinstance(class_name, str) and class_name in removed:
                errors.append(
                    fe.forbidden(
                        f"spec.workers.{kind.list_key}",
                        f"{kind.noun}Class {quote(class_name)} cannot be deleted because it is used by Cluster "
                        f"{quote(name_of(cluster))}",
                    )
                )
    return errors


def relies_on_class_health_check(topology_mhc: Any) -> bool:
    """A topology relies on its class's MachineHealthCheck when it enables one without defining it."""
    if not isinstance(topology_mhc, Mapping) or topology_mhc.get("enable") is not True:
        return False
    return is_zero(topology_mhc)


def _health_check_dropped(names_using: list[str], path: str) -> list[FieldError]:
    if not names_using:
        return []
    joined = ",".join(names_using)
    return [
        fe.forbidden(path, f"MachineHealthCheck cannot be deleted because it is used by Cluster(s) {quote(joined)}")
    ]


def dropped_health_checks_in_use(
    clusters: list[Obj], old_cc: Mapping[str, Any], new_cc: Mapping[str, Any]
) -> list[FieldError]:
    """A MachineHealthCheck removed from the control plane or a worker class must not be one that a Cluster
    enables without defining its own."""
    errors: list[FieldError] = []
    if _control_plane(old_cc).get("machineHealthCheck") is not None and (
        _control_plane(new_cc).get("machineHealthCheck") is None
    ):
        using = [
            name_of(cluster)
            for cluster in clusters
            if relies_on_class_health_check(dig(cluster, "spec", "topology", "controlPlane", "machineHealthCheck"))
        ]
        errors.extend(_health_check_dropped(using, "spec.controlPlane.machineHealthCheck"))
    for kind in WORKER_KINDS:
        if not kind.has_machine_health_check:
            continue
        old_classes = worker_class_entries(old_cc, kind)
        for i, new_class in worker_class_entries(new_cc, kind):
            class_name = text(new_class.get("class"))
            old_class = next((o for _, o in old_classes if text(o.get("class")) == class_name), None)
            if old_class is None or old_class.get("machineHealthCheck") is None:
                continue
            if new_class.get("machineHealthCheck") is not None:
                continue
            using = [
                name_of(cluster)
                for cluster in clusters
                if any(
                    topology.get("class") == class_name
                    and relies_on_class_health_check(topology.get("machineHealthCheck"))
                    for topology in _topologies(cluster, kind)
                )
            ]
            errors.extend(_health_check_dropped(using, fe.child(_class_path(kind, i), "machineHealthCheck")))
    return errors


# --- entry points ---------------------------------------------------------------------------------------


def validate_cluster_class(
    cc: Obj,
    old: Obj | None = None,
    *,
    reader: Reader,
    gates: Gates = Gates(),  # noqa: B008 - Gates is frozen
) -> Result:
    """Every ClusterClass webhook rule (spec §6.2) for a create (``old`` None) or an update."""
    if not gates.cluster_topology:
        return Result([fe.forbidden("spec", "can be set only if the ClusterTopology feature flag is enabled")])
    if not isinstance(cc, Mapping):
        return Result([fe.wrong_type("", cc, "an object")])
    if cc.get("spec") is not None and not isinstance(cc.get("spec"), Mapping):
        return Result([fe.wrong_type("spec", cc.get("spec"), "an object")])
    errors = structure_errors(cc)
    errors.extend(reference_errors(cc))
    for kind in WORKER_KINDS:
        errors.extend(worker_classes_unique(cc, kind))
    errors.extend(machine_health_check_errors(cc))
    errors.extend(naming_strategy_errors(cc))
    errors.extend(validate_variable_definitions(_spec(cc).get("variables"), field="spec.variables"))
    errors.extend(patch_errors(cc, gates=gates))
    errors.extend(class_metadata_errors(cc))
    if old is None:
        return Result(errors)

    errors.extend(cluster_classes_compatible(old, cc))
    previous = old if isinstance(old, Mapping) else cc
    try:
        clusters = clusters_using(reader, previous)
    except Exception as err:  # whatever the reader raises, the webhook reports
        errors.append(fe.internal("", f"Clusters using ClusterClass {name_of(previous)} can not be retrieved: {err}"))
        return Result(errors)
    for kind in WORKER_KINDS:
        errors.extend(removed_classes_in_use(clusters, previous, cc, kind))
    errors.extend(dropped_health_checks_in_use(clusters, previous, cc))
    return Result(errors)


def validate_cluster_class_delete(cc: Obj, *, reader: Reader) -> Result:
    """A ClusterClass may be deleted only when no Cluster uses it."""
    if not isinstance(cc, Mapping):
        return Result()
    try:
        clusters = clusters_using(reader, cc)
    except Exception as err:  # whatever the reader raises, the webhook reports
        return Result([fe.internal("", f"could not retrieve Clusters using ClusterClass: {err}")])
    if clusters:
        return Result(
            [fe.forbidden("", f"ClusterClass cannot be deleted because it is used by {len(clusters)} Cluster(s)")]
        )
    return Result()
