"""The inline patch engine over a desired state (spec §5.1, §5.2, §5.7, §5.8, A20, A23; upstream's TestApply
of §10.9 and TestGenerate "multiple PatchDefinitions" of §10.7).

Fixture as upstream's: MachinePool class ``default-mp-worker`` with Generic bootstrap and infrastructure
machine pool templates, topologies ``default-mp-worker-topo1`` (no replicas) and
``default-mp-worker-topo2`` (replicas 5), and a MachineDeployment class ``default-worker``.
"""

from __future__ import annotations

import copy
from typing import Any

import builders as b
import pytest
from patch_support import (
    BOOTSTRAP_TEMPLATE,
    CONTROL_PLANE,
    INFRA_CLUSTER,
    MACHINE_TEMPLATE,
    FakeExtensions,
    PatchWorld,
    add,
    apply_engine,
    cluster,
    compute,
    definition,
    deployment,
    inline_patch,
    overrides,
    pool,
    remove,
    replace,
    snapshot,
    string_variable,
)

from clusterclass.errors import ObjectKey, TopologyError
from clusterclass.topology.desired import DesiredState

GENERIC_BOOTSTRAP = (b.BOOTSTRAP_V1, "GenericBootstrapConfigTemplate")
GENERIC_MP_INFRA = (b.INFRA_V1, "GenericInfrastructureMachinePoolTemplate")
GENERIC_MD_INFRA = (b.INFRA_V1, "GenericInfrastructureMachineTemplate")
MP_CLASS = "default-mp-worker"
MD_CLASS = "default-worker"
TOPO1, TOPO2 = "default-mp-worker-topo1", "default-mp-worker-topo2"
CC_KEY = ObjectKey("cluster.x-k8s.io", "ClusterClass", "default", "class1")


def generic(api_version_kind: tuple[str, str], name: str) -> dict[str, Any]:
    api_version, kind = api_version_kind
    return b.generic_template(kind, name, api_version, spec={})


def generic_world(*patches: dict[str, Any], variables: list[dict[str, Any]] | None = None) -> PatchWorld:
    return PatchWorld(
        md_bootstrap=generic(GENERIC_BOOTSTRAP, "md-bootstrap"),
        md_infrastructure=generic(GENERIC_MD_INFRA, "md-infra"),
        mp_bootstrap=generic(GENERIC_BOOTSTRAP, "mp-bootstrap"),
        mp_infrastructure=generic(GENERIC_MP_INFRA, "mp-infra"),
        md_classes=(MD_CLASS,),
        mp_classes=(MP_CLASS,),
        patches=list(patches),
        variables=variables or [],
    )


def generic_cluster(**kwargs: Any) -> dict[str, Any]:
    topo1_fields = kwargs.pop("topo1", {})
    return cluster(
        machine_pools=[pool(TOPO1, MP_CLASS, **topo1_fields), pool(TOPO2, MP_CLASS, replicas=5)],
        machine_deployments=[deployment("default-worker-topo1", MD_CLASS)],
        **kwargs,
    )


def pool_specs(desired: DesiredState, topology: str) -> tuple[Any, Any]:
    worker = desired.machine_pools[topology]
    return worker.bootstrap["spec"], worker.infrastructure["spec"]


def mp_definitions(*operations: dict[str, Any]) -> list[dict[str, Any]]:
    """The same operations for the MachinePool class's bootstrap and infrastructure templates."""
    match = {"machinePoolClass": {"names": [MP_CLASS]}}
    return [definition(GENERIC_BOOTSTRAP, match, *operations), definition(GENERIC_MP_INFRA, match, *operations)]


# --- TestApply (§10.9) -------------------------------------------------------------------------------------


