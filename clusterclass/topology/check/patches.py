"""Validation of ``ClusterClass.spec.patches`` (spec §6.3, upstream ``internal/webhooks/patch_validation.go``).

Per patch: a name (not ``inline``, unique), an ``enabledIf`` that parses, exactly one of
``definitions`` and ``external``; an external patch needs the RuntimeSDK gate and a generate or a
validate extension (a validate-only patch is valid, DECISIONS.md). Per inline definition: every JSON
patch has a supported op, a path under ``/spec/``, array indices only where they are safe (``0`` or
``-`` to add, none to replace or remove), exactly one of ``value`` and ``valueFrom``, and a
``valueFrom`` naming exactly one of a template that parses or a variable that exists (a builtin from
the list below, or a variable of ``spec.variables``; discovered variables are not known here).
Every selector enables at least one target, and each enabled target must match a template this
ClusterClass references, by exact apiVersion and kind.

Wrong JSON types anywhere are field errors too; nothing here raises on malformed input.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from clusterclass import fielderrors as fe
from clusterclass.api.workers import MACHINE_DEPLOYMENT, MACHINE_POOL, WorkerKind
from clusterclass.fielderrors import FieldError
from clusterclass.topology.check.compatibility import text, worker_class_entries
from clusterclass.topology.check.gates import Gates
from clusterclass.topology.check.syntax import qualified_name_errors
from clusterclass.topology.gotemplate import parse_check
from clusterclass.topology.patches.selector import class_name_matches
from clusterclass.topology.variables.definitions import INLINE

#: Every ``valueFrom.variable`` under ``builtin.`` the webhook accepts (spec §5.3, v1.6 list).
BUILTIN_VARIABLES = frozenset(
    {
        "builtin",
        "builtin.cluster",
        "builtin.cluster.name",
        "builtin.cluster.namespace",
        "builtin.cluster.topology",
        "builtin.cluster.topology.class",
        "builtin.cluster.topology.version",
        "builtin.cluster.network",
        "builtin.cluster.network.serviceDomain",
        "builtin.cluster.network.services",
        "builtin.cluster.network.pods",
        "builtin.cluster.network.ipFamily",
        "builtin.controlPlane",
        "builtin.controlPlane.name",
        "builtin.controlPlane.replicas",
        "builtin.controlPlane.version",
        "builtin.controlPlane.machineTemplate.infrastructureRef.name",
        "builtin.machineDeployment",
        "builtin.machineDeployment.class",
        "builtin.machineDeployment.name",
        "builtin.machineDeployment.replicas",
        "builtin.machineDeployment.topologyName",
        "builtin.machineDeployment.version",
        "builtin.machineDeployment.bootstrap.configRef.name",
        "builtin.machineDeployment.infrastructureRef.name",
        "builtin.machinePool",
        "builtin.machinePool.class",
        "builtin.machinePool.name",
        "builtin.machinePool.replicas",
        "builtin.machinePool.topologyName",
        "builtin.machinePool.version",
        "builtin.machinePool.bootstrap.configRef.name",
        "builtin.machinePool.infrastructureRef.name",
    }
)

VALID_OPS = ("add", "remove", "replace")  # sorted, as upstream lists them

_ATOI = re.compile(r"^[+-]?[0-9]+$")
_INT64_MAX = 2**63 - 1


class _Errors(list[FieldError]):
    """A list of field errors with typed reads that record wrong JSON types."""

    def field(self, holder: Mapping[str, Any], key: str, path: str, kind: type | tuple[type, ...], what: str) -> Any:
        """``holder[key]`` when absent (None) or of ``kind``; else a type error and None."""
        value = holder.get(key)
        if value is None or isinstance(value, kind):
            return value
        self.append(fe.type_invalid(fe.child(path, key), value, f"must be {what}"))
        return None

    def string(self, holder: Mapping[str, Any], key: str, path: str) -> str | None:
        value: str | None = self.field(holder, key, path, str, "a string")
        return value

    def text(self, holder: Mapping[str, Any], key: str, path: str) -> str | None:
        """A string field read as Go reads it (absent: empty); None only when of a wrong type."""
        value = holder.get(key)
        if value is None:
            return ""
        return self.string(holder, key, path)

    def mapping(self, holder: Mapping[str, Any], key: str, path: str) -> Mapping[str, Any] | None:
        value: Mapping[str, Any] | None = self.field(holder, key, path, dict, "an object")
        return value

    def sequence(self, holder: Mapping[str, Any], key: str, path: str) -> list[Any] | None:
        value: list[Any] | None = self.field(holder, key, path, list, "a list")
        return value

    def boolean(self, holder: Mapping[str, Any], key: str, path: str) -> bool:
        return self.field(holder, key, path, bool, "a boolean") is True


def _spec(cc: Any) -> Mapping[str, Any]:
    spec = cc.get("spec") if isinstance(cc, Mapping) else None
    return spec if isinstance(spec, Mapping) else {}


def _inline_variable_names(spec: Mapping[str, Any]) -> set[str]:
    variables = spec.get("variables")
    if not isinstance(variables, list):
        return set()
    return {v["name"] for v in variables if isinstance(v, Mapping) and isinstance(v.get("name"), str)}


def patch_errors(cc: Any, *, gates: Gates = Gates()) -> list[FieldError]:  # noqa: B008 - Gates is frozen
    """Every problem with ``cc``'s ``spec.patches`` (spec §6.3)."""
    spec = _spec(cc)
    errors = _Errors()
    patches = errors.sequence(spec, "patches", "spec")
    if not patches:
        return errors
    variables = _inline_variable_names(spec)
    names: set[str] = set()
    for i, patch in enumerate(patches):
        path = fe.index("spec.patches", i)
        if not isinstance(patch, Mapping):
            errors.append(fe.type_invalid(path, patch, "must be an object"))
            continue
        name = _name_errors(patch, names, path, errors)
        _definition_errors(patch, cc, variables, gates, path, errors)
        if name is not None:
            names.add(name)
    return errors


