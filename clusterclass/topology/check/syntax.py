"""Kubernetes name and metadata syntax: DNS-1123 subdomains, label values, qualified names.

Also the two Go parsers admission messages quote: Cluster API's ``KubeSemver`` version pattern
(:func:`is_kube_semver`) and ``strconv.ParseInt``/``Atoi`` (:func:`go_parse_int`).

The messages are Kubernetes' own (``k8s.io/apimachinery/pkg/util/validation``), so a field error
reads the same as one from the API server.
"""

from __future__ import annotations

import json
import re
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.fielderrors import FieldError

DNS1123_LABEL_FMT = "[a-z0-9]([-a-z0-9]*[a-z0-9])?"
DNS1123_SUBDOMAIN_FMT = DNS1123_LABEL_FMT + "(\\." + DNS1123_LABEL_FMT + ")*"
_DNS1123_SUBDOMAIN = re.compile(f"^{DNS1123_SUBDOMAIN_FMT}$")
LABEL_VALUE_FMT = "(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?"
_LABEL_VALUE = re.compile(f"^{LABEL_VALUE_FMT}$")
QUALIFIED_NAME_FMT = "([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]"
_QUALIFIED_NAME = re.compile(f"^{QUALIFIED_NAME_FMT}$")
MAX_ANNOTATIONS_SIZE = 256 * 1024


def dns1123_subdomain_errors(value: str) -> list[str]:
    errors = []
    if len(value) > 253:
        errors.append("must be no more than 253 characters")
    if not _DNS1123_SUBDOMAIN.match(value):
        errors.append(
            "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is "
            f"'{DNS1123_SUBDOMAIN_FMT}')"
        )
    return errors


def label_value_errors(value: str) -> list[str]:
    errors = []
    if len(value) > 63:
        errors.append("must be no more than 63 characters")
    if not _LABEL_VALUE.match(value):
        errors.append(
            "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and "
            "must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', "
            f"regex used for validation is '{LABEL_VALUE_FMT}')"
        )
    return errors


def qualified_name_errors(value: str) -> list[str]:
    parts = value.split("/")
    if len(parts) == 1:
        name = parts[0]
        prefix_errors: list[str] = []
    elif len(parts) == 2:
        prefix, name = parts
        if not prefix:
            prefix_errors = ["prefix part must be non-empty"]
        else:
            prefix_errors = ["prefix part " + e for e in dns1123_subdomain_errors(prefix)]
    else:
        return [
            "a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end "
            "with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for "
            f"validation is '{QUALIFIED_NAME_FMT}') with an optional DNS subdomain prefix and '/' "
            "(e.g. 'example.com/MyName')"
        ]
    errors = list(prefix_errors)
    if not name:
        errors.append("name part must be non-empty")
    elif len(name) > 63:
        errors.append("name part must be no more than 63 characters")
    if name and not _QUALIFIED_NAME.match(name):
        errors.append(
            "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
            "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
            f"'{QUALIFIED_NAME_FMT}')"
        )
    return errors


def metadata_errors(metadata: Any, path: str) -> list[FieldError]:
    """Errors of Cluster API's reduced ObjectMeta (``labels`` and ``annotations``) at ``path``."""
    if metadata is None:
        return []
    if not isinstance(metadata, dict):
        return [fe.type_invalid(path, metadata, "must be an object")]
    errors: list[FieldError] = []
    labels = metadata.get("labels")
    labels_path = fe.child(path, "labels")
    if isinstance(labels, dict):
        for key, value in labels.items():
            for message in qualified_name_errors(str(key)):
                errors.append(fe.invalid(labels_path, key, message))
            if not isinstance(value, str):
                errors.append(fe.type_invalid(fe.child(labels_path, str(key)), value, "must be a string"))
                continue
            for message in label_value_errors(value):
                errors.append(fe.invalid(labels_path, value, message))
    elif labels is not None:
        errors.append(fe.type_invalid(labels_path, labels, "must be an object"))
    annotations = metadata.get("annotations")
    annotations_path = fe.child(path, "annotations")
    if isinstance(annotations, dict):
        size = 0
        for key, value in annotations.items():
            for message in qualified_name_errors(str(key).lower()):
                errors.append(fe.invalid(annotations_path, key, message))
            if not isinstance(value, str):
                errors.append(fe.type_invalid(fe.child(annotations_path, str(key)), value, "must be a string"))
                continue
            size += len(str(key)) + len(value)
        if size > MAX_ANNOTATIONS_SIZE:
            errors.append(
                fe.FieldError(
                    annotations_path, fe.ErrorType.TOO_LONG, f"must have at most {MAX_ANNOTATIONS_SIZE} bytes"
                )
            )
    elif annotations is not None:
        errors.append(fe.type_invalid(annotations_path, annotations, "must be an object"))
    return errors


# Cluster API's ``version.KubeSemver``: a ``v``-prefixed semantic version (suffixes loosely allowed).
KUBE_SEMVER_FMT = r"v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)([-0-9a-zA-Z_\.+]*)?"
_KUBE_SEMVER = re.compile(KUBE_SEMVER_FMT)


def is_kube_semver(value: Any) -> bool:
    """Whether ``value`` is a string matching Cluster API's ``KubeSemver`` (whole string, as Go's ``$``)."""
    return isinstance(value, str) and _KUBE_SEMVER.fullmatch(value) is not None


_GO_INT = re.compile(r"[+-]?[0-9]+")


def go_parse_int(text: Any, bits: int = 64, func: str = "ParseInt") -> int:
    """Go's ``strconv.ParseInt(text, 10, bits)`` (``func="Atoi"`` for ``strconv.Atoi``).

    Raises ValueError with Go's message (``strconv.Atoi: parsing "x": invalid syntax``, ``... value
    out of range``). Unlike Python's ``int``, no spaces or underscores are accepted.
    """
    quoted = json.dumps(str(text), ensure_ascii=False)
    if not isinstance(text, str) or not _GO_INT.fullmatch(text):
        raise ValueError(f"strconv.{func}: parsing {quoted}: invalid syntax")
    value = int(text) if len(text.lstrip("+-0")) <= 20 else 2**bits  # longer: out of range, and too long for int()
    if not -(2 ** (bits - 1)) <= value < 2 ** (bits - 1):
        raise ValueError(f"strconv.{func}: parsing {quoted}: value out of range")
    return value
