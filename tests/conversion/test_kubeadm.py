"""The kubeadm kinds' conversions, v1beta1 ↔ v1beta2 (``clusterclass.api.conversion.kubeadm``).

Each case converts a realistic object (the quick-start's templates, a KubeadmControlPlane and a KubeadmConfig
with status) and compares it with the whole expected object in the other version; every converted object
must be one the target version's CRD accepts (no schema error, no unknown field). Then the way back:
v1beta1 → v1beta2 → v1beta1 gives the original once the conversion-data annotation is taken off — except what
upstream drops, which each case names — and v1beta2 → v1beta1 → v1beta2 is exact (the annotation restores the
explicit ``false``/``0`` values and the fields v1beta1 has no place for).
"""

from __future__ import annotations

import copy
import functools
import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from clusterclass.api.conversion import CONVERSION_DATA_ANNOTATION, ConversionError, convert, translate_path
from clusterclass.apiserver.crd.definitions import CrdInfo, parse_crd

REPO = Path(__file__).resolve().parents[2]
CRDS = REPO / "config" / "crd" / "bases"
BOOTSTRAP = "bootstrap.cluster.x-k8s.io"
CONTROLPLANE = "controlplane.cluster.x-k8s.io"
PLURALS = {
    "KubeadmConfig": "kubeadmconfigs",
    "KubeadmConfigTemplate": "kubeadmconfigtemplates",
    "KubeadmControlPlane": "kubeadmcontrolplanes",
    "KubeadmControlPlaneTemplate": "kubeadmcontrolplanetemplates",
}


class ApiVersionsStub:
    """The newest version of a kind referenced by group: v1beta2 for the Cluster API groups, an error otherwise."""

    KNOWN = ("cluster.x-k8s.io", BOOTSTRAP, CONTROLPLANE, "infrastructure.cluster.x-k8s.io")

    def api_version(self, group: str, kind: str) -> str:
        if group in self.KNOWN:
            return f"{group}/v1beta2"
        raise ConversionError(f"no contract version for {kind}.{group}")


API_VERSIONS = ApiVersionsStub()


# --- helpers ----------------------------------------------------------------------------------


@functools.cache
def crd_for(kind: str) -> CrdInfo:
    group = BOOTSTRAP if kind.startswith("KubeadmConfig") else CONTROLPLANE
    return parse_crd(yaml.safe_load((CRDS / f"{group}_{PLURALS[kind]}.yaml").read_text()))


def assert_accepted(obj: dict[str, Any]) -> None:
    """``obj`` is one its version's CRD takes as it is: no unknown (pruned) field and no validation error."""
    version = obj["apiVersion"].split("/")[1]
    info = crd_for(obj["kind"])
    assert info.decode(copy.deepcopy(obj), version, field_validation="Warn") == []
    assert info.create_errors(obj, version) == []


def to_version(obj: dict[str, Any], version: str) -> dict[str, Any]:
    group = obj["apiVersion"].split("/")[0]
    converted = convert(obj, f"{group}/{version}", api_versions=API_VERSIONS)
    assert_accepted(converted)
    return converted


def without_conversion_data(obj: dict[str, Any]) -> dict[str, Any]:
    stripped = copy.deepcopy(obj)
    annotations = stripped["metadata"].get("annotations", {})
    annotations.pop(CONVERSION_DATA_ANNOTATION, None)
    if not annotations:
        stripped["metadata"].pop("annotations", None)
    return stripped


def conversion_data(obj: dict[str, Any]) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(obj["metadata"]["annotations"][CONVERSION_DATA_ANNOTATION])
    return data


def without(obj: dict[str, Any], *paths: str) -> dict[str, Any]:
    """``obj`` without the fields at the dotted ``paths`` (``a.b[0].c`` steps into list items)."""
    out = copy.deepcopy(obj)
    for path in paths:
        *parents, last = path.replace("[", ".[").split(".")
        holder: Any = out
        for step in parents:
            holder = holder[int(step[1:-1])] if step.startswith("[") else holder[step]
        del holder[last]
    return out


def changed(obj: dict[str, Any], *, drop: tuple[str, ...] = (), put: dict[str, Any] | None = None) -> dict[str, Any]:
    """``obj`` without the fields at ``drop`` and with the (existing) fields at the keys of ``put`` replaced."""
    out = without(obj, *drop)
    for path, value in (put or {}).items():
        *parents, last = path.split(".")
        holder: Any = out
        for step in parents:
            holder = holder[step]
        holder[last] = value
    return out


def quick_start(kind: str, name: str) -> dict[str, Any]:
    """A template of the project's v1beta1 quick-start example."""
    with (REPO / "clusterclass" / "examples" / "quick-start-v1beta1.yaml").open() as f:
        for doc in yaml.safe_load_all(f):
            if doc and doc["kind"] == kind and doc["metadata"]["name"] == name:
                return dict(doc)
    raise LookupError(f"{kind} {name} not in the quick-start")


# --- the objects ------------------------------------------------------------------------------

EVICTION_HARD = "nodefs.available<0%,nodefs.inodesFree<0%,imagefs.available<0%"

#: upstream's test/infrastructure/docker/templates/clusterclass-quick-start.yaml (v1.14.0), with a namespace
UPSTREAM_QUICK_START_CONTROL_PLANE: dict[str, Any] = {
    "apiVersion": f"{CONTROLPLANE}/v1beta2",
    "kind": "KubeadmControlPlaneTemplate",
    "metadata": {"name": "quick-start-control-plane", "namespace": "default"},
    "spec": {
        "template": {
            "spec": {
                "kubeadmConfigSpec": {
                    "clusterConfiguration": {
                        "apiServer": {"certSANs": ["localhost", "127.0.0.1", "0.0.0.0", "host.docker.internal"]}
                    },
                    "initConfiguration": {
                        "nodeRegistration": {"kubeletExtraArgs": [{"name": "eviction-hard", "value": EVICTION_HARD}]}
                    },
                    "joinConfiguration": {
                        "nodeRegistration": {"kubeletExtraArgs": [{"name": "eviction-hard", "value": EVICTION_HARD}]}
                    },
                }
            }
        }
    },
}

UPSTREAM_QUICK_START_WORKER_BOOTSTRAP: dict[str, Any] = {
    "apiVersion": f"{BOOTSTRAP}/v1beta2",
    "kind": "KubeadmConfigTemplate",
    "metadata": {"name": "quick-start-default-worker-bootstraptemplate", "namespace": "default"},
    "spec": {
        "template": {
            "spec": {
                "joinConfiguration": {
                    "nodeRegistration": {"kubeletExtraArgs": [{"name": "eviction-hard", "value": EVICTION_HARD}]}
                }
            }
        }
    },
}

