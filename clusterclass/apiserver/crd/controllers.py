"""What the embedded cluster's apiextensions controllers make of a CustomResourceDefinition, as plain functions.

kube-apiserver serves a CRD's kind only after controllers running inside it have accepted its
names and marked it ``Established``; deleting a CRD adds the ``customresourcecleanup`` finalizer
and its finalizer controller deletes every custom resource before the CRD goes. The memory store
runs those steps itself (:class:`~clusterclass.apiserver.store.MemoryStore` does the writes); this
module computes the objects those steps write, with kube-apiserver 1.37's conditions and messages
(checked against it), and holds the bundled Cluster API CRDs every new store installs.

Checking a CRD and compiling its schemas is :mod:`clusterclass.apiserver.crd.definitions`'s job.
"""

from __future__ import annotations

import functools
from datetime import datetime

from clusterclass.api.conversion import convertible
from clusterclass.api.objects import Obj
from clusterclass.apiserver.crd.definitions import API_VERSION, KIND, CrdInfo, load_bundled_crds, parse_crd
from clusterclass.kube.gotext import rfc3339

CRD_API_VERSION = API_VERSION
CRD_KIND = KIND
#: the finalizer kube-apiserver puts on a deleted CRD until its custom resources are gone
CRD_CLEANUP_FINALIZER = "customresourcecleanup.apiextensions.k8s.io"
#: who the apiextensions controllers write as (managedFields), as on a real cluster
CRD_CONTROLLER = "kube-apiserver"

_NAME_KEYS = ("plural", "singular", "kind", "listKind", "shortNames", "categories")


def condition(kind: str, status: str, reason: str, message: str, now: datetime) -> Obj:
    """A ``metav1.Condition``-shaped condition (CRD and Namespace conditions have this shape)."""
    return {"type": kind, "status": status, "lastTransitionTime": rfc3339(now), "reason": reason, "message": message}


def with_condition(status: Obj, new: Obj) -> Obj:
    """``status`` with condition ``new`` set; its ``lastTransitionTime`` kept when the status did not change."""
    conditions = [c for c in status.get("conditions") or [] if isinstance(c, dict)]
    for i, existing in enumerate(conditions):
        if existing.get("type") == new["type"]:
            if existing.get("status") == new["status"]:
                new = {**new, "lastTransitionTime": existing.get("lastTransitionTime")}
            if existing == new:
                return status
            conditions[i] = new
            break
    else:
        conditions.append(new)
    return {**status, "conditions": conditions}


def created_status(crd_info: CrdInfo) -> Obj:
    """The status of a CRD as its create answers: nothing accepted yet, the storage version stored."""
    return {
        "conditions": None,
        "acceptedNames": {"plural": "", "kind": ""},
        "storedVersions": [crd_info.storage_version],
    }


def established_status(crd: Obj, crd_info: CrdInfo, now: datetime) -> Obj:
    """The status once the naming and establishing controllers have seen ``crd``."""
    names = crd["spec"]["names"]
    status = dict(crd.get("status") or {})
    status["acceptedNames"] = {
        **{key: value for key, value in names.items() if key in _NAME_KEYS},
        "singular": crd_info.singular,
        "listKind": crd_info.list_kind,
    }
    stored_versions = list(status.get("storedVersions") or [])
    if crd_info.storage_version not in stored_versions:
        stored_versions.append(crd_info.storage_version)
    status["storedVersions"] = stored_versions
    status = with_condition(status, condition("NamesAccepted", "True", "NoConflicts", "no conflicts found", now))
    return with_condition(
        status, condition("Established", "True", "InitialNamesAccepted", "the initial names have been accepted", now)
    )


def marked_for_deletion(crd: Obj, now: datetime) -> Obj:
    """The CRD registry's own first delete: the cleanup finalizer and a condition (no generation, no grace period)."""
    meta = dict(crd["metadata"])
    if CRD_CLEANUP_FINALIZER not in (meta.get("finalizers") or []):
        meta["finalizers"] = [*(meta.get("finalizers") or []), CRD_CLEANUP_FINALIZER]
    meta["deletionTimestamp"] = rfc3339(now)
    status = with_condition(
        crd.get("status") or {},
        condition(
            "Terminating",
            "True",
            "InstanceDeletionPending",
            "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon",
            now,
        ),
    )
    return {**crd, "metadata": meta, "status": status}


def deleting_instances(crd: Obj, now: datetime) -> Obj:
    """The CRD while its finalizer controller waits for custom resources that are still there."""
    status = with_condition(
        crd.get("status") or {},
        condition("Terminating", "True", "InstanceDeletionInProgress", "CustomResource deletion is in progress", now),
    )
    return {**crd, "metadata": dict(crd["metadata"]), "status": status}


def instances_deleted(crd: Obj, now: datetime) -> Obj:
    """The CRD once every custom resource is gone: without the cleanup finalizer (removed unless others hold it)."""
    meta = dict(crd["metadata"])
    meta["finalizers"] = [f for f in meta.get("finalizers") or [] if f != CRD_CLEANUP_FINALIZER]
    if not meta["finalizers"]:
        del meta["finalizers"]
    status = with_condition(
        crd.get("status") or {},
        condition("Terminating", "False", "InstanceDeletionCompleted", "removed all instances", now),
    )
    return {**crd, "metadata": meta, "status": status}


#: where a Cluster API CRD's conversion webhook is served: ``clusterclass run``'s webhook Service (``config/``)
CONVERSION_SERVICE_NAMESPACE = "clusterclass-system"
CONVERSION_SERVICE_NAME = "clusterclass-webhook-service"
CONVERSION_PATH = "/convert"


def conversion_webhook() -> Obj:
    """The ``spec.conversion`` of a Cluster API CRD installed with its conversion webhook, as clusterctl installs
    upstream's (strategy Webhook, ConversionReview v1, the webhook Service at ``/convert``)."""
    return {
        "strategy": "Webhook",
        "webhook": {
            "conversionReviewVersions": ["v1"],
            "clientConfig": {
                "service": {
                    "namespace": CONVERSION_SERVICE_NAMESPACE,
                    "name": CONVERSION_SERVICE_NAME,
                    "path": CONVERSION_PATH,
                    "port": 443,
                }
            },
        },
    }


def _with_conversion_webhook(crd: Obj) -> Obj:
    versions = [v for v in crd["spec"].get("versions") or [] if v.get("served")]
    if len(versions) < 2 or not convertible(crd["spec"].get("group", ""), crd["spec"]["names"].get("kind", "")):
        return crd
    return {**crd, "spec": {**crd["spec"], "conversion": conversion_webhook()}}


@functools.cache
def bundled_crds() -> tuple[Obj, ...]:
    """The Cluster API CRDs every new store installs, read once per process and shared by every store: the
    bundled files with the conversion webhook every kind that serves several versions has on a management
    cluster (the embedded cluster answers it in process).

    Never modify them: stores share their specs (copy before changing).
    """
    return tuple(_with_conversion_webhook(crd) for crd in load_bundled_crds())


@functools.cache
def bundled_crd_infos() -> dict[str, CrdInfo]:
    """The bundled CRDs parsed once per process, by name."""
    return {crd["metadata"]["name"]: parse_crd(crd) for crd in bundled_crds()}
