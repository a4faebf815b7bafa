"""The patch engine (spec §5.1): run a ClusterClass's patches, in order, over the desired state.

For each patch the variables are computed afresh (§5.3): the Cluster's variables that belong to this
patch, plus ``builtin``, plus for a worker's templates that worker's overrides and builtin. Each of
the patch's definitions selects items (``selector``), ``enabledIf`` is evaluated per item, and the
JSON patch operations are computed (``values``) and applied to the item's template, so later
patches see earlier results. Once every patch has run, the patched template specs are written back
into the desired objects (``request.write_back``).

An external patch sends the same items to its ``generateExtension`` and applies the answer
(:mod:`~clusterclass.topology.patches.external`); every ``validateExtension`` is asked once all patches ran.

A failing patch fails the whole computation with one message naming the patch, the definition, the
operation, its path and the item, and a field path into the ClusterClass.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass
from typing import Any

import jsonpatch
import jsonpointer

from clusterclass.api.objects import Obj
from clusterclass.errors import ObjectKey, TopologyError
from clusterclass.topology import builtins
from clusterclass.topology.blueprint import Blueprint
from clusterclass.topology.desired import DesiredState
from clusterclass.topology.patches import selector
from clusterclass.topology.patches.external import (
    GENERATE_PATCHES,
    VALIDATE_TOPOLOGY,
    ExtensionCallFailed,
    ExtensionCalls,
    PatchResponseError,
    apply_response,
    generate_request,
    validate_request,
)
from clusterclass.topology.patches.request import Item, build_items, write_back
from clusterclass.topology.patches.values import PatchValueError, Variables, is_enabled, operation_value, template_data
from clusterclass.topology.variables import variable_definitions, variables_for_patch

INLINE = "inline"


@dataclass
class _ExternalVariables:
    """An external patch's variables: the request's (this patch's Cluster variables and ``builtin.cluster``) and
    each item's (its worker's overrides for this patch and its own builtin: ``controlPlane``, ``machinePool``...)."""

    global_values: dict[str, Any]
    item_values: list[dict[str, Any]]

    @classmethod
    def of(
        cls,
        items: list[Item],
        blueprint: Blueprint,
        definitions: Any,
        patch_name: str,
        global_builtin: dict[str, Any],
    ) -> _ExternalVariables:
        global_values: dict[str, Any] = dict(variables_for_patch(blueprint.topology.variables, definitions, patch_name))
        global_values["builtin"] = global_builtin
        item_values = []
        for item in items:
            values: dict[str, Any] = {}
            if item.worker is not None and item.worker.topology.variable_overrides:
                values.update(variables_for_patch(item.worker.topology.variable_overrides, definitions, patch_name))
            if item.builtin:
                values["builtin"] = item.builtin
            item_values.append(values)
        return cls(global_values, item_values)


@dataclass
class _Validation:
    """A patch's ``validateExtension``, called once every patch has run."""

    name: str
    field: str
    handler: str
    settings: dict[str, str] | None
    variables: _ExternalVariables


def _concise(err: Exception) -> str:
    """The JSON patch library's message without the whole document it quotes ("... not found in {...}")."""
    return re.sub(r" in [\[{].*\Z", "", str(err), flags=re.S)