T0 = "2025-05-01T10:00:00Z"
TOKEN = "abcdef.0123456789abcdef"
CA_HASH = "sha256:7c2e2ec4bcc0b9f4ae1b0bd3f6b2b1c1b9b1e1d5f5c2d7a3e8d3f1a2b4c6d8e0"

#: A KubeadmControlPlane as a v1beta1 client wrote it (and the controller updated its status).
KCP_V1BETA1: dict[str, Any] = {
    "apiVersion": f"{CONTROLPLANE}/v1beta1",
    "kind": "KubeadmControlPlane",
    "metadata": {
        "name": "my-cluster-control-plane",
        "namespace": "default",
        "labels": {"cluster.x-k8s.io/cluster-name": "my-cluster"},
    },
    "spec": {
        "replicas": 3,
        "version": "v1.33.0",
        "machineTemplate": {
            "metadata": {"labels": {"tier": "control-plane"}},
            "infrastructureRef": {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
                "kind": "DockerMachineTemplate",
                "name": "my-cluster-control-plane",
                "namespace": "default",
            },
            "readinessGates": [{"conditionType": "example.com/NetworkReady"}],
            "taints": [{"key": "dedicated", "value": "cp", "effect": "NoSchedule", "propagation": "Always"}],
            "nodeDrainTimeout": "5m",
            "nodeDeletionTimeout": "10s",
        },
        "kubeadmConfigSpec": {
            "clusterConfiguration": {
                "apiVersion": "kubeadm.k8s.io/v1beta3",
                "kind": "ClusterConfiguration",
                "clusterName": "my-cluster",
                "kubernetesVersion": "v1.33.0",
                "networking": {"podSubnet": "192.168.0.0/16", "serviceSubnet": "10.128.0.0/12"},
                "apiServer": {
                    "certSANs": ["localhost", "127.0.0.1"],
                    "extraArgs": {"v": "2", "audit-log-path": "/var/log/kubernetes/audit.log"},
                    "extraVolumes": [
                        {"name": "audit-log", "hostPath": "/var/log/kubernetes", "mountPath": "/var/log/kubernetes"},
                        {"name": "policy", "hostPath": "/etc/policy", "mountPath": "/etc/policy", "readOnly": True},
                    ],
                    "timeoutForControlPlane": "4m0s",
                },
                "controllerManager": {"extraArgs": {"enable-hostpath-provisioner": "true"}},
                "scheduler": {"extraArgs": {"bind-address": "0.0.0.0"}},
                "etcd": {"local": {"dataDir": "/var/lib/etcd", "extraArgs": {"quota-backend-bytes": "8589934592"}}},
                "dns": {"imageRepository": "registry.k8s.io/coredns"},
            },
            "initConfiguration": {
                "apiVersion": "kubeadm.k8s.io/v1beta3",
                "kind": "InitConfiguration",
                "bootstrapTokens": [{"token": TOKEN, "ttl": "24h0m0s", "usages": ["signing", "authentication"]}],
                "nodeRegistration": {
                    "criSocket": "unix:///var/run/containerd/containerd.sock",
                    "kubeletExtraArgs": {"eviction-hard": EVICTION_HARD, "cgroup-driver": "systemd"},
                },
            },
            "joinConfiguration": {
                "nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": EVICTION_HARD}},
                "discovery": {
                    "bootstrapToken": {
                        "apiServerEndpoint": "172.18.0.3:6443",
                        "token": TOKEN,
                        "unsafeSkipCAVerification": True,
                    },
                    "timeout": "5m0s",
                },
            },
            "files": [
                {"path": "/etc/policy/audit.yaml", "content": "rules: []", "permissions": "0600", "append": True},
                {"path": "/etc/motd", "content": "welcome"},
            ],
            "users": [{"name": "capi", "sudo": "ALL=(ALL) NOPASSWD:ALL", "sshAuthorizedKeys": ["ssh-ed25519 AAAA"]}],
            "preKubeadmCommands": ["systemctl restart containerd"],
            "useExperimentalRetryJoin": True,
        },
        "rolloutBefore": {"certificatesExpiryDays": 21},
        "rolloutAfter": "2025-06-01T00:00:00Z",
        "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
        "remediationStrategy": {"maxRetry": 5, "retryPeriod": "2m0s", "minHealthyPeriod": "1h0m0s"},
        "machineNamingStrategy": {"template": "{{ .kubeadmControlPlane.name }}-{{ .random }}"},
    },
    "status": {
        "selector": "cluster.x-k8s.io/cluster-name=my-cluster,cluster.x-k8s.io/control-plane",
        "replicas": 3,
        "updatedReplicas": 3,
        "readyReplicas": 2,
        "unavailableReplicas": 1,
        "initialized": True,
        "ready": True,
        "version": "v1.33.0",
        "observedGeneration": 2,
        "failureReason": "UpgradeError",
        "failureMessage": "something went wrong",
        "conditions": [{"type": "Ready", "status": "False", "severity": "Warning", "lastTransitionTime": T0}],
        "lastRemediation": {"machine": "my-cluster-control-plane-abcde", "timestamp": T0, "retryCount": 1},
        "v1beta2": {
            "conditions": [
                {"type": "Available", "status": "True", "reason": "Available", "message": "", "lastTransitionTime": T0}
            ],
            "readyReplicas": 2,
            "availableReplicas": 2,
            "upToDateReplicas": 3,
        },
    },
}

