"""Variable definitions as a ClusterClass's status holds them, and the lookup rules on them.

Upstream keeps the definitions a Cluster's values are checked against in
``ClusterClass.status.variables``: one entry per variable name, with a ``definitionsConflict``
flag and one definition per origin (``from``: ``inline`` for ``spec.variables``, or the name of
the external patch whose DiscoverVariables call returned it). :func:`variable_definitions` reads
that status; a ClusterClass that has not been reconciled (every offline ``plan``) has none, so its
``spec.variables`` are used as ``inline`` definitions, which is what the reconciler would publish.
:func:`status_variables` builds that status (for the ClusterClass controller).

:class:`DefinitionIndex` answers "which definition does this value use?" with §5.9's rules: an
exact ``(name, from)`` match; an empty ``definitionFrom`` picks the definition when the
variable's definitions do not conflict; otherwise an error naming the problem.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from clusterclass.schema.jsonvalues import json_equal

INLINE = "inline"
BUILTIN = "builtin"


@dataclass(frozen=True)
class VariableDefinition:
    """One definition of a variable: where it comes from, whether it is required, its schema."""

    name: str
    from_: str
    required: bool
    schema: Any  # the raw ``openAPIV3Schema`` object, parsed lazily where it is used
    conflicts: bool = False


@dataclass(frozen=True)
class StatusVariable:
    """One ``status.variables`` entry: every definition of one variable name."""

    name: str
    definitions_conflict: bool
    definitions: tuple[VariableDefinition, ...]


class HasRaw(Protocol):
    """A typed view over an object dict (``clusterclass.api.views.ClusterClass``)."""

    @property
    def raw(self) -> Mapping[str, Any]: ...


# What the value functions accept as definitions: the parsed list, or the ClusterClass itself.
Definitions = Sequence[StatusVariable] | Mapping[str, Any] | HasRaw


def as_definitions(source: Definitions) -> list[StatusVariable]:
    """Definitions from a parsed list, a ClusterClass dict, or a ClusterClass view."""
    if isinstance(source, Mapping) or hasattr(source, "raw"):
        return variable_definitions(source)
    return [v for v in source if isinstance(v, StatusVariable)]


def variable_definitions(cluster_class: Any) -> list[StatusVariable]:
    """The definitions of a ClusterClass (a dict or a view with ``.raw``): its status when it has one,
    else its ``spec.variables`` as inline definitions, sorted by name as the status would be."""
    raw = getattr(cluster_class, "raw", cluster_class)
    if not isinstance(raw, Mapping):
        return []
    status = raw.get("status")
    status_vars = status.get("variables") if isinstance(status, Mapping) else None
    if isinstance(status_vars, list) and status_vars:
        return from_status(status_vars)
    spec = raw.get("spec")
    spec_vars = spec.get("variables") if isinstance(spec, Mapping) else None
    return from_spec(spec_vars if isinstance(spec_vars, list) else [])


def from_status(entries: Sequence[Any]) -> list[StatusVariable]:
    """Parse ``status.variables`` entries, skipping anything that is not an object with a name."""
    result: list[StatusVariable] = []
    for entry in entries:
        if not isinstance(entry, Mapping) or not isinstance(entry.get("name"), str):
            continue
        name = entry["name"]
        conflicts = entry.get("definitionsConflict") is True
        definitions = tuple(
            VariableDefinition(
                name=name,
                from_=str(d.get("from") or ""),
                required=d.get("required") is True,
                schema=_open_api_schema(d),
                conflicts=conflicts,
            )
            for d in _list(entry.get("definitions"))
            if isinstance(d, Mapping)
        )
        result.append(StatusVariable(name, conflicts, definitions))
    return result


def from_spec(variables: Sequence[Any]) -> list[StatusVariable]:
    """``spec.variables`` as inline definitions (first definition wins for a repeated name)."""
    seen: dict[str, StatusVariable] = {}
    for variable in variables:
        if not isinstance(variable, Mapping) or not isinstance(variable.get("name"), str):
            continue
        name = variable["name"]
        if name in seen:
            continue
        definition = VariableDefinition(name, INLINE, variable.get("required") is True, _open_api_schema(variable))
        seen[name] = StatusVariable(name, False, (definition,))
    return [seen[name] for name in sorted(seen)]


def status_variables(inline: Sequence[Any], discovered: Mapping[str, Sequence[Any]]) -> list[dict[str, Any]]:
    """``status.variables`` as the ClusterClass controller publishes them.

    ``inline`` is ``spec.variables``; ``discovered`` maps a patch name to the variables its
    DiscoverVariables extension returned. Definitions of one name conflict when their schemas or
    ``required`` flags differ. Sorted by name.
    """
    grouped: dict[str, list[dict[str, Any]]] = {}
    sources: list[tuple[str, Sequence[Any]]] = [(INLINE, inline), *discovered.items()]
    for origin, variables in sources:
        for variable in _list(variables):
            if not isinstance(variable, Mapping) or not isinstance(variable.get("name"), str):
                continue
            grouped.setdefault(variable["name"], []).append(
                {
                    "from": origin,
                    "required": variable.get("required") is True,
                    "schema": dict(schema) if isinstance(schema := variable.get("schema"), Mapping) else {},
                }
            )
    result: list[dict[str, Any]] = []
    for name in sorted(grouped):
        definitions = grouped[name]
        first = definitions[0]
        conflict = any(
            d["required"] != first["required"] or not json_equal(d["schema"], first["schema"]) for d in definitions[1:]
        )
        entry: dict[str, Any] = {"name": name, "definitions": definitions}
        if conflict:
            entry["definitionsConflict"] = True
        result.append(entry)
    return result


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _open_api_schema(holder: Mapping[str, Any]) -> Any:
    schema = holder.get("schema")
    return schema.get("openAPIV3Schema") if isinstance(schema, Mapping) else None


class DefinitionLookupError(Exception):
    """No usable definition for a value; the message is the upstream text."""


class DefinitionIndex:
    """Definitions by name and origin, with §5.9's lookup rules."""

    def __init__(self, variables: Sequence[StatusVariable]) -> None:
        self.by_name: dict[str, dict[str, VariableDefinition]] = {}
        self.order: list[VariableDefinition] = []
        for variable in variables:
            by_from = self.by_name.setdefault(variable.name, {})
            for definition in variable.definitions:
                if definition.from_ not in by_from:
                    by_from[definition.from_] = definition
                    self.order.append(definition)

    def get(self, name: str, definition_from: str) -> VariableDefinition:
        """The definition a value with this name and ``definitionFrom`` uses.

        With an empty ``definitionFrom`` and no conflict, the definition is reported with an empty
        ``from_``. Raises :class:`DefinitionLookupError` with upstream's message otherwise.
        """
        by_from = self.by_name.get(name)
        if not by_from:
            raise DefinitionLookupError(f'no definitions found for variable "{name}"')
        if definition_from in by_from:
            return by_from[definition_from]
        if definition_from == "":
            definition = next(iter(by_from.values()))
            if definition.conflicts:
                raise DefinitionLookupError(
                    f'variable "{name}" has conflicting definitions. It requires a non-empty `definitionFrom`'
                )
            return VariableDefinition(name, "", definition.required, definition.schema, False)
        raise DefinitionLookupError(f'no definitions found for variable "{name}" from "{definition_from}"')

    def names_from(self, definition_from: str) -> set[str]:
        """Names that have a definition with exactly this origin."""
        return {name for name, by_from in self.by_name.items() if definition_from in by_from}
