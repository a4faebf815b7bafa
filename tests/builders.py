"""Small builders for the plain-dict objects topology tests need.

Every function returns a fresh dict shaped like the ``v1beta1`` object it names, with just enough
fields set for the topology code to read it; keyword arguments add or override the interesting
parts. Nothing here computes topology: tests compare what the code produces against these inputs.
"""

from __future__ import annotations

import copy
from typing import Any

NAMESPACE = "default"
CLUSTER_V1 = "cluster.x-k8s.io/v1beta1"
INFRA_V1 = "infrastructure.cluster.x-k8s.io/v1beta1"
BOOTSTRAP_V1 = "bootstrap.cluster.x-k8s.io/v1beta1"
CONTROLPLANE_V1 = "controlplane.cluster.x-k8s.io/v1beta1"

OWNED = "topology.cluster.x-k8s.io/owned"
CLUSTER_NAME = "cluster.x-k8s.io/cluster-name"
POOL_NAME = "topology.cluster.x-k8s.io/pool-name"
DEPLOYMENT_NAME = "topology.cluster.x-k8s.io/deployment-name"
DEFER_UPGRADE = "topology.cluster.x-k8s.io/defer-upgrade"
HOLD_UPGRADE_SEQUENCE = "topology.cluster.x-k8s.io/hold-upgrade-sequence"
UPGRADE_CONCURRENCY = "topology.cluster.x-k8s.io/upgrade-concurrency"
PENDING_HOOKS = "runtime.cluster.x-k8s.io/pending-hooks"
CLONED_FROM_NAME = "cluster.x-k8s.io/cloned-from-name"
CLONED_FROM_GROUPKIND = "cluster.x-k8s.io/cloned-from-groupkind"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"

Obj = dict[str, Any]


def _metadata(
    name: str, namespace: str | None, labels: dict[str, str] | None, annotations: dict[str, str] | None
) -> Obj:
    metadata: Obj = {"name": name}
    if namespace is not None:
        metadata["namespace"] = namespace
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return metadata


def obj(
    api_version: str,
    kind: str,
    name: str,
    *,
    namespace: str | None = NAMESPACE,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    spec: Any = None,
    status: Any = None,
) -> Obj:
    """Any object."""
    built: Obj = {"apiVersion": api_version, "kind": kind, "metadata": _metadata(name, namespace, labels, annotations)}
    if spec is not None:
        built["spec"] = copy.deepcopy(spec)
    if status is not None:
        built["status"] = copy.deepcopy(status)
    return built


def ref(target: Obj) -> Obj:
    """An ObjectReference to ``target``."""
    return {
        "apiVersion": target["apiVersion"],
        "kind": target["kind"],
        "name": target["metadata"]["name"],
        "namespace": target["metadata"].get("namespace", NAMESPACE),
    }


# --- templates ------------------------------------------------------------------------------------


def template(
    api_version: str,
    kind: str,
    name: str,
    *,
    spec: Obj | None = None,
    template_labels: dict[str, str] | None = None,
    template_annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
) -> Obj:
    """A template kind: the object to stamp out under ``spec.template``."""
    inner: Obj = {"spec": copy.deepcopy(spec) if spec is not None else {}}
    inner_metadata: Obj = {}
    if template_labels:
        inner_metadata["labels"] = dict(template_labels)
    if template_annotations:
        inner_metadata["annotations"] = dict(template_annotations)
    if inner_metadata:
        inner["metadata"] = inner_metadata
    return obj(api_version, kind, name, labels=labels, annotations=annotations, spec={"template": inner})


def kubeadm_config_template(name: str = "bootstrap-template", **kwargs: Any) -> Obj:
    kwargs.setdefault("spec", {"joinConfiguration": {"nodeRegistration": {"name": "{{ ds.meta_data.hostname }}"}}})
    return template(BOOTSTRAP_V1, "KubeadmConfigTemplate", name, **kwargs)


