"""Typed, read-only views over the ``cluster.x-k8s.io/v1beta1`` kinds the topology reads.

A view wraps the plain dict (``.raw``) and names its fields, so code says ``topology.version``
rather than ``obj["spec"]["topology"]["version"]`` and a missing optional field reads as None or an
empty value. Views never copy or mutate; writing happens on plain dicts.

Field paths for error messages come from the same place (``field`` attributes), so an error about
the third MachinePool topology says ``spec.topology.workers.machinePools[2].class``.
"""

from __future__ import annotations

from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, annotations_of, dig, is_int, key_of, labels_of, name_of, namespace_of
from clusterclass.api.workers import WorkerKind
from clusterclass.errors import ObjectKey


def _mapping(value: Any) -> Obj:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _int(value: Any) -> int | None:
    """An integer field; booleans (which Python counts as ints) and other types read as unset."""
    return value if is_int(value) else None


def _ref(value: Any) -> Obj | None:
    return value if isinstance(value, dict) else None


class ObjectView:
    """Common metadata accessors."""

    __slots__ = ("raw",)

    def __init__(self, raw: Obj) -> None:
        self.raw = raw

    @property
    def name(self) -> str:
        return name_of(self.raw)

    @property
    def namespace(self) -> str:
        return namespace_of(self.raw)

    @property
    def labels(self) -> dict[str, str]:
        return labels_of(self.raw)

    @property
    def annotations(self) -> dict[str, str]:
        return annotations_of(self.raw)

    @property
    def key(self) -> ObjectKey:
        return key_of(self.raw)


class Metadata:
    """Cluster API's reduced ``ObjectMeta`` (labels and annotations) used in classes and topologies."""

    __slots__ = ("annotations", "labels")

    def __init__(self, raw: Any) -> None:
        raw = _mapping(raw)
        self.labels: dict[str, str] = dict(_mapping(raw.get("labels")))
        self.annotations: dict[str, str] = dict(_mapping(raw.get("annotations")))


class WorkerTopology:
    """One entry of ``spec.topology.workers.machineDeployments`` or ``.machinePools``."""

    __slots__ = ("field", "index", "kind", "raw")

    def __init__(self, kind: WorkerKind, raw: Obj, index: int) -> None:
        self.kind = kind
        self.raw = raw
        self.index = index
        self.field = f"spec.topology.workers.{kind.list_key}[{index}]"

    @property
    def name(self) -> str:
        return str(self.raw.get("name") or "")

    @property
    def class_name(self) -> str:
        return str(self.raw.get("class") or "")

    @property
    def metadata(self) -> Metadata:
        return Metadata(self.raw.get("metadata"))

    @property
    def replicas(self) -> int | None:
        return _int(self.raw.get("replicas"))

    def get(self, field: str) -> Any:
        """An optional field that may also be set on the class (``minReadySeconds``, timeouts...)."""
        return self.raw.get(field)

    @property
    def machine_health_check(self) -> Obj | None:
        return _ref(self.raw.get("machineHealthCheck"))

    @property
    def variable_overrides(self) -> list[Obj]:
        return [v for v in _list(dig(self.raw, "variables", "overrides")) if isinstance(v, dict)]


class Topology:
    """``Cluster.spec.topology``."""

    __slots__ = ("raw",)

    def __init__(self, raw: Obj) -> None:
        self.raw = raw

    @property
    def class_name(self) -> str:
        return str(self.raw.get("class") or "")

    @property
    def class_namespace(self) -> str:
        """``spec.topology.classNamespace`` (v1beta2: ``classRef.namespace``); "" means the Cluster's namespace."""
        return str(self.raw.get("classNamespace") or "")

    @property
    def version(self) -> str:
        return str(self.raw.get("version") or "")

    @property
    def control_plane(self) -> Obj:
        return _mapping(self.raw.get("controlPlane"))

    @property
    def control_plane_metadata(self) -> Metadata:
        return Metadata(self.control_plane.get("metadata"))

    @property
    def control_plane_replicas(self) -> int | None:
        return _int(self.control_plane.get("replicas"))

    def workers(self, kind: WorkerKind) -> list[WorkerTopology]:
        entries = _list(dig(self.raw, "workers", kind.list_key))
        return [WorkerTopology(kind, entry, i) for i, entry in enumerate(entries) if isinstance(entry, dict)]

    @property
    def variables(self) -> list[Obj]:
        return [v for v in _list(self.raw.get("variables")) if isinstance(v, dict)]


class Cluster(ObjectView):
    """``Cluster``."""

    __slots__ = ()

    @property
    def uid(self) -> str:
        return str(dig(self.raw, "metadata", "uid") or "")

    @property
    def topology(self) -> Topology | None:
        raw = dig(self.raw, "spec", "topology")
        return Topology(raw) if isinstance(raw, dict) else None

    @property
    def infrastructure_ref(self) -> Obj | None:
        return _ref(dig(self.raw, "spec", "infrastructureRef"))

    @property
    def control_plane_ref(self) -> Obj | None:
        return _ref(dig(self.raw, "spec", "controlPlaneRef"))

    @property
    def paused(self) -> bool:
        return bool(dig(self.raw, "spec", "paused")) or c.ANNOTATION_PAUSED in self.annotations


