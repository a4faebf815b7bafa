"""Upstream Cluster API's own managers, built from its Go modules, running beside a real kube-apiserver.

``scripts/build-capi.sh`` builds, per release, upstream's core manager (``capi-controller-manager``), the kubeadm
bootstrap and control-plane managers and the in-memory infrastructure provider, and keeps each provider's
``config/`` tree beside them. This module runs them as a management cluster's pods would run them, but as local
processes:

- :class:`Release` finds a built release (``CAPI_v1_14_0``-style variables, then the build script's cache) and
  renders each provider's ``config/default`` with ``kubectl kustomize`` — the manifests ``clusterctl init`` would
  apply;
- :func:`localize` turns those manifests into what works on loopback: the CRDs (their conversion webhook and
  every admission webhook pointed by URL at the provider's own webhook port, with the CA of one generated serving
  pair as ``caBundle``); the Deployment, Service, RBAC and cert-manager objects are dropped, since the processes
  run as the cluster's admin with that serving pair in their ``--webhook-cert-dir``;
- :class:`UpstreamCapi` installs a release on a :class:`~support.real_apiserver.RealApiServer` and starts, stops
  and scrapes its managers. Each manager gets its own webhook, health and (plain HTTP) diagnostics port; the
  in-memory provider serves its workload clusters on ``POD_IP=127.0.0.1``.

Who runs the topology is the caller's choice: ``upstream_topology=True`` runs upstream's topology controller in
the core manager (``ClusterTopology=true``); otherwise the core manager runs with ``ClusterTopology=false`` and
its Cluster, ClusterClass and MachinePool admission webhooks are left out of the configuration (upstream's
Cluster and ClusterClass webhooks refuse every topology while the gate is off), so that ``clusterclass run``
serves those, as it does in a real installation (``docs/upstream-differences.md``).
"""

from __future__ import annotations

import contextlib
import copy
import json
import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from clusterclass.api.objects import Obj
from clusterclass.apiserver.crd.definitions import load_bundled_crds
from clusterclass.controllers.runtime.manager import Manager
from clusterclass.kube.http import HttpClient
from clusterclass.sim import Simulation
from clusterclass.sim.docker.machinepool import DockerMachinePoolController
from clusterclass.webhooks.certificates import ServingCertificate, serving_certificate
from clusterclass.webhooks.handlers import WEBHOOKS
from support.real_apiserver import Process, RealApiServer, StartError, find_binary, free_port, local_get

REPO = Path(__file__).resolve().parents[2]
BUILD_SCRIPT = REPO / "scripts" / "build-capi.sh"

#: the releases the build script builds by default, oldest first
RELEASES = ("v1.6.8", "v1.14.0")

#: the providers of a release, in the order they are installed and started
PROVIDERS = ("core", "bootstrap-kubeadm", "controlplane-kubeadm", "infrastructure")

#: the binary of each provider (names the build script gives them)
BINARIES = {
    "core": "capi-controller-manager",
    "bootstrap-kubeadm": "kubeadm-bootstrap-manager",
    "controlplane-kubeadm": "kubeadm-control-plane-manager",
    "infrastructure": "inmemory-infrastructure-manager",
}

#: the kinds a manifest may hold that :func:`localize` keeps
KEPT_KINDS = ("CustomResourceDefinition", "MutatingWebhookConfiguration", "ValidatingWebhookConfiguration")

#: the webhooks clusterclass serves in place of upstream's when it runs the topology (same names as upstream's)
CLUSTERCLASS_WEBHOOKS = frozenset(webhook.name for webhook in WEBHOOKS)

START_TIMEOUT = 120.0
#: what a Go manager's log says when a port it was told to listen on is taken
ADDRESS_IN_USE = "address already in use"


class ReleaseMissing(Exception):
    """An upstream release was not built; the message says where it was looked for and how to build it."""


def _cache_root() -> Path:
    return Path(os.environ.get("CLUSTERCLASS_CACHE") or Path.home() / ".cache" / "clusterclass")


def release_variable(version: str) -> str:
    """The variable the build script prints for ``version``: ``v1.14.0`` → ``CAPI_v1_14_0``."""
    return "CAPI_" + version.replace(".", "_").replace("-", "_")


