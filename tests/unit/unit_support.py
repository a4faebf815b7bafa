"""A standard ClusterClass world for the unit tests, and one-call helpers to run the pipeline on it.

The world: ClusterClass ``class1`` with MachineDeployment class ``md-class`` and MachinePool class
``mp-class`` (and the control plane and infrastructure cluster templates), all in ``default``.
:func:`existing_worker` builds what an earlier reconcile would have left behind for one worker.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Any

import builders as b

from clusterclass.api.workers import MACHINE_POOL, WorkerKind
from clusterclass.topology.blueprint import Blueprint, get_blueprint
from clusterclass.topology.current import CurrentState, get_current_state
from clusterclass.topology.desired import Computation
from clusterclass.topology.hooks import HookResponse
from clusterclass.topology.pipeline import compute_topology
from clusterclass.topology.reader import NodeReader, NoNodes, ObjectIndex

Obj = dict[str, Any]

#: class name of the standard world's worker class, per kind
CLASS = {"MachineDeployment": "md-class", "MachinePool": "mp-class"}


@dataclass
class World:
    """The ClusterClass ``class1`` and its templates."""

    infrastructure_cluster: Obj = field(default_factory=b.docker_cluster_template)
    control_plane: Obj = field(default_factory=b.kubeadm_control_plane_template)
    machine_infrastructure: Obj | None = None
    md_bootstrap: Obj = field(default_factory=lambda: b.kubeadm_config_template("md-bootstrap"))
    md_infrastructure: Obj = field(default_factory=lambda: b.docker_machine_template("md-infra"))
    mp_bootstrap: Obj = field(default_factory=lambda: b.kubeadm_config_template("mp-bootstrap"))
    mp_infrastructure: Obj = field(default_factory=lambda: b.docker_machine_pool_template("mp-infra"))
    md_class_fields: Obj = field(default_factory=dict)
    mp_class_fields: Obj = field(default_factory=dict)
    control_plane_fields: Obj | None = None

    def bootstrap(self, kind: WorkerKind) -> Obj:
        return self.mp_bootstrap if kind is MACHINE_POOL else self.md_bootstrap

    def infrastructure(self, kind: WorkerKind) -> Obj:
        return self.mp_infrastructure if kind is MACHINE_POOL else self.md_infrastructure

    def cluster_class(self) -> Obj:
        return b.cluster_class(
            "class1",
            infrastructure=self.infrastructure_cluster,
            control_plane=self.control_plane,
            machine_infrastructure=self.machine_infrastructure,
            control_plane_fields=self.control_plane_fields,
            machine_deployments=[
                b.worker_class("md-class", self.md_bootstrap, self.md_infrastructure, **self.md_class_fields)
            ],
            machine_pools=[
                b.worker_class("mp-class", self.mp_bootstrap, self.mp_infrastructure, **self.mp_class_fields)
            ],
        )

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
        return [self.cluster_class(), *templates]


def topology_workers(kind: WorkerKind, *entries: Obj) -> dict[str, list[Obj]]:
    """Keyword arguments for :func:`builders.cluster` putting ``entries`` under ``kind``'s list."""
    return {"machine_pools" if kind is MACHINE_POOL else "machine_deployments": list(entries)}


def existing_worker(
    kind: WorkerKind,
    world: World,
    name: str,
    topology_name: str,
    *,
    version: str = "v1.2.2",
    cluster_name: str = "cluster1",
    node_refs: list[str] | None = None,
    replicas: int | None = None,
) -> list[Obj]:
    """A worker an earlier reconcile created, with its bootstrap and infrastructure (objects or templates)."""
    as_template = kind is not MACHINE_POOL
    label = {kind.name_label: topology_name}
    bootstrap = b.cloned_object(
        world.bootstrap(kind), f"{name}-bootstrap", cluster_name=cluster_name, labels=label, as_template=as_template
    )
    infrastructure = b.cloned_object(
        world.infrastructure(kind), f"{name}-infra", cluster_name=cluster_name, labels=label, as_template=as_template
    )
    if kind is MACHINE_POOL:
        worker = b.machine_pool(
            name,
            topology_name,
            bootstrap=bootstrap,
            infrastructure=infrastructure,
            cluster_name=cluster_name,
            version=version,
            node_refs=node_refs,
            replicas=replicas,
        )
    else:
        worker = b.machine_deployment(
            name,
            topology_name,
            bootstrap=bootstrap,
            infrastructure=infrastructure,
            cluster_name=cluster_name,
            version=version,
            replicas=replicas,
        )
    return [worker, bootstrap, infrastructure]


class FakeHooks:
    """A LifecycleHooks that answers from a table and records every call."""

    def __init__(self, responses: dict[str, HookResponse] | None = None) -> None:
        self.responses = responses or {}
        self.calls: list[tuple[str, Obj]] = []

    def call(self, hook: str, cluster: Obj, request: Obj) -> HookResponse:
        self.calls.append((hook, request))
        return self.responses.get(hook, HookResponse())


class NodesThatMustNotBeAsked:
    """A NodeReader that fails the test if the workload cluster is asked anything."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def get_node(self, cluster: Obj, name: str) -> Obj | None:
        self.asked.append(name)
        raise AssertionError(f"the workload cluster was asked for Node {name}")


def index(cluster: Obj, objects: list[Obj]) -> ObjectIndex:
    return ObjectIndex([cluster, *objects])


def compute(
    cluster: Obj,
    objects: list[Obj],
    *,
    nodes: NodeReader | None = None,
    seed: int = 0,
    hooks: Any = None,
) -> Computation:
    """The whole pipeline over ``cluster`` and ``objects`` (ClusterClass, templates, current objects)."""
    return compute_topology(
        cluster, index(cluster, objects), nodes=nodes or NoNodes(), rng=random.Random(seed), hooks=hooks
    )


def blueprint_of(cluster: Obj, objects: list[Obj]) -> Blueprint:
    cluster_class = next(o for o in objects if o["kind"] == "ClusterClass")
    return get_blueprint(cluster_class, cluster, index(cluster, objects))


def current_of(cluster: Obj, objects: list[Obj], nodes: NodeReader | None = None) -> CurrentState:
    return get_current_state(cluster, blueprint_of(cluster, objects), index(cluster, objects), nodes or NoNodes())