def docker_machine_pool_template(name: str = "infra-pool-template", **kwargs: Any) -> Obj:
    kwargs.setdefault("spec", {"template": {"customImage": "kindest/node:v1.28.0"}})
    return template(INFRA_V1, "DockerMachinePoolTemplate", name, **kwargs)


def docker_machine_template(name: str = "infra-machine-template", **kwargs: Any) -> Obj:
    kwargs.setdefault("spec", {"customImage": "kindest/node:v1.28.0"})
    return template(INFRA_V1, "DockerMachineTemplate", name, **kwargs)


def docker_cluster_template(name: str = "infra-cluster-template", **kwargs: Any) -> Obj:
    kwargs.setdefault("spec", {"loadBalancer": {"imageTag": "v1"}})
    return template(INFRA_V1, "DockerClusterTemplate", name, **kwargs)


def kubeadm_control_plane_template(name: str = "control-plane-template", **kwargs: Any) -> Obj:
    kwargs.setdefault("spec", {"kubeadmConfigSpec": {"clusterConfiguration": {"apiServer": {}}}})
    return template(CONTROLPLANE_V1, "KubeadmControlPlaneTemplate", name, **kwargs)


def generic_template(kind: str, name: str, api_version: str = INFRA_V1, **kwargs: Any) -> Obj:
    """One of the ``Generic*Template`` / ``Test*Template`` kinds of spec §1.8."""
    return template(api_version, kind, name, **kwargs)


# --- ClusterClass -----------------------------------------------------------------------------------


def _class_metadata(labels: dict[str, str] | None, annotations: dict[str, str] | None) -> Obj:
    metadata: Obj = {}
    if labels:
        metadata["labels"] = dict(labels)
    if annotations:
        metadata["annotations"] = dict(annotations)
    return metadata


def worker_class(
    class_name: str,
    bootstrap: Obj,
    infrastructure: Obj,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    **fields: Any,
) -> Obj:
    """A MachineDeploymentClass or MachinePoolClass (same shape; ``fields`` add the optional ones)."""
    entry: Obj = {
        "class": class_name,
        "template": {"bootstrap": {"ref": ref(bootstrap)}, "infrastructure": {"ref": ref(infrastructure)}},
    }
    metadata = _class_metadata(labels, annotations)
    if metadata:
        entry["template"]["metadata"] = metadata
    entry.update(copy.deepcopy(fields))
    return entry


def cluster_class(
    name: str = "class1",
    *,
    infrastructure: Obj | None = None,
    control_plane: Obj | None = None,
    machine_infrastructure: Obj | None = None,
    control_plane_fields: Obj | None = None,
    machine_deployments: list[Obj] | None = None,
    machine_pools: list[Obj] | None = None,
    namespace: str = NAMESPACE,
) -> Obj:
    spec: Obj = {}
    if infrastructure is not None:
        spec["infrastructure"] = {"ref": ref(infrastructure)}
    cp: Obj = {}
    if control_plane is not None:
        cp["ref"] = ref(control_plane)
    if machine_infrastructure is not None:
        cp["machineInfrastructure"] = {"ref": ref(machine_infrastructure)}
    cp.update(copy.deepcopy(control_plane_fields or {}))
    if cp:
        spec["controlPlane"] = cp
    workers: Obj = {}
    if machine_deployments is not None:
        workers["machineDeployments"] = machine_deployments
    if machine_pools is not None:
        workers["machinePools"] = machine_pools
    if workers:
        spec["workers"] = workers
    return obj(CLUSTER_V1, "ClusterClass", name, namespace=namespace, spec=spec)


# --- Cluster ------------------------------------------------------------------------------------------


def worker_topology(
    class_name: str,
    name: str,
    *,
    labels: dict[str, str] | None = None,
    annotations: dict[str, str] | None = None,
    **fields: Any,
) -> Obj:
    """A MachineDeploymentTopology or MachinePoolTopology."""
    entry: Obj = {"class": class_name, "name": name}
    metadata = _class_metadata(labels, annotations)
    if metadata:
        entry["metadata"] = metadata
    entry.update(copy.deepcopy(fields))
    return entry


