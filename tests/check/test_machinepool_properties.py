"""Property tests: MachinePool admission never raises, and defaulting is idempotent."""

from __future__ import annotations

from typing import Any

from check_support import assert_only_field_errors, b, json_values, keys, mutated
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusterclass.topology.check import Gates
from clusterclass.topology.check.machinepool import default_machine_pool, validate_machine_pool

SETTINGS = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])

MIN = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-min-size"
MAX = "cluster.x-k8s.io/cluster-api-autoscaler-node-group-max-size"


def base_pool(replicas: int | None = None) -> dict[str, Any]:
    built = b.machine_pool(
        "mp",
        "pool",
        bootstrap={"apiVersion": b.BOOTSTRAP_V1, "kind": "KubeadmConfig", "name": "cfg"},
        infrastructure={"apiVersion": b.INFRA_V1, "kind": "DockerMachinePool", "name": "infra"},
        version="1.28.0",
        replicas=replicas,
    )
    built["metadata"]["annotations"] = {MIN: "2", MAX: "5"}
    built["spec"]["template"]["metadata"] = {"labels": {"a": "b"}}
    return built


annotation_values = st.sampled_from(["0", "3", "-1", "+4", "x", "", "2147483648", "7"])


@SETTINGS
@given(
    mp=mutated(base_pool(), max_mutations=5),
    old=st.none() | mutated(base_pool(4), max_mutations=3),
    min_size=annotation_values,
    max_size=annotation_values,
)
def test_defaulting_is_idempotent(mp: Any, old: Any, min_size: str, max_size: str) -> None:
    annotations = mp.get("metadata", {}).get("annotations") if isinstance(mp.get("metadata"), dict) else None
    if isinstance(annotations, dict):
        annotations.update({MIN: min_size, MAX: max_size})
    once = default_machine_pool(mp, old)
    assert default_machine_pool(once, old) == once


@SETTINGS
@given(
    mp=mutated(base_pool(), max_mutations=5),
    old=st.none() | mutated(base_pool(4), max_mutations=3),
    gate=st.booleans(),
)
def test_validation_of_mutated_machine_pools_gives_only_field_errors(mp: Any, old: Any, gate: bool) -> None:
    gates = Gates(machine_pool=gate)
    assert_only_field_errors(validate_machine_pool(default_machine_pool(mp, old), old, gates=gates))
    assert_only_field_errors(validate_machine_pool(mp, old, gates=gates))


@SETTINGS
@given(mp=st.dictionaries(keys, json_values, max_size=5), old=st.none() | st.dictionaries(keys, json_values))
def test_noise_gives_only_field_errors_and_idempotent_defaults(mp: Any, old: Any) -> None:
    once = default_machine_pool(mp, old)
    assert default_machine_pool(once, old) == once
    assert_only_field_errors(validate_machine_pool(once, old))


@SETTINGS
@given(spec=json_values)
def test_noise_under_spec_gives_only_field_errors(spec: Any) -> None:
    mp = {**base_pool(), "spec": spec}
    once = default_machine_pool(mp)
    assert default_machine_pool(once) == once
    assert_only_field_errors(validate_machine_pool(once))
