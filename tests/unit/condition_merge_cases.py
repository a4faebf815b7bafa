"""The merge cases :mod:`clusterclass.api.condition_merge` is held to upstream with.

``scripts/condition-merge-golden/regenerate.sh`` feeds these to upstream v1.14's ``util/conditions`` (built from
its Go module) and writes their answers to ``data/condition_merge_golden.json``; ``test_condition_merge.py``
compares ours with them. Add a case here, regenerate, and the test holds it.
"""

from __future__ import annotations

from typing import Any

T0 = "2026-01-01T00:00:00Z"
T1 = "2026-01-01T00:01:00Z"
T2 = "2026-01-01T00:02:00Z"
NOT_PROVISIONED = "DockerMachine status.initialization.provisioned is false"


def cond(type_: str, status: str, reason: str = "R", message: str = "", at: str = T0) -> dict[str, Any]:
    return {"type": type_, "status": status, "reason": reason, "message": message, "lastTransitionTime": at}


def machine(name: str, *conditions: dict[str, Any], kind: str = "Machine", cp: bool = False) -> dict[str, Any]:
    return {"kind": kind, "name": name, "controlPlane": cp, "conditions": list(conditions)}


READY_GATES = ["Deleting", "Updating", "BootstrapConfigReady", "InfrastructureReady", "NodeHealthy"]
READY_REASONS = ["NotReady", "ReadyUnknown", "Ready"]


def summary(objects: dict[str, Any], for_types: list[str], **options: Any) -> dict[str, Any]:
    return {"operation": "summary", "objects": [objects], "targetType": "Ready", "forTypes": for_types, **options}


def aggregate(objects: list[dict[str, Any]], source: str = "Ready", **options: Any) -> dict[str, Any]:
    return {
        "operation": "aggregate",
        "objects": objects,
        "sourceType": source,
        "targetType": "MachinesReady",
        **options,
    }


CASES: list[dict[str, Any]] = [
    # --- summary
    summary(machine("m", cond("A", "True"), cond("B", "True")), ["A", "B"]),
    summary(machine("m", cond("A", "True", message="all good"), cond("B", "True")), ["A", "B"]),
    summary(machine("m", cond("A", "False", "Broken", "it broke"), cond("B", "True", message="fine")), ["A", "B"]),
    summary(machine("m", cond("A", "False", "Broken")), ["A", "B", "C"]),
    summary(machine("m", cond("A", "Unknown", "Who", "no idea"), cond("B", "True")), ["B", "A"]),
    summary(machine("m", cond("A", "True")), ["A", "B"], ignoreIfMissing=["B"]),
    summary(machine("m", cond("A", "False", message="line one\nline two")), ["A"]),
    summary(machine("m", cond("A", "False", message="* Node.Ready: down\n* Node.DiskPressure: full")), ["A"]),
    summary(machine("m", cond("A", "False", message="head\n* bullet")), ["A"]),
    summary(machine("m", cond("A", "False", message="a * b")), ["A"]),
    summary(
        machine(
            "m",
            cond("Deleting", "False", "NotDeleting"),
            cond("Updating", "False", "NotUpdating"),
            cond("BootstrapConfigReady", "True", "Ready"),
            cond("InfrastructureReady", "True", "Ready"),
            cond("NodeHealthy", "True", "NodeHealthy"),
        ),
        READY_GATES,
        negativePolarity=["Deleting", "Updating"],
        reasons=READY_REASONS,
    ),
    summary(
        machine(
            "m",
            cond("Deleting", "True", "DrainingNode", "Draining"),
            cond("Updating", "False", "NotUpdating"),
            cond("BootstrapConfigReady", "True", "Ready"),
            cond("InfrastructureReady", "False", "NotReady", NOT_PROVISIONED),
            cond("NodeHealthy", "Unknown", "InspectionFailed", "Waiting for Cluster control plane to be initialized"),
        ),
        READY_GATES,
        negativePolarity=["Deleting", "Updating"],
        reasons=READY_REASONS,
    ),
    summary(
        machine("m", cond("B", "False", at=T2), cond("A", "False", at=T1), cond("C", "False", at=T0)),
        ["C", "B", "A"],
    ),
    # --- aggregate
    aggregate([machine("m1", cond("Ready", "True"))], reasons=READY_REASONS),
    aggregate([machine("m1", cond("Ready", "True", message="ok"))], reasons=READY_REASONS),
    aggregate([machine("m1", cond("Ready", "True")), machine("m2")], reasons=READY_REASONS),
    aggregate([machine("m1", cond("Ready", "False", message="")), machine("m2", cond("Ready", "True"))]),
    aggregate(
        [
            machine("m1", cond("Ready", "False", message="* NodeHealthy: down")),
            machine("m2", cond("Ready", "False", message="* NodeHealthy: down")),
            machine("m3", cond("Ready", "False", message="* NodeHealthy: down")),
            machine("m4", cond("Ready", "False", message="* NodeHealthy: down")),
        ],
        reasons=READY_REASONS,
    ),
    aggregate(
        [
            machine("w1", cond("Ready", "False", message="one")),
            machine("w2", cond("Ready", "False", message="two")),
            machine("w3", cond("Ready", "False", message="three")),
            machine("w4", cond("Ready", "False", message="four")),
            machine("w5", cond("Ready", "Unknown", message="five")),
            machine("w6", cond("Ready", "Unknown", message="six")),
            machine("w7", cond("Ready", "True", message="fine")),
        ],
        reasons=READY_REASONS,
    ),
    aggregate(
        [
            machine("w1", cond("Ready", "False", message="same")),
            machine("cp1", cond("Ready", "False", message="cp trouble"), cp=True),
            machine("w2", cond("Ready", "False", message="same")),
        ],
    ),
    aggregate(
        [
            machine("a", cond("Ready", "Unknown", message="shared")),
            machine("b", cond("Ready", "False", message="shared")),
            machine("c", cond("Ready", "Unknown", message="alone")),
        ],
    ),
    aggregate(
        [
            machine("md-1", cond("Available", "True"), kind="MachineDeployment"),
            machine(
                "md-2",
                cond("Available", "False", message="1 available replicas, at least 2 required"),
                kind="MachineDeployment",
            ),
            machine("m-1", cond("Available", "False", message="1 available replicas, at least 2 required")),
        ],
        source="Available",
        reasons=["NotAvailable", "AvailableUnknown", "Available"],
    ),
    aggregate(
        [
            machine("x1", cond("Ready", "True", message="info a")),
            machine("x2", cond("Ready", "True", message="info b")),
            machine("x3", cond("Ready", "True", message="info a")),
            machine("x4", cond("Ready", "True", message="info c")),
            machine("x5", cond("Ready", "True", message="info d")),
            machine("x6", cond("Ready", "True")),
        ],
    ),
    aggregate(
        [
            machine("d", cond("Deleting", "True", "Deleting", "being deleted")),
            machine("e", cond("Deleting", "False", "NotDeleting")),
        ],
        source="Deleting",
        negativePolarity=["Deleting"],
    ),
    aggregate(
        [
            machine("m1", cond("Ready", "False", message="first\nsecond")),
            machine("m2", cond("Ready", "False", message="first\nsecond")),
        ],
    ),
]
