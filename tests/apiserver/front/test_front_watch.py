"""Watch streams over HTTP: one JSON event per line, kube-apiserver's rules for start, bookmarks and errors."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import Any

from aiohttp import ClientResponse
from aiohttp.test_utils import TestClient, TestServer
from front_support import Api

from clusterclass.apiserver.front import make_app
from clusterclass.apiserver.store import MemoryStore

CM = "/api/v1/namespaces/default/configmaps"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json"


def config_map(name: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, "labels": labels}}


@asynccontextmanager
async def watching(api: Api, query: str, accept: str | None = None) -> AsyncIterator[ClientResponse]:
    headers = {"Accept": accept} if accept else {}
    async with api.client.get(f"{CM}?watch=1&{query}", headers=headers) as response:
        assert response.status == 200
        assert response.content_type == "application/json"
        yield response


async def next_events(response: ClientResponse, count: int) -> list[dict[str, Any]]:
    events = []
    while len(events) < count:
        line = await response.content.readline()
        assert line, f"stream ended after {events}"
        events.append(json.loads(line))
    return events


async def all_events(response: ClientResponse) -> list[dict[str, Any]]:
    return [json.loads(line) async for line in response.content if line.strip()]


def summary(events: list[dict[str, Any]]) -> list[tuple[str, str | None]]:
    return [(event["type"], event["object"].get("metadata", {}).get("name")) for event in events]


async def test_watch_starts_with_current_objects_then_streams_changes(api: Api) -> None:
    await api.call("POST", CM, config_map("a"))
    async with watching(api, "allowWatchBookmarks=true") as response:
        added, bookmark = await next_events(response, 2)
        assert summary([added]) == [("ADDED", "a")]
        assert bookmark["type"] == "BOOKMARK"
        assert bookmark["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        _, b = await api.call("POST", CM, config_map("b"))
        await api.call("PATCH", f"{CM}/b", {"data": {"x": "1"}}, content_type="application/merge-patch+json")
        await api.call("DELETE", f"{CM}/a")
        events = await next_events(response, 3)
        assert summary(events) == [("ADDED", "b"), ("MODIFIED", "b"), ("DELETED", "a")]
        assert events[0]["object"]["metadata"]["resourceVersion"] == b["metadata"]["resourceVersion"]
        assert events[1]["object"]["data"] == {"x": "1"}


async def test_watch_from_a_resource_version_sees_only_later_changes(api: Api) -> None:
    _, a = await api.call("POST", CM, config_map("a"))
    await api.call("POST", CM, config_map("b"))
    async with watching(api, f"resourceVersion={a['metadata']['resourceVersion']}&timeoutSeconds=1") as response:
        assert summary(await all_events(response)) == [("ADDED", "b")]


async def test_no_bookmarks_unless_asked_and_timeout_ends_the_stream(api: Api) -> None:
    await api.call("POST", CM, config_map("a"))
    async with watching(api, "timeoutSeconds=1") as response:
        await api.call("POST", CM, config_map("b"))
        events = await all_events(response)
    assert summary(events) == [("ADDED", "a"), ("ADDED", "b")]


async def test_selectors_filter_the_stream(api: Api) -> None:
    await api.call("POST", CM, config_map("a", tier="x"))
    await api.call("POST", CM, config_map("b", tier="y"))
    async with watching(api, "labelSelector=tier%3Dx&timeoutSeconds=1") as response:
        assert summary(await all_events(response)) == [("ADDED", "a")]
    async with watching(api, "fieldSelector=metadata.name%3Db&timeoutSeconds=1") as response:
        await api.call("PATCH", f"{CM}/a", {"data": {"k": "v"}}, content_type="application/merge-patch+json")
        await api.call("PATCH", f"{CM}/b", {"data": {"k": "v"}}, content_type="application/merge-patch+json")
        assert summary(await all_events(response)) == [("ADDED", "b"), ("MODIFIED", "b")]


async def test_too_old_resource_version_is_an_error_event_in_a_200_stream() -> None:
    store = MemoryStore(history_size=2)
    client = TestClient(TestServer(make_app(store, require_client_cert=False)))
    await client.start_server()
    try:
        api = Api(client)
        _, first = await api.call("POST", CM, config_map("a"))
        for name in ("b", "c", "d"):
            await api.call("POST", CM, config_map(name))
        async with watching(api, f"resourceVersion={first['metadata']['resourceVersion']}") as response:
            [event] = await all_events(response)
        assert event["type"] == "ERROR"
        status = event["object"]
        assert (status["kind"], status["code"], status["reason"]) == ("Status", 410, "Expired")
        assert status["message"].startswith(f"too old resource version: {first['metadata']['resourceVersion']} (")
    finally:
        await client.close()
        store.close()


async def test_send_initial_events_from_a_resource_version(api: Api) -> None:
    _, a = await api.call("POST", CM, config_map("a"))
    await api.call("POST", CM, config_map("b"))
    query = (
        f"sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"
        f"&resourceVersion={a['metadata']['resourceVersion']}"
    )
    async with watching(api, query) as response:
        events = await next_events(response, 3)
        assert summary(events[:2]) == [("ADDED", "a"), ("ADDED", "b")]
        assert events[2]["type"] == "BOOKMARK"
        assert events[2]["object"]["metadata"]["annotations"] == {"k8s.io/initial-events-end": "true"}
        await api.call("POST", CM, config_map("c"))
        assert summary(await next_events(response, 1)) == [("ADDED", "c")]


async def test_send_initial_events_needs_bookmarks(api: Api) -> None:
    status, body = await api.call("GET", f"{CM}?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan")
    assert (status, body["reason"]) == (400, "BadRequest")


async def test_watch_as_table_sends_column_definitions_once(api: Api) -> None:
    await api.call("POST", CM, config_map("a"))
    async with watching(api, "timeoutSeconds=1", accept=TABLE) as response:
        await api.call("POST", CM, config_map("b"))
        first, second = await all_events(response)
    assert first["object"]["kind"] == "Table" and first["object"]["columnDefinitions"]
    assert second["object"]["columnDefinitions"] == []
    assert [row["cells"][0] for row in second["object"]["rows"]] == ["b"]


async def test_watch_of_an_unknown_kind_is_404(api: Api) -> None:
    status, body = await api.call("GET", "/api/v1/namespaces/default/widgets?watch=1")
    assert (status, body["reason"]) == (404, "NotFound")


async def test_watch_of_one_object_by_path(api: Api) -> None:
    await api.call("POST", CM, config_map("a"))
    await api.call("POST", CM, config_map("b"))
    async with api.client.get(f"{CM}/b?watch=true&timeoutSeconds=1") as response:
        assert summary(await all_events(response)) == [("ADDED", "b")]
