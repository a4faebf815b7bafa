"""Reading Kubernetes objects from YAML and JSON files, directories and standard input.

Every object remembers where it came from (file, document and line), so an error about an object
can name the file to fix. Multi-document YAML and ``kind: List`` (what ``kubectl get -o yaml``
prints) are both understood. Objects without a namespace get ``default``, as ``kubectl apply``
would place them, except for the few cluster-scoped kinds a plan may see.

An object given again replaces the one given before (``plan -f current/ -f change.yaml``), except a
Cluster: that is merged over the one before with a JSON merge patch (RFC 7386), as upstream's plan
merges an input Cluster over the stored one. Users write their Cluster files without the fields the
controllers set (``spec.infrastructureRef``, ``spec.controlPlaneRef``, status); merging keeps those, so
the plan shows only what the user changed, instead of a Cluster that was never reconciled. A Cluster given again
in another API version is converted to the version it was given in first before it is merged.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TextIO

import yaml

from clusterclass.api import constants as c
from clusterclass.api.conversion import ConversionError, convert
from clusterclass.api.merge_patch import merge_patch
from clusterclass.api.objects import Obj, key_of
from clusterclass.errors import InputError, ObjectKey
from clusterclass.topology.shapes import offline_contracts
from clusterclass.yamlio import SAFE_LOADER

CLUSTER_SCOPED_KINDS = frozenset(
    {"Namespace", "Node", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "PersistentVolume"}
)
DEFAULT_NAMESPACE = "default"
SUFFIXES = (".yaml", ".yml", ".json")


@dataclass(frozen=True)
class Source:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


@dataclass
class Loaded:
    """The objects read, in order, and where each object (by key) was last given."""

    objects: list[Obj]
    sources: dict[ObjectKey, Source]

    def add(self, obj: Obj, source: Source) -> None:
        """Take ``obj`` as given at ``source``: later objects win, a Cluster given again is merged over the last."""
        key = key_of(obj)
        if key in self.sources and key.group == c.CLUSTER_GROUP and key.kind == c.KIND_CLUSTER:
            previous = next(o for o in reversed(self.objects) if key_of(o) == key)
            if obj.get("apiVersion") != previous.get("apiVersion"):
                try:
                    obj = convert(obj, str(previous.get("apiVersion")), api_versions=offline_contracts(self.objects))
                except ConversionError as err:
                    raise InputError(str(source), f"{key}: {err}") from err
            obj = merge_patch(previous, obj)
        self.objects.append(obj)
        self.sources[key] = source


def _documents(text: str, name: str) -> Iterator[tuple[Any, int]]:
    """Each YAML document of ``text`` with the line it starts on."""
    loader = SAFE_LOADER(text)
    try:
        while loader.check_node():
            node = loader.get_node()
            yield loader.construct_document(node), node.start_mark.line + 1
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        where = f"line {mark.line + 1}, column {mark.column + 1}: " if mark else ""
        raise InputError(name, f"{where}could not parse YAML: {err.problem or err}") from err
    except yaml.YAMLError as err:
        raise InputError(name, f"could not parse YAML: {err}") from err
    finally:
        loader.dispose()


def _json_documents(text: str, name: str) -> Iterator[tuple[Any, int]]:
    try:
        yield json.loads(text), 1
    except json.JSONDecodeError as err:
        raise InputError(name, f"line {err.lineno}, column {err.colno}: could not parse JSON: {err.msg}") from err


def _check_object(doc: Any, name: str, line: int) -> Obj:
    where = f"document at line {line}"
    if not isinstance(doc, dict):
        raise InputError(name, f"{where}: expected a Kubernetes object (a mapping), got {type(doc).__name__}")
    for field in ("apiVersion", "kind"):
        if not isinstance(doc.get(field), str) or not doc[field]:
            raise InputError(name, f"{where}: {field} must be a non-empty string")
    metadata = doc.get("metadata")
    if not isinstance(metadata, dict) or not isinstance(metadata.get("name"), str) or not metadata["name"]:
        raise InputError(name, f"{where}: {doc['kind']}: metadata.name must be a non-empty string")
    if metadata.get("namespace") is not None and not isinstance(metadata["namespace"], str):
        raise InputError(name, f"{where}: {doc['kind']} {metadata['name']}: metadata.namespace must be a string")
    if not metadata.get("namespace") and doc["kind"] not in CLUSTER_SCOPED_KINDS:
        metadata["namespace"] = DEFAULT_NAMESPACE
    return doc


def parse_text(text: str, name: str) -> Iterator[tuple[Obj, int]]:
    """The objects in one file's text, with the line each starts on."""
    documents = _json_documents(text, name) if name.endswith(".json") else _documents(text, name)
    for doc, line in documents:
        if doc is None:
            continue  # an empty document, e.g. a trailing '---'
        if isinstance(doc, dict) and isinstance(doc.get("kind"), str) and doc["kind"].endswith("List"):
            items = doc.get("items")
            if isinstance(items, list):
                for item in items:
                    yield _check_object(item, name, line), line
                continue
        yield _check_object(doc, name, line), line


def _files(path: str) -> list[Path]:
    p = Path(path)
    if p.is_dir():
        return sorted(f for f in p.rglob("*") if f.is_file() and f.suffix in SUFFIXES)
    if not p.exists():
        raise InputError(path, "no such file or directory")
    return [p]


def load(paths: Iterable[str], stdin: TextIO | None = None) -> Loaded:
    """Read every object from ``paths`` (``-`` is standard input); later objects win on key clashes
    (a Cluster given again is merged over the one before, see the module docstring)."""
    loaded = Loaded(objects=[], sources={})
    for path in paths:
        if path == "-":
            inputs = [("<stdin>", (stdin or sys.stdin).read())]
        else:
            inputs = []
            for file in _files(path):
                try:
                    inputs.append((str(file), file.read_text(encoding="utf-8")))
                except (OSError, UnicodeDecodeError) as err:
                    raise InputError(str(file), f"cannot read: {err}") from err
        for name, text in inputs:
            for obj, line in parse_text(text, name):
                loaded.add(obj, Source(name, line))
    return loaded
