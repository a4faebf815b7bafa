"""Field path sets in kube-apiserver's fieldsV1 form: encoding, kube's ordering, and the set algebra."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from clusterclass.apiserver.apply.fieldpaths import (
    FieldSet,
    element_order,
    go_value_string,
    key_element,
    path_string,
    raw_difference,
    raw_equal,
    raw_intersection,
    raw_owns_any,
    raw_within,
    value_element,
)
from clusterclass.kube.gotext import go_json, go_quote

SPEC_ITEMS = ("f:spec", "f:items")


def test_fields_v1_round_trips_with_owned_nodes_marked_by_a_dot() -> None:
    raw = {
        "f:metadata": {"f:labels": {".": {}, "f:app": {}}},
        "f:spec": {"f:items": {'k:{"name":"a"}': {".": {}, "f:name": {}}}, "f:replicas": {}},
    }
    fields = FieldSet.from_fields_v1(raw)
    assert fields.to_fields_v1() == raw
    assert fields.has(("f:metadata", "f:labels"))
    assert not fields.has(("f:metadata",))
    assert fields.has((*SPEC_ITEMS, 'k:{"name":"a"}', "f:name"))
    assert FieldSet.from_fields_v1({}).empty()


@pytest.mark.parametrize(
    "raw", [[], {"f:x": []}, {"x": {}}, {"q:x": {}}], ids=["not-an-object", "not-a-node", "no-kind", "bad-kind"]
)
def test_malformed_fields_v1_is_refused(raw: object) -> None:
    with pytest.raises(ValueError, match="fieldsV1"):
        FieldSet.from_fields_v1(raw)


def test_encoding_orders_the_dot_then_fields_then_keys_then_values() -> None:
    fields = FieldSet.of(
        ("f:b",), ("f:a",), ("v:10",), ("v:9",), ('v:"x"',), ("v:true",), ('k:{"port":443}',), ('k:{"port":80}',)
    )
    fields.insert(("f:a", "f:z"))
    encoded = fields.to_fields_v1()
    assert list(encoded) == ["f:a", "f:b", 'k:{"port":80}', 'k:{"port":443}', "v:9", "v:10", 'v:"x"', "v:true"]
    assert list(encoded["f:a"]) == [".", "f:z"]


def test_paths_iterate_in_kubes_order_owned_elements_before_deeper_ones() -> None:
    fields = FieldSet.of(
        ("f:spec", "f:replicas"),
        ("f:spec", "f:blob", "f:x", "f:y"),
        ("f:spec", "f:alist"),
        (*SPEC_ITEMS, 'k:{"name":"b"}', "f:value"),
    )
    assert [path_string(p) for p in fields.paths()] == [
        ".spec.alist",
        ".spec.replicas",
        ".spec.blob.x.y",
        '.spec.items[name="b"].value',
    ]


def test_set_algebra() -> None:
    a = FieldSet.of(("f:spec", "f:x"), ("f:spec", "f:y"), ("f:status",))
    b = FieldSet.of(("f:spec", "f:y"), ("f:spec", "f:z"))
    assert a.union(b) == FieldSet.of(("f:spec", "f:x"), ("f:spec", "f:y"), ("f:spec", "f:z"), ("f:status",))
    assert a.intersection(b) == FieldSet.of(("f:spec", "f:y"))
    assert a.difference(b) == FieldSet.of(("f:spec", "f:x"), ("f:status",))
    assert FieldSet.of(("f:spec", "f:x")).issubset(a)
    assert not b.issubset(a)


def test_difference_takes_exact_paths_and_without_takes_subtrees() -> None:
    owned = FieldSet.of(("f:spec",), ("f:spec", "f:x"), ("f:status", "f:phase"))
    assert owned.difference(FieldSet.of(("f:spec",))) == FieldSet.of(("f:spec", "f:x"), ("f:status", "f:phase"))
    assert owned.without(FieldSet.of(("f:spec",))) == FieldSet.of(("f:status", "f:phase"))
    assert owned.only(["f:status"]) == FieldSet.of(("f:status", "f:phase"))


def test_path_elements_are_compact_json_as_go_writes_it() -> None:
    assert key_element({"port": 80, "name": "<&>"}) == 'k:{"name":"\\u003c\\u0026\\u003e","port":80}'
    assert value_element("e.com/f") == 'v:"e.com/f"'
    assert value_element(2.0) == "v:2"
    assert go_json(1.5e-7) == "1.5e-7"
    assert go_json(1e21) == "1e+21"
    assert go_json(0.1) == "0.1"
    assert go_json({"b": [True, None], "a": "é"}) == '{"a":"é","b":[true,null]}'


def test_numbers_order_numerically_across_ints_and_floats() -> None:
    assert sorted(["v:10", "v:9.5", "v:9"], key=element_order) == ["v:9", "v:9.5", "v:10"]


def test_values_print_as_structured_merge_diff_prints_them_in_paths() -> None:
    assert path_string(["f:tags", 'v:"a"']) == '.tags[="a"]'
    assert path_string(["f:l", 'k:{"name":"a","port":1}', "f:v"]) == '.l[name="a",port=1].v'
    assert go_value_string(1e-5) == "1e-05"
    assert go_value_string(2.5) == "2.5"
    assert go_quote('a"b\n\x01') == '"a\\"b\\n\\x01"'


# -- the raw (fieldsV1) operations agree with the decoded ones ----------------------------------------

ELEMENTS = ["f:a", "f:b", 'k:{"n":1}', 'v:"x"']


@st.composite
def field_sets(draw: st.DrawFn, depth: int = 3) -> FieldSet:
    paths = draw(st.lists(st.lists(st.sampled_from(ELEMENTS), min_size=1, max_size=depth), max_size=8))
    return FieldSet.of(*paths)


@given(field_sets(), field_sets())
def test_raw_operations_match_the_set_algebra(a: FieldSet, b: FieldSet) -> None:
    raw = a.to_fields_v1()
    assert raw_intersection(raw, b) == a.intersection(b)
    assert raw_difference(raw, b) == a.difference(b).to_fields_v1()
    assert raw_within(raw, b) == a.issubset(b)
    assert raw_equal(raw, b) == (a == b)
    assert raw_owns_any(raw) == (not a.empty())
    assert FieldSet.from_fields_v1(raw) == a


@given(field_sets(), field_sets())
def test_set_algebra_laws(a: FieldSet, b: FieldSet) -> None:
    assert a.union(b).issubset(a.union(b)) and a.issubset(a.union(b)) and b.issubset(a.union(b))
    assert a.intersection(b) == b.intersection(a)
    assert a.difference(b).intersection(b).empty()
    assert a.difference(b).union(a.intersection(b)) == a
    assert set(a.union(b).paths()) == set(a.paths()) | set(b.paths())
    assert set(a.without(b).paths()) <= set(a.paths())
