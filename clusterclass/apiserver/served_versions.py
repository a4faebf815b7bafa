"""Stored objects as served in another version, converted once: :class:`ServedVersions`.

A Cluster API kind is stored in v1beta2 and read in v1beta1 by the controllers that cache that shape, so the
same stored object is converted for its watch event, for the reads that follow, and again when it is next
written — the field manager compares the old object in the version of every managedFields entry (what
kube-apiserver's does too). A conversion runs the whole table of moves over the object and re-encodes the
conversion-data annotation; at scale it was the largest cost of the embedded management cluster.

The store never changes an object it holds (a write stores a new one), so a conversion of a stored object to
a version is valid for as long as that object is the one stored, and one conversion serves every reader: this
remembers the latest ones, by the identity of the stored object (the entry keeps it alive, so its ``id`` cannot be
reused while remembered). Bounded and least-recently-used: the reads that share a conversion come within
moments of the write that made the object. ``functools.lru_cache`` cannot key on an unhashable dict, nor hold
the key object for the identity check, hence this small class.

The remembered object is never handed out: every reader gets its own copy of it.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from clusterclass.api.objects import Obj

#: how many conversions are remembered: the readers that share one come within moments of the write (a
#: simulation of 30 Clusters shares as many with 128 as with 2048, and holds 40 MiB less)
DEFAULT_SIZE = 128


class ServedVersions:
    """Conversions of stored objects, by (stored object, apiVersion); thread-safe (the front serves from threads)."""

    def __init__(self, size: int = DEFAULT_SIZE) -> None:
        self._size = size
        self._entries: OrderedDict[tuple[int, str], tuple[Obj, Obj]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, stored: Obj, api_version: str) -> Obj | None:
        """The remembered conversion of ``stored`` to ``api_version`` (not a copy: do not change it), or None."""
        key = (id(stored), api_version)
        with self._lock:
            entry = self._entries.get(key)
            if entry is None or entry[0] is not stored:
                self.misses += 1
                return None
            self._entries.move_to_end(key)
            self.hits += 1
            return entry[1]

    def put(self, stored: Obj, api_version: str, converted: Obj) -> None:
        """Remember ``converted`` (which the caller no longer changes) as ``stored`` in ``api_version``."""
        with self._lock:
            self._entries[(id(stored), api_version)] = (stored, converted)
            self._entries.move_to_end((id(stored), api_version))
            while len(self._entries) > self._size:
                self._entries.popitem(last=False)

    def clear(self) -> None:
        """Forget everything: a CRD changed, so a conversion or the schema it prunes to may have too."""
        with self._lock:
            self._entries.clear()