#: The same KubeadmControlPlane as v1beta2 has it.
KCP_V1BETA2: dict[str, Any] = {
    "apiVersion": f"{CONTROLPLANE}/v1beta2",
    "kind": "KubeadmControlPlane",
    "metadata": KCP_V1BETA1["metadata"],
    "spec": {
        "replicas": 3,
        "version": "v1.33.0",
        "machineTemplate": {
            "metadata": {"labels": {"tier": "control-plane"}},
            "spec": {
                "infrastructureRef": {
                    "apiGroup": "infrastructure.cluster.x-k8s.io",
                    "kind": "DockerMachineTemplate",
                    "name": "my-cluster-control-plane",
                },
                "readinessGates": [{"conditionType": "example.com/NetworkReady"}],
                "taints": [{"key": "dedicated", "value": "cp", "effect": "NoSchedule", "propagation": "Always"}],
                "deletion": {"nodeDrainTimeoutSeconds": 300, "nodeDeletionTimeoutSeconds": 10},
            },
        },
        "kubeadmConfigSpec": {
            "clusterConfiguration": {
                "apiServer": {
                    "certSANs": ["localhost", "127.0.0.1"],
                    "extraArgs": [
                        {"name": "audit-log-path", "value": "/var/log/kubernetes/audit.log"},
                        {"name": "v", "value": "2"},
                    ],
                    "extraVolumes": [
                        {"name": "audit-log", "hostPath": "/var/log/kubernetes", "mountPath": "/var/log/kubernetes"},
                        {"name": "policy", "hostPath": "/etc/policy", "mountPath": "/etc/policy", "readOnly": True},
                    ],
                },
                "controllerManager": {"extraArgs": [{"name": "enable-hostpath-provisioner", "value": "true"}]},
                "scheduler": {"extraArgs": [{"name": "bind-address", "value": "0.0.0.0"}]},
                "etcd": {
                    "local": {
                        "dataDir": "/var/lib/etcd",
                        "extraArgs": [{"name": "quota-backend-bytes", "value": "8589934592"}],
                    }
                },
                "dns": {"imageRepository": "registry.k8s.io/coredns"},
            },
            "initConfiguration": {
                "bootstrapTokens": [{"token": TOKEN, "ttlSeconds": 86400, "usages": ["signing", "authentication"]}],
                "nodeRegistration": {
                    "criSocket": "unix:///var/run/containerd/containerd.sock",
                    "kubeletExtraArgs": [
                        {"name": "cgroup-driver", "value": "systemd"},
                        {"name": "eviction-hard", "value": EVICTION_HARD},
                    ],
                },
                "timeouts": {"controlPlaneComponentHealthCheckSeconds": 240},
            },
            "joinConfiguration": {
                "nodeRegistration": {"kubeletExtraArgs": [{"name": "eviction-hard", "value": EVICTION_HARD}]},
                "discovery": {
                    "bootstrapToken": {
                        "apiServerEndpoint": "172.18.0.3:6443",
                        "token": TOKEN,
                        "unsafeSkipCAVerification": True,
                    }
                },
                "timeouts": {"controlPlaneComponentHealthCheckSeconds": 240, "tlsBootstrapSeconds": 300},
            },
            "files": [
                {"path": "/etc/policy/audit.yaml", "content": "rules: []", "permissions": "0600", "append": True},
                {"path": "/etc/motd", "content": "welcome"},
            ],
            "users": [{"name": "capi", "sudo": "ALL=(ALL) NOPASSWD:ALL", "sshAuthorizedKeys": ["ssh-ed25519 AAAA"]}],
            "preKubeadmCommands": ["systemctl restart containerd"],
        },
        "rollout": {
            "before": {"certificatesExpiryDays": 21},
            "after": "2025-06-01T00:00:00Z",
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1}},
        },
        "remediation": {"maxRetry": 5, "retryPeriodSeconds": 120, "minHealthyPeriodSeconds": 3600},
        "machineNaming": {"template": "{{ .kubeadmControlPlane.name }}-{{ .random }}"},
    },
    "status": {
        "selector": "cluster.x-k8s.io/cluster-name=my-cluster,cluster.x-k8s.io/control-plane",
        "replicas": 3,
        "readyReplicas": 2,
        "availableReplicas": 2,
        "upToDateReplicas": 3,
        "initialization": {"controlPlaneInitialized": True},
        "version": "v1.33.0",
        "observedGeneration": 2,
        "conditions": [
            {"type": "Available", "status": "True", "reason": "Available", "message": "", "lastTransitionTime": T0}
        ],
        "lastRemediation": {"machine": "my-cluster-control-plane-abcde", "time": T0, "retryCount": 1},
        "deprecated": {
            "v1beta1": {
                "conditions": [{"type": "Ready", "status": "False", "severity": "Warning", "lastTransitionTime": T0}],
                "failureReason": "UpgradeError",
                "failureMessage": "something went wrong",
                "updatedReplicas": 3,
                "readyReplicas": 2,
                "unavailableReplicas": 1,
            }
        },
    },
}

#: A worker's KubeadmConfig as a v1beta1 client sees it once its bootstrap data is written.
KUBEADM_CONFIG_V1BETA1: dict[str, Any] = {
    "apiVersion": f"{BOOTSTRAP}/v1beta1",
    "kind": "KubeadmConfig",
    "metadata": {"name": "my-cluster-md-0-x7k2p", "namespace": "default"},
    "spec": {
        "joinConfiguration": {
            "apiVersion": "kubeadm.k8s.io/v1beta3",
            "kind": "JoinConfiguration",
            "nodeRegistration": {
                "kubeletExtraArgs": {"node-labels": "role=worker", "eviction-hard": EVICTION_HARD},
                "taints": [],
            },
            "discovery": {
                "bootstrapToken": {"apiServerEndpoint": "172.18.0.3:6443", "token": TOKEN, "caCertHashes": [CA_HASH]}
            },
        },
        "users": [{"name": "capi", "shell": "/bin/bash", "sudo": "ALL=(ALL) NOPASSWD:ALL"}],
        "diskSetup": {
            "partitions": [{"device": "/dev/sdb", "layout": True, "tableType": "gpt"}],
            "filesystems": [{"device": "/dev/sdb1", "filesystem": "ext4", "label": "data"}],
        },
        "mounts": [["LABEL=data", "/var/lib/data"]],
        "format": "cloud-config",
    },
    "status": {
        "ready": True,
        "dataSecretName": "my-cluster-md-0-x7k2p",
        "observedGeneration": 1,
        "conditions": [
            {"type": "Ready", "status": "True", "lastTransitionTime": T0},
            {"type": "DataSecretAvailable", "status": "True", "lastTransitionTime": T0},
        ],
        "v1beta2": {
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": T0}
            ]
        },
    },
}

