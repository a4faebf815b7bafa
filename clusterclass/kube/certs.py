"""A tiny certificate authority: the TLS and client certificates of an API server on loopback.

Both the embedded API front (``clusterclass apiserver``) and the test harness that starts a real
kube-apiserver need the same three things envtest makes: a self-signed CA, a serving certificate
for ``localhost``/``127.0.0.1``, and client certificates whose common name is the user and whose
organizations are the groups (``system:masters`` bypasses RBAC). Keys are ECDSA P-256, as envtest's
TinyCA makes them; everything is PEM text so it can go straight into a kubeconfig.

Servers of ours that kube-apiserver calls (the admission webhooks, Runtime Extensions written with the SDK) serve
``tls.crt``/``tls.key`` from a directory that cert-manager renews in place: :class:`CertificateWatcher` looks at
the files every few seconds and loads a changed pair into the server's TLS context, so new connections get the new
certificate, open ones are not interrupted, and a pair caught half written is ignored until both files match
(controller-runtime's certwatcher does the same with fsnotify and a poll).
"""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import ssl
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

logger = logging.getLogger(__name__)

CERT_FILE = "tls.crt"
KEY_FILE = "tls.key"
#: how often a served certificate's files are looked at
WATCH_INTERVAL = 5.0

#: how long issued certificates are valid: long enough for any test run or embedded session
VALIDITY = timedelta(days=365)


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key, both PEM."""

    cert_pem: bytes
    key_pem: bytes


def _new_key() -> ec.EllipticCurvePrivateKey:
    return ec.generate_private_key(ec.SECP256R1())


def _key_pem(key: ec.EllipticCurvePrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()
    )


class CertificateAuthority:
    """A self-signed CA that issues serving and client certificates."""

    def __init__(self, common_name: str = "clusterclass-ca") -> None:
        self._key = _new_key()
        now = datetime.now(UTC)
        name = x509.Name(
            [
                x509.NameAttribute(NameOID.COMMON_NAME, common_name),
                x509.NameAttribute(NameOID.ORGANIZATION_NAME, "clusterclass"),
            ]
        )
        self._name = name
        self._cert = (
            x509.CertificateBuilder()
            .subject_name(name)
            .issuer_name(name)
            .public_key(self._key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(
                x509.KeyUsage(
                    digital_signature=True,
                    content_commitment=False,
                    key_encipherment=False,
                    data_encipherment=False,
                    key_agreement=False,
                    key_cert_sign=True,
                    crl_sign=True,
                    encipher_only=False,
                    decipher_only=False,
                ),
                critical=True,
            )
            .add_extension(x509.SubjectKeyIdentifier.from_public_key(self._key.public_key()), critical=False)
            .sign(self._key, hashes.SHA256())
        )

    @classmethod
    def load(cls, cert_pem: bytes, key_pem: bytes) -> CertificateAuthority:
        """The CA of an existing certificate and key (a Cluster's ``<cluster>-ca`` Secret, a state directory)."""
        key = serialization.load_pem_private_key(key_pem, password=None)
        if not isinstance(key, ec.EllipticCurvePrivateKey):
            raise ValueError("the CA key is not an ECDSA key")
        cert = x509.load_pem_x509_certificate(cert_pem)
        ca = cls.__new__(cls)
        ca._key = key
        ca._name = cert.subject
        ca._cert = cert
        return ca

    @property
    def cert_pem(self) -> bytes:
        return self._cert.public_bytes(serialization.Encoding.PEM)

    @property
    def key_pem(self) -> bytes:
        return _key_pem(self._key)

    def issue_server(self, hosts: list[str] | None = None) -> KeyPair:
        """A serving certificate for ``hosts`` (default ``localhost`` and ``127.0.0.1``)."""
        hosts = hosts or ["localhost", "127.0.0.1"]
        names: list[x509.GeneralName] = []
        for host in hosts:
            try:
                names.append(x509.IPAddress(ipaddress.ip_address(host)))
            except ValueError:
                names.append(x509.DNSName(host))
        return self._issue(hosts[0], [], ExtendedKeyUsageOID.SERVER_AUTH, names)

    def issue_client(self, user: str, groups: list[str] | None = None) -> KeyPair:
        """A client certificate: common name ``user``, organizations ``groups``."""
        return self._issue(user, groups or [], ExtendedKeyUsageOID.CLIENT_AUTH, [])

    def _issue(
        self, common_name: str, organizations: list[str], usage: x509.ObjectIdentifier, names: list[x509.GeneralName]
    ) -> KeyPair:
        key = _new_key()
        now = datetime.now(UTC)
        subject = x509.Name(
            [x509.NameAttribute(NameOID.ORGANIZATION_NAME, org) for org in organizations]
            + [x509.NameAttribute(NameOID.COMMON_NAME, common_name)]
        )
        builder = (
            x509.CertificateBuilder()
            .subject_name(subject)
            .issuer_name(self._name)
            .public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - timedelta(minutes=5))
            .not_valid_after(now + VALIDITY)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
            .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(self._key.public_key()), critical=False)
        )
        if names:
            builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
        cert = builder.sign(self._key, hashes.SHA256())
        return KeyPair(cert.public_bytes(serialization.Encoding.PEM), _key_pem(key))


def signing_key_pair() -> KeyPair:
    """A key pair for signing service-account tokens (kube-apiserver's ``--service-account-*`` flags).

    The "certificate" is the public key in PEM, which is what ``--service-account-key-file`` reads.
    """
    key = _new_key()
    public = key.public_key().public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo)
    return KeyPair(public, _key_pem(key))


class CertificateError(Exception):
    """The serving certificate or key cannot be loaded; the message names the file."""


class CertificateWatcher:
    """A server TLS context over ``tls.crt``/``tls.key`` in ``cert_dir``, reloaded when they change."""

    def __init__(self, cert_dir: str | Path, *, interval: float = WATCH_INTERVAL) -> None:
        self.cert_path = Path(cert_dir) / CERT_FILE
        self.key_path = Path(cert_dir) / KEY_FILE
        self.interval = interval
        self.context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.context.minimum_version = ssl.TLSVersion.TLSv1_2
        self.loads = 0
        self._stamp = self._load()
        self._task: asyncio.Task[None] | None = None

    def _files_stamp(self) -> tuple[int, int, int, int]:
        cert, key = self.cert_path.stat(), self.key_path.stat()
        return (cert.st_mtime_ns, cert.st_size, key.st_mtime_ns, key.st_size)

    def _load(self) -> tuple[int, int, int, int]:
        try:
            stamp = self._files_stamp()
            self.context.load_cert_chain(self.cert_path, self.key_path)
        except FileNotFoundError as err:
            raise CertificateError(f"serving certificate: {err.filename} does not exist") from err
        except (OSError, ssl.SSLError) as err:
            raise CertificateError(
                f"serving certificate {self.cert_path} / {self.key_path} cannot be loaded: {err}"
            ) from err
        self.loads += 1
        return stamp

    def check(self) -> bool:
        """Load the pair again if the files changed; whether it was loaded."""
        try:
            stamp = self._files_stamp()
        except OSError:
            return False
        if stamp == self._stamp:
            return False
        try:
            self._stamp = self._load()
        except CertificateError as err:  # half written, or a wrong pair: keep serving the old one
            logger.warning("%s; keeping the previous certificate", err)
            return False
        logger.info("reloaded the serving certificate from %s", self.cert_path)
        return True

    def start(self) -> None:
        self._task = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            self.check()

    async def stop(self) -> None:
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
