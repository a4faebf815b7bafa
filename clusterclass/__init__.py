"""clusterclass: Cluster API managed topologies (ClusterClass) with MachinePool workers.

The package is layered by distance from the user, lower layers never importing higher ones:

- ``api``: constants and dict-backed views of the ``cluster.x-k8s.io/v1beta1`` kinds;
- ``topology``: the pure pipeline (blueprint, current state, desired state, upgrade sequencing,
  the changes a reconcile would make);
- ``plan``: offline planning over YAML files;
- ``cli``: the ``clusterclass`` command.
"""

__version__ = "0.1.0"
