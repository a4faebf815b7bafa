"""The table of convertible kinds: every :class:`KindConversion` the modules beside this one define.

One module per API family, as upstream splits its packages: ``core`` (``cluster.x-k8s.io``), ``kubeadm``
(``bootstrap.`` and ``controlplane.cluster.x-k8s.io``), ``docker`` (``infrastructure.cluster.x-k8s.io``, the Docker
provider) and ``runtime`` (``runtime.cluster.x-k8s.io``).
"""

from __future__ import annotations

import functools

from clusterclass.api.conversion import core, docker, kubeadm, runtime
from clusterclass.api.conversion.engine import KindConversion


@functools.cache
def _table() -> dict[tuple[str, str], KindConversion]:
    table: dict[tuple[str, str], KindConversion] = {}
    for module in (core, kubeadm, docker, runtime):
        for conversion in module.CONVERSIONS:
            key = (conversion.group, conversion.kind)
            if key in table:
                raise ValueError(f"two conversions for {conversion.kind}.{conversion.group}")
            table[key] = conversion
    return table


def conversion_for(group: str, kind: str) -> KindConversion | None:
    """The conversion of ``kind`` in ``group``, or None for a kind the table does not know."""
    return _table().get((group, kind))


def convertible(group: str, kind: str) -> bool:
    return (group, kind) in _table()


def hub_version(group: str, kind: str) -> str | None:
    """The hub (storage) version of a known kind."""
    conversion = conversion_for(group, kind)
    return conversion.hub if conversion else None


def spoke_version(group: str, kind: str) -> str | None:
    """The older version of a known kind (v1beta1; ExtensionConfig: v1alpha1): the one this project's
    controllers, simulated providers and pipeline are written to (the newer one converts to it)."""
    conversion = conversion_for(group, kind)
    return next(iter(conversion.spokes), None) if conversion else None


def kinds() -> list[KindConversion]:
    """Every known kind's conversion, in a stable order."""
    return [conversion for _, conversion in sorted(_table().items())]
