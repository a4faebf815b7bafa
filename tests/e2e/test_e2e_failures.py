"""Injected failures: steps that fail are reported as the real providers report them, then retried.

:mod:`clusterclass.sim.timing` makes a step fail a number of times (or always), from the options or from
the ``sim.clusterclass.dev/fail`` annotation on an object or its Cluster. A failing bootstrap shows
CAPD's ``BootstrapExecSucceeded=False/BootstrapFailed`` ("Repeating bootstrap") and the Cluster still
comes up once the attempts run out; a load balancer that never comes up keeps the Cluster
``Provisioning`` with the DockerCluster saying why.
"""

from __future__ import annotations

from e2e_support import INFRA, SimEnv, eventually, example_cluster

from clusterclass.api.objects import dig
from clusterclass.sim.timing import NONE, FailureRule, Timing


def with_failures(*rules: FailureRule) -> Timing:
    return Timing(steps=NONE.steps, requeue_scale=NONE.requeue_scale, failures=rules)


async def test_a_bootstrap_that_fails_twice_is_repeated_and_the_cluster_comes_up(env: SimEnv) -> None:
    env.timing = with_failures(FailureRule("vm", 2))
    await env.restart()
    await env.apply_example(example_cluster(controlPlane={"replicas": 1}))
    seen_failure = False

    async def failed_once() -> bool:
        nonlocal seen_failure
        for machine in await env.list(INFRA, "DockerMachine"):
            for condition in dig(machine, "status", "conditions") or []:
                if condition["type"] == "BootstrapExecSucceeded" and condition.get("reason") == "BootstrapFailed":
                    assert condition["message"] == "Repeating bootstrap" and condition["severity"] == "Warning"
                    seen_failure = True
        return seen_failure

    await eventually(failed_once, what="a DockerMachine to report the failed bootstrap")
    await env.wait_ready()
    events = [e for e in await env.list("v1", "Event") if e.get("reason") == "BootstrapFailed"]
    assert events and all(e["type"] == "Warning" for e in events)


async def test_an_annotation_on_the_cluster_makes_its_load_balancer_fail(env: SimEnv) -> None:
    cluster = example_cluster()
    cluster["metadata"]["annotations"] = {"sim.clusterclass.dev/fail": "loadBalancer"}
    await env.apply_example(cluster)

    async def reported() -> bool:
        for docker_cluster in await env.list(INFRA, "DockerCluster"):
            for condition in dig(docker_cluster, "status", "conditions") or []:
                if (
                    condition["type"] == "LoadBalancerAvailable"
                    and condition.get("reason") == "LoadBalancerProvisioningFailed"
                ):
                    return True
        return False

    await eventually(reported, what="the DockerCluster to report the failing load balancer")
    assert await env.pending() != []
    assert "Cluster demo is Provisioning" in await env.pending()
