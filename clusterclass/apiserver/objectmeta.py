"""``metadata`` the way kube-apiserver treats it on every write: decoded into ObjectMeta, then validated.

A custom resource's ``metadata`` is not governed by its CRD schema. kube-apiserver decodes it into
the ``ObjectMeta`` struct and encodes it back, so (:func:`coerce_object_meta`):

- fields ObjectMeta does not have are dropped (and reported, for ``fieldValidation=Strict``/``Warn``);
- a field of the wrong JSON type fails the request with Go's decoding message (``json: cannot
  unmarshal number into Go struct field ObjectMeta.labels of type string``); a stored object with
  one has that field dropped instead (``drop_malformed``), as kube-apiserver does when it reads etcd;
- empty values disappear (``omitempty``), a ``null`` label or annotation value becomes ``""``, and
  timestamps are re-encoded with seconds precision in UTC.

Then every create and update gets ObjectMeta validation (:func:`validate_object_meta`,
:func:`validate_object_meta_update`), with apimachinery's messages as Kubernetes 1.37 words them
(checked against a real kube-apiserver): names and generateName as DNS subdomains, the namespace
as a DNS label and only on namespaced kinds, label keys and annotation keys (case-insensitively) as
qualified names, label values, the 256 KiB annotation total, ownerReferences (apiVersion, kind,
name and uid present, no Event owner, at most one controller), finalizer names, managedFields.
Paths are apimachinery's: ``metadata.labels`` names the map, not the key;
``metadata.ownerReferences[0].uid`` the entry. Finalizers without a domain are allowed but warned
about (:func:`finalizer_warnings`), as kube-apiserver does for custom resources.

Errors are :class:`~clusterclass.fielderrors.FieldError` values; :mod:`clusterclass.apiserver.causes`
turns them into Status causes.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from datetime import UTC, datetime
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.api.objects import is_int
from clusterclass.apiserver.causes import GoText
from clusterclass.fielderrors import ErrorType, FieldError
from clusterclass.kube.gotext import go_json, go_quote, json_kind, rfc3339

# --- apimachinery's name rules -------------------------------------------------------------------

DNS1123_LABEL_MAX = 63
DNS1123_SUBDOMAIN_MAX = 253
QUALIFIED_NAME_MAX = 63
LABEL_VALUE_MAX = 63
TOTAL_ANNOTATION_SIZE = 256 * 1024
FIELD_MANAGER_MAX = 128
SUBRESOURCE_NAME_MAX = 256

_DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
_DNS1123_SUBDOMAIN_FMT = _DNS1123_LABEL_FMT + "(\\." + _DNS1123_LABEL_FMT + ")*"
_QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_LABEL_VALUE_FMT = "(" + _QUALIFIED_NAME_FMT + ")?"
_DNS1123_LABEL = re.compile(_DNS1123_LABEL_FMT + r"\Z")
_DNS1123_SUBDOMAIN = re.compile(_DNS1123_SUBDOMAIN_FMT + r"\Z")
_QUALIFIED_NAME = re.compile(_QUALIFIED_NAME_FMT + r"\Z")
_LABEL_VALUE = re.compile(_LABEL_VALUE_FMT + r"\Z")

_DNS1123_LABEL_MSG = (
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', "
    "and must start and end with an alphanumeric character"
)
_DNS1123_SUBDOMAIN_MSG = (
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', "
    "and must start and end with an alphanumeric character"
)
_QUALIFIED_NAME_MSG = (
    "must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character"
)
_LABEL_VALUE_MSG = (
    "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', "
    "and must start and end with an alphanumeric character"
)

FINALIZER_ORPHAN = "orphan"
FINALIZER_DELETE_DEPENDENTS = "foregroundDeletion"


def regex_error(message: str, fmt: str, *examples: str) -> str:
    """apimachinery's ``RegexError``: the rule, examples, and the regex it was checked with."""
    if not examples:
        return f"{message} (regex used for validation is '{fmt}')"
    shown = " or ".join(f"'{e}', " for e in examples)
    return f"{message} (e.g. {shown}regex used for validation is '{fmt}')"


def max_len_error(length: int, unit: str = "characters") -> str:
    """apimachinery's ``MaxLenError``: object names count characters, label key and value parts bytes."""
    return f"must be no more than {length} {unit}"


