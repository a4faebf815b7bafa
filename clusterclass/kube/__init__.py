"""Talking to a management cluster: the :class:`Client` protocol, its errors, label selectors, backends.

``client`` is the protocol and the :class:`ClientReader` adapter to the topology pipeline's Reader;
``errors`` the exception hierarchy every backend raises; ``selectors`` label selector parsing and
matching; ``memory`` the in-process store with API-server semantics; ``mergepatch`` RFC 7386.
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

__all__ = [
    "AlreadyExists",
    "ApiError",
    "BadRequest",
    "Client",
    "Conflict",
    "Forbidden",
    "Gone",
    "Invalid",
    "MemoryStore",
    "NotFound",
    "ObjectList",
    "Preconditions",
    "Resource",
    "WatchEvent",
    "from_status",
]