class ClusterClassPatchEngine:
    """The :class:`~clusterclass.topology.patches.PatchEngine`: inline (``definitions``) patches, and external ones
    through ``extensions`` (:mod:`~clusterclass.topology.patches.external`; None: the Runtime SDK is off)."""

    def apply(self, blueprint: Blueprint, desired: DesiredState, extensions: ExtensionCalls | None = None) -> None:
        cc = blueprint.cluster_class
        patches = cc.patches
        if not patches:
            return
        cc_key = cc.key
        items = build_items(blueprint, desired)
        originals = [copy.deepcopy(item.template.get("spec")) for item in items]
        global_builtin = builtins.cluster_builtin(desired.cluster, blueprint.topology)
        # Builtins do not change between patches; templates only read them.
        item_builtins = [{**global_builtin, **item.builtin} for item in items]
        builtin_data = [template_data(b) for b in item_builtins]
        variable_defs = variable_definitions(cc.raw)
        validations: list[_Validation] = []
        for index, patch in enumerate(patches):
            name = str(patch.get("name") or "")
            field = f"spec.patches[{index}]"
            definitions = patch.get("definitions")
            external = patch.get("external")
            if isinstance(definitions, list) and definitions:
                definition_from = INLINE
            elif isinstance(external, dict) and (
                external.get("generateExtension") or external.get("validateExtension")
            ):
                if extensions is None:
                    raise TopologyError(
                        f'can not use external patch "{name}" if RuntimeSDK feature flag is disabled',
                        obj=cc_key,
                        field=f"{field}.external",
                    )
                variables = _ExternalVariables.of(items, blueprint, variable_defs, name, global_builtin)
                settings = external.get("settings") if isinstance(external.get("settings"), dict) else None
                generate = external.get("generateExtension")
                if isinstance(generate, str) and generate:
                    self._generate(extensions, name, field, generate, settings, items, variables, cc_key)
                validate = external.get("validateExtension")
                if isinstance(validate, str) and validate:
                    validations.append(_Validation(name, field, validate, settings, variables))
                continue
            else:
                raise TopologyError(f'failed to create patch generator for patch "{name}"', obj=cc_key, field=field)
            cluster_variables = variables_for_patch(blueprint.topology.variables, variable_defs, definition_from)
            for item, item_builtin, item_builtin_data in zip(items, item_builtins, builtin_data, strict=True):
                selected = [
                    (d_index, definition)
                    for d_index, definition in enumerate(definitions)
                    if isinstance(definition, dict) and selector.matches(definition.get("selector") or {}, item)
                ]
                if not selected:
                    continue
                values = dict(cluster_variables)
                if item.worker is not None and item.worker.topology.variable_overrides:
                    values.update(
                        variables_for_patch(item.worker.topology.variable_overrides, variable_defs, definition_from)
                    )
                values["builtin"] = item_builtin
                self._apply_definitions(
                    name, field, patch, selected, item, Variables(values, item_builtin_data), cc_key
                )
        for validation in validations:
            assert extensions is not None
            request = validate_request(items, validation.variables.global_values, validation.variables.item_values)
            try:
                extensions.call(VALIDATE_TOPOLOGY, validation.handler, request, validation.settings)
            except ExtensionCallFailed as err:
                raise TopologyError(
                    f'validation of patch "{validation.name}" failed: {err}', obj=cc_key, field=validation.field
                ) from err
        write_back(items, originals)

    @staticmethod
    def _generate(
        extensions: ExtensionCalls,
        name: str,
        field: str,
        handler: str,
        settings: dict[str, str] | None,
        items: list[Item],
        variables: _ExternalVariables,
        cc_key: ObjectKey,
    ) -> None:
        request = generate_request(items, variables.global_values, variables.item_values)
        try:
            response = extensions.call(GENERATE_PATCHES, handler, request, settings)
        except ExtensionCallFailed as err:
            raise TopologyError(
                f'failed to generate patches for patch "{name}": {err}', obj=cc_key, field=f"{field}.external"
            ) from err
        try:
            apply_response(items, response)
        except PatchResponseError as err:
            raise TopologyError(
                f'failed to apply patches for patch "{name}": {err}', obj=cc_key, field=f"{field}.external"
            ) from err

    def _apply_definitions(
        self,
        name: str,
        field: str,
        patch: Obj,
        selected: list[tuple[int, Obj]],
        item: Item,
        variables: Variables,
        cc_key: ObjectKey,
    ) -> None:
        """Apply the selected definitions of one patch to one item, if ``enabledIf`` allows."""
        try:
            if not is_enabled(patch.get("enabledIf"), variables):
                return
        except PatchValueError as err:
            raise TopologyError(
                f'failed to generate patches for patch "{name}": failed to evaluate enabledIf '
                f"for {item.description}: {err}",
                obj=cc_key,
                field=f"{field}.enabledIf",
            ) from err
        for d_index, definition in selected:
            for o_index, operation in enumerate(definition.get("jsonPatches") or []):
                o_field = f"{field}.definitions[{d_index}].jsonPatches[{o_index}]"
                op = operation.get("op") if isinstance(operation, dict) else None
                path = operation.get("path") if isinstance(operation, dict) else None
                what = (
                    f'patch "{name}" definitions[{d_index}] jsonPatches[{o_index}] ({op} {path}) for {item.description}'
                )
                if op not in ("add", "replace", "remove") or not isinstance(path, str):
                    raise TopologyError(
                        f"failed to generate patches for {what}: unsupported operation", obj=cc_key, field=o_field
                    )
                entry: Obj = {"op": op, "path": path}
                if op != "remove":
                    try:
                        entry["value"] = operation_value(operation, variables)
                    except PatchValueError as err:
                        raise TopologyError(
                            f"failed to generate patches for {what}: failed to calculate value: {err}",
                            obj=cc_key,
                            field=o_field,
                        ) from err
                # Only the spec of a patched template is kept (§5.7): an operation elsewhere is
                # applied to a throwaway copy, so it can fail like upstream's but changes nothing.
                target = item.template if path == "/spec" or path.startswith("/spec/") else copy.deepcopy(item.template)
                try:
                    jsonpatch.JsonPatch([entry]).apply(target, in_place=True)
                except (jsonpatch.JsonPatchException, jsonpointer.JsonPointerException) as err:
                    raise TopologyError(
                        f"failed to apply patches for {what}: {_concise(err)}", obj=cc_key, field=o_field
                    ) from err
