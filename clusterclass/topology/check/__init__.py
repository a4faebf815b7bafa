"""Admission rules for Cluster and ClusterClass (spec §6): one library for every caller.

The admission webhooks, ``clusterclass validate`` and the controller's own guards all call these
functions, so a Cluster or ClusterClass is judged the same way wherever it is looked at. Every rule
returns :class:`~clusterclass.fielderrors.FieldError` values with Kubernetes field paths; a
:class:`Result` keeps errors and warnings apart and turns into the ``Status`` an admission webhook
returns.

Modules: ``result`` (results, Status), ``syntax`` (names, label values, metadata), ``gates`` (feature
gates), ``compatibility`` (what may change between two versions of an object or ClusterClass),
``cluster`` (Cluster defaulting and validation), ``clusterclass`` (ClusterClass defaulting and
validation), ``patches`` (patch validation), ``machinepool`` (MachinePool defaulting and validation).
"""

from clusterclass.topology.check.gates import Gates
from clusterclass.topology.check.result import Result, invalid_status

__all__ = ["Gates", "Result", "invalid_status"]
