"""Property-based tests of ClusterClass defaulting and validation (spec §6.2–6.4).

Malformed documents and randomly mutated valid ones are fed to every entry point; the rules must
answer with field errors only, never raise, and defaulting must be idempotent and leave its input
alone. Valid documents with random class names stay valid.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from cc_support import (
    BOOTSTRAP_V1,
    INFRA_V1,
    cluster,
    cluster_class,
    md_class,
    mp_class,
    reader,
    worker_topology,
)
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from clusterclass.api.durations import DURATION_PATHS, EACH, go_duration
from clusterclass.fielderrors import ErrorType, FieldError
from clusterclass.topology.check import Gates, Result
from clusterclass.topology.check.clusterclass import (
    default_cluster_class,
    validate_cluster_class,
    validate_cluster_class_delete,
)
from clusterclass.topology.check.compatibility import cluster_classes_compatible
from clusterclass.topology.check.patches import patch_errors

Obj = dict[str, Any]

SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Strings that mean something to the rules: names, kinds, apiVersions, template snippets, patch paths.
INTERESTING_TEXT = st.sampled_from(
    [
        "",
        "aa",
        "*",
        "a*",
        "*a",
        "a*a",
        "inline",
        "builtin",
        "builtin.machinePool.class",
        "builtin.nope",
        "Template",
        "FooTemplate",
        "a/b/c",
        "/",
        INFRA_V1,
        BOOTSTRAP_V1,
        "add",
        "replace",
        "remove",
        "/spec/x/0",
        "/spec/x/1",
        "/spec/-",
        "{{ .cluster.name }}",
        "{{ .cluster.name",
        "{{ if }}",
        "{{ .machinePool.topologyName }}-",
        "10s",
        "50%",
        "x%",
        "[1-3]",
        "default",
        "other",
    ]
)

SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=12),
    INTERESTING_TEXT,
)

JSON = st.recursive(
    SCALARS,
    lambda children: st.one_of(
        st.lists(children, max_size=4),
        st.dictionaries(st.one_of(st.text(max_size=8), INTERESTING_TEXT), children, max_size=4),
    ),
    max_leaves=20,
)

KEYS = st.sampled_from(
    [
        "spec",
        "metadata",
        "namespace",
        "name",
        "ref",
        "apiVersion",
        "kind",
        "class",
        "template",
        "bootstrap",
        "infrastructure",
        "workers",
        "machinePools",
        "machineDeployments",
        "namingStrategy",
        "machineHealthCheck",
        "patches",
        "definitions",
        "external",
        "selector",
        "matchResources",
        "machinePoolClass",
        "names",
        "jsonPatches",
        "op",
        "path",
        "value",
        "valueFrom",
        "variable",
        "variables",
        "schema",
        "openAPIV3Schema",
        "enabledIf",
        "failureDomains",
        "nodeDrainTimeout",
        "unhealthyConditions",
        "maxUnhealthy",
        "remediationTemplate",
    ]
)


def full_cluster_class() -> Obj:
    """A valid ClusterClass using most features, the seed for mutations."""
    cc = cluster_class(
        machine_deployments=[md_class("aa", machineHealthCheck={"maxUnhealthy": "40%"}), md_class("bb")],
        machine_pools=[
            mp_class("aa", failureDomains=["a"], namingStrategy={"template": "{{ .cluster.name }}-{{ .random }}"}),
            mp_class("bb-worker"),
        ],
        variables=[
            {"name": "cpu", "required": False, "schema": {"openAPIV3Schema": {"type": "integer", "default": 2}}},
            {
                "name": "obj",
                "required": True,
                "schema": {"openAPIV3Schema": {"type": "object", "properties": {"a": {"type": "string"}}}},
            },
        ],
        patches=[
            {
                "name": "p1",
                "enabledIf": "{{ .cpu }}",
                "definitions": [
                    {
                        "selector": {
                            "apiVersion": INFRA_V1,
                            "kind": "GenericInfrastructureMachinePoolTemplate",
                            "matchResources": {"machinePoolClass": {"names": ["aa", "*-worker"]}},
                        },
                        "jsonPatches": [
                            {"op": "add", "path": "/spec/template/spec/x", "valueFrom": {"variable": "obj.a"}},
                            {"op": "replace", "path": "/spec/template/spec/y", "value": {"k": [1, 2]}},
                            {"op": "remove", "path": "/spec/template/spec/z"},
                        ],
                    }
                ],
            },
            {"name": "p2", "external": {"generateExtension": "gen", "settings": {"k": "v"}}},
        ],
    )
    cc["spec"]["controlPlane"]["machineHealthCheck"] = {"nodeStartupTimeout": "10m"}
    return cc


def _containers(doc: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths of every dict and list inside ``doc``."""
    found: list[tuple[Any, ...]] = []
    if isinstance(doc, dict):
        found.append(path)
        for key, value in doc.items():
            found.extend(_containers(value, (*path, key)))
    elif isinstance(doc, list):
        found.append(path)
        for i, value in enumerate(doc):
            found.extend(_containers(value, (*path, i)))
    return found


