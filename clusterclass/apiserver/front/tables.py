"""Server-side printing: objects as a ``meta.k8s.io/v1`` Table, what ``kubectl get`` shows.

kubectl asks for a Table first so the server decides the columns (a Cluster's PHASE, a ConfigMap's
DATA). Each row carries the object's metadata (``includeObject=Metadata``, the default), which
kubectl needs for ``--all-namespaces`` (NAMESPACE column) and ``--show-labels``; ``Object`` sends
the whole object and ``None`` nothing. The columns come from :mod:`.catalog`.

Objects can also be asked for as ``PartialObjectMetadata``: only ``metadata``, the representation
metadata-only informers use.
"""

from __future__ import annotations

from typing import Any, Literal

from clusterclass.api.objects import Obj
from clusterclass.apiserver.front.catalog import Description
from clusterclass.apiserver.front.negotiation import Choice
from clusterclass.kube.errors import BadRequest

IncludeObject = Literal["None", "Metadata", "Object"]
META = "meta.k8s.io"


def include_object(value: str | None) -> IncludeObject:
    if value in (None, ""):
        return "Metadata"
    if value in ("None", "Metadata", "Object"):
        return value  # type: ignore[return-value]
    raise BadRequest.new(f'includeObject: Unsupported value: "{value}": supported values: "None", "Metadata", "Object"')


def partial_metadata(obj: Obj, version: str = "v1") -> Obj:
    return {"kind": "PartialObjectMetadata", "apiVersion": f"{META}/{version}", "metadata": obj.get("metadata") or {}}


def partial_metadata_list(items: list[Obj], resource_version: str, version: str = "v1") -> Obj:
    return {
        "kind": "PartialObjectMetadataList",
        "apiVersion": f"{META}/{version}",
        "metadata": {"resourceVersion": resource_version},
        "items": [partial_metadata(item, version) for item in items],
    }


def render_object(
    obj: Obj, choice: Choice, described: Description | None, include: IncludeObject, *, headers: bool = True
) -> Obj:
    """One object as ``choice`` asks for it: a one-row Table (``described`` given), its metadata, or itself."""
    if choice.representation == "table" and described is not None:
        return table(
            described,
            [obj],
            resource_version=obj["metadata"].get("resourceVersion"),
            include=include,
            headers=headers,
            version=choice.version,
        )
    if choice.representation == "metadata":
        return partial_metadata(obj, choice.version)
    return obj


def column_definitions(described: Description) -> list[dict[str, Any]]:
    return [column.definition() for column in described.columns]


def table(
    described: Description,
    objects: list[Obj],
    *,
    resource_version: str | None,
    include: IncludeObject = "Metadata",
    headers: bool = True,
    version: str = "v1",
) -> Obj:
    """The Table of ``objects``; ``headers`` False leaves out the column definitions (watch events after the first)."""
    rows = []
    for obj in objects:
        cells = [_cell(column.value, obj) for column in described.columns]
        row: dict[str, Any] = {"cells": cells}
        if include == "Metadata":
            row["object"] = partial_metadata(obj, version)
        elif include == "Object":
            row["object"] = obj
        rows.append(row)
    metadata: dict[str, Any] = {}
    if resource_version is not None:
        metadata["resourceVersion"] = resource_version
    return {
        "kind": "Table",
        "apiVersion": f"{META}/{version}",
        "metadata": metadata,
        "columnDefinitions": column_definitions(described) if headers else [],
        "rows": rows,
    }


def _cell(value: Any, obj: Obj) -> Any:
    try:
        return value(obj)
    except (TypeError, ValueError, AttributeError):
        return None
