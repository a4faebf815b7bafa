"""Which templates a patch definition targets (spec §5.4, A20, A22; upstream's TestMatchesSelector of §10.7).

First item by item (the holder, field path and class each request item carries), then through the
engine: a marker patch shows which desired objects a selector reached.
"""

from __future__ import annotations

from typing import Any

import pytest
from patch_support import (
    BOOTSTRAP_FIELD,
    BOOTSTRAP_TEMPLATE,
    CP_MACHINE_TEMPLATE_FIELD,
    INFRASTRUCTURE_FIELD,
    MACHINE_POOL_TEMPLATE,
    MACHINE_TEMPLATE,
    PatchWorld,
    add,
    apply_engine,
    cluster,
    definition,
    deployment,
    inline_patch,
    items_of,
    pool,
)

from clusterclass.api.views import WorkerTopology
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WorkerKind
from clusterclass.topology.desired import DesiredWorker
from clusterclass.topology.patches.request import Item
from clusterclass.topology.patches.selector import matches

BOOTSTRAP_V1 = "bootstrap.cluster.x-k8s.io/v1beta1"
INFRA_V1 = "infrastructure.cluster.x-k8s.io/v1beta1"
UNSET = object()


def item(
    holder_kind: str,
    field_path: str,
    api_version: str,
    kind: str,
    class_name: str | None = None,
    worker_kind: WorkerKind = MACHINE_POOL,
) -> Item:
    """A request item; ``class_name`` None means the item has no worker (its builtin class cannot be read)."""
    worker = None
    if class_name is not None:
        topology = WorkerTopology(worker_kind, {"class": class_name, "name": "topology"}, 0)
        worker = DesiredWorker(topology=topology, object={}, bootstrap={}, infrastructure={})
    template = {"apiVersion": api_version, "kind": kind, "metadata": {"name": "t"}, "spec": {}}
    return Item(holder_kind, "holder", field_path, template, worker=worker)


def selector(api_version: str, kind: str, match: Any = UNSET) -> dict[str, Any]:
    built: dict[str, Any] = {"apiVersion": api_version, "kind": kind}
    if match is not UNSET:
        built["matchResources"] = match
    return built


# --- MachinePool and MachineDeployment items ------------------------------------------------------------------

#: (id, item args, selector apiVersion, selector kind, matchResources[<worker key>] value, matches)
#: Written for MachinePools; the MachineDeployment twins are derived from it.
WORKER_CASES: list[tuple[str, tuple[str, str, str, str | None], str, str, Any, bool]] = [
    ("bootstrap template, exact name", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["classA"]}, True),  # noqa: E501
    ("bootstrap template, all names", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["*"]}, True),  # noqa: E501
    ("glob <string>-*", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "class-A"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["class-*"]}, True),  # noqa: E501
    ("glob *-<string>", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "class-A"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["*-A"]}, True),  # noqa: E501
    ("second name matches", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["classB", "classA"]}, True),  # noqa: E501
    ("glob *-<string> does not match", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "class-A"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["*-B"]}, False),  # noqa: E501
    ("glob <string>-* does not match", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "class-A"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["other-*"]}, False),  # noqa: E501
    ("a * in the middle is no glob", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "class-A"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["cl*-A"]}, False),  # noqa: E501
    ("names empty", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": []}, False),  # noqa: E501
    ("names missing", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {}, False),  # noqa: E501
    ("an empty name", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": [""]}, False),  # noqa: E501
    ("class selector set to nil", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", None, False),  # noqa: E501
    ("class selector not set", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", UNSET, False),  # noqa: E501
    ("other name", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["classB"]}, False),  # noqa: E501
    ("infrastructure template", (INFRASTRUCTURE_FIELD, INFRA_V1, "AzureMachinePoolTemplate", "classA"), INFRA_V1, "AzureMachinePoolTemplate", {"names": ["classA"]}, True),  # noqa: E501
    ("apiVersion mismatch", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), "bootstrap.cluster.x-k8s.io/v1alpha4", "BootstrapConfigTemplate", {"names": ["classA"]}, False),  # noqa: E501
    ("kind mismatch", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "OtherConfigTemplate", {"names": ["classA"]}, False),  # noqa: E501
    ("unknown fieldPath", ("spec.template.spec.unknown", BOOTSTRAP_V1, "BootstrapConfigTemplate", "classA"), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["classA"]}, False),  # noqa: E501
    ("builtin class cannot be read", (BOOTSTRAP_FIELD, BOOTSTRAP_V1, "BootstrapConfigTemplate", None), BOOTSTRAP_V1, "BootstrapConfigTemplate", {"names": ["*"]}, False),  # noqa: E501
]  # fmt: skip

