"""``clusterclass up`` SIGKILLed at 20 random moments of a rollout, and restarted: nothing lost.

The embedded management cluster, the topology controller and the simulated providers live in the one process; its
state is a SQLite file (write-ahead log). The example Cluster comes up, its topology version is bumped (control
plane first, then the MachineDeployment and both MachinePools roll), and while that rolls the process is killed with
SIGKILL — no chance to flush or clean up — at 20 random moments, each time started again on the same state. Once the
last run brings the upgrade to its end: every Machine and pool at the new version, the Cluster Ready, and the
invariants of :mod:`support.invariants` (one worker object per topology worker, MachineSets and Machines in step,
nothing orphaned or leaked).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from support.invariants import violations

from clusterclass.api.objects import dig
from clusterclass.kube.http.client import HttpClient
from clusterclass.kube.http.kubeconfig import load_kubeconfig

COMMAND = [sys.executable, "-m", "clusterclass.cli.main"]
#: the default "fast" step delays: a rollout takes long enough for the kills to land in it
UP = [*COMMAND, "up", "--seed", "5"]
CAPI = "cluster.x-k8s.io/v1beta1"
KILLS = 20


def start(cwd: Path, log: Path) -> subprocess.Popen[str]:
    with log.open("a") as out:
        return subprocess.Popen(UP, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, text=True, env=os.environ.copy())


def wait_for_line(log: Path, text: str, process: subprocess.Popen[str], timeout: float = 120) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if text in log.read_text():
            return
        if process.poll() is not None:
            raise AssertionError(f"up exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        time.sleep(0.1)
    raise AssertionError(f"no {text!r} within {timeout}s:\n{log.read_text()[-3000:]}")


def wait_for_runs(log: Path, runs: int, process: subprocess.Popen[str], timeout: float = 120) -> None:
    """Until the ``runs``-th start of up says where its management cluster is (its API serves from then on)."""
    deadline = time.monotonic() + timeout
    while log.read_text().count("management cluster at") < runs:
        if process.poll() is not None:
            raise AssertionError(f"up exited with {process.returncode}:\n{log.read_text()[-3000:]}")
        if time.monotonic() > deadline:
            raise AssertionError(f"run {runs} of up did not start within {timeout}s:\n{log.read_text()[-3000:]}")
        time.sleep(0.05)


async def upgraded_and_sound(kubeconfig: Path, version: str) -> list[str]:
    """What still differs from "upgraded and every invariant holds" (empty: done)."""
    async with HttpClient(load_kubeconfig(kubeconfig)) as client:
        machines = (await client.list(CAPI, "Machine", namespace="default")).items
        pools = (await client.list(CAPI, "MachinePool", namespace="default")).items
        cluster = await client.get(CAPI, "Cluster", "demo", namespace="default")
        behind = [
            str(dig(m, "metadata", "name"))
            for m in machines
            if dig(m, "spec", "version") not in (None, version) or not dig(m, "status", "nodeRef")
        ]
        behind += [
            str(dig(p, "metadata", "name"))
            for p in pools
            if dig(p, "status", "readyReplicas") != dig(p, "spec", "replicas")
        ]
        behind += [
            str(dig(p, "metadata", "name")) for p in pools if dig(p, "spec", "template", "spec", "version") != version
        ]
        ready = any(
            c.get("type") == "Ready" and c.get("status") == "True" for c in dig(cluster, "status", "conditions") or []
        )
        if behind or not ready:
            return [f"not there yet: {behind}, Cluster Ready {ready}"]
        return await violations(client, "default")


@pytest.mark.timeout(900)
def test_up_killed_at_twenty_moments_of_a_rollout_loses_nothing(tmp_path: Path) -> None:
    log = tmp_path / "up.out"
    kubeconfig = tmp_path / ".clusterclass" / "kubeconfig"
    process = start(tmp_path, log)
    try:
        wait_for_line(log, "serving until Ctrl-C", process)
        asyncio.run(_patch_version(kubeconfig, "v1.29.0"))
        rng = random.Random(21)
        during_rollout = 0
        for kill in range(KILLS):
            time.sleep(rng.uniform(0.2, 2.5))
            try:
                during_rollout += bool(asyncio.run(upgraded_and_sound(kubeconfig, "v1.29.0")))
            except Exception:  # not serving yet: still starting, so still rolling
                during_rollout += 1
            process.send_signal(signal.SIGKILL)
            process.wait(timeout=30)
            with log.open("a") as out:
                out.write(f"\n--- SIGKILL {kill + 1} ---\n")
            process = start(tmp_path, log)
            wait_for_runs(log, kill + 2, process)  # killed again only once it serves its API
        deadline = time.monotonic() + 300
        left: list[str] = ["not checked"]
        while time.monotonic() < deadline:
            if process.poll() is not None:
                raise AssertionError(f"up exited with {process.returncode}:\n{log.read_text()[-3000:]}")
            try:
                left = asyncio.run(upgraded_and_sound(kubeconfig, "v1.29.0"))
            except Exception as err:  # the API starting up again
                left = [f"{type(err).__name__}: {err}"]
            if not left:
                break
            time.sleep(1)
        assert not left, f"after {KILLS} SIGKILLs: {left}\n{log.read_text()[-3000:]}"
        print(f"{KILLS} SIGKILLs, {during_rollout} of them before the rollout was done")
        assert during_rollout >= KILLS // 2, f"only {during_rollout} kills hit the rollout"
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()


async def _patch_version(kubeconfig: Path, version: str) -> None:
    async with HttpClient(load_kubeconfig(kubeconfig)) as client:
        await client.patch(CAPI, "Cluster", "demo", {"spec": {"topology": {"version": version}}}, namespace="default")
