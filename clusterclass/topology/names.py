"""Names of generated objects (spec §2.8): one place decides every name the topology creates.

Two generators, both as upstream has them:

- :func:`simple_name` for templates and MachinePool bootstrap/infrastructure objects: a prefix
  (``<cluster>-<topologyName>-``, capped at 58 characters) plus 5 random characters;
- :func:`strategy_name` for the control plane, MachineDeployments and MachinePools: the class's
  ``namingStrategy.template`` rendered with ``.cluster.name``, ``.random`` and the topology name;
  a result longer than 63 characters keeps its first 58 and gets 5 fresh random characters.

Randomness comes from the caller's ``random.Random``, so a plan with ``--seed`` is reproducible.
Once an object exists its name is reused: callers pass the current name through.
"""

from __future__ import annotations

import random
from typing import Any

from clusterclass.topology.gotemplate import RenderError, render

#: Kubernetes' name-generator alphabet: no vowels (no words) and no easily confused characters.
ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
RANDOM_LENGTH = 5
MAX_PREFIX_LENGTH = 58
MAX_NAME_LENGTH = 63


def random_suffix(rng: random.Random) -> str:
    return "".join(rng.choice(ALPHABET) for _ in range(RANDOM_LENGTH))


def simple_name(prefix: str, rng: random.Random) -> str:
    """``prefix`` (capped at 58 characters) followed by 5 random characters."""
    return prefix[:MAX_PREFIX_LENGTH] + random_suffix(rng)


def worker_object_prefix(cluster_name: str, topology_name: str) -> str:
    """Prefix of a worker's bootstrap and infrastructure templates (MD) or objects (MP)."""
    return f"{cluster_name}-{topology_name}-"


def control_plane_machine_template_prefix(cluster_name: str) -> str:
    return f"{cluster_name}-"


def infrastructure_cluster_prefix(cluster_name: str) -> str:
    return f"{cluster_name}-"


class NamingError(Exception):
    """A naming strategy template that cannot be rendered."""


def strategy_name(template: str, values: dict[str, Any], rng: random.Random) -> str:
    """Render a naming strategy with ``values`` plus ``.random``; missing keys are errors."""
    data = dict(values)
    data["random"] = random_suffix(rng)
    try:
        name = render(template, data, missing_key="error")
    except RenderError as err:
        raise NamingError(str(err)) from err
    if len(name) > MAX_NAME_LENGTH:
        name = name[:MAX_PREFIX_LENGTH] + random_suffix(rng)
    return name
