"""Server-side apply as upstream's topology controller does it (spec §3.6): the one place the reconcile says
"apply this intent" and "does this intent change anything?".

**The intent.** Only what the topology owns is sent, as field manager ``capi-topology`` with ``force``:
``apiVersion``, ``kind``, ``metadata.name``/``namespace``/``uid``/``labels``/``annotations``/
``ownerReferences`` and ``spec`` of a desired object; of the Cluster only the labels
``cluster.x-k8s.io/cluster-name`` and ``topology.cluster.x-k8s.io/owned`` and ``spec.infrastructureRef``/
``spec.controlPlaneRef``. Ignore paths (an empty control plane endpoint of the InfrastructureCluster) are
removed, and maps their removal leaves empty pruned. An update carries the current object's uid, so applying to an
object deleted and created again under the same name fails instead of writing to the wrong object.

**Change detection** (:meth:`ServerSideApply.diff`), without writing: a request id made of the object's group,
version, kind, namespace, name, *the state of the current object the answer depends on* and a hash of the intent is
looked up in a cache of answers that were "no change"; a hit costs no request at all, so a converged Cluster is
reconciled with zero requests. An answer is kept while it is used: each hit keeps it another 30 minutes (three sync
periods), so the resync every 10 minutes finds the answers of the one before and an idle management cluster is asked
nothing; upstream forgets every answer 10 minutes after it was made, so each resync of an idle Cluster costs it its
dry runs again (``docs/upstream-differences.md``). Upstream keys its cache on the current resourceVersion, so every
status write a provider makes (a MachinePool's replicas, a KubeadmConfig's conditions) costs it two dry runs again;
the answer depends only on what the dry runs read — the uid, ``metadata.generation`` (which a custom resource bumps
on every change but to metadata and status), the labels, annotations and ownerReferences, and our own ``Apply``
entry of the managed fields — so that is the key here (the resourceVersion where an object has no generation), and a
status write costs nothing. On a miss, two server-side-apply dry runs, sent together: the intent, and the current
object filtered to the same paths (so both sides get the server's latest defaulting), both with the
``topology.cluster.x-k8s.io/dry-run`` annotation that tells provider webhooks to skip immutability checks. Of each
answer the annotation, ``cluster.x-k8s.io/conversion-data`` and every managedFields entry but ``capi-topology``'s
own ``Apply`` one (timestamps cleared) are dropped, both are filtered to the allowed paths plus
``metadata.managedFields``, and a JSON merge patch between them says whether anything changes, and whether ``spec``
does. Because our managedFields entry is compared too, a field another manager took over shows up as a change, and
the next apply takes it back.

**The version written.** The pipeline computes Cluster API's core kinds in v1beta1; a Cluster API kind is applied
in the version :class:`WriteVersions` names (the manager's: v1beta2 wherever the management cluster serves it,
as upstream v1.14's controller writes, so its ``capi-topology`` entries and ours are the same), the intent and
the current object converted to it, and the answer converted back. A provider object whose kind the
conversions do not know is written in the version its template gave it. Every written object's ownerReferences to a
Cluster API kind name the version that kind is written in (v1beta2 references, as upstream v1.14 writes them).

**The Cluster** is the user's object. On a management cluster serving it in v1beta2 it is not applied: as upstream
v1.14, the topology compares what it owns of it (the cluster-name and owned labels, the
``topology.internal.cluster.x-k8s.io/upgrade-step`` annotation, the two refs) with the cached Cluster and sends a JSON
merge patch of the differences, if any — no dry run and no ``capi-topology`` entry in its managedFields, so a
Cluster upstream's controller has reconciled is not written again. On one serving only v1beta1 (upstream v1.6's
era) it is applied with the paths above, as v1.6 did.

Why dry runs rather than comparing locally: only the server knows its defaulting, its list-map keys and
its ownership rules; comparing its own answers is what keeps the topology from fighting the server (and
from rewriting an object moved over from upstream's controller: the answers are the same).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.contracts import bundled_contracts
from clusterclass.api.conversion import CONVERSION_DATA_ANNOTATION, ApiVersions, convert, convertible
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.merge_patch import create_merge_patch, merge_patch
from clusterclass.api.objects import Obj, dig, name_of, namespace_of
from clusterclass.kube.client import Client
from clusterclass.kube.workqueue import Clock, RealClock
from clusterclass.topology import health
from clusterclass.topology.changes import remove_path
from clusterclass.topology.reconcile import DiffResult, Path, Paths

#: the field manager of every topology write, upstream's, so ownership is interchangeable with it
TOPOLOGY_MANAGER = c.FIELD_MANAGER
DRY_RUN_ANNOTATION = c.ANNOTATION_DRY_RUN
#: how long a "no change" answer is remembered after it was last used: three of the default 10-minute sync periods,
#: so a resync always finds the answers the one before used, whatever its jitter
CACHE_TTL = 1800.0

OBJECT_PATHS: Paths = (
    ("apiVersion",),
    ("kind",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "uid"),
    ("metadata", "labels"),
    ("metadata", "annotations"),
    ("metadata", "ownerReferences"),
    ("spec",),
)
CLUSTER_PATHS: Paths = (
    ("apiVersion",),
    ("kind",),
    ("metadata", "name"),
    ("metadata", "namespace"),
    ("metadata", "uid"),
    ("metadata", "labels", c.LABEL_CLUSTER_NAME),
    ("metadata", "labels", c.LABEL_TOPOLOGY_OWNED),
    ("metadata", "annotations", c.ANNOTATION_UPGRADE_STEP),
    ("spec", "infrastructureRef"),
    ("spec", "controlPlaneRef"),
)
MANAGED_FIELDS: Path = ("metadata", "managedFields")


# --- filtering ------------------------------------------------------------------------------------------


def _copy_path(source: Obj, target: Obj, path: Path) -> None:
    value: Any = source
    for step in path:
        if not isinstance(value, dict) or step not in value:
            return
        value = value[step]
    holder = target
    for step in path[:-1]:
        holder = holder.setdefault(step, {})
    holder[path[-1]] = json_copy(value)


def filter_object(obj: Obj, allowed: Iterable[Path], ignore: Paths = ()) -> Obj:
    """A copy of ``obj`` with only the ``allowed`` paths and without the ``ignore`` paths.

    As upstream's filter, a map is dropped only when removing an ignored path empties it: an empty map the object
    has on purpose stays (``backend: {inMemory: {}}`` of an in-memory DevCluster chooses its backend by being
    there). Empty labels and annotations are dropped, as Go's ``SetLabels``/``SetAnnotations`` drop them.
    """
    filtered: Obj = {}
    for path in allowed:
        _copy_path(obj, filtered, path)
    for path in ignore:
        remove_path(filtered, path)
    metadata = filtered.get("metadata")
    if isinstance(metadata, dict):
        for key in ("labels", "annotations"):
            if metadata.get(key) == {}:
                del metadata[key]
    return filtered


def intent_of(desired: Obj, *, current: Obj | None, ignore: Paths = (), cluster: bool = False) -> Obj:
    """What is applied for ``desired``: its topology-owned fields, with the current uid on an update."""
    intent = filter_object(desired, CLUSTER_PATHS if cluster else OBJECT_PATHS, ignore)
    metadata = intent.setdefault("metadata", {})
    metadata.pop("uid", None)
    uid = dig(current, "metadata", "uid") if current is not None else None
    if uid:
        metadata["uid"] = uid
    return intent


def _with_dry_run_annotation(obj: Obj) -> Obj:
    annotated: Obj = json_copy(obj)
    annotated.setdefault("metadata", {}).setdefault("annotations", {})[DRY_RUN_ANNOTATION] = ""
    return annotated


def _without_fields_v1_annotations(fields: Any) -> Any:
    """``fieldsV1`` without the dry-run and conversion annotations (leaves are ``{}``: only their parents go
    when the removal empties them)."""
    metadata = fields.get("f:metadata") if isinstance(fields, dict) else None
    annotations = metadata.get("f:annotations") if isinstance(metadata, dict) else None
    if isinstance(annotations, dict):
        for name in (DRY_RUN_ANNOTATION, CONVERSION_DATA_ANNOTATION):
            annotations.pop(f"f:{name}", None)
        if not annotations:
            del metadata["f:annotations"]  # type: ignore[union-attr]
            if not metadata:
                del fields["f:metadata"]
    return fields


def _is_our_apply(entry: Obj) -> bool:
    """Whether a managedFields entry is the topology's own apply to the object (not to a subresource)."""
    return (
        entry.get("manager") == TOPOLOGY_MANAGER and entry.get("operation") == "Apply" and not entry.get("subresource")
    )