KUBEADM_CONFIG_V1BETA2: dict[str, Any] = {
    "apiVersion": f"{BOOTSTRAP}/v1beta2",
    "kind": "KubeadmConfig",
    "metadata": KUBEADM_CONFIG_V1BETA1["metadata"],
    "spec": {
        "joinConfiguration": {
            "nodeRegistration": {
                "kubeletExtraArgs": [
                    {"name": "eviction-hard", "value": EVICTION_HARD},
                    {"name": "node-labels", "value": "role=worker"},
                ],
                "taints": [],
            },
            "discovery": {
                "bootstrapToken": {"apiServerEndpoint": "172.18.0.3:6443", "token": TOKEN, "caCertHashes": [CA_HASH]}
            },
        },
        "users": [{"name": "capi", "shell": "/bin/bash", "sudo": "ALL=(ALL) NOPASSWD:ALL"}],
        "diskSetup": {
            "partitions": [{"device": "/dev/sdb", "layout": True, "tableType": "gpt"}],
            "filesystems": [{"device": "/dev/sdb1", "filesystem": "ext4", "label": "data"}],
        },
        "mounts": [["LABEL=data", "/var/lib/data"]],
        "format": "cloud-config",
    },
    "status": {
        "initialization": {"dataSecretCreated": True},
        "dataSecretName": "my-cluster-md-0-x7k2p",
        "observedGeneration": 1,
        "conditions": [{"type": "Ready", "status": "True", "reason": "Ready", "message": "", "lastTransitionTime": T0}],
        "deprecated": {
            "v1beta1": {
                "conditions": [
                    {"type": "Ready", "status": "True", "lastTransitionTime": T0},
                    {"type": "DataSecretAvailable", "status": "True", "lastTransitionTime": T0},
                ]
            }
        },
    },
}

#: KCP_V1BETA1 as it comes back from v1beta2: without what v1beta2 has no place for, the infrastructure reference
#: in the version the API server serves now, the Durations as Go writes them.
KCP_V1BETA1_BACK = changed(
    KCP_V1BETA1,
    drop=(
        "spec.kubeadmConfigSpec.useExperimentalRetryJoin",
        "spec.kubeadmConfigSpec.clusterConfiguration.apiVersion",
        "spec.kubeadmConfigSpec.clusterConfiguration.kind",
        "spec.kubeadmConfigSpec.clusterConfiguration.clusterName",
        "spec.kubeadmConfigSpec.clusterConfiguration.kubernetesVersion",
        "spec.kubeadmConfigSpec.clusterConfiguration.networking",
        "spec.kubeadmConfigSpec.initConfiguration.apiVersion",
        "spec.kubeadmConfigSpec.initConfiguration.kind",
    ),
    put={
        "spec.machineTemplate.infrastructureRef.apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
        "spec.machineTemplate.nodeDrainTimeout": "5m0s",
    },
)

#: KUBEADM_CONFIG_V1BETA1 as it comes back: without kubeadm's type fields.
KUBEADM_CONFIG_V1BETA1_BACK = changed(
    KUBEADM_CONFIG_V1BETA1, drop=("spec.joinConfiguration.apiVersion", "spec.joinConfiguration.kind")
)

#: A v1beta2 KubeadmControlPlane with what v1beta1 cannot say: the timeouts it has no field for, explicit
#: ``false``s and zeros, an empty taint list (no taints), no v1beta1 ready replicas.
KCP_WITH_HUB_ONLY_FIELDS: dict[str, Any] = {
    "apiVersion": f"{CONTROLPLANE}/v1beta2",
    "kind": "KubeadmControlPlane",
    "metadata": {"name": "cp", "namespace": "ns"},
    "spec": {
        "replicas": 1,
        "version": "v1.33.0",
        "machineTemplate": {
            "spec": {
                "infrastructureRef": {
                    "apiGroup": "infrastructure.cluster.x-k8s.io",
                    "kind": "DockerMachineTemplate",
                    "name": "cp",
                },
                "deletion": {"nodeDrainTimeoutSeconds": 0},
            }
        },
        "kubeadmConfigSpec": {
            "clusterConfiguration": {
                "apiServer": {
                    "extraArgs": [{"name": "v", "value": "4"}],
                    "extraVolumes": [{"name": "x", "hostPath": "/x", "mountPath": "/x", "readOnly": False}],
                }
            },
            "initConfiguration": {
                "nodeRegistration": {"taints": []},
                "timeouts": {
                    "controlPlaneComponentHealthCheckSeconds": 240,
                    "kubeletHealthCheckSeconds": 60,
                    "etcdAPICallSeconds": 30,
                },
            },
            "joinConfiguration": {
                "discovery": {
                    "bootstrapToken": {
                        "apiServerEndpoint": "172.18.0.3:6443",
                        "token": TOKEN,
                        "unsafeSkipCAVerification": False,
                    }
                },
                "timeouts": {
                    "controlPlaneComponentHealthCheckSeconds": 240,
                    "tlsBootstrapSeconds": 300,
                    "discoverySeconds": 120,
                },
            },
            "files": [{"path": "/etc/a", "content": "a", "append": False}],
            "format": "ignition",
            "ignition": {"containerLinuxConfig": {"strict": False}},
        },
        "rollout": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}}},
        "remediation": {"maxRetry": 3, "retryPeriodSeconds": 0},
    },
    "status": {
        "initialization": {"controlPlaneInitialized": False},
        "replicas": 1,
        "readyReplicas": 0,
        "availableReplicas": 0,
        "upToDateReplicas": 1,
        "deprecated": {"v1beta1": {"updatedReplicas": 1, "readyReplicas": 0, "unavailableReplicas": 1}},
    },
}

KCP_WITH_HUB_ONLY_FIELDS_V1BETA1: dict[str, Any] = {
    "apiVersion": f"{CONTROLPLANE}/v1beta1",
    "kind": "KubeadmControlPlane",
    "metadata": {"name": "cp", "namespace": "ns"},
    "spec": {
        "replicas": 1,
        "version": "v1.33.0",
        "machineTemplate": {
            "infrastructureRef": {
                "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
                "kind": "DockerMachineTemplate",
                "namespace": "ns",
                "name": "cp",
            },
            "nodeDrainTimeout": "0s",
        },
        "kubeadmConfigSpec": {
            "clusterConfiguration": {
                "apiServer": {
                    "extraArgs": {"v": "4"},
                    "extraVolumes": [{"name": "x", "hostPath": "/x", "mountPath": "/x"}],
                    "timeoutForControlPlane": "4m0s",
                }
            },
            "initConfiguration": {"nodeRegistration": {"taints": []}},
            "joinConfiguration": {
                "discovery": {
                    "bootstrapToken": {"apiServerEndpoint": "172.18.0.3:6443", "token": TOKEN},
                    "timeout": "5m0s",
                }
            },
            "files": [{"path": "/etc/a", "content": "a"}],
            "format": "ignition",
            # upstream converts the non-zero hub struct ({strict: false}) to a non-nil pointer; strict is omitempty
            "ignition": {"containerLinuxConfig": {}},
        },
        "rolloutStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 0}},
        "remediationStrategy": {"maxRetry": 3},
    },
    "status": {
        "replicas": 1,
        "updatedReplicas": 1,
        "readyReplicas": 0,
        "unavailableReplicas": 1,
        "v1beta2": {"readyReplicas": 0, "availableReplicas": 0, "upToDateReplicas": 1},
    },
}


