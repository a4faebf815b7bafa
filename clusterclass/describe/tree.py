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
from clusterclass.api.conversion import hub_version
from clusterclass.api.objects import Obj, dig, group_of, labels_of, name_of, namespace_of, owner_references_of
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
    #: clusterctl v1.11+'s view: v1beta2 conditions (Available, Ready, UpToDate) and replica counters decide
    #: grouping and echo and fill the columns; False is v1.6's view of v1beta1 Ready conditions
    v1beta2: bool = False


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


def same_status_and_reason(a: ConditionState | None, b: ConditionState | None) -> bool:
    """clusterctl's v1beta2 comparison: same status and reason (both missing: the same)."""
    if a is None or b is None:
        return a is None and b is None
    return (a.status, a.reason) == (b.status, b.reason)


def same_v1beta2_state(a: Node, b: Node) -> bool:
    """Whether two rows are in the same v1beta2 state: Available, Ready and UpToDate alike."""
    return all(
        same_status_and_reason(x, y)
        for x, y in (
            (a.v1beta2.available, b.v1beta2.available),
            (a.v1beta2.ready, b.v1beta2.ready),
            (a.v1beta2.up_to_date, b.v1beta2.up_to_date),
        )
    )


@dataclass(frozen=True)
class Counters:
    """The REPLICAS (``current/desired``), AVAILABLE, READY and UP TO DATE cells of a row; empty: not reported."""

    replicas: str = ""
    available: str = ""
    ready: str = ""
    up_to_date: str = ""


@dataclass
class V1Beta2Row:
    """What clusterctl v1.11+ shows of an object: its v1beta2 Available, Ready and (Machines) UpToDate, the
    condition its STATUS column shows, its replica counters, the version after its name, and every v1beta2
    condition in the order the object keeps them (for ``--show-conditions``)."""

    available: ConditionState | None = None
    ready: ConditionState | None = None
    up_to_date: ConditionState | None = None
    #: the condition of the STATUS, REASON, SINCE and MESSAGE columns
    status: ConditionState | None = None
    counters: Counters = field(default_factory=Counters)
    #: the version after the name (None: the kind shows none; clusterctl prints an empty one as ``name, ``)
    version: str | None = None
    conditions: list[ConditionState] = field(default_factory=list)

    @classmethod
    def of(cls, obj: Obj, *, control_plane: bool = False) -> V1Beta2Row:
        conditions = [ConditionState.of(condition) for condition in v1beta2_conditions(obj)]
        by_type = {condition.type: condition for condition in conditions}
        kind = str(obj.get("kind") or "")
        available, ready = by_type.get("Available"), by_type.get(READY)
        up_to_date = by_type.get("UpToDate") if kind == c.KIND_MACHINE else None
        row = cls(available=available, ready=ready, up_to_date=up_to_date, conditions=conditions)
        row.version, row.counters, row.status = _v1beta2_columns(obj, kind, row, control_plane)
        return row


#: the core kinds clusterctl reads typed: their v1beta2 conditions only, never their v1beta1 ones
TYPED_KINDS = frozenset(
    {c.KIND_CLUSTER, c.KIND_MACHINE_DEPLOYMENT, c.KIND_MACHINE_SET, c.KIND_MACHINE, c.KIND_MACHINE_POOL}
)


def v1beta2_conditions(obj: Obj) -> list[Obj]:
    """``obj``'s v1beta2 conditions as clusterctl finds them: ``status.v1beta2.conditions`` of the v1beta1 shape
    we read; for a provider kind with no v1beta2 version at all, its v1beta1 conditions (a reason they lack reads
    ``NoReasonReported``), as upstream's ``UnstructuredGet`` reads a v1beta1-contract object."""
    found = dig(obj, "status", "v1beta2", "conditions")
    if isinstance(found, list):
        return [x for x in found if isinstance(x, dict)]
    kind = str(obj.get("kind") or "")
    if kind in TYPED_KINDS or hub_version(group_of(str(obj.get("apiVersion") or "")), kind) is not None:
        return []
    return [{**x, "reason": x.get("reason") or "NoReasonReported"} for x in conditions_of(obj)]


def _count(value: Any) -> str:
    return str(value) if isinstance(value, int) and not isinstance(value, bool) else ""


def _replicas(current: Any, desired: Any) -> str:
    return f"{_count(current) or 0}/{_count(desired) or 0}" if _count(desired) else ""


