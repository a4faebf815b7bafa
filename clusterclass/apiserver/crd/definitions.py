"""CustomResourceDefinitions for the memory store: read a CRD once, then run every custom resource write through it.

:func:`parse_crd` checks an ``apiextensions.k8s.io/v1`` CustomResourceDefinition the way
kube-apiserver's CRD registry does for everything the store relies on — names, group, scope,
versions (unique, exactly one stored), structural schemas, defaults, list types, CEL rules that
compile, subresources — and answers :class:`CrdInfo`, or raises
:class:`~clusterclass.kube.errors.Invalid` with kube-apiserver's causes (checked against a real
one; a schema shared by every version is reported under ``spec.validation.openAPIV3Schema``, as
kube-apiserver's internal form does). :func:`default_crd` is the CRD as the registry stores it
(``singular``, ``listKind`` and a missing conversion filled in: :func:`defaulted_spec`).

:class:`CrdInfo` is what a write needs, in the order kube-apiserver's custom resource handler
does it:

- :meth:`CrdInfo.decode` — a request body: unknown fields pruned (``fieldValidation`` ``Strict``
  refuses them, ``Warn`` returns warnings), ``metadata`` coerced to ObjectMeta, defaults applied;
- :meth:`CrdInfo.create_errors` / :meth:`CrdInfo.update_errors` — ObjectMeta, the schema, the
  scale subresource, embedded resources, list types, CEL rules (see :mod:`clusterclass.apiserver.crd.schema`),
  and :meth:`CrdInfo.invalid` to raise them as one ``Invalid``;
- :meth:`CrdInfo.to_storage` / :meth:`CrdInfo.convert` / :meth:`CrdInfo.read` — a decoded write converted
  to the storage version, a stored object served in another version (strategy ``None`` rewrites apiVersion,
  ``Webhook`` on a Cluster API kind runs its conversion, then the target schema prunes), and reading back a
  stored object (pruned and defaulted with the current schema, as kube-apiserver does on every read);
- :meth:`CrdInfo.deprecation_warning` — the warning every request in a deprecated version gets.

Compiling a CRD's schemas costs time, so :func:`parse_crd` keeps the result for identical
CRD specs: every new store installing the bundled Cluster API CRDs reuses one compilation.
:func:`load_bundled_crds` reads those CRDs from the package (Cluster API v1.14 with the Docker
provider's, in :mod:`clusterclass.crds` with their license) and applies clusterclass's extensions to them.
"""

from __future__ import annotations

import copy
import functools
import json
import re
import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

import yaml

from clusterclass import fielderrors as fe
from clusterclass.api.contracts import version_priority
from clusterclass.api.conversion import ApiVersions, convert, convertible
from clusterclass.api.jsoncopy import json_copy, sorted_copy
from clusterclass.api.objects import Obj
from clusterclass.apiserver.causes import GoText, NamedKind, invalid_error, qualified_kind, to_cause, to_causes
from clusterclass.apiserver.crd.extensions import with_extensions
from clusterclass.apiserver.crd.fieldtypes import SchemaFieldTypes
from clusterclass.apiserver.crd.nodes import Node, Scale
from clusterclass.apiserver.crd.schema import VersionSchema, default_value_errors
from clusterclass.apiserver.objectmeta import (
    MalformedMetadata,
    dns1123_subdomain_errors,
    validate_object_meta,
    validate_object_meta_update,
)
from clusterclass.crds import crd_files
from clusterclass.fielderrors import ErrorType, FieldError
from clusterclass.kube.errors import BadRequest, Invalid
from clusterclass.kube.gotext import go_json
from clusterclass.schema.cel import CelError, Program, default_backend
from clusterclass.schema.celast import selected_fields
from clusterclass.schema.celrules import REASONS, parse_field_path, undefined_fields
from clusterclass.schema.model import SCHEMA_TYPES
from clusterclass.yamlio import SAFE_LOADER

API_VERSION = "apiextensions.k8s.io/v1"
KIND = "CustomResourceDefinition"
GROUP = "apiextensions.k8s.io"
FieldValidation = Literal["Strict", "Warn", "Ignore"]


_CRD_KIND_INFO = NamedKind(GROUP, KIND)
_DNS1035_FMT = "[a-z]([-a-z0-9]*[a-z0-9])?"
_DNS1035_MESSAGE = (
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic "
    f"character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation "
    f"is '{_DNS1035_FMT}')"
)
_SCHEMA_TYPES = sorted(SCHEMA_TYPES)  # kube-apiserver lists them sorted


@dataclass(frozen=True)
class CrdVersion:
    """One version of a CRD: whether it is served and stored, its subresources and its compiled schema."""

    name: str
    served: bool
    storage: bool
    status_subresource: bool
    scale: Scale | None
    schema: VersionSchema
    printer_columns: tuple[Mapping[str, Any], ...] = ()
    deprecated: bool = False
    #: the version's own ``deprecationWarning`` (None: kube-apiserver's default text)
    deprecation_warning: str | None = None

    @property
    def field_types(self) -> SchemaFieldTypes:
        """The :class:`~clusterclass.apiserver.apply.fieldtypes.FieldTypes` of this version, for server-side apply."""
        return self.schema.field_types


