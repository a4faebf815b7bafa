"""``pattern`` regular expressions with Go's semantics: RE2 syntax, linear-time matching.

Kubernetes compiles ``pattern`` with Go's ``regexp`` package, whose syntax is RE2's. We use
Google's RE2 through ``google-re2`` rather than Python's ``re`` because ``re`` differs where it
matters here: it accepts look-arounds and back-references that Kubernetes rejects, lacks
``\\pL``-style classes in older forms, and backtracks, so a hostile pattern such as
``(a+)+$`` could hang a reconcile. RE2 rejects the same constructs Go rejects and matches in
time linear in the input.

Matching is a search (unanchored), as Go's ``MatchString`` is: ``^``/``$`` anchor explicitly.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Any, Protocol

import re2


class Pattern(Protocol):
    def search(self, text: str) -> Any: ...


def _options() -> Any:
    options = re2.Options()
    options.log_errors = False  # errors come back as FieldErrors, not as lines on stderr
    return options


_OPTIONS = _options()


@lru_cache(maxsize=512)
def compile_pattern(pattern: str) -> tuple[Pattern | None, str]:
    """The compiled pattern, or None and the reason it is not a valid RE2/Go expression."""
    try:
        compiled: Pattern = re2.compile(pattern, options=_OPTIONS)
    except Exception as err:  # re2 raises its own error type, sometimes with a bytes message
        reason = err.args[0] if err.args else err
        if isinstance(reason, bytes):
            reason = reason.decode("utf-8", "replace")
        return None, f"error parsing regexp: {reason}"
    return compiled, ""


def matches(pattern: Pattern, text: str) -> bool:
    return pattern.search(text) is not None
