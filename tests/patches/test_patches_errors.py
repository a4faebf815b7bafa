"""A failing patch fails the Cluster with one clear error (spec §5.1, §5.6, §5.7).

The error names the patch, the definition, the operation and its path and the template it was
applied to; it points at the ClusterClass field (``spec.patches[i].definitions[j].jsonPatches[k]``), so
``plan`` names the ClusterClass file, and never shows a traceback. Runaway templates stop at the
execution budget instead of hanging.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from patch_support import (
    FIXTURES,
    INFRA_CLUSTER,
    MACHINE_POOL_TEMPLATE,
    QUICK_START,
    REPO_ROOT,
    PatchWorld,
    add,
    cluster,
    compute,
    definition,
    inline_patch,
    invoke,
    pool,
    remove,
    replace,
)

from clusterclass.errors import ObjectKey, TopologyError

CC_KEY = ObjectKey("cluster.x-k8s.io", "ClusterClass", "default", "class1")
INFRA = {"infrastructureCluster": True}
POOLS = {"machinePoolClass": {"names": ["*"]}}
GOOD = definition(INFRA_CLUSTER, INFRA, add("/spec/template/spec/fine", True))
ITEM = "DockerClusterTemplate for Cluster/cluster1 (spec.infrastructureRef)"

#: (id, the failing operation, message fragments)
OPERATION_ERRORS: list[tuple[str, dict[str, Any], list[str]]] = [
    ("replace of a missing path", replace("/spec/template/spec/missing", 1), ["failed to apply patches for", "(replace /spec/template/spec/missing)"]),  # noqa: E501
    ("add under a missing parent", add("/spec/template/spec/a/b", 1), ["failed to apply patches for", "(add /spec/template/spec/a/b)"]),  # noqa: E501
    ("remove of a missing path", remove("/spec/template/spec/missing"), ["failed to apply patches for", "(remove /spec/template/spec/missing)"]),  # noqa: E501
    ("add below a string", add("/spec/template/spec/loadBalancer/imageTag/5", "x"), ["failed to apply patches for", "(add /spec/template/spec/loadBalancer/imageTag/5)"]),  # noqa: E501
    ("variable that does not exist", add("/spec/template/spec/x", variable="nope"), ["failed to generate patches for", "(add /spec/template/spec/x)", 'failed to calculate value: variable "nope" does not exist']),  # noqa: E501
    ("nested variable that does not exist", add("/spec/template/spec/x", variable="builtin.machinePool.class"), ["failed to generate patches for", 'variable "builtin.machinePool.class" does not exist']),  # noqa: E501
    ("template that fails", add("/spec/template/spec/x", template='{{ fail "no way" }}'), ["failed to generate patches for", "failed to calculate value: failed to render template", "no way"]),  # noqa: E501
    ("template that is no YAML", add("/spec/template/spec/x", template="a: b: c"), ["failed to parse rendered template as YAML"]),  # noqa: E501
    ("neither value nor valueFrom", {"op": "add", "path": "/spec/template/spec/x"}, ["neither .value nor .valueFrom are set"]),  # noqa: E501
    ("both value and valueFrom", {"op": "add", "path": "/spec/template/spec/x", "value": 1, "valueFrom": {"variable": "v"}}, ["both .value and .valueFrom are set"]),  # noqa: E501
    ("unsupported operation", {"op": "move", "from": "/spec/a", "path": "/spec/template/spec/x"}, ["(move /spec/template/spec/x)", "unsupported operation"]),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("operation", "fragments"), [c[1:] for c in OPERATION_ERRORS], ids=[c[0] for c in OPERATION_ERRORS]
)
def test_failing_operation_names_patch_definition_operation_and_path(
    operation: dict[str, Any], fragments: list[str]
) -> None:
    world = PatchWorld(
        patches=[
            inline_patch("works", GOOD),
            inline_patch("broken", GOOD, definition(INFRA_CLUSTER, INFRA, add("/spec/template/spec/ok", 1), operation)),
        ]
    )
    with pytest.raises(TopologyError) as caught:
        compute(cluster(), world.objects())
    err = caught.value
    message = str(err)
    assert err.obj == CC_KEY
    assert err.field == "spec.patches[1].definitions[1].jsonPatches[1]"
    assert message.startswith("failed to apply patches: ")
    assert 'patch "broken" definitions[1] jsonPatches[1]' in message
    assert ITEM in message
    for fragment in fragments:
        assert fragment in message


def test_failing_machine_pool_item_names_the_machine_pool() -> None:
    world = PatchWorld(
        patches=[
            inline_patch("pools", definition(MACHINE_POOL_TEMPLATE, POOLS, replace("/spec/template/spec/nope", 1)))
        ]
    )
    with pytest.raises(TopologyError) as caught:
        compute(cluster(machine_pools=[pool("mp-0")]), world.objects())
    message = str(caught.value)
    assert caught.value.field == "spec.patches[0].definitions[0].jsonPatches[0]"
    assert "DockerMachinePoolTemplate for MachinePool/cluster1-mp-0-" in message
    assert "(spec.template.spec.infrastructureRef)" in message


def test_failing_enabled_if_points_at_enabled_if() -> None:
    world = PatchWorld(patches=[inline_patch("p", GOOD, enabled_if="{{ .a")])
    with pytest.raises(TopologyError) as caught:
        compute(cluster(), world.objects())
    assert caught.value.obj == CC_KEY
    assert caught.value.field == "spec.patches[0].enabledIf"
    assert 'failed to generate patches for patch "p": failed to evaluate enabledIf' in str(caught.value)


# --- runaway templates ---------------------------------------------------------------------------------------

#: (id, template, what the budget says)
RUNAWAY_TEMPLATES: list[tuple[str, str, str]] = [
    ("huge range", "{{ range $i := until 1000000 }}x{{ end }}", "iteration budget exceeded"),
    ("nested ranges", "{{ range $a := until 1000 }}{{ range $b := until 1000 }}{{ end }}{{ end }}", "iteration budget exceeded"),  # noqa: E501
    ("triple nested over a variable", "{{ range .l }}{{ range $.l }}{{ range $.l }}{{ . }}{{ end }}{{ end }}{{ end }}", "iteration budget exceeded"),  # noqa: E501
    ("too large a value", '{{ repeat 2000000 "x" }}', "repeat: result of 2000000 elements exceeds the limit"),
    ("a huge list built in one call", "{{ until 100000000 | len }}", "until: result of 100000000 elements exceeds"),
    ("a huge sequence", "{{ seq 1 100000000 | len }}", "seq: result of 100000000 elements exceeds"),
    ("string doubling", '{{ $s := "xxxxxxxxxx" }}{{ range until 40 }}{{ $s = printf "%s%s" $s $s }}{{ end }}', "printf: result of"),  # noqa: E501
    ("shared structure encoded", "{{ $a := list 1 }}{{ range until 40 }}{{ $a = list $a $a }}{{ end }}{{ toJson $a }}", "toJson: result of"),  # noqa: E501
    ("too much output bit by bit", '{{ range .l }}{{ repeat 100000 "y" }}{{ end }}', "output character budget exceeded"),  # noqa: E501
    ("unbounded recursion", '{{ define "r" }}{{ template "r" . }}{{ end }}{{ template "r" . }}', "template-depth budget exceeded"),  # noqa: E501
]  # fmt: skip


@pytest.mark.parametrize(
    ("template", "budget"), [c[1:] for c in RUNAWAY_TEMPLATES], ids=[c[0] for c in RUNAWAY_TEMPLATES]
)
def test_runaway_template_stops_with_a_clear_error(template: str, budget: str) -> None:
    world = PatchWorld(
        variables=[
            {
                "name": "l",
                "required": True,
                "schema": {"openAPIV3Schema": {"type": "array", "items": {"type": "integer"}}},
            }
        ],
        patches=[
            inline_patch("runaway", definition(INFRA_CLUSTER, INFRA, add("/spec/template/spec/x", template=template)))
        ],
    )
    with pytest.raises(TopologyError) as caught:
        compute(cluster(variables=[{"name": "l", "value": list(range(200))}]), world.objects())
    message = str(caught.value)
    assert caught.value.field == "spec.patches[0].definitions[0].jsonPatches[0]"
    assert 'patch "runaway"' in message
    assert "failed to render template" in message
    assert budget in message


def test_runaway_enabled_if_stops_too() -> None:
    world = PatchWorld(patches=[inline_patch("p", GOOD, enabled_if="{{ range until 1000000 }}{{ end }}true")])
    with pytest.raises(TopologyError, match="iteration budget exceeded") as caught:
        compute(cluster(), world.objects())
    assert caught.value.field == "spec.patches[0].enabledIf"


# --- through `clusterclass plan` ----------------------------------------------------------------------------------


def broken_quick_start(tmp_path: Path) -> Path:
    """The quick-start with its etcdImageTag patch replacing a path the template does not have."""
    documents = [d for d in yaml.safe_load_all(QUICK_START.read_text()) if d]
    documents[0]["spec"]["patches"][1]["definitions"][0]["jsonPatches"][0] = {
        "op": "replace",
        "path": "/spec/template/spec/kubeadmConfigSpec/clusterConfiguration/etcd/local/imageTag",
        "valueFrom": {"variable": "etcdImageTag"},
    }
    path = tmp_path / "broken-class.yaml"
    path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
    return path


def check_plan_failure(output: str, class_file: Path) -> None:
    assert "Traceback" not in output
    assert "internal error" not in output
    assert f"{class_file}:1: ClusterClass default/quick-start: " in output
    assert "spec.patches[1].definitions[0].jsonPatches[0]" in output
    assert (
        'failed to apply patches for patch "etcdImageTag" definitions[0] jsonPatches[0] '
        "(replace /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/etcd/local/imageTag) "
        "for KubeadmControlPlaneTemplate for Cluster/vendor (spec.controlPlaneRef)"
    ) in output


@pytest.mark.parametrize("output", ["text", "json"])
def test_plan_names_the_cluster_class_file(tmp_path: Path, output: str) -> None:
    class_file = broken_quick_start(tmp_path)
    result = invoke(
        "-f", class_file, "-f", FIXTURES / "quick-start-variables.yaml", "--cluster", "default/vendor", "-o", output
    )
    assert result.exit_code == 1, result.output
    check_plan_failure(result.output, class_file)


def test_plan_failure_in_a_real_process(tmp_path: Path) -> None:
    class_file = broken_quick_start(tmp_path)
    completed = subprocess.run(
        [
            *(sys.executable, "-m", "clusterclass.cli.main", "plan", "-f", str(class_file)),
            *("-f", str(FIXTURES / "quick-start-variables.yaml"), "--cluster", "default/vendor"),
        ],
        capture_output=True,
        text=True,
        cwd=REPO_ROOT,
        timeout=120,
        check=False,
    )
    assert completed.returncode == 1, completed.stdout + completed.stderr
    check_plan_failure(completed.stdout + completed.stderr, class_file)
    assert completed.stdout.startswith("Cluster default/vendor\n  error: ")


def test_every_cluster_of_the_class_reports_its_own_error(tmp_path: Path) -> None:
    """The etcdImageTag patch has no enabledIf: each Cluster of the class is planned and fails on its own."""
    class_file = broken_quick_start(tmp_path)
    result = invoke("-f", class_file, "-f", FIXTURES / "quick-start-variables.yaml")
    assert result.exit_code == 1
    for name in ("baseline", "restricted", "vendor"):
        assert f"Cluster default/{name}\n  error: " in result.output
    assert "Traceback" not in result.output
