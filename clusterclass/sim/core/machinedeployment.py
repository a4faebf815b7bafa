"""The core MachineDeployment controller (providers-spec §2.3): rolling updates over MachineSets.

A MachineDeployment owns the MachineSets its selector matches. The *new* MachineSet is the one whose
template equals the MachineDeployment's, ignoring what can change in place (labels, annotations,
node timeouts and the version in the references' apiVersion); when none matches — the version, a
bootstrap or infrastructure template reference, the failure domain changed — a new MachineSet is
created (``<name>-<suffix>`` with the ``machine-template-hash`` label) and the rollout moves Machines
over: the new one grows while the total stays within ``replicas + maxSurge``, old ones shrink while
``replicas - maxUnavailable`` stay available. With the defaults (surge 1, unavailable 0) that is one
new Machine at a time, each old one removed only once a new one is available. When the rollout is
complete, old MachineSets beyond ``revisionHistoryLimit`` are deleted.

Defaults the upstream webhook would write (replicas 1, surge 1, unavailable 0, history 1) are
applied when reading; nothing is written for them.
"""

from __future__ import annotations

import asyncio
import json
import math
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.conditions import MetaCondition, false, set_conditions, summary, true
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, annotations_of, dig, labels_of, name_of, namespace_of
from clusterclass.kube.indexes import LABEL_INDEX
from clusterclass.sim import conditions as v1beta2
from clusterclass.sim.base import (
    ProviderController,
    copy_node_timeouts,
    delete_if_present,
    deleting,
    ensure_owner,
    has_owner,
    owned_or_orphans,
    owner_reference,
    set_label,
    set_v1beta2_counters,
)
from clusterclass.sim.core.machineset import selector_labels
from clusterclass.sim.core.rollout import rollout_template

LABEL_TEMPLATE_HASH = "machine-template-hash"
ANNOTATION_REVISION = "machinedeployment.clusters.x-k8s.io/revision"
ANNOTATION_DESIRED_REPLICAS = "machinedeployment.clusters.x-k8s.io/desired-replicas"
ANNOTATION_MAX_REPLICAS = "machinedeployment.clusters.x-k8s.io/max-replicas"
ANNOTATION_REVISION_HISTORY = "machinedeployment.clusters.x-k8s.io/revision-history"
#: MachineDeployment annotations not copied onto its MachineSets
NOT_COPIED = (c.ANNOTATION_LAST_APPLIED, ANNOTATION_REVISION, ANNOTATION_REVISION_HISTORY)
AVAILABLE = "Available"
NAME_PREFIX_LIMIT = 58
CACHE_WAIT = 10.0


def _int_or_percent(value: Any, total: int, *, round_up: bool) -> int:
    if isinstance(value, str) and value.endswith("%"):
        fraction = float(value[:-1]) * total / 100
        return math.ceil(fraction) if round_up else math.floor(fraction)
    return int(value)


def surge_and_unavailable(deployment: Obj, replicas: int) -> tuple[int, int]:
    """``maxSurge`` and ``maxUnavailable`` resolved against ``replicas`` (both 0: unavailable 1)."""
    rolling = dig(deployment, "spec", "strategy", "rollingUpdate") or {}
    surge = _int_or_percent(rolling.get("maxSurge", 1), replicas, round_up=True)
    unavailable = _int_or_percent(rolling.get("maxUnavailable", 0), replicas, round_up=False)
    if surge == 0 and unavailable == 0:
        unavailable = 1
    return surge, unavailable


def template_hash(template: Obj) -> int:
    """A 32-bit FNV-1a hash of the rollout fields, as a decimal (the ``machine-template-hash`` prefix)."""
    data = json.dumps(rollout_template(template), sort_keys=True, separators=(",", ":")).encode()
    value = 0x811C9DC5
    for byte in data:
        value ^= byte
        value = (value * 0x01000193) & 0xFFFFFFFF
    return value