def minor_of(version: str) -> int:
    return int(version.lstrip("v").split(".")[1])


@dataclass(frozen=True)
class Release:
    """One release's built managers and provider config trees (``<cache>/bin/capi-<version>``)."""

    version: str
    root: Path

    @classmethod
    def find(cls, version: str) -> Release:
        """The built ``version``: ``$CAPI_v1_14_0``-style variable, then the build script's cache."""
        explicit = os.environ.get(release_variable(version))
        candidates = [Path(explicit)] if explicit else []
        candidates.append(_cache_root() / "bin" / f"capi-{version}")
        for root in candidates:
            if (root / "BUILD-OK").is_file():
                return cls(version, root)
        looked = ", ".join(str(c) for c in candidates)
        raise ReleaseMissing(
            f"Cluster API {version} is not built (looked at {looked}); build it with "
            f"`CAPI_VERSIONS={version} bash scripts/build-capi.sh` or point {release_variable(version)} at it"
        )

    @property
    def minor(self) -> int:
        return minor_of(self.version)

    def binary(self, provider: str) -> Path:
        return self.root / BINARIES[provider]

    def manifests(self, provider: str) -> list[Obj]:
        """``config/default`` of ``provider`` rendered by ``kubectl kustomize`` (once; kept beside the build)."""
        rendered = self.root / "rendered" / f"{provider}.yaml"
        if not rendered.is_file():
            kubectl, looked = find_binary("kubectl")
            if kubectl is None:
                raise ReleaseMissing(f"kubectl not found to render the manifests (looked at {', '.join(looked)})")
            done = subprocess.run(
                [str(kubectl), "kustomize", str(self.root / "config" / provider / "default")],
                capture_output=True,
                text=True,
                timeout=120,
            )
            if done.returncode != 0:
                raise ReleaseMissing(f"kubectl kustomize of {provider} {self.version} failed: {done.stderr}")
            rendered.parent.mkdir(exist_ok=True)
            rendered.write_text(done.stdout)
        return [d for d in yaml.load_all(rendered.read_text(), Loader=yaml.CSafeLoader) if d]


def _configurations_path(kind: str) -> str:
    plural = "mutatingwebhookconfigurations" if kind.startswith("Mutating") else "validatingwebhookconfigurations"
    return f"/apis/admissionregistration.k8s.io/v1/{plural}"


def _client_config(config: Obj, base_url: str, ca_bundle: str) -> Obj:
    """A webhook ``clientConfig`` that calls ``base_url`` plus the path its Service reference named."""
    path = (config.get("service") or {}).get("path") or ""
    return {"url": base_url + path, "caBundle": ca_bundle}


def localize(
    documents: Iterable[Obj], *, base_url: str, ca_bundle: str, without_webhooks: frozenset[str] = frozenset()
) -> list[Obj]:
    """The CRDs and webhook configurations of a provider's rendered manifests, calling ``base_url`` (module doc).

    Webhooks named in ``without_webhooks`` are left out of their configuration.
    """
    kept: list[Obj] = []
    for document in documents:
        if document.get("kind") not in KEPT_KINDS:
            continue
        document = copy.deepcopy(document)
        annotations = document["metadata"].get("annotations") or {}
        annotations.pop("cert-manager.io/inject-ca-from", None)
        if document["kind"] == "CustomResourceDefinition":
            webhook = (document["spec"].get("conversion") or {}).get("webhook")
            if webhook is not None:
                webhook["clientConfig"] = _client_config(webhook["clientConfig"], base_url, ca_bundle)
        else:
            webhooks = [w for w in document.get("webhooks") or [] if w["name"] not in without_webhooks]
            for webhook in webhooks:
                webhook["clientConfig"] = _client_config(webhook["clientConfig"], base_url, ca_bundle)
            document["webhooks"] = webhooks
        kept.append(document)
    return kept


@dataclass
class ManagerProcess:
    """One upstream manager running: its process and ports."""

    provider: str
    process: Process
    webhook_port: int
    health_port: int
    diagnostics_port: int
    extra: tuple[str, ...] = ()

    def ready(self) -> bool:
        return local_get(self.health_port, "/readyz")[0] == 200

    def metrics(self) -> str:
        return local_get(self.diagnostics_port, "/metrics")[1]


