"""Group/version/kind constants and the well-known label and annotation keys (spec §1.6).

Every identifier here is exact: it is what upstream Cluster API reads and writes, so objects we
create are indistinguishable from the ones its topology controller creates.
"""

from typing import Final

CLUSTER_GROUP: Final = "cluster.x-k8s.io"
CLUSTER_VERSION: Final = "v1beta1"
CLUSTER_API_VERSION: Final = f"{CLUSTER_GROUP}/{CLUSTER_VERSION}"

KIND_CLUSTER: Final = "Cluster"
KIND_CLUSTER_CLASS: Final = "ClusterClass"
KIND_MACHINE_DEPLOYMENT: Final = "MachineDeployment"
KIND_MACHINE_POOL: Final = "MachinePool"
KIND_MACHINE_HEALTH_CHECK: Final = "MachineHealthCheck"
KIND_MACHINE: Final = "Machine"
KIND_MACHINE_SET: Final = "MachineSet"

# Labels.
LABEL_CLUSTER_NAME: Final = "cluster.x-k8s.io/cluster-name"
LABEL_TOPOLOGY_OWNED: Final = "topology.cluster.x-k8s.io/owned"
LABEL_DEPLOYMENT_NAME: Final = "topology.cluster.x-k8s.io/deployment-name"
LABEL_POOL_NAME: Final = "topology.cluster.x-k8s.io/pool-name"
LABEL_CONTROL_PLANE: Final = "cluster.x-k8s.io/control-plane"
#: set by the MachineDeployment controller on its MachineSets and Machines
LABEL_MACHINE_DEPLOYMENT_NAME: Final = "cluster.x-k8s.io/deployment-name"
#: set by the MachineSet controller on its Machines
LABEL_MACHINE_SET_NAME: Final = "cluster.x-k8s.io/set-name"
#: set by the MachinePool controller on its Machines (and the infrastructure machines they stand for)
LABEL_MACHINE_POOL_NAME: Final = "cluster.x-k8s.io/pool-name"

# Annotations.
ANNOTATION_HOLD_UPGRADE_SEQUENCE: Final = "topology.cluster.x-k8s.io/hold-upgrade-sequence"
ANNOTATION_DEFER_UPGRADE: Final = "topology.cluster.x-k8s.io/defer-upgrade"
ANNOTATION_UPGRADE_CONCURRENCY: Final = "topology.cluster.x-k8s.io/upgrade-concurrency"
#: upstream v1.14: on the Cluster while it upgrades, the version the control plane is being moved to (KCP and the
#: MachineSet preflight checks let Machines at that version be created)
ANNOTATION_UPGRADE_STEP: Final = "topology.internal.cluster.x-k8s.io/upgrade-step"
ANNOTATION_DRY_RUN: Final = "topology.cluster.x-k8s.io/dry-run"
ANNOTATION_CLONED_FROM_NAME: Final = "cluster.x-k8s.io/cloned-from-name"
ANNOTATION_CLONED_FROM_GROUPKIND: Final = "cluster.x-k8s.io/cloned-from-groupkind"
ANNOTATION_REPLICAS_MANAGED_BY: Final = "cluster.x-k8s.io/replicas-managed-by"
ANNOTATION_AUTOSCALER_MIN_SIZE: Final = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
ANNOTATION_AUTOSCALER_MAX_SIZE: Final = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"
ANNOTATION_PAUSED: Final = "cluster.x-k8s.io/paused"
ANNOTATION_LAST_APPLIED: Final = "kubectl.kubernetes.io/last-applied-configuration"
# Set by the Machine and MachinePool controllers on workload-cluster Nodes.
ANNOTATION_NODE_CLUSTER_NAME: Final = "cluster.x-k8s.io/cluster-name"
ANNOTATION_NODE_CLUSTER_NAMESPACE: Final = "cluster.x-k8s.io/cluster-namespace"

# The field manager used for server-side apply, interchangeable with upstream's controller.
FIELD_MANAGER: Final = "capi-topology"

# Lifecycle hook names (Runtime SDK) that upgrade sequencing consults.
HOOK_BEFORE_CLUSTER_UPGRADE: Final = "BeforeClusterUpgrade"
HOOK_AFTER_CONTROL_PLANE_UPGRADE: Final = "AfterControlPlaneUpgrade"
HOOK_AFTER_CLUSTER_UPGRADE: Final = "AfterClusterUpgrade"

# The v1beta2 condition a MachinePool sets false while an instance runs another version than the pool's (the
# simulated MachinePool controller writes it, the topology's upgrade sequencing reads it; upstream PR #13929).
CONDITION_MACHINES_UP_TO_DATE: Final = "MachinesUpToDate"
