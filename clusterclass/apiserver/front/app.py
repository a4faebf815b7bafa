"""The aiohttp application: routes, authentication, and errors as ``Status`` bodies.

:func:`make_app` serves one :class:`~clusterclass.apiserver.store.MemoryStore` under kube-apiserver's
URL layout:

- ``/version``, ``/healthz``, ``/livez``, ``/readyz`` (also ``/<check>/<name>`` and ``?verbose``);
- discovery (:mod:`.discovery`): ``/api``, ``/api/v1``, ``/apis``, ``/apis/<group>``,
  ``/apis/<group>/<version>``, plain or aggregated;
- ``/openapi/v3`` and its group-version documents (:mod:`.openapi`);
- resources under ``/api/v1/...`` and ``/apis/<group>/<version>/...`` (:mod:`.handlers`).

Authentication is by client certificate, as kube-apiserver does it with ``--client-ca-file``: the
TLS layer (see :mod:`.serving`) verifies a presented certificate against the CA, and a request
without one is 401 ``Unauthorized``, except the version and health endpoints, which kube-apiserver's
default policy lets anyone read. Every authenticated user may do everything (the certificates the
front issues are ``system:masters``, which bypasses RBAC on a real server too).

Any :class:`~clusterclass.kube.errors.ApiError` raised while handling a request becomes its Status
with the matching HTTP code; any other exception is logged and answered with a 500 Status, so a
client never sees a traceback.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from aiohttp import web

from clusterclass import __version__
from clusterclass.apiserver.front import discovery, openapi
from clusterclass.apiserver.front.handlers import DEPRECATION_WARNING, WRITE_WARNINGS, ResourceHandlers, warning_header
from clusterclass.apiserver.front.negotiation import negotiate
from clusterclass.apiserver.front.paths import resolve
from clusterclass.apiserver.front.responses import (
    error_response,
    json_response,
    method_not_allowed,
    not_found,
    unauthorized,
)
from clusterclass.apiserver.front.watchstream import OPEN_WATCHES
from clusterclass.apiserver.store import MemoryStore
from clusterclass.kube.errors import ApiError, make_status

log = logging.getLogger(__name__)

#: the Kubernetes release whose API this front follows (kubectl warns about skew beyond one minor)
KUBERNETES_MAJOR = "1"
KUBERNETES_MINOR = "37"
GIT_VERSION = f"v{KUBERNETES_MAJOR}.{KUBERNETES_MINOR}.0+clusterclass-{__version__}"

#: kube-apiserver's largest request body (3 MiB); etcd's own limits apply to what is stored (apiserver.etcdlimits)
MAX_BODY_BYTES = 3 * 1024 * 1024
REQUIRE_CLIENT_CERT: web.AppKey[bool] = web.AppKey("require_client_cert", bool)
#: paths anyone may read, as kube-apiserver's ``system:public-info-viewer`` role allows
PUBLIC_PATHS = ("/version", "/healthz", "/livez", "/readyz")
HEALTH_CHECKS = ("ping", "log", "etcd", "poststarthook/start-apiextensions-controllers")

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]


def _is_public(path: str) -> bool:
    return any(path == public or path.startswith(public + "/") for public in PUBLIC_PATHS)


def user_of(request: web.Request) -> str | None:
    """The common name of the verified client certificate, None for an anonymous request."""
    transport = request.transport
    peer = transport.get_extra_info("peercert") if transport is not None else None
    if not peer:
        return None
    for entry in peer.get("subject", ()):
        for key, value in entry:
            if key == "commonName":
                return str(value)
    return ""


@web.middleware
async def status_errors(request: web.Request, handler: Handler) -> web.StreamResponse:
    try:
        return await handler(request)
    except ApiError as err:
        return error_response(err)
    except web.HTTPNotFound:
        return error_response(not_found())
    except web.HTTPMethodNotAllowed:
        return error_response(method_not_allowed())
    except web.HTTPRequestEntityTooLarge:
        return error_response(
            ApiError(make_status(413, "RequestEntityTooLarge", f"Request entity too large: limit is {MAX_BODY_BYTES}"))
        )
    except web.HTTPException:
        raise
    except Exception as err:  # a bug: answer as kube-apiserver does, never with a traceback
        log.exception("internal error handling %s %s", request.method, request.path_qs)
        return error_response(ApiError(make_status(500, "InternalError", f"Internal error occurred: {err}")))


@web.middleware
async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
    if request.app[REQUIRE_CLIENT_CERT] and not _is_public(request.path) and user_of(request) is None:
        return error_response(unauthorized())
    return await handler(request)


class Routes:
    """The non-resource endpoints and the entry points of resource paths."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store
        self.resources = ResourceHandlers(store)

    async def version(self, request: web.Request) -> web.Response:
        return json_response(
            {
                "major": KUBERNETES_MAJOR,
                "minor": KUBERNETES_MINOR,
                "emulationMajor": KUBERNETES_MAJOR,
                "emulationMinor": KUBERNETES_MINOR,
                "gitVersion": GIT_VERSION,
                "gitCommit": "",
                "gitTreeState": "clean",
                "buildDate": "1970-01-01T00:00:00Z",
                "goVersion": "python3.11",
                "compiler": "cpython",
                "platform": "linux/amd64",
            }
        )

    async def health(self, request: web.Request) -> web.Response:
        endpoint = request.path.strip("/").split("/")[0]
        check = request.match_info.get("check")
        if check is not None:
            if check not in HEALTH_CHECKS:
                raise not_found()
            return web.Response(text="ok", content_type="text/plain")
        if "verbose" in request.query:
            lines = [f"[+]{name} ok" for name in HEALTH_CHECKS]
            return web.Response(text="\n".join([*lines, f"{endpoint} check passed"]) + "\n", content_type="text/plain")
        return web.Response(text="ok", content_type="text/plain")

    async def core_versions(self, request: web.Request) -> web.Response:
        return self._discovery_root(request, core=True)

    async def groups(self, request: web.Request) -> web.Response:
        return self._discovery_root(request, core=False)

    def _discovery_root(self, request: web.Request, *, core: bool) -> web.Response:
        """``/api`` (``core``) or ``/apis``: aggregated discovery when the client asks for it, else the plain list."""
        choice = negotiate(request.headers.get("Accept"), discovery=True)
        if choice.representation == "discovery":
            document = discovery.aggregated(self.store, core=core, version=choice.version)
            return json_response(document, content_type=choice.content_type)
        if core:
            return json_response(discovery.api_versions(request.host))
        return json_response(discovery.api_group_list(self.store))

    async def group(self, request: web.Request) -> web.Response:
        document = discovery.api_group(self.store, request.match_info["group"])
        if document is None:
            raise not_found()
        return json_response(document)

    async def resource_list(self, request: web.Request) -> web.Response:
        group = request.match_info.get("group", "")
        document = discovery.api_resource_list(self.store, group, request.match_info.get("version", "v1"))
        if document is None:
            raise not_found()
        return json_response(document)

    async def openapi_index(self, request: web.Request) -> web.Response:
        return json_response(openapi.index(self.store))

    async def openapi_document(self, request: web.Request) -> web.Response:
        parts = request.match_info["tail"].split("/")
        if len(parts) == 2 and parts[0] == "api":
            group, version = "", parts[1]
        elif len(parts) == 3 and parts[0] == "apis":
            group, version = parts[1], parts[2]
        else:
            raise not_found()
        document = openapi.document(self.store, group, version)
        if document is None:
            raise not_found()
        return json_response(document)

    async def core_resource(self, request: web.Request) -> web.StreamResponse:
        target = resolve(self.store, "", "v1", request.match_info["tail"].split("/"))
        return await self.resources.dispatch(request, target)

    async def group_resource(self, request: web.Request) -> web.StreamResponse:
        info = request.match_info
        target = resolve(self.store, info["group"], info["version"], info["tail"].split("/"))
        return await self.resources.dispatch(request, target)

    async def unknown(self, request: web.Request) -> web.StreamResponse:
        raise not_found()


