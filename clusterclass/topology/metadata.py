"""Labels and annotations of generated objects: the one metadata merge.

Class and topology metadata are merged with the *first* map winning (topology over class), and an
empty result is "no map at all": at the JSON level ``labels: {}`` differs from an absent field,
and an absent field is what the API server stores, so an empty map would never converge.
"""

from __future__ import annotations

from collections.abc import Mapping

from clusterclass.api import constants as c

#: Annotations that steer upgrade sequencing on a worker topology and are never propagated.
UPGRADE_SEQUENCING_ANNOTATIONS = (c.ANNOTATION_HOLD_UPGRADE_SEQUENCE, c.ANNOTATION_DEFER_UPGRADE)


def merge_maps(*maps: Mapping[str, str] | None) -> dict[str, str] | None:
    """Merge string maps, earlier maps winning on key clashes; None when the result is empty."""
    merged: dict[str, str] = {}
    for m in reversed(maps):
        if m:
            merged.update(m)
    return merged or None


def topology_labels(cluster_name: str, extra: Mapping[str, str] | None = None) -> dict[str, str]:
    """``extra`` plus the two labels every topology-managed object carries."""
    labels = dict(extra or {})
    labels[c.LABEL_CLUSTER_NAME] = cluster_name
    labels[c.LABEL_TOPOLOGY_OWNED] = ""
    return labels


def without_upgrade_sequencing(annotations: Mapping[str, str] | None) -> dict[str, str] | None:
    """``annotations`` minus defer-upgrade and hold-upgrade-sequence; None when nothing is left."""
    if not annotations:
        return None
    kept = {k: v for k, v in annotations.items() if k not in UPGRADE_SEQUENCING_ANNOTATIONS}
    return kept or None
