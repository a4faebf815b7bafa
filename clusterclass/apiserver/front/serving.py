"""Running the front: TLS with a fresh CA, a kubeconfig for it, and starting and stopping the server.

What ``clusterclass apiserver`` and the tests need is what envtest gives a real kube-apiserver: a
CA made for this run (:class:`~clusterclass.kube.certs.CertificateAuthority`), a serving
certificate for ``127.0.0.1`` and ``localhost``, and a client certificate (user
``clusterclass-admin``, group ``system:masters``) written with the CA into a kubeconfig, so kubectl
and the Python client trust the server and the server knows them. The server asks every client for
a certificate and verifies it against the CA (anonymous requests get 401 from :mod:`.app`).

Two ways to run it:

- :func:`start` on the caller's event loop, returning a :class:`RunningServer` to ``await stop()``
  (the CLI does this, with signal handlers);
- :func:`serve_in_thread`, which runs it on its own loop in a daemon thread and returns a
  :class:`ThreadedServer` with ``url``, ``kubeconfig_path`` and ``stop()``: for tests and for the
  contract suite's ``http-embedded`` backend.

Stopping closes every open watch first (clients see the end of their streams), waits briefly for
requests in flight, then closes the listener.
"""

from __future__ import annotations

import asyncio
import base64
import io
import os
import socket
import ssl
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from aiohttp import web

from clusterclass.apiserver.front.app import make_app
from clusterclass.apiserver.store import MemoryStore
from clusterclass.kube.certs import CertificateAuthority, KeyPair
from clusterclass.kube.http.tls import load_key_pair, ssl_context
from clusterclass.privatefiles import write_private
from clusterclass.yamlio import dump_yaml

DEFAULT_HOST = "127.0.0.1"
DEFAULT_USER = "clusterclass-admin"
DEFAULT_GROUPS = ("system:masters",)
CONTEXT_NAME = "clusterclass"
#: seconds requests in flight get to finish when the server stops
SHUTDOWN_TIMEOUT = 5.0


@dataclass(frozen=True)
class Credentials:
    """The CA, the serving key pair and one client key pair of a server run."""

    ca_pem: bytes
    server: KeyPair
    client: KeyPair
    user: str

    @classmethod
    def generate(cls, *, user: str = DEFAULT_USER, groups: tuple[str, ...] = DEFAULT_GROUPS) -> Credentials:
        ca = CertificateAuthority("clusterclass-apiserver-ca")
        return cls(ca.cert_pem, ca.issue_server(["localhost", "127.0.0.1"]), ca.issue_client(user, list(groups)), user)


