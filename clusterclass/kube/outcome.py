"""Whether a create that failed was made anyway.

A 4xx answer means the server refused the request. A 5xx, a timeout or a lost connection does not say: the server
may have stored the object and lost only the answer (etcd timed out answering; the client gave up waiting). A
controller that then cleans up what it made for the object, or makes it again under a new name, loses or duplicates
objects. Controllers here name what they create, so after such an error the object is looked up by that name:
:func:`created_anyway` answers with it, or None when it surely was not made, or raises :class:`OutcomeUnknown` when
even the lookups fail.
"""

from __future__ import annotations

import asyncio

from clusterclass.api.objects import Obj, name_of, namespace_of
from clusterclass.kube.client import Client
from clusterclass.kube.errors import ApiError, NotFound

#: lookups before the outcome is called unknown (waiting 50, 100, 200 ms between them)
LOOKUPS = 4


class OutcomeUnknown(ApiError):
    """Whether the create happened cannot be told: the create's error and the lookups' all failed."""


def transient(err: ApiError) -> bool:
    """Whether the same request may well succeed if sent again: throttled (429), a 5xx, a timeout."""
    code = int(err.status.get("code") or 0)
    return code in (408, 429) or code >= 500 or code == 0


async def delete_retrying(
    client: Client, api_version: str, kind: str, name: str, *, namespace: str | None = None
) -> Obj | None:
    """``client.delete`` sent again (up to :data:`LOOKUPS` times) after a transient error: a clean-up that gives up
    on the first 500 leaks what it cleans. NotFound (also after a retry of a delete that happened) is raised."""
    for attempt in range(LOOKUPS):
        try:
            return await client.delete(api_version, kind, name, namespace=namespace)
        except ApiError as err:
            if not transient(err) or attempt == LOOKUPS - 1:
                raise
            await asyncio.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


def may_have_been_applied(err: ApiError) -> bool:
    """Whether a write answered with ``err`` may have happened all the same (module doc)."""
    code = int(err.status.get("code") or 0)
    return not (400 <= code < 500 and code != 408)


async def lookup(client: Client, obj: Obj) -> Obj | None:
    """``obj`` as stored now, None when it does not exist; a failing read is tried :data:`LOOKUPS` times, then
    :class:`OutcomeUnknown` (carrying the last error)."""
    for attempt in range(LOOKUPS):
        try:
            return await client.get(
                str(obj.get("apiVersion")), str(obj.get("kind")), name_of(obj), namespace=namespace_of(obj) or None
            )
        except NotFound:
            return None
        except ApiError as err:
            if attempt == LOOKUPS - 1:
                raise OutcomeUnknown(err.status) from err
            await asyncio.sleep(0.05 * 2**attempt)
    raise AssertionError("unreachable")


async def created_anyway(client: Client, obj: Obj, err: ApiError) -> Obj | None:
    """``obj`` as stored when its create failed with ``err`` but it exists; None when it was not created."""
    if not may_have_been_applied(err) or not name_of(obj):
        return None
    try:
        return await lookup(client, obj)
    except OutcomeUnknown as unknown:
        raise OutcomeUnknown(
            {**err.status, "message": f"{err} (whether it was created is unknown: {unknown})"}
        ) from err
