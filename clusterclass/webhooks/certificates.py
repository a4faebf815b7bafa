"""A webhook serving certificate without cert-manager: a CA, a pair for the webhook Service, and where they go.

kube-apiserver calls a webhook Service at ``<service>.<namespace>.svc`` over TLS and trusts the ``caBundle`` of the
webhook configuration. cert-manager normally issues that pair and injects the CA; :func:`serving_certificate` makes
both without it (``clusterclass webhook-certs``), and :func:`ca_bundle_patches` the JSON patches that put the CA
into every webhook of a configuration. The same pair serves tests that register the webhooks by URL.
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from clusterclass.api.objects import Obj
from clusterclass.kube.certs import CertificateAuthority
from clusterclass.privatefiles import write_private
from clusterclass.webhooks.handlers import WEBHOOKS, WebhookType


@dataclass(frozen=True)
class ServingCertificate:
    """A CA and the serving pair it issued, PEM."""

    ca_pem: bytes
    cert_pem: bytes
    key_pem: bytes

    @property
    def ca_bundle(self) -> str:
        """The CA as a webhook configuration's ``caBundle`` (base64 of the PEM)."""
        return base64.b64encode(self.ca_pem).decode()

    def write(self, directory: Path) -> None:
        """``ca.crt``, ``tls.crt`` and ``tls.key`` (the names ``--webhook-cert-dir`` and a TLS Secret use)."""
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "ca.crt").write_bytes(self.ca_pem)
        (directory / "tls.crt").write_bytes(self.cert_pem)
        write_private(directory / "tls.key", self.key_pem)


def service_hosts(service: str, namespace: str) -> list[str]:
    """The names kube-apiserver may use for a Service: ``<svc>.<ns>.svc`` and its cluster.local form."""
    return [f"{service}.{namespace}.svc", f"{service}.{namespace}.svc.cluster.local"]


def serving_certificate(hosts: Iterable[str], *, ca_name: str = "clusterclass-webhook-ca") -> ServingCertificate:
    """A new CA and a serving pair for ``hosts`` (DNS names or IP addresses)."""
    ca = CertificateAuthority(ca_name)
    pair = ca.issue_server(list(hosts))
    return ServingCertificate(ca.cert_pem, pair.cert_pem, pair.key_pem)


def ca_bundle_patches(webhook_type: WebhookType, ca_bundle: str) -> list[Obj]:
    """A JSON patch setting ``caBundle`` on every webhook of the mutating or the validating configuration."""
    count = sum(1 for webhook in WEBHOOKS if webhook.type == webhook_type)
    return [{"op": "add", "path": f"/webhooks/{i}/clientConfig/caBundle", "value": ca_bundle} for i in range(count)]
