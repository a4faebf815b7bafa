"""Printing a describe tree: Kubernetes' HumanDuration, colours, and the JSON and YAML forms."""

from __future__ import annotations

import io
import json
from datetime import timedelta

import pytest
import yaml
from describe_builders import NOW, false, sample_cluster
from rich.console import Console

from clusterclass.describe import ClusterObjects, TreeOptions, as_data, build_tree, render_json, render_table
from clusterclass.describe.humanduration import human_duration
from clusterclass.describe.render import child_prefix, plural, render_yaml

S, M, H, D = 1, 60, 3600, 86400


@pytest.mark.parametrize(
    ("seconds", "expected"),
    [
        (-3, "<invalid>"),
        (-2, "<invalid>"),
        (-1.5, "0s"),
        (-1, "0s"),
        (-0.5, "0s"),
        (0, "0s"),
        (0.9, "0s"),
        (1, "1s"),
        (95, "95s"),
        (119.9, "119s"),
        (2 * M, "2m"),
        (2 * M + 10, "2m10s"),
        (3 * M + 5, "3m5s"),
        (6 * M, "6m"),
        (9 * M + 59, "9m59s"),
        (10 * M, "10m"),
        (10 * M + 59, "10m"),
        (179 * M + 59, "179m"),
        (3 * H, "3h"),
        (3 * H + 5 * M, "3h5m"),
        (7 * H + 59 * M + 59, "7h59m"),
        (8 * H, "8h"),
        (47 * H + 59 * M, "47h"),
        (2 * D, "2d"),
        (4 * D + 2 * H, "4d2h"),
        (7 * D + 23 * H + 59 * M, "7d23h"),
        (8 * D, "8d"),
        (729 * D, "729d"),
        (730 * D, "2y"),
        (733 * D, "2y3d"),
        (8 * 365 * D - 1, "7y364d"),
        (8 * 365 * D, "8y"),
        (100 * 365 * D, "100y"),
    ],
)
def test_human_duration_is_kubernetes_own(seconds: float, expected: str) -> None:
    assert human_duration(timedelta(seconds=seconds)) == expected


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("Machine", "Machines"),
        ("MachineDeployment", "MachineDeployments"),
        ("KubeadmConfig", "KubeadmConfigs"),
        ("Ingress", "Ingresses"),
        ("Policy", "Policies"),
        ("Gateway", "Gateways"),
        ("Mesh", "Meshes"),
    ],
)
def test_group_rows_use_the_plural_of_the_kind(kind: str, expected: str) -> None:
    assert plural(kind) == expected


@pytest.mark.parametrize(
    ("prefix", "index", "count", "expected"),
    [("", 0, 2, "├─"), ("", 1, 2, "└─"), ("├─", 0, 1, "│ └─"), ("│ └─", 0, 2, "│   ├─"), ("  ├─", 1, 2, "  │ └─")],
)
def test_child_prefix(prefix: str, index: int, count: int, expected: str) -> None:
    assert child_prefix(prefix, index, count) == expected


def _colored(**options: bool) -> str:
    root, objects = sample_cluster(rollout=True)
    for o in objects:
        if o["metadata"]["name"] == "c1-x7k2p":
            o["status"]["conditions"][0] = false("Ready", 5, "LoadBalancerFailed", "Error", "no port")
        if o["kind"] == "KubeadmControlPlane":
            o["status"]["conditions"][0] = false("Ready", 5, "ScalingUp", "Warning")
    tree = build_tree(ClusterObjects.of(root, objects), TreeOptions(**options))
    out = io.StringIO()
    Console(file=out, force_terminal=True, color_system="standard", highlight=False, soft_wrap=True).print(
        render_table(tree, now=NOW), end=""
    )
    return out.getvalue()


