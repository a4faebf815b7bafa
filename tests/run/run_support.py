"""What the tests of ``clusterclass run`` on a real kube-apiserver share: the installation, ``clusterclass run`` as a
subprocess, waits and the quick start.

:class:`Installed` is a kube-apiserver that authorizes with ``Node,RBAC`` and calls admission webhooks (its default
plugins), kube-controller-manager's garbage collector beside it, ``config/rbac`` (and ``config/sim``'s role) applied
for real, the token kubeconfig of the ServiceAccount ``clusterclass-system/clusterclass-manager`` and a webhook serving
pair (the ``installed`` fixture of ``conftest.py`` makes one per module). :class:`RunProcess` is one ``clusterclass
run`` as a subprocess under that token.
"""

from __future__ import annotations

import asyncio
import copy
import json
import signal
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml
from support.real_apiserver import RealApiServer, find_binary, free_port, local_get

from clusterclass.api.objects import Obj
from clusterclass.apiserver.crd.controllers import bundled_crds
from clusterclass.describe.collect import collect
from clusterclass.describe.readiness import pending
from clusterclass.kube.client import Client
from clusterclass.up.example import example_objects
from clusterclass.webhooks.certificates import ServingCertificate, serving_certificate
from clusterclass.webhooks.configuration import url_client_config, webhook_configurations
from clusterclass.webhooks.conversion import PATH as CONVERSION_PATH

REPO = Path(__file__).resolve().parents[2]
CONFIG = REPO / "config"
NAMESPACE = "clusterclass-system"
SERVICE_ACCOUNT = "clusterclass-manager"
LEASE = "controller-leader-election-clusterclass"
CAPI = "cluster.x-k8s.io/v1beta1"
#: fast leader election, in client-go's proportions
LEASE_SECONDS = 4.0
ELECTION_FLAGS = (
    "--leader-elect",
    f"--leader-election-namespace={NAMESPACE}",
    f"--leader-elect-lease-duration={LEASE_SECONDS:g}s",
    "--leader-elect-renew-deadline=3s",
    "--leader-elect-retry-period=500ms",
)
#: a guard, not a speed target
GUARD = 150.0

# --- the cluster and its installation ------------------------------------------------------------------


def kubectl(
    kubeconfig: Path, *args: str, stdin: str | None = None, check: bool = True
) -> subprocess.CompletedProcess[str]:
    binary, looked = find_binary("kubectl")
    assert binary is not None, f"kubectl not found (looked at {looked})"
    done = subprocess.run(
        [str(binary), "--kubeconfig", str(kubeconfig), *args], input=stdin, capture_output=True, text=True, timeout=120
    )
    if check and done.returncode != 0:
        raise AssertionError(f"kubectl {' '.join(args)} failed ({done.returncode}): {done.stderr}")
    return done


@dataclass
class Installed:
    """The apiserver with clusterclass's RBAC applied, the manager's token kubeconfig and a webhook serving pair."""

    api: RealApiServer
    manager_kubeconfig: Path
    certificate: ServingCertificate
    cert_dir: Path
    workdir: Path

    def register_webhooks(self, port: int, ca_bundle: str | None = None) -> None:
        """Point every webhook at ``https://127.0.0.1:<port>`` (a Service's endpoints moving to that replica),
        trusting ``ca_bundle`` (by default the CA of the serving pair ``clusterclass run`` is given)."""
        documents = webhook_configurations(
            url_client_config(f"https://127.0.0.1:{port}", ca_bundle or self.certificate.ca_bundle),
            mutating_name="clusterclass-mutating-webhook-configuration",
            validating_name="clusterclass-validating-webhook-configuration",
        )
        kubectl(
            self.api.kubeconfig,
            "apply",
            "-f",
            "-",
            stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": documents}),
        )

    def convert_through(self, url: str, ca_bundle: str) -> None:
        """Point the conversion webhook of every converting CRD at ``url`` (``clusterclass run``'s ``/convert``, or
        back at the harness's own)."""
        client_config = {"url": url, "caBundle": ca_bundle}
        for crd in converting_crds():
            patch = {"spec": {"conversion": {"webhook": {"clientConfig": client_config}}}}
            kubectl(self.api.kubeconfig, "patch", "crd", crd, "--type=merge", "-p", json.dumps(patch))

    def convert_through_the_harness(self) -> None:
        webhook = self.api.conversion_webhook
        assert webhook is not None
        self.convert_through(f"https://127.0.0.1:{webhook.port}{CONVERSION_PATH}", webhook.certificate.ca_bundle)


def install(binaries: Any, workdir: Path) -> Installed:
    """A kube-apiserver (with kube-controller-manager) and clusterclass's RBAC on it; stop it with ``api.stop()``."""
    api = RealApiServer(binaries, authorization_modes="Node,RBAC", controller_manager=True).start()
    try:
        kubectl(api.kubeconfig, "apply", "-f", str(CONFIG / "manager" / "namespace.yaml"))
        kubectl(api.kubeconfig, "apply", "-k", str(CONFIG / "rbac"))
        kubectl(
            api.kubeconfig,
            "apply",
            "-f",
            str(CONFIG / "sim" / "role.yaml"),
            "-f",
            str(CONFIG / "sim" / "role_binding.yaml"),
        )
        token = api.service_account_token(NAMESPACE, SERVICE_ACCOUNT)
        manager_kubeconfig = api.token_kubeconfig(workdir / "manager.kubeconfig", token, SERVICE_ACCOUNT)
        certificate = serving_certificate(["127.0.0.1"])
        cert_dir = workdir / "certs"
        certificate.write(cert_dir)
        return Installed(api, manager_kubeconfig, certificate, cert_dir, workdir)
    except BaseException:
        api.stop()
        raise


