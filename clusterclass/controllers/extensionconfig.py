"""The ExtensionConfig controller: discovers what each Runtime Extension serves (spec §8.1), as upstream's does.

An ExtensionConfig registers an extension; its handlers are whatever the extension's discovery endpoint answers.
One reconcile of an ExtensionConfig (paused or deleting ones are skipped):

1. with the annotation ``runtime.cluster.x-k8s.io/inject-ca-from-secret: <namespace>/<name>``, the ``ca.crt`` of
   that Secret becomes ``spec.clientConfig.caBundle`` (how cert-manager's CA reaches an extension's config);
2. discovery: a POST to ``<extension>/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery``; its handlers, renamed
   ``<handler>.<ExtensionConfig>`` with ``timeoutSeconds`` (10) and ``failurePolicy`` (``Fail``) defaulted, become
   ``status.handlers``, and condition ``Discovered`` is True — or, when discovery fails, False/``DiscoveryFailed``/
   Error ``error in discovery: <why>``, the handlers found before are kept, and the reconcile is retried with
   backoff. The v1beta2 condition of the same type (v1.14's) is written beside it: True/``Discovered``, or
   False/``NotDiscovered`` ``Error in discovery: <why>``.

The registry the topology and ClusterClass controllers call through is the cache of ExtensionConfigs itself
(:mod:`clusterclass.controllers.extensions`), so a status written here is what they see next. Every object is
looked at again each ``--sync-period``, which re-runs discovery as upstream's resync does.
"""

from __future__ import annotations

import base64
import logging
from datetime import UTC, datetime

from clusterclass.api import constants as c
from clusterclass.api.conditions import (
    Condition,
    MetaCondition,
    conditions_of,
    false,
    meta_conditions_of,
    true,
    with_conditions,
    with_meta_conditions,
)
from clusterclass.api.objects import Obj, annotations_of, dig, name_of, namespace_of
from clusterclass.controllers.runtime.controller import Controller, split_key
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.controllers.runtime.predicates import has_filter_label
from clusterclass.errors import ClusterClassError
from clusterclass.kube.errors import ApiError
from clusterclass.kube.gotext import rfc3339
from clusterclass.runtimesdk import catalog
from clusterclass.runtimesdk.client import RuntimeClient

logger = logging.getLogger(__name__)

CONTROLLER_NAME = "extensionconfig"
DISCOVERED = "Discovered"
DISCOVERY_FAILED = "DiscoveryFailed"
NOT_DISCOVERED = "NotDiscovered"  # the v1beta2 condition's reason when discovery fails
ANNOTATION_INJECT_CA = "runtime.cluster.x-k8s.io/inject-ca-from-secret"


class DiscoveryFailed(ClusterClassError):
    pass


class ExtensionConfigController:
    """Reconciles ExtensionConfigs (module doc). Create, then :meth:`setup` before the manager starts."""

    def __init__(
        self, manager: Manager, client: RuntimeClient, *, workers: int = 10, watch_filter: str | None = None
    ) -> None:
        self.manager = manager
        self.client = client
        self.controller = Controller(CONTROLLER_NAME, self.reconcile, workers=workers, clock=manager.clock)
        self._filter = has_filter_label(watch_filter)

    async def setup(self) -> ExtensionConfigController:
        configs = await self.manager.informer(catalog.EXTENSION_CONFIG_API_VERSION, catalog.EXTENSION_CONFIG)
        self.controller.watch(configs, lambda obj: [name_of(obj)], self._filter)
        self.manager.add(self.controller)
        return self

    async def reconcile(self, key: str) -> float | None:
        _, name = split_key(key)
        config = self.manager.reader.get(catalog.EXTENSION_CONFIG_API_VERSION, catalog.EXTENSION_CONFIG, "", name)
        if config is None:
            return None
        if c.ANNOTATION_PAUSED in annotations_of(config) or dig(config, "metadata", "deletionTimestamp"):
            return None
        config = await self._inject_ca(config)
        try:
            handlers = await self.client.discover(config)
        except ClusterClassError as err:
            message = f"error in discovery: {err}"
            await self._write_status(
                config,
                None,
                false(DISCOVERED, DISCOVERY_FAILED, "Error", message),
                MetaCondition(DISCOVERED, "False", NOT_DISCOVERED, f"Error in discovery: {err}"),
            )
            raise DiscoveryFailed(f"ExtensionConfig {name}: {message}") from err
        await self._write_status(config, handlers, true(DISCOVERED), MetaCondition(DISCOVERED, "True", DISCOVERED))
        return None

    async def _inject_ca(self, config: Obj) -> Obj:
        source = annotations_of(config).get(ANNOTATION_INJECT_CA)
        if not source:
            return config
        namespace, _, secret_name = source.partition("/")
        if not namespace or not secret_name:
            raise DiscoveryFailed(f"{ANNOTATION_INJECT_CA} must be <namespace>/<name>, not {source!r}")
        try:
            secret = await self.manager.client.get("v1", "Secret", secret_name, namespace=namespace)
        except ApiError as err:
            raise DiscoveryFailed(f"failed to get the CA Secret {source} to inject: {err}") from err
        ca = dig(secret, "data", "ca.crt")
        if not isinstance(ca, str) or not ca:
            raise DiscoveryFailed(f"the CA Secret {source} has no ca.crt")
        bundle = base64.b64encode(base64.b64decode(ca)).decode()
        if dig(config, "spec", "clientConfig", "caBundle") == bundle:
            return config
        return await self.manager.client.patch(
            catalog.EXTENSION_CONFIG_API_VERSION,
            catalog.EXTENSION_CONFIG,
            name_of(config),
            {
                "metadata": {"resourceVersion": dig(config, "metadata", "resourceVersion")},
                "spec": {"clientConfig": {"caBundle": bundle}},
            },
        )

    async def _write_status(
        self, config: Obj, handlers: list[Obj] | None, condition: Condition, current: MetaCondition
    ) -> None:
        """Handlers and both generations of the condition: v1alpha1's ``status.conditions`` and the v1beta2
        conditions (``status.v1beta2.conditions`` here, ``status.conditions`` of the stored v1beta2 object)."""
        status: Obj = {}
        if handlers is not None and handlers != dig(config, "status", "handlers"):
            status["handlers"] = handlers
        now = rfc3339(datetime.now(UTC))
        conditions = with_conditions(conditions_of(config), [condition], now)
        if conditions is not None:
            status["conditions"] = conditions
        generation = dig(config, "metadata", "generation")
        updated_current = with_meta_conditions(meta_conditions_of(config), [current], now, generation)
        if updated_current is not None:
            status["v1beta2"] = {"conditions": updated_current}
        if not status:
            return
        await self.manager.client.patch(
            catalog.EXTENSION_CONFIG_API_VERSION,
            catalog.EXTENSION_CONFIG,
            name_of(config),
            {"metadata": {"resourceVersion": dig(config, "metadata", "resourceVersion")}, "status": status},
            namespace=namespace_of(config) or None,
            status=True,
        )
