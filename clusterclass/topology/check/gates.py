"""Feature gates the admission rules consult (spec §1.7).

Upstream puts ClusterClass, MachinePools and the Runtime SDK behind gates that were off by default in
v1.6; we turn them on by default (DECISIONS.md) and keep the switches for parity tests.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Gates:
    cluster_topology: bool = True
    machine_pool: bool = True
    runtime_sdk: bool = True
