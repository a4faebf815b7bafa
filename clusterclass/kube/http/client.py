"""The :class:`~clusterclass.kube.client.Client` over the Kubernetes REST API: :class:`HttpClient`.

It talks to a real kube-apiserver, or to the embedded store that ``clusterclass apiserver`` serves,
with aiohttp on the controllers' event loop. Objects stay plain dicts: what the server sends is what
the caller gets, except that list items get the ``apiVersion`` and ``kind`` the server leaves out of
them and are ordered by namespace and name, as the protocol promises.

How each call maps to the API:

- discovery (``/api/v1``, ``/apis/<g>/<v>``) finds the plural and scope of a kind, cached by
  :class:`~clusterclass.kube.http.discovery.Discovery`;
- ``apply`` is a PATCH with ``application/apply-patch+yaml`` (JSON is YAML) and ``fieldManager``,
  ``force`` and ``dryRun=All`` as query parameters; ``patch`` uses the merge-patch and JSON-patch
  content types; ``delete`` sends ``DeleteOptions`` with preconditions and propagation policy;
- ``watch`` reads the ``watch=true`` stream line by line, and raises the error an ``ERROR`` event
  carries (``Gone`` for a resourceVersion that is too old); a stream that breaks raises
  :class:`~clusterclass.kube.errors.ApiError` so an informer lists again.

Every request's outcome goes to ``on_response`` (method, host, HTTP code or None when no answer came), where
``clusterclass run`` counts ``rest_client_requests_total`` as client-go does.

Errors are typed: a non-2xx answer with a ``Status`` body becomes
:func:`~clusterclass.kube.errors.from_status`'s type, anything else (an HTML error page, a refused
connection, a TLS failure) an ApiError whose message says what happened and where. Reads (get,
list, discovery, starting a watch) are retried on connection errors; writes are not, because a
write whose answer was lost may have happened. An answer with ``Retry-After`` is retried as client-go
retries it: a 429 for any request, a 5xx for reads. A 401 after which new credentials could help (an
exec plugin's token expired, a token file rotated) is retried once with them.
"""

from __future__ import annotations

import asyncio
import codecs
import json
import logging
import os
import platform
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from types import TracebackType
from typing import Any, Self, cast, get_args
from urllib.parse import quote, urlsplit

import aiohttp
from multidict import CIMultiDict

from clusterclass import __version__ as _version
from clusterclass.api.objects import Obj
from clusterclass.errors import ClusterClassError
from clusterclass.kube.client import (
    DEFAULT_FIELD_MANAGER,
    Client,
    FieldSelectorLike,
    LabelSelector,
    ObjectList,
    PatchType,
    Preconditions,
    PropagationPolicy,
    Resource,
    WatchEvent,
    WatchEventType,
    object_kind,
    parse_label_selector,
)
from clusterclass.kube.errors import ApiError, BadRequest, Status, from_status, make_status
from clusterclass.kube.fieldselectors import parse_field_selector
from clusterclass.kube.http.auth import Authenticator
from clusterclass.kube.http.discovery import Discovery, group_version_path
from clusterclass.kube.http.kubeconfig import Config, in_cluster_config, load_config, load_kubeconfig
from clusterclass.kube.http.tls import ContextCache

log = logging.getLogger(__name__)

USER_AGENT = f"clusterclass/{_version} ({platform.system().lower()}/{platform.machine().lower()})"

PATCH_CONTENT_TYPES: dict[str, str] = {
    "merge": "application/merge-patch+json",
    "json": "application/json-patch+json",
    "apply": "application/apply-patch+yaml",
}
#: the longest a Retry-After answer makes a request wait before it is sent again
MAX_RETRY_AFTER_SECONDS = 10.0
WATCH_EVENT_TYPES = frozenset(get_args(WatchEventType))

#: told of every request: its method, the server's host:port, and the HTTP code (None: no answer came)
ResponseObserver = Callable[[str, str, int | None], None]

#: the reason a Status would have for an HTTP code, for answers that come without one
_REASONS: dict[int, str] = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    406: "NotAcceptable",
    409: "Conflict",
    410: "Expired",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    422: "Invalid",
    429: "TooManyRequests",
    500: "InternalError",
    503: "ServiceUnavailable",
    504: "Timeout",
}


