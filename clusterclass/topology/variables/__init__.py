"""ClusterClass variables (spec §1.2, §1.3, §5.3, §5.9): definitions, defaulting, validation.

Pure: no I/O. The public API:

- :func:`variable_definitions` — a ClusterClass's definitions (status, else inline spec);
- :func:`default_cluster_variables` / :func:`default_override_variables` — defaulting;
- :func:`validate_cluster_variables` / :func:`validate_override_variables` — validation, as
  :class:`FieldError` lists with Kubernetes field paths;
- :func:`variables_for_patch` — the user variables one patch sees;
- :func:`validate_variable_definitions` — the ClusterClass webhook's checks of ``spec.variables``;
- :func:`status_variables` — ``status.variables`` as the ClusterClass controller publishes them.

Module map: ``definitions`` (definitions as status holds them, and their lookup), ``values``
(Cluster values: defaulting, validation, per-patch variables), ``definition_rules`` (the ClusterClass
webhook's checks of ``spec.variables``). The structural-schema semantics underneath (parsing,
defaulting, pruning, OpenAPI validation, formats, RE2, CEL) are :mod:`clusterclass.schema`'s, shared
with the embedded API server's CRDs; field errors live in ``clusterclass.fielderrors``.
"""

from clusterclass.fielderrors import ErrorType, FieldError
from clusterclass.topology.variables.definition_rules import schema_definition_errors, validate_variable_definitions
from clusterclass.topology.variables.definitions import (
    BUILTIN,
    INLINE,
    DefinitionIndex,
    StatusVariable,
    VariableDefinition,
    status_variables,
    variable_definitions,
)
from clusterclass.topology.variables.values import (
    CLUSTER_VARIABLES_FIELD,
    default_cluster_variables,
    default_override_variables,
    validate_cluster_variables,
    validate_override_variables,
    validate_variable_value,
    variables_for_patch,
)

__all__ = [
    "BUILTIN",
    "CLUSTER_VARIABLES_FIELD",
    "INLINE",
    "DefinitionIndex",
    "ErrorType",
    "FieldError",
    "StatusVariable",
    "VariableDefinition",
    "default_cluster_variables",
    "default_override_variables",
    "schema_definition_errors",
    "status_variables",
    "validate_cluster_variables",
    "validate_override_variables",
    "validate_variable_definitions",
    "validate_variable_value",
    "variable_definitions",
    "variables_for_patch",
]
