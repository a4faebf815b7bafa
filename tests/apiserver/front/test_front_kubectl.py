"""The real kubectl against the embedded store served over TLS with the kubeconfig the front writes.

Every command a user of the embedded management cluster would type: get (with columns, short names
and watch), create, apply client-side and server-side (field managers, conflicts, force), replace,
patch of every type, label, delete, and wait for deletion and for a condition.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from clusterclass.apiserver.front import ThreadedServer
from clusterclass.apiserver.store import MemoryStore

Kubectl = Callable[..., subprocess.CompletedProcess[str]]
CAPI = "cluster.x-k8s.io/v1beta1"
CAPI_V1BETA2 = "cluster.x-k8s.io/v1beta2"

CONFIG_MAP = """
apiVersion: v1
kind: ConfigMap
metadata:
  name: settings
  labels: {app: web}
data:
  color: blue
"""

CLUSTER = """
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: c1
  labels: {env: test}
spec:
  clusterNetwork:
    pods: {cidrBlocks: ["192.168.0.0/16"]}
"""


@pytest.fixture
def kubectl_env(served: ThreadedServer, tmp_path: Path) -> dict[str, str]:
    home = tmp_path / "home"
    home.mkdir()
    return {**os.environ, "KUBECONFIG": str(served.kubeconfig_path), "HOME": str(home)}


@pytest.fixture
def kubectl(kubectl_binary: str, kubectl_env: dict[str, str], tmp_path: Path) -> Kubectl:
    def run(*args: str, stdin: str | None = None, check: bool = True) -> subprocess.CompletedProcess[str]:
        command = [kubectl_binary, "--cache-dir", str(tmp_path / "cache"), *args]
        done = subprocess.run(command, input=stdin, capture_output=True, text=True, env=kubectl_env, timeout=60)
        if check and done.returncode != 0:
            pytest.fail(f"kubectl {' '.join(args)} failed ({done.returncode}):\n{done.stderr}{done.stdout}")
        return done

    return run


@pytest.fixture
def watch_kubectl(
    kubectl_binary: str, kubectl_env: dict[str, str], tmp_path: Path
) -> Iterator[Callable[..., subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []

    def start(*args: str) -> subprocess.Popen[str]:
        command = [kubectl_binary, "--cache-dir", str(tmp_path / "cache"), *args]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=kubectl_env)
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.kill()
        process.wait(timeout=10)


def rows(output: str) -> list[list[str]]:
    return [line.split() for line in output.strip().splitlines()]


def as_json(done: subprocess.CompletedProcess[str]) -> Any:
    return json.loads(done.stdout)


def read_line_with(process: subprocess.Popen[str], text: str) -> str:
    """The first line of ``process``'s output containing ``text`` (kubectl -w prints as events come)."""
    assert process.stdout is not None
    for line in process.stdout:
        if text in line:
            return line
    raise AssertionError(f"output ended without {text!r}: {process.stderr.read() if process.stderr else ''}")


# -- get ---------------------------------------------------------------------------------------------


def test_get_prints_the_server_columns(kubectl: Kubectl) -> None:
    header, default = rows(kubectl("get", "namespaces").stdout)
    assert header == ["NAME", "STATUS", "AGE"]
    assert default[:2] == ["default", "Active"] and re.fullmatch(r"\d+[smhd]", default[2])  # AGE, as kubectl prints it
    assert rows(kubectl("get", "ns").stdout)[1][:2] == ["default", "Active"]
    assert "No resources found in default namespace." in kubectl("get", "configmaps").stderr
    kubectl("apply", "-f", "-", stdin=CLUSTER)
    header, row = rows(kubectl("get", "clusters", "-A").stdout)
    assert header[:3] == ["NAMESPACE", "NAME", "CLUSTERCLASS"] and "PHASE" in header and "AGE" in header
    assert row[:2] == ["default", "c1"]
    assert rows(kubectl("get", "cl", "--show-labels").stdout)[1][-1] == "env=test"  # short name from the CRD
    assert rows(kubectl("get", "cluster-api", "-o", "name").stdout) == [["cluster.cluster.x-k8s.io/c1"]]


TOPOLOGY_CLUSTER = """
apiVersion: cluster.x-k8s.io/v1beta1
kind: Cluster
metadata:
  name: c1
spec:
  topology:
    class: quick-start
    version: v1.30.0
"""
DEPRECATED = "Warning: cluster.x-k8s.io/v1beta1 Cluster is deprecated; use cluster.x-k8s.io/v1beta2 Cluster"
CONVERSION_DATA = "cluster.x-k8s.io/conversion-data"


