"""HttpClient's side of the wire: requests it sends and how it reads answers, retries and fails.

A small aiohttp server stands in for kube-apiserver here because these tests need answers a
healthy kube-apiserver does not give on demand (an HTML 502, a dropped connection, a 429 with
Retry-After, a watch stream cut mid-line, a server certificate for another name). What a real
kube-apiserver answers is tested in ``test_http_client_real.py``.
"""

from __future__ import annotations

import asyncio
import json
import ssl
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from aiohttp import web

from clusterclass.kube.certs import CertificateAuthority
from clusterclass.kube.errors import AlreadyExists, ApiError, BadRequest, Forbidden, Gone, Invalid, NotFound
from clusterclass.kube.http import Config, HttpClient
from clusterclass.kube.http.kubeconfig import ExecConfig

Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]

CORE = {
    "kind": "APIResourceList",
    "groupVersion": "v1",
    "resources": [
        {"name": "configmaps", "namespaced": True, "kind": "ConfigMap", "verbs": ["get", "list"]},
        {"name": "namespaces", "namespaced": False, "kind": "Namespace", "verbs": ["get"]},
        {"name": "namespaces/status", "namespaced": False, "kind": "Namespace", "verbs": ["get"]},
    ],
}
WIDGETS = {
    "kind": "APIResourceList",
    "groupVersion": "example.io/v1",
    "resources": [
        {"name": "widgets", "namespaced": True, "kind": "Widget", "verbs": ["get"]},
        {"name": "widgets/status", "namespaced": True, "kind": "Widget", "verbs": ["get"]},
        {"name": "widgets/scale", "namespaced": True, "kind": "Scale", "group": "autoscaling", "version": "v1"},
    ],
}


def status(code: int, reason: str, message: str, **extra: Any) -> web.Response:
    body = {"kind": "Status", "apiVersion": "v1", "status": "Failure", "code": code, "reason": reason}
    body.update(message=message, **extra)
    return web.json_response(body, status=code)


@dataclass
class Seen:
    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str]
    body: bytes


@dataclass
class FakeApi:
    """Answers discovery itself; every other request goes to the handler queued for (method, path)."""

    resources: dict[str, Any] = field(default_factory=lambda: {"/api/v1": CORE, "/apis/example.io/v1": WIDGETS})
    handlers: dict[tuple[str, str], list[Handler]] = field(default_factory=dict)
    seen: list[Seen] = field(default_factory=list)

    def on(self, method: str, path: str, *handlers: Handler | web.Response | dict[str, Any]) -> None:
        queue = self.handlers.setdefault((method, path), [])
        for handler in handlers:
            queue.append(_as_handler(handler))

    def requests(self) -> list[Seen]:
        """Every request but discovery."""
        return [s for s in self.seen if s.path not in self.resources]

    async def handle(self, request: web.Request) -> web.StreamResponse:
        body = await request.read()
        self.seen.append(Seen(request.method, request.path, dict(request.query), dict(request.headers), body))
        if request.method == "GET" and request.path in self.resources:
            return web.json_response(self.resources[request.path])
        queue = self.handlers.get((request.method, request.path))
        if not queue:
            return status(404, "NotFound", "the server could not find the requested resource")
        handler = queue.pop(0) if len(queue) > 1 else queue[0]
        return await handler(request)

    def of(self, method: str, path: str) -> list[Seen]:
        return [s for s in self.seen if (s.method, s.path) == (method, path)]


def _as_handler(answer: Handler | web.Response | dict[str, Any]) -> Handler:
    if isinstance(answer, dict):
        document = answer

        async def send_json(request: web.Request) -> web.StreamResponse:
            return web.json_response(document)

        return send_json
    if isinstance(answer, web.Response):
        template = answer

        async def send(request: web.Request) -> web.StreamResponse:
            # a response object can be sent once: send a copy each time
            return web.Response(
                body=template.body, status=template.status, reason=template.reason, headers=template.headers
            )

        return send
    return answer


async def serve(api: FakeApi, ssl_context: ssl.SSLContext | None = None) -> tuple[web.AppRunner, int]:
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", api.handle)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=ssl_context)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    return runner, port


@pytest.fixture
async def api() -> AsyncIterator[FakeApi]:
    fake = FakeApi()
    runner, port = await serve(fake)
    fake.url = f"http://127.0.0.1:{port}"  # type: ignore[attr-defined]
    try:
        yield fake
    finally:
        await runner.cleanup()


