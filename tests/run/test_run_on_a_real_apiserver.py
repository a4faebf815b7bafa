"""``clusterclass run`` on a real kube-apiserver as a deployment runs it: RBAC-bound, webhooks, leader election.

The kube-apiserver of this module authorizes with ``Node,RBAC`` and calls admission webhooks (its default plugins);
kube-controller-manager's garbage collector runs beside it, so deleting a Cluster works as in a real cluster.
``config/rbac`` (and ``config/sim``'s role) is applied for real; ``clusterclass run`` runs as a subprocess with the
token of the ServiceAccount ``clusterclass-system/clusterclass-manager`` — bound to the generated roles only — so
any request the roles do not allow fails here as it would in a cluster. The webhooks are registered by URL with the
CA of a serving pair made by :mod:`clusterclass.webhooks.certificates`, and every user write goes through kubectl.
"""

from __future__ import annotations

import asyncio
import copy
import json
import re
import subprocess
import sys
import time
from typing import Any

import pytest
import yaml
from run_support import (
    CAPI,
    CONFIG,
    ELECTION_FLAGS,
    LEASE_SECONDS,
    Installed,
    RunProcess,
    as_yaml,
    async_wait,
    cluster_ready,
    kubectl,
    lease_holder,
    quick_start,
    wait,
    wait_as_admin,
)
from support.leftovers import nothing_left

from clusterclass.api.objects import Obj, dig
from clusterclass.apiserver.crd.controllers import bundled_crds
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.describe.collect import collect
from clusterclass.describe.readiness import pending
from clusterclass.sim import Simulation
from clusterclass.sim.timing import NONE
from clusterclass.webhooks.certificates import serving_certificate
from clusterclass.webhooks.conversion import PATH as CONVERSION_PATH

pytestmark = pytest.mark.timeout(600)


# --- the tests -----------------------------------------------------------------------------------------------


def test_the_config_applies_with_the_servers_dry_run(installed: Installed) -> None:
    # the CRDs are installed here with their conversion webhook by URL (this test's webhook server); the config's
    # own names the Service, so it replaces them whole rather than merging into a stanza with both
    done = kubectl(installed.api.kubeconfig, "replace", "--dry-run=server", "-k", str(CONFIG / "crd"))
    assert "server dry run" in done.stdout
    done = kubectl(installed.api.kubeconfig, "apply", "--dry-run=server", "-k", str(CONFIG / "no-certmanager"))
    assert "server dry run" in done.stdout
    rendered = list(yaml.safe_load_all(kubectl(installed.api.kubeconfig, "kustomize", str(CONFIG / "sim")).stdout))
    kinds = {(d["kind"], d["metadata"]["name"]) for d in rendered}
    assert ("Certificate", "clusterclass-serving-cert") in kinds and ("ClusterRole", "clusterclass-sim-role") in kinds
    (deployment,) = [d for d in rendered if d["kind"] == "Deployment"]
    container = deployment["spec"]["template"]["spec"]["containers"][0]
    assert container["args"][:2] == ["run", "--leader-elect"] and container["args"][-1] == "--sim"
    assert container["image"] == "clusterclass:0.1.0"


def _pool_check(crd: Obj, index: int, field: str, workers: tuple[str, ...]) -> Any:
    """The schema of a MachinePool's health-check ``field`` in version ``index`` of ``crd``."""
    node = crd["spec"]["versions"][index]["schema"]["openAPIV3Schema"]
    for key in workers:
        node = node["properties"][key]
    return node["properties"]["machinePools"]["items"]["properties"].get(field)


