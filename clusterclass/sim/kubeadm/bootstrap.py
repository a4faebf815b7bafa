"""The kubeadm bootstrap provider (CABPK, providers-spec §2.8): a KubeadmConfig's bootstrap data Secret.

A KubeadmConfig is acted on only once a Machine or MachinePool controls it (its "config owner").
It waits for the Cluster's infrastructure, then — unless it is the control plane's first machine,
which makes the *init* data — for ``ControlPlaneInitialized``; then it fills in the join discovery
(the endpoint, a bootstrap token, the CA hash) and writes the data Secret, named like the config,
type ``cluster.x-k8s.io/secret``, keys ``value`` (the cloud-config) and ``format``, controlled by the
config; ``status.dataSecretName`` and ``status.ready`` follow. Once ready a config is never generated
again: later spec edits change nothing (which is why a ClusterClass bootstrap change does not reach
MachinePool instances upstream).

The data itself is a cloud-config with the kubeadm configuration and the ``kubeadm init`` or
``kubeadm join`` command, as CABPK writes one; the simulated machines do not run it, they only wait for
it (the ``bootstrapData`` step).
"""

from __future__ import annotations

import hashlib

from cryptography import x509
from cryptography.hazmat.primitives import serialization

from clusterclass.api import constants as c
from clusterclass.api.conditions import false, find, is_true, set_conditions, summary, true
from clusterclass.api.jsoncopy import json_copy
from clusterclass.api.objects import Obj, dig, labels_of, name_of, namespace_of
from clusterclass.kube.errors import AlreadyExists
from clusterclass.sim.base import ProviderController, controller_of, deleting, owner_reference
from clusterclass.sim.kubeadm.certificates import certificate_secret, decode, encode
from clusterclass.topology.shim import CLUSTER_SECRET_TYPE
from clusterclass.yamlio import dump_yaml

BOOTSTRAP_API_VERSION = "bootstrap.cluster.x-k8s.io/v1beta1"
KUBEADM_CONFIG = "KubeadmConfig"
DATA_SECRET_AVAILABLE = "DataSecretAvailable"
CERTIFICATES_AVAILABLE = "CertificatesAvailable"
CONTROL_PLANE_INITIALIZED = "ControlPlaneInitialized"
DEFAULT_FORMAT = "cloud-config"
SECRETS_SELECTOR = f"type={CLUSTER_SECRET_TYPE}"


def ca_cert_hash(ca_pem: bytes) -> str:
    """kubeadm's discovery hash: ``sha256:`` and the SHA-256 of the CA's public key (SubjectPublicKeyInfo)."""
    cert = x509.load_pem_x509_certificate(ca_pem)
    public = cert.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return "sha256:" + hashlib.sha256(public).hexdigest()


def cloud_config(config: Obj, *, init: bool) -> str:
    """The bootstrap data: the kubeadm configuration as a file and the command that uses it."""
    spec = config.get("spec") or {}
    documents = []
    if init:
        documents.append(
            {
                "apiVersion": "kubeadm.k8s.io/v1beta3",
                "kind": "ClusterConfiguration",
                **(spec.get("clusterConfiguration") or {}),
            }
        )
        documents.append(
            {
                "apiVersion": "kubeadm.k8s.io/v1beta3",
                "kind": "InitConfiguration",
                **(spec.get("initConfiguration") or {}),
            }
        )
        command = "kubeadm init --config /run/kubeadm/kubeadm.yaml"
    else:
        documents.append(
            {
                "apiVersion": "kubeadm.k8s.io/v1beta3",
                "kind": "JoinConfiguration",
                **(spec.get("joinConfiguration") or {}),
            }
        )
        command = "kubeadm join --config /run/kubeadm/kubeadm-join-config.yaml"
    content = "---\n".join(str(dump_yaml(document)) for document in documents)
    data = {
        "write_files": [
            {
                "path": "/run/kubeadm/kubeadm.yaml" if init else "/run/kubeadm/kubeadm-join-config.yaml",
                "owner": "root:root",
                "permissions": "0640",
                "content": content,
            },
            *(spec.get("files") or []),
        ],
        "runcmd": [*(spec.get("preKubeadmCommands") or []), command, *(spec.get("postKubeadmCommands") or [])],
    }
    return "## template: jinja\n#cloud-config\n\n" + str(dump_yaml(data))


