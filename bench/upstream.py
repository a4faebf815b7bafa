"""Benchmark: upstream's topology controller against clusterclass's, on upstream's own managers, N Clusters.

Not a test: it measures and prints. For each N (``--clusters``, default 10, 100 and 300) and each topology
controller it starts a fresh management cluster — a real kube-apiserver and etcd (``scripts/build-apiserver.sh``)
with kube-controller-manager's garbage collector, and upstream Cluster API's own core, kubeadm bootstrap, kubeadm
control-plane and in-memory infrastructure managers (``scripts/build-capi.sh``, ``--release``, default v1.14.0) —
the same for both: the providers are identical, only the topology controller changes:

- **upstream**: the core manager with ``ClusterTopology=true`` (its topology and ClusterClass controllers and
  webhooks);
- **clusterclass**: the core manager with ``ClusterTopology=false`` and ``clusterclass run`` beside it (its
  topology and ClusterClass controllers and its Cluster, ClusterClass and MachinePool webhooks).

Each run applies upstream's in-memory e2e ClusterClass (``tests/support/upstream_capi.py``: zero provisioning
delays, no test extension, plus a MachinePool class) and creates N Clusters of one control-plane Machine, one
MachineDeployment of ``--workers`` Machines and one MachinePool of ``--pool-replicas`` Nodes (clusterclass's
simulated DockerMachinePool, in this process, provisions it for both controllers), all at once (``--concurrency``
creates in flight), then waits until every Cluster is Ready with ``TopologyReconciled`` True (v1beta2 ``Available``
at v1.11+, v1beta1 ``Ready`` before) and every replica of its MachineDeployment and MachinePool ready (a Cluster is
Available before its MachinePool has its Nodes), reading the Clusters, MachineDeployments and MachinePools every
``--poll`` seconds in their storage version. Then it stays idle for ``--idle`` seconds.

Reported per N and controller:

- the time from the first create until all Clusters are Ready;
- topology reconcile p50 and p99, from ``controller_runtime_reconcile_time_seconds{controller="topology/cluster"}``
  (both expose controller-runtime's histogram; quantiles interpolated in the buckets as ``histogram_quantile``);
- requests by verb and resource, from kube-apiserver's audit log split by User-Agent. clusterclass's are its own
  process's (``clusterclass``); upstream's topology controller shares its process with every core controller, so
  its share is estimated as the core manager's requests in the upstream run minus the core manager's in the
  clusterclass run (same Clusters, same providers; the difference is the topology and ClusterClass controllers);
- CPU seconds and peak RSS: clusterclass's process; for upstream, the core manager's CPU in the upstream run minus
  its CPU in the clusterclass run, and its peak RSS (whole process: not separable);
- requests in the idle window, by the same split. The window starts once neither the clusterclass process nor the
  core manager has made a request but watches for ``--quiet`` seconds (the seconds that took, and the requests
  until then, are reported too): "all Ready" comes before the providers' last writes and the answers to them;
- to tell where a reconcile's time goes (``--save``'s JSON, and the second table): the topology controller's
  reconciles, the latency of each agent's requests as kube-apiserver logged them (arrival to response, watches
  left out: p50 and p99), and kube-apiserver's calls of the Cluster API conversion webhook during the run, by
  target version, with the seconds they took
  (``apiserver_crd_conversion_webhook_duration_seconds``), and the writes of Cluster API objects by every agent.
  kube-apiserver keeps a watch cache for each version a CRD serves and converts every write of a v1beta2 object
  into v1beta1 for it, whether anyone reads v1beta1 or not (kubernetes/kubernetes#129979, filed by a Cluster API
  maintainer; ``tests/bench/test_upstream_bench_readings.py`` shows it on the Go-built kube-apiserver): a v1beta1
  watch or list is served from that cache at no further conversion, a v1beta1 GET or write costs its own. So the
  conversions follow the writes of everyone, not the version a topology controller caches in.

``--owners`` runs only one side (its JSON; the tables need both).

Usage::

    .venv/bin/python bench/upstream.py [--release v1.14.0] [--clusters 10 100 300] [--workers 1]
        [--pool-replicas 1] [--idle 300] [--quiet 30] [--concurrency 20] [--poll 2] [--timeout 3600]
        [--markdown | --json] [--keep-logs DIR] [--save FILE] [--owners upstream clusterclass]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO / "tests"))

from support.audit import AuditLog, Request, by_agent, tally  # noqa: E402
from support.real_apiserver import find_binaries, find_binary, require_controller_manager  # noqa: E402
from support.upstream_capi import Release, metric_samples  # noqa: E402

from clusterclass.api.objects import Obj, dig  # noqa: E402
from clusterclass.kube.http import HttpClient  # noqa: E402

sys.path.insert(0, str(REPO / "tests" / "interop"))
from interop_support import OURS, UPSTREAM, Stack, retry_while_webhooks_start  # noqa: E402

TOPOLOGY = "topology/cluster"
CORE_AGENT = "capi-controller-manager"
OURS_AGENT = "clusterclass"


# --- process and metric readings ------------------------------------------------------------------------------


def cpu_seconds(pid: int) -> float:
    """utime + stime of ``pid`` (``/proc/<pid>/stat``)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def peak_rss_mib(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) / 1024
    return 0.0


