"""What of a Machine template rolls Machines out, and how a Machine's template differs from the one wanted.

The MachineDeployment controller picks its *new* MachineSet by :func:`rollout_template` (labels, annotations, node
timeouts and the references' API versions change in place and never roll); the Machine controller words a
Machine's ``UpToDate`` from :func:`template_differences`, as upstream's ``MachineTemplateUpToDate`` does.
"""

from __future__ import annotations

from typing import Any

from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, dig, group_of
from clusterclass.sim.base import NODE_TIMEOUTS


def _without_version(ref: Any) -> Any:
    if isinstance(ref, dict) and "apiVersion" in ref:
        return {**ref, "apiVersion": group_of(str(ref["apiVersion"]))}
    return ref


def rollout_template(template: Obj) -> Obj:
    """The parts of a Machine template whose change rolls Machines out (module doc)."""
    spec = json_copy(template.get("spec") or {})
    for timeout in NODE_TIMEOUTS:
        spec.pop(timeout, None)
    spec["infrastructureRef"] = _without_version(spec.get("infrastructureRef"))
    bootstrap = spec.get("bootstrap")
    if isinstance(bootstrap, dict) and "configRef" in bootstrap:
        bootstrap["configRef"] = _without_version(bootstrap["configRef"])
    for ref in (spec.get("infrastructureRef"), dig(spec, "bootstrap", "configRef")):
        if isinstance(ref, dict):
            ref.pop("namespace", None)
    return {"spec": spec}


def template_differences(current: Obj, desired: Obj) -> list[str]:
    """Why a Machine stamped from template ``current`` is not up to date with ``desired``, in upstream's words:
    the version, the bootstrap config or data Secret, the infrastructure machine, the failure domain."""
    have, want = rollout_template(current)["spec"], rollout_template(desired)["spec"]
    differences = []
    if have.get("version") != want.get("version"):
        differences.append(f"Version {have.get('version') or ''}, {want.get('version') or ''} required")
    bootstrap_ref = dig(have, "bootstrap", "configRef")
    if have.get("bootstrap") != want.get("bootstrap"):
        if isinstance(bootstrap_ref, dict) and bootstrap_ref:
            differences.append(f"{_stamped(bootstrap_ref)} is not up-to-date")
        else:
            have_secret = dig(have, "bootstrap", "dataSecretName") or "nil"
            want_secret = dig(want, "bootstrap", "dataSecretName") or "nil"
            differences.append(f"spec.bootstrap.dataSecretName {have_secret}, {want_secret} required")
    if have.get("infrastructureRef") != want.get("infrastructureRef"):
        differences.append(f"{_stamped(have.get('infrastructureRef') or {})} is not up-to-date")
    if (have.get("failureDomain") or "") != (want.get("failureDomain") or ""):
        differences.append(
            f"Failure domain {have.get('failureDomain') or ''}, {want.get('failureDomain') or ''} required"
        )
    return differences


def _stamped(ref: Any) -> str:
    kind = str(ref.get("kind") or "") if isinstance(ref, dict) else ""
    return kind.removesuffix("Template")
