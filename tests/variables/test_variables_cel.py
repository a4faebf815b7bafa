"""``x-kubernetes-validations`` CEL rules on variable values: results, messages, paths, bounds."""

from __future__ import annotations

import time
from typing import Any

import pytest
from var_support import check_value, inline, triples

from clusterclass.schema.celrules import escape_property, parse_field_path
from clusterclass.topology.variables import validate_cluster_variables, validate_override_variables

P = "spec.topology.variables[v].value"
INVALID = "Invalid value"


def rules(*entries: dict[str, Any] | str) -> list[dict[str, Any]]:
    return [{"rule": e} if isinstance(e, str) else e for e in entries]


def integer(*entries: dict[str, Any] | str) -> dict[str, Any]:
    return {"type": "integer", "x-kubernetes-validations": rules(*entries)}


@pytest.mark.parametrize(
    ("schema", "value", "expected"),
    [
        (integer("self <= 1"), 1, []),
        (integer("self <= 1"), 99, [(P, INVALID, "failed rule: self <= 1")]),
        (integer("  self >= 1  "), 0, [(P, INVALID, "failed rule: self >= 1")]),
        (
            integer({"rule": "self >= 1", "message": "new value must be greater than or equal to 1"}),
            0,
            [(P, INVALID, "new value must be greater than or equal to 1")],
        ),
        # messageExpression is preferred over message
        (
            integer(
                {
                    "rule": "self >= 1",
                    "message": "new value must be greater than or equal to 1",
                    "messageExpression": "'new value must be greater than or equal to 1, but got %d'.format([self])",
                }
            ),
            0,
            [(P, INVALID, "new value must be greater than or equal to 1, but got 0")],
        ),
        # ... and falls back to message when it gives an empty string or fails
        (
            integer({"rule": "self >= 1", "message": "too small", "messageExpression": "''"}),
            0,
            [(P, INVALID, "too small")],
        ),
        (
            integer({"rule": "self >= 1", "message": "too small", "messageExpression": "self.nope"}),
            0,
            [(P, INVALID, "too small")],
        ),
        (integer({"rule": "self >= 1", "messageExpression": "1"}), 0, [(P, INVALID, "failed rule: self >= 1")]),
        # reason picks the error type
        (integer({"rule": "self >= 1", "reason": "FieldValueForbidden", "message": "no"}), 0, [(P, "Forbidden", "no")]),
        (
            integer({"rule": "self >= 1", "reason": "FieldValueRequired", "message": "no"}),
            0,
            [(P, "Required value", "no")],
        ),
        (
            integer({"rule": "self >= 1", "reason": "FieldValueDuplicate", "message": "no"}),
            0,
            [(P, "Duplicate value", "no")],
        ),
        # several rules, all reported
        (
            integer("self > 5", "self < 0"),
            3,
            [(P, INVALID, "failed rule: self > 5"), (P, INVALID, "failed rule: self < 0")],
        ),
        # a rule that is not a bool
        (integer("self + 1"), 3, [(P, INVALID, "rule did not evaluate to a bool: failed rule: self + 1")]),
        # runtime errors name the rule
        (integer("self / 0 == 1"), 3, [(P, INVALID, "divide by zero evaluating rule: failed rule: self / 0 == 1")]),
        # compile errors
        (
            integer("self.("),
            3,
            [
                (
                    P,
                    INVALID,
                    "rule compile error: compilation failed: "
                    "ERROR: <input>:1:6: Syntax error: no viable alternative at input '.('",
                )
            ],
        ),
        (
            integer("url('x') == self"),
            3,
            [
                (
                    P,
                    INVALID,
                    "rule compile error: compilation failed: "
                    "ERROR: <input>:1:4: undeclared reference to 'url' (in container '')",
                )
            ],
        ),
        # numbers are doubles, integers ints
        ({"type": "number", "x-kubernetes-validations": rules("self == 2.0", "type(self) == double")}, 2, []),
        (integer("type(self) == int"), 2.0, []),
        # strings and the strings extension
        (
            {
                "type": "string",
                "x-kubernetes-validations": rules("self.lowerAscii() == 'abc'", "self.split('') .size() >= 0"),
            },
            "ABC",
            [],
        ),
        (
            {"type": "string", "x-kubernetes-validations": rules("self.matches('^[a-z]+$')")},
            "AB",
            [(P, INVALID, "failed rule: self.matches('^[a-z]+$')")],
        ),
        # format byte reaches CEL as bytes; date-time as a string to convert
        ({"type": "string", "format": "byte", "x-kubernetes-validations": rules("self == b'hello'")}, "aGVsbG8=", []),
        (
            {
                "type": "string",
                "format": "date-time",
                "x-kubernetes-validations": rules("timestamp(self) > timestamp('2020-01-01T00:00:00Z')"),
            },
            "2021-06-01T00:00:00Z",
            [],
        ),
        # int-or-string is dyn
        (
            {"x-kubernetes-int-or-string": True, "x-kubernetes-validations": rules("type(self) == string || self > 0")},
            "x",
            [],
        ),
        (
            {"x-kubernetes-int-or-string": True, "x-kubernetes-validations": rules("type(self) == string || self > 0")},
            0,
            [(P, INVALID, "failed rule: type(self) == string || self > 0")],
        ),
        # null values are not checked
        ({"type": "integer", "nullable": True, "x-kubernetes-validations": rules("self > 0")}, None, []),
    ],
)
def test_rules(schema: dict[str, Any], value: Any, expected: list[tuple[str, str, str]]) -> None:
    assert check_value(schema, value) == expected


