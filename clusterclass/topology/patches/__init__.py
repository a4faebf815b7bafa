"""ClusterClass patches and variables: how they change the desired state (spec §5).

Desired-state computation hands the blueprint and the freshly computed desired objects to a
:class:`PatchEngine` as its last step. Patches may change the ``spec`` of the InfrastructureCluster,
the ControlPlane and its machine template, the MachineDeployment templates and a MachinePool's
bootstrap config and infrastructure machine pool, never the MachineDeployment or MachinePool
object itself.

Modules: ``request`` builds the items a patch may target, ``selector`` decides which items a
definition targets, ``values`` computes JSON patch values (literal, variable, Go template),
``external`` builds and applies the requests of external patches (Runtime Extensions), ``engine``
runs the patches in order and writes the results back. :class:`NoPatches` leaves everything as cloned.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from clusterclass.topology.blueprint import Blueprint
    from clusterclass.topology.desired import DesiredState
    from clusterclass.topology.patches.external import ExtensionCalls


class PatchEngine(Protocol):
    def apply(self, blueprint: Blueprint, desired: DesiredState, extensions: ExtensionCalls | None = None) -> None:
        """Patch ``desired`` in place; raise TopologyError naming the failing patch. ``extensions`` answers
        external patches (None: the Runtime SDK is off, and an external patch is an error)."""
        ...


class NoPatches:
    """Applies no patch: the desired objects are exactly the cloned templates."""

    def apply(self, blueprint: Blueprint, desired: DesiredState, extensions: ExtensionCalls | None = None) -> None:
        return None
