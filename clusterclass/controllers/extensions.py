"""The Runtime SDK plugged into the controllers: hooks, external patches and variable discovery over HTTPS.

:class:`RuntimeSDK` holds one :class:`~clusterclass.runtimesdk.client.RuntimeClient` whose registry is the manager's
cache of ExtensionConfigs (what the ExtensionConfig controller discovered into their ``status.handlers``), and fills
the three seams of the controllers with it:

- :meth:`RuntimeSDK.call` is the topology controller's :class:`~clusterclass.controllers.topology.hooks.HookCaller`:
  every handler of a lifecycle hook whose ExtensionConfig selects the Cluster's namespace, with the whole Cluster in
  the request, answers aggregated (spec §8.1, §8.5);
- :meth:`RuntimeSDK.call_extension` is its :class:`~clusterclass.controllers.topology.hooks.ExtensionCaller`:
  GeneratePatches and ValidateTopology of the named handler, in the Cluster's namespace;
- :meth:`RuntimeSDK.discover_variables` is the ClusterClass controller's
  :data:`~clusterclass.controllers.clusterclass.VariableDiscovery` (spec §7.2 step 1).

Namespace selectors read the Namespace's labels from the manager's cache, started only when a selector needs it.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from clusterclass.api.objects import Obj, labels_of, name_of, namespace_of
from clusterclass.api.views import ClusterClass
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.kube.informer import Informer
from clusterclass.runtimesdk import catalog
from clusterclass.runtimesdk.client import Registry, RuntimeClient
from clusterclass.runtimesdk.discovery import discover_variables
from clusterclass.topology.hooks import HookResponse


class RuntimeSDK:
    """The Runtime SDK of one manager (module doc). :meth:`setup` before the manager starts; :meth:`close` after."""

    def __init__(self, manager: Manager) -> None:
        self.manager = manager
        self.extension_configs: Informer | None = None
        self.client = RuntimeClient(Registry(self._configs), namespace_labels=self._namespace_labels)

    async def setup(self) -> RuntimeSDK:
        self.extension_configs = await self.manager.informer(
            catalog.EXTENSION_CONFIG_API_VERSION, catalog.EXTENSION_CONFIG
        )
        return self

    async def close(self) -> None:
        await self.client.close()

    def _configs(self) -> list[Obj]:
        return self.extension_configs.list() if self.extension_configs is not None else []

    async def _namespace_labels(self, namespace: str) -> Mapping[str, str] | None:
        found = await self.manager.get("v1", "Namespace", "", namespace)
        return labels_of(found) if found is not None else None

    # -- lifecycle hooks -------------------------------------------------------------------------------------

    async def call(self, hook: str, cluster: Obj, request: Obj) -> HookResponse:
        """Every handler of lifecycle ``hook`` for ``cluster``; the aggregated answer."""
        body = {"cluster": cluster, **request}
        answer = await self.client.call_all(hook, body, namespace=namespace_of(cluster))
        return HookResponse(int(answer.get("retryAfterSeconds") or 0), str(answer.get("message") or ""))

    # -- external patches ----------------------------------------------------------------------------------

    async def call_extension(
        self, hook: str, name: str, request: Obj, *, namespace: str | None, settings: Mapping[str, str] | None
    ) -> Obj:
        return await self.client.call_extension(hook, name, request, namespace=namespace, settings=settings)

    # -- variable discovery -----------------------------------------------------------------------------------

    async def discover_variables(self, cluster_class: Obj) -> dict[str, Sequence[Any]]:
        """The variables each external patch with a ``discoverVariablesExtension`` returns, by patch name."""
        return await discover_variables(self.client, cluster_class)

    def cluster_classes_using(self, extension_config: Obj, cluster_classes: Sequence[Obj]) -> list[Obj]:
        """The ClusterClasses with a patch naming a handler of ``extension_config`` (their variables may change)."""
        suffix = f".{name_of(extension_config)}"
        found = []
        for cluster_class in cluster_classes:
            for _name, external in ClusterClass(cluster_class).external_patches:
                if any(
                    isinstance(external.get(key), str) and str(external[key]).endswith(suffix)
                    for key in ("generateExtension", "validateExtension", "discoverVariablesExtension")
                ):
                    found.append(cluster_class)
                    break
        return found
