"""The Runtime SDK's requests and responses as typed dicts: what an extension handler receives and returns.

They are plain dicts at run time (JSON in, JSON out, unknown fields kept), typed so an editor and mypy know the
shape of ``hooks.runtime.cluster.x-k8s.io/v1alpha1`` (spec §8). Every response has ``status`` (``Success`` or
``Failure``) and ``message``; the SDK fills in ``apiVersion``, ``kind`` and a ``Success`` status when a handler leaves
them out. Patches in a GeneratePatches response are base64 text: :func:`json_patch_item` and
:func:`merge_patch_item` build items from Python values. :func:`variable_value` reads a variable of a request, and
``builtin.machinePool.version``-style paths into the ``builtin`` variable.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Iterable, Mapping
from typing import Any, Literal, NotRequired, TypedDict

Status = Literal["Success", "Failure"]


class Variable(TypedDict):
    name: str
    value: Any


class HolderReference(TypedDict):
    """The object a patched template belongs to, and where in it the template is referenced."""

    apiVersion: str
    kind: str
    namespace: str
    name: str
    fieldPath: str


class GeneratePatchesRequestItem(TypedDict):
    uid: str
    holderReference: HolderReference
    #: the template (as the API serves it) with every earlier patch applied
    object: dict[str, Any]
    variables: list[Variable]


class GeneratePatchesRequest(TypedDict):
    apiVersion: str
    kind: str
    settings: NotRequired[dict[str, str]]
    variables: list[Variable]
    items: list[GeneratePatchesRequestItem]


class GeneratePatchesResponseItem(TypedDict):
    uid: str
    patchType: Literal["JSONPatch", "JSONMergePatch"]
    #: the patch document, base64
    patch: str


class GeneratePatchesResponse(TypedDict, total=False):
    apiVersion: str
    kind: str
    status: Status
    message: str
    items: list[GeneratePatchesResponseItem]


class ValidateTopologyRequestItem(TypedDict):
    holderReference: HolderReference
    object: dict[str, Any]
    variables: list[Variable]


class ValidateTopologyRequest(TypedDict):
    apiVersion: str
    kind: str
    settings: NotRequired[dict[str, str]]
    variables: list[Variable]
    items: list[ValidateTopologyRequestItem]


class CommonResponse(TypedDict, total=False):
    apiVersion: str
    kind: str
    status: Status
    message: str


ValidateTopologyResponse = CommonResponse


class DiscoverVariablesRequest(TypedDict):
    apiVersion: str
    kind: str
    settings: NotRequired[dict[str, str]]


class ClusterClassVariable(TypedDict):
    """A variable definition, as in a ClusterClass's ``spec.variables``."""

    name: str
    required: bool
    schema: dict[str, Any]


class DiscoverVariablesResponse(TypedDict, total=False):
    apiVersion: str
    kind: str
    status: Status
    message: str
    variables: list[ClusterClassVariable]


class ClusterRequest(TypedDict):
    """BeforeClusterCreate, AfterControlPlaneInitialized, BeforeClusterDelete: the whole Cluster."""

    apiVersion: str
    kind: str
    settings: NotRequired[dict[str, str]]
    cluster: dict[str, Any]


class BeforeClusterUpgradeRequest(ClusterRequest):
    fromKubernetesVersion: str
    toKubernetesVersion: str


class UpgradedClusterRequest(ClusterRequest):
    """AfterControlPlaneUpgrade and AfterClusterUpgrade."""

    kubernetesVersion: str


class RetryResponse(TypedDict, total=False):
    """The answer of a blocking lifecycle hook: a non-zero ``retryAfterSeconds`` holds the Cluster that long."""

    apiVersion: str
    kind: str
    status: Status
    message: str
    retryAfterSeconds: int


class DiscoveryHandler(TypedDict):
    name: str
    requestHook: dict[str, str]
    timeoutSeconds: int
    failurePolicy: Literal["Fail", "Ignore"]


class DiscoveryResponse(TypedDict):
    apiVersion: str
    kind: str
    status: Status
    message: str
    handlers: list[DiscoveryHandler]


def _encode(document: Any) -> str:
    return base64.b64encode(json.dumps(document, separators=(",", ":")).encode()).decode()


def json_patch_item(uid: str, operations: Iterable[Mapping[str, Any]]) -> GeneratePatchesResponseItem:
    """A response item applying RFC 6902 ``operations`` (paths into the *template*: ``/spec/template/spec/...``)."""
    return {"uid": uid, "patchType": "JSONPatch", "patch": _encode(list(operations))}


def merge_patch_item(uid: str, patch: Mapping[str, Any]) -> GeneratePatchesResponseItem:
    """A response item applying an RFC 7386 merge ``patch`` to the template."""
    return {"uid": uid, "patchType": "JSONMergePatch", "patch": _encode(dict(patch))}


class VariableNotFound(KeyError):
    """The request has no such variable (or no such field in it)."""


def variable_value(variables: Iterable[Variable], path: str) -> Any:
    """The value of variable ``path``: a variable's name, then ``.``-separated fields into its value
    (``builtin.machinePool.version``). :class:`VariableNotFound` when any part is missing."""
    name, _, rest = path.partition(".")
    for variable in variables:
        if variable.get("name") == name:
            value = variable.get("value")
            for part in rest.split(".") if rest else ():
                if not isinstance(value, Mapping) or part not in value:
                    raise VariableNotFound(path)
                value = value[part]
            return value
    raise VariableNotFound(path)


def merged_variables(*lists: Iterable[Variable]) -> list[Variable]:
    """A request's variables and an item's, as upstream merges them: later lists win per name, except
    ``builtin``, whose objects merge field by field (the item's ``machinePool`` beside the global ``cluster``)."""
    merged: dict[str, Any] = {}
    for variables in lists:
        for variable in variables:
            name, value = variable["name"], variable.get("value")
            if name == "builtin" and isinstance(merged.get(name), dict) and isinstance(value, dict):
                merged[name] = _deep_merge(merged[name], value)
            else:
                merged[name] = value
    return [{"name": name, "value": value} for name, value in merged.items()]


def _deep_merge(base: dict[str, Any], extra: Mapping[str, Any]) -> dict[str, Any]:
    result = dict(base)
    for key, value in extra.items():
        if isinstance(result.get(key), dict) and isinstance(value, Mapping):
            result[key] = _deep_merge(result[key], value)
        else:
            result[key] = value
    return result
