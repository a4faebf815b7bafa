#!/usr/bin/env python3
"""Copy upstream Cluster API's CRDs (v1.14.0) into ``config/crd/bases``, as its release manifests carry them.

The files are upstream's ``config/crd/bases`` (core, kubeadm bootstrap and control plane, the Docker provider
from the ``test`` module) with the two contract labels upstream's kustomizations add to every CRD
(``cluster.x-k8s.io/v1beta1: v1beta1``, ``cluster.x-k8s.io/v1beta2: v1beta2``), which tell which API version of a
kind implements which Cluster API contract. Nothing else is changed. The Go module proxy serves the sources:

    python3 scripts/vendor-crds.py            # downloads sigs.k8s.io/cluster-api{,/test}@v1.14.0 with go
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

VERSION = "v1.14.0"
LABELS = {"cluster.x-k8s.io/v1beta1": "v1beta1", "cluster.x-k8s.io/v1beta2": "v1beta2"}
SOURCES = {
    "sigs.k8s.io/cluster-api": [
        "core/config/crd/bases",
        "bootstrap/kubeadm/config/crd/bases",
        "controlplane/kubeadm/config/crd/bases",
    ],
    "sigs.k8s.io/cluster-api/test": ["infrastructure/docker/config/crd/bases"],
}
BASES = Path(__file__).resolve().parent.parent / "config" / "crd" / "bases"


def module_dir(module: str) -> Path:
    out = subprocess.run(
        ["go", "mod", "download", "-json", f"{module}@{VERSION}"],
        check=True,
        capture_output=True,
        text=True,
        cwd="/tmp",
    ).stdout
    return Path(json.loads(out)["Dir"])


def with_labels(text: str) -> str:
    """The CRD text with the contract labels inserted under ``metadata:`` (the files have no labels)."""
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.rstrip() == "metadata:")
    if any(line.startswith("  labels:") for line in lines[at : at + 6]):
        raise SystemExit("a CRD already has labels; check the upstream files")
    block = ["  labels:\n"] + [f"    {k}: {v}\n" for k, v in LABELS.items()]
    return "".join(lines[: at + 1] + block + lines[at + 1 :])


def main() -> int:
    wanted = {path.name for path in BASES.glob("*.yaml")}
    found: dict[str, Path] = {}
    for module, folders in SOURCES.items():
        root = module_dir(module)
        for folder in folders:
            for path in (root / folder).glob("*.yaml"):
                if path.name in wanted:
                    found[path.name] = path
    missing = wanted - set(found)
    if missing:
        print("not found upstream:", ", ".join(sorted(missing)), file=sys.stderr)
        return 1
    for name, path in sorted(found.items()):
        (BASES / name).write_text(with_labels(path.read_text()))
        print(f"{name} <- {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
