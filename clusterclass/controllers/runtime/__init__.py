"""The controller runtime: what every controller here is built on, as controller-runtime is for Go's.

- ``manager``: the shared informers (one per watched kind), the cache reader, on-demand informers for
  kinds found at run time, the controllers' lifecycle and graceful stop;
- ``controller``: a reconcile function with its work queue, its workers and its watches;
- ``predicates``: which events may wake a controller (paused, watch-filter, topology-owned, ...);
- ``events``: core/v1 Events with client-go's de-duplication;
- ``logs``: structured log lines carrying the controller, the key and a reconcile id.

The informers, indexes and the work queue themselves are :mod:`clusterclass.kube`'s.
"""

from clusterclass.controllers.runtime.controller import Controller, ReconcileStats, key_of, split_key
from clusterclass.controllers.runtime.events import EventRecorder
from clusterclass.controllers.runtime.manager import Manager

__all__ = ["Controller", "EventRecorder", "Manager", "ReconcileStats", "key_of", "split_key"]
