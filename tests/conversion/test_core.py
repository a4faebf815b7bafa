"""``cluster.x-k8s.io`` v1beta1 ↔ v1beta2 for ClusterClass, MachineDeployment, MachineSet, MachinePool, Machine and
MachineHealthCheck (``clusterclass.api.conversion.core``), against upstream v1.14's rules.

Each kind has one realistic v1beta1 object and the v1beta2 object upstream makes of it. Every case checks:
up is the expected hub; down is the original again (once the conversion-data annotation is removed), except
the fields upstream drops, named in the case; hub → spoke → hub is exact, also with the zero values the
spoke cannot hold (``intent``: restored from the annotation); and every converted object passes its
version's CRD schema.
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterclass.api.contracts import bundled_contracts
from clusterclass.api.conversion import (
    CONVERSION_DATA_ANNOTATION,
    ConversionError,
    convert,
    translate_path,
)
from clusterclass.apiserver.crd.definitions import CrdInfo, parse_crd
from clusterclass.apiserver.crd.extensions import with_extensions

V1BETA1 = "cluster.x-k8s.io/v1beta1"
V1BETA2 = "cluster.x-k8s.io/v1beta2"
CRDS = Path(__file__).resolve().parents[2] / "config" / "crd" / "bases"
#: upstream v1.14's own v1beta2 quick-start ClusterClass, kept unchanged with the plan tests' fixtures
UPSTREAM_QUICK_START = (
    Path(__file__).resolve().parents[1] / "plan" / "fixtures" / "upstream-v1.14" / "clusterclass-quick-start.yaml"
)
KNOWN_GROUPS = (
    "bootstrap.cluster.x-k8s.io",
    "controlplane.cluster.x-k8s.io",
    "infrastructure.cluster.x-k8s.io",
)


class StubApiVersions:
    """The contract's answer for a reference's apiVersion: every known provider group serves v1beta2."""

    def api_version(self, group: str, kind: str) -> str:
        if group not in KNOWN_GROUPS:
            raise ConversionError(f"no CRD for {kind}.{group}")
        return f"{group}/v1beta2"


API_VERSIONS = StubApiVersions()


def up(obj: dict[str, Any]) -> dict[str, Any]:
    return convert(obj, V1BETA2, api_versions=API_VERSIONS)


def down(obj: dict[str, Any]) -> dict[str, Any]:
    return convert(obj, V1BETA1, api_versions=API_VERSIONS)


def without_conversion_data(obj: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    annotations = out["metadata"].get("annotations", {})
    annotations.pop(CONVERSION_DATA_ANNOTATION, None)
    if not annotations:
        out["metadata"].pop("annotations", None)
    return out


def steps(path: str) -> list[str | int]:
    """``spec.variables[1].schema`` → ``["spec", "variables", 1, "schema"]``."""
    out: list[str | int] = []
    for part in path.split("."):
        name, *indices = part.split("[")
        out.append(name)
        out += [int(index.rstrip("]")) for index in indices]
    return out


def without(obj: dict[str, Any], *paths: str) -> dict[str, Any]:
    """``obj`` without the fields at ``paths`` (and the maps their removal leaves empty)."""
    out = copy.deepcopy(obj)
    for path in map(steps, paths):
        parents = []
        current: Any = out
        for step in path[:-1]:
            parents.append((current, step))
            current = current[step]
        del current[path[-1]]
        for parent, step in reversed(parents):
            if parent[step] == {}:
                del parent[step]
    return out


def with_values(obj: dict[str, Any], values: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    for text, value in values.items():
        path = steps(text)
        current: Any = out
        for step in path[:-1]:
            current = current.setdefault(step, {}) if isinstance(current, dict) else current[step]
        current[path[-1]] = value
    return out


def has(obj: Any, path: str) -> bool:
    for step in steps(path):
        in_map = isinstance(obj, dict) and isinstance(step, str) and step in obj
        in_list = isinstance(obj, list) and isinstance(step, int) and step < len(obj)
        if not (in_map or in_list):
            return False
        obj = obj[step]
    return True


@functools.cache
def crd(plural: str) -> CrdInfo:
    return parse_crd(with_extensions(yaml.safe_load((CRDS / f"cluster.x-k8s.io_{plural}.yaml").read_text())))


def schema_errors(obj: dict[str, Any]) -> list[str]:
    plural = {
        "Cluster": "clusters",
        "ClusterClass": "clusterclasses",
        "MachineDeployment": "machinedeployments",
        "MachineSet": "machinesets",
        "MachinePool": "machinepools",
        "Machine": "machines",
        "MachineHealthCheck": "machinehealthchecks",
    }[obj["kind"]]
    version = obj["apiVersion"].rsplit("/", 1)[1]
    return [str(error) for error in crd(plural).create_errors(obj, version)]


def load(text: str) -> dict[str, Any]:
    loaded = yaml.safe_load(text)
    assert isinstance(loaded, dict)
    return loaded


# --- the objects ------------------------------------------------------------------------------

CLUSTER_CLASS_V1BETA1 = load("""
apiVersion: cluster.x-k8s.io/v1beta1
kind: ClusterClass
metadata: {name: quick-start, namespace: default}
spec:
  controlPlane:
    metadata: {labels: {tier: control-plane}}
    ref: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate,
          name: quick-start-control-plane, namespace: default}
    machineInfrastructure:
      ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate,
            name: quick-start-control-plane, namespace: default}
    machineHealthCheck:
      unhealthyConditions:
      - {type: Ready, status: Unknown, timeout: 5m0s}
      - {type: Ready, status: "False", timeout: 5m0s}
      nodeStartupTimeout: 10m0s
      maxUnhealthy: 33%
    namingStrategy: {template: "{{ .cluster.name }}-cp-{{ .random }}"}
    nodeDrainTimeout: 1m0s
    nodeDeletionTimeout: 10s
  infrastructure:
    ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerClusterTemplate,
          name: quick-start-cluster, namespace: default}
  infrastructureNamingStrategy: {template: "{{ .cluster.name }}-infra-{{ .random }}"}
  workers:
    machineDeployments:
    - class: default-worker
      template:
        metadata: {labels: {pool: default-worker}}
        bootstrap:
          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate,
                name: quick-start-default-worker-bootstraptemplate, namespace: default}
        infrastructure:
          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate,
                name: quick-start-default-worker-machinetemplate, namespace: default}
      machineHealthCheck:
        unhealthyConditions:
        - {type: Ready, status: Unknown, timeout: 5m0s}
        unhealthyMachineConditions:
        - {type: NodeReady, status: "False", timeout: 5m0s}
        unhealthyRange: "[1-3]"
        remediationTemplate: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate,
                              name: remediation, namespace: default}
      namingStrategy: {template: "{{ .cluster.name }}-md-{{ .machineDeployment.topologyName }}-{{ .random }}"}
      nodeVolumeDetachTimeout: 5m0s
      minReadySeconds: 10
      strategy:
        type: RollingUpdate
        rollingUpdate: {maxUnavailable: 0, maxSurge: 1, deletePolicy: Oldest}
        remediation: {maxInFlight: 2}
    machinePools:
    - class: default-pool
      template:
        metadata: {labels: {pool: default-pool}}
        bootstrap:
          ref: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate,
                name: quick-start-pool-bootstraptemplate, namespace: default}
        infrastructure:
          ref: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachinePoolTemplate,
                name: quick-start-pool, namespace: default}
      namingStrategy: {template: "{{ .cluster.name }}-mp-{{ .random }}"}
      nodeDrainTimeout: 30s
      failureDomains: [fd1]
  variables:
  - name: imageRepository
    required: true
    metadata: {labels: {owner: platform}}
    schema:
      openAPIV3Schema: {type: string, default: registry.k8s.io, description: The container registry.}
  - name: podSecurityStandard
    required: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          enabled: {type: boolean, default: true}
          exemptions:
            type: array
            uniqueItems: true
            items: {type: string, x-kubernetes-int-or-string: true}
          extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: workerReplicas
    required: false
    schema:
      openAPIV3Schema: {type: integer, minimum: 0, exclusiveMinimum: true}
  patches:
  - name: imageRepository
    definitions:
    - selector:
        apiVersion: controlplane.cluster.x-k8s.io/v1beta2
        kind: KubeadmControlPlaneTemplate
        matchResources: {controlPlane: true}
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository
        valueFrom: {variable: imageRepository}
  - name: lifecycle
    external:
      generateExtension: generate-patches.test-extension
      validateExtension: validate-topology.test-extension
      discoverVariablesExtension: discover-variables.test-extension
      settings: {mode: test}