def test_json_patches_reach_machine_pool_objects_and_machine_deployment_templates() -> None:
    """A patch at the template's /spec/template/spec/resource lands at the MachinePool object's spec.resource."""
    mp_match = {"machinePoolClass": {"names": [MP_CLASS]}}
    md_match = {"machineDeploymentClass": {"names": [MD_CLASS]}}
    world = generic_world(
        inline_patch(
            "fake-patch1",
            definition(GENERIC_BOOTSTRAP, mp_match, add("/spec/template/spec/resource", "default-mp-worker-bootstrap")),
            definition(GENERIC_MP_INFRA, mp_match, add("/spec/template/spec/resource", "default-mp-worker-infra")),
            definition(GENERIC_BOOTSTRAP, md_match, add("/spec/template/spec/resource", "default-worker-bootstrap")),
            definition(GENERIC_MD_INFRA, md_match, add("/spec/template/spec/resource", "default-worker-infra")),
        )
    )
    desired = compute(generic_cluster(), world.objects()).desired
    for topology in (TOPO1, TOPO2):
        worker = desired.machine_pools[topology]
        assert worker.bootstrap["kind"] == "GenericBootstrapConfig"
        assert worker.infrastructure["kind"] == "GenericInfrastructureMachinePool"
        assert pool_specs(desired, topology) == (
            {"resource": "default-mp-worker-bootstrap"},
            {"resource": "default-mp-worker-infra"},
        )
        # the MachinePool itself is not patchable and unchanged
        assert "resource" not in str(worker.object)
    md = desired.machine_deployments["default-worker-topo1"]
    assert md.bootstrap["spec"] == {"template": {"spec": {"resource": "default-worker-bootstrap"}}}
    assert md.infrastructure["spec"] == {"template": {"spec": {"resource": "default-worker-infra"}}}


def test_builtin_topology_name_is_per_machine_pool() -> None:
    world = generic_world(
        inline_patch(
            "builtins",
            *mp_definitions(
                add("/spec/template/spec/machinePoolTopologyName", variable="builtin.machinePool.topologyName")
            ),
        )
    )
    desired = compute(generic_cluster(), world.objects()).desired
    for topology in (TOPO1, TOPO2):
        assert pool_specs(desired, topology) == ({"machinePoolTopologyName": topology},) * 2


def test_override_shadows_the_cluster_variable_for_that_machine_pool_only() -> None:
    """A23: topo1's override wins for topo1's objects; topo2 sees the Cluster's value."""
    world = generic_world(
        inline_patch(
            "fake-patch1",
            *mp_definitions(add("/spec/template/spec/resource", variable="default-mp-worker-infra")),
        ),
        variables=[string_variable("default-mp-worker-infra")],
    )
    the_cluster = generic_cluster(
        variables=[{"name": "default-mp-worker-infra", "value": TOPO2}],
        topo1={
            "variables": overrides({"name": "default-mp-worker-infra", "value": "value2", "definitionFrom": "inline"})
        },
    )
    desired = compute(the_cluster, world.objects()).desired
    assert pool_specs(desired, TOPO1) == ({"resource": "value2"},) * 2
    assert pool_specs(desired, TOPO2) == ({"resource": TOPO2},) * 2


def test_conflicting_definitions_use_the_value_for_the_patch() -> None:
    """``infraCluster`` is defined inline and by an external patch; the inline patch sees the inline value."""
    schema = {"openAPIV3Schema": {"type": "string"}}
    world = PatchWorld(
        variables=[string_variable("infraCluster")],
        status_variables=[
            {
                "name": "infraCluster",
                "definitionsConflict": True,
                "definitions": [
                    {"from": "inline", "required": False, "schema": schema},
                    {
                        "from": "ext-patch",
                        "required": False,
                        "schema": {"openAPIV3Schema": {"type": "string", "maxLength": 20}},
                    },
                ],
            }
        ],
        patches=[
            inline_patch(
                "p",
                definition(
                    INFRA_CLUSTER,
                    {"infrastructureCluster": True},
                    add("/spec/template/spec/resource", variable="infraCluster"),
                ),
            ),
            {"name": "ext-patch", "external": {"validateExtension": "validate.ext"}},
        ],
    )
    the_cluster = cluster(
        variables=[
            {"name": "infraCluster", "value": "from-ext", "definitionFrom": "ext-patch"},
            {"name": "infraCluster", "value": "from-inline", "definitionFrom": "inline"},
        ]
    )
    desired = compute(the_cluster, world.objects(), extensions=FakeExtensions()).desired
    assert desired.infrastructure_cluster["spec"]["resource"] == "from-inline"


def test_no_patches_leave_the_desired_state_as_cloned() -> None:
    world = generic_world()
    before, after = apply_engine(generic_cluster(), world.objects())
    assert snapshot(after) == snapshot(before)
    for topology in (TOPO1, TOPO2):
        assert pool_specs(after, topology) == ({}, {})


