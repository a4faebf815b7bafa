"""``x-kubernetes-validations``: run a schema's CEL rules against a value, as Kubernetes does.

Every schema node with rules is checked where the value has that node (absent and ``null``
values are skipped). ``self`` is the value at the node, converted the Kubernetes way: an object
with ``properties`` becomes a map of its *declared* properties only, with names escaped
(``x-prop`` → ``x__dash__prop``, ``namespace`` → ``__namespace__``); an
``additionalProperties`` object is a plain map; ``number`` values are doubles, ``integer`` values
ints, ``format: byte`` strings bytes. A rule that reads ``oldSelf`` is a transition rule: it runs
only where an old value exists (updates); on create it is skipped. Old values are matched by
object key; array items are not matched (Kubernetes only matches items of ``map``/``set`` lists,
which variable schemas cannot declare), so transition rules below an array do not run.

Outcomes, with Kubernetes' messages: a rule that evaluates to ``false`` gives an error at the
node (plus the rule's ``fieldPath``) whose type follows the rule's ``reason`` (``Invalid`` by
default) and whose detail is the ``messageExpression`` result if that is a usable string, else
``message``, else ``failed rule: <rule>``. A rule that does not compile, selects a field the
schema does not declare, or fails at runtime is an Invalid error naming the rule. Costs are
bounded per rule (:data:`cel.DEFAULT_COST_LIMIT`) and per value (:data:`TOTAL_COST_BUDGET`);
past either, the walk stops with the Kubernetes "no further validation rules will be run" error.
"""

from __future__ import annotations

import base64
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.api.objects import is_int
from clusterclass.fielderrors import FieldError
from clusterclass.schema import celast
from clusterclass.schema.cel import (
    DEFAULT_COST_LIMIT,
    CelBackend,
    CelError,
    CostExceeded,
    Program,
    default_backend,
)
from clusterclass.schema.formats import is_byte
from clusterclass.schema.jsonvalues import INT64_MAX, INT64_MIN, is_integer, is_number
from clusterclass.schema.model import Rule, Schema

TOTAL_COST_BUDGET = 10_000_000  # per variable value, as Kubernetes' per-object runtime budget
MAX_MESSAGE_LENGTH = 5000
#: "no old value": a create, or a value without a counterpart in the old object (CRD schemas use it too)
MISSING: Any = object()

RESERVED_WORDS = frozenset(
    {
        *("true", "false", "null", "in", "as", "break", "const", "continue", "else", "for", "function", "if"),
        *("import", "let", "loop", "package", "namespace", "return", "var", "void", "while"),
    }
)
REASONS = ("FieldValueInvalid", "FieldValueForbidden", "FieldValueRequired", "FieldValueDuplicate")
_PROPERTY_NAME = re.compile(r"[a-zA-Z_.\-/][a-zA-Z0-9_.\-/]*\Z")
_MAX_DEPTH = 100


def escape_property(name: str) -> str | None:
    """The name under which CEL sees a declared property, or None when CEL cannot access it."""
    if name in RESERVED_WORDS:
        return f"__{name}__"
    if not _PROPERTY_NAME.match(name):
        return None
    return (
        name.replace("__", "__underscores__").replace(".", "__dot__").replace("-", "__dash__").replace("/", "__slash__")
    )


def cel_value(value: Any, schema: Schema | None, depth: int = 0) -> Any:
    """``value`` as CEL sees it under ``schema`` (see the module docstring)."""
    if depth > _MAX_DEPTH:
        return None
    if value is None or isinstance(value, bool):
        return value
    if isinstance(value, dict):
        if schema is not None and schema.properties is not None:
            converted: dict[str, Any] = {}
            for name, child in value.items():
                prop = schema.properties.get(name)
                escaped = escape_property(name) if prop is not None else None
                if prop is not None and escaped is not None:
                    converted[escaped] = cel_value(child, prop, depth + 1)
            return converted
        item_schema = schema.additional_properties if schema is not None else None
        return {str(k): cel_value(v, item_schema, depth + 1) for k, v in value.items()}
    if isinstance(value, list):
        item_schema = schema.items if schema is not None else None
        return [cel_value(v, item_schema, depth + 1) for v in value]
    if is_number(value):
        if schema is not None and schema.type == "number":
            return float(value)
        wants_int = schema is not None and (schema.type == "integer" or schema.int_or_string)
        if isinstance(value, float) and wants_int and is_integer(value):
            return int(value)
        if is_int(value) and not INT64_MIN <= value <= INT64_MAX:
            return float(value)
        return value
    if isinstance(value, str) and schema is not None and schema.format == "byte" and is_byte(value):
        return base64.b64decode(value.replace("\r", "").replace("\n", ""))
    return value


