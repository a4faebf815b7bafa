"""``bootstrap.`` and ``controlplane.cluster.x-k8s.io``: the kubeadm kinds, v1beta1 ↔ v1beta2 (the hub).

KubeadmConfig, KubeadmConfigTemplate, KubeadmControlPlane and KubeadmControlPlaneTemplate all embed a
KubeadmConfigSpec (at ``spec``, ``spec.template.spec``, ``spec.kubeadmConfigSpec`` and
``spec.template.spec.kubeadmConfigSpec``), so its steps are written once, relative to the struct
(:func:`kubeadm_config_spec`), and placed with :func:`place`; the two control-plane kinds share their
rollout/remediation/naming steps (:func:`control_plane_spec`) the same way.

The rules are upstream v1.14's: ``api/bootstrap/kubeadm/v1beta1/conversion.go`` and
``api/controlplane/kubeadm/v1beta1/conversion.go`` (the field moves), and the hub-spoke converters of
``bootstrap/kubeadm/webhooks/conversion`` and ``controlplane/kubeadm/webhooks/conversion`` (bool intent, the
timeouts kept in the conversion-data annotation, the infrastructure reference). What differs:

- ``extraArgs`` / ``kubeletExtraArgs`` maps became lists of ``{name, value}`` sorted by name (``ConvertToArgs``);
- the kubeadm timeouts moved into ``initConfiguration.timeouts`` / ``joinConfiguration.timeouts`` (whole
  seconds): ``apiServer.timeoutForControlPlane`` is the init (and join) ``controlPlaneComponentHealthCheckSeconds``,
  ``discovery.timeout`` the join ``tlsBootstrapSeconds``; the timeouts v1beta1 has no field for live only in the
  conversion-data annotation (:func:`moved_timeouts`);
- a bootstrap token's ``ttl`` is ``ttlSeconds``;
- booleans that became ``*bool`` keep an explicit ``false`` through the annotation — in list items matched by a
  key, not by position, as upstream does (:class:`KeyedIntent`);
- v1beta1 fields v1beta2 dropped are dropped (``useExperimentalRetryJoin``, the ClusterConfiguration's
  ``networking``/``kubernetesVersion``/``clusterName`` and the kubeadm ``apiVersion``/``kind`` fields);
- v1beta1's pointers to structs became values written with ``omitzero`` (and a v1beta2 schema that wants at
  least one property), and some ``*string`` became ``string`` with ``omitempty``: an empty one is unset
  going up, as Go's typed round trip leaves it out; so are the empty lists v1beta2 refuses (``bootCommands:
  []``: ``minItems: 1``), listed once for the struct (:data:`KUBEADM_CONFIG_SPEC_OMIT_EMPTY`);
- the KubeadmControlPlane's machine template moved under ``machineTemplate.spec`` (the infrastructure
  reference becomes a contract reference, the node timeouts ``deletion.*Seconds``), ``rollout*`` became
  ``rollout.*``, ``remediationStrategy`` ``remediation`` (Durations as seconds) and ``machineNamingStrategy``
  ``machineNaming``;
- status: the v1beta1 conditions, failure fields and (KCP) old replica counters go to
  ``status.deprecated.v1beta1``, the ``status.v1beta2`` fields come up; ``ready`` / ``initialized`` become
  ``status.initialization.*`` with intent, except the KCP's ``ready``, which upstream does not keep but derives
  coming down (``readyReplicas > 0``).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from clusterclass.api.conversion.core import NEW_REPLICA_COUNTERS, STATUS_OMIT_EMPTY, legacy_conditions, within
from clusterclass.api.conversion.engine import (
    EACH,
    MISSING,
    Context,
    KindConversion,
    Path,
    SpokeConversion,
    Step,
    Transform,
    drop,
    empty,
    get_at,
    holders,
    hub_only,
    move,
    omit_empty,
    parse_path,
    render_path,
    set_at,
    spoke_default,
    under,
)
from clusterclass.api.conversion.engine import Intent as intent
from clusterclass.api.conversion.transforms import CONTRACT_REF, DURATION_SECONDS, OMIT_ZERO, keyed_list, omit_zero
from clusterclass.api.objects import Obj

BOOTSTRAP_GROUP: Final = "bootstrap.cluster.x-k8s.io"
CONTROLPLANE_GROUP: Final = "controlplane.cluster.x-k8s.io"
HUB: Final = "v1beta2"
SPOKE: Final = "v1beta1"


# --- re-encodings -----------------------------------------------------------------------------


_NAME_VALUE_LIST: Final = keyed_list("name", "value")


def _args_to_list(value: Any, ctx: Context, path: str) -> Any:
    args = _NAME_VALUE_LIST.to_hub(value, ctx, path)
    return MISSING if args is None or args == [] else args  # an empty list is left out (omitempty, minItems=1)


def _args_to_map(value: Any, ctx: Context, path: str) -> Any:
    args = _NAME_VALUE_LIST.to_spoke(value, ctx, path)
    if isinstance(args, dict):
        args = {name: "" if arg is None else arg for name, arg in args.items()}  # a nil value is "" (deref)
    return MISSING if args is None or args == {} else args


#: kubeadm's extra arguments: v1beta1's ``map[string]string`` ↔ v1beta2's ``[]{name, value}`` sorted by name
#: (upstream's ``ConvertToArgs``); coming down a repeated name keeps its last value (``ConvertFromArgs``).
EXTRA_ARGS: Final = Transform(_args_to_list, _args_to_map)


# --- steps that are not one field's move ------------------------------------------------------


def _fixed(path: Path, what: str) -> Path:
    if EACH in path:
        raise ValueError(f"{what} {render_path(path)}: a path through a list is not supported")
    return path


def _is_unset(value: Any) -> bool:
    return value is MISSING or value is None or value is False


@dataclass(frozen=True)
class KeyedIntent:
    """``field`` of the items of the list at ``items``: a ``bool`` that became a ``*bool``, whose explicit
    ``false`` comes back from the conversion-data annotation by the item's ``key`` rather than its position.

    Upstream (``RestoreBoolIntentKubeadmConfigSpec``) matches an extra volume by ``hostPath`` and a file by
    ``path``, in the spoke and in the restored hub alike, taking the first item with the key: so items that
    repeat a key all get the first one's value, as there.
    """

    items: Path
    key: str
    field: str

    def __post_init__(self) -> None:
        _fixed(self.items, "keyed intent")

    def placed(self, prefix: Path) -> KeyedIntent:
        return KeyedIntent((*prefix, *self.items), self.key, self.field)

    def to_hub(self, obj: Obj, ctx: Context) -> None:
        items = get_at(obj, self.items)
        if not isinstance(items, list):
            return
        spoke_values = self._first_by_key(items)
        restored_items = get_at(ctx.restored, self.items) if ctx.restored is not None else MISSING
        restored_values = self._first_by_key(restored_items) if isinstance(restored_items, list) else {}
        for item in items:
            if not isinstance(item, dict):
                continue
            value = spoke_values.get(self._key_of(item), item.get(self.field, MISSING))
            item.pop(self.field, None)
            if not _is_unset(value):
                item[self.field] = value
            elif restored_values.get(self._key_of(item), MISSING) is False:
                item[self.field] = False

    def to_spoke(self, obj: Obj, ctx: Context) -> None:
        items = get_at(obj, self.items)
        if not isinstance(items, list):
            return
        for item in items:
            if isinstance(item, dict) and self.field in item and _is_unset(item[self.field]):
                del item[self.field]  # a bool written with omitempty

    def _key_of(self, item: dict[str, Any]) -> str | None:
        key = item.get(self.key)
        return key if key is None or isinstance(key, str) else repr(key)

    def _first_by_key(self, items: list[Any]) -> dict[str | None, Any]:
        values: dict[str | None, Any] = {}
        for item in items:
            if isinstance(item, dict):
                values.setdefault(self._key_of(item), item.get(self.field, MISSING))
        return values

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path


#: ``rule(struct, ctx, where)`` edits the struct in place; ``where`` is its path, for errors.
StructEdit = Callable[[dict[str, Any], Context, str], None]


def _unchanged(_struct: dict[str, Any], _ctx: Context, _where: str) -> None:
    return None


@dataclass(frozen=True)
class StructRule:
    """A rule about one struct that is not a field's move (a value derived from another, a default one version
    applies): ``to_hub_fn`` / ``to_spoke_fn`` edit the map at ``at`` (``[]``: each list item's) where it exists.
    Written relative to the struct and placed with :func:`place`, as the field steps are."""

    at: Path
    to_hub_fn: StructEdit = _unchanged
    to_spoke_fn: StructEdit = _unchanged

    def placed(self, prefix: Path) -> StructRule:
        return StructRule((*prefix, *self.at), self.to_hub_fn, self.to_spoke_fn)

    def to_hub(self, obj: Obj, ctx: Context) -> None:
        for struct in list(holders(obj, self.at)):
            self.to_hub_fn(struct, ctx, render_path(self.at))

    def to_spoke(self, obj: Obj, ctx: Context) -> None:
        for struct in list(holders(obj, self.at)):
            self.to_spoke_fn(struct, ctx, render_path(self.at))

    def path_to_hub(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path

    def path_to_spoke(self, path: tuple[str | int, ...]) -> tuple[str | int, ...]:
        return path


KubeadmStep = Step


def _joined(where: str, path: str) -> str:
    return f"{where}.{path}" if where else path


# --- the KubeadmConfigSpec --------------------------------------------------------------------

CONTROL_PLANE_TIMEOUT: Final = "clusterConfiguration.apiServer.timeoutForControlPlane"
DISCOVERY_TIMEOUT: Final = "joinConfiguration.discovery.timeout"
INIT_CONTROL_PLANE_HEALTH_CHECK: Final = "initConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds"
JOIN_CONTROL_PLANE_HEALTH_CHECK: Final = "joinConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds"


def _join_health_check_follows_init(spec: dict[str, Any], ctx: Context, where: str) -> None:
    """Upstream's ``ConvertKubeadmConfigSpecV1Beta1ToHub``: the join ``controlPlaneComponentHealthCheckSeconds``
    is the init one, v1beta1's ``timeoutForControlPlane`` (whatever the annotation restored) — and is cleared
    when only ``discovery.timeout`` is set."""
    timeout = get_at(spec, parse_path(CONTROL_PLANE_TIMEOUT))
    join_path = parse_path(JOIN_CONTROL_PLANE_HEALTH_CHECK)
    if timeout is not MISSING and timeout is not None:
        seconds = DURATION_SECONDS.to_hub(timeout, ctx, _joined(where, CONTROL_PLANE_TIMEOUT))
        if seconds is not MISSING:
            set_at(spec, join_path, seconds)
    elif get_at(spec, parse_path(DISCOVERY_TIMEOUT)) not in (MISSING, None):
        timeouts = get_at(spec, join_path[:-1])
        if isinstance(timeouts, dict):
            timeouts.pop(join_path[-1], None)


def moved_timeouts() -> list[KubeadmStep]:
    """The kubeadm timeouts: v1beta2's ``initConfiguration.timeouts`` and ``joinConfiguration.timeouts`` are
    restored whole from the annotation (v1beta1 has no place for most of them), then the two v1beta1 already
    has override them: ``timeoutForControlPlane`` (init and join ``controlPlaneComponentHealthCheckSeconds``)
    and ``discovery.timeout`` (join ``tlsBootstrapSeconds``). Coming down only those two are written; the join
    health check is taken to equal the init one, and an init or join configuration the timeouts leave empty is
    left out (upstream's ``ConvertKubeadmConfigSpecHubToV1Beta1`` sets it to nil)."""
    return [
        # first: coming down they run after the timeouts left
        empty("initConfiguration", "initConfiguration"),
        empty("joinConfiguration", "joinConfiguration"),
        hub_only("initConfiguration.timeouts"),
        hub_only("joinConfiguration.timeouts"),
        StructRule((), _join_health_check_follows_init),
        move(CONTROL_PLANE_TIMEOUT, INIT_CONTROL_PLANE_HEALTH_CHECK, DURATION_SECONDS),
        move(DISCOVERY_TIMEOUT, "joinConfiguration.timeouts.tlsBootstrapSeconds", DURATION_SECONDS),
    ]


def cluster_configuration() -> list[KubeadmStep]:
    """A ``ClusterConfiguration``: kubeadm's type fields and what Cluster API fills from the Cluster are gone;
    each component's ``extraArgs`` is a list and its extra volumes' ``readOnly`` a ``*bool``."""
    steps: list[KubeadmStep] = [
        drop("apiVersion"),
        drop("kind"),
        drop("networking"),
        drop("kubernetesVersion"),
        drop("clusterName"),
        move("etcd.local.extraArgs", "etcd.local.extraArgs", EXTRA_ARGS),
    ]
    for component in ("apiServer", "controllerManager", "scheduler"):
        steps += [
            move(f"{component}.extraArgs", f"{component}.extraArgs", EXTRA_ARGS),
            KeyedIntent(parse_path(f"{component}.extraVolumes"), key="hostPath", field="readOnly"),
        ]
    return steps


def node_registration() -> list[KubeadmStep]:
    """``NodeRegistrationOptions`` (of the init and the join configuration): ``kubeletExtraArgs`` is a list."""
    return [move("kubeletExtraArgs", "kubeletExtraArgs", EXTRA_ARGS)]


def init_configuration() -> list[KubeadmStep]:
    """An ``InitConfiguration``: no type fields; a bootstrap token's ``ttl`` is whole seconds."""
    return [
        drop("apiVersion"),
        drop("kind"),
        move("bootstrapTokens[].ttl", "bootstrapTokens[].ttlSeconds", DURATION_SECONDS),
        *under("nodeRegistration", node_registration()),
    ]


def join_configuration() -> list[KubeadmStep]:
    """A ``JoinConfiguration``: no type fields; the discovery booleans became ``*bool``."""
    return [
        drop("apiVersion"),
        drop("kind"),
        *under("nodeRegistration", node_registration()),
        intent("discovery.bootstrapToken.unsafeSkipCAVerification"),
        intent("discovery.file.kubeConfig.cluster.insecureSkipTLSVerify"),
        intent("discovery.file.kubeConfig.user.exec.provideClusterInfo"),
    ]


def users() -> list[KubeadmStep]:
    """A user's optional strings were ``*string`` and are ``string`` with ``omitempty``: an empty one is unset
    (upstream's ``dropEmptyStringsKubeadmConfigSpec`` on the way down, Go's encoding on the way up)."""
    fields = ("gecos", "groups", "homeDir", "shell", "passwd", "primaryGroup", "sudo")
    return [omit_zero(f"users[].{name}") for name in fields]


def _no_layout_beside_disk_layout(partition: dict[str, Any], _ctx: Context, _where: str) -> None:
    """A v1beta1 partition with a ``diskLayout`` says ``layout: false`` because v1beta1 requires the field; v1beta2
    wants exactly one of the two, so that ``false`` is left out going up.

    Better than upstream v1.14, on purpose: its ``Convert_bool_To_Pointer_bool`` always sets the pointer, so the
    hub it makes of such a partition (and of a hub partition with ``diskLayout`` after a round trip through
    v1beta1) has both fields and fails v1beta2's validation. Leaving out a ``false`` that means nothing beside
    ``diskLayout`` is what v1beta2 says (mutually exclusive) and costs nothing; ``layout: true`` beside a
    ``diskLayout`` is kept (a contradiction v1beta2 refuses, as it would upstream's)."""
    if partition.get("layout") is False and "diskLayout" in partition:
        del partition["layout"]


def disk_setup() -> list[KubeadmStep]:
    """``diskSetup``: empty ``*string`` fields are unset as a user's are; a partition's ``layout`` was a
    required ``bool`` and is an optional ``*bool`` — copied as it is going up (upstream always sets the
    pointer) but for the ``false`` beside a ``diskLayout`` (:func:`_no_layout_beside_disk_layout`), ``false``
    where unset coming down (v1beta1's schema requires it)."""
    return [
        omit_zero("diskSetup.partitions[].tableType"),
        omit_zero("diskSetup.filesystems[].partition"),
        omit_zero("diskSetup.filesystems[].replaceFS"),
        StructRule(parse_path("diskSetup.partitions[]"), _no_layout_beside_disk_layout),
        spoke_default("diskSetup.partitions[].layout", False),
    ]


#: What a KubeadmConfigSpec leaves out when empty (Go's ``omitempty``/``omitzero``; v1beta2's schema refuses the
#: zero, v1beta1's takes it): the structs that were pointers (or always-written values) in v1beta1 and are
#: ``omitzero`` values with ``MinProperties=1`` in v1beta2 — one left empty (``initConfiguration:
#: {nodeRegistration: {}}``) is unset going up, as Go's typed conversion leaves a zero struct out — and the
#: optional lists (``MinItems=1``) and ports (``Minimum=1``) a v1beta1 client may write empty. Checked against the
#: CRDs (tests/conversion); :func:`~clusterclass.api.conversion.engine.omit_empty` orders them innermost first.
KUBEADM_CONFIG_SPEC_OMIT_EMPTY: Final = (
    "bootCommands",
    "preKubeadmCommands",
    "postKubeadmCommands",
    "files",
    "users",
    "mounts",
    "clusterConfiguration.apiServer.certSANs",
    *(
        f"clusterConfiguration.{component}.{name}"
        for component in ("apiServer", "controllerManager", "scheduler")
        for name in ("extraEnvs", "extraVolumes")
    ),
    "clusterConfiguration.etcd.local.extraEnvs",
    "clusterConfiguration.etcd.local.peerCertSANs",
    "clusterConfiguration.etcd.local.serverCertSANs",
    "clusterConfiguration.apiServer",
    "clusterConfiguration.controllerManager",
    "clusterConfiguration.scheduler",
    "clusterConfiguration.dns",
    "clusterConfiguration.etcd.local",
    "clusterConfiguration.etcd",
    "clusterConfiguration",
    "initConfiguration.bootstrapTokens[].groups",
    "initConfiguration.bootstrapTokens[].usages",
    "initConfiguration.bootstrapTokens",
    "initConfiguration.localAPIEndpoint.bindPort",
    "initConfiguration.nodeRegistration.ignorePreflightErrors",
    "initConfiguration.skipPhases",
    "initConfiguration.nodeRegistration",
    "initConfiguration.localAPIEndpoint",
    "initConfiguration.patches",
    "initConfiguration",
    "joinConfiguration.controlPlane.localAPIEndpoint.bindPort",
    "joinConfiguration.discovery.bootstrapToken.caCertHashes",
    "joinConfiguration.discovery.file.kubeConfig.user.exec.args",
    "joinConfiguration.discovery.file.kubeConfig.user.exec.env",
    "joinConfiguration.nodeRegistration.ignorePreflightErrors",
    "joinConfiguration.skipPhases",
    "joinConfiguration.nodeRegistration",
    "joinConfiguration.controlPlane.localAPIEndpoint",
    "joinConfiguration.discovery.bootstrapToken",
    "joinConfiguration.discovery.file.kubeConfig.cluster",
    "joinConfiguration.discovery",
    "joinConfiguration.patches",
    "joinConfiguration",
    "diskSetup",
    "ntp",
    "ignition.containerLinuxConfig",
    "ignition",
)


def kubeadm_config_spec() -> list[KubeadmStep]:
    """A ``KubeadmConfigSpec``, wherever a kind embeds it. What is left out when empty goes last, after every move
    out of it; the timeouts come first, while v1beta1's own timeout fields are still in place."""
    return [
        *moved_timeouts(),
        *under("clusterConfiguration", cluster_configuration()),
        *under("initConfiguration", init_configuration()),
        *under("joinConfiguration", join_configuration()),
        KeyedIntent(("files",), key="path", field="append"),
        intent("ignition.containerLinuxConfig.strict"),
        *users(),
        *disk_setup(),
        drop("useExperimentalRetryJoin"),
        *omit_empty(*KUBEADM_CONFIG_SPEC_OMIT_EMPTY),
    ]


# --- KubeadmConfig and KubeadmConfigTemplate --------------------------------------------------


def _kubeadm_config_steps() -> tuple[Step, ...]:
    return (
        *under("spec", kubeadm_config_spec()),
        *legacy_conditions(extra=("failureReason", "failureMessage")),
        move("status.ready", "status.initialization.dataSecretCreated", zero_intent=True),
        omit_zero("status.dataSecretName"),
        *omit_empty("spec", *STATUS_OMIT_EMPTY),
    )


def _kubeadm_config_template_steps() -> tuple[Step, ...]:
    return (
        spoke_default("spec.template.spec", {}),  # v1beta1's resource always has a spec; first: it runs last down
        *under("spec.template.spec", kubeadm_config_spec()),
        # v1beta2's template and spec are omitzero: an empty template (upstream's in-memory e2e class has one) is
        # an object without spec, which is also the only form its schema (template minProperties 1) takes
        *omit_empty("spec.template.spec", "spec.template.metadata", "spec.template", "spec"),
    )


# --- KubeadmControlPlane and KubeadmControlPlaneTemplate --------------------------------------


def control_plane_spec() -> list[KubeadmStep]:
    """What a KubeadmControlPlane's ``spec`` and a template's ``spec.template.spec`` share: ``rollout*`` →
    ``rollout.*``, ``remediationStrategy`` → ``remediation`` (Durations as seconds; ``retryPeriod`` was a
    value, so a zero one is unset unless the annotation says it was set to 0), ``machineNamingStrategy`` →
    ``machineNaming``. Zero values v1beta2 writes with ``omitempty`` are left out."""
    return [
        move("rolloutAfter", "rollout.after"),
        move("rolloutBefore.certificatesExpiryDays", "rollout.before.certificatesExpiryDays", OMIT_ZERO),
        move("rolloutStrategy.type", "rollout.strategy.type", OMIT_ZERO),
        move("rolloutStrategy.rollingUpdate.maxSurge", "rollout.strategy.rollingUpdate.maxSurge"),
        move("remediationStrategy.maxRetry", "remediation.maxRetry"),
        move("remediationStrategy.minHealthyPeriod", "remediation.minHealthyPeriodSeconds", DURATION_SECONDS),
        move("remediationStrategy.retryPeriod", "remediation.retryPeriodSeconds", DURATION_SECONDS, zero_intent=True),
        move("machineNamingStrategy.template", "machineNaming.template", OMIT_ZERO),
        empty("rolloutStrategy.rollingUpdate", "rollout.strategy.rollingUpdate"),
        empty("rolloutStrategy", "rollout.strategy"),
        empty("rolloutBefore", "rollout.before"),
        empty("remediationStrategy", "remediation"),
        empty("machineNamingStrategy", "machineNaming"),
    ]


def machine_template_deletion() -> list[KubeadmStep]:
    """A control-plane machine template's node timeouts (Durations) → ``spec.deletion.node*TimeoutSeconds``."""
    return [
        move(f"node{name}Timeout", f"spec.deletion.node{name}TimeoutSeconds", DURATION_SECONDS)
        for name in ("Drain", "VolumeDetach", "Deletion")
    ]


def machine_template() -> list[KubeadmStep]:
    """A KubeadmControlPlane's ``machineTemplate``: what describes the Machines moved under ``spec``; the
    infrastructure reference loses its apiVersion. Upstream builds ``readinessGates`` and ``taints`` item by
    item, so an empty list is not written."""
    return [
        move("infrastructureRef", "spec.infrastructureRef", CONTRACT_REF),
        move("readinessGates", "spec.readinessGates", OMIT_ZERO),
        move("taints", "spec.taints", OMIT_ZERO),
        *machine_template_deletion(),
    ]


def template_machine_template() -> list[KubeadmStep]:
    """A KubeadmControlPlaneTemplate's ``machineTemplate`` (no infrastructure reference or readiness gates)."""
    return [
        move("taints", "spec.taints", OMIT_ZERO),
        *machine_template_deletion(),
    ]


def _ready_from_ready_replicas(status: dict[str, Any], _ctx: Context, _where: str) -> None:
    """v1beta1's ``status.ready`` is not kept: coming down upstream rebuilds it from the (old) ready replicas."""
    ready_replicas = status.get("readyReplicas")
    if isinstance(ready_replicas, int) and not isinstance(ready_replicas, bool) and ready_replicas > 0:
        status["ready"] = True


def _forget_ready(status: dict[str, Any], _ctx: Context, _where: str) -> None:
    status.pop("ready", None)


def control_plane_status() -> list[KubeadmStep]:
    """A KubeadmControlPlane's ``status``: the replica counters whose meaning changed swap places with the
    ``status.v1beta2`` ones (the old ones leave first), ``initialized`` becomes
    ``initialization.controlPlaneInitialized``, ``lastRemediation.timestamp`` ``lastRemediation.time``."""
    return [
        StructRule(("status",), _forget_ready, _ready_from_ready_replicas),
        *legacy_conditions(
            extra=("failureReason", "failureMessage", "updatedReplicas", "readyReplicas", "unavailableReplicas"),
            promoted=NEW_REPLICA_COUNTERS,
        ),
        move("status.initialized", "status.initialization.controlPlaneInitialized", zero_intent=True),
        omit_zero("status.version"),
        move("status.lastRemediation.timestamp", "status.lastRemediation.time"),
    ]


def _kubeadm_control_plane_steps() -> tuple[Step, ...]:
    return (
        spoke_default("spec.kubeadmConfigSpec", {}),  # first: it must run last coming down
        *under("spec.kubeadmConfigSpec", kubeadm_config_spec()),
        *under("spec", control_plane_spec()),
        *under("spec.machineTemplate", machine_template()),
        *under("", control_plane_status()),
        *omit_empty("spec.kubeadmConfigSpec", "spec.machineTemplate.metadata", *STATUS_OMIT_EMPTY),
    )


def _rolling_update_by_default(spec: dict[str, Any], _ctx: Context, _where: str) -> None:
    """Upstream's KubeadmControlPlaneTemplate conversion (only it): a ``rolloutStrategy`` without a ``type`` is
    a RollingUpdate, the only type there is and the one v1beta1 defaulted (v1beta2 requires the type)."""
    strategy = spec.get("rolloutStrategy")
    if isinstance(strategy, dict) and not strategy.get("type"):
        strategy["type"] = "RollingUpdate"


def _kubeadm_control_plane_template_steps() -> tuple[Step, ...]:
    resource = "spec.template.spec"
    return (
        spoke_default(f"{resource}.kubeadmConfigSpec", {}),  # first: it must run last coming down
        *under(f"{resource}.kubeadmConfigSpec", kubeadm_config_spec()),
        StructRule(parse_path(resource), _rolling_update_by_default),
        *under(resource, control_plane_spec()),
        *under(f"{resource}.machineTemplate", template_machine_template()),
        *omit_empty(
            *within(resource, ("kubeadmConfigSpec", "machineTemplate.metadata", "machineTemplate")),
            resource,
            "spec.template.metadata",
            "spec.template",
            "spec",
        ),
    )


def _kind(group: str, kind: str, steps: tuple[Step, ...]) -> KindConversion:
    return KindConversion(group, kind, HUB, {SPOKE: SpokeConversion(SPOKE, steps)})


KUBEADM_CONFIG: Final = _kind(BOOTSTRAP_GROUP, "KubeadmConfig", _kubeadm_config_steps())
KUBEADM_CONFIG_TEMPLATE: Final = _kind(BOOTSTRAP_GROUP, "KubeadmConfigTemplate", _kubeadm_config_template_steps())
KUBEADM_CONTROL_PLANE: Final = _kind(CONTROLPLANE_GROUP, "KubeadmControlPlane", _kubeadm_control_plane_steps())
KUBEADM_CONTROL_PLANE_TEMPLATE: Final = _kind(
    CONTROLPLANE_GROUP, "KubeadmControlPlaneTemplate", _kubeadm_control_plane_template_steps()
)

CONVERSIONS: tuple[KindConversion, ...] = (
    KUBEADM_CONFIG,
    KUBEADM_CONFIG_TEMPLATE,
    KUBEADM_CONTROL_PLANE,
    KUBEADM_CONTROL_PLANE_TEMPLATE,
)