def _name_errors(patch: Mapping[str, Any], names: set[str], path: str, errors: _Errors) -> str | None:
    name = errors.text(patch, "name", path)
    if name is None:
        return None
    name_path = fe.child(path, "name")
    if name == "":
        errors.append(fe.required(name_path, "patch name must be defined"))
    if name == INLINE:
        errors.append(fe.invalid(name_path, name, f'"{INLINE}" can not be used as the name of a patch'))
    if name in names:
        errors.append(
            fe.invalid(
                name_path, name, f'patch names must be unique. Patch with name "{name}" is defined more than once'
            )
        )
    return name


def _template_errors(source: str, path: str) -> list[FieldError]:
    problem = parse_check(source)
    return [] if problem is None else [fe.invalid(path, source, f"template can not be parsed: {problem}")]


def _definition_errors(
    patch: Mapping[str, Any], cc: Any, variables: set[str], gates: Gates, path: str, errors: _Errors
) -> None:
    enabled_if = errors.string(patch, "enabledIf", path)
    if enabled_if is not None:
        errors.extend(_template_errors(enabled_if, fe.child(path, "enabledIf")))
    errors.string(patch, "description", path)

    has_definitions = patch.get("definitions") is not None
    has_external = patch.get("external") is not None
    if not has_definitions and not has_external:
        errors.append(fe.required(path, "one of definitions or external must be defined"))
    if has_definitions and has_external:
        errors.append(fe.invalid(path, dict(patch), "only one of definitions or external can be defined"))

    definitions = errors.sequence(patch, "definitions", path)
    for j, definition in enumerate(definitions or []):
        definition_path = fe.index(fe.child(path, "definitions"), j)
        if not isinstance(definition, Mapping):
            errors.append(fe.type_invalid(definition_path, definition, "must be an object"))
            continue
        json_patches = errors.sequence(definition, "jsonPatches", definition_path)
        for k, json_patch in enumerate(json_patches or []):
            _json_patch_errors(json_patch, variables, fe.index(fe.child(definition_path, "jsonPatches"), k), errors)
        _selector_errors(definition, cc, definition_path, errors)

    external = errors.mapping(patch, "external", path)
    if external is not None:
        external_path = fe.child(path, "external")
        if not gates.runtime_sdk:
            errors.append(
                fe.forbidden(external_path, "patch.external can be used only if the RuntimeSDK feature flag is enabled")
            )
        for key in ("generateExtension", "validateExtension", "discoverVariablesExtension"):
            errors.string(external, key, external_path)
        if external.get("validateExtension") is None and external.get("generateExtension") is None:
            errors.append(
                fe.invalid(
                    external_path, dict(external), "one of validateExtension and generateExtension must be defined"
                )
            )
        settings = errors.mapping(external, "settings", external_path)
        for key, value in (settings or {}).items():
            if not isinstance(value, str):
                errors.append(
                    fe.type_invalid(fe.key(fe.child(external_path, "settings"), str(key)), value, "must be a string")
                )


# --- JSON patches ---------------------------------------------------------------------------------------


def _go_atoi(segment: str) -> int | None:
    """Go's ``strconv.Atoi``: an optionally signed decimal that fits in 64 bits, else None."""
    if not _ATOI.match(segment):
        return None
    number = int(segment)
    return number if -_INT64_MAX - 1 <= number <= _INT64_MAX else None


