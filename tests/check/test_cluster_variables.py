"""Cluster variables through admission (spec §6.1.1, §5.9, §10.11 ``TestClusterDefaultAndValidateVariables``).

The MachinePool cases of upstream's v1.7 test, as our own: defaulting then validation of the
Cluster's variables and of MachinePool ``variables.overrides``, against a reconciled ClusterClass.
"""

from __future__ import annotations

from check_support import admit, check, cluster, cluster_class, deployment, errors, pool, variable, world

LOCATION = variable("location", {"type": "string", "default": "us-east"}, required=True)
HTTP_PROXY = variable(
    "httpProxy",
    {
        "type": "object",
        "properties": {
            "enabled": {"type": "boolean"},
            "url": {"type": "string", "default": "http://localhost:3128"},
        },
    },
    required=True,
)
CPU = variable("cpu", {"type": "integer"})


def test_dont_add_new_variable_overrides() -> None:
    obj = cluster(machine_deployments=[deployment("md-1")], machine_pools=[pool("mp-1")])
    defaulted, result = admit(obj, reader=world(cluster_class(variables=[LOCATION])))
    topology = defaulted["spec"]["topology"]
    assert topology["variables"] == [{"name": "location", "value": "us-east"}]
    assert topology["workers"]["machinePools"] == [{"class": "default-worker", "name": "mp-1"}]
    assert topology["workers"]["machineDeployments"] == [{"class": "default-worker", "name": "md-1"}]
    assert result.errors == []


def test_default_nested_fields_of_variable_overrides() -> None:
    obj = cluster(
        variables=[{"name": "httpProxy", "value": {"enabled": True}}],
        machine_pools=[pool("mp-1", variables={"overrides": [{"name": "httpProxy", "value": {"enabled": True}}]})],
    )
    defaulted, result = admit(obj, reader=world(cluster_class(variables=[HTTP_PROXY])))
    topology = defaulted["spec"]["topology"]
    assert topology["variables"] == [{"name": "httpProxy", "value": {"enabled": True, "url": "http://localhost:3128"}}]
    assert topology["workers"]["machinePools"][0]["variables"]["overrides"] == [
        {"name": "httpProxy", "value": {"enabled": True, "url": "http://localhost:3128"}}
    ]
    assert result.errors == []


def test_should_fail_when_variable_override_is_invalid() -> None:
    obj = cluster(
        variables=[{"name": "cpu", "value": 1}],
        machine_pools=[pool("mp-1", variables={"overrides": [{"name": "cpu", "value": "text"}]})],
    )
    result = check(obj, reader=world(cluster_class(variables=[CPU])))
    assert errors(result) == [
        (
            "spec.topology.workers.machinePools[0].variables.overrides[cpu].value",
            "Invalid value",
            'must be of type integer: "string"',
        )
    ]


def test_should_pass_when_required_variable_exists_top_level() -> None:
    obj = cluster(variables=[{"name": "cpu", "value": 1}], machine_pools=[pool("mp-1")])
    required_cpu = variable("cpu", {"type": "integer"}, required=True)
    assert check(obj, reader=world(cluster_class(variables=[required_cpu]))).errors == []


def test_should_fail_when_required_variable_is_missing_top_level() -> None:
    required_cpu = variable("cpu", {"type": "integer"}, required=True)
    obj = cluster(machine_pools=[pool("mp-1", variables={"overrides": [{"name": "cpu", "value": 2}]})])
    assert errors(check(obj, reader=world(cluster_class(variables=[required_cpu])))) == [
        ("spec.topology.variables", "Required value", 'required variable with name "cpu" must be defined')
    ]


def test_should_pass_when_top_level_variable_and_override_are_valid() -> None:
    obj = cluster(
        variables=[{"name": "cpu", "value": 1}],
        machine_pools=[pool("mp-1", variables={"overrides": [{"name": "cpu", "value": 2}]})],
    )
    assert check(obj, reader=world(cluster_class(variables=[CPU]))).errors == []


def test_should_pass_even_when_variable_override_is_missing_the_corresponding_top_level_variable() -> None:
    obj = cluster(machine_pools=[pool("mp-1", variables={"overrides": [{"name": "cpu", "value": 2}]})])
    assert check(obj, reader=world(cluster_class(variables=[CPU]))).errors == []


def test_override_of_an_undefined_variable_fails() -> None:
    obj = cluster(machine_pools=[pool("mp-1", variables={"overrides": [{"name": "gpu", "value": 2}]})])
    assert errors(check(obj, reader=world(cluster_class(variables=[CPU])))) == [
        (
            "spec.topology.workers.machinePools[0].variables.overrides[gpu]",
            "Invalid value",
            'no definitions found for variable "gpu"',
        )
    ]


def test_variables_are_not_validated_while_the_class_is_not_reconciled() -> None:
    obj = cluster(variables=[{"name": "cpu", "value": "text"}])
    result = check(obj, reader=world(cluster_class(variables=[CPU], is_reconciled=False)))
    assert result.errors == []
    assert result.warnings


def test_variables_of_the_wrong_shape_are_field_errors() -> None:
    obj = cluster(machine_pools=[pool("mp-1", variables=["cpu"]), pool("mp-2", variables={"overrides": "cpu"})])
    obj["spec"]["topology"]["variables"] = {"cpu": 1}
    result = check(obj, reader=world(cluster_class(variables=[CPU])))
    assert [e.field for e in result.errors] == [
        "spec.topology.variables",
        "spec.topology.workers.machinePools[0].variables",
        "spec.topology.workers.machinePools[1].variables.overrides",
    ]
