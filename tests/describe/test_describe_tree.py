"""The describe tree (spec §4.2) as it prints: the samples of §4.4, grouping, echoes, virtual nodes, flags."""

from __future__ import annotations

import pytest
from describe_builders import (
    CAPI,
    INFRA,
    NOW,
    Obj,
    at,
    cluster,
    docker_cluster,
    docker_machine,
    false,
    kubeadm_config,
    kubeadm_control_plane,
    machine,
    machine_deployment,
    machine_set,
    obj,
    ready,
    sample_cluster,
    true,
)
from describe_tables import (
    HEALTHY_SAMPLE,
    ROLLOUT_SAMPLE,
    names,
    refit,
    sample_names,
    table,
    text,
)

from clusterclass.describe import ClusterObjects, TreeOptions, build_tree
from clusterclass.describe.tree import ConditionFilter, machines_shown


def test_the_healthy_sample_of_the_spec() -> None:
    root, objects = sample_cluster()
    assert text(root, objects) == refit(HEALTHY_SAMPLE, sample_names(HEALTHY_SAMPLE))


def test_the_rollout_sample_of_the_spec() -> None:
    """During a MachinePool rollout the pool shows one group row per state, its infrastructure hidden.

    The two group rows have the same name; ties keep the order the groups were formed in (the new
    Machines' names sort between the old ones', so the not-ready group forms first), so the order is
    stable here where clusterctl's is not.
    """
    root, objects = sample_cluster(rollout=True)
    printed = text(root, objects)
    expected = refit(ROLLOUT_SAMPLE, sample_names(HEALTHY_SAMPLE))
    assert printed.splitlines()[-3:] == expected.splitlines()
    # everything above the pool is as healthy as before
    healthy_rows = table(text(*sample_cluster()))
    assert table(printed)[:7] == healthy_rows[:7]
    assert "MachinePoolInfrastructure" not in printed and "BootstrapConfig" not in printed


def test_echo_shows_what_repeats_its_parent() -> None:
    root, objects = sample_cluster(rollout=True)
    rows = table(text(root, objects, echo=True))
    assert rows[3:6] == [
        ("│ └─Machine/c1-4bq9d-2bz8q", "True", "", "", "2m40s", ""),
        ("│   ├─BootstrapConfig - KubeadmConfig/c1-4bq9d-2bz8q", "True", "", "", "2m50s", ""),
        ("│   └─MachineInfrastructure - DockerMachine/c1-4bq9d-2bz8q", "True", "", "", "2m45s", ""),
    ]
    assert rows[-2:] == [
        ("├─BootstrapConfig - KubeadmConfig/c1-mp-0-config-zcq4t", "True", "", "", "5m", ""),
        (
            "└─MachinePoolInfrastructure - DockerMachinePool/c1-mp-0-rhx9v",
            "False",
            "Info",
            "WaitingForReplicasReady",
            "40s",
            "",
        ),
    ]


def test_sort_order_puts_groups_before_bootstrap_configs_and_machines() -> None:
    root, objects = sample_cluster(rollout=True)
    printed = text(root, objects, echo=True)
    under_pool = [n.strip(" │├└─") for n in names(printed)[-4:]]
    assert under_pool == [
        "2 Machines...",
        "2 Machines...",
        "BootstrapConfig - KubeadmConfig/c1-mp-0-config-zcq4t",
        "MachinePoolInfrastructure - DockerMachinePool/c1-mp-0-rhx9v",
    ]


def _one_deployment(*machine_states: tuple[str, list[Obj]], with_children: bool = True) -> tuple[Obj, list[Obj]]:
    """A Cluster with one MachineDeployment whose MachineSet has a Machine per ``(name, conditions)``."""
    infra_cluster = docker_cluster("c1-infra", ready(600))
    kcp = kubeadm_control_plane("c1-cp", ready(600))
    root = cluster("c1", infra_cluster, kcp, ready(600))
    md = machine_deployment("c1-md", ready(600))
    ms = machine_set("c1-md-ms", md, ready(600))
    objects = [infra_cluster, kcp, md, ms]
    for name, conditions in machine_states:
        infra = docker_machine(name, [dict(c) for c in conditions if c["type"] == "Ready"])  # mirrored by the Machine
        bootstrap = kubeadm_config(name, ready(600))
        objects += [infra, bootstrap]
        objects.append(
            machine(
                name,
                ms,
                conditions,
                infrastructure=infra if with_children else None,
                bootstrap=bootstrap if with_children else None,
            )
        )
    return root, objects


