"""The seam for Runtime SDK lifecycle hooks that upgrade sequencing consults (spec §4.4, §4.9).

Computing the control plane version may call ``BeforeClusterUpgrade`` and
``AfterControlPlaneUpgrade``, and the answers hold or release workers. The pure pipeline does not
call extensions itself: it calls a :class:`LifecycleHooks` given to it (None means the Runtime
SDK is off and no hook is ever called). Which hooks should be marked pending or done on the Cluster
is recorded in :class:`HookTracker` for the controller to persist; ``plan`` only reports it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from clusterclass.api.objects import Obj, annotations_of

ANNOTATION_PENDING_HOOKS = "runtime.cluster.x-k8s.io/pending-hooks"


@dataclass(frozen=True)
class HookResponse:
    retry_after_seconds: int = 0
    message: str = ""

    @property
    def blocking(self) -> bool:
        return self.retry_after_seconds > 0


class LifecycleHooks(Protocol):
    def call(self, hook: str, cluster: Obj, request: Obj) -> HookResponse:
        """Call every extension registered for ``hook`` and aggregate their answers."""
        ...


@dataclass
class HookTracker:
    """Answers received in this computation and the pending-hook marks it wants persisted."""

    responses: dict[str, HookResponse] = field(default_factory=dict)
    marked_pending: set[str] = field(default_factory=set)
    marked_done: set[str] = field(default_factory=set)

    def is_blocking(self, hook: str) -> bool:
        response = self.responses.get(hook)
        return response is not None and response.blocking


def is_pending(cluster: Obj, hook: str) -> bool:
    """Whether ``hook`` is listed in the Cluster's ``runtime.cluster.x-k8s.io/pending-hooks``."""
    value = annotations_of(cluster).get(ANNOTATION_PENDING_HOOKS, "")
    return hook in {h.strip() for h in value.split(",") if h.strip()}