def dns1123_label_errors(value: str) -> list[str]:
    errors = []
    if len(value) > DNS1123_LABEL_MAX:
        errors.append(max_len_error(DNS1123_LABEL_MAX))
    if not _DNS1123_LABEL.match(value):
        errors.append(regex_error(_DNS1123_LABEL_MSG, _DNS1123_LABEL_FMT, "my-name", "123-abc"))
    return errors


def dns1123_subdomain_errors(value: str, unit: str = "characters") -> list[str]:
    errors = []
    if len(value) > DNS1123_SUBDOMAIN_MAX:
        errors.append(max_len_error(DNS1123_SUBDOMAIN_MAX, unit))
    if not _DNS1123_SUBDOMAIN.match(value):
        errors.append(regex_error(_DNS1123_SUBDOMAIN_MSG, _DNS1123_SUBDOMAIN_FMT, "example.com"))
    return errors


def qualified_name_errors(value: str) -> list[str]:
    """``IsQualifiedName``: ``[prefix/]name``, the prefix a DNS subdomain, the name at most 63 bytes."""
    errors: list[str] = []
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            errors.append("prefix part must be non-empty")
        else:
            errors.extend("prefix part " + m for m in dns1123_subdomain_errors(prefix, "bytes"))
    else:
        rule = regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        return [f"a valid label key {rule} with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')"]
    if not name:
        errors.append("name part must be non-empty")
    elif len(name.encode()) > QUALIFIED_NAME_MAX:
        errors.append("name part " + max_len_error(QUALIFIED_NAME_MAX, "bytes"))
    if not _QUALIFIED_NAME.match(name):
        rule = regex_error(_QUALIFIED_NAME_MSG, _QUALIFIED_NAME_FMT, "MyName", "my.name", "123-abc")
        errors.append("name part " + rule)
    return errors


def label_value_errors(value: str) -> list[str]:
    errors = []
    if len(value.encode()) > LABEL_VALUE_MAX:
        errors.append(max_len_error(LABEL_VALUE_MAX, "bytes"))
    if not _LABEL_VALUE.match(value):
        errors.append(regex_error(_LABEL_VALUE_MSG, _LABEL_VALUE_FMT, "MyValue", "my_value", "12345"))
    return errors


def object_name_errors(name: str, *, prefix: bool = False) -> list[str]:
    """``NameIsDNSSubdomain``; a generateName (``prefix``) may end in ``-``."""
    if prefix and name.endswith("-"):
        name = name[:-1] + "a"
    return dns1123_subdomain_errors(name)


def path_segment_name_errors(name: str, *, prefix: bool = False) -> list[str]:
    """``ValidatePathSegmentName``: the check every resource's name gets again on update."""
    if not prefix and name in (".", ".."):
        return [f"may not be '{name}'"]
    return [f"may not contain '{c}'" for c in ("/", "%") if c in name]


# --- decoding: the ObjectMeta round trip ---------------------------------------------------------


class MalformedMetadata(ValueError):
    """A request's ``metadata`` does not decode into ObjectMeta; the message is Go's decoding error."""


#: ObjectMeta's JSON fields, in the order ObjectMeta declares them (the order metadata is re-encoded in)
OBJECT_META_FIELDS = (
    "name",
    "generateName",
    "namespace",
    "selfLink",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "labels",
    "annotations",
    "ownerReferences",
    "finalizers",
    "managedFields",
)
_OWNER_BOOLS = ("controller", "blockOwnerDeletion")
_GO_TYPES = {
    "name": "string",
    "generateName": "string",
    "namespace": "string",
    "selfLink": "string",
    "uid": "types.UID",
    "resourceVersion": "string",
    "generation": "int64",
    "deletionGracePeriodSeconds": "int64",
    "labels": "map[string]string",
    "annotations": "map[string]string",
    "ownerReferences": "[]v1.OwnerReference",
    "finalizers": "[]string",
    "managedFields": "[]v1.ManagedFieldsEntry",
}
_OWNER_GO_TYPES = {"apiVersion": "string", "kind": "string", "name": "string", "uid": "types.UID"}
_MANAGED_GO_TYPES = {
    "manager": "string",
    "operation": "v1.ManagedFieldsOperationType",
    "apiVersion": "string",
    "fieldsType": "string",
    "subresource": "string",
}


