"""Provider contract paths: where provider objects keep the fields topology reads and writes.

ClusterClass templates and the objects cloned from them belong to providers (Docker, AWS, Azure,
kubeadm...), so topology only knows them through the Cluster API contract: a template keeps the
object to clone under ``spec.template``; a control plane keeps its version, replicas and machine
template at fixed paths. Every such path is spelled once, here.

The control plane contract changed with Cluster API v1.11: a v1beta2-contract control plane (KubeadmControlPlane
``v1beta2``) keeps its machine template's infrastructure reference at ``spec.machineTemplate.spec.infrastructureRef``
as ``{apiGroup, kind, name}``, its node timeouts as whole seconds under ``spec.machineTemplate.spec.deletion``, and
reports ``status.upToDateReplicas`` and ``status.availableReplicas`` where a v1beta1-contract one reports
``status.updatedReplicas`` and ``status.unavailableReplicas``. Which contract an object implements is its CRD's to say
(:mod:`clusterclass.api.contracts`); :func:`control_plane` answers the paths for it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from clusterclass.api.conversion.engine import ConversionError
from clusterclass.api.conversion.transforms import DURATION_SECONDS
from clusterclass.api.objects import Obj, dig, is_int, split_api_version

# Every template kind (InfrastructureClusterTemplate, ControlPlaneTemplate, bootstrap and
# infrastructure machine/pool templates) keeps the object it stamps out here.
TEMPLATE: Final = ("spec", "template")
TEMPLATE_SPEC: Final = ("spec", "template", "spec")
TEMPLATE_SUFFIX: Final = "Template"

Path = tuple[str, ...]

#: the machine deletion timeouts, by their v1beta1 (Duration) field names
TIMEOUT_FIELDS: Final = ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout")


@dataclass(frozen=True)
class ControlPlaneContract:
    """The ControlPlane contract of one contract version (e.g. KubeadmControlPlane ``v1beta1`` or ``v1beta2``)."""

    version_name: str
    VERSION: Path
    REPLICAS: Path
    MACHINE_TEMPLATE: Path
    MACHINE_TEMPLATE_INFRASTRUCTURE_REF: Path
    MACHINE_TEMPLATE_METADATA: Path
    STATUS_VERSION: Path
    STATUS_REPLICAS: Path
    STATUS_UP_TO_DATE_REPLICAS: Path
    STATUS_READY_REPLICAS: Path
    #: v1beta2: ``status.availableReplicas``; v1beta1: None (``status.unavailableReplicas`` instead)
    STATUS_AVAILABLE_REPLICAS: Path | None
    STATUS_UNAVAILABLE_REPLICAS: Path | None
    STATUS_INITIALIZED: Path

    @property
    def versioned_refs(self) -> bool:
        """Whether the machine template's infrastructure reference carries an apiVersion (v1beta1) or only a group."""
        return self.version_name == "v1beta1"

    def timeout_path(self, field: str) -> Path:
        """Where the machine template keeps the timeout ``field`` (``nodeDrainTimeout`` & co.)."""
        if self.version_name == "v1beta1":
            return (*self.MACHINE_TEMPLATE, field)
        return (*self.MACHINE_TEMPLATE, "spec", "deletion", f"{field}Seconds")

    def timeout_value(self, field: str, duration: str) -> Any:
        """A Go duration (``5m0s``) as the contract writes ``field``: the Duration itself, or whole seconds."""
        if self.version_name == "v1beta1":
            return duration
        try:
            return DURATION_SECONDS.to_hub(duration, _NO_CONTEXT, field)
        except ConversionError:
            return duration  # validation names the field; a reconcile does not invent a value

    @property
    def timeout_paths(self) -> tuple[Path, ...]:
        return tuple(self.timeout_path(field) for field in TIMEOUT_FIELDS)

    def infrastructure_ref(self, ref: Mapping[str, Any]) -> Obj:
        """An ``ObjectReference`` as the contract writes the machine template's infrastructure reference."""
        if self.versioned_refs:
            return dict(ref)
        api_version = str(ref.get("apiVersion") or "")
        try:
            group = split_api_version(api_version)[0] if api_version else str(ref.get("apiGroup") or "")
        except ValueError:
            group = api_version
        return {"apiGroup": group, "kind": ref.get("kind", ""), "name": ref.get("name", "")}

    def is_scaling(self, cp: Mapping[str, Any]) -> bool:
        """The contract's scaling rule: every replica count equal to ``spec.replicas`` (v1beta2: replicas, up to
        date, ready, available; v1beta1: replicas, updated, ready, and no unavailable ones)."""
        desired = _int(cp, self.REPLICAS)
        paths = [self.STATUS_REPLICAS, self.STATUS_UP_TO_DATE_REPLICAS, self.STATUS_READY_REPLICAS]
        if self.STATUS_AVAILABLE_REPLICAS is not None:
            paths.append(self.STATUS_AVAILABLE_REPLICAS)
        counts = [_int(cp, path) for path in paths]
        if any(count is None for count in counts):
            return True  # no status yet: treat as scaling so nothing relies on a stable control plane
        unavailable = _int(cp, self.STATUS_UNAVAILABLE_REPLICAS) if self.STATUS_UNAVAILABLE_REPLICAS else None
        return any(count != desired for count in counts) or (unavailable or 0) > 0

    def initialized(self, cp: Mapping[str, Any]) -> bool:
        return dig(cp, *self.STATUS_INITIALIZED) is True