# --- v1beta1 → v1beta2 → v1beta1 ---------------------------------------------------------------

UP_CASES = [
    pytest.param(
        quick_start("KubeadmControlPlaneTemplate", "quick-start-pools-control-plane"),
        {
            "apiVersion": f"{CONTROLPLANE}/v1beta2",
            "kind": "KubeadmControlPlaneTemplate",
            "metadata": {"name": "quick-start-pools-control-plane", "namespace": "default"},
            "spec": {
                "template": {
                    "spec": {
                        "kubeadmConfigSpec": {
                            "clusterConfiguration": {"apiServer": {"certSANs": ["localhost", "127.0.0.1"]}}
                        }
                    }
                }
            },
        },
        # an empty nodeRegistration is a zero struct: v1beta2 leaves it (and so its configuration) out
        changed(
            quick_start("KubeadmControlPlaneTemplate", "quick-start-pools-control-plane"),
            drop=(
                "spec.template.spec.kubeadmConfigSpec.initConfiguration",
                "spec.template.spec.kubeadmConfigSpec.joinConfiguration",
            ),
        ),
        id="quick-start KubeadmControlPlaneTemplate",
    ),
    pytest.param(
        quick_start("KubeadmConfigTemplate", "quick-start-pools-worker-bootstrap"),
        {
            "apiVersion": f"{BOOTSTRAP}/v1beta2",
            "kind": "KubeadmConfigTemplate",
            "metadata": {"name": "quick-start-pools-worker-bootstrap", "namespace": "default"},
            "spec": {
                "template": {
                    "spec": {
                        "joinConfiguration": {
                            "nodeRegistration": {
                                "kubeletExtraArgs": [
                                    {"name": "eviction-hard", "value": "nodefs.available<0%,imagefs.available<0%"}
                                ]
                            }
                        }
                    }
                }
            },
        },
        quick_start("KubeadmConfigTemplate", "quick-start-pools-worker-bootstrap"),
        id="quick-start KubeadmConfigTemplate",
    ),
    pytest.param(KCP_V1BETA1, KCP_V1BETA2, KCP_V1BETA1_BACK, id="KubeadmControlPlane with status"),
    pytest.param(
        KUBEADM_CONFIG_V1BETA1,
        KUBEADM_CONFIG_V1BETA2,
        KUBEADM_CONFIG_V1BETA1_BACK,
        id="KubeadmConfig with status",
    ),
]


@pytest.mark.parametrize(("v1beta1", "v1beta2", "v1beta1_back"), UP_CASES)
def test_v1beta1_up_and_back(v1beta1: dict[str, Any], v1beta2: dict[str, Any], v1beta1_back: dict[str, Any]) -> None:
    """Up, then down: the original but for what upstream drops or re-spells (each case's ``v1beta1_back``)."""
    assert_accepted(v1beta1)
    up = to_version(v1beta1, "v1beta2")
    assert up == v1beta2
    down = to_version(up, "v1beta1")
    assert conversion_data(down) == without(up, "metadata")
    assert without_conversion_data(down) == v1beta1_back


# --- v1beta2 → v1beta1 → v1beta2 ---------------------------------------------------------------

DOWN_CASES = [
    pytest.param(
        UPSTREAM_QUICK_START_CONTROL_PLANE,
        {
            "apiVersion": f"{CONTROLPLANE}/v1beta1",
            "kind": "KubeadmControlPlaneTemplate",
            "metadata": {"name": "quick-start-control-plane", "namespace": "default"},
            "spec": {
                "template": {
                    "spec": {
                        "kubeadmConfigSpec": {
                            "clusterConfiguration": {
                                "apiServer": {"certSANs": ["localhost", "127.0.0.1", "0.0.0.0", "host.docker.internal"]}
                            },
                            "initConfiguration": {
                                "nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": EVICTION_HARD}}
                            },
                            "joinConfiguration": {
                                "nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": EVICTION_HARD}}
                            },
                        }
                    }
                }
            },
        },
        id="upstream quick-start KubeadmControlPlaneTemplate",
    ),
    pytest.param(
        UPSTREAM_QUICK_START_WORKER_BOOTSTRAP,
        {
            "apiVersion": f"{BOOTSTRAP}/v1beta1",
            "kind": "KubeadmConfigTemplate",
            "metadata": {"name": "quick-start-default-worker-bootstraptemplate", "namespace": "default"},
            "spec": {
                "template": {
                    "spec": {
                        "joinConfiguration": {
                            "nodeRegistration": {"kubeletExtraArgs": {"eviction-hard": EVICTION_HARD}}
                        }
                    }
                }
            },
        },
        id="upstream quick-start KubeadmConfigTemplate",
    ),
    pytest.param(KCP_V1BETA2, KCP_V1BETA1_BACK, id="KubeadmControlPlane"),
    pytest.param(KCP_WITH_HUB_ONLY_FIELDS, KCP_WITH_HUB_ONLY_FIELDS_V1BETA1, id="KCP with hub-only fields"),
    pytest.param(
        KUBEADM_CONFIG_V1BETA2,
        KUBEADM_CONFIG_V1BETA1_BACK,
        id="KubeadmConfig",
    ),
]


@pytest.mark.parametrize(("v1beta2", "v1beta1"), DOWN_CASES)
def test_v1beta2_down_and_back_is_exact(v1beta2: dict[str, Any], v1beta1: dict[str, Any]) -> None:
    assert_accepted(v1beta2)
    down = to_version(v1beta2, "v1beta1")
    assert conversion_data(down) == without(v1beta2, "metadata")
    assert without_conversion_data(down) == v1beta1
    assert to_version(down, "v1beta2") == v1beta2


# --- single rules -------------------------------------------------------------------------------


def kubeadm_config(version: str, spec: dict[str, Any], status: dict[str, Any] | None = None) -> dict[str, Any]:
    obj: dict[str, Any] = {
        "apiVersion": f"{BOOTSTRAP}/{version}",
        "kind": "KubeadmConfig",
        "metadata": {"name": "c", "namespace": "default"},
        "spec": spec,
    }
    if status is not None:
        obj["status"] = status
    return obj


