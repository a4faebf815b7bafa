"""CustomResourceDefinitions for tests, as plain dicts: the envelope every test CRD shares, written once."""

from __future__ import annotations

from typing import Any

from clusterclass.api.objects import Obj
from clusterclass.apiserver.crd.definitions import API_VERSION, KIND


def make_crd(group: str, kind: str, versions: list[Obj], *, scope: str = "Namespaced", **names: Any) -> Obj:
    """A CRD for ``kind`` in ``group``, named ``<plural>.<group>``; ``names`` adds to (or overrides) the plural.

    The plural is the kind in lower case with an ``s``, as every test kind here spells it.
    """
    all_names = {"plural": kind.lower() + "s", "kind": kind, **names}
    return {
        "apiVersion": API_VERSION,
        "kind": KIND,
        "metadata": {"name": f"{all_names['plural']}.{group}"},
        "spec": {"group": group, "scope": scope, "names": all_names, "versions": versions},
    }


def crd_version(name: str, schema: Obj, *, storage: bool = True, **fields: Any) -> Obj:
    """One served version with ``schema`` as its ``openAPIV3Schema``; ``fields`` adds ``subresources`` and such."""
    return {"name": name, "served": True, "storage": storage, "schema": {"openAPIV3Schema": schema}, **fields}