def coerce_object_meta(meta: Any, *, drop_malformed: bool = False, path: str = "metadata") -> tuple[Any, list[str]]:
    """``meta`` as ObjectMeta's decode and encode leave it, and the paths of the unknown fields dropped.

    Raises :class:`MalformedMetadata` for a field of the wrong type, unless ``drop_malformed``
    (then that field is dropped, as when kube-apiserver reads an old object from etcd).
    ``None`` (no metadata) is returned as it is.
    """
    if meta is None:
        return None, []
    if not isinstance(meta, Mapping):
        if drop_malformed:
            return None, []
        raise MalformedMetadata(f"json: cannot unmarshal {json_kind(meta)} into Go value of type v1.ObjectMeta")
    unknown = [f"{path}.{k}" for k in meta if k not in OBJECT_META_FIELDS]
    result: dict[str, Any] = {}
    for name in OBJECT_META_FIELDS:
        if name not in meta:
            continue
        try:
            value = _coerce_field(name, meta[name])
        except MalformedMetadata:
            if drop_malformed:
                continue
            raise
        if value is not None and (value not in ("", 0, [], {}) or name == "deletionGracePeriodSeconds"):
            result[name] = value
    return result, unknown


def _mismatch(value: Any, field: str, go_type: str, struct: str = "ObjectMeta") -> MalformedMetadata:
    return MalformedMetadata(
        f"json: cannot unmarshal {json_kind(value)} into Go struct field {struct}.{field} of type {go_type}"
    )


def _coerce_field(name: str, value: Any) -> Any:
    if value is None:
        return None
    if name in ("creationTimestamp", "deletionTimestamp"):
        return _timestamp(value, f"ObjectMeta.{name}")
    go_type = _GO_TYPES[name]
    if go_type in ("string", "types.UID"):
        if not isinstance(value, str):
            raise _mismatch(value, name, go_type)
        return value
    if go_type == "int64":
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if not is_int(value) or not -(2**63) <= value < 2**63:
            raise _mismatch(value, name, go_type)
        return int(value)
    if name in ("labels", "annotations"):
        if not isinstance(value, Mapping):
            raise _mismatch(value, name, go_type)
        for item in value.values():
            if item is not None and not isinstance(item, str):
                raise _mismatch(item, name, "string")
        return {str(k): v or "" for k, v in value.items()}
    if not isinstance(value, list):
        raise _mismatch(value, name, go_type)
    if name == "finalizers":
        for item in value:
            if item is not None and not isinstance(item, str):
                raise _mismatch(item, name, "string")
        return [item or "" for item in value]
    if name == "ownerReferences":
        return [_owner_reference(item) for item in value]
    return [_managed_fields_entry(item) for item in value]


def _owner_reference(value: Any) -> dict[str, Any]:
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise _mismatch(value, "ownerReferences", "v1.OwnerReference")
    result: dict[str, Any] = {}
    for key, go_type in _OWNER_GO_TYPES.items():
        item = value.get(key)
        if item is not None and not isinstance(item, str):
            raise _mismatch(item, f"ownerReferences.{key}", go_type, "OwnerReference")
        result[key] = item or ""  # not omitempty in OwnerReference: always encoded
    for key in _OWNER_BOOLS:
        item = value.get(key)
        if item is not None:
            if not isinstance(item, bool):
                raise _mismatch(item, f"ownerReferences.{key}", "bool", "OwnerReference")
            result[key] = item
    return result


def _managed_fields_entry(value: Any) -> dict[str, Any]:
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise _mismatch(value, "managedFields", "v1.ManagedFieldsEntry")
    result: dict[str, Any] = {}
    for key in ("manager", "operation", "apiVersion", "time", "fieldsType", "fieldsV1", "subresource"):
        item = value.get(key)
        if item is None:
            continue
        if key == "time":
            item = _timestamp(item, "ManagedFieldsEntry.managedFields.time")
        elif key == "fieldsV1":
            if not isinstance(item, Mapping):
                raise _mismatch(item, "managedFields.fieldsV1", "v1.FieldsV1", "ManagedFieldsEntry")
        elif not isinstance(item, str):
            raise _mismatch(item, f"managedFields.{key}", _MANAGED_GO_TYPES[key], "ManagedFieldsEntry")
        if item != "":
            result[key] = item
    return result


