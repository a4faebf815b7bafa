"""The HTTP backend of the :class:`~clusterclass.kube.client.Client`, for a real kube-apiserver or the embedded
store served over HTTP.

``kubeconfig`` reads kubeconfig files and in-cluster configuration into a :class:`Config`; ``auth``
turns it into per-request credentials (tokens, token files, basic auth, exec plugins in
``execplugin``); ``tls`` builds the TLS contexts; ``discovery`` maps kinds to resources;
``client`` is :class:`HttpClient`, the Client itself.
"""

from clusterclass.kube.http.client import HttpClient
from clusterclass.kube.http.execplugin import CredentialError
from clusterclass.kube.http.kubeconfig import (
    Config,
    ConfigError,
    ExecConfig,
    in_cluster_config,
    load_config,
    load_kubeconfig,
)

__all__ = [
    "Config",
    "ConfigError",
    "CredentialError",
    "ExecConfig",
    "HttpClient",
    "in_cluster_config",
    "load_config",
    "load_kubeconfig",
]
