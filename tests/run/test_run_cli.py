"""``clusterclass run`` and ``clusterclass webhook-certs`` as a user types them: flags, errors, probes, certificates."""

from __future__ import annotations

import base64
import json
import shlex
from pathlib import Path

import aiohttp
import pytest
import yaml
from click.testing import CliRunner
from cryptography import x509

from clusterclass.cli.main import cli
from clusterclass.controllers.runtime.metrics import Metrics
from clusterclass.run.endpoints import BindAddressError, Endpoints, parse_bind_address


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--sync-period", "5x"], "'5x' is not a duration such as 15s, 1m30s or 10m0s"),
        (["--sync-period", "0s"], "'0s' must be longer than zero"),
        (["--health-addr", "nope"], "--health-addr: 'nope' is not host:port, :port or 0"),
        (["--metrics-bind-addr", "localhost:99999"], "is not host:port, :port or 0"),
        (["--leader-elect-renew-deadline", "20s"], "the lease duration must be greater than the renew deadline"),
        (["--clustertopology-concurrency", "0"], "0 is not in the range x>=1"),
        (["--log-format", "xml"], "'xml' is not one of 'text', 'json'"),
    ],
)
def test_bad_flags_are_one_clear_error(args: list[str], message: str) -> None:
    result = CliRunner().invoke(cli, ["run", *args])
    assert result.exit_code == 2
    assert message in result.output


def test_missing_webhook_certificates_are_named(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    kubeconfig.write_text(
        yaml.safe_dump(
            {
                "apiVersion": "v1",
                "kind": "Config",
                "clusters": [{"name": "c", "cluster": {"server": "https://127.0.0.1:1"}}],
                "users": [{"name": "u", "user": {"token": "t"}}],
                "contexts": [{"name": "x", "context": {"cluster": "c", "user": "u"}}],
                "current-context": "x",
            }
        )
    )
    result = CliRunner().invoke(
        cli, ["run", "--kubeconfig", str(kubeconfig), "--webhook-cert-dir", str(tmp_path / "certs")]
    )
    assert result.exit_code == 1
    assert f"{tmp_path / 'certs' / 'tls.crt'} does not exist (run with --webhook-port 0" in result.output


def test_bind_addresses_as_controller_runtime_reads_them() -> None:
    assert parse_bind_address(":9440", "--health-addr") == ("0.0.0.0", 9440)
    assert parse_bind_address("localhost:8080", "--metrics-bind-addr") == ("localhost", 8080)
    assert parse_bind_address("[::1]:8080", "--metrics-bind-addr") == ("::1", 8080)
    assert parse_bind_address("0", "--metrics-bind-addr") is None
    with pytest.raises(BindAddressError):
        parse_bind_address("8080", "--metrics-bind-addr")


async def test_readyz_names_the_checks_that_fail_and_metrics_are_prometheus_text() -> None:
    synced = False
    endpoints = Endpoints(
        Metrics(),
        ("127.0.0.1", 0),
        ("127.0.0.1", 0),
        {"informer-sync": lambda: None if synced else "the caches have not listed everything yet"},
    )
    await endpoints.start()
    health, metrics = endpoints.ports["health"], endpoints.ports["metrics"]
    try:
        async with aiohttp.ClientSession() as session:
            async with session.get(f"http://127.0.0.1:{health}/healthz") as answer:
                assert (answer.status, await answer.text()) == (200, "ok")
            async with session.get(f"http://127.0.0.1:{health}/readyz") as answer:
                assert answer.status == 500
                assert "[-]informer-sync failed: the caches have not listed everything yet" in await answer.text()
            synced = True
            async with session.get(f"http://127.0.0.1:{health}/readyz") as answer:
                assert (answer.status, await answer.text()) == (200, "ok")
            async with session.get(f"http://127.0.0.1:{health}/readyz?verbose") as answer:
                assert await answer.text() == "[+]informer-sync ok\nreadyz check passed\n"
            async with session.get(f"http://127.0.0.1:{metrics}/metrics") as answer:
                assert answer.headers["Content-Type"].startswith("text/plain; version=0.0.4")
                assert "# TYPE process_resident_memory_bytes gauge" in await answer.text()
    finally:
        await endpoints.stop()


def test_webhook_certs_for_the_service_and_how_to_install_them(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["webhook-certs", "--dir", str(tmp_path)])
    assert result.exit_code == 0, result.output
    certificate = x509.load_pem_x509_certificate((tmp_path / "tls.crt").read_bytes())
    names = certificate.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName
    )
    assert names == [
        "clusterclass-webhook-service.clusterclass-system.svc",
        "clusterclass-webhook-service.clusterclass-system.svc.cluster.local",
    ]
    lines = result.output.splitlines()
    assert (
        f"  kubectl -n clusterclass-system create secret tls clusterclass-webhook-service-cert "
        f"--cert={tmp_path / 'tls.crt'} --key={tmp_path / 'tls.key'}"
    ) in lines
    patches = [shlex.split(line)[-1] for line in lines if "kubectl patch" in line and "webhookconfiguration" in line]
    assert len(patches) == 2
    for patch in patches:
        operations = json.loads(patch)
        assert len(operations) == 3  # one per webhook of the configuration
        assert {base64.b64decode(op["value"]) for op in operations} == {(tmp_path / "ca.crt").read_bytes()}
    # and the CA of each Cluster API CRD's conversion webhook (config/crd)
    crds = [shlex.split(line) for line in lines if line.startswith("  kubectl patch crd ")]
    assert {words[3] for words in crds} >= {"clusters.cluster.x-k8s.io", "machinepools.cluster.x-k8s.io"}
    for words in crds:
        (operation,) = json.loads(words[-1])
        assert operation["path"] == "/spec/conversion/webhook/clientConfig/caBundle"
        assert base64.b64decode(operation["value"]) == (tmp_path / "ca.crt").read_bytes()


def test_webhook_certs_for_a_controller_outside_the_cluster(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["webhook-certs", "--dir", str(tmp_path), "--url", "https://127.0.0.1:9443"])
    assert result.exit_code == 0, result.output
    documents = list(yaml.safe_load_all(result.stdout))
    assert [d["kind"] for d in documents] == ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]
    urls = [w["clientConfig"]["url"] for d in documents for w in d["webhooks"]]
    assert "https://127.0.0.1:9443/validate-cluster-x-k8s-io-v1beta2-machinepool" in urls  # upstream v1.14's path
    bad = CliRunner().invoke(cli, ["webhook-certs", "--dir", str(tmp_path), "--url", "http://x:1"])
    assert bad.exit_code == 2 and "'http://x:1' is not https://HOST:PORT" in bad.output
