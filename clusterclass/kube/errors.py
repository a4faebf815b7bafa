"""Errors an API server returns, as one small hierarchy carrying the Kubernetes ``Status`` object.

Every backend of :class:`~clusterclass.kube.client.Client` raises these, never its own transport's
exceptions, so a controller branches on the type (``except NotFound``) and never on message text.
The message and reason are kube-apiserver's own where we know them, so an error from the memory
store reads the same as one from a real server: ``clusters.cluster.x-k8s.io "c1" not found``.

:func:`from_status` turns a ``Status`` received from a server back into the matching type;
:func:`make_status` builds the ``Status`` bodies the memory store and the API front raise.
"""

from __future__ import annotations

from typing import Any, Self

from clusterclass.errors import ClusterClassError

Status = dict[str, Any]


def make_status(code: int, reason: str, message: str, *, details: dict[str, Any] | None = None) -> Status:
    """A ``Status`` with ``status: Failure``, the shape kube-apiserver sends with every error."""
    status: Status = {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": message,
        "reason": reason,
        "code": code,
    }
    if details is not None:
        status["details"] = details
    return status


class ApiError(ClusterClassError):
    """An API request that the server refused; ``status`` is the ``Status`` it answered with."""

    default_code = 500
    default_reason = "InternalError"

    def __init__(self, status: Status) -> None:
        self.status: Status = status
        super().__init__(self.message)

    @classmethod
    def new(cls, message: str, *, details: dict[str, Any] | None = None) -> Self:
        """An error of this class with its usual code and reason."""
        return cls(make_status(cls.default_code, cls.default_reason, message, details=details))

    @property
    def code(self) -> int:
        return _code(self.status) or self.default_code

    @property
    def reason(self) -> str:
        return str(self.status.get("reason") or self.default_reason)

    @property
    def message(self) -> str:
        return str(self.status.get("message") or "")

    @property
    def details(self) -> dict[str, Any]:
        return dict(self.status.get("details") or {})

    def __str__(self) -> str:
        return self.message


class BadRequest(ApiError):
    default_code = 400
    default_reason = "BadRequest"


class Forbidden(ApiError):
    default_code = 403
    default_reason = "Forbidden"


class NotFound(ApiError):
    default_code = 404
    default_reason = "NotFound"


class AlreadyExists(ApiError):
    default_code = 409
    default_reason = "AlreadyExists"


class Conflict(ApiError):
    default_code = 409
    default_reason = "Conflict"


class Gone(ApiError):
    default_code = 410
    default_reason = "Expired"


class Invalid(ApiError):
    default_code = 422
    default_reason = "Invalid"


_BY_REASON: dict[str, type[ApiError]] = {
    "BadRequest": BadRequest,
    "Forbidden": Forbidden,
    "NotFound": NotFound,
    "AlreadyExists": AlreadyExists,
    "Conflict": Conflict,
    "Gone": Gone,
    "Expired": Gone,
    "Invalid": Invalid,
}

_BY_CODE: dict[int, type[ApiError]] = {
    400: BadRequest,
    403: Forbidden,
    404: NotFound,
    409: Conflict,
    410: Gone,
    422: Invalid,
}


def from_status(status: Status) -> ApiError:
    """The error ``status`` describes: by ``reason`` first, then by ``code``; :class:`ApiError` otherwise.

    A 409 is :class:`AlreadyExists` only when its reason says so, as client-go's ``IsAlreadyExists``.
    """
    cls = _BY_REASON.get(str(status.get("reason") or "")) or _BY_CODE.get(_code(status), ApiError)
    return cls(status)


def _code(status: Status) -> int:
    """The HTTP code of ``status``, 0 when it has none that is a number."""
    try:
        return int(status.get("code") or 0)
    except (TypeError, ValueError):
        return 0
