"""``clusterclass up`` as a newcomer runs it: in a fresh directory, then again, then serving for kubectl.

Each test runs the real command in a child process (``python -m clusterclass.cli.main up``) with zero
provisioning delays, in a temporary directory, and reads what it prints and writes: the progress lines
and the final ``describe`` tree, the state file (compared object by object across a restart), the
kubeconfigs, and — while it serves — answers to real kubectl and ``clusterclass describe``.
"""

from __future__ import annotations

import contextlib
import ipaddress
import os
import shutil
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from support.real_apiserver import find_binary

from clusterclass.apiserver.persistence import SqliteState

COMMAND = [sys.executable, "-m", "clusterclass.cli.main"]
UP = [*COMMAND, "up", "--delays", "none", "--seed", "5"]


def run(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=os.environ.copy())


def objects(state: Path, tmp_path: Path) -> list[dict]:
    """Every object of a state file (read from a copy: the file stays untouched)."""
    copied = tmp_path / f"copy-{time.monotonic_ns()}.db"
    shutil.copy(state, copied)
    reader = SqliteState(copied)
    try:
        loaded, _ = reader.load()
    finally:
        reader.close()
    return loaded


def versions(state: Path, tmp_path: Path) -> dict[tuple[str, str, str], str]:
    """Every object's resourceVersion in a state file."""
    return {
        (o["kind"], o["metadata"].get("namespace", ""), o["metadata"]["name"]): o["metadata"]["resourceVersion"]
        for o in objects(state, tmp_path)
    }


