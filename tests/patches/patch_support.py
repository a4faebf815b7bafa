"""A small ClusterClass world for the patch tests, and one-call helpers around the patch engine.

The world: ClusterClass ``class1`` in ``default`` with an InfrastructureCluster template, a control
plane template with a machine infrastructure template, MachineDeployment classes and MachinePool
classes (``md-class`` / ``mp-class`` by default; more names share the same templates) and whatever
``patches`` and ``variables`` a test gives it.

Helpers run the real pipeline (:func:`compute`: variables defaulted and validated, then the
:class:`ClusterClassPatchEngine`), or only the engine over a desired state computed without patches
(:func:`apply_engine`, for cases admission would refuse), or build the engine's items
(:func:`items_of`). The value helpers (:func:`value_of`, :func:`render`, :func:`enabled`,
:func:`lookup`) are the one place that knows the ``values`` module's calling convention.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import builders as b
from click.testing import CliRunner, Result

from clusterclass.cli.main import cli
from clusterclass.topology.blueprint import Blueprint, get_blueprint
from clusterclass.topology.current import get_current_state
from clusterclass.topology.desired import Computation, DesiredState, compute_desired_state
from clusterclass.topology.patches import request, values
from clusterclass.topology.patches.engine import ClusterClassPatchEngine
from clusterclass.topology.patches.external import ExtensionCalls
from clusterclass.topology.pipeline import compute_topology
from clusterclass.topology.reader import NodeReader, NoNodes, ObjectIndex

Obj = dict[str, Any]

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared"
QUICK_START = SHARED / "upstream" / "examples" / "clusterclass-quick-start.yaml"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

INFRA_V1 = b.INFRA_V1
BOOTSTRAP_V1 = b.BOOTSTRAP_V1
CONTROLPLANE_V1 = b.CONTROLPLANE_V1

BOOTSTRAP_FIELD = "spec.template.spec.bootstrap.configRef"
INFRASTRUCTURE_FIELD = "spec.template.spec.infrastructureRef"
CP_MACHINE_TEMPLATE_FIELD = "spec.machineTemplate.infrastructureRef"

#: (apiVersion, kind) of the world's templates, for selectors
INFRA_CLUSTER = (INFRA_V1, "DockerClusterTemplate")
CONTROL_PLANE = (CONTROLPLANE_V1, "KubeadmControlPlaneTemplate")
MACHINE_TEMPLATE = (INFRA_V1, "DockerMachineTemplate")
BOOTSTRAP_TEMPLATE = (BOOTSTRAP_V1, "KubeadmConfigTemplate")
MACHINE_POOL_TEMPLATE = (INFRA_V1, "DockerMachinePoolTemplate")


@dataclass
class PatchWorld:
    """The ClusterClass ``class1`` with its templates, patches and variables."""

    infrastructure_cluster: Obj = field(default_factory=lambda: b.docker_cluster_template("infra-cluster"))
    control_plane: Obj = field(default_factory=lambda: b.kubeadm_control_plane_template("cp"))
    machine_infrastructure: Obj | None = field(default_factory=lambda: b.docker_machine_template("cp-infra"))
    md_bootstrap: Obj = field(default_factory=lambda: b.kubeadm_config_template("md-bootstrap"))
    md_infrastructure: Obj = field(default_factory=lambda: b.docker_machine_template("md-infra"))
    mp_bootstrap: Obj = field(default_factory=lambda: b.kubeadm_config_template("mp-bootstrap"))
    mp_infrastructure: Obj = field(default_factory=lambda: b.docker_machine_pool_template("mp-infra"))
    md_classes: tuple[str, ...] = ("md-class",)
    mp_classes: tuple[str, ...] = ("mp-class",)
    patches: list[Obj] = field(default_factory=list)
    variables: list[Obj] = field(default_factory=list)
    #: ``status.variables``, when the ClusterClass should look reconciled
    status_variables: list[Obj] | None = None

    def cluster_class(self) -> Obj:
        cc = b.cluster_class(
            "class1",
            infrastructure=self.infrastructure_cluster,
            control_plane=self.control_plane,
            machine_infrastructure=self.machine_infrastructure,
            machine_deployments=[b.worker_class(n, self.md_bootstrap, self.md_infrastructure) for n in self.md_classes],
            machine_pools=[b.worker_class(n, self.mp_bootstrap, self.mp_infrastructure) for n in self.mp_classes],
        )
        if self.patches:
            cc["spec"]["patches"] = copy.deepcopy(self.patches)
        if self.variables:
            cc["spec"]["variables"] = copy.deepcopy(self.variables)
        if self.status_variables is not None:
            cc["status"] = {"variables": copy.deepcopy(self.status_variables)}
        return cc

    def objects(self) -> list[Obj]:
        templates = [
            self.infrastructure_cluster,
            self.control_plane,
            self.md_bootstrap,
            self.md_infrastructure,
            self.mp_bootstrap,
            self.mp_infrastructure,
        ]
        if self.machine_infrastructure is not None:
            templates.append(self.machine_infrastructure)
        return [self.cluster_class(), *copy.deepcopy(templates)]


def cluster(
    *,
    variables: list[Obj] | None = None,
    machine_pools: list[Obj] | None = None,
    machine_deployments: list[Obj] | None = None,
    **kwargs: Any,
) -> Obj:
    """A Cluster of ``class1`` (version v1.2.3); ``variables`` go to ``spec.topology.variables``."""
    built = b.cluster(machine_pools=machine_pools, machine_deployments=machine_deployments, **kwargs)
    if variables is not None:
        built["spec"]["topology"]["variables"] = copy.deepcopy(variables)
    return built


def pool(name: str, class_name: str = "mp-class", **fields: Any) -> Obj:
    """A MachinePool topology entry."""
    return b.worker_topology(class_name, name, **fields)


def deployment(name: str, class_name: str = "md-class", **fields: Any) -> Obj:
    """A MachineDeployment topology entry."""
    return b.worker_topology(class_name, name, **fields)


def overrides(*variables: Obj) -> Obj:
    """``variables`` field of a worker topology entry with these overrides."""
    return {"overrides": list(variables)}


# --- running the pipeline -------------------------------------------------------------------------------


def _index(cluster_obj: Obj, objects: list[Obj]) -> ObjectIndex:
    return ObjectIndex([cluster_obj, *objects])


class FakeExtensions:
    """:class:`~clusterclass.topology.patches.external.ExtensionCalls` answering from functions by handler name
    (``{"generate.ext": lambda request: {...}}``; a handler not given answers an empty Success); every call is
    recorded as (hook, handler, request, settings)."""

    def __init__(self, answers: dict[str, Callable[[Obj], Obj]] | None = None) -> None:
        self.answers = answers or {}
        self.calls: list[tuple[str, str, Obj, dict[str, str]]] = []

    def call(self, hook: str, handler: str, request: Obj, settings: Mapping[str, str] | None) -> Obj:
        self.calls.append((hook, handler, copy.deepcopy(request), dict(settings or {})))
        answer = self.answers.get(handler)
        return answer(request) if answer is not None else {"status": "Success"}


def compute(
    cluster_obj: Obj,
    objects: list[Obj],
    *,
    seed: int = 0,
    nodes: NodeReader | None = None,
    patches: bool = True,
    extensions: ExtensionCalls | None = None,
) -> Computation:
    """The whole pipeline with the patch engine (or none), as ``plan`` runs it; ``extensions`` answers external
    patches (None: the Runtime SDK is off)."""
    return compute_topology(
        cluster_obj,
        _index(cluster_obj, objects),
        nodes=nodes or NoNodes(),
        rng=random.Random(seed),
        patches=ClusterClassPatchEngine() if patches else None,
        extensions=extensions,
    )


def unpatched(cluster_obj: Obj, objects: list[Obj], *, seed: int = 0) -> tuple[Blueprint, DesiredState]:
    """Blueprint and desired state without patches and without the variables' admission step."""
    cluster_class = next(o for o in objects if o["kind"] == "ClusterClass")
    index = _index(cluster_obj, objects)
    blueprint = get_blueprint(cluster_class, cluster_obj, index)
    current = get_current_state(cluster_obj, blueprint, index, NoNodes())
    computation = compute_desired_state(blueprint, current, rng=random.Random(seed))
    return blueprint, computation.desired


