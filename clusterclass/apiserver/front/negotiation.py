"""Which representation a client asked for in its ``Accept`` header.

Clients list what they take in order of preference, and kube-apiserver answers with the first it
can produce. Three representations matter here:

- plain JSON (``application/json``, ``*/*``, or no header);
- a ``meta.k8s.io`` Table (``application/json;as=Table;v=v1;g=meta.k8s.io``), which ``kubectl get``
  asks for first so the server chooses the columns;
- ``PartialObjectMetadata`` (``as=PartialObjectMetadata[List];g=meta.k8s.io;v=v1``): only the
  metadata of each object, what metadata-only informers watch;
- aggregated discovery (``application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList``),
  which kubectl since 1.30 asks for on ``/api`` and ``/apis`` to learn every resource in one request.

Protobuf is never produced; a client that accepts only protobuf gets 406, as it would from a server
without it. For aggregated discovery the answer's ``Content-Type`` tells the client which one it got (clients
that asked for it and got plain JSON fall back to per-group discovery); Tables and metadata are
sent as ``application/json``, as kube-apiserver does, and recognised by their ``kind``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from clusterclass.kube.errors import ApiError, make_status

Representation = Literal["json", "table", "metadata", "discovery"]


@dataclass(frozen=True)
class Choice:
    representation: Representation
    #: the version of the chosen representation: ``v1`` for Tables, ``v2`` for aggregated discovery
    version: str = ""

    @property
    def content_type(self) -> str:
        if self.representation == "discovery":
            return f"application/json;g=apidiscovery.k8s.io;v={self.version};as=APIGroupDiscoveryList"
        return "application/json"


JSON = Choice("json")

#: the meta.k8s.io versions of Table and PartialObjectMetadata
_TABLE_VERSIONS = ("v1", "v1beta1")
_DISCOVERY_VERSIONS = ("v2", "v2beta1")


def _media_ranges(header: str) -> list[tuple[str, dict[str, str]]]:
    ranges = []
    for part in header.split(","):
        pieces = [piece.strip() for piece in part.split(";")]
        if not pieces[0]:
            continue
        params = {}
        for piece in pieces[1:]:
            key, _, value = piece.partition("=")
            params[key.strip().lower()] = value.strip().strip('"')
        ranges.append((pieces[0].lower(), params))
    return ranges


def negotiate(header: str | None, *, table: bool = False, discovery: bool = False) -> Choice:
    """The first representation in ``header`` this endpoint can produce.

    ``table`` says the endpoint serves objects (which can also be rendered as a Table or as
    PartialObjectMetadata); ``discovery`` that it can serve aggregated discovery.
    """
    if not header or not header.strip():
        return JSON
    for media_type, params in _media_ranges(header):
        if media_type not in ("application/json", "application/*", "*/*"):
            continue
        wanted = params.get("as")
        if wanted is None:
            return JSON
        if table and wanted == "Table" and params.get("g") == "meta.k8s.io" and params.get("v") in _TABLE_VERSIONS:
            return Choice("table", params["v"])
        partial = wanted in ("PartialObjectMetadata", "PartialObjectMetadataList")
        if table and partial and params.get("g") == "meta.k8s.io" and params.get("v") in _TABLE_VERSIONS:
            return Choice("metadata", params["v"])
        if (
            discovery
            and wanted == "APIGroupDiscoveryList"
            and params.get("g") == "apidiscovery.k8s.io"
            and params.get("v") in _DISCOVERY_VERSIONS
        ):
            return Choice("discovery", params["v"])
    raise ApiError(
        make_status(
            406,
            "NotAcceptable",
            f"only the following media types are accepted: application/json (asked for {header})",
        )
    )
