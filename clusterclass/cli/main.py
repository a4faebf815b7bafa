"""``clusterclass``: the command-line entry point.

Errors a user can cause are printed as one line on standard error with a non-zero exit code;
a traceback is shown only for a bug in clusterclass itself when ``CLUSTERCLASS_DEBUG`` is set.
"""

from __future__ import annotations

import os
import sys
import traceback
from pathlib import Path

import click
from rich.console import Console

from clusterclass import __version__
from clusterclass.cli.apiserver import apiserver
from clusterclass.cli.describe import describe
from clusterclass.cli.extension import extension
from clusterclass.cli.run import run
from clusterclass.cli.up import up
from clusterclass.cli.validate import validate
from clusterclass.cli.webhookcerts import webhook_certs
from clusterclass.errors import ClusterClassError
from clusterclass.plan.extensions import PlanExtensions
from clusterclass.plan.loader import load
from clusterclass.plan.output import render_json, render_text, render_yaml
from clusterclass.plan.planner import make_plan


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="clusterclass")
def cli() -> None:
    """Cluster API managed topologies (ClusterClass) with MachinePool and MachineDeployment workers."""


@cli.command()
@click.option(
    "-f",
    "--file",
    "files",
    multiple=True,
    required=True,
    metavar="PATH",
    help="YAML or JSON file (multi-document allowed), a directory of them, or - for stdin. Repeatable; "
    "when an object is given twice the last one wins.",
)
@click.option(
    "--cluster", metavar="NAMESPACE/NAME", help="Plan only this Cluster (default: every Cluster with a topology)."
)
@click.option(
    "-o",
    "--output",
    type=click.Choice(["text", "json", "yaml"]),
    default="text",
    show_default=True,
    help="Output format.",
)
@click.option("--seed", type=int, help="Seed for the random suffixes of new names, for reproducible plans.")
@click.option(
    "--api-version",
    "api_version",
    type=click.Choice(["v1beta1", "v1beta2"]),
    help="Show every planned object in this API version (default: the version each Cluster was given in; "
    "provider objects in their template's).",
)
@click.option(
    "--extension-url",
    metavar="https://HOST:PORT",
    help="A running Runtime Extension to call for external patches and variables (any ExtensionConfig name).",
)
@click.option(
    "--extension-ca",
    type=click.Path(exists=True, dir_okay=False),
    metavar="FILE",
    help="PEM CA to trust for --extension-url (default: the system's).",
)
def plan(
    files: tuple[str, ...],
    cluster: str | None,
    output: str,
    seed: int | None,
    api_version: str | None,
    extension_url: str | None,
    extension_ca: str | None,
) -> None:
    """Show what the topology controller would create, modify and delete.

    The objects given are the management cluster as it stands: ClusterClasses and their templates,
    Clusters, and any objects the topology created earlier. Workload-cluster Nodes may be given too
    (kubectl get nodes -o yaml) to tell whether existing MachinePools are still upgrading. External
    patches call running Runtime Extensions: the ExtensionConfigs given (by their url), or --extension-url.
    """
    extensions: PlanExtensions | None = None
    try:
        loaded = load(files, sys.stdin)
        configs = [o for o in loaded.objects if o.get("kind") == "ExtensionConfig"]
        if extension_url or configs:
            ca = Path(extension_ca).read_bytes() if extension_ca else None
            extensions = PlanExtensions(configs, url=extension_url, ca_pem=ca)
        result = make_plan(loaded, cluster=cluster, seed=seed, extensions=extensions, api_version=api_version)
    except ClusterClassError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    finally:
        if extensions is not None:
            extensions.close()
    if output == "json":
        click.echo(render_json(result), nl=False)
    elif output == "yaml":
        click.echo(render_yaml(result), nl=False)
    else:
        render_text(result, Console(highlight=False, soft_wrap=True))
    if result.failed:
        for cluster_plan in result.clusters:
            if cluster_plan.error and output != "text":
                click.echo(f"error: {cluster_plan.error}", err=True)
        sys.exit(1)


cli.add_command(validate)
cli.add_command(up)
cli.add_command(apiserver)
cli.add_command(describe)
cli.add_command(run)
cli.add_command(webhook_certs)
cli.add_command(extension)


def main() -> None:
    try:
        cli.main(standalone_mode=False)
    except click.exceptions.Abort:
        click.echo("aborted", err=True)
        sys.exit(130)
    except click.ClickException as err:
        err.show()
        sys.exit(err.exit_code)
    except ClusterClassError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    except Exception as err:  # a bug: say so plainly instead of a traceback
        if os.environ.get("CLUSTERCLASS_DEBUG"):
            traceback.print_exc()
        click.echo(f"internal error: {type(err).__name__}: {err} (set CLUSTERCLASS_DEBUG=1 for details)", err=True)
        sys.exit(70)


if __name__ == "__main__":
    main()