def kcp_template(version: str, resource_spec: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": f"{CONTROLPLANE}/{version}",
        "kind": "KubeadmControlPlaneTemplate",
        "metadata": {"name": "t", "namespace": "default"},
        "spec": {"template": {"spec": resource_spec}},
    }


def with_conversion_data(obj: dict[str, Any], hub: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(obj)
    data = json.dumps({k: v for k, v in hub.items() if k != "metadata"})
    out["metadata"].setdefault("annotations", {})[CONVERSION_DATA_ANNOTATION] = data
    return out


TIMEOUTS_HUB = kubeadm_config(
    "v1beta2",
    {
        "initConfiguration": {
            "timeouts": {"controlPlaneComponentHealthCheckSeconds": 100, "kubeletHealthCheckSeconds": 5}
        },
        "joinConfiguration": {
            "timeouts": {
                "controlPlaneComponentHealthCheckSeconds": 100,
                "tlsBootstrapSeconds": 50,
                "etcdAPICallSeconds": 7,
            }
        },
    },
)

UP_RULES = [
    pytest.param(
        kubeadm_config("v1beta1", {"clusterConfiguration": {"apiServer": {"timeoutForControlPlane": "2m30s"}}}),
        kubeadm_config(
            "v1beta2",
            {
                "initConfiguration": {"timeouts": {"controlPlaneComponentHealthCheckSeconds": 150}},
                "joinConfiguration": {"timeouts": {"controlPlaneComponentHealthCheckSeconds": 150}},
            },
        ),
        id="timeoutForControlPlane is the init and the join control plane health check",
    ),
    pytest.param(
        with_conversion_data(
            kubeadm_config(
                "v1beta1",
                {
                    "clusterConfiguration": {"apiServer": {"timeoutForControlPlane": "3m"}},
                    "joinConfiguration": {"discovery": {"timeout": "1m"}},
                },
            ),
            TIMEOUTS_HUB,
        ),
        kubeadm_config(
            "v1beta2",
            {
                "initConfiguration": {
                    "timeouts": {"controlPlaneComponentHealthCheckSeconds": 180, "kubeletHealthCheckSeconds": 5}
                },
                "joinConfiguration": {
                    "timeouts": {
                        "controlPlaneComponentHealthCheckSeconds": 180,
                        "tlsBootstrapSeconds": 60,
                        "etcdAPICallSeconds": 7,
                    }
                },
            },
        ),
        id="edited v1beta1 timeouts override the restored ones, the others are restored",
    ),
    pytest.param(
        with_conversion_data(
            kubeadm_config("v1beta1", {"joinConfiguration": {"discovery": {"timeout": "50s"}}}), TIMEOUTS_HUB
        ),
        kubeadm_config(
            "v1beta2",
            {
                "initConfiguration": {
                    "timeouts": {"controlPlaneComponentHealthCheckSeconds": 100, "kubeletHealthCheckSeconds": 5}
                },
                "joinConfiguration": {"timeouts": {"tlsBootstrapSeconds": 50, "etcdAPICallSeconds": 7}},
            },
        ),
        # upstream's ConvertKubeadmConfigSpecV1Beta1ToHub: a discovery timeout without timeoutForControlPlane
        # clears the join health check, while the init one stays as restored
        id="discovery timeout alone clears the join control plane health check",
    ),
    pytest.param(
        kubeadm_config(
            "v1beta1",
            {
                "initConfiguration": {
                    "bootstrapTokens": [{"token": TOKEN, "ttl": "1h30m"}, {"token": TOKEN, "ttl": "0s"}]
                }
            },
        ),
        kubeadm_config(
            "v1beta2",
            {
                "initConfiguration": {
                    "bootstrapTokens": [{"token": TOKEN, "ttlSeconds": 5400}, {"token": TOKEN, "ttlSeconds": 0}]
                }
            },
        ),
        id="bootstrap token ttl in whole seconds",
    ),
    pytest.param(
        kubeadm_config(
            "v1beta1",
            {
                "joinConfiguration": {
                    "discovery": {"bootstrapToken": {"token": TOKEN, "unsafeSkipCAVerification": False}}
                },
                "files": [{"path": "/a", "append": False}],
            },
        ),
        kubeadm_config(
            "v1beta2",
            {"joinConfiguration": {"discovery": {"bootstrapToken": {"token": TOKEN}}}, "files": [{"path": "/a"}]},
        ),
        id="a false without the annotation is unset",
    ),
    pytest.param(
        with_conversion_data(
            kubeadm_config(
                "v1beta1",
                {
                    "clusterConfiguration": {
                        "apiServer": {
                            "extraVolumes": [
                                {"name": "b", "hostPath": "/b", "mountPath": "/b"},
                                {"name": "a", "hostPath": "/a", "mountPath": "/a"},
                            ]
                        }
                    },
                    "files": [{"path": "/new"}, {"path": "/kept"}],
                },
            ),
            kubeadm_config(
                "v1beta2",
                {
                    "clusterConfiguration": {
                        "apiServer": {
                            "extraVolumes": [
                                {"name": "a", "hostPath": "/a", "mountPath": "/a", "readOnly": False},
                                {"name": "b", "hostPath": "/b", "mountPath": "/b", "readOnly": True},
                            ]
                        }
                    },
                    "files": [{"path": "/kept", "append": False}],
                },
            ),
        ),
        kubeadm_config(
            "v1beta2",
            {
                "clusterConfiguration": {
                    "apiServer": {
                        "extraVolumes": [
                            {"name": "b", "hostPath": "/b", "mountPath": "/b"},  # v1beta1 says false now
                            {"name": "a", "hostPath": "/a", "mountPath": "/a", "readOnly": False},
                        ]
                    }
                },
                "files": [{"path": "/new"}, {"path": "/kept", "append": False}],
            },
        ),
        id="extra volumes and files keep an explicit false by hostPath and path, not by position",
    ),
    pytest.param(
        kubeadm_config(
            "v1beta1",
            {
                "users": [{"name": "capi", "gecos": "", "passwd": ""}],
                "diskSetup": {"filesystems": [{"device": "/dev/sdb1", "filesystem": "ext4", "partition": ""}]},
            },
            {"ready": False, "dataSecretName": ""},
        ),
        kubeadm_config(
            "v1beta2",
            {
                "users": [{"name": "capi"}],
                "diskSetup": {"filesystems": [{"device": "/dev/sdb1", "filesystem": "ext4"}]},
            },
        ),
        id="empty optional strings (*string in v1beta1) and a false ready are unset",
    ),
    pytest.param(
        kcp_template("v1beta1", {"kubeadmConfigSpec": {}, "rolloutStrategy": {"rollingUpdate": {"maxSurge": "50%"}}}),
        kcp_template(
            "v1beta2", {"rollout": {"strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%"}}}}
        ),
        id="a template's rollout strategy without type is a RollingUpdate",
    ),
    pytest.param(
        kcp_template(
            "v1beta1",
            {
                "kubeadmConfigSpec": {},
                "machineTemplate": {"nodeVolumeDetachTimeout": "1m", "taints": []},
                "remediationStrategy": {"retryPeriod": "0s"},
                "rolloutBefore": {"certificatesExpiryDays": 0},
                "machineNamingStrategy": {},
            },
        ),
        kcp_template("v1beta2", {"machineTemplate": {"spec": {"deletion": {"nodeVolumeDetachTimeoutSeconds": 60}}}}),
        id="zero values and empty structs of a template are unset",
    ),
]


