"""The error hierarchy: each type carries its Status, and from_status maps a Status back to the type."""

from __future__ import annotations

import pytest

from clusterclass.errors import ClusterClassError
from clusterclass.kube.errors import (
    AlreadyExists,
    ApiError,
    BadRequest,
    Conflict,
    Forbidden,
    Gone,
    Invalid,
    NotFound,
    from_status,
    make_status,
)


@pytest.mark.parametrize(
    ("cls", "code", "reason"),
    [
        (BadRequest, 400, "BadRequest"),
        (Forbidden, 403, "Forbidden"),
        (NotFound, 404, "NotFound"),
        (AlreadyExists, 409, "AlreadyExists"),
        (Conflict, 409, "Conflict"),
        (Gone, 410, "Expired"),
        (Invalid, 422, "Invalid"),
        (ApiError, 500, "InternalError"),
    ],
)
def test_new_carries_code_reason_and_message(cls: type[ApiError], code: int, reason: str) -> None:
    err = cls.new("boom", details={"name": "x"})
    assert (err.code, err.reason, err.message, str(err)) == (code, reason, "boom", "boom")
    assert err.status == {
        "kind": "Status",
        "apiVersion": "v1",
        "metadata": {},
        "status": "Failure",
        "message": "boom",
        "reason": reason,
        "code": code,
        "details": {"name": "x"},
    }
    assert err.details == {"name": "x"}
    assert isinstance(err, ApiError)
    assert isinstance(err, ClusterClassError)


@pytest.mark.parametrize(
    ("code", "reason", "expected"),
    [
        (404, "NotFound", NotFound),
        (409, "AlreadyExists", AlreadyExists),
        (409, "Conflict", Conflict),
        (409, "", Conflict),  # a bare 409 is a conflict, never AlreadyExists
        (422, "Invalid", Invalid),
        (410, "Expired", Gone),
        (410, "Gone", Gone),
        (403, "Forbidden", Forbidden),
        (400, "BadRequest", BadRequest),
        (404, "", NotFound),
        (403, "SomethingNew", Forbidden),
        (500, "InternalError", ApiError),
        (503, "ServiceUnavailable", ApiError),
        (0, "", ApiError),
    ],
)
def test_from_status_maps_reason_then_code(code: int, reason: str, expected: type[ApiError]) -> None:
    err = from_status(make_status(code, reason, "m"))
    assert type(err) is expected
    assert err.message == "m"


def test_from_status_tolerates_a_garbled_code() -> None:
    err = from_status({"code": "not a number", "message": "?"})
    assert type(err) is ApiError
    assert err.code == 500
    assert err.details == {}
