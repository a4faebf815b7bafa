"""Kubernetes name and metadata syntax: DNS-1123 subdomains, label values, qualified names.

The messages are Kubernetes' own (``k8s.io/apimachinery/pkg/util/validation``), so a field error
reads the same as one from the API server.
"""

from __future__ import annotations

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
