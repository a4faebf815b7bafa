"""``clusterclass describe cluster``: a Cluster and its objects as a tree of Ready conditions, as clusterctl shows it.

Three steps, one module each, in this order: :mod:`~clusterclass.describe.collect` reads a Cluster's
objects through any :class:`~clusterclass.kube.client.Client` into a
:class:`~clusterclass.describe.objects.ClusterObjects`; :mod:`~clusterclass.describe.tree` builds the
tree from them without any I/O (grouping, hiding echoes, virtual nodes); :mod:`~clusterclass.describe.render`
prints it as clusterctl's table, or as JSON or YAML. ``humanduration`` is Kubernetes' short "how long
ago". Behaviour follows ``clusterctl describe cluster`` v1.6 (spec §4).
"""

from clusterclass.describe.collect import collect
from clusterclass.describe.objects import ClusterObjects
from clusterclass.describe.render import as_data, render_json, render_table, render_yaml
from clusterclass.describe.tree import Node, TreeOptions, build_tree

__all__ = [
    "ClusterObjects",
    "Node",
    "TreeOptions",
    "as_data",
    "build_tree",
    "collect",
    "render_json",
    "render_table",
    "render_yaml",
]