@pytest.fixture
async def client(api: FakeApi) -> AsyncIterator[HttpClient]:
    http = HttpClient(Config(server=api.url, token="secret"), read_retries=2)  # type: ignore[attr-defined]
    try:
        yield http
    finally:
        await http.close()


CM_PATH = "/api/v1/namespaces/ns/configmaps"


def configmap(name: str, **extra: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "namespace": "ns"}, **extra}


# -- discovery -------------------------------------------------------------------------------------


async def test_discovery_reads_subresources_and_caches(api: FakeApi, client: HttpClient) -> None:
    widget = await client.resource("example.io/v1", "Widget")
    assert (widget.plural, widget.namespaced, widget.subresources) == ("widgets", True, {"status", "scale"})
    assert widget.api_version == "example.io/v1"
    namespace = await client.resource("v1", "Namespace")
    assert (namespace.group, namespace.namespaced, namespace.subresources) == ("", False, {"status"})
    await client.resource("example.io/v1", "Widget")
    assert len(api.of("GET", "/apis/example.io/v1")) == 1


async def test_discovery_looks_again_once_for_a_kind_it_does_not_know(api: FakeApi, client: HttpClient) -> None:
    await client.resource("example.io/v1", "Widget")
    with pytest.raises(NotFound, match="the server could not find the requested resource"):
        await client.resource("example.io/v1", "Gadget")
    assert len(api.of("GET", "/apis/example.io/v1")) == 2
    # the CRD gets installed: the next miss finds it
    api.resources["/apis/example.io/v1"] = {
        **WIDGETS,
        "resources": [*WIDGETS["resources"], {"name": "gadgets", "namespaced": False, "kind": "Gadget"}],
    }
    gadget = await client.resource("example.io/v1", "Gadget")
    assert (gadget.plural, gadget.namespaced) == ("gadgets", False)


async def test_discovery_of_an_unknown_group_version_and_a_bad_api_version(client: HttpClient) -> None:
    with pytest.raises(NotFound, match="the server could not find the requested resource"):
        await client.resource("nope.io/v1", "Thing")
    with pytest.raises(BadRequest, match="unexpected GroupVersion string"):
        await client.resource("a/b/c", "Thing")


async def test_group_versions_from_apis(api: FakeApi, client: HttpClient) -> None:
    api.resources["/apis"] = {
        "kind": "APIGroupList",
        "groups": [{"name": "example.io", "versions": [{"groupVersion": "example.io/v1", "version": "v1"}]}],
    }
    assert await client.discovery.group_versions() == ["v1", "example.io/v1"]


# -- reads -----------------------------------------------------------------------------------------


async def test_get_sends_token_and_quotes_the_name(api: FakeApi, client: HttpClient) -> None:
    api.on("GET", "/api/v1/namespaces/ns/configmaps/a:b", configmap("a:b"))
    assert (await client.get("v1", "ConfigMap", "a:b", namespace="ns"))["metadata"]["name"] == "a:b"
    seen = api.of("GET", "/api/v1/namespaces/ns/configmaps/a:b")[0]
    assert seen.headers["Authorization"] == "Bearer secret"
    assert seen.headers["Accept"] == "application/json"
    assert seen.headers["User-Agent"].startswith("clusterclass/")


async def test_list_fills_kind_sorts_and_sends_the_selector(api: FakeApi, client: HttpClient) -> None:
    api.on(
        "GET",
        "/api/v1/configmaps",
        {
            "kind": "ConfigMapList",
            "apiVersion": "v1",
            "metadata": {"resourceVersion": "77"},
            "items": [
                {"metadata": {"name": "b", "namespace": "y"}},
                {"metadata": {"name": "z", "namespace": "x"}},
                {"metadata": {"name": "a", "namespace": "y"}},
            ],
        },
    )
    listed = await client.list("v1", "ConfigMap", label_selector={"matchLabels": {"app": "web"}})
    assert listed.resource_version == "77"
    assert [(o["apiVersion"], o["kind"], o["metadata"]["namespace"], o["metadata"]["name"]) for o in listed.items] == [
        ("v1", "ConfigMap", "x", "z"),
        ("v1", "ConfigMap", "y", "a"),
        ("v1", "ConfigMap", "y", "b"),
    ]
    assert api.of("GET", "/api/v1/configmaps")[0].query == {"labelSelector": "app=web"}


