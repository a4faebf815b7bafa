"""The project's error types.

A user can cause errors (a missing template, a bad ref, an unknown class); those must come back as
one clear line naming the object and the field, never as a traceback. Every such error is a
:class:`TopologyError`. It carries the object it is about and a field path inside that object, so
the command line can name the file the object came from, and the controller can put the same
message into a condition.

Context is added from the inside out, the way upstream wraps errors: ``failed to compute
MachinePools: failed to compute MachinePool for topology "mp-0": MachinePool class x not found``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True, order=True)
class ObjectKey:
    """Identifies an object independently of its API version: ``group``, ``kind``, namespace, name."""

    group: str
    kind: str
    namespace: str
    name: str

    def __str__(self) -> str:
        where = f"{self.namespace}/{self.name}" if self.namespace else self.name
        return f"{self.kind} {where}"


class ClusterClassError(Exception):
    """Base class of every error this project raises on purpose."""


class TopologyError(ClusterClassError):
    """A problem with the user's objects that stops the topology of one Cluster from being computed.

    ``obj`` is the object at fault and ``field`` a dotted path inside it (``spec.workers.
    machinePools[0].class``); either may be unknown.
    """

    def __init__(self, message: str, *, obj: ObjectKey | None = None, field: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.obj = obj
        self.field = field

    def wrap(self, context: str) -> TopologyError:
        """The same error with ``context`` prepended, keeping the object and field it points at."""
        wrapped = TopologyError(f"{context}: {self.message}", obj=self.obj, field=self.field)
        wrapped.__cause__ = self
        return wrapped

    def __str__(self) -> str:
        return self.message


class InputError(ClusterClassError):
    """Input that cannot be read at all: a file that is not YAML, a document that is not an object."""

    def __init__(self, source: str, message: str) -> None:
        super().__init__(f"{source}: {message}")
        self.source = source
        self.message = message
