"""``clusterclass webhook-certs``: the webhook serving certificate for a management cluster without cert-manager.

It writes a new CA and a serving pair for the webhook Service (``ca.crt``, ``tls.crt``, ``tls.key``) and prints the
two steps that install them: the TLS Secret the Deployment mounts, and JSON patches that put the CA into the
webhook configurations (:mod:`clusterclass.webhooks.certificates`). With ``--url`` (the controller running outside
the cluster, e.g. ``clusterclass run`` on a laptop) it prints the webhook configurations registering that URL
instead, ready for ``kubectl apply -f -``.
"""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import click
import yaml

from clusterclass.webhooks.certificates import ca_bundle_patches, service_hosts, serving_certificate
from clusterclass.webhooks.configuration import (
    MUTATING_NAME,
    VALIDATING_NAME,
    url_client_config,
    webhook_configurations,
)
from clusterclass.webhooks.handlers import WebhookType

PREFIX = "clusterclass-"


@click.command("webhook-certs")
@click.option("--dir", "directory", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Where to write ca.crt, tls.crt and tls.key.")  # fmt: skip
@click.option("--service", default="clusterclass-webhook-service", show_default=True, help="The webhook Service.")
@click.option("--namespace", default="clusterclass-system", show_default=True, help="Its namespace.")
@click.option("--secret", default="clusterclass-webhook-service-cert", show_default=True,
              help="The TLS Secret the Deployment mounts.")  # fmt: skip
@click.option("--url", metavar="https://HOST:PORT",
              help="Register the webhooks at this URL instead of the Service (prints the configurations).")  # fmt: skip
def webhook_certs(directory: Path, service: str, namespace: str, secret: str, url: str | None) -> None:
    """Make the webhook serving certificate and say how to install it (for clusters without cert-manager).

    \b
    Examples:
      clusterclass webhook-certs --dir certs                      # for config/no-certmanager
      clusterclass webhook-certs --dir certs --url https://127.0.0.1:9443 | kubectl apply -f -
    """
    if url is not None:
        host = url.removeprefix("https://").rsplit(":", 1)[0].strip("[]")
        if not url.startswith("https://") or not host:
            raise click.BadParameter(f"{url!r} is not https://HOST:PORT", param_hint="--url")
        certificate = serving_certificate([host])
        certificate.write(directory)
        documents = webhook_configurations(
            url_client_config(url, certificate.ca_bundle),
            mutating_name=PREFIX + MUTATING_NAME,
            validating_name=PREFIX + VALIDATING_NAME,
        )
        click.echo("---\n".join(yaml.safe_dump(d, sort_keys=False) for d in documents), nl=False)
        click.echo(f"# then: clusterclass run --webhook-cert-dir {directory} ...", err=True)
        return
    certificate = serving_certificate(service_hosts(service, namespace))
    certificate.write(directory)
    click.echo(f"wrote {directory}/ca.crt, tls.crt and tls.key for {', '.join(service_hosts(service, namespace))}")
    click.echo("install them:")
    cert, key = shlex.quote(str(directory / "tls.crt")), shlex.quote(str(directory / "tls.key"))
    click.echo(f"  kubectl -n {namespace} create secret tls {secret} --cert={cert} --key={key}")
    configurations: list[tuple[str, str, WebhookType]] = [
        ("mutatingwebhookconfiguration", PREFIX + MUTATING_NAME, "mutating"),
        ("validatingwebhookconfiguration", PREFIX + VALIDATING_NAME, "validating"),
    ]
    for kind, name, webhook_type in configurations:
        patch = json.dumps(ca_bundle_patches(webhook_type, certificate.ca_bundle), separators=(",", ":"))
        click.echo(f"  kubectl patch {kind} {name} --type=json -p {shlex.quote(patch)}")