@dataclass
class UpstreamCapi:
    """A release's managers on ``api`` (module doc). :meth:`install` once, then :meth:`start` each provider."""

    api: RealApiServer
    release: Release
    workdir: Path
    upstream_topology: bool = False
    #: feature gates every manager gets besides ClusterTopology: MachinePools are the point, and the Runtime SDK is on
    #: as clusterclass has it on by default (so both topology controllers track lifecycle hooks alike)
    feature_gates: dict[str, bool] = field(default_factory=lambda: {"MachinePool": True, "RuntimeSDK": True})
    certificate: ServingCertificate = field(default_factory=lambda: serving_certificate(["127.0.0.1", "localhost"]))
    ports: dict[str, int] = field(default_factory=dict)
    running: dict[str, ManagerProcess] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.workdir.mkdir(parents=True, exist_ok=True)
        self.cert_dir = self.workdir / "serving-certs"
        self.certificate.write(self.cert_dir)
        for provider in PROVIDERS:
            self.ports.setdefault(provider, free_port())

    # -- installation -------------------------------------------------------------------------------------------

    def provider_documents(self, provider: str) -> list[Obj]:
        without = CLUSTERCLASS_WEBHOOKS if provider == "core" and not self.upstream_topology else frozenset()
        return localize(
            self.release.manifests(provider),
            base_url=f"https://127.0.0.1:{self.ports[provider]}",
            ca_bundle=self.certificate.ca_bundle,
            without_webhooks=without,
        )

    def install(self, *, extra_crds: Iterable[Obj] = ()) -> None:
        """Every provider's CRDs and webhook configurations (plus ``extra_crds``, e.g. kinds no provider serves)."""
        crds: list[Obj] = list(extra_crds)
        configurations: list[Obj] = []
        for provider in PROVIDERS:
            for document in self.provider_documents(provider):
                (crds if document["kind"] == "CustomResourceDefinition" else configurations).append(document)
        self.api.install_crds(crds)
        for configuration in configurations:
            kind = configuration["kind"]
            plural = (
                "mutatingwebhookconfigurations" if kind.startswith("Mutating") else "validatingwebhookconfigurations"
            )
            status, body = self.api.request("POST", f"/apis/admissionregistration.k8s.io/v1/{plural}", configuration)
            if status not in (200, 201):
                raise StartError(f"registering {kind} {configuration['metadata']['name']} answered {status}: {body}")

    # -- processes ----------------------------------------------------------------------------------------------

    def gates(self, provider: str) -> str:
        gates = dict(self.feature_gates)
        # Only the core manager's gate decides who runs the topology. The kubeadm control-plane provider's
        # KubeadmControlPlaneTemplate webhook refuses every template while its gate is off, and with it on KCP
        # respects the topology's upgrade steps, so it keeps the gate on whoever reconciles topologies.
        gates["ClusterTopology"] = self.upstream_topology or provider != "core"
        # The infrastructure MachinePools are the simulated DockerMachinePool's (SimulatedMachinePools): at v1.14
        # the in-memory provider is CAPD's binary, whose own DockerMachinePool controller would run docker.
        if provider == "infrastructure":
            gates["MachinePool"] = False
        # v1.6's kubeadm control-plane manager, with the gate on, lists a Cluster's MachinePools before deleting its
        # control plane but never registered their types in its scheme: every deletion fails with "no kind is
        # registered for the type v1beta1.MachinePoolList" and no Cluster is ever deleted. With the gate off it does
        # not look; the core Cluster controller deletes the workers, pools included, before the control plane anyway.
        if provider == "controlplane-kubeadm" and self.release.minor <= 6:
            gates["MachinePool"] = False
        return ",".join(f"{k}={str(v).lower()}" for k, v in sorted(gates.items()))

    def argv(self, provider: str, health_port: int, diagnostics_port: int, extra: Iterable[str]) -> list[str]:
        argv = [
            str(self.release.binary(provider)),
            "--leader-elect=false",
            f"--webhook-port={self.ports[provider]}",
            f"--webhook-cert-dir={self.cert_dir}",
            f"--health-addr=127.0.0.1:{health_port}",
            f"--diagnostics-address=127.0.0.1:{diagnostics_port}",
            "--insecure-diagnostics",
            f"--feature-gates={self.gates(provider)}",
            "--v=2",
        ]
        return argv + list(extra)

    def start(self, provider: str, *extra: str, wait: bool = True) -> ManagerProcess:
        """Start one manager as the cluster's admin (``KUBECONFIG``) and wait until it is ready."""
        if provider in self.running:
            raise RuntimeError(f"{provider} is already running")
        health, diagnostics = free_port(), free_port()
        env = {**os.environ, "KUBECONFIG": str(self.api.kubeconfig), "POD_IP": "127.0.0.1"}
        log = self.workdir / f"{provider}.log"
        process = Process(provider, self.argv(provider, health, diagnostics, extra), log, env=env, append=True)
        manager = ManagerProcess(provider, process, self.ports[provider], health, diagnostics, tuple(extra))
        self.running[provider] = manager
        if wait:
            self.wait_ready(manager)
        return manager

    def wait_ready(self, manager: ManagerProcess, timeout: float = START_TIMEOUT, *, retries: int = 3) -> None:
        """Until ``manager`` is ready. One that exits because a port it was given was taken meanwhile (a free port
        is only free until somebody binds it) is started again on new health and diagnostics ports."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if manager.process.exited():
                if retries > 0 and ADDRESS_IN_USE in manager.process.tail(20):
                    self.running.pop(manager.provider, None)
                    again = self.start(manager.provider, *manager.extra, wait=False)
                    return self.wait_ready(again, timeout, retries=retries - 1)
                raise StartError(
                    f"{manager.provider} exited with {manager.process.popen.returncode}:\n{manager.process.tail(60)}"
                )
            if manager.ready():
                return
            time.sleep(0.2)
        raise StartError(f"{manager.provider} not ready after {timeout:.0f}s:\n{manager.process.tail(60)}")

    def start_all(self) -> None:
        for provider in PROVIDERS:
            self.start(provider, wait=False)
        for provider in PROVIDERS:
            self.wait_ready(self.running[provider])

    def stop(self, provider: str) -> None:
        manager = self.running.pop(provider, None)
        if manager is not None:
            manager.process.stop()

    def stop_all(self) -> None:
        for provider in reversed(PROVIDERS):
            with contextlib.suppress(Exception):
                self.stop(provider)

    def restart_core(self, *, upstream_topology: bool) -> ManagerProcess:
        """The core manager again, with upstream's topology controller on or off (webhooks re-registered to match)."""
        self.stop("core")
        self.upstream_topology = upstream_topology
        for document in self.provider_documents("core"):
            if document["kind"] == "CustomResourceDefinition":
                continue
            path = f"{_configurations_path(document['kind'])}/{document['metadata']['name']}"
            status, current = self.api.request("GET", path)
            if status == 200:
                document["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
            status, body = self.api.request("PUT", path, document)
            if status not in (200, 201):
                raise StartError(f"updating {path} answered {status}: {body}")
        return self.start("core")

    def logs(self) -> str:
        """The end of every manager's log, for a failing test's message."""
        return "\n".join(f"--- {provider}\n{manager.process.tail(40)}" for provider, manager in self.running.items())


def metric_samples(text: str, metric: str, **labels: str) -> list[tuple[dict[str, str], float]]:
    """The samples of ``metric`` in Prometheus text whose labels include ``labels``."""
    found = []
    for line in text.splitlines():
        if not line.startswith(metric) or line.startswith("#"):
            continue
        series, _, value = line.rpartition(" ")
        name, _, rest = series.partition("{")
        if name != metric:
            continue
        parsed = dict(
            (k, v.strip('"')) for k, _, v in (part.partition("=") for part in rest.rstrip("}").split(",") if part)
        )
        if all(parsed.get(k) == v for k, v in labels.items()):
            found.append((parsed, float(value)))
    return found


def as_json(obj: Any) -> str:
    return json.dumps(obj, sort_keys=True)


# --- clusterclass run beside them ------------------------------------------------------------------------------


@dataclass
class OurTopologyController:
    """``clusterclass run`` as the topology controller of ``capi``'s management cluster, with its webhooks.

    It runs as the cluster's admin, serves the Cluster, ClusterClass and MachinePool webhooks (registered by URL
    under clusterclass's configuration names, upstream's entries of the same names having been left out) and
    reconciles every Cluster with a topology; upstream's providers do everything else.
    """

    capi: UpstreamCapi
    name: str = "clusterclass"
    extra: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.webhook_port, self.metrics_port, self.health_port = free_port(), free_port(), free_port()
        self.log_path = self.capi.workdir / f"{self.name}.log"
        self.process: Process | None = None

    def start(self, timeout: float = START_TIMEOUT) -> OurTopologyController:
        from clusterclass.webhooks.configuration import url_client_config, webhook_configurations

        argv = [
            str(Path(sys.executable).parent / "clusterclass"),
            "run",
            f"--kubeconfig={self.capi.api.kubeconfig}",
            f"--webhook-port={self.webhook_port}",
            f"--webhook-cert-dir={self.capi.cert_dir}",
            f"--metrics-bind-addr=127.0.0.1:{self.metrics_port}",
            f"--health-addr=127.0.0.1:{self.health_port}",
            *self.extra,
        ]
        self.process = Process(self.name, argv, self.log_path, append=True)
        deadline = time.monotonic() + timeout
        while not self.ready():
            if self.process.exited() or time.monotonic() > deadline:
                raise StartError(f"clusterclass run did not become ready:\n{self.process.tail(60)}")
            time.sleep(0.2)
        for configuration in webhook_configurations(
            url_client_config(f"https://127.0.0.1:{self.webhook_port}", self.capi.certificate.ca_bundle),
            mutating_name="clusterclass-mutating-webhook-configuration",
            validating_name="clusterclass-validating-webhook-configuration",
        ):
            path = f"{_configurations_path(configuration['kind'])}/{configuration['metadata']['name']}"
            status, current = self.capi.api.request("GET", path)
            if status == 200:
                configuration["metadata"]["resourceVersion"] = current["metadata"]["resourceVersion"]
                status, body = self.capi.api.request("PUT", path, configuration)
            else:
                status, body = self.capi.api.request("POST", _configurations_path(configuration["kind"]), configuration)
            if status not in (200, 201):
                raise StartError(f"registering clusterclass's {configuration['kind']} answered {status}: {body}")
        return self

    def ready(self) -> bool:
        return local_get(self.health_port, "/readyz")[0] == 200

    def metrics(self) -> str:
        return local_get(self.metrics_port, "/metrics")[1]

    def stop(self) -> None:
        """SIGTERM (it drains and exits), and its webhook registrations removed."""
        if self.process is not None:
            self.process.stop(timeout=60)
            self.process = None
        for kind, name in (
            ("MutatingWebhookConfiguration", "clusterclass-mutating-webhook-configuration"),
            ("ValidatingWebhookConfiguration", "clusterclass-validating-webhook-configuration"),
        ):
            self.capi.api.request("DELETE", f"{_configurations_path(kind)}/{name}")

    def tail(self, lines: int = 60) -> str:
        return self.process.tail(lines) if self.process is not None else ""


# --- upstream's in-memory ClusterClass and Cluster (its e2e data) --------------------------------------------

_VARIABLE = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(?:(:?[-=])([^${}]*))?\}")


