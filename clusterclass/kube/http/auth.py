"""Who a request says it is: the headers and client certificate each request carries.

:class:`Authenticator` turns a :class:`~clusterclass.kube.http.kubeconfig.Config` into per-request
:class:`Credentials`, with client-go's precedence: a token file (read again every minute, so a
rotated service account token is picked up) wins over a static token; basic auth is the
alternative to a token; an exec plugin runs only when the kubeconfig gives no static credential at
all, as ``kubectl --token`` overrides a plugin. A client certificate travels in the TLS handshake;
:mod:`~clusterclass.kube.http.tls` builds the context that presents it.

After a 401 the HTTP client calls :meth:`Authenticator.refresh`; when a new credential could help
(a plugin to run again, a token file to read again) it says so and the request is retried once.
"""

from __future__ import annotations

import base64
import time
from dataclasses import dataclass
from urllib.parse import quote

from clusterclass.kube.http.execplugin import ExecCredential, ExecPlugin, credential_error
from clusterclass.kube.http.kubeconfig import Config

#: how often a token file is read again (client-go's cachingTokenSource re-reads every minute)
TOKEN_FILE_REFRESH_SECONDS = 60.0


@dataclass(frozen=True)
class Credentials:
    """What one request presents: headers, and the client certificate pair for TLS (or None)."""

    #: pairs, since a header may repeat (one ``Impersonate-Group`` per group)
    headers: tuple[tuple[str, str], ...] = ()
    client_pair: tuple[bytes, bytes] | None = None
    #: the exec credential these came from, so a 401 invalidates exactly that one
    exec_credential: ExecCredential | None = None


class _TokenFile:
    """A bearer token in a file, read again after :data:`TOKEN_FILE_REFRESH_SECONDS`."""

    def __init__(self, path: str) -> None:
        self.path = path
        self._token: str | None = None
        self._read_at = 0.0

    def token(self) -> str:
        if self._token is None or time.monotonic() - self._read_at >= TOKEN_FILE_REFRESH_SECONDS:
            self._read()
        assert self._token is not None
        return self._token

    def _read(self) -> None:
        try:
            with open(self.path) as file:
                token = file.read().strip()
        except OSError as err:
            if self._token is not None:  # keep the last good token: the file may be mid-rotation
                return
            raise credential_error(f"cannot read token file {self.path}: {err.strerror or err}") from err
        if not token and self._token is None:
            raise credential_error(f"token file {self.path} is empty")
        if token:
            self._token = token
        self._read_at = time.monotonic()

    def forget(self) -> None:
        self._read_at = 0.0


class Authenticator:
    """The credentials of one :class:`Config`, refreshed as they expire."""

    def __init__(self, config: Config, *, stdin_is_terminal: bool | None = None) -> None:
        self.config = config
        self._token_file = _TokenFile(config.token_file) if config.token_file else None
        static = bool(config.token or config.token_file or config.username or config.client_pair)
        self._exec = (
            ExecPlugin(config.exec, stdin_is_terminal=stdin_is_terminal) if config.exec and not static else None
        )
        self._static_headers = _impersonation_headers(config)

    async def credentials(self) -> Credentials:
        """The headers and client certificate for the next request."""
        authorization: str | None = None
        client_pair = self.config.client_pair
        used: ExecCredential | None = None
        if self._token_file is not None:
            authorization = f"Bearer {self._token_file.token()}"
        elif self.config.token:
            authorization = f"Bearer {self.config.token}"
        elif self.config.username:
            basic = base64.b64encode(f"{self.config.username}:{self.config.password or ''}".encode()).decode()
            authorization = f"Basic {basic}"
        elif self._exec is not None:
            used = await self._exec.credential()
            if used.token:
                authorization = f"Bearer {used.token}"
            if used.client_cert and used.client_key:
                client_pair = (used.client_cert, used.client_key)
        headers = self._static_headers
        if authorization:
            headers = (("Authorization", authorization), *headers)
        return Credentials(headers=headers, client_pair=client_pair, exec_credential=used)

    def refresh(self, used: Credentials) -> bool:
        """The server refused ``used``: drop what may be stale; True when a retry could succeed."""
        if self._token_file is not None:
            self._token_file.forget()
            return True
        if self._exec is not None and used.exec_credential is not None:
            self._exec.invalidate(used.exec_credential)
            return True
        return False


def _impersonation_headers(config: Config) -> tuple[tuple[str, str], ...]:
    """``Impersonate-*`` headers: one per group and per extra value, as kube-apiserver reads repeated headers."""
    who = config.impersonate
    if who is None:
        return ()
    headers = [("Impersonate-User", who.user)]
    if who.uid:
        headers.append(("Impersonate-Uid", who.uid))
    headers.extend(("Impersonate-Group", group) for group in who.groups)
    for key, values in who.extra:
        headers.extend((f"Impersonate-Extra-{quote(key, safe='')}", value) for value in values)
    return tuple(headers)
