"""Calling Runtime Extensions: which handlers exist, and the HTTPS calls with upstream's rules (spec §8.1).

**Registry.** An ExtensionConfig says where an extension is (``spec.clientConfig``: a ``url``, or a Service with
namespace, name, port and path; a ``caBundle``), which namespaces it serves (``spec.namespaceSelector``), its
``spec.settings``, and — once the ExtensionConfig controller discovered them — its handlers in ``status.handlers``,
each named ``<handler>.<ExtensionConfig>`` with its hook, ``timeoutSeconds`` and ``failurePolicy``. A ClusterClass
names handlers by that full name. :class:`Registry` reads the handlers from whatever ExtensionConfigs it is given
(the controllers give it their informer cache, ``plan`` the input files), so there is no second copy to keep in step.

**Calls** (:class:`RuntimeClient`). A POST of the request (``apiVersion`` ``hooks.runtime.cluster.x-k8s.io/v1alpha1``,
``kind`` ``<Hook>Request``, ``settings`` = the ExtensionConfig's overlaid by the caller's) to
``<base>/hooks.runtime.cluster.x-k8s.io/v1alpha1/<hook>/<handler>?timeout=<N>s``, over TLS trusting ``caBundle``:

- a handler that cannot be reached, times out or answers garbage fails the call — unless its ``failurePolicy`` is
  ``Ignore``, which makes it an empty success;
- an answer with ``status: Failure`` fails the call whatever the policy:
  ``failed to call extension handler "<name>": got failure response``;
- :meth:`RuntimeClient.call_extension` calls one named handler (a ClusterClass patch) and refuses a namespace its
  ExtensionConfig does not select; :meth:`RuntimeClient.call_all` calls every handler of a lifecycle hook whose
  ExtensionConfig selects the namespace and aggregates: Success, the lowest non-zero ``retryAfterSeconds``, the
  messages joined with ``, ``; no handler at all is a Success.

:meth:`RuntimeClient.discover` asks an extension for its handlers, for the ExtensionConfig controller.
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass

import aiohttp

from clusterclass.api.objects import Obj, dig, name_of
from clusterclass.errors import ClusterClassError
from clusterclass.kube.selectors import SelectorError, as_selector
from clusterclass.runtimesdk import catalog
from clusterclass.runtimesdk.catalog import Hook

logger = logging.getLogger(__name__)

#: discovery has no handler timeout of its own; upstream gives it 10 s
DISCOVERY_TIMEOUT = 10.0


class ExtensionError(ClusterClassError):
    """A Runtime Extension could not be called, or answered with a failure."""


@dataclass(frozen=True)
class RegisteredHandler:
    """One handler of one ExtensionConfig, as its ``status.handlers`` entry says."""

    #: ``<handler>.<ExtensionConfig name>``: what a ClusterClass refers to
    name: str
    #: the handler's own name: the last segment of its path
    handler: str
    hook: Hook
    timeout_seconds: int
    failure_policy: str
    extension_config: Obj

    @property
    def ignore_failures(self) -> bool:
        return self.failure_policy == catalog.FAILURE_POLICY_IGNORE


def registered_handlers(extension_config: Obj) -> list[RegisteredHandler]:
    """The handlers ``extension_config``'s status lists (unknown hooks and malformed entries are skipped)."""
    config_name = name_of(extension_config)
    found = []
    for entry in dig(extension_config, "status", "handlers") or []:
        if not isinstance(entry, Mapping):
            continue
        hook = catalog.HOOKS.get(str(dig(entry, "requestHook", "hook") or ""))
        name = str(entry.get("name") or "")
        if hook is None or not name:
            continue
        found.append(
            RegisteredHandler(
                name=name,
                handler=name.removesuffix(f".{config_name}"),
                hook=hook,
                timeout_seconds=int(entry.get("timeoutSeconds") or catalog.DEFAULT_TIMEOUT_SECONDS),
                failure_policy=str(entry.get("failurePolicy") or catalog.FAILURE_POLICY_FAIL),
                extension_config=extension_config,
            )
        )
    return found


class Registry:
    """The handlers of the ExtensionConfigs ``configs()`` returns, read afresh on every lookup."""

    def __init__(self, configs: Callable[[], Iterable[Obj]]) -> None:
        self._configs = configs

    def handlers(self) -> list[RegisteredHandler]:
        return sorted(
            (handler for config in self._configs() for handler in registered_handlers(config)), key=lambda h: h.name
        )

    def get(self, name: str) -> RegisteredHandler | None:
        return next((h for h in self.handlers() if h.name == name), None)

    def for_hook(self, hook: str) -> list[RegisteredHandler]:
        return [h for h in self.handlers() if h.hook.name == hook]


