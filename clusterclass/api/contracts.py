"""Cluster API contract versions: which API version of a provider kind implements which contract.

A provider's CRD says it with labels (upstream's "API version labels"): ``cluster.x-k8s.io/v1beta2: v1beta2``
means the CRD's version ``v1beta2`` implements the v1beta2 contract; several versions are joined with ``_``
(``v1beta1_v1beta2``). Upstream v1.14 implements the v1beta2 contract and still accepts v1beta1 providers
(until v1beta1 is removed), so:

- a reference that names only a group and kind (v1beta2's ``ContractVersionedObjectReference``) is read at the
  newest version of the newest compatible contract the CRD lists (:meth:`CrdContracts.api_version`, upstream's
  ``contract.GetAPIVersion``);
- where a provider object keeps the fields the topology writes depends on the contract its version implements
  (:meth:`CrdContracts.contract_of`, upstream's ``GetContractVersionForVersion``): a v1beta2-contract control
  plane keeps its machine template's infrastructure reference at ``spec.machineTemplate.spec.infrastructureRef``.

:class:`CrdContracts` answers from CRDs (the management cluster's, the bundled ones, the ones given to
``plan``); it is the :class:`~clusterclass.api.conversion.ApiVersions` of every conversion.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping
from typing import Any, Final, Protocol

import yaml

from clusterclass.api import constants as c
from clusterclass.api.conversion.engine import ConversionError
from clusterclass.api.objects import Obj, dig
from clusterclass.crds import crd_files
from clusterclass.yamlio import SAFE_LOADER

#: the contract this implementation writes, and the ones it still reads, newest first
CURRENT_CONTRACT: Final = "v1beta2"
COMPATIBLE_CONTRACTS: Final = ("v1beta2", "v1beta1")

_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")


def version_priority(version: str) -> tuple[int, int, int, str]:
    """Kubernetes' ordering of API versions: GA above beta above alpha, then by number (``v1 > v1beta2 >
    v1beta1 > v1alpha1``); anything else lowest, by name."""
    match = _KUBE_VERSION.match(version)
    if match is None:
        return (-1, 0, 0, version)
    major, stage, minor = int(match.group(1)), match.group(2), int(match.group(3) or 0)
    stage_rank = {None: 2, "beta": 1, "alpha": 0}[stage]
    return (stage_rank, major, minor, version)


def contract_label(contract: str) -> str:
    """``cluster.x-k8s.io/v1beta2``: the CRD label naming the versions that implement ``contract``."""
    return f"{c.CLUSTER_GROUP}/{contract}"


def label_versions(labels: Mapping[str, Any], contract: str) -> list[str]:
    """The versions a CRD's labels say implement ``contract`` (``v1beta1_v1beta2`` → both)."""
    return [v for v in str(labels.get(contract_label(contract)) or "").split("_") if v]


def latest_contract_and_version(labels: Mapping[str, Any]) -> tuple[str, str] | None:
    """The newest compatible contract a CRD's labels name, with the newest version implementing it."""
    for contract in COMPATIBLE_CONTRACTS:
        versions = label_versions(labels, contract)
        if versions:
            return contract, max(versions, key=version_priority)
    return None


def contract_of_version(labels: Mapping[str, Any], version: str) -> str | None:
    """The contract a CRD's labels say ``version`` implements, or None."""
    for contract in COMPATIBLE_CONTRACTS:
        if version in label_versions(labels, contract):
            return contract
    return None


def crd_name(group: str, kind: str) -> str:
    """The CRD name of a provider kind, by the contract's naming rule (``dockerclusters.infrastructure...``)."""
    lower = kind.lower()
    plural = lower + ("es" if lower.endswith(("s", "x", "z", "ch", "sh")) else "s")
    if lower.endswith("y") and len(lower) > 1 and lower[-2] not in "aeiou":
        plural = lower[:-1] + "ies"
    return f"{plural}.{group}"


class ContractLookup(Protocol):
    """What the pipeline asks of the CRDs: a reference's version, and which contract a kind's version implements."""

    def api_version(self, group: str, kind: str) -> str: ...

    def contract_of(self, api_version: str, kind: str) -> str: ...