def test_up_brings_the_example_to_ready_and_a_second_run_resumes_without_writing(tmp_path: Path) -> None:
    first = run([*UP, "--exit-when-ready"], tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    out = first.stdout
    assert "state .clusterclass/state.db (new)" in out
    assert "created the example (clusterclass/examples/quick-start.yaml): 10 objects, Cluster default/demo" in out
    assert "] demo: Cluster demo is Pending" in out  # progress, one line per change
    assert "] demo: KubeadmControlPlane demo-" in out
    assert "Cluster default/demo is ready" in out
    assert "NAME  " in out and "REPLICAS AVAILABLE READY UP TO DATE STATUS" in " ".join(out.split())  # v1.14's view
    for row in (
        "Cluster default/demo, v1.28.0",
        "├─DockerCluster default/",
        "MachinePool default/demo-mp-0-",
        "MachinePool default/demo-mp-1-",
    ):
        assert row in out
    assert "kubectl --kubeconfig .clusterclass/state.db.d/default-demo.kubeconfig get nodes" in out
    state = tmp_path / ".clusterclass" / "state.db"
    assert (tmp_path / ".clusterclass" / "kubeconfig").exists()
    assert (tmp_path / ".clusterclass" / "state.db.d" / "workloads" / "default" / "demo.db").exists()
    before = versions(state, tmp_path)

    second = run([*UP, "--exit-when-ready"], tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "(resumed)" in second.stdout and "the example is already there" in second.stdout
    assert versions(state, tmp_path) == before, "the restart rewrote objects"


def listening_addresses(port: int) -> set[str]:
    """The IPv4 and IPv6 addresses a TCP socket of this machine listens on at ``port`` (from /proc/net)."""
    found = set()
    for table, size in (("/proc/net/tcp", 4), ("/proc/net/tcp6", 16)):
        with contextlib.suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                local, state = line.split()[1], line.split()[3]
                address, _, hex_port = local.partition(":")
                if state != "0A" or int(hex_port, 16) != port:  # 0A: LISTEN
                    continue
                raw = bytes.fromhex(address)
                if size == 4:
                    found.add(str(ipaddress.IPv4Address(raw[::-1])))
                else:
                    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
                    found.add(str(ipaddress.IPv6Address(words)))
    return found


def assert_owner_only(state: Path) -> None:
    """What ``up`` keeps is its owner's alone: every directory 0700, every file holding a Secret, a key or a
    credential 0600 (the state databases, kubeconfigs, the CA key)."""
    secret_files = [
        p
        for p in state.rglob("*")
        if p.is_file() and (".db" in p.name or p.name.endswith("kubeconfig") or p.name.endswith(".key"))
    ]
    assert any(p.name == "state.db" for p in secret_files) and any(p.name == "ca.key" for p in secret_files)
    for path in secret_files:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, f"{path} is {oct(path.stat().st_mode)}"
    for path in [state, *(p for p in state.rglob("*") if p.is_dir())]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o700, f"{path} is {oct(path.stat().st_mode)}"


def test_up_serves_kubectl_and_describe_until_sigterm(tmp_path: Path) -> None:
    kubectl, _ = find_binary("kubectl")
    if kubectl is None:
        if os.environ.get("CI"):
            pytest.fail("kubectl not found: run scripts/build-apiserver.sh")
        pytest.skip("kubectl not found")
    process = subprocess.Popen(UP, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        lines = []
        assert process.stdout is not None
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            if line.startswith("serving until Ctrl-C"):
                break
        assert lines and lines[-1].startswith("serving until Ctrl-C"), "".join(lines)
        management = str(tmp_path / ".clusterclass" / "kubeconfig")
        workload = str(tmp_path / ".clusterclass" / "state.db.d" / "default-demo.kubeconfig")
        env = {**os.environ, "HOME": str(tmp_path)}

        def kubectl_(*args: str) -> str:
            done = subprocess.run([str(kubectl), *args], capture_output=True, text=True, timeout=60, env=env)
            assert done.returncode == 0, done.stderr
            return done.stdout

        pools = kubectl_("--kubeconfig", management, "get", "machinepools", "-A")
        assert "demo-mp-0-" in pools and "Running" in pools
        nodes = kubectl_("--kubeconfig", workload, "get", "nodes")
        rows = [line.split() for line in nodes.strip().splitlines()[1:]]
        assert len(rows) == 3 + 2 + 3 + 2
        assert {row[1] for row in rows} == {"Ready"} and {row[-1] for row in rows} == {"v1.28.0"}
        assert sum(1 for row in rows if row[2] == "control-plane") == 3
        described = run([*COMMAND, "describe", "cluster", "demo", "--kubeconfig", management], tmp_path)
        assert described.returncode == 0, described.stderr
        header = ["NAME", "REPLICAS", "AVAILABLE", "READY", "UP", "TO", "DATE", "STATUS", "REASON", "SINCE", "MESSAGE"]
        assert described.stdout.splitlines()[0].split() == header
        assert "└─Workers" in described.stdout and "MachinePool default/demo-mp-1-" in described.stdout
        cluster_row = described.stdout.splitlines()[1].split()
        assert cluster_row[:9] == [
            "Cluster",
            "default/demo,",
            "v1.28.0",
            "10/10",
            "10",
            "10",
            "10",
            "True",
            "Available",
        ]
        # the workload cluster's admin credentials are signed by that Cluster's CA: worth nothing on the management API
        management_ca = str(tmp_path / ".clusterclass" / "state.db.d" / "pki" / "ca.crt")
        server = yaml.safe_load(Path(management).read_text())["clusters"][0]["cluster"]["server"]
        crossed = subprocess.run(
            [str(kubectl), "--kubeconfig", workload, "--server", server, "--certificate-authority", management_ca,
             "get", "clusters", "-A"],
            capture_output=True, text=True, timeout=60, env=env,
        )  # fmt: skip
        assert crossed.returncode != 0 and "demo" not in crossed.stdout, crossed.stdout
        # the management API listens on loopback only
        port = int(server.rsplit(":", 1)[1])
        assert server.startswith("https://127.0.0.1:")
        assert listening_addresses(port) == {"127.0.0.1"}
        legacy = run([*COMMAND, "describe", "cluster", "demo", "--v1beta2=false", "--kubeconfig", management], tmp_path)
        assert legacy.stdout.splitlines()[0].split() == ["NAME", "READY", "SEVERITY", "REASON", "SINCE", "MESSAGE"]
        assert "MachinePool/demo-mp-1-" in legacy.stdout
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
        assert process.returncode == 0, err
        assert "stopping" in out
        assert_owner_only(tmp_path / ".clusterclass")
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_second_up_on_a_state_in_use_says_so(tmp_path: Path) -> None:
    process = subprocess.Popen(UP, cwd=tmp_path, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None
        while "management cluster at" not in process.stdout.readline():
            pass
        second = run([*UP, "--exit-when-ready"], tmp_path)
        assert second.returncode == 1
        assert second.stderr.startswith("error: ") and "Traceback" not in second.stderr
        assert "state.db" in second.stderr
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=60)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--delays", "slow"], "Invalid value for '--delays'"),
        (["--fail", "reboot"], "unknown step 'reboot'"),
        (["--delay", "vm=soon"], "SECONDS and JITTER must be numbers"),
    ],
)
def test_up_refuses_bad_options_with_a_clear_message(tmp_path: Path, args: list[str], message: str) -> None:
    done = run([*COMMAND, "up", *args], tmp_path)
    assert done.returncode == 2
    assert message in done.stderr and "Traceback" not in done.stderr


def test_up_with_the_example_extension_brings_its_cluster_up_and_resumes(tmp_path: Path) -> None:
    first = run([*UP, "--example-extension", "--exit-when-ready"], tmp_path)
    assert first.returncode == 0, first.stdout + first.stderr
    out = first.stdout
    assert "example Runtime Extension: https://127.0.0.1:" in out
    assert "created the extension example (clusterclass/examples/quick-start-extension.yaml): 2 objects" in out
    assert "Cluster default/demo is ready" in out and "Cluster default/demo-extension is ready" in out
    stored = objects(tmp_path / ".clusterclass" / "state.db", tmp_path)
    (config,) = [o for o in stored if o["kind"] == "ExtensionConfig"]
    assert [c["type"] for c in config["status"]["conditions"]] == ["Discovered"]
    pools = [
        o for o in stored if o["kind"] == "DockerMachinePool" and o["metadata"]["name"].startswith("demo-extension")
    ]
    assert [p["spec"]["template"]["customImage"] for p in pools] == ["kindest/node:v1.28.0"]

    second = run([*UP, "--example-extension", "--exit-when-ready"], tmp_path)
    assert second.returncode == 0, second.stdout + second.stderr
    assert "the extension example is already there: following it" in second.stdout
    assert "Cluster default/demo-extension" in second.stdout