@dataclass(frozen=True)
class CrdInfo:
    """A checked CRD: its names and scope, and per version what serving and validating need."""

    name: str
    group: str
    kind: str
    plural: str
    singular: str
    list_kind: str
    namespaced: bool
    versions: Mapping[str, CrdVersion]
    storage_version: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    #: ``spec.conversion.strategy``: ``None`` rewrites apiVersion; ``Webhook`` converts (in process, see convert)
    conversion: str = "None"

    # -- names ----------------------------------------------------------------------------------

    @property
    def served_versions(self) -> list[str]:
        return [name for name, v in self.versions.items() if v.served]

    @property
    def resource(self) -> str:
        """``clusters.cluster.x-k8s.io``."""
        return f"{self.plural}.{self.group}"

    @property
    def qualified_kind(self) -> str:
        """``Cluster.cluster.x-k8s.io``."""
        return qualified_kind(self)

    def api_version(self, version: str) -> str:
        return f"{self.group}/{version}"

    def deprecation_warning(self, version: str) -> str | None:
        """The warning kube-apiserver adds to every request in ``version`` when the CRD deprecates it (None when it
        does not): the version's ``deprecationWarning``, else ``<group>/<version> <Kind> is deprecated``, followed by
        ``; use <group>/<newer> <Kind>`` for the newest served version that is newer and not deprecated."""
        found = self.versions.get(version)
        if found is None or not found.deprecated:
            return None
        if found.deprecation_warning is not None:
            return found.deprecation_warning or None
        text = f"{self.group}/{version} {self.kind} is deprecated"
        newer = [
            v.name
            for v in self.versions.values()
            if v.served and not v.deprecated and version_priority(v.name) > version_priority(version)
        ]
        if newer:
            text += f"; use {self.group}/{max(newer, key=version_priority)} {self.kind}"
        return text

    # -- decoding -------------------------------------------------------------------------------

    def decode(
        self, obj: Obj, version: str, *, field_validation: FieldValidation = "Warn", keep_nulls: bool = False
    ) -> list[str]:
        """Decode a request body in place as kube-apiserver does: prune, coerce ``metadata``, default.

        Returns the warnings to send (``unknown field "spec.x"`` with ``Warn``). Raises
        :class:`~clusterclass.kube.errors.BadRequest` for ``metadata`` that does not decode and,
        with ``Strict``, for unknown fields — with kube-apiserver's messages.
        """
        schema = self.versions[version].schema
        try:
            unknown = schema.prune(obj, keep_nulls=keep_nulls)
        except MalformedMetadata as err:
            raise self.decode_error(version, str(err)) from None
        if unknown and field_validation == "Strict":
            raise self.decode_error(version, "strict decoding error: " + ", ".join(_unknown(p) for p in unknown))
        schema.default(obj)
        return [_unknown(p) for p in unknown] if field_validation == "Warn" else []

    def decode_error(self, version: str, message: str) -> BadRequest:
        """kube-apiserver's 400 for a body it cannot decode: ``Cluster in version "v1beta1" cannot be handled ...``."""
        text = f'{self.kind} in version "{version}" cannot be handled as a {self.kind}: {message}'
        return BadRequest.new(text)

    @property
    def converts(self) -> bool:
        """Whether versions convert through the Cluster API conversions: strategy ``Webhook`` on a kind they know.

        The embedded management cluster runs the conversion webhook in process, so a CRD that names one (as
        Cluster API's do once installed) converts exactly as the webhook ``clusterclass run`` serves would.
        """
        return self.conversion == "Webhook" and convertible(self.group, self.kind)

    def convert(self, obj: Obj, version: str, api_versions: ApiVersions | None = None, *, stored: bool = False) -> Obj:
        """``obj`` served in ``version``, pruned to that version's schema (without defaulting, so nulls stay), as
        kube-apiserver's converter does. Strategy ``None`` rewrites ``apiVersion`` in place; ``Webhook`` (see
        :attr:`converts`) answers a new object and raises :class:`~clusterclass.api.conversion.ConversionError`
        when it cannot.

        ``stored``: ``obj`` is a stored object, already in the order etcd holds it (see :meth:`to_storage`), which
        must not change: it is not ordered again, and strategy ``None`` rewrites a copy."""
        source = _version_of(obj)
        if self.converts and api_versions is not None and source != version and source in self.versions:
            # kube-apiserver sends the webhook the object as Go encodes an unstructured one: keys sorted, at
            # every level (what the conversion writes into the conversion-data annotation keeps that order)
            obj = convert(obj if stored else _go_ordered(obj), self.api_version(version), api_versions=api_versions)
        else:
            if stored:
                obj = json_copy(obj)
            obj["apiVersion"] = self.api_version(version)
        self.versions[version].schema.prune(obj, drop_malformed=True, keep_nulls=True)
        return obj

    def read(self, obj: Obj) -> Obj:
        """A stored object as a read sees it (in place): pruned and defaulted with the schema of the version it
        is stored in (the storage version when that one is gone), as every read from etcd is."""
        version = self.versions.get(_version_of(obj)) or self.versions[self.storage_version]
        version.schema.prune(obj, drop_malformed=True)
        version.schema.default(obj)
        return obj

    def to_storage(self, obj: Obj, api_versions: ApiVersions) -> Obj:
        """``obj`` (decoded in its request version) as it is stored: converted to the storage version, pruned and
        defaulted with the storage schema, with its keys in the order etcd holds them (kube-apiserver encodes
        an unstructured object as Go encodes a map: keys sorted). Always a new object."""
        if _version_of(obj) != self.storage_version:
            obj = self.read(self.convert(obj, self.storage_version, api_versions))
        ordered: Obj = _go_ordered(obj)
        return ordered

    # -- validation -----------------------------------------------------------------------------

    def create_errors(self, obj: Mapping[str, Any], version: str) -> list[FieldError]:
        """Everything a create checks, in kube-apiserver's order (the CRD strategy's ``Validate``)."""
        errors = validate_object_meta(obj, self.namespaced)
        errors.extend(self.versions[version].schema.errors(obj, preceding=errors))
        return errors

    def update_errors(
        self, obj: Mapping[str, Any], old: Mapping[str, Any], version: str, *, status: bool = False
    ) -> list[FieldError]:
        """Everything an update (or, with ``status``, a status update) checks against the stored ``old``.

        As kube-apiserver: first the checks every resource gets (ObjectMeta with path-segment names,
        then ObjectMeta against the old object), then the CRD strategy's (ObjectMeta against the
        old object again, then the schema, ratcheted against ``old``). So an ObjectMeta problem
        appears several times among the causes, and once in the message.
        """
        errors = validate_object_meta(obj, self.namespaced, path_segment_names=True)
        meta_update = validate_object_meta_update(obj, old)  # the same checks twice: computed once
        errors.extend(meta_update)
        strategy = list(meta_update)
        strategy.extend(self.versions[version].schema.errors(obj, old, status=status, preceding=strategy))
        return errors + strategy

    def invalid(self, name: str, errors: Sequence[FieldError | Mapping[str, str]]) -> Invalid:
        """The ``Invalid`` error for these errors (or causes) of object ``name``."""
        causes = [to_cause(e) if isinstance(e, FieldError) else e for e in errors]
        return invalid_error(self, name, causes)

    def resource_version_required(self, name: str) -> Invalid:
        """The 422 an update without ``metadata.resourceVersion`` gets: custom resources allow no unconditional
        update. Raised by the registry before any validation, so it names the resource, not the kind."""
        error = FieldError("metadata.resourceVersion", ErrorType.INVALID, "must be specified for an update", 0)
        return invalid_error(NamedKind(self.group, self.plural), name, to_causes([error]))


