"""What kubectl needs to know of a kind beyond the store's registration: its names and its columns.

Discovery lists each resource's singular name, short names (``kubectl get cl``) and categories
(``kubectl get cluster-api``); ``kubectl get`` prints the columns of the Table the server renders.
For a custom resource both come from its CustomResourceDefinition (``spec.names`` and the version's
``additionalPrinterColumns``): the parsed one the store serves the kind from, or else the stored CRD
object. For the built-in kinds the store serves they are kube-apiserver's own (``ns``, ``cm``,
``ev``; a ConfigMap's DATA column...). Any other kind gets what kube-apiserver gives a CRD without
printer columns: NAME and AGE.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from clusterclass.api.objects import Obj, dig
from clusterclass.apiserver.crd.controllers import CRD_API_VERSION, CRD_KIND
from clusterclass.apiserver.front import jsonpath
from clusterclass.apiserver.store import KindInfo, MemoryStore
from clusterclass.kube.errors import ApiError

NAME_DESCRIPTION = (
    "Name must be unique within a namespace. Is required when creating resources, although some resources may "
    "allow a client to request the generation of an appropriate name automatically. Name is primarily intended "
    "for creation idempotence and configuration definition. Cannot be updated. More info: "
    "https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
)
AGE_DESCRIPTION = (
    "CreationTimestamp is a timestamp representing the server time when this object was created. It is not "
    "guaranteed to be set in happens-before order across separate operations. Clients may not set this value. "
    "It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. "
    "More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata"
)


@dataclass(frozen=True)
class Column:
    """One Table column: its definition and how a cell is read from an object."""

    name: str
    type: str
    value: Callable[[Obj], Any]
    description: str = ""
    format: str = ""
    priority: int = 0

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


@dataclass(frozen=True)
class Description:
    singular: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    #: every column, in order (NAME first, except for Events)
    columns: tuple[Column, ...] = field(default_factory=tuple)


def human_duration(seconds: float) -> str:
    """A duration the way ``kubectl get`` shows ages: ``45s``, ``3m12s``, ``5h``, ``2d3h``, ``3y``."""
    whole = int(seconds)
    if whole < -1:
        return "<invalid>"
    if whole < 0:
        return "0s"
    if whole < 120:
        return f"{whole}s"
    minutes = whole // 60
    if minutes < 10:
        rest = whole % 60
        return f"{minutes}m{rest}s" if rest else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = whole // 3600
    if hours < 8:
        rest = minutes % 60
        return f"{hours}h{rest}m" if rest else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    if hours < 24 * 8:
        rest = hours % 24
        return f"{hours // 24}d{rest}h" if rest else f"{hours // 24}d"
    if hours < 24 * 365 * 2:
        return f"{hours // 24}d"
    if hours < 24 * 365 * 8:
        days = (hours // 24) % 365
        return f"{hours // 24 // 365}y{days}d" if days else f"{hours // 24 // 365}y"
    return f"{hours // 24 // 365}y"


def age_of(timestamp: Any, *, now: datetime | None = None) -> str | None:
    """How long ago an RFC 3339 ``timestamp`` was, as kubectl shows it; ``<unknown>`` when there is none."""
    if not timestamp:
        return "<unknown>"
    try:
        moment = datetime.fromisoformat(str(timestamp).replace("Z", "+00:00"))
    except ValueError:
        return "<invalid>"
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return human_duration(((now or datetime.now(UTC)) - moment).total_seconds())


NAME = Column(
    "Name", "string", lambda obj: dig(obj, "metadata", "name") or "", description=NAME_DESCRIPTION, format="name"
)
#: the age column of built-in kinds (server-side printers give it as a string)
AGE = Column(
    "Age", "string", lambda obj: age_of(dig(obj, "metadata", "creationTimestamp")), description=AGE_DESCRIPTION
)
#: the age column a CRD gets when it declares no printer columns
CRD_AGE = Column(
    "Age", "date", lambda obj: age_of(dig(obj, "metadata", "creationTimestamp")), description=AGE_DESCRIPTION
)


def _count(*paths: str) -> Callable[[Obj], int]:
    return lambda obj: sum(len(obj.get(path) or {}) for path in paths)


def _event_object(obj: Obj) -> str:
    involved = obj.get("involvedObject") or {}
    return f"{str(involved.get('kind', '')).lower()}/{involved.get('name', '')}"


def _event_last_seen(obj: Obj) -> str | None:
    seen = obj.get("lastTimestamp") or obj.get("eventTime") or dig(obj, "metadata", "creationTimestamp")
    return age_of(seen)


def _event_source(obj: Obj) -> str:
    source = obj.get("source") or {}
    component = source.get("component") or obj.get("reportingComponent") or ""
    host = source.get("host") or ""
    return f"{component}, {host}" if host else str(component)


def _crd_versions(obj: Obj) -> str:
    return ",".join(
        f"{version.get('name')}(storage)" if version.get("storage") else str(version.get("name"))
        for version in dig(obj, "spec", "versions") or []
        if isinstance(version, dict) and version.get("served", True)
    )


def _crd_established(obj: Obj) -> bool:
    conditions = dig(obj, "status", "conditions") or []
    return any(c.get("type") == "Established" and c.get("status") == "True" for c in conditions if isinstance(c, dict))


def _string(path: str) -> Callable[[Obj], Any]:
    """A built-in printer's cell: a Go field, so "" (not null) when unset."""
    return lambda obj: dig(obj, *path.split(".")) or ""


