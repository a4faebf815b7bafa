"""``infrastructure.cluster.x-k8s.io``: the Docker provider's kinds, v1beta1 ↔ v1beta2 (the hub).

Upstream's rules are in ``test/infrastructure/docker/api/v1beta1/conversion.go`` (ConvertTo/ConvertFrom on the
spoke types, with the conversion-data annotation for the kinds whose hub holds what v1beta1 cannot). Each kind's
steps are in spoke → hub order; reversing them is the way down. What differs is small and repeats:

- the status of a DockerCluster and a DockerMachine changed as the Cluster's did: v1beta1 conditions move to
  ``status.deprecated.v1beta1`` while the v1beta2 ones move up from ``status.v1beta2``, and ``status.ready``
  becomes ``status.initialization.provisioned`` (a ``*bool``, so an explicit ``false`` needs the annotation);
- failure domains, in the DockerCluster's spec and status, are a map in v1beta1 and a list in v1beta2;
- a few fields became values the hub writes with ``omitempty`` (``providerID`` was a ``*string``; the control
  plane endpoint's ``host`` and ``port`` were always written): their zero is left out (:data:`OMIT_ZERO`,
  :func:`~clusterclass.api.conversion.engine.omit_empty`), as is a template's empty ``metadata``;
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
    omit_empty,
    spoke_default,
    under,
)
from clusterclass.api.conversion.transforms import omit_zero

GROUP: Final = "infrastructure.cluster.x-k8s.io"
HUB: Final = "v1beta2"
SPOKE: Final = "v1beta1"


# --- shared structs ----------------------------------------------------------------------------

#: What a ``DockerClusterSpec`` leaves out when empty: v1beta1 always writes ``controlPlaneEndpoint`` with its
#: ``host`` and ``port``; v1beta2 leaves out an unset endpoint (``omitzero``, and its schema wants ``host`` and
#: ``port`` non-empty when given).
CLUSTER_SPEC_OMIT_EMPTY: Final = ("controlPlaneEndpoint.host", "controlPlaneEndpoint.port", "controlPlaneEndpoint")


def cluster_spec() -> list[FieldStep]:
    """A ``DockerClusterSpec`` (a DockerCluster's ``spec``, a DockerClusterTemplate's ``spec.template.spec``):
    failure domains become a list sorted by name, each with an explicit ``controlPlane``; the endpoint's zeros
    are left out (:data:`CLUSTER_SPEC_OMIT_EMPTY`)."""
    return [
        move("failureDomains", "failureDomains", FAILURE_DOMAINS),
        *omit_empty(*CLUSTER_SPEC_OMIT_EMPTY),
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


#: v1beta1's template resources always carry a ``spec`` (Go writes the struct); the hub's may leave it out. First in
#: a table, so that it runs last on the way down.
TEMPLATE_SPEC: Final = spoke_default("spec.template.spec", {})


def _docker_cluster_template_steps() -> tuple[Step, ...]:
    return (TEMPLATE_SPEC, *under("spec.template.spec", cluster_spec()), *omit_empty("spec.template.metadata"))


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
        TEMPLATE_SPEC,
        *under("spec.template.spec", machine_spec()),
        # v1beta2 added a status (``capacity``, for autoscaling from zero); upstream restores all of it
        hub_only("status"),
        *omit_empty("spec.template.metadata"),
    )


def _docker_machine_pool_steps() -> tuple[Step, ...]:
    """The DockerMachinePool's v1beta1 had only the legacy conditions (no ``status.v1beta2``): they become the
    deprecated ones, and the hub's ``status.conditions`` are dropped on the way down and restored from the
    annotation on the way up. Everything else — ``status.ready``, ``instances``, ``providerIDList`` — is the same
    in both versions. An empty ``status.deprecated`` (or ``deprecated.v1beta1``) of the hub has no v1beta1 place
    either: it is left out coming down."""
    return (
        empty(None, "status.deprecated"),  # first: coming down it runs after the moves out of it
        move("status.conditions", "status.deprecated.v1beta1.conditions"),
        empty(None, "status.deprecated.v1beta1"),
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
#: v1beta1 and v1beta2 DockerMachinePoolTemplates are the same but for the empty ``metadata`` v1beta2 leaves out
DOCKER_MACHINE_POOL_TEMPLATE: Final = _kind(
    "DockerMachinePoolTemplate", (TEMPLATE_SPEC, *omit_empty("spec.template.metadata")), keeps_data=False
)

CONVERSIONS: tuple[KindConversion, ...] = (
    DOCKER_CLUSTER,
    DOCKER_CLUSTER_TEMPLATE,
    DOCKER_MACHINE,
    DOCKER_MACHINE_TEMPLATE,
    DOCKER_MACHINE_POOL,
    DOCKER_MACHINE_POOL_TEMPLATE,
)
