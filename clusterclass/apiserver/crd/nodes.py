"""A CRD version's ``openAPIV3Schema`` compiled into :class:`Node` objects, read by every schema walk.

Parsing goes through the ClusterClass variables' schema parser (``topology.variables.schema``), so
one parser decides what a well-formed schema is and supplies the node each CEL conversion needs;
the compiled :class:`Node` adds what kube-apiserver's walks read that the parser does not keep
(list and map types, embedded resources, boolean ``additionalProperties``, ``multipleOf``), sorted
properties, the compiled CEL programs, and flags saying which subtrees hold defaults, rules, list
types or embedded resources, so :mod:`clusterclass.apiserver.crd.schema` and :mod:`clusterclass.apiserver.crd.cel`
skip what cannot matter. Also here: how items of ``map`` and ``set`` lists correlate with the old
object's (ratcheting and CEL ``oldSelf`` both need it).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from clusterclass.fielderrors import FieldError
from clusterclass.schema.cel import CelBackend, Program
from clusterclass.schema.cel import default_backend as default_cel_backend
from clusterclass.schema.celrules import MISSING
from clusterclass.schema.jsonvalues import canonical
from clusterclass.schema.model import Rule, Schema, parse_schema
from clusterclass.schema.patterns import Pattern


class Scale:
    """A version's scale subresource: where the replica counts and the selector live (``.spec.replicas``)."""

    def __init__(self, spec_replicas_path: str, status_replicas_path: str, label_selector_path: str | None) -> None:
        self.spec_replicas_path = spec_replicas_path
        self.status_replicas_path = status_replicas_path
        self.label_selector_path = label_selector_path


class Node:
    """One compiled schema node: its keywords, its children, and what lies below it."""

    __slots__ = (
        "additional",
        "additional_bool",
        "all_of",
        "any_of",
        "default",
        "defaults_below",
        "embedded",
        "embedded_below",
        "enum",
        "format",
        "has_default",
        "items",
        "list_keys",
        "list_type",
        "listtypes_below",
        "map_type",
        "max_items",
        "max_length",
        "max_properties",
        "min_items",
        "min_length",
        "min_properties",
        "multiple_of",
        "not_",
        "nullable",
        "one_of",
        "pattern",
        "pattern_text",
        "preserve",
        "prop_defaults",
        "properties",
        "required",
        "rules",
        "rules_below",
        "schema",
        "sorted_properties",
        "type",
        "types",
        "unique_items",
    )

    def __init__(self, schema: Schema, raw: Mapping[str, Any]) -> None:
        self.schema = schema
        self.type = schema.type
        self.types: tuple[str, ...] = ("integer", "string") if schema.int_or_string and not schema.type else ()
        if schema.type:
            self.types = (schema.type,)
        self.format = schema.format
        self.nullable = schema.nullable
        self.preserve = schema.preserve_unknown_fields
        self.embedded = raw.get("x-kubernetes-embedded-resource") is True
        self.has_default = schema.has_default
        self.default = schema.default if schema.has_default else None
        self.enum = schema.enum
        self.required = schema.required
        self.max_length, self.min_length = schema.max_length, schema.min_length
        self.pattern: Pattern | None = schema.compiled_pattern
        self.pattern_text = schema.pattern
        multiple_of = raw.get("multipleOf")
        self.multiple_of: float | None = None
        if isinstance(multiple_of, int | float) and not isinstance(multiple_of, bool):
            self.multiple_of = float(multiple_of)
        self.max_items, self.min_items, self.unique_items = schema.max_items, schema.min_items, schema.unique_items
        self.max_properties, self.min_properties = schema.max_properties, schema.min_properties
        additional = raw.get("additionalProperties")
        self.additional_bool: bool | None = additional if isinstance(additional, bool) else None
        list_type = raw.get("x-kubernetes-list-type")
        self.list_type: str | None = list_type if list_type in ("atomic", "set", "map") else None
        keys = raw.get("x-kubernetes-list-map-keys")
        self.list_keys: tuple[str, ...] = tuple(k for k in keys if isinstance(k, str)) if isinstance(keys, list) else ()
        map_type = raw.get("x-kubernetes-map-type")
        self.map_type: str | None = map_type if map_type in ("atomic", "granular") else None
        self.rules: tuple[tuple[Rule, Program | None], ...] = ()
        # children, filled in by the compiler
        self.properties: dict[str, Node] | None = None
        self.sorted_properties: tuple[tuple[str, Node], ...] = ()
        self.additional: Node | None = None
        self.items: Node | None = None
        self.all_of: tuple[Node, ...] = ()
        self.any_of: tuple[Node, ...] = ()
        self.one_of: tuple[Node, ...] = ()
        self.not_: Node | None = None
        self.prop_defaults: tuple[tuple[str, Node], ...] = ()
        self.defaults_below = False
        self.rules_below = False
        self.listtypes_below = False
        self.embedded_below = False

    def child(self, name: str) -> Node | None:
        """The schema of the value under ``name`` in an object (a property, else the map's value schema)."""
        if self.properties is not None:
            found = self.properties.get(name)
            if found is not None:
                return found
        return self.additional

    @property
    def prunes_value(self) -> bool:
        """Whether values under an unknown key are kept (a map with a boolean ``additionalProperties``)."""
        return self.additional is not None or self.additional_bool is not None


