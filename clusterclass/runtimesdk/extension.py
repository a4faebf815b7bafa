"""Writing a Runtime Extension in Python: a handler is a function per hook, served over TLS with discovery.

Upstream's Runtime SDK is Go only. Here an extension is an :class:`Extension` with handlers registered by
decorator, one per hook and name, sync or async::

    from clusterclass.runtimesdk import Extension, ExtensionFailure, json_patch_item, variable_value

    extension = Extension()

    @extension.generate_patches("generate-patches")
    def generate(request):
        items = []
        for item in request["items"]:
            if item["object"]["kind"] == "DockerMachinePoolTemplate":
                version = variable_value(item["variables"], "builtin.machinePool.version")
                items.append(json_patch_item(item["uid"], [
                    {"op": "add", "path": "/spec/template/spec/template/customImage",
                     "value": f"kindest/node:{version}"}]))
        return {"items": items}

    @extension.before_cluster_upgrade("hold-upgrades", timeout_seconds=5, failure_policy="Ignore")
    async def hold(request):
        return {"retryAfterSeconds": 30, "message": "waiting for the maintenance window"}

Requests and responses are the plain dicts of :mod:`clusterclass.runtimesdk.types` (typed there). A handler may
leave out ``apiVersion``, ``kind`` and ``status``: the answer is a ``Success`` of the hook's response kind. Raising
:class:`ExtensionFailure` answers ``Failure`` with its message; any other exception too, and is logged.

:meth:`Extension.app` is the aiohttp application: discovery at ``/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery``
lists every handler (name, hook, ``timeoutSeconds``, ``failurePolicy``), and each handler answers at
``/hooks.runtime.cluster.x-k8s.io/v1alpha1/<hook>/<name>``. :meth:`Extension.start` serves it over TLS with
``tls.crt``/``tls.key`` from a directory, reloaded when they change (``clusterclass extension serve``).
:class:`~clusterclass.runtimesdk.testing.ExtensionTester` calls handlers without a network.
"""

from __future__ import annotations

import inspect
import json
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

from aiohttp import web

from clusterclass.api.objects import Obj
from clusterclass.kube.certs import CertificateWatcher
from clusterclass.kube.client import Client
from clusterclass.runtimesdk import catalog
from clusterclass.runtimesdk.catalog import Hook

logger = logging.getLogger(__name__)

F = TypeVar("F", bound=Callable[..., Any])
#: the largest request accepted: a GeneratePatches request carries every template of a Cluster
MAX_BODY = 16 * 1024 * 1024


class ExtensionFailure(Exception):
    """Raised by a handler: the answer is ``status: Failure`` with this message."""


@dataclass(frozen=True)
class Handler:
    hook: Hook
    name: str
    function: Callable[[Any], Any]
    timeout_seconds: int
    failure_policy: str