class CrdContracts:
    """Contract versions and reference apiVersions, answered from a set of CRDs (by group and kind).

    ``fallback`` answers for a kind whose CRD is not known (plan without CRDs for a provider: the version of an
    object of that kind seen among the inputs); without one, :meth:`api_version` raises ``ConversionError``.
    """

    def __init__(self, crds: Iterable[Obj] = (), fallback: Mapping[tuple[str, str], str] | None = None) -> None:
        self._labels: dict[tuple[str, str], Mapping[str, Any]] = {}
        self._fallback = dict(fallback or {})
        for crd in crds:
            self.add_crd(crd)

    def add_crd(self, crd: Obj) -> None:
        group, kind = dig(crd, "spec", "group"), dig(crd, "spec", "names", "kind")
        if isinstance(group, str) and isinstance(kind, str):
            self._labels[(group, kind)] = dict(dig(crd, "metadata", "labels") or {})

    def remove_crd(self, crd: Obj) -> None:
        self._labels.pop((str(dig(crd, "spec", "group")), str(dig(crd, "spec", "names", "kind"))), None)

    def observe(self, api_version: str, kind: str) -> None:
        """Remember an object's version as the answer for its kind when no CRD says otherwise."""
        group, _, version = api_version.rpartition("/")
        if group and version:
            self._fallback.setdefault((group, kind), api_version)

    def knows(self, group: str, kind: str) -> bool:
        return (group, kind) in self._labels

    def labelled(self, group: str, kind: str) -> bool:
        """Whether the kind's CRD is known and names a compatible contract."""
        labels = self._labels.get((group, kind))
        return labels is not None and latest_contract_and_version(labels) is not None

    def api_version(self, group: str, kind: str) -> str:
        if not group:
            return "v1"  # Kubernetes' core kinds have one version and no CRD (references to ConfigMaps, Secrets)
        labels = self._labels.get((group, kind))
        if labels is not None:
            found = latest_contract_and_version(labels)
            if found is not None:
                return f"{group}/{found[1]}"
            raise ConversionError(
                f"cannot find any versions matching contract versions {list(COMPATIBLE_CONTRACTS)} for CRD "
                f"{crd_name(group, kind)} as contract version label(s) are either missing or empty"
            )
        if (group, kind) in self._fallback:
            return self._fallback[(group, kind)]
        raise ConversionError(
            f"failed to get apiVersion for kind {kind}: no CustomResourceDefinition of {kind}.{group}"
        )

    def contract_of(self, api_version: str, kind: str) -> str:
        """The contract ``kind`` at ``api_version`` implements: from its CRD's labels; without a CRD that says,
        v1beta1 (what every provider implemented before v1.11)."""
        group, _, version = api_version.rpartition("/")
        labels = self._labels.get((group, kind))
        if labels is not None:
            found = contract_of_version(labels, version)
            if found is not None:
                return found
        return "v1beta1"


@functools.cache
def _bundled_heads() -> tuple[Obj, ...]:
    """The bundled CRDs (:mod:`clusterclass.crds`, the package data the embedded cluster installs) without their
    version schemas: each file's text up to its ``versions:`` is all the names and labels (a full parse of the
    schemas costs a quarter of a second, which ``plan`` would pay on every run)."""
    heads = []
    for entry in crd_files():
        with entry.open("rb") as file:
            text = file.read(16384).decode("utf-8", errors="replace")
        cut = text.find("\n  versions:")
        if cut < 0:
            text = entry.read_text(encoding="utf-8")
            cut = text.find("\n  versions:")
        head = yaml.load(text[: cut if cut >= 0 else len(text)], Loader=SAFE_LOADER)
        if isinstance(head, dict):
            heads.append(head)
    return tuple(heads)


def bundled_contracts() -> CrdContracts:
    """A new :class:`CrdContracts` over the Cluster API CRDs the package bundles (core, kubeadm, Docker)."""
    return CrdContracts(_bundled_heads())
