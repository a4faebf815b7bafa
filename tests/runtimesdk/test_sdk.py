"""Writing an extension with the SDK: decorators, discovery, answers, failures, the test helper, the serve command."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import aiohttp
import pytest
from click.testing import CliRunner

from clusterclass.api.objects import Obj
from clusterclass.cli.main import cli
from clusterclass.runtimesdk import Extension, ExtensionFailure, ExtensionTester, decoded_patch, json_patch_item
from clusterclass.runtimesdk.types import VariableNotFound, merge_patch_item, merged_variables, variable_value
from clusterclass.webhooks.certificates import serving_certificate


def test_discovery_lists_every_handler_with_its_hook_timeout_and_policy() -> None:
    extension = Extension()

    @extension.generate_patches()
    def my_patches(request: Obj) -> Obj:
        return {}

    @extension.before_cluster_delete("guard", timeout_seconds=3, failure_policy="Ignore")
    async def guard(request: Obj) -> Obj:
        return {}

    assert extension.discovery()["handlers"] == [
        {
            "name": "my-patches",
            "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": "GeneratePatches"},
            "timeoutSeconds": 10,
            "failurePolicy": "Fail",
        },
        {
            "name": "guard",
            "requestHook": {"apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1", "hook": "BeforeClusterDelete"},
            "timeoutSeconds": 3,
            "failurePolicy": "Ignore",
        },
    ]


def test_bad_registrations_are_refused() -> None:
    extension = Extension()
    with pytest.raises(KeyError, match="unknown Runtime SDK hook"):
        extension.handler("BeforeLunch")
    with pytest.raises(ValueError, match="Fail or Ignore"):
        extension.generate_patches(failure_policy="Maybe")
    with pytest.raises(ValueError, match="between 1 and 30"):
        extension.generate_patches(timeout_seconds=0)

    @extension.validate_topology("v")
    def first(request: Obj) -> Obj:
        return {}

    with pytest.raises(ValueError, match="registered twice"):
        extension.validate_topology("v")(first)


def test_answers_get_defaults_and_failures_become_failure_answers() -> None:
    extension = Extension()

    @extension.before_cluster_upgrade("ok")
    def ok(request: Obj) -> None:
        return None

    @extension.before_cluster_upgrade("refuse")
    def refuse(request: Obj) -> Obj:
        raise ExtensionFailure("not now")

    @extension.before_cluster_upgrade("broken")
    def broken(request: Obj) -> Obj:
        return {}["missing"]  # type: ignore[no-any-return]

    tester = ExtensionTester(extension)
    assert tester.call("BeforeClusterUpgrade", {"cluster": {}}, handler="ok") == {
        "apiVersion": "hooks.runtime.cluster.x-k8s.io/v1alpha1",
        "kind": "BeforeClusterUpgradeResponse",
        "status": "Success",
        "message": "",
        "retryAfterSeconds": 0,
    }
    refused = tester.call("BeforeClusterUpgrade", {}, handler="refuse")
    assert (refused["status"], refused["message"]) == ("Failure", "not now")
    assert tester.call("BeforeClusterUpgrade", {}, handler="broken")["message"] == "KeyError: 'missing'"
    assert tester.call("BeforeClusterUpgrade", {}, handler="nobody")["message"] == (
        "no BeforeClusterUpgrade handler named 'nobody' in extension 'extension'"
    )
    with pytest.raises(ValueError, match="3 BeforeClusterUpgrade handlers"):
        tester.call("BeforeClusterUpgrade", {})


def test_patch_items_and_variables() -> None:
    item = json_patch_item("u1", [{"op": "add", "path": "/spec/template/spec/x", "value": 1}])
    assert item["patchType"] == "JSONPatch" and decoded_patch(dict(item)) == [
        {"op": "add", "path": "/spec/template/spec/x", "value": 1}
    ]
    assert decoded_patch(dict(merge_patch_item("u2", {"spec": {"a": None}}))) == {"spec": {"a": None}}
    variables = merged_variables(
        [{"name": "builtin", "value": {"cluster": {"name": "c"}}}, {"name": "region", "value": "eu"}],
        [{"name": "builtin", "value": {"machinePool": {"version": "v1.29.0"}}}, {"name": "region", "value": "us"}],
    )
    assert variable_value(variables, "builtin.cluster.name") == "c"
    assert variable_value(variables, "builtin.machinePool.version") == "v1.29.0"
    assert variable_value(variables, "region") == "us"
    with pytest.raises(VariableNotFound):
        variable_value(variables, "builtin.machineDeployment.version")


async def test_the_application_serves_discovery_and_handlers_by_lowercased_hook(tmp_path: Path) -> None:
    extension = Extension()

    @extension.after_control_plane_upgrade("after")
    async def after(request: Obj) -> Obj:
        return {"message": request["kubernetesVersion"]}

    certificate = serving_certificate(["127.0.0.1"])
    certificate.write(tmp_path)
    running = await extension.start(host="127.0.0.1", port=0, cert_dir=tmp_path)
    base = f"https://127.0.0.1:{running.port}/hooks.runtime.cluster.x-k8s.io/v1alpha1"
    ssl = __import__("ssl").create_default_context(cadata=certificate.ca_pem.decode())
    try:
        async with aiohttp.ClientSession() as session:
            async with session.post(f"{base}/discovery", json={}, ssl=ssl) as answer:
                assert (await answer.json())["handlers"][0]["name"] == "after"
            async with session.post(
                f"{base}/aftercontrolplaneupgrade/after", json={"kubernetesVersion": "v1.29.0"}, ssl=ssl
            ) as answer:
                body = await answer.json()
                assert (body["status"], body["message"]) == ("Success", "v1.29.0")
            async with session.post(f"{base}/beforelunch/after", json={}, ssl=ssl) as answer:
                assert answer.status == 404
            async with session.post(f"{base}/aftercontrolplaneupgrade/after", data=b"{", ssl=ssl) as answer:
                assert answer.status == 400
    finally:
        await running.stop()


def test_serve_refuses_what_is_not_an_extension(tmp_path: Path) -> None:
    for target, message in (
        ("nope", "is not MODULE:OBJECT"),
        ("no.such.module:x", "cannot import no.such.module: ModuleNotFoundError"),
        ("clusterclass.examples.extension:missing", "clusterclass.examples.extension has no 'missing'"),
        ("clusterclass.examples.extension:logger", "is a Logger, not an Extension"),
        (f"{tmp_path}/gone.py:extension", "gone.py does not exist"),
    ):
        result = CliRunner().invoke(cli, ["extension", "serve", target, "--cert-dir", str(tmp_path)])
        assert result.exit_code == 2 and message in result.output, (target, result.output)


def test_serve_runs_an_extension_from_a_file_until_sigterm(tmp_path: Path) -> None:
    module = tmp_path / "my_extension.py"
    module.write_text(
        "from clusterclass.runtimesdk import Extension\n"
        "extension = Extension('mine')\n"
        "@extension.validate_topology('always')\n"
        "def always(request):\n"
        "    return {}\n"
    )
    certificate = serving_certificate(["127.0.0.1"])
    certificate.write(tmp_path / "certs")
    port = _free_port()
    process = subprocess.Popen(
        [sys.executable, "-m", "clusterclass.cli.main", "extension", "serve", f"{module}:extension",
         "--port", str(port), "--host", "127.0.0.1", "--cert-dir", str(tmp_path / "certs")],
        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    try:
        context = __import__("ssl").create_default_context(cadata=certificate.ca_pem.decode())
        url = f"https://127.0.0.1:{port}/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery"
        deadline = time.monotonic() + 30
        while True:
            try:
                request = urllib.request.Request(url, data=b"{}", method="POST")
                with urllib.request.urlopen(request, context=context, timeout=5) as answer:
                    discovery = json.loads(answer.read())
                break
            except OSError:
                if time.monotonic() > deadline or process.poll() is not None:
                    raise
                time.sleep(0.1)
        assert [h["name"] for h in discovery["handlers"]] == ["always"]
        process.send_signal(signal.SIGTERM)
        assert process.wait(30) == 0
        assert "serving extension mine (1 handlers) on https://127.0.0.1:" in (process.stderr.read() or "")
    finally:
        if process.poll() is None:
            process.kill()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_the_readme_example_extension_works_as_written() -> None:
    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    section = readme[readme.index("## Runtime SDK: extensions in Python") :]
    code = section[section.index("```python") + len("```python") : section.index("```", section.index("```python") + 9)]
    namespace: dict[str, object] = {}
    exec(compile(code, "README.md", "exec"), namespace)
    tester = ExtensionTester(namespace["extension"])  # type: ignore[arg-type]
    request = {
        "variables": [{"name": "builtin", "value": {"cluster": {"name": "c"}}}],
        "items": [
            {
                "uid": "u",
                "holderReference": {
                    "apiVersion": "cluster.x-k8s.io/v1beta1",
                    "kind": "MachinePool",
                    "namespace": "d",
                    "name": "p",
                    "fieldPath": "spec.template.spec.infrastructureRef",
                },
                "object": {"kind": "DockerMachinePoolTemplate", "spec": {"template": {"spec": {"template": {}}}}},
                "variables": [{"name": "builtin", "value": {"machinePool": {"version": "v1.29.0"}}}],
            }
        ],
    }
    (item,) = tester.call("GeneratePatches", request)["items"]
    assert decoded_patch(item) == [
        {"op": "add", "path": "/spec/template/spec/template/customImage", "value": "kindest/node:v1.29.0"}
    ]
    held = tester.call("BeforeClusterUpgrade", {"cluster": {}})
    assert (held["retryAfterSeconds"], held["message"]) == (60, "outside the maintenance window")