def compile_schema(raw: Mapping[str, Any], *, backend: CelBackend | None = None) -> tuple[Node, list[FieldError]]:
    """Parse and compile ``raw`` (an ``openAPIV3Schema``); the problems the parser found come back too.

    CEL rules are compiled when a backend is available; a rule that does not compile is kept
    without a program (CRD validation reports it; a walk skips it).
    """
    sanitized = _without_boolean_additional(raw)
    schema, errors = parse_schema(sanitized, "openAPIV3Schema")
    return _compile(schema, raw, backend), errors


def _without_boolean_additional(raw: Any) -> Any:
    """A copy of ``raw`` where ``additionalProperties: true|false`` is left out (the parser wants schemas)."""
    if isinstance(raw, Mapping):
        return {
            k: _without_boolean_additional(v)
            for k, v in raw.items()
            if not (k == "additionalProperties" and isinstance(v, bool))
        }
    if isinstance(raw, list):
        return [_without_boolean_additional(v) for v in raw]
    return raw


def _compile(schema: Schema, raw: Any, backend: CelBackend | None) -> Node:
    raw_map: Mapping[str, Any] = raw if isinstance(raw, Mapping) else {}
    node = Node(schema, raw_map)
    if schema.properties is not None:
        raw_props = raw_map.get("properties")
        raw_props = raw_props if isinstance(raw_props, Mapping) else {}
        node.properties = {
            name: _compile(child, raw_props.get(name, {}), backend) for name, child in schema.properties.items()
        }
        node.sorted_properties = tuple(sorted(node.properties.items()))
        node.prop_defaults = tuple((n, c) for n, c in node.sorted_properties if c.has_default)
    if schema.additional_properties is not None:
        node.additional = _compile(schema.additional_properties, raw_map.get("additionalProperties"), backend)
    if schema.items is not None:
        node.items = _compile(schema.items, raw_map.get("items"), backend)
    for attr, key in (("all_of", "allOf"), ("any_of", "anyOf"), ("one_of", "oneOf")):
        subs = getattr(schema, attr)
        raw_subs: list[Any] = raw_map[key] if isinstance(raw_map.get(key), list) else []
        compiled = tuple(_compile(sub, raw_subs[i] if i < len(raw_subs) else {}, backend) for i, sub in enumerate(subs))
        setattr(node, attr, compiled)
    if schema.not_ is not None:
        node.not_ = _compile(schema.not_, raw_map.get("not"), backend)
    node.rules = tuple((rule, _compile_rule(rule.rule, backend)) for rule in schema.validations)
    children = [c for c in (*(node.properties or {}).values(), node.additional, node.items) if c is not None]
    node.defaults_below = (
        bool(node.prop_defaults)
        or any(c.defaults_below for c in children)
        or any(c is not None and c.has_default for c in (node.additional, node.items))
    )
    node.rules_below = bool(node.rules) or any(c.rules_below for c in children)
    node.listtypes_below = node.list_type in ("set", "map") or any(c.listtypes_below for c in children)
    node.embedded_below = node.embedded or any(c.embedded_below for c in children)
    return node


def _compile_rule(expression: str, backend: CelBackend | None) -> Program | None:
    try:
        return (backend or default_cel_backend()).compile(expression)
    except Exception:  # a rule that does not compile (or no CEL library): CRD validation reports it
        return None


def correlate_items(value: list[Any], old: Any, node: Node) -> list[Any] | None:
    """The old item each new item of a ``map`` or ``set`` list correlates with (ratcheting, CEL ``oldSelf``)."""
    if not isinstance(old, list) or node.list_type not in ("map", "set"):
        return None
    if node.list_type == "set":
        olds = {canonical(item) for item in old}
        return [item if canonical(item) in olds else MISSING for item in value]
    by_key = {map_key(item, node): item for item in old if isinstance(item, dict)}
    return [by_key.get(map_key(item, node), MISSING) if isinstance(item, dict) else MISSING for item in value]


def map_key(item: Mapping[str, Any], node: Node) -> Any:
    keys = []
    for name in node.list_keys:
        if name in item:
            keys.append(canonical(item[name]))
        else:
            child = node.items.child(name) if node.items is not None else None
            keys.append(canonical(child.default) if child is not None and child.has_default else ("unset",))
    return tuple(keys)
