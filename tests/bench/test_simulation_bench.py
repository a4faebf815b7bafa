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
from typing import Any

BENCH = Path(__file__).resolve().parents[2] / "bench" / "simulation.py"


def run_bench(*args: str) -> dict[str, Any]:
    """One run of the bench (one K) with ``args``; its result."""
    done = subprocess.run([sys.executable, str(BENCH), *args, "--json"], capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    (result,) = json.loads(done.stdout)
    return result  # type: ignore[no-any-return]


def test_two_clusters_come_up_stay_quiet_and_upgrade() -> None:
    result = run_bench("--clusters", "2", "--quiet", "2", "--idle", "1", "--upgrade", "v1.29.0")
    assert result["ready"] == 2 and not result["timed_out"]
    assert result["verify"]["disagreements"] == 0
    assert result["management_objects"]["Machine"] == 8  # each: 1 control-plane Machine, 1 MD Machine, 2 MP Nodes
    idle_requests = {verb: n for verb, n in result["idle"]["verbs"].items() if verb != "watch" and n}
    assert idle_requests == {}, "a converged simulation makes no request"
    upgrade = result["upgrade"]
    assert upgrade["upgraded"] == 2 and upgrade["all_upgraded_seconds"] is not None, upgrade["not_upgraded"]
    assert upgrade["writes_per_object"]["Machine"] > 0  # the Machines were replaced at the new version


def test_the_idle_trace_records_every_write_and_change_check_of_the_window(tmp_path: Path) -> None:
    """``--idle-trace`` with no settle window and no wait for quiet: the idle window starts as the last Clusters
    turn Ready, while the providers still finish (a MachinePool's providerIDList, the conditions), so it has
    requests to explain. Each write the window counted is in the trace with what it changed, each change check's
    two dry runs with why."""
    trace = tmp_path / "trace"
    result = run_bench("--clusters", "3", "--settle", "0", "--quiet", "0", "--idle", "3", "--idle-trace", str(trace))
    entries = [json.loads(line) for line in (tmp_path / "trace.3").read_text().splitlines()]
    verbs = result["idle"]["verbs"]
    dry_runs = [e for e in entries if e["verb"] == "apply_dry_run"]
    writes = [e for e in entries if e["verb"] != "apply_dry_run"]
    assert len(dry_runs) == verbs.get("apply_dry_run", 0)
    traced_verbs = ("apply", "update", "update_status", "patch")
    assert len(writes) == sum(verbs.get(verb, 0) for verb in traced_verbs)
    for entry in dry_runs:
        assert entry["why"] in ("expired or never kept", "not looked up in the window") or set(entry["why"]) <= {
            "generation", "uid", "labels", "annotations", "ownerReferences", "own apply entry", "intent"
        }  # fmt: skip
    for entry in writes:
        assert entry["object"].split()[0] and isinstance(entry["change"], dict)
