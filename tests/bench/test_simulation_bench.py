"""bench/simulation.py, run small, so the benchmark cannot rot between the runs its README figures come from.

It had once stopped starting at all (it read the example's v1beta1 ``ref`` after the example moved to v1beta2)
and nothing noticed for a release. Two Clusters through every phase it measures: creation to Ready, the idle
window, the upgrade of all to a new version and the collect() cross-check.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "bench" / "simulation.py"


def test_two_clusters_come_up_stay_quiet_and_upgrade() -> None:
    done = subprocess.run(
        [sys.executable, str(BENCH), "--clusters", "2", "--idle", "1", "--upgrade", "v1.29.0", "--json"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = json.loads(done.stdout)
    assert result["ready"] == 2 and not result["timed_out"]
    assert result["verify"]["disagreements"] == 0
    assert result["management_objects"]["Machine"] == 8  # each: 1 control-plane Machine, 1 MD Machine, 2 MP Nodes
    idle_requests = {verb: n for verb, n in result["idle"]["verbs"].items() if verb != "watch" and n}
    assert idle_requests == {}, "a converged simulation makes no request"
    upgrade = result["upgrade"]
    assert upgrade["upgraded"] == 2 and upgrade["all_upgraded_seconds"] is not None, upgrade["not_upgraded"]
    assert upgrade["writes_per_object"]["Machine"] > 0  # the Machines were replaced at the new version
