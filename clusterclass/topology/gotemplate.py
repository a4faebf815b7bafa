"""Rendering Go ``text/template`` programs: the one place that talks to the template engine.

Naming strategies (and, later, patch values and ``enabledIf``) are Go templates written by
ClusterClass authors. We render them with gotpl, a pure-Python Go template engine, under an
execution budget so a hostile or careless template cannot hang a computation or render megabytes.
Compiled programs are cached by source, since the same few templates render for every worker.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Literal

from gotpl import Environment, ExecutionBudget, Template, TemplateError

MissingKey = Literal["default", "error"]

_BUDGET = ExecutionBudget(
    max_output_chars=1_000_000, max_iterations=100_000, max_template_depth=100, max_function_calls=10_000
)


class RenderError(Exception):
    """A template failed to parse or execute; the message is the engine's, in Go's wording."""


@lru_cache(maxsize=64)
def _environment(missing_key: MissingKey) -> Environment:
    return Environment(missing_key=missing_key, budget=_BUDGET)


@lru_cache(maxsize=1024)
def _compile(source: str, missing_key: MissingKey) -> Template:
    return _environment(missing_key).from_string(source)


def render(source: str, data: dict[str, Any], *, missing_key: MissingKey = "default") -> str:
    """Render ``source`` with ``data``; ``missing_key="error"`` makes a missing key an error."""
    try:
        return str(_compile(source, missing_key).render(data))
    except TemplateError as err:
        raise RenderError(str(err)) from err
    except RecursionError as err:  # deeply nested input the parser cannot take
        raise RenderError("template is nested too deeply") from err


@lru_cache(maxsize=1)
def _value_environment() -> Environment:
    from gotpl.funcs.sprig import hermetic_text_func_map

    return Environment(functions=hermetic_text_func_map(), missing_key="default", budget=_BUDGET)


@lru_cache(maxsize=1024)
def _compile_value(source: str) -> Template:
    return _value_environment().from_string(source)


def render_with_sprig(source: str, data: dict[str, Any]) -> str:
    """Render a patch value or ``enabledIf`` template: Sprig's hermetic functions, missing keys
    render as ``<no value>``, as upstream's patch engine does."""
    try:
        return str(_compile_value(source).render(data))
    except TemplateError as err:
        raise RenderError(str(err)) from err
    except RecursionError as err:
        raise RenderError("template is nested too deeply") from err