def validate_rules(
    value: Any,
    schema: Schema,
    path: str,
    *,
    old_value: Any = MISSING,
    backend: CelBackend | None = None,
) -> list[FieldError]:
    """Every CEL rule of ``schema`` (at every level) checked against ``value``."""
    if backend is None:
        try:
            backend = default_backend()
        except Exception as err:  # the CEL library failed to load: say so once, do not raise
            return [fe.internal(path, f"CEL rules cannot be evaluated: {err}")] if _has_rules(schema, 0) else []
    run = _Run(backend)
    run.walk(value, old_value, schema, path, 0)
    return run.errors


def _has_rules(schema: Schema, depth: int) -> bool:
    if schema.validations:
        return True
    children = [*(schema.properties or {}).values(), schema.additional_properties, schema.items]
    return depth < _MAX_DEPTH and any(c is not None and _has_rules(c, depth + 1) for c in children)


@dataclass
class _Run:
    backend: CelBackend
    remaining: int = TOTAL_COST_BUDGET
    stopped: bool = False

    def __post_init__(self) -> None:
        self.errors: list[FieldError] = []

    def walk(self, value: Any, old: Any, schema: Schema, path: str, depth: int) -> None:
        if value is None or self.stopped or depth > _MAX_DEPTH:
            return
        if schema.validations:
            self.check_node(value, old, schema, path)
        if isinstance(value, dict):
            for name, child in value.items():
                child_schema = schema.property_schema(name)
                if child_schema is not None:
                    child_old = old.get(name, MISSING) if isinstance(old, dict) else MISSING
                    self.walk(child, child_old, child_schema, fe.child(path, name), depth + 1)
        elif isinstance(value, list) and schema.items is not None:
            for i, item in enumerate(value):
                self.walk(item, MISSING, schema.items, fe.index(path, i), depth + 1)

    def check_node(self, value: Any, old: Any, schema: Schema, path: str) -> None:
        activation = {"self": cel_value(value, schema)}
        if old is not MISSING and old is not None:
            activation["oldSelf"] = cel_value(old, schema)
        for rule in schema.validations:
            if self.stopped:
                return
            if self.remaining <= 0:
                self.stop(path, value)
                return
            program = self.compile(rule, schema, path, value)
            if program is None:
                continue
            if "oldSelf" in program.identifiers and "oldSelf" not in activation:
                continue  # a transition rule: nothing to compare with on create
            self.check_rule(rule, program, activation, path, value)

    def compile(self, rule: Rule, schema: Schema, path: str, value: Any) -> Program | None:
        try:
            program = self.backend.compile(rule.rule)
        except CelError as err:
            self.errors.append(fe.invalid(path, value, f"rule compile error: compilation failed: {err}"))
            return None
        undefined = list(undefined_fields(program, schema))
        if undefined:
            self.errors.append(fe.invalid(path, value, f"rule compile error: compilation failed: {undefined[0]}"))
            return None
        return program

    def check_rule(self, rule: Rule, program: Program, activation: dict[str, Any], path: str, value: Any) -> None:
        try:
            evaluation = self.backend.evaluate(program, activation, cost_limit=min(DEFAULT_COST_LIMIT, self.remaining))
        except CostExceeded as err:
            detail = f"{err}: no further validation rules will be run due to call cost exceeds limit for rule: "
            self.errors.append(fe.invalid(path, value, detail + rule_label(rule)))
            self.stopped = True
            return
        except CelError as err:
            self.errors.append(fe.invalid(path, value, f"{err} evaluating rule: {rule_label(rule)}"))
            return
        self.remaining -= evaluation.cost
        if evaluation.value is True:
            return
        if evaluation.value is not False:
            self.errors.append(fe.invalid(path, value, f"rule did not evaluate to a bool: {rule_label(rule)}"))
            return
        target = rule_target(path, rule)
        self.errors.append(_error_for_reason(rule.reason, target, value, self.message(rule, activation)))

    def message(self, rule: Rule, activation: dict[str, Any]) -> str:
        text, cost = rule_message(self.backend, rule, activation, self.remaining)
        self.remaining -= cost
        return text

    def stop(self, path: str, value: Any) -> None:
        detail = "validation failed due to running out of cost budget, no further validation rules will be run"
        self.errors.append(fe.invalid(path, value, detail))
        self.stopped = True


def rule_label(rule: Rule) -> str:
    """How Kubernetes names a rule in an error: its message, else ``failed rule: <rule>``."""
    return rule.message.strip() or f"failed rule: {rule.rule.strip()}"


def rule_target(path: str, rule: Rule) -> str:
    """Where a failed rule is reported: the node's path plus the rule's ``fieldPath`` (an invalid one adds nothing)."""
    for kind, segment in parse_field_path(rule.field_path) or ():
        path = fe.child(path, segment) if kind == "field" else fe.key(path, segment)
    return path


