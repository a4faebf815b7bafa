"""The bundled example: a ClusterClass with two MachinePool classes and one MachineDeployment class, and a Cluster.

``clusterclass/examples/quick-start.yaml`` ships with the package. :func:`apply_example` creates
whatever of it does not exist yet and leaves existing objects alone, so a restarted ``up`` never
undoes a change the user made (an upgrade, a scale) by applying the example again.
"""

from __future__ import annotations

from importlib import resources

from clusterclass.api.objects import Obj, name_of, namespace_of
from clusterclass.kube.client import Client
from clusterclass.kube.errors import AlreadyExists
from clusterclass.plan.loader import parse_text

EXAMPLE = "quick-start.yaml"


def example_text() -> str:
    return (resources.files("clusterclass") / "examples" / EXAMPLE).read_text(encoding="utf-8")


def example_objects() -> list[Obj]:
    return [obj for obj, _line in parse_text(example_text(), f"clusterclass/examples/{EXAMPLE}")]


def example_clusters() -> list[tuple[str, str]]:
    """(namespace, name) of the example's Clusters."""
    return [(namespace_of(o) or "default", name_of(o)) for o in example_objects() if o.get("kind") == "Cluster"]


async def apply_example(client: Client, objects: list[Obj] | None = None) -> list[Obj]:
    """Create the example's objects (or ``objects``) that do not exist yet; the ones created."""
    created = []
    for obj in example_objects() if objects is None else objects:
        try:
            created.append(await client.create(obj, field_manager="clusterclass-up"))
        except AlreadyExists:
            continue
    return created
