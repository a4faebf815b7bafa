"""A real kube-apiserver and etcd for tests, started the way controller-runtime's envtest starts them.

The contract suite holds the memory store and the embedded HTTP front to what a real kube-apiserver
does, so the truth has to be a real one: the binaries ``scripts/build-apiserver.sh`` builds from the
official Go modules. This module copies envtest's behaviour (``shared/design/real-apiserver.md`` §1)
closely enough that what passes here passes under envtest:

- binaries come from ``TEST_ASSET_KUBE_APISERVER`` / ``TEST_ASSET_ETCD`` (``TEST_ASSET_KUBECTL`` for
  :func:`find_binary` ``("kubectl")``), then ``$KUBEBUILDER_ASSETS``, then the build script's own
  cache directory (its version defaults are read from the script, so the two never drift), then
  ``/usr/local/kubebuilder/bin``;
- a fresh serving CA, client CA and service-account signing pair per start (``clusterclass.kube.certs``);
- etcd on free loopback ports with ``--unsafe-no-fsync``, then kube-apiserver with envtest's flags;
- a kubeconfig for user ``admin`` in group ``system:masters`` (which bypasses RBAC), written as the
  embedded front writes its own (``clusterclass.apiserver.front.serving``);
- ready when ``/readyz`` answers and namespace ``default`` exists; then the Cluster API CRDs the
  package bundles are installed and discovery lists every served version of them. Those serving several
  versions get their conversion webhook as ``config/crd`` installs it, here by URL: the harness serves
  ``clusterclass.webhooks.conversion`` over TLS on a loopback port in a thread of its own (the bundled CRDs'
  contract labels answer its reference versions), so a real kube-apiserver converts as the embedded one does.

Setup talks to the servers with the standard library only, so the harness does not depend on the
client it is used to test. Every process runs in its own process group and is stopped with SIGTERM,
then SIGKILL; temporary directories are removed; an ``atexit`` hook covers crashed runs.

By default nothing runs kube-controller-manager: no garbage collector, no namespace controller, as under
envtest. Tests use a fresh namespace each and never wait for one to go away. ``controller_manager=True``
also starts kube-controller-manager with only those two controllers (``TEST_ASSET_KUBE_CONTROLLER_MANAGER``,
or beside the other binaries), for tests that delete objects other objects depend on, as a real
management cluster would collect them: asynchronously, after the delete has answered.
"""

from __future__ import annotations

import asyncio
import atexit
import base64
import contextlib
import http.client
import json
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from clusterclass.api.contracts import CrdContracts
from clusterclass.api.conversion import convertible
from clusterclass.api.objects import Obj
from clusterclass.apiserver.crd.definitions import load_bundled_crds
from clusterclass.apiserver.front.serving import Credentials, client_ssl_context, kubeconfig, write_kubeconfig
from clusterclass.kube.certs import CertificateAuthority, signing_key_pair
from clusterclass.kube.client import Client
from clusterclass.webhooks import conversion
from clusterclass.webhooks.certificates import serving_certificate

REPO = Path(__file__).resolve().parents[2]