async def test_a_namespaced_kind_needs_a_namespace_and_a_cluster_scoped_one_ignores_it(
    api: FakeApi, client: HttpClient
) -> None:
    with pytest.raises(BadRequest, match="the request needs a namespace: configmaps is namespaced"):
        await client.get("v1", "ConfigMap", "a")
    with pytest.raises(BadRequest, match=r"the object needs a namespace: widgets\.example\.io is namespaced"):
        await client.create({"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w"}})
    with pytest.raises(BadRequest, match=r"unable to parse label selector 'a in \('"):
        await client.list("v1", "ConfigMap", label_selector="a in (")
    api.on("GET", "/api/v1/namespaces/kube-system", {"kind": "Namespace", "metadata": {"name": "kube-system"}})
    await client.get("v1", "Namespace", "kube-system", namespace="ignored")
    assert api.requests() == [api.of("GET", "/api/v1/namespaces/kube-system")[0]]


# -- errors ----------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "error", "message"),
    [
        (status(404, "NotFound", 'configmaps "a" not found'), NotFound, 'configmaps "a" not found'),
        (status(409, "AlreadyExists", 'configmaps "a" already exists'), AlreadyExists, "already exists"),
        (status(422, "Invalid", "bad name", details={"causes": [{"field": "metadata.name"}]}), Invalid, "bad name"),
        (status(410, "Expired", "too old resource version: 1 (5)"), Gone, "too old"),
        (web.Response(status=403, text="forbidden by proxy"), Forbidden, r"HTTP 403 Forbidden: forbidden by proxy"),
        (
            web.Response(status=502, text="<html><body>Bad   Gateway</body></html>", content_type="text/html"),
            ApiError,
            r"GET http://127\.0\.0\.1:\d+/api/v1/namespaces/ns/configmaps/a: the server answered HTTP 502 "
            r"Bad Gateway: <html><body>Bad Gateway</body></html>",
        ),
        (web.Response(status=200, text="{not json"), ApiError, r"the answer is not JSON"),
    ],
)
async def test_answers_become_typed_errors(
    api: FakeApi, client: HttpClient, answer: web.Response, error: type[ApiError], message: str
) -> None:
    api.on("GET", f"{CM_PATH}/a", answer)
    with pytest.raises(error, match=message) as caught:
        await client.get("v1", "ConfigMap", "a", namespace="ns")
    assert caught.value.code == (answer.status if answer.status != 200 else 500)


async def test_invalid_keeps_the_status_details(api: FakeApi, client: HttpClient) -> None:
    causes = [{"reason": "FieldValueInvalid", "field": "metadata.name", "message": "Invalid value"}]
    api.on("POST", CM_PATH, status(422, "Invalid", 'ConfigMap "A" is invalid', details={"causes": causes}))
    with pytest.raises(Invalid) as caught:
        await client.create(configmap("A"))
    assert caught.value.details["causes"] == causes


async def test_an_unreachable_server_is_an_api_error_after_retries(unused_tcp_port: int) -> None:
    async with HttpClient(Config(server=f"http://127.0.0.1:{unused_tcp_port}"), read_retries=1) as http:
        with pytest.raises(ApiError, match=r"GET http://127\.0\.0\.1:\d+/api/v1: cannot reach the API server") as e:
            await http.resource("v1", "ConfigMap")
    assert (e.value.code, e.value.reason) == (503, "ServiceUnavailable")


async def test_a_closed_client_refuses_requests(client: HttpClient) -> None:
    await client.close()
    with pytest.raises(Exception, match="is closed"):
        await client.resource("v1", "ConfigMap")


# -- retries ---------------------------------------------------------------------------------------


async def drop_connection(request: web.Request) -> web.StreamResponse:
    assert request.transport is not None
    request.transport.close()
    return web.Response()


async def test_reads_are_retried_after_a_dropped_connection_writes_are_not(api: FakeApi, client: HttpClient) -> None:
    api.on("GET", f"{CM_PATH}/a", drop_connection, configmap("a"))
    assert (await client.get("v1", "ConfigMap", "a", namespace="ns"))["metadata"]["name"] == "a"
    assert len(api.of("GET", f"{CM_PATH}/a")) == 2
    api.on("POST", CM_PATH, drop_connection, configmap("b"))
    with pytest.raises(ApiError, match="cannot reach the API server"):
        await client.create(configmap("b"))
    assert len(api.of("POST", CM_PATH)) == 1


