"""Runtime log levels for ``/admin/loggers`` (KIP-495, cluster scope KIP-976), over Python ``logging``.

Java's log4j level names are the REST vocabulary: ``OFF FATAL ERROR WARN INFO DEBUG TRACE ALL``
(case-insensitive on input). They map onto Python levels (``TRACE`` = 5, ``ALL`` = 1, ``OFF`` = 60,
``FATAL`` = ``CRITICAL``); levels are reported back in Java's names.

Contract (one instance per process, since ``logging`` is process-global):
- ``levels()``: the root logger and every logger with an explicit level, by name, with
  ``last_modified`` (epoch ms of the last change made through this object, else ``None``).
- ``level(name)``: the effective level of a known logger (``root`` is the root logger), else None.
- ``set_level(namespace, level)``: sets ``namespace`` and every known descendant logger (every
  logger for ``root``) and returns, sorted, the names of those whose level changed (``[]`` when none
  did), as Java's worker-scope PUT does; only those get a new ``last_modified``. An unknown level
  raises ``NotFoundError("invalid log level 'X'.")``: Java answers 404 there.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

from pyconnect.errors import NotFoundError

ROOT = "root"
JAVA_LEVELS = {
    "OFF": 60,
    "FATAL": logging.CRITICAL,
    "ERROR": logging.ERROR,
    "WARN": logging.WARNING,
    "INFO": logging.INFO,
    "DEBUG": logging.DEBUG,
    "TRACE": 5,
    "ALL": 1,
}


def java_level_name(level: int) -> str:
    """The Java name of a Python level (the most severe Java level not above it)."""
    best = "ALL"
    for name, value in sorted(JAVA_LEVELS.items(), key=lambda item: item[1]):
        if value <= level:
            best = name
    return best


def parse_level(text: str) -> int:
    value = JAVA_LEVELS.get(text.strip().upper())
    if value is None:
        raise NotFoundError(f"invalid log level '{text}'.")
    return value


class Loggers:
    def __init__(self, clock: Callable[[], float] = time.time) -> None:
        self._clock = clock
        self._last_modified: dict[str, int] = {}

    @staticmethod
    def _known() -> dict[str, logging.Logger]:
        return {
            name: logger
            for name, logger in logging.root.manager.loggerDict.items()
            if isinstance(logger, logging.Logger)
        }

    def _entry(self, name: str, logger: logging.Logger) -> dict[str, Any]:
        return {
            "level": java_level_name(logger.getEffectiveLevel()),
            "last_modified": self._last_modified.get(name),
        }

    def levels(self) -> dict[str, dict[str, Any]]:
        out = {ROOT: self._entry(ROOT, logging.getLogger())}
        for name, logger in sorted(self._known().items()):
            if logger.level != logging.NOTSET:
                out[name] = self._entry(name, logger)
        return out

    def level(self, name: str) -> dict[str, Any] | None:
        if name == ROOT:
            return self._entry(ROOT, logging.getLogger())
        logger = self._known().get(name)
        return None if logger is None else self._entry(name, logger)

    def set_level(self, namespace: str, level: str) -> list[str]:
        value = parse_level(level)
        now = int(self._clock() * 1000)
        if namespace == ROOT:
            affected = {ROOT: logging.getLogger(), **self._known()}
        else:
            logging.getLogger(namespace)
            affected = {
                name: logger
                for name, logger in self._known().items()
                if name == namespace or name.startswith(namespace + ".")
            }
        before = {name: java_level_name(logger.getEffectiveLevel()) for name, logger in affected.items()}
        for logger in affected.values():
            logger.setLevel(value)
        changed = sorted(
            name
            for name, logger in affected.items()
            if java_level_name(logger.getEffectiveLevel()) != before[name]
        )
        for name in changed:
            self._last_modified[name] = now
        return changed


LOGGERS = Loggers()
