"""The label index of the stored objects: it follows every change, and a list through it answers what matching
every object would (clusterclass.apiserver.object_index)."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from clusterclass.apiserver.object_index import ObjectBucket
from clusterclass.kube.client import parse_label_selector

LABEL_VALUES = st.dictionaries(st.sampled_from(["a", "b", "c"]), st.sampled_from(["1", "2"]), max_size=3)
OPERATIONS = st.lists(
    st.tuples(st.sampled_from(["put", "delete", "pop"]), st.sampled_from(["x", "y", "z"]), LABEL_VALUES),
    max_size=30,
)
SELECTORS = st.sampled_from(["", "a=1", "a=1,b=2", "a in (1,2)", "a=1,c!=2", "!a", "b", "a notin (1)", "c=2,a"])


def obj(name: str, labels: dict[str, str]) -> dict:
    return {"metadata": {"name": name, "namespace": "ns", "labels": labels}}


@settings(max_examples=300, deadline=None)
@given(OPERATIONS, SELECTORS)
def test_the_candidates_hold_every_object_the_selector_matches(operations, text) -> None:
    bucket = ObjectBucket()
    for operation, name, labels in operations:
        key = ("ns", name)
        if operation == "put":
            bucket[key] = obj(name, labels)
        elif operation == "delete" and key in bucket:
            del bucket[key]
        elif operation == "pop":
            bucket.pop(key, None)
    selector = parse_label_selector(text)
    matching = {key for key, o in bucket.items() if selector.matches(o["metadata"]["labels"])}
    candidates = set(bucket.candidates(selector))
    assert matching <= candidates <= set(bucket)
    # and the index holds nothing about objects gone or labels changed
    for (label, value), keys in bucket._by_label.items():
        assert keys and all(bucket[key]["metadata"]["labels"].get(label) == value for key in keys)


def test_an_equality_narrows_to_the_objects_with_that_value() -> None:
    bucket = ObjectBucket()
    for n in range(100):
        bucket[("ns", f"o{n}")] = obj(f"o{n}", {"cluster": f"c{n % 10}", "role": "worker"})
    assert len(set(bucket.candidates(parse_label_selector("role=worker,cluster=c3")))) == 10
    bucket[("ns", "o3")] = obj("o3", {"cluster": "c4"})
    assert ("ns", "o3") not in set(bucket.candidates(parse_label_selector("cluster=c3")))
    assert ("ns", "o3") in set(bucket.candidates(parse_label_selector("cluster=c4")))


def test_a_bucket_refuses_the_writes_that_would_pass_its_index_by() -> None:
    bucket = ObjectBucket()
    for write in (lambda: bucket.setdefault(("ns", "x"), obj("x", {})), lambda: bucket.update({})):
        with pytest.raises(NotImplementedError):
            write()