def test_grouping_merges_siblings_of_one_kind_in_one_state_with_the_earliest_time() -> None:
    root, objects = _one_deployment(
        ("m-c", ready(30)), ("m-a", ready(200)), ("m-b", ready(90)), ("m-d", [false("Ready", 10, "Deleting")])
    )
    rows = table(text(root, objects))
    assert rows[-2:] == [
        ("├─3 Machines...", "True", "", "", "3m20s", "See m-a, m-b, ..."),
        ("└─Machine/m-d", "False", "Info", "Deleting", "10s", ""),
    ]


def test_group_rows_list_at_most_two_names() -> None:
    root, objects = _one_deployment(("m-c", ready(30)), ("m-a", ready(200)), ("m-b", ready(90)))
    rows = table(text(root, objects))
    assert rows[-1] == ("└─3 Machines...", "True", "", "", "3m20s", "See m-a, m-b, ...")
    root, objects = _one_deployment(("m-b", ready(30)), ("m-a", ready(200)))
    assert table(text(root, objects))[-1] == ("└─2 Machines...", "True", "", "", "3m20s", "See m-a, m-b")


def test_same_status_with_another_reason_or_severity_does_not_merge() -> None:
    root, objects = _one_deployment(
        ("m-a", [false("Ready", 50, "Bootstrapping", message="0 of 2 completed")]),
        ("m-b", [false("Ready", 40, "Bootstrapping", message="1 of 2 completed")]),  # message ignored: merges
        ("m-c", [false("Ready", 30, "WaitingForInfrastructure")]),
        ("m-d", [false("Ready", 20, "Bootstrapping", severity="Warning")]),
    )
    rows = [(r[0].strip(" │├└─"), *r[1:]) for r in table(text(root, objects))[-3:]]
    assert rows == [
        ("2 Machines...", "False", "Info", "Bootstrapping", "50s", "See m-a, m-b"),
        ("Machine/m-c", "False", "Info", "WaitingForInfrastructure", "30s", ""),
        ("Machine/m-d", "False", "Warning", "Bootstrapping", "20s", ""),
    ]


def test_grouped_machines_lose_their_children_and_single_ones_keep_unready_ones() -> None:
    not_ready = [false("Ready", 20, "WaitingForBootstrapData")]
    root, objects = _one_deployment(("m-a", ready(100)), ("m-b", ready(90)), ("m-c", not_ready))
    # m-c's DockerMachine says the same as m-c: hidden; give it another reason and it shows
    for o in objects:
        if o["kind"] == "DockerMachine" and o["metadata"]["name"] == "m-c":
            o["status"]["conditions"] = [false("Ready", 15, "ContainerProvisioningFailed", "Error", "no image")]
    printed = text(root, objects)
    assert names(printed)[-3:] == [
        "    ├─2 Machines...",
        "    └─Machine/m-c",
        "      └─MachineInfrastructure - DockerMachine/m-c",
    ]
    assert table(printed)[-1][1:] == ("False", "Error", "ContainerProvisioningFailed", "15s", "no image")
    shown = machines_shown(build_tree(ClusterObjects.of(root, objects), TreeOptions()))
    assert shown == {"m-c"}


def test_disable_grouping_shows_each_machine() -> None:
    root, objects = _one_deployment(("m-a", ready(100)), ("m-b", ready(90)))
    assert names(text(root, objects, grouping=False))[-3:] == [
        "  └─MachineDeployment/c1-md",
        "    ├─Machine/m-a",
        "    └─Machine/m-b",
    ]


def test_show_machinesets_puts_machines_under_their_machineset() -> None:
    root, objects = sample_cluster()
    printed = text(root, objects, show_machinesets=True)
    assert names(printed)[5:8] == [
        "  ├─MachineDeployment/c1-md-0-d6wst",
        "  │ └─MachineSet/c1-md-0-d6wst-nj7bf",
        "  │   └─2 Machines...",
    ]
    assert table(printed)[6][1:5] == ("True", "", "", "96s")


def test_show_templates_adds_a_templates_node_first() -> None:
    root, objects = sample_cluster()
    printed = text(root, objects, show_templates=True)
    assert names(printed)[:12] == [
        "Cluster/c1",
        "├─ClusterInfrastructure - DockerCluster/c1-x7k2p",
        "├─ControlPlane - KubeadmControlPlane/c1-4bq9d",
        "│ ├─Templates",
        "│ │ └─MachineInfrastructureTemplate - DockerMachineTemplate/c1-control-plane-8n2ds",
        "│ └─Machine/c1-4bq9d-2bz8q",
        "└─Workers",
        "  ├─MachineDeployment/c1-md-0-d6wst",
        "  │ ├─Templates",
        "  │ │ ├─BootstrapConfigTemplate - KubeadmConfigTemplate/c1-md-0-bootstrap-9xk2f",
        "  │ │ └─MachineInfrastructureTemplate - DockerMachineTemplate/c1-md-0-infra-vb7qz",
        "  │ └─2 Machines...",
    ]