#: the labels of a namespace (None when it does not exist), for ExtensionConfigs' namespace selectors
NamespaceLabels = Callable[[str], Awaitable[Mapping[str, str] | None]]


def base_url(extension_config: Obj) -> str:
    """Where an extension is: its ``url``, or ``https://<service>.<namespace>.svc:<port><path>``."""
    client_config = dig(extension_config, "spec", "clientConfig") or {}
    url = client_config.get("url")
    if isinstance(url, str) and url:
        return url.rstrip("/")
    service = client_config.get("service")
    if not isinstance(service, Mapping) or not service.get("name") or not service.get("namespace"):
        raise ExtensionError(f"ExtensionConfig {name_of(extension_config)} has neither a url nor a service")
    path = str(service.get("path") or "").rstrip("/")
    port = int(service.get("port") or 443)
    return f"https://{service['name']}.{service['namespace']}.svc:{port}{path}"


class RuntimeClient:
    """Calls the handlers of a :class:`Registry` (module doc); ``namespace_labels`` serves namespace selectors."""

    def __init__(self, registry: Registry, *, namespace_labels: NamespaceLabels | None = None) -> None:
        self.registry = registry
        self.namespace_labels = namespace_labels
        self._session: aiohttp.ClientSession | None = None
        self._contexts: dict[str, ssl.SSLContext] = {}

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()
            self._session = None

    # -- discovery -------------------------------------------------------------------------------------

    async def discover(self, extension_config: Obj) -> list[Obj]:
        """The ``status.handlers`` for ``extension_config``: its extension's discovery answer, names suffixed
        with the ExtensionConfig's, defaults filled in (:class:`ExtensionError` when it cannot be had)."""
        request = {"apiVersion": catalog.API_VERSION, "kind": "DiscoveryRequest"}
        url = base_url(extension_config) + catalog.DISCOVERY_PATH
        answer = await self._post(extension_config, url, request, DISCOVERY_TIMEOUT, what="discovery")
        if answer.get("status") == "Failure":
            raise ExtensionError(f"discovery failed with message {answer.get('message', '')!r}")
        handlers = []
        for entry in answer.get("handlers") or []:
            hook = dig(entry, "requestHook", "hook") if isinstance(entry, Mapping) else None
            if not isinstance(hook, str) or not entry.get("name"):
                raise ExtensionError(f"discovery answered a handler without a name or hook: {entry!r}")
            if hook not in catalog.HOOKS:
                raise ExtensionError(f"handler {entry['name']!r} is for unknown hook {hook!r}")
            policy = entry.get("failurePolicy") or catalog.FAILURE_POLICY_FAIL
            if policy not in (catalog.FAILURE_POLICY_FAIL, catalog.FAILURE_POLICY_IGNORE):
                raise ExtensionError(f"handler {entry['name']!r} has failurePolicy {policy!r}: not Fail or Ignore")
            handlers.append(
                {
                    "name": f"{entry['name']}.{name_of(extension_config)}",
                    "requestHook": {
                        "apiVersion": dig(entry, "requestHook", "apiVersion") or catalog.API_VERSION,
                        "hook": hook,
                    },
                    "timeoutSeconds": int(entry.get("timeoutSeconds") or catalog.DEFAULT_TIMEOUT_SECONDS),
                    "failurePolicy": policy,
                }
            )
        return handlers

    # -- calls -----------------------------------------------------------------------------------------

    async def call_extension(
        self,
        hook: str,
        name: str,
        request: Obj,
        *,
        namespace: str | None = None,
        settings: Mapping[str, str] | None = None,
        accept_failure: bool = False,
    ) -> Obj:
        """Call the handler ``name`` (``<handler>.<ExtensionConfig>``) of ``hook``; its answer.

        ``accept_failure`` returns a ``status: Failure`` answer instead of raising (the caller words the error).
        """
        handler = self.registry.get(name)
        if handler is None:
            raise ExtensionError(f'failed to call extension handler "{name}": handler is not registered')
        if handler.hook.name != hook:
            raise ExtensionError(
                f'failed to call extension handler "{name}": it is a {handler.hook.name} handler, not {hook}'
            )
        if namespace is not None and not await self._selects(handler, namespace):
            raise ExtensionError(
                f'failed to call extension handler "{name}": its ExtensionConfig '
                f"{name_of(handler.extension_config)} does not select namespace {namespace!r}"
            )
        return await self._call(handler, request, settings, accept_failure=accept_failure)

    async def call_all(self, hook: str, request: Obj, *, namespace: str) -> Obj:
        """Call every handler of lifecycle ``hook`` that serves ``namespace``; the aggregated answer."""
        spec = catalog.hook(hook)
        handlers = [h for h in self.registry.for_hook(hook) if await self._selects(h, namespace)]
        answers = [await self._call(h, request, None) for h in handlers]
        aggregate: Obj = {"apiVersion": catalog.API_VERSION, "kind": spec.response_kind, "status": "Success"}
        messages = [str(a.get("message")) for a in answers if a.get("message")]
        aggregate["message"] = ", ".join(messages)
        if spec.retries:
            retries = [int(a.get("retryAfterSeconds") or 0) for a in answers]
            aggregate["retryAfterSeconds"] = min((r for r in retries if r > 0), default=0)
        return aggregate

    async def _selects(self, handler: RegisteredHandler, namespace: str) -> bool:
        selector = dig(handler.extension_config, "spec", "namespaceSelector")
        if not selector:  # no selector, or {}: every namespace (upstream defaults it to {})
            return True
        try:
            parsed = as_selector(selector)
        except SelectorError as err:
            raise ExtensionError(
                f"ExtensionConfig {name_of(handler.extension_config)} has an invalid namespaceSelector: {err}"
            ) from err
        if self.namespace_labels is None:
            raise ExtensionError(
                f"ExtensionConfig {name_of(handler.extension_config)} selects namespaces, and no namespace can be read"
            )
        labels = await self.namespace_labels(namespace)
        return labels is not None and parsed.matches(labels)

    async def _call(
        self,
        handler: RegisteredHandler,
        request: Obj,
        settings: Mapping[str, str] | None,
        *,
        accept_failure: bool = False,
    ) -> Obj:
        spec = handler.hook
        body = dict(request)
        body["apiVersion"] = catalog.API_VERSION
        body["kind"] = spec.request_kind
        merged = {**(dig(handler.extension_config, "spec", "settings") or {}), **(settings or {})}
        if merged:
            body["settings"] = merged
        url = f"{base_url(handler.extension_config)}{spec.path(handler.handler)}?timeout={handler.timeout_seconds}s"
        try:
            answer = await self._post(handler.extension_config, url, body, float(handler.timeout_seconds), what=url)
        except ExtensionError as err:
            if handler.ignore_failures:
                logger.info("extension handler %s failed, ignored (failurePolicy Ignore): %s", handler.name, err)
                return _empty_success(spec)
            raise ExtensionError(f'failed to call extension handler "{handler.name}": {err}') from err
        if answer.get("status") != "Success" and not accept_failure:
            message = answer.get("message")
            detail = f" with message {message!r}" if message else ""
            raise ExtensionError(f'failed to call extension handler "{handler.name}": got failure response{detail}')
        return answer

    async def _post(self, extension_config: Obj, url: str, body: Obj, timeout: float, *, what: str) -> Obj:
        session = self._session_now()
        try:
            async with session.post(
                url,
                data=json.dumps(body, separators=(",", ":")),
                headers={"Content-Type": "application/json"},
                ssl=self._ssl(extension_config),
                timeout=aiohttp.ClientTimeout(total=timeout),
            ) as response:
                data = await response.read()
                if response.status != 200:
                    snippet = data[:300].decode(errors="replace")
                    raise ExtensionError(f"{what} answered HTTP {response.status}: {snippet}")
        except (aiohttp.ClientError, TimeoutError, OSError) as err:
            raise ExtensionError(f"{what}: {type(err).__name__}: {err or 'no answer'}") from err
        try:
            answer = json.loads(data)
        except ValueError as err:
            raise ExtensionError(f"{what}: the answer is not JSON: {err}") from err
        if not isinstance(answer, dict):
            raise ExtensionError(f"{what}: the answer is not a JSON object")
        return answer

    def _session_now(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession()
        return self._session

    def _ssl(self, extension_config: Obj) -> ssl.SSLContext | bool:
        bundle = dig(extension_config, "spec", "clientConfig", "caBundle")
        if not isinstance(bundle, str) or not bundle:
            return True  # the system's trust
        context = self._contexts.get(bundle)
        if context is None:
            try:
                context = ssl.create_default_context(cadata=base64.b64decode(bundle).decode())
            except (ValueError, ssl.SSLError) as err:
                what = f"ExtensionConfig {name_of(extension_config)}"
                raise ExtensionError(f"{what}: caBundle is not usable: {err}") from err
            self._contexts[bundle] = context
        return context


def _empty_success(hook: Hook) -> Obj:
    answer: Obj = {"apiVersion": catalog.API_VERSION, "kind": hook.response_kind, "status": "Success", "message": ""}
    if hook.retries:
        answer["retryAfterSeconds"] = 0
    return answer