def test_colors_follow_status_and_severity() -> None:
    printed = _colored()
    lines = printed.splitlines()
    green, red, yellow, white, gray = "\x1b[32m", "\x1b[31m", "\x1b[33m", "\x1b[37m", "\x1b[90m"
    assert f"{green}True" in lines[1]  # the Cluster
    assert f"{red}False" in lines[2] and f"{red}Error" in lines[2] and f"{red}LoadBalancerFailed" in lines[2]
    assert f"{yellow}False" in lines[3] and f"{yellow}Warning" in lines[3]
    pool = next(line for line in lines if "MachinePool/" in line)
    assert f"{white}False" in pool and f"{white}Info" in pool
    assert f"{gray}└─" in lines[5]  # tree prefixes are gray; Workers has no condition
    assert "\x1b[1m" in lines[1]  # the object name is bold


def test_without_colors_there_are_no_escapes() -> None:
    root, objects = sample_cluster()
    assert "\x1b" not in render_table(build_tree(ClusterObjects.of(root, objects)), now=NOW).plain


def test_json_is_the_same_tree_as_data() -> None:
    root, objects = sample_cluster(rollout=True)
    tree = build_tree(ClusterObjects.of(root, objects), TreeOptions(show_conditions="MachinePool"))
    data = json.loads(render_json(tree, now=NOW))
    assert data == as_data(tree, now=NOW)
    assert data["v1beta2"] == {  # the sample's objects carry v1beta1 conditions only
        "replicas": None,
        "available": None,
        "ready": None,
        "upToDate": None,
        "condition": None,
        "status": None,
        "severity": None,
        "reason": None,
        "since": None,
        "lastTransitionTime": None,
        "message": None,
    }
    assert {key: data[key] for key in data if key not in ("children", "v1beta2")} == {
        "name": "Cluster/c1",
        "kind": "Cluster",
        "object": {"apiVersion": "cluster.x-k8s.io/v1beta1", "namespace": "default", "name": "c1"},
        "deleting": False,
        "ready": "True",
        "severity": "",
        "reason": "",
        "since": "2m10s",
        "lastTransitionTime": "2024-05-01T11:57:50Z",
        "message": "",
    }
    assert [child["name"] for child in data["children"]] == [
        "ClusterInfrastructure - DockerCluster/c1-x7k2p",
        "ControlPlane - KubeadmControlPlane/c1-4bq9d",
        "Workers",
    ]
    workers = data["children"][2]
    assert workers["object"] is None and workers["ready"] is None and workers["since"] is None
    pool = workers["children"][1]
    assert pool["name"] == "MachinePool/c1-mp-0-t8lh4"
    assert (pool["ready"], pool["severity"], pool["reason"], pool["since"]) == (
        "False",
        "Info",
        "WaitingForReplicasReady",
        "40s",
    )
    assert [c["type"] for c in pool["conditions"]] == ["BootstrapReady", "InfrastructureReady", "ReplicasReady"]
    bootstrapping, old = pool["children"]
    assert bootstrapping.pop("v1beta2")["ready"] == "0"  # the v1beta2 view counts what its Machines say
    assert bootstrapping == {
        "name": "2 Machines...",
        "kind": "MachineGroup",
        "object": None,
        "deleting": False,
        "ready": "False",
        "severity": "Info",
        "reason": "Bootstrapping",
        "since": "25s",
        "lastTransitionTime": "2024-05-01T11:59:35Z",
        "message": "",
        "items": ["c1-mp-0-t8lh4-b2n7d", "c1-mp-0-t8lh4-q9w4z"],
        "children": [],
    }
    assert old["items"] == ["c1-mp-0-t8lh4-8vkq2", "c1-mp-0-t8lh4-rwz6m"] and old["since"] == "6m"


def test_json_keeps_the_whole_message() -> None:
    root, objects = sample_cluster()
    root["status"]["conditions"][0] = false("Ready", 5, "Failed", "Error", "m" * 150)
    data = as_data(build_tree(ClusterObjects.of(root, objects)), now=NOW)
    assert data["message"] == "m" * 150


def test_yaml_is_the_same_data() -> None:
    root, objects = sample_cluster()
    tree = build_tree(ClusterObjects.of(root, objects))
    assert yaml.safe_load(render_yaml(tree, now=NOW)) == as_data(tree, now=NOW)
