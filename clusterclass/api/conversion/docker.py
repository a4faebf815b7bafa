"""``infrastructure.cluster.x-k8s.io``: the Docker provider's kinds, v1beta1 ↔ v1beta2 (the hub).

Upstream's rules are in ``test/infrastructure/docker/api/v1beta1/conversion.go`` (ConvertTo/ConvertFrom on the
spoke types, with the conversion-data annotation for the kinds whose hub holds what v1beta1 cannot). Each kind's
steps are in spoke → hub order; reversing them is the way down. What differs is small and repeats:

- the status of a DockerCluster and a DockerMachine changed as the Cluster's did: v1beta1 conditions move to
  ``status.deprecated.v1beta1`` while the v1beta2 ones move up from ``status.v1beta2``, and ``status.ready``
  becomes ``status.initialization.provisioned`` (a ``*bool``, so an explicit ``false`` needs the annotation);
- failure domains, in the DockerCluster's spec and status, are a map in v1beta1 and a list in v1beta2;
- a few fields became values the hub writes with ``omitempty`` (``providerID`` was a ``*string``; the control
  plane endpoint's ``host`` and ``port`` were always written): their zero is left out (:data:`OMIT_ZERO`);
- the DockerMachinePool never had ``status.v1beta2``: its v1beta1 conditions become the deprecated ones and the
  hub's new conditions live only in the annotation;
- hub-only fields (a DockerMachine's ``status.failureDomain``, a DockerMachineTemplate's ``status``) come back
  from the annotation only.

The templates convert their ``spec.template.spec`` as the templated kind converts its ``spec``; the tables are
written once, relative to the struct, and placed with :func:`~clusterclass.api.conversion.engine.under`.
"""

from __future__ import annotations

from typing import Final

from clusterclass.api.conversion.core import FAILURE_DOMAINS, legacy_conditions
from clusterclass.api.conversion.engine import (
    FieldStep,
    KindConversion,
    Move,
    SpokeConversion,
    Step,
    empty,
    hub_only,
    move,
    under,
)
from clusterclass.api.conversion.transforms import omit_zero

GROUP: Final = "infrastructure.cluster.x-k8s.io"
HUB: Final = "v1beta2"
SPOKE: Final = "v1beta1"


# --- a generic re-encoding ---------------------------------------------------------------------


# --- shared structs ----------------------------------------------------------------------------


def cluster_spec() -> list[FieldStep]:
    """A ``DockerClusterSpec`` (a DockerCluster's ``spec``, a DockerClusterTemplate's ``spec.template.spec``).

    v1beta1 always writes ``controlPlaneEndpoint`` with its ``host`` and ``port``; v1beta2 leaves out an unset
    endpoint (``omitzero``, and its schema wants ``host`` and ``port`` non-empty when given). Failure domains
    become a list sorted by name, each with an explicit ``controlPlane``.
    """
    return [
        omit_zero("controlPlaneEndpoint.host"),
        omit_zero("controlPlaneEndpoint.port"),
        empty("controlPlaneEndpoint", "controlPlaneEndpoint"),
        move("failureDomains", "failureDomains", FAILURE_DOMAINS),
    ]


def machine_spec() -> list[FieldStep]:
    """A ``DockerMachineSpec`` (a DockerMachine's ``spec``, a DockerMachineTemplate's ``spec.template.spec``):
    ``providerID`` was a ``*string`` and is a ``string`` with ``omitempty`` (and ``MinLength=1``), so an empty
    one is unset — upstream's ConvertFrom turns an empty one back into nil."""
    return [omit_zero("providerID")]


def provisioned() -> Move:
    """``status.ready`` → ``status.initialization.provisioned``: a ``bool`` that became a ``*bool``
    (``Convert_bool_To_Pointer_bool``), so ``false`` reaches the hub only when the annotation says it was set."""
    return move("status.ready", "status.initialization.provisioned", zero_intent=True)


# --- the kinds ---------------------------------------------------------------------------------


def _docker_cluster_steps() -> tuple[Step, ...]:
    return (
        *under("spec", cluster_spec()),
        *legacy_conditions(),
        provisioned(),
        move("status.failureDomains", "status.failureDomains", FAILURE_DOMAINS),
    )


def _docker_cluster_template_steps() -> tuple[Step, ...]:
    return tuple(under("spec.template.spec", cluster_spec()))


def _docker_machine_steps() -> tuple[Step, ...]:
    return (
        *under("spec", machine_spec()),
        *legacy_conditions(),
        provisioned(),
        # where the machine was placed: new in v1beta2, restored from the annotation only (upstream: ``if ok``)
        hub_only("status.failureDomain"),
    )


def _docker_machine_template_steps() -> tuple[Step, ...]:
    return (
        *under("spec.template.spec", machine_spec()),
        # v1beta2 added a status (``capacity``, for autoscaling from zero); upstream restores all of it
        hub_only("status"),
    )


def _docker_machine_pool_steps() -> tuple[Step, ...]:
    """The DockerMachinePool's v1beta1 had only the legacy conditions (no ``status.v1beta2``): they become the
    deprecated ones, and the hub's ``status.conditions`` are dropped on the way down and restored from the
    annotation on the way up. Everything else — ``status.ready``, ``instances``, ``providerIDList`` — is the same
    in both versions."""
    return (
        move("status.conditions", "status.deprecated.v1beta1.conditions"),
        hub_only("status.conditions"),
    )


def _kind(kind: str, steps: tuple[Step, ...], *, keeps_data: bool) -> KindConversion:
    """``keeps_data`` is whether upstream's ConvertFrom keeps the hub in the conversion-data annotation: it does
    for the kinds whose hub holds what v1beta1 cannot (the templates of clusters and pools hold nothing more)."""
    return KindConversion(GROUP, kind, HUB, {SPOKE: SpokeConversion(SPOKE, steps, keeps_data=keeps_data)})


DOCKER_CLUSTER: Final = _kind("DockerCluster", _docker_cluster_steps(), keeps_data=True)
DOCKER_CLUSTER_TEMPLATE: Final = _kind("DockerClusterTemplate", _docker_cluster_template_steps(), keeps_data=False)
DOCKER_MACHINE: Final = _kind("DockerMachine", _docker_machine_steps(), keeps_data=True)
DOCKER_MACHINE_TEMPLATE: Final = _kind("DockerMachineTemplate", _docker_machine_template_steps(), keeps_data=True)
DOCKER_MACHINE_POOL: Final = _kind("DockerMachinePool", _docker_machine_pool_steps(), keeps_data=True)
#: v1beta1 and v1beta2 DockerMachinePoolTemplates are the same: every field is copied
DOCKER_MACHINE_POOL_TEMPLATE: Final = _kind("DockerMachinePoolTemplate", (), keeps_data=False)

CONVERSIONS: tuple[KindConversion, ...] = (
    DOCKER_CLUSTER,
    DOCKER_CLUSTER_TEMPLATE,
    DOCKER_MACHINE,
    DOCKER_MACHINE_TEMPLATE,
    DOCKER_MACHINE_POOL,
    DOCKER_MACHINE_POOL_TEMPLATE,
)
