"""Shared helpers for the ``clusterclass plan`` tests: paths, running the command, YAML files.

The tests drive the command the way a user does: real YAML files in, text/JSON/YAML out.

- :func:`invoke` runs the ``plan`` command through click's ``CliRunner`` on ``cli``;
- :func:`run_main` runs the console-script entry point ``main()`` in-process, which is where
  input errors become one ``error: ...`` line and an exit code;
- :func:`run_subprocess` runs ``python -m clusterclass.cli.main`` (or the installed
  ``clusterclass`` script) as a real process, to prove exit codes and the absence of tracebacks.

:func:`current_state` turns the objects a first plan *created* into what a management cluster
would hold a while later: uids and resourceVersions, the fields other controllers and webhooks
fill in, and a status saying everything is up and stable.
"""

from __future__ import annotations

import copy
import json
import os
import shutil
import subprocess
import sys
import uuid
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import yaml
from click.testing import CliRunner, Result

from clusterclass.cli.main import cli, main

REPO_ROOT = Path(__file__).resolve().parents[2]
SHARED = REPO_ROOT.parent / "shared"
QUICK_START = SHARED / "upstream" / "examples" / "clusterclass-quick-start.yaml"
FIXTURES = Path(__file__).resolve().parent / "fixtures"

#: Keep rich from colouring the text output whatever the environment of the test run says.
CLEAN_ENV: dict[str, str | None] = {"FORCE_COLOR": None, "TTY_COMPATIBLE": None, "CLUSTERCLASS_DEBUG": None}

RANDOM = "[bcdfghjklmnpqrstvwxz2456789]{5}"

Obj = dict[str, Any]


# --- running the command ------------------------------------------------------------------------


def invoke(*args: str | Path, input: str | None = None) -> Result:
    """``clusterclass plan ARGS`` through ``CliRunner`` on the click group."""
    return CliRunner(env=CLEAN_ENV).invoke(cli, ["plan", *map(str, args)], input=input)


def plan_json(*args: str | Path, input: str | None = None) -> Obj:
    """``clusterclass plan ARGS -o json``, which must succeed, decoded."""
    result = invoke(*args, "-o", "json", input=input)
    assert result.exit_code == 0, result.output
    assert result.exception is None, result.exception
    data: Obj = json.loads(result.stdout)
    return data


def plan_text(*args: str | Path) -> str:
    """``clusterclass plan ARGS`` (text output), which must succeed."""
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    return result.stdout


@dataclass
class Outcome:
    exit_code: int
    stdout: str
    stderr: str

    @property
    def output(self) -> str:
        return self.stdout + self.stderr


def run_main(*args: str | Path, input: str | None = None) -> Outcome:
    """The console-script entry point ``main()`` with ``sys.argv`` = ``clusterclass ARGS``, in-process."""
    runner = CliRunner(env=CLEAN_ENV)
    argv = ["clusterclass", *map(str, args)]
    with runner.isolation(input=input) as (out, err, _), mock.patch.object(sys, "argv", argv):
        try:
            main()
            code = 0
        except SystemExit as exit_:
            code = exit_.code if isinstance(exit_.code, int) else (0 if exit_.code is None else 1)
        sys.stdout.flush()
        sys.stderr.flush()
        return Outcome(code, out.getvalue().decode(), err.getvalue().decode())


def console_script() -> str:
    """The installed ``clusterclass`` script of the interpreter running the tests."""
    bin_dir = Path(sys.executable).parent
    found = shutil.which("clusterclass", path=os.pathsep.join([str(bin_dir), str(Path(sys.prefix) / "bin")]))
    assert found, f"the clusterclass console script is not installed next to {sys.executable}"
    return found


def run_subprocess(
    *args: str | Path, input: str | None = None, script: bool = False, cwd: Path | None = None
) -> Outcome:
    """``python -m clusterclass.cli.main ARGS`` (or the ``clusterclass`` script) as a real process."""
    command = [console_script()] if script else [sys.executable, "-m", "clusterclass.cli.main"]
    env = {k: v for k, v in os.environ.items() if k not in CLEAN_ENV}
    completed = subprocess.run(
        [*command, *map(str, args)],
        input=input,
        capture_output=True,
        text=True,
        cwd=cwd or REPO_ROOT,
        env=env,
        timeout=120,
        check=False,
    )
    return Outcome(completed.returncode, completed.stdout, completed.stderr)


# --- YAML files -----------------------------------------------------------------------------------


