"""``clusterclass run``: the controllers, webhooks, metrics, probes and leader election on a real management cluster.

- ``process``: :class:`~clusterclass.run.process.ControllerProcess`, the pieces put together in controller-runtime's
  order, and :class:`~clusterclass.run.process.RunOptions`, the flags;
- ``endpoints``: ``/metrics``, ``/healthz`` and ``/readyz``.

The command itself is :mod:`clusterclass.cli.run`.
"""

from clusterclass.run.process import ControllerProcess, RunOptions

__all__ = ["ControllerProcess", "RunOptions"]
