"""TLS contexts for talking to an API server: trust its CA, and present a client certificate.

The standard library loads a certificate and key only from files, while kubeconfigs and exec
plugins hand them over as PEM data; :func:`load_key_pair` writes them to a private temporary
directory for the moment of loading and removes it at once. A context is built once per (CA, client
certificate) and reused by every request, so connection pooling keeps working;
:class:`ContextCache` keeps them.
"""

from __future__ import annotations

import os
import ssl
import tempfile

from clusterclass.kube.http.kubeconfig import Config, ConfigError


def ssl_context(
    *,
    ca_data: bytes | None,
    insecure: bool,
    client_cert: bytes | None = None,
    client_key: bytes | None = None,
    source: str = "",
) -> ssl.SSLContext:
    """A client context that verifies the server against ``ca_data`` (or the system's CAs) unless ``insecure``.

    As client-go: a kubeconfig's certificate authority is the only one trusted, not added to the system's; and
    the system bundle is not even loaded then (25 ms per context, once per workload cluster reached).
    """
    where = f"{source}: " if source else ""
    if insecure:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
        context.check_hostname = False
        context.verify_mode = ssl.CERT_NONE
    elif ca_data:
        try:
            context = ssl.create_default_context(
                ssl.Purpose.SERVER_AUTH, cadata=ca_data.decode("ascii", errors="replace")
            )
        except (ssl.SSLError, ValueError) as err:
            raise ConfigError(f"{where}certificate authority: not a valid PEM certificate ({err})") from err
    else:
        context = ssl.create_default_context(ssl.Purpose.SERVER_AUTH)
    if client_cert and client_key:
        try:
            load_key_pair(context, client_cert, client_key)
        except ssl.SSLError as err:
            raise ConfigError(
                f"{where}client certificate: the certificate and key are not a valid PEM pair ({err.reason or err})"
            ) from err
    return context


def load_key_pair(context: ssl.SSLContext, cert_pem: bytes, key_pem: bytes) -> None:
    """Present ``cert_pem`` with ``key_pem`` from ``context`` (either side of a connection).

    Raises ssl.SSLError when they are not a PEM pair. The files live in a directory only this user
    can read (mkdtemp makes it 0700; the files are 0600) and go away as soon as they are loaded.
    """
    with tempfile.TemporaryDirectory(prefix="clusterclass-tls-") as directory:
        cert_path = os.path.join(directory, "tls.crt")
        key_path = os.path.join(directory, "tls.key")
        for path, data in ((cert_path, cert_pem), (key_path, key_pem)):
            with os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as file:
                file.write(data)
        context.load_cert_chain(cert_path, key_path)


class ContextCache:
    """One context per client certificate for a :class:`Config` (exec plugins may rotate the certificate)."""

    def __init__(self, config: Config) -> None:
        self._config = config
        self._contexts: dict[tuple[bytes, bytes] | None, ssl.SSLContext] = {}
        # build the context of the configured certificate now, so a bad CA or key fails at once
        self.get(config.client_pair)

    def get(self, pair: tuple[bytes, bytes] | None) -> ssl.SSLContext:
        """The context presenting ``pair`` (certificate, key), or no client certificate for None."""
        context = self._contexts.get(pair)
        if context is None:
            if len(self._contexts) > 8:  # an exec plugin rotating certificates: forget the old ones
                self._contexts.clear()
            context = ssl_context(
                ca_data=self._config.ca_data,
                insecure=self._config.insecure_skip_tls_verify,
                client_cert=pair[0] if pair else None,
                client_key=pair[1] if pair else None,
                source=self._config.source,
            )
            self._contexts[pair] = context
        return context