def _timestamp(value: Any, field: str) -> str:
    """An RFC 3339 time re-encoded as ``metav1.Time`` does: seconds precision, UTC, ``Z``."""
    struct, _, name = field.partition(".")
    if not isinstance(value, str):
        raise _mismatch(value, name, "string", struct)
    moment = parse_rfc3339(value)
    if moment is None:
        raise MalformedMetadata(
            f'parsing time {go_quote(value)} as "2006-01-02T15:04:05Z07:00": cannot parse {go_quote(value)} as "2006"'
        )
    return rfc3339(moment)


_RFC3339 = re.compile(r"(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d+)?([Zz]|[+-]\d{2}:\d{2})\Z")


def parse_rfc3339(text: str) -> datetime | None:
    """Go's ``time.Parse(time.RFC3339, text)``, or None."""
    match = _RFC3339.match(text)
    if not match:
        return None
    offset = match[8].upper()
    normalised = f"{match[1]}-{match[2]}-{match[3]}T{match[4]}:{match[5]}:{match[6]}"
    normalised += "+00:00" if offset == "Z" else offset
    try:
        return datetime.fromisoformat(normalised)
    except ValueError:
        return None


# --- validation --------------------------------------------------------------------------------


def validate_object_meta(
    obj: Mapping[str, Any], namespaced: bool, *, path: str = "metadata", path_segment_names: bool = False
) -> list[FieldError]:
    """``ValidateObjectMetaAccessor``: what every create checks in metadata.

    Names are checked as DNS subdomains (the CRD strategy's rule), or with ``path_segment_names``
    only as safe URL path segments (the rule every resource gets again on update).
    """
    meta = _meta(obj)
    name_rule = path_segment_name_errors if path_segment_names else object_name_errors
    errors: list[FieldError] = []
    generate_name = _str(meta.get("generateName"))
    if generate_name:
        for message in name_rule(generate_name, prefix=True):
            errors.append(fe.invalid(fe.child(path, "generateName"), generate_name, message))
    name = _str(meta.get("name"))
    if not name:
        errors.append(fe.required(fe.child(path, "name"), "name or generateName is required"))
    else:
        for message in name_rule(name):
            errors.append(fe.invalid(fe.child(path, "name"), name, message))
    namespace = _str(meta.get("namespace"))
    if namespaced:
        if not namespace:
            errors.append(fe.required(fe.child(path, "namespace")))
        else:
            for message in dns1123_label_errors(namespace):
                errors.append(fe.invalid(fe.child(path, "namespace"), namespace, message))
    elif namespace:
        errors.append(fe.forbidden(fe.child(path, "namespace"), "not allowed on this type"))
    generation = meta.get("generation")
    if isinstance(generation, int) and not isinstance(generation, bool) and generation < 0:
        errors.append(fe.invalid(fe.child(path, "generation"), generation, "must be greater than or equal to 0"))
    errors.extend(_common(meta, path, finalizers=True))
    return errors


def validate_object_meta_update(
    obj: Mapping[str, Any], old: Mapping[str, Any], *, path: str = "metadata"
) -> list[FieldError]:
    """``ValidateObjectMetaAccessorUpdate``: what every update checks in metadata against the stored object.

    kube-apiserver runs it twice on an update of a custom resource (once among the checks every
    resource gets, once in the CRD strategy), so its causes appear twice in the Status;
    :meth:`clusterclass.apiserver.crd.definitions.CrdInfo.update_errors` does the same.
    """
    meta, old_meta = _meta(obj), _meta(old)
    errors: list[FieldError] = []
    if old_meta.get("deletionTimestamp"):
        errors.extend(no_new_finalizers(meta, old_meta, fe.child(path, "finalizers")))
    if not _str(meta.get("resourceVersion")):
        errors.append(fe.invalid(fe.child(path, "resourceVersion"), "", "must be specified for an update"))
    generation, old_generation = meta.get("generation") or 0, old_meta.get("generation") or 0
    if is_int(generation) and is_int(old_generation) and generation < old_generation:
        errors.append(fe.invalid(fe.child(path, "generation"), generation, "must not be decremented"))
    for name in ("name", "namespace", "uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds"):
        new_value, old_value = meta.get(name), old_meta.get(name)
        if new_value in (None, "") and old_value in (None, ""):
            continue
        if new_value != old_value:
            errors.append(fe.invalid(fe.child(path, name), _immutable_value(name, new_value), "field is immutable"))
    errors.extend(_common(meta, path, finalizers=False))
    return errors


