"""``cluster.x-k8s.io``: v1beta1 ↔ v1beta2 (the hub) for the kinds a topology reads and writes.

Each kind's steps are in spoke → hub order; reversing them is the way down. The patterns repeat across kinds
(and are written once here): the v1beta1 conditions move to ``status.deprecated.v1beta1`` while the v1beta2
ones move up from ``status.v1beta2``; machine deletion timeouts become ``deletion.*Seconds``; a
``machineHealthCheck`` becomes ``healthCheck.{checks, remediation}``; references to provider objects lose their
apiVersion (:data:`~clusterclass.api.conversion.transforms.CONTRACT_REF`).
"""

from __future__ import annotations

from typing import Any, Final

from clusterclass.api.conversion.engine import (
    Context,
    FieldStep,
    KindConversion,
    SpokeConversion,
    Step,
    Transform,
    drop,
    empty,
    move,
    under,
)
from clusterclass.api.conversion.engine import Intent as intent
from clusterclass.api.conversion.transforms import (
    CONTRACT_REF,
    DURATION_SECONDS,
    TEMPLATE_REF,
)

GROUP: Final = "cluster.x-k8s.io"
HUB: Final = "v1beta2"


# --- shared structs ---------------------------------------------------------------------------


def deletion_timeouts() -> list[FieldStep]:
    """``nodeDrainTimeout`` & co. (Durations) → ``deletion.node*TimeoutSeconds``."""
    return [
        move("nodeDrainTimeout", "deletion.nodeDrainTimeoutSeconds", DURATION_SECONDS),
        move("nodeVolumeDetachTimeout", "deletion.nodeVolumeDetachTimeoutSeconds", DURATION_SECONDS),
        move("nodeDeletionTimeout", "deletion.nodeDeletionTimeoutSeconds", DURATION_SECONDS),
    ]


def health_check(*, topology: bool) -> list[FieldStep]:
    """A ``machineHealthCheck`` (class or topology) → ``healthCheck``; a topology's also has ``enable``."""
    steps: list[FieldStep] = []
    if topology:
        steps.append(move("machineHealthCheck.enable", "healthCheck.enabled"))
    steps += [
        move("machineHealthCheck.unhealthyConditions", "healthCheck.checks.unhealthyNodeConditions"),
        move(
            "healthCheck.checks.unhealthyNodeConditions[].timeout",
            "healthCheck.checks.unhealthyNodeConditions[].timeoutSeconds",
            DURATION_SECONDS,
        ),
        move("machineHealthCheck.unhealthyMachineConditions", "healthCheck.checks.unhealthyMachineConditions"),
        move(
            "healthCheck.checks.unhealthyMachineConditions[].timeout",
            "healthCheck.checks.unhealthyMachineConditions[].timeoutSeconds",
            DURATION_SECONDS,
        ),
        move("machineHealthCheck.nodeStartupTimeout", "healthCheck.checks.nodeStartupTimeoutSeconds", DURATION_SECONDS),
        move("machineHealthCheck.maxUnhealthy", "healthCheck.remediation.triggerIf.unhealthyLessThanOrEqualTo"),
        move("machineHealthCheck.unhealthyRange", "healthCheck.remediation.triggerIf.unhealthyInRange"),
        move("machineHealthCheck.remediationTemplate", "healthCheck.remediation.templateRef", TEMPLATE_REF),
        empty("machineHealthCheck", "healthCheck"),
    ]
    return steps


def rollout_strategy() -> list[FieldStep]:
    """A MachineDeployment class or topology ``strategy`` → ``rollout.strategy``, ``deletion.order`` and
    ``healthCheck.remediation.maxInFlight``."""
    return [
        move("strategy.type", "rollout.strategy.type"),
        move("strategy.rollingUpdate.maxUnavailable", "rollout.strategy.rollingUpdate.maxUnavailable"),
        move("strategy.rollingUpdate.maxSurge", "rollout.strategy.rollingUpdate.maxSurge"),
        move("strategy.rollingUpdate.deletePolicy", "deletion.order"),
        move("strategy.remediation.maxInFlight", "healthCheck.remediation.maxInFlight"),
        empty("strategy", "rollout"),
    ]