# --- clusterclass run as a subprocess ------------------------------------------------------------------------


class RunProcess:
    """One ``clusterclass run`` subprocess with its own webhook, metrics and health ports, logging to a file.

    ``ports`` (webhook, metrics, health) are a killed process's, for the one that replaces it; by default free ones.
    """

    def __init__(self, installed: Installed, name: str, *flags: str, ports: tuple[int, int, int] | None = None) -> None:
        self.webhook_port, self.metrics_port, self.health_port = ports or (free_port(), free_port(), free_port())
        self.log_path = installed.workdir / f"{name}.log"
        argv = [
            sys.executable,
            "-m",
            "clusterclass.cli.main",
            "run",
            f"--kubeconfig={installed.manager_kubeconfig}",
            f"--webhook-port={self.webhook_port}",
            f"--webhook-cert-dir={installed.cert_dir}",
            f"--metrics-bind-addr=127.0.0.1:{self.metrics_port}",
            f"--health-addr=127.0.0.1:{self.health_port}",
            *flags,
        ]
        self._log = self.log_path.open("wb")
        self.popen = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT, cwd=installed.workdir)

    @property
    def ports(self) -> tuple[int, int, int]:
        return self.webhook_port, self.metrics_port, self.health_port

    def ready(self) -> bool:
        return local_get(self.health_port, "/readyz")[0] == 200

    def metric(self, metric: str, /, **labels: str) -> float:
        """One sample of /metrics (0 when absent)."""
        _, text = local_get(self.metrics_port, "/metrics")
        wanted = ",".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
        for line in text.splitlines():
            if line.startswith(f"{metric}{{") or line.startswith(f"{metric} "):
                series, value = line.rsplit(" ", 1)
                found = ",".join(sorted(series[len(metric) + 1 : -1].split(","))) if "{" in series else ""
                if found == wanted:
                    return float(value)
        return 0.0

    def leading(self) -> bool:
        return self.metric("leader_election_master_status", name=LEASE) == 1.0

    def reconciled(self) -> float:
        return self.metric("controller_runtime_reconcile_total", controller="topology/cluster", result="success")

    def log(self) -> str:
        return self.log_path.read_text(errors="replace")

    def terminate(self, timeout: float = 60) -> int:
        self.popen.send_signal(signal.SIGTERM)
        code = self.popen.wait(timeout)
        self._log.close()
        return code

    def kill(self) -> None:
        self.popen.kill()
        self.popen.wait(30)
        self._log.close()

    def stop(self) -> None:
        if self.popen.poll() is None:
            self.kill()


def wait(check: Any, what: str, guard: float = GUARD, process: RunProcess | None = None) -> None:
    deadline = time.monotonic() + guard
    while time.monotonic() < deadline:
        if check():
            return
        if process is not None and process.popen.poll() is not None:
            raise AssertionError(
                f"clusterclass run exited ({process.popen.returncode}) waiting for {what}:\n{process.log()[-4000:]}"
            )
        time.sleep(0.2)
    tail = f"\n{process.log()[-4000:]}" if process is not None else ""
    raise AssertionError(f"timed out after {guard:g}s waiting for {what}{tail}")


async def async_wait(check: Any, what: str, guard: float = GUARD) -> None:
    deadline = time.monotonic() + guard
    while time.monotonic() < deadline:
        if await check():
            return
        await asyncio.sleep(0.2)
    raise AssertionError(f"timed out after {guard:g}s waiting for {what}")


def wait_as_admin(installed: Installed, check: Callable[[Client], Awaitable[bool]], what: str) -> None:
    """:func:`async_wait` for ``check`` on a client of the admin, from synchronous test code."""

    async def waiting() -> None:
        client = installed.api.client()
        try:
            await async_wait(lambda: check(client), what)
        finally:
            await client.close()

    asyncio.run(waiting())


def converting_crds() -> list[str]:
    """The names of the bundled CRDs that convert through a webhook."""
    return sorted(
        str(crd["metadata"]["name"])
        for crd in bundled_crds()
        if (crd["spec"].get("conversion") or {}).get("strategy") == "Webhook"
    )


def quick_start(namespace: str = "default") -> list[Obj]:
    objects = copy.deepcopy(example_objects())
    for obj in objects:
        obj["metadata"]["namespace"] = namespace
    return objects


def as_yaml(objects: list[Obj]) -> str:
    return "---\n".join(yaml.safe_dump(o) for o in objects)


async def cluster_ready(client: Client, namespace: str, name: str = "demo") -> bool:
    return not pending(await collect(client, namespace=namespace, name=name))


def lease_holder(installed: Installed) -> str:
    done = kubectl(installed.api.kubeconfig, "-n", NAMESPACE, "get", "lease", LEASE, "-o", "json")
    return str(json.loads(done.stdout)["spec"].get("holderIdentity") or "")