OBJECT = {
    "type": "object",
    "x-kubernetes-validations": rules("self.field <= 1", "has(self.field)", "!has(self.field2)"),
    "properties": {"field": {"type": "integer"}, "field2": {"type": "integer"}},
}


def test_objects_fields_and_has() -> None:
    assert check_value(OBJECT, {"field": 1}) == []
    assert check_value(OBJECT, {"field": 2, "field2": 1}) == [
        (P, INVALID, "failed rule: self.field <= 1"),
        (P, INVALID, "failed rule: !has(self.field2)"),
    ]


def test_missing_field_at_runtime_is_an_evaluation_error() -> None:
    schema = {
        "type": "object",
        "properties": {"a": {"type": "integer"}},
        "x-kubernetes-validations": rules("self.a > 0"),
    }
    [(path, kind, detail)] = check_value(schema, {})
    assert (path, kind) == (P, INVALID)
    assert detail.endswith("evaluating rule: failed rule: self.a > 0") and '"a"' in detail


def test_special_property_names_are_escaped() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-validations": rules(
            "self.__namespace__", "self.x__dash__prop", "self.redact__underscores__d", "self.a__dot__b__slash__c"
        ),
        "properties": {n: {"type": "boolean"} for n in ("namespace", "x-prop", "redact__d", "a.b/c", "9lives")},
    }
    assert (
        check_value(schema, {"namespace": True, "x-prop": True, "redact__d": True, "a.b/c": True, "9lives": False})
        == []
    )
    assert escape_property("9lives") is None
    assert escape_property("if") == "__if__"


def test_maps_and_arrays() -> None:
    mapping = {
        "type": "object",
        "additionalProperties": {"type": "integer"},
        "x-kubernetes-validations": rules(
            "self['key1'] == 1", "'key1' in self", "self.all(k, self[k] >= 1)", "self == {'key2': 2, 'key1': 1}"
        ),
    }
    assert check_value(mapping, {"key1": 1, "key2": 2}) == []
    array = {
        "type": "array",
        "items": {"type": "integer"},
        "x-kubernetes-validations": rules(
            "self[0] == 1",
            "self.all(x, x >= 1)",
            "self == [1, 2]",
            "self + [3] == [1, 2, 3]",
            "[3] + self != [1, 2, 3]",
        ),
    }
    assert check_value(array, [1, 2]) == []


def test_nested_rules_report_at_their_node() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "properties": {
            "objectField": {
                "type": "object",
                "x-kubernetes-validations": rules("self.field <= 1"),
                "properties": {"field": {"type": "integer"}},
            },
            "items": {"type": "array", "items": {"type": "string", "x-kubernetes-validations": rules("self != 'bad'")}},
            "map": {
                "type": "object",
                "additionalProperties": {"type": "integer", "x-kubernetes-validations": rules("self > 0")},
            },
        },
    }
    value = {"objectField": {"field": 2}, "items": ["ok", "bad"], "map": {"a": 1, "b": 0}}
    assert check_value(schema, value) == [
        (f"{P}.objectField", INVALID, "failed rule: self.field <= 1"),
        (f"{P}.items[1]", INVALID, "failed rule: self != 'bad'"),
        (f"{P}.map.b", INVALID, "failed rule: self > 0"),
    ]