def test_a_template_that_cannot_be_read_still_shows_what_the_ref_names() -> None:
    root, objects = sample_cluster()
    objects = [o for o in objects if o["kind"] != "DockerMachineTemplate"]
    printed = text(root, objects, show_templates=True)
    assert "│ │ └─MachineInfrastructureTemplate - DockerMachineTemplate/c1-control-plane-8n2ds" in names(printed)


def test_show_conditions_of_the_cluster_lists_topology_reconciled() -> None:
    root, objects = sample_cluster()
    for condition in root["status"]["conditions"]:
        if condition["type"] == "TopologyReconciled":
            condition.update(
                false(
                    "TopologyReconciled",
                    12,
                    "ControlPlaneUpgradePending",
                    message="Control plane rollout and upgrade to version v1.29.0 on hold.",
                )
            )
    printed = text(root, objects, show_conditions="Cluster")
    rows = table(printed)
    assert [r[0] for r in rows[:6]] == [
        "Cluster/c1",
        "│           ├─ControlPlaneInitialized",
        "│           ├─ControlPlaneReady",
        "│           ├─InfrastructureReady",
        "│           └─TopologyReconciled",
        "├─ClusterInfrastructure - DockerCluster/c1-x7k2p",
    ]
    assert rows[4][1:] == (
        "False",
        "Info",
        "ControlPlaneUpgradePending",
        "12s",
        "Control plane rollout and upgrade to version v1.29.0 on hold.",
    )


def test_show_conditions_by_kind_and_name_is_case_insensitive_and_indents_under_the_prefix() -> None:
    root, objects = sample_cluster()
    printed = text(root, objects, show_conditions="kubeadmcontrolplane/c1-4bq9d, Machine/nothing")
    assert names(printed)[2:9] == [
        "├─ControlPlane - KubeadmControlPlane/c1-4bq9d",
        "│ │           ├─Available",
        "│ │           ├─CertificatesAvailable",
        "│ │           ├─MachinesCreated",
        "│ │           ├─MachinesReady",
        "│ │           └─Resized",
        "│ └─Machine/c1-4bq9d-2bz8q",
    ]
    everything = names(text(root, objects, show_conditions="all"))
    # under the DockerCluster, which has no children, and under the MachinePool, which has
    assert "│             └─LoadBalancerAvailable" in everything
    assert "    │           └─ReplicasReady" in everything


@pytest.mark.parametrize(
    ("text_", "expected"),
    [
        ("", ConditionFilter()),
        ("all", ConditionFilter((("all", "", False),))),
        (
            " Machine , KubeadmControlPlane/c1-cp,,all+",
            ConditionFilter(
                (("machine", "", False), ("kubeadmcontrolplane", "c1-cp", False), ("all", "", True)),
            ),
        ),
    ],
)
def test_show_conditions_parsing(text_: str, expected: ConditionFilter) -> None:
    assert ConditionFilter.parse(text_) == expected


def test_deleting_objects_are_marked() -> None:
    root, objects = _one_deployment(("m-a", ready(100)))
    for o in objects:
        if o["kind"] == "Machine":
            o["metadata"]["deletionTimestamp"] = at(3)
    assert names(text(root, objects))[-1] == "    └─!! DELETED !! Machine/m-a"


def test_deleting_children_keep_their_meta_name_after_the_mark() -> None:
    infra = docker_machine("m-a", [false("Ready", 3, "Deleting")])
    infra["metadata"]["deletionTimestamp"] = at(3)
    root, objects = _one_deployment()
    ms = next(o for o in objects if o["kind"] == "MachineSet")
    objects += [infra, machine("m-a", ms, [false("Ready", 5, "Deleting", "Warning")], infrastructure=infra)]
    assert names(text(root, objects))[-1] == "      └─!! DELETED !! MachineInfrastructure - DockerMachine/m-a"


