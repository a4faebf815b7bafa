"""Kubernetes versions: parsing, semver precedence, build metadata (spec §4.3, §4.4)."""

from __future__ import annotations

import pytest

from clusterclass.topology import versions


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("v1.2.3", versions.Version(1, 2, 3, (), ())),
        ("1.2.3", versions.Version(1, 2, 3, (), ())),
        ("v1.2", versions.Version(1, 2, 0, (), ())),
        ("v1", versions.Version(1, 0, 0, (), ())),
        ("v1.28.0-rc.1+vmware.2", versions.Version(1, 28, 0, ("rc", "1"), ("vmware", "2"))),
        ("v1.28.0+vmware.1", versions.Version(1, 28, 0, (), ("vmware", "1"))),
        ("", None),
        ("latest", None),
        ("v1.2.3.4", None),
        ("v01.2.3", None),
        ("v1.2.3+", None),
    ],
)
def test_parse(text: str, expected: versions.Version | None) -> None:
    assert versions.parse(text) == expected


@pytest.mark.parametrize(
    ("a", "b", "with_build_tags", "expected"),
    [
        ("v1.2.3", "v1.2.4", False, -1),
        ("v1.3.0", "v1.2.9", False, 1),
        ("v2.0.0", "v1.99.99", False, 1),
        ("v1.2.3", "v1.2.3", False, 0),
        ("v1.2.3-rc.1", "v1.2.3", False, -1),
        ("v1.2.3-rc.2", "v1.2.3-rc.10", False, -1),
        ("v1.2.3-alpha", "v1.2.3-beta", False, -1),
        ("v1.2.3-1", "v1.2.3-alpha", False, -1),
        ("v1.2.3-alpha", "v1.2.3-alpha.1", False, -1),
        ("v1.2.3+build.2", "v1.2.3+build.1", False, 0),
        ("v1.2.3+build.2", "v1.2.3+build.1", True, 1),
        ("v1.2.3+build.9", "v1.2.3+build.10", True, -1),
        ("v1.2.3+build.1", "v1.2.3", True, 1),
        ("v1.2.3", "v1.2.3+build.1", True, -1),
        ("v1.2.3+build.1", "v1.2.3+build.1", True, 0),
        ("v1.2.4", "v1.2.3+build.9", True, 1),
    ],
)
def test_compare(a: str, b: str, with_build_tags: bool, expected: int) -> None:
    parsed_a, parsed_b = versions.parse(a), versions.parse(b)
    assert parsed_a is not None and parsed_b is not None
    assert versions.compare(parsed_a, parsed_b, with_build_tags=with_build_tags) == expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("v1.28.0+vmware.1", "v1.28.0", True),
        ("v1.28.0", "v1.28.0", True),
        ("v1.28.0", "v1.28.1", False),
        ("v1.28.0-rc.1", "v1.28.0", False),
        ("not-a-version", "not-a-version", True),
        ("not-a-version", "v1.28.0", False),
    ],
)
def test_same_ignoring_build(a: str, b: str, expected: bool) -> None:
    assert versions.same_ignoring_build(a, b) is expected


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        ("v1.2.3", "v1.2.2", True),
        ("v1.2.3", "v1.2.3", False),
        ("v1.2.2", "v1.2.3", False),
        ("v1.2.3+b.2", "v1.2.3+b.1", True),
        ("v1.2.3", "not-a-version", False),
    ],
)
def test_is_newer_including_build(a: str, b: str, expected: bool) -> None:
    assert versions.is_newer_including_build(a, b) is expected
