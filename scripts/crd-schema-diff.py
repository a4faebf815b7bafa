#!/usr/bin/env python3
"""Print the field paths only one API version of a CRD has (v1beta1 vs v1beta2), and the paths whose type differs:
the worklist a conversion must account for.

    scripts/crd-schema-diff.py config/crd/bases/<file>.yaml...
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import yaml


def paths(schema: dict[str, Any], prefix: str = "") -> dict[str, Any]:
    """Every field path of ``schema`` (``[]`` for list items, ``{}`` for map values) with its type."""
    found: dict[str, Any] = {}
    for name, sub in (schema.get("properties") or {}).items():
        path = f"{prefix}.{name}" if prefix else name
        found[path] = sub.get("type")
        found.update(paths(sub, path))
    if schema.get("type") == "array" and "items" in schema:
        found.update(paths(schema["items"], prefix + "[]"))
    if isinstance(schema.get("additionalProperties"), dict):
        found.update(paths(schema["additionalProperties"], prefix + "{}"))
    return found


def report(crd: dict[str, Any]) -> None:
    versions = {v["name"]: paths(v["schema"]["openAPIV3Schema"]) for v in crd["spec"]["versions"]}
    print("=====", crd["spec"]["names"]["kind"])
    if "v1beta1" not in versions or "v1beta2" not in versions:
        print("  versions:", ", ".join(versions))
        return
    old, new = versions["v1beta1"], versions["v1beta2"]
    for path in sorted(set(old) - set(new)):
        if not path.startswith("metadata"):
            print("  -", path, old[path])
    for path in sorted(set(new) - set(old)):
        if not path.startswith("metadata"):
            print("  +", path, new[path])
    for path in sorted(set(old) & set(new)):
        if old[path] != new[path]:
            print("  ~", path, old[path], "->", new[path])


if __name__ == "__main__":
    for name in sys.argv[1:]:
        report(yaml.safe_load(Path(name).read_text()))
