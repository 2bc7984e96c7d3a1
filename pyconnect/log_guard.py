"""Quiet logs under faults: retriable conditions are WARN, and a repeating line is shown once per window.

During a broker restart or a network fault every client retries, and a log that prints each retry at
ERROR drowns an operator's alerting. The contract, for every WARNING-or-above line of the process:

- **Retriable means WARN.** A line is demoted from ERROR to WARNING when it is about a retriable
  condition: its exception (``exc_info``, or an exception among its arguments, causes included) is a
  Kafka error marked retriable, a connection or timeout error; or it is one of the Kafka client's own
  connection-retry lines (:data:`RETRY_LINES`). Java's clients log the same conditions at WARN
  ("Connection to node ... could not be established"). ERROR stays for what needs a human.
- **Bounded repeat.** Lines with the same logger, level, subject (the first argument: the worker,
  connector, task or broker the line names) and text up to its numbers are shown once per ``window_s``;
  the next one shown after the window says how many were held back. Different subjects never hide
  each other.
- INFO and below pass untouched; nothing is dropped for good (a condition that persists is shown
  again every window, with its count).

:func:`configure_logging` is the one place a process sets up logging (CLI entry points).
"""

from __future__ import annotations

import logging
import re
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass

from pyconnect.log_context import ContextFilter, formatter

REPEAT_WINDOW_S = 60.0
MAX_TRACKED = 2048
LOG_FORMAT = "[%(asctime)s] %(levelname)s %(message)s (%(name)s)"

RETRY_LINES = (
    "Unable connect to",
    "Unable to update metadata",
    "Unable to request metadata",
    "Failed fetch messages from",
    "Unexpected error in sender routine",
    "Got error produce response",
    "OffsetCommit failed",
    "Heartbeat failed",
    "Coordinator lost",
    "Topic %s not found in cluster metadata",
)
"""Kafka-client (aiokafka) lines that report a retry in progress (a topic missing from the metadata is
one being created, e.g. the internal topics while workers start together)."""

_NUMBERS = re.compile(r"\d+(?:\.\d+)?")
_RETRIABLE_TYPES: tuple[type[BaseException], ...] = (ConnectionError, TimeoutError)
_RETRIABLE_KAFKA_NAMES = frozenset({"KafkaTimeoutError"})
"""Kafka client errors not marked retriable that still heal by retrying (a request that timed out)."""


def is_retriable(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a condition that heals by retrying. The first exception along the cause chain
    that declares ``retriable`` (Kafka's errors and pyconnect's own) decides, so an authentication
    failure wrapping a dropped connection stays an error; connection and timeout errors are retriable."""
    seen = 0
    while exc is not None and seen < 8:
        declared = getattr(exc, "retriable", None)
        if isinstance(declared, bool):
            return declared or type(exc).__name__ in _RETRIABLE_KAFKA_NAMES
        if isinstance(exc, _RETRIABLE_TYPES):
            return True
        exc = exc.__cause__ or exc.__context__
        seen += 1
    return False


def _about_retriable(record: logging.LogRecord) -> bool:
    if record.exc_info and is_retriable(record.exc_info[1]):
        return True
    args = record.args if isinstance(record.args, tuple) else ()
    if any(isinstance(arg, BaseException) and is_retriable(arg) for arg in args):
        return True
    if record.name.startswith("aiokafka") and isinstance(record.msg, str):
        return record.msg.startswith(RETRY_LINES)
    return False


@dataclass
class _Seen:
    shown_at: float
    held_back: int = 0


class RepeatGuard(logging.Filter):
    """The filter that applies the contract above; attach it to a handler."""

    def __init__(
        self, window_s: float = REPEAT_WINDOW_S, clock: Callable[[], float] = time.monotonic
    ) -> None:
        super().__init__()
        self.window_s = window_s
        self._clock = clock
        self._seen: OrderedDict[tuple[object, ...], _Seen] = OrderedDict()

    def filter(self, record: logging.LogRecord) -> bool:
        if record.levelno < logging.WARNING:
            return True
        if record.levelno == logging.ERROR and _about_retriable(record):
            record.levelno, record.levelname = logging.WARNING, logging.getLevelName(logging.WARNING)
        key = self._key(record)
        now = self._clock()
        seen = self._seen.get(key)
        if seen is not None and now - seen.shown_at < self.window_s:
            seen.held_back += 1
            return False
        if seen is not None and seen.held_back:
            record.msg = f"{record.getMessage()} ({seen.held_back} similar lines held back in the last {self.window_s:.0f} s)"
            record.args = None
        self._seen[key] = _Seen(now)
        self._seen.move_to_end(key)
        while len(self._seen) > MAX_TRACKED:
            self._seen.popitem(last=False)
        return True

    @staticmethod
    def _key(record: logging.LogRecord) -> tuple[object, ...]:
        """What makes two lines "the same": logger, level, the subject (first argument, verbatim) and
        the text with its numbers blanked (retry delays, counts and offsets change; words do not)."""
        args = record.args if isinstance(record.args, tuple) else ()
        subject = str(args[0]) if args else None
        try:
            text = record.getMessage()
        except Exception:
            text = str(record.msg)
        exc_type = type(record.exc_info[1]).__name__ if record.exc_info and record.exc_info[1] else None
        return (record.name, record.levelno, _NUMBERS.sub("#", text), subject, exc_type)


def configure_logging(
    level: str | int, *, aiokafka_level: int = logging.WARNING, log_format: str = "java"
) -> RepeatGuard:
    """Root logging for a process: lines in ``log_format`` (pyconnect.log_context: ``java``, ``kv`` or
    ``json``, each naming the connector and task a line is about), ``level``, the Kafka client at
    ``aiokafka_level``, and a :class:`RepeatGuard` on the handler this sets up. Handlers someone else
    installed before (an embedding application, a test runner) are left as they are. Returns the
    guard; an unknown format raises ValueError before anything is changed."""
    line_format = formatter(log_format)
    resolved = level.upper() if isinstance(level, str) else level
    root = logging.getLogger()
    existing = list(root.handlers)
    logging.basicConfig(level=resolved, format=LOG_FORMAT)
    root.setLevel(resolved)
    logging.getLogger("aiokafka").setLevel(aiokafka_level)
    guard = RepeatGuard()
    for handler in root.handlers:
        if handler not in existing:
            handler.addFilter(ContextFilter())
            handler.addFilter(guard)
            handler.setFormatter(line_format)
    return guard