def _cleaned(obj: Obj, allowed: Paths) -> Obj:
    """A dry run's answer, as it is compared: our own Apply ownership and the allowed paths only."""
    cleaned = json_copy(obj)
    annotations = dig(cleaned, "metadata", "annotations")
    if isinstance(annotations, dict):
        for name in (DRY_RUN_ANNOTATION, CONVERSION_DATA_ANNOTATION):
            annotations.pop(name, None)
    entries = []
    for entry in dig(cleaned, *MANAGED_FIELDS) or []:
        if _is_our_apply(entry):
            entry = {k: v for k, v in entry.items() if k != "time"}
            entry["fieldsV1"] = _without_fields_v1_annotations(entry.get("fieldsV1") or {})
            entries.append(entry)
    cleaned.setdefault("metadata", {})["managedFields"] = entries
    return filter_object(cleaned, (*allowed, MANAGED_FIELDS))


def _cluster_patch(have: Obj, want: Obj) -> Obj:
    """The merge patch that moves Cluster ``have`` to ``want`` in what the topology owns of it (its two labels, the
    upgrade-step annotation, the refs), both in the written version; empty when nothing differs."""
    patch: Obj = {}
    for key in (c.LABEL_CLUSTER_NAME, c.LABEL_TOPOLOGY_OWNED):
        value = (dig(want, "metadata", "labels") or {}).get(key)
        if value is not None and (dig(have, "metadata", "labels") or {}).get(key) != value:
            patch.setdefault("metadata", {}).setdefault("labels", {})[key] = value
    step = (dig(want, "metadata", "annotations") or {}).get(c.ANNOTATION_UPGRADE_STEP)
    if (dig(have, "metadata", "annotations") or {}).get(c.ANNOTATION_UPGRADE_STEP) != step:
        patch.setdefault("metadata", {}).setdefault("annotations", {})[c.ANNOTATION_UPGRADE_STEP] = step
    for ref in ("infrastructureRef", "controlPlaneRef"):
        value = dig(want, "spec", ref)
        if value is not None and dig(have, "spec", ref) != value:
            patch.setdefault("spec", {})[ref] = value
    return patch


