"""``clusterclass validate``: the admission rules for Clusters, ClusterClasses and MachinePools, offline."""

from __future__ import annotations

import json
import sys

import click

from clusterclass.errors import ClusterClassError
from clusterclass.plan.loader import load


@click.command()
@click.option(
    "-f",
    "--file",
    "files",
    multiple=True,
    required=True,
    metavar="PATH",
    help="Objects to validate (YAML/JSON file, directory, or - for stdin). Together they are also the world the "
    "rules look at, e.g. the Clusters that use a ClusterClass. ClusterClasses given count as reconciled.",
)
@click.option(
    "--old",
    "old_files",
    multiple=True,
    metavar="PATH",
    help="Previous versions of objects (as stored): their checks become update checks.",
)
@click.option("-o", "--output", type=click.Choice(["text", "json"]), default="text", show_default=True)
def validate(files: tuple[str, ...], old_files: tuple[str, ...], output: str) -> None:
    """Validate Clusters, ClusterClasses and MachinePools as the admission webhooks would.

    Exit 0 when everything is valid; 1 with one line per error (Kind namespace/name: field.path: message),
    or with -o json a list of Kubernetes Status objects, one per invalid object.
    """
    from clusterclass.validate.runner import validate_objects  # the rules load only when used

    try:
        loaded = load(files, sys.stdin)
        old = load(old_files) if old_files else None
        checked = validate_objects(loaded, old)
    except ClusterClassError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    invalid = [item for item in checked if item.result.errors]
    for item in checked:
        for warning in item.result.warnings:
            click.echo(f"warning: {item.key}: {warning}", err=True)
    if output == "json":
        click.echo(json.dumps([item.status() for item in invalid], indent=2))
    else:
        for item in invalid:
            where = f"{item.key.kind} {item.key.namespace}/{item.key.name}"
            for error in item.result.errors:
                click.echo(f"{where}: {error}")
        if not invalid:
            click.echo(f"{len(checked)} object(s) valid")
    if invalid:
        sys.exit(1)
