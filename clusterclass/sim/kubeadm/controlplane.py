"""The KubeadmControlPlane provider (providers-spec §2.7): control-plane Machines, one at a time.

A KCP acts once the Cluster controller owns it and the Cluster's infrastructure is ready. It makes
the Cluster's certificate Secrets and, once the endpoint is known, the ``<cluster>-kubeconfig``
Secret; it creates the first Machine (with the *init* configuration), then — each time every
existing Machine has its Node and healthy control-plane Pods (the preflight checks) — one more
until ``spec.replicas``, or removes one. A Machine whose version, ClusterConfiguration, kubeadm
configuration or infrastructure template (``cloned-from-name``) differs from the KCP's is rolled
out: one new Machine while ``replicas + maxSurge`` allows, then one outdated Machine removed.

The status is what the topology controller reads: ``replicas`` and ``updatedReplicas`` count owned
Machines (deleting ones too), ``readyReplicas`` the Ready control-plane Nodes of the workload
cluster, ``version`` the lowest version among Machines whose kube-apiserver Pod is healthy (never
cleared, so it stays old until the last old Machine is gone), ``initialized`` the presence of the
``kube-system/kubeadm-config`` ConfigMap (sticky), ``ready`` the first Ready control-plane Node.
Per-Machine ``APIServerPodHealthy``, ``ControllerManagerPodHealthy``, ``SchedulerPodHealthy``,
``EtcdPodHealthy`` and ``EtcdMemberHealthy`` come from the static Pods the simulated machines run;
there is no etcd member API, so member health is the etcd Pod's.

Deleting a KCP waits for every worker Machine and MachinePool of the Cluster to be gone, then
deletes all its Machines at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json

from clusterclass.api import constants as c
from clusterclass.api.conditions import (
    Condition,
    MetaCondition,
    aggregate,
    false,
    find,
    is_true,
    set_conditions,
    summary,
    true,
)
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, annotations_of, dig, group_of, labels_of, name_of, namespace_of
from clusterclass.kube.errors import AlreadyExists, NotFound
from clusterclass.kube.indexes import CONTROLLER_INDEX
from clusterclass.kube.outcome import OutcomeUnknown
from clusterclass.sim import conditions as v1beta2
from clusterclass.sim.base import (
    ProviderController,
    add_finalizer,
    controller_of,
    copy_node_timeouts,
    delete_if_present,
    deleting,
    ensure_owner,
    has_owner,
    owner_reference,
    set_v1beta2_counters,
)
from clusterclass.sim.cloning import clone_from_template
from clusterclass.sim.core.machine_conditions import up_to_date
from clusterclass.sim.kubeadm.bootstrap import BOOTSTRAP_API_VERSION, KUBEADM_CONFIG, SECRETS_SELECTOR
from clusterclass.sim.kubeadm.certificates import (
    CERTIFICATES,
    KUBECONFIG_SUFFIX,
    admin_kubeconfig,
    certificate_secret,
    cluster_ca,
    kubeconfig_secret,
)
from clusterclass.sim.kubeadm.controlplane_conditions import control_plane_conditions
from clusterclass.sim.workload import SYSTEM_NAMESPACE, WorkloadCluster

CONTROL_PLANE_API_VERSION = "controlplane.cluster.x-k8s.io/v1beta1"
KUBEADM_CONTROL_PLANE = "KubeadmControlPlane"
FINALIZER = "kubeadm.controlplane.cluster.x-k8s.io"
LABEL_CONTROL_PLANE_NAME = "cluster.x-k8s.io/control-plane-name"
ANNOTATION_CLUSTER_CONFIGURATION = "controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration"
ANNOTATION_DELETE_MACHINE = "cluster.x-k8s.io/delete-machine"
KUBEADM_CONFIG_MAP = "kubeadm-config"

MACHINES_CREATED = "MachinesCreated"
MACHINES_SPEC_UP_TO_DATE = "MachinesSpecUpToDate"
RESIZED = "Resized"
MACHINES_READY = "MachinesReady"
AVAILABLE = "Available"
CERTIFICATES_AVAILABLE = "CertificatesAvailable"
COMPONENTS_HEALTHY = "ControlPlaneComponentsHealthy"
ETCD_CLUSTER_HEALTHY = "EtcdClusterHealthy"
#: the per-Machine conditions KCP writes, with the static Pod each reports on
POD_CONDITIONS: tuple[tuple[str, str], ...] = (
    ("APIServerPodHealthy", "kube-apiserver"),
    ("ControllerManagerPodHealthy", "kube-controller-manager"),
    ("SchedulerPodHealthy", "kube-scheduler"),
    ("EtcdPodHealthy", "etcd"),
)
ETCD_MEMBER_HEALTHY = "EtcdMemberHealthy"
HEALTH_CONDITIONS = (*(name for name, _ in POD_CONDITIONS), ETCD_MEMBER_HEALTHY)


def cluster_configuration_annotation(kcp: Obj) -> str:
    return json.dumps(
        dig(kcp, "spec", "kubeadmConfigSpec", "clusterConfiguration") or {}, sort_keys=True, separators=(",", ":")
    )


def comparable_config(spec: Obj, *, init: bool | None = None) -> Obj:
    """A KubeadmConfig spec as KCP compares a Machine's with its own: without the ClusterConfiguration (kept
    in an annotation), with the init or the join configuration only (``init`` None: as ``spec`` has it),
    and without what the bootstrap provider fills in (the join discovery, the control-plane join marker)."""
    compared = {k: v for k, v in spec.items() if k != "clusterConfiguration"}
    if init is None:
        init = compared.get("initConfiguration") is not None
    if init:
        compared.pop("joinConfiguration", None)
        compared.setdefault("initConfiguration", {})
    else:
        compared.pop("initConfiguration", None)
        join = compared.get("joinConfiguration")
        compared["joinConfiguration"] = (
            {k: v for k, v in join.items() if k not in ("discovery", "controlPlane")} if isinstance(join, dict) else {}
        )
    return compared


def is_ready_node(node: Obj | None) -> bool:
    return node is not None and any(
        x.get("type") == "Ready" and x.get("status") == "True" for x in dig(node, "status", "conditions") or []
    )


def pod_health(type_: str, pod: Obj | None, node: Obj | None, machine: Obj) -> Condition:
    """One ``*PodHealthy`` condition of a control-plane Machine from its static Pod."""
    if deleting(machine):
        return false(type_, "Deleting", "Info")
    if node is None:
        return false(type_, "PodFailed", "Error", "Missing node")
    if pod is None:
        return false(type_, "PodMissing", "Error", "Pod is missing")
    phase = dig(pod, "status", "phase")
    if phase == "Pending":
        return false(type_, "PodProvisioning", "Info", "Waiting to be scheduled")
    if phase == "Failed":
        return false(type_, "PodFailed", "Error", "All the containers have been terminated")
    ready = any(x.get("type") == "Ready" and x.get("status") == "True" for x in dig(pod, "status", "conditions") or [])
    if phase == "Running" and ready:
        return true(type_)
    return false(type_, "PodProvisioning", "Info", "Waiting for startup or readiness probes")


class KubeadmControlPlaneController(ProviderController):
    name = "kubeadmcontrolplane-controller"
    api_version = CONTROL_PLANE_API_VERSION
    kind = KUBEADM_CONTROL_PLANE

    async def setup_watches(self) -> None:
        self.machines = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE, self._of_cluster_object)
        self.pools = await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE_POOL, self._of_cluster_object)
        self.clusters = await self.manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER)
        self.controller.watch(self.clusters, self._of_cluster)
        self.secrets = await self.manager.informer("v1", "Secret", field_selector=SECRETS_SELECTOR)
        self.context.workloads.add_handler("Node", self._workload_changed)
        self.context.workloads.add_handler("Pod", self._workload_changed)

    def _of_cluster(self, cluster: Obj) -> list[str]:
        ref = dig(cluster, "spec", "controlPlaneRef")
        if isinstance(ref, dict) and ref.get("kind") == KUBEADM_CONTROL_PLANE and ref.get("name"):
            return [f"{ref.get('namespace') or namespace_of(cluster)}/{ref['name']}"]
        return []

    def _of_cluster_object(self, obj: Obj) -> list[str]:
        owner = controller_of(obj)
        if owner is not None and owner.get("kind") == KUBEADM_CONTROL_PLANE:
            return [f"{namespace_of(obj)}/{owner.get('name')}"]
        cluster = self.clusters.get(labels_of(obj).get(c.LABEL_CLUSTER_NAME, ""), namespace_of(obj))
        return self._of_cluster(cluster) if cluster is not None and deleting(cluster) else []

    def _workload_changed(self, workload: WorkloadCluster, _obj: Obj) -> None:
        cluster = self.clusters.get(workload.name, workload.namespace)
        if cluster is not None:
            for key in self._of_cluster(cluster):
                self.controller.enqueue(key)

    async def reconcile(self, current: Obj) -> float | None:
        namespace = namespace_of(current)
        owner = next(
            (ref for ref in dig(current, "metadata", "ownerReferences") or [] if ref.get("kind") == c.KIND_CLUSTER),
            None,
        )
        if owner is None:
            return None
        cluster = self.clusters.get(str(owner.get("name")), namespace)
        if cluster is None or await self.pause(current, cluster):
            return None
        kcp = json_copy(current)
        if deleting(kcp):
            return await self._delete(current, kcp, cluster)
        if add_finalizer(kcp, FINALIZER):
            kcp.setdefault("status", {})["observedGeneration"] = dig(kcp, "metadata", "generation")
            await self.save(current, kcp)
            return None
        requeue = await self._steps(kcp, cluster)
        machines = await self._mark_up_to_date(kcp, self._owned_machines(kcp))
        workload = self.context.workloads.get(namespace, name_of(cluster))
        self._status(kcp, machines, workload)
        now = self.context.now()
        v1beta2.set_v1beta2(
            kcp,
            control_plane_conditions(
                kcp, machines, certificates=is_true(kcp, CERTIFICATES_AVAILABLE), now=self.context.wall()
            ),
            now,
        )
        set_conditions(
            kcp,
            [
                summary(
                    kcp,
                    [
                        MACHINES_CREATED,
                        MACHINES_SPEC_UP_TO_DATE,
                        RESIZED,
                        MACHINES_READY,
                        AVAILABLE,
                        CERTIFICATES_AVAILABLE,
                    ],
                )
            ],
            now,
        )
        kcp["status"]["observedGeneration"] = dig(kcp, "metadata", "generation")
        await self.save(current, kcp)
        components = find(kcp, COMPONENTS_HEALTHY)
        if requeue is None and (
            not kcp["status"].get("ready") or (components is not None and components.get("status") == "False")
        ):
            return self.timing.requeue(20)
        return requeue

    async def _mark_up_to_date(self, kcp: Obj, machines: list[Obj]) -> list[Obj]:
        """Each Machine's v1beta2 ``UpToDate`` (KCP's word for its Machines, as upstream's is), written when it
        changes; the Machines as they are then."""
        now = self.context.now()
        marked = []
        for machine in machines:
            updated = json_copy(machine)
            condition = (
                MetaCondition(v1beta2.UP_TO_DATE, "False", "NotUpToDate", "Machine is being deleted")
                if deleting(machine)
                else up_to_date(self._outdated_because(kcp, machine))
            )
            v1beta2.set_v1beta2(updated, [condition], now)
            if updated == machine:
                marked.append(machine)
                continue
            try:
                marked.append(await self.write(machine, updated))
            except NotFound:
                continue  # deleted since the cache saw it: nothing left to mark
        return marked

    def _owned_machines(self, kcp: Obj) -> list[Obj]:
        return sorted(self.machines.by_index(CONTROLLER_INDEX, str(dig(kcp, "metadata", "uid"))), key=name_of)

    async def _steps(self, kcp: Obj, cluster: Obj) -> float | None:
        namespace, cluster_name = namespace_of(kcp), name_of(cluster)
        now = self.context.now()
        template_ref = dig(kcp, "spec", "machineTemplate", "infrastructureRef")
        template = await self.get_ref(template_ref, namespace, lambda _obj: [])
        if template is not None and not has_owner(template, c.KIND_CLUSTER, cluster_name):
            owned = json_copy(template)
            ensure_owner(owned, cluster)
            await self.save(template, owned)
        if dig(cluster, "status", "infrastructureReady") is not True:
            return None
        certificates = await self._certificates(kcp, cluster)
        set_conditions(kcp, [certificates], now)
        if certificates.status != "True":
            return self.timing.requeue(10)
        endpoint = dig(cluster, "spec", "controlPlaneEndpoint") or {}
        if not endpoint.get("host") or not endpoint.get("port"):
            return None
        await self._kubeconfig(kcp, cluster, f"https://{endpoint['host']}:{endpoint['port']}")
        machines = self._owned_machines(kcp)
        others = [
            m
            for m in self.in_cluster(self.machines, namespace, cluster_name)
            if c.LABEL_CONTROL_PLANE in labels_of(m) and m not in machines
        ]
        if others:
            raise RuntimeError(
                "not all control plane machines are owned by this KubeadmControlPlane, "
                "refusing to operate in mixed management mode"
            )
        await self._sync_in_place(kcp, machines)
        set_conditions(kcp, [aggregate(machines, MACHINES_READY)], now)
        workload = self.context.workloads.get(namespace, cluster_name)
        initialized = dig(kcp, "status", "initialized") is True or (
            workload is not None and workload.config_map(KUBEADM_CONFIG_MAP) is not None
        )
        if initialized and workload is not None:
            machines = await self._health(kcp, machines, workload)
        outdated = [m for m in machines if not deleting(m) and self._needs_rollout(kcp, m)]
        replicas = int(dig(kcp, "spec", "replicas") or 1)
        if outdated:
            up_to_date = len([m for m in machines if m not in outdated])
            set_conditions(
                kcp,
                [
                    false(
                        MACHINES_SPEC_UP_TO_DATE,
                        "RollingUpdateInProgress",
                        "Warning",
                        f"Rolling {len(outdated)} replicas with outdated spec ({up_to_date} replicas up to date)",
                    )
                ],
                now,
            )
            configured = dig(kcp, "spec", "rolloutStrategy", "rollingUpdate", "maxSurge")
            surge = 1 if configured is None else int(configured)
            if len(machines) < replicas + surge:
                return await self._scale_up(kcp, cluster, machines)
            return await self._scale_down(kcp, machines, outdated)
        if find(kcp, MACHINES_SPEC_UP_TO_DATE) is not None:
            set_conditions(kcp, [true(MACHINES_SPEC_UP_TO_DATE)], now)
        if not machines:
            set_conditions(kcp, [false(AVAILABLE, "WaitingForKubeadmInit", "Info")], now)
            return await self._create(kcp, cluster, machines, init=True)
        if len(machines) < replicas:
            return await self._scale_up(kcp, cluster, machines)
        if len(machines) > replicas:
            return await self._scale_down(kcp, machines, [])
        return None

    # -- certificates and kubeconfig ------------------------------------------------------------------

    async def _certificates(self, kcp: Obj, cluster: Obj) -> Condition:
        namespace, name = namespace_of(cluster), name_of(cluster)
        owner = owner_reference(kcp, controller=True)
        try:
            for suffix, common_name in CERTIFICATES:
                if self.secrets.get(f"{name}-{suffix}", namespace) is None:
                    with contextlib.suppress(AlreadyExists):
                        await self.create(certificate_secret(name, namespace, suffix, common_name, owner))
        except Exception as err:
            return false(CERTIFICATES_AVAILABLE, "CertificatesGenerationFailed", "Warning", str(err))
        return true(CERTIFICATES_AVAILABLE)

    async def _kubeconfig(self, kcp: Obj, cluster: Obj, server: str) -> None:
        namespace, name = namespace_of(cluster), name_of(cluster)
        if self.secrets.get(name + KUBECONFIG_SUFFIX, namespace) is not None:
            return
        ca_secret = self.secrets.get(f"{name}-ca", namespace)
        ca = cluster_ca(ca_secret) if ca_secret is not None else None
        if ca is None:
            return
        secret = kubeconfig_secret(
            name, namespace, admin_kubeconfig(name, server, ca), owner_reference(kcp, controller=True)
        )
        with contextlib.suppress(AlreadyExists):
            await self.create(secret)

    # -- machines -------------------------------------------------------------------------------------

    def _machine_labels(self, kcp: Obj, cluster: Obj) -> dict[str, str]:
        template_labels = dig(kcp, "spec", "machineTemplate", "metadata", "labels") or {}
        return {
            **template_labels,
            c.LABEL_CLUSTER_NAME: name_of(cluster),
            c.LABEL_CONTROL_PLANE: "",
            LABEL_CONTROL_PLANE_NAME: name_of(kcp),
        }

    async def _sync_in_place(self, kcp: Obj, machines: list[Obj]) -> None:
        cluster_name = str(labels_of(kcp).get(c.LABEL_CLUSTER_NAME) or "")
        template = dig(kcp, "spec", "machineTemplate") or {}
        labels = {
            **(dig(template, "metadata", "labels") or {}),
            c.LABEL_CONTROL_PLANE: "",
            LABEL_CONTROL_PLANE_NAME: name_of(kcp),
        }
        if cluster_name:
            labels[c.LABEL_CLUSTER_NAME] = cluster_name
        annotations = dict(dig(template, "metadata", "annotations") or {})
        await self.sync_machines_in_place(machines, labels, annotations, template)

    def _needs_rollout(self, kcp: Obj, machine: Obj) -> bool:
        return bool(self._outdated_because(kcp, machine))

    def _outdated_because(self, kcp: Obj, machine: Obj) -> list[str]:
        """Why ``machine`` must be rolled, in upstream's ``UpToDate`` words (none: it is up to date)."""
        reasons = []
        if dig(machine, "spec", "version") != dig(kcp, "spec", "version"):
            have, want = dig(machine, "spec", "version") or "", dig(kcp, "spec", "version") or ""
            reasons.append(f"Version {have}, {want} required")
        if self._config_outdated(kcp, machine):
            reasons.append("KubeadmConfig is not up-to-date")
        infra_ref = dig(machine, "spec", "infrastructureRef") or {}
        if self._infrastructure_outdated(kcp, machine, infra_ref):
            reasons.append(f"{infra_ref.get('kind')} is not up-to-date")
        return reasons

    def _config_outdated(self, kcp: Obj, machine: Obj) -> bool:
        recorded = annotations_of(machine).get(ANNOTATION_CLUSTER_CONFIGURATION)
        if recorded is not None:
            try:
                configuration = json.loads(recorded)
            except ValueError:
                configuration = None  # unreadable: the Machine counts as outdated
            if configuration != (dig(kcp, "spec", "kubeadmConfigSpec", "clusterConfiguration") or {}):
                return True
        config_ref = dig(machine, "spec", "bootstrap", "configRef") or {}
        config = self.manager.reader.get(
            BOOTSTRAP_API_VERSION, KUBEADM_CONFIG, namespace_of(machine), str(config_ref.get("name", ""))
        )
        if config is None:
            return False
        spec = config.get("spec") or {}
        wanted = dig(kcp, "spec", "kubeadmConfigSpec") or {}
        return comparable_config(spec) != comparable_config(wanted, init=spec.get("initConfiguration") is not None)

    def _infrastructure_outdated(self, kcp: Obj, machine: Obj, infra_ref: Obj) -> bool:
        template = dig(kcp, "spec", "machineTemplate", "infrastructureRef") or {}
        if not infra_ref.get("kind"):
            return False
        infra = self.manager.reader.get(
            str(infra_ref.get("apiVersion", "")),
            str(infra_ref.get("kind", "")),
            namespace_of(machine),
            str(infra_ref.get("name", "")),
        )
        if infra is None:
            return False
        found = annotations_of(infra)
        name = found.get(c.ANNOTATION_CLONED_FROM_NAME)
        kind = found.get(c.ANNOTATION_CLONED_FROM_GROUPKIND)
        if name is not None and name != template.get("name"):
            return True
        return kind is not None and kind != f"{template.get('kind')}.{group_of(str(template.get('apiVersion', '')))}"

    def _preflight(self, kcp: Obj, machines: list[Obj], excluding: Obj | None = None) -> float | None:
        """Seconds to wait before the next scale step (None: go): no Machine deleting, every other one healthy."""
        if any(deleting(m) for m in machines):
            return self.timing.requeue(30)
        for machine in machines:
            if excluding is not None and name_of(machine) == name_of(excluding):
                continue
            if not dig(machine, "status", "nodeRef") or not all(is_true(machine, t) for t in HEALTH_CONDITIONS):
                self.events.warning(
                    kcp,
                    "ControlPlaneUnhealthy",
                    "Waiting for control plane to pass preflight checks to continue reconciliation: "
                    f"Machine {name_of(machine)} is not healthy",
                )
                return self.timing.requeue(15)
        return None

    async def _scale_up(self, kcp: Obj, cluster: Obj, machines: list[Obj]) -> float | None:
        wait = self._preflight(kcp, machines)
        if wait is not None:
            return wait
        return await self._create(kcp, cluster, machines, init=False)

    async def _scale_down(self, kcp: Obj, machines: list[Obj], outdated: list[Obj]) -> float | None:
        def order(machine: Obj) -> tuple[int, int, int, str]:
            return (
                0 if machine in outdated and ANNOTATION_DELETE_MACHINE in annotations_of(machine) else 1,
                0 if ANNOTATION_DELETE_MACHINE in annotations_of(machine) else 1,
                0 if machine in outdated else 1,
                str(dig(machine, "metadata", "creationTimestamp") or ""),
            )

        candidates = sorted((m for m in machines if not deleting(m)), key=lambda m: (*order(m), name_of(m)))
        if not candidates:
            return None
        victim = candidates[0]
        wait = self._preflight(kcp, machines, excluding=victim)
        if wait is not None:
            return wait
        await delete_if_present(
            self.manager.client, c.CLUSTER_API_VERSION, c.KIND_MACHINE, name_of(victim), namespace_of(victim)
        )
        self.events.normal(kcp, "SuccessfulDelete", f"Deleted control plane Machine {name_of(victim)}")
        return None

    def _failure_domain(self, cluster: Obj, machines: list[Obj]) -> str | None:
        domains = dig(cluster, "status", "failureDomains") or {}
        eligible = sorted(name for name, spec in domains.items() if isinstance(spec, dict) and spec.get("controlPlane"))
        if not eligible:
            return None
        counts = {name: 0 for name in eligible}
        for machine in machines:
            domain = dig(machine, "spec", "failureDomain")
            if domain in counts:
                counts[domain] += 1
        return str(min(eligible, key=lambda name: (counts[name], name)))

    async def _create(self, kcp: Obj, cluster: Obj, machines: list[Obj], *, init: bool) -> float | None:
        namespace = namespace_of(kcp)
        labels = self._machine_labels(kcp, cluster)
        template_meta = dig(kcp, "spec", "machineTemplate", "metadata") or {}
        annotations = dict(template_meta.get("annotations") or {})
        owner = owner_reference(kcp)
        now = self.context.now()
        template = await self.get_ref(
            dig(kcp, "spec", "machineTemplate", "infrastructureRef"), namespace, lambda _obj: []
        )
        if template is None:
            set_conditions(
                kcp,
                [
                    false(
                        MACHINES_CREATED,
                        "InfrastructureTemplateCloningFailed",
                        "Error",
                        "the machine infrastructure template does not exist",
                    )
                ],
                now,
            )
            return self.timing.requeue(10)
        made: list[Obj] = []
        suffix = self.context.suffix()
        try:
            infra = await self.create(
                clone_from_template(
                    template,
                    name=f"{name_of(template)}-{self.context.suffix()}",
                    cluster_name=name_of(cluster),
                    labels=labels,
                    annotations=annotations,
                    owner=owner,
                )
            )
            made.append(infra)
            config_spec = json_copy(dig(kcp, "spec", "kubeadmConfigSpec") or {})
            if init:
                config_spec.pop("joinConfiguration", None)
            else:
                config_spec.pop("initConfiguration", None)
                config_spec.pop("clusterConfiguration", None)
                join = config_spec.setdefault("joinConfiguration", {})
                join.setdefault("controlPlane", {})
            config = await self.create(
                {
                    "apiVersion": BOOTSTRAP_API_VERSION,
                    "kind": KUBEADM_CONFIG,
                    "metadata": {
                        "name": f"{name_of(kcp)}-{suffix}",
                        "namespace": namespace,
                        "labels": labels,
                        "annotations": annotations,
                        "ownerReferences": [owner],
                    },
                    "spec": config_spec,
                }
            )
            made.append(config)
            template_spec = dig(kcp, "spec", "machineTemplate") or {}
            spec: Obj = {
                "clusterName": name_of(cluster),
                "version": dig(kcp, "spec", "version"),
                "bootstrap": {
                    "configRef": {
                        "apiVersion": BOOTSTRAP_API_VERSION,
                        "kind": KUBEADM_CONFIG,
                        "name": name_of(config),
                        "namespace": namespace,
                    }
                },
                "infrastructureRef": {
                    "apiVersion": infra["apiVersion"],
                    "kind": infra["kind"],
                    "name": name_of(infra),
                    "namespace": namespace,
                },
            }
            domain = self._failure_domain(cluster, machines)
            if domain:
                spec["failureDomain"] = domain
            copy_node_timeouts(template_spec, spec)
            machine = await self.create(
                {
                    "apiVersion": c.CLUSTER_API_VERSION,
                    "kind": c.KIND_MACHINE,
                    "metadata": {
                        "name": f"{name_of(kcp)}-{suffix}",
                        "namespace": namespace,
                        "labels": labels,
                        "annotations": {
                            **annotations,
                            ANNOTATION_CLUSTER_CONFIGURATION: cluster_configuration_annotation(kcp),
                        },
                        "ownerReferences": [owner_reference(kcp, controller=True)],
                    },
                    "spec": spec,
                }
            )
        except Exception as err:
            if not isinstance(err, OutcomeUnknown):  # else the Machine may exist: what it references stays
                for obj in made:
                    await delete_if_present(
                        self.manager.client, obj["apiVersion"], obj["kind"], name_of(obj), namespace
                    )
            reason = (
                "InfrastructureTemplateCloningFailed",
                "BootstrapTemplateCloningFailed",
                "MachineGenerationFailed",
            )[len(made)]
            set_conditions(kcp, [false(MACHINES_CREATED, reason, "Error", str(err))], now)
            raise
        self.events.normal(kcp, "SuccessfulCreate", f"Created control plane Machine {name_of(machine)}")
        try:
            async with asyncio.timeout(10):
                while self.machines.get(name_of(machine), namespace) is None:
                    await asyncio.sleep(0.005)
        except TimeoutError:
            pass
        return None

    # -- health from the workload cluster ----------------------------------------------------------------

    async def _health(self, kcp: Obj, machines: list[Obj], workload: WorkloadCluster) -> list[Obj]:
        now = self.context.now()
        unhealthy: list[str] = []
        unknown: list[str] = []
        etcd_unhealthy: list[str] = []
        for i, machine in enumerate(machines):
            node_ref = dig(machine, "status", "nodeRef")
            if not node_ref:
                continue
            node = workload.node(str(node_ref.get("name")))
            node_name = str(node_ref.get("name"))
            changes = [
                pod_health(t, workload.pod(f"{pod}-{node_name}", SYSTEM_NAMESPACE), node, machine)
                for t, pod in POD_CONDITIONS
            ]
            etcd = changes[-1]
            changes.append(
                true(ETCD_MEMBER_HEALTHY)
                if etcd.status == "True"
                else false(
                    ETCD_MEMBER_HEALTHY,
                    "EtcdMemberUnhealthy",
                    "Error",
                    f"Etcd member on Node {node_name} is not healthy",
                )
            )
            if any(x.status == "False" for x in changes[:-2]):
                unhealthy.append(name_of(machine))
            elif any(x.status == "Unknown" for x in changes[:-2]):
                unknown.append(name_of(machine))
            if any(x.status != "True" for x in changes[-2:]):
                etcd_unhealthy.append(name_of(machine))
            updated = json_copy(machine)
            if set_conditions(updated, changes, now):
                machines[i] = await self.write(machine, updated)
        components: Condition
        if unhealthy:
            components = false(
                COMPONENTS_HEALTHY,
                "ControlPlaneComponentsUnhealthy",
                "Error",
                f"Following machines are reporting control plane errors: {', '.join(sorted(unhealthy))}",
            )
        elif unknown:
            components = Condition(
                COMPONENTS_HEALTHY,
                "Unknown",
                "ControlPlaneComponentsUnknown",
                f"Following machines are reporting unknown control plane status: {', '.join(sorted(unknown))}",
            )
        else:
            components = true(COMPONENTS_HEALTHY)
        etcd_cluster = (
            false(
                ETCD_CLUSTER_HEALTHY,
                "EtcdClusterUnhealthy",
                "Error",
                f"Following machines are reporting etcd member errors: {', '.join(sorted(etcd_unhealthy))}",
            )
            if etcd_unhealthy
            else true(ETCD_CLUSTER_HEALTHY)
        )
        set_conditions(kcp, [components, etcd_cluster], now)
        return machines

    # -- status ---------------------------------------------------------------------------------------

    def _status(self, kcp: Obj, machines: list[Obj], workload: WorkloadCluster | None) -> None:
        status = kcp.setdefault("status", {})
        cluster_name = labels_of(kcp).get(c.LABEL_CLUSTER_NAME) or next(
            (
                str(r.get("name"))
                for r in dig(kcp, "metadata", "ownerReferences") or []
                if r.get("kind") == c.KIND_CLUSTER
            ),
            "",
        )
        replicas = len(machines)
        desired = int(dig(kcp, "spec", "replicas") or 1)
        updated = len([m for m in machines if not self._needs_rollout(kcp, m)])
        ready = 0
        if workload is not None and workload.serving:  # the workload cluster answers once its API server runs
            for node in workload.nodes():
                if labels_of(node).get("node-role.kubernetes.io/control-plane") == "" and is_ready_node(node):
                    ready += 1
        status.update(
            {
                "selector": f"{c.LABEL_CLUSTER_NAME}={cluster_name},{c.LABEL_CONTROL_PLANE}",
                "replicas": replicas,
                "updatedReplicas": updated,
                "readyReplicas": ready,
                "unavailableReplicas": replicas - ready,
            }
        )
        # v1beta2 (the contract the v1.11+ topology reads): Machines by their v1beta2 Ready, Available, UpToDate
        v1_ready, v1_available, v1_up_to_date = v1beta2.counters(machines)
        set_v1beta2_counters(status, ready=v1_ready, available=v1_available, up_to_date=v1_up_to_date)
        healthy = [
            str(dig(m, "spec", "version"))
            for m in machines
            if is_true(m, "APIServerPodHealthy") and dig(m, "spec", "version")
        ]
        if healthy:
            status["version"] = min(healthy, key=_version_key)
        now = self.context.now()
        if (
            not status.get("initialized")
            and workload is not None
            and workload.config_map(KUBEADM_CONFIG_MAP) is not None
        ):
            status["initialized"] = True
        if status.get("initialized"):
            set_conditions(kcp, [true(AVAILABLE)], now)
        status.setdefault("initialized", False)
        if ready > 0:
            status["ready"] = True
        status.setdefault("ready", False)
        if replicas < desired:
            set_conditions(
                kcp,
                [
                    false(
                        RESIZED,
                        "ScalingUp",
                        "Warning",
                        f"Scaling up control plane to {desired} replicas (actual {replicas})",
                    )
                ],
                now,
            )
        elif replicas > desired:
            set_conditions(
                kcp,
                [
                    false(
                        RESIZED,
                        "ScalingDown",
                        "Warning",
                        f"Scaling down control plane to {desired} replicas (actual {replicas})",
                    ),
                    true(MACHINES_CREATED),
                ],
                now,
            )
        else:
            changes = [true(MACHINES_CREATED)]
            if all(is_true(m, "Ready") for m in machines):
                changes.append(true(RESIZED))
            set_conditions(kcp, changes, now)

    # -- deletion -------------------------------------------------------------------------------------

    async def _delete(self, current: Obj, kcp: Obj, cluster: Obj) -> float | None:
        machines = self._owned_machines(kcp)
        now = self.context.now()
        status = kcp.setdefault("status", {})
        if not machines:
            await self.release(current, kcp, FINALIZER)
            return None
        namespace, name = namespace_of(cluster), name_of(cluster)
        workers = [
            m for m in self.in_cluster(self.machines, namespace, name) if c.LABEL_CONTROL_PLANE not in labels_of(m)
        ]
        up_to_date = len([m for m in machines if not self._needs_rollout(kcp, m)])
        status.update({"replicas": len(machines), "updatedReplicas": up_to_date})
        status["unavailableReplicas"] = len(machines)
        set_v1beta2_counters(status, ready=0, available=0, up_to_date=up_to_date)
        if workers or self.in_cluster(self.pools, namespace, name):
            set_conditions(
                kcp, [false(RESIZED, "Deleting", "Info", "Waiting for worker nodes to be deleted first")], now
            )
            await self.save(current, kcp)
            return self.timing.requeue(30)
        for machine in machines:
            if not deleting(machine):
                await delete_if_present(
                    self.manager.client, c.CLUSTER_API_VERSION, c.KIND_MACHINE, name_of(machine), namespace
                )
        set_conditions(kcp, [false(RESIZED, "Deleting", "Info")], now)
        await self.save(current, kcp)
        return self.timing.requeue(30)


def _version_key(version: str) -> tuple[int, ...]:
    digits = version.lstrip("v").split("+")[0].split("-")[0].split(".")
    try:
        return tuple(int(d) for d in digits)
    except ValueError:
        return (0,)