def _at(doc: Any, path: tuple[Any, ...]) -> Any:
    for step in path:
        doc = doc[step]
    return doc


@st.composite
def mutated(draw: st.DrawFn, seed: Obj | None = None) -> Obj:
    """``seed`` (a valid ClusterClass by default) after a few random edits: values replaced by random
    JSON, keys deleted or added, list entries dropped or duplicated."""
    doc = copy.deepcopy(seed if seed is not None else full_cluster_class())
    for _ in range(draw(st.integers(min_value=1, max_value=6))):
        containers = _containers(doc)
        container = _at(doc, draw(st.sampled_from(containers)))
        action = draw(st.sampled_from(["replace", "delete", "add", "duplicate"]))
        if isinstance(container, dict):
            if action == "add" or not container:
                container[draw(KEYS)] = draw(JSON)
                continue
            key = draw(st.sampled_from(sorted(container, key=str)))
            if action == "delete":
                del container[key]
            else:
                container[key] = draw(JSON) if action == "replace" else copy.deepcopy(container[key])
        elif isinstance(container, list):
            if action == "add" or not container:
                container.append(draw(JSON))
                continue
            i = draw(st.integers(min_value=0, max_value=len(container) - 1))
            if action == "delete":
                del container[i]
            elif action == "duplicate":
                container.append(copy.deepcopy(container[i]))
            else:
                container[i] = draw(JSON)
    return doc


DOCUMENTS = st.one_of(
    mutated(),
    JSON,
    st.builds(lambda spec: {"metadata": {"name": "c", "namespace": "default"}, "spec": spec}, JSON),
)

GATES = st.builds(Gates, st.booleans(), st.booleans(), st.booleans())


def assert_field_errors(result: Result | list[FieldError]) -> None:
    errors = result.errors if isinstance(result, Result) else result
    for error in errors:
        assert isinstance(error, FieldError)
        assert isinstance(error.type, ErrorType)
        assert isinstance(error.field, str)
        assert isinstance(error.detail, str)
        str(error)  # renders
    if isinstance(result, Result):
        assert all(isinstance(w, str) for w in result.warnings)


def _same(a: Any, b: Any) -> bool:
    """Equality that counts NaN equal to itself (random documents may hold NaN)."""
    if isinstance(a, float) and isinstance(b, float) and math.isnan(a) and math.isnan(b):
        return True
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


USERS = [
    cluster("c1", machine_pools=[worker_topology("mp1", "aa")], machine_deployments=[worker_topology("md1", "bb")]),
    cluster("c2", machine_pools=[worker_topology("mp1", "bb-worker")]),
]


@SETTINGS
@given(doc=DOCUMENTS, gates=GATES)
def test_create_validation_only_returns_field_errors(doc: Any, gates: Gates) -> None:
    before = copy.deepcopy(doc)
    assert_field_errors(validate_cluster_class(default_cluster_class(doc), reader=reader(*USERS), gates=gates))
    assert _same(doc, before)


@SETTINGS
@given(old=DOCUMENTS, new=DOCUMENTS)
def test_update_validation_only_returns_field_errors(old: Any, new: Any) -> None:
    assert_field_errors(validate_cluster_class(new, old, reader=reader(*USERS)))
    assert_field_errors(cluster_classes_compatible(old, new))


