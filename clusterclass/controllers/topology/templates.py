"""Deleting MachineDeployment templates nothing uses any more: upstream's ``topology/machineset`` and
``topology/machinedeployment`` helper controllers.

A MachineDeployment's bootstrap and infrastructure templates are rotated when their spec changes (spec
§3.4): the MachineDeployment switches to new templates, but its old MachineSet still references the old
ones until the rollout has replaced its Machines, and a template must not go while anything uses it. So
the topology reconcile deletes a replaced template at once only if no MachineSet references it
(:class:`~clusterclass.controllers.topology.state.StateDriver`), and these two controllers delete the
rest when their last user goes:

- every topology-owned MachineSet gets the finalizer ``machineset.topology.cluster.x-k8s.io``; when it is
  deleted, its templates are deleted unless its MachineDeployment or another of its MachineSets still
  references them; then the finalizer is removed;
- every topology-owned MachineDeployment gets ``machinedeployment.topology.cluster.x-k8s.io``; when it is
  deleted, its templates are deleted unless a MachineSet still references them (that MachineSet's own
  finalizer then takes care of them).
"""

from __future__ import annotations

import contextlib
import logging

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, dig, labels_of, name_of, namespace_of
from clusterclass.controllers.runtime.controller import Controller, split_key
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.controllers.runtime.predicates import TOPOLOGY_OWNED, has_filter_label
from clusterclass.kube.errors import NotFound
from clusterclass.kube.indexes import LABEL_INDEX
from clusterclass.kube.informer import Informer

logger = logging.getLogger(__name__)

MACHINE_SET_FINALIZER = "machineset.topology.cluster.x-k8s.io"
MACHINE_DEPLOYMENT_FINALIZER = "machinedeployment.topology.cluster.x-k8s.io"


def template_refs(holder: Obj) -> list[Obj]:
    """The bootstrap and infrastructure template refs of a MachineDeployment or MachineSet."""
    spec = dig(holder, "spec", "template", "spec") or {}
    refs = [spec.get("infrastructureRef"), dig(spec, "bootstrap", "configRef")]
    return [ref for ref in refs if isinstance(ref, dict) and ref.get("name")]


def _same(ref: Obj, other: Obj) -> bool:
    return (ref.get("kind"), ref.get("name")) == (other.get("kind"), other.get("name"))


