"""The ``clusterclass plan`` command line: inputs it accepts and how it reports bad input.

Bad input must exit non-zero with one message naming the file (and line, for YAML syntax
errors), the object and the field to fix, and never print a traceback. Input errors are turned
into that message by the console-script entry point ``main()``; they are checked here through
``main()`` in-process and through a real ``python -m clusterclass.cli.main`` process. Errors in
one Cluster's topology are reported by the ``plan`` command itself (in its text output, or on
standard error next to ``-o json``) while the other Clusters are still planned.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import yaml
from plan_helpers import (
    FIXTURES,
    QUICK_START,
    Obj,
    Outcome,
    current_state,
    invoke,
    plan_json,
    read_all_yaml,
    read_yaml,
    run_main,
    run_subprocess,
    write_state,
    write_yaml,
)

CLUSTER_FILE = FIXTURES / "quick-start-cluster.yaml"
TWO_CLUSTERS = FIXTURES / "two-clusters.yaml"
SEED = "99"
EMPTY = {"created": [], "modified": [], "deleted": []}


def assert_clean_failure(outcome: Outcome, *fragments: str) -> None:
    """Exit code 1, every fragment in the output, no traceback, no internal error."""
    assert outcome.exit_code == 1, outcome.output
    for fragment in fragments:
        assert fragment in outcome.output, f"{fragment!r} not in {outcome.output!r}"
    assert "Traceback" not in outcome.output
    assert "internal error" not in outcome.output


def plan_main(*args: str | Path, input: str | None = None) -> Outcome:
    return run_main("plan", *args, input=input)


def quick_start_docs() -> list[Obj]:
    return read_all_yaml(QUICK_START)


@pytest.fixture(scope="module")
def reference_plan() -> Obj:
    """The plan of the quick-start files as given, to compare other ways of giving them with."""
    return plan_json("-f", QUICK_START, "-f", CLUSTER_FILE, "--seed", SEED)


# --- files that cannot be read as objects ---------------------------------------------------------

GOOD_DOC = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: fine\n"


def test_unparsable_yaml_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    # line 9 has a second mapping value on one line
    bad.write_text(GOOD_DOC + "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bad: value\n")
    outcome = plan_main("-f", bad)
    assert_clean_failure(outcome, f"{bad}: line 9, column ", "could not parse YAML")
    assert outcome.stdout == ""
    assert outcome.stderr.startswith("error: ")
    assert outcome.stderr.count("\n") == 1  # one line


def test_unparsable_yaml_in_a_real_process(tmp_path: Path) -> None:
    bad = tmp_path / "broken.yaml"
    bad.write_text("metadata:\n  name: [unclosed\n")
    outcome = run_subprocess("plan", "-f", bad)
    assert_clean_failure(outcome, str(bad), "could not parse YAML", "line ")
    assert outcome.stdout == ""


def test_unparsable_json_names_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "broken.json"
    bad.write_text('{\n  "apiVersion": "v1",\n  "kind": \n}\n')
    assert_clean_failure(plan_main("-f", bad), f"{bad}: line 4, column 1: could not parse JSON")


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ("- a\n- b\n", "expected a Kubernetes object (a mapping), got list"),
        ("just a string\n", "expected a Kubernetes object (a mapping), got str"),
        ("42\n", "expected a Kubernetes object (a mapping), got int"),
    ],
    ids=["list", "string", "number"],
)
def test_document_that_is_not_an_object(tmp_path: Path, document: str, expected: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(GOOD_DOC + "---\n" + document)
    assert_clean_failure(plan_main("-f", bad), f"{bad}: document at line 6: {expected}")


@pytest.mark.parametrize(
    ("document", "expected"),
    [
        ("kind: Cluster\nmetadata: {name: x}\n", "apiVersion must be a non-empty string"),
        ("apiVersion: ''\nkind: Cluster\nmetadata: {name: x}\n", "apiVersion must be a non-empty string"),
        ("apiVersion: cluster.x-k8s.io/v1beta1\nmetadata: {name: x}\n", "kind must be a non-empty string"),
        ("apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\n", "Cluster: metadata.name must be a non-empty string"),
        (
            "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {namespace: default}\n",
            "Cluster: metadata.name must be a non-empty string",
        ),
        (
            "apiVersion: cluster.x-k8s.io/v1beta1\nkind: Cluster\nmetadata: {name: x, namespace: [a]}\n",
            "Cluster x: metadata.namespace must be a string",
        ),
    ],
    ids=["no-apiVersion", "empty-apiVersion", "no-kind", "no-metadata", "no-name", "bad-namespace"],
)
def test_object_missing_required_fields(tmp_path: Path, document: str, expected: str) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(document)
    assert_clean_failure(plan_main("-f", bad), f"{bad}: document at line 1: {expected}")


def test_bad_item_in_a_list(tmp_path: Path) -> None:
    bad = write_yaml(tmp_path / "list.yaml", {"apiVersion": "v1", "kind": "List", "items": [{"kind": "Cluster"}]})
    assert_clean_failure(plan_main("-f", bad), str(bad), "apiVersion must be a non-empty string")


def test_file_that_is_not_utf8(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.yaml"
    bad.write_bytes("metadata:\n  name: caf\xe9\n".encode("latin-1"))
    assert_clean_failure(plan_main("-f", bad), f"{bad}: cannot read")


def test_bad_file_inside_a_directory_is_named(tmp_path: Path) -> None:
    shutil.copy(QUICK_START, tmp_path / "quick-start.yaml")
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "oops.yml").write_text("- not an object\n")
    assert_clean_failure(plan_main("-f", tmp_path), f"{tmp_path / 'nested' / 'oops.yml'}: document at line 1")


def test_non_existent_path(tmp_path: Path) -> None:
    missing = tmp_path / "nope.yaml"
    assert_clean_failure(plan_main("-f", QUICK_START, "-f", missing), f"{missing}: no such file or directory")
    assert_clean_failure(run_subprocess("plan", "-f", missing), f"{missing}: no such file or directory")


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        ((), "Missing option '-f'"),
        (("-f", "x.yaml", "-o", "xml"), "Invalid value for '-o'"),
        (("-f", "x.yaml", "--seed", "abc"), "Invalid value for '--seed'"),
    ],
    ids=["no-file", "bad-output", "bad-seed"],
)
def test_usage_errors(args: tuple[str, ...], expected: str) -> None:
    outcome = plan_main(*args)
    assert outcome.exit_code == 2, outcome.output
    assert expected in outcome.stderr
    assert "Traceback" not in outcome.output


# --- errors in a Cluster's topology ---------------------------------------------------------------


def test_cluster_whose_cluster_class_is_missing() -> None:
    outcome = plan_main("-f", CLUSTER_FILE)
    assert_clean_failure(
        outcome,
        f"error: {CLUSTER_FILE}:5: Cluster default/my-cluster: spec.topology.class: "
        "failed to get ClusterClass default/quick-start: not found",
    )
    json_outcome = plan_main("-f", CLUSTER_FILE, "-o", "json")
    assert_clean_failure(json_outcome, f"{CLUSTER_FILE}:5", "spec.topology.class")
    assert json.loads(json_outcome.stdout) == EMPTY  # stdout stays machine readable
    assert json_outcome.stderr.startswith("error: ")


def test_cluster_class_in_another_namespace_is_not_found(tmp_path: Path) -> None:
    cluster = read_yaml(CLUSTER_FILE)
    cluster["metadata"]["namespace"] = "elsewhere"
    cluster_file = write_yaml(tmp_path / "cluster.yaml", cluster)
    assert_clean_failure(
        plan_main("-f", QUICK_START, "-f", cluster_file),
        "Cluster elsewhere/my-cluster: spec.topology.class: failed to get ClusterClass elsewhere/quick-start",
    )


REFS = {
    "spec.infrastructure.ref": ("DockerClusterTemplate", ("spec", "infrastructure", "ref")),
    "spec.controlPlane.ref": ("KubeadmControlPlaneTemplate", ("spec", "controlPlane", "ref")),
    "spec.controlPlane.machineInfrastructure.ref": (
        "DockerMachineTemplate",
        ("spec", "controlPlane", "machineInfrastructure", "ref"),
    ),
    "spec.workers.machineDeployments[0].template.infrastructure.ref": (
        "DockerMachineTemplate",
        ("spec", "workers", "machineDeployments", 0, "template", "infrastructure", "ref"),
    ),
    "spec.workers.machineDeployments[0].template.bootstrap.ref": (
        "KubeadmConfigTemplate",
        ("spec", "workers", "machineDeployments", 0, "template", "bootstrap", "ref"),
    ),
    "spec.workers.machinePools[0].template.infrastructure.ref": (
        "DockerMachinePoolTemplate",
        ("spec", "workers", "machinePools", 0, "template", "infrastructure", "ref"),
    ),
    "spec.workers.machinePools[0].template.bootstrap.ref": (
        "KubeadmConfigTemplate",
        ("spec", "workers", "machinePools", 0, "template", "bootstrap", "ref"),
    ),
}


@pytest.mark.parametrize("field", list(REFS))
def test_missing_template_names_the_cluster_class_field(tmp_path: Path, field: str) -> None:
    kind, path = REFS[field]
    docs = quick_start_docs()
    ref = docs[0]
    for step in path:
        ref = ref[step]
    ref["name"] = "does-not-exist"
    cc_file = write_yaml(tmp_path / "my-class.yaml", *docs)
    outcome = plan_main("-f", cc_file, "-f", CLUSTER_FILE)
    assert_clean_failure(
        outcome,
        f"error: {cc_file}:1: ClusterClass default/quick-start: {field}: failed to get ",
        f"{kind} default/does-not-exist not found",
    )


def test_missing_machine_pool_template_message() -> None:
    """The wording of upstream's blueprint error for a MachinePool class (spec §2.2)."""
    docs = [d for d in quick_start_docs() if d["kind"] != "DockerMachinePoolTemplate"]
    outcome = plan_main("-f", "-", "-f", CLUSTER_FILE, input=yaml.safe_dump_all(docs))
    assert_clean_failure(
        outcome,
        "<stdin>:1: ClusterClass default/quick-start: spec.workers.machinePools[0].template.infrastructure.ref: "
        'failed to get InfrastructureMachinePoolTemplate for default/quick-start, MachinePool class "default-worker": '
        "DockerMachinePoolTemplate default/quick-start-default-worker-machinepooltemplate not found",
    )