class ConversionWebhook:
    """``clusterclass.webhooks.conversion`` served over TLS on a loopback port, from a thread with its own loop."""

    def __init__(self) -> None:
        self.certificate = serving_certificate(["127.0.0.1"])
        self.port = 0
        self._loop = asyncio.new_event_loop()
        self._runner: web.AppRunner | None = None
        self._thread = threading.Thread(target=self._loop.run_forever, name="conversion-webhook", daemon=True)

    @classmethod
    def start(cls) -> ConversionWebhook:
        webhook = cls()
        webhook._thread.start()
        asyncio.run_coroutine_threadsafe(webhook._serve(), webhook._loop).result(timeout=30)
        return webhook

    async def _serve(self) -> None:
        contracts = CrdContracts(load_bundled_crds())
        app = web.Application(client_max_size=8 * 1024 * 1024)
        app.router.add_post(conversion.PATH, conversion.conversion_endpoint(lambda: contracts))
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        with tempfile.TemporaryDirectory() as directory:
            self.certificate.write(Path(directory))
            context.load_cert_chain(Path(directory) / "tls.crt", Path(directory) / "tls.key")
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=context)
        await site.start()
        server = site._server
        assert server is not None
        self.port = int(server.sockets[0].getsockname()[1])  # type: ignore[attr-defined]

    def installed(self, crd: Obj) -> Obj:
        """``crd`` with this webhook as its conversion, when it serves more than one version of a known kind."""
        spec = crd["spec"]
        served = [v for v in spec.get("versions") or [] if v.get("served")]
        if len(served) < 2 or not convertible(spec.get("group", ""), spec["names"]["kind"]):
            return crd
        conversion_spec = {
            "strategy": "Webhook",
            "webhook": {
                "conversionReviewVersions": ["v1"],
                "clientConfig": {
                    "url": f"https://127.0.0.1:{self.port}{conversion.PATH}",
                    "caBundle": self.certificate.ca_bundle,
                },
            },
        }
        return {**crd, "spec": {**spec, "conversion": conversion_spec}}

    def stop(self) -> None:
        async def cleanup() -> None:
            if self._runner is not None:
                await self._runner.cleanup()

        with contextlib.suppress(Exception):
            asyncio.run_coroutine_threadsafe(cleanup(), self._loop).result(timeout=10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(timeout=10)


BUILD_SCRIPT = REPO / "scripts" / "build-apiserver.sh"

#: envtest's default start and stop timeouts are 20s each; two shared cores need more to start
START_TIMEOUT = 120.0
STOP_TIMEOUT = 20.0
START_ATTEMPTS = 3

#: resources whose watch cache is off, so that their watches read etcd directly and a compacted
#: resourceVersion answers 410 Gone (the watch cache keeps its own window and would hide compaction)
UNCACHED_RESOURCES = ("configmaps",)

#: every request once, when its response is complete, without bodies: who asked (user, user agent), what (verb,
#: resource, namespace, name) and the answer's code; watches are logged when they end
AUDIT_POLICY = {
    "apiVersion": "audit.k8s.io/v1",
    "kind": "Policy",
    "omitStages": ["RequestReceived", "ResponseStarted", "Panic"],
    "rules": [{"level": "Metadata"}],
}

#: an etcd key outside kube-apiserver's ``/registry`` prefix, written to move etcd's revision on
COMPACTION_KEY = b"/clusterclass-test/compaction"


class BinariesMissing(Exception):
    """kube-apiserver or etcd is not where the harness looks; the message says where it looked."""


class StartError(Exception):
    """etcd or kube-apiserver did not come up; the message carries the end of its log."""


@dataclass(frozen=True)
class Binaries:
    kube_apiserver: Path
    etcd: Path
    #: only the servers started with ``controller_manager=True`` need it
    kube_controller_manager: Path | None = None


def _script_default(variable: str, fallback: str) -> str:
    """The default the build script gives ``variable`` (``K8S_VERSION="${K8S_VERSION:-v1.37.2}"``)."""
    try:
        text = BUILD_SCRIPT.read_text()
    except OSError:
        return fallback
    found = re.search(rf'^{variable}="\$\{{{variable}:-([^}}]+)\}}"', text, re.MULTILINE)
    return found.group(1) if found else fallback


def default_assets_dir() -> Path:
    """The directory ``scripts/build-apiserver.sh`` fills with symlinks to the binaries it built."""
    cache = Path(os.environ.get("CLUSTERCLASS_CACHE") or Path.home() / ".cache" / "clusterclass")
    k8s = os.environ.get("K8S_VERSION") or _script_default("K8S_VERSION", "v1.37.2")
    etcd = os.environ.get("ETCD_VERSION") or _script_default("ETCD_VERSION", "v3.6.16")
    return cache / "bin" / f"assets-{k8s}-etcd-{etcd}"


def _asset_env(name: str) -> str:
    """envtest's variable for one binary: ``kube-apiserver`` → ``TEST_ASSET_KUBE_APISERVER``."""
    return "TEST_ASSET_" + re.sub(r"[^A-Z0-9]", "_", name.upper())


def find_binary(name: str) -> tuple[Path | None, list[str]]:
    """Where ``name`` is, in envtest's order (plus the build script's cache), and every place looked at.

    Unlike envtest, a path that does not exist is skipped, so a missing build skips tests instead of
    failing them outside CI; a ``TEST_ASSET_*`` variable, being explicit, is taken as it is.
    """
    explicit = os.environ.get(_asset_env(name))
    if explicit:
        return Path(explicit), [f"${_asset_env(name)}={explicit}"]
    dirs: list[Path] = []
    if os.environ.get("KUBEBUILDER_ASSETS"):
        dirs.append(Path(os.environ["KUBEBUILDER_ASSETS"]))
    dirs += [default_assets_dir(), Path("/usr/local/kubebuilder/bin")]
    looked = [str(d / name) for d in dirs]
    for directory in dirs:
        candidate = directory / name
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return candidate, looked
    return None, looked


def find_binaries() -> Binaries:
    """kube-apiserver and etcd; :class:`BinariesMissing` names what is absent."""
    apiserver, looked_a = find_binary("kube-apiserver")
    etcd, looked_e = find_binary("etcd")
    if apiserver is None or etcd is None:
        looked = looked_a if apiserver is None else looked_e
        missing = "kube-apiserver" if apiserver is None else "etcd"
        raise BinariesMissing(
            f"{missing} not found (looked at {', '.join(looked)}); build it with `bash scripts/build-apiserver.sh` "
            "or point KUBEBUILDER_ASSETS / TEST_ASSET_* at it"
        )
    controller_manager, _ = find_binary("kube-controller-manager")
    return Binaries(apiserver, etcd, controller_manager)


def require_controller_manager(binaries: Binaries) -> Path:
    """kube-controller-manager among ``binaries``; :class:`BinariesMissing` says where it was looked for."""
    if binaries.kube_controller_manager is None:
        _, looked = find_binary("kube-controller-manager")
        raise BinariesMissing(
            f"kube-controller-manager not found (looked at {', '.join(looked)}); build it with "
            "`bash scripts/build-apiserver.sh` or point TEST_ASSET_KUBE_CONTROLLER_MANAGER at it"
        )
    return binaries.kube_controller_manager


def free_port() -> int:
    """A loopback port nobody listens on right now (bind port 0, read it, close), as envtest picks them."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def local_get(port: int, path: str) -> tuple[int, str]:
    """GET a manager's plain-HTTP health or metrics endpoint on loopback: status and body (0 when nothing answers)."""
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=5) as answer:
            return answer.status, answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, error.read().decode()
    except OSError:
        return 0, ""


