"""``clusterclass apiserver``: the embedded store served as a Kubernetes API server on loopback.

It serves a :class:`~clusterclass.apiserver.store.MemoryStore` (in memory, or kept in a SQLite file with
``--state``) on ``127.0.0.1`` over TLS with a CA made for this run, and writes a kubeconfig with a
client certificate for it, so ``kubectl --kubeconfig FILE`` and any Kubernetes client work against
it. It prints where it listens and where the kubeconfig is, then runs until SIGTERM or SIGINT, when
it closes every watch, stops listening, flushes and closes the state file, and exits 0.

Each run makes a new CA and client certificate, so a kubeconfig from an earlier run no longer works;
the objects in ``--state`` are kept across runs.
"""

from __future__ import annotations

import asyncio
import logging
import signal
from pathlib import Path
from typing import TYPE_CHECKING

import click

from clusterclass.cli.running import tune_long_running_process

if TYPE_CHECKING:
    from clusterclass.apiserver.store import MemoryStore

log = logging.getLogger("clusterclass.apiserver")


@click.command()
@click.option(
    "--state",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="PATH",
    help="SQLite file that keeps every object across restarts (created when missing). "
    "Default: objects live in memory and are gone when the server stops.",
)
@click.option(
    "--port",
    type=click.IntRange(0, 65535),
    default=0,
    show_default=True,
    help="Port to listen on at 127.0.0.1; 0 picks a free one (printed).",
)
@click.option(
    "--kubeconfig-out",
    type=click.Path(dir_okay=False, path_type=Path),
    required=True,
    metavar="FILE",
    help="Where to write the kubeconfig (CA and client certificate inline, readable by you only).",
)
def apiserver(state: Path | None, port: int, kubeconfig_out: Path) -> None:
    """Serve the embedded management cluster's store as a Kubernetes API for kubectl and other clients.

    \b
    Example:
      clusterclass apiserver --state ./mgmt.db --kubeconfig-out ./kubeconfig &
      kubectl --kubeconfig ./kubeconfig get clusters -A
    """
    from clusterclass.apiserver.store import MemoryStore  # the store and the server load only when used

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    if state is not None:
        state.parent.mkdir(parents=True, exist_ok=True)
    store = MemoryStore(state_path=state)
    try:
        tune_long_running_process()
        asyncio.run(_serve(store, port=port, kubeconfig_out=kubeconfig_out, state=state))
    finally:
        store.close()
    click.echo("stopped")


async def _serve(store: MemoryStore, *, port: int, kubeconfig_out: Path, state: Path | None) -> None:
    from clusterclass.apiserver.front.serving import DEFAULT_HOST, kubeconfig, start, write_kubeconfig

    try:
        running = await start(store, host=DEFAULT_HOST, port=port)
    except OSError as err:
        raise click.ClickException(f"cannot listen on {DEFAULT_HOST}:{port}: {err.strerror or err}") from err
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    try:
        path = write_kubeconfig(kubeconfig_out, kubeconfig(running.url, running.credentials))
        click.echo("clusterclass apiserver: serving the embedded store as a Kubernetes API")
        click.echo(f"url: {running.url}")
        click.echo(f"port: {running.port}")
        click.echo(f"kubeconfig: {path.resolve()}")
        click.echo(f"state: {state.resolve() if state is not None else 'in memory (not kept)'}")
        click.echo(f"try: kubectl --kubeconfig {path} get namespaces   (stop with Ctrl-C or SIGTERM)")
        log.info("ready at %s", running.url)
        await stopping.wait()
        log.info("stopping: closing watches and the listener")
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await running.stop()
