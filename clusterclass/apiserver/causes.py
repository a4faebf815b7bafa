"""Field errors as kube-apiserver puts them on the wire: ``Status`` causes and the ``Invalid`` error.

The checks of the CRD schema walker and of ObjectMeta produce :class:`~clusterclass.fielderrors.FieldError`
values (path, error type, bad value, detail). A client never sees those: it sees a ``Status`` with
``reason: Invalid``, one cause per error (``{reason, message, field}``) and a message that joins them.
Both are rendered here the way apimachinery's ``field.Error`` and ``errors.NewInvalid`` render them,
because contract tests compare the memory store's messages with a real kube-apiserver's:

- a cause message is ``<Type>: <value>: <detail>``; the value is left out for ``Required``,
  ``Forbidden``, ``Too long`` and ``Internal error``; strings are Go-quoted (``%q``), numbers and
  booleans printed plainly (``%v``, so ``1e+06`` for a float million), and everything else, ``nil``
  included, as JSON (``null``, ``{"name":"a"}``), as Kubernetes 1.37 prints them;
- the ``Status`` message is ``<Kind>.<group> "<name>" is invalid: <errors>``, where ``<errors>`` is
  the one error, or ``[e1, e2]`` without repeats.

Why not :meth:`FieldError.message`: that rendering is the project's (JSON values, ``Too long``
with the value), fine for offline checks but not byte-equal to an API server's.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from clusterclass.fielderrors import OMITTED, ErrorType, FieldError
from clusterclass.kube.errors import Invalid, make_status
from clusterclass.kube.gotext import go_float, go_json, go_quote

Cause = dict[str, str]

#: types whose bad value kube-apiserver leaves out (``Too long`` too, unlike ``ErrorType.shows_value``)
_VALUE_HIDDEN = (ErrorType.REQUIRED, ErrorType.FORBIDDEN, ErrorType.TOO_LONG, ErrorType.INTERNAL)


class GroupKind(Protocol):
    """Anything naming a kind and its API group (a CRD's info, the memory store's kind registration)."""

    @property
    def group(self) -> str: ...

    @property
    def kind(self) -> str: ...


@dataclass(frozen=True)
class NamedKind:
    """A :class:`GroupKind` given outright: the kind an error names when it is not a served kind's own."""

    group: str
    kind: str


class GoText(str):
    """A bad value already in the form Go prints it (a struct as JSON in field order, a time), shown as it is."""


def go_value(value: Any) -> str:
    """The bad value of a field error as ``field.Error.ErrorBody`` prints it (Kubernetes 1.37).

    Strings Go-quoted, floats as ``%v``, everything else as JSON: ``nil`` as ``null``, and booleans
    and integers, which JSON writes as ``%v`` does.
    """
    if isinstance(value, GoText):
        return str(value)
    if isinstance(value, str):
        return go_quote(value)
    if isinstance(value, float):
        return go_float(value)
    return go_json(value)


def error_body(error: FieldError) -> str:
    """``field.Error.ErrorBody()``: the error without its field path."""
    text = error.type.display  # Go's field.ErrorType.String()
    if error.type not in _VALUE_HIDDEN and error.value is not OMITTED:
        text += f": {go_value(error.value)}"
    if error.detail:
        text += f": {error.detail}"
    return text


def to_cause(error: FieldError) -> Cause:
    """The ``StatusCause`` of one field error."""
    return {"reason": str(error.type), "message": error_body(error), "field": error.field}


def to_causes(errors: Iterable[FieldError]) -> list[Cause]:
    return [to_cause(e) for e in errors]


def cause_text(cause: Mapping[str, str]) -> str:
    """``field.Error.Error()``: ``<field>: <body>``."""
    return f"{cause.get('field', '')}: {cause.get('message', '')}"


def aggregate(causes: Iterable[Mapping[str, str]]) -> str:
    """``ErrorList.ToAggregate().Error()``: one error as it is, several as ``[a, b]``, repeats dropped."""
    seen: list[str] = []
    for cause in causes:
        text = cause_text(cause)
        if text not in seen:
            seen.append(text)
    if len(seen) == 1:
        return seen[0]
    return "[" + ", ".join(seen) + "]"


def qualified_kind(kind_info: GroupKind) -> str:
    """``Kind.group`` (``GroupKind.String()``); the bare kind for the core group."""
    return f"{kind_info.kind}.{kind_info.group}" if kind_info.group else kind_info.kind


def invalid_error(kind_info: GroupKind, name: str, causes: Iterable[Mapping[str, str]]) -> Invalid:
    """The 422 ``Invalid`` error kube-apiserver answers a write with, for ``causes`` of object ``name``."""
    cause_list = [dict(c) for c in causes]
    message = f"{qualified_kind(kind_info)} {go_quote(name)} is invalid"
    if cause_list:
        message += f": {aggregate(cause_list)}"
    # StatusDetails' name is omitempty: an object without a name has none in the details
    details: dict[str, Any] = {"name": name} if name else {}
    details.update(kind=kind_info.kind, causes=cause_list)
    if kind_info.group:
        details["group"] = kind_info.group
    return Invalid(make_status(422, "Invalid", message, details=details))
