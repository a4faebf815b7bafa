"""Talking to a management cluster: the :class:`Client` protocol, its errors, label selectors, backends.

``client`` is the protocol; ``errors`` the exception hierarchy every backend raises; ``selectors``
label selector parsing and matching. Backends: ``memory`` is the in-process store with API-server
semantics (its watches in ``watch``, its state file in ``persistence``, its garbage collector in
``gc``) and ``memory_client`` the ``Client`` over it; ``http`` speaks the Kubernetes REST API.
``mergepatch`` is RFC 7386 and ``json_patch`` RFC 6902 as kube-apiserver applies them.
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
from clusterclass.kube.memory import MemoryStore
from clusterclass.kube.memory_client import MemoryClient

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Client",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "MemoryClient",
    "MemoryStore",
    "NotFound",
    "ObjectList",
    "Preconditions",
    "Resource",
    "WatchEvent",
    "from_status",
]
