"""Running a long-lived command's coroutine and turning what it ends with into an exit code.

``up``, ``run`` and ``extension serve`` run until a signal; errors a user can cause (a bad state file, a port in use,
an unreachable API server) end them with one ``error: ...`` line and exit code 1, never a traceback.
"""

from __future__ import annotations

import asyncio
import asyncio.sslproto
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


#: the bytes asyncio reads from a TLS socket at a time, per connection (asyncio's default: 256 KiB)
TLS_READ_BUFFER = 64 * 1024


def tune_tls_read_buffer() -> None:
    """Give every TLS connection asyncio opens from now on a 64 KiB read buffer instead of 256 KiB.

    asyncio allocates that buffer whole for each TLS connection and keeps it while the connection lives. A
    controller holds one long-lived connection per workload cluster (the watch of its Nodes), and the embedded
    management cluster serves the other end of each in the same process: at 100 Clusters the buffers were 45 of
    327 MiB of Python heap (``bench/simulation.py --tracemalloc``), half a MiB a workload cluster. 64 KiB moves
    data as fast (a TLS record holds at most 16 KiB; 40 MiB over one connection took 0.137 s against 0.133 s)
    and a connection pair takes 200 KiB instead of 583 KiB. asyncio has no setting for it: the size is the class
    attribute its TLS protocol reads when a connection is made, set here for the process, never raised.
    """
    asyncio.sslproto.SSLProtocol.max_size = min(asyncio.sslproto.SSLProtocol.max_size, TLS_READ_BUFFER)


def tune_long_running_process() -> None:
    """What a command that runs until a signal sets for itself once: the garbage collector and TLS buffers."""
    tune_garbage_collector()
    tune_tls_read_buffer()


def run_to_exit(main: Coroutine[Any, Any, int | None]) -> NoReturn:
    """``asyncio.run(main)``, then exit with the code it returns (0 for None), or 1 with the error it raised."""
    tune_long_running_process()
    try:
        code = asyncio.run(main)
    except ClusterClassError as err:
        click.echo(f"error: {err}", err=True)
        sys.exit(1)
    except OSError as err:
        click.echo(f"error: {err.strerror or err}{f': {err.filename}' if err.filename else ''}", err=True)
        sys.exit(1)
    sys.exit(code or 0)