def legacy_conditions(*, extra: tuple[str, ...] = ()) -> list[FieldStep]:
    """v1beta1's ``status.conditions`` (and ``extra`` legacy fields) → ``status.deprecated.v1beta1``; then
    ``status.v1beta2.conditions`` → ``status.conditions``. The order matters: the legacy ones leave first."""
    steps: list[FieldStep] = [move("status.conditions", "status.deprecated.v1beta1.conditions")]
    steps += [move(f"status.{name}", f"status.deprecated.v1beta1.{name}") for name in extra]
    steps.append(move("status.v1beta2.conditions", "status.conditions"))
    return steps


def _failure_domains_up(value: Any, _ctx: Context, _path: str) -> Any:
    """v1beta1's map ``{name: {controlPlane, attributes}}`` → v1beta2's list sorted by name, each with an explicit
    ``controlPlane`` (upstream always sets the pointer)."""
    if not isinstance(value, dict):
        return value
    domains = []
    for name in sorted(value):
        spec = value[name] if isinstance(value[name], dict) else {}
        domain: dict[str, Any] = {"name": name, "controlPlane": bool(spec.get("controlPlane", False))}
        if "attributes" in spec:
            domain["attributes"] = spec["attributes"]
        domains.append(domain)
    return domains


def _failure_domains_down(value: Any, _ctx: Context, _path: str) -> Any:
    if not isinstance(value, list):
        return value
    domains: dict[str, Any] = {}
    for domain in value:
        if not isinstance(domain, dict) or "name" not in domain:
            continue
        spec: dict[str, Any] = {}
        if domain.get("controlPlane"):
            spec["controlPlane"] = True
        if "attributes" in domain:
            spec["attributes"] = domain["attributes"]
        domains[str(domain["name"])] = spec
    return domains


FAILURE_DOMAINS: Final = Transform(_failure_domains_up, _failure_domains_down)


# --- Cluster ----------------------------------------------------------------------------------


def _cluster_steps() -> tuple[Step, ...]:
    topology = "spec.topology"
    steps: list[Step] = [
        intent("spec.paused"),
        move("spec.controlPlaneRef", "spec.controlPlaneRef", CONTRACT_REF),
        move("spec.infrastructureRef", "spec.infrastructureRef", CONTRACT_REF),
        intent("spec.clusterNetwork.apiServerPort"),
        move(f"{topology}.class", f"{topology}.classRef.name"),
        move(f"{topology}.classNamespace", f"{topology}.classRef.namespace"),
        drop(f"{topology}.rolloutAfter"),
        drop(f"{topology}.variables[].definitionFrom"),
        drop(f"{topology}.controlPlane.variables.overrides[].definitionFrom"),
        *under(f"{topology}.controlPlane", [*deletion_timeouts(), *health_check(topology=True)]),
        *under(
            f"{topology}.workers.machineDeployments[]",
            [
                drop("variables.overrides[].definitionFrom"),
                *rollout_strategy(),
                *deletion_timeouts(),
                *health_check(topology=True),
            ],
        ),
        *under(
            f"{topology}.workers.machinePools[]",
            [drop("variables.overrides[].definitionFrom"), *deletion_timeouts()],
        ),
        *legacy_conditions(extra=("failureReason", "failureMessage")),
        move("status.v1beta2.controlPlane", "status.controlPlane"),
        move("status.v1beta2.workers", "status.workers"),
        move("status.controlPlaneReady", "status.initialization.controlPlaneInitialized", zero_intent=True),
        move("status.infrastructureReady", "status.initialization.infrastructureProvisioned", zero_intent=True),
        move("status.failureDomains", "status.failureDomains", FAILURE_DOMAINS),
    ]
    return tuple(steps)


CLUSTER: Final = KindConversion(GROUP, "Cluster", HUB, {"v1beta1": SpokeConversion("v1beta1", _cluster_steps())})

CONVERSIONS: tuple[KindConversion, ...] = (CLUSTER,)
