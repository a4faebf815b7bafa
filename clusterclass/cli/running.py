"""Running a long-lived command's coroutine and turning what it ends with into an exit code.

``up``, ``run`` and ``extension serve`` run until a signal; errors a user can cause (a bad state file, a port in use,
an unreachable API server) end them with one ``error: ...`` line and exit code 1, never a traceback.
"""

from __future__ import annotations

import asyncio
import gc
import sys
from collections.abc import Coroutine
from typing import Any, NoReturn

import click

from clusterclass.errors import ClusterClassError

#: the cyclic garbage collector's thresholds for a long-running command (CPython's default: 700, 10, 10)
GC_THRESHOLDS = (50_000, 20, 10)


def tune_garbage_collector() -> None:
    """Collect young objects every 50,000 net allocations instead of 700, for the life of the process.

    A controller process allocates and drops objects by the million (every watch event, read and write is a
    fresh tree of dicts), nearly all freed by reference counting, while it holds a large heap of cached objects.
    With CPython's defaults the collector ran tens of thousands of times and, worse, walked the whole heap again
    every time a quarter of it had been replaced: a fifth of the CPU time of the embedded management cluster
    bringing up 100 Clusters (27 of 121 s, ``bench/simulation.py``), a growing share as the heap grows. With these
    thresholds it takes 2 s; peak memory is the same (almost nothing here is freed only by the collector), and
    full collections still happen, only rarely.
    """
    gc.set_threshold(*GC_THRESHOLDS)


def run_to_exit(main: Coroutine[Any, Any, int | None]) -> NoReturn:
    """``asyncio.run(main)``, then exit with the code it returns (0 for None), or 1 with the error it raised."""
    tune_garbage_collector()
    try:
        code = asyncio.run(main)
    except ClusterClassError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    except OSError as err:
        click.echo(f"error: {err.strerror or err}{f': {err.filename}' if err.filename else ''}", err=True)
        sys.exit(1)
    sys.exit(code or 0)