# --- the answers cache ------------------------------------------------------------------------------------


class AnswerCache:
    """Request ids answered "no change", each remembered for ``ttl`` seconds after it was last looked up.

    The key holds everything the answer depends on (module doc), so an answer in use never goes stale: the expiry
    only lets go of the answers of objects gone or changed.

    Expired ids are swept out when the cache has doubled since the last sweep (``sweep_floor`` ids at the
    least), so a sweep's cost is paid back by the adds before it: sweeping on every add once the
    cache held many live answers made each add copy the whole cache, quadratic in the Clusters reconciled
    within ``ttl``.
    """

    def __init__(self, ttl: float = CACHE_TTL, clock: Clock | None = None, *, sweep_floor: int = 10_000) -> None:
        self.ttl = ttl
        self.clock: Clock = clock or RealClock()
        self._expiry: dict[str, float] = {}
        self._sweep_floor = sweep_floor
        self._sweep_at = sweep_floor

    def __contains__(self, request_id: object) -> bool:
        if not isinstance(request_id, str):
            return False
        expiry = self._expiry.get(request_id)
        if expiry is None:
            return False
        now = self.clock.now()
        if expiry < now:
            del self._expiry[request_id]
            return False
        self._expiry[request_id] = now + self.ttl
        return True

    def add(self, request_id: str) -> None:
        now = self.clock.now()
        if len(self._expiry) >= self._sweep_at:
            self._expiry = {k: v for k, v in self._expiry.items() if v >= now}
            self._sweep_at = max(self._sweep_floor, 2 * len(self._expiry))
        self._expiry[request_id] = now + self.ttl

    def __len__(self) -> int:
        return len(self._expiry)


def _digest(value: Any) -> str:
    return hashlib.sha256(json.dumps(value, sort_keys=True, separators=(",", ":")).encode()).hexdigest()[:16]


def answer_depends_on(current: Obj) -> dict[str, Any]:
    """Besides the generation, what a change-detection answer about ``current`` depends on (module doc), by name:
    its uid, labels, annotations, ownerReferences and our own Apply entry (timestamps left out)."""
    metadata = current.get("metadata") or {}
    # the conversion-data annotation is left out, as the comparison leaves it out: a status write changes it
    # on an object read in another version than it is stored in
    annotations = {k: v for k, v in (metadata.get("annotations") or {}).items() if k != CONVERSION_DATA_ANNOTATION}
    return {
        "uid": metadata.get("uid"),
        "labels": metadata.get("labels"),
        "annotations": annotations,
        "ownerReferences": metadata.get("ownerReferences"),
        "own apply entry": [
            {k: v for k, v in entry.items() if k != "time"}
            for entry in metadata.get("managedFields") or []
            if _is_our_apply(entry)
        ],
    }