def test_get_a_cluster_in_either_version(kubectl: Kubectl) -> None:
    """``<resource>.<version>.<group>`` picks the version; plain ``clusters`` is the preferred one, v1beta2. Every
    request in v1beta1 warns that it is deprecated (kubectl prints the server's warning), as a real one does."""
    applied = kubectl("apply", "-f", "-", stdin=TOPOLOGY_CLUSTER)
    assert DEPRECATED in applied.stderr
    older = kubectl("get", "clusters.v1beta1.cluster.x-k8s.io", "c1", "-o", "json")
    assert DEPRECATED in older.stderr
    obj = as_json(older)
    assert (obj["apiVersion"], obj["spec"]["topology"]) == (
        CAPI,
        {"class": "quick-start", "version": "v1.30.0"},
    )
    assert CONVERSION_DATA in obj["metadata"]["annotations"]
    newer = kubectl("get", "clusters.v1beta2.cluster.x-k8s.io", "c1", "-o", "json")
    assert "Warning" not in newer.stderr
    obj = as_json(newer)
    assert (obj["apiVersion"], obj["spec"]["topology"]) == (
        CAPI_V1BETA2,
        {"classRef": {"name": "quick-start"}, "version": "v1.30.0"},
    )
    assert CONVERSION_DATA not in obj["metadata"]["annotations"]
    # each version's own printer columns
    header, row = rows(kubectl("get", "clusters.v1beta1.cluster.x-k8s.io").stdout)
    assert header == ["NAME", "CLUSTERCLASS", "PHASE", "AGE", "VERSION"]
    assert (row[:2], row[-1]) == (["c1", "quick-start"], "v1.30.0")
    newer_table = kubectl("get", "clusters.v1beta2.cluster.x-k8s.io").stdout
    header, row = rows(newer_table)
    assert header[:3] == ["NAME", "CLUSTERCLASS", "AVAILABLE"] and "CP DESIRED" in newer_table.splitlines()[0]
    assert (row[:2], row[-1]) == (["c1", "quick-start"], "v1.30.0")
    assert rows(kubectl("get", "clusters").stdout)[0] == header
    # server-side apply in v1beta1 records the manager's fields in v1beta1
    kubectl("apply", "--server-side", "-f", "-", stdin=TOPOLOGY_CLUSTER.replace("name: c1", "name: c2"))
    fields = kubectl("get", "cl", "c2", "-o", "jsonpath={.metadata.managedFields[*].apiVersion}").stdout
    assert fields == CAPI


def test_get_output_formats_and_selectors(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=CONFIG_MAP)
    got = as_json(kubectl("get", "configmap", "settings", "-o", "json"))
    assert (got["kind"], got["data"]) == ("ConfigMap", {"color": "blue"})
    assert kubectl("get", "cm", "-l", "app=web", "-o", "jsonpath={.items[*].metadata.name}").stdout == "settings"
    assert kubectl("get", "cm", "-l", "app=db", "-o", "name").stdout == ""
    assert (
        kubectl("get", "cm", "--field-selector", "metadata.name=settings", "-o", "name").stdout.strip()
        == "configmap/settings"
    )


def test_api_resources_lists_short_names(kubectl: Kubectl) -> None:
    table = {row[0]: row for row in rows(kubectl("api-resources").stdout)[1:]}
    assert table["clusters"][1] == "cl"
    assert table["configmaps"][1] == "cm"
    assert "machinedeployments" in table


def test_get_watch_prints_changes(kubectl: Kubectl, watch_kubectl: Callable[..., subprocess.Popen[str]]) -> None:
    kubectl("apply", "-f", "-", stdin=CONFIG_MAP)
    process = watch_kubectl("get", "configmaps", "--watch")
    assert read_line_with(process, "settings").split()[:2] == ["settings", "1"]
    kubectl("create", "configmap", "later", "--from-literal=a=1", "--from-literal=b=2")
    assert read_line_with(process, "later").split()[:2] == ["later", "2"]
    kubectl("delete", "configmap", "settings")
    process.terminate()


# -- writes ------------------------------------------------------------------------------------------


def test_create_namespace_configmap_and_secret(kubectl: Kubectl) -> None:
    assert kubectl("create", "namespace", "team-a").stdout.strip() == "namespace/team-a created"
    kubectl("create", "configmap", "conf", "-n", "team-a", "--from-literal=k=v")
    kubectl("create", "secret", "generic", "creds", "-n", "team-a", "--from-literal=password=s3cret")
    secret = as_json(kubectl("get", "secret", "creds", "-n", "team-a", "-o", "json"))
    assert secret["data"] == {"password": "czNjcmV0"}
    assert as_json(kubectl("get", "cm", "conf", "-n", "team-a", "-o", "json"))["data"] == {"k": "v"}
    failed = kubectl("create", "configmap", "conf", "-n", "team-a", check=False)
    assert failed.returncode == 1 and 'configmaps "conf" already exists' in failed.stderr


