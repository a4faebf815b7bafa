"""Variables discovered from Runtime Extensions (spec §7.2 step 1): one place for the ClusterClass controller and plan.

For every patch of a ClusterClass with ``external.discoverVariablesExtension``, the handler is asked (with the patch's
``settings``, in the ClusterClass's namespace) for the variables it defines; they become the ClusterClass's
``status.variables`` with ``from: <patch name>``. Errors are worded as upstream words them and collected across
patches (one error alone, several as Go prints an aggregate: ``[a, b]``).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from clusterclass.api.objects import Obj, namespace_of
from clusterclass.api.views import ClusterClass
from clusterclass.errors import ClusterClassError
from clusterclass.runtimesdk import catalog

#: calls one named handler: (hook, handler, request, namespace, settings) → the answer, Failures included
CallExtension = Callable[[str, str, Obj, str | None, Mapping[str, str] | None], Awaitable[Obj]]


class VariableDiscoveryError(ClusterClassError):
    """One or more patches' DiscoverVariables calls failed; the message lists them."""


async def discover_variables(call: CallExtension, cluster_class: Obj) -> dict[str, Sequence[Any]]:
    """The variables each external patch with a ``discoverVariablesExtension`` returns, by patch name."""
    discovered: dict[str, Sequence[Any]] = {}
    errors: list[str] = []
    for patch_name, external in ClusterClass(cluster_class).external_patches:
        handler = external.get("discoverVariablesExtension")
        if not isinstance(handler, str) or not handler:
            continue
        settings = external.get("settings") if isinstance(external.get("settings"), dict) else None
        try:
            answer = await call(catalog.DISCOVER_VARIABLES, handler, {}, namespace_of(cluster_class) or None, settings)
        except ClusterClassError as err:
            errors.append(f"failed to call DiscoverVariables for patch {patch_name}: {err}")
            continue
        if answer.get("status") != "Success":
            status, message = answer.get("status"), answer.get("message", "")
            errors.append(f'patch {patch_name} returned status "{status}" with message "{message}"')
            continue
        variables = answer.get("variables") or []
        names = [v.get("name") for v in variables if isinstance(v, dict)]
        repeated = sorted({n for n in names if isinstance(n, str) and names.count(n) > 1})
        if repeated:
            errors.extend(
                f'variable "{n}" is defined multiple times in variable discovery response from patch "{patch_name}"'
                for n in repeated
            )
            continue
        discovered[patch_name] = variables
    if errors:
        raise VariableDiscoveryError(errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
    return discovered
