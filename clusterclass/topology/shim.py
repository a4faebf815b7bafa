"""The Cluster shim (spec §3.2): a Secret that owns new top-level objects until the Cluster does.

The InfrastructureCluster and the ControlPlane are created before the Cluster points at them, and
only the core Cluster controller adds the Cluster's ownerReference to them later. If the reconcile
failed in between (the Cluster update refused, the controller restarted), nothing would own them and
they would leak. So while either object does not exist yet, a Secret ``<cluster>-shim`` of type
``cluster.x-k8s.io/secret``, owned by the Cluster, is created first and added as an extra owner of both
new objects: if the Cluster goes, garbage collection takes the shim and with it the orphans.

Once both objects exist, both are owned by the Cluster, and one still lists the shim, the shim is
deleted (garbage collection then drops the dangling reference). An object that already lists the shim
keeps that reference in its desired state, so server-side apply does not strip it.

Owners are matched by kind and name, as upstream matches them (the shim's uid is not known everywhere
it is looked for). MachinePools are not involved: their objects are owned by the Cluster from the start.
"""

from __future__ import annotations

from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, name_of, namespace_of, owner_references_of
from clusterclass.api.refs import owner_reference_to

SHIM_SUFFIX = "-shim"
SECRET_API_VERSION = "v1"
SECRET_KIND = "Secret"
#: The Secret type Cluster API gives its own Secrets.
CLUSTER_SECRET_TYPE = "cluster.x-k8s.io/secret"


def shim_name(cluster_name: str) -> str:
    return cluster_name + SHIM_SUFFIX


def shim_secret(cluster: Obj) -> Obj:
    """The shim Secret of ``cluster``, owned by it, as it is created."""
    return {
        "apiVersion": SECRET_API_VERSION,
        "kind": SECRET_KIND,
        "metadata": {
            "name": shim_name(name_of(cluster)),
            "namespace": namespace_of(cluster),
            "ownerReferences": [owner_reference_to(cluster)],
        },
        "type": CLUSTER_SECRET_TYPE,
    }


def _owned_by(obj: Obj | None, kind: str, name: str) -> bool:
    return any(ref.get("kind") == kind and ref.get("name") == name for ref in owner_references_of(obj))


def shim_owner_reference(obj: Obj | None, cluster_name: str) -> Obj | None:
    """The ownerReference ``obj`` has to its Cluster's shim, if any (carried into desired state)."""
    for ref in owner_references_of(obj):
        if ref.get("kind") == SECRET_KIND and ref.get("name") == shim_name(cluster_name):
            return dict(ref)
    return None


def needs_shim(infrastructure_cluster: Obj | None, control_plane: Obj | None) -> bool:
    """Whether a reconcile is about to create the InfrastructureCluster or the ControlPlane."""
    return infrastructure_cluster is None or control_plane is None


def shim_is_done(cluster: Obj, infrastructure_cluster: Obj | None, control_plane: Obj | None) -> bool:
    """Whether the shim has served: both objects exist and the Cluster owns both, and one lists the shim."""
    if infrastructure_cluster is None or control_plane is None:
        return False
    cluster_name = name_of(cluster)
    owned_by_cluster = all(
        _owned_by(obj, c.KIND_CLUSTER, cluster_name) for obj in (infrastructure_cluster, control_plane)
    )
    listed = any(
        _owned_by(obj, SECRET_KIND, shim_name(cluster_name)) for obj in (infrastructure_cluster, control_plane)
    )
    return owned_by_cluster and listed


def with_shim_owner(obj: Obj, shim: Obj) -> Obj:
    """A copy of desired ``obj`` with ``shim`` among its owners (once, however often it is asked)."""
    if _owned_by(obj, SECRET_KIND, name_of(shim)):
        return obj
    metadata: dict[str, Any] = dict(obj["metadata"])
    metadata["ownerReferences"] = [*owner_references_of(obj), owner_reference_to(shim)]
    return {**obj, "metadata": metadata}
