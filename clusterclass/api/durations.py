"""``metav1.Duration`` fields as Go writes them: ``5m`` becomes ``5m0s``, ``90s`` becomes ``1m30s``.

A Duration field is a string that Go reads with ``time.ParseDuration`` and writes back with
``Duration.String()``. Upstream never writes the user's spelling: its webhooks decode a Cluster,
ClusterClass or MachinePool into typed structs and answer with the JSON patch back to what the struct
marshals to, and its controller builds desired objects from typed values. So a management cluster
upstream's controller has written holds only the Go form, and ours must write exactly that form too,
or moving from one controller to the other would look like a change to every object with a timeout.

:func:`go_duration` is the one place the form is decided (the ``goduration`` library does Go's
formatting). :data:`DURATION_PATHS` lists the Duration fields of each v1beta1 kind, as upstream's CRDs
have them, and :func:`normalize_durations` rewrites them in place the way a typed round trip does. A
value Go cannot parse is left as it is: validation reports it with its field path.
"""

from __future__ import annotations

from typing import Any

from goduration import Duration, DurationParseError

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj

#: The machine deletion timeouts a control plane, MachineDeployment or MachinePool carries.
MACHINE_TIMEOUT_FIELDS = ("nodeDrainTimeout", "nodeVolumeDetachTimeout", "nodeDeletionTimeout")

#: A field path step that means "every item of this list".
EACH = "[]"

Path = tuple[str, ...]

_HEALTH_CHECK: tuple[Path, ...] = (("nodeStartupTimeout",), ("unhealthyConditions", EACH, "timeout"))


def _under(prefix: Path, fields: tuple[Path, ...]) -> tuple[Path, ...]:
    return tuple((*prefix, *field) for field in fields)


_MACHINE: tuple[Path, ...] = tuple((name,) for name in MACHINE_TIMEOUT_FIELDS)
_MACHINE_AND_HEALTH_CHECK = _MACHINE + _under(("machineHealthCheck",), _HEALTH_CHECK)

#: Every Duration field of the v1beta1 kinds the topology defaults or writes, by kind.
DURATION_PATHS: dict[str, tuple[Path, ...]] = {
    c.KIND_CLUSTER: (
        *_under(("spec", "topology", "controlPlane"), _MACHINE_AND_HEALTH_CHECK),
        *_under(("spec", "topology", "workers", "machineDeployments", EACH), _MACHINE_AND_HEALTH_CHECK),
        *_under(("spec", "topology", "workers", "machinePools", EACH), _MACHINE),
    ),
    c.KIND_CLUSTER_CLASS: (
        *_under(("spec", "controlPlane"), _MACHINE_AND_HEALTH_CHECK),
        *_under(("spec", "workers", "machineDeployments", EACH), _MACHINE_AND_HEALTH_CHECK),
        *_under(("spec", "workers", "machinePools", EACH), _MACHINE),
    ),
    c.KIND_MACHINE_POOL: _under(("spec", "template", "spec"), _MACHINE),
    c.KIND_MACHINE_DEPLOYMENT: _under(("spec", "template", "spec"), _MACHINE),
    c.KIND_MACHINE_HEALTH_CHECK: _under(("spec",), _HEALTH_CHECK),
}


def go_duration(value: Any) -> Any:
    """``value`` as Go's ``Duration.String()`` writes it when Go can parse it; anything else unchanged."""
    if not isinstance(value, str):
        return value
    try:
        return str(Duration.parse(value))
    except (DurationParseError, ValueError, OverflowError):
        return value


def normalize_durations(obj: Obj, paths: tuple[Path, ...]) -> None:
    """Rewrite, in place, every Duration field of ``obj`` at ``paths`` in Go's form."""
    for path in paths:
        _normalize(obj, path)


def _normalize(holder: Any, path: Path) -> None:
    step, rest = path[0], path[1:]
    if step == EACH:
        for item in holder if isinstance(holder, list) else ():
            _normalize(item, rest)
        return
    if not isinstance(holder, dict) or step not in holder:
        return
    if rest:
        _normalize(holder[step], rest)
    else:
        holder[step] = go_duration(holder[step])