status:
  observedGeneration: 2
  conditions:
  - {type: VariablesReconciled, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
  v1beta2:
    conditions:
    - {type: VariablesReady, status: "True", reason: VariablesReady, message: "",
       lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 2}
  variables:
  - name: imageRepository
    definitions:
    - from: inline
      required: true
      metadata: {labels: {owner: platform}}
      schema:
        openAPIV3Schema: {type: string, default: registry.k8s.io, description: The container registry.}
""")

CLUSTER_CLASS_V1BETA2 = load("""
apiVersion: cluster.x-k8s.io/v1beta2
kind: ClusterClass
metadata: {name: quick-start, namespace: default}
spec:
  controlPlane:
    metadata: {labels: {tier: control-plane}}
    templateRef: {apiVersion: controlplane.cluster.x-k8s.io/v1beta2, kind: KubeadmControlPlaneTemplate,
                  name: quick-start-control-plane}
    machineInfrastructure:
      templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate,
                    name: quick-start-control-plane}
    healthCheck:
      checks:
        unhealthyNodeConditions:
        - {type: Ready, status: Unknown, timeoutSeconds: 300}
        - {type: Ready, status: "False", timeoutSeconds: 300}
        nodeStartupTimeoutSeconds: 600
      remediation:
        triggerIf: {unhealthyLessThanOrEqualTo: 33%}
    naming: {template: "{{ .cluster.name }}-cp-{{ .random }}"}
    deletion: {nodeDrainTimeoutSeconds: 60, nodeDeletionTimeoutSeconds: 10}
  infrastructure:
    templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerClusterTemplate,
                  name: quick-start-cluster}
    naming: {template: "{{ .cluster.name }}-infra-{{ .random }}"}
  workers:
    machineDeployments:
    - class: default-worker
      metadata: {labels: {pool: default-worker}}
      bootstrap:
        templateRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate,
                      name: quick-start-default-worker-bootstraptemplate}
      infrastructure:
        templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate,
                      name: quick-start-default-worker-machinetemplate}
      healthCheck:
        checks:
          unhealthyNodeConditions:
          - {type: Ready, status: Unknown, timeoutSeconds: 300}
          unhealthyMachineConditions:
          - {type: NodeReady, status: "False", timeoutSeconds: 300}
        remediation:
          maxInFlight: 2
          triggerIf: {unhealthyInRange: "[1-3]"}
          templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate,
                        name: remediation}
      naming: {template: "{{ .cluster.name }}-md-{{ .machineDeployment.topologyName }}-{{ .random }}"}
      deletion: {nodeVolumeDetachTimeoutSeconds: 300, order: Oldest}
      minReadySeconds: 10
      rollout:
        strategy:
          type: RollingUpdate
          rollingUpdate: {maxUnavailable: 0, maxSurge: 1}
    machinePools:
    - class: default-pool
      metadata: {labels: {pool: default-pool}}
      bootstrap:
        templateRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate,
                      name: quick-start-pool-bootstraptemplate}
      infrastructure:
        templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachinePoolTemplate,
                      name: quick-start-pool}
      naming: {template: "{{ .cluster.name }}-mp-{{ .random }}"}
      deletion: {nodeDrainTimeoutSeconds: 30}
      failureDomains: [fd1]
  variables:
  - name: imageRepository
    required: true
    deprecatedV1Beta1Metadata: {labels: {owner: platform}}
    schema:
      openAPIV3Schema: {type: string, default: registry.k8s.io, description: The container registry.}
  - name: podSecurityStandard
    required: false
    schema:
      openAPIV3Schema:
        type: object
        properties:
          enabled: {type: boolean, default: true}
          exemptions:
            type: array
            uniqueItems: true
            items: {type: string, x-kubernetes-int-or-string: true}
          extra: {type: object, x-kubernetes-preserve-unknown-fields: true}
  - name: workerReplicas
    required: false
    schema:
      openAPIV3Schema: {type: integer, minimum: 0, exclusiveMinimum: true}
  patches:
  - name: imageRepository
    definitions:
    - selector:
        apiVersion: controlplane.cluster.x-k8s.io/v1beta2
        kind: KubeadmControlPlaneTemplate
        matchResources: {controlPlane: true}
      jsonPatches:
      - op: add
        path: /spec/template/spec/kubeadmConfigSpec/clusterConfiguration/imageRepository
        valueFrom: {variable: imageRepository}
  - name: lifecycle
    external:
      generatePatchesExtension: generate-patches.test-extension
      validateTopologyExtension: validate-topology.test-extension
      discoverVariablesExtension: discover-variables.test-extension
      settings: {mode: test}
