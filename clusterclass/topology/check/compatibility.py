"""What may change between two versions of an object or of a ClusterClass (spec §6.4): the one place that decides.

Two families of checks, both returning :class:`~clusterclass.fielderrors.FieldError` lists:

- between two *objects* (what the reconcile compares before it updates an object or rotates a
  template): :func:`objects_strictly_compatible` (name, API group, kind and namespace unchanged; the
  InfrastructureCluster, the control plane and both MachinePool objects),
  :func:`objects_compatible` (API group, kind and namespace; MachineDeployment infrastructure
  templates and the control plane machine template) and :func:`objects_in_same_namespace`
  (MachineDeployment bootstrap templates);
- between two *ClusterClasses* (the ClusterClass webhook on update, the Cluster webhook when a
  Cluster changes class): :func:`local_object_templates_compatible` for one template reference and
  :func:`cluster_classes_compatible` for a whole class.

A template reference may change its version and name, never its API group or kind: the topology
would otherwise have to turn existing objects into objects of another kind. For worker classes only
the infrastructure template is guarded, for MachineDeployments and MachinePools alike: a
MachineDeployment rotates its bootstrap template to whatever kind the class names, and upstream lets
a MachinePool class change its bootstrap kind too, although every existing MachinePool of the class
then fails to reconcile (spec §0, strict compatibility of MachinePool objects).

Messages and field paths are upstream's. The functions never raise: a missing or malformed
reference is not compared (the reference checks of the ClusterClass webhook report it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.api.objects import group_of, name_of, namespace_of
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WorkerKind
from clusterclass.fielderrors import FieldError, quote


def text(value: Any) -> str:
    """A string field as Go decodes it: a string, else empty (wrong types never reach Go code)."""
    return value if isinstance(value, str) else ""


def parse_group_version(api_version: str) -> tuple[str, str]:
    """Go's ``schema.ParseGroupVersion``: ``""`` and ``"/"`` are the empty GroupVersion; raises ValueError
    (with Go's message) for more than one slash."""
    if api_version in ("", "/"):
        return "", ""
    slashes = api_version.count("/")
    if slashes == 0:
        return "", api_version
    if slashes == 1:
        group, version = api_version.split("/")
        return group, version
    raise ValueError(f"unexpected GroupVersion string: {api_version}")


def ref_group(api_version: str) -> str:
    """The group of a reference's apiVersion as Go's ``GroupVersionKind()`` sees it (unparsable: empty)."""
    try:
        return parse_group_version(api_version)[0]
    except ValueError:
        return ""


def group_kind(kind: str, group: str) -> str:
    """Go's ``GroupKind.String()``."""
    return f"{kind}.{group}" if group else kind


# --- objects ------------------------------------------------------------------------------------------


def _object_group_kind(obj: Mapping[str, Any]) -> tuple[str, str]:
    return group_of(text(obj.get("apiVersion"))), text(obj.get("kind"))


def objects_in_same_namespace(current: Mapping[str, Any], desired: Mapping[str, Any]) -> list[FieldError]:
    """The namespace of an object must not change (a template must stay next to its Cluster)."""
    if namespace_of(current) == namespace_of(desired):
        return []
    group, kind = _object_group_kind(current)
    return [
        fe.forbidden(
            "metadata.namespace",
            f"metadata.namespace of {group_kind(kind, group)}/{name_of(current)} cannot be changed from "
            f"{quote(namespace_of(current))} to {quote(namespace_of(desired))} because templates must be in the "
            "same namespace as the Cluster",
        )
    ]


def objects_compatible(current: Mapping[str, Any], desired: Mapping[str, Any]) -> list[FieldError]:
    """API group, kind and namespace of an object must not change."""
    errors: list[FieldError] = []
    current_group, current_kind = _object_group_kind(current)
    desired_group, desired_kind = _object_group_kind(desired)
    where = f"{group_kind(current_kind, current_group)}/{name_of(current)}"
    if current_group != desired_group:
        errors.append(
            fe.forbidden(
                "metadata.apiVersion",
                f"apiVersion.group of {where} cannot be changed from {quote(current_group)} to "
                f"{quote(desired_group)} to prevent incompatible changes in the Cluster",
            )
        )
    if current_kind != desired_kind:
        errors.append(
            fe.forbidden(
                "metadata.kind",
                f"apiVersion.kind of {where} cannot be changed from {quote(current_kind)} to "
                f"{quote(desired_kind)} to prevent incompatible changes in the Cluster",
            )
        )
    errors.extend(objects_in_same_namespace(current, desired))
    return errors


def objects_strictly_compatible(current: Mapping[str, Any], desired: Mapping[str, Any]) -> list[FieldError]:
    """Name, API group, kind and namespace of an object must not change."""
    errors: list[FieldError] = []
    if name_of(current) != name_of(desired):
        group, kind = _object_group_kind(current)
        errors.append(
            fe.forbidden(
                "metadata.name",
                f"metadata.name of {group_kind(kind, group)}/{name_of(current)} cannot be changed from "
                f"{quote(name_of(current))} to {quote(name_of(desired))} to prevent incompatible changes in "
                "the Cluster",
            )
        )
    errors.extend(objects_compatible(current, desired))
    return errors


# --- ClusterClasses -----------------------------------------------------------------------------------


def _ref_of(template: Any) -> Mapping[str, Any] | None:
    if not isinstance(template, Mapping):
        return None
    ref = template.get("ref")
    return ref if isinstance(ref, Mapping) else None


def local_object_templates_compatible(current: Any, desired: Any, path: str) -> list[FieldError]:
    """A template reference (``{ref: ...}`` at ``path``) may change version and name, not group, kind or namespace.

    When either side has no reference there is nothing to compare (the reference checks report it).
    """
    current_ref, desired_ref = _ref_of(current), _ref_of(desired)
    if current_ref is None or desired_ref is None:
        return []
    errors: list[FieldError] = []
    ref_path = fe.child(path, "ref")
    current_group = ref_group(text(current_ref.get("apiVersion")))
    desired_group = ref_group(text(desired_ref.get("apiVersion")))
    if current_group != desired_group:
        errors.append(
            fe.forbidden(
                fe.child(ref_path, "apiVersion"),
                f"apiVersion.group cannot be changed from {quote(current_group)} to {quote(desired_group)} to "
                "prevent incompatible changes in the Clusters",
            )
        )
    current_kind, desired_kind = text(current_ref.get("kind")), text(desired_ref.get("kind"))
    if current_kind != desired_kind:
        errors.append(
            fe.forbidden(
                fe.child(ref_path, "kind"),
                f"apiVersion.kind cannot be changed from {quote(current_kind)} to {quote(desired_kind)} to "
                "prevent incompatible changes in the Clusters",
            )
        )
    current_namespace = text(current_ref.get("namespace"))
    if current_namespace != text(desired_ref.get("namespace")):
        errors.append(
            fe.forbidden(
                fe.child(ref_path, "namespace"),
                f"templates must be in the same namespace as the ClusterClass ({current_namespace})",
            )
        )
    return errors


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _spec(cc: Mapping[str, Any]) -> Mapping[str, Any]:
    return _mapping(cc.get("spec"))


def worker_class_entries(cc: Mapping[str, Any], kind: WorkerKind) -> list[tuple[int, Mapping[str, Any]]]:
    """``(index, class)`` for every well-formed entry of ``spec.workers.<kind>`` (indices of the raw list)."""
    entries = _mapping(_spec(cc).get("workers")).get(kind.list_key)
    if not isinstance(entries, list):
        return []
    return [(i, entry) for i, entry in enumerate(entries) if isinstance(entry, Mapping)]


def worker_classes_compatible(
    old_cc: Mapping[str, Any], new_cc: Mapping[str, Any], kind: WorkerKind
) -> list[FieldError]:
    """Every worker class kept in ``new_cc`` keeps its infrastructure template's group and kind.

    Upstream's ``MachineDeploymentClassesAreCompatible`` and ``MachinePoolClassesAreCompatible`` are
    the same rule: template metadata and the bootstrap template may change; removed and added classes
    are judged elsewhere (a removed class in use, §6.2). The path carries the class's index in the
    *old* list.
    """
    errors: list[FieldError] = []
    old_entries = worker_class_entries(old_cc, kind)
    for _, new_class in worker_class_entries(new_cc, kind):
        for i, old_class in old_entries:
            if text(new_class.get("class")) != text(old_class.get("class")):
                continue
            errors.extend(
                local_object_templates_compatible(
                    _mapping(old_class.get("template")).get("infrastructure"),
                    _mapping(new_class.get("template")).get("infrastructure"),
                    f"spec.workers.{kind.list_key}[{i}]",
                )
            )
    return errors


_CANNOT_COMPARE = "could not compare ClusterClass compatibility"


def cluster_classes_compatible(old_cc: Any, new_cc: Any) -> list[FieldError]:
    """Whether ``new_cc`` is a compatible change of ``old_cc`` (upstream ``ClusterClassesAreCompatible``).

    Checks the InfrastructureCluster template, the control plane template, the control plane machine
    infrastructure template (when both versions have one) and the infrastructure template of every
    MachineDeployment and MachinePool class present in both.
    """
    if not isinstance(old_cc, Mapping):
        return [fe.invalid("", "", f"{_CANNOT_COMPARE}: current ClusterClass must not be nil")]
    if not isinstance(new_cc, Mapping):
        return [fe.invalid("", "", f"{_CANNOT_COMPARE}: desired ClusterClass must not be nil")]
    old_spec, new_spec = _spec(old_cc), _spec(new_cc)
    errors = local_object_templates_compatible(
        old_spec.get("infrastructure"), new_spec.get("infrastructure"), "spec.infrastructure"
    )
    old_cp, new_cp = old_spec.get("controlPlane"), new_spec.get("controlPlane")
    errors.extend(local_object_templates_compatible(old_cp, new_cp, "spec.controlPlane"))
    old_machine_infrastructure = _mapping(old_cp).get("machineInfrastructure")
    new_machine_infrastructure = _mapping(new_cp).get("machineInfrastructure")
    if old_machine_infrastructure is not None and new_machine_infrastructure is not None:
        errors.extend(
            local_object_templates_compatible(
                old_machine_infrastructure, new_machine_infrastructure, "spec.controlPlane.machineInfrastructure"
            )
        )
    errors.extend(worker_classes_compatible(old_cc, new_cc, MACHINE_DEPLOYMENT))
    errors.extend(worker_classes_compatible(old_cc, new_cc, MACHINE_POOL))
    return errors
