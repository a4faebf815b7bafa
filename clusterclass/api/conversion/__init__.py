"""Converting Cluster API objects between API versions: ``cluster.x-k8s.io/v1beta1`` ↔ ``v1beta2`` and friends.

Upstream Cluster API serves each of its kinds in two versions since v1.11 and stores the newer one (the hub,
``v1beta2``; ``v1alpha1`` ↔ ``v1beta2`` for ExtensionConfig). Every object this project reads or writes can be in
either, so the conversion is one library, shared by everything that meets an object in a version it did not
ask for: the embedded API server (storage is the hub; every read, write, watch and apply converts), the
conversion webhook ``clusterclass run`` serves to a real kube-apiserver, the controllers' client (which talks to
a management cluster in its newest served version and hands the pipeline one shape), ``plan``, ``validate`` and
the admission webhooks (which answer in the version the user wrote, field paths included).

- :func:`convert` — an object in another version of its kind (through the hub, as a conversion webhook does);
- :func:`translate_path` — a field path of one version as the other version spells it;
- :func:`conversion_for` / :func:`convertible` — the table of kinds (``registry``), each a
  :class:`~clusterclass.api.conversion.engine.KindConversion` of ordered steps.

The rules are upstream v1.14's (``api/core/v1beta1/conversion.go``, the kubeadm and Docker packages' and the
hub-spoke converters of its webhooks): field moves, Durations as whole seconds, contract references without
an apiVersion, ``bool`` → ``*bool`` intent, and the ``cluster.x-k8s.io/conversion-data`` annotation in which a
down-converted object keeps its hub form so the way back loses nothing.
"""

from __future__ import annotations

from clusterclass.api.conversion.engine import (
    CONVERSION_DATA_ANNOTATION,
    ApiVersions,
    Context,
    ConversionError,
    KindConversion,
    render_path,
)
from clusterclass.api.conversion.registry import conversion_for, convertible, hub_version, kinds, spoke_version
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, namespace_of, split_api_version

__all__ = [
    "CONVERSION_DATA_ANNOTATION",
    "ApiVersions",
    "ConversionError",
    "KindConversion",
    "conversion_for",
    "convert",
    "convertible",
    "hub_version",
    "in_version",
    "kinds",
    "spoke_version",
    "translate_path",
]


def in_version(api_version: str, kind: str, version: str) -> str:
    """``api_version`` with ``version`` instead, when the conversions know ``version`` of the kind (code written
    for one version reads every known kind in it, the API server converting); else unchanged."""
    group, _, _ = api_version.rpartition("/")
    conversion = conversion_for(group, kind)
    if not group or conversion is None or version not in conversion.versions:
        return api_version
    return f"{group}/{version}"


def _parse(api_version: str) -> tuple[str, str]:
    try:
        return split_api_version(api_version)
    except ValueError as err:
        raise ConversionError(str(err), field="apiVersion") from None


def convert(obj: Obj, api_version: str, *, api_versions: ApiVersions) -> Obj:
    """``obj`` (not changed) as a new object in ``api_version``, converting through the hub version.

    Raises :class:`ConversionError` for a kind or version the table does not know, a group that differs from
    the object's, or a value that cannot be converted (with the field path in the object's own version).
    An object already in ``api_version`` comes back as a copy.
    """
    kind = str(obj.get("kind") or "")
    from_group, from_version = _parse(str(obj.get("apiVersion") or ""))
    group, version = _parse(api_version)
    if group != from_group:
        raise ConversionError(f"cannot convert {kind} from group {from_group!r} to group {group!r}")
    if version == from_version:
        copied: Obj = json_copy(obj)
        return copied
    conversion = conversion_for(group, kind)
    if conversion is None:
        raise ConversionError(f"no conversion for {kind}.{group}")
    for wanted in (from_version, version):
        if wanted not in conversion.versions:
            raise ConversionError(
                f"{kind}.{group} has no version {wanted!r} (it has {', '.join(conversion.versions)})",
                field="apiVersion",
            )
    ctx = Context(namespace_of(obj), api_versions)
    hub_api_version = f"{group}/{conversion.hub}"
    hub = obj if from_version == conversion.hub else conversion.spokes[from_version].to_hub(obj, hub_api_version, ctx)
    if version == conversion.hub:
        if hub is obj:
            hub = json_copy(obj)
        return hub
    return conversion.spokes[version].to_spoke(hub, api_version, ctx)


def translate_path(group: str, kind: str, from_version: str, to_version: str, path: str) -> str:
    """A field path of ``from_version`` as ``to_version`` spells it (``spec.topology.class`` →
    ``spec.topology.classRef.name``); a path the versions share, or of a kind the table does not know, is
    returned as it is. Bracketed keys that are not indices (``variables[foo]``) are kept."""
    conversion = conversion_for(group, kind)
    if conversion is None or from_version == to_version or not path:
        return path
    if from_version not in conversion.versions or to_version not in conversion.versions:
        return path
    steps = _path_steps(path)
    if steps is None:
        return path
    if from_version != conversion.hub:
        steps = conversion.spokes[from_version].path_to_hub(steps)
    if to_version != conversion.hub:
        steps = conversion.spokes[to_version].path_to_spoke(steps)
    return render_path(steps)


def _path_steps(path: str) -> tuple[str | int, ...] | None:
    """``a.b[2].c[key]`` → ``("a", "b", 2, "c", "[key]")``; None for text that is not a field path."""
    steps: list[str | int] = []
    for part in path.split("."):
        name, bracket, rest = part.partition("[")
        if name:
            steps.append(name)
        while bracket:
            inner, closing, after = rest.partition("]")
            if not closing:
                return None
            steps.append(int(inner) if inner.isdigit() else f"[{inner}]")
            _, bracket, rest = after.partition("[")
    return tuple(steps)