def read_yaml(path: Path) -> Obj:
    data: Obj = yaml.safe_load(path.read_text(encoding="utf-8"))
    return data


def read_all_yaml(path: Path) -> list[Obj]:
    return [doc for doc in yaml.safe_load_all(path.read_text(encoding="utf-8")) if doc is not None]


def write_yaml(path: Path, *objects: Obj) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(objects, sort_keys=False), encoding="utf-8")
    return path


def find(objects: Iterable[Obj], kind: str, name: str | None = None) -> list[Obj]:
    return [o for o in objects if o["kind"] == kind and (name is None or o["metadata"]["name"] == name)]


def one(objects: Iterable[Obj], kind: str, *, label: tuple[str, str] | None = None) -> Obj:
    """The single object of ``kind`` (with ``label`` key=value, if given)."""
    found = [
        o
        for o in objects
        if o["kind"] == kind and (label is None or (o["metadata"].get("labels") or {}).get(label[0]) == label[1])
    ]
    assert len(found) == 1, f"expected one {kind} {label or ''}, found {[o['metadata']['name'] for o in found]}"
    return found[0]


def pool(objects: Iterable[Obj], kind: str, topology_name: str) -> Obj:
    """The object of ``kind`` that belongs to the MachinePool topology ``topology_name``."""
    return one(objects, kind, label=("topology.cluster.x-k8s.io/pool-name", topology_name))


def deployment(objects: Iterable[Obj], kind: str, topology_name: str) -> Obj:
    """The object of ``kind`` that belongs to the MachineDeployment topology ``topology_name``."""
    return one(objects, kind, label=("topology.cluster.x-k8s.io/deployment-name", topology_name))


def kinds_and_names(objects: Iterable[Obj]) -> list[tuple[str, str]]:
    return [(o["kind"], o["metadata"]["name"]) for o in objects]


def modified_objects(data: Obj) -> list[tuple[str, str]]:
    return [(m["after"]["kind"], m["after"]["metadata"]["name"]) for m in data["modified"]]


def deleted_objects(data: Obj) -> list[tuple[str, str]]:
    return [(d["kind"], d["name"]) for d in data["deleted"]]


# --- a management cluster after the first plan was applied ----------------------------------------


def _uid(obj: Obj) -> str:
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"{obj['kind']}/{obj['metadata']['name']}"))


def _owner(obj: Obj, *, controller: bool = False) -> Obj:
    ref = {
        "apiVersion": obj["apiVersion"],
        "kind": obj["kind"],
        "name": obj["metadata"]["name"],
        "uid": obj["metadata"]["uid"],
    }
    if controller:
        ref.update(controller=True, blockOwnerDeletion=True)
    return ref


