"""An in-process API server store with kube-apiserver's semantics: :class:`MemoryStore`.

The embedded management cluster and most tests run against this store instead of a real
kube-apiserver, so it keeps the rules a controller depends on, the way the API server's generic
registry and the CRD strategy apply them:

- every write gets the next value of one global ``resourceVersion`` counter; a write that changes
  nothing is not a write and keeps it;
- ``uid`` and ``creationTimestamp`` are set on create (the clock is injectable) and never change;
- custom resources carry ``metadata.generation``: 1 on create, bumped when anything but metadata
  (and ``status``, for kinds with a status subresource) changes, and when deletion starts;
- a kind with a status subresource drops ``status`` on create and ignores it on update;
  :meth:`MemoryStore.update_status` changes nothing else;
- ``update`` with a stale ``resourceVersion`` is a Conflict; one without is unconditional;
- delete of an object with finalizers marks it (``deletionTimestamp``) and the update that removes
  the last finalizer removes it; no new finalizer may be added once deletion started;
- namespaced objects need their Namespace; ``default`` exists from the start;
- ``dry_run`` runs every check and stores nothing; every object returned is a deep copy.

Kinds must be registered (:meth:`MemoryStore.register_kind`); Cluster API's and the few core kinds
the controllers use are registered from the start. Objects are kept in the version they were
written in and served in any registered version of their kind by rewriting ``apiVersion``, as a
CRD with conversion strategy ``None`` is served.

Not here yet: watch, server-side apply and managedFields, CRD schema defaulting and validation,
garbage collection (``propagation_policy`` is accepted and checked, dependents are not deleted),
the namespace controller, persistence, serving it over HTTP.
"""

from __future__ import annotations

import copy
import random
import re
import threading
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any, NoReturn

from clusterclass.api.objects import Obj, split_api_version
from clusterclass.kube.client import LabelSelector, Preconditions, PropagationPolicy
from clusterclass.kube.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Invalid,
    NotFound,
    make_status,
)
from clusterclass.kube.mergepatch import merge_patch
from clusterclass.kube.selectors import SelectorError, as_selector

DEFAULT_NAMESPACE = "default"
PROPAGATION_POLICIES = ("Background", "Foreground", "Orphan")

#: plurals the simple English rules of :func:`plural_of` get wrong
PLURAL_OVERRIDES = {"Endpoints": "endpoints"}


def plural_of(kind: str) -> str:
    """The resource name of ``kind``: lower case, then ``-ies`` / ``-es`` / ``-s`` (``Policy`` → ``policies``)."""
    if kind in PLURAL_OVERRIDES:
        return PLURAL_OVERRIDES[kind]
    lower = kind.lower()
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        return lower[:-1] + "ies"
    if lower.endswith(("s", "x", "z", "ch", "sh")):
        return lower + "es"
    return lower + "s"


@dataclass(frozen=True)
class KindInfo:
    """What the store knows of one kind: what a CRD or a built-in registration would say."""

    group: str
    kind: str
    plural: str
    namespaced: bool
    status_subresource: bool
    #: whether the server keeps metadata.generation (every custom resource; few built-in kinds)
    generation: bool
    versions: frozenset[str] = field(default_factory=frozenset)

    @property
    def resource(self) -> str:
        """``clusters.cluster.x-k8s.io``; ``configmaps`` for the core group."""
        return f"{self.plural}.{self.group}" if self.group else self.plural

    @property
    def qualified_kind(self) -> str:
        """``Cluster.cluster.x-k8s.io``; ``ConfigMap`` for the core group."""
        return f"{self.kind}.{self.group}" if self.group else self.kind


_CAPI = "cluster.x-k8s.io/v1beta1"
_BOOTSTRAP = "bootstrap.cluster.x-k8s.io/v1beta1"
_CONTROL_PLANE = "controlplane.cluster.x-k8s.io/v1beta1"
_INFRASTRUCTURE = "infrastructure.cluster.x-k8s.io/v1beta1"

