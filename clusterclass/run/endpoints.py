"""The metrics and health endpoints of ``clusterclass run``: ``/metrics``, ``/healthz`` and ``/readyz``.

As a controller-runtime manager serves them: Prometheus text at ``--metrics-bind-addr`` (default
``localhost:8080``, ``0`` turns it off), and the probes a Deployment points its liveness and readiness at on
``--health-addr`` (default ``:9440``). ``/healthz`` answers ``ok`` while the process runs; ``/readyz`` answers
``ok`` once every check passes (the caches have their first lists; the webhook server listens), else 500 naming
the checks that fail. ``?verbose`` lists every check, as kube-apiserver's probes do.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field

from aiohttp import web

from clusterclass.controllers.runtime.metrics import CONTENT_TYPE, Metrics

logger = logging.getLogger(__name__)

#: a readiness check: None when it passes, else why not
Check = Callable[[], str | None]


class BindAddressError(ValueError):
    """A bind address that is not ``host:port``, ``:port`` or ``0``."""


def parse_bind_address(text: str, flag: str) -> tuple[str, int] | None:
    """``host:port`` or ``:port`` (all interfaces) → (host, port); ``0`` → None (the endpoint is off)."""
    if text.strip() == "0":
        return None
    host, sep, port = text.rpartition(":")
    if not sep or not port.isdigit() or not 0 <= int(port) <= 65535:
        raise BindAddressError(f"{flag}: {text!r} is not host:port, :port or 0")
    return (host.strip("[]") or "0.0.0.0"), int(port)


@dataclass
class Endpoints:
    """The metrics server and the probe server (either may be off)."""

    metrics: Metrics
    metrics_address: tuple[str, int] | None
    health_address: tuple[str, int] | None
    checks: dict[str, Check] = field(default_factory=dict)
    _runners: list[web.AppRunner] = field(default_factory=list)
    #: the ports bound (a port 0 asked for is the one the system gave)
    ports: dict[str, int] = field(default_factory=dict)

    async def start(self) -> Endpoints:
        if self.metrics_address is not None:
            app = web.Application()
            app.router.add_get("/metrics", self._metrics)
            self.ports["metrics"] = await self._serve(app, self.metrics_address)
            logger.info("serving metrics on http://%s:%s/metrics", self.metrics_address[0], self.ports["metrics"])
        if self.health_address is not None:
            app = web.Application()
            app.router.add_get("/healthz", self._healthz)
            app.router.add_get("/readyz", self._readyz)
            self.ports["health"] = await self._serve(app, self.health_address)
            logger.info("serving probes on http://%s:%s/readyz", self.health_address[0], self.ports["health"])
        return self

    async def _serve(self, app: web.Application, address: tuple[str, int]) -> int:
        runner = web.AppRunner(app, access_log=None)
        await runner.setup()
        self._runners.append(runner)
        site = web.TCPSite(runner, address[0], address[1])
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        return int(sockets[0].getsockname()[1]) if sockets else address[1]

    async def stop(self) -> None:
        for runner in self._runners:
            await runner.cleanup()
        self._runners.clear()

    async def _metrics(self, request: web.Request) -> web.Response:
        return web.Response(body=self.metrics.exposition(), headers={"Content-Type": CONTENT_TYPE})

    async def _healthz(self, request: web.Request) -> web.Response:
        return web.Response(text="[+]ping ok\nhealthz check passed\n" if "verbose" in request.query else "ok")

    async def _readyz(self, request: web.Request) -> web.Response:
        results = {name: check() for name, check in self.checks.items()}
        failing = {name: why for name, why in results.items() if why is not None}
        if "verbose" in request.query or failing:
            lines = [f"[+]{name} ok" if why is None else f"[-]{name} failed: {why}" for name, why in results.items()]
            lines.append("readyz check failed" if failing else "readyz check passed")
            return web.Response(text="\n".join(lines) + "\n", status=500 if failing else 200)
        return web.Response(text="ok")
