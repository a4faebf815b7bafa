"""Writing builder objects to a management cluster, as the controllers would have left them."""

from __future__ import annotations

import copy

from describe_builders import Obj

from clusterclass.kube.client import Client


async def write_objects(client: Client, objects: list[Obj]) -> list[Obj]:
    """Create each object (owners before what they own), then write its status; the objects as stored.

    The server gives every object its own uid, so ownerReferences are pointed at the uids it gave
    (a reference to an owner that was never written keeps its uid, as an orphan's would).
    """
    uids: dict[str, str] = {}
    stored = []
    for original in objects:
        obj = copy.deepcopy(original)
        status = obj.pop("status", None)
        deleting = obj["metadata"].pop("deletionTimestamp", None)
        for ref in obj["metadata"].get("ownerReferences", []):
            ref["uid"] = uids.get(ref["uid"], ref["uid"])
        given_uid = obj["metadata"].pop("uid", None)
        created = await client.create(obj)
        if given_uid:
            uids[given_uid] = created["metadata"]["uid"]
        if status is not None:
            created = await client.update_status({**created, "status": status})
        if deleting:  # its finalizer keeps it, marked
            meta = created["metadata"]
            await client.delete(created["apiVersion"], created["kind"], meta["name"], namespace=meta["namespace"])
            created = await client.get(
                created["apiVersion"], created["kind"], meta["name"], namespace=meta["namespace"]
            )
        stored.append(created)
    return stored