class TemplateCleanup:
    """The two helper controllers (module doc). Create, then :meth:`setup` before the manager starts."""

    def __init__(self, manager: Manager, *, workers: int = 1, watch_filter: str | None = None) -> None:
        self.manager = manager
        self.machine_sets_controller = Controller("topology/machineset", self._reconcile_machine_set, workers=workers)
        self.deployments_controller = Controller(
            "topology/machinedeployment", self._reconcile_deployment, workers=workers
        )
        self._filter = has_filter_label(watch_filter)
        self.machine_sets: Informer | None = None
        self.deployments: Informer | None = None

    async def setup(self) -> TemplateCleanup:
        self.machine_sets = await self.manager.informer(
            c.CLUSTER_API_VERSION, c.KIND_MACHINE_SET, label_selector=c.LABEL_TOPOLOGY_OWNED
        )
        self.deployments = await self.manager.informer(
            c.CLUSTER_API_VERSION, c.KIND_MACHINE_DEPLOYMENT, label_selector=c.LABEL_TOPOLOGY_OWNED
        )
        own = lambda obj: [f"{namespace_of(obj)}/{name_of(obj)}"]  # noqa: E731
        self.machine_sets_controller.watch(self.machine_sets, own, TOPOLOGY_OWNED, self._filter)
        self.deployments_controller.watch(self.deployments, own, TOPOLOGY_OWNED, self._filter)
        self.manager.add(self.machine_sets_controller)
        self.manager.add(self.deployments_controller)
        return self

    def _machine_sets_of(self, namespace: str, deployment_name: str) -> list[Obj]:
        assert self.machine_sets is not None
        value = f"{c.LABEL_MACHINE_DEPLOYMENT_NAME}={deployment_name}"
        return [ms for ms in self.machine_sets.by_index(LABEL_INDEX, value) if namespace_of(ms) == namespace]

    async def _reconcile_machine_set(self, key: str) -> float | None:
        assert self.machine_sets is not None and self.deployments is not None
        namespace, name = split_key(key)
        machine_set = self.machine_sets.get(name, namespace)
        if machine_set is None:
            return None
        if not dig(machine_set, "metadata", "deletionTimestamp"):
            await self._ensure_finalizer(machine_set, MACHINE_SET_FINALIZER)
            return None
        if MACHINE_SET_FINALIZER not in (dig(machine_set, "metadata", "finalizers") or []):
            return None
        deployment_name = labels_of(machine_set).get(c.LABEL_MACHINE_DEPLOYMENT_NAME, "")
        users = [
            ms for ms in self._machine_sets_of(namespace or "", deployment_name) if name_of(ms) != name_of(machine_set)
        ]
        deployment = self.deployments.get(deployment_name, namespace) if deployment_name else None
        if deployment is not None and not dig(deployment, "metadata", "deletionTimestamp"):
            users.append(deployment)
        await self._delete_unused(template_refs(machine_set), users, namespace or "")
        await self._remove_finalizer(machine_set, MACHINE_SET_FINALIZER)
        return None

    async def _reconcile_deployment(self, key: str) -> float | None:
        assert self.deployments is not None
        namespace, name = split_key(key)
        deployment = self.deployments.get(name, namespace)
        if deployment is None:
            return None
        if not dig(deployment, "metadata", "deletionTimestamp"):
            await self._ensure_finalizer(deployment, MACHINE_DEPLOYMENT_FINALIZER)
            return None
        if MACHINE_DEPLOYMENT_FINALIZER not in (dig(deployment, "metadata", "finalizers") or []):
            return None
        users = self._machine_sets_of(namespace or "", name)
        await self._delete_unused(template_refs(deployment), users, namespace or "")
        await self._remove_finalizer(deployment, MACHINE_DEPLOYMENT_FINALIZER)
        return None

    async def _delete_unused(self, refs: list[Obj], users: list[Obj], namespace: str) -> None:
        for ref in refs:
            if any(_same(ref, other) for user in users for other in template_refs(user)):
                continue
            try:
                await self.manager.client.delete(
                    str(ref.get("apiVersion")), str(ref.get("kind")), str(ref["name"]), namespace=namespace
                )
                logger.info("deleted %s/%s: no MachineSet uses it any more", ref.get("kind"), ref.get("name"))
            except NotFound:
                pass

    async def _ensure_finalizer(self, obj: Obj, finalizer: str) -> None:
        finalizers = list(dig(obj, "metadata", "finalizers") or [])
        if finalizer in finalizers:
            return
        await self._patch_finalizers(obj, [*finalizers, finalizer])

    async def _remove_finalizer(self, obj: Obj, finalizer: str) -> None:
        finalizers = [f for f in dig(obj, "metadata", "finalizers") or [] if f != finalizer]
        await self._patch_finalizers(obj, finalizers)

    async def _patch_finalizers(self, obj: Obj, finalizers: list[str]) -> None:
        # in the version the server prefers (v1beta2 where served), whatever version the cache holds, for the
        # reason ServerSideApply.merge_patch_metadata gives (a managedFields entry in another version costs
        # kube-apiserver conversions on every later write of the object)
        api_version = await self.manager.preferred_version(str(obj.get("apiVersion")), str(obj.get("kind")))
        with contextlib.suppress(NotFound):
            await self.manager.client.patch(
                api_version,
                str(obj.get("kind")),
                name_of(obj),
                {"metadata": {"resourceVersion": dig(obj, "metadata", "resourceVersion"), "finalizers": finalizers}},
                namespace=namespace_of(obj),
            )