status:
  observedGeneration: 2
  conditions:
  - {type: VariablesReady, status: "True", reason: VariablesReady, message: "",
     lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 2}
  deprecated:
    v1beta1:
      conditions:
      - {type: VariablesReconciled, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
  variables:
  - name: imageRepository
    definitions:
    - from: inline
      required: true
      deprecatedV1Beta1Metadata: {labels: {owner: platform}}
      schema:
        openAPIV3Schema: {type: string, default: registry.k8s.io, description: The container registry.}
""")

MACHINE_DEPLOYMENT_V1BETA1 = load("""
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineDeployment
metadata:
  name: quick-start-md-0
  namespace: default
  labels: {cluster.x-k8s.io/cluster-name: quick-start}
spec:
  clusterName: quick-start
  replicas: 3
  selector:
    matchLabels: {cluster.x-k8s.io/cluster-name: quick-start, cluster.x-k8s.io/deployment-name: quick-start-md-0}
  minReadySeconds: 10
  revisionHistoryLimit: 1
  progressDeadlineSeconds: 600
  paused: false
  rolloutAfter: "2025-06-01T00:00:00Z"
  strategy:
    type: RollingUpdate
    rollingUpdate: {maxSurge: 1, maxUnavailable: 0, deletePolicy: Newest}
    remediation: {maxInFlight: 50%}
  machineNamingStrategy: {template: "{{ .machineSet.name }}-{{ .random }}"}
  template:
    metadata:
      labels: {cluster.x-k8s.io/cluster-name: quick-start, cluster.x-k8s.io/deployment-name: quick-start-md-0}
    spec:
      clusterName: quick-start
      version: v1.33.0
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate,
                    name: quick-start-md-0-bootstrap, namespace: default}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate,
                          name: quick-start-md-0-infra, namespace: default}
      failureDomain: fd1
      nodeDrainTimeout: 5m0s
      nodeDeletionTimeout: 10s
      readinessGates: [{conditionType: NetworkReady}]
status:
  observedGeneration: 3
  selector: cluster.x-k8s.io/cluster-name=quick-start,cluster.x-k8s.io/deployment-name=quick-start-md-0
  replicas: 3
  updatedReplicas: 3
  readyReplicas: 3
  availableReplicas: 2
  unavailableReplicas: 1
  phase: Running
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
  v1beta2:
    conditions:
    - {type: Available, status: "True", reason: Available, message: "",
       lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 3}
    readyReplicas: 2
    availableReplicas: 2
    upToDateReplicas: 3
""")

MACHINE_DEPLOYMENT_V1BETA2 = load("""
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineDeployment
metadata:
  name: quick-start-md-0
  namespace: default
  labels: {cluster.x-k8s.io/cluster-name: quick-start}
spec:
  clusterName: quick-start
  replicas: 3
  selector:
    matchLabels: {cluster.x-k8s.io/cluster-name: quick-start, cluster.x-k8s.io/deployment-name: quick-start-md-0}
  rollout:
    after: "2025-06-01T00:00:00Z"
    strategy:
      type: RollingUpdate
      rollingUpdate: {maxSurge: 1, maxUnavailable: 0}
  deletion: {order: Newest}
  remediation: {maxInFlight: 50%}
  machineNaming: {template: "{{ .machineSet.name }}-{{ .random }}"}
  template:
    metadata:
      labels: {cluster.x-k8s.io/cluster-name: quick-start, cluster.x-k8s.io/deployment-name: quick-start-md-0}
    spec:
      clusterName: quick-start
      version: v1.33.0
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: quick-start-md-0-bootstrap}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate,
                          name: quick-start-md-0-infra}
      failureDomain: fd1
      minReadySeconds: 10
      deletion: {nodeDrainTimeoutSeconds: 300, nodeDeletionTimeoutSeconds: 10}
      readinessGates: [{conditionType: NetworkReady}]
status:
  observedGeneration: 3
  selector: cluster.x-k8s.io/cluster-name=quick-start,cluster.x-k8s.io/deployment-name=quick-start-md-0
  replicas: 3
  readyReplicas: 2
  availableReplicas: 2
  upToDateReplicas: 3
  phase: Running
  conditions:
  - {type: Available, status: "True", reason: Available, message: "",
     lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 3}
  deprecated:
    v1beta1:
      conditions:
      - {type: Ready, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
      readyReplicas: 3
      availableReplicas: 2
      updatedReplicas: 3
      unavailableReplicas: 1
""")

MACHINE_SET_V1BETA1 = load("""
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineSet
metadata: {name: quick-start-md-0-x7k2p, namespace: default}
spec:
  clusterName: quick-start
  replicas: 3
  minReadySeconds: 10
  deletePolicy: Oldest
  machineNamingStrategy: {template: "{{ .machineSet.name }}-{{ .random }}"}
  selector:
    matchLabels: {cluster.x-k8s.io/cluster-name: quick-start, machine-template-hash: "3520119893"}
  template:
    metadata:
      labels: {cluster.x-k8s.io/cluster-name: quick-start, machine-template-hash: "3520119893"}
    spec:
      clusterName: quick-start
      version: v1.33.0
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfigTemplate,
                    name: quick-start-md-0-bootstrap, namespace: default}
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate,
                          name: quick-start-md-0-infra, namespace: default}
      nodeVolumeDetachTimeout: 1m0s
status:
  selector: cluster.x-k8s.io/cluster-name=quick-start,machine-template-hash=3520119893
  replicas: 3
  fullyLabeledReplicas: 3
  readyReplicas: 3
  availableReplicas: 3
  observedGeneration: 1
  failureMessage: "machine quick-start-md-0-x7k2p-abcde: bootstrap failed"
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
  v1beta2:
    readyReplicas: 3
    availableReplicas: 3
    upToDateReplicas: 3