def envsubst(text: str, values: dict[str, str]) -> str:
    """clusterctl's variable substitution for the forms upstream's templates use: ``${X}``, ``${X:-d}``,
    ``${X:=d}`` (a default may itself be a variable, which is substituted first)."""
    while True:
        found = _VARIABLE.search(text)
        if found is None:
            return text
        name, operator, default = found.group(1), found.group(2), found.group(3)
        value = values.get(name)
        if value is None:
            if operator is None:
                raise KeyError(f"the template needs ${{{name}}}")
            value = (default or "").strip('"')
        text = text[: found.start()] + value + text[found.end() :]


def _zero_durations(node: Any) -> None:
    """Every ``startupDuration`` of an in-memory template at ``0s``: machines provision as soon as they can."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key == "startupDuration":
                node[key] = "0s"
            else:
                _zero_durations(value)
    elif isinstance(node, list):
        for item in node:
            _zero_durations(item)


@dataclass(frozen=True)
class InMemoryData:
    """Upstream's in-memory e2e ClusterClass and Cluster of a release, adapted to run here (``documents``).

    The adaptations, each for a reason outside the topology: provisioning durations are zero (fast tests); at v1.14
    the class's external patches and upgrade-plan extension (upstream's e2e test extension, which is not built
    here) are dropped, with the Cluster's variables that extension defines, and the Cluster's ``taints`` (the
    MachineTaintPropagation gate is alpha and off) — what stays is upstream's own class and Cluster. One addition:
    a MachinePool class ``default-worker-mp`` (the MachineDeployment class's KubeadmConfigTemplate and a
    DockerMachinePoolTemplate, :data:`POOL_TEMPLATE`) and a pool ``mp-0`` of it in the Cluster, since the in-memory
    provider has no infrastructure MachinePool; :class:`SimulatedMachinePools` provisions it.
    """

    release: Release

    @property
    def versions(self) -> tuple[str, str]:
        """A Kubernetes version to create at and one to upgrade to, both in the release's supported range."""
        return ("v1.28.0", "v1.29.0") if self.release.minor < 11 else ("v1.33.0", "v1.34.0")

    def _files(self) -> tuple[Path, Path]:
        data = self.release.root / "e2e-data"
        cluster = (
            "cluster-template-in-memory-topology.yaml" if self.release.minor >= 11 else "cluster-with-topology.yaml"
        )
        return data / "clusterclass-in-memory.yaml", data / cluster

    def cluster_class(self, namespace: str) -> list[Obj]:
        class_file, _ = self._files()
        documents = [d for d in yaml.safe_load_all(envsubst(class_file.read_text(), {})) if d]
        for document in documents:
            document["metadata"]["namespace"] = namespace
            if document["kind"] == "ClusterClass":
                document["spec"].pop("patches", None)
                document["spec"].pop("upgrade", None)
            else:
                _zero_durations(document.get("spec"))
        (cluster_class,) = [d for d in documents if d["kind"] == "ClusterClass"]
        pool_template = self._pool_class(cluster_class)
        pool_template["metadata"]["namespace"] = namespace
        documents.insert(documents.index(cluster_class), pool_template)  # the templates before the class
        return documents

    def _pool_class(self, cluster_class: Obj) -> Obj:
        """Add the MachinePool class to ``cluster_class``; its DockerMachinePoolTemplate."""
        deployment_class = cluster_class["spec"]["workers"]["machineDeployments"][0]
        infrastructure = f"infrastructure.cluster.x-k8s.io/{'v1beta2' if self.release.minor >= 11 else 'v1beta1'}"
        template = {
            "apiVersion": infrastructure,
            "kind": "DockerMachinePoolTemplate",
            "metadata": {"name": POOL_TEMPLATE},
            "spec": {"template": {"spec": {"template": {}}}},
        }
        template_ref = {"apiVersion": infrastructure, "kind": "DockerMachinePoolTemplate", "name": POOL_TEMPLATE}
        if self.release.minor >= 11:
            pool_class = {
                "class": POOL_CLASS,
                "bootstrap": copy.deepcopy(deployment_class["bootstrap"]),
                "infrastructure": {"templateRef": template_ref},
            }
        else:
            pool_class = {
                "class": POOL_CLASS,
                "template": {
                    "bootstrap": copy.deepcopy(deployment_class["template"]["bootstrap"]),
                    "infrastructure": {"ref": template_ref},
                },
            }
        cluster_class["spec"]["workers"]["machinePools"] = [pool_class]
        return template

    def cluster(
        self, name: str, namespace: str, *, control_plane: int = 1, workers: int = 2, pool_replicas: int | None = 2
    ) -> Obj:
        """The Cluster, with ``mp-0`` of ``pool_replicas`` (None: no MachinePool)."""
        _, cluster_file = self._files()
        values = {
            "CLUSTER_NAME": name,
            "NAMESPACE": namespace,
            "KUBERNETES_VERSION": self.versions[0],
            "CONTROL_PLANE_MACHINE_COUNT": str(control_plane),
            "WORKER_MACHINE_COUNT": str(workers),
            "DOCKER_POD_CIDRS": "192.168.0.0/16",
            "DOCKER_SERVICE_CIDRS": "10.128.0.0/12",
            "DOCKER_SERVICE_DOMAIN": "cluster.local",
        }
        (cluster,) = [d for d in yaml.safe_load_all(envsubst(cluster_file.read_text(), values)) if d]
        topology = cluster["spec"]["topology"]
        topology.pop("variables", None)
        topology.get("controlPlane", {}).pop("taints", None)
        for deployment in (topology.get("workers") or {}).get("machineDeployments") or []:
            deployment.pop("taints", None)
        if pool_replicas is not None:
            topology.setdefault("workers", {})["machinePools"] = [
                {"class": POOL_CLASS, "name": "mp-0", "replicas": pool_replicas}
            ]
        return cluster


