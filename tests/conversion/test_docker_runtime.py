"""The Docker provider's kinds (v1beta1 ↔ v1beta2) and ExtensionConfig (v1alpha1 ↔ v1beta2), as upstream v1.14.

Each case is a realistic spoke object and the hub object upstream's conversion makes of it: converted up it must
equal the hub, converted back down it must equal the original (once the conversion-data annotation is removed)
except for the zeros upstream does not keep, which each case names. Hub objects — those of the cases and ones
with fields only the hub has — must come back exactly from a trip through the spoke. Every converted object
must pass the target version's CRD schema.

The v1beta2 templates are upstream's ``test/infrastructure/docker/templates/clusterclass-quick-start.yaml``
ones written as Docker kinds (upstream's quick start now uses the Dev* kinds, whose ``backend.docker`` is a
DockerClusterSpec/DockerMachineSpec); the v1beta1 ones are those of ``clusterclass/examples/quick-start-v1beta1.yaml``.
"""

from __future__ import annotations

import functools
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from clusterclass.api.conversion import (
    CONVERSION_DATA_ANNOTATION,
    ConversionError,
    conversion_for,
    convert,
    kinds,
    translate_path,
)
from clusterclass.api.conversion.engine import MISSING, get_at, pop_at, take_conversion_data
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, split_api_version
from clusterclass.apiserver.crd.definitions import CrdInfo, parse_crd

INFRA = "infrastructure.cluster.x-k8s.io"
RUNTIME = "runtime.cluster.x-k8s.io"
SPOKE_VERSION = {INFRA: "v1beta1", RUNTIME: "v1alpha1"}
HUB_VERSION = "v1beta2"
CRDS = Path(__file__).resolve().parents[2] / "config" / "crd" / "bases"

#: the kinds whose v1beta1 → hub conversion keeps the hub in the conversion-data annotation upstream
KINDS_KEEPING_DATA = {"DockerCluster", "DockerMachine", "DockerMachineTemplate", "DockerMachinePool"}


class GroupApiVersions:
    """Reference versions as a management cluster with the v1beta2 CRDs installed would answer them."""

    GROUPS = ("cluster.x-k8s.io", "bootstrap.cluster.x-k8s.io", "controlplane.cluster.x-k8s.io", INFRA, RUNTIME)

    def api_version(self, group: str, kind: str) -> str:
        if group not in self.GROUPS:
            raise ConversionError(f"no CRD for {kind}.{group}")
        return f"{group}/v1beta2"


API_VERSIONS = GroupApiVersions()


def load(text: str) -> Obj:
    obj = yaml.safe_load(textwrap.dedent(text))
    assert isinstance(obj, dict)
    return obj


@functools.cache
def crd_of(group: str, kind: str) -> CrdInfo:
    text = (CRDS / f"{group}_{kind.lower()}s.yaml").read_text(encoding="utf-8")
    return parse_crd(yaml.safe_load(text))


def schema_errors(obj: Obj) -> list[str]:
    """What creating ``obj`` in its own version would report (``[]`` for a valid object)."""
    group, version = split_api_version(obj["apiVersion"])
    return [str(error) for error in crd_of(group, obj["kind"]).create_errors(obj, version)]


def group_of(obj: Obj) -> str:
    return split_api_version(obj["apiVersion"])[0]


def to_hub(obj: Obj) -> Obj:
    return convert(obj, f"{group_of(obj)}/{HUB_VERSION}", api_versions=API_VERSIONS)


def to_spoke(obj: Obj) -> Obj:
    group = group_of(obj)
    return convert(obj, f"{group}/{SPOKE_VERSION[group]}", api_versions=API_VERSIONS)


def without_conversion_data(obj: Obj) -> Obj:
    out = json_copy(obj)
    take_conversion_data(out)
    return out


def without(obj: Obj, paths: tuple[str, ...]) -> Obj:
    """``obj`` without the fields at the dotted ``paths`` (and the maps that leaves empty)."""
    out = json_copy(obj)
    for path in paths:
        pop_at(out, tuple(path.split(".")))
    return out


# --- spoke objects and the hub objects upstream makes of them -----------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    spoke: Obj
    hub: Obj
    #: fields of ``spoke`` that do not come back from the hub: zeros the hub leaves out (as upstream does)
    lost_on_the_way_back: tuple[str, ...] = ()


