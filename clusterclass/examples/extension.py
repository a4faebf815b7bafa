"""An example Runtime Extension written with clusterclass's Python SDK: what upstream's test extension does.

Serve it with ``clusterclass extension serve clusterclass.examples.extension:extension --cert-dir DIR`` (``clusterclass
up --example-extension`` runs it in process, registered by an ExtensionConfig named ``example-extension``), and use it
from a ClusterClass patch such as ``quick-start-extension.yaml`` beside this file::

    patches:
    - name: example
      external:
        generateExtension: generate-patches.example-extension
        validateExtension: validate-topology.example-extension
        discoverVariablesExtension: discover-variables.example-extension

**Topology mutation** (upstream's ``test/extension`` handlers, spec §8.6):

- ``generate-patches``: DockerClusterTemplate ``loadBalancer.imageRepository`` from the variable ``imageRepository``;
  KubeadmControlPlaneTemplate ``rolloutStrategy.rollingUpdate.maxSurge`` from ``kubeadmControlPlaneMaxSurge`` and,
  below Kubernetes 1.24, kubelet ``cgroup-driver: cgroupfs``; KubeadmConfigTemplate of the ``default-worker``
  MachineDeployment class or MachinePool class, below 1.24, the same kubelet argument; DockerMachineTemplate
  ``customImage`` for the control plane's or MachineDeployment's version; **DockerMachinePoolTemplate**
  ``template.customImage`` for the MachinePool's version (``kindest/node:<version>``);
- ``validate-topology``: always valid;
- ``discover-variables``: ``kubeadmControlPlaneMaxSurge`` (string, default ``""``) and ``imageRepository`` (string,
  required).

**Lifecycle hooks** answer from the ConfigMap ``<cluster>-test-extension-hookresponses`` in the Cluster's
namespace, as upstream's test extension does: its key ``<Hook>-preloadedResponse`` holds the answer as JSON
(``{"Status": "Success", "RetryAfterSeconds": 5, "Message": "..."}``; lower-case keys work too). Without the
ConfigMap, or the key, every hook answers Success at once. After answering, the hook's status is written to
``<Hook>-actualResponseStatus`` of the ConfigMap when it exists, so a test can see which hooks were called.
Reading and writing the ConfigMap needs ``extension.client`` (``--kubeconfig`` when served alone).
"""

from __future__ import annotations

import json
import logging
from typing import Any

from clusterclass.api.objects import Obj, dig, name_of, namespace_of
from clusterclass.kube.errors import ApiError, NotFound
from clusterclass.runtimesdk import (
    Extension,
    ExtensionFailure,
    VariableNotFound,
    catalog,
    json_patch_item,
    variable_value,
)
from clusterclass.runtimesdk.types import merged_variables

logger = logging.getLogger(__name__)

extension = Extension("example-extension")

CGROUP_DRIVER = {"cgroup-driver": "cgroupfs"}
RESPONSES_SUFFIX = "-test-extension-hookresponses"


# --- topology mutation ------------------------------------------------------------------------------------------


def _optional(variables: list[Any], path: str) -> Any:
    try:
        return variable_value(variables, path)
    except VariableNotFound:
        return None


def _below_1_24(version: str) -> bool:
    parts = version.lstrip("v").split(".")
    try:
        return (int(parts[0]), int(parts[1])) < (1, 24)
    except (IndexError, ValueError) as err:
        raise ExtensionFailure(f"cannot parse version {version!r}") from err


def _kind_image(version: str) -> str:
    return f"kindest/node:{version.replace('+', '_')}"


def _patches_for(template: Obj, variables: list[Any]) -> list[Obj]:
    """The JSON patch operations for one template (paths into the template: ``/spec/template/...``)."""
    kind = template.get("kind")
    operations: list[Obj] = []
    if kind == "DockerClusterTemplate":
        repository = _optional(variables, "imageRepository")
        if repository:
            operations.append(
                {"op": "add", "path": "/spec/template/spec/loadBalancer", "value": {"imageRepository": repository}}
            )
    elif kind == "KubeadmControlPlaneTemplate":
        version = _optional(variables, "builtin.controlPlane.version")
        if version and _below_1_24(version):
            for configuration in ("initConfiguration", "joinConfiguration"):
                path = f"/spec/template/spec/kubeadmConfigSpec/{configuration}"
                operations.append(
                    {"op": "add", "path": path, "value": {"nodeRegistration": {"kubeletExtraArgs": CGROUP_DRIVER}}}
                )
        surge = _optional(variables, "kubeadmControlPlaneMaxSurge")
        if surge:
            value = int(surge) if str(surge).isdigit() else surge
            operations.append(
                {
                    "op": "add",
                    "path": "/spec/template/spec/rolloutStrategy",
                    "value": {"rollingUpdate": {"maxSurge": value}},
                }
            )
    elif kind == "KubeadmConfigTemplate":
        for worker in ("machineDeployment", "machinePool"):
            worker_class = _optional(variables, f"builtin.{worker}.class")
            if worker_class is None:
                continue
            if worker_class != "default-worker":
                return []
            version = _optional(variables, f"builtin.{worker}.version")
            if not version:
                raise ExtensionFailure(
                    f"could not set cgroup-driver to KubeadmConfigTemplate: no builtin.{worker}.version"
                )
            if _below_1_24(version):
                operations.append(
                    {
                        "op": "add",
                        "path": "/spec/template/spec/joinConfiguration",
                        "value": {"nodeRegistration": {"kubeletExtraArgs": CGROUP_DRIVER}},
                    }
                )
            return operations
        raise ExtensionFailure("could not patch KubeadmConfigTemplate: no builtin.machineDeployment or machinePool")
    elif kind == "DockerMachineTemplate":
        version = _optional(variables, "builtin.controlPlane.version") or _optional(
            variables, "builtin.machineDeployment.version"
        )
        if not version:
            raise ExtensionFailure("no version variables found for DockerMachineTemplate patch")
        operations.append({"op": "add", "path": "/spec/template/spec/customImage", "value": _kind_image(version)})
    elif kind == "DockerMachinePoolTemplate":
        version = _optional(variables, "builtin.machinePool.version")
        if not version:
            raise ExtensionFailure("no version variables found for DockerMachinePoolTemplate patch")
        operations.append(
            {"op": "add", "path": "/spec/template/spec/template/customImage", "value": _kind_image(version)}
        )
    return operations