def test_ref_without_a_name_names_the_field(tmp_path: Path) -> None:
    docs = quick_start_docs()
    del docs[0]["spec"]["workers"]["machinePools"][0]["template"]["bootstrap"]["ref"]["name"]
    cc_file = write_yaml(tmp_path / "cc.yaml", *docs)
    assert_clean_failure(
        plan_main("-f", cc_file, "-f", CLUSTER_FILE),
        f"{cc_file}:1: ClusterClass default/quick-start: spec.workers.machinePools[0].template.bootstrap.ref.name: ",
    )


@pytest.mark.parametrize(
    ("list_key", "index", "noun"),
    [
        ("machinePools", 0, "MachinePool"),
        ("machinePools", 1, "MachinePool"),
        ("machineDeployments", 0, "MachineDeployment"),
    ],
)
def test_unknown_worker_class_names_the_topology_field(tmp_path: Path, list_key: str, index: int, noun: str) -> None:
    cluster = read_yaml(CLUSTER_FILE)
    entry = cluster["spec"]["topology"]["workers"][list_key][index]
    entry["class"] = "no-such-class"
    cluster_file = write_yaml(tmp_path / "cluster.yaml", cluster)
    outcome = plan_main("-f", QUICK_START, "-f", cluster_file)
    # Admission refuses the Cluster before anything is computed, naming the file, the object and the field.
    assert_clean_failure(
        outcome,
        f"error: admission would refuse it:\n    {cluster_file}:1: Cluster default/my-cluster: "
        f'spec.topology.workers.{list_key}[{index}].class: Invalid value: "no-such-class": '
        f'{noun}Class with name "no-such-class" does not exist in ClusterClass "quick-start"',
    )


