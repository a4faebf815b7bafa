"""What differs between the two kinds of workers: MachineDeployments and MachinePools.

Most of a worker's desired state is computed the same way for both kinds (labels, annotations,
naming, versions, replicas, timeouts), so the topology code is written once against a
:class:`WorkerKind`. The differences upstream keeps on purpose are data here:

- a MachineDeployment's bootstrap and infrastructure are *templates*, cloned template-to-template and
  rotated (renamed) when their spec changes; a MachinePool's are *objects* (a bootstrap config and
  an infrastructure machine pool) cloned template-to-object and changed in place;
- MachineDeployments have a rollout strategy, a label selector and a singular ``failureDomain`` in the machine
  template; MachinePools have none of these but a plural ``spec.failureDomains``.

Both have a MachineHealthCheck here. Upstream's MachinePool classes and topologies have no ``machineHealthCheck``
(Cluster API #11392/#13065); clusterclass adds the field to both (its CRDs carry it, see
:mod:`clusterclass.apiserver.crd.extensions`) and the MachinePool's Machines are what the check selects and remediates.
"""

from __future__ import annotations

from dataclasses import dataclass

from clusterclass.api import constants as c


@dataclass(frozen=True)
class WorkerKind:
    kind: str
    #: key under ``spec.topology.workers`` and ``spec.workers`` (``machineDeployments``/``machinePools``)
    list_key: str
    #: label holding the topology name on every object of this worker
    name_label: str
    #: key under which naming templates see the topology name (``{{ .machinePool.topologyName }}``)
    naming_key: str
    default_naming_template: str
    #: True for MachineDeployments: bootstrap/infrastructure are templates, rotated on spec change
    uses_templates: bool
    #: path of the failure domain field(s) inside the worker object
    failure_domain_path: tuple[str, ...]
    #: name of the class/topology field holding the failure domain(s)
    failure_domain_field: str
    has_machine_health_check: bool
    has_strategy: bool
    #: human wording used in error messages: "MachineDeployment" / "MachinePool"
    noun: str
    #: what the infrastructure ref points at, in error messages
    infrastructure_noun: str


MACHINE_DEPLOYMENT = WorkerKind(
    kind=c.KIND_MACHINE_DEPLOYMENT,
    list_key="machineDeployments",
    name_label=c.LABEL_DEPLOYMENT_NAME,
    naming_key="machineDeployment",
    default_naming_template="{{ .cluster.name }}-{{ .machineDeployment.topologyName }}-{{ .random }}",
    uses_templates=True,
    failure_domain_path=("spec", "template", "spec", "failureDomain"),
    failure_domain_field="failureDomain",
    has_machine_health_check=True,
    has_strategy=True,
    noun="MachineDeployment",
    infrastructure_noun="InfrastructureMachineTemplate",
)

MACHINE_POOL = WorkerKind(
    kind=c.KIND_MACHINE_POOL,
    list_key="machinePools",
    name_label=c.LABEL_POOL_NAME,
    naming_key="machinePool",
    default_naming_template="{{ .cluster.name }}-{{ .machinePool.topologyName }}-{{ .random }}",
    uses_templates=False,
    failure_domain_path=("spec", "failureDomains"),
    failure_domain_field="failureDomains",
    has_machine_health_check=True,  # an extension of upstream's API (module doc)
    has_strategy=False,
    noun="MachinePool",
    infrastructure_noun="InfrastructureMachinePool",
)

WORKER_KINDS = (MACHINE_DEPLOYMENT, MACHINE_POOL)
