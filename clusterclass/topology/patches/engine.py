"""The inline patch engine (spec §5.1): run a ClusterClass's patches, in order, over the desired state.

For each patch the variables are computed afresh (§5.3): the Cluster's variables that belong to this
patch, plus ``builtin``, plus for a worker's templates that worker's overrides and builtin. Each of
the patch's definitions selects items (``selector``), ``enabledIf`` is evaluated per item, and the
JSON patch operations are computed (``values``) and applied to the item's template, so later
patches see earlier results. Once every patch has run, the patched template specs are written back
into the desired objects (``request.write_back``).

A failing patch fails the whole computation with one message naming the patch, the definition, the
operation, its path and the item, and a field path into the ClusterClass.
"""

from __future__ import annotations

import copy
import re

import jsonpatch
import jsonpointer

from clusterclass.api.objects import Obj
from clusterclass.errors import ObjectKey, TopologyError
from clusterclass.topology import builtins
from clusterclass.topology.blueprint import Blueprint
from clusterclass.topology.desired import DesiredState
from clusterclass.topology.patches import selector
from clusterclass.topology.patches.request import Item, build_items, write_back
from clusterclass.topology.patches.values import PatchValueError, Variables, is_enabled, operation_value, template_data
from clusterclass.topology.variables import variable_definitions, variables_for_patch

INLINE = "inline"


def _concise(err: Exception) -> str:
    """The JSON patch library's message without the whole document it quotes ("... not found in {...}")."""
    return re.sub(r" in [\[{].*\Z", "", str(err), flags=re.S)


class InlinePatchEngine:
    """A :class:`~clusterclass.topology.patches.PatchEngine` for inline (``definitions``) patches."""

    def apply(self, blueprint: Blueprint, desired: DesiredState) -> None:
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
        for index, patch in enumerate(patches):
            name = str(patch.get("name") or "")
            field = f"spec.patches[{index}]"
            definitions = patch.get("definitions")
            external = patch.get("external")
            if isinstance(definitions, list) and definitions:
                definition_from = INLINE
            elif isinstance(external, dict):
                if not external.get("generateExtension"):
                    continue  # a validate-only external patch generates nothing (see DECISIONS.md)
                raise TopologyError(
                    f'can not use external patch "{name}": the Runtime SDK is not available yet',
                    obj=cc_key,
                    field=f"{field}.external",
                )
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
        write_back(items, originals)

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
