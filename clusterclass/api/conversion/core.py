"""``cluster.x-k8s.io``: v1beta1 ↔ v1beta2 (the hub) for the kinds a topology reads and writes.

Each kind's steps are in spoke → hub order; reversing them is the way down. The patterns repeat across kinds
(and are written once here): the v1beta1 conditions move to ``status.deprecated.v1beta1`` while the v1beta2
ones move up from ``status.v1beta2``; machine deletion timeouts become ``deletion.*Seconds``; a
``machineHealthCheck`` becomes ``healthCheck.{checks, remediation}``; references to provider objects lose their
apiVersion (:data:`~clusterclass.api.conversion.transforms.CONTRACT_REF`); a MachineSpec is the same in a Machine
and in every machine template (:func:`machine_spec`).

Kinds: Cluster, ClusterClass, MachineDeployment, MachineSet, MachinePool, Machine, MachineHealthCheck. The
booleans upstream restores by matching list items by key rather than by index (ClusterClass patches, variables
and their schemas) are :class:`~clusterclass.api.conversion.engine.Custom` steps (:func:`keyed_intent`,
:func:`schema_intent`).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any, Final

from clusterclass.api.conversion.engine import (
    MISSING,
    SAME,
    Context,
    Custom,
    FieldStep,
    KindConversion,
    Path,
    SpokeConversion,
    Step,
    Transform,
    drop,
    empty,
    get_at,
    hub_only,
    move,
    omit_empty,
    pop_at,
    set_at,
    under,
)
from clusterclass.api.conversion.engine import Intent as intent
from clusterclass.api.conversion.transforms import (
    CONTRACT_REF,
    DURATION_SECONDS,
    NODE_REF,
    OMIT_ZERO,
    TEMPLATE_REF,
)
from clusterclass.api.objects import Obj

GROUP: Final = "cluster.x-k8s.io"
HUB: Final = "v1beta2"


# --- shared structs ---------------------------------------------------------------------------


def _at(prefix: str, name: str) -> str:
    """``name`` inside the struct at ``prefix`` (``""``: the struct the steps are placed under itself)."""
    return f"{prefix}.{name}" if prefix else name


def deletion_timeouts() -> list[FieldStep]:
    """``nodeDrainTimeout`` & co. (Durations) → ``deletion.node*TimeoutSeconds``."""
    return [
        move("nodeDrainTimeout", "deletion.nodeDrainTimeoutSeconds", DURATION_SECONDS),
        move("nodeVolumeDetachTimeout", "deletion.nodeVolumeDetachTimeoutSeconds", DURATION_SECONDS),
        move("nodeDeletionTimeout", "deletion.nodeDeletionTimeoutSeconds", DURATION_SECONDS),
    ]


def health_check_fields(spoke: str, hub: str) -> list[FieldStep]:
    """The fields of a v1beta1 health check at ``spoke`` → ``checks`` and ``remediation`` at ``hub``.

    The same struct is a class's or topology's ``machineHealthCheck`` (→ ``healthCheck``) and a
    MachineHealthCheck's ``spec`` itself (both prefixes ``""``); the remediation template keeps no namespace
    (it is always the object's own, which :data:`TEMPLATE_REF` puts back going down, as upstream does).
    Upstream builds the condition lists item by item (``append``), so an empty one is not written either way
    (v1beta2 wants at least one item).
    """
    checks, remediation = _at(hub, "checks"), _at(hub, "remediation")
    return [
        move(_at(spoke, "unhealthyConditions"), f"{checks}.unhealthyNodeConditions", OMIT_ZERO),
        move(
            f"{checks}.unhealthyNodeConditions[].timeout",
            f"{checks}.unhealthyNodeConditions[].timeoutSeconds",
            DURATION_SECONDS,
        ),
        move(_at(spoke, "unhealthyMachineConditions"), f"{checks}.unhealthyMachineConditions", OMIT_ZERO),
        move(
            f"{checks}.unhealthyMachineConditions[].timeout",
            f"{checks}.unhealthyMachineConditions[].timeoutSeconds",
            DURATION_SECONDS,
        ),
        move(_at(spoke, "nodeStartupTimeout"), f"{checks}.nodeStartupTimeoutSeconds", DURATION_SECONDS),
        move(_at(spoke, "maxUnhealthy"), f"{remediation}.triggerIf.unhealthyLessThanOrEqualTo"),
        move(_at(spoke, "unhealthyRange"), f"{remediation}.triggerIf.unhealthyInRange"),
        move(_at(spoke, "remediationTemplate"), f"{remediation}.templateRef", TEMPLATE_REF),
    ]


def health_check(*, topology: bool) -> list[FieldStep]:
    """A ``machineHealthCheck`` (class or topology) → ``healthCheck``; a topology's also has ``enable``."""
    steps: list[FieldStep] = []
    if topology:
        steps.append(move("machineHealthCheck.enable", "healthCheck.enabled"))
    steps += health_check_fields("machineHealthCheck", "healthCheck")
    steps.append(empty("machineHealthCheck", "healthCheck"))
    return steps


def rollout_strategy(*, max_in_flight: str = "healthCheck.remediation.maxInFlight") -> list[FieldStep]:
    """A MachineDeployment's (class's, topology's) ``strategy`` → ``rollout.strategy``, ``deletion.order`` and
    ``max_in_flight`` (a class or topology keeps it in its ``healthCheck``, a MachineDeployment in its
    ``remediation``). An empty ``rollingUpdate`` or ``remediation`` (v1beta1 pointers) is nothing in the hub, as
    upstream converts only what they hold; then an empty ``strategy`` goes."""
    return [
        move("strategy.type", "rollout.strategy.type"),
        move("strategy.rollingUpdate.maxUnavailable", "rollout.strategy.rollingUpdate.maxUnavailable"),
        move("strategy.rollingUpdate.maxSurge", "rollout.strategy.rollingUpdate.maxSurge"),
        move("strategy.rollingUpdate.deletePolicy", "deletion.order"),
        move("strategy.remediation.maxInFlight", max_in_flight),
        empty("strategy.rollingUpdate", "rollout.strategy.rollingUpdate"),
        empty("strategy.remediation", None),
        empty("strategy", "rollout"),
    ]


def legacy_conditions(*, extra: tuple[str, ...] = (), promoted: tuple[str, ...] = ()) -> list[FieldStep]:
    """v1beta1's ``status.conditions`` (and ``extra`` legacy fields) → ``status.deprecated.v1beta1``; then
    ``status.v1beta2.conditions`` (and ``promoted`` fields) → ``status.*``. The order matters: the legacy ones
    leave first, so a replica counter whose meaning changed (``readyReplicas``) is never taken for the new one.

    ``status.v1beta2`` is only the spoke's and ``status.deprecated`` only the hub's: what the moves leave empty of
    them goes with the moves, and one that was empty to begin with (``v1beta2: {}``, ``deprecated: {v1beta1:
    {}}``) goes too — upstream converts only what they hold (``if in.V1Beta2 != nil``) and has nowhere to put
    the empty struct."""
    steps: list[FieldStep] = [
        empty(None, "status.deprecated"),  # first: coming down it runs after the moves out of it
        move("status.conditions", "status.deprecated.v1beta1.conditions"),
    ]
    steps += [move(f"status.{name}", f"status.deprecated.v1beta1.{name}") for name in extra]
    steps.append(move("status.v1beta2.conditions", "status.conditions"))
    steps += [move(f"status.v1beta2.{name}", f"status.{name}") for name in promoted]
    steps.append(empty("status.v1beta2", "status.deprecated.v1beta1"))
    return steps


def renamed(spoke: str, hub: str, transform: Transform = SAME) -> list[FieldStep]:
    """A struct renamed as a whole (``namingStrategy`` → ``naming``); an empty one is left out on the way up.

    A Go client writes v1beta1's value structs even when empty (``metadata: {}``); the hub's are ``omitzero``
    and its schema says ``minProperties: 1``, so upstream's typed round trip drops them.
    """
    return [empty(spoke, hub), move(spoke, hub, transform)]


def within(prefix: str, paths: tuple[str, ...]) -> tuple[str, ...]:
    """``paths`` of a struct, placed at ``prefix`` (for an :func:`omit_empty` list)."""
    return tuple(_at(prefix, path) for path in paths)


#: What a kind's hub leaves out when empty (Go's ``omitempty``/``omitzero``; v1beta2's schema refuses the zero)
#: is one :func:`~clusterclass.api.conversion.engine.omit_empty` list per kind, last in its table; these are the
#: structs that repeat across kinds. The lists are checked against the CRDs (tests/conversion).
#:
#: a MachineSpec (a Machine's ``spec``, every machine template's ``spec``)
MACHINE_SPEC_OMIT_EMPTY: Final = ("readinessGates",)
#: a MachineDeployment's, MachineSet's or MachinePool's machine template
MACHINE_TEMPLATE_OMIT_EMPTY: Final = ("spec.template.metadata", *within("spec.template.spec", MACHINE_SPEC_OMIT_EMPTY))
#: a status: ``observedGeneration`` (``minimum: 1``) and the status itself (``minProperties: 1``)
STATUS_OMIT_EMPTY: Final = ("status.observedGeneration", "status")
#: a variable's JSONSchemaProps (only its top level is typed in the CRD)
SCHEMA_OMIT_EMPTY: Final = ("required", "x-kubernetes-validations", "x-metadata")
#: a Cluster topology's control plane and its MachineDeployment topologies
TOPOLOGY_OMIT_EMPTY: Final = ("metadata", "readinessGates", "variables.overrides", "variables")


def machine_spec() -> list[FieldStep]:
    """A MachineSpec (a Machine's ``spec``, and every machine template's): provider references lose their
    apiVersion (it comes back from the contract going down), deletion timeouts become seconds."""
    return [
        move("bootstrap.configRef", "bootstrap.configRef", CONTRACT_REF),
        move("infrastructureRef", "infrastructureRef", CONTRACT_REF),
        *deletion_timeouts(),
    ]


def class_templates() -> list[FieldStep]:
    """A MachineDeployment or MachinePool class's ``template.{metadata, bootstrap, infrastructure}`` → its own
    ``metadata``, ``bootstrap.templateRef`` and ``infrastructure.templateRef``."""
    return [
        *renamed("template.metadata", "metadata"),
        move("template.bootstrap.ref", "bootstrap.templateRef", TEMPLATE_REF),
        move("template.infrastructure.ref", "infrastructure.templateRef", TEMPLATE_REF),
    ]


def _machine_node_ref_up(value: Any, ctx: Context, path: str) -> Any:
    ref = NODE_REF.to_hub(value, ctx, path)
    return MISSING if isinstance(ref, dict) and not ref.get("name") else ref


def _machine_node_ref_down(value: Any, ctx: Context, path: str) -> Any:
    if isinstance(value, dict) and not value.get("name"):
        return MISSING
    return NODE_REF.to_spoke(value, ctx, path)


#: A Machine's ``status.nodeRef``: :data:`NODE_REF`, where a reference without a name is the zero
#: ``MachineNodeReference`` (``omitzero``) both ways, as upstream converts only a named (``IsDefined``) one.
MACHINE_NODE_REF: Final = Transform(_machine_node_ref_up, _machine_node_ref_down)


# --- bool intent matched by key ---------------------------------------------------------------
#
# Upstream's hub-spoke converters restore a ``false`` that became ``*bool`` (``Convert_bool_To_Pointer_bool``)
# from the conversion-data annotation, finding the restored list item by a key rather than by position:
# patches by ``name``, variables by ``name``, status definitions by ``from``, schema properties by name. A
# v1beta1 client may reorder such a list between the down- and the up-conversion; the engine's ``Intent``
# matches by index, so these rules are ``Custom`` steps over a path that names each list's key:
# ``spec.patches[name].definitions[].selector.matchResources.controlPlane`` (``[]``: the item at the same
# index, when both lists have the same length).


@dataclass(frozen=True)
class _ListMatch:
    #: the list's path from the enclosing item (from the object for the first)
    path: Path
    #: the field naming an item, or None for the item at the same index of a list of the same length
    key: str | None


def _parse_keyed(text: str) -> tuple[tuple[_ListMatch, ...], Path]:
    """``a.b[name].c[].d`` → the lists (``a.b`` by ``name``, ``c`` by position) and the tail (``d``)."""
    lists: list[_ListMatch] = []
    current: list[str] = []
    for part in text.split("."):
        name, bracket, rest = part.partition("[")
        current.append(name)
        if bracket:
            lists.append(_ListMatch(tuple(current), rest.removesuffix("]") or None))
            current = []
    return tuple(lists), tuple(current)


def _counterpart(item: Any, index: int, items: list[Any], theirs: list[Any], key: str | None) -> Any:
    if key is None:
        return theirs[index] if len(theirs) == len(items) else MISSING
    if not isinstance(item, dict) or key not in item:
        return MISSING
    return next((other for other in theirs if isinstance(other, dict) and other.get(key) == item[key]), MISSING)


def _counterparts(item: Any, restored: Any, lists: tuple[_ListMatch, ...]) -> Iterator[tuple[Obj, Any]]:
    """Every item the last of ``lists`` reaches in ``item``, each with its restored counterpart (or MISSING)."""
    if not lists:
        if isinstance(item, dict):
            yield item, restored
        return
    match, rest = lists[0], lists[1:]
    items = get_at(item, match.path)
    if not isinstance(items, list):
        return
    theirs = get_at(restored, match.path)
    theirs_list = theirs if isinstance(theirs, list) else []
    for index, child in enumerate(items):
        yield from _counterparts(child, _counterpart(child, index, items, theirs_list, match.key), rest)


def _delete(holder: Obj, path: Path) -> None:
    """Remove the field at ``path`` (the maps on the way are kept: ``matchResources`` is required in v1beta1)."""
    parent = get_at(holder, path[:-1])
    if isinstance(parent, dict):
        parent.pop(path[-1], None)


def _restore_false(holder: Obj, restored: Any, path: Path) -> None:
    """``Convert_bool_To_Pointer_bool``: ``true`` stays; ``false`` (or absent) becomes unset, unless the
    restored hub data has an explicit ``false`` there."""
    value = get_at(holder, path)
    if value is not MISSING and value is not None and value is not False:
        return
    _delete(holder, path)
    if get_at(restored, path) is False:
        set_at(holder, path, False)


def _drop_false(holder: Obj, path: Path) -> None:
    """``*false`` → ``false``, which v1beta1's ``omitempty`` leaves out."""
    if get_at(holder, path) is False:
        _delete(holder, path)


def keyed_intent(path: str) -> Custom:
    """A boolean that became a pointer in the hub, in list items matched by key (see the section comment)."""
    lists, tail = _parse_keyed(path)

    def to_hub(obj: Obj, ctx: Context) -> None:
        for item, restored in _counterparts(obj, ctx.restored if ctx.restored is not None else MISSING, lists):
            _restore_false(item, restored, tail)

    def to_spoke(obj: Obj, _ctx: Context) -> None:
        for item, _ in _counterparts(obj, MISSING, lists):
            _drop_false(item, tail)

    return Custom(to_hub, to_spoke)


#: The JSONSchemaProps booleans v1beta2 made pointers (upstream's ``restoreBoolIntentJSONSchemaProps``).
SCHEMA_BOOLEANS: Final = (
    "uniqueItems",
    "exclusiveMaximum",
    "exclusiveMinimum",
    "x-kubernetes-preserve-unknown-fields",
    "x-kubernetes-int-or-string",
)
_SCHEMA_ONE: Final = ("additionalProperties", "items", "not")
_SCHEMA_MANY: Final = ("allOf", "oneOf", "anyOf")


def _schema_children(schema: Obj, restored: Any) -> Iterator[tuple[Any, Any]]:
    """Each nested schema with its restored counterpart: properties by name, ``allOf``/``oneOf``/``anyOf`` by
    position (as upstream: the restored item at the same index), the others as they are."""
    properties = schema.get("properties")
    if isinstance(properties, dict):
        for name, prop in properties.items():
            yield prop, get_at(restored, ("properties", name))
    for name in _SCHEMA_ONE:
        if name in schema:
            yield schema[name], get_at(restored, (name,))
    for name in _SCHEMA_MANY:
        subs = schema.get(name)
        if isinstance(subs, list):
            for index, sub in enumerate(subs):
                yield sub, get_at(restored, (name, index))


def _schema_intent_up(schema: Any, restored: Any) -> None:
    if not isinstance(schema, dict):
        return
    for name in SCHEMA_BOOLEANS:
        _restore_false(schema, restored, (name,))
    for child, restored_child in _schema_children(schema, restored):
        _schema_intent_up(child, restored_child)


def _schema_intent_down(schema: Any) -> None:
    if not isinstance(schema, dict):
        return
    for name in SCHEMA_BOOLEANS:
        _drop_false(schema, (name,))
    for child, _ in _schema_children(schema, MISSING):
        _schema_intent_down(child)


def schema_intent(path: str) -> Custom:
    """The :data:`SCHEMA_BOOLEANS` of a variable's schema, recursively, with the variable matched by key."""
    lists, tail = _parse_keyed(path)

    def to_hub(obj: Obj, ctx: Context) -> None:
        for item, restored in _counterparts(obj, ctx.restored if ctx.restored is not None else MISSING, lists):
            _schema_intent_up(get_at(item, tail), get_at(restored, tail))

    def to_spoke(obj: Obj, _ctx: Context) -> None:
        for item, _ in _counterparts(obj, MISSING, lists):
            _schema_intent_down(get_at(item, tail))

    return Custom(to_hub, to_spoke)


def _failure_domains_up(value: Any, _ctx: Context, _path: str) -> Any:
    """v1beta1's map ``{name: {controlPlane, attributes}}`` → v1beta2's list sorted by name, each with an explicit
    ``controlPlane`` (upstream always sets the pointer). An empty map is no list: upstream makes an empty slice of
    it, which ``omitempty`` leaves out (v1beta2 wants at least one item)."""
    if not isinstance(value, dict):
        return value
    if not value:
        return MISSING
    domains = []
    for name in sorted(value):
        spec = value[name] if isinstance(value[name], dict) else {}
        domain: dict[str, Any] = {"name": name, "controlPlane": bool(spec.get("controlPlane", False))}
        if "attributes" in spec:
            domain["attributes"] = spec["attributes"]
        domains.append(domain)
    return domains


def _failure_domains_down(value: Any, _ctx: Context, _path: str) -> Any:
    if not isinstance(value, list):
        return value
    if not value:
        return MISSING  # v1beta1's map is omitempty
    domains: dict[str, Any] = {}
    for domain in value:
        if not isinstance(domain, dict) or "name" not in domain:
            continue
        spec: dict[str, Any] = {}
        if domain.get("controlPlane"):
            spec["controlPlane"] = True
        if "attributes" in domain:
            spec["attributes"] = domain["attributes"]
        domains[str(domain["name"])] = spec
    return domains


FAILURE_DOMAINS: Final = Transform(_failure_domains_up, _failure_domains_down)


# --- Cluster ----------------------------------------------------------------------------------


def _cluster_steps() -> tuple[Step, ...]:
    topology = "spec.topology"
    steps: list[Step] = [
        intent("spec.paused"),
        move("spec.controlPlaneRef", "spec.controlPlaneRef", CONTRACT_REF),
        move("spec.infrastructureRef", "spec.infrastructureRef", CONTRACT_REF),
        intent("spec.clusterNetwork.apiServerPort"),
        move(f"{topology}.class", f"{topology}.classRef.name"),
        move(f"{topology}.classNamespace", f"{topology}.classRef.namespace"),
        drop(f"{topology}.rolloutAfter"),
        drop(f"{topology}.variables[].definitionFrom"),
        drop(f"{topology}.controlPlane.variables.overrides[].definitionFrom"),
        *under(f"{topology}.controlPlane", [*deletion_timeouts(), *health_check(topology=True)]),
        *under(
            f"{topology}.workers.machineDeployments[]",
            [
                drop("variables.overrides[].definitionFrom"),
                *rollout_strategy(),
                *deletion_timeouts(),
                *health_check(topology=True),
            ],
        ),
        *under(
            f"{topology}.workers.machinePools[]",
            # health_check: clusterclass's extension of upstream's API (clusterclass.apiserver.crd.extensions)
            [drop("variables.overrides[].definitionFrom"), *deletion_timeouts(), *health_check(topology=True)],
        ),
        *legacy_conditions(extra=("failureReason", "failureMessage"), promoted=("controlPlane", "workers")),
        move("status.controlPlaneReady", "status.initialization.controlPlaneInitialized", zero_intent=True),
        move("status.infrastructureReady", "status.initialization.infrastructureProvisioned", zero_intent=True),
        move("status.failureDomains", "status.failureDomains", FAILURE_DOMAINS),
        *omit_empty(
            "spec.availabilityGates",
            "spec.clusterNetwork",
            "spec.controlPlaneEndpoint.host",  # v1beta1 always writes host and port
            "spec.controlPlaneEndpoint.port",
            "spec.controlPlaneEndpoint",
            "spec.topology.variables",
            "spec.topology.controlPlane",
            *within("spec.topology.controlPlane", TOPOLOGY_OMIT_EMPTY),
            "spec.topology.workers",
            "spec.topology.workers.machineDeployments",
            *within("spec.topology.workers.machineDeployments[]", TOPOLOGY_OMIT_EMPTY),
            "spec.topology.workers.machinePools",
            "spec.topology.workers.machinePools[].failureDomains",
            *within("spec.topology.workers.machinePools[]", ("metadata", "variables.overrides", "variables")),
            *STATUS_OMIT_EMPTY,
        ),
    ]
    return tuple(steps)


CLUSTER: Final = KindConversion(GROUP, "Cluster", HUB, {"v1beta1": SpokeConversion("v1beta1", _cluster_steps())})


# --- ClusterClass -----------------------------------------------------------------------------


def _cluster_class_steps() -> tuple[Step, ...]:
    """Template references keep their apiVersion (:data:`TEMPLATE_REF`; the namespace is the ClusterClass's);
    a worker class's ``template`` is spread over its own fields; naming strategies become ``naming``."""
    steps: list[Step] = [
        move("spec.infrastructure.ref", "spec.infrastructure.templateRef", TEMPLATE_REF),
        *renamed("spec.infrastructureNamingStrategy", "spec.infrastructure.naming"),
        *under(
            "spec.controlPlane",
            [
                move("ref", "templateRef", TEMPLATE_REF),
                move("machineInfrastructure.ref", "machineInfrastructure.templateRef", TEMPLATE_REF),
                *renamed("namingStrategy", "naming"),
                *deletion_timeouts(),
                *health_check(topology=False),
            ],
        ),
        *under(
            "spec.workers.machineDeployments[]",
            [
                *class_templates(),
                *renamed("namingStrategy", "naming"),
                *rollout_strategy(),
                *deletion_timeouts(),
                *health_check(topology=False),
            ],
        ),
        *under(
            "spec.workers.machinePools[]",
            # health_check: clusterclass's extension of upstream's API (clusterclass.apiserver.crd.extensions)
            [
                *class_templates(),
                *renamed("namingStrategy", "naming"),
                *deletion_timeouts(),
                *health_check(topology=False),
            ],
        ),
        *renamed("spec.variables[].metadata", "spec.variables[].deprecatedV1Beta1Metadata"),
        schema_intent("spec.variables[name].schema.openAPIV3Schema"),
        move("spec.patches[].external.generateExtension", "spec.patches[].external.generatePatchesExtension"),
        move("spec.patches[].external.validateExtension", "spec.patches[].external.validateTopologyExtension"),
        keyed_intent("spec.patches[name].definitions[].selector.matchResources.controlPlane"),
        keyed_intent("spec.patches[name].definitions[].selector.matchResources.infrastructureCluster"),
        *legacy_conditions(),
        keyed_intent("status.variables[name].definitionsConflict"),
        *renamed(
            "status.variables[].definitions[].metadata", "status.variables[].definitions[].deprecatedV1Beta1Metadata"
        ),
        schema_intent("status.variables[name].definitions[from].schema.openAPIV3Schema"),
        *omit_empty(
            "spec.availabilityGates",
            "spec.controlPlane.metadata",
            "spec.controlPlane.readinessGates",
            "spec.patches",
            "spec.variables",
            *within("spec.variables[].schema.openAPIV3Schema", SCHEMA_OMIT_EMPTY),
            "spec.workers.machineDeployments[].readinessGates",
            "spec.workers.machineDeployments",
            "spec.workers.machinePools",
            "spec.workers",
            *within("status.variables[].definitions[].schema.openAPIV3Schema", SCHEMA_OMIT_EMPTY),
            *STATUS_OMIT_EMPTY,
        ),
    ]
    return tuple(steps)


CLUSTER_CLASS: Final = KindConversion(
    GROUP, "ClusterClass", HUB, {"v1beta1": SpokeConversion("v1beta1", _cluster_class_steps())}
)


# --- MachineDeployment, MachineSet, MachinePool -----------------------------------------------

#: The replica counters v1beta2 redefined: v1beta1's move to ``status.deprecated.v1beta1``, the new ones up
#: from ``status.v1beta2``.
NEW_REPLICA_COUNTERS: Final = ("readyReplicas", "availableReplicas", "upToDateReplicas")


def _machine_deployment_steps() -> tuple[Step, ...]:
    """``minReadySeconds`` joins the machine template; ``strategy`` and ``rolloutAfter`` become ``rollout``,
    ``deletion.order`` and ``remediation``. ``revisionHistoryLimit`` and ``progressDeadlineSeconds`` have no
    place in v1beta2 and are dropped, as upstream drops them (they were never used)."""
    steps: list[Step] = [
        intent("spec.paused"),
        move("spec.minReadySeconds", "spec.template.spec.minReadySeconds"),
        drop("spec.revisionHistoryLimit"),
        drop("spec.progressDeadlineSeconds"),
        move("spec.rolloutAfter", "spec.rollout.after"),
        *under("spec", rollout_strategy(max_in_flight="remediation.maxInFlight")),
        *renamed("spec.machineNamingStrategy", "spec.machineNaming"),
        *under("spec.template.spec", machine_spec()),
        *legacy_conditions(
            extra=("readyReplicas", "availableReplicas", "updatedReplicas", "unavailableReplicas"),
            promoted=NEW_REPLICA_COUNTERS,
        ),
        *omit_empty(*MACHINE_TEMPLATE_OMIT_EMPTY, *STATUS_OMIT_EMPTY),
    ]
    return tuple(steps)


def _machine_set_steps() -> tuple[Step, ...]:
    """``minReadySeconds`` (an ``int32``) joins the machine template as a pointer, where 0 is unset: upstream
    keeps no conversion data for a MachineSet, so there is no intent to restore. ``deletePolicy`` becomes
    ``deletion.order``."""
    steps: list[Step] = [
        move("spec.minReadySeconds", "spec.template.spec.minReadySeconds", zero_intent=True),
        move("spec.deletePolicy", "spec.deletion.order"),
        *renamed("spec.machineNamingStrategy", "spec.machineNaming"),
        *under("spec.template.spec", machine_spec()),
        *legacy_conditions(
            extra=("readyReplicas", "availableReplicas", "fullyLabeledReplicas", "failureReason", "failureMessage"),
            promoted=NEW_REPLICA_COUNTERS,
        ),
        *omit_empty(*MACHINE_TEMPLATE_OMIT_EMPTY, *STATUS_OMIT_EMPTY),
    ]
    return tuple(steps)


def _initialization(*, bootstrap: str, infrastructure: str) -> list[FieldStep]:
    """A Machine's or MachinePool's readiness booleans → ``status.initialization`` pointers (zero intent)."""
    return [
        move(bootstrap, "status.initialization.bootstrapDataSecretCreated", zero_intent=True),
        move(infrastructure, "status.initialization.infrastructureProvisioned", zero_intent=True),
    ]


def _machine_pool_steps() -> tuple[Step, ...]:
    """As a MachineDeployment's template; ``status.nodeRefs`` stays a list of ``ObjectReference`` in v1beta2."""
    steps: list[Step] = [
        move("spec.minReadySeconds", "spec.template.spec.minReadySeconds"),
        *under("spec.template.spec", machine_spec()),
        *legacy_conditions(
            extra=("readyReplicas", "availableReplicas", "unavailableReplicas", "failureReason", "failureMessage"),
            promoted=NEW_REPLICA_COUNTERS,
        ),
        *_initialization(bootstrap="status.bootstrapReady", infrastructure="status.infrastructureReady"),
        *omit_empty(*MACHINE_TEMPLATE_OMIT_EMPTY, *STATUS_OMIT_EMPTY),
    ]
    return tuple(steps)


# --- Machine ----------------------------------------------------------------------------------


def _phase_to_hub(obj: Obj, ctx: Context) -> None:
    """With conversion data, the hub's phase comes back as it was (upstream: only the Machine controller
    writes it, so a v1beta1 client's phase is not kept)."""
    if ctx.restored is None:
        return
    phase = get_at(ctx.restored, ("status", "phase"))
    if phase is MISSING:
        pop_at(obj, ("status", "phase"))
    else:
        set_at(obj, ("status", "phase"), phase)


def _phase_to_spoke(obj: Obj, _ctx: Context) -> None:
    """v1beta1 has no ``Updating`` phase: such a Machine is ``Running`` there."""
    if get_at(obj, ("status", "phase")) == "Updating":
        set_at(obj, ("status", "phase"), "Running")


#: A Machine's ``status.phase``: ``Updating`` → ``Running`` going down, the restored phase going up.
MACHINE_PHASE: Final = Custom(_phase_to_hub, _phase_to_spoke)


def _machine_steps() -> tuple[Step, ...]:
    """v1beta2's ``spec.minReadySeconds`` and ``status.failureDomain`` have no v1beta1 field: the conversion
    data keeps them (upstream did not backport ``minReadySeconds``, which would show up twice in the
    MachineSet and MachineDeployment templates)."""
    steps: list[Step] = [
        *under("spec", machine_spec()),
        hub_only("spec.minReadySeconds"),
        *legacy_conditions(extra=("failureReason", "failureMessage")),
        *_initialization(bootstrap="status.bootstrapReady", infrastructure="status.infrastructureReady"),
        move("status.nodeRef", "status.nodeRef", MACHINE_NODE_REF),
        hub_only("status.failureDomain"),
        MACHINE_PHASE,
        *omit_empty(*within("spec", MACHINE_SPEC_OMIT_EMPTY), *STATUS_OMIT_EMPTY),
    ]
    return tuple(steps)


# --- MachineHealthCheck -----------------------------------------------------------------------


def _machine_health_check_steps() -> tuple[Step, ...]:
    """The class health check's fields, at the top of ``spec``; the status counters became pointers."""
    steps: list[Step] = [
        *under("spec", health_check_fields("", "")),
        *legacy_conditions(),
        intent("status.expectedMachines"),
        intent("status.currentHealthy"),
        intent("status.remediationsAllowed"),
        *omit_empty(*STATUS_OMIT_EMPTY),
    ]
    return tuple(steps)


def _kind(kind: str, steps: tuple[Step, ...], *, keeps_data: bool = True) -> KindConversion:
    return KindConversion(GROUP, kind, HUB, {"v1beta1": SpokeConversion("v1beta1", steps, keeps_data)})


MACHINE_DEPLOYMENT: Final = _kind("MachineDeployment", _machine_deployment_steps())
#: upstream's MachineSet converter keeps no conversion-data annotation
MACHINE_SET: Final = _kind("MachineSet", _machine_set_steps(), keeps_data=False)
MACHINE_POOL: Final = _kind("MachinePool", _machine_pool_steps())
MACHINE: Final = _kind("Machine", _machine_steps())
MACHINE_HEALTH_CHECK: Final = _kind("MachineHealthCheck", _machine_health_check_steps())

CONVERSIONS: tuple[KindConversion, ...] = (
    CLUSTER,
    CLUSTER_CLASS,
    MACHINE_DEPLOYMENT,
    MACHINE_SET,
    MACHINE_POOL,
    MACHINE,
    MACHINE_HEALTH_CHECK,
)