def rule_message(backend: CelBackend, rule: Rule, activation: dict[str, Any], remaining: int) -> tuple[str, int]:
    """The detail of a failed rule and the cost spent finding it.

    The ``messageExpression`` result when it evaluates (within ``remaining``) to a non-empty single-line
    string of at most :data:`MAX_MESSAGE_LENGTH` characters, else :func:`rule_label`: what
    kube-apiserver reports, for ClusterClass variables and CRD schemas alike.
    """
    if rule.message_expression.strip():
        try:
            program = backend.compile(rule.message_expression)
            evaluation = backend.evaluate(program, activation, cost_limit=min(DEFAULT_COST_LIMIT, max(remaining, 0)))
        except CelError:
            return rule_label(rule), 0
        text = evaluation.value
        if isinstance(text, str) and text.strip() and "\n" not in text and len(text) <= MAX_MESSAGE_LENGTH:
            return text.strip(), evaluation.cost
        return rule_label(rule), evaluation.cost
    return rule_label(rule), 0


def _error_for_reason(reason: str, path: str, value: Any, message: str) -> FieldError:
    if reason == "FieldValueRequired":
        return fe.required(path, message)
    if reason == "FieldValueForbidden":
        return fe.forbidden(path, message)
    if reason == "FieldValueDuplicate":
        return fe.duplicate(path, value, message)
    return fe.invalid(path, value, message)


def undefined_fields(program: Program, schema: Schema) -> Iterator[str]:
    """``undefined field 'x'`` for every ``self.x`` / ``oldSelf.x`` chain the schema does not declare."""
    reported: set[str] = set()
    for root in ("self", "oldSelf"):
        for chain in celast.selected_fields(program.tree, root):
            current: Schema | None = schema
            for name in chain:
                if current is None or current.properties is None or current.additional_properties is not None:
                    break
                current = next((p for n, p in current.properties.items() if escape_property(n) == name), None)
                if current is None and name not in reported:
                    reported.add(name)
                    yield f"undefined field '{name}'"


_SEGMENT = re.compile(r"\.([A-Za-z_][A-Za-z0-9_\-]*)|\['((?:[^'\\]|\\.)*)'\]|\[\"((?:[^\"\\]|\\.)*)\"\]")


def parse_field_path(field_path: str) -> list[tuple[str, str]] | None:
    """``.a.b['c']`` as ``[("field", "a"), ("field", "b"), ("key", "c")]``; None if it is not a valid path."""
    if not field_path:
        return []
    segments: list[tuple[str, str]] = []
    position = 0
    while position < len(field_path):
        match = _SEGMENT.match(field_path, position)
        if not match:
            return None
        if match[1] is not None:
            segments.append(("field", match[1]))
        else:
            segments.append(("key", match[2] if match[2] is not None else match[3]))
        position = match.end()
    return segments


def rule_definition_errors(schema: Schema, path: str, backend: CelBackend | None = None) -> list[FieldError]:
    """Definition-side checks of every rule in ``schema``: compiles, declared fields, reason, fieldPath."""
    if backend is None:
        try:
            backend = default_backend()
        except Exception as err:
            return [fe.internal(path, f"CEL rules cannot be checked: {err}")] if _has_rules(schema, 0) else []
    errors: list[FieldError] = []
    _check_definitions(schema, path, backend, errors, 0)
    return errors


def _check_definitions(schema: Schema, path: str, backend: CelBackend, errors: list[FieldError], depth: int) -> None:
    if depth > _MAX_DEPTH:
        return
    for i, rule in enumerate(schema.validations):
        rule_path = fe.index(fe.child(path, "x-kubernetes-validations"), i)
        try:
            program = backend.compile(rule.rule)
        except CelError as err:
            errors.append(fe.invalid(fe.child(rule_path, "rule"), rule.rule, f"compilation failed: {err}"))
        else:
            for problem in undefined_fields(program, schema):
                errors.append(fe.invalid(fe.child(rule_path, "rule"), rule.rule, f"compilation failed: {problem}"))
        if rule.message_expression.strip():
            try:
                backend.compile(rule.message_expression)
            except CelError as err:
                errors.append(
                    fe.invalid(
                        fe.child(rule_path, "messageExpression"),
                        rule.message_expression,
                        f"messageExpression compilation failed: {err}",
                    )
                )
        if rule.reason and rule.reason not in REASONS:
            errors.append(fe.not_supported(fe.child(rule_path, "reason"), rule.reason, list(REASONS)))
        if parse_field_path(rule.field_path) is None:
            errors.append(
                fe.invalid(fe.child(rule_path, "fieldPath"), rule.field_path, "must be a valid relative JSON path")
            )
    for name, prop in (schema.properties or {}).items():
        _check_definitions(prop, fe.key(fe.child(path, "properties"), name), backend, errors, depth + 1)
    if schema.additional_properties is not None:
        additional = fe.child(path, "additionalProperties")
        _check_definitions(schema.additional_properties, additional, backend, errors, depth + 1)
    if schema.items is not None:
        _check_definitions(schema.items, fe.child(path, "items"), backend, errors, depth + 1)
