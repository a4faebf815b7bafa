"""``clusterclass apiserver`` as a user runs it: a process that serves until SIGTERM or SIGINT."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from kubernetes import client, config

CAPI = "cluster.x-k8s.io/v1beta1"


class Process:
    """A running ``clusterclass apiserver`` and what it printed before it was ready."""

    def __init__(self, *args: str) -> None:
        command = [sys.executable, "-m", "clusterclass.cli.main", "apiserver", *args]
        self.popen = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        self.lines: dict[str, str] = {}
        assert self.popen.stdout is not None
        for line in self.popen.stdout:
            key, _, value = line.partition(": ")
            self.lines[key.strip()] = value.strip()
            if key == "try":
                break
        else:
            raise AssertionError(f"apiserver exited early: {self.popen.stderr.read() if self.popen.stderr else ''}")

    def stop(self, signum: int) -> tuple[int, str]:
        self.popen.send_signal(signum)
        out, _ = self.popen.communicate(timeout=30)
        return self.popen.returncode, out

    def kill(self) -> None:
        if self.popen.poll() is None:
            self.popen.kill()
        self.popen.communicate(timeout=30)


@pytest.fixture
def processes() -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for process in started:
        process.kill()


def core_api(kubeconfig: Path) -> client.CoreV1Api:
    return client.CoreV1Api(config.new_client_from_config(config_file=str(kubeconfig)))


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_serves_until_a_signal_then_exits_zero(signum: int, tmp_path: Path, processes: list[Process]) -> None:
    kubeconfig = tmp_path / "out" / "kubeconfig"
    process = Process("--kubeconfig-out", str(kubeconfig))
    processes.append(process)
    port = int(process.lines["port"])
    assert process.lines["url"] == f"https://127.0.0.1:{port}"
    assert process.lines["kubeconfig"] == str(kubeconfig.resolve())
    assert process.lines["state"] == "in memory (not kept)"
    assert [ns.metadata.name for ns in core_api(kubeconfig).list_namespace().items] == ["default"]
    code, out = process.stop(signum)
    assert code == 0
    assert out.strip().endswith("stopped")
    with pytest.raises(OSError):
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


def test_state_is_kept_across_restarts(tmp_path: Path, processes: list[Process]) -> None:
    state, kubeconfig = tmp_path / "data" / "mgmt.db", tmp_path / "kubeconfig"
    first = Process("--state", str(state), "--kubeconfig-out", str(kubeconfig))
    processes.append(first)
    assert first.lines["state"] == str(state.resolve())
    core_api(kubeconfig).create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="kept")))
    assert first.stop(signal.SIGTERM)[0] == 0
    second = Process("--state", str(state), "--kubeconfig-out", str(kubeconfig))
    processes.append(second)
    names = [ns.metadata.name for ns in core_api(kubeconfig).list_namespace().items]
    assert names == ["default", "kept"]
    assert second.stop(signal.SIGINT)[0] == 0


def test_a_port_in_use_is_a_one_line_error(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "clusterclass.cli.main",
                "apiserver",
                "--port",
                str(port),
                "--kubeconfig-out",
                str(tmp_path / "k"),
            ],
            capture_output=True,
            text=True,
            timeout=60,
            env={**os.environ, "CLUSTERCLASS_DEBUG": ""},
        )
    assert done.returncode == 1
    assert f"cannot listen on 127.0.0.1:{port}" in done.stderr
    assert "Traceback" not in done.stderr
