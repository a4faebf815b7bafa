"""kube-apiserver's audit log (``RealApiServer(audit=True)``), read back as who asked what.

Each line is one request, logged when its response completed (watches when they end), at the ``Metadata`` level:
verb, resource, namespace, name, the user and the client's User-Agent, the response code, and when kube-apiserver
received the request and completed its response (their difference is the request's latency as the server saw it,
waiting for etcd and for conversion and admission webhooks included). Clients are told apart
by their User-Agent's product (the text before the first ``/``: ``clusterclass``, ``capi-controller-manager``,
``kubeadm-control-plane-manager``, ...), as kube-apiserver's own metrics do.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any

#: verbs that change something
WRITES = frozenset({"create", "update", "patch", "delete", "deletecollection"})


@dataclass(frozen=True)
class Request:
    verb: str
    resource: str
    subresource: str
    namespace: str
    name: str
    agent: str
    code: int
    uri: str
    #: from the request's arrival to its response's completion, as kube-apiserver logged them
    seconds: float

    @property
    def is_write(self) -> bool:
        """A request that changes an object (a dry run changes nothing)."""
        return self.verb in WRITES and "dryRun=" not in self.uri

    @property
    def what(self) -> str:
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    @property
    def api_version(self) -> str:
        """The group/version the request was made in (:func:`api_version_of` its URI)."""
        return api_version_of(self.uri)


def api_version_of(uri: str) -> str:
    """The group/version a request URI names (``/apis/<group>/<version>/...``; ``/api/v1/...``: ``v1``)."""
    parts = uri.split("?", 1)[0].split("/")
    if len(parts) > 3 and parts[1] == "apis":
        return f"{parts[2]}/{parts[3]}"
    return parts[2] if len(parts) > 2 and parts[1] == "api" else "other"


def product(user_agent: str) -> str:
    """``capi-controller-manager/v1.14.0 (linux/amd64) ...`` → ``capi-controller-manager``."""
    return user_agent.split("/", 1)[0].strip()


def _request(event: dict[str, Any]) -> Request:
    ref = event.get("objectRef") or {}
    return Request(
        verb=str(event.get("verb") or ""),
        resource=str(ref.get("resource") or ""),
        subresource=str(ref.get("subresource") or ""),
        namespace=str(ref.get("namespace") or ""),
        name=str(ref.get("name") or ""),
        agent=product(str(event.get("userAgent") or "")),
        code=int((event.get("responseStatus") or {}).get("code") or 0),
        uri=str(event.get("requestURI") or ""),
        seconds=_latency(event),
    )


def _latency(event: dict[str, Any]) -> float:
    """``stageTimestamp`` minus ``requestReceivedTimestamp`` (RFC 3339 with microseconds), 0 when either is missing."""
    try:
        received = datetime.fromisoformat(str(event["requestReceivedTimestamp"]))
        completed = datetime.fromisoformat(str(event["stageTimestamp"]))
    except (KeyError, ValueError):
        return 0.0
    return max(0.0, (completed - received).total_seconds())


class AuditLog:
    """An audit log file, read from where the last :meth:`mark` left it."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.offset = 0

    def mark(self) -> None:
        """Forget everything logged so far: later reads start here."""
        self.offset = self.path.stat().st_size if self.path.exists() else 0

    def _read(self) -> Iterator[tuple[int, Request | None]]:
        """From the mark on, each complete line's end offset and its request (None: not a completed one)."""
        if not self.path.exists():
            return
        offset = self.offset
        with self.path.open("rb") as log:
            log.seek(offset)
            for line in log:
                if not line.endswith(b"\n"):
                    break
                offset += len(line)
                try:
                    event = json.loads(line)
                except ValueError:
                    yield offset, None
                    continue
                yield offset, _request(event) if event.get("stage") == "ResponseComplete" else None

    def take(self) -> list[Request]:
        """Every request logged since the last :meth:`mark` or :meth:`take`, and mark after the last complete line
        read (so a line written meanwhile is read by the next take, not lost)."""
        read = list(self._read())
        if read:
            self.offset = read[-1][0]
        return [request for _, request in read if request is not None]

    def requests(self) -> Iterator[Request]:
        """Every request logged since the last :meth:`mark` (complete lines only)."""
        return (request for _, request in self._read() if request is not None)


def by_agent(requests: Iterable[Request], agent: str) -> list[Request]:
    return [r for r in requests if r.agent == agent]


def tally(requests: Iterable[Request]) -> Counter[str]:
    """``verb resource`` → how many."""
    return Counter(f"{r.verb} {r.what}" for r in requests)
