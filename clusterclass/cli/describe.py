"""``clusterclass describe cluster NAME``: a Cluster's objects as a tree of their conditions, like clusterctl's.

It reads the Cluster and its objects from the management cluster a kubeconfig points at (any
kube-apiserver, or ``clusterclass apiserver``), builds the tree and prints it: clusterctl's table
(v1.6, spec §4), or the same tree as JSON or YAML. The steps are :mod:`clusterclass.describe`'s; this
module only turns flags into options and errors into one line on standard error with exit code 1.

Colours are on when standard output is a terminal, or with ``-c``; ``NO_COLOR`` in the environment
turns them off whatever the flags say.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

import click
from rich.console import Console

from clusterclass.describe.collect import collect
from clusterclass.describe.render import render_json, render_view, render_yaml
from clusterclass.describe.tree import Node, TreeOptions, build_tree
from clusterclass.errors import ClusterClassError
from clusterclass.kube.http import HttpClient


def _utc_now() -> datetime:
    return datetime.now(UTC)


#: the moment SINCE is measured from (tests replace it to get reproducible output)
clock: Callable[[], datetime] = _utc_now
#: seconds between two drawings of ``--watch``
WATCH_INTERVAL = 1.0


@click.group()
def describe() -> None:
    """Describe Cluster API objects of a management cluster."""


@describe.command("cluster")
@click.argument("name")
@click.option(
    "-n", "--namespace", help="Namespace of the Cluster (default: the kubeconfig context's namespace, else default)."
)
@click.option(
    "--kubeconfig",
    metavar="FILE",
    help="Kubeconfig file (default: KUBECONFIG, else in-cluster configuration, else ~/.kube/config).",
)
@click.option("--kubeconfig-context", metavar="CONTEXT", help="Kubeconfig context (default: the current one).")
@click.option(
    "--show-conditions",
    default="",
    metavar="LIST",
    help="Also list the other conditions of these objects: comma-separated Kind, Kind/name or all.",
)
@click.option("--show-machinesets", is_flag=True, help="Show the MachineSets between MachineDeployments and Machines.")
@click.option("--show-resourcesets", is_flag=True, help="Show the ClusterResourceSets bound to the Cluster.")
@click.option("--show-templates", is_flag=True, help="Show the templates of the control plane and MachineDeployments.")
@click.option("--echo", is_flag=True, help="Show objects whose Ready only repeats their parent's (hidden by default).")
@click.option(
    "--grouping/--disable-grouping",
    default=True,
    show_default=True,
    help="Merge sibling objects in the same state into one row.",
)
@click.option(
    "--v1beta2",
    type=click.BOOL,
    default=True,
    is_flag=False,
    flag_value=True,
    show_default=True,
    metavar="BOOL",
    help="clusterctl v1.11+'s table of v1beta2 conditions and replica counters; --v1beta2=false for v1.6's "
    "table of v1beta1 Ready conditions.",
)
@click.option("-c", "--color", is_flag=True, help="Colour the output even when it is not a terminal (NO_COLOR wins).")
@click.option("-o", "--output", type=click.Choice(["text", "json", "yaml"]), default="text", show_default=True)
@click.option(
    "-w", "--watch", is_flag=True, help="Redraw the tree every second until Ctrl-C (on a terminal; else print changes)."
)
def cluster(
    name: str,
    namespace: str | None,
    kubeconfig: str | None,
    kubeconfig_context: str | None,
    output: str,
    color: bool,
    watch: bool,
    **flags: Any,
) -> None:
    """Show the Cluster NAME and its objects as a tree of their Ready conditions.

    \b
    Example:
      clusterclass describe cluster demo -n default --show-conditions KubeadmControlPlane
      clusterclass describe cluster demo --watch      # follow an upgrade
    """
    options = TreeOptions(**flags)
    if watch:
        if output != "text":
            raise click.BadParameter("--watch draws the text tree; leave out -o", param_hint="'--watch'")
        try:
            asyncio.run(_watch(name, namespace, kubeconfig, kubeconfig_context, options, _colors(color)))
        except ClusterClassError as err:
            click.echo("error: " + " ".join(str(err).split()), err=True)
            sys.exit(1)
        except KeyboardInterrupt:
            pass
        return
    try:
        root = asyncio.run(_describe(name, namespace, kubeconfig, kubeconfig_context, options))
    except ClusterClassError as err:
        click.echo("error: " + " ".join(str(err).split()), err=True)
        sys.exit(1)
    now = clock()
    if output == "json":
        click.echo(render_json(root, now=now), nl=False)
    elif output == "yaml":
        click.echo(render_yaml(root, now=now), nl=False)
    elif _colors(color):
        console = Console(force_terminal=True, no_color=False, color_system="standard", highlight=False, soft_wrap=True)
        console.print(render_view(root, now=now, v1beta2=options.v1beta2), end="")
    else:
        click.echo(render_view(root, now=now, v1beta2=options.v1beta2).plain, nl=False)


def _colors(asked: bool) -> bool:
    if os.environ.get("NO_COLOR"):  # set and not empty, as no-color.org and clusterctl read it
        return False
    return asked or sys.stdout.isatty()


async def _watch(
    name: str, namespace: str | None, kubeconfig: str | None, context: str | None, options: TreeOptions, colors: bool
) -> None:
    """Redraw the tree every second (a live display on a terminal; else the tree again whenever it changed)."""
    from rich.live import Live

    client = HttpClient.from_environment(kubeconfig, context=context)
    console = Console(highlight=False, soft_wrap=True, no_color=not colors)
    try:
        namespace = namespace or client.config.namespace or "default"
        if console.is_terminal:
            with Live(console=console, refresh_per_second=4) as live:
                while True:
                    objects = await collect(client, namespace=namespace, name=name, options=options)
                    live.update(render_view(build_tree(objects, options), now=clock(), v1beta2=options.v1beta2))
                    await asyncio.sleep(WATCH_INTERVAL)
        last = ""
        while True:
            objects = await collect(client, namespace=namespace, name=name, options=options)
            root = build_tree(objects, options)
            text = render_view(root, now=clock(), v1beta2=options.v1beta2).plain
            shape = re.sub(r'"since": "[^"]*"', "", render_json(root, now=clock()))  # SINCE moves on by itself
            if shape != last:
                click.echo(text)
                last = shape
            await asyncio.sleep(WATCH_INTERVAL)
    finally:
        await client.close()


async def _describe(
    name: str, namespace: str | None, kubeconfig: str | None, context: str | None, options: TreeOptions
) -> Node:
    client = HttpClient.from_environment(kubeconfig, context=context)
    try:
        namespace = namespace or client.config.namespace or "default"
        objects = await collect(client, namespace=namespace, name=name, options=options)
    finally:
        await client.close()
    return build_tree(objects, options)
