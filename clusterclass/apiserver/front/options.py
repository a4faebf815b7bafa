"""Query parameters and request bodies of writes, checked the way kube-apiserver checks them.

- ``dryRun``: repeatable, and ``All`` is the only value; any write with it runs every check and
  stores nothing.
- ``fieldManager``: who makes the change (``metadata.managedFields``). Without it, kube-apiserver
  names the manager after the client: the User-Agent up to its first ``/`` (``kubectl``,
  ``OpenAPI-Generator``), which is what we do too. At most 128 characters.
- ``fieldValidation``: ``Ignore``, ``Warn`` or ``Strict`` (kubectl sends ``Strict``). Duplicate
  fields in a JSON body are an error under ``Strict`` and a ``Warning`` header under ``Warn``
  (:func:`decode_body` finds them; the handlers word the error).
- ``force``: server-side apply only.
- DeleteOptions: in the body (what kubectl sends) or in the query; ``propagationPolicy``,
  ``preconditions``, ``dryRun``; the deprecated ``orphanDependents`` maps to a policy.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal, cast

import yaml
from multidict import MultiMapping

from clusterclass.api.jsoncopy import json_copy
from clusterclass.apiserver.crd.definitions import FieldValidation
from clusterclass.apiserver.front import protobuf
from clusterclass.apiserver.front.responses import unknown_media_type
from clusterclass.apiserver.store import PROPAGATION_POLICIES
from clusterclass.kube.client import Preconditions, PropagationPolicy
from clusterclass.kube.errors import ApiError, BadRequest, Invalid, make_status
from clusterclass.yamlio import GO_YAML_LOADER

FIELD_MANAGER_MAX_LENGTH = 128


OptionsKind = Literal["CreateOptions", "UpdateOptions", "PatchOptions", "DeleteOptions", "ListOptions"]


def _quote_list(values: list[str]) -> str:
    return "[" + ", ".join(json.dumps(value) for value in values) + "]"


def invalid_option(options: OptionsKind, field_path: str, reason: str, detail: str) -> ApiError:
    """A 422 naming the options object, as kube-apiserver reports a bad query parameter of a write."""
    return Invalid(
        make_status(
            422,
            "Invalid",
            f'{options}.meta.k8s.io "" is invalid: {field_path}: {detail}',
            details={
                "group": "meta.k8s.io",
                "kind": options,
                "causes": [{"reason": reason, "message": detail, "field": field_path}],
            },
        )
    )


def dry_run(values: list[str], options: OptionsKind) -> bool:
    if any(value != "All" for value in values):
        detail = f'Unsupported value: {_quote_list(values)}: supported values: "All"'
        raise invalid_option(options, "dryRun", "FieldValueNotSupported", detail)
    return bool(values)


def user_agent_manager(user_agent: str | None) -> str:
    """The field manager kube-apiserver derives from a User-Agent: its product name, printable, 128 at most."""
    product = (user_agent or "").split("/")[0]
    return "".join(char for char in product if char.isprintable())[:FIELD_MANAGER_MAX_LENGTH]


@dataclass(frozen=True)
class WriteOptions:
    dry_run: bool = False
    field_manager: str | None = None
    #: kube-apiserver's default when the request does not say is Warn (kubectl always says Strict)
    field_validation: FieldValidation = "Warn"
    #: None when the request did not say (only apply may)
    force: bool | None = None
    warnings: list[str] = field(default_factory=list)


def write_options(
    query: MultiMapping[str], user_agent: str | None, options: OptionsKind, *, apply: bool = False
) -> WriteOptions:
    """The options of a create, update or patch (``options`` names which, for error messages)."""
    manager = query.get("fieldManager")
    if manager is not None and len(manager.encode()) > FIELD_MANAGER_MAX_LENGTH:
        detail = f"Too long: may not be more than {FIELD_MANAGER_MAX_LENGTH} bytes"
        raise invalid_option(options, "fieldManager", "FieldValueTooLong", detail)
    if apply and not manager:
        raise invalid_option(
            options, "fieldManager", "FieldValueRequired", "Required value: is required for apply patch"
        )
    validation = query.get("fieldValidation") or "Warn"
    if validation not in ("Ignore", "Warn", "Strict"):
        detail = f'Unsupported value: "{validation}": supported values: "", "Ignore", "Strict", "Warn"'
        raise invalid_option(options, "fieldValidation", "FieldValueNotSupported", detail)
    force_text = query.get("force")
    force: bool | None = None
    if force_text is not None:
        if not apply:
            detail = "Forbidden: may not be specified for non-apply patch"
            raise invalid_option(options, "force", "FieldValueForbidden", detail)
        force = _boolean("force", force_text)
    return WriteOptions(
        dry_run=dry_run(query.getall("dryRun", []), options),
        field_manager=manager or user_agent_manager(user_agent) or None,
        field_validation=cast(FieldValidation, validation),
        force=force,
    )


def _boolean(name: str, text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "1", "t"):
        return True
    if lowered in ("false", "0", "f", ""):
        return False
    raise BadRequest.new(f"{name}: invalid boolean value {text!r}")


def flag(query: MultiMapping[str], name: str) -> bool:
    """A boolean query parameter (``watch=true``, ``watch=1``); absent is false."""
    text = query.get(name)
    return False if text is None else _boolean(name, text)


def positive_int(query: MultiMapping[str], name: str) -> int | None:
    text = query.get(name)
    if text is None or text == "":
        return None
    try:
        value = int(text)
    except ValueError as err:
        raise BadRequest.new(f"{name}: invalid integer value {text!r}") from err
    if value < 0:
        raise BadRequest.new(f"{name}: must be greater than or equal to 0")
    return value


# -- bodies ------------------------------------------------------------------------------------------


class _Fields(dict[str, Any]):
    """A decoded JSON object that remembers the keys it was given more than once."""

    duplicates: list[str]


def _remember_duplicates(pairs: list[tuple[str, Any]]) -> _Fields:
    result = _Fields()
    result.duplicates = []
    for key, value in pairs:
        if key in result:
            result.duplicates.append(key)
        result[key] = value
    return result


def _duplicate_paths(value: Any, path: str = "") -> list[str]:
    """The paths (``metadata.name``, ``spec.items[0].x``) of keys given twice, and plain dicts back."""
    found: list[str] = []
    if isinstance(value, _Fields):
        found.extend(f"{path}.{key}" if path else key for key in value.duplicates)
        for key, item in value.items():
            found.extend(_duplicate_paths(item, f"{path}.{key}" if path else key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found.extend(_duplicate_paths(item, f"{path}[{index}]"))
    return found


def decode_body(body: bytes, content_type: str | None, *, kind: str) -> tuple[Any, list[str]]:
    """A JSON (or YAML) request body for an object of ``kind``, and the paths of fields it gives twice."""
    media_type = (content_type or "application/json").split(";")[0].strip().lower()
    if media_type in ("application/yaml", "application/apply-patch+yaml"):
        return decode_yaml(body), []
    if media_type == protobuf.MEDIA_TYPE:
        return protobuf.decode(body, kind=kind), []
    if media_type not in ("application/json", "", "*/*"):
        raise unknown_media_type()
    try:
        decoded = json.loads(body or b"null", object_pairs_hook=_remember_duplicates)
    except (ValueError, UnicodeDecodeError) as err:
        raise BadRequest.new(
            f"the object provided is unrecognized (must be of type {kind}): couldn't get version/kind; "
            f"json parse error: {err}"
        ) from err
    duplicates = _duplicate_paths(decoded)
    return json_copy(decoded), duplicates  # the copy makes every _Fields a plain dict


def decode_yaml(body: bytes, *, what: str = "the request body") -> Any:
    """A YAML (or JSON) body, its plain scalars resolved as go-yaml resolves them (``1e-05`` is a number,
    ``2024-01-01`` a string); errors worded as kube-apiserver words them (``yaml: line N: ...``)."""
    try:
        return yaml.load(body.decode() if body else "null", Loader=GO_YAML_LOADER)
    except yaml.MarkedYAMLError as err:
        line = err.problem_mark.line if err.problem_mark is not None else 0
        prefix = "error encoding patch" if what == "patch" else "error decoding YAML"
        raise BadRequest.new(f"{prefix}: yaml: line {line}: {err.problem}") from err
    except (yaml.YAMLError, UnicodeDecodeError) as err:
        raise BadRequest.new(f"error decoding YAML: {err}") from err


# -- deletes -----------------------------------------------------------------------------------------


@dataclass(frozen=True)
class DeleteOptions:
    propagation_policy: PropagationPolicy | None = None
    preconditions: Preconditions | None = None
    dry_run: bool = False


def delete_options(query: MultiMapping[str], body: bytes) -> DeleteOptions:
    """DeleteOptions from the body, with query parameters filling what the body leaves out."""
    decoded: Any = {}
    if body.strip():
        try:
            decoded = json.loads(body)
        except (ValueError, UnicodeDecodeError) as err:
            raise BadRequest.new(f"error decoding DeleteOptions: {err}") from err
        if not isinstance(decoded, dict):
            raise BadRequest.new("DeleteOptions must be a JSON object")
    policy = decoded.get("propagationPolicy") or query.get("propagationPolicy")
    orphan = decoded.get("orphanDependents")
    if orphan is None and query.get("orphanDependents") is not None:
        orphan = _boolean("orphanDependents", str(query.get("orphanDependents")))
    if orphan is not None and policy:
        detail = "Invalid value: propagationPolicy: orphanDependents and deletionPropagation cannot be both set"
        raise invalid_option("DeleteOptions", "propagationPolicy", "FieldValueInvalid", detail)
    if orphan is not None:
        policy = "Orphan" if orphan else "Background"
    if policy is not None and policy not in PROPAGATION_POLICIES:
        detail = f'Unsupported value: "{policy}": supported values: "Foreground", "Background", "Orphan", "nil"'
        raise invalid_option("DeleteOptions", "propagationPolicy", "FieldValueNotSupported", detail)
    preconditions: Preconditions = {}
    given = decoded.get("preconditions") or {}
    if not isinstance(given, dict):
        raise BadRequest.new("DeleteOptions.preconditions must be an object")
    for name in ("uid", "resourceVersion"):
        value = given.get(name)
        if value is not None:
            preconditions[name] = str(value)
    body_dry_run = decoded.get("dryRun") or []
    if not isinstance(body_dry_run, list):
        raise BadRequest.new("DeleteOptions.dryRun must be a list")
    return DeleteOptions(
        propagation_policy=cast(PropagationPolicy | None, policy),
        preconditions=preconditions or None,
        dry_run=dry_run([str(value) for value in body_dry_run] + query.getall("dryRun", []), "DeleteOptions"),
    )
