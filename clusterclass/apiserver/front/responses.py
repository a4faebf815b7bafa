"""JSON bodies and ``Status`` errors, as kube-apiserver writes them.

Every error the front answers with is a ``Status`` object with the HTTP code in both the status line
and the body, because that is what kubectl, client-go and the Python client decode: kubectl prints
the ``message``, client-go maps ``reason`` and ``code`` back to a typed error, and our own HTTP
backend turns it into the matching :mod:`clusterclass.kube.errors` type with ``from_status``.
"""

from __future__ import annotations

import json
from typing import Any

from aiohttp import web

from clusterclass.kube.errors import ApiError, Status, make_status

JSON = "application/json"


def encode(obj: Any) -> bytes:
    """Compact JSON, as kube-apiserver sends it (no spaces; non-ASCII kept as UTF-8)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()


def json_response(obj: Any, *, status: int = 200, content_type: str = JSON) -> web.Response:
    return web.Response(body=encode(obj), status=status, headers={"Content-Type": content_type})


def status_response(status: Status) -> web.Response:
    """``status`` with its code as the HTTP status (500 when it has none)."""
    code = status.get("code")
    return json_response(status, status=code if isinstance(code, int) and 100 <= code <= 599 else 500)


def error_response(err: ApiError) -> web.Response:
    status = dict(err.status)
    status.setdefault("code", err.code)
    return status_response(status)


def not_found() -> ApiError:
    """What kube-apiserver answers for a path it does not serve."""
    return ApiError(make_status(404, "NotFound", "the server could not find the requested resource", details={}))


def method_not_allowed() -> ApiError:
    message = "the server does not allow this method on the requested resource"
    return ApiError(make_status(405, "MethodNotAllowed", message, details={}))


def unauthorized() -> ApiError:
    return ApiError(make_status(401, "Unauthorized", "Unauthorized"))


def unknown_media_type() -> ApiError:
    """What kube-apiserver answers for a body in a media type it does not read at all."""
    return ApiError(make_status(415, "UnsupportedMediaType", "415: Unsupported Media Type", details={}))


def unsupported_media_type(accepted: list[str]) -> ApiError:
    """What kube-apiserver answers for a media type it reads, but not for this request (a patch type)."""
    return ApiError(
        make_status(
            415,
            "UnsupportedMediaType",
            f"the body of the request was in an unknown format - accepted media types include: {', '.join(accepted)}",
        )
    )


def success(details: dict[str, Any]) -> Status:
    """The ``Status`` kube-apiserver answers a delete with once the object is gone."""
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}
