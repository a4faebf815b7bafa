"""The webhook server: AdmissionReview over TLS on ``--webhook-port``, with a certificate that may be renewed.

kube-apiserver calls webhooks only over HTTPS, trusting the ``caBundle`` of the webhook configuration. The
serving certificate and key are ``tls.crt`` and ``tls.key`` in ``--webhook-cert-dir`` (controller-runtime's
names and default directory, where cert-manager's Secret is mounted). cert-manager renews them in place, so
:class:`CertificateWatcher` looks at the files every few seconds and loads a changed pair into the server's
TLS context: new connections get the new certificate, open ones are not interrupted, and a pair caught half
written is ignored until both files match (controller-runtime's certwatcher does the same with fsnotify and a
poll).

``/convert`` answers kube-apiserver's ConversionReviews for the Cluster API CRDs (:mod:`.conversion`), when the
server is given the reference versions to convert with.

Each POST to a path of :data:`~clusterclass.webhooks.handlers.WEBHOOKS` is one review: read, answered by the
handler, timed into ``controller_runtime_webhook_*`` metrics. A handler that fails answers not allowed with code
500 and the error, as controller-runtime does; a body that is no AdmissionReview answers 400.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

from clusterclass.api.conversion import ApiVersions
from clusterclass.controllers.runtime.metrics import Metrics
from clusterclass.kube.certs import CertificateWatcher
from clusterclass.kube.errors import make_status
from clusterclass.webhooks import conversion
from clusterclass.webhooks.handlers import WEBHOOKS, AdmissionHandlers, Webhook
from clusterclass.webhooks.review import (
    AdmissionResponse,
    BadReview,
    bad_review_answer,
    denied,
    parse_review,
    review_answer,
)

logger = logging.getLogger(__name__)

#: controller-runtime's defaults
DEFAULT_PORT = 9443
DEFAULT_CERT_DIR = "/tmp/k8s-webhook-server/serving-certs"
#: the largest review accepted (etcd stores objects up to 1.5 MiB; a review carries two)
MAX_BODY = 8 * 1024 * 1024


@dataclass
class WebhookServer:
    """The AdmissionReview endpoints of :data:`WEBHOOKS` on ``host:port`` over TLS (module doc)."""

    handlers: AdmissionHandlers
    metrics: Metrics
    certificates: CertificateWatcher
    host: str = "0.0.0.0"
    port: int = DEFAULT_PORT
    #: the CRD conversion webhook's reference versions (the manager's CRDs), or None to serve no ``/convert``
    conversion: Callable[[], ApiVersions] | None = None
    _runner: web.AppRunner | None = None

    def app(self) -> web.Application:
        app = web.Application(client_max_size=MAX_BODY)
        for webhook in WEBHOOKS:
            endpoint = self._endpoint(webhook)
            for path in webhook.paths:
                app.router.add_post(path, endpoint)
        if self.conversion is not None:
            app.router.add_post(
                conversion.PATH, self._metered(conversion.PATH, conversion.conversion_endpoint(self.conversion))
            )
        return app

    def _metered(
        self, path: str, endpoint: Callable[[web.Request], Awaitable[web.StreamResponse]]
    ) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        """``endpoint`` counted and timed in the webhook metrics under ``path``, as controller-runtime instruments
        every webhook it serves (``/convert`` included)."""

        async def serve(http_request: web.Request) -> web.StreamResponse:
            with self.metrics.webhook(path) as timing:
                answer = await endpoint(http_request)
                timing.code = answer.status
                return answer

        return serve

    def _endpoint(self, webhook: Webhook) -> Callable[[web.Request], Awaitable[web.StreamResponse]]:
        handler = self.handlers.handler(webhook)

        async def serve(http_request: web.Request) -> web.StreamResponse:
            with self.metrics.webhook(webhook.path) as timing:
                try:
                    review = parse_review(await http_request.read())
                except BadReview as err:
                    timing.code = 400
                    return web.json_response(bad_review_answer(err), status=200)
                try:
                    response = await handler(review)
                except Exception as err:  # a bug, or a cache that could not answer: say so, as controller-runtime
                    logger.exception("webhook %s failed on %s %s/%s", webhook.name, review.operation, review.namespace,
                                     review.name)  # fmt: skip
                    response = _internal_error(err)
                timing.code = response.code
                return web.json_response(review_answer(review, response))

        return serve

    async def start(self) -> WebhookServer:
        self._runner = web.AppRunner(self.app(), access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, self.host, self.port, ssl_context=self.certificates.context)
        await site.start()
        if self.port == 0:
            self.port = _bound_port(self._runner)
        self.certificates.start()
        logger.info("serving webhooks on https://%s:%s", self.host, self.port)
        return self

    async def stop(self) -> None:
        await self.certificates.stop()
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    @property
    def serving(self) -> bool:
        return self._runner is not None


def _internal_error(err: Exception) -> AdmissionResponse:
    return denied(make_status(500, "InternalError", f"Internal error occurred: {err}"))


def _bound_port(runner: web.AppRunner) -> int:
    for site in runner.sites:
        server = getattr(site, "_server", None)
        sockets = getattr(server, "sockets", None) or []
        for sock in sockets:
            return int(sock.getsockname()[1])
    raise RuntimeError("the webhook server is not listening")
