"""Values of JSON patch operations and ``enabledIf`` (spec §5.5, §5.6).

A value is either literal (``value``), a variable (``valueFrom.variable``, a path such as
``builtin.machinePool.version`` or ``config.list[0].name``), or a Go template
(``valueFrom.template``) rendered with Sprig's hermetic functions over the item's variables. Template
data gets numbers as floats, as Go's JSON decoding gives them (so ``3`` prints as ``3`` and a
million as ``1e+06``), and the rendered text is parsed as YAML the way upstream's library (go-yaml v2
behind ``sigs.k8s.io/yaml``) reads it: ``kindest/node:v1.28.0`` is a string, ``3`` and ``1e+06`` numbers,
``yes``/``y`` booleans, ``2024-01-01`` and ``12:30`` strings, a YAML list a list, empty text ``null``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import yaml

from clusterclass.topology.gotemplate import RenderError, render_with_sprig
from clusterclass.yamlio import GO_YAML_LOADER


class PatchValueError(Exception):
    """A value that cannot be computed; the message says why."""


_SEGMENT = re.compile(r"^(?P<name>[^\[\]]+)(?:\[(?P<index>[^\]]*)\])?$")


class Variables:
    """The variables one item sees in one patch, and (computed once) their template form."""

    __slots__ = ("_builtin_data", "_data", "values")

    def __init__(self, values: dict[str, Any], builtin_data: Any = None) -> None:
        """``builtin_data``: ``values["builtin"]`` already in template form, when the caller has it."""
        self.values = values
        self._builtin_data = builtin_data
        self._data: Any = None

    @property
    def data(self) -> Any:
        if self._data is None:
            if self._builtin_data is None:
                self._data = template_data(self.values)
            else:
                self._data = {k: template_data(v) for k, v in self.values.items() if k != "builtin"}
                self._data["builtin"] = self._builtin_data
        return self._data


def template_data(value: Any) -> Any:
    """Variables as a Go template sees them after JSON decoding: every number a float."""
    if isinstance(value, bool) or value is None or isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dict):
        return {k: template_data(v) for k, v in value.items()}
    if isinstance(value, list):
        return [template_data(v) for v in value]
    return value


def lookup_variable(variables: dict[str, Any], path: str) -> Any:
    """The value at ``path`` (``name.field[2].other``) inside ``variables``."""
    segments = path.split(".")
    current: Any = variables
    for position, segment in enumerate(segments):
        match = _SEGMENT.match(segment)
        if match is None:
            raise PatchValueError(f'invalid variable path "{path}": bad segment "{segment}"')
        name = match["name"]
        if not isinstance(current, dict) or name not in current:
            if position == 0:
                raise PatchValueError(f'variable "{name}" does not exist')
            raise PatchValueError(f'variable "{path}" does not exist: "{name}" not found')
        current = current[name]
        if match["index"] is not None:
            index_text = match["index"]
            if not index_text.isdigit():
                raise PatchValueError(
                    f'invalid variable path "{path}": index "{index_text}" is not a non-negative integer'
                )
            if not isinstance(current, list):
                raise PatchValueError(f'invalid variable path "{path}": "{name}" is not an array')
            index = int(index_text)
            if index >= len(current):
                raise PatchValueError(
                    f'variable "{path}" does not exist: index {index} out of range (length {len(current)})'
                )
            current = current[index]
    return current


def render_template_value(template: str, variables: Variables) -> Any:
    """Render ``template`` over ``variables`` and parse the text as YAML."""
    try:
        text = render_with_sprig(template, variables.data)
    except RenderError as err:
        raise PatchValueError(f"failed to render template: {err}") from err
    try:
        return yaml.load(text, Loader=GO_YAML_LOADER) if text.strip() else None
    except yaml.YAMLError as err:
        raise PatchValueError(f"failed to parse rendered template as YAML: {err}") from err


def operation_value(operation: dict[str, Any], variables: Variables) -> Any:
    """The value of one ``add``/``replace`` operation."""
    has_value = "value" in operation and operation["value"] is not None
    value_from = operation.get("valueFrom")
    if has_value and value_from is not None:
        raise PatchValueError("both .value and .valueFrom are set")
    if has_value:
        return copy.deepcopy(operation["value"])
    if not isinstance(value_from, dict):
        raise PatchValueError("neither .value nor .valueFrom are set")
    variable, template = value_from.get("variable"), value_from.get("template")
    if variable is not None and template is not None:
        raise PatchValueError("both .valueFrom.variable and .valueFrom.template are set")
    if isinstance(variable, str) and variable:
        return copy.deepcopy(lookup_variable(variables.values, variable))
    if isinstance(template, str):
        return render_template_value(template, variables)
    raise PatchValueError("neither .valueFrom.variable nor .valueFrom.template are set")


def is_enabled(enabled_if: Any, variables: Variables) -> bool:
    """``enabledIf`` unset, or rendering to exactly the YAML value ``true`` (``""`` renders null: disabled)."""
    if enabled_if is None:
        return True
    return render_template_value(str(enabled_if), variables) is True