def no_new_finalizers(meta: Mapping[str, Any], old_meta: Mapping[str, Any], path: str) -> list[FieldError]:
    """``ValidateNoNewFinalizers``: once deletion started, finalizers may only be removed."""
    old = set(_strings(old_meta.get("finalizers")))
    added = sorted({f for f in _strings(meta.get("finalizers")) if f not in old})
    if not added:
        return []
    shown = ", ".join(go_quote(f) for f in added)
    detail = f"no new finalizers can be added if the object is being deleted, found new finalizers []string{{{shown}}}"
    return [fe.forbidden(path, detail)]


def finalizer_warnings(obj: Mapping[str, Any], old: Mapping[str, Any] | None = None) -> list[str]:
    """The ``Warning`` headers kube-apiserver sends for finalizers a write adds: no domain, sorted by name.

    A finalizer name that is not a qualified name at all is an error, not a warning.
    """
    path = "metadata.finalizers"
    added = set(_strings(_meta(obj).get("finalizers")))
    if old is not None:
        added -= set(_strings(_meta(old).get("finalizers")))
    detail = "prefer a domain-qualified finalizer name to avoid accidental conflicts with other finalizer writers"
    return [
        f"{path}: {go_quote(name)}: {detail}"
        for name in sorted(added)
        if "/" not in name and not qualified_name_errors(name)
    ]


def _common(meta: Mapping[str, Any], path: str, *, finalizers: bool) -> list[FieldError]:
    errors = validate_labels(meta.get("labels"), fe.child(path, "labels"))
    errors.extend(validate_annotations(meta.get("annotations"), fe.child(path, "annotations")))
    errors.extend(validate_owner_references(meta.get("ownerReferences"), fe.child(path, "ownerReferences")))
    if finalizers:
        errors.extend(validate_finalizers(meta.get("finalizers"), fe.child(path, "finalizers")))
    # managedFields are not checked here: kube-apiserver's field manager replaces entries it cannot
    # read before validation runs (verified: a bogus operation is dropped, not refused)
    return errors


