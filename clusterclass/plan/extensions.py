"""Runtime Extensions for an offline ``plan``: external patches and discovered variables from running extensions.

Upstream's plan runs without a runtime client, so a ClusterClass with external patches cannot be planned. Here
``plan`` can call extensions that are running somewhere it can reach:

- every ExtensionConfig given as input is asked for its handlers (discovery) at its ``url`` — a Service address
  resolves only inside the cluster, so give ``--extension-url`` for those;
- ``--extension-url https://host:port`` (with ``--extension-ca FILE`` for a private CA) registers one more extension;
  its handlers answer to any ExtensionConfig name, since the ClusterClass names them as ``<handler>.<config>``.

The topology pipeline is synchronous and the calls are not: :class:`PlanExtensions` runs them on an event loop of its
own, so it must be used outside any running loop (as the CLI does), and closed after.
"""

from __future__ import annotations

import asyncio
import base64
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.errors import ClusterClassError
from clusterclass.runtimesdk import catalog
from clusterclass.runtimesdk.client import RegisteredHandler, Registry, RuntimeClient
from clusterclass.runtimesdk.discovery import discover_variables
from clusterclass.topology.patches.external import ExtensionCallFailed

#: the name given to the extension of ``--extension-url``
URL_EXTENSION = "plan-extension-url"


class ExtensionsUnavailable(ClusterClassError):
    """An extension the plan needs could not be asked for its handlers."""


class _PlanRegistry(Registry):
    """A registry where the ``--extension-url`` extension's handlers answer to ``<handler>.<any name>``."""

    def get(self, name: str) -> RegisteredHandler | None:
        found = super().get(name)
        if found is not None:
            return found
        handler = name.split(".", 1)[0]
        return next(
            (h for h in self.handlers() if name_of(h.extension_config) == URL_EXTENSION and h.handler == handler),
            None,
        )


class PlanExtensions:
    """The extensions a plan may call (module doc): :meth:`call` for external patches, :meth:`discover_variables`."""

    def __init__(self, configs: Iterable[Obj] = (), *, url: str | None = None, ca_pem: bytes | None = None) -> None:
        given = [dict(config) for config in configs]
        if url is not None:
            client_config: dict[str, Any] = {"url": url}
            if ca_pem is not None:
                client_config["caBundle"] = base64.b64encode(ca_pem).decode()
            given.append(
                {
                    "apiVersion": catalog.EXTENSION_CONFIG_API_VERSION,
                    "kind": catalog.EXTENSION_CONFIG,
                    "metadata": {"name": URL_EXTENSION},
                    "spec": {"clientConfig": client_config},
                }
            )
        self._configs: list[Obj] = []
        self._loop = asyncio.new_event_loop()
        self.client = RuntimeClient(_PlanRegistry(lambda: self._configs))
        try:
            for config in given:
                self._configs.append({**config, "status": {"handlers": self._discover(config)}})
        except BaseException:
            self.close()
            raise

    def _discover(self, config: Obj) -> list[Obj]:
        try:
            return self._loop.run_until_complete(self.client.discover(config))
        except ClusterClassError as err:
            service = dig(config, "spec", "clientConfig", "service")
            hint = " (a Service is reachable only inside its cluster: give --extension-url)" if service else ""
            what = "--extension-url" if name_of(config) == URL_EXTENSION else f"ExtensionConfig {name_of(config)}"
            raise ExtensionsUnavailable(f"{what}: cannot discover its handlers: {err}{hint}") from err

    def call(self, hook: str, handler: str, request: Obj, settings: Mapping[str, str] | None) -> Obj:
        """:class:`~clusterclass.topology.patches.external.ExtensionCalls` for the pipeline."""
        try:
            return self._loop.run_until_complete(self.client.call_extension(hook, handler, request, settings=settings))
        except ClusterClassError as err:
            raise ExtensionCallFailed(str(err)) from err

    def discover_variables(self, cluster_class: Obj) -> dict[str, Sequence[Any]]:
        return self._loop.run_until_complete(discover_variables(self.client, cluster_class, namespace_selectors=False))

    def close(self) -> None:
        if not self._loop.is_closed():
            self._loop.run_until_complete(self.client.close())
            self._loop.close()
