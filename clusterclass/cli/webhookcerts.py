"""``clusterclass webhook-certs``: the webhook serving certificate for a management cluster without cert-manager.

It writes a new CA and a serving pair for the webhook Service (``ca.crt``, ``tls.crt``, ``tls.key``) and prints the
steps that install them: the TLS Secret the Deployment mounts, and JSON patches that put the CA into the webhook
configurations (:mod:`clusterclass.webhooks.certificates`) and into the conversion webhook of each Cluster API CRD
``config/crd`` installs. With ``--url`` (the controller running outside the cluster, e.g. ``clusterclass run`` on a
laptop) it prints the webhook configurations registering that URL instead, ready for ``kubectl apply -f -``, and
the patches pointing the CRDs' conversion at it.
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
from clusterclass.webhooks.conversion import PATH as CONVERSION_PATH
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
        client_config = {"url": url.rstrip("/") + CONVERSION_PATH, "caBundle": certificate.ca_bundle}
        for name in _converted_crds():
            patch = json.dumps({"spec": {"conversion": {"webhook": {"clientConfig": client_config}}}})
            click.echo(f"# kubectl patch crd {name} --type=merge -p {shlex.quote(patch)}", err=True)
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
    crd_patch = json.dumps(
        [{"op": "add", "path": "/spec/conversion/webhook/clientConfig/caBundle", "value": certificate.ca_bundle}],
        separators=(",", ":"),
    )
    for name in _converted_crds():
        click.echo(f"  kubectl patch crd {name} --type=json -p {shlex.quote(crd_patch)}")


def _converted_crds() -> list[str]:
    """The bundled CRDs with a conversion webhook (what ``config/crd`` installs), by name."""
    from clusterclass.apiserver.crd.controllers import bundled_crds

    return sorted(
        str(crd["metadata"]["name"])
        for crd in bundled_crds()
        if (crd["spec"].get("conversion") or {}).get("strategy") == "Webhook"
    )
