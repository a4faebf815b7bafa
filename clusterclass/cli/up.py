"""``clusterclass up``: a management cluster with simulated providers, and a Cluster with MachinePools on it.

One process runs the embedded store (kept in ``--state``), its Kubernetes API for kubectl, the
topology and ClusterClass controllers and the simulated Cluster API providers
(:mod:`clusterclass.up`). With the bundled example (the default) it creates a ClusterClass with two
MachinePool classes and a MachineDeployment class and a Cluster using them, shows them coming up, and
once they are ready prints the kubeconfigs and what to try next. It then keeps serving until Ctrl-C
or SIGTERM — or exits at once with ``--exit-when-ready`` (non-zero if not ready within
``--timeout``). Run it again with the same state and it carries on where it stopped.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import signal
import sys
from pathlib import Path

import click
from rich.console import Console

from clusterclass.cli.running import run_to_exit
from clusterclass.errors import ClusterClassError
from clusterclass.privatefiles import write_private

log = logging.getLogger("clusterclass.up")


@click.command()
@click.option(
    "--state",
    type=click.Path(dir_okay=False, path_type=Path),
    default=".clusterclass/state.db",
    show_default=True,
    metavar="PATH",
    help="SQLite file keeping the management cluster across runs (a PATH.d/ directory goes beside it).",
)
@click.option("--ephemeral", is_flag=True, help="Keep nothing: the management cluster lives in memory only.")
@click.option(
    "--port", type=click.IntRange(0, 65535), help="API port on 127.0.0.1 (default: the last run's, else a free one)."
)
@click.option(
    "--kubeconfig-out",
    type=click.Path(dir_okay=False, path_type=Path),
    metavar="FILE",
    help="Where to write the management cluster's kubeconfig (default: kubeconfig beside the state file).",
)
@click.option(
    "--example/--no-example",
    default=True,
    show_default=True,
    help="Create the bundled example ClusterClass and Cluster.",
)
@click.option(
    "--example-version",
    type=click.Choice(["v1beta2", "v1beta1"]),
    default="v1beta2",
    show_default=True,
    help="The Cluster API version the example is written in (quick-start.yaml or quick-start-v1beta1.yaml).",
)
@click.option(
    "--example-extension",
    is_flag=True,
    help="Also run the example Runtime Extension (Python SDK) and a Cluster whose ClusterClass uses it.",
)
@click.option("--exit-when-ready", is_flag=True, help="Exit once every followed Cluster is ready (for scripts and CI).")
@click.option(
    "--timeout", type=click.FloatRange(min=1), default=600, show_default=True, help="Seconds --exit-when-ready waits."
)
@click.option(
    "--delays",
    type=click.Choice(["none", "fast", "in-memory"]),
    default="fast",
    show_default=True,
    help="How long provisioning steps take: none (instant), fast (seconds), in-memory (upstream's in-memory provider).",
)
@click.option(
    "--delay",
    "delay_overrides",
    multiple=True,
    metavar="STEP=SECONDS[~JITTER]",
    help="One step's duration (repeatable).",
)
@click.option(
    "--fail",
    "failures",
    multiple=True,
    metavar="STEP[:COUNT]",
    help="Make a step fail COUNT times, or always (repeatable).",
)
@click.option(
    "--pool-max-surge",
    type=click.IntRange(min=1),
    metavar="N",
    help="Roll MachinePool instances N at a time (default: all replacements at once, as CAPD does).",
)
@click.option("--seed", type=int, help="Seed for names and step jitter, for repeatable runs.")
@click.option("-v", "--verbose", is_flag=True, help="Also log the controllers to standard error.")
def up(
    state: Path,
    ephemeral: bool,
    port: int | None,
    kubeconfig_out: Path | None,
    example: bool,
    example_version: str,
    example_extension: bool,
    exit_when_ready: bool,
    timeout: float,
    delays: str,
    delay_overrides: tuple[str, ...],
    failures: tuple[str, ...],
    pool_max_surge: int | None,
    seed: int | None,
    verbose: bool,
) -> None:
    """Run a management cluster with simulated providers and bring the example Cluster up.

    \b
    Steps (delays, failures) are: loadBalancer, bootstrapData, vm, node, apiServer, etcd.
    Examples:
      clusterclass up                       # the example Cluster, then serve until Ctrl-C
      clusterclass up --exit-when-ready     # for scripts: exit 0 once Ready
      clusterclass up --fail vm:2           # every machine's bootstrap fails twice first
    """
    from clusterclass.sim.timing import profile
    from clusterclass.up.state import StateLayout

    try:
        timing = profile(delays, seed=seed or 0, delays=delay_overrides, failures=failures)
    except ClusterClassError as err:
        raise click.BadParameter(str(err)) from None
    layout = None if ephemeral else StateLayout(state)
    if layout is not None:
        layout.prepare()
    _configure_logging(layout.log_file if layout is not None else None, verbose)
    console = Console(highlight=False, soft_wrap=True)
    run_to_exit(
        _up(
            console,
            layout=layout,
            timing=timing,
            port=port,
            kubeconfig_out=kubeconfig_out,
            example=example,
            example_version=example_version,
            example_extension=example_extension,
            exit_when_ready=exit_when_ready,
            timeout=timeout,
            seed=seed,
            pool_max_surge=pool_max_surge,
        )
    )


def _configure_logging(log_file: Path | None, verbose: bool) -> None:
    handlers: list[logging.Handler] = []
    if log_file is not None:
        handlers.append(logging.FileHandler(log_file))
    if verbose:
        handlers.append(logging.StreamHandler(sys.stderr))
    if not handlers:
        handlers.append(logging.NullHandler())
    logging.basicConfig(
        level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s", handlers=handlers, force=True
    )


async def _up(
    console: Console,
    *,
    layout: object,
    timing: object,
    port: int | None,
    kubeconfig_out: Path | None,
    example: bool,
    exit_when_ready: bool,
    timeout: float,
    seed: int | None,
    pool_max_surge: int | None = None,
    example_extension: bool = False,
    example_version: str = "v1beta2",
) -> int:
    from clusterclass.api.objects import name_of, namespace_of
    from clusterclass.apiserver.front.serving import write_kubeconfig
    from clusterclass.sim.timing import Timing
    from clusterclass.up.example import apply_example, example_clusters, example_objects, example_path
    from clusterclass.up.extension import VARIANT, ServedExtension, serve_example_extension, variant_objects
    from clusterclass.up.management import EmbeddedManagementCluster
    from clusterclass.up.progress import Progress
    from clusterclass.up.state import StateLayout

    assert layout is None or isinstance(layout, StateLayout)
    assert isinstance(timing, Timing)
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, stopping.set)
    management = EmbeddedManagementCluster(
        layout=layout, timing=timing, port=port, seed=seed, pool_max_surge=pool_max_surge
    )
    served: ServedExtension | None = None
    try:
        await management.start()
        assert management.client is not None
        kubeconfig_path = kubeconfig_out or (layout.default_kubeconfig if layout is not None else Path("kubeconfig"))
        write_kubeconfig(kubeconfig_path, management.kubeconfig())
        where = f"{layout.state_file} ({'resumed' if management.resumed else 'new'})" if layout else "in memory"
        console.print(f"clusterclass up: management cluster at {management.url}, state {where}")
        console.print(f"kubeconfig: {kubeconfig_path}")
        if layout is not None:
            console.print(f"controller log: {layout.log_file}")
        clusters: list[tuple[str, str]] = []
        if example:
            created = await apply_example(management.client, version=example_version)
            clusters = example_clusters(example_version)
            if created:
                console.print(
                    f"created the example ({example_path(example_version)}): {len(created)} objects, "
                    + ", ".join(f"Cluster {ns}/{name}" for ns, name in clusters)
                )
            else:
                console.print("the example is already there: following it")
        if example_extension:
            served = await serve_example_extension(management.client)
            console.print(f"example Runtime Extension: {served.url} (ExtensionConfig example-extension)")
            variant = variant_objects()
            if not example:  # the variant uses the example's templates
                variant = [o for o in example_objects(example_version) if o["kind"] != "Cluster"] + variant
            created_variant = await apply_example(management.client, variant)
            clusters += [(namespace_of(o), name_of(o)) for o in variant if o["kind"] == "Cluster"]
            if created_variant:
                console.print(
                    f"created the extension example (clusterclass/examples/{VARIANT}): {len(created_variant)} objects"
                )
            else:
                console.print("the extension example is already there: following it")
        if not example and not example_extension:
            listed = await management.client.list("cluster.x-k8s.io/v1beta1", "Cluster")
            clusters = [
                (o["metadata"]["namespace"], o["metadata"]["name"])
                for o in listed.items
                if o.get("spec", {}).get("topology")
            ]
        states = []
        if clusters:
            progress = Progress(management.client, clusters, console)
            runner = asyncio.ensure_future(progress.run(timeout=timeout if exit_when_ready else None))
            stopper = asyncio.ensure_future(stopping.wait())
            done, _ = await asyncio.wait({runner, stopper}, return_when=asyncio.FIRST_COMPLETED)
            if runner not in done:
                runner.cancel()
                await asyncio.gather(runner, return_exceptions=True)
                console.print("stopping")
                return 0
            stopper.cancel()
            states = runner.result()
        else:
            console.print("no Cluster to follow: apply a ClusterClass and a Cluster with kubectl")
        not_ready = [s for s in states if not s.ready]
        if not_ready:
            for state in not_ready:
                console.print(f"Cluster {state.namespace}/{state.name} is not ready after {timeout:g}s; waiting for:")
                for line in state.waiting:
                    console.print(f"  • {line}")
            return 1
        workload_configs = []
        for namespace, name in clusters:
            secret = await management.client.get("v1", "Secret", f"{name}-kubeconfig", namespace=namespace)
            target = (
                layout.workload_kubeconfig(namespace, name)
                if layout is not None
                else Path(f"{namespace}-{name}.kubeconfig")
            )
            write_private(target, base64.b64decode(secret["data"]["value"]))
            workload_configs.append((namespace, name, target))
        if clusters:
            console.print("")
            console.print("ready. Try:")
            console.print(
                f"  kubectl --kubeconfig {kubeconfig_path} get clusters,machinepools,machinedeployments,machines -A"
            )
            for namespace, name, target in workload_configs:
                console.print(f"  clusterclass describe cluster {name} -n {namespace} --kubeconfig {kubeconfig_path}")
                console.print(f"  kubectl --kubeconfig {target} get nodes")
            namespace, name = clusters[0]
            console.print(
                f"  kubectl --kubeconfig {kubeconfig_path} -n {namespace} patch cluster {name} --type merge "
                '-p \'{"spec":{"topology":{"version":"v1.29.0"}}}\'   # upgrade: control plane first'
            )
            if example_extension:
                response = '{"Status":"Success","RetryAfterSeconds":10,"Message":"held by the example extension"}'
                console.print(
                    f"  kubectl --kubeconfig {kubeconfig_path} -n default create configmap "
                    "demo-extension-test-extension-hookresponses "
                    f"--from-literal=BeforeClusterUpgrade-preloadedResponse='{response}'   # hold its upgrades"
                )
        if exit_when_ready:
            return 0
        console.print("serving until Ctrl-C or SIGTERM")
        await stopping.wait()
        console.print("stopping")
        return 0
    finally:
        for signum in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(signum)
        await management.stop()
        if served is not None:
            await served.stop()
