"""Running a long-lived command's coroutine and turning what it ends with into an exit code.

``up``, ``run`` and ``extension serve`` run until a signal; errors a user can cause (a bad state file, a port in use,
an unreachable API server) end them with one ``error: ...`` line and exit code 1, never a traceback.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Coroutine
from typing import Any, NoReturn

import click

from clusterclass.errors import ClusterClassError


def run_to_exit(main: Coroutine[Any, Any, int | None]) -> NoReturn:
    """``asyncio.run(main)``, then exit with the code it returns (0 for None), or 1 with the error it raised."""
    try:
        code = asyncio.run(main)
    except ClusterClassError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    except OSError as err:
        click.echo(f"error: {err.strerror or err}{f': {err.filename}' if err.filename else ''}", err=True)
        sys.exit(1)
    sys.exit(code or 0)
