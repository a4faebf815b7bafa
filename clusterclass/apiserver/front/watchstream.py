"""Watch streams: ``GET ...?watch=true`` answered as kube-apiserver answers it.

The answer is a chunked ``200`` whose body is one JSON watch event per line,
``{"type":"ADDED","object":{...}}``, until the watch ends: after ``timeoutSeconds`` (default 30
minutes, within kube-apiserver's range), when the client goes away, or when the server shuts down
(every open watch is closed first, so clients see a clean end of stream and re-watch).

The events come from :meth:`~clusterclass.apiserver.store.MemoryStore.watch` and keep its rules
(history window, selector transitions, DELETED with the last state). On top of it:

- ``resourceVersion`` unset or ``0``, or ``sendInitialEvents=true`` (the WatchList protocol of
  client-go's reflector), starts with an ADDED for every matching object and, for a client that
  allows bookmarks, a BOOKMARK annotated ``k8s.io/initial-events-end: "true"`` carrying the
  resourceVersion of that initial state, as kube-apiserver 1.37 does (the store's watch does
  this without a resourceVersion; with one, the front lists and watches from the list);
  ``sendInitialEvents=false`` without a resourceVersion starts at the current one;
- a resourceVersion the store's history no longer reaches is an ERROR event carrying a 410
  ``Expired`` Status, sent after the 200 and before the stream ends, as the watch cache does;
- BOOKMARK events are sent only to clients that asked (``allowWatchBookmarks=true``);
- ``fieldSelector`` (``metadata.name=...``, what ``kubectl get NAME -w`` and ``kubectl wait`` use)
  filters the events;
- a client that asked for a Table (``kubectl get -w``) gets each object as a one-row Table, with the
  column definitions in the first event only.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import Any

from aiohttp import web

from clusterclass.apiserver import fieldselectors
from clusterclass.apiserver.front import tables
from clusterclass.apiserver.front.catalog import describe
from clusterclass.apiserver.front.negotiation import negotiate
from clusterclass.apiserver.front.options import flag, positive_int
from clusterclass.apiserver.front.paths import Target
from clusterclass.apiserver.front.responses import encode
from clusterclass.apiserver.store import MemoryStore
from clusterclass.apiserver.watch_cache import INITIAL_EVENTS_END, MemoryWatch
from clusterclass.kube.client import ObjectList, WatchEvent
from clusterclass.kube.errors import ApiError, BadRequest
from clusterclass.kube.fieldselectors import FieldRequirement

#: seconds a watch lasts when the client does not say (kube-apiserver picks 30 to 60 minutes)
DEFAULT_TIMEOUT_SECONDS = 1800

#: the app key under which open watches are kept, so shutdown can close them
OPEN_WATCHES: web.AppKey[set[MemoryWatch]] = web.AppKey("open_watches")


async def serve_watch(store: MemoryStore, request: web.Request, target: Target) -> web.StreamResponse:
    query = request.query
    choice = negotiate(request.headers.get("Accept"), table=True)
    fields = fieldselectors.parse(query.get("fieldSelector"), target.info)
    if target.name is not None:
        fields = fields.and_(FieldRequirement("metadata.name", target.name, True))
    bookmarks = flag(query, "allowWatchBookmarks")
    timeout = positive_int(query, "timeoutSeconds") or DEFAULT_TIMEOUT_SECONDS
    initial = _send_initial_events(query, bookmarks)
    resource_version = query.get("resourceVersion") or None
    label_selector = query.get("labelSelector") or None
    described = describe(store, target.info, target.version) if choice.representation == "table" else None
    include = tables.include_object(query.get("includeObject"))

    response = web.StreamResponse(headers={"Content-Type": choice.content_type})
    response.enable_chunked_encoding()
    listed: ObjectList | None = None
    try:
        if initial and resource_version not in (None, "0"):
            # the store's watch starts with the current objects only without a resourceVersion:
            # list, then watch from the list, so nothing is missed or doubled
            listed = store.list(
                target.api_version,
                target.kind,
                namespace=target.namespace,
                label_selector=label_selector,
                field_selector=fields,
            )
            resource_version = listed.resource_version
        elif initial is False and resource_version in (None, "0"):
            resource_version = store.resource_version
        watch = store.watch(
            target.api_version,
            target.kind,
            namespace=target.namespace,
            label_selector=label_selector,
            field_selector=fields,
            resource_version=resource_version,
            bookmarks=bookmarks,
            timeout_seconds=timeout,
        )
    except ApiError as err:
        if err.code != 410:
            raise
        await response.prepare(request)
        await response.write(encode({"type": "ERROR", "object": err.status}) + b"\n")
        await response.write_eof()
        return response
    events = watch if listed is None else _listed_then_changes(target, listed, watch)

    open_watches = request.app[OPEN_WATCHES]
    open_watches.add(watch)
    await response.prepare(request)
    first = True
    try:
        async for event in events:
            if event["type"] == "BOOKMARK":
                if not bookmarks:
                    continue
                payload: Any = event["object"]
            else:
                payload = tables.render_object(event["object"], choice, described, include, headers=first)
                first = False
            await response.write(encode({"type": event["type"], "object": payload}) + b"\n")
    finally:
        watch.close()
        open_watches.discard(watch)
    with contextlib.suppress(ConnectionResetError):
        await response.write_eof()
    return response


def _send_initial_events(query: Any, bookmarks: bool) -> bool | None:
    """Whether the client asked for initial events (the WatchList protocol); None when it did not say."""
    if query.get("sendInitialEvents") is None:
        return None
    wanted = flag(query, "sendInitialEvents")
    if wanted and not bookmarks:
        raise BadRequest.new(
            "sendInitialEvents: Forbidden: sendInitialEvents requires setting allowWatchBookmarks=true"
        )
    match = query.get("resourceVersionMatch")
    if match != "NotOlderThan":
        raise BadRequest.new(
            'resourceVersionMatch: Forbidden: sendInitialEvents requires setting resourceVersionMatch to "NotOlderThan"'
        )
    return wanted


async def _listed_then_changes(target: Target, listed: ObjectList, watch: MemoryWatch) -> AsyncIterator[WatchEvent]:
    """Every listed object as ADDED, the BOOKMARK ending the initial events, then the changes since the list.

    The bookmark is always sent: ``sendInitialEvents=true`` requires ``allowWatchBookmarks=true``.
    """
    for item in listed.items:
        yield {"type": "ADDED", "object": item}
    yield {
        "type": "BOOKMARK",
        "object": {
            "apiVersion": target.api_version,
            "kind": target.kind,
            "metadata": {"resourceVersion": listed.resource_version, "annotations": {INITIAL_EVENTS_END: "true"}},
        },
    }
    async for event in watch:
        yield event