WORKER_KEYS = {MACHINE_POOL: "machinePoolClass", MACHINE_DEPLOYMENT: "machineDeploymentClass"}


def _worker_params() -> list[Any]:
    params = []
    for kind in (MACHINE_POOL, MACHINE_DEPLOYMENT):
        for case_id, args, api_version, sel_kind, worker_match, expected in WORKER_CASES:
            params.append(
                pytest.param(kind, args, api_version, sel_kind, worker_match, expected, id=f"{kind.kind}: {case_id}")
            )
    return params


@pytest.mark.parametrize(("kind", "args", "api_version", "sel_kind", "worker_match", "expected"), _worker_params())
def test_worker_selector(
    kind: WorkerKind,
    args: tuple[str, str, str, str | None],
    api_version: str,
    sel_kind: str,
    worker_match: Any,
    expected: bool,
) -> None:
    field_path, template_api_version, template_kind, class_name = args
    the_item = item(kind.kind, field_path, template_api_version, template_kind, class_name, worker_kind=kind)
    match = {} if worker_match is UNSET else {WORKER_KEYS[kind]: worker_match}
    assert matches(selector(api_version, sel_kind, match), the_item) is expected


@pytest.mark.parametrize(
    ("holder_kind", "selector_key", "expected"),
    [
        ("MachinePool", "machinePoolClass", True),
        ("MachinePool", "machineDeploymentClass", False),
        ("MachineDeployment", "machineDeploymentClass", True),
        ("MachineDeployment", "machinePoolClass", False),
    ],
)
def test_worker_selector_needs_the_holder_kind_of_its_class(
    holder_kind: str, selector_key: str, expected: bool
) -> None:
    worker_kind = MACHINE_POOL if holder_kind == "MachinePool" else MACHINE_DEPLOYMENT
    for field_path in (BOOTSTRAP_FIELD, INFRASTRUCTURE_FIELD):
        the_item = item(holder_kind, field_path, BOOTSTRAP_V1, "KubeadmConfigTemplate", "c", worker_kind=worker_kind)
        sel = selector(BOOTSTRAP_V1, "KubeadmConfigTemplate", {selector_key: {"names": ["*"]}})
        assert matches(sel, the_item) is expected


def test_matches_resources_missing_never_matches() -> None:
    the_item = item("MachinePool", BOOTSTRAP_FIELD, BOOTSTRAP_V1, "KubeadmConfigTemplate", "c")
    assert matches(selector(BOOTSTRAP_V1, "KubeadmConfigTemplate"), the_item) is False


# --- control plane and infrastructure cluster items -------------------------------------------------------------

CP_V1 = "controlplane.cluster.x-k8s.io/v1beta1"

