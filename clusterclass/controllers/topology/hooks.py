"""The lifecycle-hook seam of the topology controller (spec §4.9): where hooks are called, and their bookkeeping.

The Runtime SDK calls extensions over HTTPS; this module only says *when* and *with what*, through one
interface, :class:`HookCaller` (``async call(hook, cluster, request) -> HookResponse``), which
:class:`~clusterclass.controllers.extensions.RuntimeSDK` implements. With no extension registered every hook
answers at once without blocking, so Clusters reconcile exactly as upstream's do in that case, pending-hooks
annotation included.

Where the hooks are called:

- **in the pure pipeline**, while the control plane's version is decided: ``BeforeClusterUpgrade`` and
  ``AfterControlPlaneUpgrade``. The pipeline stays synchronous and free of I/O: :class:`AnsweredHooks` gives
  it the answers known so far and raises :class:`HookCallNeeded` for a call it has no answer to; the
  reconciler makes that call and runs the pipeline again (:func:`compute_with_hooks`). Two hooks at most,
  so at most three runs of a pipeline that takes a millisecond (:func:`compute_with_calls`, which fetches the
  answers of external patches the same way);
- **around it**, by :class:`LifecycleHooks`: ``BeforeClusterCreate`` before anything is created,
  ``AfterControlPlaneInitialized`` and ``AfterClusterUpgrade`` before the reconcile steps,
  ``BeforeClusterDelete`` while a Cluster is being deleted.

Bookkeeping, as upstream's: hooks due later are listed in the Cluster annotation
``runtime.cluster.x-k8s.io/pending-hooks`` (sorted, comma-separated; gone when empty), written at once so
it survives a restart; a response with ``retryAfterSeconds`` blocks and requeues the Cluster that many
seconds later; a deleting Cluster gets ``runtime.cluster.x-k8s.io/ok-to-delete`` once BeforeClusterDelete
lets it go.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Protocol, TypeVar

from clusterclass.api import constants as c
from clusterclass.api.conditions import is_true
from clusterclass.api.objects import Obj, annotations_of, dig
from clusterclass.controllers.topology.structuredmerge import ServerSideApply
from clusterclass.errors import ClusterClassError
from clusterclass.topology.hooks import ANNOTATION_PENDING_HOOKS, HookResponse, HookTracker, is_pending
from clusterclass.topology.patches.external import ExtensionAnswers, ExtensionCallFailed, ExtensionCallNeeded
from clusterclass.topology.upgrade import UpgradeTracker

T = TypeVar("T")

BEFORE_CLUSTER_CREATE = "BeforeClusterCreate"
AFTER_CONTROL_PLANE_INITIALIZED = "AfterControlPlaneInitialized"
AFTER_CLUSTER_UPGRADE = c.HOOK_AFTER_CLUSTER_UPGRADE
BEFORE_CLUSTER_DELETE = "BeforeClusterDelete"
ANNOTATION_OK_TO_DELETE = "runtime.cluster.x-k8s.io/ok-to-delete"
CONTROL_PLANE_INITIALIZED = "ControlPlaneInitialized"
#: a bound on the pipeline's runs in one reconcile: two hooks, and two calls per external patch, fit many times
MAX_CALLS = 64


class HookCaller(Protocol):
    async def call(self, hook: str, cluster: Obj, request: Obj) -> HookResponse:
        """Call every extension registered for ``hook`` and aggregate their answers (spec §8.1)."""
        ...


class HookCallNeeded(ClusterClassError):
    """The pipeline needs the answer of ``hook`` for ``request``; the reconciler calls it and runs again."""

    def __init__(self, hook: str, cluster: Obj, request: Obj) -> None:
        super().__init__(f"the pipeline needs the answer of {hook}")
        self.hook = hook
        self.cluster = cluster
        self.request = request


@dataclass
class AnsweredHooks:
    """The pure pipeline's :class:`~clusterclass.topology.hooks.LifecycleHooks`: answers known, else ask."""

    answers: dict[str, HookResponse]

    def call(self, hook: str, cluster: Obj, request: Obj) -> HookResponse:
        if hook not in self.answers:
            raise HookCallNeeded(hook, cluster, request)
        return self.answers[hook]


class ExtensionCaller(Protocol):
    async def call_extension(
        self, hook: str, name: str, request: Obj, *, namespace: str | None, settings: Mapping[str, str] | None
    ) -> Obj:
        """The answer of the handler ``name`` of ``hook``; a ClusterClassError when it cannot be had."""
        ...


async def compute_with_calls(
    hooks: HookCaller | None,
    extensions: ExtensionCaller | None,
    namespace: str,
    compute: Callable[[AnsweredHooks | None, ExtensionAnswers | None], Awaitable[T]],
) -> T:
    """Run ``compute`` with the answers it asks for — lifecycle hooks and external patches — fetching each once.

    The pure pipeline raises :class:`HookCallNeeded` or
    :class:`~clusterclass.topology.patches.external.ExtensionCallNeeded` for an answer it lacks; this makes the call
    and runs it again. An extension that fails is an answer too: the pipeline raises it with its context
    (``failed to generate patches for patch "<name>": ...``). With the Runtime SDK off (``hooks`` None) neither is
    given to the pipeline.
    """
    hook_answers: dict[str, HookResponse] = {}
    extension_answers = ExtensionAnswers()
    for _ in range(MAX_CALLS):
        try:
            return await compute(
                AnsweredHooks(hook_answers) if hooks is not None else None,
                extension_answers if extensions is not None else None,
            )
        except HookCallNeeded as need:
            assert hooks is not None
            hook_answers[need.hook] = await hooks.call(need.hook, need.cluster, need.request)
        except ExtensionCallNeeded as need:
            assert extensions is not None
            try:
                answer: Obj | ExtensionCallFailed = await extensions.call_extension(
                    need.hook, need.handler, need.request, namespace=namespace, settings=need.settings
                )
            except ClusterClassError as err:
                answer = ExtensionCallFailed(str(err))
            extension_answers.answers[need.key] = answer
    raise ClusterClassError(
        f"the topology needed more than {MAX_CALLS} answers of lifecycle hooks and extensions in one reconcile"
    )