def cluster(
    name: str = "cluster1",
    *,
    class_name: str = "class1",
    version: str = "v1.2.3",
    uid: str = "cluster1-uid",
    namespace: str = NAMESPACE,
    annotations: dict[str, str] | None = None,
    labels: dict[str, str] | None = None,
    control_plane: Obj | None = None,
    machine_deployments: list[Obj] | None = None,
    machine_pools: list[Obj] | None = None,
    infrastructure_ref: Obj | None = None,
    control_plane_ref: Obj | None = None,
) -> Obj:
    """A Cluster with ``spec.topology``."""
    topology: Obj = {"class": class_name, "version": version}
    if control_plane is not None:
        topology["controlPlane"] = copy.deepcopy(control_plane)
    workers: Obj = {}
    if machine_deployments is not None:
        workers["machineDeployments"] = machine_deployments
    if machine_pools is not None:
        workers["machinePools"] = machine_pools
    if workers:
        topology["workers"] = workers
    spec: Obj = {"topology": topology}
    if infrastructure_ref is not None:
        spec["infrastructureRef"] = ref(infrastructure_ref) if "metadata" in infrastructure_ref else infrastructure_ref
    if control_plane_ref is not None:
        spec["controlPlaneRef"] = ref(control_plane_ref) if "metadata" in control_plane_ref else control_plane_ref
    built = obj(CLUSTER_V1, "Cluster", name, namespace=namespace, labels=labels, annotations=annotations, spec=spec)
    built["metadata"]["uid"] = uid
    return built


# --- objects the topology created earlier --------------------------------------------------------------


def owned_labels(cluster_name: str, **extra: str) -> dict[str, str]:
    return {CLUSTER_NAME: cluster_name, OWNED: "", **extra}


def cloned_object(
    source: Obj,
    name: str,
    *,
    cluster_name: str = "cluster1",
    labels: dict[str, str] | None = None,
    spec: Any = None,
    as_template: bool = False,
) -> Obj:
    """An object (or, with ``as_template``, a template) as topology would have cloned it from ``source``."""
    kind = source["kind"]
    if not as_template and kind.endswith("Template"):
        kind = kind[: -len("Template")]
    if spec is None:
        spec = source["spec"] if as_template else source["spec"]["template"].get("spec", {})
    all_labels = owned_labels(cluster_name)
    all_labels.update(labels or {})
    return obj(source["apiVersion"], kind, name, labels=all_labels, spec=spec)


def machine_pool(
    name: str,
    topology_name: str | None,
    *,
    bootstrap: Obj | None,
    infrastructure: Obj | None,
    cluster_name: str = "cluster1",
    version: str | None = "v1.2.2",
    replicas: int | None = None,
    node_refs: list[str] | None = None,
    labels: dict[str, str] | None = None,
    owned: bool = True,
) -> Obj:
    """A MachinePool; ``topology_name`` None leaves out the pool-name label."""
    return _worker(
        "MachinePool",
        name,
        POOL_NAME,
        topology_name,
        bootstrap=bootstrap,
        infrastructure=infrastructure,
        cluster_name=cluster_name,
        version=version,
        replicas=replicas,
        labels=labels,
        owned=owned,
        status={"nodeRefs": [{"kind": "Node", "name": n} for n in node_refs]} if node_refs else None,
    )


def machine_deployment(
    name: str,
    topology_name: str | None,
    *,
    bootstrap: Obj | None,
    infrastructure: Obj | None,
    cluster_name: str = "cluster1",
    version: str | None = "v1.2.2",
    replicas: int | None = None,
    labels: dict[str, str] | None = None,
    owned: bool = True,
) -> Obj:
    """A MachineDeployment; ``topology_name`` None leaves out the deployment-name label."""
    built = _worker(
        "MachineDeployment",
        name,
        DEPLOYMENT_NAME,
        topology_name,
        bootstrap=bootstrap,
        infrastructure=infrastructure,
        cluster_name=cluster_name,
        version=version,
        replicas=replicas,
        labels=labels,
        owned=owned,
        status=None,
    )
    selector = {CLUSTER_NAME: cluster_name, OWNED: ""}
    if topology_name:
        selector[DEPLOYMENT_NAME] = topology_name
    built["spec"]["selector"] = {"matchLabels": selector}
    return built


