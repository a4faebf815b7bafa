"""Which watch events may wake a controller: controller-runtime's predicates, as plain functions of the objects.

A :class:`Predicate` answers, per event, whether the event is worth a reconcile. The ones Cluster API's
controllers share are here: objects paused with ``cluster.x-k8s.io/paused``, the ``--watch-filter``
label ``cluster.x-k8s.io/watch-filter`` (several controller managers can split one management cluster
between them by that label), topology-owned objects, Clusters with a topology, and "something other than
the resourceVersion and managedFields changed". A resync (an update whose old and new state are the same
object) always passes, as controller-runtime lets resyncs through.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, annotations_of, dig, labels_of

#: the label a ``--watch-filter`` value is matched against
WATCH_FILTER_LABEL = "cluster.x-k8s.io/watch-filter"


@dataclass(frozen=True)
class Predicate:
    """Whether a create, an update (old, new) and a delete may enqueue a reconcile."""

    create: Callable[[Obj], bool]
    update: Callable[[Obj, Obj], bool]
    delete: Callable[[Obj], bool]

    @classmethod
    def of_object(cls, test: Callable[[Obj], bool]) -> Predicate:
        """A predicate that looks only at the object (the new state of an update)."""
        return cls(create=test, update=lambda _old, new: test(new), delete=test)


def _is_resync(old: Obj, new: Obj) -> bool:
    return old is new or dig(old, "metadata", "resourceVersion") == dig(new, "metadata", "resourceVersion")


def is_paused(obj: Obj) -> bool:
    """``cluster.x-k8s.io/paused`` on the object, or ``spec.paused`` on a Cluster."""
    return c.ANNOTATION_PAUSED in annotations_of(obj) or (
        obj.get("kind") == c.KIND_CLUSTER and dig(obj, "spec", "paused") is True
    )


def has_filter_label(watch_filter: str | None) -> Predicate:
    """Objects labelled ``cluster.x-k8s.io/watch-filter=<watch_filter>``; everything when no filter is set."""
    if not watch_filter:
        return Predicate.of_object(lambda _obj: True)
    return Predicate.of_object(lambda obj: labels_of(obj).get(WATCH_FILTER_LABEL) == watch_filter)


NOT_PAUSED = Predicate.of_object(lambda obj: not is_paused(obj))
TOPOLOGY_OWNED = Predicate.of_object(lambda obj: c.LABEL_TOPOLOGY_OWNED in labels_of(obj))
CLUSTER_HAS_TOPOLOGY = Predicate.of_object(lambda obj: isinstance(dig(obj, "spec", "topology"), dict))


def _without_noise(obj: Obj) -> Obj:
    metadata = {k: v for k, v in (obj.get("metadata") or {}).items() if k not in ("resourceVersion", "managedFields")}
    return {**obj, "metadata": metadata}


#: an update that changed more than the resourceVersion and managedFields (or a resync)
RELEVANT_CHANGE = Predicate(
    create=lambda _obj: True,
    update=lambda old, new: _is_resync(old, new) or _without_noise(old) != _without_noise(new),
    delete=lambda _obj: True,
)


def all_of(*predicates: Predicate) -> Predicate:
    return Predicate(
        create=lambda obj: all(p.create(obj) for p in predicates),
        update=lambda old, new: all(p.update(old, new) for p in predicates),
        delete=lambda obj: all(p.delete(obj) for p in predicates),
    )