def test_patches_apply_in_order_and_see_earlier_results() -> None:
    """Patches, their definitions and their operations run in order; each sees what ran before (§5.1 e)."""
    match = {"infrastructureCluster": True}
    world = PatchWorld(
        patches=[
            inline_patch(
                "first",
                definition(
                    INFRA_CLUSTER, match, add("/spec/template/spec/list", ["a"]), add("/spec/template/spec/list/-", "b")
                ),
                definition(INFRA_CLUSTER, match, add("/spec/template/spec/value", "first")),
            ),
            inline_patch(
                "second",
                definition(
                    INFRA_CLUSTER,
                    match,
                    add("/spec/template/spec/list/0", "z"),  # the list exists because "first" added it
                    replace("/spec/template/spec/value", "second"),  # replace needs the path to exist
                ),
            ),
            inline_patch("third", definition(INFRA_CLUSTER, match, remove("/spec/template/spec/list/1"))),
        ]
    )
    desired = compute(cluster(), world.objects()).desired
    assert desired.infrastructure_cluster["spec"] == {
        "loadBalancer": {"imageTag": "v1"},
        "list": ["z", "b"],
        "value": "second",
    }


def test_control_plane_fields_topology_computes_survive_a_patch_of_the_whole_spec() -> None:
    """§5.8: spec.version, spec.replicas and spec.machineTemplate.{infrastructureRef,metadata,timeouts} are kept."""
    world = PatchWorld(
        patches=[
            inline_patch(
                "replace-everything",
                definition(
                    CONTROL_PLANE,
                    {"controlPlane": True},
                    replace(
                        "/spec/template/spec",
                        {
                            "kubeadmConfigSpec": {"files": [{"path": "/a", "content": "b"}]},
                            "version": "v9.9.9",
                            "replicas": 42,
                            "rolloutStrategy": {"type": "RollingUpdate"},
                            "machineTemplate": {
                                "infrastructureRef": {"kind": "Bogus", "name": "bogus"},
                                "metadata": {"labels": {"bogus": "yes"}},
                                "nodeDrainTimeout": "1s",
                                "nodeVolumeDetachTimeout": "1s",
                                "nodeDeletionTimeout": "1s",
                            },
                        },
                    ),
                ),
            )
        ]
    )
    the_cluster = cluster(
        control_plane={
            "replicas": 3,
            "metadata": {"labels": {"cp": "label"}},
            "nodeDrainTimeout": "10s",
            "nodeVolumeDetachTimeout": "20s",
            "nodeDeletionTimeout": "30s",
        }
    )
    unpatched = compute(the_cluster, PatchWorld().objects(), seed=1).desired.control_plane
    patched = compute(the_cluster, world.objects(), seed=1).desired.control_plane
    assert patched["spec"]["kubeadmConfigSpec"] == {"files": [{"path": "/a", "content": "b"}]}
    assert patched["spec"]["rolloutStrategy"] == {"type": "RollingUpdate"}
    assert patched["spec"]["version"] == unpatched["spec"]["version"] == "v1.2.3"
    assert patched["spec"]["replicas"] == unpatched["spec"]["replicas"] == 3
    assert patched["spec"]["machineTemplate"] == unpatched["spec"]["machineTemplate"]
    assert patched["spec"]["machineTemplate"]["nodeDrainTimeout"] == "10s"
    assert patched["spec"]["machineTemplate"]["infrastructureRef"]["kind"] == "DockerMachineTemplate"
    assert patched["metadata"] == unpatched["metadata"]


def test_control_plane_fields_the_topology_leaves_unset_may_come_from_a_patch() -> None:
    """Only fields the pre-patch desired object has are preserved (upstream copySpec skips absent ones)."""
    world = PatchWorld(
        patches=[
            inline_patch("r", definition(CONTROL_PLANE, {"controlPlane": True}, add("/spec/template/spec/replicas", 5)))
        ]
    )
    assert "replicas" not in compute(cluster(), PatchWorld().objects()).desired.control_plane["spec"]
    assert compute(cluster(), world.objects()).desired.control_plane["spec"]["replicas"] == 5


