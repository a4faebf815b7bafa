"""Talking to any API server: the :class:`Client` protocol and what a controller builds on it.

``client`` is the protocol; ``errors`` the exception hierarchy every backend raises; ``selectors``
label selector parsing and matching; ``http`` the backend that speaks the Kubernetes REST API to a
real kube-apiserver (or the embedded one). ``informer``, ``indexes``, ``workqueue`` and
``cache_reader`` are the controller side: local caches of watched kinds, their secondary indexes, the
rate-limited work queue and the topology pipeline's reads from the caches. ``gotext`` and ``certs`` are small
helpers both this package and the embedded API server need (JSON copies and merge patches are
:mod:`clusterclass.api`'s, below every layer).

The in-process backend over the embedded store lives in :mod:`clusterclass.apiserver`, which imports
this package; nothing here imports it back.
"""

from clusterclass.kube.client import Client, ObjectList, Preconditions, Resource, WatchEvent
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
)

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Client",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "NotFound",
    "ObjectList",
    "Preconditions",
    "Resource",
    "WatchEvent",
    "from_status",
]
