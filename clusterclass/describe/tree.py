"""The tree ``describe cluster`` shows, built from a Cluster's objects: :func:`build_tree`. Pure, no I/O.

The shape is clusterctl's (v1.6 ``cmd/clusterctl/client/tree``, spec §4.2): the Cluster at the root;
its infrastructure cluster; its control plane with the control-plane Machines; a virtual ``Workers``
node with every MachineDeployment (its Machines, or its MachineSets and their Machines) and every
MachinePool (its bootstrap config, its infrastructure machine pool, its Machines); the Machines that
belong nowhere under a virtual ``Other``; and under every Machine shown its infrastructure machine and
bootstrap config.

Two rules, applied each time a node is added, keep the tree short:

- **No echo.** An infrastructure machine, a bootstrap config or a MachinePool's infrastructure is
  dropped (unless ``echo``) when its ``Ready`` is True, or when it says what its parent's ``Ready``
  says (same status, severity and reason; both missing counts as the same): it would only repeat it.
- **Grouping.** Under a *grouping object* (a control plane, a MachineDeployment without
  ``show_machinesets``, a MachineSet, a MachinePool) a new child whose ``Ready`` has the same status,
  severity and reason as a sibling of the same kind is merged with it into a group node (``2
  Machines...``) with the earliest transition time and no message; later ones join the group. Grouped
  objects lose their own children. Siblings in different states never merge, so a rollout shows one
  row per state.

Nodes keep the order they were added in; the printer (:mod:`clusterclass.describe.render`) orders
them for display. Which objects exist is :class:`~clusterclass.describe.objects.ClusterObjects`' business,
read by :mod:`clusterclass.describe.collect`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.conditions import READY, conditions_of
from clusterclass.api.objects import Obj, dig, labels_of, name_of, namespace_of, owner_references_of
from clusterclass.describe.objects import ADDONS_API_VERSION, KIND_RESOURCE_SET, ClusterObjects

#: the kinds of the virtual nodes, as clusterctl names them
KIND_WORKERS = "WorkerGroup"
KIND_OTHER = "OtherGroup"
KIND_TEMPLATES = "TemplateGroup"
KIND_RESOURCE_SETS = "ClusterResourceSetGroup"
#: a group node's kind is the kind of its objects with this suffix (``MachineGroup``)
GROUP_SUFFIX = "Group"


@dataclass(frozen=True)
class TreeOptions:
    """What to show (the flags of ``describe cluster``)."""

    #: comma-separated ``Kind``, ``Kind/name`` or ``all``: objects whose other conditions get rows
    show_conditions: str = ""
    show_machinesets: bool = False
    show_resourcesets: bool = False
    show_templates: bool = False
    #: show no-echo children even when they repeat their parent
    echo: bool = False
    #: merge siblings in the same state into group rows
    grouping: bool = True


@dataclass(frozen=True)
class ConditionState:
    """One v1beta1 condition as the tree shows it."""

    type: str
    status: str
    severity: str = ""
    reason: str = ""
    message: str = ""
    last_transition_time: datetime | None = None

    @classmethod
    def of(cls, condition: Mapping[str, Any]) -> ConditionState:
        return cls(
            type=str(condition.get("type") or ""),
            status=str(condition.get("status") or ""),
            severity=str(condition.get("severity") or ""),
            reason=str(condition.get("reason") or ""),
            message=str(condition.get("message") or ""),
            last_transition_time=parse_time(condition.get("lastTransitionTime")),
        )


def parse_time(value: Any) -> datetime | None:
    """A ``metav1.Time`` (RFC 3339) as an aware datetime; None when it is missing or does not parse."""
    if not isinstance(value, str) or not value:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        return None
    return moment if moment.tzinfo is not None else moment.replace(tzinfo=UTC)


def same_state(a: ConditionState | None, b: ConditionState | None) -> bool:
    """Whether two ``Ready`` conditions say the same: status, severity and reason (both missing: yes)."""
    if a is None or b is None:
        return a is None and b is None
    return (a.status, a.severity, a.reason) == (b.status, b.severity, b.reason)


@dataclass(eq=False)
class Node:
    """One row of the tree: an object, a virtual node (``Workers``) or a group of objects."""

    kind: str
    #: the object's name; a virtual node's name (``Workers``); empty for a group
    name: str
    namespace: str = ""
    api_version: str = ""
    #: what the object is to its parent (``ControlPlane``, ``BootstrapConfig``...), printed before it
    meta_name: str = ""
    virtual: bool = False
    #: a group's object names, sorted; empty for every other node
    items: list[str] = field(default_factory=list)
    ready: ConditionState | None = None
    #: the conditions other than ``Ready``, sorted by type
    conditions: list[ConditionState] = field(default_factory=list)
    #: whether ``conditions`` get rows of their own (``show_conditions`` matched this object)
    show_conditions: bool = False
    deleting: bool = False
    #: higher comes first among siblings (``Templates`` is 1)
    z_order: int = 0
    #: whether children in the same state are merged into groups
    grouping: bool = False
    children: list[Node] = field(default_factory=list)

    @property
    def is_group(self) -> bool:
        return bool(self.items)

    @classmethod
    def of(cls, obj: Obj) -> Node:
        found = [ConditionState.of(condition) for condition in conditions_of(obj)]
        return cls(
            kind=str(obj.get("kind") or ""),
            name=name_of(obj),
            namespace=namespace_of(obj),
            api_version=str(obj.get("apiVersion") or ""),
            ready=next((condition for condition in found if condition.type == READY), None),
            conditions=sorted((condition for condition in found if condition.type != READY), key=lambda x: x.type),
            deleting=bool(dig(obj, "metadata", "deletionTimestamp")),
        )

    @classmethod
    def virtual_node(cls, kind: str, name: str, namespace: str) -> Node:
        return cls(kind=kind, name=name, namespace=namespace, virtual=True)

    def walk(self) -> Iterator[Node]:
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass(frozen=True)
class ConditionFilter:
    """``--show-conditions``: ``all``, kinds, and kind/name pairs, compared without case."""

    everything: bool = False
    kinds: frozenset[str] = frozenset()
    objects: frozenset[tuple[str, str]] = frozenset()

    @classmethod
    def parse(cls, text: str) -> ConditionFilter:
        everything, kinds, objects = False, set(), set()
        for part in text.lower().split(","):
            part = part.strip()
            if not part:
                continue
            if part == "all":
                everything = True
            elif "/" in part:
                kind, _, name = part.partition("/")
                objects.add((kind.strip(), name.strip()))
            else:
                kinds.add(part)
        return cls(everything, frozenset(kinds), frozenset(objects))

    def matches(self, node: Node) -> bool:
        kind = node.kind.lower()
        return self.everything or kind in self.kinds or (kind, node.name.lower()) in self.objects


#: adds a Machine (and, when it is shown, its infrastructure machine and bootstrap config) under a node
AddMachine = Callable[[Node, Obj], None]


class _Tree:
    """Adds nodes under the rules of the module docstring."""

    def __init__(self, options: TreeOptions) -> None:
        self.options = options
        self.conditions = ConditionFilter.parse(options.show_conditions)

    def root(self, obj: Obj) -> Node:
        node = Node.of(obj)
        node.show_conditions = self.conditions.matches(node)
        return node

    def add(
        self,
        parent: Node,
        child: Node,
        *,
        meta_name: str = "",
        no_echo: bool = False,
        grouping: bool = False,
        z_order: int = 0,
    ) -> bool:
        """Add ``child`` under ``parent``; whether it is shown as itself (not hidden, not merged into a group)."""
        child.show_conditions = self.conditions.matches(child)
        if no_echo and not self.options.echo:
            ready = child.ready
            if (ready is not None and ready.status == "True") or same_state(parent.ready, ready):
                return False
        if meta_name:
            child.meta_name = meta_name
        if parent.grouping and self._merged(parent, child, z_order):
            return False
        child.grouping = grouping and self.options.grouping
        child.z_order = z_order
        parent.children.append(child)
        return True

    def _merged(self, parent: Node, child: Node, z_order: int) -> bool:
        """Merge ``child`` into a group with a sibling of its kind in the same state, if there is one."""
        for sibling in parent.children:
            if not same_state(child.ready, sibling.ready):
                continue
            if sibling.is_group and sibling.kind == child.kind + GROUP_SUFFIX:
                sibling.items = sorted([*sibling.items, child.name])
                sibling.ready = _group_ready(sibling.ready, child.ready)
                return True
            if not sibling.is_group and not sibling.virtual and sibling.kind == child.kind:
                group = Node(
                    kind=child.kind + GROUP_SUFFIX,
                    name="",
                    namespace=child.namespace,
                    virtual=True,
                    items=sorted([sibling.name, child.name]),
                    ready=_group_ready(child.ready, sibling.ready),
                    z_order=z_order,
                )
                parent.children.remove(sibling)
                parent.children.append(group)
                return True
        return False

    def templates(self, parent: Node) -> Node:
        """The virtual ``Templates`` node under ``parent`` (listed first among its children)."""
        node = Node.virtual_node(KIND_TEMPLATES, "Templates", parent.namespace)
        self.add(parent, node, z_order=1)
        return node


def _group_ready(ready: ConditionState | None, other: ConditionState | None) -> ConditionState | None:
    """A group's ``Ready``: the shared state, the earliest transition, no message."""
    if ready is None:
        return None
    times = [x.last_transition_time for x in (ready, other) if x is not None and x.last_transition_time is not None]
    return replace(ready, message="", last_transition_time=min(times) if times else None)


