"""The example Runtime Extension in the ``clusterclass up`` process: served on loopback and registered.

``clusterclass up --example-extension`` runs :data:`clusterclass.examples.extension.extension` here, over TLS with a
CA of its own, gives its lifecycle handlers the management cluster's client (so a ConfigMap can make them block), and
registers it with an ExtensionConfig ``example-extension`` by URL with that CA — what a platform team does with
``clusterclass extension serve`` and an ExtensionConfig pointing at its Service. The end-to-end tests use the same.
"""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from importlib import resources
from pathlib import Path

from clusterclass.api.objects import Obj
from clusterclass.examples.extension import extension as example_extension
from clusterclass.kube.client import Client
from clusterclass.plan.loader import parse_text
from clusterclass.runtimesdk import Extension, catalog
from clusterclass.runtimesdk.extension import RunningExtension
from clusterclass.webhooks.certificates import serving_certificate

EXTENSION_CONFIG_NAME = "example-extension"
VARIANT = "quick-start-extension.yaml"


def variant_objects() -> list[Obj]:
    """The ClusterClass variant of the example that uses the extension, and its Cluster."""
    text = (resources.files("clusterclass") / "examples" / VARIANT).read_text(encoding="utf-8")
    return [obj for obj, _line in parse_text(text, f"clusterclass/examples/{VARIANT}")]


@dataclass
class ServedExtension:
    extension: Extension
    running: RunningExtension
    extension_config: Obj
    _directory: tempfile.TemporaryDirectory[str]

    @property
    def url(self) -> str:
        return f"https://127.0.0.1:{self.running.port}"

    async def stop(self) -> None:
        await self.running.stop()
        self._directory.cleanup()


async def serve_example_extension(
    client: Client, *, extension: Extension = example_extension, name: str = EXTENSION_CONFIG_NAME
) -> ServedExtension:
    """Serve ``extension`` on 127.0.0.1 and register it as ExtensionConfig ``name`` (created or replaced)."""
    directory = tempfile.TemporaryDirectory(prefix="clusterclass-extension-")
    certificate = serving_certificate(["127.0.0.1"])
    certificate.write(Path(directory.name))
    extension.client = client
    running = await extension.start(host="127.0.0.1", port=0, cert_dir=directory.name)
    config: Obj = {
        "apiVersion": catalog.EXTENSION_CONFIG_API_VERSION,
        "kind": catalog.EXTENSION_CONFIG,
        "metadata": {"name": name},
        "spec": {
            "clientConfig": {"url": f"https://127.0.0.1:{running.port}", "caBundle": certificate.ca_bundle},
            "namespaceSelector": {},
        },
    }
    applied = await client.apply(config, field_manager="clusterclass-up", force=True)
    return ServedExtension(extension, running, applied, directory)
