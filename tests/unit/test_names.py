"""Names of generated objects (spec §2.8)."""

from __future__ import annotations

import random
import re
from typing import Any

import pytest

from clusterclass.topology import names

RANDOM = "[bcdfghjklmnpqrstvwxz2456789]{5}"


def test_alphabet_is_kubernetes_name_generator_alphabet() -> None:
    assert names.ALPHABET == "bcdfghjklmnpqrstvwxz2456789"


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        ("cluster1-mp-0-", "cluster1-mp-0-" + RANDOM),
        ("", RANDOM),
        ("p" * 58, "p" * 58 + RANDOM),
        ("p" * 70, "p" * 58 + RANDOM),
    ],
)
def test_simple_name_is_prefix_capped_at_58_plus_5_random(prefix: str, expected: str) -> None:
    assert re.fullmatch(expected, names.simple_name(prefix, random.Random(0)))


@pytest.mark.parametrize(
    ("helper", "args", "expected"),
    [
        (names.worker_object_prefix, ("c1", "mp-0"), "c1-mp-0-"),
        (names.control_plane_machine_template_prefix, ("c1",), "c1-"),
        (names.infrastructure_cluster_prefix, ("c1",), "c1-"),
    ],
)
def test_name_prefixes(helper: Any, args: tuple[str, ...], expected: str) -> None:
    assert helper(*args) == expected


@pytest.mark.parametrize(
    ("template", "values", "expected"),
    [
        ("{{ .cluster.name }}-{{ .random }}", {"cluster": {"name": "c1"}}, "c1-" + RANDOM),
        ("{{ .cluster.name }}-{{ .machinePool.topologyName }}", {"cluster": {"name": "c1"}, "machinePool": {"topologyName": "mp"}}, "c1-mp"),  # noqa: E501
        ("x" * 63, {}, "x" * 63),
        ("x" * 64, {}, "x" * 58 + RANDOM),
        ("{{ .random }}" + "y" * 70, {}, RANDOM + "y" * 53 + RANDOM),
    ],
)  # fmt: skip
def test_strategy_name(template: str, values: dict[str, Any], expected: str) -> None:
    assert re.fullmatch(expected, names.strategy_name(template, values, random.Random(0)))


@pytest.mark.parametrize("template", ["{{ .cluster.nope }}", "{{ .machinePool.topologyName }}", "{{ .cluster.name"])
def test_strategy_name_errors(template: str) -> None:
    with pytest.raises(names.NamingError):
        names.strategy_name(template, {"cluster": {"name": "c1"}}, random.Random(0))


def test_names_depend_only_on_the_random_generator() -> None:
    assert names.simple_name("p-", random.Random(3)) == names.simple_name("p-", random.Random(3))
    assert names.random_suffix(random.Random(3)) != names.random_suffix(random.Random(4))