def apply_engine(cluster_obj: Obj, objects: list[Obj], *, seed: int = 0) -> tuple[DesiredState, DesiredState]:
    """(desired without patches, desired after the engine ran), skipping variable defaulting/validation."""
    blueprint, desired = unpatched(cluster_obj, objects, seed=seed)
    before = copy.deepcopy(desired)
    ClusterClassPatchEngine().apply(blueprint, desired)
    return before, desired


def snapshot(desired: DesiredState) -> Obj:
    """Every desired object as plain data, for comparing two desired states."""
    workers = {
        f"{kind}/{name}": {"object": w.object, "bootstrap": w.bootstrap, "infrastructure": w.infrastructure}
        for kind, group in (("MachineDeployment", desired.machine_deployments), ("MachinePool", desired.machine_pools))
        for name, w in group.items()
    }
    return copy.deepcopy(
        {
            "cluster": desired.cluster,
            "infrastructureCluster": desired.infrastructure_cluster,
            "controlPlane": desired.control_plane,
            "controlPlaneMachineTemplate": desired.control_plane_infrastructure_machine_template,
            "workers": workers,
        }
    )


def items_of(cluster_obj: Obj, objects: list[Obj]) -> list[request.Item]:
    """The engine's request items for ``cluster_obj`` (templates, holders, builtins)."""
    blueprint, desired = unpatched(cluster_obj, objects)
    return request.build_items(blueprint, desired)


