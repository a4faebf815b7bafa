"""The memory store the store's tests share (imported as a top-level module: pytest puts this directory on sys.path)."""

from __future__ import annotations

import itertools
import random
from collections.abc import Callable
from datetime import UTC, datetime
from typing import Any

from clusterclass.apiserver.store import MemoryStore

#: the time a :func:`fixed_store` reads from its clock unless given another clock
T0 = datetime(2026, 1, 2, 3, 4, 5, tzinfo=UTC)


def fixed_store(*, clock: Callable[[], datetime] = lambda: T0, **options: Any) -> MemoryStore:
    """A store whose clock, random choices and uids (``uid-1``, ``uid-2``, …) are fixed, so answers compare whole."""
    uids = (f"uid-{i}" for i in itertools.count(1))
    return MemoryStore(clock=clock, rng=random.Random(1), new_uid=lambda: next(uids), **options)