def _node_status(obj: Obj) -> str:
    """kubectl's STATUS of a Node: its Ready condition as Ready/NotReady/Unknown, then SchedulingDisabled."""
    ready = next(
        (c for c in dig(obj, "status", "conditions") or [] if isinstance(c, dict) and c.get("type") == "Ready"), None
    )
    state = "Unknown" if ready is None or ready.get("status") == "Unknown" else (
        "Ready" if ready.get("status") == "True" else "NotReady"
    )  # fmt: skip
    return f"{state},SchedulingDisabled" if dig(obj, "spec", "unschedulable") else state


def _node_roles(obj: Obj) -> str:
    labels = dig(obj, "metadata", "labels") or {}
    roles = sorted(
        key.removeprefix("node-role.kubernetes.io/") for key in labels if key.startswith("node-role.kubernetes.io/")
    )
    return ",".join(roles) or "<none>"


def _node_address(kind: str) -> Callable[[Obj], str]:
    def value(obj: Obj) -> str:
        for address in dig(obj, "status", "addresses") or []:
            if isinstance(address, dict) and address.get("type") == kind:
                return str(address.get("address") or "")
        return "<none>"

    return value


def _pod_ready(obj: Obj) -> str:
    statuses = [s for s in dig(obj, "status", "containerStatuses") or [] if isinstance(s, dict)]
    total = len(dig(obj, "spec", "containers") or []) or len(statuses)
    return f"{sum(1 for s in statuses if s.get('ready'))}/{total}"


def _pod_restarts(obj: Obj) -> int:
    return sum(
        int(s.get("restartCount") or 0) for s in dig(obj, "status", "containerStatuses") or [] if isinstance(s, dict)
    )


#: kube-apiserver's own names and columns of the built-in kinds the store may serve
BUILTIN: dict[tuple[str, str], Description] = {
    ("", "Namespace"): Description(
        "namespace", ("ns",), (), (NAME, Column("Status", "string", _string("status.phase")), AGE)
    ),
    ("", "ConfigMap"): Description(
        "configmap", ("cm",), (), (NAME, Column("Data", "string", _count("data", "binaryData")), AGE)
    ),
    ("", "Secret"): Description(
        "secret",
        (),
        (),
        (NAME, Column("Type", "string", _string("type")), Column("Data", "string", _count("data", "stringData")), AGE),
    ),
    ("", "Event"): Description(
        "event",
        ("ev",),
        (),
        (
            Column("Last Seen", "string", _event_last_seen),
            Column("Type", "string", _string("type")),
            Column("Reason", "string", _string("reason")),
            Column("Object", "string", _event_object),
            Column("Subobject", "string", _string("involvedObject.fieldPath"), priority=1),
            Column("Source", "string", _event_source, priority=1),
            Column("Message", "string", lambda o: str(o.get("message") or "").strip()),
            Column("First Seen", "string", lambda o: age_of(o.get("firstTimestamp")), priority=1),
            Column("Count", "string", lambda o: o.get("count") or 1, priority=1),
            Column("Name", "string", _string("metadata.name"), priority=1),
        ),
    ),
    ("coordination.k8s.io", "Lease"): Description(
        "lease", (), (), (NAME, Column("Holder", "string", _string("spec.holderIdentity")), AGE)
    ),
    ("", "Node"): Description(
        "node",
        ("no",),
        (),
        (
            NAME,
            Column("Status", "string", _node_status),
            Column("Roles", "string", _node_roles),
            AGE,
            Column("Version", "string", _string("status.nodeInfo.kubeletVersion")),
            Column("Internal-IP", "string", _node_address("InternalIP"), priority=1),
            Column("External-IP", "string", _node_address("ExternalIP"), priority=1),
            Column("OS-Image", "string", _string("status.nodeInfo.osImage"), priority=1),
            Column("Kernel-Version", "string", _string("status.nodeInfo.kernelVersion"), priority=1),
            Column("Container-Runtime", "string", _string("status.nodeInfo.containerRuntimeVersion"), priority=1),
        ),
    ),
    ("", "Pod"): Description(
        "pod",
        ("po",),
        ("all",),
        (
            NAME,
            Column("Ready", "string", _pod_ready),
            Column("Status", "string", lambda o: dig(o, "status", "reason") or dig(o, "status", "phase") or ""),
            Column("Restarts", "string", _pod_restarts),
            AGE,
            Column("IP", "string", lambda o: dig(o, "status", "podIP") or "<none>", priority=1),
            Column("Node", "string", lambda o: dig(o, "spec", "nodeName") or "<none>", priority=1),
        ),
    ),
    ("apiextensions.k8s.io", "CustomResourceDefinition"): Description(
        "customresourcedefinition",
        ("crd", "crds"),
        (),
        (
            NAME,
            Column("Scope", "string", _string("spec.scope")),
            Column("Versions", "string", _crd_versions),
            Column("Created At", "date", _string("metadata.creationTimestamp")),
            Column("Group", "string", _string("spec.group"), priority=1),
            Column("Kind", "string", _string("spec.names.kind"), priority=1),
            Column("ShortNames", "string", lambda o: ",".join(dig(o, "spec", "names", "shortNames") or []), priority=1),
            Column("Established", "boolean", _crd_established, priority=1),
        ),
    ),
}


