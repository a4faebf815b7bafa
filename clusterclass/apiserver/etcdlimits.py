"""etcd's request size limits, as kube-apiserver answers a write that exceeds them.

kube-apiserver stores each object as one etcd put. etcd refuses a request larger than its ``--max-request-bytes``
(1.5 MiB by default) with "etcdserver: request is too large", and kube-apiserver's etcd client will not even send one
over gRPC's 2 MiB message limit ("rpc error: code = ResourceExhausted ..."); kube-apiserver passes both on as a bare
500 (no reason) and nothing is stored. Measured against kube-apiserver 1.37 with etcd 3.6 (tests/contract/
test_object_size.py holds both backends to it). The size counted here is the object's compact JSON (how custom
resources are stored) plus its key: within a few hundred bytes of etcd's count, which only matters for an object
within that of a limit.
"""

from __future__ import annotations

import json
import marshal
from typing import Final

from clusterclass.api.objects import Obj
from clusterclass.kube.errors import ApiError, Status

#: etcd's default ``--max-request-bytes``
MAX_REQUEST_BYTES: Final = 1536 * 1024
#: kube-apiserver's etcd client's largest gRPC message
MAX_CALL_SEND_BYTES: Final = 2 * 1024 * 1024


def _status(message: str) -> Status:
    # kube-apiserver's answer has no reason: an etcd error it does not classify
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message, "code": 500}


#: JSON's worst growth over marshal's bytes: a control character becomes ``\\u00XX`` (6 bytes for 1)
_WORST_JSON_GROWTH: Final = 6


def size_error(obj: Obj, key: str) -> ApiError | None:
    """The error kube-apiserver answers for storing ``obj`` under ``key``, or None when etcd would take it.

    Every write is checked, so the common case is made cheap: ``marshal`` (a few microseconds) bounds the JSON size
    from above, and only an object that might be near a limit is serialized as JSON.
    """
    try:
        bound = len(marshal.dumps(obj, 2)) * _WORST_JSON_GROWTH  # version 2: no back-references to shared values
    except ValueError:  # not plain JSON data: measure it the long way
        bound = MAX_REQUEST_BYTES + 1
    if bound + len(key) <= MAX_REQUEST_BYTES:
        return None
    size = len(json.dumps(obj, separators=(",", ":"), ensure_ascii=False).encode()) + len(key)
    if size > MAX_CALL_SEND_BYTES:
        return ApiError(
            _status(
                "rpc error: code = ResourceExhausted desc = trying to send message larger than max "
                f"({size} vs. {MAX_CALL_SEND_BYTES})"
            )
        )
    if size > MAX_REQUEST_BYTES:
        return ApiError(_status("etcdserver: request is too large"))
    return None