def test_long_messages_are_cut_at_100_characters() -> None:
    message = "x" * 99 + "yz"
    root, objects = _one_deployment(("m-a", [false("Ready", 20, "Failed", "Error", message)]), with_children=False)
    assert table(text(root, objects))[-1][5] == "x" * 99 + "y ..."
    root, objects = _one_deployment(("m-a", [false("Ready", 20, "Failed", "Error", "x" * 100)]), with_children=False)
    assert table(text(root, objects))[-1][5] == "x" * 100


def test_a_message_with_line_breaks_spans_lines_and_keeps_the_columns() -> None:
    root, objects = _one_deployment(
        ("m-a", [false("Ready", 20, "Failed", "Error", "first line\nsecond line")]), with_children=False
    )
    lines = text(root, objects).splitlines()
    start = lines[0].index("MESSAGE")
    assert lines[-2][start:] == "first line"
    assert lines[-1] == " " * start + "second line"


def test_machines_that_belong_nowhere_go_under_other() -> None:
    root, objects = _one_deployment(("m-a", ready(100)))
    stray_set = machine_set("stray-ms", obj(CAPI, "MachineDeployment", "gone"), ready(50))
    objects += [
        stray_set,
        machine("m-orphan", obj(CAPI, "Thing", "nobody"), ready(70)),
        machine("m-stray", stray_set, [false("Ready", 40, "WaitingForInfrastructure")]),
    ]
    assert names(text(root, objects))[-5:] == [
        "  ├─MachineDeployment/c1-md",
        "  │ └─Machine/m-a",
        "  └─Other",
        "    ├─Machine/m-orphan",
        "    └─Machine/m-stray",
    ]


def test_control_plane_machines_without_a_control_plane_go_under_other_in_workers() -> None:
    infra_cluster = docker_cluster("c1-infra", ready(600))
    root = cluster("c1", infra_cluster, kubeadm_control_plane("c1-cp", []), ready(600))
    owner = obj(INFRA, "KubeadmControlPlane", "c1-cp")
    objects = [infra_cluster, machine("c1-cp-x", owner, ready(60), control_plane=True)]
    assert names(text(root, objects)) == [
        "Cluster/c1",
        "├─ClusterInfrastructure - DockerCluster/c1-infra",
        "└─Workers",
        "  └─Other",
        "    └─Machine/c1-cp-x",
    ]


def test_a_cluster_without_workers_has_no_workers_node_and_missing_references_are_left_out() -> None:
    root = cluster("c1", docker_cluster("gone", []), kubeadm_control_plane("gone-too", []), [])
    assert text(root, []) == "NAME        READY  SEVERITY  REASON  SINCE  MESSAGE\nCluster/c1\n"


def test_objects_of_other_clusters_and_namespaces_are_not_shown() -> None:
    root, objects = _one_deployment(("m-a", ready(100)))
    other = machine("m-other", obj(CAPI, "Thing", "x"), ready(5))
    other["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"] = "c2"
    elsewhere = machine("m-elsewhere", obj(CAPI, "Thing", "x"), ready(5))
    elsewhere["metadata"]["namespace"] = "team-b"
    assert "Other" not in text(root, [*objects, other, elsewhere])


def test_show_resourcesets() -> None:
    root, objects = _one_deployment()
    binding = {
        "apiVersion": "addons.cluster.x-k8s.io/v1beta1",
        "kind": "ClusterResourceSetBinding",
        "metadata": {"name": "c1", "namespace": "default"},
        "spec": {
            "clusterName": "c1",
            "bindings": [{"clusterResourceSetName": "crs-cni"}, {"clusterResourceSetName": "crs-csi"}],
        },
    }
    assert "ClusterResourceSets" not in text(root, [*objects, binding])
    assert names(text(root, [*objects, binding], show_resourcesets=True))[2:5] == [
        "├─ClusterResourceSets",
        "│ ├─ClusterResourceSet/crs-cni",
        "│ └─ClusterResourceSet/crs-csi",
    ]


def test_a_condition_without_a_transition_time_has_no_since() -> None:
    condition = true("Ready", 0)
    del condition["lastTransitionTime"]
    root, objects = _one_deployment(("m-a", [condition]), with_children=False)
    assert table(text(root, objects))[-1] == ("└─Machine/m-a", "True", "", "", "", "")


def test_now_is_a_parameter() -> None:
    from datetime import timedelta

    from clusterclass.describe import render_table

    root, objects = sample_cluster()
    tree = build_tree(ClusterObjects.of(root, objects))
    later = render_table(tree, now=NOW + timedelta(hours=3)).plain
    assert table(later)[0] == ("Cluster/c1", "True", "", "", "3h2m", "")