def current_state(first_plan: Obj) -> list[Obj]:
    """What a management cluster holds once the objects of ``first_plan`` exist and settled.

    Every created object gets a uid, a resourceVersion and what its controllers and webhooks
    add: the KubeadmControlPlane is initialized with every replica at ``spec.version`` (so it is
    stable), the InfrastructureCluster has an endpoint, MachinePools are Running with their
    provider IDs and bootstrap secret, and the MachinePool controller owns its two objects.
    The Cluster is the "after" of the first plan's Cluster modification. The shim Secret has served
    and is gone: the Cluster owns its InfrastructureCluster and control plane, and garbage collection
    dropped their references to the shim.
    """
    assert len(first_plan["modified"]) == 1, "the first plan should only modify the Cluster"
    cluster = copy.deepcopy(first_plan["modified"][0]["after"])
    assert cluster["kind"] == "Cluster"
    cluster["metadata"].setdefault("uid", _uid(cluster))
    cluster["metadata"]["resourceVersion"] = "2"
    cluster["status"] = {
        "phase": "Provisioned",
        "infrastructureReady": True,
        "controlPlaneReady": True,
        "observedGeneration": 2,
        "conditions": [
            {"type": "ControlPlaneInitialized", "status": "True", "lastTransitionTime": "2024-01-01T00:00:00Z"}
        ],
    }
    cluster_name = cluster["metadata"]["name"]
    objects = [copy.deepcopy(o) for o in first_plan["created"] if o["kind"] != "Secret"]
    for obj in objects:
        obj["metadata"]["uid"] = _uid(obj)
        obj["metadata"]["resourceVersion"] = "1"
        obj["metadata"]["creationTimestamp"] = "2024-01-01T00:00:00Z"
    by_name = {(o["kind"], o["metadata"]["name"]): o for o in objects}
    cluster_owner = _owner(cluster)
    for obj in objects:
        kind, spec = obj["kind"], obj.get("spec", {})
        if kind == "KubeadmControlPlane":
            replicas = spec["replicas"]
            obj["metadata"]["ownerReferences"] = [{**cluster_owner, "controller": True, "blockOwnerDeletion": True}]
            spec.setdefault("rolloutStrategy", {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}})
            obj["status"] = {
                "version": spec["version"],
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": replicas,
                "unavailableReplicas": 0,
                "initialized": True,
                "ready": True,
                "observedGeneration": 1,
            }
        elif kind == "DockerCluster":
            obj["metadata"]["ownerReferences"] = [{**cluster_owner, "controller": True, "blockOwnerDeletion": True}]
            spec["controlPlaneEndpoint"] = {"host": "172.18.0.3", "port": 6443}
            obj["status"] = {"ready": True}
        elif kind == "MachineDeployment":
            replicas = spec.get("replicas", 1)
            obj["metadata"]["ownerReferences"] = [cluster_owner]
            spec.setdefault("minReadySeconds", 0)
            spec.setdefault("revisionHistoryLimit", 1)
            spec.setdefault(
                "strategy",
                {
                    "type": "RollingUpdate",
                    "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0, "deletePolicy": "Random"},
                },
            )
            obj["status"] = {
                "phase": "Running",
                "replicas": replicas,
                "updatedReplicas": replicas,
                "readyReplicas": replicas,
                "availableReplicas": replicas,
                "unavailableReplicas": 0,
                "observedGeneration": 1,
            }
        elif kind == "MachinePool":
            replicas = spec.get("replicas", 1)
            machine_spec = spec["template"]["spec"]
            obj["metadata"]["ownerReferences"] = [cluster_owner]
            obj["metadata"].setdefault("finalizers", ["machinepool.cluster.x-k8s.io"])
            spec.setdefault("minReadySeconds", 0)
            machine_spec["bootstrap"]["dataSecretName"] = machine_spec["bootstrap"]["configRef"]["name"]
            provider_ids = [f"docker:////{obj['metadata']['name']}-{i}" for i in range(replicas)]
            spec["providerIDList"] = provider_ids
            obj["status"] = {
                "phase": "Running",
                "replicas": replicas,
                "readyReplicas": replicas,
                "availableReplicas": replicas,
                "unavailableReplicas": 0,
                "bootstrapReady": True,
                "infrastructureReady": True,
                "observedGeneration": 1,
            }
            for ref, extra in (
                (machine_spec["infrastructureRef"], {"providerIDList": provider_ids}),
                (machine_spec["bootstrap"]["configRef"], {}),
            ):
                target = by_name[(ref["kind"], ref["name"])]
                target["metadata"]["ownerReferences"] = [
                    *target["metadata"].get("ownerReferences", []),
                    _owner(obj, controller=True),
                ]
                target.setdefault("spec", {}).update(extra)
                target["status"] = {"ready": True, "replicas": replicas} if extra else {"ready": True}
    assert all(o["metadata"].get("labels", {}).get("cluster.x-k8s.io/cluster-name") == cluster_name for o in objects)
    return [cluster, *objects]


def write_state(directory: Path, objects: Iterable[Obj]) -> Path:
    """One YAML file per object, ``<Kind>_<name>.yaml``, as ``kubectl get -o yaml`` would save them."""
    directory.mkdir(parents=True, exist_ok=True)
    for obj in objects:
        write_yaml(directory / f"{obj['kind']}_{obj['metadata']['name']}.yaml", obj)
    return directory


def node(name: str, kubelet_version: str, *, cluster: str = "my-cluster", namespace: str = "default") -> Obj:
    """A workload-cluster Node as ``kubectl get node -o yaml`` shows it, annotated by Cluster API."""
    return {
        "apiVersion": "v1",
        "kind": "Node",
        "metadata": {
            "name": name,
            "uid": str(uuid.uuid5(uuid.NAMESPACE_URL, f"Node/{name}")),
            "annotations": {
                "cluster.x-k8s.io/cluster-name": cluster,
                "cluster.x-k8s.io/cluster-namespace": namespace,
            },
            "labels": {"kubernetes.io/hostname": name},
        },
        "spec": {"providerID": f"docker:////{name}"},
        "status": {
            "nodeInfo": {"kubeletVersion": kubelet_version, "architecture": "amd64", "operatingSystem": "linux"},
            "conditions": [{"type": "Ready", "status": "True"}],
        },
    }