def test_the_crd_extensions_render_with_kustomize_and_patch_with_kubectl(installed: Installed) -> None:
    """clusterclass's fields beyond upstream's API (MachinePool health checks) are in what ``kubectl kustomize
    config/crd`` renders, as the embedded cluster installs them, and each patch file is what the README says to give
    ``kubectl patch crd`` on a management cluster whose CRDs clusterctl installed."""
    rendered = {
        d["metadata"]["name"]: d
        for d in yaml.safe_load_all(kubectl(installed.api.kubeconfig, "kustomize", str(CONFIG / "crd")).stdout)
    }
    embedded = {crd["metadata"]["name"]: crd for crd in bundled_crds()}
    for name, workers in (
        ("clusters.cluster.x-k8s.io", ("spec", "topology", "workers")),
        ("clusterclasses.cluster.x-k8s.io", ("spec", "workers")),
    ):
        for index, field in ((0, "machineHealthCheck"), (1, "healthCheck")):
            found = _pool_check(rendered[name], index, field, workers)
            assert found is not None, f"{name}: no {field} on MachinePools"
            assert found == _pool_check(embedded[name], index, field, workers)
        patch_file = CONFIG / "crd" / "patches" / f"extensions_{name.split('.')[0]}.yaml"
        done = kubectl(
            installed.api.kubeconfig, "patch", "crd", name, "--type=json", "--patch-file", str(patch_file),
            "--dry-run=server",
        )  # fmt: skip
        assert "patched" in done.stdout


def test_run_with_the_simulated_providers_under_the_generated_roles(installed: Installed) -> None:
    admin = installed.api.kubeconfig
    run = RunProcess(installed, "sim", "--sim", "--sim-delays=none", *ELECTION_FLAGS)
    # the CRDs convert through run's own /convert, which it serves before its caches list through it
    installed.convert_through(f"https://127.0.0.1:{run.webhook_port}{CONVERSION_PATH}", installed.certificate.ca_bundle)
    try:
        wait(run.ready, "/readyz", process=run)
        wait(run.leading, "leadership", process=run)
        installed.register_webhooks(run.webhook_port)
        kubectl(admin, "apply", "-f", "-", stdin=as_yaml(quick_start()))
        # a v1beta2 quick-start, read back in v1beta1 (through run's conversion) and in v1beta2
        v1beta1 = json.loads(kubectl(admin, "get", "clusters.v1beta1.cluster.x-k8s.io", "demo", "-o", "json").stdout)
        assert v1beta1["apiVersion"] == "cluster.x-k8s.io/v1beta1"
        assert v1beta1["spec"]["topology"]["class"] == "quick-start-pools"
        assert run.metric("controller_runtime_webhook_requests_total", webhook=CONVERSION_PATH, code="200") > 0

        wait_as_admin(installed, lambda client: cluster_ready(client, "default"), "the quick-start Cluster to be ready")
        # every write went in the version the server stores: a managedFields entry in another version makes
        # kube-apiserver convert its fields through the webhook on every later write of the object, by anyone
        for resource in ("clusters", "machinedeployments", "machinesets", "machinepools", "machines"):
            shown = kubectl(admin, "get", f"{resource}.v1beta2.cluster.x-k8s.io", "-o", "json", "--show-managed-fields")
            older = [
                (resource, obj["metadata"]["name"], entry["manager"], entry["apiVersion"])
                for obj in json.loads(shown.stdout)["items"]
                for entry in obj["metadata"].get("managedFields") or []
                if entry["apiVersion"] != "cluster.x-k8s.io/v1beta2"
            ]
            assert older == [], older
        described = subprocess.run(
            [sys.executable, "-m", "clusterclass.cli.main", "describe", "cluster", "demo", "--kubeconfig", str(admin)],
            capture_output=True, text=True, timeout=60,
        )  # fmt: skip
        assert described.returncode == 0 and "MachinePool default/demo-mp-0-" in described.stdout

        # admission: an invalid Cluster and an incompatible ClusterClass change are refused with upstream's words
        bad = next(o for o in quick_start() if o["kind"] == "Cluster")
        bad["metadata"]["name"] = "bad"
        bad["spec"]["topology"]["version"] = "v1.28"
        refused = kubectl(admin, "apply", "-f", "-", stdin=as_yaml([bad]), check=False)
        # (kubectl prints an Invalid answer's causes, as it does for upstream's webhook)
        assert refused.returncode != 0
        assert (
            'The Cluster "bad" is invalid: spec.topology.version: Invalid value: "v1.28": '
            "version must be a valid semantic version"
        ) in refused.stderr
        validate_cluster = "/validate-cluster-x-k8s-io-v1beta2-cluster"
        assert run.metric("controller_runtime_webhook_requests_total", webhook=validate_cluster, code="422") == 1
        patch = '[{"op":"replace","path":"/spec/infrastructure/templateRef/kind","value":"DockerMachinePoolTemplate"}]'
        refused = kubectl(admin, "patch", "clusterclass", "quick-start-pools", "--type=json", "-p", patch, check=False)
        assert refused.returncode != 0
        assert 'The ClusterClass "quick-start-pools" is invalid: spec.infrastructure.templateRef.kind: Forbidden' in (
            refused.stderr
        )

        # the roles are tight: what the controllers never do, the manager's identity may not do
        manager = installed.manager_kubeconfig
        for forbidden in (
            ("get", "pods", "-A"),
            ("delete", "clusterclass", "quick-start-pools"),
            ("create", "namespace", "not-allowed"),
            ("create", "configmap", "not-allowed", "-n", "default"),
        ):
            denied = kubectl(manager, *forbidden, check=False)
            assert denied.returncode != 0 and "forbidden" in denied.stderr.lower(), (forbidden, denied.stderr)
        assert kubectl(manager, "auth", "can-i", "patch", "machinepools.cluster.x-k8s.io").stdout.strip() == "yes"

        # metrics after convergence
        assert run.reconciled() > 0
        assert run.metric("controller_runtime_reconcile_total", controller="clusterclass", result="success") > 0
        assert run.metric("workqueue_depth", controller="topology/cluster", name="topology/cluster") == 0
        assert run.metric("rest_client_requests_total", code="201", method="POST", host=installed.api.server[8:]) > 0

        # deleting the Cluster: the providers take it down in order, the garbage collector what they leave to it
        kubectl(admin, "delete", "cluster", "demo", "--wait=false")
        wait_as_admin(
            installed, lambda client: nothing_left(client, "default"), "every object of the Cluster to be gone"
        )

        # nothing the controllers or providers asked for was refused, in the Cluster's whole life
        assert "is forbidden" not in run.log(), re.findall(r".*is forbidden.*", run.log())[:5]
        assert run.terminate() == 0
        assert lease_holder(installed) == ""  # released on SIGTERM
    finally:
        run.stop()
        installed.convert_through_the_harness()  # for the tests after this one: run is gone


