"""The ClusterClass controller (spec §7.2): publishes a ClusterClass's variables and adopts its templates.

The topology controller waits for it: a Cluster is reconciled only once its ClusterClass's
``status.observedGeneration`` equals its ``metadata.generation``, which this controller sets only after a
reconcile without error. One reconcile of a ClusterClass (paused or deleting ones are skipped):

1. **Variables**: ``status.variables`` from ``spec.variables`` (each ``from: inline``) plus those the
   ClusterClass's external patches discover (:class:`VariableDiscovery`, the seam the Runtime SDK fills;
   by default none), sorted by name, with ``definitionsConflict`` where definitions of one name differ.
   Condition ``VariablesReconciled``: True, or False/``VariableDiscoveryFailed``/Error with
   ``VariableDiscovery failed: <errors>`` (the status variables are then left as they were).
2. **Templates**: every template the ClusterClass references (infrastructure, control plane and its
   machine infrastructure, every MachineDeployment and **MachinePool** class's bootstrap and infrastructure)
   gets a non-controller ownerReference to the ClusterClass; a template that does not exist is an error
   (``Could not find external object for the ClusterClass. refGroupVersionKind: ..., refName: ...``); a
   paused one is left alone.
3. **Ref versions**: each ref's apiVersion is compared with the newest version its CRD declares for the newest
   contract this implementation is compatible with (the CRD labels ``cluster.x-k8s.io/v1beta2``, then
   ``cluster.x-k8s.io/v1beta1``, as upstream v1.14); condition ``RefVersionsUpToDate``: True, or
   False/``OutdatedRefVersions``/Warning listing ``Ref "<gvk> <ns>/<name>" should be "<gvk'> <ns>/<name>"``
   (reported only: refs are not rewritten).

Every condition is written twice: as the v1beta1 condition above (upstream v1.6's words, kept under
``status.deprecated.v1beta1`` of a v1beta2 ClusterClass) and as upstream v1.14's v1beta2 condition
(``RefVersionsUpToDate`` with reasons ``RefVersionsUpToDate``/``RefVersionsNotUpToDate``/``InternalError``,
``VariablesReady`` with ``VariablesReady``/``VariableDiscoveryFailed``).

The status is written only when it changes, and reads come from the caches.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from clusterclass.api import constants as c
from clusterclass.api.conditions import (
    Condition,
    MetaCondition,
    conditions_of,
    false,
    meta_conditions_of,
    true,
    with_conditions,
    with_meta_conditions,
)
from clusterclass.api.contracts import COMPATIBLE_CONTRACTS, latest_contract_and_version
from clusterclass.api.objects import Obj, annotations_of, dig, group_of, name_of, namespace_of, owner_references_of
from clusterclass.controllers.runtime.controller import DEFAULT_WORKERS, Controller, split_key
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.controllers.runtime.predicates import has_filter_label
from clusterclass.errors import ClusterClassError
from clusterclass.kube.errors import ApiError
from clusterclass.kube.gotext import rfc3339
from clusterclass.runtimesdk.discovery import VariableDiscoveryError
from clusterclass.topology.check.clusterclass import template_refs
from clusterclass.topology.variables import status_variables

logger = logging.getLogger(__name__)

CONTROLLER_NAME = "clusterclass"
VARIABLES_RECONCILED = "VariablesReconciled"
VARIABLE_DISCOVERY_FAILED = "VariableDiscoveryFailed"
REF_VERSIONS_UP_TO_DATE = "RefVersionsUpToDate"
OUTDATED_REF_VERSIONS = "OutdatedRefVersions"
#: the v1beta2 condition types and reasons (upstream v1.14), where they differ from the v1beta1 ones
VARIABLES_READY = "VariablesReady"
REF_VERSIONS_NOT_UP_TO_DATE = "RefVersionsNotUpToDate"
CRD_API_VERSION = "apiextensions.k8s.io/v1"

#: variables discovered per external patch (patch name → variable definitions), or an error per patch
VariableDiscovery = Callable[[Obj], Awaitable[Mapping[str, Sequence[Any]]]]


async def no_discovery(_cluster_class: Obj) -> Mapping[str, Sequence[Any]]:
    """The default: no Runtime SDK, no discovered variables."""
    return {}


class ReconcileFailed(ClusterClassError):
    pass


def gvk_string(api_version: str, kind: str) -> str:
    """A GroupVersionKind as Go prints it: ``infrastructure.cluster.x-k8s.io/v1beta1, Kind=DockerClusterTemplate``."""
    return f"{api_version}, Kind={kind}"


@dataclass(frozen=True)
class OutdatedRef:
    """A template reference at an older apiVersion than its CRD's newest for the newest compatible contract."""

    api_version: str
    latest: str
    kind: str
    namespace: str
    name: str

    @property
    def v1beta1_message(self) -> str:
        current, latest = gvk_string(self.api_version, self.kind), gvk_string(self.latest, self.kind)
        return f'Ref "{current} {self.namespace}/{self.name}" should be "{latest} {self.namespace}/{self.name}"'

    @property
    def v1beta2_line(self) -> str:
        current, latest = self.api_version.rpartition("/")[2], self.latest.rpartition("/")[2]
        return f"* {self.kind} {self.name}: current: {current}, latest: {latest}"