#: the MachinePool class added to upstream's in-memory ClusterClass, and its infrastructure template
POOL_CLASS, POOL_TEMPLATE = "default-worker-mp", "in-memory-default-worker-machinepooltemplate"

#: the Docker kinds the simulated DockerMachinePool reads, which a v1.6 in-memory management cluster lacks
_DOCKER_POOL_CRDS = ("dockermachinepools", "dockermachinepooltemplates", "dockermachines")


def docker_pool_crds(release: Release, api: RealApiServer) -> list[Obj]:
    """The CRDs :class:`SimulatedMachinePools` needs that ``release``'s providers do not install.

    At v1.14 the in-memory provider is CAPD's binary, with every Docker CRD (served in v1beta1 and v1beta2, its own
    conversion webhook). At v1.6 there are none: clusterclass's bundled ones (v1beta1 and v1beta2, converted by
    ``api``'s conversion webhook) with only the contract label a provider of v1.6's time carries
    (``cluster.x-k8s.io/v1beta1: v1beta1``), so that both topology controllers write them in v1beta1.
    """
    if release.minor >= 11:
        return []
    webhook = api.conversion_webhook
    if webhook is None:
        raise StartError("the kube-apiserver is not started: no conversion webhook for the Docker CRDs")
    crds = []
    for crd in load_bundled_crds():
        if crd["metadata"]["name"].split(".")[0] in _DOCKER_POOL_CRDS:
            crd = copy.deepcopy(crd)
            crd["metadata"]["labels"] = {"cluster.x-k8s.io/v1beta1": "v1beta1"}
            crds.append(webhook.installed(crd))
    return crds