def answer_state(current: Obj) -> str:
    """What a change-detection answer about ``current`` depends on (module doc): ``<generation>.<hash>`` of
    :func:`answer_depends_on`; ``rv<resourceVersion>`` without a generation."""
    metadata = current.get("metadata") or {}
    generation = metadata.get("generation")
    if generation is None:
        return f"rv{metadata.get('resourceVersion')}"
    return f"{generation}.{_digest(answer_depends_on(current))}"


def request_id(current: Obj, intent: Obj) -> str:
    """``<apiVersion>, Kind=<kind>.<namespace>/<name>.<answer state>.<hash of the intent>`` (module doc)."""
    return (
        f"{current.get('apiVersion')}, Kind={current.get('kind')}.{namespace_of(current)}/{name_of(current)}."
        f"{answer_state(current)}.{_digest(intent)}"
    )


# --- apply and dry run ------------------------------------------------------------------------------------


@dataclass
class DryRunCounts:
    """Requests made, for tests and the benchmark: dry runs, cache hits, applies."""

    dry_runs: int = 0
    cache_hits: int = 0
    applies: int = 0


#: the version a Cluster API kind is written in (``api_version`` and kind given → the one to write)
WriteVersions = Callable[[str, str], Awaitable[str]]


async def _as_given(api_version: str, _kind: str) -> str:
    return api_version