def test_kube_apiserver_reaches_the_webhooks_only_through_the_ca_that_signed_their_certificate(
    installed: Installed,
) -> None:
    """TLS to the webhooks is verified: registered with another CA's bundle, every write they guard is refused
    (``failurePolicy: Fail``) and nothing is stored; with the bundle of the CA that signed run's serving pair, the
    same write is defaulted and admitted."""
    admin = installed.api.kubeconfig
    namespace = "webhook-tls"
    kubectl(admin, "create", "namespace", namespace)
    cluster = next(o for o in quick_start(namespace) if o["kind"] == "Cluster")
    run = RunProcess(installed, "tls", *ELECTION_FLAGS)
    try:
        wait(run.ready, "/readyz", process=run)
        wait(run.leading, "leadership", process=run)

        installed.register_webhooks(run.webhook_port, serving_certificate(["127.0.0.1"], ca_name="other-ca").ca_bundle)
        refused = kubectl(admin, "create", "-f", "-", stdin=as_yaml([cluster]), check=False)
        assert refused.returncode != 0
        assert 'failed calling webhook "default.cluster.cluster.x-k8s.io"' in refused.stderr, refused.stderr
        assert "x509: certificate signed by unknown authority" in refused.stderr, refused.stderr
        absent = kubectl(admin, "-n", namespace, "get", "cluster", "demo", check=False)
        assert absent.returncode != 0 and "NotFound" in absent.stderr
        served = "controller_runtime_webhook_requests_total"
        assert run.metric(served, webhook="/mutate-cluster-x-k8s-io-v1beta2-cluster", code="200") == 0

        installed.register_webhooks(run.webhook_port)
        admitted = kubectl(admin, "create", "--dry-run=server", "-o", "json", "-f", "-", stdin=as_yaml([cluster]))
        assert json.loads(admitted.stdout)["metadata"]["name"] == "demo"
        assert run.metric(served, webhook="/mutate-cluster-x-k8s-io-v1beta2-cluster", code="200") == 1
        assert run.terminate() == 0
    finally:
        run.stop()


