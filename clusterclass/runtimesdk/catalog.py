"""The Runtime SDK's hooks (``hooks.runtime.cluster.x-k8s.io/v1alpha1``): their names, kinds and paths (spec §8).

One table says, for every hook Cluster API v1.6 calls, what its request and response are called, whether its
answer can block (a *retry* response with ``retryAfterSeconds``), and where an extension serves it:
``/hooks.runtime.cluster.x-k8s.io/v1alpha1/<lowercased hook>/<handler name>``, and discovery at
``/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery``. The client that calls extensions and the SDK that writes
them both read it, so the two cannot disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

GROUP: Final = "hooks.runtime.cluster.x-k8s.io"
VERSION: Final = "v1alpha1"
API_VERSION: Final = f"{GROUP}/{VERSION}"
EXTENSION_CONFIG_API_VERSION: Final = "runtime.cluster.x-k8s.io/v1alpha1"
EXTENSION_CONFIG: Final = "ExtensionConfig"

DISCOVERY = "Discovery"
GENERATE_PATCHES = "GeneratePatches"
VALIDATE_TOPOLOGY = "ValidateTopology"
DISCOVER_VARIABLES = "DiscoverVariables"
BEFORE_CLUSTER_CREATE = "BeforeClusterCreate"
AFTER_CONTROL_PLANE_INITIALIZED = "AfterControlPlaneInitialized"
BEFORE_CLUSTER_UPGRADE = "BeforeClusterUpgrade"
AFTER_CONTROL_PLANE_UPGRADE = "AfterControlPlaneUpgrade"
AFTER_CLUSTER_UPGRADE = "AfterClusterUpgrade"
BEFORE_CLUSTER_DELETE = "BeforeClusterDelete"

#: a handler's defaults when discovery leaves them out (upstream's)
DEFAULT_TIMEOUT_SECONDS = 10
FAILURE_POLICY_FAIL = "Fail"
FAILURE_POLICY_IGNORE = "Ignore"


@dataclass(frozen=True)
class Hook:
    name: str
    #: answers carry ``retryAfterSeconds``; non-zero blocks
    retries: bool = False
    #: a lifecycle hook (called for every registered handler) rather than a topology mutation hook (called by name)
    lifecycle: bool = False

    @property
    def request_kind(self) -> str:
        return f"{self.name}Request"

    @property
    def response_kind(self) -> str:
        return f"{self.name}Response"

    def path(self, handler: str) -> str:
        """Where an extension serves ``handler`` of this hook."""
        return f"/{GROUP}/{VERSION}/{self.name.lower()}/{handler}"


HOOKS: dict[str, Hook] = {
    hook.name: hook
    for hook in (
        Hook(GENERATE_PATCHES),
        Hook(VALIDATE_TOPOLOGY),
        Hook(DISCOVER_VARIABLES),
        Hook(BEFORE_CLUSTER_CREATE, retries=True, lifecycle=True),
        Hook(AFTER_CONTROL_PLANE_INITIALIZED, lifecycle=True),
        Hook(BEFORE_CLUSTER_UPGRADE, retries=True, lifecycle=True),
        Hook(AFTER_CONTROL_PLANE_UPGRADE, retries=True, lifecycle=True),
        Hook(AFTER_CLUSTER_UPGRADE, lifecycle=True),
        Hook(BEFORE_CLUSTER_DELETE, retries=True, lifecycle=True),
    )
}

DISCOVERY_PATH = f"/{GROUP}/{VERSION}/discovery"


def hook(name: str) -> Hook:
    found = HOOKS.get(name)
    if found is None:
        raise KeyError(f"unknown Runtime SDK hook {name!r} (known: {', '.join(sorted(HOOKS))})")
    return found
