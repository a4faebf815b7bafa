"""The Dockerfile installs as the README says: Python 3.11, pip with constraints.txt, the clusterclass entry point."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_the_image_installs_the_way_the_readme_does() -> None:
    dockerfile = (REPO / "Dockerfile").read_text()
    readme = (REPO / "README.md").read_text()
    install = re.search(r"## Install\n(.*?)\n## ", readme, re.S)
    assert install is not None
    assert "python3.11 -m venv" in install.group(1) and "pip install -c constraints.txt" in install.group(1)
    assert re.findall(r"^FROM python:3\.11-slim", dockerfile, re.M)
    assert "python3.11 -m venv /opt/clusterclass" in dockerfile
    assert "pip install --no-cache-dir --disable-pip-version-check -c constraints.txt ." in dockerfile
    assert 'ENTRYPOINT ["/opt/clusterclass/bin/clusterclass"]' in dockerfile
    assert "USER 65532:65532" in dockerfile  # the Deployment's runAsUser


def test_what_the_image_copies_is_enough_to_build_the_wheel(tmp_path: Path) -> None:
    """The COPY lines of the build stage into an empty directory, then the wheel build the RUN line does."""
    dockerfile = (REPO / "Dockerfile").read_text()
    build_stage = dockerfile.split("\nFROM ")[1]
    for line in re.findall(r"^COPY (?!--)(.+)$", build_stage, re.M):
        *sources, target = line.split()
        for source in sources:
            path = REPO / source
            into_directory = target.endswith("/") or len(sources) > 1
            destination = tmp_path / target / path.name if into_directory else tmp_path / target
            destination.parent.mkdir(parents=True, exist_ok=True)
            if path.is_dir():
                shutil.copytree(path, destination)
            else:
                shutil.copyfile(path, destination)
    built = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "-q", "-w", "dist", "."],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert built.returncode == 0, built.stderr
    (wheel,) = (tmp_path / "dist").glob("clusterclass-*.whl")
    import zipfile

    names = zipfile.ZipFile(wheel).namelist()
    assert "clusterclass/crds/cluster.x-k8s.io_clusters.yaml" in names
    assert "clusterclass/examples/quick-start.yaml" in names