async def _warnings(request: web.Request, response: web.StreamResponse) -> None:
    """The ``Warning`` headers kube-apiserver sends whatever the answer: the deprecation warning of the request's
    version first, a write's warnings on an error answer too (a success carries them already), each text once
    (kube-apiserver's warning recorder drops repeats, as from a retried write)."""
    deprecation = request.get(DEPRECATION_WARNING)
    written = request.get(WRITE_WARNINGS) if response.status >= 400 else None
    present = response.headers.getall("Warning", [])
    if not deprecation and not written and len(set(present)) == len(present):
        return
    headers = [warning_header(deprecation)] if deprecation else []
    headers += present
    headers += [warning_header(text) for text in written or ()]
    response.headers.popall("Warning", None)
    for header in dict.fromkeys(headers):
        response.headers.add("Warning", header)


async def _close_watches(app: web.Application) -> None:
    """On shutdown every open watch ends, so its client sees the end of the stream at once."""
    open_watches = app[OPEN_WATCHES]
    for watch in tuple(open_watches):
        watch.close()


def make_app(store: MemoryStore, *, require_client_cert: bool = True) -> web.Application:
    """The application serving ``store``; ``require_client_cert`` False serves anonymous requests (tests)."""
    app = web.Application(middlewares=[status_errors, authenticate], client_max_size=MAX_BODY_BYTES)
    app[REQUIRE_CLIENT_CERT] = require_client_cert
    app[OPEN_WATCHES] = set()
    app.on_shutdown.append(_close_watches)
    app.on_response_prepare.append(_warnings)
    routes = Routes(store)
    router = app.router
    router.add_get("/version", routes.version)
    for endpoint in ("healthz", "livez", "readyz"):
        router.add_get(f"/{endpoint}", routes.health)
        router.add_get(f"/{endpoint}/{{check:.+}}", routes.health)
    router.add_get("/api", routes.core_versions)
    router.add_get("/api/", routes.core_versions)
    router.add_get("/api/v1", routes.resource_list)
    router.add_get("/api/v1/", routes.resource_list)
    router.add_route("*", "/api/v1/{tail:.+}", routes.core_resource)
    router.add_get("/apis", routes.groups)
    router.add_get("/apis/", routes.groups)
    router.add_get("/apis/{group}", routes.group)
    router.add_get("/apis/{group}/", routes.group)
    router.add_get("/apis/{group}/{version}", routes.resource_list)
    router.add_get("/apis/{group}/{version}/", routes.resource_list)
    router.add_route("*", "/apis/{group}/{version}/{tail:.+}", routes.group_resource)
    router.add_get("/openapi/v3", routes.openapi_index)
    router.add_get("/openapi/v3/{tail:.+}", routes.openapi_document)
    router.add_route("*", "/{tail:.*}", routes.unknown)
    return app