def test_client_side_apply_creates_configures_and_leaves_unchanged(kubectl: Kubectl) -> None:
    assert kubectl("apply", "-f", "-", stdin=CONFIG_MAP).stdout.strip() == "configmap/settings created"
    assert kubectl("apply", "-f", "-", stdin=CONFIG_MAP).stdout.strip() == "configmap/settings unchanged"
    changed = CONFIG_MAP.replace("color: blue", "size: large")
    assert kubectl("apply", "-f", "-", stdin=changed).stdout.strip() == "configmap/settings configured"
    assert as_json(kubectl("get", "cm", "settings", "-o", "json"))["data"] == {"size": "large"}
    assert kubectl("apply", "-f", "-", stdin=CLUSTER).stdout.strip() == "cluster.cluster.x-k8s.io/c1 created"
    paused = CLUSTER.replace("spec:\n", "spec:\n  paused: true\n")
    assert kubectl("apply", "-f", "-", stdin=paused).stdout.strip() == "cluster.cluster.x-k8s.io/c1 configured"
    assert as_json(kubectl("get", "cluster", "c1", "-o", "json"))["spec"]["paused"] is True


def test_server_side_apply_with_conflicts_and_force(kubectl: Kubectl) -> None:
    applied = kubectl("apply", "--server-side", "--field-manager", "alice", "-f", "-", stdin=CONFIG_MAP)
    assert applied.stdout.strip() == "configmap/settings serverside-applied"
    managers = [
        entry["manager"]
        for entry in as_json(kubectl("get", "cm", "settings", "-o", "json", "--show-managed-fields"))["metadata"][
            "managedFields"
        ]
    ]
    assert managers == ["alice"]
    other = CONFIG_MAP.replace("blue", "red")
    conflict = kubectl("apply", "--server-side", "--field-manager", "bob", "-f", "-", stdin=other, check=False)
    assert conflict.returncode == 1
    assert 'conflict with "alice"' in conflict.stderr and ".data.color" in conflict.stderr
    forced = kubectl("apply", "--server-side", "--field-manager", "bob", "--force-conflicts", "-f", "-", stdin=other)
    assert forced.stdout.strip() == "configmap/settings serverside-applied"
    assert as_json(kubectl("get", "cm", "settings", "-o", "json"))["data"] == {"color": "red"}
    dry = kubectl("apply", "--server-side", "--field-manager", "bob", "--dry-run=server", "-f", "-", stdin=CONFIG_MAP)
    assert "(server dry run)" in dry.stdout
    assert as_json(kubectl("get", "cm", "settings", "-o", "json"))["data"] == {"color": "red"}


def test_replace(kubectl: Kubectl) -> None:
    kubectl("create", "-f", "-", stdin=CONFIG_MAP)
    replaced = kubectl("replace", "-f", "-", stdin=CONFIG_MAP.replace("color: blue", "shape: round"))
    assert replaced.stdout.strip() == "configmap/settings replaced"
    assert as_json(kubectl("get", "cm", "settings", "-o", "json"))["data"] == {"shape": "round"}
    missing = kubectl("replace", "-f", "-", stdin=CONFIG_MAP.replace("settings", "nope"), check=False)
    assert missing.returncode == 1 and 'configmaps "nope" not found' in missing.stderr


def test_patch_of_every_type(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=CONFIG_MAP)
    kubectl("patch", "cm", "settings", "-p", '{"metadata":{"finalizers":["example.com/a"]}}')
    kubectl("patch", "cm", "settings", "--type", "strategic", "-p", '{"metadata":{"finalizers":["example.com/b"]}}')
    got = as_json(kubectl("get", "cm", "settings", "-o", "json"))
    assert got["metadata"]["finalizers"] == ["example.com/a", "example.com/b"]  # a strategic merge: a set
    kubectl("patch", "cm", "settings", "--type", "merge", "-p", '{"metadata":{"finalizers":null},"data":{"n":"1"}}')
    kubectl(
        "patch", "cm", "settings", "--type", "json", "-p", '[{"op":"replace","path":"/data/color","value":"green"}]'
    )
    got = as_json(kubectl("get", "cm", "settings", "-o", "json"))
    assert "finalizers" not in got["metadata"] and got["data"] == {"color": "green", "n": "1"}
    failed = kubectl(
        "patch", "cm", "settings", "--type", "json", "-p", '[{"op":"test","path":"/data/n","value":"2"}]', check=False
    )
    assert failed.returncode == 1
    kubectl("apply", "-f", "-", stdin=CLUSTER)
    kubectl("patch", "cluster", "c1", "--type", "merge", "-p", '{"spec":{"paused":true}}')
    assert as_json(kubectl("get", "cluster", "c1", "-o", "json"))["spec"]["paused"] is True
    refused = kubectl("patch", "cluster", "c1", "-p", '{"spec":{"paused":false}}', check=False)
    assert refused.returncode == 1 and "application/strategic-merge-patch+json is not supported" in refused.stderr


