"""The items a patch can target (spec §5.2), and how each item's result returns to its object.

Patches are written against *templates*, whatever they end up changing: an item holds a copy of the
template the desired object was cloned from, its holder (the object referencing it and the field
that does), and the builtin variables that item sees. After all patches ran, :func:`write_back`
copies each patched template's spec into the desired object (§5.8): for MachinePools the bootstrap
config object and the infrastructure machine pool object get the template's ``spec.template.spec``
as their ``spec``.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api import contract
from clusterclass.api.objects import Obj, dig, name_of, namespace_of, set_path
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL
from clusterclass.topology import builtins
from clusterclass.topology.blueprint import Blueprint
from clusterclass.topology.desired import DesiredState, DesiredWorker

BOOTSTRAP_FIELD = "spec.template.spec.bootstrap.configRef"
INFRASTRUCTURE_FIELD = "spec.template.spec.infrastructureRef"
CP_MACHINE_TEMPLATE_FIELD = "spec.machineTemplate.infrastructureRef"


@dataclass
class Item:
    holder_kind: str
    holder_name: str
    field_path: str
    #: the template being patched (a copy; patches accumulate on it)
    template: Obj
    #: builtin variables specific to this item (controlPlane / machineDeployment / machinePool)
    builtin: dict[str, Any] = field(default_factory=dict)
    #: the worker the item belongs to, for its variable overrides and its class
    worker: DesiredWorker | None = None
    write_back: Callable[[Obj], None] = lambda template: None
    #: the holder's apiVersion and namespace (an external patch's ``holderReference``)
    holder_api_version: str = c.CLUSTER_API_VERSION
    holder_namespace: str = ""

    @property
    def description(self) -> str:
        return f"{self.template.get('kind')} for {self.holder_kind}/{self.holder_name} ({self.field_path})"


def _template_spec(template: Obj) -> Any:
    return copy.deepcopy(dig(template, *contract.TEMPLATE_SPEC))


def build_items(blueprint: Blueprint, desired: DesiredState) -> list[Item]:
    """Items in upstream's order: infrastructure cluster, control plane, MachineDeployments, MachinePools."""
    topology = blueprint.topology
    cluster_name = name_of(desired.cluster)
    cp = desired.control_plane
    cp_builtin = builtins.control_plane_builtin(cp, desired.control_plane_infrastructure_machine_template, topology)

    def set_object_spec(obj: Obj) -> Callable[[Obj], None]:
        def write(template: Obj) -> None:
            obj["spec"] = _template_spec(template)

        return write

    def set_template_spec(obj: Obj) -> Callable[[Obj], None]:
        def write(template: Obj) -> None:
            set_path(obj, contract.TEMPLATE_SPEC, _template_spec(template))

        return write

    def set_control_plane_spec(template: Obj) -> None:
        # The fields topology itself computes survive whatever a patch does to the template.
        cp_contract = blueprint.control_plane_contract
        preserved = [
            (path, dig(cp, *path))
            for path in (
                cp_contract.MACHINE_TEMPLATE_METADATA,
                cp_contract.MACHINE_TEMPLATE_INFRASTRUCTURE_REF,
                *cp_contract.timeout_paths,
                cp_contract.REPLICAS,
                cp_contract.VERSION,
            )
        ]
        spec = _template_spec(template)
        cp["spec"] = spec if isinstance(spec, dict) else {}
        for path, value in preserved:
            if value is not None:
                set_path(cp, path, value)

    namespace = namespace_of(desired.cluster)
    items = [
        Item(
            c.KIND_CLUSTER,
            cluster_name,
            "spec.infrastructureRef",
            copy.deepcopy(blueprint.infrastructure_cluster_template),
            write_back=set_object_spec(desired.infrastructure_cluster),
            holder_namespace=namespace,
        ),
        Item(
            c.KIND_CLUSTER,
            cluster_name,
            "spec.controlPlaneRef",
            copy.deepcopy(blueprint.control_plane_template),
            builtin=cp_builtin,
            write_back=set_control_plane_spec,
            holder_namespace=namespace,
        ),
    ]
    machine_template = desired.control_plane_infrastructure_machine_template
    if machine_template is not None and blueprint.control_plane_infrastructure_machine_template is not None:
        items.append(
            Item(
                str(cp.get("kind")),
                name_of(cp),
                CP_MACHINE_TEMPLATE_FIELD,
                copy.deepcopy(blueprint.control_plane_infrastructure_machine_template),
                builtin=cp_builtin,
                write_back=set_template_spec(machine_template),
                holder_api_version=str(cp.get("apiVersion") or ""),
                holder_namespace=namespace,
            )
        )
    for kind in (MACHINE_DEPLOYMENT, MACHINE_POOL):
        # A MachineDeployment's patched template spec lands in its cloned template; a MachinePool's lands
        # in the spec of the bootstrap config / infrastructure machine pool object (A20).
        write = set_template_spec if kind.uses_templates else set_object_spec
        for worker in desired.workers(kind).values():
            worker_blueprint = blueprint.workers(kind)[worker.topology.class_name]
            worker_builtin = builtins.worker_builtin(worker)
            for field_path, template, target in (
                (BOOTSTRAP_FIELD, worker_blueprint.bootstrap_template, worker.bootstrap),
                (INFRASTRUCTURE_FIELD, worker_blueprint.infrastructure_template, worker.infrastructure),
            ):
                items.append(
                    Item(
                        kind.kind,
                        name_of(worker.object),
                        field_path,
                        copy.deepcopy(template),
                        builtin=worker_builtin,
                        worker=worker,
                        write_back=write(target),
                        holder_namespace=namespace,
                    )
                )
    return items


def write_back(items: list[Item], originals: list[Any]) -> None:
    """Copy each patched template spec into its desired object, where a patch changed it."""
    for item, original in zip(items, originals, strict=True):
        if dig(item.template, "spec") != original:
            item.write_back(item.template)