def quantile(metrics: str, q: float) -> float | None:
    """``histogram_quantile(q, controller_runtime_reconcile_time_seconds{controller="topology/cluster"})``."""
    buckets = sorted(
        (float(labels["le"]), value)
        for labels, value in metric_samples(
            metrics, "controller_runtime_reconcile_time_seconds_bucket", controller=TOPOLOGY
        )
        if labels.get("le") not in (None, "+Inf")
    )
    total = sum(
        value
        for _, value in metric_samples(metrics, "controller_runtime_reconcile_time_seconds_count", controller=TOPOLOGY)
    )
    if not buckets or total == 0:
        return None
    rank = q * total
    previous_bound, previous_count = 0.0, 0.0
    for bound, count in buckets:
        if count >= rank:
            if count == previous_count:
                return bound
            return previous_bound + (bound - previous_bound) * (rank - previous_count) / (count - previous_count)
        previous_bound, previous_count = bound, count
    return buckets[-1][0]


def reconciles(metrics: str) -> float:
    return sum(v for _, v in metric_samples(metrics, "controller_runtime_reconcile_total", controller=TOPOLOGY))


def percentile(values: list[float], q: float) -> float | None:
    """The nearest-rank ``q`` quantile of ``values`` (None for none)."""
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * len(ordered)) - 1))]


def request_latency_ms(requests: list[Request]) -> dict[str, float | None]:
    """p50 and p99 of the requests' latency as kube-apiserver logged it, in ms; watches (open for minutes) left
    out."""
    seconds = [r.seconds for r in requests if r.verb != "watch"]
    return {
        name: None if value is None else value * 1000
        for name, value in (("p50", percentile(seconds, 0.5)), ("p99", percentile(seconds, 0.99)))
    }


CONVERSION_METRIC = "apiserver_crd_conversion_webhook_duration_seconds"


