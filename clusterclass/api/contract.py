"""Provider contract paths: where provider objects keep the fields topology reads and writes.

ClusterClass templates and the objects cloned from them belong to providers (Docker, AWS, Azure,
kubeadm...), so topology only knows them through the Cluster API contract: a template keeps the
object to clone under ``spec.template``; a control plane keeps its version, replicas and machine
template at fixed paths. Every such path is spelled once, here.
"""

from __future__ import annotations

from typing import Final

# Every template kind (InfrastructureClusterTemplate, ControlPlaneTemplate, bootstrap and
# infrastructure machine/pool templates) keeps the object it stamps out here.
TEMPLATE: Final = ("spec", "template")
TEMPLATE_SPEC: Final = ("spec", "template", "spec")
TEMPLATE_SUFFIX: Final = "Template"


class ControlPlane:
    """The ControlPlane contract (e.g. KubeadmControlPlane)."""

    VERSION: Final = ("spec", "version")
    REPLICAS: Final = ("spec", "replicas")
    MACHINE_TEMPLATE: Final = ("spec", "machineTemplate")
    MACHINE_TEMPLATE_INFRASTRUCTURE_REF: Final = ("spec", "machineTemplate", "infrastructureRef")
    MACHINE_TEMPLATE_METADATA: Final = ("spec", "machineTemplate", "metadata")
    MACHINE_TEMPLATE_NODE_DRAIN_TIMEOUT: Final = ("spec", "machineTemplate", "nodeDrainTimeout")
    MACHINE_TEMPLATE_NODE_VOLUME_DETACH_TIMEOUT: Final = ("spec", "machineTemplate", "nodeVolumeDetachTimeout")
    MACHINE_TEMPLATE_NODE_DELETION_TIMEOUT: Final = ("spec", "machineTemplate", "nodeDeletionTimeout")
    STATUS_VERSION: Final = ("status", "version")
    STATUS_REPLICAS: Final = ("status", "replicas")
    STATUS_UPDATED_REPLICAS: Final = ("status", "updatedReplicas")
    STATUS_READY_REPLICAS: Final = ("status", "readyReplicas")
    STATUS_UNAVAILABLE_REPLICAS: Final = ("status", "unavailableReplicas")


class InfrastructureCluster:
    """The InfrastructureCluster contract: the endpoint a provider fills in after creation."""

    CONTROL_PLANE_ENDPOINT_HOST: Final = ("spec", "controlPlaneEndpoint", "host")
    CONTROL_PLANE_ENDPOINT_PORT: Final = ("spec", "controlPlaneEndpoint", "port")


def object_kind_for_template(template_kind: str) -> str:
    """``DockerMachinePoolTemplate`` → ``DockerMachinePool``: the kind a template clones into."""
    if template_kind.endswith(TEMPLATE_SUFFIX):
        return template_kind[: -len(TEMPLATE_SUFFIX)]
    return template_kind