def test_template_whose_spec_template_is_not_an_object_names_the_template_file(tmp_path: Path) -> None:
    template = next(d for d in quick_start_docs() if d["kind"] == "DockerMachinePoolTemplate")
    template["spec"] = {"template": "oops"}
    template_file = write_yaml(tmp_path / "pool-template.yaml", template)
    outcome = plan_main("-f", QUICK_START, "-f", template_file, "-f", CLUSTER_FILE)
    assert_clean_failure(
        outcome,
        f"error: {template_file}:1: DockerMachinePoolTemplate default/quick-start-default-worker-machinepooltemplate: "
        "spec.template: spec.template of DockerMachinePoolTemplate "
        "default/quick-start-default-worker-machinepooltemplate is not an object",
    )


def test_a_template_without_spec_clones_to_an_empty_object(tmp_path: Path) -> None:
    # upstream's own in-memory e2e ClusterClass (v1.11+) has an empty KubeadmConfigTemplate on purpose
    template = next(d for d in quick_start_docs() if d["kind"] == "KubeadmConfigTemplate")
    template.pop("spec")
    template_file = write_yaml(tmp_path / "bootstrap-template.yaml", template)
    outcome = plan_main("-f", QUICK_START, "-f", template_file, "-f", CLUSTER_FILE, "-o", "json")
    assert outcome.exit_code == 0, outcome.output
    planned = json.loads(outcome.stdout)
    clones = [o for o in planned["created"] if o["kind"] == "KubeadmConfigTemplate"]
    assert clones and all(not (o.get("spec") or {}).get("template", {}).get("spec") for o in clones)
    pool_configs = [o for o in planned["created"] if o["kind"] == "KubeadmConfig"]
    assert pool_configs and all(not o.get("spec") for o in pool_configs)