@pytest.mark.parametrize(("v1beta1", "v1beta2"), UP_RULES)
def test_rules_going_up(v1beta1: dict[str, Any], v1beta2: dict[str, Any]) -> None:
    assert to_version(v1beta1, "v1beta2") == v1beta2


DOWN_RULES = [
    pytest.param(
        kubeadm_config(
            "v1beta2",
            {"diskSetup": {"partitions": [{"device": "/dev/sdb"}, {"device": "/dev/sdc", "layout": True}]}},
        ),
        kubeadm_config(
            "v1beta1",
            {
                "diskSetup": {
                    "partitions": [{"device": "/dev/sdb", "layout": False}, {"device": "/dev/sdc", "layout": True}]
                }
            },
        ),
        id="an unset partition layout is false (v1beta1 requires it)",
    ),
    pytest.param(
        kubeadm_config(
            "v1beta2",
            {
                "clusterConfiguration": {
                    "apiServer": {
                        "extraArgs": [{"name": "v", "value": "1"}, {"name": "v", "value": "2"}, {"name": "empty"}]
                    }
                }
            },
        ),
        kubeadm_config("v1beta1", {"clusterConfiguration": {"apiServer": {"extraArgs": {"v": "2", "empty": ""}}}}),
        id="a repeated argument keeps its last value, a missing value is empty",
    ),
    pytest.param(
        {
            "apiVersion": f"{CONTROLPLANE}/v1beta2",
            "kind": "KubeadmControlPlane",
            "metadata": {"name": "cp", "namespace": "ns"},
            "spec": {
                "version": "v1.33.0",
                "machineTemplate": {
                    "spec": {
                        "infrastructureRef": {
                            "apiGroup": "infrastructure.cluster.x-k8s.io",
                            "kind": "DockerMachineTemplate",
                            "name": "cp",
                        }
                    }
                },
            },
            "status": {"deprecated": {"v1beta1": {"readyReplicas": 1}}, "readyReplicas": 3},
        },
        {
            "apiVersion": f"{CONTROLPLANE}/v1beta1",
            "kind": "KubeadmControlPlane",
            "metadata": {"name": "cp", "namespace": "ns"},
            "spec": {
                "version": "v1.33.0",
                "machineTemplate": {
                    "infrastructureRef": {
                        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta2",
                        "kind": "DockerMachineTemplate",
                        "namespace": "ns",
                        "name": "cp",
                    }
                },
                "kubeadmConfigSpec": {},
            },
            "status": {"readyReplicas": 1, "ready": True, "v1beta2": {"readyReplicas": 3}},
        },
        id="KCP: ready from the v1beta1 ready replicas, the required kubeadmConfigSpec written",
    ),
    pytest.param(
        kubeadm_config(
            "v1beta2",
            {
                "initConfiguration": {
                    "timeouts": {"controlPlaneComponentHealthCheckSeconds": 100, "kubeletHealthCheckSeconds": 5}
                },
                "joinConfiguration": {"timeouts": {"controlPlaneComponentHealthCheckSeconds": 100}},
            },
        ),
        kubeadm_config("v1beta1", {"clusterConfiguration": {"apiServer": {"timeoutForControlPlane": "1m40s"}}}),
        id="an init or join configuration the timeouts leave empty is left out (ConvertKubeadmConfigSpecHubToV1Beta1)",
    ),
]


@pytest.mark.parametrize(("v1beta2", "v1beta1"), DOWN_RULES)
def test_rules_going_down(v1beta2: dict[str, Any], v1beta1: dict[str, Any]) -> None:
    assert without_conversion_data(to_version(v1beta2, "v1beta1")) == v1beta1


def test_kcp_ready_is_not_kept_but_derived_coming_down() -> None:
    """Upstream keeps no v1beta1 ``ready``: a KCP that claims it without ready replicas loses the claim."""
    v1beta1 = without(KCP_V1BETA1, "status.readyReplicas")
    up = to_version(v1beta1, "v1beta2")
    assert "ready" not in up["status"]
    assert "readyReplicas" not in up["status"]["deprecated"]["v1beta1"]
    down = to_version(up, "v1beta1")
    assert without_conversion_data(down) == without(KCP_V1BETA1_BACK, "status.readyReplicas", "status.ready")


def test_extra_args_come_back_sorted() -> None:
    """Upstream's ConvertToArgs sorts by name: a v1beta2 list in another order does not survive v1beta1."""
    hub = kubeadm_config(
        "v1beta2",
        {
            "joinConfiguration": {
                "nodeRegistration": {"kubeletExtraArgs": [{"name": "b", "value": "2"}, {"name": "a", "value": "1"}]}
            }
        },
    )
    back = to_version(to_version(hub, "v1beta1"), "v1beta2")
    assert back["spec"]["joinConfiguration"]["nodeRegistration"]["kubeletExtraArgs"] == [
        {"name": "a", "value": "1"},
        {"name": "b", "value": "2"},
    ]