def apiserver_metrics(kubeconfig: Path) -> str:
    """kube-apiserver's own metrics (``kubectl get --raw /metrics``), empty when they cannot be read."""
    kubectl, _ = find_binary("kubectl")
    if kubectl is None:
        return ""
    answer = subprocess.run(
        [str(kubectl), "--kubeconfig", str(kubeconfig), "get", "--raw", "/metrics"],
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    return answer.stdout if answer.returncode == 0 else ""


def conversions(metrics: str) -> dict[str, float]:
    """kube-apiserver's conversion webhook calls so far, ``calls to <version>`` and ``seconds to <version>``."""
    found: dict[str, float] = {}
    for suffix, what in (("_count", "calls"), ("_sum", "seconds")):
        for labels, value in metric_samples(metrics, CONVERSION_METRIC + suffix):
            key = f"{what} to {labels.get('to_version', '?')}"
            found[key] = found.get(key, 0.0) + value
    return found


async def wait_for_quiet(
    audit: AuditLog, agents: tuple[str, ...], quiet: float, timeout: float
) -> tuple[float | None, list[Request]]:
    """Wait until none of ``agents`` made a request but watches for ``quiet`` seconds in a row; the seconds it took
    (None: not within ``timeout``) and the requests made until then. "All Ready" comes before the providers' last
    status writes and the topology controllers' answers to them, and at N=100 on two cores that tail (Events
    still being sent among it) lasts minutes: the idle window measures a converged management cluster after it."""
    audit.mark()
    started = time.monotonic()
    quiet_since = started
    seen: list[Request] = []
    while time.monotonic() - quiet_since < quiet:
        if time.monotonic() - started > timeout:
            return None, seen
        await asyncio.sleep(min(2.0, quiet / 4))
        new = [r for r in audit.take() if r.agent in agents and r.verb != "watch"]
        if new:
            seen += new
            quiet_since = time.monotonic()
    return round(quiet_since - started, 1), seen


def is_cluster_api_write(request: Request) -> bool:
    """A write that stored a Cluster API object (any ``*.cluster.x-k8s.io`` group, status included, dry runs and
    refusals not): each costs kube-apiserver one conversion to every other version it serves (module doc)."""
    group = request.api_version.rpartition("/")[0]
    return (
        request.is_write
        and request.verb != "delete"
        and 200 <= request.code < 300
        and group.endswith("cluster.x-k8s.io")
    )


# --- one run ---------------------------------------------------------------------------------------------------


@dataclass
class Run:
    owner: str
    clusters: int
    ready_seconds: float = 0.0
    reconciles: float = 0.0
    p50_ms: float | None = None
    p99_ms: float | None = None
    requests: dict[str, int] = field(default_factory=dict)  # agent → count, during creation
    by_verb: dict[str, dict[str, int]] = field(default_factory=dict)  # agent → "verb resource" → count
    idle_requests: dict[str, int] = field(default_factory=dict)
    idle_by_verb: dict[str, dict[str, int]] = field(default_factory=dict)  # agent → "verb resource" → count
    cpu_seconds: dict[str, float] = field(default_factory=dict)  # process → CPU seconds until ready
    peak_rss_mib: dict[str, float] = field(default_factory=dict)
    latency_ms: dict[str, dict[str, float | None]] = field(default_factory=dict)  # agent → p50/p99, until ready
    by_version: dict[str, dict[str, int]] = field(default_factory=dict)  # agent → "verb resource group/version" → count
    conversions: dict[str, float] = field(default_factory=dict)  # kube-apiserver's webhook conversions until ready
    quiet_after_seconds: float | None = None  # from all Ready until the topology agents went quiet (--quiet)
    until_quiet: dict[str, int] = field(default_factory=dict)  # agent → requests until then
    cluster_api_writes: int = 0  # writes of Cluster API objects by every agent until ready (what conversions follow)


def _ready(cluster: Obj, v1beta2: bool) -> bool:
    conditions = dig(cluster, "status", "conditions") or []
    status = {c.get("type"): c.get("status") for c in conditions if isinstance(c, dict)}
    ready = status.get("Available" if v1beta2 else "Ready") == "True"
    return ready and status.get("TopologyReconciled") == "True"


def _workers_ready(workers: list[Obj]) -> set[str]:
    """The Clusters none of whose MachineDeployments and MachinePools (``workers``) lacks a ready replica: a
    Cluster is Available while its MachinePool is still provisioning, and the idle window must start idle."""
    waiting, clusters = set(), set()
    for worker in workers:
        cluster = (dig(worker, "metadata", "labels") or {}).get("cluster.x-k8s.io/cluster-name", "")
        clusters.add(cluster)
        if (dig(worker, "status", "readyReplicas") or 0) < (dig(worker, "spec", "replicas") or 0):
            waiting.add(cluster)
    return clusters - waiting


async def _count_ready(client: HttpClient, stack: Stack, namespace: str, v1beta2: bool) -> int:
    """How many Clusters are Ready with ``TopologyReconciled`` and every worker replica ready (module doc)."""
    clusters = (await client.list(stack.kinds.core, "Cluster", namespace=namespace)).items
    workers = [
        *(await client.list(stack.kinds.core, "MachineDeployment", namespace=namespace)).items,
        *(await client.list(stack.kinds.core, "MachinePool", namespace=namespace)).items,
    ]
    ready_workers = _workers_ready(workers)
    return sum(_ready(c, v1beta2) and dig(c, "metadata", "name") in ready_workers for c in clusters)


async def run_one(release: Release, owner: str, n: int, args: argparse.Namespace, workdir: Path) -> Run:
    binaries = find_binaries()
    require_controller_manager(binaries)
    stack = Stack(release, owner, workdir, binaries, audit=True).start()
    if args.pool_replicas:
        await stack.start_pools()
    result = Run(owner, n)
    client = HttpClient.from_kubeconfig(stack.api.kubeconfig, user_agent="bench")
    audit = AuditLog(stack.api.audit_log)
    try:
        namespace = stack.api.create_namespace("bench-")
        for obj in stack.data.cluster_class(namespace):
            await retry_while_webhooks_start(lambda obj=obj: client.create(obj))  # type: ignore[misc]
        await asyncio.sleep(2)  # the ClusterClass controller reconciles the class first, as users apply it first
        processes = {"core": stack.capi.running["core"].process.popen.pid}
        if stack.ours is not None and stack.ours.process is not None:
            processes[OURS_AGENT] = stack.ours.process.popen.pid
        cpu_before = {name: cpu_seconds(pid) for name, pid in processes.items()}
        conversions_before = conversions(apiserver_metrics(stack.api.kubeconfig))
        audit.mark()
        start = time.monotonic()
        names = [f"bench-{i:04d}" for i in range(n)]
        gate = asyncio.Semaphore(args.concurrency)

        async def create(name: str) -> None:
            async with gate:
                cluster = stack.data.cluster(
                    name, namespace, control_plane=1, workers=args.workers, pool_replicas=args.pool_replicas or None
                )
                await retry_while_webhooks_start(lambda: client.create(cluster))

        await asyncio.gather(*(create(name) for name in names))
        v1beta2 = release.minor >= 11
        while True:
            ready = await _count_ready(client, stack, namespace, v1beta2)
            if ready == n:
                break
            if time.monotonic() - start > args.timeout:
                raise TimeoutError(f"{n} Clusters not ready after {args.timeout:g}s ({owner})")
            if args.progress:
                print(f"  [{time.monotonic() - start:6.0f}s] {ready}/{n} ready", file=sys.stderr)
            await asyncio.sleep(args.poll)
        result.ready_seconds = time.monotonic() - start
        result.cpu_seconds = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in processes.items()}
        result.peak_rss_mib = {name: peak_rss_mib(pid) for name, pid in processes.items()}
        converted = conversions(apiserver_metrics(stack.api.kubeconfig))
        result.conversions = {
            what: round(value - conversions_before.get(what, 0.0), 3) for what, value in sorted(converted.items())
        }
        everyone = list(audit.requests())
        result.cluster_api_writes = sum(1 for r in everyone if is_cluster_api_write(r))
        requests: list[Request] = [r for r in everyone if r.agent != "bench"]
        for agent in (OURS_AGENT, CORE_AGENT):
            mine = by_agent(requests, agent)
            result.requests[agent] = len(mine)
            result.by_verb[agent] = dict(tally(mine).most_common())
            result.latency_ms[agent] = request_latency_ms(mine)
            result.by_version[agent] = dict(Counter(f"{r.verb} {r.what} {r.api_version}" for r in mine).most_common())
        metrics = stack.ours.metrics() if stack.ours is not None else stack.capi.running["core"].metrics()
        result.reconciles = reconciles(metrics)
        for attribute, q in (("p50_ms", 0.5), ("p99_ms", 0.99)):
            value = quantile(metrics, q)
            setattr(result, attribute, None if value is None else value * 1000)
        if args.quiet:
            result.quiet_after_seconds, before_quiet = await wait_for_quiet(
                audit, (OURS_AGENT, CORE_AGENT), args.quiet, args.timeout
            )
            result.until_quiet = {agent: len(by_agent(before_quiet, agent)) for agent in (OURS_AGENT, CORE_AGENT)}
            if args.progress:
                print(f"  quiet after {result.quiet_after_seconds}s: {result.until_quiet} before", file=sys.stderr)
        audit.mark()
        await asyncio.sleep(args.idle)
        idle = [r for r in audit.requests() if r.agent != "bench"]
        result.idle_requests = {agent: len(by_agent(idle, agent)) for agent in (OURS_AGENT, CORE_AGENT)}
        result.idle_by_verb = {
            agent: dict(tally(by_agent(idle, agent)).most_common()) for agent in (OURS_AGENT, CORE_AGENT)
        }
    finally:
        await client.close()
        await stack.stop_pools()
        if args.keep_logs:
            keep = Path(args.keep_logs) / f"{owner}-{n}"
            keep.mkdir(parents=True, exist_ok=True)
            for log in workdir.glob("*.log"):
                (keep / log.name).write_bytes(log.read_bytes())
        stack.stop()
    return result


