"""The way into and out of the pipeline's shape, for the offline edges (``plan``, ``validate``) and the webhooks.

The pipeline reads Cluster API's own kinds (``cluster.x-k8s.io``, and ExtensionConfigs of
``runtime.cluster.x-k8s.io``) in one version, the one its rules are written to: v1beta1 (v1alpha1 for
ExtensionConfig), as upstream v1.14 defines it, a shape every v1beta2 field has a place in
(:mod:`clusterclass.topology.pipeline`). Objects given in another version are converted on the way in
(:func:`to_pipeline`), what comes out is converted back to the version the user wrote (:func:`from_pipeline`),
and a field path the rules report is translated to that version too (:func:`user_path`), so a v1beta2 user reads
``spec.topology.classRef.name`` where the rule said ``spec.topology.class``.

Provider kinds (templates, the control plane, bootstrap and infrastructure objects) are not converted on the way
in: the pipeline copies their specs and patches them as they are, so they stay in the version their template has.
``plan --api-version`` converts them on the way out too, when the conversions know them (kubeadm, Docker).

Offline, a v1beta2 reference's version comes from the CRDs at hand (:func:`offline_contracts`): the bundled
Cluster API CRDs, any CRD among the inputs, else the version of an object of that kind among the inputs.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable
from typing import Final

from clusterclass.api.contracts import CrdContracts, bundled_contracts
from clusterclass.api.conversion import (
    CONVERSION_DATA_ANNOTATION,
    ApiVersions,
    ConversionError,
    conversion_for,
    convert,
    spoke_version,
    translate_path,
)
from clusterclass.api.objects import Obj, split_api_version
from clusterclass.fielderrors import FieldError

#: the API groups whose kinds the pipeline reads in their spoke version
PIPELINE_GROUPS: Final = frozenset({"cluster.x-k8s.io", "runtime.cluster.x-k8s.io"})

CRD_KIND: Final = "CustomResourceDefinition"


def _group_version(obj: Obj) -> tuple[str, str]:
    try:
        return split_api_version(str(obj.get("apiVersion") or ""))
    except ValueError:
        return "", ""


def pipeline_version(group: str, kind: str) -> str | None:
    """The version the pipeline reads ``kind`` in, or None for a kind it keeps as given."""
    if group not in PIPELINE_GROUPS:
        return None
    return spoke_version(group, kind)


def to_pipeline(obj: Obj, api_versions: ApiVersions) -> Obj:
    """``obj`` in the pipeline's version (a new object when converted, ``obj`` itself otherwise).

    Raises :class:`~clusterclass.api.conversion.ConversionError` (with the field path in the object's own version)."""
    group, version = _group_version(obj)
    wanted = pipeline_version(group, str(obj.get("kind") or ""))
    conversion = conversion_for(group, str(obj.get("kind") or ""))
    if wanted is None or version == wanted or conversion is None or version not in conversion.versions:
        return obj
    return convert(obj, f"{group}/{wanted}", api_versions=api_versions)


def from_pipeline(obj: Obj, version: str, api_versions: ApiVersions, *, providers: bool = False) -> Obj:
    """``obj`` in ``version`` (``v1beta2``), when the conversions know that version of its kind: a pipeline kind
    always, a provider kind only with ``providers``. A down-converted object is shown without its
    conversion-data annotation: that is for the API server's round trips, not for reading."""
    group, have = _group_version(obj)
    kind = str(obj.get("kind") or "")
    conversion = conversion_for(group, kind)
    if have == version or conversion is None or version not in conversion.versions or have not in conversion.versions:
        return obj
    if group not in PIPELINE_GROUPS and not providers:
        return obj
    converted = convert(obj, f"{group}/{version}", api_versions=api_versions)
    annotations = (converted.get("metadata") or {}).get("annotations")
    if isinstance(annotations, dict):
        annotations.pop(CONVERSION_DATA_ANNOTATION, None)
        if not annotations:
            del converted["metadata"]["annotations"]
    return converted


def with_owner_version(obj: Obj, version: str) -> Obj:
    """``obj`` whose ownerReferences to the pipeline's kinds (the Cluster) name ``version`` (``v1beta2``) where the
    conversions know it: the pipeline owns objects by the Cluster's v1beta1 name, upstream v1.14 by its v1beta2 one."""
    references = (obj.get("metadata") or {}).get("ownerReferences")
    if not isinstance(references, list) or not references:
        return obj
    shown = []
    for reference in references:
        try:
            group, have = split_api_version(str(reference.get("apiVersion") or ""))
        except ValueError:
            group, have = "", ""
        conversion = conversion_for(group, str(reference.get("kind") or "")) if group in PIPELINE_GROUPS else None
        if conversion is not None and have != version and version in conversion.versions:
            reference = {**reference, "apiVersion": f"{group}/{version}"}
        shown.append(reference)
    return obj if shown == references else {**obj, "metadata": {**obj["metadata"], "ownerReferences": shown}}


def user_path(group: str, kind: str, user_version: str, path: str) -> str:
    """A field path a rule reported on the pipeline's version of a kind, as ``user_version`` spells it."""
    pipeline = pipeline_version(group, kind)
    if pipeline is None or not user_version or user_version == pipeline:
        return path
    return translate_path(group, kind, pipeline, user_version, path)


def user_message(group: str, kind: str, user_version: str, message: str) -> str:
    """A ``<field path>: <detail>`` message (a Kubernetes field error) with its path in ``user_version``."""
    path, sep, rest = message.partition(": ")
    if not sep or " " in path or not path:
        return message
    return f"{user_path(group, kind, user_version, path)}: {rest}"


def user_errors(group: str, kind: str, user_version: str, errors: Iterable[FieldError]) -> list[FieldError]:
    """Field errors about a pipeline object, with their paths as ``user_version`` spells them."""
    return [
        dataclasses.replace(error, field=user_path(group, kind, user_version, error.field)) if error.field else error
        for error in errors
    ]


def offline_contracts(objects: Iterable[Obj]) -> CrdContracts:
    """Reference versions and contracts for objects read offline (module doc)."""
    contracts = bundled_contracts()
    objects = list(objects)
    for obj in objects:
        if obj.get("kind") == CRD_KIND and _group_version(obj)[0] == "apiextensions.k8s.io":
            contracts.add_crd(obj)
    for obj in objects:
        contracts.observe(str(obj.get("apiVersion") or ""), str(obj.get("kind") or ""))
    return contracts


__all__ = [
    "PIPELINE_GROUPS",
    "ConversionError",
    "from_pipeline",
    "offline_contracts",
    "pipeline_version",
    "to_pipeline",
    "user_errors",
    "user_message",
    "user_path",
]