def test_join_health_check_other_than_the_init_one_does_not_round_trip() -> None:
    """v1beta1 has one field for both: upstream (whose fuzz test makes them equal) clears the join one when
    only the discovery timeout is there to convert."""
    hub = kubeadm_config(
        "v1beta2",
        {
            "joinConfiguration": {
                "timeouts": {"controlPlaneComponentHealthCheckSeconds": 100, "tlsBootstrapSeconds": 50}
            }
        },
    )
    down = to_version(hub, "v1beta1")
    assert without_conversion_data(down)["spec"] == {"joinConfiguration": {"discovery": {"timeout": "50s"}}}
    assert to_version(down, "v1beta2")["spec"] == {"joinConfiguration": {"timeouts": {"tlsBootstrapSeconds": 50}}}


def test_partition_layout_unset_does_not_round_trip() -> None:
    """As upstream (its fuzz test says so): an unset ``layout`` comes back as ``false``."""
    hub = kubeadm_config("v1beta2", {"diskSetup": {"partitions": [{"device": "/dev/sdb"}]}})
    back = to_version(to_version(hub, "v1beta1"), "v1beta2")
    assert back["spec"]["diskSetup"]["partitions"] == [{"device": "/dev/sdb", "layout": False}]


@pytest.mark.parametrize(
    ("obj", "version", "field"),
    [
        pytest.param(
            kubeadm_config("v1beta1", {"initConfiguration": {"bootstrapTokens": [{"token": TOKEN, "ttl": "forever"}]}}),
            "v1beta2",
            "spec.initConfiguration.bootstrapTokens[0].ttl",
            id="bad ttl",
        ),
        pytest.param(
            kubeadm_config("v1beta1", {"clusterConfiguration": {"apiServer": {"timeoutForControlPlane": "soon"}}}),
            "v1beta2",
            "spec.clusterConfiguration.apiServer.timeoutForControlPlane",
            id="bad timeoutForControlPlane",
        ),
        pytest.param(
            {
                **KCP_WITH_HUB_ONLY_FIELDS,
                "spec": {
                    **KCP_WITH_HUB_ONLY_FIELDS["spec"],
                    "machineTemplate": {
                        "spec": {"infrastructureRef": {"apiGroup": "example.com", "kind": "Machine", "name": "m"}}
                    },
                },
            },
            "v1beta1",
            "spec.machineTemplate.spec.infrastructureRef",
            id="infrastructure group without a known version",
        ),
    ],
)
def test_conversion_errors_name_the_field(obj: dict[str, Any], version: str, field: str) -> None:
    group = obj["apiVersion"].split("/")[0]
    with pytest.raises(ConversionError) as raised:
        convert(obj, f"{group}/{version}", api_versions=API_VERSIONS)
    assert raised.value.field == field


# --- field paths --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("group", "kind", "v1beta1_path", "v1beta2_path"),
    [
        (
            CONTROLPLANE,
            "KubeadmControlPlane",
            "spec.machineTemplate.infrastructureRef.name",
            "spec.machineTemplate.spec.infrastructureRef.name",
        ),
        (
            CONTROLPLANE,
            "KubeadmControlPlane",
            "spec.machineTemplate.nodeDrainTimeout",
            "spec.machineTemplate.spec.deletion.nodeDrainTimeoutSeconds",
        ),
        (
            CONTROLPLANE,
            "KubeadmControlPlane",
            "spec.machineTemplate.taints[0].key",
            "spec.machineTemplate.spec.taints[0].key",
        ),
        (
            CONTROLPLANE,
            "KubeadmControlPlane",
            "spec.rolloutStrategy.rollingUpdate.maxSurge",
            "spec.rollout.strategy.rollingUpdate.maxSurge",
        ),
        (CONTROLPLANE, "KubeadmControlPlane", "spec.rolloutAfter", "spec.rollout.after"),
        (
            CONTROLPLANE,
            "KubeadmControlPlane",
            "spec.remediationStrategy.retryPeriod",
            "spec.remediation.retryPeriodSeconds",
        ),
        (CONTROLPLANE, "KubeadmControlPlane", "spec.machineNamingStrategy.template", "spec.machineNaming.template"),
        (
            CONTROLPLANE,
            "KubeadmControlPlane",
            "spec.kubeadmConfigSpec.clusterConfiguration.apiServer.timeoutForControlPlane",
            "spec.kubeadmConfigSpec.initConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds",
        ),
        (CONTROLPLANE, "KubeadmControlPlane", "status.readyReplicas", "status.deprecated.v1beta1.readyReplicas"),
        (CONTROLPLANE, "KubeadmControlPlane", "status.v1beta2.readyReplicas", "status.readyReplicas"),
        (CONTROLPLANE, "KubeadmControlPlane", "status.initialized", "status.initialization.controlPlaneInitialized"),
        (CONTROLPLANE, "KubeadmControlPlane", "status.lastRemediation.timestamp", "status.lastRemediation.time"),
        (
            CONTROLPLANE,
            "KubeadmControlPlaneTemplate",
            "spec.template.spec.machineTemplate.nodeDeletionTimeout",
            "spec.template.spec.machineTemplate.spec.deletion.nodeDeletionTimeoutSeconds",
        ),
        (
            CONTROLPLANE,
            "KubeadmControlPlaneTemplate",
            "spec.template.spec.kubeadmConfigSpec.initConfiguration.bootstrapTokens[1].ttl",
            "spec.template.spec.kubeadmConfigSpec.initConfiguration.bootstrapTokens[1].ttlSeconds",
        ),
        (
            BOOTSTRAP,
            "KubeadmConfig",
            "spec.joinConfiguration.discovery.timeout",
            "spec.joinConfiguration.timeouts.tlsBootstrapSeconds",
        ),
        (BOOTSTRAP, "KubeadmConfig", "status.ready", "status.initialization.dataSecretCreated"),
        (BOOTSTRAP, "KubeadmConfig", "status.conditions[0].reason", "status.deprecated.v1beta1.conditions[0].reason"),
        (
            BOOTSTRAP,
            "KubeadmConfigTemplate",
            "spec.template.spec.clusterConfiguration.apiServer.timeoutForControlPlane",
            "spec.template.spec.initConfiguration.timeouts.controlPlaneComponentHealthCheckSeconds",
        ),
        (
            BOOTSTRAP,
            "KubeadmConfigTemplate",
            "spec.template.spec.files[2].append",
            "spec.template.spec.files[2].append",
        ),
    ],
)
def test_translate_path(group: str, kind: str, v1beta1_path: str, v1beta2_path: str) -> None:
    assert translate_path(group, kind, "v1beta1", "v1beta2", v1beta1_path) == v1beta2_path
    assert translate_path(group, kind, "v1beta2", "v1beta1", v1beta2_path) == v1beta1_path
