"""The admission webhooks of Cluster, ClusterClass and MachinePool, as upstream's controller manager serves them.

- ``review``: AdmissionReview requests and the answers (allowed with a JSON patch, denied with a Status, warnings);
- ``handlers``: the webhooks (upstream's paths and names, :data:`~clusterclass.webhooks.handlers.WEBHOOKS`) over
  the rules of :mod:`clusterclass.topology.check`, reading the controllers' caches;
- ``server``: HTTPS with a serving certificate reloaded when its files change.
"""

from clusterclass.kube.certs import CertificateWatcher
from clusterclass.webhooks.handlers import WEBHOOKS, AdmissionHandlers, Webhook
from clusterclass.webhooks.server import WebhookServer

__all__ = ["WEBHOOKS", "AdmissionHandlers", "CertificateWatcher", "Webhook", "WebhookServer"]
