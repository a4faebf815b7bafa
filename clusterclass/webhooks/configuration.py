"""The Mutating- and ValidatingWebhookConfiguration that register :data:`WEBHOOKS` with kube-apiserver.

One function makes both, from the same list the server routes, so a path, name or operation cannot differ between
what is served and what is registered. ``config/webhook/manifests.yaml`` is its output with a Service client config
(as upstream's, which kustomize then names and cert-manager fills with a ``caBundle``); tests and
``clusterclass run`` outside a cluster register the webhooks by URL instead.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.webhooks.handlers import WEBHOOKS, Webhook

ADMISSION_API_VERSION = "admissionregistration.k8s.io/v1"
#: upstream's configuration names (kustomize prefixes them, e.g. ``capi-`` upstream, ``clusterclass-`` here)
MUTATING_NAME = "mutating-webhook-configuration"
VALIDATING_NAME = "validating-webhook-configuration"

#: a webhook's ``clientConfig``, given its path
ClientConfig = Callable[[str], Obj]


def service_client_config(name: str = "webhook-service", namespace: str = "system") -> ClientConfig:
    """``clientConfig.service`` pointing at the webhook Service (upstream's placeholders by default)."""
    return lambda path: {"service": {"name": name, "namespace": namespace, "path": path}}


def url_client_config(base_url: str, ca_bundle: str | None = None) -> ClientConfig:
    """``clientConfig.url`` (``https://host:port`` + path), with the PEM CA bundle base64-encoded when given."""

    def config(path: str) -> Obj:
        found: dict[str, Any] = {"url": base_url.rstrip("/") + path}
        if ca_bundle is not None:
            found["caBundle"] = ca_bundle
        return found

    return config


def _entry(webhook: Webhook, client_config: ClientConfig) -> Obj:
    return {
        "admissionReviewVersions": ["v1", "v1beta1"],
        "clientConfig": client_config(webhook.path),
        "failurePolicy": "Fail",
        "matchPolicy": "Equivalent",
        "name": webhook.name,
        "rules": [
            {
                "apiGroups": [webhook.api_group],
                "apiVersions": list(webhook.api_versions),
                "operations": list(webhook.operations),
                "resources": [webhook.resource],
            }
        ],
        "sideEffects": "None",
    }


def webhook_configurations(
    client_config: ClientConfig,
    *,
    mutating_name: str = MUTATING_NAME,
    validating_name: str = VALIDATING_NAME,
    annotations: dict[str, str] | None = None,
) -> list[Obj]:
    """The mutating and the validating configuration of every webhook served."""
    found = []
    for kind, name, webhook_type in (
        ("MutatingWebhookConfiguration", mutating_name, "mutating"),
        ("ValidatingWebhookConfiguration", validating_name, "validating"),
    ):
        metadata: dict[str, Any] = {"name": name}
        if annotations:
            metadata["annotations"] = dict(annotations)
        found.append(
            {
                "apiVersion": ADMISSION_API_VERSION,
                "kind": kind,
                "metadata": metadata,
                "webhooks": [_entry(w, client_config) for w in WEBHOOKS if w.type == webhook_type],
            }
        )
    return found