_ADD_INDEX = 'arrays can only be accessed using "0" (prepend) or "-" (append)'


def _index_errors(op: str, json_path: str, path: str) -> list[FieldError]:
    """Array indices in a patch path: ``add`` may only prepend (``0``) or append (``-``); ``replace``
    and ``remove`` may not address array elements at all (every numeric segment counts)."""
    errors: list[FieldError] = []
    for segment in json_path.split("/"):
        index = _go_atoi(segment)
        if index is None:
            continue
        if op == "add" and index != 0:
            errors.append(
                fe.invalid(path, json_path, 'arrays can only be accessed using "0" (prepend) or "-" (append)')
            )
        if op in ("replace", "remove"):
            errors.append(fe.invalid(path, json_path, f"elements in arrays can not be accessed in a {op} operation"))
    return errors


def is_json(value: Any) -> bool:
    """Whether ``value`` is a decoded JSON document (finite numbers, string keys); never recurses."""
    stack = [value]
    while stack:
        current = stack.pop()
        if current is None or isinstance(current, bool | int | str):
            continue
        if isinstance(current, float):
            if current != current or current in (float("inf"), float("-inf")):
                return False
            continue
        if isinstance(current, list):
            stack.extend(current)
            continue
        if isinstance(current, dict):
            if not all(isinstance(k, str) for k in current):
                return False
            stack.extend(current.values())
            continue
        return False
    return True


def variable_name(variable: str) -> str:
    """The top-level name of a ``valueFrom.variable`` path: the text before the first ``.`` or ``[``
    (empty fields skipped, as Go's ``strings.FieldsFunc`` does)."""
    for field in re.split(r"[.\[]", variable):
        if field:
            return field
    return ""


def _json_patch_errors(json_patch: Any, variables: set[str], path: str, errors: _Errors) -> None:
    if not isinstance(json_patch, Mapping):
        errors.append(fe.type_invalid(path, json_patch, "must be an object"))
        return
    shown = dict(json_patch)
    op = errors.text(json_patch, "op", path)
    if op is not None and op not in VALID_OPS:
        errors.append(fe.not_supported(fe.child(path, "op"), shown, list(VALID_OPS)))
    json_path = errors.text(json_patch, "path", path)
    if json_path is not None:
        if not json_path.startswith("/spec/"):
            errors.append(fe.invalid(fe.child(path, "path"), shown, 'jsonPatch path must start with "/spec/"'))
        errors.extend(_index_errors(op or "", json_path, fe.child(path, "path")))
    if op in ("add", "replace"):
        _value_errors(json_patch, variables, path, errors)


def _value_errors(json_patch: Mapping[str, Any], variables: set[str], path: str, errors: _Errors) -> None:
    value, value_from = json_patch.get("value"), json_patch.get("valueFrom")
    if value is None and value_from is None:
        errors.append(fe.invalid(path, dict(json_patch), "jsonPatch must define one of value or valueFrom"))
    if value is not None and value_from is not None:
        errors.append(fe.invalid(path, dict(json_patch), "jsonPatch can not define both value and valueFrom"))
    if value is not None and not is_json(value):
        errors.append(fe.invalid(fe.child(path, "value"), value, "jsonPatch Value is invalid JSON"))
    value_from = errors.mapping(json_patch, "valueFrom", path)
    if value_from is None:
        return
    value_from_path = fe.child(path, "valueFrom")
    template, variable = value_from.get("template"), value_from.get("variable")
    if template is None and variable is None:
        errors.append(fe.invalid(value_from_path, dict(value_from), "valueFrom must set either template or variable"))
    if template is not None and variable is not None:
        errors.append(fe.invalid(value_from_path, dict(value_from), "valueFrom can not set both template and variable"))
    template = errors.string(value_from, "template", value_from_path)
    if template is not None:
        errors.extend(_template_errors(template, fe.child(value_from_path, "template")))
    variable = errors.string(value_from, "variable", value_from_path)
    if variable is not None:
        variable_path = fe.child(value_from_path, "variable")
        if variable.startswith("builtin."):
            if variable not in BUILTIN_VARIABLES:
                errors.append(fe.invalid(variable_path, variable, "not a defined builtin variable"))
        elif variable_name(variable) not in variables:
            errors.append(fe.invalid(variable_path, variable, f"variable with name {variable} cannot be found"))


# --- selectors ----------------------------------------------------------------------------------------


def _ref(holder: Any, *path: str) -> Mapping[str, Any] | None:
    current = holder
    for step in path:
        if not isinstance(current, Mapping):
            return None
        current = current.get(step)
    return current if isinstance(current, Mapping) else None