def _dying_with_parent(argv: list[str]) -> list[str]:
    """``argv`` run so that it is killed when the thread that started it dies, where ``setpriv`` can arrange it.

    ``atexit`` stops the servers when Python exits normally; a test run killed outright (SIGKILL, or
    pytest-timeout's ``os._exit``) runs no ``atexit``, and would leave etcd and kube-apiserver behind.
    ``setpriv --pdeathsig`` sets the kernel's parent-death signal, then execs the binary (same pid).
    """
    setpriv = shutil.which("setpriv")
    return [setpriv, "--pdeathsig", "KILL", "--", *argv] if setpriv else argv


class Process:
    """One child in its own process group, its output in a log file."""

    def __init__(
        self, name: str, argv: list[str], log_path: Path, *, env: dict[str, str] | None = None, append: bool = False
    ) -> None:
        self.name = name
        self.log_path = log_path
        self._log = log_path.open("ab" if append else "wb")
        try:
            self.popen = subprocess.Popen(
                _dying_with_parent(argv),
                stdin=subprocess.DEVNULL,
                stdout=self._log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
        except OSError as error:
            self._log.close()
            raise StartError(f"cannot run {argv[0]}: {error}") from error

    def exited(self) -> bool:
        return self.popen.poll() is not None

    def tail(self, lines: int = 30) -> str:
        try:
            text = self.log_path.read_text(errors="replace")
        except OSError:
            return ""
        return "\n".join(text.splitlines()[-lines:])

    def stop(self, timeout: float = STOP_TIMEOUT) -> None:
        """SIGTERM the process group, wait up to ``timeout``, then SIGKILL it."""
        if self.popen.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(self.popen.pid, signal.SIGTERM)
            try:
                self.popen.wait(timeout)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.popen.pid, signal.SIGKILL)
                self.popen.wait()
        self._log.close()