async def test_a_standby_takes_over_when_the_leader_dies_and_converges_without_duplicates(installed: Installed) -> None:
    """Two replicas; the providers are simulated in this test process, as the environment around the controllers.

    Blocking calls run in threads: the simulated workload clusters are served by this process's event loop, and
    the webhooks ask them for Nodes while kube-apiserver waits for an answer.
    """
    namespace = "failover"
    admin = installed.api.kubeconfig
    await asyncio.to_thread(kubectl, admin, "create", "namespace", namespace)
    client = installed.api.client()
    providers = Manager(client, namespace=namespace)
    simulation = Simulation(providers, timing=NONE)
    await simulation.setup()
    await providers.start()
    first = RunProcess(installed, "first", *ELECTION_FLAGS)
    second: RunProcess | None = None
    try:
        await asyncio.to_thread(wait, first.leading, "the first replica to lead", process=first)
        second = RunProcess(installed, "second", *ELECTION_FLAGS)
        await asyncio.to_thread(wait, second.ready, "the second replica to be ready", process=second)
        await asyncio.to_thread(installed.register_webhooks, first.webhook_port)
        await asyncio.to_thread(kubectl, admin, "apply", "-f", "-", stdin=as_yaml(quick_start(namespace)))
        await async_wait(lambda: cluster_ready(client, namespace), "the Cluster to be ready under the first leader")
        assert first.leading() and not second.leading()
        assert second.reconciled() == 0  # the standby's controllers never ran
        holder = await asyncio.to_thread(lease_holder, installed)

        await asyncio.to_thread(first.kill)  # no release: the standby must wait for the lease to expire
        killed_at = time.monotonic()
        await asyncio.to_thread(wait, second.leading, "the standby to take the lease", 30.0, second)
        took = time.monotonic() - killed_at
        assert took <= LEASE_SECONDS + 3, f"the standby led {took:.1f}s after the leader died"
        assert await asyncio.to_thread(lease_holder, installed) not in ("", holder)

        await asyncio.to_thread(
            installed.register_webhooks, second.webhook_port
        )  # the Service's endpoints follow the live replica
        patch = {"spec": {"topology": {"workers": {"machinePools": []}}}}
        cluster = await client.get(CAPI, "Cluster", "demo", namespace=namespace)
        pools = copy.deepcopy(cluster["spec"]["topology"]["workers"]["machinePools"])
        pools[0]["replicas"] = 4
        patch["spec"]["topology"]["workers"]["machinePools"] = pools
        await asyncio.to_thread(
            kubectl, admin, "-n", namespace, "patch", "cluster", "demo", "--type=merge", "-p", json.dumps(patch)
        )

        async def scaled() -> bool:
            objects = await collect(client, namespace=namespace, name="demo")
            mp0 = [
                p
                for p in objects.machine_pools
                if dig(p, "metadata", "labels", "topology.cluster.x-k8s.io/pool-name") == "mp-0"
            ]
            return not pending(objects) and len(mp0) == 1 and dig(mp0[0], "status", "readyReplicas") == 4

        await async_wait(scaled, "mp-0 to be scaled to 4 under the new leader")
        assert second.reconciled() > 0
        for kind, expected in (("MachinePool", 2), ("MachineDeployment", 1)):
            owned = (await client.list(CAPI, kind, namespace=namespace)).items
            names = [
                dig(
                    o,
                    "metadata",
                    "labels",
                    f"topology.cluster.x-k8s.io/{'pool' if kind == 'MachinePool' else 'deployment'}-name",
                )
                for o in owned
            ]
            assert len(owned) == expected and len(set(names)) == expected, f"duplicate {kind}s: {names}"
        control_planes = (
            await client.list("controlplane.cluster.x-k8s.io/v1beta1", "KubeadmControlPlane", namespace=namespace)
        ).items
        assert len(control_planes) == 1
        assert await asyncio.to_thread(second.terminate) == 0
    finally:
        first.stop()
        if second is not None:
            second.stop()
        await providers.stop()
        await simulation.close()
        await client.close()
