"""Rendering Go ``text/template`` programs: the one place that talks to the template engine.

Naming strategies, patch values and ``enabledIf`` are Go templates written by ClusterClass
authors. We render them with gotpl, a pure-Python Go template engine, under an execution budget
(output size, loop iterations, nesting, function calls), and with Sprig functions that cannot build
a value larger than :data:`MAX_VALUE_SIZE` (``until``, ``seq`` and ``repeat`` are refused before they
run), so a hostile or careless template cannot hang a computation or exhaust memory. Sprig functions
that are not deterministic are left out. Compiled programs are cached by source, since the same few
templates render for every worker.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from functools import lru_cache
from typing import Any, Literal

from gotpl import Environment, ExecutionBudget, Template, TemplateError

MissingKey = Literal["default", "error"]

_BUDGET = ExecutionBudget(
    max_output_chars=1_000_000, max_iterations=100_000, max_template_depth=100, max_function_calls=10_000
)


class RenderError(Exception):
    """A template failed to parse or execute; the message is the engine's, in Go's wording."""


#: Which environment a template renders in: naming strategies (Go's builtins only, missing keys are
#: errors) or patch values and ``enabledIf`` (Sprig's hermetic functions, missing keys ``<no value>``).
Flavor = Literal["naming", "naming-lenient", "sprig"]


@lru_cache(maxsize=4)
def _environment(flavor: Flavor) -> Environment:
    if flavor == "sprig":
        return Environment(functions=_sprig_functions(), missing_key="default", budget=_BUDGET)
    return Environment(missing_key="error" if flavor == "naming" else "default", budget=_BUDGET)


@lru_cache(maxsize=1024)
def _compile(source: str, flavor: Flavor) -> Template:
    return _environment(flavor).from_string(source)


def _render(source: str, data: dict[str, Any], flavor: Flavor) -> str:
    try:
        return str(_compile(source, flavor).render(data))
    except TemplateError as err:
        raise RenderError(str(err)) from err
    except RecursionError as err:  # deeply nested input the parser cannot take
        raise RenderError("template is nested too deeply") from err


def render(source: str, data: dict[str, Any], *, missing_key: MissingKey = "default") -> str:
    """Render a naming-strategy template with ``data``; ``missing_key="error"`` makes a missing key an error."""
    return _render(source, data, "naming" if missing_key == "error" else "naming-lenient")


#: Sprig functions that are not deterministic (clock, randomness, random salts, keys or IVs): a plan
#: with a fixed seed must print the same thing twice, and a reconcile must converge.
NON_DETERMINISTIC = frozenset(
    {
        "ago",
        "bcrypt",
        "encryptAES",
        "genCA",
        "genCAWithKey",
        "genPrivateKey",
        "genSelfSignedCert",
        "genSelfSignedCertWithKey",
        "genSignedCert",
        "genSignedCertWithKey",
        "htpasswd",
        "randInt",
        "shuffle",
    }
)

#: The largest string, list or map a function may build: the output budget only counts what a
#: template writes, so values built inside function calls need their own bound.
MAX_VALUE_SIZE = 1_000_000


class _ValueTooLarge(TemplateError):
    pass


def _check_size(name: str, size: int) -> None:
    if size > MAX_VALUE_SIZE:
        raise _ValueTooLarge(f"{name}: result of {size} elements exceeds the limit of {MAX_VALUE_SIZE}")


def _bounded(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function``, refusing to return a value larger than the limit."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        result = function(*args, **kwargs)
        if isinstance(result, str | bytes | list | tuple | dict):
            _check_size(name, len(result))
        return result

    return call


def _guard_range(name: str, function: Callable[..., Any], size: Callable[..., float]) -> Callable[..., Any]:
    """``function``, refusing before it runs when its arguments ask for too large a value."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        try:
            wanted = size(*args)
        except (TypeError, ValueError, ZeroDivisionError):
            wanted = 0  # let the function report its own argument error
        _check_size(name, int(min(wanted, 10**18)))
        return function(*args, **kwargs)

    return call


def _count_nodes(value: Any, limit: int) -> int:
    """How many values ``value`` holds, counting shared ones each time they appear (as encoders
    do), stopping once past ``limit``."""
    count, stack = 0, [value]
    while stack and count <= limit:
        current = stack.pop()
        count += 1
        if isinstance(current, dict):
            stack.extend(current.values())
        elif isinstance(current, list | tuple):
            stack.extend(current)
    return count


