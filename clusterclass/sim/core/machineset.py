"""The core MachineSet controller (providers-spec §2.4): keep ``spec.replicas`` Machines, count the ready ones.

A MachineSet owns the Machines its selector matches (adopting orphans), keeps their in-place fields
(labels, annotations, node timeouts) in step with its template, creates missing Machines — cloning
the bootstrap config and infrastructure machine from the template's references first — and deletes
surplus ones in the order of its ``deletePolicy`` (deleting ones first, then those annotated
``cluster.x-k8s.io/delete-machine``, then unhealthy ones; ``Random`` breaks ties by name, ``Oldest`` and
``Newest`` by age). Machines a MachineHealthCheck marked ``OwnerRemediated=False`` are deleted (and replaced once
gone). Its status counts Machines (``replicas``), those whose Node is Ready
(``readyReplicas``) and those Ready for ``minReadySeconds`` (``availableReplicas``).
"""

from __future__ import annotations

import asyncio

from clusterclass.api import constants as c
from clusterclass.api.conditions import aggregate, false, find, set_conditions, summary, true
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, annotations_of, dig, labels_of, name_of, namespace_of
from clusterclass.kube.outcome import OutcomeUnknown
from clusterclass.sim import conditions as v1beta2
from clusterclass.sim.base import (
    ProviderController,
    delete_if_present,
    deleting,
    ensure_owner,
    owned_or_orphans,
    owner_reference,
    set_label,
    set_v1beta2_counters,
)
from clusterclass.sim.cloning import clone_from_template
from clusterclass.sim.conditions import parse_time
from clusterclass.sim.core.machine import FINALIZER as MACHINE_FINALIZER
from clusterclass.sim.core.machine import node_ready_since
from clusterclass.sim.core.machinehealthcheck import remediate

LABEL_SET_NAME = c.LABEL_MACHINE_SET_NAME
ANNOTATION_DELETE_MACHINE = "cluster.x-k8s.io/delete-machine"
ANNOTATION_DISABLE_MACHINE_CREATE = "cluster.x-k8s.io/disable-machine-create"
#: how long a write waits for its objects to show in the cache (upstream: 100 ms steps, 10 s)
CACHE_WAIT = 10.0

MACHINES_CREATED = "MachinesCreated"
RESIZED = "Resized"
MACHINES_READY = "MachinesReady"


def selector_labels(obj: Obj) -> dict[str, str]:
    return dict(dig(obj, "spec", "selector", "matchLabels") or {})


def is_unhealthy(machine: Obj) -> bool:
    status = machine.get("status") or {}
    if not status.get("nodeRef") or status.get("failureReason") or status.get("failureMessage"):
        return True
    health = find(machine, "NodeHealthy")
    return health is not None and health.get("status") != "True"


def deletion_order(machines: list[Obj], policy: str | None) -> list[Obj]:
    """``machines`` in the order a scale down takes them (module doc)."""

    def priority(machine: Obj) -> int:
        if deleting(machine):
            return 100
        if ANNOTATION_DELETE_MACHINE in annotations_of(machine):
            return 50 if policy in (None, "", "Random") else 75
        if is_unhealthy(machine):
            return 50
        return 20

    def created(machine: Obj) -> str:
        return str(dig(machine, "metadata", "creationTimestamp") or "")

    if policy == "Oldest":
        return sorted(machines, key=lambda m: (-priority(m), created(m), name_of(m)))
    if policy == "Newest":
        newest = sorted(machines, key=lambda m: (created(m), name_of(m)), reverse=True)
        return sorted(newest, key=lambda m: -priority(m))
    return sorted(machines, key=lambda m: (-priority(m), name_of(m)))


