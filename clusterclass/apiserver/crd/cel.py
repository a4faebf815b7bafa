"""``x-kubernetes-validations`` of a CRD schema: the CEL rules, run the way kube-apiserver runs them.

Programs are compiled once with the schema (:mod:`clusterclass.apiserver.crd.nodes`) by the evaluator the
ClusterClass variables use (``topology.variables.cel``, over ``cel-expr-python``); values reach CEL
through the same conversion (``celrules.cel_value``). What differs from variables is the walk and
the error shapes, which are kube-apiserver's (recorded from a real one):

- a rule runs where the value exists; a transition rule (one reading ``oldSelf``) only on update and
  only where an old value correlates (same property, same map key, same ``map``-list key); a rule
  without ``oldSelf`` is skipped where the value did not change (ratcheting);
- a failed rule is ``Invalid`` (or the rule's ``reason``) at the node plus the rule's ``fieldPath``;
  the bad value is shown for scalars and left out for objects and arrays; the detail is the
  ``messageExpression`` result, else ``message``, else ``failed rule: <rule>``;
- an evaluation error names the schema type as the value (``Invalid value: "object": ... evaluating
  rule: ...``); past the cost budget the walk stops with one error.
"""

from __future__ import annotations

from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.apiserver.crd.nodes import Node, correlate_items
from clusterclass.fielderrors import ErrorType, FieldError
from clusterclass.schema.cel import DEFAULT_COST_LIMIT, CelBackend, CelError, CostExceeded, Program
from clusterclass.schema.celast import selected_fields
from clusterclass.schema.celrules import (
    MISSING,
    TOTAL_COST_BUDGET,
    cel_value,
    rule_label,
    rule_message,
    rule_target,
)
from clusterclass.schema.model import Rule


class CelRun:
    """One walk of ``x-kubernetes-validations`` over an object, with kube-apiserver's error shapes."""

    def __init__(self, backend: CelBackend) -> None:
        self.backend = backend
        self.errors: list[FieldError] = []
        self.remaining = TOTAL_COST_BUDGET
        self.stopped = False

    def walk(self, value: Any, node: Node, path: str, old: Any) -> None:
        if value is None or self.stopped:
            return
        if node.rules:
            self.check(value, node, path, old)
        if isinstance(value, dict):
            old_map = old if isinstance(old, dict) else None
            for key, child in node.sorted_properties:
                if key in value and child.rules_below:
                    self.walk(value[key], child, fe.child(path, key), old_map.get(key, MISSING) if old_map else MISSING)
            additional = node.additional
            if additional is not None and additional.rules_below:
                for key in sorted(value):
                    if node.properties is None or key not in node.properties:
                        child_old = old_map.get(key, MISSING) if old_map else MISSING
                        self.walk(value[key], additional, f"{path}[{key}]", child_old)
        elif isinstance(value, list) and node.items is not None and node.items.rules_below:
            olds = correlate_items(value, old, node) if node.list_type == "map" else None
            for i, item in enumerate(value):
                self.walk(item, node.items, f"{path}[{i}]", olds[i] if olds is not None else MISSING)

    def check(self, value: Any, node: Node, path: str, old: Any) -> None:
        unchanged = old is not MISSING and old == value
        activation: dict[str, Any] | None = None
        for rule, program in node.rules:
            if program is None or self.stopped:
                continue
            uses_old = "oldSelf" in program.identifiers
            if uses_old and (old is MISSING or old is None):
                continue  # a transition rule: nothing to compare with
            if unchanged and not uses_old:
                continue  # ratcheting
            if activation is None:
                activation = {"self": cel_value(value, node.schema)}
                if old is not MISSING and old is not None:
                    activation["oldSelf"] = cel_value(old, node.schema)
            self.run(rule, program, activation, node, path, value)

    def run(self, rule: Rule, program: Program, activation: dict[str, Any], node: Node, path: str, value: Any) -> None:
        if self.remaining <= 0:
            detail = "validation failed due to running out of cost budget, no further validation rules will be run"
            self.errors.append(fe.invalid(path, _node_type(node), detail))
            self.stopped = True
            return
        if _reads_a_float_as_int(program, node, value):
            detail = f"invalid data, expected int, got float64 evaluating rule: {rule_label(rule)}"
            self.errors.append(fe.invalid(path, _node_type(node), detail))
            return
        try:
            evaluation = self.backend.evaluate(program, activation, cost_limit=min(DEFAULT_COST_LIMIT, self.remaining))
        except CostExceeded:
            detail = f"call cost exceeds limit for rule: {rule.rule.strip()}"
            self.errors.append(fe.invalid(path, _node_type(node), detail))
            self.stopped = True
            return
        except CelError as err:
            self.errors.append(fe.invalid(path, _node_type(node), f"{err} evaluating rule: {rule_label(rule)}"))
            return
        self.remaining -= evaluation.cost
        if evaluation.value is True:
            return
        if evaluation.value is not False:
            self.errors.append(fe.invalid(path, _node_type(node), f"rule did not evaluate to a bool: {rule.rule}"))
            return
        target = rule_target(path, rule)
        shown = value if not isinstance(value, dict | list) else fe.OMITTED
        message = self.message(rule, activation)
        if rule.reason == "FieldValueRequired":
            self.errors.append(fe.required(target, message))
        elif rule.reason == "FieldValueForbidden":
            self.errors.append(fe.forbidden(target, message))
        elif rule.reason == "FieldValueDuplicate":
            self.errors.append(FieldError(target, ErrorType.DUPLICATE, "", shown))
        else:
            self.errors.append(FieldError(target, ErrorType.INVALID, message, shown))

    def message(self, rule: Rule, activation: dict[str, Any]) -> str:
        text, cost = rule_message(self.backend, rule, activation, self.remaining)
        self.remaining -= cost
        return text


def _node_type(node: Node) -> str:
    """The bad value kube-apiserver shows for a CEL runtime error: the schema node's type."""
    return node.type


def _reads_a_float_as_int(program: Program, node: Node, value: Any) -> bool:
    """Whether the rule reads an ``integer`` field that holds a float (``3.0``): kube-apiserver hands CEL the
    decoded JSON as it is, and the conversion fails when the rule touches that field."""
    if node.type == "integer" and isinstance(value, float):
        return "self" in program.identifiers
    for chain in selected_fields(program.tree, "self"):
        current, data = node, value
        for name in chain:
            child = current.child(name) if isinstance(data, dict) and current.properties is not None else None
            if child is None or name not in data:
                break
            current, data = child, data[name]
            if current.type == "integer" and isinstance(data, float):
                return True
    return False