@extension.generate_patches("generate-patches")
def generate_patches(request: dict[str, Any]) -> dict[str, Any]:
    items = []
    for item in request["items"]:
        variables = merged_variables(request.get("variables") or [], item.get("variables") or [])
        operations = _patches_for(item["object"], variables)
        if operations:
            items.append(json_patch_item(item["uid"], operations))
    return {"items": items}


@extension.validate_topology("validate-topology")
def validate_topology(request: dict[str, Any]) -> dict[str, Any]:
    return {}


@extension.discover_variables("discover-variables")
def discover_variables(request: dict[str, Any]) -> dict[str, Any]:
    return {
        "variables": [
            {
                "name": "kubeadmControlPlaneMaxSurge",
                "required": False,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "string",
                        "default": "",
                        "example": "0",
                        "description": "kubeadmControlPlaneMaxSurge is the maximum number of control planes that "
                        "can be scheduled above or under the desired number of control plane machines.",
                    }
                },
            },
            {
                "name": "imageRepository",
                "required": True,
                "schema": {
                    "openAPIV3Schema": {
                        "type": "string",
                        "default": "kindest",
                        "example": "kindest",
                        "description": "imageRepository sets the container registry of the load balancer image.",
                    }
                },
            },
        ]
    }


# --- lifecycle hooks ------------------------------------------------------------------------------------------


async def _answer_from_config_map(hook: str, request: dict[str, Any]) -> dict[str, Any]:
    """The preloaded answer of ``hook`` for the request's Cluster, recording that it was given."""
    cluster = request.get("cluster") or {}
    client = extension.client
    if client is None:
        return {}
    name, namespace = name_of(cluster) + RESPONSES_SUFFIX, namespace_of(cluster)
    try:
        config_map = await client.get("v1", "ConfigMap", name, namespace=namespace)
    except NotFound:
        return {}
    except ApiError as err:
        raise ExtensionFailure(f"cannot read ConfigMap {namespace}/{name}: {err}") from err
    raw = dig(config_map, "data", f"{hook}-preloadedResponse")
    answer: dict[str, Any] = {}
    if raw:
        try:
            preloaded = json.loads(raw)
        except ValueError as err:
            raise ExtensionFailure(f"{hook}-preloadedResponse in ConfigMap {namespace}/{name} is not JSON") from err
        for key, value in preloaded.items():
            answer[key[:1].lower() + key[1:]] = value
    try:
        await client.patch(
            "v1",
            "ConfigMap",
            name,
            {"data": {f"{hook}-actualResponseStatus": str(answer.get("status", "Success"))}},
            namespace=namespace,
        )
    except ApiError as err:
        logger.warning("cannot record the %s answer in ConfigMap %s/%s: %s", hook, namespace, name, err)
    return answer


def _lifecycle(hook: str, handler: str) -> None:
    async def answer(request: dict[str, Any]) -> dict[str, Any]:
        return await _answer_from_config_map(hook, request)

    answer.__name__ = handler.replace("-", "_")
    extension.handler(hook, handler)(answer)


for _hook in (
    catalog.BEFORE_CLUSTER_CREATE,
    catalog.AFTER_CONTROL_PLANE_INITIALIZED,
    catalog.BEFORE_CLUSTER_UPGRADE,
    catalog.AFTER_CONTROL_PLANE_UPGRADE,
    catalog.AFTER_CLUSTER_UPGRADE,
    catalog.BEFORE_CLUSTER_DELETE,
):
    _lifecycle(_hook, "".join("-" + ch.lower() if ch.isupper() else ch for ch in _hook).lstrip("-"))
