"""Structured logs for controllers: every line of a reconcile carries its controller, its key and a reconcile id.

controller-runtime gives each reconcile a logger with ``controller``, the object's key and a
``reconcileID``, so the lines of one reconcile can be found among many running concurrently. We do the
same with the standard library alone: :func:`reconcile_scope` sets a :mod:`contextvars` context for the
reconcile's task (asyncio copies it into every task the reconcile starts), and :class:`ReconcileFields`,
a logging filter, copies it onto each record as ``controller``, ``key`` and ``reconcile_id``.
:class:`KeyValueFormatter` prints records as ``level message key=value ...`` lines; :class:`JsonFormatter`
as one JSON object per line. Extra fields given with ``extra=`` are printed too.

Why the standard library and not structlog: the fields needed here are three context values and a
handful of extras, which a filter and a formatter carry in some forty lines, and every library we use
already logs through :mod:`logging`.
"""

from __future__ import annotations

import contextlib
import contextvars
import json
import logging
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime


@dataclass(frozen=True)
class ReconcileContext:
    controller: str
    key: str
    reconcile_id: str


_current: contextvars.ContextVar[ReconcileContext | None] = contextvars.ContextVar("reconcile", default=None)

#: attributes every LogRecord has, so formatters can tell the extras apart
_STANDARD = set(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime"}
CONTEXT_FIELDS = ("controller", "key", "reconcile_id")


def current() -> ReconcileContext | None:
    """The reconcile this code runs in, if any."""
    return _current.get()


@contextlib.contextmanager
def reconcile_scope(controller: str, key: str) -> Iterator[ReconcileContext]:
    """Run the body as one reconcile of ``key`` by ``controller``, with a fresh reconcile id."""
    context = ReconcileContext(controller, key, uuid.uuid4().hex[:12])
    token = _current.set(context)
    try:
        yield context
    finally:
        _current.reset(token)


class ReconcileFields(logging.Filter):
    """Copies the current reconcile's controller, key and id onto every record that passes."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = _current.get()
        if context is not None:
            for name in CONTEXT_FIELDS:
                if not hasattr(record, name):
                    setattr(record, name, getattr(context, name))
        return True


def _extras(record: logging.LogRecord) -> dict[str, object]:
    return {k: v for k, v in record.__dict__.items() if k not in _STANDARD and not k.startswith("_")}


class KeyValueFormatter(logging.Formatter):
    """``2026-12-03T10:00:00Z info  message controller=topology/cluster key=ns/c1 reconcile_id=...``."""

    def format(self, record: logging.LogRecord) -> str:
        when = datetime.fromtimestamp(record.created, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        fields = " ".join(f"{k}={_value(v)}" for k, v in _extras(record).items())
        line = f"{when} {record.levelname.lower():<5} {record.getMessage()}"
        if fields:
            line += " " + fields
        if record.exc_info:
            line += "\n" + self.formatException(record.exc_info)
        return line


class JsonFormatter(logging.Formatter):
    """One JSON object per line: ``ts``, ``level``, ``logger``, ``msg`` and every extra field."""

    def format(self, record: logging.LogRecord) -> str:
        document: dict[str, object] = {
            "ts": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds").replace("+00:00", "Z"),
            "level": record.levelname.lower(),
            "logger": record.name,
            "msg": record.getMessage(),
            **_extras(record),
        }
        if record.exc_info:
            document["error"] = self.formatException(record.exc_info)
        return json.dumps(document, default=str)


def _value(value: object) -> str:
    text = str(value)
    return json.dumps(text) if not text or any(c.isspace() or c in '"=' for c in text) else text


def install(handler: logging.Handler) -> logging.Handler:
    """Give ``handler`` the reconcile fields (the filter runs on the handler, so every logger's records get them)."""
    handler.addFilter(ReconcileFields())
    return handler
