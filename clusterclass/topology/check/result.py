"""Results of admission checks, and the Kubernetes ``Status`` an admission webhook returns for them.

A :class:`Result` holds field errors (which refuse the object) apart from warnings (which admission
returns alongside an allowed object, e.g. a Cluster whose ClusterClass does not exist yet).
:func:`invalid_status` renders errors exactly like the API server's ``NewInvalid``: reason
``Invalid``, code 422, one ``details.causes`` entry per error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from clusterclass.fielderrors import FieldError


@dataclass
class Result:
    errors: list[FieldError] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def allowed(self) -> bool:
        return not self.errors

    def extend(self, other: Result) -> Result:
        self.errors.extend(other.errors)
        self.warnings.extend(other.warnings)
        return self


def invalid_status(kind: str, group: str, name: str, errors: list[FieldError]) -> dict[str, Any]:
    """The ``Status`` the API server returns when ``errors`` refuse object ``name`` of ``kind``."""
    qualified = f"{kind}.{group}" if group else kind
    rendered = [str(e) for e in errors]
    aggregate = rendered[0] if len(rendered) == 1 else "[" + ", ".join(rendered) + "]"
    return {
        "apiVersion": "v1",
        "kind": "Status",
        "metadata": {},
        "status": "Failure",
        "message": f'{qualified} "{name}" is invalid: {aggregate}',
        "reason": "Invalid",
        "details": {
            "name": name,
            "group": group,
            "kind": kind,
            "causes": [{"reason": str(e.type), "message": e.message, "field": e.field} for e in errors],
        },
        "code": 422,
    }
