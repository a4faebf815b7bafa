"""Serving over TLS: the kubeconfig, client-certificate authentication, and a clean stop."""

from __future__ import annotations

import asyncio
import base64
import dataclasses
import json
import ssl
import stat
from pathlib import Path

import aiohttp
import pytest
import yaml

from clusterclass.apiserver.front import ThreadedServer, serve_in_thread
from clusterclass.apiserver.front.serving import Credentials, client_ssl_context
from clusterclass.apiserver.store import MemoryStore


def test_kubeconfig_holds_the_ca_and_a_client_certificate(served: ThreadedServer) -> None:
    path = served.kubeconfig_path
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    document = yaml.safe_load(path.read_text())
    [cluster] = document["clusters"]
    [user] = document["users"]
    assert cluster["cluster"]["server"] == served.url == f"https://127.0.0.1:{served.port}"
    assert base64.b64decode(cluster["cluster"]["certificate-authority-data"]) == served.credentials.ca_pem
    assert base64.b64decode(user["user"]["client-certificate-data"]) == served.credentials.client.cert_pem
    assert document["current-context"] == "clusterclass"
    assert document["contexts"][0]["context"]["namespace"] == "default"


async def _get(url: str, context: ssl.SSLContext) -> tuple[int, dict[str, object] | str]:
    async with aiohttp.ClientSession() as session, session.get(url, ssl=context) as response:
        text = await response.text()
        return response.status, json.loads(text) if response.content_type == "application/json" else text


async def test_requests_without_a_client_certificate_are_unauthorized(served: ThreadedServer) -> None:
    anonymous = client_ssl_context(served.credentials, with_certificate=False)
    status, body = await _get(f"{served.url}/api/v1/namespaces", anonymous)
    assert status == 401
    assert body == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "Unauthorized",
        "reason": "Unauthorized",
        "code": 401,
    }
    assert await _get(f"{served.url}/healthz", anonymous) == (200, "ok")
    authenticated = client_ssl_context(served.credentials)
    status, namespaces = await _get(f"{served.url}/api/v1/namespaces", authenticated)
    assert status == 200 and isinstance(namespaces, dict) and namespaces["kind"] == "NamespaceList"


async def test_a_certificate_from_another_ca_is_refused(served: ThreadedServer) -> None:
    stranger = dataclasses.replace(Credentials.generate(), ca_pem=served.credentials.ca_pem)
    with pytest.raises(aiohttp.ClientError):
        await _get(f"{served.url}/api/v1/namespaces", client_ssl_context(stranger))


async def test_stop_ends_open_watches_and_is_idempotent(store: MemoryStore, tmp_path: Path) -> None:
    server = serve_in_thread(store, kubeconfig_path=tmp_path / "kubeconfig")
    context = client_ssl_context(server.credentials)
    url = f"{server.url}/api/v1/namespaces/default/configmaps?watch=1"
    async with aiohttp.ClientSession() as session, session.get(url, ssl=context) as response:
        assert response.status == 200
        await asyncio.get_running_loop().run_in_executor(None, server.stop)
        assert await response.content.read() == b""  # the stream ended cleanly
    server.stop()
    with pytest.raises(aiohttp.ClientError):
        await _get(f"{server.url}/healthz", context)


def test_a_port_in_use_is_an_error(served: ThreadedServer, store: MemoryStore) -> None:
    with pytest.raises(OSError):
        serve_in_thread(store, port=served.port)
