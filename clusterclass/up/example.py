"""The bundled example: a ClusterClass with two MachinePool classes and one MachineDeployment class, and a Cluster.

``clusterclass/examples/quick-start.yaml`` (Cluster API v1beta2, what users copy today) and its v1beta1 form
``quick-start-v1beta1.yaml`` ship with the package. :func:`apply_example` creates
whatever of it does not exist yet and leaves existing objects alone, so a restarted ``up`` never
undoes a change the user made (an upgrade, a scale) by applying the example again.
"""

from __future__ import annotations

from importlib import resources

from clusterclass.api.objects import Obj, name_of, namespace_of
from clusterclass.kube.client import Client
from clusterclass.kube.errors import AlreadyExists
from clusterclass.plan.loader import parse_text

#: the example file of each API version (``up --example-version``)
EXAMPLES = {"v1beta2": "quick-start.yaml", "v1beta1": "quick-start-v1beta1.yaml"}
DEFAULT_VERSION = "v1beta2"
EXAMPLE = EXAMPLES[DEFAULT_VERSION]


def example_path(version: str = DEFAULT_VERSION) -> str:
    """The example's path as the repository has it (``clusterclass/examples/quick-start.yaml``)."""
    return f"clusterclass/examples/{EXAMPLES[version]}"


def example_text(version: str = DEFAULT_VERSION) -> str:
    return (resources.files("clusterclass") / "examples" / EXAMPLES[version]).read_text(encoding="utf-8")


def example_objects(version: str = DEFAULT_VERSION) -> list[Obj]:
    return [obj for obj, _line in parse_text(example_text(version), example_path(version))]


def example_clusters(version: str = DEFAULT_VERSION) -> list[tuple[str, str]]:
    """(namespace, name) of the example's Clusters."""
    return [(namespace_of(o) or "default", name_of(o)) for o in example_objects(version) if o.get("kind") == "Cluster"]


async def apply_example(
    client: Client, objects: list[Obj] | None = None, *, version: str = DEFAULT_VERSION
) -> list[Obj]:
    """Create the example's objects (or ``objects``) that do not exist yet; the ones created."""
    created = []
    for obj in example_objects(version) if objects is None else objects:
        try:
            created.append(await client.create(obj, field_manager="clusterclass-up"))
        except AlreadyExists:
            continue
    return created
