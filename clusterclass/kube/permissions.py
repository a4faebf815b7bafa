"""Which RBAC permissions a piece of code uses: a :class:`~clusterclass.kube.client.Client` that records them.

A ClusterRole should grant exactly what the controller does, no more (least privilege) and no less (or a rare path
fails in production). Reading the code for every request is how such roles drift; recording is how they do not:
:class:`PermissionRecorder` forwards every call to the client it wraps and notes the ``(API group, resource,
verb)`` kube-apiserver's RBAC authorizer checks for it:

- ``get``, ``list``, ``watch``, ``create``, ``update``, ``delete`` as themselves; a status write on
  ``<resource>/status``;
- a merge or JSON patch, a server-side apply and its dry run as ``patch``; an apply that creates the object also
  as ``create``, since kube-apiserver then authorizes a create too.

``clusterclass.run.rbac`` runs the controllers through a Cluster's whole life on a recorder and writes the
ClusterRoles in ``config/rbac`` from what it saw; a test makes sure those files still say exactly that.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.kube.client import Client, ObjectList, Resource, WatchEvent, object_kind
from clusterclass.kube.errors import NotFound


@dataclass(frozen=True, order=True)
class Permission:
    """One RBAC permission: ``verb`` on ``resource`` (``plural`` or ``plural/subresource``) of ``group``."""

    group: str
    resource: str
    verb: str


class PermissionRecorder:
    """Forwards every call to ``inner`` and records the permission it needs in :attr:`permissions`."""

    def __init__(self, inner: Client) -> None:
        self.inner = inner
        self.permissions: set[Permission] = set()

    async def _note(self, api_version: str, kind: str, verb: str, subresource: str = "") -> Resource:
        resource = await self.inner.resource(api_version, kind)
        plural = f"{resource.plural}/{subresource}" if subresource else resource.plural
        self.permissions.add(Permission(resource.group, plural, verb))
        return resource

    async def _note_object(self, obj: Obj, verb: str, subresource: str = "") -> Resource:
        api_version, kind, _ = object_kind(obj)
        return await self._note(api_version, kind, verb, subresource)

    async def resource(self, api_version: str, kind: str) -> Resource:
        return await self.inner.resource(api_version, kind)

    async def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        await self._note(api_version, kind, "get")
        return await self.inner.get(api_version, kind, name, namespace=namespace)

    async def list(self, api_version: str, kind: str, **options: Any) -> ObjectList:
        await self._note(api_version, kind, "list")
        return await self.inner.list(api_version, kind, **options)

    async def watch(self, api_version: str, kind: str, **options: Any) -> AsyncIterator[WatchEvent]:
        await self._note(api_version, kind, "watch")
        async for event in self.inner.watch(api_version, kind, **options):
            yield event

    async def create(self, obj: Obj, **options: Any) -> Obj:
        await self._note_object(obj, "create")
        return await self.inner.create(obj, **options)

    async def update(self, obj: Obj, **options: Any) -> Obj:
        await self._note_object(obj, "update")
        return await self.inner.update(obj, **options)

    async def update_status(self, obj: Obj, **options: Any) -> Obj:
        await self._note_object(obj, "update", "status")
        return await self.inner.update_status(obj, **options)

    async def apply(self, obj: Obj, **options: Any) -> Obj:
        resource = await self._note_object(obj, "patch", "status" if options.get("status") else "")
        _, _, metadata = object_kind(obj)
        try:
            await self.inner.get(
                resource.api_version, resource.kind, str(metadata.get("name")), namespace=metadata.get("namespace")
            )
        except NotFound:
            await self._note_object(obj, "create")
        return await self.inner.apply(obj, **options)

    async def patch(self, api_version: str, kind: str, name: str, patch: Any, **options: Any) -> Obj:
        await self._note(api_version, kind, "patch", "status" if options.get("status") else "")
        return await self.inner.patch(api_version, kind, name, patch, **options)

    async def delete(self, api_version: str, kind: str, name: str, **options: Any) -> Obj | None:
        await self._note(api_version, kind, "delete")
        return await self.inner.delete(api_version, kind, name, **options)

    async def close(self) -> None:
        await self.inner.close()


def _check_protocol(recorder: PermissionRecorder) -> Client:
    """PermissionRecorder is a Client (checked by mypy, never called)."""
    return recorder
