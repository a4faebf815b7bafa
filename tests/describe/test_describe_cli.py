"""``clusterclass describe cluster`` end to end: the embedded store served over HTTPS, read through a kubeconfig."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner, Result
from describe_builders import NOW, Obj, false, sample_cluster
from describe_store import write_objects
from describe_tables import HEALTHY_SAMPLE, ROLLOUT_SAMPLE, names, refit, sample_names, table

from clusterclass.apiserver import MemoryClient, MemoryStore
from clusterclass.apiserver.front.serving import ThreadedServer, serve_in_thread
from clusterclass.cli import describe as describe_cli
from clusterclass.cli.main import cli


@pytest.fixture
def store() -> Iterator[MemoryStore]:
    store = MemoryStore()
    yield store
    store.close()


@pytest.fixture
def served(store: MemoryStore, tmp_path: Path) -> Iterator[ThreadedServer]:
    server = serve_in_thread(store, kubeconfig_path=tmp_path / "kubeconfig")
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def fixed_now(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(describe_cli, "clock", lambda: NOW)
    monkeypatch.delenv("NO_COLOR", raising=False)


def write(store: MemoryStore, objects: list[Obj]) -> None:
    asyncio.run(write_objects(MemoryClient(store), objects))


def describe(kubeconfig: Path | str, *args: str, env: dict[str, str] | None = None, v1beta2: bool = False) -> Result:
    """``describe cluster ARGS``: the v1.6 table of spec §4 (``--v1beta2=false``) unless ``v1beta2``."""
    view = [] if v1beta2 else ["--v1beta2=false"]
    return CliRunner().invoke(cli, ["describe", "cluster", *args, *view, "--kubeconfig", str(kubeconfig)], env=env)


def one_error_line(result: Result) -> str:
    assert result.exit_code == 1, result.output
    assert result.stdout == ""
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert result.stderr.startswith("error: ")
    return result.stderr.rstrip("\n")


def test_the_healthy_sample_read_from_an_api_server(store: MemoryStore, served: ThreadedServer) -> None:
    cluster, objects = sample_cluster()
    write(store, [cluster, *objects])
    result = describe(served.kubeconfig_path, "c1")
    assert result.exit_code == 0, result.output
    assert result.stdout == refit(HEALTHY_SAMPLE, sample_names(HEALTHY_SAMPLE))
    assert result.stderr == ""


def test_the_rollout_sample_and_its_flags(store: MemoryStore, served: ThreadedServer) -> None:
    cluster, objects = sample_cluster(rollout=True)
    on_hold = "MachinePool(s) c1-mp-0-t8lh4 rollout and upgrade to version v1.29.0 on hold."
    for condition in cluster["status"]["conditions"]:
        if condition["type"] == "TopologyReconciled":
            condition.update(false("TopologyReconciled", 30, "MachinePoolsUpgradePending", message=on_hold))
    write(store, [cluster, *objects])
    result = describe(served.kubeconfig_path, "c1", "-n", "default")
    assert result.exit_code == 0, result.output
    expected = refit(ROLLOUT_SAMPLE, sample_names(HEALTHY_SAMPLE))
    assert result.stdout.splitlines()[-3:] == expected.splitlines()

    conditions = describe(served.kubeconfig_path, "c1", "--show-conditions", "Cluster")
    assert table(conditions.stdout)[4] == (
        "│           └─TopologyReconciled",
        "False",
        "Info",
        "MachinePoolsUpgradePending",
        "30s",
        on_hold,
    )
    echoed = describe(served.kubeconfig_path, "c1", "--echo", "--show-machinesets", "--show-templates")
    assert names(echoed.stdout)[-4:] == [
        "    ├─2 Machines...",
        "    ├─2 Machines...",
        "    ├─BootstrapConfig - KubeadmConfig/c1-mp-0-config-zcq4t",
        "    └─MachinePoolInfrastructure - DockerMachinePool/c1-mp-0-rhx9v",
    ]
    assert "  │ └─MachineSet/c1-md-0-d6wst-nj7bf" in names(echoed.stdout)
    assert "│ ├─Templates" in names(echoed.stdout)
    ungrouped = describe(served.kubeconfig_path, "c1", "--disable-grouping")
    assert "Machines..." not in ungrouped.stdout
    assert "    ├─Machine/c1-mp-0-t8lh4-b2n7d" in names(ungrouped.stdout)


def test_json_and_yaml(store: MemoryStore, served: ThreadedServer) -> None:
    cluster, objects = sample_cluster()
    write(store, [cluster, *objects])
    as_json = describe(served.kubeconfig_path, "c1", "-o", "json")
    assert as_json.exit_code == 0, as_json.output
    data = json.loads(as_json.stdout)
    assert data["name"] == "Cluster/c1" and data["since"] == "2m10s"
    assert data["object"]["namespace"] == "default" and data["object"]["name"] == "c1"
    assert [child["name"] for child in data["children"][2]["children"]] == [
        "MachineDeployment/c1-md-0-d6wst",
        "MachinePool/c1-mp-0-t8lh4",
    ]
    as_yaml = describe(served.kubeconfig_path, "c1", "-o", "yaml")
    assert yaml.safe_load(as_yaml.stdout) == data


def test_colors_only_when_asked_and_no_color_wins(store: MemoryStore, served: ThreadedServer) -> None:
    cluster, objects = sample_cluster()
    write(store, [cluster, *objects])
    assert "\x1b[" not in describe(served.kubeconfig_path, "c1").stdout  # not a terminal
    colored = describe(served.kubeconfig_path, "c1", "-c")
    assert "\x1b[32mTrue\x1b[0m" in colored.stdout
    assert "\x1b[" not in describe(served.kubeconfig_path, "c1", "--color", env={"NO_COLOR": "1"}).stdout


def test_the_namespace_defaults_to_the_kubeconfig_context_s(
    store: MemoryStore, served: ThreadedServer, tmp_path: Path
) -> None:
    write(store, [{"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team-a"}}])
    write(
        store,
        [
            {
                "apiVersion": "cluster.x-k8s.io/v1beta1",
                "kind": "Cluster",
                "metadata": {"name": "c2", "namespace": "team-a"},
                "spec": {},
            }
        ],
    )
    config = yaml.safe_load(served.kubeconfig_path.read_text())
    config["contexts"][0]["context"]["namespace"] = "team-a"
    with_namespace = tmp_path / "team-a.kubeconfig"
    with_namespace.write_text(yaml.safe_dump(config))

    result = describe(with_namespace, "c2")
    assert result.exit_code == 0, result.output
    assert result.stdout == "NAME        READY  SEVERITY  REASON  SINCE  MESSAGE\nCluster/c2\n"
    assert one_error_line(describe(served.kubeconfig_path, "c2")) == (
        'error: clusters.cluster.x-k8s.io "c2" not found'
    )  # the served kubeconfig's context has no namespace: default
    assert describe(served.kubeconfig_path, "c2", "--namespace", "team-a").exit_code == 0


def test_a_missing_cluster_is_one_line(served: ThreadedServer) -> None:
    assert one_error_line(describe(served.kubeconfig_path, "nope")) == (
        'error: clusters.cluster.x-k8s.io "nope" not found'
    )


def test_an_unreachable_server_is_one_line(served: ThreadedServer, tmp_path: Path) -> None:
    served.stop()
    line = one_error_line(describe(served.kubeconfig_path, "c1"))
    assert "cannot reach the API server" in line


def test_a_bad_kubeconfig_is_one_line(tmp_path: Path, served: ThreadedServer) -> None:
    broken = tmp_path / "broken"
    broken.write_text("clusters: [unclosed\n  - x: {")
    assert "not valid YAML" in one_error_line(describe(broken, "c1"))
    assert "cannot read kubeconfig" in one_error_line(describe(tmp_path / "missing", "c1"))
    unknown_context = CliRunner().invoke(
        cli,
        ["describe", "cluster", "c1", "--kubeconfig", str(served.kubeconfig_path), "--kubeconfig-context", "nope"],
    )
    assert "nope" in one_error_line(unknown_context)


def test_help() -> None:
    result = CliRunner().invoke(cli, ["describe", "cluster", "--help"])
    assert result.exit_code == 0
    for flag in ("--show-conditions", "--show-machinesets", "--show-templates", "--echo", "--disable-grouping"):
        assert flag in result.stdout
