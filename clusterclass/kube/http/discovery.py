"""Discovery: which resource serves a kind, read from the API server and cached.

A request needs the plural resource name and whether the kind is namespaced, which only the server
knows (a CRD decides them). :class:`Discovery` asks ``/api/v1`` or ``/apis/<group>/<version>`` once
per group version and keeps the answer. A kind missing from the cached answer is looked up again
once before it is reported NotFound, because a CRD installed after the first look is served by
then; a group version the server stopped serving is dropped when its fetch answers NotFound.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

from clusterclass.api.objects import split_api_version
from clusterclass.kube.client import Resource
from clusterclass.kube.errors import BadRequest, NotFound

#: fetch a path (``/apis/g/v``) and return the decoded JSON body, raising ApiError types
GetJson = Callable[[str], Awaitable[Any]]


def group_version_path(api_version: str) -> str:
    """The discovery path of one group version: ``/api/v1`` for the core group, ``/apis/g/v`` otherwise."""
    group, version = split_api_version(api_version)
    return f"/apis/{group}/{version}" if group else f"/api/{version}"


def parse_resource_list(api_version: str, document: Any) -> dict[str, Resource]:
    """An ``APIResourceList`` as kind → Resource; subresources (``clusters/status``) join their resource."""
    group, version = split_api_version(api_version)
    entries = document.get("resources") if isinstance(document, dict) else None
    if not isinstance(entries, list):
        return {}
    main: dict[str, dict[str, Any]] = {}
    subresources: dict[str, set[str]] = {}
    for entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("name"), str):
            continue
        name: str = entry["name"]
        if "/" in name:
            parent, sub = name.split("/", 1)
            subresources.setdefault(parent, set()).add(sub)
        else:
            main[name] = entry
    kinds: dict[str, Resource] = {}
    for plural, entry in main.items():
        kind = entry.get("kind")
        if not isinstance(kind, str) or not kind or kind in kinds:
            continue
        kinds[kind] = Resource(
            group=group,
            version=version,
            kind=kind,
            plural=plural,
            namespaced=bool(entry.get("namespaced")),
            subresources=frozenset(subresources.get(plural, ())),
        )
    return kinds


class Discovery:
    """Kind → resource for every group version asked about, fetched on demand through ``get_json``."""

    def __init__(self, get_json: GetJson) -> None:
        self._get_json = get_json
        self._kinds: dict[str, dict[str, Resource]] = {}
        self._locks: dict[str, asyncio.Lock] = {}

    async def resource(self, api_version: str, kind: str) -> Resource:
        """How ``kind`` is served in ``api_version``; NotFound when the server does not serve it."""
        try:
            split_api_version(api_version)
        except ValueError as err:
            raise BadRequest.new(str(err)) from err
        known = self._kinds.get(api_version)
        if known is not None and kind in known:
            return known[kind]
        fresh = await self._refresh(api_version, known)
        if kind in fresh:
            return fresh[kind]
        raise NotFound.new("the server could not find the requested resource")

    async def group_versions(self) -> list[str]:
        """Every group version the server serves: ``v1`` first, then ``/apis`` in the server's order."""
        found = ["v1"]
        document = await self._get_json("/apis")
        for group in (document or {}).get("groups") or []:
            for version in group.get("versions") or []:
                gv = version.get("groupVersion")
                if isinstance(gv, str) and gv not in found:
                    found.append(gv)
        return found

    async def _refresh(self, api_version: str, seen: dict[str, Resource] | None) -> dict[str, Resource]:
        """Fetch ``api_version`` again, unless another task did so while this one waited for the lock."""
        lock = self._locks.setdefault(api_version, asyncio.Lock())
        async with lock:
            current = self._kinds.get(api_version)
            if current is not None and current is not seen:
                return current
            try:
                document = await self._get_json(group_version_path(api_version))
            except NotFound:
                self._kinds.pop(api_version, None)
                raise NotFound.new("the server could not find the requested resource") from None
            kinds = parse_resource_list(api_version, document)
            self._kinds[api_version] = kinds
            return kinds