@pytest.mark.parametrize(
    "path",
    ["/metadata/labels", "/metadata/annotations", "/spec/template/metadata", "/spec/extra"],
    ids=["template labels", "template annotations", "template-of-template metadata", "outside spec.template.spec"],
)
def test_only_the_template_spec_of_a_patched_template_is_kept(path: str) -> None:
    """§5.7/§5.8: whatever a patch does outside ``spec.template.spec`` is discarded, for every target.

    (The ClusterClass webhook, §6.3, only admits paths under ``/spec/``; offline ``plan`` runs no
    webhook, so the engine must discard the rest itself.)
    """
    value = {"patched": "yes"}
    world = PatchWorld(
        patches=[
            inline_patch(
                "outside",
                definition(INFRA_CLUSTER, {"infrastructureCluster": True}, add(path, value)),
                definition(CONTROL_PLANE, {"controlPlane": True}, add(path, value)),
                definition(
                    MACHINE_TEMPLATE,
                    {"controlPlane": True, "machineDeploymentClass": {"names": ["*"]}},
                    add(path, value),
                ),
                definition(
                    BOOTSTRAP_TEMPLATE,
                    {"machineDeploymentClass": {"names": ["*"]}, "machinePoolClass": {"names": ["*"]}},
                    add(path, value),
                ),
                definition(
                    (b.INFRA_V1, "DockerMachinePoolTemplate"), {"machinePoolClass": {"names": ["*"]}}, add(path, value)
                ),
            )
        ]
    )
    the_cluster = cluster(machine_pools=[pool("mp-0")], machine_deployments=[deployment("md-0")])
    before, after = apply_engine(the_cluster, world.objects())
    assert snapshot(after) == snapshot(before)
    assert "patched" not in repr(after)


def test_machine_deployment_templates_get_the_template_spec() -> None:
    world = PatchWorld(
        patches=[
            inline_patch(
                "md",
                definition(
                    BOOTSTRAP_TEMPLATE,
                    {"machineDeploymentClass": {"names": ["md-class"]}},
                    add("/spec/template/spec/files", [{"path": "/x"}]),
                ),
            )
        ]
    )
    desired = compute(cluster(machine_deployments=[deployment("md-0")]), world.objects()).desired
    template = desired.machine_deployments["md-0"].bootstrap
    assert template["kind"] == "KubeadmConfigTemplate"
    assert template["spec"]["template"]["spec"] == {
        "joinConfiguration": {"nodeRegistration": {"name": "{{ ds.meta_data.hostname }}"}},
        "files": [{"path": "/x"}],
    }


def test_patches_do_not_change_the_class_templates() -> None:
    """Items hold copies: the blueprint's templates stay as read, so a second computation is identical."""
    world = generic_world(inline_patch("p", *mp_definitions(add("/spec/template/spec/resource", "x"))))
    objects = world.objects()
    pristine = copy.deepcopy(objects)
    first = compute(generic_cluster(), objects).desired
    second = compute(generic_cluster(), objects).desired
    assert objects == pristine
    assert snapshot(first) == snapshot(second)


def test_enabled_if_is_evaluated_per_item_after_selection() -> None:
    """§5.5: ``enabledIf`` sees the item's builtins, and items no definition selects never evaluate it
    (here it would fail on templates without ``builtin.machinePool``: ``upper`` of a missing value)."""
    world = generic_world(
        inline_patch(
            "only-topo2",
            *mp_definitions(add("/spec/template/spec/resource", "x")),
            enabled_if=f'{{{{ eq (upper .builtin.machinePool.topologyName) "{TOPO2.upper()}" }}}}',
        )
    )
    desired = compute(generic_cluster(), world.objects()).desired
    assert pool_specs(desired, TOPO1) == ({}, {})
    assert pool_specs(desired, TOPO2) == ({"resource": "x"},) * 2


def test_disabled_patch_changes_nothing() -> None:
    world = generic_world(
        inline_patch("off", *mp_definitions(add("/spec/template/spec/resource", "x")), enabled_if="false")
    )
    before, after = apply_engine(generic_cluster(), world.objects())
    assert snapshot(after) == snapshot(before)


# --- TestGenerate "multiple PatchDefinitions" (§10.7) ----------------------------------------------------------

KUBELET = "/spec/template/spec/joinConfiguration/nodeRegistration/kubeletExtraArgs/cluster-name"


def azure_files(suffix: str) -> dict[str, Any]:
    return add(
        "/spec/template/spec/files",
        template=(
            "- contentFrom:\n"
            "    secret:\n"
            "      key: worker-node-azure.json\n"
            f'      name: "{{{{ .builtin.cluster.name }}}}-{suffix}-azure-json"\n'
            "  owner: root:root\n"
            "  path: /etc/kubernetes/azure.json\n"
            '  permissions: "0644"\n'
        ),
    )


