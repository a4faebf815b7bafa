"""``runtime.cluster.x-k8s.io``: ExtensionConfig, v1alpha1 ↔ v1beta2 (the hub).

Upstream's rules are ``api/runtime/v1alpha1/conversion.go`` and the hub-spoke converter of
``core/webhooks/conversion/extensionconfig.go``, which keeps no conversion-data annotation: everything v1beta2
added is a re-spelling of what v1alpha1 has. The differences:

- the pointers of v1alpha1 became values with ``omitempty`` (``clientConfig.url``, ``clientConfig.service.path``,
  a handler's ``timeoutSeconds`` and ``failurePolicy``): a zero is left out both ways — upstream's hub → v1alpha1
  drops the empty strings and a zero timeout it would otherwise write as pointers;
- ``clientConfig.service`` was a pointer and is a struct written with ``omitzero``: an empty one is unset;
- the conditions changed as the Cluster's did (v1beta1 conditions → ``status.deprecated.v1beta1``,
  ``status.v1beta2.conditions`` → ``status.conditions``).

``namespaceSelector`` (a ``*LabelSelector`` in both) and ``settings`` (a ``map[string]string`` in both) are
copied as they are.
"""

from __future__ import annotations

from typing import Final

from clusterclass.api.conversion.core import legacy_conditions
from clusterclass.api.conversion.engine import (
    FieldStep,
    KindConversion,
    SpokeConversion,
    Step,
    empty,
    omit_empty,
    under,
)
from clusterclass.api.conversion.transforms import omit_zero

GROUP: Final = "runtime.cluster.x-k8s.io"
HUB: Final = "v1beta2"
SPOKE: Final = "v1alpha1"


def client_config() -> list[FieldStep]:
    """``spec.clientConfig``: the URL and the Service's path were ``*string``; the Service itself a pointer that
    upstream converts down only when it is not the zero struct."""
    return [
        omit_zero("url"),
        omit_zero("service.path"),
        empty("service", "service"),
    ]


def extension_handler() -> list[FieldStep]:
    """One of ``status.handlers``: ``timeoutSeconds`` (``*int32`` → ``int32``, at least 1 in v1beta2) and
    ``failurePolicy`` (``*FailurePolicy`` → ``FailurePolicy``) are unset when zero."""
    return [
        omit_zero("timeoutSeconds"),
        omit_zero("failurePolicy"),
    ]


def _extension_config_steps() -> tuple[Step, ...]:
    return (
        *under("spec.clientConfig", client_config()),
        *under("status.handlers[]", extension_handler()),
        *legacy_conditions(),
        *omit_empty("status"),  # ``minProperties: 1``: a status the conversion empties (or an empty one) goes
    )


EXTENSION_CONFIG: Final = KindConversion(
    GROUP,
    "ExtensionConfig",
    HUB,
    {SPOKE: SpokeConversion(SPOKE, _extension_config_steps(), keeps_data=False)},
)

CONVERSIONS: tuple[KindConversion, ...] = (EXTENSION_CONFIG,)