def test_topology_error_in_a_real_process() -> None:
    outcome = run_subprocess("plan", "-f", CLUSTER_FILE, "-o", "json")
    assert_clean_failure(outcome, str(CLUSTER_FILE), "spec.topology.class")
    assert json.loads(outcome.stdout) == EMPTY


def test_one_failing_cluster_does_not_hide_the_others(tmp_path: Path) -> None:
    docs = read_all_yaml(TWO_CLUSTERS)
    docs[1]["spec"]["topology"]["workers"]["machineDeployments"][0]["class"] = "gone"  # alpha
    clusters = write_yaml(tmp_path / "clusters.yaml", *docs)
    text = plan_main("-f", QUICK_START, "-f", clusters, "--seed", SEED)
    assert_clean_failure(
        text, "Cluster default/alpha\n  error: ", "machineDeployments[0].class", "Cluster default/beta"
    )
    assert "+ created  MachinePool default/beta-pool-" in text.stdout

    as_json = plan_main("-f", QUICK_START, "-f", clusters, "--seed", SEED, "-o", "json")
    assert_clean_failure(as_json, "machineDeployments[0].class")
    data = json.loads(as_json.stdout)
    assert cluster_names(data) == {"beta"}
    assert "alpha" in as_json.stderr and "beta" not in as_json.stderr


# --- ways of giving the input ---------------------------------------------------------------------


def test_stdin(reference_plan: Obj) -> None:
    text = QUICK_START.read_text() + "\n---\n" + CLUSTER_FILE.read_text()
    assert plan_json("-f", "-", "--seed", SEED, input=text) == reference_plan
    # mixed with files
    assert plan_json("-f", QUICK_START, "-f", "-", "--seed", SEED, input=CLUSTER_FILE.read_text()) == reference_plan


def test_stdin_in_a_real_process(reference_plan: Obj) -> None:
    text = QUICK_START.read_text() + "\n---\n" + CLUSTER_FILE.read_text()
    outcome = run_subprocess("plan", "-f", "-", "--seed", SEED, "-o", "json", input=text)
    assert outcome.exit_code == 0, outcome.output
    assert json.loads(outcome.stdout) == reference_plan


def test_stdin_errors_are_named_stdin() -> None:
    assert_clean_failure(plan_main("-f", "-", input="- a\n"), "<stdin>: document at line 1")


def test_directory(tmp_path: Path, reference_plan: Obj) -> None:
    (tmp_path / "classes").mkdir()
    shutil.copy(QUICK_START, tmp_path / "classes" / "quick-start.yaml")
    shutil.copy(CLUSTER_FILE, tmp_path / "cluster.yml")
    (tmp_path / "README.md").write_text("# not an input\n- a\n")
    (tmp_path / "notes.txt").write_text("ignored")
    assert plan_json("-f", tmp_path, "--seed", SEED) == reference_plan


def test_empty_directory_plans_nothing(tmp_path: Path) -> None:
    assert plan_json("-f", tmp_path) == EMPTY
    result = invoke("-f", tmp_path)
    assert result.exit_code == 0 and result.stdout == ""


def test_only_a_cluster_class_plans_nothing() -> None:
    assert plan_json("-f", QUICK_START) == EMPTY


