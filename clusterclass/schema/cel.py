"""The CEL evaluator behind ``x-kubernetes-validations``: one small interface, one backend.

:class:`CelBackend` is the interface the rule walker uses: ``compile`` an expression into a
:class:`Program` (or raise :class:`CelError` with the compiler's message) and ``evaluate`` a
program on an activation (plain Python values for ``self`` and ``oldSelf``), returning the value
and the cost charged for it. The backend here,
:class:`CelExprBackend`, wraps ``cel-expr-python``, the official Python binding of the C++ CEL
implementation, with the extension libraries Kubernetes also enables (strings, math, encoders,
bindings, optionals). ``self`` and ``oldSelf`` are declared ``dyn``: the C++ binding cannot
declare object types from an OpenAPI schema, so the schema-aware part of Kubernetes' type check
(undefined fields) is done on the parsed tree instead (see :mod:`celrules`).

Bounding: :meth:`CelBackend.evaluate` takes a cost limit. Before running, the program's cost is
estimated from the actual inputs (:mod:`celcost`); a program over the limit is not run at all,
and the C++ runtime's own budget of 10,000 comprehension iterations stops anything the estimate
let through. So a hostile rule fails with an error instead of hanging the caller.

Limits: Kubernetes' own CEL libraries (``url``, ``ip``, ``cidr``, ``quantity``, ``semver``, the
list helpers ``isSorted``/``sum``/``min``/``max``, regex ``find``) are not available, and a rule
that calls them fails to compile with a clear error. Strings with ``format: date-time`` or
``duration`` reach CEL as strings (the binding takes no timestamp values); rules convert them with
``timestamp(self)`` / ``duration(self)``.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Protocol

from clusterclass.schema import celast, celcost

DEFAULT_COST_LIMIT = 1_000_000  # per expression, as Kubernetes' per-call limit


class CelError(Exception):
    """A compile or evaluation failure, with a one-line message."""


class CostExceeded(CelError):
    """The program's estimated (or actual) cost is over the limit; it was not run to completion."""


@dataclass(frozen=True)
class Program:
    """A compiled expression, its parsed tree, and the backend's own handle."""

    expression: str
    tree: celast.Node
    handle: Any

    @property
    def identifiers(self) -> frozenset[str]:
        return celast.identifiers(self.tree)


@dataclass(frozen=True)
class Evaluation:
    """The result of a program, and the cost charged for it (the estimate it ran under)."""

    value: Any
    cost: int


class CelBackend(Protocol):
    def compile(self, expression: str) -> Program: ...

    def evaluate(self, program: Program, activation: Mapping[str, Any], *, cost_limit: int) -> Evaluation: ...


class CelExprBackend:
    """:class:`CelBackend` over ``cel-expr-python``."""

    def __init__(self) -> None:
        from cel_expr_python import cel
        from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

        self._cel = cel
        self._env = cel.NewEnv(
            variables={"self": cel.Type.DYN, "oldSelf": cel.Type.DYN},
            extensions=[
                ext_strings.ExtStrings(),
                ext_math.ExtMath(),
                ext_encoders.ExtEncoders(),
                ext_bindings.ExtBindings(),
                ext_optional.ExtOptional(),
            ],
        )
        self._compile = lru_cache(maxsize=1024)(self._compile_uncached)

    def compile(self, expression: str) -> Program:
        result = self._compile(expression)
        if isinstance(result, str):
            raise CelError(result)
        return result

    def _compile_uncached(self, expression: str) -> Program | str:
        try:
            handle = self._env.compile(expression)
        except Exception as err:
            return _clean(str(err))
        try:
            tree = celast.decode(handle.serialize())
        except Exception as err:
            return f"the compiled expression could not be analysed: {err}"
        return Program(expression, tree, handle)

    def evaluate(self, program: Program, activation: Mapping[str, Any], *, cost_limit: int) -> Evaluation:
        bounds = {name: celcost.measure(value) for name, value in activation.items()}
        cost = celcost.estimate(program.tree, bounds)
        if cost > cost_limit:
            raise CostExceeded(f"estimated cost {cost} exceeds the limit of {cost_limit}")
        try:
            result = program.handle.eval(data=dict(activation))
        except Exception as err:
            message = _clean(str(err))
            if "budget" in message.lower():
                raise CostExceeded(f"evaluation stopped: {message}") from None
            raise CelError(message) from None
        if result.type() == self._cel.Type.ERROR:
            raise CelError(_clean(str(result.value())))
        return Evaluation(result.plain_value(), cost)


def _clean(message: str) -> str:
    """The first line of a backend message, without the status-code decoration."""
    first = message.strip().splitlines()[0] if message.strip() else "unknown error"
    for prefix in ("INVALID_ARGUMENT: ", "NOT_FOUND: ", "INTERNAL: ", "OUT_OF_RANGE: ", "UNKNOWN: "):
        if first.startswith(prefix):
            first = first[len(prefix) :]
    for suffix in (" [INVALID_ARGUMENT]", " [INTERNAL]", " [NOT_FOUND]", " [OUT_OF_RANGE]", " [UNKNOWN]"):
        if first.endswith(suffix):
            first = first[: -len(suffix)]
    return first


_BACKEND: CelBackend | None = None


def default_backend() -> CelBackend:
    """The process-wide backend, created on first use (compiled programs are cached there)."""
    global _BACKEND
    if _BACKEND is None:
        _BACKEND = CelExprBackend()
    return _BACKEND
