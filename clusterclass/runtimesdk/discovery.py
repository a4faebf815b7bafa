"""Variables discovered from Runtime Extensions (spec §7.2 step 1): one place for the ClusterClass controller and plan.

For every patch of a ClusterClass with ``external.discoverVariablesExtension``, the handler is asked (with the patch's
``settings``, in the ClusterClass's namespace) for the variables it defines; they become the ClusterClass's
``status.variables`` with ``from: <patch name>``. Errors are worded as upstream words them and collected across
patches (one error alone, several as Go prints an aggregate: ``[a, b]``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from clusterclass.api.objects import Obj, namespace_of
from clusterclass.api.views import ClusterClass
from clusterclass.errors import ClusterClassError
from clusterclass.runtimesdk import catalog
from clusterclass.runtimesdk.client import RuntimeClient


class VariableDiscoveryError(ClusterClassError):
    """One or more patches' DiscoverVariables calls failed; the message lists them."""


async def discover_variables(
    client: RuntimeClient, cluster_class: Obj, *, namespace_selectors: bool = True
) -> dict[str, Sequence[Any]]:
    """The variables each external patch with a ``discoverVariablesExtension`` returns, by patch name.

    ``namespace_selectors=False`` leaves ExtensionConfigs' namespace selectors unchecked, for ``plan``, which has
    no Namespaces to read.
    """
    namespace = (namespace_of(cluster_class) or None) if namespace_selectors else None
    discovered: dict[str, Sequence[Any]] = {}
    errors: list[str] = []
    for patch_name, external in ClusterClass(cluster_class).external_patches:
        handler = external.get("discoverVariablesExtension")
        if not isinstance(handler, str) or not handler:
            continue
        settings = external.get("settings") if isinstance(external.get("settings"), dict) else None
        try:
            answer = await client.call_extension(
                catalog.DISCOVER_VARIABLES, handler, {}, namespace=namespace, settings=settings, accept_failure=True
            )
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