def pending_hooks(cluster: Obj) -> list[str]:
    value = annotations_of(cluster).get(ANNOTATION_PENDING_HOOKS, "")
    return sorted({hook.strip() for hook in value.split(",") if hook.strip()})


def fully_upgraded(upgrades: UpgradeTracker) -> bool:
    """The control plane stable, and no MachineDeployment or MachinePool upgrading, waiting or deferred."""
    return upgrades.control_plane.is_stable and upgrades.machine_deployments.idle and upgrades.machine_pools.idle


class LifecycleHooks:
    """Calls the hooks around the pipeline for one Cluster and keeps the pending-hooks annotation."""

    def __init__(self, caller: HookCaller, ssa: ServerSideApply) -> None:
        self.caller = caller
        #: writes the Cluster's annotations in the version the management cluster stores it in
        self.ssa = ssa

    async def _call(self, hook: str, cluster: Obj, request: Obj, tracker: HookTracker) -> HookResponse:
        response = await self.caller.call(hook, cluster, request)
        tracker.responses[hook] = response
        return response

    async def before_cluster_create(self, cluster: Obj, tracker: HookTracker) -> HookResponse | None:
        """While the Cluster has neither an infrastructure nor a control plane ref: may it be created?"""
        if dig(cluster, "spec", "infrastructureRef") or dig(cluster, "spec", "controlPlaneRef"):
            return None
        return await self._call(BEFORE_CLUSTER_CREATE, cluster, {}, tracker)

    async def after_control_plane_initialized(self, cluster: Obj, tracker: HookTracker) -> Obj:
        """Mark the hook pending at creation; call it once the control plane is initialized. The Cluster after."""
        if not dig(cluster, "spec", "infrastructureRef") and not dig(cluster, "spec", "controlPlaneRef"):
            cluster = await self.mark(cluster, pending={AFTER_CONTROL_PLANE_INITIALIZED})
        if is_pending(cluster, AFTER_CONTROL_PLANE_INITIALIZED) and is_true(cluster, CONTROL_PLANE_INITIALIZED):
            await self._call(AFTER_CONTROL_PLANE_INITIALIZED, cluster, {}, tracker)
            cluster = await self.mark(cluster, done={AFTER_CONTROL_PLANE_INITIALIZED})
        return cluster

    async def after_cluster_upgrade(self, cluster: Obj, upgrades: UpgradeTracker, tracker: HookTracker) -> Obj:
        """Once the whole Cluster runs the new version, call the hook still pending from the upgrade."""
        if not is_pending(cluster, AFTER_CLUSTER_UPGRADE) or is_pending(cluster, c.HOOK_AFTER_CONTROL_PLANE_UPGRADE):
            return cluster
        if not fully_upgraded(upgrades):
            return cluster
        version = str(dig(cluster, "spec", "topology", "version") or "")
        response = await self._call(AFTER_CLUSTER_UPGRADE, cluster, {"kubernetesVersion": version}, tracker)
        if response.blocking:
            return cluster
        return await self.mark(cluster, done={AFTER_CLUSTER_UPGRADE})

    async def before_cluster_delete(self, cluster: Obj, tracker: HookTracker) -> HookResponse | None:
        """While a deleting Cluster is not ok to delete: may it go? When it may, say so on the Cluster."""
        if ANNOTATION_OK_TO_DELETE in annotations_of(cluster):
            return None
        response = await self._call(BEFORE_CLUSTER_DELETE, cluster, {}, tracker)
        if not response.blocking:
            await self._patch_annotations(cluster, {ANNOTATION_OK_TO_DELETE: ""})
        return response

    async def mark(self, cluster: Obj, *, pending: Iterable[str] = (), done: Iterable[str] = ()) -> Obj:
        """Add ``pending`` to and remove ``done`` from the pending-hooks annotation (written at once, if it changes)."""
        before = pending_hooks(cluster)
        after = sorted((set(before) | set(pending)) - set(done))
        if after == before:
            return cluster
        return await self._patch_annotations(cluster, {ANNOTATION_PENDING_HOOKS: ",".join(after) if after else None})

    async def _patch_annotations(self, cluster: Obj, annotations: dict[str, str | None]) -> Obj:
        """Patch the Cluster's annotations (in the version it is written in); the Cluster after, as given."""
        return await self.ssa.merge_patch_metadata(cluster, {"annotations": annotations})


def requeue_after(tracker: HookTracker) -> float | None:
    """The smallest non-zero ``retryAfterSeconds`` of this reconcile's answers, if any."""
    delays = [response.retry_after_seconds for response in tracker.responses.values() if response.retry_after_seconds]
    return float(min(delays)) if delays else None
