"""Which connector and task a log line is about, and the three line formats a process can write.

Java's Connect puts the connector context (its ``LoggingContext``, MDC key ``connector.context``) on
every line logged on a connector's or task's behalf: ``[<connector>|worker] `` for the connector,
``[<connector>|task-<n>] `` for a task, ``[<connector>|task-<n>|offsets] `` for its offset commits.
Here the context is a ``ContextVar``: :func:`connector_scope` sets it for a block (a connector call on
the herder's loop), :func:`enter_task` for the rest of the calling asyncio task (a task's run loop);
asyncio tasks created meanwhile inherit it, so a connector's own background work is named too.

:class:`ContextFilter` copies it onto each record (``connector_context``, ``connector``, ``task``), and
:func:`formatter` writes lines in one of :data:`FORMATS`:

- ``java``: Java's ``connect-log4j2.properties`` pattern, ``[time] LEVEL [c|task-0] message (logger)``;
- ``kv``: ``time=... level=... logger=... connector=... task=... msg="..."`` (``logfmt``: values with a
  space, ``"`` or ``=`` quoted, ``"`` and ``\\`` escaped; connector and task only when known);
- ``json``: one JSON object per line with the same keys, ``exc`` holding a traceback if any.

A line outside any connector or task has no context (``java``) or no connector/task keys.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

FORMATS = ("java", "kv", "json")
JAVA_PATTERN = "[%(asctime)s] %(levelname)s %(connector_context)s%(message)s (%(name)s)"


@dataclass(frozen=True, slots=True)
class LoggingContext:
    """A connector (``task`` None) or one of its tasks; ``scope`` as Java's ``offsets``."""

    connector: str
    task: int | None = None
    scope: str | None = None

    def text(self) -> str:
        """Java's MDC value, trailing space included."""
        parts = [self.connector, "worker" if self.task is None else f"task-{self.task}"]
        if self.scope:
            parts.append(self.scope)
        return "[" + "|".join(parts) + "] "


_CURRENT: contextvars.ContextVar[LoggingContext | None] = contextvars.ContextVar(
    "pyconnect_logging_context", default=None
)


def current() -> LoggingContext | None:
    return _CURRENT.get()


@contextmanager
def connector_scope(connector: str, task: int | None = None, scope: str | None = None) -> Iterator[None]:
    """Lines logged inside the block (and by asyncio tasks it creates) name this connector/task."""
    token = _CURRENT.set(LoggingContext(connector, task, scope))
    try:
        yield
    finally:
        _CURRENT.reset(token)


def enter_task(connector: str, task: int) -> None:
    """Name a task for the rest of the calling asyncio task (call first thing in its run loop)."""
    _CURRENT.set(LoggingContext(connector, task))


class ContextFilter(logging.Filter):
    """Adds ``connector_context`` (Java's text, ``""`` outside), ``connector`` and ``task`` to records."""

    def filter(self, record: logging.LogRecord) -> bool:
        context = _CURRENT.get()
        record.connector_context = context.text() if context is not None else ""
        record.connector = context.connector if context is not None else None
        record.task = context.task if context is not None else None
        return True


def _fields(record: logging.LogRecord, formatter: logging.Formatter) -> dict[str, object]:
    fields: dict[str, object] = {
        "time": formatter.formatTime(record),
        "level": record.levelname,
        "logger": record.name,
    }
    connector = getattr(record, "connector", None)
    if connector is not None:
        fields["connector"] = connector
        task = getattr(record, "task", None)
        if task is not None:
            fields["task"] = task
    fields["msg"] = record.getMessage()
    if record.exc_info:
        fields["exc"] = formatter.formatException(record.exc_info)
    elif record.exc_text:
        fields["exc"] = record.exc_text
    return fields


class JsonFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return json.dumps(_fields(record, self), ensure_ascii=False, default=str)


def _logfmt_value(value: object) -> str:
    text = str(value)
    if text and not any(c in text for c in ' "=\n\t\\'):
        return text
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    return f'"{escaped}"'


class KeyValueFormatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        return " ".join(f"{key}={_logfmt_value(value)}" for key, value in _fields(record, self).items())


def formatter(kind: str) -> logging.Formatter:
    """The formatter of one of :data:`FORMATS`; ValueError naming the choices otherwise."""
    if kind == "java":
        return logging.Formatter(JAVA_PATTERN)
    if kind == "kv":
        return KeyValueFormatter()
    if kind == "json":
        return JsonFormatter()
    raise ValueError(f"unknown log format {kind!r}: choose one of {', '.join(FORMATS)}")
