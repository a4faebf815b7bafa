"""Discovery documents: which groups, versions and resources the store serves, in both forms.

Clients map a kind to its URL through discovery before anything else: kubectl resolves ``get cl``
(short names), ``get cluster-api`` (categories) and every ``apply`` through it, and the Python
client's ``dynamic`` module does the same. Two forms exist and clients use either:

- per group version: ``/api`` (APIVersions), ``/apis`` (APIGroupList), ``/apis/<group>`` (APIGroup)
  and ``/api/v1`` or ``/apis/<group>/<version>`` (APIResourceList, one entry per resource and one
  per subresource, ``clusters/status``);
- aggregated (``apidiscovery.k8s.io/v2`` APIGroupDiscoveryList on ``/api`` and ``/apis``), every
  resource of every group in one answer, which kubectl asks for first.

Everything is computed from the store's registrations on each request, so a kind registered while
the server runs (a CRD being installed) is discoverable at once.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from clusterclass.api.contracts import version_priority
from clusterclass.apiserver.front.catalog import Description, describe
from clusterclass.apiserver.store import KindInfo, MemoryStore

VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
#: namespaces are deleted one at a time (kube-apiserver serves no deletecollection for them)
NAMESPACE_VERBS = ["create", "delete", "get", "list", "patch", "update", "watch"]
SUBRESOURCE_VERBS = ["get", "patch", "update"]


def preference(version: str) -> tuple[int, int, int, str]:
    """Sort key putting versions in Kubernetes' order of preference (v2, v1, v1beta2, v1beta1, v1alpha1, then
    others by name): :func:`~clusterclass.api.contracts.version_priority`, best first."""
    rank, major, minor, name = version_priority(version)
    return (-rank, -major, -minor, name)


def served_groups(store: MemoryStore) -> dict[str, dict[str, list[KindInfo]]]:
    """group -> version -> kinds served there, groups sorted, versions in order of preference."""
    groups: dict[str, dict[str, list[KindInfo]]] = defaultdict(dict)
    for info in store.kinds():
        for version in info.versions:
            groups[info.group].setdefault(version, []).append(info)
    return {
        group: {version: by_version[version] for version in sorted(by_version, key=preference)}
        for group, by_version in sorted(groups.items())
    }


def _verbs(info: KindInfo) -> list[str]:
    return NAMESPACE_VERBS if (info.group, info.kind) == ("", "Namespace") else VERBS


def _subresources(info: KindInfo, version: str) -> list[str]:
    return (["status"] if info.has_status(version) else []) + (["scale"] if info.has_scale(version) else [])


def _names(described: Description) -> dict[str, list[str]]:
    """The short names and categories of a resource, each only when it has some (both forms leave them out)."""
    names = {"shortNames": list(described.short_names), "categories": list(described.categories)}
    return {key: value for key, value in names.items() if value}


#: what the scale subresource answers with
SCALE_KIND = {"group": "autoscaling", "version": "v1", "kind": "Scale"}


def api_versions(address: str) -> dict[str, Any]:
    """``/api``: the core group's versions."""
    return {
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": address}],
    }


def _group_entry(group: str, versions: list[str]) -> dict[str, Any]:
    entries = [{"groupVersion": f"{group}/{version}", "version": version} for version in versions]
    return {"name": group, "versions": entries, "preferredVersion": entries[0]}


def api_group_list(store: MemoryStore) -> dict[str, Any]:
    """``/apis``: every named group with its versions, preferred first."""
    groups = [_group_entry(group, list(versions)) for group, versions in served_groups(store).items() if group]
    return {"kind": "APIGroupList", "apiVersion": "v1", "groups": groups}


def api_group(store: MemoryStore, group: str) -> dict[str, Any] | None:
    """``/apis/<group>``, or None when the group is not served."""
    versions = served_groups(store).get(group)
    if not group or not versions:
        return None
    return {"kind": "APIGroup", "apiVersion": "v1", **_group_entry(group, list(versions))}


def api_resource_list(store: MemoryStore, group: str, version: str) -> dict[str, Any] | None:
    """``/api/v1`` or ``/apis/<group>/<version>``, or None when that group version is not served."""
    kinds = served_groups(store).get(group, {}).get(version)
    if not kinds:
        return None
    resources: list[dict[str, Any]] = []
    for info in sorted(kinds, key=lambda info: info.plural):
        described = describe(store, info, version)
        resource: dict[str, Any] = {
            "name": info.plural,
            "singularName": described.singular,
            "namespaced": info.namespaced,
            "kind": info.kind,
            "verbs": _verbs(info),
            **_names(described),
        }
        resources.append(resource)
        for subresource in _subresources(info, version):
            entry: dict[str, Any] = {
                "name": f"{info.plural}/{subresource}",
                "singularName": "",
                "namespaced": info.namespaced,
                "kind": info.kind,
                "verbs": SUBRESOURCE_VERBS,
            }
            if subresource == "scale":
                entry.update(SCALE_KIND)
            resources.append(entry)
    group_version = f"{group}/{version}" if group else version
    return {"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": group_version, "resources": resources}


def aggregated(store: MemoryStore, *, core: bool, version: str = "v2") -> dict[str, Any]:
    """The aggregated discovery document of ``/api`` (``core``) or ``/apis``."""
    items = []
    for group, versions in served_groups(store).items():
        if bool(group) == core:
            continue
        entries = []
        for served, kinds in versions.items():
            entries.append(
                {
                    "version": served,
                    "resources": [
                        _resource_discovery(store, info, served) for info in sorted(kinds, key=lambda i: i.plural)
                    ],
                    "freshness": "Current",
                }
            )
        metadata: dict[str, Any] = {}
        if group:
            metadata["name"] = group
        items.append({"metadata": metadata, "versions": entries})
    return {
        "kind": "APIGroupDiscoveryList",
        "apiVersion": f"apidiscovery.k8s.io/{version}",
        "metadata": {},
        "items": items,
    }


def _resource_discovery(store: MemoryStore, info: KindInfo, version: str) -> dict[str, Any]:
    described = describe(store, info, version)
    response_kind = {"group": info.group, "version": version, "kind": info.kind}
    entry: dict[str, Any] = {
        "resource": info.plural,
        "responseKind": response_kind,
        "scope": "Namespaced" if info.namespaced else "Cluster",
        "singularResource": described.singular,
        "verbs": _verbs(info),
        **_names(described),
    }
    subresources = [
        {
            "subresource": subresource,
            "responseKind": SCALE_KIND if subresource == "scale" else response_kind,
            "verbs": SUBRESOURCE_VERBS,
        }
        for subresource in _subresources(info, version)
    ]
    if subresources:
        entry["subresources"] = subresources
    return entry