class ClusterClassController:
    """Reconciles ClusterClasses (module doc). Create, then :meth:`setup` before the manager starts."""

    def __init__(
        self,
        manager: Manager,
        *,
        workers: int = DEFAULT_WORKERS,
        watch_filter: str | None = None,
        discovery: VariableDiscovery = no_discovery,
    ) -> None:
        self.manager = manager
        self.discovery = discovery
        self.controller = Controller(CONTROLLER_NAME, self.reconcile, workers=workers, clock=manager.clock)
        self._filter = has_filter_label(watch_filter)

    async def setup(self) -> ClusterClassController:
        classes = await self.manager.informer(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS)
        self.controller.watch(classes, lambda obj: [f"{namespace_of(obj)}/{name_of(obj)}"], self._filter)
        await self.manager.informer(CRD_API_VERSION, "CustomResourceDefinition")
        self.manager.add(self.controller)
        return self

    async def reconcile(self, key: str) -> float | None:
        namespace, name = split_key(key)
        reader = self.manager.reader
        cluster_class = reader.get(c.CLUSTER_API_VERSION, c.KIND_CLUSTER_CLASS, namespace or "", name)
        if cluster_class is None:
            return None
        if c.ANNOTATION_PAUSED in annotations_of(cluster_class) or dig(cluster_class, "metadata", "deletionTimestamp"):
            return None
        conditions: list[Condition] = []
        current: list[MetaCondition] = []
        errors: list[str] = []
        variables = dig(cluster_class, "status", "variables")
        try:
            discovered = await self.discovery(cluster_class)
            variables = status_variables(dig(cluster_class, "spec", "variables") or [], discovered)
            conditions.append(true(VARIABLES_RECONCILED))
            current.append(MetaCondition(VARIABLES_READY, "True", VARIABLES_READY))
        except VariableDiscoveryError as err:
            message = f"VariableDiscovery failed: {err}"
            conditions.append(false(VARIABLES_RECONCILED, VARIABLE_DISCOVERY_FAILED, "Error", message))
            current.append(MetaCondition(VARIABLES_READY, "False", VARIABLE_DISCOVERY_FAILED, str(err)))
            errors.append(message)
        try:
            outdated = await self._reconcile_templates(cluster_class)
        except ReconcileFailed as err:
            errors.append(str(err))
            current.append(
                MetaCondition(
                    REF_VERSIONS_UP_TO_DATE, "Unknown", "InternalError", "Please check controller logs for errors"
                )
            )
        else:
            if outdated:
                legacy = ", ".join(ref.v1beta1_message for ref in outdated)
                conditions.append(false(REF_VERSIONS_UP_TO_DATE, OUTDATED_REF_VERSIONS, "Warning", legacy))
                lines = ["The following templateRefs are not using the latest apiVersion:"]
                lines += [ref.v1beta2_line for ref in outdated]
                current.append(
                    MetaCondition(REF_VERSIONS_UP_TO_DATE, "False", REF_VERSIONS_NOT_UP_TO_DATE, "\n".join(lines))
                )
            else:
                conditions.append(true(REF_VERSIONS_UP_TO_DATE))
                current.append(MetaCondition(REF_VERSIONS_UP_TO_DATE, "True", REF_VERSIONS_UP_TO_DATE))
        await self._write_status(cluster_class, variables, conditions, current, reconciled=not errors)
        if errors:
            raise ReconcileFailed("; ".join(errors))
        return None

    # --- templates ------------------------------------------------------------------------------------------

    async def _reconcile_templates(self, cluster_class: Obj) -> list[OutdatedRef]:
        """Own every referenced template; the refs to outdated versions."""
        refs: dict[tuple[str, str, str, str], Obj] = {}
        for ref in template_refs(cluster_class):
            if isinstance(ref, dict) and ref.get("name"):
                namespace = str(ref.get("namespace") or namespace_of(cluster_class))
                refs[(str(ref.get("apiVersion")), str(ref.get("kind")), namespace, str(ref["name"]))] = ref
        outdated = []
        for api_version, kind, namespace, name in refs:
            template = await self.manager.get(api_version, kind, namespace, name)
            if template is None:
                raise ReconcileFailed(
                    "Could not find external object for the ClusterClass. "
                    f"refGroupVersionKind: {gvk_string(api_version, kind)}, refName: {name}"
                )
            if c.ANNOTATION_PAUSED in annotations_of(template):
                continue
            await self._adopt(template, cluster_class)
            latest = await self._latest_api_version(api_version, kind)
            if latest != api_version:
                outdated.append(OutdatedRef(api_version, latest, kind, namespace, name))
        return outdated

    async def _adopt(self, template: Obj, cluster_class: Obj) -> None:
        owner = {
            "apiVersion": c.CLUSTER_API_VERSION,
            "kind": c.KIND_CLUSTER_CLASS,
            "name": name_of(cluster_class),
            "uid": dig(cluster_class, "metadata", "uid"),
        }
        references = [dict(ref) for ref in owner_references_of(template)]
        if any(ref.get("uid") == owner["uid"] for ref in references):
            return
        try:
            await self.manager.client.patch(
                str(template.get("apiVersion")),
                str(template.get("kind")),
                name_of(template),
                {
                    "metadata": {
                        "resourceVersion": dig(template, "metadata", "resourceVersion"),
                        "ownerReferences": [*references, owner],
                    }
                },
                namespace=namespace_of(template),
            )
        except ApiError as err:
            raise ReconcileFailed(
                f"failed to set the ownerReference of {template.get('kind')} {name_of(template)}: {err}"
            ) from err

    async def _latest_api_version(self, api_version: str, kind: str) -> str:
        """The newest apiVersion of ``kind``'s group that its CRD's contract labels name for the newest compatible
        contract (upstream's ``UpdateReferenceAPIContract``)."""
        group = group_of(api_version)
        crds = await self.manager.informer(CRD_API_VERSION, "CustomResourceDefinition")
        crd = next(
            (o for o in crds.list() if dig(o, "spec", "group") == group and dig(o, "spec", "names", "kind") == kind),
            None,
        )
        found = latest_contract_and_version(dig(crd, "metadata", "labels") or {}) if crd is not None else None
        if found is None:
            what = name_of(crd) if crd is not None else f"of {kind}.{group}"
            raise ReconcileFailed(
                f"failed to get the latest apiVersion of {gvk_string(api_version, kind)}: cannot find any versions "
                f"matching contract versions {list(COMPATIBLE_CONTRACTS)} for CRD {what} as contract version "
                "label(s) are either missing or empty"
            )
        return f"{group}/{found[1]}" if group else found[1]

    # --- status -----------------------------------------------------------------------------------------------

    async def _write_status(
        self,
        cluster_class: Obj,
        variables: Any,
        conditions: list[Condition],
        current: list[MetaCondition],
        *,
        reconciled: bool,
    ) -> None:
        status: Obj = {}
        # none is no list at all, as upstream's omitempty writes it (and as the server hands it back: an empty list
        # written would differ from what is read at every reconcile)
        if variables != (dig(cluster_class, "status", "variables") or []) and variables is not None:
            status["variables"] = variables or None
        now = rfc3339(datetime.now(UTC))
        updated = with_conditions(conditions_of(cluster_class), conditions, now)
        if updated is not None:
            status["conditions"] = updated
        generation = dig(cluster_class, "metadata", "generation")
        updated_current = with_meta_conditions(meta_conditions_of(cluster_class), current, now, generation)
        served_in_v1beta2 = await self.manager.serves_v1beta2(c.KIND_CLUSTER_CLASS)
        # a ClusterClass whose CRD has no status.v1beta2 (served only in v1beta1, before v1.9) would have it pruned
        # and written again at every reconcile
        if updated_current is not None and (served_in_v1beta2 or "v1beta2" in (cluster_class.get("status") or {})):
            status["v1beta2"] = {"conditions": updated_current}
        if reconciled and generation != dig(cluster_class, "status", "observedGeneration"):
            status["observedGeneration"] = generation
        if not status:
            return
        patch = {"metadata": {"resourceVersion": dig(cluster_class, "metadata", "resourceVersion")}, "status": status}
        await self.manager.client.patch(
            c.CLUSTER_API_VERSION,
            c.KIND_CLUSTER_CLASS,
            name_of(cluster_class),
            patch,
            namespace=namespace_of(cluster_class),
            status=True,
        )