#: (apiVersion, kind, namespaced, status subresource, generation) registered in every new store:
#: the Cluster API CRDs of ``shared/upstream/crds`` and the built-in kinds the controllers use
DEFAULT_KINDS: tuple[tuple[str, str, bool, bool, bool], ...] = (
    ("v1", "Namespace", False, True, False),
    ("v1", "Secret", True, False, False),
    ("v1", "ConfigMap", True, False, False),
    ("v1", "Event", True, False, False),
    ("coordination.k8s.io/v1", "Lease", True, False, False),
    (_CAPI, "Cluster", True, True, True),
    (_CAPI, "ClusterClass", True, True, True),
    (_CAPI, "Machine", True, True, True),
    (_CAPI, "MachineSet", True, True, True),
    (_CAPI, "MachineDeployment", True, True, True),
    (_CAPI, "MachinePool", True, True, True),
    (_CAPI, "MachineHealthCheck", True, True, True),
    (_BOOTSTRAP, "KubeadmConfig", True, True, True),
    (_BOOTSTRAP, "KubeadmConfigTemplate", True, False, True),
    (_CONTROL_PLANE, "KubeadmControlPlane", True, True, True),
    (_CONTROL_PLANE, "KubeadmControlPlaneTemplate", True, False, True),
    (_INFRASTRUCTURE, "DockerCluster", True, True, True),
    (_INFRASTRUCTURE, "DockerClusterTemplate", True, False, True),
    (_INFRASTRUCTURE, "DockerMachine", True, True, True),
    (_INFRASTRUCTURE, "DockerMachineTemplate", True, False, True),
    (_INFRASTRUCTURE, "DockerMachinePool", True, True, True),
    (_INFRASTRUCTURE, "DockerMachinePoolTemplate", True, False, True),
    ("runtime.cluster.x-k8s.io/v1alpha1", "ExtensionConfig", False, True, True),
)

_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_DNS_LABEL = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
_SUBDOMAIN_MESSAGE = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must "
    "start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
)
_LABEL_MESSAGE = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and "
    "end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is "
    "'[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
)
#: the alphabet of apiserver's generateName suffixes (no vowels, no confusable characters)
_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
_SYSTEM_METADATA = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")

Key = tuple[str, str, str, str]


def _utc_now() -> datetime:
    return datetime.now(UTC)


def _rfc3339(moment: datetime) -> str:
    """``metav1.Time`` as JSON: seconds precision, UTC, ``Z``."""
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC)
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def _go_quote(value: Any) -> str:
    """A value as Go's ``%#v`` / ``%q`` prints it in field errors (strings double-quoted)."""
    text = str(value).replace("\\", "\\\\").replace('"', '\\"')
    return f'"{text}"'


def _without(obj: Obj, *fields: str) -> Obj:
    return {k: v for k, v in obj.items() if k not in fields}