def revision_of(obj: Obj) -> int:
    try:
        return int(annotations_of(obj).get(ANNOTATION_REVISION, "0"))
    except ValueError:
        return 0


def _age(obj: Obj) -> tuple[str, str]:
    return (str(dig(obj, "metadata", "creationTimestamp") or ""), name_of(obj))


def _spec_replicas(obj: Obj) -> int:
    return int(dig(obj, "spec", "replicas") or 0)


def _available(obj: Obj) -> int:
    return int(dig(obj, "status", "availableReplicas") or 0)


class MachineDeploymentController(ProviderController):
    name = "machinedeployment-controller"
    api_version = c.CLUSTER_API_VERSION
    kind = c.KIND_MACHINE_DEPLOYMENT

    async def setup_watches(self) -> None:
        self.machine_sets = await self.watched_informer(
            c.CLUSTER_API_VERSION, c.KIND_MACHINE_SET, self.through_controller
        )
        self.machines = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE, self._deployment_of)
        await self.watch_clusters()

    async def reconcile(self, current: Obj) -> float | None:
        namespace = namespace_of(current)
        cluster_name = str(dig(current, "spec", "clusterName") or "")
        cluster = await self.cluster(namespace, cluster_name)
        if cluster is None or await self.pause(current, cluster) or deleting(current):
            return None
        deployment = json_copy(current)
        set_label(deployment, c.LABEL_CLUSTER_NAME, cluster_name)
        ensure_owner(deployment, cluster)
        await self._own_templates(deployment, cluster)
        machine_sets = await self._machine_sets(deployment)
        replicas = int(dig(deployment, "spec", "replicas") if dig(deployment, "spec", "replicas") is not None else 1)
        surge, unavailable = surge_and_unavailable(deployment, replicas)
        wanted = rollout_template(deployment["spec"]["template"])
        matching = [ms for ms in machine_sets if rollout_template(ms["spec"]["template"]) == wanted]
        new = max(matching, key=lambda ms: (revision_of(ms), _spec_replicas(ms)), default=None)
        old = sorted((ms for ms in machine_sets if ms is not new), key=_age)
        if new is None and dig(deployment, "spec", "paused"):
            # paused: no new MachineSet for a changed template (upstream syncs without creating one); the newest
            # stands in as the new one for the status
            if not old:
                return None
            new = max(old, key=revision_of)
            old = [ms for ms in old if ms is not new]
        elif new is None:
            new = await self._create(deployment, old, replicas, surge)
            machine_sets.append(new)
        else:
            new = await self._sync(deployment, new, old, replicas, surge)
        if not dig(deployment, "spec", "paused"):
            new, old = await self._roll(new, old, replicas, surge, unavailable)
            await self._cleanup(deployment, new, old, replicas)
        annotations = deployment["metadata"].setdefault("annotations", {})
        annotations[ANNOTATION_REVISION] = annotations_of(new).get(ANNOTATION_REVISION, "1")
        self._status(deployment, new, [new, *old], replicas, unavailable)
        await self.save(current, deployment)
        return None

    @staticmethod
    def _deployment_of(machine: Obj) -> list[str]:
        name = labels_of(machine).get(c.LABEL_MACHINE_DEPLOYMENT_NAME)
        return [f"{namespace_of(machine)}/{name}"] if name else []

    async def _own_templates(self, deployment: Obj, cluster: Obj) -> None:
        spec = dig(deployment, "spec", "template", "spec") or {}
        for ref in (spec.get("infrastructureRef"), dig(spec, "bootstrap", "configRef")):
            template = await self.get_ref(ref, namespace_of(deployment), lambda _obj: [])
            if template is None or has_owner(template, c.KIND_CLUSTER, name_of(cluster)):
                continue
            owned = json_copy(template)
            ensure_owner(owned, cluster)
            await self.save(template, owned)

    async def _machine_sets(self, deployment: Obj) -> list[Obj]:
        """Its MachineSets: controlled by it, or orphans its selector matches (adopted), labelled with its name."""
        owned, orphans = owned_or_orphans(self.machine_sets, deployment, selector_labels(deployment))
        found = []
        for machine_set in [*owned, *orphans]:
            if deleting(machine_set):
                continue
            updated = json_copy(machine_set)
            if machine_set in orphans:
                ensure_owner(updated, deployment, controller=True)
            set_label(updated, c.LABEL_MACHINE_DEPLOYMENT_NAME, name_of(deployment))
            found.append(await self.write(machine_set, updated) if updated != machine_set else machine_set)
        return found

    def _machine_set_annotations(self, deployment: Obj, replicas: int, surge: int, revision: int) -> dict[str, str]:
        copied = {k: v for k, v in annotations_of(deployment).items() if k not in NOT_COPIED}
        return {
            **copied,
            ANNOTATION_REVISION: str(revision),
            ANNOTATION_DESIRED_REPLICAS: str(replicas),
            ANNOTATION_MAX_REPLICAS: str(replicas + surge),
        }

    def _in_place_spec(self, deployment: Obj, machine_set: Obj, hash_label: str) -> None:
        """The fields a MachineDeployment keeps in step on its new MachineSet without a rollout."""
        template = json_copy(deployment["spec"]["template"])
        template.setdefault("metadata", {}).setdefault("labels", {})[LABEL_TEMPLATE_HASH] = hash_label
        spec = machine_set["spec"]
        spec["template"] = {**spec.get("template", {}), "metadata": template["metadata"]}
        template_spec = spec["template"].setdefault("spec", {})
        copy_node_timeouts(template["spec"], template_spec)
        for field in ("minReadySeconds", "deletePolicy"):
            value = dig(deployment, "spec", field)
            if value is not None:
                spec[field] = value
            else:
                spec.pop(field, None)
        labels = {
            **(template["metadata"].get("labels") or {}),
            c.LABEL_MACHINE_DEPLOYMENT_NAME: name_of(deployment),
            c.LABEL_CLUSTER_NAME: str(deployment["spec"]["clusterName"]),
        }
        machine_set["metadata"]["labels"] = {**labels_of(machine_set), **labels}

    async def _create(self, deployment: Obj, old: list[Obj], replicas: int, surge: int) -> Obj:
        suffix = self.context.suffix()
        hash_label = f"{template_hash(deployment['spec']['template'])}-{suffix}"
        total = sum(_spec_replicas(ms) for ms in old)
        start = 0 if total >= replicas + surge else min(replicas + surge - total, replicas)
        if not old:
            start = replicas
        revision = max((revision_of(ms) for ms in old), default=0) + 1
        selector = {**selector_labels(deployment), LABEL_TEMPLATE_HASH: hash_label}
        template = json_copy(deployment["spec"]["template"])
        machine_set: Obj = {
            "apiVersion": c.CLUSTER_API_VERSION,
            "kind": c.KIND_MACHINE_SET,
            "metadata": {
                "name": f"{name_of(deployment)[:NAME_PREFIX_LIMIT]}-{suffix}",
                "namespace": namespace_of(deployment),
                "labels": {},
                "annotations": self._machine_set_annotations(deployment, replicas, surge, revision),
                "ownerReferences": [owner_reference(deployment, controller=True)],
            },
            "spec": {
                "clusterName": deployment["spec"]["clusterName"],
                "replicas": start,
                "selector": {"matchLabels": selector},
                "template": {"spec": template.get("spec") or {}},
            },
        }
        self._in_place_spec(deployment, machine_set, hash_label)
        created = await self.create(machine_set)
        self.events.normal(deployment, "SuccessfulCreate", f"Created MachineSet {name_of(created)}")
        try:  # until the cache has it, so the next reconcile does not make another
            async with asyncio.timeout(CACHE_WAIT):
                while self.machine_sets.get(name_of(created), namespace_of(created)) is None:
                    await asyncio.sleep(0.005)
        except TimeoutError:
            pass
        return created

    async def _sync(self, deployment: Obj, new: Obj, old: list[Obj], replicas: int, surge: int) -> Obj:
        updated = json_copy(new)
        hash_label = (
            labels_of(new).get(LABEL_TEMPLATE_HASH)
            or dig(new, "spec", "selector", "matchLabels", LABEL_TEMPLATE_HASH)
            or ""
        )
        self._in_place_spec(deployment, updated, str(hash_label))
        revision = revision_of(new)
        newest_old = max((revision_of(ms) for ms in old), default=0)
        if revision <= newest_old:
            revision = newest_old + 1
        updated["metadata"]["annotations"] = {
            **annotations_of(new),
            **self._machine_set_annotations(deployment, replicas, surge, revision),
        }
        return await self.write(new, updated) if updated != new else new

    async def _scale(self, machine_set: Obj, replicas: int) -> Obj:
        if _spec_replicas(machine_set) == replicas:
            return machine_set
        scaled = json_copy(machine_set)
        scaled["spec"]["replicas"] = replicas
        written = await self.write(machine_set, scaled)
        verb = "up" if replicas > _spec_replicas(machine_set) else "down"
        self.events.normal(
            machine_set, "SuccessfulScale", f"Scaled {verb} MachineSet {name_of(machine_set)} to {replicas}"
        )
        return written

    async def _roll(
        self, new: Obj, old: list[Obj], replicas: int, surge: int, unavailable: int
    ) -> tuple[Obj, list[Obj]]:
        # 1. the new MachineSet grows within replicas + surge (or shrinks to replicas)
        total = sum(_spec_replicas(ms) for ms in [new, *old])
        if _spec_replicas(new) > replicas:
            new = await self._scale(new, replicas)
        elif total < replicas + surge and _spec_replicas(new) < replicas:
            new = await self._scale(
                new, _spec_replicas(new) + min(replicas + surge - total, replicas - _spec_replicas(new))
            )
        # 2. old MachineSets shrink while replicas - unavailable stay available
        total = sum(_spec_replicas(ms) for ms in [new, *old])
        min_available = replicas - unavailable
        new_unavailable = _spec_replicas(new) - _available(new)
        budget = total - min_available - new_unavailable
        if budget <= 0 or not old:
            return new, old
        cleaned = 0
        for i, machine_set in enumerate(old):
            if cleaned >= budget:
                break
            unhealthy = _spec_replicas(machine_set) - _available(machine_set)
            if unhealthy <= 0:
                continue
            down = min(budget - cleaned, unhealthy)
            old[i] = await self._scale(machine_set, _spec_replicas(machine_set) - down)
            cleaned += down
        available = sum(_available(ms) for ms in [new, *old])
        excess = available - min_available
        for i, machine_set in enumerate(old):
            if excess <= 0:
                break
            if _spec_replicas(machine_set) == 0:
                continue
            down = min(_spec_replicas(machine_set), excess)
            old[i] = await self._scale(machine_set, _spec_replicas(machine_set) - down)
            excess -= down
        return new, old

    async def _cleanup(self, deployment: Obj, new: Obj, old: list[Obj], replicas: int) -> bool:
        """Once the rollout is complete, delete old MachineSets beyond ``revisionHistoryLimit``."""
        status = new.get("status") or {}
        if not (
            status.get("replicas") == replicas == status.get("availableReplicas") and _spec_replicas(new) == replicas
        ):
            return False
        limit = int(
            dig(deployment, "spec", "revisionHistoryLimit")
            if dig(deployment, "spec", "revisionHistoryLimit") is not None
            else 1
        )
        empty = [ms for ms in old if _spec_replicas(ms) == 0 and not dig(ms, "status", "replicas")]
        for machine_set in empty[: max(len(empty) - limit, 0)]:
            await delete_if_present(
                self.manager.client,
                c.CLUSTER_API_VERSION,
                c.KIND_MACHINE_SET,
                name_of(machine_set),
                namespace_of(machine_set),
            )
        return True

    def _status(self, deployment: Obj, new: Obj, machine_sets: list[Obj], replicas: int, unavailable: int) -> None:
        def total(field: str) -> int:
            return sum(int(dig(ms, "status", field) or 0) for ms in machine_sets)

        spec_total = sum(_spec_replicas(ms) for ms in machine_sets)
        available = total("availableReplicas")
        ready = total("readyReplicas")
        status = deployment.setdefault("status", {})
        status.update(
            {
                "replicas": total("replicas"),
                "updatedReplicas": int(dig(new, "status", "replicas") or 0),
                "readyReplicas": ready,
                "availableReplicas": available,
                "unavailableReplicas": max(0, spec_total - available),
                "observedGeneration": dig(deployment, "metadata", "generation"),
                "selector": ",".join(f"{k}={v}" for k, v in sorted(selector_labels(deployment).items())),
            }
        )
        self._v1beta2(deployment, machine_sets, replicas, unavailable)
        phase = ""
        if replicas == ready:
            phase = "Running"
        if replicas > ready:
            phase = "ScalingUp"
        if spec_total < available:
            phase = "ScalingDown"
        if any(dig(ms, "status", "failureReason") or dig(ms, "status", "failureMessage") for ms in machine_sets):
            phase = "Failed"
        if phase:
            status["phase"] = phase
        else:
            status.pop("phase", None)
        minimum = replicas - unavailable
        if available >= minimum:
            condition = true(AVAILABLE)
        else:
            condition = false(
                AVAILABLE,
                "WaitingForAvailableMachines",
                "Warning",
                f"Minimum availability requires {minimum} replicas, current {available} available",
            )
        now = self.context.now()
        set_conditions(deployment, [condition], now)
        set_conditions(deployment, [summary(deployment, [AVAILABLE])], now)

    def _v1beta2(self, deployment: Obj, machine_sets: list[Obj], replicas: int, unavailable: int) -> None:
        """v1.14's counters (its MachineSets' v1beta2 ones summed) and conditions: ``Available`` (at least
        ``replicas - maxUnavailable`` available), scaling, and its Machines' ``Ready`` and ``UpToDate``."""
        status = deployment["status"]

        def total(field: str) -> int:
            return sum(int(dig(ms, "status", "v1beta2", field) or 0) for ms in machine_sets)

        available = total("availableReplicas")
        set_v1beta2_counters(
            status, ready=total("readyReplicas"), available=available, up_to_date=total("upToDateReplicas")
        )
        minimum = replicas - unavailable
        if available >= minimum:
            availability = MetaCondition(v1beta2.AVAILABLE, "True", "Available")
        else:
            configured = dig(deployment, "spec", "strategy", "rollingUpdate", "maxUnavailable")
            message = (
                f"{available} available replicas, at least {minimum} required "
                f"(spec.strategy.rollout.maxUnavailable is {configured if configured is not None else 0}, "
                f"spec.replicas is {replicas})"
            )
            availability = MetaCondition(v1beta2.AVAILABLE, "False", "NotAvailable", message)
        machines = [
            m
            for m in self.machines.by_index(LABEL_INDEX, f"{c.LABEL_MACHINE_DEPLOYMENT_NAME}={name_of(deployment)}")
            if namespace_of(m) == namespace_of(deployment)
        ]
        settled = v1beta2.settled_for_up_to_date(machines, self.context.wall())
        current = sum(int(dig(ms, "status", "replicas") or 0) for ms in machine_sets)
        v1beta2.set_v1beta2(
            deployment,
            [
                availability,
                *v1beta2.scaling_conditions(current, replicas),
                v1beta2.machines_condition(machines, v1beta2.READY, v1beta2.MACHINES_READY, v1beta2.READY_REASONS),
                v1beta2.machines_condition(
                    settled, v1beta2.UP_TO_DATE, v1beta2.MACHINES_UP_TO_DATE, v1beta2.UP_TO_DATE_REASONS
                ),
                v1beta2.deleting_condition(deployment),
                v1beta2.paused_condition(deployment, None),
            ],
            self.context.now(),
        )