class WorkerClass:
    """One entry of ``ClusterClass.spec.workers.machineDeployments`` or ``.machinePools``."""

    __slots__ = ("field", "kind", "raw")

    def __init__(self, kind: WorkerKind, raw: Obj, index: int) -> None:
        self.kind = kind
        self.raw = raw
        self.field = f"spec.workers.{kind.list_key}[{index}]"

    @property
    def class_name(self) -> str:
        return str(self.raw.get("class") or "")

    @property
    def metadata(self) -> Metadata:
        return Metadata(dig(self.raw, "template", "metadata"))

    @property
    def bootstrap_ref(self) -> Obj | None:
        return _ref(dig(self.raw, "template", "bootstrap", "ref"))

    @property
    def infrastructure_ref(self) -> Obj | None:
        return _ref(dig(self.raw, "template", "infrastructure", "ref"))

    @property
    def naming_template(self) -> str:
        template = dig(self.raw, "namingStrategy", "template")
        return template if isinstance(template, str) else self.kind.default_naming_template

    @property
    def machine_health_check(self) -> Obj | None:
        return _ref(self.raw.get("machineHealthCheck"))

    def get(self, field: str) -> Any:
        return self.raw.get(field)


class ControlPlaneClass:
    """``ClusterClass.spec.controlPlane``."""

    __slots__ = ("raw",)

    def __init__(self, raw: Obj) -> None:
        self.raw = raw

    @property
    def ref(self) -> Obj | None:
        return _ref(self.raw.get("ref"))

    @property
    def machine_infrastructure_ref(self) -> Obj | None:
        return _ref(dig(self.raw, "machineInfrastructure", "ref"))

    @property
    def metadata(self) -> Metadata:
        return Metadata(self.raw.get("metadata"))

    @property
    def naming_template(self) -> str:
        template = dig(self.raw, "namingStrategy", "template")
        return template if isinstance(template, str) else "{{ .cluster.name }}-{{ .random }}"

    @property
    def machine_health_check(self) -> Obj | None:
        return _ref(self.raw.get("machineHealthCheck"))

    def get(self, field: str) -> Any:
        return self.raw.get(field)


class ClusterClass(ObjectView):
    """``ClusterClass``."""

    __slots__ = ()

    @property
    def infrastructure_ref(self) -> Obj | None:
        return _ref(dig(self.raw, "spec", "infrastructure", "ref"))

    @property
    def control_plane(self) -> ControlPlaneClass:
        return ControlPlaneClass(_mapping(dig(self.raw, "spec", "controlPlane")))

    def worker_classes(self, kind: WorkerKind) -> list[WorkerClass]:
        entries = _list(dig(self.raw, "spec", "workers", kind.list_key))
        return [WorkerClass(kind, entry, i) for i, entry in enumerate(entries) if isinstance(entry, dict)]

    def worker_class(self, kind: WorkerKind, class_name: str) -> WorkerClass | None:
        for worker_class in self.worker_classes(kind):
            if worker_class.class_name == class_name:
                return worker_class
        return None

    @property
    def patches(self) -> list[Obj]:
        return [p for p in _list(dig(self.raw, "spec", "patches")) if isinstance(p, dict)]

    @property
    def external_patches(self) -> list[tuple[str, Obj]]:
        """``(name, external)`` of each patch with an ``external`` section (handled by Runtime Extensions)."""
        return [(str(p.get("name") or ""), p["external"]) for p in self.patches if isinstance(p.get("external"), dict)]

    @property
    def variables(self) -> list[Obj]:
        return [v for v in _list(dig(self.raw, "spec", "variables")) if isinstance(v, dict)]


class Worker(ObjectView):
    """A MachineDeployment or MachinePool object."""

    __slots__ = ()

    @property
    def version(self) -> str | None:
        value = dig(self.raw, "spec", "template", "spec", "version")
        return value if isinstance(value, str) else None

    @property
    def bootstrap_ref(self) -> Obj | None:
        return _ref(dig(self.raw, "spec", "template", "spec", "bootstrap", "configRef"))

    @property
    def infrastructure_ref(self) -> Obj | None:
        return _ref(dig(self.raw, "spec", "template", "spec", "infrastructureRef"))

    @property
    def node_refs(self) -> list[Obj]:
        return [r for r in _list(dig(self.raw, "status", "nodeRefs")) if isinstance(r, dict)]

    @property
    def selector_labels(self) -> dict[str, str]:
        return dict(_mapping(dig(self.raw, "spec", "selector", "matchLabels")))


class MachineDeployment(Worker):
    """``MachineDeployment``: a worker whose bootstrap and infrastructure are templates."""

    __slots__ = ()

    @property
    def replicas(self) -> int | None:
        return _int(dig(self.raw, "spec", "replicas"))

    @property
    def strategy(self) -> Obj | None:
        return _ref(dig(self.raw, "spec", "strategy"))

    @property
    def failure_domain(self) -> str | None:
        value = dig(self.raw, "spec", "template", "spec", "failureDomain")
        return value if isinstance(value, str) else None


class MachinePool(Worker):
    """``MachinePool``: a worker whose bootstrap config and infrastructure pool are objects."""

    __slots__ = ()

    @property
    def replicas(self) -> int | None:
        return _int(dig(self.raw, "spec", "replicas"))

    @property
    def failure_domains(self) -> list[str]:
        return [str(v) for v in _list(dig(self.raw, "spec", "failureDomains"))]

    @property
    def provider_ids(self) -> list[str]:
        return [str(v) for v in _list(dig(self.raw, "spec", "providerIDList"))]


class MachineHealthCheck(ObjectView):
    """``MachineHealthCheck``."""

    __slots__ = ()

    @property
    def cluster_name(self) -> str:
        return str(dig(self.raw, "spec", "clusterName") or "")

    @property
    def selector_labels(self) -> dict[str, str]:
        return dict(_mapping(dig(self.raw, "spec", "selector", "matchLabels")))

    @property
    def max_unhealthy(self) -> int | str | None:
        value = dig(self.raw, "spec", "maxUnhealthy")
        return value if isinstance(value, int | str) else None

    @property
    def unhealthy_conditions(self) -> list[Obj]:
        return [v for v in _list(dig(self.raw, "spec", "unhealthyConditions")) if isinstance(v, dict)]