def test_label_and_annotate(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=CLUSTER)
    kubectl("label", "cluster", "c1", "tier=gold")
    kubectl("annotate", "cluster", "c1", "note=hello")
    metadata = as_json(kubectl("get", "cluster", "c1", "-o", "json"))["metadata"]
    assert metadata["labels"] == {"env": "test", "tier": "gold"} and metadata["annotations"]["note"] == "hello"


# -- delete and wait ---------------------------------------------------------------------------------


def test_delete_waits_until_the_object_is_gone(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=CLUSTER)
    assert kubectl("delete", "cluster", "c1").stdout.startswith('cluster.cluster.x-k8s.io "c1" deleted')
    missing = kubectl("get", "cluster", "c1", check=False)
    assert missing.returncode == 1 and 'clusters.cluster.x-k8s.io "c1" not found' in missing.stderr


def test_wait_for_delete_of_an_object_held_by_a_finalizer(kubectl: Kubectl, store: MemoryStore) -> None:
    kubectl("apply", "-f", "-", stdin=CONFIG_MAP.replace("  labels:", "  finalizers: [example.com/hold]\n  labels:"))
    kubectl("delete", "cm", "settings", "--wait=false")
    release = threading.Timer(
        1.0, lambda: store.patch("v1", "ConfigMap", "settings", {"metadata": {"finalizers": None}}, namespace="default")
    )
    release.start()
    try:
        waited = kubectl("wait", "--for=delete", "configmap/settings", "--timeout=30s")
    finally:
        release.join()
    assert "condition met" in waited.stdout or "deleted" in waited.stdout


def test_wait_for_a_condition(kubectl: Kubectl, store: MemoryStore) -> None:
    kubectl("apply", "-f", "-", stdin=CLUSTER)

    def become_ready() -> None:
        # kubectl reads the preferred version, v1beta2, whose status.conditions are metav1.Conditions (a
        # v1beta1 status.conditions entry is v1beta2's status.deprecated.v1beta1.conditions)
        cluster = store.get(CAPI_V1BETA2, "Cluster", "c1", namespace="default")
        condition = {
            "type": "Ready",
            "status": "True",
            "reason": "Ready",
            "message": "",
            "lastTransitionTime": "2026-01-01T00:00:00Z",
        }
        store.update_status({**cluster, "status": {"conditions": [condition]}})

    timer = threading.Timer(1.0, become_ready)
    timer.start()
    try:
        waited = kubectl("wait", "--for=condition=Ready", "cluster/c1", "--timeout=30s")
    finally:
        timer.join()
    assert waited.stdout.strip() == "cluster.cluster.x-k8s.io/c1 condition met"


def test_explain_reads_the_crd_schema(kubectl: Kubectl) -> None:
    # the preferred version (v1beta2) names the class by spec.topology.classRef.name
    explained = kubectl("explain", "clusters.spec.topology.classRef.name").stdout
    assert "VERSION:    v1beta2" in explained
    assert "FIELD: name <string>" in explained
    assert "name is the name of the ClusterClass that should be used for the topology" in explained
    assert "does not exist" in kubectl("explain", "clusters.spec.topology.class", check=False).stderr
    # v1beta1's own schema when asked for
    explained = kubectl("explain", "clusters.spec.topology.class", "--api-version=cluster.x-k8s.io/v1beta1").stdout
    assert "VERSION:    v1beta1" in explained
    assert "FIELD: class <string>" in explained
    assert "class is the name of the ClusterClass object to create the topology" in explained


MACHINE_DEPLOYMENT = """
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: md1
spec:
  clusterName: c1
  replicas: 1
  selector: {matchLabels: {pool: a}}
  template:
    metadata: {labels: {pool: a}}
    spec:
      clusterName: c1
      bootstrap: {dataSecretName: boot}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta1, kind: DockerMachineTemplate, name: t}
"""


def test_scale_and_delete_all(kubectl: Kubectl) -> None:
    kubectl("apply", "-f", "-", stdin=MACHINE_DEPLOYMENT)
    assert (
        kubectl("scale", "md", "md1", "--replicas=3").stdout.strip() == "machinedeployment.cluster.x-k8s.io/md1 scaled"
    )
    assert as_json(kubectl("get", "md", "md1", "-o", "json"))["spec"]["replicas"] == 3
    stale = kubectl("scale", "md", "md1", "--current-replicas=1", "--replicas=5", check=False)
    assert stale.returncode == 1 and "Expected replicas to be 1, was 3" in stale.stderr
    kubectl("apply", "-f", "-", stdin=MACHINE_DEPLOYMENT.replace("md1", "md2"))
    deleted = kubectl("delete", "md", "--all").stdout
    assert "md1" in deleted and "md2" in deleted
    assert kubectl("get", "md", "-o", "name").stdout == ""
