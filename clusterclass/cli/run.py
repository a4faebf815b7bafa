"""``clusterclass run``: the topology and ClusterClass controllers and the webhooks, against any kube-apiserver.

Flags carry upstream's names (Cluster API's ``main.go`` and controller-runtime's), so a Deployment's args move over
unchanged; durations are Go durations (``15s``, ``10m0s``). The work is :class:`clusterclass.run.ControllerProcess`;
this module parses flags, sets up logging, and turns signals into a graceful stop: SIGTERM or Ctrl-C stops taking
work, lets reconciles in flight finish, releases the Lease and exits 0; a lost Lease exits 1.
"""

from __future__ import annotations

import asyncio
import logging
import signal
import sys

import click
from goduration import Duration, DurationParseError

from clusterclass.cli.running import run_to_exit

log = logging.getLogger("clusterclass.run")


class GoDuration(click.ParamType):
    """A Go duration string (``90s``, ``1m30s``, ``10m0s``) as seconds."""

    name = "duration"

    def convert(self, value: object, param: click.Parameter | None, ctx: click.Context | None) -> float:
        if isinstance(value, int | float):
            return float(value)
        try:
            seconds = Duration.parse(str(value)).total_seconds()
        except (DurationParseError, ValueError, OverflowError):
            self.fail(f"{value!r} is not a duration such as 15s, 1m30s or 10m0s", param, ctx)
        if seconds <= 0:
            self.fail(f"{value!r} must be longer than zero", param, ctx)
        return float(seconds)


DURATION = GoDuration()


@click.command()
@click.option("--kubeconfig", metavar="FILE", help="kubeconfig of the management cluster (default: KUBECONFIG, "
              "then the in-cluster service account, then ~/.kube/config).")  # fmt: skip
@click.option("--context", "kube_context", metavar="NAME", help="kubeconfig context (default: its current one).")
@click.option("--leader-elect", is_flag=True, help="Reconcile only while holding the leader Lease.")
@click.option("--leader-elect-lease-duration", type=DURATION, default="15s", show_default=True,
              help="How long a standby waits before taking a Lease that is not renewed.")  # fmt: skip
@click.option("--leader-elect-renew-deadline", type=DURATION, default="10s", show_default=True,
              help="How long the leader tries to renew before it gives up leading.")  # fmt: skip
@click.option("--leader-elect-retry-period", type=DURATION, default="2s", show_default=True,
              help="How often candidates try to acquire or renew.")  # fmt: skip
@click.option("--leader-election-id", default="controller-leader-election-clusterclass", show_default=True,
              help="Name of the Lease.")  # fmt: skip
@click.option("--leader-election-namespace", metavar="NAMESPACE",
              help="Namespace of the Lease (default: the Pod's namespace in a cluster, else default).")  # fmt: skip
@click.option("--namespace", metavar="NAMESPACE", help="Watch and reconcile one namespace only (default: all).")
@click.option("--watch-filter", metavar="VALUE",
              help="Only objects labelled cluster.x-k8s.io/watch-filter=VALUE.")  # fmt: skip
@click.option("--metrics-bind-addr", default="localhost:8080", show_default=True,
              help="Where /metrics is served (host:port, :port, or 0 for off).")  # fmt: skip
@click.option("--health-addr", default=":9440", show_default=True,
              help="Where /healthz and /readyz are served (host:port, :port, or 0 for off).")  # fmt: skip
@click.option("--webhook-port", type=click.IntRange(0, 65535), default=9443, show_default=True,
              help="Port of the admission webhook server (0: no webhook server).")  # fmt: skip
@click.option("--webhook-cert-dir", default="/tmp/k8s-webhook-server/serving-certs/", show_default=True,
              help="Directory of the webhook serving pair tls.crt and tls.key (reloaded on change).")  # fmt: skip
@click.option("--clustertopology-concurrency", type=click.IntRange(min=1), default=10, show_default=True,
              help="Clusters reconciled at once by the topology controller.")  # fmt: skip
@click.option("--clusterclass-concurrency", type=click.IntRange(min=1), default=10, show_default=True,
              help="ClusterClasses reconciled at once.")  # fmt: skip
@click.option("--sync-period", type=DURATION, default="10m0s", show_default=True,
              help="How often every watched object is reconciled again.")  # fmt: skip
@click.option("--sim", is_flag=True,
              help="Also run the simulated Cluster API providers (core, kubeadm, Docker) in this process.")  # fmt: skip
@click.option("--sim-delays", type=click.Choice(["none", "fast", "in-memory"]), default="fast", show_default=True,
              help="With --sim: how long provisioning steps take.")  # fmt: skip