@SETTINGS
@given(user=mutated(seed=cluster("c3", machine_pools=[worker_topology("mp1", "aa")])), new=mutated())
def test_cluster_aware_checks_survive_malformed_clusters(user: Obj, new: Obj) -> None:
    # The reader indexes Clusters by their metadata; keep that well formed, mutate the rest.
    user["metadata"] = {"name": "c3", "namespace": "default"}
    user["kind"], user["apiVersion"] = "Cluster", "cluster.x-k8s.io/v1beta1"
    result = validate_cluster_class(new, full_cluster_class(), reader=reader(user, *USERS))
    assert_field_errors(result)
    assert_field_errors(validate_cluster_class_delete(new, reader=reader(user)))


@SETTINGS
@given(doc=DOCUMENTS)
def test_patch_errors_only_returns_field_errors(doc: Any) -> None:
    assert_field_errors(patch_errors(doc))
    assert_field_errors(patch_errors(doc, gates=Gates(runtime_sdk=False)))


@SETTINGS
@given(doc=DOCUMENTS)
def test_defaulting_is_idempotent_and_copies(doc: Any) -> None:
    before = copy.deepcopy(doc)
    once = default_cluster_class(doc)
    assert _same(default_cluster_class(once), once)
    assert _same(doc, before)


def _differences(a: Any, b: Any, path: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    """Paths where ``b`` differs from ``a`` (a key only in ``b`` counts as a difference at that key)."""
    if isinstance(a, dict) and isinstance(b, dict):
        found: list[tuple[Any, ...]] = []
        for key in a.keys() | b.keys():
            if key not in a or key not in b:
                found.append((*path, key))
            else:
                found.extend(_differences(a[key], b[key], (*path, key)))
        return found
    if isinstance(a, list) and isinstance(b, list) and len(a) == len(b):
        return [d for i, (x, y) in enumerate(zip(a, b, strict=True)) for d in _differences(x, y, (*path, i))]
    return [] if _same(a, b) else [path]


def _is_duration_field(path: tuple[Any, ...]) -> bool:
    """Whether ``path`` (with list indices) is one of the ClusterClass's Duration fields."""
    return any(
        len(pattern) == len(path)
        and all((step == EACH and isinstance(key, int)) or step == key for step, key in zip(pattern, path, strict=True))
        for pattern in DURATION_PATHS["ClusterClass"]
    )


@SETTINGS
@given(doc=mutated())
def test_defaulting_only_fills_empty_ref_namespaces_and_writes_durations_as_go_does(doc: Obj) -> None:
    defaulted = default_cluster_class(doc)
    namespace = doc.get("metadata", {}).get("namespace") if isinstance(doc.get("metadata"), dict) else None
    for path in _differences(doc, defaulted):
        if _is_duration_field(path):
            assert defaulted_value(defaulted, path) == go_duration(_at(doc, path))
            continue
        assert path[-2:] == ("ref", "namespace")
        assert defaulted_value(defaulted, path) == namespace


def defaulted_value(doc: Any, path: tuple[Any, ...]) -> Any:
    return _at(doc, path)


NAMES = st.from_regex(r"[a-z][a-z0-9-]{0,20}[a-z0-9]", fullmatch=True)


@SETTINGS
@given(
    md_names=st.lists(NAMES, min_size=0, max_size=4, unique=True),
    mp_names=st.lists(NAMES, min_size=0, max_size=4, unique=True),
    namespace=NAMES,
)
def test_valid_classes_with_any_names_stay_valid(md_names: list[str], mp_names: list[str], namespace: str) -> None:
    cc = cluster_class(
        namespace=namespace,
        machine_deployments=[md_class(n) for n in md_names],
        machine_pools=[mp_class(n) for n in mp_names],
    )
    assert validate_cluster_class(default_cluster_class(cc), reader=reader()).errors == []
    assert validate_cluster_class(cc, cc, reader=reader()).errors == []


@SETTINGS
@given(doc=mutated())
def test_validation_is_deterministic(doc: Obj) -> None:
    first = validate_cluster_class(doc, reader=reader(*USERS))
    second = validate_cluster_class(copy.deepcopy(doc), reader=reader(*USERS))
    assert [str(e) for e in first.errors] == [str(e) for e in second.errors]
