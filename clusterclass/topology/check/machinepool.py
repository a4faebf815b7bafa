"""MachinePool admission (spec §1.4, §6.5): what the MachinePool webhooks default and refuse.

Defaulting (:func:`default_machine_pool`) returns a defaulted copy: the
``cluster.x-k8s.io/cluster-name`` label, ``spec.replicas`` by the autoscaler-aware rule, the MachinePool's
namespace on its bootstrap config and infrastructure refs, and a ``v`` in front of
``spec.template.spec.version``; then what the webhook of the management cluster's generation adds: upstream v1.6's
(a management cluster serving MachinePools in v1beta1 only) a zero ``spec.minReadySeconds``, upstream v1.14's
(one serving v1beta2) a ``nodeDeletionTimeout`` of 10s (v1beta2's ``deletion.nodeDeletionTimeoutSeconds: 10``) and
no ``minReadySeconds``. Running beside upstream v1.14's controllers showed the difference: its MachinePools had the
timeout and not the zero.

The replica rule is upstream's for MachineDeployments since v1.6 and for MachinePools since v1.8,
written once here (:func:`default_replicas`) for both kinds: a value already set stays; otherwise,
when both ``cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size`` and ``-max-size``
annotations are present, a new object gets the minimum and an existing one keeps its old replicas
clamped into ``[min, max]`` (the minimum if it had none); without both annotations the default is 1.

Validation (:func:`validate_machine_pool`) follows the upstream webhook: everything is refused while
the ``MachinePool`` gate is off; a bootstrap config ref or data secret name is required; refs live in
the MachinePool's namespace; ``spec.clusterName`` is immutable; the version is a ``KubeSemver``; the
template metadata is valid. Beyond upstream it refuses negative (and non-integer) ``spec.replicas``
(spec §6.1.3), reports an unparsable autoscaler annotation that left replicas undefaulted, and
reports a wrong infrastructure ref namespace at its real path
``spec.template.spec.infrastructureRef.namespace`` (upstream says ``spec.infrastructureRef.namespace``,
a field MachinePools do not have). Malformed documents give field errors, never exceptions.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.api import constants as c
from clusterclass.api.durations import DURATION_PATHS, normalize_durations
from clusterclass.api.objects import Obj, is_int
from clusterclass.fielderrors import FieldError
from clusterclass.topology.check.gates import Gates
from clusterclass.topology.check.result import Result
from clusterclass.topology.check.syntax import go_parse_int, is_kube_semver, metadata_errors

MAX_INT32 = 2**31 - 1
DEFAULT_GATES = Gates()

_SPEC = "spec"
_TEMPLATE_SPEC = "spec.template.spec"


class ReplicasAnnotationError(ValueError):
    """An autoscaler size annotation could not be parsed, so replicas cannot be defaulted."""

    def __init__(self, error: FieldError) -> None:
        super().__init__(str(error))
        self.error = error


def _mapping(value: Any) -> dict[str, Any] | None:
    return value if isinstance(value, dict) else None


def _size_annotation(annotations: Mapping[str, Any], key: str, noun: str) -> int:
    value = annotations[key]
    try:
        return go_parse_int(value, 32)
    except ValueError as err:
        detail = (
            f'failed to calculate {noun} replicas value: could not parse the value of the "{key}" annotation: {err}'
        )
        raise ReplicasAnnotationError(fe.invalid(fe.child("metadata.annotations", key), value, detail)) from None


def default_replicas(annotations: Any, old_replicas: Any, *, create: bool, noun: str) -> int:
    """The replicas a worker without ``spec.replicas`` is given (one rule for MachineDeployments and
    MachinePools, spec §1.4).

    ``annotations`` are the object's; ``old_replicas`` the stored object's ``spec.replicas`` on
    update. Raises :class:`ReplicasAnnotationError` when both autoscaler annotations are present and
    one does not parse as an int32.
    """
    annotations = annotations if isinstance(annotations, Mapping) else {}
    if c.ANNOTATION_AUTOSCALER_MIN_SIZE not in annotations or c.ANNOTATION_AUTOSCALER_MAX_SIZE not in annotations:
        return 1
    min_size = _size_annotation(annotations, c.ANNOTATION_AUTOSCALER_MIN_SIZE, noun)
    max_size = _size_annotation(annotations, c.ANNOTATION_AUTOSCALER_MAX_SIZE, noun)
    if create or not is_int(old_replicas):
        return min_size
    old = int(old_replicas)
    if old < min_size:
        return min_size
    if old > max_size:
        return max_size
    return old


def _worker_replicas(obj: Mapping[str, Any], old: Mapping[str, Any] | None, noun: str) -> int | None:
    spec = _mapping(obj.get("spec")) or {}
    current = spec.get("replicas")
    if current is not None:
        return current if is_int(current) else None
    metadata = _mapping(obj.get("metadata")) or {}
    old_spec = _mapping(old.get("spec")) if isinstance(old, Mapping) else None
    old_replicas = old_spec.get("replicas") if old_spec is not None else None
    return default_replicas(metadata.get("annotations"), old_replicas, create=old is None, noun=noun)


def default_machine_deployment_replicas(md: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> int | None:
    """``spec.replicas`` of a MachineDeployment after defaulting (``old``: the stored object on update).

    The current value when it is set (None when it is set to something that is not an integer);
    otherwise :func:`default_replicas`. Raises :class:`ReplicasAnnotationError` like it.
    """
    return _worker_replicas(md, old, "MachineDeployment")


def default_machine_pool_replicas(mp: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> int | None:
    """``spec.replicas`` of a MachinePool after defaulting; see :func:`default_machine_deployment_replicas`."""
    return _worker_replicas(mp, old, "MachinePool")


def _default_ref_namespace(ref: Any, namespace: str) -> None:
    if isinstance(ref, dict) and ref.get("namespace") in (None, ""):
        ref["namespace"] = namespace


#: upstream v1.14's MachinePool webhook default (``defaultNodeDeletionTimeoutSeconds``), in the v1beta1 form
DEFAULT_NODE_DELETION_TIMEOUT = "10s"


def default_machine_pool(mp: Obj, old: Obj | None = None, *, v1beta2_server: bool = False) -> Obj:
    """A defaulted deep copy of MachinePool ``mp`` (``old``: the stored MachinePool on update), as upstream v1.14's
    webhook defaults it with ``v1beta2_server``, as v1.6's without (module doc).

    Never raises: parts of the wrong type are left as they are for validation to report, and
    replicas stay unset when an autoscaler annotation does not parse.
    """
    result: Obj = copy.deepcopy(mp)
    if not isinstance(result, dict):
        return result
    normalize_durations(result, DURATION_PATHS[c.KIND_MACHINE_POOL])  # Go's form, as the typed webhook writes
    if result.get("metadata") is None:
        result["metadata"] = {}
    metadata = _mapping(result.get("metadata"))
    spec = _mapping(result.get("spec"))
    namespace = metadata.get("namespace") if metadata is not None else None
    namespace = namespace if isinstance(namespace, str) else ""

    cluster_name = spec.get("clusterName", "") if spec is not None else ""
    if metadata is not None and isinstance(cluster_name, str):
        labels = metadata.get("labels")
        if labels is None:
            labels = metadata["labels"] = {}
        if isinstance(labels, dict):
            labels[c.LABEL_CLUSTER_NAME] = cluster_name

    if spec is None:
        return result
    if spec.get("replicas") is None:
        try:
            replicas = default_machine_pool_replicas(result, old if isinstance(old, dict) else None)
        except ReplicasAnnotationError:
            replicas = None  # validation reports the annotation
        if replicas is not None:
            spec["replicas"] = replicas
    if spec.get("minReadySeconds") is None and not v1beta2_server:
        spec["minReadySeconds"] = 0

    template = _mapping(spec.get("template"))
    machine_spec = _mapping(template.get("spec")) if template is not None else None
    if machine_spec is not None:
        if v1beta2_server and machine_spec.get("nodeDeletionTimeout") is None:
            machine_spec["nodeDeletionTimeout"] = DEFAULT_NODE_DELETION_TIMEOUT
        bootstrap = _mapping(machine_spec.get("bootstrap"))
        if bootstrap is not None:
            _default_ref_namespace(bootstrap.get("configRef"), namespace)
        _default_ref_namespace(machine_spec.get("infrastructureRef"), namespace)
        version = machine_spec.get("version")
        if isinstance(version, str) and not version.startswith("v"):
            machine_spec["version"] = "v" + version
    return result


def replicas_errors(value: Any, path: str) -> list[FieldError]:
    """A replica count: an int32 that is not negative (upstream never rejects negatives, spec §6.1.3)."""
    if value is None:
        return []
    if not is_int(value):
        return [fe.type_invalid(path, value, "must be an integer")]
    if value < 0:
        return [fe.invalid(path, value, "must be greater than or equal to 0")]
    if value > MAX_INT32:
        return [fe.invalid(path, value, f"must be less than or equal to {MAX_INT32}")]
    return []


def _object_at(parent: Mapping[str, Any] | None, key: str, path: str, errors: list[FieldError]) -> dict[str, Any]:
    """``parent[key]`` when it is an object; {} when absent; a type error (and {}) otherwise."""
    value = parent.get(key) if parent is not None else None
    if value is None:
        return {}
    if not isinstance(value, dict):
        errors.append(fe.type_invalid(fe.child(path, key), value, "must be an object"))
        return {}
    return value


def _ref_namespace_errors(ref: Any, path: str, namespace: str) -> list[FieldError]:
    if not isinstance(ref, dict):
        return [fe.type_invalid(path, ref, "must be an object")]
    ref_namespace = ref.get("namespace")
    if ref_namespace != namespace:
        shown = ref_namespace if ref_namespace is not None else ""
        return [fe.invalid(fe.child(path, "namespace"), shown, "must match metadata.namespace")]
    return []


def validate_machine_pool(mp: Obj, old: Obj | None = None, *, gates: Gates = DEFAULT_GATES) -> Result:
    """Every MachinePool webhook rule (spec §1.4) for a create (``old`` None) or an update."""
    result = Result()
    errors = result.errors
    if not gates.machine_pool:
        errors.append(fe.forbidden(_SPEC, "can be set only if the MachinePool feature flag is enabled"))
        return result
    if not isinstance(mp, dict):
        errors.append(fe.type_invalid("", mp, "must be an object"))
        return result
    metadata = _mapping(mp.get("metadata")) or {}
    namespace = metadata.get("namespace")
    namespace = namespace if isinstance(namespace, str) else ""

    spec = _object_at(mp, "spec", "", errors)
    template = _object_at(spec, "template", _SPEC, errors)
    machine_spec = _object_at(template, "spec", "spec.template", errors)
    bootstrap = _object_at(machine_spec, "bootstrap", _TEMPLATE_SPEC, errors)

    config_ref = bootstrap.get("configRef")
    if config_ref is None and bootstrap.get("dataSecretName") is None:
        errors.append(
            fe.required(
                f"{_TEMPLATE_SPEC}.bootstrap.data",
                "expected either spec.bootstrap.dataSecretName or spec.bootstrap.configRef to be populated",
            )
        )
    if config_ref is not None:
        errors.extend(_ref_namespace_errors(config_ref, f"{_TEMPLATE_SPEC}.bootstrap.configRef", namespace))
    infra_ref = machine_spec.get("infrastructureRef")
    if infra_ref is None:
        errors.append(fe.required(f"{_TEMPLATE_SPEC}.infrastructureRef"))
    else:
        errors.extend(_ref_namespace_errors(infra_ref, f"{_TEMPLATE_SPEC}.infrastructureRef", namespace))

    cluster_name = spec.get("clusterName")
    if cluster_name is None or cluster_name == "":
        errors.append(fe.required("spec.clusterName"))
    elif not isinstance(cluster_name, str):
        errors.append(fe.type_invalid("spec.clusterName", cluster_name, "must be a string"))
    if isinstance(old, dict):
        old_spec = _mapping(old.get("spec")) or {}
        if old_spec.get("clusterName") != cluster_name:
            errors.append(fe.forbidden("spec.clusterName", "field is immutable"))

    version = machine_spec.get("version")
    if version is not None and not is_kube_semver(version):
        errors.append(fe.invalid(f"{_TEMPLATE_SPEC}.version", version, "must be a valid semantic version"))

    errors.extend(metadata_errors(template.get("metadata"), "spec.template.metadata"))

    replicas = spec.get("replicas")
    errors.extend(replicas_errors(replicas, "spec.replicas"))
    if replicas is None:
        try:
            default_replicas(metadata.get("annotations"), None, create=True, noun="MachinePool")
        except ReplicasAnnotationError as err:
            errors.append(err.error)
    return result
