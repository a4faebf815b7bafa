"""Credentials from an exec plugin (``users[].user.exec``), the way client-go runs one.

The plugin is a command (``aws eks get-token``, ``gke-gcloud-auth-plugin``, ``kubelogin``...) that
prints an ``ExecCredential`` on stdout: a bearer token, or a client certificate and key, with an
optional ``expirationTimestamp``. :class:`ExecPlugin` runs it when a credential is first needed,
keeps the result until it expires or the server answers 401, and runs it again then; concurrent
requests wait for one run instead of starting several.

The plugin receives ``KUBERNETES_EXEC_INFO``: an ExecCredential whose ``spec`` says whether it may
talk to the user (``interactive``) and, with ``provideClusterInfo``, which cluster it is for. It may
be interactive only when this process's stdin is a terminal and ``interactiveMode`` allows it;
otherwise its stderr is captured so a failure can be reported with what the plugin said.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clusterclass.kube.errors import ApiError
from clusterclass.kube.http.kubeconfig import ExecConfig

#: how long a non-interactive plugin may run before it is considered hung
EXEC_TIMEOUT_SECONDS = 120.0


class CredentialError(ApiError):
    """No credential could be obtained for a request (an exec plugin failed, a token file is unreadable).

    An :class:`~clusterclass.kube.errors.ApiError` so that callers handling a failed request handle
    this one too; the request never reached the server.
    """

    default_code = 401
    default_reason = "Unauthorized"


def credential_error(message: str) -> CredentialError:
    return CredentialError.new(f"getting credentials: {message}")


@dataclass(frozen=True)
class ExecCredential:
    """What a plugin returned: a token or a client certificate pair, and when it stops being valid."""

    token: str | None = None
    client_cert: bytes | None = None
    client_key: bytes | None = None
    expires: datetime | None = None

    def expired(self, now: datetime) -> bool:
        return self.expires is not None and now >= self.expires


class ExecPlugin:
    """Runs one configured plugin and caches its credential."""

    def __init__(self, config: ExecConfig, *, stdin_is_terminal: bool | None = None) -> None:
        self.config = config
        self._interactive_possible = sys.stdin.isatty() if stdin_is_terminal is None else stdin_is_terminal
        self._cached: ExecCredential | None = None
        self._lock = asyncio.Lock()

    async def credential(self) -> ExecCredential:
        """The cached credential, or a fresh one when there is none or it has expired."""
        cached = self._cached
        if cached is not None and not cached.expired(datetime.now(UTC)):
            return cached
        async with self._lock:
            cached = self._cached
            if cached is not None and not cached.expired(datetime.now(UTC)):
                return cached
            self._cached = await self.run()
            return self._cached

    def invalidate(self, used: ExecCredential) -> None:
        """Forget the credential (the server refused it), unless another request already replaced it."""
        if self._cached is used:
            self._cached = None

    def _interactive(self) -> bool:
        mode = self.config.interactive_mode
        if mode == "Always" and not self._interactive_possible:
            raise self._error("it needs an interactive terminal (interactiveMode: Always) and stdin is not one")
        return mode != "Never" and self._interactive_possible

    def exec_info(self, *, interactive: bool) -> dict[str, Any]:
        """The ExecCredential passed in ``KUBERNETES_EXEC_INFO``."""
        spec: dict[str, Any] = {"interactive": interactive}
        if self.config.provide_cluster_info:
            spec["cluster"] = dict(self.config.cluster_info)
        return {"apiVersion": self.config.api_version, "kind": "ExecCredential", "spec": spec}

    async def run(self) -> ExecCredential:
        """Run the plugin once and parse what it printed."""
        interactive = self._interactive()
        env = dict(os.environ)
        env.update(self.config.env)
        env["KUBERNETES_EXEC_INFO"] = json.dumps(self.exec_info(interactive=interactive))
        try:
            process = await asyncio.create_subprocess_exec(
                self.config.command,
                *self.config.args,
                stdin=None if interactive else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=None if interactive else asyncio.subprocess.PIPE,
                env=env,
            )
        except (FileNotFoundError, PermissionError) as err:
            hint = f"; {self.config.install_hint.strip()}" if self.config.install_hint.strip() else ""
            why = "not found" if isinstance(err, FileNotFoundError) else "not executable"
            raise self._error(f"command {self.config.command!r} {why}{hint}") from err
        except OSError as err:
            raise self._error(f"cannot start {self.config.command!r}: {err}") from err
        try:
            stdout, stderr = await asyncio.wait_for(
                process.communicate(), timeout=None if interactive else EXEC_TIMEOUT_SECONDS
            )
        except TimeoutError as err:
            process.kill()
            await process.wait()
            raise self._error(f"{self.config.command!r} did not finish within {EXEC_TIMEOUT_SECONDS:.0f}s") from err
        said = _tail(stderr)
        if process.returncode != 0:
            raise self._error(f"{self.config.command!r} exited with status {process.returncode}{said}")
        return self._parse(stdout, said)

    def _parse(self, stdout: bytes, said: str) -> ExecCredential:
        try:
            document = json.loads(stdout)
        except ValueError as err:
            raise self._error(f"its output is not an ExecCredential in JSON ({err}){said}") from err
        if not isinstance(document, dict) or document.get("kind") != "ExecCredential":
            raise self._error(f"its output is not an ExecCredential (kind {_kind(document)!r}){said}")
        if document.get("apiVersion") != self.config.api_version:
            raise self._error(
                f"it is configured for {self.config.api_version} and returned apiVersion "
                f"{document.get('apiVersion')!r}{said}"
            )
        status = document.get("status")
        if not isinstance(status, dict):
            raise self._error(f"its ExecCredential has no status{said}")
        token = status.get("token") or None
        cert = status.get("clientCertificateData") or None
        key = status.get("clientKeyData") or None
        for name, value in (("token", token), ("clientCertificateData", cert), ("clientKeyData", key)):
            if value is not None and not isinstance(value, str):
                raise self._error(f"status.{name} of its ExecCredential must be a string")
        if bool(cert) != bool(key):
            raise self._error("it returned only one of status.clientCertificateData and status.clientKeyData")
        if not token and not cert:
            raise self._error(f"it returned neither a token nor a client certificate and key{said}")
        return ExecCredential(
            token=token,
            client_cert=cert.encode() if cert else None,
            client_key=key.encode() if key else None,
            expires=self._expiry(status.get("expirationTimestamp")),
        )

    def _expiry(self, value: Any) -> datetime | None:
        if value is None or value == "":
            return None
        if not isinstance(value, str):
            raise self._error("status.expirationTimestamp must be an RFC 3339 time")
        try:
            moment = datetime.fromisoformat(value.replace("Z", "+00:00"))
        except ValueError as err:
            raise self._error(f"status.expirationTimestamp {value!r} is not an RFC 3339 time") from err
        return moment if moment.tzinfo else moment.replace(tzinfo=UTC)

    def _error(self, message: str) -> CredentialError:
        return credential_error(f"exec plugin ({self.config.source}): {message}")


def _tail(stderr: bytes | None, limit: int = 2000) -> str:
    """The plugin's stderr for an error message, trimmed to its end (where the reason usually is)."""
    text = (stderr or b"").decode(errors="replace").strip()
    if not text:
        return ""
    if len(text) > limit:
        text = "..." + text[-limit:]
    return f"; stderr: {text}"


def _kind(document: Any) -> str:
    return str(document.get("kind")) if isinstance(document, dict) else type(document).__name__