class Extension:
    """A Runtime Extension: its handlers, discovery, and serving (module doc).

    ``client`` is a management-cluster :class:`~clusterclass.kube.client.Client` handlers may use (for instance to
    read a ConfigMap that says how to answer); ``clusterclass extension serve --kubeconfig`` sets it.
    """

    def __init__(self, name: str = "extension") -> None:
        self.name = name
        self.client: Client | None = None
        self._handlers: dict[tuple[str, str], Handler] = {}

    # -- registering handlers ----------------------------------------------------------------------------

    def handler(
        self, hook: str, name: str | None = None, *, timeout_seconds: int = 10, failure_policy: str = "Fail"
    ) -> Callable[[F], F]:
        """Register the decorated function as handler ``name`` (default: its name, dashed) of ``hook``."""
        spec = catalog.hook(hook)
        if failure_policy not in (catalog.FAILURE_POLICY_FAIL, catalog.FAILURE_POLICY_IGNORE):
            raise ValueError(f"failure_policy must be Fail or Ignore, not {failure_policy!r}")
        if not 1 <= timeout_seconds <= 30:
            raise ValueError("timeout_seconds must be between 1 and 30, as upstream's discovery allows")

        def register(function: F) -> F:
            handler_name = name or function.__name__.replace("_", "-")
            if (spec.name, handler_name) in self._handlers:
                raise ValueError(f"{spec.name} handler {handler_name!r} is registered twice")
            self._handlers[(spec.name, handler_name)] = Handler(
                spec, handler_name, function, timeout_seconds, failure_policy
            )
            return function

        return register

    def generate_patches(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        return self.handler(catalog.GENERATE_PATCHES, name, **options)

    def validate_topology(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        return self.handler(catalog.VALIDATE_TOPOLOGY, name, **options)

    def discover_variables(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        return self.handler(catalog.DISCOVER_VARIABLES, name, **options)

    def before_cluster_create(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        return self.handler(catalog.BEFORE_CLUSTER_CREATE, name, **options)

    def after_control_plane_initialized(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        return self.handler(catalog.AFTER_CONTROL_PLANE_INITIALIZED, name, **options)

    def before_cluster_upgrade(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        return self.handler(catalog.BEFORE_CLUSTER_UPGRADE, name, **options)

    def after_control_plane_upgrade(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        return self.handler(catalog.AFTER_CONTROL_PLANE_UPGRADE, name, **options)

    def after_cluster_upgrade(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        return self.handler(catalog.AFTER_CLUSTER_UPGRADE, name, **options)

    def before_cluster_delete(self, name: str | None = None, **options: Any) -> Callable[[F], F]:
        return self.handler(catalog.BEFORE_CLUSTER_DELETE, name, **options)

    @property
    def handlers(self) -> list[Handler]:
        return list(self._handlers.values())

    # -- answering -----------------------------------------------------------------------------------------

    def discovery(self) -> Obj:
        """The DiscoveryResponse: every handler with its hook, timeout and failure policy."""
        return {
            "apiVersion": catalog.API_VERSION,
            "kind": "DiscoveryResponse",
            "status": "Success",
            "message": "",
            "handlers": [
                {
                    "name": h.name,
                    "requestHook": {"apiVersion": catalog.API_VERSION, "hook": h.hook.name},
                    "timeoutSeconds": h.timeout_seconds,
                    "failurePolicy": h.failure_policy,
                }
                for h in self._handlers.values()
            ],
        }

    async def answer(self, hook: str, handler: str, request: Obj) -> Obj:
        """What handler ``handler`` of ``hook`` answers ``request`` (a Failure when it fails or does not exist)."""
        spec = catalog.HOOKS.get(hook)
        found = self._handlers.get((hook, handler))
        response_kind = spec.response_kind if spec is not None else f"{hook}Response"
        if spec is None or found is None:
            return _failure(response_kind, f"no {hook} handler named {handler!r} in extension {self.name!r}")
        try:
            result = found.function(request)
            if inspect.isawaitable(result):
                result = await result
        except ExtensionFailure as err:
            return _failure(response_kind, str(err))
        except Exception as err:  # a bug in the handler: answer Failure, keep serving
            logger.exception("%s handler %s failed", hook, handler)
            return _failure(response_kind, f"{type(err).__name__}: {err}")
        answer: Obj = dict(result or {})
        answer.setdefault("apiVersion", catalog.API_VERSION)
        answer.setdefault("kind", response_kind)
        answer.setdefault("status", "Success")
        answer.setdefault("message", "")
        if spec.retries:
            answer.setdefault("retryAfterSeconds", 0)
        return answer

    # -- serving ---------------------------------------------------------------------------------------------

    def app(self) -> web.Application:
        """The aiohttp application serving discovery and every handler."""
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_post(catalog.DISCOVERY_PATH, self._serve_discovery)
        app.router.add_post(f"/{catalog.GROUP}/{catalog.VERSION}/{{hook}}/{{handler}}", self._serve_handler)
        return app

    async def _serve_discovery(self, request: web.Request) -> web.Response:
        return web.json_response(self.discovery())

    async def _serve_handler(self, request: web.Request) -> web.Response:
        by_lowercase = {name.lower(): name for name in catalog.HOOKS}
        hook = by_lowercase.get(request.match_info["hook"])
        if hook is None:
            raise web.HTTPNotFound(text=f"unknown hook {request.match_info['hook']!r}")
        try:
            body = json.loads(await request.read())
        except ValueError as err:
            raise web.HTTPBadRequest(text=f"the request is not JSON: {err}") from err
        if not isinstance(body, dict):
            raise web.HTTPBadRequest(text="the request is not a JSON object")
        return web.json_response(await self.answer(hook, request.match_info["handler"], body))

    async def start(
        self, *, host: str = "0.0.0.0", port: int = 9443, cert_dir: str | Path | None = None
    ) -> RunningExtension:
        """Serve over TLS with ``tls.crt``/``tls.key`` of ``cert_dir`` (plain HTTP without one, for tests)."""
        certificates = CertificateWatcher(cert_dir) if cert_dir is not None else None
        runner = web.AppRunner(self.app(), access_log=None)
        await runner.setup()
        site = web.TCPSite(runner, host, port, ssl_context=certificates.context if certificates else None)
        await site.start()
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        bound = int(sockets[0].getsockname()[1]) if sockets else port
        if certificates is not None:
            certificates.start()
        scheme = "https" if certificates else "http"
        logger.info("extension %s: %d handlers on %s://%s:%s", self.name, len(self._handlers), scheme, host, bound)
        return RunningExtension(runner, certificates, bound)


@dataclass
class RunningExtension:
    runner: web.AppRunner
    certificates: CertificateWatcher | None
    port: int

    async def stop(self) -> None:
        if self.certificates is not None:
            await self.certificates.stop()
        await self.runner.cleanup()


def _failure(kind: str, message: str) -> Obj:
    return {"apiVersion": catalog.API_VERSION, "kind": kind, "status": "Failure", "message": message}