def _worker(
    kind: str,
    name: str,
    name_label: str,
    topology_name: str | None,
    *,
    bootstrap: Obj | None,
    infrastructure: Obj | None,
    cluster_name: str,
    version: str | None,
    replicas: int | None,
    labels: dict[str, str] | None,
    owned: bool,
    status: Obj | None,
) -> Obj:
    all_labels = {CLUSTER_NAME: cluster_name}
    if owned:
        all_labels[OWNED] = ""
    if topology_name is not None:
        all_labels[name_label] = topology_name
    all_labels.update(labels or {})
    machine_spec: Obj = {"clusterName": cluster_name, "bootstrap": {}}
    if bootstrap is not None:
        machine_spec["bootstrap"]["configRef"] = ref(bootstrap) if "metadata" in bootstrap else dict(bootstrap)
    if infrastructure is not None:
        machine_spec["infrastructureRef"] = (
            ref(infrastructure) if "metadata" in infrastructure else dict(infrastructure)
        )
    if version is not None:
        machine_spec["version"] = version
    spec: Obj = {"clusterName": cluster_name, "template": {"spec": machine_spec}}
    if replicas is not None:
        spec["replicas"] = replicas
    return obj(CLUSTER_V1, kind, name, labels=all_labels, spec=spec, status=status)


def control_plane(
    name: str = "cluster1-cp",
    *,
    version: str = "v1.2.3",
    status_version: str | None = None,
    replicas: int | None = None,
    status_replicas: int | None = None,
    machine_template_ref: Obj | None = None,
    cluster_name: str = "cluster1",
    spec: Obj | None = None,
) -> Obj:
    """A KubeadmControlPlane; the status counts default to ``replicas`` (a control plane at rest)."""
    cp_spec: Obj = copy.deepcopy(spec) if spec is not None else {}
    cp_spec["version"] = version
    if replicas is not None:
        cp_spec["replicas"] = replicas
    if machine_template_ref is not None:
        cp_spec.setdefault("machineTemplate", {})["infrastructureRef"] = (
            ref(machine_template_ref) if "metadata" in machine_template_ref else machine_template_ref
        )
    status: Obj = {}
    if status_version is not None:
        status["version"] = status_version
    counted = status_replicas if status_replicas is not None else replicas
    if counted is not None:
        status.update({"replicas": counted, "updatedReplicas": counted, "readyReplicas": counted})
        status["unavailableReplicas"] = 0
    return obj(
        CONTROLPLANE_V1,
        "KubeadmControlPlane",
        name,
        labels=owned_labels(cluster_name),
        spec=cp_spec,
        status=status or None,
    )


def node(name: str, kubelet_version: str, *, cluster_name: str | None = None) -> Obj:
    """A workload-cluster Node reporting ``kubelet_version``."""
    annotations = {"cluster.x-k8s.io/cluster-name": cluster_name} if cluster_name else None
    return obj(
        "v1",
        "Node",
        name,
        namespace=None,
        annotations=annotations,
        status={"nodeInfo": {"kubeletVersion": kubelet_version}},
    )


def machine(name: str, *, version: str | None, labels: dict[str, str]) -> Obj:
    """A Machine of a MachineDeployment (``labels`` should match the deployment's selector)."""
    spec: Obj = {"clusterName": labels.get(CLUSTER_NAME, "cluster1")}
    if version is not None:
        spec["version"] = version
    return obj(CLUSTER_V1, "Machine", name, labels=labels, spec=spec)