class MemoryStore:
    """A :class:`~clusterclass.kube.client.Client` holding objects in memory, with API-server rules.

    ``clock`` gives creation and deletion timestamps; ``rng`` the ``generateName`` suffixes;
    ``new_uid`` the object UIDs (uuid4 by default). All three are for reproducible tests.
    The store is safe to use from several threads: every call holds one lock.
    """

    def __init__(
        self,
        *,
        clock: Callable[[], datetime] = _utc_now,
        rng: random.Random | None = None,
        new_uid: Callable[[], str] | None = None,
    ) -> None:
        self._clock = clock
        self._rng = rng or random.Random()
        self._new_uid = new_uid or (lambda: str(uuid.uuid4()))
        self._lock = threading.RLock()
        self._kinds: dict[tuple[str, str], KindInfo] = {}
        self._objects: dict[Key, Obj] = {}
        self._resource_version = 0
        for api_version, kind, namespaced, status, generation in DEFAULT_KINDS:
            self.register_kind(
                api_version, kind, namespaced=namespaced, status_subresource=status, generation=generation
            )
        self.create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": DEFAULT_NAMESPACE}})

    # -- kinds ---------------------------------------------------------------------------------------

    def register_kind(
        self,
        api_version: str,
        kind: str,
        *,
        namespaced: bool = True,
        status_subresource: bool = True,
        generation: bool = True,
        plural: str | None = None,
    ) -> KindInfo:
        """Serve ``kind`` in ``api_version`` (as installing its CRD would); other versions stay served.

        ``generation`` says whether the server keeps ``metadata.generation`` (true for every custom
        resource). ``plural`` defaults to :func:`plural_of`.
        """
        group, version = split_api_version(api_version)
        with self._lock:
            known = self._kinds.get((group, kind))
            versions = (known.versions if known else frozenset()) | {version}
            info = KindInfo(
                group=group,
                kind=kind,
                plural=plural or plural_of(kind),
                namespaced=namespaced,
                status_subresource=status_subresource,
                generation=generation,
                versions=versions,
            )
            self._kinds[(group, kind)] = info
            return info

    def kinds(self) -> list[KindInfo]:
        """Every registered kind, by group and kind."""
        with self._lock:
            return [self._kinds[key] for key in sorted(self._kinds)]

    def kind_info(self, api_version: str, kind: str) -> KindInfo:
        """The registration serving ``kind`` in ``api_version``; NotFound as from the server otherwise."""
        try:
            group, version = split_api_version(api_version)
        except ValueError as err:
            raise BadRequest.new(str(err)) from err
        info = self._kinds.get((group, kind))
        if info is None or version not in info.versions:
            raise NotFound.new("the server could not find the requested resource")
        return info

    # -- reads ---------------------------------------------------------------------------------------

    @property
    def resource_version(self) -> str:
        """The resourceVersion of the latest write."""
        return str(self._resource_version)

    def get(self, api_version: str, kind: str, name: str, *, namespace: str | None = None) -> Obj:
        with self._lock:
            info = self.kind_info(api_version, kind)
            stored = self._stored(info, self._namespace(info, namespace), name)
            return self._served(stored, api_version)

    def list(
        self,
        api_version: str,
        kind: str,
        *,
        namespace: str | None = None,
        label_selector: LabelSelector | None = None,
    ) -> tuple[list[Obj], str]:
        with self._lock:
            info = self.kind_info(api_version, kind)
            try:
                selector = as_selector(label_selector)
            except SelectorError as err:
                raise BadRequest.new(str(err)) from err
            wanted = namespace if info.namespaced else None
            items = [
                self._served(obj, api_version)
                for key, obj in sorted(self._objects.items())
                if key[:2] == (info.group, info.kind)
                and (not wanted or key[2] == wanted)
                and selector.matches(obj["metadata"].get("labels"))
            ]
            return items, self.resource_version

    # -- writes --------------------------------------------------------------------------------------

    def create(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        with self._lock:
            api_version, info = self._object_kind(obj)
            new = copy.deepcopy(obj)
            meta = new["metadata"]
            namespace = self._namespace(info, meta.get("namespace"), what="the object")
            if info.namespaced:
                meta["namespace"] = namespace
            else:
                meta.pop("namespace", None)
            if meta.get("resourceVersion"):
                raise ApiError.new("resourceVersion should not be set on objects to be created")
            name = self._choose_name(info, namespace, meta)
            if info.namespaced:
                self._check_namespace_open(info, namespace, name)
            if (info.group, info.kind, namespace, name) in self._objects:
                raise AlreadyExists.new(f'{info.resource} "{name}" already exists', details=self._details(info, name))
            for system_field in ("deletionTimestamp", "deletionGracePeriodSeconds", "generation"):
                meta.pop(system_field, None)
            meta["uid"] = self._new_uid()
            meta["creationTimestamp"] = _rfc3339(self._clock())
            if info.generation:
                meta["generation"] = 1
            if info.status_subresource:
                new.pop("status", None)
            if (info.group, info.kind) == ("", "Namespace"):
                new["status"] = {"phase": "Active"}
            if dry_run:
                return copy.deepcopy(new)
            return self._served(self._write(info, new), api_version)

    def update(self, obj: Obj, *, dry_run: bool = False) -> Obj:
        with self._lock:
            return self._update(obj, status_only=False, dry_run=dry_run)

    def update_status(self, obj: Obj) -> Obj:
        with self._lock:
            return self._update(obj, status_only=True, dry_run=False)

    def patch_merge(
        self,
        api_version: str,
        kind: str,
        name: str,
        patch: Obj,
        *,
        namespace: str | None = None,
        dry_run: bool = False,
    ) -> Obj:
        with self._lock:
            info = self.kind_info(api_version, kind)
            if not isinstance(patch, dict):
                raise BadRequest.new("the merge patch must be a JSON object")
            namespace = self._namespace(info, namespace)
            current = self._served(self._stored(info, namespace, name), api_version)
            patched = merge_patch(current, patch)
            if not isinstance(patched.get("metadata"), dict):
                raise BadRequest.new("metadata: must be an object")
            if patched.get("apiVersion") != api_version or patched.get("kind") != kind:
                raise BadRequest.new(f"the patch may not change apiVersion or kind of {info.resource} {name!r}")
            if patched["metadata"].get("name") != name:
                raise BadRequest.new(
                    f"the name of the object ({patched['metadata'].get('name')}) does not match the name "
                    f"on the URL ({name})"
                )
            if info.namespaced and patched["metadata"].get("namespace") != namespace:
                raise BadRequest.new(
                    "the namespace of the provided object does not match the namespace sent on the request"
                )
            return self._update(patched, status_only=False, dry_run=dry_run)

    def delete(
        self,
        api_version: str,
        kind: str,
        name: str,
        *,
        namespace: str | None = None,
        preconditions: Preconditions | None = None,
        propagation_policy: PropagationPolicy = "Background",
    ) -> Obj | None:
        with self._lock:
            info = self.kind_info(api_version, kind)
            if propagation_policy not in PROPAGATION_POLICIES:
                raise BadRequest.new(f"unsupported propagationPolicy {propagation_policy!r}")
            namespace = self._namespace(info, namespace)
            stored = self._stored(info, namespace, name)
            meta = stored["metadata"]
            for field_name, label in (("uid", "UID"), ("resourceVersion", "ResourceVersion")):
                wanted = (preconditions or {}).get(field_name)
                if wanted is not None and wanted != meta.get(field_name):
                    raise Conflict.new(
                        f'Operation cannot be fulfilled on {info.resource} "{name}": Precondition failed: '
                        f"{label} in precondition: {wanted}, {label} in object meta: {meta.get(field_name, '')}",
                        details=self._details(info, name),
                    )
            holds = bool(meta.get("finalizers")) or (
                (info.group, info.kind) == ("", "Namespace") and self._namespace_has_content(name)
            )
            if not holds:
                self._remove(info, stored)
                return None
            if meta.get("deletionTimestamp"):
                return self._served(stored, api_version)
            marked = copy.deepcopy(stored)
            marked_meta = marked["metadata"]
            if info.generation and marked_meta.get("generation"):
                marked_meta["generation"] += 1
            marked_meta["deletionTimestamp"] = _rfc3339(self._clock())
            marked_meta["deletionGracePeriodSeconds"] = 0
            if (info.group, info.kind) == ("", "Namespace"):
                marked["status"] = {**(marked.get("status") or {}), "phase": "Terminating"}
            return self._served(self._write(info, marked), api_version)

    # -- internals -----------------------------------------------------------------------------------

    def _update(self, obj: Obj, *, status_only: bool, dry_run: bool) -> Obj:
        api_version, info = self._object_kind(obj)
        if status_only and not info.status_subresource:
            raise NotFound.new("the server could not find the requested resource")
        meta = obj["metadata"]
        name = str(meta.get("name") or "")
        if not name:
            raise BadRequest.new("resource name may not be empty")
        namespace = self._namespace(info, meta.get("namespace"), what="the object")
        old = self._stored(info, namespace, name)
        old_meta = old["metadata"]
        wanted_version = meta.get("resourceVersion")
        if wanted_version and wanted_version != old_meta["resourceVersion"]:
            raise Conflict.new(
                f'Operation cannot be fulfilled on {info.resource} "{name}": the object has been modified; '
                "please apply your changes to the latest version and try again",
                details=self._details(info, name),
            )
        if status_only:
            new = copy.deepcopy(old)
            new["apiVersion"] = api_version
            if "status" in obj:
                new["status"] = copy.deepcopy(obj["status"])
            else:
                new.pop("status", None)
        else:
            new = copy.deepcopy(obj)
            new_meta = new["metadata"]
            if new_meta.get("uid") and new_meta["uid"] != old_meta["uid"]:
                self._raise_invalid(
                    info, name, "metadata.uid", "FieldValueInvalid",
                    f"Invalid value: {_go_quote(new_meta['uid'])}: field is immutable",
                )  # fmt: skip
            for system_field in _SYSTEM_METADATA:
                if system_field in old_meta:
                    new_meta[system_field] = copy.deepcopy(old_meta[system_field])
                else:
                    new_meta.pop(system_field, None)
            if info.namespaced:
                new_meta["namespace"] = namespace
            else:
                new_meta.pop("namespace", None)
            if info.status_subresource:
                if "status" in old:
                    new["status"] = copy.deepcopy(old["status"])
                else:
                    new.pop("status", None)
            if old_meta.get("deletionTimestamp"):
                added = [f for f in new_meta.get("finalizers") or [] if f not in (old_meta.get("finalizers") or [])]
                if added:
                    found = ", ".join(_go_quote(f) for f in sorted(set(added)))
                    self._raise_invalid(
                        info, name, "metadata.finalizers", "FieldValueForbidden",
                        "Forbidden: no new finalizers can be added if the object is being deleted, "
                        f"found new finalizers []string{{{found}}}",
                    )  # fmt: skip
            if info.generation and old_meta.get("generation"):
                ignored = ("metadata", "status") if info.status_subresource else ("metadata",)
                if _without(_normalized(old, api_version), *ignored) != _without(new, *ignored):
                    new_meta["generation"] = old_meta["generation"] + 1
        new["metadata"]["resourceVersion"] = old_meta["resourceVersion"]
        if new == _normalized(old, api_version):
            return copy.deepcopy(new)
        if dry_run:
            return copy.deepcopy(new)
        if new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers"):
            self._remove(info, new)
            new["metadata"]["resourceVersion"] = self.resource_version
            return copy.deepcopy(new)
        return self._served(self._write(info, new), api_version)

    def _object_kind(self, obj: Any) -> tuple[str, KindInfo]:
        if not isinstance(obj, dict):
            raise BadRequest.new("the object must be a JSON object")
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not api_version or not isinstance(api_version, str):
            raise BadRequest.new("Object 'apiVersion' is missing")
        if not kind or not isinstance(kind, str):
            raise BadRequest.new("Object 'Kind' is missing")
        if not isinstance(obj.get("metadata"), dict):
            raise BadRequest.new("Object 'metadata' is missing or not an object")
        return api_version, self.kind_info(api_version, kind)

    def _namespace(self, info: KindInfo, namespace: Any, *, what: str = "the request") -> str:
        """The namespace part of a key: "" for cluster-scoped kinds (a namespace given is ignored)."""
        if not info.namespaced:
            return ""
        if not namespace or not isinstance(namespace, str):
            raise BadRequest.new(f"{what} needs a namespace: {info.resource} is namespaced")
        return str(namespace)

    def _stored(self, info: KindInfo, namespace: str, name: str) -> Obj:
        stored = self._objects.get((info.group, info.kind, namespace, name))
        if stored is None:
            raise NotFound.new(f'{info.resource} "{name}" not found', details=self._details(info, name))
        return stored

    def _choose_name(self, info: KindInfo, namespace: str, meta: Obj) -> str:
        name = meta.get("name")
        generate = meta.get("generateName")
        if not name and generate:
            for _ in range(8):
                name = str(generate) + "".join(self._rng.choice(_NAME_ALPHABET) for _ in range(5))
                if (info.group, info.kind, namespace, name) not in self._objects:
                    break
            meta["name"] = name
        if not name or not isinstance(name, str):
            self._raise_invalid(
                info, "", "metadata.name", "FieldValueRequired", "Required value: name or generateName is required"
            )
        name = str(name)
        is_namespace = (info.group, info.kind) == ("", "Namespace")
        pattern, message, limit = (
            (_DNS_LABEL, _LABEL_MESSAGE, 63) if is_namespace else (_DNS_SUBDOMAIN, _SUBDOMAIN_MESSAGE, 253)
        )
        if len(name) > limit:
            message = f"must be no more than {limit} characters"
        if len(name) > limit or not pattern.match(name):
            self._raise_invalid(
                info, name, "metadata.name", "FieldValueInvalid", f"Invalid value: {_go_quote(name)}: {message}"
            )
        return name

    def _check_namespace_open(self, info: KindInfo, namespace: str, name: str) -> None:
        ns = self._objects.get(("", "Namespace", "", namespace))
        if ns is None:
            raise NotFound.new(f'namespaces "{namespace}" not found', details={"name": namespace, "kind": "namespaces"})
        if ns["metadata"].get("deletionTimestamp"):
            raise Forbidden.new(
                f'{info.resource} "{name}" is forbidden: unable to create new content in namespace {namespace} '
                "because it is being terminated",
                details=self._details(info, name),
            )

    def _namespace_has_content(self, namespace: str) -> bool:
        return any(key[2] == namespace for key in self._objects)

    def _write(self, info: KindInfo, obj: Obj) -> Obj:
        self._resource_version += 1
        obj["metadata"]["resourceVersion"] = self.resource_version
        meta = obj["metadata"]
        self._objects[(info.group, info.kind, meta.get("namespace", ""), meta["name"])] = obj
        return obj

    def _remove(self, info: KindInfo, obj: Obj) -> None:
        meta = obj["metadata"]
        namespace = meta.get("namespace", "") if info.namespaced else ""
        del self._objects[(info.group, info.kind, namespace, meta["name"])]
        self._resource_version += 1
        if namespace:
            ns = self._objects.get(("", "Namespace", "", namespace))
            emptied = ns is not None and not self._namespace_has_content(namespace)
            if emptied and ns and ns["metadata"].get("deletionTimestamp") and not ns["metadata"].get("finalizers"):
                self._remove(self._kinds[("", "Namespace")], ns)

    def _served(self, obj: Obj, api_version: str) -> Obj:
        return _normalized(obj, api_version)

    def _details(self, info: KindInfo, name: str) -> dict[str, Any]:
        details: dict[str, Any] = {"name": name, "kind": info.plural}
        if info.group:
            details["group"] = info.group
        return details

    def _raise_invalid(self, info: KindInfo, name: str, field_path: str, reason: str, detail: str) -> NoReturn:
        details: dict[str, Any] = {
            "name": name,
            "kind": info.kind,
            "causes": [{"reason": reason, "message": detail, "field": field_path}],
        }
        if info.group:
            details["group"] = info.group
        message = f'{info.qualified_kind} "{name}" is invalid: {field_path}: {detail}'
        raise Invalid(make_status(422, "Invalid", message, details=details))


def _normalized(obj: Obj, api_version: str) -> Obj:
    """A deep copy of ``obj`` as served in ``api_version`` (conversion strategy ``None``)."""
    served = copy.deepcopy(obj)
    served["apiVersion"] = api_version
    return served
