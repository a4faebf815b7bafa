"""A Cluster's certificate Secrets and its admin kubeconfig, as KCP writes them.

KCP keeps four CAs per Cluster in Secrets of type ``cluster.x-k8s.io/secret`` with ``tls.crt`` and
``tls.key``: ``<cluster>-ca`` (the Kubernetes CA), ``<cluster>-etcd``, ``<cluster>-proxy`` (front proxy)
and ``<cluster>-sa`` (the service-account signing key pair). From the first it writes
``<cluster>-kubeconfig`` (key ``value``): a kubeconfig for the control-plane endpoint with an admin
client certificate. That Secret is how every Cluster API controller — and ours, and ``clusterctl get
kubeconfig`` — reaches a workload cluster; the simulated workload cluster's API serves with a
certificate from the same CA, so the kubeconfig is a real one.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping

from clusterclass.api import constants as c
from clusterclass.api.objects import Obj, dig
from clusterclass.kube.certs import CertificateAuthority, signing_key_pair
from clusterclass.topology.shim import CLUSTER_SECRET_TYPE
from clusterclass.yamlio import dump_yaml

#: the CA Secrets of a Cluster, by name suffix, with the common name of each CA
CERTIFICATES: tuple[tuple[str, str], ...] = (
    ("ca", "kubernetes"),
    ("etcd", "etcd-ca"),
    ("proxy", "front-proxy-ca"),
    ("sa", "service-account"),
)
KUBECONFIG_SUFFIX = "-kubeconfig"
KUBECONFIG_KEY = "value"


def encode(data: Mapping[str, bytes]) -> dict[str, str]:
    return {key: base64.b64encode(value).decode() for key, value in data.items()}


def decode(secret: Obj, key: str) -> bytes | None:
    value = dig(secret, "data", key)
    return base64.b64decode(value) if isinstance(value, str) else None


def certificate_secret(cluster: str, namespace: str, suffix: str, common_name: str, owner: Obj) -> Obj:
    """A new CA (or, for ``sa``, signing key pair) Secret ``<cluster>-<suffix>``, controlled by ``owner``."""
    if suffix == "sa":
        pair = signing_key_pair()
        data = {"tls.crt": pair.cert_pem, "tls.key": pair.key_pem}
    else:
        ca = CertificateAuthority(common_name)
        data = {"tls.crt": ca.cert_pem, "tls.key": ca.key_pem}
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": CLUSTER_SECRET_TYPE,
        "metadata": {
            "name": f"{cluster}-{suffix}",
            "namespace": namespace,
            "labels": {c.LABEL_CLUSTER_NAME: cluster},
            "ownerReferences": [owner],
        },
        "data": encode(data),
    }


def cluster_ca(secret: Obj) -> CertificateAuthority | None:
    """The CA of a ``<cluster>-ca`` Secret (None when it holds none)."""
    cert, key = decode(secret, "tls.crt"), decode(secret, "tls.key")
    if cert is None or key is None:
        return None
    return CertificateAuthority.load(cert, key)


def admin_kubeconfig(cluster: str, server: str, ca: CertificateAuthority) -> Obj:
    """The admin kubeconfig of a Cluster: user ``<cluster>-admin``, context ``<cluster>-admin@<cluster>``."""
    user = f"{cluster}-admin"
    client = ca.issue_client(user, ["system:masters"])
    context = f"{user}@{cluster}"
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [
            {
                "name": cluster,
                "cluster": {"server": server, "certificate-authority-data": base64.b64encode(ca.cert_pem).decode()},
            }
        ],
        "users": [
            {
                "name": user,
                "user": {
                    "client-certificate-data": base64.b64encode(client.cert_pem).decode(),
                    "client-key-data": base64.b64encode(client.key_pem).decode(),
                },
            }
        ],
        "contexts": [{"name": context, "context": {"cluster": cluster, "user": user}}],
        "current-context": context,
        "preferences": {},
    }


def kubeconfig_secret(cluster: str, namespace: str, document: Obj, owner: Obj) -> Obj:
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": CLUSTER_SECRET_TYPE,
        "metadata": {
            "name": cluster + KUBECONFIG_SUFFIX,
            "namespace": namespace,
            "labels": {c.LABEL_CLUSTER_NAME: cluster},
            "ownerReferences": [owner],
        },
        "data": encode({KUBECONFIG_KEY: str(dump_yaml(document)).encode()}),
    }