def _selector_matches(selector: Mapping[str, Any], ref: Mapping[str, Any] | None) -> bool:
    """A selector targets a template by exact apiVersion and kind."""
    return ref is not None and (
        text(selector.get("kind")) == text(ref.get("kind"))
        and text(selector.get("apiVersion")) == text(ref.get("apiVersion"))
    )


def _names_of(errors: _Errors, match: Mapping[str, Any], key: str, path: str) -> list[Any] | None:
    """``matchResources.<key>.names``: None when the class selector is unset."""
    worker_match = errors.mapping(match, key, path)
    if worker_match is None:
        return None
    return errors.sequence(worker_match, "names", fe.child(path, key)) or []


def _selector_errors(definition: Mapping[str, Any], cc: Any, definition_path: str, errors: _Errors) -> None:
    path = fe.child(definition_path, "selector")
    selector = errors.mapping(definition, "selector", definition_path)
    selector = selector if selector is not None else {}
    errors.string(selector, "apiVersion", path)
    errors.string(selector, "kind", path)
    match = errors.mapping(selector, "matchResources", path)
    match = match if match is not None else {}
    match_path = fe.child(path, "matchResources")
    infrastructure_cluster = errors.boolean(match, "infrastructureCluster", match_path)
    control_plane = errors.boolean(match, "controlPlane", match_path)
    worker_names = {kind: _names_of(errors, match, _MATCH_KEYS[kind], match_path) for kind in _MATCH_KEYS}
    if not (infrastructure_cluster or control_plane or any(worker_names.values())):
        errors.append(fe.invalid(path, dict(selector), "no selector enabled"))
        return

    spec = _spec(cc)
    if infrastructure_cluster and not _selector_matches(selector, _ref(spec, "infrastructure", "ref")):
        errors.append(
            fe.invalid(
                fe.child(match_path, "infrastructureCluster"),
                True,
                "selector is enabled but does not match the infrastructure ref",
            )
        )
    if control_plane and not (
        _selector_matches(selector, _ref(spec, "controlPlane", "ref"))
        or _selector_matches(selector, _ref(spec, "controlPlane", "machineInfrastructure", "ref"))
    ):
        errors.append(
            fe.invalid(
                fe.child(match_path, "controlPlane"),
                True,
                "selector is enabled but matches neither the controlPlane ref nor the controlPlane "
                "machineInfrastructure ref",
            )
        )
    for kind, names in worker_names.items():
        if names:
            names_path = fe.child(fe.child(match_path, _MATCH_KEYS[kind]), "names")
            errors.extend(_class_names_errors(selector, names, cc, kind, names_path))


_MATCH_KEYS = {MACHINE_DEPLOYMENT: "machineDeploymentClass", MACHINE_POOL: "machinePoolClass"}


def name_pattern_error(name: str) -> str | None:
    """Why a class-name pattern is malformed: at most one ``*``, only first or last, and with ``*``
    read as a letter it must be a qualified name. Names without ``*`` are not checked."""
    if "*" not in name:
        return None
    if name.count("*") > 1:
        return 'selector can at most contain a single "*" rune'
    if not (name.startswith("*") or name.endswith("*")):
        return '"*" rune can only appear at the beginning, or ending of the selector'
    if qualified_name_errors(name.replace("*", "a")):
        return "selector does not comply with the Kubernetes naming standards"
    return None


def _class_names_errors(
    selector: Mapping[str, Any], names: list[Any], cc: Any, kind: WorkerKind, path: str
) -> list[FieldError]:
    """Each name must pick a class of ``kind`` whose bootstrap or infrastructure template the selector
    targets. A malformed pattern is reported and ends the check of this list, as upstream does."""
    errors: list[FieldError] = []
    classes = worker_class_entries(cc if isinstance(cc, Mapping) else {}, kind)
    for k, name in enumerate(names):
        name_path = fe.index(path, k)
        if not isinstance(name, str):
            errors.append(fe.type_invalid(name_path, name, "must be a string"))
            continue
        problem = name_pattern_error(name)
        if problem is not None:
            errors.append(fe.invalid(name_path, name, problem))
            break
        matched = any(
            class_name_matches(text(worker_class.get("class")), [name])
            and (
                _selector_matches(selector, _ref(worker_class, "template", "infrastructure", "ref"))
                or _selector_matches(selector, _ref(worker_class, "template", "bootstrap", "ref"))
            )
            for _, worker_class in classes
        )
        if not matched:
            errors.append(
                fe.invalid(
                    name_path,
                    name,
                    f"selector is enabled but matches neither the bootstrap ref nor the infrastructure ref of a "
                    f"{kind.noun} class",
                )
            )
    return errors
