"""The embedded store served as a Kubernetes REST API, for kubectl and any Kubernetes client.

``clusterclass apiserver`` and the tests run a :class:`~clusterclass.apiserver.store.MemoryStore`
behind this front so that kubectl, the official ``kubernetes`` Python client and our own HTTP
backend talk to it exactly as to kube-apiserver. The modules, from the outside in:

- ``serving``: TLS with a fresh CA, the kubeconfig, starting and stopping (``serve_in_thread``);
- ``app``: routes, client-certificate authentication, errors as ``Status`` bodies;
- ``discovery``, ``openapi``: what clients read before they touch a resource;
- ``paths``: which kind, namespace, name and subresource a URL names;
- ``handlers``: list, get, create, update, patch, delete; ``watchstream``: watch streams;
- ``options``: query parameters and bodies of writes; ``patches`` and ``strategic``: patch types;
- ``negotiation``, ``tables``, ``catalog``, ``jsonpath``, ``fieldselector``: what ``kubectl get``
  needs beyond plain JSON (Tables, columns, short names, field selectors).
"""

from clusterclass.apiserver.front.app import make_app
from clusterclass.apiserver.front.serving import (
    Credentials,
    RunningServer,
    ThreadedServer,
    kubeconfig,
    serve_in_thread,
    start,
    write_kubeconfig,
)

__all__ = [
    "Credentials",
    "RunningServer",
    "ThreadedServer",
    "kubeconfig",
    "make_app",
    "serve_in_thread",
    "start",
    "write_kubeconfig",
]