CONDITION_TIME = "2025-05-06T10:00:00Z"

CASES = [
    Case(
        "DockerClusterTemplate of the quick start",
        spoke=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerClusterTemplate
            metadata: {name: quick-start-pools-cluster, namespace: default}
            spec:
              template:
                spec: {}
        """),
        hub=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerClusterTemplate
            metadata: {name: quick-start-pools-cluster, namespace: default}
            spec:
              template:
                spec: {}
        """),
    ),
    Case(
        "DockerClusterTemplate with failure domains: a map becomes a list sorted by name",
        spoke=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerClusterTemplate
            metadata: {name: quick-start-cluster, namespace: default}
            spec:
              template:
                spec:
                  failureDomains:
                    fd6: {}
                    fd1: {controlPlane: true}
                    fd2: {controlPlane: true}
                    fd3: {controlPlane: true}
                    fd7: {}
                    fd4: {controlPlane: true}
                    fd5: {controlPlane: true}
                    fd8: {}
        """),
        hub=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerClusterTemplate
            metadata: {name: quick-start-cluster, namespace: default}
            spec:
              template:
                spec:
                  failureDomains:
                    - {name: fd1, controlPlane: true}
                    - {name: fd2, controlPlane: true}
                    - {name: fd3, controlPlane: true}
                    - {name: fd4, controlPlane: true}
                    - {name: fd5, controlPlane: true}
                    - {name: fd6, controlPlane: false}
                    - {name: fd7, controlPlane: false}
                    - {name: fd8, controlPlane: false}
        """),
    ),
    Case(
        "DockerMachineTemplate of the quick start's control plane",
        spoke=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachineTemplate
            metadata: {name: quick-start-pools-control-plane, namespace: default}
            spec:
              template:
                spec:
                  extraMounts:
                  - {containerPath: /var/run/docker.sock, hostPath: /var/run/docker.sock}
        """),
        hub=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerMachineTemplate
            metadata: {name: quick-start-pools-control-plane, namespace: default}
            spec:
              template:
                spec:
                  extraMounts:
                  - {containerPath: /var/run/docker.sock, hostPath: /var/run/docker.sock}
        """),
    ),
    Case(
        "DockerMachineTemplate of the quick start's workers",
        spoke=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachineTemplate
            metadata: {name: quick-start-pools-worker, namespace: default}
            spec:
              template:
                spec: {}
        """),
        hub=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerMachineTemplate
            metadata: {name: quick-start-pools-worker, namespace: default}
            spec:
              template:
                spec: {}
        """),
    ),
    Case(
        "DockerMachinePoolTemplate of the quick start: the same in both versions",
        spoke=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachinePoolTemplate
            metadata: {name: quick-start-pools-large-pool, namespace: default}
            spec:
              template:
                metadata:
                  labels: {node.cluster.x-k8s.io/pool-class: large-pool}
                spec:
                  template:
                    preLoadImages: [registry.k8s.io/pause:3.9]
        """),
        hub=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerMachinePoolTemplate
            metadata: {name: quick-start-pools-large-pool, namespace: default}
            spec:
              template:
                metadata:
                  labels: {node.cluster.x-k8s.io/pool-class: large-pool}
                spec:
                  template:
                    preLoadImages: [registry.k8s.io/pause:3.9]
        """),
    ),
    Case(
        "DockerCluster provisioned: conditions, ready and failure domains",
        spoke=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerCluster
            metadata:
              name: demo-7xk2p
              namespace: default
              labels: {{cluster.x-k8s.io/cluster-name: demo, topology.cluster.x-k8s.io/owned: ""}}
            spec:
              controlPlaneEndpoint: {{host: 172.18.0.3, port: 6443}}
              loadBalancer: {{imageRepository: kindest, imageTag: v20230510-486859a6}}
              failureDomains:
                fd1: {{controlPlane: true}}
                fd2: {{controlPlane: true, attributes: {{rack: r2}}}}
                fd3: {{}}
            status:
              ready: true
              failureDomains:
                fd1: {{controlPlane: true}}
                fd2: {{controlPlane: true, attributes: {{rack: r2}}}}
                fd3: {{}}
              conditions:
              - {{type: Ready, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
              - {{type: LoadBalancerAvailable, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
              v1beta2:
                conditions:
                - type: Ready
                  status: "True"
                  reason: Ready
                  message: ""
                  observedGeneration: 1
                  lastTransitionTime: "{CONDITION_TIME}"
                - type: LoadBalancerAvailable
                  status: "True"
                  reason: Available
                  message: ""
                  observedGeneration: 1
                  lastTransitionTime: "{CONDITION_TIME}"
        """),
        hub=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerCluster
            metadata:
              name: demo-7xk2p
              namespace: default
              labels: {{cluster.x-k8s.io/cluster-name: demo, topology.cluster.x-k8s.io/owned: ""}}
            spec:
              controlPlaneEndpoint: {{host: 172.18.0.3, port: 6443}}
              loadBalancer: {{imageRepository: kindest, imageTag: v20230510-486859a6}}
              failureDomains:
              - {{name: fd1, controlPlane: true}}
              - {{name: fd2, controlPlane: true, attributes: {{rack: r2}}}}
              - {{name: fd3, controlPlane: false}}
            status:
              initialization: {{provisioned: true}}
              failureDomains:
              - {{name: fd1, controlPlane: true}}
              - {{name: fd2, controlPlane: true, attributes: {{rack: r2}}}}
              - {{name: fd3, controlPlane: false}}
              conditions:
              - type: Ready
                status: "True"
                reason: Ready
                message: ""
                observedGeneration: 1
                lastTransitionTime: "{CONDITION_TIME}"
              - type: LoadBalancerAvailable
                status: "True"
                reason: Available
                message: ""
                observedGeneration: 1
                lastTransitionTime: "{CONDITION_TIME}"
              deprecated:
                v1beta1:
                  conditions:
                  - {{type: Ready, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
                  - {{type: LoadBalancerAvailable, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
        """),
    ),
    Case(
        "DockerCluster as a v1beta1 client writes it before provisioning: Go's zeros are not kept",
        spoke=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerCluster
            metadata: {name: demo-7xk2p, namespace: default}
            spec:
              controlPlaneEndpoint: {host: "", port: 0}
              loadBalancer: {}
            status:
              ready: false
        """),
        hub=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerCluster
            metadata: {name: demo-7xk2p, namespace: default}
            spec:
              loadBalancer: {}
            status: {}  # Go writes the (omitempty, not omitzero) value struct; initialization is omitzero
        """),
        lost_on_the_way_back=("spec.controlPlaneEndpoint", "status.ready"),
    ),
    Case(
        "DockerMachine provisioned",
        spoke=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachine
            metadata:
              name: demo-md-0-x7k2p-9dxbq
              namespace: default
              labels: {{cluster.x-k8s.io/cluster-name: demo}}
            spec:
              providerID: docker:////demo-md-0-x7k2p-9dxbq
              customImage: kindest/node:v1.28.0
              bootstrapTimeout: 3m0s
              extraMounts:
              - {{containerPath: /var/run/docker.sock, hostPath: /var/run/docker.sock}}
            status:
              ready: true
              loadBalancerConfigured: false
              addresses:
              - {{type: Hostname, address: demo-md-0-x7k2p-9dxbq}}
              - {{type: InternalIP, address: 172.18.0.5}}
              conditions:
              - {{type: Ready, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
              - {{type: BootstrapExecSucceeded, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
              - {{type: ContainerProvisioned, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
              v1beta2:
                conditions:
                - type: Ready
                  status: "True"
                  reason: Ready
                  message: ""
                  observedGeneration: 2
                  lastTransitionTime: "{CONDITION_TIME}"
                - type: BootstrapExecSucceeded
                  status: "True"
                  reason: Succeeded
                  message: ""
                  observedGeneration: 2
                  lastTransitionTime: "{CONDITION_TIME}"
        """),
        hub=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerMachine
            metadata:
              name: demo-md-0-x7k2p-9dxbq
              namespace: default
              labels: {{cluster.x-k8s.io/cluster-name: demo}}
            spec:
              providerID: docker:////demo-md-0-x7k2p-9dxbq
              customImage: kindest/node:v1.28.0
              bootstrapTimeout: 3m0s
              extraMounts:
              - {{containerPath: /var/run/docker.sock, hostPath: /var/run/docker.sock}}
            status:
              initialization: {{provisioned: true}}
              loadBalancerConfigured: false
              addresses:
              - {{type: Hostname, address: demo-md-0-x7k2p-9dxbq}}
              - {{type: InternalIP, address: 172.18.0.5}}
              conditions:
              - type: Ready
                status: "True"
                reason: Ready
                message: ""
                observedGeneration: 2
                lastTransitionTime: "{CONDITION_TIME}"
              - type: BootstrapExecSucceeded
                status: "True"
                reason: Succeeded
                message: ""
                observedGeneration: 2
                lastTransitionTime: "{CONDITION_TIME}"
              deprecated:
                v1beta1:
                  conditions:
                  - {{type: Ready, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
                  - {{type: BootstrapExecSucceeded, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
                  - {{type: ContainerProvisioned, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
        """),
    ),
    Case(
        "DockerMachine still provisioning: an empty providerID and ready false are unset",
        spoke=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachine
            metadata: {{name: demo-md-0-x7k2p-9dxbq, namespace: default}}
            spec:
              providerID: ""
              customImage: kindest/node:v1.28.0
            status:
              ready: false
              loadBalancerConfigured: false
              conditions:
              - type: ContainerProvisioned
                status: "False"
                severity: Info
                reason: WaitingForBootstrapData
                lastTransitionTime: "{CONDITION_TIME}"
        """),
        hub=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerMachine
            metadata: {{name: demo-md-0-x7k2p-9dxbq, namespace: default}}
            spec:
              customImage: kindest/node:v1.28.0
            status:
              loadBalancerConfigured: false
              deprecated:
                v1beta1:
                  conditions:
                  - type: ContainerProvisioned
                    status: "False"
                    severity: Info
                    reason: WaitingForBootstrapData
                    lastTransitionTime: "{CONDITION_TIME}"
        """),
        lost_on_the_way_back=("spec.providerID", "status.ready"),
    ),
    Case(
        "DockerMachinePool with its instances: v1beta1 conditions are the deprecated ones",
        spoke=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachinePool
            metadata:
              name: demo-mp-0-8cvkd
              namespace: default
              labels: {{cluster.x-k8s.io/cluster-name: demo}}
            spec:
              template:
                customImage: kindest/node:v1.28.0
                preLoadImages: [registry.k8s.io/pause:3.9]
              providerIDList:
              - docker:////demo-mp-0-8cvkd-0
              - docker:////demo-mp-0-8cvkd-1
            status:
              ready: true
              replicas: 2
              observedGeneration: 3
              infrastructureMachineKind: DockerMachine
              instances:
              - instanceName: demo-mp-0-8cvkd-0
                providerID: docker:////demo-mp-0-8cvkd-0
                version: v1.28.0
                ready: true
                bootstrapped: true
                addresses: [{{type: InternalIP, address: 172.18.0.7}}]
              - instanceName: demo-mp-0-8cvkd-1
                providerID: docker:////demo-mp-0-8cvkd-1
                version: v1.28.0
                ready: false
                addresses: [{{type: InternalIP, address: 172.18.0.8}}]
              conditions:
              - {{type: Ready, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
              - {{type: ReplicasReady, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
        """),
        hub=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerMachinePool
            metadata:
              name: demo-mp-0-8cvkd
              namespace: default
              labels: {{cluster.x-k8s.io/cluster-name: demo}}
            spec:
              template:
                customImage: kindest/node:v1.28.0
                preLoadImages: [registry.k8s.io/pause:3.9]
              providerIDList:
              - docker:////demo-mp-0-8cvkd-0
              - docker:////demo-mp-0-8cvkd-1
            status:
              ready: true
              replicas: 2
              observedGeneration: 3
              infrastructureMachineKind: DockerMachine
              instances:
              - instanceName: demo-mp-0-8cvkd-0
                providerID: docker:////demo-mp-0-8cvkd-0
                version: v1.28.0
                ready: true
                bootstrapped: true
                addresses: [{{type: InternalIP, address: 172.18.0.7}}]
              - instanceName: demo-mp-0-8cvkd-1
                providerID: docker:////demo-mp-0-8cvkd-1
                version: v1.28.0
                ready: false
                addresses: [{{type: InternalIP, address: 172.18.0.8}}]
              deprecated:
                v1beta1:
                  conditions:
                  - {{type: Ready, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
                  - {{type: ReplicasReady, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
        """),
    ),
    Case(
        "ExtensionConfig by URL, as `clusterclass up` registers the example extension, discovered",
        spoke=load(f"""
            apiVersion: runtime.cluster.x-k8s.io/v1alpha1
            kind: ExtensionConfig
            metadata: {{name: example-extension}}
            spec:
              clientConfig:
                url: https://127.0.0.1:38441
                caBundle: ZXhhbXBsZS1jYQ==
              namespaceSelector: {{}}
              settings: {{defaultImageRepository: kindest}}
            status:
              handlers:
              - name: generate-patches.example-extension
                requestHook: {{apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: GeneratePatches}}
                timeoutSeconds: 10
                failurePolicy: Fail
              - name: discover-variables.example-extension
                requestHook: {{apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: DiscoverVariables}}
                timeoutSeconds: 10
                failurePolicy: Fail
              - name: before-cluster-upgrade.example-extension
                requestHook: {{apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: BeforeClusterUpgrade}}
                timeoutSeconds: 30
                failurePolicy: Ignore
              conditions:
              - {{type: Discovered, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
              v1beta2:
                conditions:
                - type: Discovered
                  status: "True"
                  reason: Discovered
                  message: ""
                  observedGeneration: 1
                  lastTransitionTime: "{CONDITION_TIME}"
        """),
        hub=load(f"""
            apiVersion: runtime.cluster.x-k8s.io/v1beta2
            kind: ExtensionConfig
            metadata: {{name: example-extension}}
            spec:
              clientConfig:
                url: https://127.0.0.1:38441
                caBundle: ZXhhbXBsZS1jYQ==
              namespaceSelector: {{}}
              settings: {{defaultImageRepository: kindest}}
            status:
              handlers:
              - name: generate-patches.example-extension
                requestHook: {{apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: GeneratePatches}}
                timeoutSeconds: 10
                failurePolicy: Fail
              - name: discover-variables.example-extension
                requestHook: {{apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: DiscoverVariables}}
                timeoutSeconds: 10
                failurePolicy: Fail
              - name: before-cluster-upgrade.example-extension
                requestHook: {{apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: BeforeClusterUpgrade}}
                timeoutSeconds: 30
                failurePolicy: Ignore
              conditions:
              - type: Discovered
                status: "True"
                reason: Discovered
                message: ""
                observedGeneration: 1
                lastTransitionTime: "{CONDITION_TIME}"
              deprecated:
                v1beta1:
                  conditions:
                  - {{type: Discovered, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
        """),
    ),
    Case(
        "ExtensionConfig by Service with a namespace selector: a zero timeout is unset",
        spoke=load("""
            apiVersion: runtime.cluster.x-k8s.io/v1alpha1
            kind: ExtensionConfig
            metadata: {name: quick-start-extension}
            spec:
              clientConfig:
                service:
                  namespace: test-extension-system
                  name: test-extension-webhook-service
                  path: /hooks
                  port: 443
                caBundle: ZXhhbXBsZS1jYQ==
              namespaceSelector:
                matchExpressions:
                - {key: kubernetes.io/metadata.name, operator: In, values: [default, team-a]}
            status:
              handlers:
              - name: generate-patches.quick-start-extension
                requestHook: {apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: GeneratePatches}
                timeoutSeconds: 0
              - name: after-control-plane-initialized.quick-start-extension
                requestHook: {apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: AfterControlPlaneInitialized}
                timeoutSeconds: 10
                failurePolicy: Ignore
        """),
        hub=load("""
            apiVersion: runtime.cluster.x-k8s.io/v1beta2
            kind: ExtensionConfig
            metadata: {name: quick-start-extension}
            spec:
              clientConfig:
                service:
                  namespace: test-extension-system
                  name: test-extension-webhook-service
                  path: /hooks
                  port: 443
                caBundle: ZXhhbXBsZS1jYQ==
              namespaceSelector:
                matchExpressions:
                - {key: kubernetes.io/metadata.name, operator: In, values: [default, team-a]}
            status:
              handlers:
              - name: generate-patches.quick-start-extension
                requestHook: {apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: GeneratePatches}
              - name: after-control-plane-initialized.quick-start-extension
                requestHook: {apiVersion: hooks.runtime.cluster.x-k8s.io/v1alpha1, hook: AfterControlPlaneInitialized}
                timeoutSeconds: 10
                failurePolicy: Ignore
        """),
        lost_on_the_way_back=("status.handlers.0.timeoutSeconds",),
    ),
]


def _lost_path(path: str) -> tuple[str | int, ...]:
    return tuple(int(step) if step.isdigit() else step for step in path.split("."))


def spoke_after_round_trip(case: Case) -> Obj:
    out = json_copy(case.spoke)
    for path in case.lost_on_the_way_back:
        pop_at(out, _lost_path(path))
    return out


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_spoke_converts_to_the_hub_upstream_makes(case: Case) -> None:
    assert schema_errors(case.spoke) == []
    hub = to_hub(case.spoke)
    assert hub == case.hub
    assert schema_errors(hub) == []


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_hub_converts_back_to_the_original(case: Case) -> None:
    spoke = to_spoke(to_hub(case.spoke))
    assert schema_errors(spoke) == []
    assert without_conversion_data(spoke) == spoke_after_round_trip(case)


@pytest.mark.parametrize("case", [case for case in CASES if case.lost_on_the_way_back], ids=lambda case: case.id)
def test_what_upstream_drops_is_gone_after_the_round_trip(case: Case) -> None:
    spoke = to_spoke(to_hub(case.spoke))
    for path in case.lost_on_the_way_back:
        assert get_at(case.spoke, _lost_path(path)) is not MISSING, path
        assert get_at(spoke, _lost_path(path)) is MISSING, path


@pytest.mark.parametrize("case", CASES, ids=lambda case: case.id)
def test_conversion_data_is_kept_where_upstream_keeps_it(case: Case) -> None:
    annotations = to_spoke(case.hub).get("metadata", {}).get("annotations", {})
    assert (CONVERSION_DATA_ANNOTATION in annotations) == (case.hub["kind"] in KINDS_KEEPING_DATA)


# --- hub objects: exact through the spoke ------------------------------------------------------------------


@dataclass(frozen=True)
class HubCase:
    id: str
    hub: Obj
    #: the spoke object (without its conversion-data annotation); the fields only the hub has are not in it
    spoke: Obj


HUB_ONLY_CASES = [
    HubCase(
        "DockerCluster explicitly not provisioned: false comes back from the annotation",
        hub=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerCluster
            metadata: {{name: demo-7xk2p, namespace: default}}
            spec:
              loadBalancer: {{}}
            status:
              initialization: {{provisioned: false}}
              conditions:
              - type: LoadBalancerAvailable
                status: "False"
                reason: NotAvailable
                message: "Waiting for the load balancer container"
                observedGeneration: 1
                lastTransitionTime: "{CONDITION_TIME}"
        """),
        spoke=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerCluster
            metadata: {{name: demo-7xk2p, namespace: default}}
            spec:
              loadBalancer: {{}}
            status:
              v1beta2:
                conditions:
                - type: LoadBalancerAvailable
                  status: "False"
                  reason: NotAvailable
                  message: "Waiting for the load balancer container"
                  observedGeneration: 1
                  lastTransitionTime: "{CONDITION_TIME}"
        """),
    ),
    HubCase(
        "DockerMachine placed in a failure domain: v1beta1 has no status.failureDomain",
        hub=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerMachine
            metadata: {name: demo-control-plane-5vgnm, namespace: default}
            spec:
              providerID: docker:////demo-control-plane-5vgnm
              extraMounts:
              - {containerPath: /var/run/docker.sock, hostPath: /var/run/docker.sock}
            status:
              initialization: {provisioned: true}
              failureDomain: fd2
              addresses:
              - {type: InternalIP, address: 172.18.0.4}
        """),
        spoke=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachine
            metadata: {name: demo-control-plane-5vgnm, namespace: default}
            spec:
              providerID: docker:////demo-control-plane-5vgnm
              extraMounts:
              - {containerPath: /var/run/docker.sock, hostPath: /var/run/docker.sock}
            status:
              ready: true
              addresses:
              - {type: InternalIP, address: 172.18.0.4}
        """),
    ),
    HubCase(
        "DockerMachineTemplate with a capacity for autoscaling from zero: v1beta1 has no status",
        hub=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerMachineTemplate
            metadata: {name: quick-start-default-worker-machinetemplate, namespace: default}
            spec:
              template:
                spec:
                  extraMounts:
                  - {containerPath: /var/run/docker.sock, hostPath: /var/run/docker.sock}
            status:
              capacity: {cpu: "2", memory: 4Gi}
        """),
        spoke=load("""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachineTemplate
            metadata: {name: quick-start-default-worker-machinetemplate, namespace: default}
            spec:
              template:
                spec:
                  extraMounts:
                  - {containerPath: /var/run/docker.sock, hostPath: /var/run/docker.sock}
        """),
    ),
    HubCase(
        "DockerMachinePool's v1beta2 conditions: only in the annotation of v1beta1",
        hub=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
            kind: DockerMachinePool
            metadata: {{name: demo-mp-0-8cvkd, namespace: default}}
            spec:
              template: {{}}
              providerIDList: [docker:////demo-mp-0-8cvkd-0]
            status:
              ready: true
              replicas: 1
              instances:
              - {{instanceName: demo-mp-0-8cvkd-0, providerID: docker:////demo-mp-0-8cvkd-0, ready: true}}
              conditions:
              - type: Ready
                status: "True"
                reason: Ready
                message: ""
                lastTransitionTime: "{CONDITION_TIME}"
              deprecated:
                v1beta1:
                  conditions:
                  - {{type: Ready, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
        """),
        spoke=load(f"""
            apiVersion: infrastructure.cluster.x-k8s.io/v1beta1
            kind: DockerMachinePool
            metadata: {{name: demo-mp-0-8cvkd, namespace: default}}
            spec:
              template: {{}}
              providerIDList: [docker:////demo-mp-0-8cvkd-0]
            status:
              ready: true
              replicas: 1
              instances:
              - {{instanceName: demo-mp-0-8cvkd-0, providerID: docker:////demo-mp-0-8cvkd-0, ready: true}}
              conditions:
              - {{type: Ready, status: "True", lastTransitionTime: "{CONDITION_TIME}"}}
        """),
    ),
]

HUB_OBJECTS = [pytest.param(case.hub, id=case.id) for case in [*CASES, *HUB_ONLY_CASES]]


@pytest.mark.parametrize("hub", HUB_OBJECTS)
def test_hub_comes_back_exactly_through_the_spoke(hub: Obj) -> None:
    assert schema_errors(hub) == []
    spoke = to_spoke(hub)
    assert schema_errors(spoke) == []
    assert to_hub(spoke) == hub


@pytest.mark.parametrize("case", HUB_ONLY_CASES, ids=lambda case: case.id)
def test_fields_only_the_hub_has_are_left_out_of_the_spoke(case: HubCase) -> None:
    assert without_conversion_data(to_spoke(case.hub)) == case.spoke


@pytest.mark.parametrize("case", HUB_ONLY_CASES, ids=lambda case: case.id)
def test_without_the_annotation_fields_only_the_hub_has_are_gone(case: HubCase) -> None:
    """A v1beta1 client that drops the annotation loses them, as upstream (nothing to restore from)."""
    hub = to_hub(without_conversion_data(to_spoke(case.hub)))
    assert hub == to_hub(case.spoke)
    assert hub != case.hub


def test_a_spoke_edit_wins_over_the_restored_intent() -> None:
    """The annotation restores an explicit ``provisioned: false`` only while v1beta1 still says not ready."""
    hub = HUB_ONLY_CASES[0].hub
    spoke = to_spoke(hub)
    spoke["status"]["ready"] = True
    assert to_hub(spoke)["status"]["initialization"] == {"provisioned": True}


def test_a_failure_domain_without_control_plane_comes_back_explicit() -> None:
    """v1beta1 cannot tell an unset ``controlPlane`` from false, and upstream restores nothing for it."""
    hub = load("""
        apiVersion: infrastructure.cluster.x-k8s.io/v1beta2
        kind: DockerClusterTemplate
        metadata: {name: quick-start-cluster, namespace: default}
        spec:
          template:
            spec:
              failureDomains:
              - {name: fd2, controlPlane: true}
              - {name: fd1}
    """)
    spoke = to_spoke(hub)
    assert spoke["spec"]["template"]["spec"]["failureDomains"] == {"fd1": {}, "fd2": {"controlPlane": True}}
    assert to_hub(spoke)["spec"]["template"]["spec"]["failureDomains"] == [
        {"name": "fd1", "controlPlane": False},
        {"name": "fd2", "controlPlane": True},
    ]


# --- field paths -------------------------------------------------------------------------------------------


GROUP_OF_KIND = {conversion.kind: conversion.group for conversion in kinds()}

#: (kind, the version the path is in, the path, the path in the other version)
MOVED_PATHS = [
    ("DockerCluster", "v1beta1", "status.ready", "status.initialization.provisioned"),
    ("DockerCluster", "v1beta2", "status.initialization.provisioned", "status.ready"),
    ("DockerCluster", "v1beta1", "status.v1beta2.conditions[1].reason", "status.conditions[1].reason"),
    ("DockerCluster", "v1beta1", "status.conditions[0].severity", "status.deprecated.v1beta1.conditions[0].severity"),
    ("DockerCluster", "v1beta2", "status.conditions[0].message", "status.v1beta2.conditions[0].message"),
    ("DockerMachine", "v1beta1", "status.ready", "status.initialization.provisioned"),
    ("DockerMachine", "v1beta2", "status.deprecated.v1beta1.conditions[2]", "status.conditions[2]"),
    ("DockerMachinePool", "v1beta1", "status.conditions", "status.deprecated.v1beta1.conditions"),
    ("DockerMachinePool", "v1beta2", "status.deprecated.v1beta1.conditions[0].type", "status.conditions[0].type"),
    ("ExtensionConfig", "v1alpha1", "status.v1beta2.conditions[0].type", "status.conditions[0].type"),
    ("ExtensionConfig", "v1beta2", "status.deprecated.v1beta1.conditions[0].status", "status.conditions[0].status"),
]

#: (kind, a path both versions spell the same)
SAME_PATHS = [
    ("DockerCluster", "spec.controlPlaneEndpoint.port"),
    ("DockerClusterTemplate", "spec.template.spec.failureDomains"),
    ("DockerMachine", "spec.providerID"),
    ("DockerMachineTemplate", "spec.template.spec.providerID"),
    ("DockerMachinePool", "spec.providerIDList[1]"),
    ("DockerMachinePool", "status.instances[0].ready"),
    ("ExtensionConfig", "spec.clientConfig.service.path"),
    ("ExtensionConfig", "status.handlers[3].timeoutSeconds"),
]


def other_version(kind: str, version: str) -> str:
    group = GROUP_OF_KIND[kind]
    return SPOKE_VERSION[group] if version == HUB_VERSION else HUB_VERSION


@pytest.mark.parametrize(("kind", "version", "path", "expected"), MOVED_PATHS)
def test_translate_moved_path(kind: str, version: str, path: str, expected: str) -> None:
    assert translate_path(GROUP_OF_KIND[kind], kind, version, other_version(kind, version), path) == expected


@pytest.mark.parametrize(("kind", "path"), SAME_PATHS)
def test_translate_path_both_versions_share(kind: str, path: str) -> None:
    group = GROUP_OF_KIND[kind]
    assert translate_path(group, kind, SPOKE_VERSION[group], HUB_VERSION, path) == path
    assert translate_path(group, kind, HUB_VERSION, SPOKE_VERSION[group], path) == path


# --- the table ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group", "kind"),
    [
        (INFRA, "DockerCluster"),
        (INFRA, "DockerClusterTemplate"),
        (INFRA, "DockerMachine"),
        (INFRA, "DockerMachineTemplate"),
        (INFRA, "DockerMachinePool"),
        (INFRA, "DockerMachinePoolTemplate"),
        (RUNTIME, "ExtensionConfig"),
    ],
)
def test_every_kind_serves_the_versions_of_its_crd(group: str, kind: str) -> None:
    conversion = conversion_for(group, kind)
    assert conversion is not None
    assert conversion.hub == HUB_VERSION
    assert sorted(conversion.versions) == sorted(crd_of(group, kind).versions)