def test_json_input_files(tmp_path: Path, reference_plan: Obj) -> None:
    """``kubectl get -o json`` prints a List; a single object is a plain JSON object."""
    (tmp_path / "quick-start.json").write_text(
        json.dumps({"apiVersion": "v1", "kind": "List", "items": quick_start_docs()}, indent=2)
    )
    (tmp_path / "cluster.json").write_text(json.dumps(read_yaml(CLUSTER_FILE)))
    assert (
        plan_json("-f", tmp_path / "quick-start.json", "-f", tmp_path / "cluster.json", "--seed", SEED)
        == reference_plan
    )


def test_yaml_list_input(tmp_path: Path, reference_plan: Obj) -> None:
    listed = write_yaml(tmp_path / "all.yaml", {"apiVersion": "v1", "kind": "List", "items": quick_start_docs()})
    assert plan_json("-f", listed, "-f", CLUSTER_FILE, "--seed", SEED) == reference_plan
    # also a typed list, e.g. `kubectl get clusters -o yaml`
    clusters = write_yaml(
        tmp_path / "clusters.yaml",
        {"apiVersion": "cluster.x-k8s.io/v1beta1", "kind": "ClusterList", "items": [read_yaml(CLUSTER_FILE)]},
    )
    assert plan_json("-f", listed, "-f", clusters, "--seed", SEED) == reference_plan


def test_later_file_wins(tmp_path: Path) -> None:
    cluster = read_yaml(CLUSTER_FILE)
    cluster["spec"]["topology"]["workers"]["machinePools"][1]["replicas"] = 9
    override = write_yaml(tmp_path / "override.yaml", cluster)
    data = plan_json("-f", QUICK_START, "-f", CLUSTER_FILE, "-f", override, "--seed", SEED)
    pools = [o for o in data["created"] if o["kind"] == "MachinePool"]
    assert [p["spec"]["replicas"] for p in pools] == [2, 9]


def test_a_cluster_given_again_is_merged_over_the_one_before(tmp_path: Path) -> None:
    """RFC 7386, as upstream's plan merges an input Cluster over the stored one: maps merge key by key,
    lists are replaced whole, null removes a field, and what the later file leaves out is kept."""
    cluster = read_yaml(CLUSTER_FILE)
    cluster["metadata"]["labels"] = {"team": "a"}
    cluster["spec"]["topology"]["controlPlane"]["metadata"] = {"labels": {"cp": "yes"}}
    first = write_yaml(tmp_path / "first.yaml", cluster)
    later = {
        "apiVersion": cluster["apiVersion"],
        "kind": "Cluster",
        "metadata": {"name": cluster["metadata"]["name"], "labels": {"env": "prod"}},
        "spec": {
            "topology": {
                "controlPlane": {"metadata": None},
                "workers": {"machinePools": [{"class": "default-worker", "name": "only", "replicas": 4}]},
            }
        },
    }
    data = plan_json("-f", QUICK_START, "-f", first, "-f", write_yaml(tmp_path / "later.yaml", later), "--seed", SEED)
    (modified,) = data["modified"]
    merged = modified["after"]
    assert {"team": "a", "env": "prod"}.items() <= merged["metadata"]["labels"].items()
    assert merged["spec"]["clusterNetwork"] == cluster["spec"]["clusterNetwork"]
    assert "metadata" not in merged["spec"]["topology"]["controlPlane"]
    assert merged["spec"]["topology"]["workers"]["machinePools"] == [
        {"class": "default-worker", "name": "only", "replicas": 4}
    ]
    assert (
        merged["spec"]["topology"]["workers"]["machineDeployments"]
        == cluster["spec"]["topology"]["workers"]["machineDeployments"]
    )
    kcp = next(o for o in data["created"] if o["kind"] == "KubeadmControlPlane")
    assert "cp" not in kcp["metadata"]["labels"]


# --- several Clusters -----------------------------------------------------------------------------


def cluster_name(obj: Obj) -> str:
    """The Cluster a created object belongs to: its label, or for the shim Secret its owner."""
    if obj["kind"] == "Secret":
        return str(obj["metadata"]["ownerReferences"][0]["name"])
    return str(obj["metadata"]["labels"]["cluster.x-k8s.io/cluster-name"])


def cluster_names(data: Obj) -> set[str]:
    return {cluster_name(o) for o in data["created"]}


def test_every_topology_cluster_in_one_json_object() -> None:
    data = plan_json("-f", QUICK_START, "-f", TWO_CLUSTERS, "--seed", SEED)
    assert set(data) == {"created", "modified", "deleted"}
    assert cluster_names(data) == {"alpha", "beta"}
    # Clusters are planned in namespace/name order; "classic" has no topology and is ignored
    assert [m["after"]["metadata"]["name"] for m in data["modified"]] == ["alpha", "beta"]
    owners = [cluster_name(o) for o in data["created"]]
    assert owners == sorted(owners)
    assert "classic" not in json.dumps(data)