class _NoContext:
    """What a duration re-encoding needs of a conversion context: nothing."""


_NO_CONTEXT: Any = _NoContext()


def _int(obj: Mapping[str, Any], path: Path) -> int | None:
    value = dig(obj, *path)
    return value if is_int(value) else None


CONTROL_PLANE_V1BETA1: Final = ControlPlaneContract(
    version_name="v1beta1",
    VERSION=("spec", "version"),
    REPLICAS=("spec", "replicas"),
    MACHINE_TEMPLATE=("spec", "machineTemplate"),
    MACHINE_TEMPLATE_INFRASTRUCTURE_REF=("spec", "machineTemplate", "infrastructureRef"),
    MACHINE_TEMPLATE_METADATA=("spec", "machineTemplate", "metadata"),
    STATUS_VERSION=("status", "version"),
    STATUS_REPLICAS=("status", "replicas"),
    STATUS_UP_TO_DATE_REPLICAS=("status", "updatedReplicas"),
    STATUS_READY_REPLICAS=("status", "readyReplicas"),
    STATUS_AVAILABLE_REPLICAS=None,
    STATUS_UNAVAILABLE_REPLICAS=("status", "unavailableReplicas"),
    STATUS_INITIALIZED=("status", "initialized"),
)

CONTROL_PLANE_V1BETA2: Final = ControlPlaneContract(
    version_name="v1beta2",
    VERSION=("spec", "version"),
    REPLICAS=("spec", "replicas"),
    MACHINE_TEMPLATE=("spec", "machineTemplate"),
    MACHINE_TEMPLATE_INFRASTRUCTURE_REF=("spec", "machineTemplate", "spec", "infrastructureRef"),
    MACHINE_TEMPLATE_METADATA=("spec", "machineTemplate", "metadata"),
    STATUS_VERSION=("status", "version"),
    STATUS_REPLICAS=("status", "replicas"),
    STATUS_UP_TO_DATE_REPLICAS=("status", "upToDateReplicas"),
    STATUS_READY_REPLICAS=("status", "readyReplicas"),
    STATUS_AVAILABLE_REPLICAS=("status", "availableReplicas"),
    STATUS_UNAVAILABLE_REPLICAS=None,
    STATUS_INITIALIZED=("status", "initialization", "controlPlaneInitialized"),
)

_CONTROL_PLANES: Final = {c.version_name: c for c in (CONTROL_PLANE_V1BETA1, CONTROL_PLANE_V1BETA2)}


def control_plane(contract_version: str) -> ControlPlaneContract:
    """The ControlPlane contract of ``contract_version`` (``v1beta1`` or ``v1beta2``)."""
    return _CONTROL_PLANES.get(contract_version, CONTROL_PLANE_V1BETA1)


#: the v1beta1 contract's paths, the ones every provider implemented before Cluster API v1.11
ControlPlane: Final = CONTROL_PLANE_V1BETA1


class InfrastructureCluster:
    """The InfrastructureCluster contract: the endpoint a provider fills in after creation (both contracts)."""

    CONTROL_PLANE_ENDPOINT_HOST: Final = ("spec", "controlPlaneEndpoint", "host")
    CONTROL_PLANE_ENDPOINT_PORT: Final = ("spec", "controlPlaneEndpoint", "port")


def object_kind_for_template(template_kind: str) -> str:
    """``DockerMachinePoolTemplate`` → ``DockerMachinePool``: the kind a template clones into."""
    if template_kind.endswith(TEMPLATE_SUFFIX):
        return template_kind[: -len(TEMPLATE_SUFFIX)]
    return template_kind
