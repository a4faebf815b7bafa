"""The resource endpoints: list, get, create, update, patch, delete, on objects and their status.

Each handler reads the request the way kube-apiserver's generic REST handlers do (path, query,
body), calls the synchronous :class:`~clusterclass.apiserver.store.MemoryStore` directly (it is fast and
thread-safe, so there is no thread hop) and writes the answer kube-apiserver would: the object with
200 (201 for a create), a list with its resourceVersion, a Table when kubectl asks for one, and a
``Status`` for every error (see :mod:`.app`, which turns the :class:`~clusterclass.kube.errors.ApiError`
the store raises into one).

Rules enforced here rather than in the store, because they are about the request:

- the object in a body must be of the kind the path names, and its name and namespace must match
  the path (a missing namespace is taken from the path);
- ``/status`` exists only for kinds with a status subresource;
- a strategic merge patch is computed here and written with the stored object's resourceVersion
  as precondition, retried on conflict unless the patch itself asked for a resourceVersion, which
  is how kube-apiserver makes a patch atomic;
- server-side apply (``application/apply-patch+yaml``) creates the object when it does not exist.

Watches are answered by :mod:`.watchstream`.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable
from typing import Any, Protocol

from aiohttp import web

from clusterclass import fielderrors
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.merge_patch import merge_patch
from clusterclass.api.objects import Obj
from clusterclass.apiserver.builtin_kinds import decode_error
from clusterclass.apiserver.causes import NamedKind, invalid_error, to_causes
from clusterclass.apiserver.crd.definitions import FieldValidation
from clusterclass.apiserver.front import tables
from clusterclass.apiserver.front.catalog import describe
from clusterclass.apiserver.front.negotiation import Choice, negotiate
from clusterclass.apiserver.front.options import (
    OptionsKind,
    WriteOptions,
    decode_body,
    decode_yaml,
    delete_options,
    flag,
    write_options,
)
from clusterclass.apiserver.front.patches import apply_strategic_patch, decode_json, is_builtin, patch_kind
from clusterclass.apiserver.front.paths import Target
from clusterclass.apiserver.front.responses import (
    json_response,
    method_not_allowed,
    not_found,
    success,
    unsupported_media_type,
)
from clusterclass.apiserver.front.scale import as_scale, scale_paths, scaled
from clusterclass.apiserver.front.watchstream import serve_watch
from clusterclass.apiserver.json_patch import apply_json_patch
from clusterclass.apiserver.store import MemoryStore, subresource_not_found
from clusterclass.kube.errors import ApiError, BadRequest, Conflict, NotFound
from clusterclass.kube.gotext import json_kind


class StoreWrite(Protocol):
    """The shape shared by the store's create, update and update_status."""

    def __call__(
        self,
        obj: Obj,
        *,
        dry_run: bool = False,
        field_manager: str | None = None,
        field_validation: FieldValidation = "Warn",
        warnings: list[str] | None = None,
    ) -> Obj: ...


#: kinds whose update creates the object when it does not exist (their registry strategy allows it)
CREATE_ON_UPDATE = frozenset({("coordination.k8s.io", "Lease"), ("", "Event")})
#: how often a strategic merge patch is recomputed when the object changes underneath it
PATCH_RETRIES = 5


#: the request key under which :meth:`ResourceHandlers.dispatch` leaves the deprecation warning of its version
DEPRECATION_WARNING: web.RequestKey[str] = web.RequestKey("deprecation_warning", str)
#: the request key of a write's warnings, which an error answer carries too (the app adds them)
WRITE_WARNINGS: web.RequestKey[list[str]] = web.RequestKey("write_warnings", list)


def _write_options(request: web.Request, options: OptionsKind, *, apply: bool = False) -> WriteOptions:
    """The write's options; its warnings are kept with the request, for an answer that is an error."""
    found = write_options(request.query, request.headers.get("User-Agent"), options, apply=apply)
    request[WRITE_WARNINGS] = found.warnings
    return found