def _guard_structure(name: str, function: Callable[..., Any]) -> Callable[..., Any]:
    """``function`` (an encoder or copier), refusing arguments that expand past the limit."""

    @functools.wraps(function)
    def call(*args: Any, **kwargs: Any) -> Any:
        _check_size(name, sum(_count_nodes(a, MAX_VALUE_SIZE) for a in args))
        return function(*args, **kwargs)

    return call


#: Functions that walk a whole structure: a value built by repeated ``list $a $a`` shares its parts,
#: so it is small in memory but enormous once encoded or copied.
_STRUCTURE_WALKERS = frozenset(
    {
        "toJson",
        "toPrettyJson",
        "toRawJson",
        "mustToJson",
        "mustToPrettyJson",
        "mustToRawJson",
        "deepCopy",
        "mustDeepCopy",
        "toStrings",
        "print",
        "printf",
        "println",
    }
)


def _number(value: Any) -> float:
    return float(value)


def _seq_size(*args: Any) -> float:
    numbers = [_number(a) for a in args]
    if len(numbers) == 1:
        return abs(numbers[0])
    if len(numbers) == 2:
        return abs(numbers[1] - numbers[0]) + 1
    if len(numbers) == 3 and numbers[1] != 0:
        return abs((numbers[2] - numbers[0]) / numbers[1]) + 1
    return 0


_RANGE_SIZES: dict[str, Callable[..., float]] = {
    "until": lambda count, *_: abs(_number(count)),
    "untilStep": lambda start, stop, step, *_: abs((_number(stop) - _number(start)) / _number(step)),
    "seq": _seq_size,
    "repeat": lambda count, text, *_: _number(count) * len(str(text)),
}


#: Go's own template functions that build strings; bounded like Sprig's (gotpl lets a function
#: of the same name replace a builtin).
_STRING_BUILTINS = ("print", "printf", "println", "html", "js", "urlquery")


def _go_comparisons(builtin_eq: Callable[..., object]) -> dict[str, Callable[..., bool]]:
    """``eq`` and ``ne`` as Go (1.18+) has them for values decoded from JSON.

    A missing key or a JSON null reaches Go's ``eq`` as an invalid value, which compares unequal to
    any real value without an error (``{{ ne .unsetVariable "" }}`` is ``true``); gotpl raises
    "incompatible types" instead, so missing and null values are handled here.
    """
    from gotpl.runtime.values import INVALID, UNTYPED_NIL

    def missing(value: object) -> bool:
        return value is None or value is INVALID or value is UNTYPED_NIL

    def eq(first: object, *others: object) -> bool:
        if not others:
            raise TypeError("eq requires at least two arguments")
        for other in others:
            if missing(first) or missing(other):
                if missing(first) and missing(other):
                    return True
                continue
            if builtin_eq(first, other):
                return True
        return False

    def ne(left: object, right: object) -> bool:
        return not eq(left, right)

    return {"eq": eq, "ne": ne}


def _sprig_functions() -> dict[str, Callable[..., Any]]:
    from gotpl.funcs.sprig import hermetic_text_func_map
    from gotpl.runtime.sync_vm import _builtin_functions

    builtins = _builtin_functions("go")
    sources = {name: builtins[name] for name in _STRING_BUILTINS}
    sources.update(hermetic_text_func_map())
    sources.update(_go_comparisons(builtins["eq"]))
    functions: dict[str, Callable[..., Any]] = {}
    for name, function in sources.items():
        if name in NON_DETERMINISTIC:
            continue
        bounded = _bounded(name, function)
        if name in _RANGE_SIZES:
            bounded = _guard_range(name, bounded, _RANGE_SIZES[name])
        if name in _STRUCTURE_WALKERS:
            bounded = _guard_structure(name, bounded)
        functions[name] = bounded
    return functions


def render_with_sprig(source: str, data: dict[str, Any]) -> str:
    """Render a patch value or ``enabledIf`` template: Sprig's hermetic functions, missing keys
    render as ``<no value>``, as upstream's patch engine does."""
    return _render(source, data, "sprig")


def parse_check(source: str) -> str | None:
    """Why ``source`` does not parse as a patch value or ``enabledIf`` template (with the functions
    :func:`render_with_sprig` offers), or None when it parses."""
    try:
        _compile(source, "sprig")
    except TemplateError as err:
        return str(err)
    except RecursionError:
        return "template is nested too deeply"
    return None