def test_field_path_moves_the_error() -> None:
    schema = {
        "type": "object",
        "properties": {"min": {"type": "integer"}, "max": {"type": "integer"}},
        "x-kubernetes-validations": [{"rule": "self.min <= self.max", "fieldPath": ".max", "message": "max below min"}],
    }
    assert check_value(schema, {"min": 2, "max": 1}) == [(f"{P}.max", INVALID, "max below min")]
    assert parse_field_path(".a['b.c'].d") == [("field", "a"), ("key", "b.c"), ("field", "d")]
    assert parse_field_path("a") is None


def test_fields_not_in_the_schema_are_not_accessible() -> None:
    schema = {
        "type": "object",
        "x-kubernetes-preserve-unknown-fields": True,
        "x-kubernetes-validations": rules("self.field <= 1", "self.field3 <= 1"),
        "properties": {"field": {"type": "integer"}},
    }
    assert check_value(schema, {"field": 1, "field3": None}) == [
        (P, INVALID, "rule compile error: compilation failed: undefined field 'field3'")
    ]


def test_schema_errors_come_before_rules_and_rules_before_unknown_fields() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "integer"}}, "x-kubernetes-validations": rules("false")}
    assert check_value(schema, {"a": "x"}) == [(f"{P}.a", INVALID, 'must be of type integer: "string"')]
    assert check_value(schema, {"a": 1, "b": 2}) == [(P, INVALID, "failed rule: false")]


TRANSITION = integer({"rule": "self > oldSelf", "message": "new value must be greater than old value"})


def test_transition_rules_run_only_with_an_old_value() -> None:
    definitions = [inline("v", TRANSITION)]
    assert validate_cluster_variables([{"name": "v", "value": 1}], definitions) == []
    assert (
        validate_cluster_variables([{"name": "v", "value": 1}], definitions, old_values=[{"name": "v", "value": 0}])
        == []
    )
    assert triples(
        validate_cluster_variables([{"name": "v", "value": 0}], definitions, old_values=[{"name": "v", "value": 1}])
    ) == [(P, INVALID, "new value must be greater than old value")]
    overrides = "spec.topology.workers.machineDeployments[0].variables.overrides"
    assert triples(
        validate_override_variables(
            [{"name": "v", "value": 0}], definitions, field=overrides, old_values=[{"name": "v", "value": 1}]
        )
    ) == [(f"{overrides}[v].value", INVALID, "new value must be greater than old value")]


def test_immutability_with_message_expression() -> None:
    schema = {
        "type": "object",
        "properties": {"field": {"type": "string"}},
        "x-kubernetes-validations": [
            {
                "rule": "self.field == oldSelf.field",
                "messageExpression": '\'field is immutable, but field was changed from "%s" to "%s"\''
                ".format([oldSelf.field, self.field])",
            }
        ],
    }
    definitions = [inline("v", schema)]
    old = [{"name": "v", "value": {"field": "value1"}}]
    assert validate_cluster_variables([{"name": "v", "value": {"field": "value1"}}], definitions, old_values=old) == []
    assert triples(
        validate_cluster_variables([{"name": "v", "value": {"field": "value2"}}], definitions, old_values=old)
    ) == [(P, INVALID, 'field is immutable, but field was changed from "value1" to "value2"')]


# --- bounded evaluation -----------------------------------------------------------------------------


def _timed(schema: dict[str, Any], value: Any) -> tuple[list[tuple[str, str, str]], float]:
    start = time.perf_counter()
    errors = check_value(schema, value)
    return errors, time.perf_counter() - start


