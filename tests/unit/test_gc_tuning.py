"""Long-running commands collect cyclic garbage rarely (clusterclass.cli.running.tune_garbage_collector): with
CPython's defaults the collector took a fifth of the embedded management cluster's CPU (bench/simulation.py)."""

from __future__ import annotations

import gc

import pytest

from clusterclass.cli.running import GC_THRESHOLDS, run_to_exit


async def thresholds_inside() -> int:
    return 0 if gc.get_threshold() == GC_THRESHOLDS else 7


def test_a_long_running_command_runs_with_the_tuned_thresholds() -> None:
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        with pytest.raises(SystemExit) as exited:
            run_to_exit(thresholds_inside())
        assert exited.value.code == 0
    finally:
        gc.set_threshold(*saved)
