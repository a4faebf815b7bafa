"""Helpers shared by the front's tests (imported as a top-level module; pytest puts this directory on sys.path)."""

from __future__ import annotations

import json
import shutil
from typing import Any

from aiohttp.test_utils import TestClient
from support.real_apiserver import find_binary


class Api:
    """An aiohttp test client with one-line JSON requests: ``status, body = await api.call(...)``."""

    def __init__(self, client: TestClient) -> None:
        self.client = client

    async def call(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        content_type: str = "application/json",
        accept: str | None = None,
        raw: bytes | None = None,
    ) -> tuple[int, Any]:
        headers = {"Content-Type": content_type}
        if accept is not None:
            headers["Accept"] = accept
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        async with self.client.request(method, path, data=data, headers=headers) as response:
            text = await response.text()
            is_json = response.content_type == "application/json" and text
            return response.status, json.loads(text) if is_json else text

    async def response(
        self, method: str, path: str, body: Any = None, *, raw: bytes | None = None, **headers: str
    ) -> tuple[int, Any, Any]:
        """Status, headers (a multidict) and decoded body."""
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        headers.setdefault("Content-Type", "application/json")
        async with self.client.request(method, path, data=data, headers=headers) as response:
            text = await response.text()
            return response.status, response.headers.copy(), json.loads(text) if text else None


def find_kubectl() -> str | None:
    """kubectl where the real kube-apiserver's binaries are (scripts/build-apiserver.sh builds it), else on PATH."""
    built, _ = find_binary("kubectl")
    return str(built) if built is not None else shutil.which("kubectl")
