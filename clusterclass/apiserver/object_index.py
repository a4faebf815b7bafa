"""The stored objects of one kind, by (namespace, name), with an index of their labels for list requests.

A label-selected list used to look at every object of the kind and sort them all, so its cost grew with the
management cluster: the topology controller's live lists (``LiveTopologyNames``, ``LiveLeftovers``: one
Cluster's MachineDeployments, MachinePools, templates) cost a few milliseconds each with a thousand Clusters
stored, a thousand times over, which made creating K Clusters grow as K². kube-apiserver answers such lists
from its watch cache, which indexes what it serves; this is that index for the embedded store.

:class:`ObjectBucket` is a dict (namespace, name) → stored object that keeps, beside it, the keys of the objects
carrying each (label, value). Every way the store changes a bucket (``bucket[key] = obj``, ``del``, ``pop``)
goes through it, so the index cannot drift from the objects; :meth:`candidates` narrows a selector's equality
requirements to the keys worth matching. The selector still decides: the index only skips objects that cannot
match.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.kube.selectors import EQUALS, IN, Selector

NameKey = tuple[str, str]
LabelPair = tuple[str, str]


class ObjectBucket(dict[NameKey, Obj]):
    """Stored objects by (namespace, name), with the keys of the objects carrying each label value."""

    def __init__(self) -> None:
        super().__init__()
        self._by_label: dict[LabelPair, set[NameKey]] = {}

    def __setitem__(self, key: NameKey, obj: Obj) -> None:
        previous = super().get(key)
        if previous is not None:
            self._unindex(key, previous)
        super().__setitem__(key, obj)
        for pair in _labels(obj):
            self._by_label.setdefault(pair, set()).add(key)

    def __delitem__(self, key: NameKey) -> None:
        self._unindex(key, self[key])
        super().__delitem__(key)

    def pop(self, key: NameKey, *default: Any) -> Any:
        if key in self:
            obj = self[key]
            del self[key]
            return obj
        if default:
            return default[0]
        raise KeyError(key)

    def setdefault(self, key: NameKey, default: Any = None) -> Any:
        raise NotImplementedError("ObjectBucket: assign with bucket[key] = obj, so the label index follows")

    def update(self, *args: Any, **kwargs: Any) -> None:
        raise NotImplementedError("ObjectBucket: assign with bucket[key] = obj, so the label index follows")

    def candidates(self, selector: Selector) -> Iterable[NameKey]:
        """The keys of the objects that may match ``selector``: those with the value of its most selective
        equality (or one-value ``in``) requirement; every key when it has none."""
        best: set[NameKey] | None = None
        for requirement in selector.requirements:
            if requirement.operator not in (EQUALS, IN):
                continue
            keys: set[NameKey] = set()
            for value in requirement.values:
                keys |= self._by_label.get((requirement.key, value), set())
            if best is None or len(keys) < len(best):
                best = keys
        return self.keys() if best is None else best

    def _unindex(self, key: NameKey, obj: Obj) -> None:
        for pair in _labels(obj):
            keys = self._by_label.get(pair)
            if keys is not None:
                keys.discard(key)
                if not keys:
                    del self._by_label[pair]


def _labels(obj: Obj) -> list[LabelPair]:
    labels = (obj.get("metadata") or {}).get("labels")
    if not isinstance(labels, dict):
        return []
    return [(str(k), v) for k, v in labels.items() if isinstance(v, str)]