def _controller_uid(obj: Obj) -> str:
    for ref in owner_references_of(obj):
        if ref.get("controller") is True:
            return str(ref.get("uid") or "")
    return ""


def controlled_by(objects: list[Obj], owner: Obj) -> list[Obj]:
    """The objects whose controller ownerReference is ``owner`` (by uid, as ``metav1.IsControlledBy``)."""
    uid = str(dig(owner, "metadata", "uid") or "")
    return [obj for obj in objects if uid and _controller_uid(obj) == uid]


def is_control_plane_machine(machine: Obj) -> bool:
    return c.LABEL_CONTROL_PLANE in labels_of(machine)


def _node_for_ref(objects: ClusterObjects, ref: Mapping[str, Any]) -> Node:
    """The row of a template (or ClusterResourceSet): the object as read, else what the ref says.

    clusterctl never reads these, it shows the ref; reading them adds the conditions and deletion
    they may have, and a template that is gone still shows what the owner points at.
    """
    found = objects.lookup(ref)
    if found is not None:
        return Node.of(found)
    return Node(
        kind=str(ref.get("kind") or ""),
        name=str(ref.get("name") or ""),
        namespace=objects.namespace,
        api_version=str(ref.get("apiVersion") or ""),
    )


def build_tree(objects: ClusterObjects, options: TreeOptions | None = None) -> Node:
    """The tree of ``objects``' Cluster (spec §4.2), its root the Cluster."""
    options = options or TreeOptions()
    tree = _Tree(options)
    cluster = objects.cluster
    namespace = objects.namespace
    root = tree.root(cluster)

    infrastructure = objects.lookup(dig(cluster, "spec", "infrastructureRef"))
    if infrastructure is not None:
        tree.add(root, Node.of(infrastructure), meta_name="ClusterInfrastructure")

    if options.show_resourcesets and objects.resource_set_binding is not None:
        resource_sets = Node.virtual_node(KIND_RESOURCE_SETS, "ClusterResourceSets", namespace)
        tree.add(root, resource_sets)
        for binding in dig(objects.resource_set_binding, "spec", "bindings") or []:
            set_name = dig(binding, "clusterResourceSetName")
            if set_name:
                ref = {"apiVersion": ADDONS_API_VERSION, "kind": KIND_RESOURCE_SET, "name": set_name}
                tree.add(resource_sets, _node_for_ref(objects, ref))

    control_plane = objects.lookup(dig(cluster, "spec", "controlPlaneRef"))
    control_plane_node: Node | None = None
    if control_plane is not None:
        control_plane_node = Node.of(control_plane)
        tree.add(root, control_plane_node, meta_name="ControlPlane", grouping=True)
        template_ref = dig(control_plane, "spec", "machineTemplate", "infrastructureRef")
        if options.show_templates and isinstance(template_ref, Mapping):
            templates = tree.templates(control_plane_node)
            tree.add(templates, _node_for_ref(objects, template_ref), meta_name="MachineInfrastructureTemplate")

    placed: set[str] = set()

    def add_machine(parent: Node, machine: Obj) -> None:
        node = Node.of(machine)
        placed.add(name_of(machine))
        if not tree.add(parent, node):
            return
        infrastructure = objects.lookup(dig(machine, "spec", "infrastructureRef"))
        if infrastructure is not None:
            tree.add(node, Node.of(infrastructure), meta_name="MachineInfrastructure", no_echo=True)
        bootstrap = objects.lookup(dig(machine, "spec", "bootstrap", "configRef"))
        if bootstrap is not None:
            tree.add(node, Node.of(bootstrap), meta_name="BootstrapConfig", no_echo=True)

    machines = objects.machines
    control_plane_machines = [m for m in machines if is_control_plane_machine(m)]
    if control_plane_node is not None:
        for machine in control_plane_machines:
            add_machine(control_plane_node, machine)

    workers = Node.virtual_node(KIND_WORKERS, "Workers", namespace)
    has_workers = len(machines) != len(control_plane_machines) or bool(objects.machine_pools)
    if has_workers:
        tree.add(root, workers)
        _add_machine_deployments(tree, objects, workers, add_machine)
        _add_machine_pools(tree, objects, workers, add_machine)

    orphans = [m for m in machines if name_of(m) not in placed]
    if orphans:
        if not has_workers:  # only control-plane Machines, and no control plane to put them under
            tree.add(root, workers)
        other = Node.virtual_node(KIND_OTHER, "Other", namespace)
        tree.add(workers, other)
        for machine in orphans:
            add_machine(other, machine)
    return root


