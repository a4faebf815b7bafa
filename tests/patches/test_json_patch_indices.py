"""JSON patch array indices: RFC 6902 semantics (``-`` appends, ``0`` prepends, negatives are refused)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from clusterclass.cli.main import cli

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "machinepools"


def _plan_with_patch(tmp_path: Path, path: str) -> tuple[int, str, dict[str, Any] | None]:
    """Plan the bundled example with one patch adding ``extra`` at ``path`` of the pool template."""
    documents = list(yaml.safe_load_all((EXAMPLE / "clusterclass.yaml").read_text()))
    for doc in documents:
        if doc["kind"] == "DockerMachinePoolTemplate":
            doc["spec"]["template"]["spec"]["template"]["preLoadImages"] = ["a", "b"]
        if doc["kind"] == "ClusterClass":
            doc["spec"]["patches"] = [
                {
                    "name": "images",
                    "definitions": [
                        {
                            "selector": {
                                "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                                "kind": "DockerMachinePoolTemplate",
                                "matchResources": {"machinePoolClass": {"names": ["pool"]}},
                            },
                            "jsonPatches": [{"op": "add", "path": path, "value": "extra"}],
                        }
                    ],
                }
            ]
    (tmp_path / "class.yaml").write_text(yaml.safe_dump_all(documents))
    result = CliRunner().invoke(
        cli,
        ["plan", "-f", str(tmp_path / "class.yaml"), "-f", str(EXAMPLE / "cluster.yaml"), "-o", "json", "--seed", "1"],
    )
    data = json.loads(result.stdout) if result.exit_code == 0 else None
    return result.exit_code, result.output, data


@pytest.mark.parametrize(
    ("index", "images"),
    [("-", ["a", "b", "extra"]), ("0", ["extra", "a", "b"]), ("1", ["a", "extra", "b"])],
)
def test_array_indices_follow_rfc_6902(tmp_path: Path, index: str, images: list[str]) -> None:
    code, output, data = _plan_with_patch(tmp_path, f"/spec/template/spec/template/preLoadImages/{index}")
    assert code == 0, output
    assert data is not None
    pools = [o for o in data["created"] if o["kind"] == "DockerMachinePool"]
    assert [p["spec"]["template"]["preLoadImages"] for p in pools] == [images, images]


def test_negative_array_index_is_rejected(tmp_path: Path) -> None:
    code, output, _ = _plan_with_patch(tmp_path, "/spec/template/spec/template/preLoadImages/-1")
    assert code == 1
    assert "Traceback" not in output
    assert 'patch "images" definitions[0] jsonPatches[0] (add /spec/template/spec/template/preLoadImages/-1)' in output
    assert "spec.patches[0].definitions[0].jsonPatches[0]" in output
    assert "class.yaml" in output
