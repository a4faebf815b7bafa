"""Serving an SDK extension over TLS on loopback for a test, and the ExtensionConfig that registers it."""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.runtimesdk import Extension
from clusterclass.runtimesdk.extension import RunningExtension
from clusterclass.webhooks.certificates import ServingCertificate, serving_certificate


@dataclass
class Served:
    extension: Extension
    running: RunningExtension
    certificate: ServingCertificate

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.running.port}"

    def extension_config(self, name: str = "ext", **spec: Any) -> Obj:
        """An ExtensionConfig registering this extension by URL, trusting its CA."""
        return {
            "apiVersion": "runtime.cluster.x-k8s.io/v1alpha1",
            "kind": "ExtensionConfig",
            "metadata": {"name": name},
            "spec": {"clientConfig": {"url": self.url, "caBundle": self.certificate.ca_bundle}, **spec},
        }


@asynccontextmanager
async def served(extension: Extension, directory: Path) -> AsyncIterator[Served]:
    certificate = serving_certificate(["127.0.0.1"])
    certificate.write(directory)
    running = await extension.start(host="127.0.0.1", port=0, cert_dir=directory)
    try:
        yield Served(extension, running, certificate)
    finally:
        await running.stop()


def discovered(config: Obj, handlers: list[Obj]) -> Obj:
    """``config`` as the ExtensionConfig controller leaves it: ``status.handlers`` filled."""
    return {**config, "status": {"handlers": handlers}}