#: the User-Agent product of :class:`SimulatedMachinePools`
SIMULATED_POOLS_AGENT = "simulated-dockermachinepool"


class SimulatedMachinePools:
    """clusterclass's simulated DockerMachinePool, alone, as the infrastructure provider of MachinePools.

    Upstream's core MachinePool controller and kubeadm bootstrap provider do the rest. The pools are managed pools
    (:mod:`clusterclass.sim.docker.managedpool`): their instances are Nodes registered in the in-memory provider's
    workload clusters. It runs in the test's own event loop, as the cluster's admin, with a User-Agent of its own
    (:data:`SIMULATED_POOLS_AGENT`) so that the audit log does not count its requests as clusterclass's.
    """

    def __init__(self, kubeconfig: Path) -> None:
        self.kubeconfig = kubeconfig
        self.client: HttpClient | None = None
        self.manager: Manager | None = None
        self.simulation: Simulation | None = None

    async def start(self) -> SimulatedMachinePools:
        self.client = HttpClient.from_kubeconfig(self.kubeconfig, user_agent=f"{SIMULATED_POOLS_AGENT}/test")
        self.manager = Manager(self.client)
        self.simulation = Simulation(self.manager, providers=(DockerMachinePoolController,))
        await self.simulation.setup()
        await self.manager.start()
        return self

    def last_error(self) -> str:
        if self.simulation is None:
            return ""
        return repr(self.simulation.providers[0].controller.stats.last_error)

    async def stop(self) -> None:
        if self.manager is not None:
            await self.manager.stop()
        if self.simulation is not None:
            await self.simulation.close()
        if self.client is not None:
            await self.client.close()
        self.manager = self.simulation = self.client = None