class RealApiServer:
    """An etcd and a kube-apiserver on loopback, started by :meth:`start` and removed by :meth:`stop`.

    After :meth:`start`: :attr:`server` is the ``https://127.0.0.1:<port>`` URL, :attr:`kubeconfig`
    a kubeconfig file for user ``admin`` (group ``system:masters``), :meth:`client` a
    :class:`~clusterclass.kube.client.Client` for it. :meth:`request` is a small synchronous admin
    request for setup work; :meth:`compact` makes every resourceVersion before now too old to watch
    from (for resources in :data:`UNCACHED_RESOURCES`).
    """

    def __init__(
        self,
        binaries: Binaries | None = None,
        *,
        authorization_modes: str = "RBAC",
        controller_manager: bool = False,
        bundled_crds: bool = True,
        audit: bool = False,
    ) -> None:
        self.binaries = binaries or find_binaries()
        #: whether :meth:`start` installs the package's Cluster API CRDs (off for a test installing another set, such
        #: as an upstream release's own)
        self.bundled_crds = bundled_crds
        #: whether every request is written to :attr:`audit_log` (kube-apiserver's audit log, JSON lines at the
        #: ``Metadata`` level: verb, resource, user, user agent, response code)
        self.audit = audit
        #: ``--authorization-mode`` (envtest's RBAC; ``Node,RBAC`` as a real control plane runs it)
        self.authorization_modes = authorization_modes
        #: whether kube-controller-manager runs too (its garbage collector and namespace controller)
        self.controller_manager = controller_manager
        if controller_manager:
            require_controller_manager(self.binaries)
        self._tmp: Path | None = None
        self._processes: list[Process] = []
        self._ssl: ssl.SSLContext | None = None
        self.port = 0
        self.etcd_port = 0
        self.kubeconfig = Path()
        self.crds: list[dict[str, Any]] = []
        self.conversion_webhook: ConversionWebhook | None = None

    # -- life cycle -----------------------------------------------------------------------------

    @property
    def server(self) -> str:
        return f"https://127.0.0.1:{self.port}"

    @property
    def etcd_url(self) -> str:
        return f"http://127.0.0.1:{self.etcd_port}"

    @property
    def audit_log(self) -> Path:
        """kube-apiserver's audit log (with ``audit=True``): one JSON event per request, when it completed."""
        return self.workdir / "audit.log"

    @property
    def workdir(self) -> Path:
        """The temporary directory with certificates, the kubeconfig, etcd's data and both logs."""
        assert self._tmp is not None, "not started"
        return self._tmp

    def start(self) -> RealApiServer:
        """Start etcd and kube-apiserver, retried on fresh ports as envtest retries; install the CRDs."""
        atexit.register(self.stop)
        try:
            self._start_processes()
            self._wait_for_default_namespace()
            self.conversion_webhook = ConversionWebhook.start()
            if self.bundled_crds:
                self.install_crds([self.conversion_webhook.installed(crd) for crd in load_bundled_crds()])
            if self.controller_manager:
                self._start_controller_manager()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop kube-apiserver, then etcd; remove the temporary directory. Safe to call twice."""
        self._stop_processes()
        if self.conversion_webhook is not None:
            self.conversion_webhook.stop()
            self.conversion_webhook = None
        if self._tmp is not None:
            shutil.rmtree(self._tmp, ignore_errors=True)
            self._tmp = None
        atexit.unregister(self.stop)

    def _stop_processes(self) -> None:
        for process in reversed(self._processes):
            process.stop()
        self._processes.clear()

    def _start_processes(self) -> None:
        failure: StartError | None = None
        for _ in range(START_ATTEMPTS):
            try:
                self._start_once()
                return
            except StartError as error:
                failure = error
                self._stop_processes()
        raise StartError(f"control plane did not start after {START_ATTEMPTS} attempts: {failure}")

    def _start_once(self) -> None:
        if self._tmp is None:
            self._tmp = Path(tempfile.mkdtemp(prefix="k8s_test_framework_"))
        attempt = Path(tempfile.mkdtemp(prefix="attempt-", dir=self._tmp))
        self.etcd_port, peer_port, self.port = free_port(), free_port(), free_port()
        self._start_etcd(attempt, peer_port)
        self._start_apiserver(attempt)

    def _start_etcd(self, workdir: Path, peer_port: int) -> None:
        peer = f"http://127.0.0.1:{peer_port}"
        process = Process(
            "etcd",
            [
                str(self.binaries.etcd),
                f"--data-dir={workdir / 'etcd'}",
                f"--listen-client-urls={self.etcd_url}",
                f"--advertise-client-urls={self.etcd_url}",
                f"--listen-peer-urls={peer}",
                f"--initial-advertise-peer-urls={peer}",
                f"--initial-cluster=default={peer}",
                "--unsafe-no-fsync=true",
            ],
            workdir / "etcd.log",
        )
        self._processes.append(process)
        self._wait(process, self._etcd_healthy, "etcd /health")

    def _etcd_healthy(self) -> bool:
        status, body = self._etcd_call("GET", "/health")
        return status == 200 and isinstance(body, dict) and body.get("health") == "true"

    def _start_apiserver(self, workdir: Path) -> None:
        """kube-apiserver with envtest's flags, its serving pair from one CA and its client CA another."""
        serving_ca = CertificateAuthority("envtest-environment")
        client_ca = CertificateAuthority("envtest-client-ca")
        admin = Credentials(
            serving_ca.cert_pem,
            serving_ca.issue_server(["localhost", "127.0.0.1"]),
            client_ca.issue_client("admin", ["system:masters"]),
            user="admin",
        )
        signer = signing_key_pair()
        certs = _write_private(
            workdir / "certs",
            {
                "apiserver.crt": admin.server.cert_pem,
                "apiserver.key": admin.server.key_pem,
                "client-cert-auth-ca.crt": client_ca.cert_pem,
                "sa-signer.crt": signer.cert_pem,
                "sa-signer.key": signer.key_pem,
            },
        )
        args = [
            str(self.binaries.kube_apiserver),
            f"--etcd-servers={self.etcd_url}",
            f"--cert-dir={workdir / 'certs'}",
            f"--tls-cert-file={certs['apiserver.crt']}",
            f"--tls-private-key-file={certs['apiserver.key']}",
            f"--secure-port={self.port}",
            "--bind-address=127.0.0.1",
            "--service-cluster-ip-range=10.0.0.0/24",
            "--allow-privileged=true",
            "--disable-admission-plugins=ServiceAccount",
            f"--authorization-mode={self.authorization_modes}",
            f"--client-ca-file={certs['client-cert-auth-ca.crt']}",
            f"--service-account-issuer={self.server}/",
            f"--service-account-key-file={certs['sa-signer.crt']}",
            f"--service-account-signing-key-file={certs['sa-signer.key']}",
            "--watch-cache-sizes=" + ",".join(f"{resource}#0" for resource in UNCACHED_RESOURCES),
        ]
        if self.audit:
            policy = workdir / "audit-policy.yaml"
            policy.write_text(json.dumps(AUDIT_POLICY))
            args += [
                f"--audit-policy-file={policy}",
                f"--audit-log-path={self.audit_log}",
                "--audit-log-format=json",
                "--audit-log-mode=blocking",
                "--audit-log-maxsize=0",
            ]
        process = Process("kube-apiserver", args, workdir / "kube-apiserver.log")
        self._processes.append(process)
        self._ssl = client_ssl_context(admin)
        self._wait(process, lambda: self.request("GET", "/readyz")[0] == 200, "kube-apiserver /readyz")
        self.kubeconfig = write_kubeconfig(self.workdir / "kubeconfig", kubeconfig(self.server, admin, name="envtest"))

    def _start_controller_manager(self) -> None:
        """kube-controller-manager with the garbage collector and the namespace controller only, as ``admin``.

        Started after the CRDs are installed, so the collector watches their kinds from its first sync. Ready
        when its ``/healthz`` answers (an always-allowed path, so no delegated authentication is needed).
        """
        port = free_port()
        process = Process(
            "kube-controller-manager",
            [
                str(require_controller_manager(self.binaries)),
                f"--kubeconfig={self.kubeconfig}",
                f"--authentication-kubeconfig={self.kubeconfig}",
                f"--authorization-kubeconfig={self.kubeconfig}",
                "--controllers=garbagecollector,namespace",
                "--leader-elect=false",
                "--bind-address=127.0.0.1",
                f"--secure-port={port}",
                f"--cert-dir={self.workdir / 'kube-controller-manager'}",
            ],
            self.workdir / "kube-controller-manager.log",
        )
        self._processes.append(process)
        insecure = ssl.create_default_context()
        insecure.check_hostname = False
        insecure.verify_mode = ssl.CERT_NONE  # its self-signed serving certificate, on loopback

        def healthy() -> bool:
            connection = http.client.HTTPSConnection("127.0.0.1", port, context=insecure, timeout=5)
            return _exchange(connection, "GET", "/healthz", None)[0] == 200

        self._wait(process, healthy, "kube-controller-manager /healthz")

    def _wait(self, process: Process, ready: Callable[[], bool], what: str, timeout: float = START_TIMEOUT) -> None:
        """Poll ``ready`` until it holds; :class:`StartError` with the log's tail when the process dies or times out."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if process.exited():
                raise StartError(f"{process.name} exited with {process.popen.returncode}:\n{process.tail()}")
            with contextlib.suppress(OSError, http.client.HTTPException):
                if ready():
                    return
            time.sleep(0.1)
        raise StartError(f"{what} not ready after {timeout:.0f}s:\n{process.tail()}")

    def _wait_for_default_namespace(self, timeout: float = 30.0) -> None:
        deadline = time.monotonic() + timeout
        while self.request("GET", "/api/v1/namespaces/default")[0] != 200:
            if time.monotonic() > deadline:
                raise StartError("namespace default did not appear")
            time.sleep(0.05)

    # -- requests -------------------------------------------------------------------------------

    def request(self, method: str, path: str, body: Any = None, *, timeout: float = 30) -> tuple[int, Any]:
        """One request as ``admin``: the status code and the decoded JSON body (the text when it is not JSON)."""
        assert self._ssl is not None, "not started"
        connection = http.client.HTTPSConnection("127.0.0.1", self.port, context=self._ssl, timeout=timeout)
        return _exchange(connection, method, path, body)

    def _etcd_call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        connection = http.client.HTTPConnection("127.0.0.1", self.etcd_port, timeout=10)
        return _exchange(connection, method, path, body)

    def create_namespace(self, prefix: str = "test-") -> str:
        """A new namespace named ``prefix`` plus a random suffix (``generateName``); its name."""
        status, body = self.request("POST", "/api/v1/namespaces", {"metadata": {"generateName": prefix}})
        if status != 201:
            raise RuntimeError(f"creating a namespace answered {status}: {body}")
        return str(body["metadata"]["name"])

    def etcd_revision(self) -> int:
        """etcd's current revision, which is the newest resourceVersion kube-apiserver has written."""
        status, body = self._etcd_call("POST", "/v3/kv/range", {"key": _b64(b"/")})
        if status != 200:
            raise RuntimeError(f"etcd range answered {status}: {body}")
        return int(body["header"]["revision"])

    def compact(self) -> int:
        """Make every resourceVersion up to now too old to watch from (uncached resources answer 410 Gone).

        A watch from resourceVersion ``r`` reads etcd from revision ``r + 1`` and needs the revision
        before its first event, so compacting at the newest revision is not enough for the newest
        ``r``: two writes to a key outside ``/registry`` come first. Returns the compacted revision.
        """
        for _ in range(2):
            status, body = self._etcd_call("POST", "/v3/kv/put", {"key": _b64(COMPACTION_KEY), "value": _b64(b"x")})
            if status != 200:
                raise RuntimeError(f"etcd put answered {status}: {body}")
        revision = self.etcd_revision()
        status, body = self._etcd_call("POST", "/v3/kv/compaction", {"revision": str(revision), "physical": True})
        if status != 200:
            raise RuntimeError(f"etcd compaction answered {status}: {body}")
        return revision

    # -- CRDs -----------------------------------------------------------------------------------

    def install_crds(self, crds: list[Obj], timeout: float = 60.0) -> None:
        """Create (or replace) every CRD in ``crds``; wait until each is Established and in discovery."""
        base = "/apis/apiextensions.k8s.io/v1/customresourcedefinitions"
        for crd in crds:
            status, body = self.request("POST", base, crd)
            if status == 409:
                name = crd["metadata"]["name"]
                _, current = self.request("GET", f"{base}/{name}")
                version = current["metadata"]["resourceVersion"]
                replacement = {**crd, "metadata": {**crd["metadata"], "resourceVersion": version}}
                status, body = self.request("PUT", f"{base}/{name}", replacement)
            if status not in (200, 201):
                raise StartError(f"installing CRD {crd['metadata']['name']} answered {status}: {body}")
        deadline = time.monotonic() + timeout
        for crd in crds:
            while not self._crd_served(crd):
                if time.monotonic() > deadline:
                    raise StartError(f"CRD {crd['metadata']['name']} not served after {timeout:.0f}s")
                time.sleep(0.1)
        installed = {crd["metadata"]["name"]: crd for crd in self.crds}
        installed.update((crd["metadata"]["name"], crd) for crd in crds)
        self.crds = list(installed.values())

    def _crd_served(self, crd: dict[str, Any]) -> bool:
        """Established, and every served version lists the plural in discovery (envtest's WaitForCRDs)."""
        name, spec = crd["metadata"]["name"], crd["spec"]
        status, body = self.request("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
        conditions = (body.get("status") or {}).get("conditions") or [] if status == 200 else []
        if not any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions):
            return False
        for version in spec["versions"]:
            if not version.get("served"):
                continue
            status, body = self.request("GET", f"/apis/{spec['group']}/{version['name']}")
            if status != 200 or spec["names"]["plural"] not in {r.get("name") for r in body.get("resources", [])}:
                return False
        return True

    # -- identities -----------------------------------------------------------------------------

    def service_account_token(self, namespace: str, name: str, seconds: int = 3600) -> str:
        """A token of ServiceAccount ``namespace/name`` from the TokenRequest API (the SA must exist)."""
        status, body = self.request(
            "POST",
            f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
            {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": {"expirationSeconds": seconds}},
        )
        if status != 201:
            raise RuntimeError(f"TokenRequest for {namespace}/{name} answered {status}: {body}")
        return str(body["status"]["token"])

    def token_kubeconfig(self, path: Path, token: str, user: str) -> Path:
        """A kubeconfig at ``path`` for this server that authenticates with a bearer ``token``."""
        document = json.loads(json.dumps(_read_yaml(self.kubeconfig)))
        document["users"] = [{"name": user, "user": {"token": token}}]
        for context in document["contexts"]:
            context["context"]["user"] = user
        path.write_text(json.dumps(document))
        path.chmod(0o600)
        return path

    # -- clients --------------------------------------------------------------------------------

    def client(self) -> Client:
        """A new :class:`~clusterclass.kube.client.Client` for this server (the HTTP backend); close it after use.

        The HTTP session opens on first use, on the event loop that uses it, so one test's client
        never outlives that test's loop.
        """
        from clusterclass.kube.http import HttpClient

        return HttpClient.from_kubeconfig(self.kubeconfig)


def _read_yaml(path: Path) -> Any:
    import yaml

    return yaml.safe_load(path.read_text())


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def _write_private(directory: Path, files: dict[str, bytes]) -> dict[str, Path]:
    """Each of ``files`` written into ``directory``, readable by the owner only (they hold private keys)."""
    directory.mkdir(parents=True)
    paths = {}
    for name, content in files.items():
        path = directory / name
        path.touch(mode=0o600)
        path.write_bytes(content)
        paths[name] = path
    return paths


def _exchange(connection: http.client.HTTPConnection, method: str, path: str, body: Any) -> tuple[int, Any]:
    """Send ``body`` as JSON; the status and the JSON answer (its text when it is not JSON)."""
    try:
        payload = None if body is None else json.dumps(body)
        headers = {"Accept": "application/json"}
        if payload is not None:
            headers["Content-Type"] = "application/json"
        connection.request(method, path, body=payload, headers=headers)
        response = connection.getresponse()
        raw = response.read()
    finally:
        connection.close()
    try:
        return response.status, json.loads(raw)
    except ValueError:
        return response.status, raw.decode(errors="replace")
