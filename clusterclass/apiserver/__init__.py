"""The embedded management cluster's API server: a store with kube-apiserver's semantics, and its fronts.

``clusterclass apiserver``, ``clusterclass up`` and most tests run a management cluster in this process
instead of a real kube-apiserver. It answers exactly as kube-apiserver does in everything the
controllers and kubectl observe, so it implements the :class:`~clusterclass.kube.client.Client`
protocol of :mod:`clusterclass.kube` and imports that package; :mod:`clusterclass.kube` and
:mod:`clusterclass.topology` never import this one.

Module map, from the store outwards:

- ``store``: :class:`MemoryStore`, every object in memory under one lock (uid, resourceVersion,
  generation, finalizers, namespaces, dry run), optionally written through to a SQLite state file
  (``persistence``); ``builtin_kinds`` the core kinds it serves; ``objectmeta`` the ObjectMeta rules;
  ``causes`` field errors as ``Status`` causes;
- ``crd/``: CRDs and their schemas; ``apply/``: server-side apply and ``managedFields``;
  ``json_patch``: RFC 6902 as kube-apiserver applies it (merge patch is :mod:`clusterclass.api.merge_patch`);
- ``gc``: ownerReference garbage collection; ``watch_cache``: the bounded history watches read;
- ``inprocess_client``: :class:`MemoryClient`, the ``Client`` over a store in this process;
  ``store_reader``: the topology pipeline's reader over a store;
- ``front/``: the HTTP front that serves a store as a Kubernetes REST API to kubectl.
"""

from clusterclass.apiserver.inprocess_client import MemoryClient
from clusterclass.apiserver.store import MemoryStore

__all__ = ["MemoryClient", "MemoryStore"]