def test_clusters_of_several_namespaces_and_classes_are_all_planned(tmp_path: Path) -> None:
    """Upstream's plan refuses input from more than one namespace, or with more than one Cluster or
    ClusterClass, and needs ``--cluster`` when a change affects several Clusters; ours plans them all."""
    objects = []
    for namespace in ("team-a", "team-b"):
        for obj in read_all_yaml(QUICK_START):
            obj["metadata"]["namespace"] = namespace
            objects.append(obj)
        cluster = read_yaml(CLUSTER_FILE)
        cluster["metadata"]["namespace"] = namespace
        objects.append(cluster)
    data = plan_json("-f", write_yaml(tmp_path / "both.yaml", *objects), "--seed", SEED)
    assert [(m["after"]["metadata"]["namespace"], m["after"]["kind"]) for m in data["modified"]] == [
        ("team-a", "Cluster"),
        ("team-b", "Cluster"),
    ]
    by_namespace = {o["metadata"]["namespace"] for o in data["created"] if o["kind"] == "MachinePool"}
    assert by_namespace == {"team-a", "team-b"}


def test_text_output_has_a_section_per_cluster() -> None:
    result = invoke("-f", QUICK_START, "-f", TWO_CLUSTERS, "--seed", SEED)
    assert result.exit_code == 0, result.output
    headers = [line for line in result.stdout.splitlines() if line.startswith("Cluster ")]
    assert headers == [
        "Cluster default/alpha (ClusterClass quick-start, version v1.27.3)",
        "Cluster default/beta (ClusterClass quick-start, version v1.28.0)",
    ]


@pytest.mark.parametrize("selector", ["default/beta", "beta"])
def test_cluster_option_selects_one_cluster(selector: str) -> None:
    data = plan_json("-f", QUICK_START, "-f", TWO_CLUSTERS, "--seed", SEED, "--cluster", selector)
    assert cluster_names(data) == {"beta"}
    assert [m["after"]["metadata"]["name"] for m in data["modified"]] == ["beta"]
    assert [o["kind"] for o in data["created"]] == [
        "Secret",
        "DockerCluster",
        "DockerMachineTemplate",
        "KubeadmControlPlane",
        "DockerMachinePool",
        "KubeadmConfig",
        "MachinePool",
    ]


@pytest.mark.parametrize("selector", ["default/nope", "other/beta", "classic"])
def test_unknown_cluster_option_errors(selector: str) -> None:
    outcome = plan_main("-f", QUICK_START, "-f", TWO_CLUSTERS, "--cluster", selector)
    assert_clean_failure(
        outcome,
        f"error: --cluster {selector}: no Cluster with spec.topology by that name (given: default/alpha, default/beta)",
    )
    assert outcome.stdout == ""


def test_unknown_cluster_option_in_a_real_process() -> None:
    outcome = run_subprocess("plan", "-f", QUICK_START, "-f", TWO_CLUSTERS, "--cluster", "default/nope", script=True)
    assert_clean_failure(outcome, "--cluster default/nope")


# --- no changes -------------------------------------------------------------------------------------


def test_no_changes_detected(tmp_path: Path) -> None:
    """A Cluster whose objects all exist as planned, next to one that is new."""
    first = plan_json("-f", QUICK_START, "-f", CLUSTER_FILE, "--seed", SEED)
    current = write_state(tmp_path / "current", current_state(first))
    result = invoke("-f", QUICK_START, "-f", current)
    assert result.exit_code == 0, result.output
    assert result.stdout == (
        "Cluster default/my-cluster (ClusterClass quick-start, version v1.28.0)\n"
        '  No changes detected for Cluster "default/my-cluster".\n'
        "\n"
    )
    assert plan_json("-f", QUICK_START, "-f", current) == EMPTY

    both = invoke("-f", QUICK_START, "-f", current, "-f", TWO_CLUSTERS)
    assert both.exit_code == 0, both.output
    assert both.stdout.count("No changes detected") == 1
    assert '  No changes detected for Cluster "default/my-cluster".' in both.stdout
    assert "+ created  MachinePool default/beta-pool-" in both.stdout