def _go_ordered(value: Any) -> Any:
    """``value`` with every object's keys in sorted order, as Go marshals a ``map[string]interface{}``."""
    return sorted_copy(value)


def _version_of(obj: Mapping[str, Any]) -> str:
    return str(obj.get("apiVersion") or "").rpartition("/")[2]


def _unknown(path: str) -> str:
    return f"unknown field {json.dumps(path)}"


# --- loading -----------------------------------------------------------------------------------


def load_bundled_crds() -> list[Obj]:
    """The Cluster API v1.14 CRDs (with the Docker provider's) shipped with the package, by file name.

    Each serves v1beta1 and v1beta2 (stored) and carries the contract labels upstream's kustomize configuration
    (and so ``clusterctl init``) puts on them (``cluster.x-k8s.io/v1beta1: v1beta1``, ``cluster.x-k8s.io/v1beta2:
    v1beta2``; see :mod:`clusterclass.api.contracts`), with clusterclass's extensions of the API
    (:mod:`clusterclass.apiserver.crd.extensions`). The files are read once per process; every call returns fresh
    copies.
    """
    return copy.deepcopy(_bundled())


@functools.cache
def _bundled() -> list[Obj]:
    crds: list[Obj] = []
    for entry in crd_files():
        for document in yaml.load_all(entry.read_text(encoding="utf-8"), Loader=SAFE_LOADER):
            if isinstance(document, dict) and document.get("kind") == KIND:
                crds.append(with_extensions(document))
    return crds


# --- defaulting and parsing a CRD --------------------------------------------------------------