class ServerSideApply:
    """Applies intents through ``client`` and detects changes by dry run (module doc).

    ``write_versions`` chooses the version each Cluster API kind is written in (default: as given);
    ``api_versions`` the reference versions of a conversion (the management cluster's CRDs).
    """

    def __init__(
        self,
        client: Client,
        *,
        cache: AnswerCache | None = None,
        write_versions: WriteVersions = _as_given,
        api_versions: ApiVersions | None = None,
    ) -> None:
        self.client = client
        self.cache = cache or AnswerCache()
        self.counts = DryRunCounts()
        self.write_versions = write_versions
        self.api_versions = api_versions if api_versions is not None else bundled_contracts()

    async def with_owner_versions(self, obj: Obj) -> Obj:
        """``obj`` whose ownerReferences to Cluster API kinds name the version those kinds are written in.

        The pipeline refers to the Cluster in v1beta1; upstream v1.14 owns its objects by a v1beta2 reference and
        keeps other writers' references at the newest version, so a v1beta1 one would be rewritten back and forth.
        """
        references = dig(obj, "metadata", "ownerReferences")
        if not isinstance(references, list) or not references:
            return obj
        written = []
        for reference in references:
            api_version, kind = str(reference.get("apiVersion") or ""), str(reference.get("kind") or "")
            if "/" in api_version and convertible(api_version.rpartition("/")[0], kind):
                wanted = await self.write_versions(api_version, kind)
                if wanted != api_version:
                    reference = {**reference, "apiVersion": wanted}
            written.append(reference)
        if written == references:
            return obj
        return {**obj, "metadata": {**obj["metadata"], "ownerReferences": written}}

    async def _written(self, obj: Obj, *, intent: bool = True) -> Obj:
        """``obj`` in the version its kind is written in (module doc); an ``intent``'s ownerReferences too (a
        current object's are what other writers made them)."""
        if intent:
            obj = await self.with_owner_versions(obj)
        api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
        wanted = await self._write_version(obj)
        if intent and kind == c.KIND_MACHINE_HEALTH_CHECK and wanted == c.CLUSTER_API_VERSION:
            return health.with_v1beta1_defaults(obj)  # v1.6's generation owns maxUnhealthy (topology.health doc)
        return obj if wanted == api_version else convert(obj, wanted, api_versions=self.api_versions)

    async def _write_version(self, obj: Obj) -> str:
        """The version ``obj`` is written in: the one :class:`WriteVersions` names for a kind the conversions know,
        else its own."""
        api_version, kind = str(obj.get("apiVersion") or ""), str(obj.get("kind") or "")
        if "/" not in api_version or not convertible(api_version.rpartition("/")[0], kind):
            return api_version
        return await self.write_versions(api_version, kind)

    def _back(self, answer: Obj, api_version: str) -> Obj:
        """A server's answer in the version the pipeline gave (a copy when converted)."""
        if answer.get("apiVersion") == api_version:
            return answer
        return convert(answer, api_version, api_versions=self.api_versions)

    # --- the Cluster on a v1beta2 management cluster: a merge patch, as upstream v1.14 -------------------------

    async def _cluster_patch_version(self, desired: Obj) -> str | None:
        """The version the Cluster is merge-patched in, where Clusters are v1beta2; None where it is applied (module
        doc)."""
        given = str(desired.get("apiVersion") or "")
        written = await self.write_versions(given, c.KIND_CLUSTER)
        return written if written != given else None

    # --- metadata only ----------------------------------------------------------------------------------------

    async def merge_patch_metadata(self, obj: Obj, metadata: Obj) -> Obj:
        """Merge-patch ``metadata`` into ``obj`` in the version its kind is written in; the object after, in the
        version ``obj`` was given in.

        A write in another version than the stored one leaves a managedFields entry in that version, and
        kube-apiserver then converts the entry's fields through the conversion webhook on every later write of the
        object by anyone (four conversions per write instead of one, measured on the Go-built kube-apiserver): even
        a label or annotation goes in the written version.
        """
        written = await self._write_version(obj)
        patched = await self.client.patch(
            written, str(obj.get("kind")), name_of(obj), {"metadata": metadata}, namespace=namespace_of(obj)
        )
        return self._back(patched, str(obj.get("apiVersion") or ""))

    # --- every object ------------------------------------------------------------------------------------------

    async def apply(
        self, desired: Obj, *, current: Obj | None = None, ignore: Paths = (), cluster: bool = False
    ) -> Obj:
        """Apply the intent of ``desired`` (creating the object when ``current`` is None); the object as stored."""
        self.counts.applies += 1
        version = await self._cluster_patch_version(desired) if cluster and current is not None else None
        if current is not None and version is not None:
            patch = _cluster_patch(await self._written(current, intent=False), await self._written(desired))
            patched = await self.client.patch(
                version, c.KIND_CLUSTER, name_of(current), patch, namespace=namespace_of(current)
            )
            return self._back(patched, str(desired.get("apiVersion") or ""))
        intent = intent_of(desired, current=current, ignore=ignore, cluster=cluster)
        written = await self.client.apply(await self._written(intent), field_manager=TOPOLOGY_MANAGER, force=True)
        return self._back(written, str(desired.get("apiVersion") or ""))

    async def diff(self, current: Obj, desired: Obj, *, ignore: Paths = (), cluster: bool = False) -> DiffResult:
        """Whether applying the intent of ``desired`` would change ``current`` (module doc)."""
        given = str(desired.get("apiVersion") or "")
        if cluster and await self._cluster_patch_version(desired) is not None:
            have = await self._written(current, intent=False)
            patch = _cluster_patch(have, await self._written(desired))
            after = self._back(merge_patch(have, patch), given)
            return DiffResult(after=after, has_changes=bool(patch), has_spec_changes="spec" in patch)
        # the answer is looked up before anything is converted (a hit, most reconciles, costs no conversion): the
        # conversions are deterministic, so the objects as given and the version written decide it
        intent = intent_of(desired, current=current, ignore=ignore, cluster=cluster)
        key = f"{request_id(current, intent)}@{await self._write_version(intent)}"
        if key in self.cache:
            self.counts.cache_hits += 1
            return DiffResult(after=self._back(current, given), has_changes=False, has_spec_changes=False)
        current = await self._written(current, intent=False)
        allowed = CLUSTER_PATHS if cluster else OBJECT_PATHS
        intent = await self._written(intent)
        self.counts.dry_runs += 2
        modified, original = await asyncio.gather(
            self.client.apply(
                _with_dry_run_annotation(intent), field_manager=TOPOLOGY_MANAGER, force=True, dry_run=True
            ),
            self.client.apply(
                _with_dry_run_annotation(filter_object(current, allowed)),
                field_manager=TOPOLOGY_MANAGER,
                force=True,
                dry_run=True,
            ),
        )
        original.setdefault("metadata", {})["managedFields"] = json_copy(dig(current, *MANAGED_FIELDS) or [])
        patch = create_merge_patch(_cleaned(original, allowed), _cleaned(modified, allowed))
        has_changes = bool(patch)
        if not has_changes:
            self.cache.add(key)
        return DiffResult(after=self._back(modified, given), has_changes=has_changes, has_spec_changes="spec" in patch)
