"""Whether a Cluster is up: the checks upstream's end-to-end tests wait for, as one list of what is pending.

``clusterclass up --exit-when-ready``, the end-to-end tests and the scale benchmark all ask the same
question, answered here from a :class:`~clusterclass.describe.objects.ClusterObjects`:

- the Cluster is ``Provisioned`` with ``Ready`` True and, with a topology, ``TopologyReconciled``
  True (the topology controller has nothing left to do);
- the control plane has ``spec.replicas`` replicas, all updated and ready, none unavailable, at
  ``status.version`` = ``spec.version`` (the topology's version, when the Cluster has one);
- every MachineDeployment has ``spec.replicas`` Machines with a nodeRef, all updated and available;
- every MachinePool has ``readyReplicas`` = ``spec.replicas`` (upstream's
  ``WaitForMachinePoolNodesToExist``) and is ``Running``;
- MachineDeployments and MachinePools are at the topology's version.

Each unmet check is one short line naming the object, which is also what ``up`` shows as progress.
"""

from __future__ import annotations

from clusterclass.api import constants as c
from clusterclass.api.conditions import find, is_true
from clusterclass.api.objects import Obj, dig, labels_of, name_of
from clusterclass.describe.objects import ClusterObjects


def _replicas(obj: Obj, default: int = 1) -> int:
    value = dig(obj, "spec", "replicas")
    return int(value) if value is not None else default


def _ready_condition(obj: Obj) -> str:
    ready = find(obj, "Ready")
    if ready is None:
        return "not Ready"
    if ready.get("status") == "True":
        return ""
    reason = ready.get("reason") or ready.get("status")
    message = ready.get("message") or ""
    return f"{reason}: {message}" if message else str(reason)


def pending(objects: ClusterObjects) -> list[str]:
    """What is not yet up (module doc); empty when the Cluster is ready."""
    cluster = objects.cluster
    name = name_of(cluster)
    waiting: list[str] = []
    if dig(cluster, "metadata", "deletionTimestamp"):
        return [f"Cluster {name} is being deleted"]
    topology = dig(cluster, "spec", "topology")
    version = topology.get("version") if isinstance(topology, dict) else None
    phase = dig(cluster, "status", "phase")
    if phase != "Provisioned":
        waiting.append(f"Cluster {name} is {phase or 'Pending'}")
    elif not is_true(cluster, "Ready"):
        waiting.append(f"Cluster {name}: {_ready_condition(cluster)}")
    if isinstance(topology, dict):
        reconciled = find(cluster, "TopologyReconciled")
        if reconciled is None or reconciled.get("status") != "True":
            detail = (reconciled or {}).get("message") or (reconciled or {}).get("reason") or "not reconciled yet"
            waiting.append(f"topology: {detail}")
    control_plane = objects.lookup(dig(cluster, "spec", "controlPlaneRef"))
    if dig(cluster, "spec", "controlPlaneRef"):
        if control_plane is None:
            waiting.append("control plane: not created yet")
        else:
            waiting.extend(_control_plane(control_plane, version))
    for deployment in objects.machine_deployments:
        waiting.extend(_machine_deployment(deployment, objects.machines, version))
    for pool in objects.machine_pools:
        waiting.extend(_machine_pool(pool, version))
    return waiting


def _control_plane(control_plane: Obj, version: str | None) -> list[str]:
    label = f"{control_plane.get('kind')} {name_of(control_plane)}"
    status = control_plane.get("status") or {}
    desired = _replicas(control_plane)
    counts = [status.get(k) for k in ("replicas", "updatedReplicas", "readyReplicas")]
    waiting = []
    if counts != [desired] * 3 or int(status.get("unavailableReplicas") or 0) != 0:
        waiting.append(
            f"{label}: {status.get('readyReplicas') or 0}/{desired} ready, "
            f"{status.get('updatedReplicas') or 0} up to date"
        )
    wanted = version or dig(control_plane, "spec", "version")
    if wanted and status.get("version") != wanted:
        waiting.append(f"{label}: at {status.get('version') or 'no version yet'}, to be {wanted}")
    return waiting


def _machine_deployment(deployment: Obj, machines: list[Obj], version: str | None) -> list[str]:
    label = f"MachineDeployment {labels_of(deployment).get(c.LABEL_DEPLOYMENT_NAME) or name_of(deployment)}"
    desired = _replicas(deployment)
    status = deployment.get("status") or {}
    selector = dig(deployment, "spec", "selector", "matchLabels") or {}
    mine = [m for m in machines if selector and all(labels_of(m).get(k) == v for k, v in selector.items())]
    with_nodes = [m for m in mine if dig(m, "status", "nodeRef")]
    waiting = []
    if (
        len(with_nodes) != desired
        or len(mine) != desired
        or status.get("updatedReplicas") != desired
        or status.get("availableReplicas") != desired
    ):
        waiting.append(
            f"{label}: {len(with_nodes)}/{desired} Machines with a Node, "
            f"{status.get('availableReplicas') or 0} available"
        )
    wanted = version or dig(deployment, "spec", "template", "spec", "version")
    behind = [m for m in mine if dig(m, "spec", "version") != wanted]
    if wanted and (dig(deployment, "spec", "template", "spec", "version") != wanted or behind):
        waiting.append(f"{label}: {len(mine) - len(behind)}/{len(mine)} Machines at {wanted}")
    return waiting


def _machine_pool(pool: Obj, version: str | None) -> list[str]:
    label = f"MachinePool {labels_of(pool).get(c.LABEL_POOL_NAME) or name_of(pool)}"
    desired = _replicas(pool)
    status = pool.get("status") or {}
    waiting = []
    if int(status.get("readyReplicas") or 0) != desired or status.get("phase") != "Running":
        waiting.append(
            f"{label}: {status.get('readyReplicas') or 0}/{desired} ready ({status.get('phase') or 'Pending'})"
        )
    wanted = version or dig(pool, "spec", "template", "spec", "version")
    if wanted and dig(pool, "spec", "template", "spec", "version") != wanted:
        waiting.append(f"{label}: to be {wanted}")
    return waiting
