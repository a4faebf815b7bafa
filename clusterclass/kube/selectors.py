"""Kubernetes label selectors: parsing both forms and matching labels against them.

A :class:`Selector` is a list of :class:`Requirement` that must all hold. It comes from one of:

- the string form of ``?labelSelector=`` and ``kubectl -l`` (:func:`parse`): ``a=b``, ``a==b``,
  ``a!=b``, ``a in (x,y)``, ``a notin (x)``, ``a`` (exists), ``!a`` (does not exist), ``a>1``,
  ``a<1``, joined by commas;
- the ``metav1.LabelSelector`` dict in object specs (:func:`from_label_selector`): ``matchLabels``
  plus ``matchExpressions`` with ``In``/``NotIn``/``Exists``/``DoesNotExist``;
- the label map of :class:`~clusterclass.topology.reader.Reader` (:func:`from_labels`), where a
  None value means "the label exists".

``str(selector)`` is the canonical string form, which the HTTP backend sends to a server. Keys and
values are checked as apimachinery checks them, so a selector the memory store accepts is one a
real kube-apiserver accepts. Written here rather than taken from a library: the Python Kubernetes
clients only format selectors, none parses or matches them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from clusterclass.errors import ClusterClassError


class SelectorError(ClusterClassError, ValueError):
    """A label selector that cannot be parsed or is not valid."""


EQUALS = "="
NOT_EQUALS = "!="
IN = "in"
NOT_IN = "notin"
EXISTS = "exists"
DOES_NOT_EXIST = "!"
GREATER_THAN = "gt"
LESS_THAN = "lt"

_NAME = re.compile(r"^[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$")
_DNS_SUBDOMAIN = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$")
_INTEGER = re.compile(r"^-?[0-9]+$")


def validate_key(key: str) -> None:
    """A label key is a qualified name: an optional DNS-subdomain prefix and ``/``, then a name."""
    prefix, slash, name = key.rpartition("/")
    if slash and (not prefix or len(prefix) > 253 or not _DNS_SUBDOMAIN.match(prefix)):
        raise SelectorError(f"invalid label key {key!r}: prefix must be a lowercase RFC 1123 subdomain")
    if not name:
        raise SelectorError(f"invalid label key {key!r}: name part must be non-empty")
    if len(name) > 63:
        raise SelectorError(f"invalid label key {key!r}: name part must be no more than 63 characters")
    if not _NAME.match(name):
        raise SelectorError(
            f"invalid label key {key!r}: name part must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )


def validate_value(value: str) -> None:
    """A label value is empty or up to 63 alphanumerics, ``-``, ``_``, ``.``, starting and ending alphanumeric."""
    if len(value) > 63:
        raise SelectorError(f"invalid label value {value!r}: must be no more than 63 characters")
    if value and not _NAME.match(value):
        raise SelectorError(
            f"invalid label value {value!r}: must consist of alphanumeric characters, '-', '_' or '.', "
            "and must start and end with an alphanumeric character"
        )


@dataclass(frozen=True)
class Requirement:
    """One condition on one label key; ``values`` is sorted and deduplicated."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    @staticmethod
    def new(key: str, operator: str, values: Iterable[str] = ()) -> Requirement:
        """A checked requirement: the key and values valid, their number right for the operator."""
        validate_key(key)
        vals = tuple(sorted(set(values)))
        if operator in (EQUALS, NOT_EQUALS) and len(vals) != 1:
            raise SelectorError(f"label selector {key!r}: exact-match operators need exactly one value")
        if operator in (IN, NOT_IN) and not vals:
            raise SelectorError(f"label selector {key!r}: for 'in', 'notin' operators, values set can't be empty")
        if operator in (EXISTS, DOES_NOT_EXIST) and vals:
            raise SelectorError(f"label selector {key!r}: values set must be empty for exists and does not exist")
        if operator in (GREATER_THAN, LESS_THAN):
            if len(vals) != 1 or not _INTEGER.match(vals[0]):
                raise SelectorError(f"label selector {key!r}: for 'Gt', 'Lt' operators, exactly one integer value")
        elif operator not in (EQUALS, NOT_EQUALS, IN, NOT_IN, EXISTS, DOES_NOT_EXIST):
            raise SelectorError(f"label selector {key!r}: operator {operator!r} is not recognized")
        else:
            for value in vals:
                validate_value(value)
        return Requirement(key, operator, vals)

    def matches(self, labels: Mapping[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.operator in (EQUALS, IN):
            return present and value in self.values
        if self.operator in (NOT_EQUALS, NOT_IN):
            return not present or value not in self.values
        if self.operator == EXISTS:
            return present
        if self.operator == DOES_NOT_EXIST:
            return not present
        if not present or value is None or not _INTEGER.match(value):
            return False
        if self.operator == GREATER_THAN:
            return int(value) > int(self.values[0])
        return int(value) < int(self.values[0])

    def __str__(self) -> str:
        if self.operator == EXISTS:
            return self.key
        if self.operator == DOES_NOT_EXIST:
            return f"!{self.key}"
        if self.operator in (IN, NOT_IN):
            return f"{self.key} {self.operator} ({','.join(self.values)})"
        symbol = {EQUALS: "=", NOT_EQUALS: "!=", GREATER_THAN: ">", LESS_THAN: "<"}[self.operator]
        return f"{self.key}{symbol}{self.values[0]}"


@dataclass(frozen=True)
class Selector:
    """Requirements that must all hold; no requirement at all selects everything."""

    requirements: tuple[Requirement, ...] = ()

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def empty(self) -> bool:
        return not self.requirements

    def __str__(self) -> str:
        return ",".join(str(r) for r in self.requirements)


EVERYTHING = Selector()


# -- the string form -------------------------------------------------------------------------------

_TOKEN = re.compile(r"\s*(?:(?P<op>==|!=|=|>|<|\(|\)|,|!)|(?P<word>[^\s=!<>(),]+))")
_OPERATORS = frozenset({"==", "!=", "=", ">", "<", "(", ")", ",", "!"})
_KEYWORDS = {IN, NOT_IN}


def _tokens(text: str) -> list[str]:
    tokens: list[str] = []
    pos = 0
    while pos < len(text):
        if text[pos:].strip() == "":
            break
        match = _TOKEN.match(text, pos)
        if match is None:  # pragma: no cover - every character is an operator, a word or space
            raise SelectorError(f"unable to parse label selector {text!r} at {pos}")
        tokens.append(match.group("op") or match.group("word"))
        pos = match.end()
    return tokens


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.pos = 0

    def peek(self) -> str | None:
        return self.tokens[self.pos] if self.pos < len(self.tokens) else None

    def take(self) -> str | None:
        token = self.peek()
        self.pos += 1
        return token

    def fail(self, found: str | None, expected: str) -> SelectorError:
        what = f"found '{found}'" if found is not None else "found end of input"
        return SelectorError(f"unable to parse label selector {self.text!r}: {what}, expected: {expected}")

    def identifier(self, expected: str) -> str:
        token = self.take()
        if token is None or token in _OPERATORS:
            raise self.fail(token, expected)
        return token

    def requirement(self) -> Requirement:
        if self.peek() == "!":
            self.take()
            return Requirement.new(self.identifier("identifier"), DOES_NOT_EXIST)
        key = self.identifier("identifier")
        op = self.peek()
        if op is None or op == ",":
            return Requirement.new(key, EXISTS)
        self.take()
        if op in ("=", "=="):
            return Requirement.new(key, EQUALS, [self.value()])
        if op == "!=":
            return Requirement.new(key, NOT_EQUALS, [self.value()])
        if op == ">":
            return Requirement.new(key, GREATER_THAN, [self.value()])
        if op == "<":
            return Requirement.new(key, LESS_THAN, [self.value()])
        if op in _KEYWORDS:
            return Requirement.new(key, op, self.value_set())
        raise self.fail(op, "'=', '!=', '==', 'in', 'notin', '>', '<', ',' or end of input")

    def value(self) -> str:
        token = self.peek()
        if token is None or token == ",":
            return ""  # `a=` selects the empty value, as apimachinery's parser allows
        if token in _OPERATORS:
            raise self.fail(token, "identifier")
        self.take()
        return token

    def value_set(self) -> list[str]:
        token = self.take()
        if token != "(":
            raise self.fail(token, "'('")
        values: list[str] = []
        while True:
            token = self.take()
            if token == ")" and not values:
                return values
            if token in (",", ")"):
                values.append("")
            elif token is None or token in _OPERATORS:
                raise self.fail(token, "identifier, ',' or ')'")
            else:
                values.append(token)
                token = self.take()
            if token == ")":
                return values
            if token != ",":
                raise self.fail(token, "',' or ')'")

    def parse(self) -> Selector:
        requirements: list[Requirement] = []
        if not self.tokens:
            return EVERYTHING
        while True:
            requirements.append(self.requirement())
            token = self.take()
            if token is None:
                return Selector(tuple(requirements))
            if token != ",":
                raise self.fail(token, "','")


def parse(text: str) -> Selector:
    """The selector written as ``text``; an empty string selects everything.

    Raises :class:`SelectorError` naming what was found and what was expected instead.
    """
    return _Parser(text).parse()


# -- the metav1.LabelSelector form and Reader label maps -------------------------------------------

_EXPRESSION_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def from_label_selector(selector: Mapping[str, Any]) -> Selector:
    """The selector a ``metav1.LabelSelector`` describes; ``{}`` selects everything.

    Field paths in errors follow the object (``matchExpressions[0].operator``).
    """
    requirements: list[Requirement] = []
    match_labels = selector.get("matchLabels") or {}
    if not isinstance(match_labels, Mapping):
        raise SelectorError("matchLabels: must be a map of label keys to values")
    for key, value in sorted(match_labels.items()):
        if not isinstance(value, str):
            raise SelectorError(f"matchLabels[{key}]: must be a string")
        requirements.append(Requirement.new(str(key), EQUALS, [value]))
    expressions = selector.get("matchExpressions") or []
    if not isinstance(expressions, list):
        raise SelectorError("matchExpressions: must be a list")
    for i, expression in enumerate(expressions):
        where = f"matchExpressions[{i}]"
        if not isinstance(expression, Mapping):
            raise SelectorError(f"{where}: must be an object with key, operator and values")
        operator = _EXPRESSION_OPERATORS.get(str(expression.get("operator")))
        if operator is None:
            raise SelectorError(
                f"{where}.operator: {expression.get('operator')!r} is not a valid label selector operator "
                "(In, NotIn, Exists, DoesNotExist)"
            )
        values = expression.get("values") or []
        if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
            raise SelectorError(f"{where}.values: must be a list of strings")
        try:
            requirements.append(Requirement.new(str(expression.get("key") or ""), operator, values))
        except SelectorError as err:
            raise SelectorError(f"{where}: {err}") from err
    return Selector(tuple(requirements))


def from_labels(labels: Mapping[str, str | None]) -> Selector:
    """Each key equal to its value, or present with any value where the value is None."""
    return Selector(
        tuple(
            Requirement.new(key, EXISTS) if value is None else Requirement.new(key, EQUALS, [value])
            for key, value in sorted(labels.items())
        )
    )


def as_selector(selector: str | Selector | Mapping[str, Any] | None) -> Selector:
    """Any accepted selector form as a :class:`Selector`: a string, a LabelSelector dict, or None (everything)."""
    if selector is None:
        return EVERYTHING
    if isinstance(selector, Selector):
        return selector
    if isinstance(selector, str):
        return parse(selector)
    return from_label_selector(selector)
