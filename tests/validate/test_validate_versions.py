"""``clusterclass validate`` on v1beta2 and v1beta1 objects: one set of rules, each error in the user's version.

Upstream v1.14's own v1beta2 quick-start ClusterClass and its MachinePool Cluster are valid as they are; a
forbidden change is reported at ``spec.infrastructure.templateRef.kind`` when written in v1beta2 and at
``spec.infrastructure.ref.kind`` when the same ClusterClass is written in v1beta1.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import yaml
from click.testing import CliRunner

from clusterclass.api.contracts import bundled_contracts
from clusterclass.api.conversion import convert
from clusterclass.cli.main import cli

ROOT = Path(__file__).resolve().parents[2]
UPSTREAM = ROOT / "tests" / "plan" / "fixtures" / "upstream-v1.14"


def run(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["validate", *args])
    return result.exit_code, result.stdout + result.stderr


def upstream_class() -> dict[str, Any]:
    return next(d for d in yaml.safe_load_all((UPSTREAM / "clusterclass-quick-start.yaml").read_text()) if d)


def write(path: Path, obj: dict[str, Any]) -> str:
    path.write_text(yaml.safe_dump(obj))
    return str(path)


def test_upstreams_v1beta2_class_is_valid() -> None:
    code, out = run("-f", str(UPSTREAM / "clusterclass-quick-start.yaml"))
    assert code == 0, out
    assert "object(s) valid" in out


def test_a_forbidden_change_is_reported_in_v1beta2_spelling(tmp_path: Path) -> None:
    old = upstream_class()
    new = copy.deepcopy(old)
    new["spec"]["infrastructure"]["templateRef"]["kind"] = "DevMachineTemplate"
    code, out = run("-f", write(tmp_path / "new.yaml", new), "--old", write(tmp_path / "old.yaml", old), "-o", "json")
    assert code == 1
    (status,) = json.loads(out)
    assert [cause["field"] for cause in status["details"]["causes"]] == ["spec.infrastructure.templateRef.kind"]


def test_the_same_change_in_v1beta1_is_reported_in_v1beta1_spelling(tmp_path: Path) -> None:
    old = convert(upstream_class(), "cluster.x-k8s.io/v1beta1", api_versions=bundled_contracts())
    new = copy.deepcopy(old)
    new["spec"]["infrastructure"]["ref"]["kind"] = "DevMachineTemplate"
    code, out = run("-f", write(tmp_path / "new.yaml", new), "--old", write(tmp_path / "old.yaml", old))
    assert code == 1
    assert "ClusterClass default/quick-start: spec.infrastructure.ref.kind: Forbidden" in out