# --- values -------------------------------------------------------------------------------------------


def value_of(operation: Obj, variables: Obj) -> Any:
    """The value of one ``add``/``replace`` operation for an item seeing ``variables``."""
    return values.operation_value(operation, values.Variables(variables))


def render(template: str, variables: Obj) -> Any:
    """A ``valueFrom.template`` rendered over ``variables`` and parsed as YAML."""
    return values.render_template_value(template, values.Variables(variables))


def enabled(enabled_if: Any, variables: Obj) -> bool:
    return values.is_enabled(enabled_if, values.Variables(variables))


def lookup(variables: Obj, path: str) -> Any:
    """``valueFrom.variable``."""
    return values.lookup_variable(variables, path)


# --- ClusterClass patches -------------------------------------------------------------------------------


def selector(api_version_kind: tuple[str, str], **match: Any) -> Obj:
    api_version, kind = api_version_kind
    return {"apiVersion": api_version, "kind": kind, "matchResources": match}


def definition(api_version_kind: tuple[str, str], match: Obj, *operations: Obj) -> Obj:
    return {"selector": selector(api_version_kind, **match), "jsonPatches": list(operations)}


def inline_patch(name: str, *definitions: Obj, enabled_if: str | None = None) -> Obj:
    patch: Obj = {"name": name, "definitions": list(definitions)}
    if enabled_if is not None:
        patch["enabledIf"] = enabled_if
    return patch


def add(path: str, value: Any = None, *, variable: str | None = None, template: str | None = None) -> Obj:
    """An ``add`` operation with a literal ``value``, or ``valueFrom.variable`` / ``.template``."""
    return _operation("add", path, value, variable, template)


def replace(path: str, value: Any = None, *, variable: str | None = None, template: str | None = None) -> Obj:
    return _operation("replace", path, value, variable, template)


def remove(path: str) -> Obj:
    return {"op": "remove", "path": path}


def _operation(op: str, path: str, value: Any, variable: str | None, template: str | None) -> Obj:
    operation: Obj = {"op": op, "path": path}
    if variable is not None:
        operation["valueFrom"] = {"variable": variable}
    elif template is not None:
        operation["valueFrom"] = {"template": template}
    else:
        operation["value"] = value
    return operation


def string_variable(name: str, *, default: str | None = None, required: bool = False) -> Obj:
    schema: Obj = {"type": "string"}
    if default is not None:
        schema["default"] = default
    return {"name": name, "required": required, "schema": {"openAPIV3Schema": schema}}


# --- the command line ---------------------------------------------------------------------------------


def invoke(*args: str | Path) -> Result:
    """``clusterclass plan ARGS`` through click's runner (no colours)."""
    env = {"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "CLUSTERCLASS_DEBUG": None}
    return CliRunner(env=env).invoke(cli, ["plan", *map(str, args)])