#: (id, holder kind, field path, template (apiVersion, kind), selector (apiVersion, kind), matchResources, matches)
CLUSTER_CASES: list[tuple[str, str, str, tuple[str, str], tuple[str, str], dict[str, Any], bool]] = [
    ("control plane template", "Cluster", "spec.controlPlaneRef", (CP_V1, "ControlPlaneTemplate"), (CP_V1, "ControlPlaneTemplate"), {"controlPlane": True}, True),  # noqa: E501
    ("control plane machine template", "ControlPlane", CP_MACHINE_TEMPLATE_FIELD, (INFRA_V1, "InfrastructureMachineTemplate"), (INFRA_V1, "InfrastructureMachineTemplate"), {"controlPlane": True}, True),  # noqa: E501
    ("control plane machine template, any holder kind", "KubeadmControlPlane", CP_MACHINE_TEMPLATE_FIELD, (INFRA_V1, "DockerMachineTemplate"), (INFRA_V1, "DockerMachineTemplate"), {"controlPlane": True}, True),  # noqa: E501
    ("control plane false", "Cluster", "spec.controlPlaneRef", (CP_V1, "ControlPlaneTemplate"), (CP_V1, "ControlPlaneTemplate"), {"controlPlane": False}, False),  # noqa: E501
    ("control plane selector on the infrastructure cluster", "Cluster", "spec.infrastructureRef", (INFRA_V1, "InfrastructureClusterTemplate"), (INFRA_V1, "InfrastructureClusterTemplate"), {"controlPlane": True}, False),  # noqa: E501
    ("control plane selector, controlPlaneRef of another holder", "MachineDeployment", "spec.controlPlaneRef", (CP_V1, "ControlPlaneTemplate"), (CP_V1, "ControlPlaneTemplate"), {"controlPlane": True}, False),  # noqa: E501
    ("control plane selector on a MachineDeployment template", "MachineDeployment", INFRASTRUCTURE_FIELD, (INFRA_V1, "DockerMachineTemplate"), (INFRA_V1, "DockerMachineTemplate"), {"controlPlane": True}, False),  # noqa: E501
    ("control plane, kind mismatch", "Cluster", "spec.controlPlaneRef", (CP_V1, "ControlPlaneTemplate"), (CP_V1, "OtherTemplate"), {"controlPlane": True}, False),  # noqa: E501
    ("infrastructure cluster", "Cluster", "spec.infrastructureRef", (INFRA_V1, "InfrastructureClusterTemplate"), (INFRA_V1, "InfrastructureClusterTemplate"), {"infrastructureCluster": True}, True),  # noqa: E501
    ("infrastructure cluster false", "Cluster", "spec.infrastructureRef", (INFRA_V1, "InfrastructureClusterTemplate"), (INFRA_V1, "InfrastructureClusterTemplate"), {"infrastructureCluster": False}, False),  # noqa: E501
    ("infrastructure cluster selector on the control plane", "Cluster", "spec.controlPlaneRef", (CP_V1, "ControlPlaneTemplate"), (CP_V1, "ControlPlaneTemplate"), {"infrastructureCluster": True}, False),  # noqa: E501
    ("infrastructure cluster, holder not a Cluster", "Other", "spec.infrastructureRef", (INFRA_V1, "InfrastructureClusterTemplate"), (INFRA_V1, "InfrastructureClusterTemplate"), {"infrastructureCluster": True}, False),  # noqa: E501
    ("infrastructure cluster, apiVersion mismatch", "Cluster", "spec.infrastructureRef", (INFRA_V1, "InfrastructureClusterTemplate"), ("infrastructure.cluster.x-k8s.io/v1alpha4", "InfrastructureClusterTemplate"), {"infrastructureCluster": True}, False),  # noqa: E501
    ("any of several enabled parts", "Cluster", "spec.infrastructureRef", (INFRA_V1, "InfrastructureClusterTemplate"), (INFRA_V1, "InfrastructureClusterTemplate"), {"controlPlane": True, "infrastructureCluster": True}, True),  # noqa: E501
    ("unknown fieldPath", "Cluster", "spec.somethingElse", (INFRA_V1, "InfrastructureClusterTemplate"), (INFRA_V1, "InfrastructureClusterTemplate"), {"controlPlane": True, "infrastructureCluster": True}, False),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("holder_kind", "field_path", "template", "sel", "match", "expected"),
    [case[1:] for case in CLUSTER_CASES],
    ids=[case[0] for case in CLUSTER_CASES],
)
def test_cluster_selector(
    holder_kind: str,
    field_path: str,
    template: tuple[str, str],
    sel: tuple[str, str],
    match: dict[str, Any],
    expected: bool,
) -> None:
    the_item = item(holder_kind, field_path, *template)
    assert matches(selector(*sel, match), the_item) is expected


# --- the items the engine builds -------------------------------------------------------------------------------


def test_items_in_upstream_order_with_holders_and_field_paths() -> None:
    """CP/infrastructure first, then MachineDeployments, then MachinePools, in topology order (§5.2, A20)."""
    world = PatchWorld()
    items = items_of(
        cluster(machine_pools=[pool("mp-b"), pool("mp-a")], machine_deployments=[deployment("md-0")]),
        world.objects(),
    )
    assert [(i.holder_kind, i.field_path, i.template["kind"]) for i in items] == [
        ("Cluster", "spec.infrastructureRef", "DockerClusterTemplate"),
        ("Cluster", "spec.controlPlaneRef", "KubeadmControlPlaneTemplate"),
        ("KubeadmControlPlane", CP_MACHINE_TEMPLATE_FIELD, "DockerMachineTemplate"),
        ("MachineDeployment", BOOTSTRAP_FIELD, "KubeadmConfigTemplate"),
        ("MachineDeployment", INFRASTRUCTURE_FIELD, "DockerMachineTemplate"),
        ("MachinePool", BOOTSTRAP_FIELD, "KubeadmConfigTemplate"),
        ("MachinePool", INFRASTRUCTURE_FIELD, "DockerMachinePoolTemplate"),
        ("MachinePool", BOOTSTRAP_FIELD, "KubeadmConfigTemplate"),
        ("MachinePool", INFRASTRUCTURE_FIELD, "DockerMachinePoolTemplate"),
    ]
    # the item object is the template as read, metadata included (not the desired object)
    mp_infra = items[6]
    assert mp_infra.template == world.mp_infrastructure
    assert [i.builtin["machinePool"]["topologyName"] for i in items[5:]] == ["mp-b", "mp-b", "mp-a", "mp-a"]
    assert items[5].holder_name.startswith("cluster1-mp-b-")