async def test_retry_after_429_for_any_request_5xx_only_for_reads(api: FakeApi, client: HttpClient) -> None:
    busy = status(429, "TooManyRequests", "storage is (re)initializing", details={"retryAfterSeconds": 0})
    busy.headers["Retry-After"] = "0"
    api.on("POST", CM_PATH, busy, configmap("a"))
    assert (await client.create(configmap("a")))["metadata"]["name"] == "a"
    assert len(api.of("POST", CM_PATH)) == 2

    unavailable = status(503, "ServiceUnavailable", "try later")
    unavailable.headers["Retry-After"] = "0"
    api.on("GET", f"{CM_PATH}/a", unavailable, configmap("a"))
    await client.get("v1", "ConfigMap", "a", namespace="ns")
    assert len(api.of("GET", f"{CM_PATH}/a")) == 2
    api.on("PUT", f"{CM_PATH}/a", unavailable, configmap("a"))
    with pytest.raises(ApiError, match="try later"):
        await client.update(configmap("a"))
    assert len(api.of("PUT", f"{CM_PATH}/a")) == 1


# -- writes ----------------------------------------------------------------------------------------


async def echo(request: web.Request) -> web.StreamResponse:
    """The object sent back; for a JSON patch (a list), a stand-in object."""
    body = await request.json()
    return web.json_response(body if isinstance(body, dict) else {"kind": "Widget", "metadata": {}})


async def test_write_requests(api: FakeApi, client: HttpClient) -> None:
    widget = {"apiVersion": "example.io/v1", "kind": "Widget", "metadata": {"name": "w", "namespace": "ns"}}
    base = "/apis/example.io/v1/namespaces/ns/widgets"
    for method, path in (("POST", base), ("PUT", f"{base}/w"), ("PUT", f"{base}/w/status")):
        api.on(method, path, echo)
    api.on("PATCH", f"{base}/w", echo)
    api.on("PATCH", f"{base}/w/status", echo)

    assert await client.create(widget, dry_run=True) == widget
    await client.update(widget, field_manager="me")
    await client.update_status(widget)
    await client.apply(widget, field_manager="capi-topology", force=True, dry_run=True)
    await client.apply(widget, field_manager="capi-topology", status=True)
    await client.patch("example.io/v1", "Widget", "w", {"spec": {"a": None}}, namespace="ns")
    await client.patch("example.io/v1", "Widget", "w", [{"op": "remove", "path": "/x"}], patch_type="json",
                       namespace="ns", status=True, field_manager="me")  # fmt: skip
    sent = [(s.method, s.path.removeprefix(base), s.query, s.headers["Content-Type"]) for s in api.requests()]
    assert sent == [
        ("POST", "", {"dryRun": "All", "fieldManager": "clusterclass"}, "application/json"),
        ("PUT", "/w", {"fieldManager": "me"}, "application/json"),
        ("PUT", "/w/status", {"fieldManager": "clusterclass"}, "application/json"),
        (
            "PATCH",
            "/w",
            {"fieldManager": "capi-topology", "force": "true", "dryRun": "All"},
            "application/apply-patch+yaml",
        ),
        ("PATCH", "/w/status", {"fieldManager": "capi-topology"}, "application/apply-patch+yaml"),
        ("PATCH", "/w", {"fieldManager": "clusterclass"}, "application/merge-patch+json"),
        ("PATCH", "/w/status", {"fieldManager": "me"}, "application/json-patch+json"),
    ]
    assert json.loads(api.requests()[-2].body) == {"spec": {"a": None}}


