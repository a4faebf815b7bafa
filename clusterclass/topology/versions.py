"""Kubernetes version strings: parsing and comparing them as semantic versions.

Cluster API parses versions "tolerantly" (a leading ``v`` is fine, missing minor/patch count as 0)
and, for control planes, treats a differing build metadata as a newer version
(``v1.28.0+vmware.2`` after ``v1.28.0+vmware.1``). Kubelets report versions with vendor build
suffixes, so comparing a Node's kubelet to a MachinePool's version ignores build metadata.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_SEMVER = re.compile(
    r"^v?(?P<major>0|[1-9]\d*)(?:\.(?P<minor>0|[1-9]\d*))?(?:\.(?P<patch>0|[1-9]\d*))?"
    r"(?:-(?P<pre>[0-9A-Za-z.-]+))?(?:\+(?P<build>[0-9A-Za-z.-]+))?$"
)


@dataclass(frozen=True)
class Version:
    major: int
    minor: int
    patch: int
    pre: tuple[str, ...]
    build: tuple[str, ...]


def parse(text: str) -> Version | None:
    """The version in ``text``, or None when it is not a semantic version."""
    match = _SEMVER.match(text.strip())
    if match is None:
        return None
    return Version(
        int(match["major"]),
        int(match["minor"] or 0),
        int(match["patch"] or 0),
        tuple(match["pre"].split(".")) if match["pre"] else (),
        tuple(match["build"].split(".")) if match["build"] else (),
    )


def _compare_identifiers(a: tuple[str, ...], b: tuple[str, ...]) -> int:
    for x, y in zip(a, b, strict=False):
        if x == y:
            continue
        if x.isdigit() and y.isdigit():
            return -1 if int(x) < int(y) else 1
        if x.isdigit():
            return -1
        if y.isdigit():
            return 1
        return -1 if x < y else 1
    return (len(a) > len(b)) - (len(a) < len(b))


def compare(a: Version, b: Version, *, with_build_tags: bool = False) -> int:
    """-1, 0 or 1, by semver precedence; with ``with_build_tags`` build metadata also orders."""
    core_a, core_b = (a.major, a.minor, a.patch), (b.major, b.minor, b.patch)
    if core_a != core_b:
        return -1 if core_a < core_b else 1
    if a.pre != b.pre:
        if not a.pre:
            return 1
        if not b.pre:
            return -1
        return _compare_identifiers(a.pre, b.pre)
    if with_build_tags and a.build != b.build:
        return _compare_identifiers(a.build, b.build)
    return 0


def same_ignoring_build(a: str, b: str) -> bool:
    """Whether two versions are the same release, ignoring build metadata.

    Falls back to exact comparison when either is not a semantic version.
    """
    parsed_a, parsed_b = parse(a), parse(b)
    if parsed_a is None or parsed_b is None:
        return a == b
    return compare(parsed_a, parsed_b) == 0


def is_newer_including_build(a: str, b: str) -> bool:
    """Whether ``a`` is a later version than ``b``, counting build metadata (control plane rule)."""
    parsed_a, parsed_b = parse(a), parse(b)
    if parsed_a is None or parsed_b is None:
        return False
    return compare(parsed_a, parsed_b, with_build_tags=True) > 0