class HttpClient:
    """A :class:`~clusterclass.kube.client.Client` for the API server a :class:`Config` points at.

    Build it with :meth:`from_kubeconfig`, :meth:`in_cluster` or :meth:`from_environment`, or from a
    Config; use it as an async context manager or call :meth:`close`. ``request_timeout`` bounds
    every request but a watch; ``read_retries`` is how often a read is tried again after a connection
    error; ``on_response`` is told of every request sent (module doc). The HTTP session is opened on first
    use, on the running event loop.
    """

    def __init__(
        self,
        config: Config,
        *,
        request_timeout: float = 60.0,
        read_retries: int = 3,
        user_agent: str = USER_AGENT,
        stdin_is_terminal: bool | None = None,
        on_response: ResponseObserver | None = None,
    ) -> None:
        self.config = config
        self.on_response = on_response
        self._host = urlsplit(config.server).netloc
        self.request_timeout = request_timeout
        self.read_retries = read_retries
        self.user_agent = user_agent
        self._auth = Authenticator(config, stdin_is_terminal=stdin_is_terminal)
        self._tls = ContextCache(config) if config.server.lower().startswith("https://") else None
        self.discovery = Discovery(self._get_json)
        self._session: aiohttp.ClientSession | None = None
        self._closed = False
        self._warned: set[str] = set()

    @classmethod
    def from_kubeconfig(
        cls, path: str | os.PathLike[str] | None = None, *, context: str | None = None, **options: Any
    ) -> HttpClient:
        """A client for ``context`` of the kubeconfig at ``path`` (default: ``KUBECONFIG`` or ``~/.kube/config``)."""
        return cls(load_kubeconfig(path, context=context), **options)

    @classmethod
    def in_cluster(cls, **options: Any) -> HttpClient:
        """A client with the service account of the Pod this runs in."""
        return cls(in_cluster_config(), **options)

    @classmethod
    def from_environment(
        cls, path: str | os.PathLike[str] | None = None, *, context: str | None = None, **options: Any
    ) -> HttpClient:
        """``path``, else ``KUBECONFIG``, else in-cluster, else ``~/.kube/config`` (controller-runtime's order)."""
        return cls(load_config(path, context=context), **options)

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, error: BaseException | None, traceback: TracebackType | None
    ) -> None:
        await self.close()

    async def close(self) -> None:
        self._closed = True
        if self._session is not None:
            await self._session.close()
            self._session = None

    # -- discovery -----------------------------------------------------------------------------------

    async def resource(self, api_version: str, kind: str) -> Resource:
        return await self.discovery.resource(api_version, kind)

    # -- reads ---------------------------------------------------------------------------------------

    async def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        resource = await self.resource(api_version, kind)
        return await self._get_object(_object_path(resource, _namespace(resource, namespace), name))

    async def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
    ) -> ObjectList:
        resource = await self.resource(api_version, kind)
        query = _selector_query(label_selector, field_selector)
        document = await self._get_object(_collection_path(resource, namespace), query)
        items = [{"apiVersion": api_version, "kind": kind, **item} for item in document.get("items") or []]
        items.sort(key=lambda o: (o["metadata"].get("namespace") or "", o["metadata"].get("name") or ""))
        return ObjectList(items, str((document.get("metadata") or {}).get("resourceVersion") or ""))

    async def watch(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
        field_selector: FieldSelectorLike | None = None,
        resource_version: str | None = None,
        bookmarks: bool = True,
        timeout_seconds: int | None = None,
    ) -> AsyncIterator[WatchEvent]:
        resource = await self.resource(api_version, kind)
        query = {"watch": "true", **_selector_query(label_selector, field_selector)}
        if resource_version:
            query["resourceVersion"] = resource_version
        if bookmarks:
            query["allowWatchBookmarks"] = "true"
        if timeout_seconds is not None:
            query["timeoutSeconds"] = str(int(timeout_seconds))
        # the server ends the stream; a client-side limit only guards against a silent dead connection
        total = None if timeout_seconds is None else timeout_seconds + self.request_timeout
        timeout = aiohttp.ClientTimeout(total=total, sock_connect=self.request_timeout)
        path = _collection_path(resource, namespace)
        async with self._open("GET", path, query=query, idempotent=True, timeout=timeout) as response:
            url = str(response.url)
            try:
                async for event in _json_objects(response.content, url):
                    yield _watch_event(event, api_version, kind, url)
            except (aiohttp.ClientError, TimeoutError) as err:
                raise _transport_error("GET", url, "the watch stream broke", err) from err
            finally:
                # a stream left before its end must not go back to the pool with unread events
                response.close()

    # -- writes --------------------------------------------------------------------------------------

    async def create(
        self,
        obj: Obj,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        declared_content_type: str = "application/json",
    ) -> Obj:
        """Create ``obj``, sent as JSON. ``declared_content_type`` is the Content-Type it is sent under: JSON, but
        for servers that route a create by the protobuf type alone and decode by sniffing the body (upstream's
        in-memory workload API server, which only client-go's protobuf-speaking clients ever wrote to)."""
        resource, namespace, _ = await self._target(obj, need_name=False)
        return await self._send_json(
            "POST",
            _collection_path(resource, namespace),
            obj,
            query=_write_query(dry_run, field_manager),
            content_type=declared_content_type,
        )

    async def update(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        resource, namespace, name = await self._target(obj)
        return await self._send_json(
            "PUT", _object_path(resource, namespace, name), obj, query=_write_query(dry_run, field_manager)
        )

    async def update_status(self, obj: Obj, *, dry_run: bool = False, field_manager: str | None = None) -> Obj:
        resource, namespace, name = await self._target(obj)
        return await self._send_json(
            "PUT", _object_path(resource, namespace, name, "status"), obj, query=_write_query(dry_run, field_manager)
        )

    async def apply(
        self,
        obj: Obj,
        *,
        field_manager: str,
        force: bool = False,
        dry_run: bool = False,
        status: bool = False,
    ) -> Obj:
        if not field_manager:
            raise BadRequest.new("fieldManager is required for apply requests")
        resource, namespace, name = await self._target(obj)
        query = _write_query(dry_run, field_manager)
        if force:
            query["force"] = "true"
        path = _object_path(resource, namespace, name, "status" if status else None)
        return await self._send_json("PATCH", path, obj, query=query, content_type=PATCH_CONTENT_TYPES["apply"])

    async def patch(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Any,
        *,
        patch_type: PatchType = "merge",
        namespace: str | None = None,
        dry_run: bool = False,
        field_manager: str | None = None,
        status: bool = False,
    ) -> Obj:
        if patch_type not in get_args(PatchType):
            raise BadRequest.new(f"unsupported patch type {patch_type!r}: use merge or json")
        resource = await self.resource(api_version, kind)
        path = _object_path(resource, _namespace(resource, namespace), name, "status" if status else None)
        return await self._send_json(
            "PATCH",
            path,
            patch,
            query=_write_query(dry_run, field_manager),
            content_type=PATCH_CONTENT_TYPES[patch_type],
        )

    async def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy | None = None,
        dry_run: bool = False,
    ) -> Obj | None:
        resource = await self.resource(api_version, kind)
        options: dict[str, Any] = {"kind": "DeleteOptions", "apiVersion": "v1"}
        if preconditions:
            options["preconditions"] = dict(preconditions)
        if propagation_policy is not None:
            options["propagationPolicy"] = propagation_policy
        if dry_run:
            options["dryRun"] = ["All"]
        path = _object_path(resource, _namespace(resource, namespace), name)
        data = json.dumps(options, separators=(",", ":")).encode()
        async with self._open("DELETE", path, body=data, content_type="application/json") as response:
            answer = await _json_body(response)
        # kube-apiserver answers the object or a Status; an empty answer (upstream's in-memory workload API server
        # gives one) is a delete done
        return None if answer is None else _still_there(_object_of(answer, response))

    # -- transport -----------------------------------------------------------------------------------

    def _log_warnings(self, response: aiohttp.ClientResponse) -> None:
        """Log each distinct ``Warning`` header once (a deprecated version warns on every request)."""
        for warning in response.headers.getall("Warning", ()):
            if warning not in self._warned:
                if len(self._warned) < 100:
                    self._warned.add(warning)
                log.warning("the API server warns: %s", warning)

    def _session_now(self) -> aiohttp.ClientSession:
        if self._closed:
            raise ClusterClassError(f"the client for {self.config.server} is closed")
        if self._session is None:
            self._session = aiohttp.ClientSession(
                headers={"User-Agent": self.user_agent, "Accept": "application/json"},
                timeout=aiohttp.ClientTimeout(total=self.request_timeout),
            )
        return self._session

    async def _target(self, obj: Any, *, need_name: bool = True) -> tuple[Resource, str | None, str]:
        """The resource, namespace and name an object is written to, checked as the memory store checks them."""
        api_version, kind, meta = object_kind(obj)
        resource = await self.resource(api_version, kind)
        name = meta.get("name")
        if need_name and (not name or not isinstance(name, str)):
            raise BadRequest.new("resource name may not be empty")
        return resource, _namespace(resource, meta.get("namespace"), what="the object"), str(name or "")

    async def _get_json(self, path: str, query: dict[str, str] | None = None) -> Any:
        async with self._open("GET", path, query=query, idempotent=True) as response:
            return await _json_body(response)

    async def _get_object(self, path: str, query: dict[str, str] | None = None) -> Obj:
        async with self._open("GET", path, query=query, idempotent=True) as response:
            return _object_of(await _json_body(response), response)

    async def _send_json(
        self,
        method: str,
        path: str,
        body: Any,
        *,
        query: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Obj:
        """Send ``body`` as JSON; the object (or Status) the server answers with."""
        data = json.dumps(body, separators=(",", ":")).encode()
        async with self._open(method, path, query=query, body=data, content_type=content_type) as response:
            return _object_of(await _json_body(response), response)

    @asynccontextmanager
    async def _open(
        self,
        method: str,
        path: str,
        *,
        query: dict[str, str] | None = None,
        body: bytes | None = None,
        content_type: str | None = None,
        idempotent: bool = False,
        timeout: aiohttp.ClientTimeout | None = None,
    ) -> AsyncIterator[aiohttp.ClientResponse]:
        """The response to one request, after retries and error mapping; a non-2xx answer raises."""
        url = self.config.server + path
        session = self._session_now()
        attempt = 0
        refreshed = False
        while True:
            credentials = await self._auth.credentials()
            headers: CIMultiDict[str] = CIMultiDict(credentials.headers)
            if content_type:
                headers["Content-Type"] = content_type
            ssl = self._tls.get(credentials.client_pair) if self._tls is not None else True
            extra: dict[str, Any] = {"timeout": timeout} if timeout is not None else {}
            try:
                response = await session.request(
                    method,
                    url,
                    params=query,
                    data=body,
                    headers=headers,
                    ssl=ssl,
                    server_hostname=self.config.tls_server_name,
                    proxy=self.config.proxy_url,
                    **extra,
                )
            except aiohttp.ClientSSLError as err:
                self._observe(method, None)
                raise _transport_error(method, url, "TLS handshake failed", err) from err
            except (aiohttp.ClientConnectionError, TimeoutError) as err:
                self._observe(method, None)
                if idempotent and attempt < self.read_retries:
                    attempt += 1
                    await asyncio.sleep(0.1 * 2**attempt)
                    continue
                raise _transport_error(method, url, "cannot reach the API server", err) from err
            self._observe(method, response.status)
            if response.status == 401 and not refreshed and self._auth.refresh(credentials):
                response.release()
                refreshed = True
                continue
            wait = _retry_after(response, idempotent)
            if wait is not None and attempt < self.read_retries:
                response.release()
                attempt += 1
                await asyncio.sleep(wait)
                continue
            try:
                self._log_warnings(response)
                if not 200 <= response.status < 300:
                    raise await _error_of(response, method)
                yield response
            finally:
                response.release()
            return

    def _observe(self, method: str, code: int | None) -> None:
        if self.on_response is not None:
            self.on_response(method, self._host, code)


def _retry_after(response: aiohttp.ClientResponse, idempotent: bool) -> float | None:
    """How long to wait before trying again when the server asks for it, as client-go does; None: do not.

    A 429 (priority and fairness, storage still initializing) was not processed, so any request may
    be sent again; a 5xx with ``Retry-After`` may have been processed, so only reads are.
    """
    if response.status != 429 and not (idempotent and 500 <= response.status < 600):
        return None
    header = response.headers.get("Retry-After")
    if header is None:
        return None
    try:
        seconds = float(header)
    except ValueError:
        seconds = 1.0
    return min(max(seconds, 0.0), MAX_RETRY_AFTER_SECONDS)


def _check_protocol(client: HttpClient) -> Client:
    """HttpClient is a Client (checked by mypy, never called)."""
    return client


# -- paths and queries -----------------------------------------------------------------------------


def _namespace(resource: Resource, namespace: Any, *, what: str = "the request") -> str | None:
    """The namespace in the path: None for cluster-scoped kinds (one given is ignored), required otherwise."""
    if not resource.namespaced:
        return None
    if not namespace or not isinstance(namespace, str):
        raise BadRequest.new(f"{what} needs a namespace: {resource.group_resource} is namespaced")
    return str(namespace)


def _collection_path(resource: Resource, namespace: str | None) -> str:
    """``/apis/g/v[/namespaces/ns]/plural``; a namespaced kind without a namespace spans all of them."""
    path = group_version_path(resource.api_version)
    if resource.namespaced and namespace:
        path += f"/namespaces/{quote(namespace, safe='')}"
    return f"{path}/{resource.plural}"


def _object_path(resource: Resource, namespace: str | None, name: str, subresource: str | None = None) -> str:
    if not name:
        raise BadRequest.new("resource name may not be empty")
    path = f"{_collection_path(resource, namespace)}/{quote(name, safe='')}"
    return f"{path}/{subresource}" if subresource else path


def _selector_query(label_selector: LabelSelector | None, field_selector: FieldSelectorLike | None) -> dict[str, str]:
    query = {}
    labels = str(parse_label_selector(label_selector))
    if labels:
        query["labelSelector"] = labels
    fields = str(parse_field_selector(field_selector))
    if fields:
        query["fieldSelector"] = fields
    return query


def _write_query(dry_run: bool, field_manager: str | None) -> dict[str, str]:
    query: dict[str, str] = {"fieldManager": field_manager or DEFAULT_FIELD_MANAGER}
    if dry_run:
        query["dryRun"] = "All"
    return query


# -- answers ---------------------------------------------------------------------------------------


async def _json_body(response: aiohttp.ClientResponse) -> Any:
    data = await response.read()
    if not data.strip():
        return None
    try:
        return json.loads(data)
    except ValueError as err:
        what = f"{response.method} {response.url}"
        raise ApiError.new(f"{what}: the answer is not JSON ({err}): {_snippet(data)}") from err


def _object_of(answer: Any, response: aiohttp.ClientResponse) -> Obj:
    if not isinstance(answer, dict):
        raise ApiError.new(f"{response.method} {response.url}: the answer is not a JSON object")
    return answer


async def _error_of(response: aiohttp.ClientResponse, method: str) -> ApiError:
    """The error a non-2xx answer means: its Status when it has one, else one made from the code and body."""
    data = await response.read()
    try:
        document = json.loads(data)
    except ValueError:
        document = None
    if isinstance(document, dict) and document.get("kind") == "Status":
        status: Status = dict(document)
        status.setdefault("code", response.status)
        if not status.get("message"):
            status["message"] = f"{method} {response.url}: HTTP {response.status} {response.reason or ''}".strip()
        return from_status(status)
    message = f"{method} {response.url}: the server answered HTTP {response.status} {response.reason or ''}".strip()
    if data.strip():
        message += f": {_snippet(data)}"
    return from_status(make_status(response.status, _REASONS.get(response.status, "Unknown"), message))


def _transport_error(method: str, url: str, what: str, err: BaseException) -> ApiError:
    detail = str(err) or type(err).__name__
    return ApiError(make_status(503, "ServiceUnavailable", f"{method} {url}: {what}: {detail}"))


def _snippet(data: bytes, limit: int = 500) -> str:
    text = " ".join(data.decode(errors="replace").split())
    return text if len(text) <= limit else text[:limit] + "..."


def _still_there(answer: Any) -> Obj | None:
    """What a delete answered: the object when it still exists, marked for deletion; None when it is gone.

    kube-apiserver answers with a ``Status`` of success for some kinds and with the deleted object
    (as it was last stored) for others, custom resources among them. An object that is still there
    is marked with ``deletionTimestamp`` and something holds it: finalizers in its metadata, a
    Namespace's ``spec.finalizers`` (the namespace controller's; it is ``Terminating`` until they go),
    or a grace period still running.
    A marked object without any of these was removed by this very delete (its last finalizer had
    gone with the propagation policy).
    """
    if not isinstance(answer, dict) or answer.get("kind") == "Status":
        return None
    meta: dict[str, Any] = answer.get("metadata") or {}
    if not meta.get("deletionTimestamp"):
        return None
    spec, status = answer.get("spec"), answer.get("status")
    namespace_held = answer.get("kind") == "Namespace" and (
        (isinstance(spec, dict) and bool(spec.get("finalizers")))
        or (isinstance(status, dict) and status.get("phase") == "Terminating")
    )
    held = bool(meta.get("finalizers")) or namespace_held or (meta.get("deletionGracePeriodSeconds") or 0) > 0
    return answer if held else None


#: the most a watch event may take before it is refused: far above the largest object etcd stores (1.5 MiB, more
#: as JSON), so only a stream that never completes its JSON gets there
MAX_WATCH_EVENT = 16 * 1024 * 1024


async def _json_objects(stream: aiohttp.StreamReader, url: str) -> AsyncIterator[Any]:
    """The JSON objects of a watch stream, as client-go's framer reads them: one after another, whatever whitespace
    is between and inside them. kube-apiserver writes one per line; upstream's in-memory workload API server writes
    them indented, over many lines. Each is parsed once its closing brace has arrived; anything that does not start
    as an object is refused at once, a stream that ends inside one at its end."""
    decoder = json.JSONDecoder()
    text_of = codecs.getincrementaldecoder("utf-8")()
    pending = ""
    async for chunk in stream.iter_any():
        pending += text_of.decode(chunk)
        if b"}" not in chunk:
            if len(pending) > MAX_WATCH_EVENT:
                raise ApiError.new(f"GET {url}: a watch event is not JSON (over {MAX_WATCH_EVENT} bytes unfinished)")
            continue
        position = 0
        while True:
            while position < len(pending) and pending[position].isspace():
                position += 1
            if position == len(pending):
                break
            if pending[position] != "{":
                raise ApiError.new(f"GET {url}: a watch event is not JSON: {_snippet(pending[position:].encode())}")
            try:
                event, position = decoder.raw_decode(pending, position)
            except ValueError:
                break  # unfinished: wait for more
            yield event
        pending = pending[position:]
        if len(pending) > MAX_WATCH_EVENT:
            raise ApiError.new(f"GET {url}: a watch event is not JSON (over {MAX_WATCH_EVENT} bytes unfinished)")
    pending += text_of.decode(b"", final=True)
    if pending.strip():
        try:
            yield json.loads(pending)
        except ValueError as err:
            raise ApiError.new(f"GET {url}: a watch event is not JSON ({err}): {_snippet(pending.encode())}") from err


def _watch_event(event: Any, api_version: str, kind: str, url: str) -> WatchEvent:
    kind_of_event = event.get("type") if isinstance(event, dict) else None
    obj = event.get("object") if isinstance(event, dict) else None
    if kind_of_event == "ERROR":
        status = obj if isinstance(obj, dict) else {}
        raise from_status(
            {
                **status,
                "message": status.get("message") or f"GET {url}: the watch ended with an error",
                "code": status.get("code") or 500,
            }
        )
    if kind_of_event not in WATCH_EVENT_TYPES or not isinstance(obj, dict):
        raise ApiError.new(f"GET {url}: unexpected watch event: {_snippet(json.dumps(event).encode())}")
    obj.setdefault("apiVersion", api_version)
    obj.setdefault("kind", kind)
    return cast(WatchEvent, {"type": kind_of_event, "object": obj})