def test_a_rule_that_would_run_too_long_is_refused_quickly() -> None:
    schema = {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-validations": rules(
            "self.all(a, self.all(b, self.all(c, a + b + c != '')))", "self.size() > 100000"
        ),
    }
    errors, seconds = _timed(schema, [f"item-{i}" for i in range(2000)])
    assert seconds < 2
    [(path, kind, detail)] = errors  # the second rule is not run
    assert (path, kind) == (P, INVALID)
    assert detail.startswith("estimated cost ")
    assert detail.endswith(
        "no further validation rules will be run due to call cost exceeds limit for rule: "
        "failed rule: self.all(a, self.all(b, self.all(c, a + b + c != '')))"
    )


def test_string_doubling_is_refused() -> None:
    rule = "cel.bind(a, self + self, cel.bind(b, a + a, cel.bind(c, b + b, cel.bind(d, c + c, d + d)))).size() > 0"
    errors, seconds = _timed({"type": "string", "x-kubernetes-validations": rules(rule)}, "x" * 100_000)
    assert seconds < 2
    [(_, _, detail)] = errors
    cost = int(detail.split()[2])
    assert cost > 1_000_000 and detail.startswith(f"estimated cost {cost} exceeds the limit of 1000000: ")


def test_the_runtime_iteration_budget_stops_what_the_estimate_lets_through() -> None:
    schema = {
        "type": "array",
        "items": {"type": "integer"},
        "x-kubernetes-validations": rules("self.all(a, [1, 2, 3].all(b, a + b > 0))"),
    }
    errors, seconds = _timed(schema, list(range(1, 9000)))
    assert seconds < 2
    [(_, _, detail)] = errors
    assert detail.startswith("evaluation stopped: Iteration budget exceeded: no further validation rules will be run")


def test_reasonable_rules_on_large_values_run() -> None:
    schema = {
        "type": "array",
        "items": {"type": "string"},
        "x-kubernetes-validations": rules(
            "self.all(x, x.startsWith('item-'))",
            "self.map(x, x + '!').size() == 2000",
            "self.exists(x, x == 'item-1999')",
        ),
    }
    errors, seconds = _timed(schema, [f"item-{i}" for i in range(2000)])
    assert errors == [] and seconds < 2


def test_the_total_budget_stops_further_rules() -> None:
    rule = "self.all(x, x.size() < 1000000)"
    item = {"type": "array", "items": {"type": "string"}, "x-kubernetes-validations": rules(rule)}
    schema = {"type": "array", "items": item}
    value = [["x" * 50_000] * 9 for _ in range(40)]
    [(path, _, detail)] = check_value(schema, value)  # ~450k per list: the 10M budget ends mid-way
    assert path.startswith(f"{P}[") and 15 < int(path[len(P) + 1 : -1]) < 39
    assert "no further validation rules will be run" in detail


def test_a_missing_cel_library_is_an_error_not_an_exception(monkeypatch: pytest.MonkeyPatch) -> None:
    from clusterclass.schema import celrules

    def broken() -> Any:
        raise ImportError("no module named cel_expr_python")

    monkeypatch.setattr(celrules, "default_backend", broken)
    assert check_value(integer("self > 0"), 1) == [
        (
            "spec.topology.variables[v].value",
            "Internal error",
            "CEL rules cannot be evaluated: no module named cel_expr_python",
        )
    ]
    assert check_value({"type": "integer"}, 1) == []


def test_the_evaluator_is_pluggable() -> None:
    from clusterclass.schema.cel import CelExprBackend, Evaluation, Program
    from clusterclass.schema.celrules import validate_rules
    from clusterclass.schema.model import parse_schema

    class Recording:
        def __init__(self) -> None:
            self.inner = CelExprBackend()
            self.seen: list[tuple[str, Any]] = []

        def compile(self, expression: str) -> Program:
            return self.inner.compile(expression)

        def evaluate(self, program: Program, activation: Any, *, cost_limit: int) -> Evaluation:
            self.seen.append((program.expression, dict(activation)))
            return self.inner.evaluate(program, activation, cost_limit=cost_limit)

    raw = {
        "type": "object",
        "properties": {"x-y": {"type": "number"}},
        "x-kubernetes-validations": rules("self.x__dash__y > 1"),
    }
    schema, errors = parse_schema(raw, "")
    assert errors == []
    backend = Recording()
    assert validate_rules({"x-y": 2, "hidden": 1}, schema, "v", backend=backend) == []
    assert backend.seen == [("self.x__dash__y > 1", {"self": {"x__dash__y": 2.0}})]
