"""The conversion engine's rules about the structs a step leaves empty (``clusterclass.api.conversion.engine``).

A move removes the structs it empties below the common prefix of its source and destination (those only the
source version spells), never one both versions share; :class:`Empty` and :class:`OmitEmpty` steps say which
shared structs go. Go's typed conversion behaves the same way: a struct stays unless it is behind a nil
pointer or its field is ``omitempty``/``omitzero``.
"""

from __future__ import annotations

from typing import Any

import pytest

from clusterclass.api.conversion.engine import (
    Context,
    OmitEmpty,
    SpokeConversion,
    Step,
    common_prefix,
    empty,
    is_empty,
    move,
    omit_empty,
    parse_path,
    pop_at,
    under,
)
from clusterclass.api.conversion.transforms import omit_zero


class NoApiVersions:
    def api_version(self, group: str, kind: str) -> str:
        raise AssertionError("no reference is converted here")


CTX = Context("default", NoApiVersions())


def up(steps: list[Step], obj: dict[str, Any]) -> dict[str, Any]:
    return SpokeConversion("v1", tuple(steps), keeps_data=False).to_hub(obj, "g/v2", CTX)


def down(steps: list[Step], obj: dict[str, Any]) -> dict[str, Any]:
    return SpokeConversion("v1", tuple(steps), keeps_data=False).to_spoke(obj, "g/v1", CTX)


def test_pop_at_removes_nothing_above_the_field_by_default() -> None:
    obj: dict[str, Any] = {"spec": {"template": {"spec": {"providerID": ""}}}}
    assert pop_at(obj, ("spec", "template", "spec", "providerID")) == ""
    assert obj == {"spec": {"template": {"spec": {}}}}


def test_pop_at_keeps_the_first_steps_and_stops_at_a_list_item() -> None:
    obj: dict[str, Any] = {"status": {"v1beta2": {"conditions": []}}}
    pop_at(obj, ("status", "v1beta2", "conditions"), keep=1)
    assert obj == {"status": {}}
    items: dict[str, Any] = {"spec": {"items": [{"a": {"b": 1}}]}}
    pop_at(items, ("spec", "items", 0, "a", "b"), keep=0)
    assert items == {"spec": {"items": [{}]}}


def test_common_prefix() -> None:
    assert common_prefix(("status", "v1beta2", "conditions"), ("status", "conditions")) == 1
    assert common_prefix(("a", 0, "b"), ("a", 0, "b")) == 3
    assert common_prefix(("a",), ("b",)) == 0


def test_a_move_removes_an_emptied_struct_only_its_source_spells() -> None:
    steps: list[Step] = [move("status.v1beta2.conditions", "status.conditions")]
    assert up(steps, {"status": {"v1beta2": {"conditions": [1]}}})["status"] == {"conditions": [1]}
    # ``status`` is the common prefix: it stays, even empty
    assert up(steps, {"status": {"v1beta2": {"conditions": None}}, "spec": {}})["status"] == {"conditions": None}


def test_a_move_between_renamed_structs_removes_the_emptied_source() -> None:
    steps: list[Step] = under("spec.topology.controlPlane", [move("machineHealthCheck.x", "healthCheck.y")])
    hub = up(steps, {"spec": {"topology": {"controlPlane": {"machineHealthCheck": {"x": 1}}}}})
    assert hub["spec"] == {"topology": {"controlPlane": {"healthCheck": {"y": 1}}}}
    spoke = down(steps, hub)
    assert spoke["spec"] == {"topology": {"controlPlane": {"machineHealthCheck": {"x": 1}}}}


def test_a_same_path_omission_keeps_the_struct_that_held_the_field() -> None:
    steps: list[Step] = [omit_zero("spec.template.spec.providerID")]
    assert up(steps, {"spec": {"template": {"spec": {"providerID": ""}}}})["spec"] == {"template": {"spec": {}}}


def test_an_empty_step_side_may_be_missing() -> None:
    steps: list[Step] = [empty(None, "status.deprecated"), empty("status.v1beta2", None)]
    assert up(steps, {"status": {"v1beta2": {}, "deprecated": {}}})["status"] == {"deprecated": {}}
    assert down(steps, {"status": {"v1beta2": {}, "deprecated": {}}})["status"] == {"v1beta2": {}}
    assert under("spec", steps) == [empty(None, "spec.status.deprecated"), empty("spec.status.v1beta2", None)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        *((value, True) for value in (None, "", 0, 0.0, [], {})),
        *((value, False) for value in (False, "a", 1, [0], {"a": ""})),
    ],
)
def test_is_empty(value: Any, expected: bool) -> None:
    assert is_empty(value) is expected


def test_omit_empty_goes_innermost_first_and_only_up() -> None:
    steps = omit_empty("status", "spec.template.metadata", "status.observedGeneration")
    assert [step.path for step in steps] == [
        parse_path("spec.template.metadata"),
        parse_path("status.observedGeneration"),
        parse_path("status"),
    ]
    spoke = {"spec": {"template": {"metadata": {}, "spec": {}}}, "status": {"observedGeneration": 0}}
    assert up(list(steps), spoke) == {"apiVersion": "g/v2", "spec": {"template": {"spec": {}}}}
    # a valid hub has none; the way down leaves what there is alone
    assert down(list(steps), {"status": {}}) == {"apiVersion": "g/v1", "status": {}}


def test_omit_empty_looks_into_every_list_item() -> None:
    steps: list[Step] = list(omit_empty("spec.tokens[].groups"))
    hub = up(steps, {"spec": {"tokens": [{"groups": []}, {"groups": ["a"]}]}})
    assert hub["spec"] == {"tokens": [{}, {"groups": ["a"]}]}


def test_omit_empty_refuses_a_path_listed_twice() -> None:
    with pytest.raises(ValueError, match="listed twice"):
        omit_empty("status", "status")


def test_an_omitted_value_leaves_nothing_at_its_path() -> None:
    step = OmitEmpty(parse_path("spec.a"))
    obj: dict[str, Any] = {"spec": {"a": ""}}
    step.to_hub(obj, CTX)
    assert obj == {"spec": {}}
    assert step.path_to_hub(("spec", "a")) == ("spec", "a")