# --- the comparison --------------------------------------------------------------------------------------------


def upstream_topology_share(upstream: Run, ours: Run) -> dict[str, Any]:
    """Upstream's topology controller's share of its core manager (module doc): the difference of the two runs."""
    return {
        "requests": upstream.requests[CORE_AGENT] - ours.requests[CORE_AGENT],
        "idle_requests": upstream.idle_requests[CORE_AGENT] - ours.idle_requests[CORE_AGENT],
        "cpu_seconds": upstream.cpu_seconds["core"] - ours.cpu_seconds["core"],
        "by_verb": dict((Counter(upstream.by_verb[CORE_AGENT]) - Counter(ours.by_verb[CORE_AGENT])).most_common()),
    }


def ms(value: float | None) -> str:
    return "–" if value is None else f"{value:.0f}" if value >= 10 else f"{value:.1f}"


def markdown(release: str, rows: list[tuple[int, Run, Run]]) -> str:
    lines = [
        f"Upstream Cluster API {release} managers, in-memory provider; each Cluster 1 control-plane Machine, 1 "
        "MachineDeployment and 1 MachinePool. upstream = its topology controller in capi-controller-manager; "
        "clusterclass = "
        "`clusterclass run`. Requests and CPU of upstream's topology controller are its core manager's minus "
        "the same manager's in the clusterclass run (module doc of `bench/upstream.py`).",
        "",
        "| N | controller | all Ready (s) | reconcile p50 / p99 (ms) | requests | idle requests | CPU (s) "
        "| peak RSS (MiB) |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for n, upstream, ours in rows:
        share = upstream_topology_share(upstream, ours)
        lines.append(
            f"| {n} | upstream | {upstream.ready_seconds:.0f} | {ms(upstream.p50_ms)} / {ms(upstream.p99_ms)} | "
            f"{share['requests']} | {share['idle_requests']} | {share['cpu_seconds']:.1f} | "
            f"{upstream.peak_rss_mib['core']:.0f} (whole core manager) |"
        )
        lines.append(
            f"| {n} | clusterclass | {ours.ready_seconds:.0f} | {ms(ours.p50_ms)} / {ms(ours.p99_ms)} | "
            f"{ours.requests[OURS_AGENT]} | {ours.idle_requests[OURS_AGENT]} | {ours.cpu_seconds[OURS_AGENT]:.1f} | "
            f"{ours.peak_rss_mib[OURS_AGENT]:.0f} |"
        )
        ratio = upstream.ready_seconds / ours.ready_seconds if ours.ready_seconds else 0.0
        requests = share["requests"] / ours.requests[OURS_AGENT] if ours.requests[OURS_AGENT] else 0.0
        lines.append(f"| {n} | ratio upstream / clusterclass | {ratio:.2f} | | {requests:.2f} | | | |")
    lines += [
        "",
        "Where a reconcile's time goes, until all Ready: the topology controller's reconciles; the latency of the "
        "topology controller's process's requests as kube-apiserver logged them (upstream's: its whole core "
        "manager's), watches left out; kube-apiserver's conversion webhook calls by target version and their "
        "seconds.",
        "",
        "| N | controller | reconciles | request latency p50 / p99 (ms) | conversion webhook calls (s) "
        "| Cluster API writes, all agents |",
        "|---|---|---|---|---|---|",
    ]
    for n, upstream, ours in rows:
        for owner, run, agent in (("upstream", upstream, CORE_AGENT), ("clusterclass", ours, OURS_AGENT)):
            latency = run.latency_ms.get(agent, {})
            calls = ", ".join(
                f"{target}: {value:.0f} ({run.conversions.get(f'seconds {target}', 0):.1f} s)"
                for what, value in run.conversions.items()
                if (target := what.removeprefix("calls ")) != what and value
            )
            lines.append(
                f"| {n} | {owner} | {run.reconciles:.0f} | {ms(latency.get('p50'))} / {ms(latency.get('p99'))} | "
                f"{calls or 'none'} | {run.cluster_api_writes} |"
            )
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> int:
    release = Release.find(args.release)
    rows: list[tuple[int, Run, Run]] = []
    entries: list[dict[str, Any]] = []  # the raw results, as --json prints and --save writes them
    for n in args.clusters:
        runs: dict[str, Run] = {}
        for owner in (o for o in (UPSTREAM, OURS) if o in args.owners):
            with tempfile.TemporaryDirectory(prefix=f"bench-{owner}-{n}-") as workdir:
                print(f"N={n} {owner}: starting", file=sys.stderr)
                runs[owner] = await run_one(release, owner, n, args, Path(workdir))
                print(f"N={n} {owner}: all Ready in {runs[owner].ready_seconds:.0f}s", file=sys.stderr)
        if UPSTREAM in runs and OURS in runs:
            upstream, ours = runs[UPSTREAM], runs[OURS]
            rows.append((n, upstream, ours))
            entries.append(
                {
                    "clusters": n,
                    "upstream": asdict(upstream),
                    "clusterclass": asdict(ours),
                    "upstream_topology": upstream_topology_share(upstream, ours),
                }
            )
        else:
            entries.extend({"clusters": n, owner: asdict(run)} for owner, run in runs.items())
    raw = json.dumps(entries, indent=2)
    if args.save:
        Path(args.save).write_text(raw + "\n")
    print(raw if args.json or not rows else markdown(args.release, rows))  # the tables compare both sides
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--release", default="v1.14.0")
    parser.add_argument("--clusters", type=int, nargs="+", default=[10, 100, 300])
    parser.add_argument("--workers", type=int, default=1, help="Machines of each Cluster's MachineDeployment")
    parser.add_argument(
        "--pool-replicas",
        type=int,
        default=1,
        help="Nodes of each Cluster's MachinePool (0: no MachinePool; the simulated DockerMachinePool provisions it)",
    )
    parser.add_argument("--idle", type=float, default=300.0, help="seconds of idling measured after all are Ready")
    parser.add_argument(
        "--quiet",
        type=float,
        default=30.0,
        help="before the idle window, wait until neither topology agent made a request but watches for this many "
        "seconds (0: not)",
    )
    parser.add_argument("--concurrency", type=int, default=20, help="Cluster creates in flight")
    parser.add_argument("--poll", type=float, default=2.0)
    parser.add_argument("--timeout", type=float, default=3600.0)
    parser.add_argument("--progress", action="store_true")
    parser.add_argument("--keep-logs", metavar="DIR")
    parser.add_argument(
        "--owners",
        nargs="+",
        choices=[UPSTREAM, OURS],
        default=[UPSTREAM, OURS],
        help="the topology controllers to run (default both; one alone prints its JSON)",
    )
    parser.add_argument(
        "--save", metavar="FILE", help="also write the raw results as JSON to FILE (the table's source)"
    )
    output = parser.add_mutually_exclusive_group()
    output.add_argument("--markdown", action="store_true", help="a README table (default)")
    output.add_argument("--json", action="store_true")
    return asyncio.run(main_async(parser.parse_args()))


if __name__ == "__main__":
    raise SystemExit(main())