def test_no_item_for_a_control_plane_machine_template_the_class_does_not_have() -> None:
    items = items_of(cluster(), PatchWorld(machine_infrastructure=None).objects())
    assert [i.field_path for i in items] == ["spec.infrastructureRef", "spec.controlPlaneRef"]


# --- selectors through the engine --------------------------------------------------------------------------------

MARK = "/spec/template/spec/marker"

#: (id, selector (apiVersion, kind), matchResources, what gets the marker)
ENGINE_CASES: list[tuple[str, tuple[str, str], dict[str, Any], set[str]]] = [
    ("DockerMachineTemplate of the control plane only", MACHINE_TEMPLATE, {"controlPlane": True}, {"cp-machine-template"}),  # noqa: E501
    ("DockerMachineTemplate of MachineDeployments only", MACHINE_TEMPLATE, {"machineDeploymentClass": {"names": ["*"]}}, {"md-0/infrastructure", "md-other/infrastructure"}),  # noqa: E501
    ("KubeadmConfigTemplate shared by both classes, MachinePool side", BOOTSTRAP_TEMPLATE, {"machinePoolClass": {"names": ["*"]}}, {"mp-a/bootstrap", "mp-b/bootstrap", "mp-other/bootstrap"}),  # noqa: E501
    ("KubeadmConfigTemplate, both sides", BOOTSTRAP_TEMPLATE, {"machinePoolClass": {"names": ["*"]}, "machineDeploymentClass": {"names": ["*"]}}, {"mp-a/bootstrap", "mp-b/bootstrap", "mp-other/bootstrap", "md-0/bootstrap", "md-other/bootstrap"}),  # noqa: E501
    ("prefix glob on MachinePool classes", MACHINE_POOL_TEMPLATE, {"machinePoolClass": {"names": ["pool-*"]}}, {"mp-a/infrastructure", "mp-b/infrastructure"}),  # noqa: E501
    ("suffix glob on MachinePool classes", MACHINE_POOL_TEMPLATE, {"machinePoolClass": {"names": ["*-large"]}}, {"mp-b/infrastructure"}),  # noqa: E501
    ("exact MachineDeployment class", BOOTSTRAP_TEMPLATE, {"machineDeploymentClass": {"names": ["worker-small"]}}, {"md-0/bootstrap"}),  # noqa: E501
    ("MachinePool class names do not select MachineDeployments", MACHINE_TEMPLATE, {"machinePoolClass": {"names": ["*"]}}, set()),  # noqa: E501
]  # fmt: skip


def _marked(desired: Any) -> set[str]:
    found = set()
    if "marker" in desired.control_plane_infrastructure_machine_template["spec"]["template"]["spec"]:
        found.add("cp-machine-template")
    for name, worker in desired.machine_deployments.items():
        for part in ("bootstrap", "infrastructure"):
            if "marker" in getattr(worker, part)["spec"]["template"]["spec"]:
                found.add(f"{name}/{part}")
    for name, worker in desired.machine_pools.items():
        for part in ("bootstrap", "infrastructure"):
            if "marker" in getattr(worker, part)["spec"]:  # MachinePool objects: the template's spec.template.spec
                found.add(f"{name}/{part}")
    return found


@pytest.mark.parametrize(("sel", "match", "expected"), [c[1:] for c in ENGINE_CASES], ids=[c[0] for c in ENGINE_CASES])
def test_selectors_through_the_engine(sel: tuple[str, str], match: dict[str, Any], expected: set[str]) -> None:
    world = PatchWorld(
        md_classes=("worker-small", "other"),
        mp_classes=("pool-small", "pool-large", "other"),
        patches=[inline_patch("mark", definition(sel, match, add(MARK, "x")))],
    )
    the_cluster = cluster(
        machine_deployments=[deployment("md-0", "worker-small"), deployment("md-other", "other")],
        machine_pools=[pool("mp-a", "pool-small"), pool("mp-b", "pool-large"), pool("mp-other", "other")],
    )
    _, desired = apply_engine(the_cluster, world.objects())
    assert _marked(desired) == expected
