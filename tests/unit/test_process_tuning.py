"""What a long-running command sets for its process (clusterclass.cli.running.tune_long_running_process): the
cyclic garbage collector runs rarely (with CPython's defaults it took a fifth of the embedded management cluster's
CPU) and each TLS connection reads through a 64 KiB buffer, not 256 KiB (half a MiB a workload cluster with both
ends in one process; ``bench/simulation.py``)."""

from __future__ import annotations

import asyncio
import asyncio.sslproto
import gc
import ssl

import pytest

from clusterclass.cli.running import GC_THRESHOLDS, TLS_READ_BUFFER, run_to_exit
from clusterclass.kube.certs import CertificateAuthority
from clusterclass.kube.http.tls import load_key_pair


async def thresholds_inside() -> int:
    return 0 if gc.get_threshold() == GC_THRESHOLDS else 7


def test_a_long_running_command_runs_with_the_tuned_thresholds() -> None:
    saved, saved_buffer = gc.get_threshold(), asyncio.sslproto.SSLProtocol.max_size
    try:
        gc.set_threshold(700, 10, 10)
        with pytest.raises(SystemExit) as exited:
            run_to_exit(thresholds_inside())
        assert exited.value.code == 0
    finally:
        gc.set_threshold(*saved)
        asyncio.sslproto.SSLProtocol.max_size = saved_buffer


async def a_large_body_over_tls() -> int:
    """8 MiB both ways over one TLS connection; 0 when it arrives whole and the connection read in 64 KiB."""
    ca = CertificateAuthority("tuning-test")
    pair = ca.issue_server(["127.0.0.1"])
    server_context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    load_key_pair(server_context, pair.cert_pem, pair.key_pem)
    body = bytes(range(256)) * (8 * 4096)

    async def echo(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(await reader.readexactly(len(body)))
        await writer.drain()
        writer.close()

    server = await asyncio.start_server(echo, "127.0.0.1", 0, ssl=server_context)
    port = server.sockets[0].getsockname()[1]
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", port, ssl=ssl.create_default_context(cadata=ca.cert_pem.decode())
    )
    buffer_size = len(writer.transport._ssl_protocol._ssl_buffer)  # type: ignore[attr-defined]
    writer.write(body)
    echoed = await reader.readexactly(len(body))
    writer.close()
    server.close()
    await server.wait_closed()
    return 0 if echoed == body and buffer_size == TLS_READ_BUFFER else 7


def test_a_long_running_command_reads_tls_through_a_smaller_buffer() -> None:
    saved = asyncio.sslproto.SSLProtocol.max_size
    try:
        asyncio.sslproto.SSLProtocol.max_size = 256 * 1024
        with pytest.raises(SystemExit) as exited:
            run_to_exit(a_large_body_over_tls())
        assert exited.value.code == 0
    finally:
        asyncio.sslproto.SSLProtocol.max_size = saved