async def test_write_arguments_are_checked_before_sending(api: FakeApi, client: HttpClient) -> None:
    with pytest.raises(BadRequest, match="Object 'Kind' is missing"):
        await client.create({"apiVersion": "v1", "metadata": {}})
    with pytest.raises(BadRequest, match="resource name may not be empty"):
        await client.update({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": "ns"}})
    with pytest.raises(BadRequest, match="fieldManager is required"):
        await client.apply(configmap("a"), field_manager="")
    with pytest.raises(BadRequest, match="unsupported patch type 'strategic'"):
        await client.patch("v1", "ConfigMap", "a", {}, namespace="ns", patch_type="strategic")  # type: ignore[arg-type]
    assert api.requests() == []


@pytest.mark.parametrize(
    ("answer", "still_there"),
    [
        ({"kind": "Status", "apiVersion": "v1", "status": "Success", "details": {"name": "a"}}, False),
        (configmap("a"), False),  # custom resources answer with the deleted object
        (configmap("a", metadata={"name": "a", "deletionTimestamp": "2026-01-01T00:00:00Z"}), False),
        (
            configmap("a", metadata={"name": "a", "deletionTimestamp": "2026-01-01T00:00:00Z", "finalizers": ["f"]}),
            True,
        ),
        (  # graceful deletion still running
            configmap(
                "a",
                metadata={"name": "a", "deletionTimestamp": "2026-01-01T00:00:00Z", "deletionGracePeriodSeconds": 30},
            ),
            True,
        ),
        (  # a Namespace waits for the namespace controller's spec.finalizers
            {
                "kind": "Namespace",
                "metadata": {"name": "a", "deletionTimestamp": "2026-01-01T00:00:00Z"},
                "spec": {"finalizers": ["kubernetes"]},
            },
            True,
        ),
        (
            {
                "kind": "Namespace",
                "metadata": {"name": "a", "deletionTimestamp": "2026-01-01T00:00:00Z"},
                "status": {"phase": "Terminating"},
            },
            True,
        ),
    ],
)
async def test_delete_answers(api: FakeApi, client: HttpClient, answer: dict[str, Any], still_there: bool) -> None:
    api.on("DELETE", f"{CM_PATH}/a", answer)
    result = await client.delete(
        "v1",
        "ConfigMap",
        "a",
        namespace="ns",
        preconditions={"uid": "u-1", "resourceVersion": "9"},
        propagation_policy="Foreground",
        dry_run=True,
    )
    assert result == (answer if still_there else None)
    assert json.loads(api.of("DELETE", f"{CM_PATH}/a")[0].body) == {
        "kind": "DeleteOptions",
        "apiVersion": "v1",
        "preconditions": {"uid": "u-1", "resourceVersion": "9"},
        "propagationPolicy": "Foreground",
        "dryRun": ["All"],
    }


async def test_an_empty_delete_answer_is_a_delete_done(api: FakeApi, client: HttpClient) -> None:
    """Upstream's in-memory workload API server answers a delete with nothing at all."""
    api.on("DELETE", f"{CM_PATH}/a", web.Response(status=200))
    assert await client.delete("v1", "ConfigMap", "a", namespace="ns") is None


# -- watch -----------------------------------------------------------------------------------------


def stream(*chunks: bytes, abort: bool = False) -> Handler:
    async def handler(request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse()
        response.content_type = "application/json"
        await response.prepare(request)
        for chunk in chunks:
            await response.write(chunk)
        if abort:
            assert request.transport is not None
            request.transport.abort()
            return response
        await response.write_eof()
        return response

    return handler


def event(kind: str, obj: dict[str, Any]) -> bytes:
    return json.dumps({"type": kind, "object": obj}).encode() + b"\n"


async def collect(events: AsyncIterator[Any]) -> list[Any]:
    return [e async for e in events]


async def test_watch_query_events_and_long_lines(api: FakeApi, client: HttpClient) -> None:
    big = {"metadata": {"name": "big", "namespace": "ns", "resourceVersion": "5"}, "data": {"x": "y" * 300_000}}
    added = event("ADDED", big)
    api.on(
        "GET",
        CM_PATH,
        stream(
            added[:1000],
            added[1000:] + event("MODIFIED", {"metadata": {"name": "a", "resourceVersion": "6"}})[:10],
            event("MODIFIED", {"metadata": {"name": "a", "resourceVersion": "6"}})[10:] + b"\n",
            event("BOOKMARK", {"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": "9"}}),
        ),
    )
    events = await collect(
        client.watch("v1", "ConfigMap", namespace="ns", label_selector="app", resource_version="4", timeout_seconds=30)
    )
    assert [(e["type"], e["object"]["metadata"]["resourceVersion"]) for e in events] == [
        ("ADDED", "5"),
        ("MODIFIED", "6"),
        ("BOOKMARK", "9"),
    ]
    assert len(events[0]["object"]["data"]["x"]) == 300_000
    assert all((e["object"]["apiVersion"], e["object"]["kind"]) == ("v1", "ConfigMap") for e in events)
    assert api.of("GET", CM_PATH)[0].query == {
        "watch": "true",
        "labelSelector": "app",
        "resourceVersion": "4",
        "allowWatchBookmarks": "true",
        "timeoutSeconds": "30",
    }


async def test_watch_events_indented_over_many_lines_and_back_to_back(api: FakeApi, client: HttpClient) -> None:
    """A watch is a stream of JSON objects, not of lines (client-go's framer): upstream's in-memory workload API
    server writes each event indented, and nothing has to separate two events."""
    first = json.dumps({"type": "ADDED", "object": configmap("a")}, indent=2).encode()
    second = json.dumps({"type": "MODIFIED", "object": configmap("b")}, indent=1).encode()
    third = json.dumps({"type": "DELETED", "object": {"metadata": {"name": "ü-}"}}}, ensure_ascii=False).encode()
    api.on(
        "GET", CM_PATH, stream(first[:7], first[7:] + second[:30], second[30:] + third[:54], third[54:])
    )  # ü split in two
    events = await collect(client.watch("v1", "ConfigMap", namespace="ns"))
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in events] == [
        ("ADDED", "a"),
        ("MODIFIED", "b"),
        ("DELETED", "ü-}"),
    ]


async def test_watch_error_event_raises_its_status(api: FakeApi, client: HttpClient) -> None:
    expired = {
        "kind": "Status",
        "apiVersion": "v1",
        "status": "Failure",
        "message": "too old resource version: 1 (50)",
        "reason": "Expired",
        "code": 410,
    }
    api.on("GET", CM_PATH, stream(event("ADDED", configmap("a")), event("ERROR", expired)))
    seen: list[Any] = []
    with pytest.raises(Gone, match=r"too old resource version: 1 \(50\)"):
        async for item in client.watch("v1", "ConfigMap", namespace="ns", resource_version="1", bookmarks=False):
            seen.append(item)
    assert [e["type"] for e in seen] == ["ADDED"]
    assert "allowWatchBookmarks" not in api.of("GET", CM_PATH)[0].query


async def test_watch_refused_at_once_raises_from_the_iterator(api: FakeApi, client: HttpClient) -> None:
    api.on("GET", CM_PATH, status(410, "Gone", "resourceVersion too old"))
    events = client.watch("v1", "ConfigMap", namespace="ns", resource_version="1")
    with pytest.raises(Gone):
        await collect(events)


async def test_a_broken_watch_stream_raises(api: FakeApi, client: HttpClient) -> None:
    api.on("GET", CM_PATH, stream(event("ADDED", configmap("a")), b'{"type":"MODI', abort=True))
    seen: list[Any] = []
    with pytest.raises(ApiError, match="the watch stream broke") as caught:
        async for item in client.watch("v1", "ConfigMap", namespace="ns"):
            seen.append(item)
    assert len(seen) == 1
    assert caught.value.code == 503


async def test_garbage_in_a_watch_stream_is_an_error(api: FakeApi, client: HttpClient) -> None:
    api.on("GET", CM_PATH, stream(b"<html>\n"))
    with pytest.raises(ApiError, match="a watch event is not JSON"):
        await collect(client.watch("v1", "ConfigMap", namespace="ns"))
    api.on("GET", "/api/v1/configmaps", stream(event("SOMETHING", configmap("a"))))
    with pytest.raises(ApiError, match="unexpected watch event"):
        await collect(client.watch("v1", "ConfigMap"))


# -- credentials on the wire -----------------------------------------------------------------------


async def test_an_exec_token_refused_with_401_is_replaced_and_the_request_retried(api: FakeApi, tmp_path: Path) -> None:
    plugin = tmp_path / "plugin"
    counter = tmp_path / "count"
    plugin.write_text(
        f"#!{sys.executable}\n"
        "import json, pathlib\n"
        f"counter = pathlib.Path({str(counter)!r})\n"
        "n = int(counter.read_text()) + 1 if counter.exists() else 1\n"
        "counter.write_text(str(n))\n"
        "print(json.dumps({'apiVersion': 'client.authentication.k8s.io/v1', 'kind': 'ExecCredential',"
        " 'status': {'token': f'token-{n}'}}))\n"
    )
    plugin.chmod(0o755)

    async def only_the_second_token(request: web.Request) -> web.StreamResponse:
        if request.headers.get("Authorization") != "Bearer token-2":
            return status(401, "Unauthorized", "Unauthorized")
        return web.json_response(configmap("a"))

    api.on("GET", f"{CM_PATH}/a", only_the_second_token)
    exec_config = ExecConfig(command=str(plugin), interactive_mode="Never")
    async with HttpClient(Config(server=api.url, exec=exec_config), stdin_is_terminal=False) as http:  # type: ignore[attr-defined]
        # discovery goes first, with token-1 (the fake server does not check it)
        assert (await http.get("v1", "ConfigMap", "a", namespace="ns"))["metadata"]["name"] == "a"
        assert counter.read_text() == "2"
        assert [s.headers["Authorization"] for s in api.of("GET", f"{CM_PATH}/a")] == [
            "Bearer token-1",
            "Bearer token-2",
        ]
        api.handlers[("GET", f"{CM_PATH}/a")] = [_as_handler(status(401, "Unauthorized", "Unauthorized"))]
        with pytest.raises(ApiError, match="Unauthorized") as caught:
            await http.get("v1", "ConfigMap", "a", namespace="ns")
        assert caught.value.code == 401
        assert counter.read_text() == "3"  # one more run, then the 401 is the answer


# -- TLS -------------------------------------------------------------------------------------------


def server_context(ca: CertificateAuthority, hosts: list[str], tmp_path: Path, *, client_ca: bool) -> ssl.SSLContext:
    pair = ca.issue_server(hosts)
    (tmp_path / "srv.crt").write_bytes(pair.cert_pem)
    (tmp_path / "srv.key").write_bytes(pair.key_pem)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(tmp_path / "srv.crt", tmp_path / "srv.key")
    if client_ca:
        context.verify_mode = ssl.CERT_REQUIRED
        context.load_verify_locations(cadata=ca.cert_pem.decode())
    return context


async def whoami(request: web.Request) -> web.StreamResponse:
    peer = request.transport.get_extra_info("peercert") if request.transport else None
    subject = dict(pair[0] for pair in (peer or {}).get("subject", ()))
    return web.json_response({"kind": "Namespace", "metadata": {"name": subject.get("commonName", "anonymous")}})


async def test_tls_with_ca_client_certificate_and_server_name(tmp_path: Path) -> None:
    ca = CertificateAuthority()
    fake = FakeApi()
    fake.on("GET", "/api/v1/namespaces/me", whoami)
    runner, port = await serve(fake, server_context(ca, ["kube.internal"], tmp_path, client_ca=True))
    client_pair = ca.issue_client("alice", ["devs"])
    server = f"https://127.0.0.1:{port}"
    try:
        good = Config(
            server=server,
            ca_data=ca.cert_pem,
            tls_server_name="kube.internal",
            client_cert=client_pair.cert_pem,
            client_key=client_pair.key_pem,
        )
        async with HttpClient(good) as http:
            assert (await http.get("v1", "Namespace", "me"))["metadata"]["name"] == "alice"
        # the certificate is for kube.internal, not 127.0.0.1
        async with HttpClient(Config(server=server, ca_data=ca.cert_pem), read_retries=0) as http:
            with pytest.raises(ApiError, match=r"TLS handshake failed: .*certificate verify failed"):
                await http.resource("v1", "Namespace")
        # a CA that did not sign it
        other = CertificateAuthority("other")
        untrusted = Config(server=server, ca_data=other.cert_pem, tls_server_name="kube.internal")
        async with HttpClient(untrusted, read_retries=0) as http:
            with pytest.raises(ApiError, match="TLS handshake failed"):
                await http.resource("v1", "Namespace")
    finally:
        await runner.cleanup()


async def test_insecure_skip_tls_verify(tmp_path: Path) -> None:
    ca = CertificateAuthority()
    fake = FakeApi()
    fake.on("GET", "/api/v1/namespaces/me", whoami)
    runner, port = await serve(fake, server_context(ca, ["elsewhere"], tmp_path, client_ca=False))
    try:
        async with HttpClient(Config(server=f"https://127.0.0.1:{port}", insecure_skip_tls_verify=True)) as http:
            assert (await http.get("v1", "Namespace", "me"))["metadata"]["name"] == "anonymous"
    finally:
        await runner.cleanup()


def test_a_bad_client_key_fails_when_the_client_is_built() -> None:
    ca = CertificateAuthority()
    mine, theirs = ca.issue_client("a"), ca.issue_client("b")
    from clusterclass.kube.http import ConfigError

    with pytest.raises(ConfigError, match="client certificate: the certificate and key are not a valid PEM pair"):
        HttpClient(Config(server="https://k", client_cert=mine.cert_pem, client_key=theirs.key_pem))
    with pytest.raises(ConfigError, match="certificate authority: not a valid PEM certificate"):
        HttpClient(
            Config(server="https://k", ca_data=b"-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n")
        )


async def test_leaving_a_watch_early_leaves_the_client_usable(api: FakeApi, client: HttpClient) -> None:
    api.on("GET", CM_PATH, stream(*(event("ADDED", configmap(f"c{i}")) for i in range(50))))
    api.on("GET", f"{CM_PATH}/a", configmap("a"))
    async for _ in client.watch("v1", "ConfigMap", namespace="ns"):
        break
    assert (await client.get("v1", "ConfigMap", "a", namespace="ns"))["metadata"]["name"] == "a"


async def test_server_warnings_are_logged_once(
    api: FakeApi, client: HttpClient, caplog: pytest.LogCaptureFixture
) -> None:
    warned = web.json_response(configmap("a"), headers={"Warning": '299 - "v1 ConfigMap is deprecated"'})
    api.on("GET", f"{CM_PATH}/a", warned)
    for _ in range(3):
        await client.get("v1", "ConfigMap", "a", namespace="ns")
    assert [r.getMessage() for r in caplog.records if "warns" in r.getMessage()] == [
        'the API server warns: 299 - "v1 ConfigMap is deprecated"'
    ]


async def test_proxy_url_tunnels_https_through_connect(tmp_path: Path) -> None:
    tunnels: list[str] = []

    async def pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while data := await reader.read(65536):
                writer.write(data)
                await writer.drain()
        finally:
            writer.close()

    async def proxy(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        request = await reader.readuntil(b"\r\n\r\n")
        method, target = request.decode().split(" ")[:2]
        assert method == "CONNECT"
        tunnels.append(target)
        host, port = target.rsplit(":", 1)
        upstream_reader, upstream_writer = await asyncio.open_connection(host, int(port))
        writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
        await writer.drain()
        await asyncio.gather(pipe(reader, upstream_writer), pipe(upstream_reader, writer), return_exceptions=True)

    ca = CertificateAuthority()
    fake = FakeApi()
    fake.on("GET", "/api/v1/namespaces/me", whoami)
    runner, port = await serve(fake, server_context(ca, ["127.0.0.1"], tmp_path, client_ca=False))
    proxy_server = await asyncio.start_server(proxy, "127.0.0.1", 0)
    proxy_port = proxy_server.sockets[0].getsockname()[1]
    config = Config(server=f"https://127.0.0.1:{port}", ca_data=ca.cert_pem, proxy_url=f"http://127.0.0.1:{proxy_port}")
    try:
        async with HttpClient(config) as http:
            assert (await http.get("v1", "Namespace", "me"))["metadata"]["name"] == "anonymous"
        assert tunnels and set(tunnels) == {f"127.0.0.1:{port}"}
    finally:
        proxy_server.close()
        await runner.cleanup()


def test_a_kubeconfig_ca_is_the_only_one_trusted() -> None:
    """As client-go: the certificate authority of a kubeconfig replaces the system's, it does not add to them."""
    from clusterclass.kube.http.tls import ssl_context

    authority = CertificateAuthority("only-this-one")
    context = ssl_context(ca_data=authority.cert_pem, insecure=False)
    trusted = context.get_ca_certs()
    assert len(trusted) == 1 and ("commonName", "only-this-one") in trusted[0]["subject"][0]
    assert context.verify_mode == ssl.CERT_REQUIRED and context.check_hostname
    insecure = ssl_context(ca_data=None, insecure=True)
    assert insecure.verify_mode == ssl.CERT_NONE and not insecure.get_ca_certs()