def validate_labels(labels: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    for key, value in _string_map(labels).items():
        errors.extend(fe.invalid(path, key, m) for m in qualified_name_errors(key))
        errors.extend(fe.invalid(path, value, m) for m in label_value_errors(value))
    return errors


def validate_annotations(annotations: Any, path: str) -> list[FieldError]:
    errors: list[FieldError] = []
    entries = _string_map(annotations)
    for key in entries:
        errors.extend(fe.invalid(path, key, m) for m in qualified_name_errors(key.lower()))
    if sum(len(k.encode()) + len(v.encode()) for k, v in entries.items()) > TOTAL_ANNOTATION_SIZE:
        errors.append(FieldError(path, ErrorType.TOO_LONG, too_long_detail(TOTAL_ANNOTATION_SIZE)))
    return errors


def too_long_detail(limit: int) -> str:
    """``field.TooLong``'s detail (the value itself is never shown)."""
    return f"may not be more than {limit} {'byte' if limit == 1 else 'bytes'}"


def validate_owner_references(references: Any, path: str) -> list[FieldError]:
    """``ValidateOwnerReferences``: each reference complete and not an Event; at most one controller."""
    errors: list[FieldError] = []
    first_controller = ""
    entries = [r for r in references if isinstance(r, Mapping)] if isinstance(references, list) else []
    for i, ref in enumerate(entries):
        ref_path = fe.index(path, i)
        api_version, kind = _str(ref.get("apiVersion")), _str(ref.get("kind"))
        group_version = _parse_group_version(api_version)
        if not api_version:
            errors.append(fe.required(fe.child(ref_path, "apiVersion"), "must not be empty"))
        elif group_version is None:
            detail = "must be <group>/<version> or <version>"
            errors.append(fe.invalid(fe.child(ref_path, "apiVersion"), api_version, detail))
        for name in ("kind", "name", "uid"):
            if not _str(ref.get(name)):
                errors.append(fe.required(fe.child(ref_path, name), "must not be empty"))
        if group_version == ("", "v1") and kind == "Event":
            errors.append(fe.invalid(ref_path, _owner_json(ref), "/v1, Kind=Event is disallowed from being an owner"))
        if ref.get("controller") is True:
            current = f"{kind}/{_str(ref.get('name'))}"
            if first_controller:
                detail = (
                    'Only one reference can have Controller set to true. Found "true" in references for '
                    f"{first_controller} and {current}"
                )
                shown = GoText("[" + ",".join(_owner_json(r) for r in entries) + "]")
                errors.append(fe.invalid(path, shown, detail))
            else:
                first_controller = current
    return errors


def validate_finalizers(finalizers: Any, path: str) -> list[FieldError]:
    names = _strings(finalizers)
    errors: list[FieldError] = []
    for name in names:
        errors.extend(fe.invalid(path, name, m) for m in qualified_name_errors(name))
    if FINALIZER_ORPHAN in names and FINALIZER_DELETE_DEPENDENTS in names:
        detail = f"finalizer {FINALIZER_ORPHAN} and {FINALIZER_DELETE_DEPENDENTS} cannot be both set"
        errors.append(fe.invalid(path, names, detail))
    return errors


def validate_managed_fields(entries: Any, path: str) -> list[FieldError]:
    """``ValidateManagedFields``, for a field manager that wants to refuse entries rather than replace them.

    Not part of :func:`validate_object_meta`: kube-apiserver's field manager drops entries it cannot
    read before validation runs, so a write never fails on them.
    """
    errors: list[FieldError] = []
    for i, entry in enumerate(entries if isinstance(entries, list) else []):
        if not isinstance(entry, Mapping):
            continue
        entry_path = fe.index(path, i)
        operation = _str(entry.get("operation"))
        if operation not in ("Apply", "Update"):
            errors.append(fe.invalid(fe.child(entry_path, "operation"), operation, "must be `Apply` or `Update`"))
        fields_type = _str(entry.get("fieldsType"))
        if fields_type and fields_type != "FieldsV1":
            errors.append(fe.invalid(fe.child(entry_path, "fieldsType"), fields_type, "must be `FieldsV1`"))
        manager = _str(entry.get("manager"))
        manager_path = fe.child(entry_path, "manager")
        if len(manager) > FIELD_MANAGER_MAX:
            errors.append(FieldError(manager_path, ErrorType.TOO_LONG, too_long_detail(FIELD_MANAGER_MAX)))
        for position, char in enumerate(manager):
            if not char.isprintable():
                detail = f"invalid character U+{ord(char):04X} (at position {position})"
                errors.append(fe.invalid(manager_path, manager, detail))
        if len(_str(entry.get("subresource"))) > SUBRESOURCE_NAME_MAX:
            detail = too_long_detail(SUBRESOURCE_NAME_MAX)
            errors.append(FieldError(fe.child(entry_path, "subresource"), ErrorType.TOO_LONG, detail))
    return errors


# --- helpers -----------------------------------------------------------------------------------


def _meta(obj: Mapping[str, Any]) -> Mapping[str, Any]:
    meta = obj.get("metadata") if isinstance(obj, Mapping) else None
    return meta if isinstance(meta, Mapping) else {}


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _strings(value: Any) -> list[str]:
    return [v for v in value if isinstance(v, str)] if isinstance(value, list) else []


def _string_map(value: Any) -> dict[str, str]:
    if not isinstance(value, Mapping):
        return {}
    return {str(k): v if isinstance(v, str) else "" for k, v in value.items()}


def _immutable_value(name: str, value: Any) -> Any:
    """What apimachinery shows for a changed immutable field: strings as they are, times as Go prints them."""
    if name in ("name", "namespace", "uid"):
        return _str(value)
    if name == "deletionGracePeriodSeconds":
        return value if is_int(value) else None
    moment = parse_rfc3339(value) if isinstance(value, str) else None
    if moment is not None:
        return GoText(moment.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S +0000 UTC"))
    return GoText("0001-01-01 00:00:00 +0000 UTC") if name == "creationTimestamp" else None


def _parse_group_version(api_version: str) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``: ``version`` or ``group/version``, both parts non-empty; None otherwise."""
    parts = api_version.split("/")
    if len(parts) == 1 and parts[0]:
        return "", parts[0]
    if len(parts) == 2 and parts[0] and parts[1]:
        return parts[0], parts[1]
    return None


def _owner_json(ref: Mapping[str, Any]) -> GoText:
    """An OwnerReference as ``json.Marshal`` writes the struct: fields in declaration order, flags when set."""
    fields = [f"{go_json(key)}:{go_json(_str(ref.get(key)))}" for key in ("apiVersion", "kind", "name", "uid")]
    fields.extend(f"{go_json(key)}:{go_json(ref[key])}" for key in _OWNER_BOOLS if isinstance(ref.get(key), bool))
    return GoText("{" + ",".join(fields) + "}")
