"""Label selectors: the string form, the LabelSelector dict form, Reader label maps, and matching."""

from __future__ import annotations

from typing import Any

import pytest

from clusterclass.kube.selectors import (
    EVERYTHING,
    Requirement,
    Selector,
    SelectorError,
    as_selector,
    from_label_selector,
    from_labels,
    parse,
)

LABELS = {"app": "web", "tier": "front", "version": "3", "empty": ""}


@pytest.mark.parametrize(
    ("text", "canonical", "matches"),
    [
        ("", "", True),
        ("app=web", "app=web", True),
        ("app==web", "app=web", True),
        ("app = web", "app=web", True),
        ("app=db", "app=db", False),
        ("app!=db", "app!=db", True),
        ("app!=web", "app!=web", False),
        ("missing!=x", "missing!=x", True),
        ("app in (web,db)", "app in (db,web)", True),
        ("app in ( db , api )", "app in (api,db)", False),
        ("app notin (db)", "app notin (db)", True),
        ("app notin (web)", "app notin (web)", False),
        ("missing notin (x)", "missing notin (x)", True),
        ("missing in (x)", "missing in (x)", False),
        ("app", "app", True),
        ("missing", "missing", False),
        ("!missing", "!missing", True),
        ("!app", "!app", False),
        ("empty=", "empty=", True),
        ("empty", "empty", True),
        ("version>2", "version>2", True),
        ("version<3", "version<3", False),
        ("app>1", "app>1", False),  # not an integer: never greater
        ("missing<10", "missing<10", False),
        ("app=web,tier=front,!missing", "app=web,tier=front,!missing", True),
        ("app=web,tier=back", "app=web,tier=back", False),
        ("example.com/role=x", "example.com/role=x", False),
    ],
)
def test_string_form(text: str, canonical: str, matches: bool) -> None:
    selector = parse(text)
    assert str(selector) == canonical
    assert selector.matches(LABELS) is matches
    assert parse(str(selector)) == selector  # the canonical form parses back to the same selector


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a b", "found 'b', expected: '=', '!=', '==', 'in', 'notin', '>', '<', ',' or end of input"),
        ("=b", "found '=', expected: identifier"),
        ("a in x", "found 'x', expected: '('"),
        ("a in (x", "found end of input, expected: ',' or ')'"),
        ("a in (x y)", "found 'y', expected: ',' or ')'"),
        ("a in ()", "values set can't be empty"),
        ("a notin ()", "values set can't be empty"),
        ("!", "found end of input, expected: identifier"),
        ("a,", "found end of input, expected: identifier"),
        ("a=b c", "found 'c', expected: ','"),
        ("a=(", "found '(', expected: identifier"),
        ("a>b", "exactly one integer value"),
        ("-bad=x", "name part must consist of alphanumeric characters"),
        ("a=-bad", "invalid label value '-bad'"),
        ("Bad_Prefix/a=b", "prefix must be a lowercase RFC 1123 subdomain"),
        ("/a=b", "prefix must be a lowercase RFC 1123 subdomain"),
        ("p/=b", "name part must be non-empty"),
        ("a=" + "v" * 64, "must be no more than 63 characters"),
        ("k" * 64, "name part must be no more than 63 characters"),
    ],
)
def test_string_form_errors(text: str, message: str) -> None:
    with pytest.raises(SelectorError) as err:
        parse(text)
    assert message in str(err.value)


@pytest.mark.parametrize(
    ("selector", "canonical", "matches"),
    [
        ({}, "", True),
        ({"matchLabels": {"app": "web"}}, "app=web", True),
        ({"matchLabels": {"tier": "front", "app": "db"}}, "app=db,tier=front", False),
        ({"matchExpressions": [{"key": "app", "operator": "In", "values": ["web", "api"]}]}, "app in (api,web)", True),
        ({"matchExpressions": [{"key": "app", "operator": "NotIn", "values": ["web"]}]}, "app notin (web)", False),
        ({"matchExpressions": [{"key": "app", "operator": "Exists"}]}, "app", True),
        ({"matchExpressions": [{"key": "app", "operator": "DoesNotExist"}]}, "!app", False),
        (
            {"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "gone", "operator": "DoesNotExist"}]},
            "app=web,!gone",
            True,
        ),
    ],
)
def test_label_selector_form(selector: dict[str, Any], canonical: str, matches: bool) -> None:
    parsed = from_label_selector(selector)
    assert str(parsed) == canonical
    assert parsed.matches(LABELS) is matches


@pytest.mark.parametrize(
    ("selector", "message"),
    [
        ({"matchLabels": ["a"]}, "matchLabels: must be a map"),
        ({"matchLabels": {"a": 1}}, "matchLabels[a]: must be a string"),
        ({"matchExpressions": {"key": "a"}}, "matchExpressions: must be a list"),
        ({"matchExpressions": ["a"]}, "matchExpressions[0]: must be an object"),
        ({"matchExpressions": [{"key": "a", "operator": "Equals", "values": ["b"]}]}, "matchExpressions[0].operator"),
        ({"matchExpressions": [{"key": "a", "operator": "In"}]}, "matchExpressions[0]: label selector 'a': for 'in'"),
        ({"matchExpressions": [{"key": "a", "operator": "Exists", "values": ["b"]}]}, "values set must be empty"),
        ({"matchExpressions": [{"key": "a", "operator": "In", "values": [1]}]}, "values: must be a list of strings"),
        ({"matchExpressions": [{"operator": "Exists"}]}, "name part must be non-empty"),
    ],
)
def test_label_selector_form_errors(selector: dict[str, Any], message: str) -> None:
    with pytest.raises(SelectorError) as err:
        from_label_selector(selector)
    assert message in str(err.value)


def test_reader_label_maps_treat_none_as_exists() -> None:
    selector = from_labels({"tier": "front", "app": None})
    assert str(selector) == "app,tier=front"
    assert selector.matches(LABELS)
    assert not selector.matches({"tier": "front"})
    assert from_labels({}) == EVERYTHING


def test_as_selector_accepts_every_form() -> None:
    selector = parse("app=web")
    assert as_selector(None) == EVERYTHING
    assert as_selector(selector) is selector
    assert as_selector("app=web") == selector
    assert as_selector({"matchLabels": {"app": "web"}}) == selector


def test_requirement_checks_operator_and_values() -> None:
    with pytest.raises(SelectorError, match="operator 'like' is not recognized"):
        Requirement.new("a", "like", ["b"])
    with pytest.raises(SelectorError, match="exactly one value"):
        Requirement.new("a", "=", ["b", "c"])
    assert Requirement.new("a", "in", ["y", "x", "y"]).values == ("x", "y")


def test_matching_no_labels_and_empty_selector() -> None:
    assert Selector().empty()
    assert Selector().matches(None)
    assert parse("!a").matches(None)
    assert not parse("a").matches(None)
