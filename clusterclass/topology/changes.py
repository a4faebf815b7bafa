"""The changes a reconcile makes to go from current to desired state (spec §3), as data, offline.

:func:`compute_changes` runs the reconcile's steps (:mod:`clusterclass.topology.reconcile`, where every
decision is made) with answers that need no API server, and returns the :class:`Change` records the
reconcile would perform: what ``plan`` prints.

Whether an object changed is decided by a :class:`Differ`. :class:`TwoWayMerge` is the offline one, as
upstream's plan uses a two-way merge patch helper: the desired intent (labels, annotations and spec; for
the Cluster its two labels and two refs) is merged over the current object and compared, which sees every
change of a field the topology sets but not ownership changes. The controller detects changes by
server-side-apply dry run instead (:mod:`clusterclass.controllers.topology.structuredmerge`).
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, dig
from clusterclass.topology.desired import Computation
from clusterclass.topology.reconcile import (
    Create,
    Diff,
    DiffResult,
    EnsureShim,
    LiveLeftovers,
    LiveTopologyNames,
    Path,
    Paths,
    Step,
    Update,
    drive,
    reconcile_steps,
)

Action = Literal["create", "update", "delete"]


@dataclass
class Change:
    """One create, update or delete. Read-only: ``after`` shares unchanged parts with ``before``."""

    action: Action
    #: the object as it is (update, delete)
    before: Obj | None
    #: the object as it will be (create: the intent sent; update: current with the intent applied)
    after: Obj | None
    note: str = ""

    @property
    def object(self) -> Obj:
        obj = self.after if self.after is not None else self.before
        assert obj is not None
        return obj


def merge(base: Any, patch: Any) -> Any:
    """``patch`` laid over ``base``: maps merge key by key, anything else replaces.

    Unlike an RFC 7386 merge patch, a null in ``patch`` is a value to set, not a deletion: the
    intent is desired content, and a patch may well set a field to null.
    """
    if not isinstance(base, dict) or not isinstance(patch, dict):
        return copy.deepcopy(patch)
    merged = dict(base)
    for key, value in patch.items():
        merged[key] = merge(base.get(key), value)
    return merged


# --- intents: the part of a desired object the topology owns -------------------------------------


def update_intent(desired: Obj, ignore: Paths = ()) -> Obj:
    """Labels, annotations and spec of ``desired`` (what the topology sets on an existing object)."""
    intent: Obj = {}
    metadata = {k: desired["metadata"][k] for k in ("labels", "annotations") if desired["metadata"].get(k)}
    if metadata:
        intent["metadata"] = metadata
    if "spec" in desired:
        intent["spec"] = desired["spec"]  # not copied: ``merge`` copies what it takes
    if ignore:
        intent = copy.deepcopy(intent)  # removing ignored fields must not touch the desired object
        for path in ignore:
            remove_path(intent, path)
    return intent


def cluster_intent(desired_cluster: Obj) -> Obj:
    """The Cluster fields the topology owns: two labels, the upgrade-step annotation while it upgrades, and the two
    refs (an upgrade-step annotation the intent lacks is removed: :func:`without_stale_upgrade_step`)."""
    labels = dig(desired_cluster, "metadata", "labels") or {}
    metadata: Obj = {"labels": {k: labels[k] for k in (c.LABEL_CLUSTER_NAME, c.LABEL_TOPOLOGY_OWNED) if k in labels}}
    step = (dig(desired_cluster, "metadata", "annotations") or {}).get(c.ANNOTATION_UPGRADE_STEP)
    if step is not None:
        metadata["annotations"] = {c.ANNOTATION_UPGRADE_STEP: step}
    return {
        "metadata": metadata,
        "spec": {k: desired_cluster["spec"][k] for k in ("infrastructureRef", "controlPlaneRef")},
    }


def without_stale_upgrade_step(cluster: Obj, intent: Obj) -> Obj:
    """``cluster`` without an upgrade-step annotation ``intent`` no longer sets (the upgrade is over)."""
    if c.ANNOTATION_UPGRADE_STEP in (dig(intent, "metadata", "annotations") or {}):
        return cluster
    if c.ANNOTATION_UPGRADE_STEP not in (dig(cluster, "metadata", "annotations") or {}):
        return cluster
    cleaned = copy.deepcopy(cluster)
    remove_path(cleaned, ("metadata", "annotations", c.ANNOTATION_UPGRADE_STEP))
    return cleaned


def remove_path(obj: Obj, path: Path) -> None:
    """Remove the field at ``path`` from ``obj`` in place, and the maps its removal leaves empty."""
    parents = [obj]
    for step in path[:-1]:
        child = parents[-1].get(step)
        if not isinstance(child, dict):
            return
        parents.append(child)
    if path[-1] not in parents[-1]:
        return  # nothing removed: a map that was empty already stays, as upstream's filter keeps it
    del parents[-1][path[-1]]
    for depth in range(len(parents) - 1, 0, -1):  # prune maps left empty
        if not parents[depth]:
            parents[depth - 1].pop(path[depth - 1], None)


class TwoWayMerge:
    """The offline :class:`Differ`: merge the intent over the current object and compare."""

    def diff(self, current: Obj, desired: Obj, ignore: Paths = (), *, cluster: bool = False) -> DiffResult:
        intent = cluster_intent(desired) if cluster else update_intent(desired, ignore)
        # ``merge`` copies what the intent sets and shares the rest with ``current``: changes are
        # read-only records, so the sharing is safe and saves copying every object.
        after = merge(current, intent)
        if cluster:
            after = without_stale_upgrade_step(after, intent)
        return DiffResult(
            after=after,
            has_changes=after != current,
            has_spec_changes=after.get("spec") != current.get("spec"),
        )


class Differ(Protocol):
    def diff(self, current: Obj, desired: Obj, ignore: Paths = (), *, cluster: bool = False) -> DiffResult:
        """What ``current`` becomes when the topology-owned fields of ``desired`` are applied."""
        ...


def compute_changes(
    computation: Computation, *, differ: Differ | None = None, rng: random.Random | None = None
) -> list[Change]:
    """Every create, update and delete a reconcile of ``computation`` performs, in order."""
    differ = differ or TwoWayMerge()
    changes: list[Change] = []

    def answer(step: Step) -> Any:
        if isinstance(step, Diff):
            return differ.diff(step.current, step.desired, step.ignore, cluster=step.cluster)
        if isinstance(step, LiveTopologyNames):
            return set(computation.current.workers(step.kind))  # offline, the current state is all there is
        if isinstance(step, LiveLeftovers):
            return []  # offline, nothing was left by an attempt that died
        if isinstance(step, EnsureShim | Create):
            changes.append(Change("create", None, step.obj, step.note))
            return step.obj
        if isinstance(step, Update):
            changes.append(Change("update", step.current, step.diff.after, step.note))
            return None
        changes.append(Change("delete", step.obj, None, step.note))
        return None

    drive(reconcile_steps(computation, rng or random.Random()), answer)
    return changes
