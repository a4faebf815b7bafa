"""The package layout is the architecture: each layer imports only the layers below it.

``../shared/design/ARCHITECTURE.md`` and the README's layout section name the direction of imports,
lowest first: the base modules and ``api``, then ``schema``, then ``topology``, then ``kube``, then the
embedded API server (``apiserver``) and the rest of the edges. This test reads every module's imports
with :mod:`ast` (including imports inside functions, which a lazy import would otherwise hide) and fails
on any import against that direction, naming the module and the import.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "clusterclass"

# The first component below ``clusterclass`` of every module, and what it may import besides itself.
BASE = {"errors", "fielderrors", "yamlio", "crds", "privatefiles"}
ALLOWED: dict[str, set[str]] = {
    "errors": set(),
    "crds": set(),  # the upstream CRDs as package data
    "fielderrors": {"errors"},
    "yamlio": set(),
    "privatefiles": set(),  # writing owner-only files
    "api": {"errors", "crds", "yamlio"},
    "schema": {"api", "errors", "fielderrors"},
    "topology": BASE | {"api", "schema"},
    "plan": BASE | {"api", "schema", "topology", "runtimesdk"},
    "validate": BASE | {"api", "schema", "topology", "plan"},
    "kube": BASE | {"api"},
    "apiserver": BASE | {"api", "schema", "kube"},
    "runtimesdk": BASE | {"api", "kube"},
    "examples": BASE | {"api", "kube", "runtimesdk"},
    "controllers": BASE | {"api", "schema", "topology", "kube", "runtimesdk"},
    "sim": BASE | {"api", "schema", "topology", "kube", "apiserver", "controllers"},
    "describe": BASE | {"api", "kube"},
    "webhooks": BASE | {"api", "schema", "topology", "kube", "controllers"},
    "run": BASE
    | {
        "api",
        "schema",
        "topology",
        "kube",
        "apiserver",
        "controllers",
        "sim",
        "webhooks",
        "describe",
        "up",
        "runtimesdk",
        "examples",
    },
}


def modules() -> Iterator[tuple[str, Path]]:
    for path in sorted(PACKAGE.rglob("*.py")):
        parts = path.relative_to(PACKAGE).with_suffix("").parts
        yield ".".join(("clusterclass", *parts)).removesuffix(".__init__"), path


LAYERS = {path.stem for path in PACKAGE.iterdir() if path.suffix == ".py" or (path / "__init__.py").exists()}


def layer(module: str) -> str | None:
    """``clusterclass.kube.informer`` → ``kube``; the package root (``__version__``) has no layer."""
    parts = module.split(".")
    if len(parts) > 1 and parts[0] == "clusterclass" and parts[1] in LAYERS - {"__init__"}:
        return parts[1]
    return None


def imported(path: Path) -> Iterator[tuple[int, str]]:
    """Every ``clusterclass`` module ``path`` imports, with its line (``from x import y`` gives x.y too)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield node.lineno, alias.name
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module
            for alias in node.names:
                yield node.lineno, f"{node.module}.{alias.name}"


def imports_by_layer() -> dict[str, set[str]]:
    seen: dict[str, set[str]] = {}
    for module, path in modules():
        source = layer(module)
        if source is None:
            continue
        for _, target in imported(path):
            target_layer = layer(target)
            if target_layer is not None and target_layer in ALLOWED | {"cli": set()}:
                seen.setdefault(source, set()).add(target_layer)
    return seen


@pytest.mark.parametrize("source", sorted(ALLOWED))
def test_a_layer_imports_only_the_layers_below_it(source: str) -> None:
    wrong = []
    for module, path in modules():
        if layer(module) != source:
            continue
        for line, target in imported(path):
            target_layer = layer(target)
            if target_layer is None or target_layer == source:
                continue
            if target_layer not in ALLOWED[source]:
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {module} imports {target}")
    assert not wrong, "imports against the layer direction:\n" + "\n".join(sorted(set(wrong)))


def test_the_pure_core_imports_neither_the_client_nor_the_api_server() -> None:
    assert not imports_by_layer()["topology"] & {"kube", "apiserver"}


def test_the_controllers_talk_to_any_api_server_only_through_the_client() -> None:
    assert "apiserver" not in imports_by_layer()["controllers"]


def test_kube_imports_neither_topology_nor_the_api_server() -> None:
    assert not imports_by_layer()["kube"] & {"topology", "apiserver"}


def test_topology_and_the_api_server_share_the_one_schema_package() -> None:
    layers = imports_by_layer()
    assert "schema" in layers["topology"]
    assert "schema" in layers["apiserver"]
    assert "topology" not in layers["apiserver"]


def test_every_layer_is_known() -> None:
    """A new package must say where it sits, so this test keeps covering the whole tree."""
    known = set(ALLOWED) | {"cli"}
    found = {layer(module) for module, _ in modules()} - {None}
    assert found <= known, f"packages without a place in the layer table: {sorted(found - known)}"