def defaulted_spec(spec: Mapping[str, Any]) -> Obj:
    """A CRD ``spec`` with apiextensions/v1's defaults, as the registry stores it (a shallow copy, names copied).

    As ``SetDefaults_CustomResourceDefinitionSpec``: an empty or missing ``singular`` is the kind
    lower-cased, an empty or missing ``listKind`` is the kind + ``List``, and a missing ``conversion``
    is strategy ``None``. A ``conversion`` without a strategy is not defaulted: it is Invalid
    (``spec.conversion.strategy: Required value``), as kube-apiserver answers.
    """
    defaulted = dict(spec)
    names = spec.get("names")
    if isinstance(names, Mapping):
        names = defaulted["names"] = dict(names)
        kind = names.get("kind")
        if isinstance(kind, str):
            if not names.get("singular"):
                names["singular"] = kind.lower()
            if kind and not names.get("listKind"):
                names["listKind"] = kind + "List"
    if not isinstance(spec.get("conversion"), Mapping):
        defaulted["conversion"] = {"strategy": "None"}
    return defaulted


def default_crd(crd: Mapping[str, Any]) -> Obj:
    """A copy of ``crd`` with the registry's defaults (:func:`defaulted_spec`)."""
    result: Obj = copy.deepcopy(dict(crd))
    if isinstance(result.get("spec"), dict):
        result["spec"] = defaulted_spec(result["spec"])
    return result


_CACHE: dict[str, CrdInfo] = {}
_CACHE_LOCK = threading.Lock()


def parse_crd(crd: Mapping[str, Any]) -> CrdInfo:
    """Check ``crd`` and compile its schemas; :class:`~clusterclass.kube.errors.Invalid` with every problem.

    Results are kept per distinct ``spec`` (and name), so installing the same CRD again is cheap.
    """
    try:
        key = json.dumps([crd.get("metadata", {}).get("name"), crd.get("spec")], sort_keys=True, default=str)
    except (TypeError, ValueError, AttributeError):
        key = ""
    if key:
        with _CACHE_LOCK:
            cached = _CACHE.get(key)
        if cached is not None:
            return cached
    info = _parse(default_crd(crd))
    if key:
        with _CACHE_LOCK:
            _CACHE[key] = info
    return info


def _parse(crd: Obj) -> CrdInfo:
    errors: list[FieldError] = []
    meta, spec = _map(crd.get("metadata")), _map(crd.get("spec"))
    name = _string(meta.get("name"))
    group = _string(spec.get("group"))
    names = _map(spec.get("names"))
    plural, kind = _string(names.get("plural")), _string(names.get("kind"))
    if not name:
        errors.append(fe.required("metadata.name", "name or generateName is required"))
    elif name != f"{plural}.{group}":
        errors.append(fe.invalid("metadata.name", name, 'must be spec.names.plural+"."+spec.group'))
    errors.extend(_group_errors(group))
    scope = _string(spec.get("scope"))
    if not scope:
        errors.append(fe.required("spec.scope"))
    elif scope not in ("Cluster", "Namespaced"):
        errors.append(fe.not_supported("spec.scope", scope, ["Cluster", "Namespaced"]))
    errors.extend(_names_errors(names))
    versions = _list(spec.get("versions"))
    compiled, version_errors = _versions(versions)
    errors.extend(version_errors)
    if spec.get("preserveUnknownFields") is True:
        detail = (
            "cannot set to true, set x-kubernetes-preserve-unknown-fields to true in spec.versions[*].schema instead"
        )
        errors.append(fe.invalid("spec.preserveUnknownFields", True, detail))
    strategy = _string(_map(spec.get("conversion")).get("strategy"))
    if not strategy:
        errors.append(fe.required("spec.conversion.strategy"))
    elif strategy not in ("None", "Webhook"):
        errors.append(fe.not_supported("spec.conversion.strategy", strategy, ["None", "Webhook"]))
    if errors:
        raise invalid_error(_CRD_KIND_INFO, name, to_causes(errors))
    storage = next(v.name for v in compiled if v.storage)
    return CrdInfo(
        name=name,
        group=group,
        kind=kind,
        plural=plural,
        singular=_string(names.get("singular")),
        list_kind=_string(names.get("listKind")),
        namespaced=scope == "Namespaced",
        versions={v.name: v for v in compiled},
        storage_version=storage,
        short_names=tuple(s for s in names.get("shortNames") or () if isinstance(s, str)),
        categories=tuple(c for c in names.get("categories") or () if isinstance(c, str)),
        conversion=strategy,
    )