def describe(store: MemoryStore, info: KindInfo, version: str) -> Description:
    """The names and columns of ``info`` as served in ``version``."""
    builtin = BUILTIN.get((info.group, info.kind))
    if builtin is not None:
        return builtin
    schema = info.schema  # the parsed CRD, when the store serves the kind from one
    if schema is not None:
        served = schema.versions.get(version)
        return Description(
            schema.singular or info.kind.lower(),
            tuple(schema.short_names),
            tuple(schema.categories),
            _columns(served.printer_columns if served is not None else ()),
        )
    crd = stored_crd(store, info)
    if crd is None:
        return Description(info.kind.lower(), columns=(NAME, CRD_AGE))
    names = dig(crd, "spec", "names") or {}
    specs: list[Any] = []
    for served_version in dig(crd, "spec", "versions") or []:
        if isinstance(served_version, dict) and served_version.get("name") == version:
            specs = list(served_version.get("additionalPrinterColumns") or [])
    return Description(
        str(names.get("singular") or info.kind.lower()),
        tuple(str(name) for name in names.get("shortNames") or []),
        tuple(str(name) for name in names.get("categories") or []),
        _columns(specs),
    )


def _columns(specs: Any) -> tuple[Column, ...]:
    """NAME, then a CRD version's ``additionalPrinterColumns``; NAME and AGE when it has none."""
    columns = [_printer_column(spec) for spec in specs if isinstance(spec, Mapping)]
    return (NAME, *(column for column in columns if column is not None)) if any(columns) else (NAME, CRD_AGE)


def stored_crd(store: MemoryStore, info: KindInfo) -> Obj | None:
    """The stored CustomResourceDefinition named after ``info`` (``clusters.cluster.x-k8s.io``), if any."""
    if not info.group:
        return None
    try:
        return store.get(CRD_API_VERSION, CRD_KIND, info.resource)
    except ApiError:
        return None


def _printer_column(spec: Mapping[str, Any]) -> Column | None:
    path = str(spec.get("jsonPath") or "")
    try:
        jsonpath.compile_path(path)
    except jsonpath.JsonPathError:
        return None
    kind = str(spec.get("type") or "string")

    def value(obj: Obj) -> Any:
        found = jsonpath.find(path, obj)
        return _cell(kind, found[0]) if found else None

    return Column(
        str(spec.get("name") or ""),
        kind,
        value,
        description=str(spec.get("description") or ""),
        format=str(spec.get("format") or ""),
        priority=int(spec.get("priority") or 0),
    )


def _cell(kind: str, value: Any) -> Any:
    """A printer-column value as apiextensions puts it into a Table cell."""
    if value is None:
        return None
    if kind == "date":
        return age_of(value) if isinstance(value, str) else None
    if kind == "integer":
        return int(value) if isinstance(value, int | float) and not isinstance(value, bool) else None
    if kind == "number":
        return value if isinstance(value, int | float) and not isinstance(value, bool) else None
    if kind == "boolean":
        return value if isinstance(value, bool) else None
    if isinstance(value, dict | list):
        return json.dumps(value, separators=(",", ":"))
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)
