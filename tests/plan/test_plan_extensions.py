"""``plan`` with Runtime Extensions: external patches and discovered variables from a running extension."""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import yaml
from click.testing import CliRunner

from clusterclass.cli.main import cli
from clusterclass.examples.extension import extension
from clusterclass.runtimesdk.extension import RunningExtension
from clusterclass.webhooks.certificates import ServingCertificate, serving_certificate

EXAMPLES = Path(__file__).resolve().parents[2] / "clusterclass" / "examples"
FILES = ["-f", str(EXAMPLES / "quick-start.yaml"), "-f", str(EXAMPLES / "quick-start-extension.yaml")]


@pytest.fixture
async def running(tmp_path: Path) -> AsyncIterator[tuple[RunningExtension, ServingCertificate]]:
    certificate = serving_certificate(["127.0.0.1"])
    certificate.write(tmp_path)
    served = await extension.start(host="127.0.0.1", port=0, cert_dir=tmp_path)
    try:
        yield served, certificate
    finally:
        await served.stop()


def extension_config_file(directory: Path, client_config: dict[str, object]) -> Path:
    """A file holding the ExtensionConfig ``example-extension`` with ``client_config``."""
    path = directory / "extension-config.yaml"
    document = {
        "apiVersion": "runtime.cluster.x-k8s.io/v1alpha1",
        "kind": "ExtensionConfig",
        "metadata": {"name": "example-extension"},
        "spec": {"clientConfig": client_config},
    }
    path.write_text(yaml.safe_dump(document))
    return path


def plan(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(cli, ["plan", *FILES, "--cluster", "default/demo-extension", "--seed", "1", *args])
    return result.exit_code, result.output


async def test_external_patches_reach_the_planned_machine_pool(
    running: tuple[RunningExtension, ServingCertificate], tmp_path: Path
) -> None:
    served, _ = running
    code, output = await asyncio.to_thread(
        plan,
        "--extension-url",
        f"https://127.0.0.1:{served.port}",
        "--extension-ca",
        str(tmp_path / "ca.crt"),
        "-o",
        "yaml",
    )
    assert code == 0, output
    created = yaml.safe_load(output)["created"]
    pools = [o for o in created if o["kind"] == "DockerMachinePool"]
    assert [p["spec"]["template"]["customImage"] for p in pools] == ["kindest/node:v1.28.0"]
    (docker_cluster,) = [o for o in created if o["kind"] == "DockerCluster"]
    assert docker_cluster["spec"]["loadBalancer"] == {"imageRepository": "kindest"}


async def test_an_extension_config_among_the_files_is_used_by_its_url(
    running: tuple[RunningExtension, ServingCertificate], tmp_path: Path
) -> None:
    served, certificate = running
    config = extension_config_file(
        tmp_path, {"url": f"https://127.0.0.1:{served.port}", "caBundle": certificate.ca_bundle}
    )
    code, output = await asyncio.to_thread(plan, "-f", str(config))
    assert code == 0, output
    assert re.search(r"\+ created  DockerMachinePool default/demo-extension-mp-0-\w+", output)


def test_without_extensions_the_plan_says_how_to_give_them() -> None:
    code, output = plan()
    assert code == 1
    assert (
        "ClusterClass default/quick-start-extension has external patches (example): plan calls their Runtime "
        "Extensions only when they are given: --extension-url, or their ExtensionConfigs among the files"
    ) in output


def test_an_unreachable_extension_is_one_clear_error() -> None:
    code, output = plan("--extension-url", "https://127.0.0.1:1")
    assert code == 1
    assert output.startswith("error: --extension-url: cannot discover its handlers: discovery: ClientConnectorError")


def test_an_extension_config_behind_a_service_needs_the_url(tmp_path: Path) -> None:
    config = extension_config_file(tmp_path, {"service": {"name": "ext", "namespace": "nowhere-xyz"}})
    code, output = plan("-f", str(config))
    assert code == 1
    assert "ExtensionConfig example-extension: cannot discover its handlers" in output
    assert "(a Service is reachable only inside its cluster: give --extension-url)" in output