def test_each_item_gets_only_the_operations_of_the_definitions_selecting_it() -> None:
    """The MachinePool's KubeadmConfig gets the MP definition's ops, the MachineDeployment's template the MD
    definition's, rendered with ``{{ .builtin.cluster.name }}``; the shared template kind does not mix them."""
    bootstrap_spec = {"joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": {"cluster-name": "placeholder"}}}}
    world = PatchWorld(
        md_bootstrap=b.kubeadm_config_template("md-bootstrap", spec=bootstrap_spec),
        mp_bootstrap=b.kubeadm_config_template("mp-bootstrap", spec=bootstrap_spec),
        md_classes=("default-worker",),
        mp_classes=("default-mp-worker",),
        patches=[
            inline_patch(
                "azure",
                definition(
                    BOOTSTRAP_TEMPLATE,
                    {"machineDeploymentClass": {"names": ["default-worker"]}},
                    replace(KUBELET, template="{{ .builtin.cluster.name }}"),
                    azure_files("md-0"),
                ),
                definition(
                    BOOTSTRAP_TEMPLATE,
                    {"machinePoolClass": {"names": ["default-mp-worker"]}},
                    replace(KUBELET, template="{{ .builtin.cluster.name }}"),
                    azure_files("mp-0"),
                ),
            )
        ],
    )
    the_cluster = cluster(
        name="cluster-name",
        machine_deployments=[deployment("md-0", "default-worker")],
        machine_pools=[pool("my-mp-0", "default-mp-worker")],
    )
    desired = compute(the_cluster, world.objects()).desired

    def expected(suffix: str) -> dict[str, Any]:
        return {
            "joinConfiguration": {"nodeRegistration": {"kubeletExtraArgs": {"cluster-name": "cluster-name"}}},
            "files": [
                {
                    "contentFrom": {
                        "secret": {"key": "worker-node-azure.json", "name": f"cluster-name-{suffix}-azure-json"}
                    },
                    "owner": "root:root",
                    "path": "/etc/kubernetes/azure.json",
                    "permissions": "0644",
                }
            ],
        }

    assert desired.machine_pools["my-mp-0"].bootstrap["spec"] == expected("mp-0")
    assert desired.machine_deployments["md-0"].bootstrap["spec"]["template"]["spec"] == expected("md-0")
    # other templates are not selected by either definition
    assert (
        desired.machine_pools["my-mp-0"].infrastructure["spec"] == world.mp_infrastructure["spec"]["template"]["spec"]
    )


# --- external patches ----------------------------------------------------------------------------------------


def test_validate_only_external_patch_generates_nothing_and_validates_the_result() -> None:
    """DECISIONS.md: an external patch with only a validate extension is valid (upstream v1.6 fails it)."""
    world = generic_world(
        {"name": "validate-only", "external": {"validateExtension": "validate-topology.ext"}},
        inline_patch("after", *mp_definitions(add("/spec/template/spec/resource", "x"))),
    )
    extensions = FakeExtensions()
    desired = compute(generic_cluster(), world.objects(), extensions=extensions).desired
    assert pool_specs(desired, TOPO1) == ({"resource": "x"},) * 2
    ((hook, handler, request, _),) = extensions.calls
    assert (hook, handler, request["kind"]) == ("ValidateTopology", "validate-topology.ext", "ValidateTopologyRequest")
    # validation sees the templates after every patch, without uids
    pool_items = [i for i in request["items"] if i["holderReference"]["kind"] == "MachinePool"]
    assert pool_items and all(i["object"]["spec"]["template"]["spec"]["resource"] == "x" for i in pool_items)
    assert all("uid" not in i for i in request["items"])


def test_external_patch_without_the_runtime_sdk_fails_with_upstreams_words() -> None:
    world = generic_world(
        inline_patch("first", *mp_definitions(add("/spec/template/spec/resource", "x"))),
        {"name": "my-extension", "external": {"generateExtension": "generate-patches.ext"}},
    )
    with pytest.raises(TopologyError) as caught:
        compute(generic_cluster(), world.objects())
    err = caught.value
    assert err.obj == CC_KEY
    assert err.field == "spec.patches[1].external"
    assert str(err) == (
        'failed to apply patches: can not use external patch "my-extension" if RuntimeSDK feature flag is disabled'
    )


def test_patch_with_neither_definitions_nor_external_fails() -> None:
    world = generic_world({"name": "empty", "definitions": []})
    with pytest.raises(TopologyError) as caught:
        compute(generic_cluster(), world.objects())
    assert caught.value.field == "spec.patches[0]"
    assert 'failed to create patch generator for patch "empty"' in str(caught.value)
