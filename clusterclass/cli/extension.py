"""``clusterclass extension serve``: run a Runtime Extension written with the Python SDK.

``MODULE:OBJECT`` names the :class:`~clusterclass.runtimesdk.Extension` — a module on the Python path
(``mypackage.extension:extension``) or a file (``./my_extension.py:extension``). It is served over TLS with
``tls.crt``/``tls.key`` from ``--cert-dir`` (reloaded when they change), discovery included, until SIGTERM or Ctrl-C.
``--kubeconfig`` gives handlers a management-cluster client (``extension.client``), e.g. to read ConfigMaps.
"""

from __future__ import annotations

import asyncio
import importlib
import importlib.util
import logging
import signal
import sys
from pathlib import Path

import click

from clusterclass.cli.running import run_to_exit
from clusterclass.errors import ClusterClassError

log = logging.getLogger("clusterclass.extension")


class ExtensionLoadError(ClusterClassError):
    pass


def load_extension(spec: str) -> object:
    """The object ``MODULE:OBJECT`` names (a dotted module or a ``.py`` file)."""
    module_name, sep, attribute = spec.rpartition(":")
    if not sep or not module_name or not attribute:
        raise ExtensionLoadError(f"{spec!r} is not MODULE:OBJECT")
    try:
        if module_name.endswith(".py") or "/" in module_name:
            path = Path(module_name)
            if not path.is_file():
                raise ExtensionLoadError(f"{path} does not exist")
            module_spec = importlib.util.spec_from_file_location(path.stem, path)
            assert module_spec is not None and module_spec.loader is not None
            module = importlib.util.module_from_spec(module_spec)
            sys.modules[path.stem] = module
            module_spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ExtensionLoadError:
        raise
    except Exception as err:  # the user's module failed to import: say which and why
        raise ExtensionLoadError(f"cannot import {module_name}: {type(err).__name__}: {err}") from err
    found = getattr(module, attribute, None)
    if found is None:
        raise ExtensionLoadError(f"{module_name} has no {attribute!r}")
    return found


@click.group()
def extension() -> None:
    """Runtime Extensions written in Python."""


@extension.command()
@click.argument("target", metavar="MODULE:OBJECT")
@click.option("--port", type=click.IntRange(0, 65535), default=9443, show_default=True)
@click.option("--host", default="0.0.0.0", show_default=True)
@click.option("--cert-dir", type=click.Path(file_okay=False, path_type=Path), required=True,
              help="Directory with the serving pair tls.crt and tls.key.")  # fmt: skip
@click.option("--kubeconfig", metavar="FILE", help="Management cluster for the handlers (extension.client).")
@click.option("-v", "--verbose", is_flag=True, help="Debug logs.")
def serve(target: str, port: int, host: str, cert_dir: Path, kubeconfig: str | None, verbose: bool) -> None:
    """Serve the extension MODULE:OBJECT over TLS until SIGTERM or Ctrl-C.

    \b
    Example:
      clusterclass extension serve clusterclass.examples.extension:extension --cert-dir certs --port 9443
    """
    from clusterclass.runtimesdk import Extension

    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO, format="%(asctime)s %(levelname)s %(message)s"
    )
    try:
        found = load_extension(target)
    except ExtensionLoadError as err:
        raise click.BadParameter(str(err), param_hint="MODULE:OBJECT") from None
    if not isinstance(found, Extension):
        raise click.BadParameter(f"{target} is a {type(found).__name__}, not an Extension", param_hint="MODULE:OBJECT")
    run_to_exit(_serve(found, host=host, port=port, cert_dir=cert_dir, kubeconfig=kubeconfig))


async def _serve(extension: object, *, host: str, port: int, cert_dir: Path, kubeconfig: str | None) -> None:
    from clusterclass.kube.http import HttpClient
    from clusterclass.runtimesdk import Extension

    assert isinstance(extension, Extension)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    client = HttpClient.from_kubeconfig(kubeconfig) if kubeconfig else None
    extension.client = client
    running = await extension.start(host=host, port=port, cert_dir=cert_dir)
    click.echo(
        f"serving extension {extension.name} ({len(extension.handlers)} handlers) on https://{host}:{running.port}",
        err=True,
    )
    try:
        await stopping.wait()
    finally:
        await running.stop()
        if client is not None:
            await client.close()