""")

MACHINE_SET_V1BETA2 = load("""
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineSet
metadata: {name: quick-start-md-0-x7k2p, namespace: default}
spec:
  clusterName: quick-start
  replicas: 3
  deletion: {order: Oldest}
  machineNaming: {template: "{{ .machineSet.name }}-{{ .random }}"}
  selector:
    matchLabels: {cluster.x-k8s.io/cluster-name: quick-start, machine-template-hash: "3520119893"}
  template:
    metadata:
      labels: {cluster.x-k8s.io/cluster-name: quick-start, machine-template-hash: "3520119893"}
    spec:
      clusterName: quick-start
      version: v1.33.0
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfigTemplate, name: quick-start-md-0-bootstrap}
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachineTemplate,
                          name: quick-start-md-0-infra}
      minReadySeconds: 10
      deletion: {nodeVolumeDetachTimeoutSeconds: 60}
status:
  selector: cluster.x-k8s.io/cluster-name=quick-start,machine-template-hash=3520119893
  replicas: 3
  readyReplicas: 3
  availableReplicas: 3
  upToDateReplicas: 3
  observedGeneration: 1
  deprecated:
    v1beta1:
      conditions:
      - {type: Ready, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
      fullyLabeledReplicas: 3
      readyReplicas: 3
      availableReplicas: 3
      failureMessage: "machine quick-start-md-0-x7k2p-abcde: bootstrap failed"
""")

MACHINE_POOL_V1BETA1 = load("""
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachinePool
metadata: {name: quick-start-mp-0, namespace: default}
spec:
  clusterName: quick-start
  replicas: 2
  minReadySeconds: 5
  failureDomains: [fd1, fd2]
  providerIDList: ["docker:////quick-start-mp-0-a", "docker:////quick-start-mp-0-b"]
  template:
    metadata: {labels: {cluster.x-k8s.io/pool-name: quick-start-mp-0}}
    spec:
      clusterName: quick-start
      version: v1.33.0
      bootstrap:
        configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfig,
                    name: quick-start-mp-0-config, namespace: default}
        dataSecretName: quick-start-mp-0-config
      infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachinePool,
                          name: quick-start-mp-0, namespace: default}
      nodeDrainTimeout: 2m0s
status:
  nodeRefs:
  - {apiVersion: v1, kind: Node, name: quick-start-mp-0-a, uid: 5c1b6f1e-0000-4000-8000-000000000001}
  - {apiVersion: v1, kind: Node, name: quick-start-mp-0-b, uid: 5c1b6f1e-0000-4000-8000-000000000002}
  replicas: 2
  readyReplicas: 2
  availableReplicas: 2
  unavailableReplicas: 0
  phase: Running
  bootstrapReady: true
  infrastructureReady: true
  observedGeneration: 1
  failureReason: UpdateError
  failureMessage: scaling failed once
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
  v1beta2:
    conditions:
    - {type: Available, status: "True", reason: Available, message: "",
       lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 1}
    readyReplicas: 2
    availableReplicas: 2
    upToDateReplicas: 2
""")

MACHINE_POOL_V1BETA2 = load("""
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachinePool
metadata: {name: quick-start-mp-0, namespace: default}
spec:
  clusterName: quick-start
  replicas: 2
  failureDomains: [fd1, fd2]
  providerIDList: ["docker:////quick-start-mp-0-a", "docker:////quick-start-mp-0-b"]
  template:
    metadata: {labels: {cluster.x-k8s.io/pool-name: quick-start-mp-0}}
    spec:
      clusterName: quick-start
      version: v1.33.0
      bootstrap:
        configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: quick-start-mp-0-config}
        dataSecretName: quick-start-mp-0-config
      infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachinePool, name: quick-start-mp-0}
      minReadySeconds: 5
      deletion: {nodeDrainTimeoutSeconds: 120}
status:
  nodeRefs:
  - {apiVersion: v1, kind: Node, name: quick-start-mp-0-a, uid: 5c1b6f1e-0000-4000-8000-000000000001}
  - {apiVersion: v1, kind: Node, name: quick-start-mp-0-b, uid: 5c1b6f1e-0000-4000-8000-000000000002}
  replicas: 2
  readyReplicas: 2
  availableReplicas: 2
  upToDateReplicas: 2
  phase: Running
  initialization: {bootstrapDataSecretCreated: true, infrastructureProvisioned: true}
  observedGeneration: 1
  conditions:
  - {type: Available, status: "True", reason: Available, message: "",
     lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 1}
  deprecated:
    v1beta1:
      conditions:
      - {type: Ready, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
      readyReplicas: 2
      availableReplicas: 2
      unavailableReplicas: 0
      failureReason: UpdateError
      failureMessage: scaling failed once
""")

MACHINE_V1BETA1 = load("""
apiVersion: cluster.x-k8s.io/v1beta1
kind: Machine
metadata: {name: quick-start-md-0-x7k2p-abcde, namespace: default}
spec:
  clusterName: quick-start
  version: v1.33.0
  bootstrap:
    configRef: {apiVersion: bootstrap.cluster.x-k8s.io/v1beta2, kind: KubeadmConfig,
                name: quick-start-md-0-x7k2p-abcde, namespace: default}
    dataSecretName: quick-start-md-0-x7k2p-abcde
  infrastructureRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachine,
                      name: quick-start-md-0-x7k2p-abcde, namespace: default}
  providerID: docker:////quick-start-md-0-x7k2p-abcde
  failureDomain: fd1
  nodeDrainTimeout: 10s
  nodeVolumeDetachTimeout: 5m0s
  nodeDeletionTimeout: 10s