def warning_header(text: str) -> str:
    """A ``Warning`` header value as kube-apiserver writes it: code 299, no agent, the text quoted."""
    escaped = text.replace("\\", "\\\\").replace('"', '\\"')
    return f'299 - "{escaped}"'


def _write_response(obj: Obj, options: WriteOptions, *, status: int = 200) -> web.Response:
    response = json_response(obj, status=status)
    for warning in options.warnings:
        response.headers.add("Warning", warning_header(warning))
    return response


class ResourceHandlers:
    """The CRUD endpoints over one store."""

    def __init__(self, store: MemoryStore) -> None:
        self.store = store

    # -- dispatch ------------------------------------------------------------------------------------

    async def dispatch(self, request: web.Request, target: Target) -> web.StreamResponse:
        method = request.method
        # kube-apiserver warns on every request in a deprecated version of a CRD, errors included (the app adds it)
        schema = target.info.schema
        deprecation = schema.deprecation_warning(target.version) if schema is not None else None
        if deprecation:
            request[DEPRECATION_WARNING] = deprecation
        if target.subresource == "scale" and target.name is not None:
            return await self.scale(request, target)
        if target.subresource not in (None, "status"):
            raise not_found()
        if target.subresource == "status" and not target.info.has_status(target.version):
            raise not_found() if target.name is None else subresource_not_found(target.info, target.name)
        if target.name is None:
            if method == "GET":
                return await self.list_objects(request, target)
            if method == "POST":
                return await self.create(request, target)
            if method == "DELETE":
                return await self.delete_collection(request, target)
            raise method_not_allowed()
        if method == "GET":
            return await self.get(request, target)
        if method == "PUT":
            return await self.update(request, target)
        if method == "PATCH":
            return await self.patch(request, target)
        if method == "DELETE" and target.subresource is None:
            return await self.delete(request, target)
        raise method_not_allowed()

    # -- reads ---------------------------------------------------------------------------------------

    async def get(self, request: web.Request, target: Target) -> web.StreamResponse:
        assert target.name is not None
        if target.subresource is None and flag(request.query, "watch"):
            return await serve_watch(self.store, request, target)  # the deprecated watch of one object by path
        choice = negotiate(request.headers.get("Accept"), table=True)
        obj = self.store.get(target.api_version, target.kind, target.name, namespace=target.namespace)
        described = describe(self.store, target.info, target.version) if choice.representation == "table" else None
        include = tables.include_object(request.query.get("includeObject")) if described is not None else "Metadata"
        return json_response(tables.render_object(obj, choice, described, include), content_type=choice.content_type)

    async def list_objects(self, request: web.Request, target: Target) -> web.StreamResponse:
        query = request.query
        if flag(query, "watch"):
            return await serve_watch(self.store, request, target)
        choice = negotiate(request.headers.get("Accept"), table=True)
        items, resource_version = self.list_items(request, target)
        return json_response(
            self.render_list(request, target, choice, items, resource_version), content_type=choice.content_type
        )

    def list_items(self, request: web.Request, target: Target) -> tuple[list[Obj], str]:
        items, resource_version = self.store.list(
            target.api_version,
            target.kind,
            namespace=target.namespace,
            label_selector=request.query.get("labelSelector") or None,
            field_selector=request.query.get("fieldSelector"),
        )
        return items, resource_version

    def render_list(
        self, request: web.Request, target: Target, choice: Choice, items: list[Obj], resource_version: str
    ) -> Obj:
        if choice.representation == "table":
            described = describe(self.store, target.info, target.version)
            include = tables.include_object(request.query.get("includeObject"))
            return tables.table(
                described, items, resource_version=resource_version, include=include, version=choice.version
            )
        if choice.representation == "metadata":
            return tables.partial_metadata_list(items, resource_version, choice.version)
        return {
            "apiVersion": target.api_version,
            "kind": f"{target.kind}List",
            "metadata": {"resourceVersion": resource_version},
            "items": items,
        }

    # -- writes --------------------------------------------------------------------------------------

    async def _body_object(self, request: web.Request, target: Target) -> tuple[Obj, list[str]]:
        """The object in the body, checked against the path, and the paths of fields it gives twice."""
        decoded, duplicates = decode_body(await request.read(), request.headers.get("Content-Type"), kind=target.kind)
        return self._checked_object(decoded, target), duplicates

    def _write(self, write: StoreWrite, target: Target, obj: Obj, options: WriteOptions, duplicates: list[str]) -> Obj:
        """``write`` (the store's create, update or update_status) with field validation as kube-apiserver does it.

        The store prunes unknown fields and reports them (``Warn``) or refuses them (``Strict``); fields
        given twice are the front's to find. Under ``Strict`` both kinds of problem are reported in
        one error, duplicates first, as kube-apiserver words it.
        """
        problems = [f'duplicate field "{path}"' for path in duplicates]
        if problems and options.field_validation == "Strict":
            unknown: list[str] = []
            with contextlib.suppress(ApiError):
                write(json_copy(obj), dry_run=True, field_validation="Warn", warnings=unknown)
            problems += [warning for warning in unknown if warning.startswith("unknown field")]
            raise decode_error(target.kind, target.version, f"strict decoding error: {', '.join(problems)}")
        if options.field_validation == "Warn":
            options.warnings.extend(problems)
        return write(
            obj,
            dry_run=options.dry_run,
            field_manager=options.field_manager,
            field_validation=options.field_validation,
            warnings=options.warnings,
        )

    def _checked_object(self, decoded: Any, target: Target) -> Obj:
        """The body object with the path's namespace (and name); an error when it is of another kind.

        As kube-apiserver: the apiVersion must be the one in the path; a built-in kind may leave
        out apiVersion and kind, a custom resource may not; another kind is 400 for a built-in kind
        (it cannot be converted) and 422 for a custom resource (``kind: must be Cluster``).
        """
        if not isinstance(decoded, dict):
            raise BadRequest.new(
                f"the object provided is unrecognized (must be of type {target.kind}): "
                "couldn't get version/kind; json parse error: the body is not a JSON object"
            )
        obj: Obj = decoded
        builtin = is_builtin(target.info)
        for field_name, label in (("kind", "Kind"), ("apiVersion", "apiVersion")):
            if not obj.get(field_name) and not builtin:
                shown = json.dumps(obj, separators=(",", ":"))
                raise BadRequest.new(
                    f"the object provided is unrecognized (must be of type {target.kind}): "
                    f"Object '{label}' is missing in '{shown}'"
                )
        api_version = obj.get("apiVersion") or target.api_version
        kind = obj.get("kind") or target.kind
        if not isinstance(api_version, str) or not isinstance(kind, str):
            raise BadRequest.new(
                f"the object provided is unrecognized (must be of type {target.kind}): "
                "apiVersion and kind must be strings"
            )
        if api_version != target.api_version:
            raise BadRequest.new(
                f"the API version in the data ({api_version}) does not match the expected API version "
                f"({target.api_version})"
            )
        if kind != target.kind:
            if builtin:
                internal = target.info.group.split(".")[0] if target.info.group else "core"
                raise BadRequest.new(
                    f'{kind} in version "{target.version}" cannot be handled as a {target.kind}: converting '
                    f"({target.version}.{kind}) to ({internal}.{target.kind}): unknown conversion"
                )
            name = str((obj.get("metadata") or {}).get("name") or "")
            error = fielderrors.invalid("kind", kind, f"must be {target.kind}")
            raise invalid_error(NamedKind(target.info.group, kind), name, to_causes([error]))
        obj["apiVersion"] = target.api_version
        obj["kind"] = target.kind
        metadata = obj.setdefault("metadata", {})
        if not isinstance(metadata, dict):
            raise BadRequest.new("metadata must be a JSON object")
        if target.namespace is not None:
            given = metadata.get("namespace")
            if given and given != target.namespace:
                raise BadRequest.new(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            metadata["namespace"] = target.namespace
        if target.name is not None:
            given_name = metadata.get("name")
            if given_name and given_name != target.name:
                raise BadRequest.new(
                    f"the name of the object ({given_name}) does not match the name on the URL ({target.name})"
                )
            metadata["name"] = target.name
        return obj

    async def create(self, request: web.Request, target: Target) -> web.Response:
        if target.info.namespaced and target.namespace is None:
            raise method_not_allowed()
        options = _write_options(request, "CreateOptions")
        obj, duplicates = await self._body_object(request, target)
        created = self._write(self.store.create, target, obj, options, duplicates)
        return _write_response(created, options, status=201)

    async def update(self, request: web.Request, target: Target) -> web.Response:
        options = _write_options(request, "UpdateOptions")
        obj, duplicates = await self._body_object(request, target)
        if target.subresource == "status":
            return _write_response(self._write(self.store.update_status, target, obj, options, duplicates), options)
        try:
            updated = self._write(self.store.update, target, json_copy(obj), options, duplicates)
        except NotFound:
            if (target.info.group, target.kind) not in CREATE_ON_UPDATE or obj["metadata"].get("resourceVersion"):
                raise
            created = self._write(self.store.create, target, obj, options, duplicates)
            return _write_response(created, options, status=201)
        return _write_response(updated, options)

    async def patch(self, request: web.Request, target: Target) -> web.Response:
        assert target.name is not None
        kind = patch_kind(request.headers.get("Content-Type", ""), target.info)
        options = _write_options(request, "PatchOptions", apply=kind == "apply")
        body = await request.read()
        status = target.subresource == "status"
        if kind == "apply":
            return self._apply(target, body, options)
        if kind == "merge" or kind == "json":
            patch = decode_json(body, "patch")
            if kind == "merge" and not isinstance(patch, dict):
                raise BadRequest.new(
                    f"error decoding patch: json: cannot unmarshal {json_kind(patch)} into Go value of type "
                    "map[string]interface {}"
                )
            patched = self.store.patch(
                target.api_version,
                target.kind,
                target.name,
                patch,
                patch_type=kind,
                namespace=target.namespace,
                dry_run=options.dry_run,
                field_manager=options.field_manager,
                status=status,
                field_validation=options.field_validation,
                warnings=options.warnings,
            )
            return _write_response(patched, options)
        write: StoreWrite = self.store.update_status if status else self.store.update
        patched = self._update_retrying(
            target, lambda current: self._checked_object(apply_strategic_patch(current, body), target), write, options
        )
        return _write_response(patched, options)

    def _update_retrying(
        self, target: Target, change: Callable[[Obj], Obj], write: StoreWrite, options: WriteOptions
    ) -> Obj:
        """``write`` of ``change(current)``, recomputed from a fresh read when the object changed meanwhile.

        The write carries the read's resourceVersion as precondition, which is how kube-apiserver
        makes a patch atomic; a change that asks for another resourceVersion itself is written once,
        and its Conflict is the client's.
        """
        assert target.name is not None
        for attempt in range(PATCH_RETRIES):
            current = self.store.get(target.api_version, target.kind, target.name, namespace=target.namespace)
            updated = change(current)
            read_at = current["metadata"]["resourceVersion"]
            asked = updated["metadata"].get("resourceVersion")
            pinned = bool(asked) and asked != read_at
            if not pinned:
                updated["metadata"]["resourceVersion"] = read_at
            try:
                return self._write(write, target, updated, options, [])
            except Conflict:
                if pinned or attempt == PATCH_RETRIES - 1:
                    raise
        raise AssertionError("unreachable")  # pragma: no cover

    async def scale(self, request: web.Request, target: Target) -> web.Response:
        """The scale subresource (:mod:`.scale`): GET, PUT and merge or JSON PATCH of an autoscaling/v1 Scale."""
        assert target.name is not None
        paths = scale_paths(target.info, target.version)
        if request.method == "GET":
            current = self.store.get(target.api_version, target.kind, target.name, namespace=target.namespace)
            return json_response(as_scale(current, paths))
        if request.method not in ("PUT", "PATCH"):
            raise method_not_allowed()
        options_kind: OptionsKind = "UpdateOptions" if request.method == "PUT" else "PatchOptions"
        kind = patch_kind(request.headers.get("Content-Type", ""), target.info) if request.method == "PATCH" else None
        if kind not in (None, "merge", "json"):
            raise unsupported_media_type(["application/json-patch+json", "application/merge-patch+json"])
        options = _write_options(request, options_kind)
        body = decode_json(await request.read(), "patch" if kind else "the request body")

        def change(current: Obj) -> Obj:
            if kind == "merge":
                return scaled(current, merge_patch(as_scale(current, paths), body), paths)
            if kind == "json":
                return scaled(current, apply_json_patch(as_scale(current, paths), body), paths)
            return scaled(current, body, paths)

        written = self._update_retrying(target, change, self.store.update, options)
        return _write_response(as_scale(written, paths), options)

    def _apply(self, target: Target, body: bytes, options: WriteOptions) -> web.Response:
        assert target.name is not None and options.field_manager is not None
        intent = decode_yaml(body, what="patch")
        given = intent if isinstance(intent, dict) else {}
        api_version, kind = given.get("apiVersion"), given.get("kind")
        if not api_version or not kind or not isinstance(api_version, str) or not isinstance(kind, str):
            group, _, version = str(api_version or "").rpartition("/")
            raise BadRequest.new(f"invalid object type: {group}/{version}, Kind={kind or ''}")
        obj = self._checked_object(intent, target)
        try:
            self.store.get(target.api_version, target.kind, target.name, namespace=target.namespace)
            existed = True
        except NotFound:
            existed = False
        applied = self.store.apply(
            obj,
            field_manager=options.field_manager,
            force=bool(options.force),
            dry_run=options.dry_run,
            status=target.subresource == "status",
        )
        return _write_response(applied, options, status=200 if existed else 201)

    async def delete(self, request: web.Request, target: Target) -> web.Response:
        assert target.name is not None
        options = delete_options(request.query, await request.read())
        current = self.store.get(target.api_version, target.kind, target.name, namespace=target.namespace)
        remaining = self.store.delete(
            target.api_version,
            target.kind,
            target.name,
            namespace=target.namespace,
            preconditions=options.preconditions,
            propagation_policy=options.propagation_policy,
            dry_run=options.dry_run,
        )
        if remaining is not None:
            return json_response(remaining)
        return json_response(success(self._details(target, target.name, current)))

    async def delete_collection(self, request: web.Request, target: Target) -> web.Response:
        if (target.info.group, target.kind) == ("", "Namespace"):
            raise method_not_allowed()
        options = delete_options(request.query, await request.read())
        items, _ = self.list_items(request, target)
        deleted: list[Obj] = []
        for item in items:
            meta = item["metadata"]
            try:
                remaining = self.store.delete(
                    target.api_version,
                    target.kind,
                    meta["name"],
                    namespace=meta.get("namespace"),
                    propagation_policy=options.propagation_policy,
                    dry_run=options.dry_run,
                )
            except NotFound:
                continue
            deleted.append(remaining if remaining is not None else item)
        return json_response(
            {
                "apiVersion": target.api_version,
                "kind": f"{target.kind}List",
                "metadata": {"resourceVersion": self.store.resource_version},
                "items": deleted,
            }
        )

    @staticmethod
    def _details(target: Target, name: str, obj: Obj) -> dict[str, Any]:
        details: dict[str, Any] = {"name": name, "kind": target.info.plural, "uid": obj["metadata"].get("uid", "")}
        if target.info.group:
            details["group"] = target.info.group
        return details
