"""Reading a printed describe table back: rows cut at the header's column starts, and the spec's samples."""

from __future__ import annotations

from describe_builders import NOW, Obj

from clusterclass.describe import ClusterObjects, TreeOptions, build_tree, render_table

HEADER = ("NAME", "READY", "SEVERITY", "REASON", "SINCE", "MESSAGE")

# spec §4.4, verbatim
HEALTHY_SAMPLE = """\
NAME                                                      READY  SEVERITY  REASON  SINCE  MESSAGE
Cluster/c1                                                True                     2m10s
├─ClusterInfrastructure - DockerCluster/c1-x7k2p          True                     3m5s
├─ControlPlane - KubeadmControlPlane/c1-4bq9d             True                     2m10s
│ └─Machine/c1-4bq9d-2bz8q                                True                     2m40s
└─Workers
  ├─MachineDeployment/c1-md-0-d6wst                       True                     95s
  │ └─2 Machines...                                       True                     100s   See c1-md-0-d6wst-nj7bf-5rcls, c1-md-0-d6wst-nj7bf-t4x9w
  └─MachinePool/c1-mp-0-t8lh4                             True                     80s
    └─2 Machines...                                       True                     85s    See c1-mp-0-t8lh4-8vkq2, c1-mp-0-t8lh4-rwz6m
"""  # noqa: E501
ROLLOUT_SAMPLE = """\
  └─MachinePool/c1-mp-0-t8lh4                             False  Info      WaitingForReplicasReady  40s
    ├─2 Machines...                                       False  Info      Bootstrapping            25s    See c1-mp-0-t8lh4-b2n7d, c1-mp-0-t8lh4-q9w4z
    └─2 Machines...                                       True                                      6m     See c1-mp-0-t8lh4-8vkq2, c1-mp-0-t8lh4-rwz6m
"""  # noqa: E501
#: where the samples' READY column starts
SAMPLE_NAME_COLUMN = 58


def refit(sample: str, names: list[str]) -> str:
    """``sample`` with its NAME column as wide as the longest of ``names`` plus the two-space gap.

    The spec's samples pad NAME to 56 characters, wider than any of their names (48); a table fitted
    to its cells, as Go's tablewriter and this printer make it, is narrower. Every other column of
    the samples is fitted, so only NAME is refitted here.
    """
    width = max(len(name) for name in names) + 2
    lines = []
    for line in sample.splitlines():
        name, rest = line[:SAMPLE_NAME_COLUMN].rstrip(), line[SAMPLE_NAME_COLUMN:]
        lines.append(name.ljust(width) + rest if rest else name)
    return "\n".join(lines) + "\n"


def sample_names(sample: str) -> list[str]:
    return [line[:SAMPLE_NAME_COLUMN].rstrip() for line in sample.splitlines()]


def text(cluster: Obj, objects: list[Obj], **options: object) -> str:
    root = build_tree(ClusterObjects.of(cluster, objects), TreeOptions(**options))  # type: ignore[arg-type]
    return render_table(root, now=NOW).plain


def table(printed: str) -> list[tuple[str, ...]]:
    """The rows of a printed table (header left out), each cell stripped."""
    header, *lines = printed.splitlines()
    starts = [header.index(title) for title in HEADER]
    ends = [*starts[1:], None]
    return [tuple(line[start:end].strip() for start, end in zip(starts, ends, strict=True)) for line in lines]


def names(printed: str) -> list[str]:
    """The NAME column, tree prefixes included."""
    header, *lines = printed.splitlines()
    width = header.index("READY")
    return [line[:width].rstrip() for line in lines]