status:
  nodeRef: {apiVersion: v1, kind: Node, name: quick-start-md-0-x7k2p-abcde, uid: 2f3e4d5c-0000-4000-8000-000000000003}
  lastUpdated: "2025-01-01T00:05:00Z"
  addresses: [{type: InternalIP, address: 172.18.0.5}, {type: Hostname, address: quick-start-md-0-x7k2p-abcde}]
  phase: Running
  certificatesExpiryDate: "2026-01-01T00:00:00Z"
  bootstrapReady: true
  infrastructureReady: true
  observedGeneration: 2
  deletion: {nodeDrainStartTime: "2025-01-02T00:00:00Z"}
  failureMessage: the first attempt timed out
  conditions:
  - {type: Ready, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
  v1beta2:
    conditions:
    - {type: Ready, status: "True", reason: Ready, message: "",
       lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 2}
""")

MACHINE_V1BETA2 = load("""
apiVersion: cluster.x-k8s.io/v1beta2
kind: Machine
metadata: {name: quick-start-md-0-x7k2p-abcde, namespace: default}
spec:
  clusterName: quick-start
  version: v1.33.0
  bootstrap:
    configRef: {apiGroup: bootstrap.cluster.x-k8s.io, kind: KubeadmConfig, name: quick-start-md-0-x7k2p-abcde}
    dataSecretName: quick-start-md-0-x7k2p-abcde
  infrastructureRef: {apiGroup: infrastructure.cluster.x-k8s.io, kind: DockerMachine,
                      name: quick-start-md-0-x7k2p-abcde}
  providerID: docker:////quick-start-md-0-x7k2p-abcde
  failureDomain: fd1
  deletion: {nodeDrainTimeoutSeconds: 10, nodeVolumeDetachTimeoutSeconds: 300, nodeDeletionTimeoutSeconds: 10}
status:
  nodeRef: {name: quick-start-md-0-x7k2p-abcde}
  lastUpdated: "2025-01-01T00:05:00Z"
  addresses: [{type: InternalIP, address: 172.18.0.5}, {type: Hostname, address: quick-start-md-0-x7k2p-abcde}]
  phase: Running
  certificatesExpiryDate: "2026-01-01T00:00:00Z"
  initialization: {bootstrapDataSecretCreated: true, infrastructureProvisioned: true}
  observedGeneration: 2
  deletion: {nodeDrainStartTime: "2025-01-02T00:00:00Z"}
  conditions:
  - {type: Ready, status: "True", reason: Ready, message: "",
     lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 2}
  deprecated:
    v1beta1:
      conditions:
      - {type: Ready, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
      failureMessage: the first attempt timed out
""")

MACHINE_HEALTH_CHECK_V1BETA1 = load("""
apiVersion: cluster.x-k8s.io/v1beta1
kind: MachineHealthCheck
metadata: {name: quick-start-md-0, namespace: default}
spec:
  clusterName: quick-start
  selector:
    matchLabels: {cluster.x-k8s.io/deployment-name: quick-start-md-0}
  unhealthyConditions:
  - {type: Ready, status: Unknown, timeout: 5m0s}
  - {type: Ready, status: "False", timeout: 5m0s}
  unhealthyMachineConditions:
  - {type: NodeReady, status: "False", timeout: 10m0s}
  maxUnhealthy: 40%
  nodeStartupTimeout: 10m0s
  remediationTemplate: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate,
                        name: remediation, namespace: default}
status:
  expectedMachines: 3
  currentHealthy: 2
  remediationsAllowed: 1
  observedGeneration: 1
  targets: [quick-start-md-0-x7k2p-abcde, quick-start-md-0-x7k2p-fghij, quick-start-md-0-x7k2p-klmno]
  conditions:
  - {type: RemediationAllowed, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
  v1beta2:
    conditions:
    - {type: RemediationAllowed, status: "True", reason: RemediationAllowed, message: "",
       lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 1}
""")

MACHINE_HEALTH_CHECK_V1BETA2 = load("""
apiVersion: cluster.x-k8s.io/v1beta2
kind: MachineHealthCheck
metadata: {name: quick-start-md-0, namespace: default}
spec:
  clusterName: quick-start
  selector:
    matchLabels: {cluster.x-k8s.io/deployment-name: quick-start-md-0}
  checks:
    unhealthyNodeConditions:
    - {type: Ready, status: Unknown, timeoutSeconds: 300}
    - {type: Ready, status: "False", timeoutSeconds: 300}
    unhealthyMachineConditions:
    - {type: NodeReady, status: "False", timeoutSeconds: 600}
    nodeStartupTimeoutSeconds: 600
  remediation:
    triggerIf: {unhealthyLessThanOrEqualTo: 40%}
    templateRef: {apiVersion: infrastructure.cluster.x-k8s.io/v1beta2, kind: DockerMachineTemplate, name: remediation}
status:
  expectedMachines: 3
  currentHealthy: 2
  remediationsAllowed: 1
  observedGeneration: 1
  targets: [quick-start-md-0-x7k2p-abcde, quick-start-md-0-x7k2p-fghij, quick-start-md-0-x7k2p-klmno]
  conditions:
  - {type: RemediationAllowed, status: "True", reason: RemediationAllowed, message: "",
     lastTransitionTime: "2025-01-01T00:00:00Z", observedGeneration: 1}
  deprecated:
    v1beta1:
      conditions:
      - {type: RemediationAllowed, status: "True", lastTransitionTime: "2025-01-01T00:00:00Z"}
""")


# --- the table --------------------------------------------------------------------------------

#: (v1beta1 object, the v1beta2 object upstream makes of it, v1beta1 fields upstream drops on the way up,
#:  hub zero values the spoke cannot hold, kept by the conversion-data annotation)
CASES = [
    pytest.param(
        CLUSTER_CLASS_V1BETA1,
        CLUSTER_CLASS_V1BETA2,
        [],
        {
            "spec.patches[0].definitions[0].selector.matchResources.infrastructureCluster": False,
            "spec.variables[1].schema.openAPIV3Schema.properties.enabled.uniqueItems": False,
            "spec.variables[1].schema.openAPIV3Schema.properties.exemptions.items.uniqueItems": False,
            "spec.variables[1].schema.openAPIV3Schema.x-kubernetes-preserve-unknown-fields": False,
            "spec.variables[2].schema.openAPIV3Schema.exclusiveMaximum": False,
            "status.variables[0].definitionsConflict": False,
            "status.variables[0].definitions[0].schema.openAPIV3Schema.x-kubernetes-int-or-string": False,
        },
        id="ClusterClass",
    ),
    pytest.param(
        MACHINE_DEPLOYMENT_V1BETA1,
        MACHINE_DEPLOYMENT_V1BETA2,
        ["spec.revisionHistoryLimit", "spec.progressDeadlineSeconds", "spec.paused"],
        {"spec.paused": False},
        id="MachineDeployment",
    ),
    pytest.param(MACHINE_SET_V1BETA1, MACHINE_SET_V1BETA2, [], {}, id="MachineSet"),
    pytest.param(
        MACHINE_POOL_V1BETA1,
        MACHINE_POOL_V1BETA2,
        [],
        {"status.initialization": {"bootstrapDataSecretCreated": False, "infrastructureProvisioned": False}},
        id="MachinePool",
    ),
    pytest.param(
        MACHINE_V1BETA1,
        MACHINE_V1BETA2,
        ["status.nodeRef.uid"],
        {
            "spec.minReadySeconds": 0,
            "status.failureDomain": "fd1",
            "status.initialization.infrastructureProvisioned": False,
        },
        id="Machine",
    ),
    pytest.param(
        MACHINE_HEALTH_CHECK_V1BETA1,
        MACHINE_HEALTH_CHECK_V1BETA2,
        [],
        {"status.remediationsAllowed": 0},
        id="MachineHealthCheck",
    ),
]


@pytest.mark.parametrize(("v1beta1", "v1beta2", "dropped", "intent"), CASES)
def test_up_is_upstreams_hub(v1beta1: Any, v1beta2: Any, dropped: Any, intent: Any) -> None:
    assert up(v1beta1) == v1beta2


@pytest.mark.parametrize(("v1beta1", "v1beta2", "dropped", "intent"), CASES)
def test_down_is_the_original_but_what_upstream_drops(v1beta1: Any, v1beta2: Any, dropped: Any, intent: Any) -> None:
    assert without_conversion_data(down(v1beta2)) == without(v1beta1, *dropped)


@pytest.mark.parametrize(("v1beta1", "v1beta2", "dropped", "intent"), CASES)
def test_hub_round_trip_is_exact(v1beta1: Any, v1beta2: Any, dropped: Any, intent: Any) -> None:
    hub = with_values(v1beta2, intent)
    spoke = down(hub)
    unset = without(v1beta2, *(path for path in intent if has(v1beta2, path)))
    assert without_conversion_data(spoke) == without_conversion_data(down(unset)), "the spoke cannot hold them"
    assert up(spoke) == hub


@pytest.mark.parametrize(("v1beta1", "v1beta2", "dropped", "intent"), CASES)
def test_converted_objects_pass_their_versions_schema(v1beta1: Any, v1beta2: Any, dropped: Any, intent: Any) -> None:
    hub = with_values(v1beta2, intent)
    assert schema_errors(v1beta1) == []
    assert schema_errors(hub) == []
    assert schema_errors(up(v1beta1)) == []
    assert schema_errors(down(hub)) == []
    assert schema_errors(up(down(hub))) == []


# --- ClusterClass -----------------------------------------------------------------------------


def upstream_quick_start() -> dict[str, Any]:
    cluster_class = next(yaml.safe_load_all(UPSTREAM_QUICK_START.read_text()))
    cluster_class["metadata"]["namespace"] = "default"
    return cluster_class


def test_upstream_quick_start_round_trips_through_v1beta1() -> None:
    hub = upstream_quick_start()
    spoke = down(hub)
    assert spoke["spec"]["controlPlane"]["ref"] == {
        "apiVersion": "controlplane.cluster.x-k8s.io/v1beta2",
        "kind": "KubeadmControlPlaneTemplate",
        "name": "quick-start-control-plane",
        "namespace": "default",
    }
    assert spoke["spec"]["controlPlane"]["machineHealthCheck"]["unhealthyConditions"][0] == {
        "type": "Ready",
        "status": "Unknown",
        "timeout": "5m0s",
    }
    assert spoke["spec"]["workers"]["machinePools"][0]["template"]["infrastructure"]["ref"]["kind"] == (
        "DevMachinePoolTemplate"
    )
    assert schema_errors(spoke) == []
    assert up(spoke) == hub
    assert up(without_conversion_data(spoke)) == hub, "nothing in it needs the conversion data"


def test_a_go_clients_empty_structs_are_left_out_of_the_hub() -> None:
    """A Go client writes v1beta1's value structs even when empty; the hub's are omitzero (and minProperties: 1)."""
    spoke = copy.deepcopy(CLUSTER_CLASS_V1BETA1)
    spoke["spec"]["controlPlane"]["metadata"] = {}
    spoke["spec"]["controlPlane"]["namingStrategy"] = {}
    spoke["spec"]["infrastructureNamingStrategy"] = {}
    spoke["spec"]["workers"]["machineDeployments"][0]["template"]["metadata"] = {}
    spoke["spec"]["workers"]["machineDeployments"][0]["machineHealthCheck"] = {}
    spoke["spec"]["variables"][1]["metadata"] = {}
    spoke["status"] = {}

    hub = up(spoke)

    assert "metadata" not in hub["spec"]["controlPlane"]
    assert "naming" not in hub["spec"]["controlPlane"]
    assert "naming" not in hub["spec"]["infrastructure"]
    md = hub["spec"]["workers"]["machineDeployments"][0]
    assert "metadata" not in md
    assert md["healthCheck"] == {"remediation": {"maxInFlight": 2}}
    assert "deprecatedV1Beta1Metadata" not in hub["spec"]["variables"][1]
    assert "status" not in hub
    assert schema_errors(hub) == []


def test_schema_booleans_come_back_by_variable_and_property_name() -> None:
    """Upstream finds a variable's restored schema by the variable's name and a property's by its name, so a
    v1beta1 client reordering them does not move an explicit ``false`` to another field."""
    hub = with_values(
        CLUSTER_CLASS_V1BETA2,
        {
            "spec.variables[0].schema.openAPIV3Schema.uniqueItems": False,
            "spec.variables[2].schema.openAPIV3Schema.allOf": [{"minimum": 1}, {"maximum": 9}],
            "spec.variables[2].schema.openAPIV3Schema.allOf[1].exclusiveMaximum": False,
            "spec.variables[1].schema.openAPIV3Schema.properties.extra.uniqueItems": False,
        },
    )
    spoke = down(hub)
    assert "uniqueItems" not in spoke["spec"]["variables"][0]["schema"]["openAPIV3Schema"]
    assert "exclusiveMaximum" not in spoke["spec"]["variables"][2]["schema"]["openAPIV3Schema"]["allOf"][1]
    spoke["spec"]["variables"].reverse()

    restored = up(spoke)

    by_name = {variable["name"]: variable["schema"]["openAPIV3Schema"] for variable in restored["spec"]["variables"]}
    assert by_name["imageRepository"]["uniqueItems"] is False
    assert by_name["workerReplicas"]["allOf"] == [{"minimum": 1}, {"maximum": 9, "exclusiveMaximum": False}]
    assert by_name["podSecurityStandard"]["properties"]["extra"]["uniqueItems"] is False
    assert "uniqueItems" not in by_name["podSecurityStandard"]["properties"]["enabled"]


def test_match_resources_false_comes_back_by_patch_name() -> None:
    hub = copy.deepcopy(CLUSTER_CLASS_V1BETA2)
    hub["spec"]["patches"].append(
        {
            "name": "infrastructure",
            "definitions": [
                {
                    "selector": {
                        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
                        "kind": "DockerClusterTemplate",
                        "matchResources": {"infrastructureCluster": True, "controlPlane": False},
                    },
                    "jsonPatches": [{"op": "add", "path": "/spec/template/spec/loadBalancer", "value": {}}],
                }
            ],
        }
    )
    spoke = down(hub)
    assert spoke["spec"]["patches"][2]["definitions"][0]["selector"]["matchResources"] == {
        "infrastructureCluster": True
    }
    spoke["spec"]["patches"].reverse()

    restored = up(spoke)

    patch = next(p for p in restored["spec"]["patches"] if p["name"] == "infrastructure")
    assert patch["definitions"][0]["selector"]["matchResources"] == {
        "infrastructureCluster": True,
        "controlPlane": False,
    }
    image = next(p for p in restored["spec"]["patches"] if p["name"] == "imageRepository")
    assert image["definitions"][0]["selector"]["matchResources"] == {"controlPlane": True}


def test_v1beta1_false_booleans_are_unset_in_the_hub_without_conversion_data() -> None:
    spoke = copy.deepcopy(CLUSTER_CLASS_V1BETA1)
    spoke["spec"]["patches"][0]["definitions"][0]["selector"]["matchResources"]["infrastructureCluster"] = False
    spoke["spec"]["variables"][2]["schema"]["openAPIV3Schema"]["uniqueItems"] = False
    spoke["status"]["variables"][0]["definitionsConflict"] = False

    assert up(spoke) == CLUSTER_CLASS_V1BETA2


# --- the machine kinds ------------------------------------------------------------------------


def test_machine_set_keeps_no_conversion_data_and_zero_min_ready_seconds_is_unset() -> None:
    spoke = down(MACHINE_SET_V1BETA2)
    assert CONVERSION_DATA_ANNOTATION not in spoke["metadata"].get("annotations", {})

    zero = copy.deepcopy(MACHINE_SET_V1BETA1)
    zero["spec"]["minReadySeconds"] = 0
    assert "minReadySeconds" not in up(zero)["spec"]["template"]["spec"]


def test_an_updating_machine_is_running_in_v1beta1_and_updating_again_in_the_hub() -> None:
    hub = with_values(MACHINE_V1BETA2, {"status.phase": "Updating"})
    spoke = down(hub)
    assert spoke["status"]["phase"] == "Running"
    assert schema_errors(spoke) == []
    assert up(spoke)["status"]["phase"] == "Updating"
    assert up(without_conversion_data(spoke))["status"]["phase"] == "Running"


def test_the_hub_phase_wins_over_a_v1beta1_clients_phase() -> None:
    """Upstream: only the Machine controller writes the phase, so with conversion data the hub's is kept."""
    spoke = down(MACHINE_V1BETA2)
    spoke["status"]["phase"] = "Failed"
    assert up(spoke)["status"]["phase"] == "Running"


def test_machine_node_ref_keeps_only_the_name() -> None:
    hub = up(MACHINE_V1BETA1)
    assert hub["status"]["nodeRef"] == {"name": "quick-start-md-0-x7k2p-abcde"}
    assert down(hub)["status"]["nodeRef"] == {
        "apiVersion": "v1",
        "kind": "Node",
        "name": "quick-start-md-0-x7k2p-abcde",
    }


def test_conversion_data_restores_a_machines_hub_only_fields() -> None:
    hub = with_values(MACHINE_V1BETA2, {"spec.minReadySeconds": 30, "status.failureDomain": "fd2"})
    spoke = down(hub)
    assert "minReadySeconds" not in spoke["spec"]
    assert "failureDomain" not in spoke["status"]
    data = json.loads(spoke["metadata"]["annotations"][CONVERSION_DATA_ANNOTATION])
    assert data["spec"]["minReadySeconds"] == 30
    assert up(spoke) == hub


def test_a_reference_to_a_group_the_contract_does_not_know_cannot_go_down() -> None:
    hub = copy.deepcopy(MACHINE_DEPLOYMENT_V1BETA2)
    hub["spec"]["template"]["spec"]["infrastructureRef"]["apiGroup"] = "infrastructure.example.com"
    with pytest.raises(ConversionError) as raised:
        down(hub)
    assert raised.value.field == "spec.template.spec.infrastructureRef"
    assert "infrastructure.example.com" in str(raised.value)


# --- field paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kind", "v1beta1_path", "v1beta2_path"),
    [
        (
            "ClusterClass",
            "spec.workers.machinePools[0].template.bootstrap.ref",
            "spec.workers.machinePools[0].bootstrap.templateRef",
        ),
        (
            "ClusterClass",
            "spec.workers.machineDeployments[1].template.infrastructure.ref.name",
            "spec.workers.machineDeployments[1].infrastructure.templateRef.name",
        ),
        (
            "ClusterClass",
            "spec.workers.machineDeployments[0].template.metadata.labels",
            "spec.workers.machineDeployments[0].metadata.labels",
        ),
        (
            "ClusterClass",
            "spec.workers.machineDeployments[0].strategy.rollingUpdate.deletePolicy",
            "spec.workers.machineDeployments[0].deletion.order",
        ),
        (
            "ClusterClass",
            "spec.workers.machineDeployments[2].strategy.remediation.maxInFlight",
            "spec.workers.machineDeployments[2].healthCheck.remediation.maxInFlight",
        ),
        (
            "ClusterClass",
            "spec.workers.machineDeployments[0].namingStrategy.template",
            "spec.workers.machineDeployments[0].naming.template",
        ),
        (
            "ClusterClass",
            "spec.patches[1].external.generateExtension",
            "spec.patches[1].external.generatePatchesExtension",
        ),
        (
            "ClusterClass",
            "spec.patches[0].external.validateExtension",
            "spec.patches[0].external.validateTopologyExtension",
        ),
        ("ClusterClass", "spec.variables[2].metadata", "spec.variables[2].deprecatedV1Beta1Metadata"),
        ("ClusterClass", "spec.variables[2].metadata.labels", "spec.variables[2].deprecatedV1Beta1Metadata.labels"),
        (
            "ClusterClass",
            "status.variables[0].definitions[1].metadata",
            "status.variables[0].definitions[1].deprecatedV1Beta1Metadata",
        ),
        ("ClusterClass", "spec.controlPlane.ref", "spec.controlPlane.templateRef"),
        (
            "ClusterClass",
            "spec.controlPlane.machineInfrastructure.ref.kind",
            "spec.controlPlane.machineInfrastructure.templateRef.kind",
        ),
        (
            "ClusterClass",
            "spec.controlPlane.machineHealthCheck.unhealthyConditions[0].timeout",
            "spec.controlPlane.healthCheck.checks.unhealthyNodeConditions[0].timeoutSeconds",
        ),
        ("ClusterClass", "spec.infrastructureNamingStrategy.template", "spec.infrastructure.naming.template"),
        (
            "ClusterClass",
            "spec.variables[0].schema.openAPIV3Schema.type",
            "spec.variables[0].schema.openAPIV3Schema.type",
        ),
        ("ClusterClass", "status.conditions[0].severity", "status.deprecated.v1beta1.conditions[0].severity"),
        ("MachineDeployment", "spec.minReadySeconds", "spec.template.spec.minReadySeconds"),
        ("MachineDeployment", "spec.rolloutAfter", "spec.rollout.after"),
        ("MachineDeployment", "spec.strategy.rollingUpdate.maxSurge", "spec.rollout.strategy.rollingUpdate.maxSurge"),
        ("MachineDeployment", "spec.strategy.remediation.maxInFlight", "spec.remediation.maxInFlight"),
        ("MachineDeployment", "spec.machineNamingStrategy.template", "spec.machineNaming.template"),
        (
            "MachineDeployment",
            "spec.template.spec.nodeDrainTimeout",
            "spec.template.spec.deletion.nodeDrainTimeoutSeconds",
        ),
        ("MachineDeployment", "status.v1beta2.readyReplicas", "status.readyReplicas"),
        ("MachineDeployment", "status.updatedReplicas", "status.deprecated.v1beta1.updatedReplicas"),
        ("MachineSet", "spec.deletePolicy", "spec.deletion.order"),
        ("MachineSet", "status.fullyLabeledReplicas", "status.deprecated.v1beta1.fullyLabeledReplicas"),
        ("MachinePool", "spec.minReadySeconds", "spec.template.spec.minReadySeconds"),
        ("Machine", "spec.nodeDeletionTimeout", "spec.deletion.nodeDeletionTimeoutSeconds"),
        ("Machine", "status.bootstrapReady", "status.initialization.bootstrapDataSecretCreated"),
        ("Machine", "status.infrastructureReady", "status.initialization.infrastructureProvisioned"),
        ("Machine", "spec.bootstrap.configRef.name", "spec.bootstrap.configRef.name"),
        (
            "MachineHealthCheck",
            "spec.unhealthyConditions[1].timeout",
            "spec.checks.unhealthyNodeConditions[1].timeoutSeconds",
        ),
        ("MachineHealthCheck", "spec.remediationTemplate.name", "spec.remediation.templateRef.name"),
        ("MachineHealthCheck", "spec.maxUnhealthy", "spec.remediation.triggerIf.unhealthyLessThanOrEqualTo"),
    ],
)
def test_translate_path(kind: str, v1beta1_path: str, v1beta2_path: str) -> None:
    assert translate_path("cluster.x-k8s.io", kind, "v1beta1", "v1beta2", v1beta1_path) == v1beta2_path
    assert translate_path("cluster.x-k8s.io", kind, "v1beta2", "v1beta1", v1beta2_path) == v1beta1_path


def test_a_reference_without_a_kind_still_converts_both_ways() -> None:
    """A kind-less ref has no contract version to look up; it converts as given so admission can name the field."""
    cluster = {
        "apiVersion": V1BETA1,
        "kind": "Cluster",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": {"controlPlaneRef": {"name": "cp"}},
    }
    hub = convert(cluster, V1BETA2, api_versions=bundled_contracts())
    assert hub["spec"]["controlPlaneRef"] == {"name": "cp"}
    back = convert(hub, V1BETA1, api_versions=bundled_contracts())
    assert back["spec"]["controlPlaneRef"] == {"namespace": "default", "name": "cp"}


# --- clusterclass's extension: MachinePool health checks -----------------------------------------------------

POOL_CHECK_V1BETA1 = {
    "unhealthyConditions": [{"type": "Ready", "status": "Unknown", "timeout": "5m0s"}],
    "maxUnhealthy": "40%",
    "nodeStartupTimeout": "10m0s",
}
POOL_CHECK_V1BETA2 = {
    "checks": {
        "unhealthyNodeConditions": [{"type": "Ready", "status": "Unknown", "timeoutSeconds": 300}],
        "nodeStartupTimeoutSeconds": 600,
    },
    "remediation": {"triggerIf": {"unhealthyLessThanOrEqualTo": "40%"}},
}


def test_a_machine_pool_class_health_check_converts_as_a_machine_deployment_class_does() -> None:
    """MachinePool classes and topologies have a health check only as clusterclass extends the API: it converts
    between ``machineHealthCheck`` and ``healthCheck`` with a MachineDeployment's rules, and both versions' schemas
    (the extended CRDs) keep it."""
    spoke = copy.deepcopy(CLUSTER_CLASS_V1BETA1)
    spoke["spec"]["workers"]["machinePools"][0]["machineHealthCheck"] = copy.deepcopy(POOL_CHECK_V1BETA1)
    hub = up(spoke)
    assert hub["spec"]["workers"]["machinePools"][0]["healthCheck"] == POOL_CHECK_V1BETA2
    assert schema_errors(hub) == []
    assert schema_errors(spoke) == []
    back = down(without_conversion_data(hub))
    assert back["spec"]["workers"]["machinePools"][0]["machineHealthCheck"] == POOL_CHECK_V1BETA1


def test_a_machine_pool_topology_health_check_converts_with_its_enable() -> None:
    hub = {
        "apiVersion": "cluster.x-k8s.io/v1beta2",
        "kind": "Cluster",
        "metadata": {"name": "c1", "namespace": "default"},
        "spec": {
            "topology": {
                "classRef": {"name": "class1"},
                "version": "v1.33.0",
                "workers": {
                    "machinePools": [
                        {"name": "mp-0", "class": "pool", "healthCheck": {"enabled": False, **POOL_CHECK_V1BETA2}}
                    ]
                },
            }
        },
    }
    spoke = down(hub)
    assert spoke["spec"]["topology"]["workers"]["machinePools"][0]["machineHealthCheck"] == {
        "enable": False,
        **POOL_CHECK_V1BETA1,
    }
    assert schema_errors(spoke) == []
    assert schema_errors(hub) == []
    assert up(without_conversion_data(spoke)) == hub