class KubeadmConfigController(ProviderController):
    name = "kubeadmconfig-controller"
    api_version = BOOTSTRAP_API_VERSION
    kind = KUBEADM_CONFIG

    async def setup_watches(self) -> None:
        await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE, self._config_of_machine)
        await self.watched_informer(c.CLUSTER_API_VERSION, c.KIND_MACHINE_POOL, self._config_of_pool)
        await self.watch_clusters()
        self.secrets = await self.manager.informer("v1", "Secret", field_selector=SECRETS_SELECTOR)

    def _config_of_machine(self, machine: Obj) -> list[str]:
        ref = dig(machine, "spec", "bootstrap", "configRef")
        return (
            [f"{namespace_of(machine)}/{ref['name']}"]
            if isinstance(ref, dict) and ref.get("kind") == KUBEADM_CONFIG
            else []
        )

    def _config_of_pool(self, pool: Obj) -> list[str]:
        ref = dig(pool, "spec", "template", "spec", "bootstrap", "configRef")
        return (
            [f"{namespace_of(pool)}/{ref['name']}"]
            if isinstance(ref, dict) and ref.get("kind") == KUBEADM_CONFIG
            else []
        )

    async def _owner(self, config: Obj) -> Obj | None:
        ref = controller_of(config)
        if ref is None or ref.get("kind") not in (c.KIND_MACHINE, c.KIND_MACHINE_POOL):
            return None
        return await self.manager.get(c.CLUSTER_API_VERSION, str(ref["kind"]), namespace_of(config), str(ref["name"]))

    async def reconcile(self, current: Obj) -> float | None:
        if deleting(current):
            return None
        owner = await self._owner(current)
        if owner is None:
            return None
        namespace = namespace_of(current)
        cluster = await self.cluster(namespace, dig(owner, "spec", "clusterName"))
        if cluster is None or self.paused(current, cluster):
            return None
        config = json_copy(current)
        secret_name = name_of(config)
        existing = self.secrets.get(secret_name, namespace)
        if existing is not None and controller_of(existing) is None:
            adopted = json_copy(existing)
            adopted["metadata"]["ownerReferences"] = [owner_reference(config, controller=True)]
            await self.save(existing, adopted)
        requeue = await self._data(config, owner, cluster, existing)
        now = self.context.now()
        set_conditions(config, [summary(config, [DATA_SECRET_AVAILABLE, CERTIFICATES_AVAILABLE])], now)
        config.setdefault("status", {})["observedGeneration"] = dig(config, "metadata", "generation")
        await self.save(current, config)
        return requeue

    async def _data(self, config: Obj, owner: Obj, cluster: Obj, existing: Obj | None) -> float | None:
        now = self.context.now()
        status = config.setdefault("status", {})
        if dig(cluster, "status", "infrastructureReady") is not True:
            set_conditions(config, [false(DATA_SECRET_AVAILABLE, "WaitingForClusterInfrastructure", "Info")], now)
            return None
        owner_secret = (
            dig(owner, "spec", "bootstrap", "dataSecretName")
            if owner["kind"] == c.KIND_MACHINE
            else dig(owner, "spec", "template", "spec", "bootstrap", "dataSecretName")
        )
        if owner_secret and not (status.get("ready") and status.get("dataSecretName")):
            status.update({"ready": True, "dataSecretName": owner_secret})
            set_conditions(config, [true(DATA_SECRET_AVAILABLE)], now)
            return None
        if status.get("ready"):
            return None
        control_plane = owner["kind"] == c.KIND_MACHINE and c.LABEL_CONTROL_PLANE in labels_of(owner)
        spec = config.setdefault("spec", {})
        init = False
        if not is_true(cluster, CONTROL_PLANE_INITIALIZED):
            init = control_plane and (
                spec.get("initConfiguration") is not None or spec.get("clusterConfiguration") is not None
            )
            if not init:
                waiting = find(config, DATA_SECRET_AVAILABLE)
                if waiting is None or waiting.get("reason") != "DataSecretGenerationFailed":
                    set_conditions(
                        config, [false(DATA_SECRET_AVAILABLE, "WaitingForControlPlaneAvailable", "Info")], now
                    )
                return self.timing.requeue(30)
        ca = await self._cluster_ca(cluster, config)
        if ca is None:
            set_conditions(
                config,
                [
                    false(
                        CERTIFICATES_AVAILABLE,
                        "CertificatesGenerationFailed",
                        "Warning",
                        "the Cluster's CA Secret does not exist yet",
                    )
                ],
                now,
            )
            return self.timing.requeue(10)
        set_conditions(config, [true(CERTIFICATES_AVAILABLE)], now)
        if not init:
            endpoint = dig(cluster, "spec", "controlPlaneEndpoint") or {}
            if not endpoint.get("host") or not endpoint.get("port"):
                return self.timing.requeue(10)
            join = spec.setdefault("joinConfiguration", {})
            discovery = join.setdefault("discovery", {})
            if not discovery.get("bootstrapToken") and not discovery.get("file"):
                discovery["bootstrapToken"] = {
                    "apiServerEndpoint": f"{endpoint['host']}:{endpoint['port']}",
                    "caCertHashes": [ca_cert_hash(ca)],
                    "token": f"{self.context.lower_alphanumeric(6)}.{self.context.lower_alphanumeric(16)}",
                }
        uid = str(dig(config, "metadata", "uid"))
        left = self.timing.remaining("bootstrapData", uid)
        if left > 0:
            return left
        if self.timing.fails("bootstrapData", uid, name_of(config), self.annotations_for_failures(config, cluster)):
            message = "failed to generate cloud init for bootstrap data: simulated failure"
            set_conditions(
                config, [false(DATA_SECRET_AVAILABLE, "DataSecretGenerationFailed", "Warning", message)], now
            )
            self.events.warning(config, "DataSecretGenerationFailed", message)
            return max(self.timing.wait("bootstrapData", uid), self.timing.requeue(10))
        self.timing.done("bootstrapData", uid)
        await self._write_secret(config, cluster, init, existing)
        status.update({"ready": True, "dataSecretName": name_of(config)})
        set_conditions(config, [true(DATA_SECRET_AVAILABLE)], now)
        return None

    async def _cluster_ca(self, cluster: Obj, config: Obj) -> bytes | None:
        secret = self.secrets.get(f"{name_of(cluster)}-ca", namespace_of(cluster))
        return decode(secret, "tls.crt") if secret is not None else None

    async def _write_secret(self, config: Obj, cluster: Obj, init: bool, existing: Obj | None) -> None:
        spec = config.get("spec") or {}
        data = {
            "value": cloud_config(config, init=init).encode(),
            "format": str(spec.get("format") or DEFAULT_FORMAT).encode(),
        }
        secret = {
            "apiVersion": "v1",
            "kind": "Secret",
            "type": CLUSTER_SECRET_TYPE,
            "metadata": {
                "name": name_of(config),
                "namespace": namespace_of(config),
                "labels": {c.LABEL_CLUSTER_NAME: name_of(cluster)},
                "ownerReferences": [owner_reference(config, controller=True)],
            },
            "data": encode(data),
        }
        if existing is None:
            try:
                await self.manager.client.create(secret)
                return
            except AlreadyExists:
                existing = await self.manager.client.get(
                    "v1", "Secret", name_of(config), namespace=namespace_of(config)
                )
        updated = json_copy(existing)
        updated["data"] = secret["data"]
        await self.save(existing, updated)


__all__ = ["KubeadmConfigController", "certificate_secret"]