@click.option("--seed", type=int, help="Seed for random name suffixes (and --sim step jitter).")
@click.option("--log-format", type=click.Choice(["text", "json"]), default="text", show_default=True,
              help="Log lines as key=value text or as JSON objects.")  # fmt: skip
@click.option("-v", "--v", "verbosity", count=True, help="More log detail (repeatable).")
def run(
    kubeconfig: str | None,
    kube_context: str | None,
    leader_elect: bool,
    leader_elect_lease_duration: float,
    leader_elect_renew_deadline: float,
    leader_elect_retry_period: float,
    leader_election_id: str,
    leader_election_namespace: str | None,
    namespace: str | None,
    watch_filter: str | None,
    metrics_bind_addr: str,
    health_addr: str,
    webhook_port: int,
    webhook_cert_dir: str,
    clustertopology_concurrency: int,
    clusterclass_concurrency: int,
    sync_period: float,
    sim: bool,
    sim_delays: str,
    seed: int | None,
    log_format: str,
    verbosity: int,
) -> None:
    """Run the topology and ClusterClass controllers and the admission webhooks on a management cluster.

    \b
    Examples:
      clusterclass run --kubeconfig ~/.kube/config --webhook-port 0     # controllers only
      clusterclass run --leader-elect --webhook-cert-dir /certs          # as the Deployment in config/ runs it
      clusterclass run --sim --webhook-port 0                            # plus simulated providers
    """
    from clusterclass.controllers.runtime.leaderelection import LeaderElectionConfig
    from clusterclass.run import RunOptions
    from clusterclass.run.endpoints import BindAddressError, parse_bind_address
    from clusterclass.sim.timing import profile

    try:
        metrics_address = parse_bind_address(metrics_bind_addr, "--metrics-bind-addr")
        health_address = parse_bind_address(health_addr, "--health-addr")
    except BindAddressError as err:
        raise click.BadParameter(str(err)) from None
    try:  # the same checks client-go makes of the three timings
        LeaderElectionConfig(
            name=leader_election_id,
            namespace="x",
            identity="x",
            lease_duration=leader_elect_lease_duration,
            renew_deadline=leader_elect_renew_deadline,
            retry_period=leader_elect_retry_period,
        )
    except ValueError as err:
        raise click.BadParameter(str(err), param_hint="--leader-elect-*") from None
    options = RunOptions(
        kubeconfig=kubeconfig,
        context=kube_context,
        leader_elect=leader_elect,
        lease_duration=leader_elect_lease_duration,
        renew_deadline=leader_elect_renew_deadline,
        retry_period=leader_elect_retry_period,
        leader_election_id=leader_election_id,
        leader_election_namespace=leader_election_namespace,
        namespace=namespace,
        watch_filter=watch_filter,
        sync_period=sync_period,
        topology_workers=clustertopology_concurrency,
        clusterclass_workers=clusterclass_concurrency,
        metrics_address=metrics_address,
        health_address=health_address,
        webhook_port=webhook_port,
        webhook_cert_dir=webhook_cert_dir,
        sim=profile(sim_delays, seed=seed or 0) if sim else None,
        seed=seed,
    )
    _configure_logging(log_format, verbosity)
    run_to_exit(_run(options))


async def _run(options: object) -> int:
    from clusterclass.kube.certs import CertificateError
    from clusterclass.run import ControllerProcess, RunOptions

    assert isinstance(options, RunOptions)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    process = ControllerProcess(options)
    try:
        try:
            await process.start()
        except CertificateError as err:
            log.error("webhook %s (run with --webhook-port 0 to serve no webhooks)", err)
            return 1
        log.info("running; stop with SIGTERM or Ctrl-C")
        stop = asyncio.ensure_future(stopping.wait())
        lost = asyncio.ensure_future(process.lost.wait())
        await asyncio.wait({stop, lost}, return_when=asyncio.FIRST_COMPLETED)
        stop.cancel()
        lost.cancel()
        if process.lost.is_set():
            return 1
        log.info("stopping: finishing the reconciles in flight")
        return 0
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await process.stop()
        log.info("stopped")


def _configure_logging(log_format: str, verbosity: int) -> None:
    from clusterclass.controllers.runtime.logs import JsonFormatter, KeyValueFormatter, install

    handler = install(logging.StreamHandler(sys.stderr))
    handler.setFormatter(JsonFormatter() if log_format == "json" else KeyValueFormatter())
    logging.basicConfig(level=logging.DEBUG if verbosity else logging.INFO, handlers=[handler], force=True)
    if verbosity < 2:  # the HTTP library's own lines only at -vv
        logging.getLogger("aiohttp").setLevel(logging.WARNING)
