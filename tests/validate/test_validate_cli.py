"""``clusterclass validate`` end to end on real YAML: exit codes, output formats, update checks."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from clusterclass.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "machinepools"
INVALID = ROOT / "examples" / "invalid" / "cluster.yaml"


def run(*args: str, stdin: str | None = None) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, ["validate", *args], input=stdin)
    return result.exit_code, result.stdout, result.stderr


def documents(path: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def write(path: Path, docs: list[dict[str, Any]]) -> str:
    path.write_text(yaml.safe_dump_all(docs))
    return str(path)


def example_cluster() -> dict[str, Any]:
    (cluster,) = documents(EXAMPLE / "cluster.yaml")
    return cluster


def test_the_bundled_example_is_valid() -> None:
    code, out, err = run("-f", str(EXAMPLE))
    assert code == 0, out + err
    assert out.strip() == "2 object(s) valid"


def test_errors_are_one_line_each_with_kind_name_and_field_path() -> None:
    code, out, _ = run("-f", str(EXAMPLE / "clusterclass.yaml"), "-f", str(INVALID))
    assert code == 1
    lines = out.strip().splitlines()
    assert all(line.startswith("Cluster default/broken: spec.") or "upgrade-concurrency" in line for line in lines)
    assert "Cluster default/broken: spec.topology.workers.machinePools[0].replicas: Invalid value: -1" in out
    assert 'spec.topology.workers.machinePools[1].class: Invalid value: "gpu"' in out
    assert 'MachinePool with name "mp-0" is defined more than once' in out
    assert "spec.topology.workers.machinePools[2].name" in out


def test_json_output_is_a_list_of_invalid_statuses() -> None:
    code, out, _ = run("-f", str(EXAMPLE / "clusterclass.yaml"), "-f", str(INVALID), "-o", "json")
    assert code == 1
    (status,) = json.loads(out)
    assert status["kind"] == "Status"
    assert status["reason"] == "Invalid"
    assert status["code"] == 422
    assert status["details"]["kind"] == "Cluster"
    assert status["details"]["group"] == "cluster.x-k8s.io"
    assert status["details"]["name"] == "broken"
    assert status["message"].startswith('Cluster.cluster.x-k8s.io "broken" is invalid: [')
    fields = [cause["field"] for cause in status["details"]["causes"]]
    assert "spec.topology.workers.machinePools[0].replicas" in fields
    assert all(cause["reason"].startswith("FieldValue") for cause in status["details"]["causes"])


def test_json_output_of_valid_objects_is_an_empty_list() -> None:
    code, out, _ = run("-f", str(EXAMPLE), "-o", "json")
    assert code == 0
    assert json.loads(out) == []


def test_a_missing_cluster_class_is_a_warning_not_an_error(tmp_path: Path) -> None:
    code, out, err = run("-f", write(tmp_path / "c.yaml", [example_cluster()]))
    assert code == 0, out
    assert "warning: Cluster default/demo" in err
    assert "does not exist" in err


def test_stdin_input() -> None:
    code, out, _ = run("-f", "-", stdin=(EXAMPLE / "clusterclass.yaml").read_text() + "\n---\n" + INVALID.read_text())
    assert code == 1
    assert "Cluster default/broken" in out


def test_unparsable_input_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text("apiVersion: v1\nkind: [\n")
    code, _, err = run("-f", str(bad))
    assert code == 1
    assert str(bad) in err
    assert "line 3" in err
    assert "Traceback" not in err


def test_update_version_decrease_is_forbidden(tmp_path: Path) -> None:
    old = example_cluster()
    new = copy.deepcopy(old)
    new["spec"]["topology"]["version"] = "v1.27.3"
    code, out, _ = run(
        "-f", str(EXAMPLE / "clusterclass.yaml"), "-f", write(tmp_path / "new.yaml", [new]),
        "--old", write(tmp_path / "old.yaml", [old]),
    )  # fmt: skip
    assert code == 1
    assert "Cluster default/demo: spec.topology.version:" in out
    assert 'version cannot be decreased from "1.28.0" to "1.27.3"' in out  # semver strings, as upstream prints


def test_the_same_change_as_a_create_is_valid(tmp_path: Path) -> None:
    new = example_cluster()
    new["spec"]["topology"]["version"] = "v1.27.3"
    code, out, _ = run("-f", str(EXAMPLE / "clusterclass.yaml"), "-f", write(tmp_path / "new.yaml", [new]))
    assert code == 0, out


def test_removing_a_machine_pool_class_in_use_is_forbidden(tmp_path: Path) -> None:
    docs = documents(EXAMPLE / "clusterclass.yaml")
    old_class = next(d for d in docs if d["kind"] == "ClusterClass")
    new_class = copy.deepcopy(old_class)
    new_class["spec"]["workers"]["machinePools"] = []
    others = [d for d in docs if d["kind"] != "ClusterClass"]
    code, out, _ = run(
        "-f", write(tmp_path / "new.yaml", [new_class, *others, example_cluster()]),
        "--old", write(tmp_path / "old.yaml", [old_class]),
    )  # fmt: skip
    assert code == 1
    assert 'ClusterClass default/pools: spec.workers.machinePools: Forbidden: MachinePoolClass "pool"' in out
    assert 'used by Cluster "demo"' in out


def test_machine_pools_are_validated(tmp_path: Path) -> None:
    pool = {
        "apiVersion": "cluster.x-k8s.io/v1beta1",
        "kind": "MachinePool",
        "metadata": {"name": "mp", "namespace": "default"},
        "spec": {
            "clusterName": "demo",
            "replicas": -2,
            "template": {"spec": {"clusterName": "demo", "bootstrap": {}, "infrastructureRef": {"name": "x"}}},
        },
    }
    code, out, _ = run("-f", write(tmp_path / "mp.yaml", [pool]))
    assert code == 1
    assert "MachinePool default/mp: spec.replicas" in out
    assert "MachinePool default/mp: spec.template.spec.bootstrap" in out


def test_runs_as_a_real_process_without_traceback(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "clusterclass.cli.main", "validate", "-f", str(EXAMPLE / "clusterclass.yaml"),
         "-f", str(INVALID)],
        capture_output=True, text=True, check=False, timeout=120,
    )  # fmt: skip
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "Cluster default/broken" in result.stdout
