"""JSON patch array indices.

Admission lets ``add`` address arrays only with ``0`` (prepend) or ``-`` (append), as upstream's webhook
does, so ``plan`` refuses other indices up front. The engine itself follows RFC 6902 and refuses negative
indices (upstream's JSON patch library accepts them) for ClusterClasses that never went through admission.
"""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest
import yaml
from click.testing import CliRunner

from clusterclass.cli.main import cli
from clusterclass.errors import TopologyError
from clusterclass.topology.patches.engine import ClusterClassPatchEngine
from clusterclass.topology.pipeline import compute_topology
from clusterclass.topology.reader import NoNodes, ObjectIndex

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


@pytest.mark.parametrize(("index", "images"), [("-", ["a", "b", "extra"]), ("0", ["extra", "a", "b"])])
def test_array_indices_follow_rfc_6902(tmp_path: Path, index: str, images: list[str]) -> None:
    code, output, data = _plan_with_patch(tmp_path, f"/spec/template/spec/template/preLoadImages/{index}")
    assert code == 0, output
    assert data is not None
    pools = [o for o in data["created"] if o["kind"] == "DockerMachinePool"]
    assert [p["spec"]["template"]["preLoadImages"] for p in pools] == [images, images]


@pytest.mark.parametrize("index", ["1", "-1"])
def test_admission_refuses_other_indices(tmp_path: Path, index: str) -> None:
    code, output, _ = _plan_with_patch(tmp_path, f"/spec/template/spec/template/preLoadImages/{index}")
    assert code == 1
    assert "Traceback" not in output
    assert "spec.patches[0].definitions[0].jsonPatches[0].path" in output
    assert 'arrays can only be accessed using "0" (prepend) or "-" (append)' in output


def _engine_with_patch(path: str) -> list[str]:
    """Run the pipeline and inline engine directly (no admission) with one patch at ``path``."""
    documents = list(yaml.safe_load_all((EXAMPLE / "clusterclass.yaml").read_text()))
    documents += list(yaml.safe_load_all((EXAMPLE / "cluster.yaml").read_text()))
    for doc in documents:
        if doc["kind"] == "DockerMachinePoolTemplate":
            doc["spec"]["template"]["spec"]["template"]["preLoadImages"] = ["a", "b"]
        if doc["kind"] == "ClusterClass":
            selector = {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                "kind": "DockerMachinePoolTemplate",
                "matchResources": {"machinePoolClass": {"names": ["pool"]}},
            }
            operation = {"op": "add", "path": path, "value": "extra"}
            doc["spec"]["patches"] = [
                {"name": "images", "definitions": [{"selector": selector, "jsonPatches": [operation]}]}
            ]
    index = ObjectIndex(documents)
    cluster = next(d for d in documents if d["kind"] == "Cluster")
    computation = compute_topology(
        cluster, index, nodes=NoNodes(), rng=random.Random(1), patches=ClusterClassPatchEngine()
    )
    pool = computation.desired.machine_pools["mp-0"].infrastructure
    return list(pool["spec"]["template"]["preLoadImages"])


def test_the_engine_inserts_at_any_non_negative_index() -> None:
    assert _engine_with_patch("/spec/template/spec/template/preLoadImages/1") == ["a", "extra", "b"]


def test_negative_array_index_is_rejected() -> None:
    with pytest.raises(TopologyError) as caught:
        _engine_with_patch("/spec/template/spec/template/preLoadImages/-1")
    assert 'patch "images" definitions[0] jsonPatches[0] (add /spec/template/spec/template/preLoadImages/-1)' in str(
        caught.value
    )
    assert caught.value.field == "spec.patches[0].definitions[0].jsonPatches[0]"