def server_ssl_context(credentials: Credentials) -> ssl.SSLContext:
    """TLS for the server: its certificate, and client certificates verified against the CA when presented."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    load_key_pair(context, credentials.server.cert_pem, credentials.server.key_pem)
    context.load_verify_locations(cadata=credentials.ca_pem.decode())
    context.verify_mode = ssl.CERT_OPTIONAL
    return context


def client_ssl_context(credentials: Credentials, *, with_certificate: bool = True) -> ssl.SSLContext:
    """TLS for a client of the server (tests): trust the CA, present the client certificate."""
    client = credentials.client if with_certificate else None
    return ssl_context(
        ca_data=credentials.ca_pem,
        insecure=False,
        client_cert=client.cert_pem if client else None,
        client_key=client.key_pem if client else None,
    )


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()


def kubeconfig(url: str, credentials: Credentials, *, name: str = CONTEXT_NAME) -> dict[str, Any]:
    """A kubeconfig with the CA and the client key pair inline, its one context current."""
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {"name": name, "cluster": {"server": url, "certificate-authority-data": _b64(credentials.ca_pem)}}
        ],
        "users": [
            {
                "name": credentials.user,
                "user": {
                    "client-certificate-data": _b64(credentials.client.cert_pem),
                    "client-key-data": _b64(credentials.client.key_pem),
                },
            }
        ],
        "contexts": [{"name": name, "context": {"cluster": name, "user": credentials.user, "namespace": "default"}}],
        "current-context": name,
        "preferences": {},
    }


def write_kubeconfig(path: str | os.PathLike[str], document: dict[str, Any]) -> Path:
    """Write ``document`` to ``path`` readable by the owner only (it holds a private key); the path written."""
    text = io.StringIO()
    dump_yaml(document, text)
    return write_private(path, text.getvalue().encode())


@dataclass
class RunningServer:
    """A front serving on the current event loop."""

    url: str
    port: int
    credentials: Credentials
    runner: web.AppRunner

    async def stop(self) -> None:
        """Close every watch, let requests in flight finish (briefly), close the listener."""
        await self.runner.cleanup()


async def start(
    store: MemoryStore,
    *,
    host: str = DEFAULT_HOST,
    port: int = 0,
    credentials: Credentials | None = None,
    require_client_cert: bool = True,
    sock: socket.socket | None = None,
) -> RunningServer:
    """Serve ``store`` over TLS on ``host:port`` (``0``: a free port) on the running loop.

    ``sock``, a socket already bound (to hold a port before anything answers on it), is listened
    on instead of ``host:port``.
    """
    credentials = credentials or Credentials.generate()
    app = make_app(store, require_client_cert=require_client_cert)
    runner = web.AppRunner(app, handler_cancellation=True, shutdown_timeout=SHUTDOWN_TIMEOUT, access_log=None)
    await runner.setup()
    site: web.BaseSite
    if sock is not None:
        host = sock.getsockname()[0]
        site = web.SockSite(runner, sock, ssl_context=server_ssl_context(credentials))
    else:
        site = web.TCPSite(runner, host, port, ssl_context=server_ssl_context(credentials))
    try:
        await site.start()
    except BaseException:
        await runner.cleanup()
        raise
    bound = runner.addresses[0][1]
    return RunningServer(f"https://{host}:{bound}", bound, credentials, runner)


@dataclass
class ThreadedServer:
    """A front running on its own event loop in a daemon thread; ``stop()`` ends it (idempotent)."""

    url: str
    port: int
    kubeconfig_path: Path
    credentials: Credentials
    _loop: asyncio.AbstractEventLoop
    _thread: threading.Thread
    _server: RunningServer

    def stop(self, timeout: float = 30.0) -> None:
        if not self._thread.is_alive():
            return
        future = asyncio.run_coroutine_threadsafe(self._server.stop(), self._loop)
        try:
            future.result(timeout)
        finally:
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(timeout)

    def __enter__(self) -> ThreadedServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def serve_in_thread(
    store: MemoryStore,
    *,
    kubeconfig_path: str | os.PathLike[str] | None = None,
    host: str = DEFAULT_HOST,
    port: int = 0,
    credentials: Credentials | None = None,
) -> ThreadedServer:
    """Serve ``store`` in a background thread and write a kubeconfig for it.

    ``kubeconfig_path`` defaults to a new file in a fresh temporary directory. Returns once the
    server accepts connections.
    """
    loop = asyncio.new_event_loop()
    started: dict[str, Any] = {}
    ready = threading.Event()

    def run() -> None:
        asyncio.set_event_loop(loop)
        try:
            started["server"] = loop.run_until_complete(start(store, host=host, port=port, credentials=credentials))
        except BaseException as err:  # reported to the caller below
            started["error"] = err
            ready.set()
            loop.close()
            return
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.close()

    thread = threading.Thread(target=run, name="clusterclass-apiserver", daemon=True)
    thread.start()
    ready.wait()
    if "error" in started:
        raise started["error"]
    server: RunningServer = started["server"]
    if kubeconfig_path is None:
        kubeconfig_path = Path(tempfile.mkdtemp(prefix="clusterclass-apiserver-"), "kubeconfig")
    path = write_kubeconfig(kubeconfig_path, kubeconfig(server.url, server.credentials))
    return ThreadedServer(server.url, server.port, path, server.credentials, loop, thread, server)
