"""MachineHealthCheck rules shared by the Cluster and ClusterClass checks (upstream's common MHC fields).

A ``MachineHealthCheckClass`` can be written in a ClusterClass (control plane, MachineDeployment and — as
clusterclass extends upstream's API — MachinePool classes) and overridden in a Cluster's topology; both are held to
the same rules, decided here.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from goduration import Duration, DurationParseError

from clusterclass import fielderrors as fe
from clusterclass.fielderrors import FieldError, quote


def parse_duration(value: Any, path: str, errors: list[FieldError]) -> Duration | None:
    if value is None:
        return None
    if not isinstance(value, str):
        errors.append(fe.wrong_type(path, value, "a duration string"))
        return None
    try:
        return Duration.parse(value)
    except (DurationParseError, ValueError, OverflowError) as err:
        errors.append(fe.invalid(path, value, str(err)))
        return None


def _int_or_percent_error(value: Any) -> str | None:
    """Go's ``intstr.GetScaledValueFromIntOrPercent`` parse errors (an int, or a string ``<int>%``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return None
    if not isinstance(value, str):
        return "invalid value for IntOrString: invalid type: neither int nor percentage"
    if not value.endswith("%"):
        return "invalid value for IntOrString: invalid type: string is not a percentage"
    digits = value[:-1]
    if not re.fullmatch(r"[+-]?[0-9]+", digits):
        reason = "invalid syntax"
    elif not -(2**63) <= int(digits) < 2**63:
        reason = "value out of range"
    else:
        return None
    return (
        f"invalid value for IntOrString: invalid value {quote(value)}: strconv.Atoi: parsing {quote(digits)}: {reason}"
    )


_UNHEALTHY_RANGE = r"^\[[0-9]+-[0-9]+\]$"


def machine_health_check_class_errors(mhc: Any, path: str, namespace: str) -> list[FieldError]:
    """Upstream's MachineHealthCheck common-field rules for a ``MachineHealthCheckClass`` at ``path``."""
    if not isinstance(mhc, Mapping):
        return [fe.wrong_type(path, mhc, "an object")]
    errors: list[FieldError] = []
    timeout_path = fe.child(path, "nodeStartupTimeout")
    timeout = parse_duration(mhc.get("nodeStartupTimeout"), timeout_path, errors)
    if timeout is not None:
        seconds = timeout.total_seconds()
        if seconds != 0 and seconds < 30:
            errors.append(fe.invalid(timeout_path, seconds, "must be at least 30s"))
    max_unhealthy = mhc.get("maxUnhealthy")
    if max_unhealthy is not None:
        problem = _int_or_percent_error(max_unhealthy)
        if problem is not None:
            errors.append(
                fe.invalid(
                    fe.child(path, "maxUnhealthy"), max_unhealthy, f"must be either an int or a percentage: {problem}"
                )
            )
    unhealthy_range = mhc.get("unhealthyRange")
    if unhealthy_range is not None:
        range_path = fe.child(path, "unhealthyRange")
        if not isinstance(unhealthy_range, str):
            errors.append(fe.wrong_type(range_path, unhealthy_range, "a string"))
        elif not re.match(_UNHEALTHY_RANGE, unhealthy_range):
            errors.append(fe.invalid(range_path, unhealthy_range, f"should match '{_UNHEALTHY_RANGE}'"))
    conditions = mhc.get("unhealthyConditions")
    conditions_path = fe.child(path, "unhealthyConditions")
    if conditions is not None and not isinstance(conditions, list):
        errors.append(fe.wrong_type(conditions_path, conditions, "a list"))
    for k, condition in enumerate(conditions if isinstance(conditions, list) else []):
        condition_path = fe.index(conditions_path, k)
        if not isinstance(condition, Mapping):
            errors.append(fe.wrong_type(condition_path, condition, "an object"))
            continue
        for key in ("type", "status", "timeout"):
            value = condition.get(key)
            if value is None:
                errors.append(fe.required(fe.child(condition_path, key)))
            elif key != "timeout" and not isinstance(value, str):
                errors.append(fe.wrong_type(fe.child(condition_path, key), value, "a string"))
        parse_duration(condition.get("timeout"), fe.child(condition_path, "timeout"), errors)
    remediation = mhc.get("remediationTemplate")
    remediation_path = fe.child(path, "remediationTemplate")
    if remediation is not None:
        if not isinstance(remediation, Mapping):
            errors.append(fe.wrong_type(remediation_path, remediation, "an object"))
        else:
            remediation_namespace = remediation.get("namespace")
            if remediation_namespace is not None and not isinstance(remediation_namespace, str):
                errors.append(fe.wrong_type(fe.child(remediation_path, "namespace"), remediation_namespace, "a string"))
            elif (remediation_namespace or "") != namespace:
                errors.append(
                    fe.invalid(
                        fe.child(remediation_path, "namespace"),
                        remediation_namespace or "",
                        "must match metadata.namespace",
                    )
                )
    return errors