def _string(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _map(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _group_errors(group: str) -> list[FieldError]:
    if not group:
        return [fe.required("spec.group")]
    errors = [fe.invalid("spec.group", group, m) for m in dns1123_subdomain_errors(group)]
    if "." not in group:
        errors.append(fe.invalid("spec.group", group, "should be a domain with at least one dot"))
    return errors


def _dns1035_errors(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not re.fullmatch(_DNS1035_FMT, value):
        errors.append(_DNS1035_MESSAGE)
    return errors


def _names_errors(names: Mapping[str, Any]) -> list[FieldError]:
    errors: list[FieldError] = []
    path = "spec.names"
    for key in ("plural", "singular", "kind", "listKind"):
        if not _string(names.get(key)):
            errors.append(fe.required(f"{path}.{key}"))
    for key in ("plural", "singular"):
        value = _string(names.get(key))
        if value and _dns1035_errors(value):
            errors.append(fe.invalid(f"{path}.{key}", value, ",".join(_dns1035_errors(value))))
    for key in ("kind", "listKind"):
        value = _string(names.get(key))
        if value and _dns1035_errors(value.lower()):
            detail = "may have mixed case, but should otherwise match: " + ",".join(_dns1035_errors(value.lower()))
            errors.append(fe.invalid(f"{path}.{key}", value, detail))
    for key in ("shortNames", "categories"):
        for i, item in enumerate(names.get(key) or ()):
            if not isinstance(item, str) or _dns1035_errors(item):
                detail = ",".join(_dns1035_errors(item)) if isinstance(item, str) else "must be a string"
                errors.append(fe.invalid(f"{path}.{key}[{i}]", item, detail))
    kind = _string(names.get("kind"))
    if kind and kind == _string(names.get("listKind")):
        errors.append(fe.invalid(f"{path}.listKind", kind, "kind and listKind may not be the same"))
    return errors


def _versions_text(versions: list[Any]) -> GoText:
    """The internal ``[]CustomResourceDefinitionVersion`` as kube-apiserver prints it in an error."""
    shown = []
    for v in versions:
        v = v if isinstance(v, Mapping) else {}
        shown.append(
            "{"
            + ",".join(
                [
                    f'"Name":{go_json(_string(v.get("name")))}',
                    f'"Served":{go_json(v.get("served") is True)}',
                    f'"Storage":{go_json(v.get("storage") is True)}',
                    f'"Deprecated":{go_json(v.get("deprecated") is True)}',
                    f'"DeprecationWarning":{go_json(v.get("deprecationWarning"))}',
                    '"Schema":null',
                    '"Subresources":null',
                    '"AdditionalPrinterColumns":null',
                    '"SelectableFields":null',
                ]
            )
            + "}"
        )
    return GoText("[" + ",".join(shown) + "]")


def _versions(versions: list[Any]) -> tuple[list[CrdVersion], list[FieldError]]:
    errors: list[FieldError] = []
    storage = [v for v in versions if isinstance(v, Mapping) and v.get("storage") is True]
    names = [_string(v.get("name")) if isinstance(v, Mapping) else "" for v in versions]
    schemas = [_schema_of(v) for v in versions]
    shared_schema = len(versions) > 0 and all(s == schemas[0] for s in schemas)
    subresources = [v.get("subresources") if isinstance(v, Mapping) else None for v in versions]
    shared_subresources = len(versions) > 0 and all(s == subresources[0] for s in subresources)
    compiled: list[CrdVersion] = []
    schema_checked = False
    for i, raw in enumerate(versions):
        path = f"spec.versions[{i}]"
        if not isinstance(raw, Mapping):
            errors.append(fe.invalid(path, raw, "must be an object"))
            continue
        version = names[i]
        for message in _dns1035_errors(version):
            errors.append(fe.invalid(f"{path}.name", version, message))
        sub_path = "spec.subresources" if shared_subresources else f"{path}.subresources"
        status_sub, scale, sub_errors = _subresources(subresources[i], sub_path)
        if not (shared_subresources and i > 0):
            errors.extend(sub_errors)
        schema_path = "spec.validation.openAPIV3Schema" if shared_schema else f"{path}.schema.openAPIV3Schema"
        raw_schema = schemas[i]
        if raw_schema is None:
            errors.append(fe.required(f"{path}.schema.openAPIV3Schema"))
            continue
        version_schema = VersionSchema(raw_schema, scale=scale)
        if not (shared_schema and schema_checked):
            errors.extend(_schema_errors(version_schema, raw_schema, schema_path))
            schema_checked = True
        compiled.append(
            CrdVersion(
                name=version,
                served=raw.get("served") is True,
                storage=raw.get("storage") is True,
                status_subresource=status_sub,
                scale=scale,
                schema=version_schema,
                printer_columns=tuple(c for c in raw.get("additionalPrinterColumns") or () if isinstance(c, Mapping)),
                deprecated=raw.get("deprecated") is True,
                deprecation_warning=_string(raw["deprecationWarning"]) if "deprecationWarning" in raw else None,
            )
        )
    if len(set(names)) != len(names):
        errors.append(fe.invalid("spec.versions", _versions_text(versions), "must contain unique version names"))
    if len(storage) != 1:
        errors.append(
            fe.invalid(
                "spec.versions", _versions_text(versions), "must have exactly one version marked as storage version"
            )
        )
        if not storage:
            errors.append(fe.invalid("status.storedVersions", None, "must have at least one stored version"))
        else:
            first, last = _string(storage[0].get("name")), _string(storage[-1].get("name"))
            errors.append(fe.invalid("status.storedVersions", [first], f"must have the storage version {last}"))
    return compiled, errors


def _schema_of(version: Any) -> Mapping[str, Any] | None:
    if not isinstance(version, Mapping):
        return None
    schema = version.get("schema")
    raw = schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None
    return raw if isinstance(raw, Mapping) else None


def _subresources(raw: Any, path: str) -> tuple[bool, Scale | None, list[FieldError]]:
    if not isinstance(raw, Mapping):
        return False, None, []
    errors: list[FieldError] = []
    status = isinstance(raw.get("status"), Mapping)
    scale_raw = raw.get("scale")
    scale: Scale | None = None
    if isinstance(scale_raw, Mapping):
        scale_path = f"{path}.scale"
        spec_path = _string(scale_raw.get("specReplicasPath"))
        status_path = _string(scale_raw.get("statusReplicasPath"))
        selector = _string(scale_raw.get("labelSelectorPath")) or None
        for key, value, under in (
            ("specReplicasPath", spec_path, (".spec",)),
            ("statusReplicasPath", status_path, (".status",)),
            ("labelSelectorPath", selector, (".spec", ".status")),
        ):
            if value is None:
                continue
            if not value:
                errors.append(fe.required(f"{scale_path}.{key}"))
            elif not _simple_json_path(value):
                errors.append(fe.invalid(f"{scale_path}.{key}", value, "must be a simple json path starting with ."))
            elif not any(value.startswith(u + ".") for u in under):
                where = "under .spec" if under == (".spec",) else "under .status" if under == (".status",) else None
                detail = (
                    f"should be a json path {where}" if where else "should be a json path under either .spec or .status"
                )
                errors.append(fe.invalid(f"{scale_path}.{key}", value, detail))
        scale = Scale(spec_path, status_path, selector)
    return status, scale, errors


def _simple_json_path(path: str) -> bool:
    if not path.startswith("."):
        return False
    return all(part and all(c.isalnum() or c in "_-" for c in part) for part in path[1:].split("."))


# --- structural schema checks ------------------------------------------------------------------


def _schema_errors(version_schema: VersionSchema, raw: Mapping[str, Any], path: str) -> list[FieldError]:
    """The parser's problems, then the structural rules, defaults, list types and CEL rules, with kube's paths."""
    errors = [_reroot(e, "openAPIV3Schema", path) for e in version_schema.parse_errors]
    if errors:
        return errors
    _Structure(errors).check(version_schema.root, raw, path, level="root", in_value_validation=False)
    return errors


def _reroot(error: FieldError, old: str, new: str) -> FieldError:
    field_path = new + error.field[len(old) :] if error.field.startswith(old) else error.field
    return FieldError(field_path, error.type, _regexp_detail(error.detail), error.value)


class _Structure:
    def __init__(self, errors: list[FieldError]) -> None:
        self.errors = errors

    def check(
        self,
        node: Node,
        raw: Mapping[str, Any],
        path: str,
        *,
        level: str,
        in_value_validation: bool,
        correlatable: bool = True,
    ) -> None:
        if not in_value_validation:
            self.types(node, raw, path, level)
        if raw.get("x-kubernetes-preserve-unknown-fields") is False:
            self.errors.append(
                fe.invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined")
            )
        if raw.get("uniqueItems") is True:
            detail = "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"
            self.errors.append(fe.forbidden(f"{path}.uniqueItems", detail))
        if node.properties is not None and (node.additional is not None or node.additional_bool is not None):
            detail = "additionalProperties and properties are mutual exclusive"
            self.errors.append(fe.forbidden(f"{path}.additionalProperties", detail))
        if level == "root" and node.properties is not None and "metadata" in node.properties:
            self.metadata(_map(raw.get("properties")).get("metadata"), f"{path}.properties[metadata]")
        self.list_type(node, raw, path)
        self.default(node, path)
        self.rules(node, path, correlatable)
        raw_props = _map(raw.get("properties"))
        for name, child in (node.properties or {}).items():
            child_raw = _map(raw_props.get(name))
            self.check(
                child, child_raw, f"{path}.properties[{name}]", level="field",
                in_value_validation=in_value_validation, correlatable=correlatable,
            )  # fmt: skip
        if node.additional is not None:
            self.check(
                node.additional, _map(raw.get("additionalProperties")), f"{path}.additionalProperties", level="field",
                in_value_validation=in_value_validation, correlatable=correlatable,
            )  # fmt: skip
        if node.items is not None:
            item_correlatable = correlatable and node.list_type == "map"
            self.check(
                node.items, _map(raw.get("items")), f"{path}.items", level="item",
                in_value_validation=in_value_validation, correlatable=item_correlatable,
            )  # fmt: skip
            if correlatable and not item_correlatable:
                self.uncorrelatable(node.items, f"{path}.items", path)
        for key, subs in (("allOf", node.all_of), ("anyOf", node.any_of), ("oneOf", node.one_of)):
            raw_subs = _list(raw.get(key))
            for i, sub in enumerate(subs):
                sub_raw = _map(raw_subs[i]) if i < len(raw_subs) else {}
                self.check(sub, sub_raw, f"{path}.{key}[{i}]", level="field", in_value_validation=True)

    def types(self, node: Node, raw: Mapping[str, Any], path: str, level: str) -> None:
        if node.schema.int_or_string:
            if node.type:
                detail = "must be empty if x-kubernetes-int-or-string is true"
                self.errors.append(fe.invalid(f"{path}.type", node.type, detail))
        elif not node.type:
            if not node.preserve and not node.embedded:
                where = {"root": "at the root", "item": "for specified array items"}.get(
                    level, "for specified object fields"
                )
                self.errors.append(fe.required(f"{path}.type", f"must not be empty {where}"))
        elif node.type not in _SCHEMA_TYPES:
            self.errors.append(fe.not_supported(f"{path}.type", node.type, _SCHEMA_TYPES))
        if level == "root" and node.type and node.type != "object":
            self.errors.append(fe.invalid(f"{path}.type", node.type, "must be object at the root"))
        if node.type == "array" and node.items is None:
            self.errors.append(fe.required(f"{path}.items", "must be specified"))
        if node.embedded and node.type and node.type != "object":
            detail = "must be object if x-kubernetes-embedded-resource is true"
            self.errors.append(fe.invalid(f"{path}.type", node.type, detail))

    def metadata(self, raw: Any, path: str) -> None:
        allowed = {"type", "properties", "description"}
        props = raw.get("properties") if isinstance(raw, Mapping) else None
        extra_keys = isinstance(raw, Mapping) and any(k not in allowed for k in raw)
        extra_props = isinstance(props, Mapping) and any(k not in ("name", "generateName") for k in props)
        if extra_keys or extra_props:
            detail = "must not specify anything other than name and generateName, but metadata is implicitly specified"
            self.errors.append(fe.forbidden(path, detail))

    def list_type(self, node: Node, raw: Mapping[str, Any], path: str) -> None:
        list_type = raw.get("x-kubernetes-list-type")
        keys = raw.get("x-kubernetes-list-map-keys")
        if list_type is not None and list_type not in ("atomic", "set", "map"):
            self.errors.append(fe.not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
        if keys is not None and list_type != "map":
            detail = "must not be set if x-kubernetes-list-type is not map"
            self.errors.append(fe.forbidden(f"{path}.x-kubernetes-list-map-keys", detail))
        if list_type == "map":
            if not keys:
                detail = "must not be empty if x-kubernetes-list-type is map"
                self.errors.append(fe.required(f"{path}.x-kubernetes-list-map-keys", detail))
            elif node.items is not None:
                for key in node.list_keys:
                    child = node.items.child(key)
                    if child is None:
                        detail = "entries must all be names of item properties"
                        self.errors.append(fe.invalid(f"{path}.x-kubernetes-list-map-keys", keys, detail))
                    elif key not in node.items.required and not child.has_default:
                        detail = (
                            "this property is in x-kubernetes-list-map-keys, so it must have a default or be a "
                            "required property"
                        )
                        self.errors.append(fe.required(f"{path}.items.properties[{key}].default", detail))
        if (
            list_type == "set"
            and node.items is not None
            and node.items.type == "object"
            and node.items.map_type != "atomic"
        ):
            detail = "must be atomic as item of a list with x-kubernetes-list-type=set"
            self.errors.append(fe.invalid(f"{path}.items.x-kubernetes-map-type", node.items.map_type, detail))

    def default(self, node: Node, path: str) -> None:
        if node.has_default and node.default is not None:
            self.errors.extend(default_value_errors(node, f"{path}.default"))

    def rules(self, node: Node, path: str, correlatable: bool) -> None:
        if not node.rules:
            return
        try:
            backend = default_backend()
        except Exception as err:
            self.errors.append(fe.internal(path, f"CEL rules cannot be checked: {err}"))
            return
        for i, (rule, _) in enumerate(node.rules):
            rule_path = f"{path}.x-kubernetes-validations[{i}]"
            shown = _rule_text(rule)
            try:
                program = backend.compile(rule.rule)
            except CelError as err:
                self.errors.append(fe.invalid(f"{rule_path}.rule", shown, f"compilation failed: {err}"))
                continue
            problems = [*_scalar_selections(program, node, rule.rule), *undefined_fields(program, node.schema)]
            for problem in problems[:1]:
                self.errors.append(fe.invalid(f"{rule_path}.rule", shown, f"compilation failed: {problem}"))
            if rule.message_expression.strip():
                try:
                    backend.compile(rule.message_expression)
                except CelError as err:
                    detail = f"messageExpression compilation failed: {err}"
                    self.errors.append(fe.invalid(f"{rule_path}.messageExpression", shown, detail))
            if rule.field_path and not _names_a_field(node, rule.field_path):
                self.errors.append(fe.invalid(f"{rule_path}.fieldPath", rule.field_path, "must be a valid path"))
            if rule.reason and rule.reason not in REASONS:
                self.errors.append(fe.not_supported(f"{rule_path}.reason", rule.reason, sorted(REASONS)))

    def uncorrelatable(self, node: Node, path: str, list_path: str) -> None:
        """``oldSelf`` below an atomic or set list has nothing to compare with: kube-apiserver refuses it."""
        for rule, program in node.rules:
            if program is not None and "oldSelf" in program.identifiers:
                i = [r for r, _ in node.rules].index(rule)
                detail = f"oldSelf cannot be used on the uncorrelatable portion of the schema within {list_path}"
                self.errors.append(fe.invalid(f"{path}.x-kubernetes-validations[{i}].rule", rule.rule, detail))
        for name, child in (node.properties or {}).items():
            self.uncorrelatable(child, f"{path}.properties[{name}]", list_path)
        if node.additional is not None:
            self.uncorrelatable(node.additional, f"{path}.additionalProperties", list_path)
        if node.items is not None:
            self.uncorrelatable(node.items, f"{path}.items", list_path)


def _names_a_field(node: Node, field_path: str) -> bool:
    """Whether a rule's ``fieldPath`` reaches a field of the schema it sits on, as kube-apiserver requires.

    Each ``.name`` or ``['name']`` step is a declared property where the node has properties, any
    key where it has ``additionalProperties``, and nothing otherwise (list items cannot be named).
    """
    segments = parse_field_path(field_path)
    if segments is None:
        return False
    current: Node | None = node
    for _, name in segments:
        if current is None:
            return False
        current = current.properties.get(name) if current.properties is not None else current.additional
    return current is not None


_CEL_SCALARS = {"string": "string", "integer": "int", "number": "double", "boolean": "bool"}


def _scalar_selections(program: Program, node: Node, text: str) -> list[str]:
    """CEL's type check of ``self.a.b`` where ``a`` is a scalar: kube-apiserver's compiler error, with its caret."""
    problems: list[str] = []
    for root in ("self", "oldSelf"):
        for chain in selected_fields(program.tree, root):
            current: Node | None = node
            for depth, name in enumerate(chain):
                if current is None:
                    break
                if current.type in _CEL_SCALARS:
                    selected = ".".join((root, *chain[: depth + 1]))
                    found = text.find(selected)
                    column = found + len(selected) - len(name) if found >= 0 else 1
                    caret = "." * (column - 1) + "^"
                    problems.append(
                        f"ERROR: <input>:1:{column}: type '{_CEL_SCALARS[current.type]}' does not support field "
                        f"selection\n | {text}\n | {caret}"
                    )
                    break
                current = current.child(name) if current.properties is not None else None
    return problems


def _regexp_detail(detail: str) -> str:
    """RE2's wording of a bad ``pattern`` in Go's (``invalid or unsupported Perl syntax: `(?=```)."""
    prefix = "must be a valid regular expression, but isn't: error parsing regexp: "
    if not detail.startswith(prefix):
        return detail
    reason = detail[len(prefix) :]
    for re2_text, go_text in _RE2_TO_GO:
        if reason.startswith(re2_text):
            fragment = reason[len(re2_text) :].lstrip(": ").strip()
            return f"{prefix}{go_text}: `{fragment}`"
    return detail


_RE2_TO_GO = (
    ("invalid perl operator", "invalid or unsupported Perl syntax"),
    ("missing ]", "missing closing ]"),
    ("missing )", "missing closing )"),
    ("unexpected )", "unexpected )"),
    ("no argument for repetition operator", "missing argument to repetition operator"),
    ("bad repetition operator", "invalid nested repetition operator"),
    ("trailing \\", "trailing backslash at end of expression"),
    ("invalid escape sequence", "invalid escape sequence"),
    ("invalid character class range", "invalid character class range"),
    ("invalid character class", "invalid character class"),
    ("invalid named capture group", "invalid named capture"),
    ("bad repetition count", "invalid repeat count"),
    ("invalid UTF-8", "invalid UTF-8"),
)


def _rule_text(rule: Any) -> GoText:
    reason = go_json(rule.reason) if rule.reason else "null"
    return GoText(
        "{"
        f'"Rule":{go_json(rule.rule)},"Message":{go_json(rule.message)},'
        f'"MessageExpression":{go_json(rule.message_expression)},"Reason":{reason},'
        f'"FieldPath":{go_json(rule.field_path)},"OptionalOldSelf":null'
        "}"
    )


__all__ = [
    "API_VERSION",
    "KIND",
    "CrdInfo",
    "CrdVersion",
    "FieldValidation",
    "default_crd",
    "defaulted_spec",
    "load_bundled_crds",
    "parse_crd",
]