def _v1beta2_columns(
    obj: Obj, kind: str, row: V1Beta2Row, control_plane: bool
) -> tuple[str | None, Counters, ConditionState | None]:
    """The version after the name, the counters and the STATUS condition, per kind (clusterctl's row rules;
    MachinePools get the counters MachineDeployments get, which upstream's tree leaves empty)."""
    status = obj.get("status") or {}
    found = status.get("v1beta2")
    v1beta2: Obj = found if isinstance(found, dict) else {}
    template_version = str(dig(obj, "spec", "template", "spec", "version") or "")
    if kind == c.KIND_CLUSTER:
        parts = [v1beta2.get("controlPlane") or {}, v1beta2.get("workers") or {}]

        def total(key: str) -> str:
            values = [p[key] for p in parts if isinstance(p.get(key), int)]
            return str(sum(values)) if values else ""

        replicas = ""
        if any(isinstance(p.get(k), int) for p in parts for k in ("desiredReplicas", "replicas")):
            replicas = f"{total('replicas') or 0}/{total('desiredReplicas') or 0}"
        counters = Counters(replicas, total("availableReplicas"), total("readyReplicas"), total("upToDateReplicas"))
        version = str(dig(obj, "spec", "topology", "version") or "") if dig(obj, "spec", "topology") else None
        return version, counters, row.available
    if kind in (c.KIND_MACHINE_DEPLOYMENT, c.KIND_MACHINE_SET, c.KIND_MACHINE_POOL):
        counters = Counters(
            _replicas(status.get("replicas"), dig(obj, "spec", "replicas")),
            _count(v1beta2.get("availableReplicas")),
            _count(v1beta2.get("readyReplicas")),
            _count(v1beta2.get("upToDateReplicas")),
        )
        shown = row.available if kind == c.KIND_MACHINE_DEPLOYMENT else None
        return template_version, counters, shown
    if kind == c.KIND_MACHINE:

        def one(condition: ConditionState | None) -> str:
            return "1" if condition is not None and condition.status == "True" else "0"

        counters = Counters("1", one(row.available), one(row.ready), one(row.up_to_date))
        return str(dig(obj, "spec", "version") or ""), counters, row.ready
    if control_plane:
        counters = Counters(
            _replicas(status.get("replicas"), dig(obj, "spec", "replicas")),
            _count(v1beta2.get("availableReplicas")),
            _count(v1beta2.get("readyReplicas") if v1beta2 else status.get("readyReplicas")),
            _count(v1beta2.get("upToDateReplicas") if v1beta2 else status.get("updatedReplicas")),
        )
        return str(dig(obj, "spec", "version") or ""), counters, row.available or row.ready
    return None, Counters(), row.ready


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
    #: the v1beta2 view (:class:`V1Beta2Row`)
    v1beta2: V1Beta2Row = field(default_factory=lambda: V1Beta2Row())
    #: whether ``conditions`` get rows of their own (``show_conditions`` matched this object)
    show_conditions: bool = False
    #: in the v1beta2 view, only the conditions that say something (``--show-conditions Kind+``)
    show_nonzero: bool = False
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
    def of(cls, obj: Obj, *, control_plane: bool = False) -> Node:
        """The row of ``obj``; ``control_plane``: it is the Cluster's control plane (its contract's counters)."""
        found = [ConditionState.of(condition) for condition in conditions_of(obj)]
        return cls(
            kind=str(obj.get("kind") or ""),
            name=name_of(obj),
            namespace=namespace_of(obj),
            api_version=str(obj.get("apiVersion") or ""),
            ready=next((condition for condition in found if condition.type == READY), None),
            conditions=sorted((condition for condition in found if condition.type != READY), key=lambda x: x.type),
            deleting=bool(dig(obj, "metadata", "deletionTimestamp")),
            v1beta2=V1Beta2Row.of(obj, control_plane=control_plane),
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
    """``--show-conditions``: ``all``, kinds, and kind/name pairs, compared without case, in order. In the v1beta2
    view an entry ending in ``+`` (``all+``, ``Machine+``, ``Machine/m1+``) shows only the conditions that say
    something (clusterctl's non-zero filter)."""

    entries: tuple[tuple[str, str, bool], ...] = ()

    @classmethod
    def parse(cls, text: str) -> ConditionFilter:
        entries = []
        for part in text.split(","):
            part = part.strip()
            if not part:
                continue
            nonzero = part.endswith("+")
            part = part.removesuffix("+").lower()
            kind, _, name = part.partition("/")
            entries.append((kind.strip(), name.strip(), nonzero))
        return cls(tuple(entries))

    def mode(self, node: Node) -> str:
        """``all``, ``nonzero`` or empty (no condition rows) for ``node``: the first entry that names it."""
        kind, name = node.kind.lower(), node.name.lower()
        for entry_kind, entry_name, nonzero in self.entries:
            if (entry_kind == "all" and not entry_name) or (entry_kind == kind and entry_name in ("", name)):
                return "nonzero" if nonzero else "all"
        return ""

    def matches(self, node: Node) -> bool:
        return bool(self.mode(node))


#: adds a Machine (and, when it is shown, its infrastructure machine and bootstrap config) under a node
AddMachine = Callable[[Node, Obj], None]


class _Tree:
    """Adds nodes under the rules of the module docstring."""

    def __init__(self, options: TreeOptions) -> None:
        self.options = options
        self.conditions = ConditionFilter.parse(options.show_conditions)

    def root(self, obj: Obj) -> Node:
        node = Node.of(obj)
        self._show(node)
        return node

    def _show(self, node: Node) -> None:
        mode = self.conditions.mode(node)
        node.show_conditions, node.show_nonzero = bool(mode), mode == "nonzero"

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
        self._show(child)
        if no_echo and not self.options.echo and self._echoes(parent, child):
            return False
        if meta_name:
            child.meta_name = meta_name
        if parent.grouping and self._merged(parent, child, z_order):
            return False
        child.grouping = grouping and self.options.grouping
        child.z_order = z_order
        parent.children.append(child)
        return True

    def _echoes(self, parent: Node, child: Node) -> bool:
        """Whether ``child`` only repeats what ``parent`` says: Ready True, or Ready as its parent's."""
        if self.options.v1beta2:
            ready = child.v1beta2.ready
            return (ready is not None and ready.status == "True") or same_status_and_reason(parent.v1beta2.ready, ready)
        ready = child.ready
        return (ready is not None and ready.status == "True") or same_state(parent.ready, ready)

    def _same(self, a: Node, b: Node) -> bool:
        return same_v1beta2_state(a, b) if self.options.v1beta2 else same_state(a.ready, b.ready)

    def _merged(self, parent: Node, child: Node, z_order: int) -> bool:
        """Merge ``child`` into a group with a sibling of its kind in the same state, if there is one."""
        for sibling in parent.children:
            if not self._same(child, sibling):
                continue
            if sibling.is_group and sibling.kind == child.kind + GROUP_SUFFIX:
                sibling.items = sorted([*sibling.items, child.name])
                sibling.ready = _group_ready(sibling.ready, child.ready)
                sibling.v1beta2 = _group_v1beta2(sibling.v1beta2, child.v1beta2, joining=True)
                return True
            if not sibling.is_group and not sibling.virtual and sibling.kind == child.kind:
                group = Node(
                    kind=child.kind + GROUP_SUFFIX,
                    name="",
                    namespace=child.namespace,
                    virtual=True,
                    items=sorted([sibling.name, child.name]),
                    ready=_group_ready(child.ready, sibling.ready),
                    v1beta2=_group_v1beta2(sibling.v1beta2, child.v1beta2, joining=False),
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


def _group_v1beta2(group: V1Beta2Row, child: V1Beta2Row, *, joining: bool) -> V1Beta2Row:
    """A group's v1beta2 row: the shared Ready with the earliest transition and no message (its STATUS), the shared
    Available and UpToDate without time or message, and how many of its objects are available, ready, up to date.

    ``joining``: ``child`` joins an existing group; else ``group`` is the sibling the new group starts from."""

    def counted(condition: ConditionState | None) -> int:
        return 1 if condition is not None and condition.status == "True" else 0

    def bare(condition: ConditionState | None) -> ConditionState | None:
        return replace(condition, message="", last_transition_time=None) if condition is not None else None

    if joining:
        before = group.counters
        available = int(before.available or 0) + counted(child.available)
        ready_count = int(before.ready or 0) + counted(child.ready)
        up_to_date = int(before.up_to_date or 0) + counted(child.up_to_date)
        kept = group
    else:  # both share the state: the new group counts two of each state that is True
        available, ready_count, up_to_date = (2 * counted(x) for x in (child.available, child.ready, child.up_to_date))
        kept = V1Beta2Row(available=bare(child.available), up_to_date=bare(child.up_to_date))
    ready = _group_ready(child.ready if not joining else kept.ready, group.ready if not joining else child.ready)
    counters = Counters("", str(available), str(ready_count), str(up_to_date))
    return replace(kept, ready=ready, status=ready, counters=counters, conditions=[], version=None)


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
        control_plane_node = Node.of(control_plane, control_plane=True)
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