class MachineSetController(ProviderController):
    name = "machineset-controller"
    api_version = c.CLUSTER_API_VERSION
    kind = c.KIND_MACHINE_SET

    async def setup_watches(self) -> None:
        self.machines = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE, self.through_controller)
        await self.watch_clusters()

    async def reconcile(self, current: Obj) -> float | None:
        namespace = namespace_of(current)
        cluster_name = str(dig(current, "spec", "clusterName") or "")
        cluster = await self.cluster(namespace, cluster_name)
        if cluster is None or await self.pause(current, cluster):
            return None
        machine_set = json_copy(current)
        set_label(machine_set, c.LABEL_CLUSTER_NAME, cluster_name)
        if c.LABEL_MACHINE_DEPLOYMENT_NAME not in labels_of(machine_set):
            ensure_owner(machine_set, cluster)
        if deleting(machine_set):
            return None
        machines = await self._machines(machine_set)
        await self._sync_in_place(machine_set, machines)
        await remediate(self, machine_set, machines)  # the count stays: a deleting Machine is replaced once gone
        spec = machine_set["spec"]
        desired = int(spec.get("replicas", 1))
        diff = len(machines) - desired
        now = self.context.now()
        if diff < 0 and ANNOTATION_DISABLE_MACHINE_CREATE not in annotations_of(machine_set):
            machines += await self._create(machine_set, cluster, -diff)
        elif diff > 0:
            await self._scale_down(machine_set, machines, diff)
        self._status(machine_set, machines, desired, now)
        written = await self.write(current, machine_set)
        status = written.get("status") or {}
        ready, available = int(status.get("readyReplicas") or 0), int(status.get("availableReplicas") or 0)
        min_ready = int(spec.get("minReadySeconds") or 0)
        if ready == desired and available != desired and min_ready:
            return float(min_ready)
        if ready != desired:
            return self.timing.requeue(15)
        return None

    async def _machines(self, machine_set: Obj) -> list[Obj]:
        """The Machines it owns: matching its selector and not controlled by another, orphans adopted."""
        owned, orphans = owned_or_orphans(self.machines, machine_set, selector_labels(machine_set))
        for machine in orphans:
            if deleting(machine):
                continue
            adopted = json_copy(machine)
            ensure_owner(adopted, machine_set, controller=True)
            owned.append(await self.write(machine, adopted))
        return owned

    def _in_place(self, machine_set: Obj) -> tuple[dict[str, str], dict[str, str]]:
        template_meta = dig(machine_set, "spec", "template", "metadata") or {}
        labels = {**(template_meta.get("labels") or {}), LABEL_SET_NAME: name_of(machine_set)}
        deployment = labels_of(machine_set).get(c.LABEL_MACHINE_DEPLOYMENT_NAME)
        if deployment:
            labels[c.LABEL_MACHINE_DEPLOYMENT_NAME] = deployment
        return labels, dict(template_meta.get("annotations") or {})

    async def _sync_in_place(self, machine_set: Obj, machines: list[Obj]) -> None:
        """Template labels, annotations and node timeouts onto the Machines (and their infra and bootstrap)."""
        labels, annotations = self._in_place(machine_set)
        template_spec = dig(machine_set, "spec", "template", "spec") or {}
        await self.sync_machines_in_place(machines, labels, annotations, template_spec)

    async def _create(self, machine_set: Obj, cluster: Obj, count: int) -> list[Obj]:
        namespace = namespace_of(machine_set)
        spec = machine_set["spec"]["template"]["spec"]
        labels, annotations = self._in_place(machine_set)
        labels[c.LABEL_CLUSTER_NAME] = name_of(cluster)
        owner = owner_reference(machine_set)
        created = []
        for _ in range(count):
            machine_spec = json_copy(spec)
            bootstrap_ref = dig(spec, "bootstrap", "configRef")
            made: list[Obj] = []
            try:
                if bootstrap_ref:
                    config = await self._clone(bootstrap_ref, namespace, cluster, labels, annotations, owner)
                    made.append(config)
                    machine_spec["bootstrap"]["configRef"] = self._ref(config)
                infra = await self._clone(spec.get("infrastructureRef"), namespace, cluster, labels, annotations, owner)
                made.append(infra)
                machine_spec["infrastructureRef"] = self._ref(infra)
                machine = await self.create(
                    {
                        "apiVersion": c.CLUSTER_API_VERSION,
                        "kind": c.KIND_MACHINE,
                        "metadata": {
                            "name": f"{name_of(machine_set)}-{self.context.suffix()}",
                            "namespace": namespace,
                            "labels": labels,
                            "annotations": annotations,
                            "finalizers": [MACHINE_FINALIZER],
                            "ownerReferences": [owner_reference(machine_set, controller=True)],
                        },
                        "spec": machine_spec,
                    }
                )
            except Exception as err:
                if not isinstance(err, OutcomeUnknown):  # else the Machine may exist: what it references stays
                    for obj in made:
                        await delete_if_present(
                            self.manager.client, obj["apiVersion"], obj["kind"], name_of(obj), namespace
                        )
                reason = "MachineCreationFailed" if len(made) == (2 if bootstrap_ref else 1) else (
                    "InfrastructureTemplateCloningFailed" if len(made) == (1 if bootstrap_ref else 0) else
                    "BootstrapTemplateCloningFailed"
                )  # fmt: skip
                set_conditions(machine_set, [false(MACHINES_CREATED, reason, "Error", str(err))], self.context.now())
                self.events.warning(machine_set, "FailedCreate", f"Failed to create machine: {err}")
                break
            self.events.normal(machine_set, "SuccessfulCreate", f"Created machine {name_of(machine)}")
            created.append(machine)
        await self._wait_visible(created)
        return created

    async def _clone(
        self, ref: Obj, namespace: str, cluster: Obj, labels: dict[str, str], annotations: dict[str, str], owner: Obj
    ) -> Obj:
        template = await self.get_ref(ref, namespace, lambda _obj: [])
        if template is None:
            raise LookupError(f"{ref.get('kind')} {namespace}/{ref.get('name')} not found")
        clone = clone_from_template(
            template,
            name=f"{name_of(template)}-{self.context.suffix()}",
            cluster_name=name_of(cluster),
            labels=labels,
            annotations=annotations,
            owner=owner,
        )
        return await self.create(clone)

    @staticmethod
    def _ref(obj: Obj) -> Obj:
        return {
            "apiVersion": obj["apiVersion"],
            "kind": obj["kind"],
            "name": name_of(obj),
            "namespace": namespace_of(obj),
        }

    def _v1beta2(self, machine_set: Obj, machines: list[Obj], desired: int, now: str) -> None:
        """v1.14's counters (by the Machines' v1beta2 Ready, Available and UpToDate) and conditions."""
        ready, available, up_to_date = v1beta2.counters(machines)
        set_v1beta2_counters(machine_set["status"], ready=ready, available=available, up_to_date=up_to_date)
        settled = v1beta2.settled_for_up_to_date(machines, self.context.wall())
        v1beta2.set_v1beta2(
            machine_set,
            [
                *v1beta2.scaling_conditions(len(machines), desired),
                v1beta2.machines_condition(machines, v1beta2.READY, v1beta2.MACHINES_READY, v1beta2.READY_REASONS),
                v1beta2.machines_condition(
                    settled, v1beta2.UP_TO_DATE, v1beta2.MACHINES_UP_TO_DATE, v1beta2.UP_TO_DATE_REASONS
                ),
                v1beta2.deleting_condition(machine_set),
                v1beta2.paused_condition(machine_set, None),
            ],
            now,
        )

    async def _wait_visible(self, created: list[Obj]) -> None:
        try:
            async with asyncio.timeout(CACHE_WAIT):
                while any(self.machines.get(name_of(m), namespace_of(m)) is None for m in created):
                    await asyncio.sleep(0.005)
        except TimeoutError:
            pass

    async def _scale_down(self, machine_set: Obj, machines: list[Obj], count: int) -> None:
        policy = dig(machine_set, "spec", "deletePolicy")
        for machine in deletion_order(machines, policy)[:count]:
            if deleting(machine):
                continue
            if await delete_if_present(
                self.manager.client, c.CLUSTER_API_VERSION, c.KIND_MACHINE, name_of(machine), namespace_of(machine)
            ):
                self.events.normal(machine_set, "SuccessfulDelete", f"Deleted machine {name_of(machine)}")

    def _status(self, machine_set: Obj, machines: list[Obj], desired: int, now: str) -> None:
        status = machine_set.setdefault("status", {})
        template_labels = dig(machine_set, "spec", "template", "metadata", "labels") or {}
        min_ready = int(dig(machine_set, "spec", "minReadySeconds") or 0)
        ready = available = labelled = 0
        moment = self.context.wall()
        for machine in machines:
            if all(labels_of(machine).get(k) == v for k, v in template_labels.items()):
                labelled += 1
            node_ref = dig(machine, "status", "nodeRef")
            if not node_ref:
                continue
            workload = self.context.workloads.get(namespace_of(machine), str(dig(machine, "spec", "clusterName")))
            node = workload.node(str(node_ref.get("name"))) if workload is not None else None
            since = parse_time(node_ready_since(node))
            if since is None:
                continue
            ready += 1
            if min_ready == 0 or (moment - since).total_seconds() >= min_ready:
                available += 1
        status.update(
            {
                "replicas": len(machines),
                "fullyLabeledReplicas": labelled,
                "readyReplicas": ready,
                "availableReplicas": available,
                "selector": ",".join(f"{k}={v}" for k, v in sorted(selector_labels(machine_set).items())),
                "observedGeneration": dig(machine_set, "metadata", "generation"),
            }
        )
        self._v1beta2(machine_set, machines, desired, now)
        changes = []
        if len(machines) < desired:
            changes.append(
                false(
                    RESIZED,
                    "ScalingUp",
                    "Warning",
                    f"Scaling up MachineSet to {desired} replicas (actual {len(machines)})",
                )
            )
        elif len(machines) > desired:
            changes.append(
                false(
                    RESIZED,
                    "ScalingDown",
                    "Warning",
                    f"Scaling down MachineSet to {desired} replicas (actual {len(machines)})",
                )
            )
            changes.append(true(MACHINES_CREATED))
        else:
            changes.append(true(MACHINES_CREATED))
            if ready == len(machines):
                changes.append(true(RESIZED))
        set_conditions(machine_set, changes, now)
        set_conditions(machine_set, [aggregate(machines, MACHINES_READY)], now)
        set_conditions(machine_set, [summary(machine_set, [MACHINES_CREATED, RESIZED, MACHINES_READY])], now)