def _add_machine_deployments(tree: _Tree, objects: ClusterObjects, workers: Node, add_machine: AddMachine) -> None:
    options = tree.options
    for deployment in objects.machine_deployments:
        node = Node.of(deployment)
        tree.add(workers, node, grouping=not options.show_machinesets)
        if options.show_templates:
            templates = tree.templates(node)
            bootstrap_ref = dig(deployment, "spec", "template", "spec", "bootstrap", "configRef")
            if isinstance(bootstrap_ref, Mapping):
                tree.add(templates, _node_for_ref(objects, bootstrap_ref), meta_name="BootstrapConfigTemplate")
            infrastructure_ref = dig(deployment, "spec", "template", "spec", "infrastructureRef")
            if isinstance(infrastructure_ref, Mapping):
                tree.add(
                    templates, _node_for_ref(objects, infrastructure_ref), meta_name="MachineInfrastructureTemplate"
                )
        for machine_set in controlled_by(objects.machine_sets, deployment):
            parent = node
            if options.show_machinesets:
                parent = Node.of(machine_set)
                tree.add(node, parent, grouping=True)
            for machine in controlled_by(objects.machines, machine_set):
                add_machine(parent, machine)


def _add_machine_pools(tree: _Tree, objects: ClusterObjects, workers: Node, add_machine: AddMachine) -> None:
    for pool in objects.machine_pools:
        node = Node.of(pool)
        if tree.add(workers, node, grouping=True):
            bootstrap = objects.lookup(dig(pool, "spec", "template", "spec", "bootstrap", "configRef"))
            if bootstrap is not None:
                tree.add(node, Node.of(bootstrap), meta_name="BootstrapConfig", no_echo=True)
            infrastructure = objects.lookup(dig(pool, "spec", "template", "spec", "infrastructureRef"))
            if infrastructure is not None:
                tree.add(node, Node.of(infrastructure), meta_name="MachinePoolInfrastructure", no_echo=True)
        for machine in controlled_by(objects.machines, pool):
            add_machine(node, machine)


def machines_shown(root: Node) -> set[str]:
    """The names of the Machines that have a row of their own (not merged into a group)."""
    return {node.name for node in root.walk() if node.kind == c.KIND_MACHINE and not node.virtual}
