"""Spot leaked tasks and clients: "Task was destroyed but it is pending" and "Unclosed AIOKafka...".

Both reach the log only late (when the garbage collector finalizes the task or client) and through
asyncio's exception handler or a ``ResourceWarning`` in ``__del__``, so neither raises in the code
that leaked. The test suite fails on them (see ``tests/leak_guard.py``) with two watchers:

- :class:`LeakRecorder`, in this process: a handler on the ``asyncio`` logger (where the loop's
  default exception handler writes both messages) and a ``sys.unraisablehook`` for the
  ``ResourceWarning`` raised from a client's ``__del__`` when warnings are errors.
- :data:`PROCESS_LOGS`, for processes the tests start: :class:`~pyconnect.testing.connect_worker.OwnedProcess`
  registers each log it launches; :meth:`LogWatch.new_leaks` returns the leak lines written since the
  previous call.
"""

from __future__ import annotations

import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

LEAK_MARKERS = ("Task was destroyed but it is pending", "Unclosed AIOKafka")


def is_leak(text: str) -> bool:
    return any(marker in text for marker in LEAK_MARKERS)


def leak_lines(text: str) -> list[str]:
    """The lines of ``text`` (a log) that report a leak."""
    return [line for line in text.splitlines() if is_leak(line)]


class LeakRecorder(logging.Handler):
    """Collects leak reports of this process while installed; :meth:`since` reads them by position."""

    def __init__(self) -> None:
        super().__init__(logging.ERROR)
        self._found: list[str] = []
        self._lock = threading.Lock()
        self._previous_hook: Callable[[Any], Any] | None = None

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if is_leak(message):
            self._add(message.splitlines()[0] + _detail(message))

    def _unraisable(self, unraisable: Any) -> None:
        text = f"{unraisable.exc_type.__name__}: {unraisable.exc_value}"
        if is_leak(text):
            self._add(text)
        if self._previous_hook is not None:
            self._previous_hook(unraisable)

    def _add(self, line: str) -> None:
        with self._lock:
            self._found.append(line)

    def install(self) -> None:
        """Listen on the ``asyncio`` logger and chain ``sys.unraisablehook``; idempotent."""
        logging.getLogger("asyncio").addHandler(self)
        if self._previous_hook is None:
            self._previous_hook = sys.unraisablehook
            sys.unraisablehook = self._unraisable

    def uninstall(self) -> None:
        logging.getLogger("asyncio").removeHandler(self)
        if self._previous_hook is not None:
            if sys.unraisablehook == self._unraisable:
                sys.unraisablehook = self._previous_hook
            self._previous_hook = None

    def mark(self) -> int:
        with self._lock:
            return len(self._found)

    def since(self, mark: int) -> list[str]:
        with self._lock:
            return self._found[mark:]


def _detail(message: str) -> str:
    """The ``task: <Task ...>`` line of a destroyed-task report, which names the coroutine."""
    rest = message.splitlines()[1:]
    return f" ({rest[0].strip()[:300]})" if rest else ""


class LogWatch:
    """Log files of started processes and how far each was scanned."""

    def __init__(self) -> None:
        self._offsets: dict[Path, int] = {}
        self._lock = threading.Lock()

    def watch(self, path: Path) -> None:
        """Scan ``path`` from its current end on (a log appended to across restarts keeps its place)."""
        path = Path(path).resolve()
        with self._lock:
            if path not in self._offsets:
                self._offsets[path] = path.stat().st_size if path.exists() else 0

    def new_leaks(self) -> list[str]:
        """Leak lines each watched log gained since the previous call, prefixed with the log's path."""
        found: list[str] = []
        with self._lock:
            for path, offset in self._offsets.items():
                try:
                    with open(path, "rb") as log:
                        log.seek(offset)
                        data = log.read()
                except OSError:
                    continue
                complete = data.rfind(b"\n") + 1
                self._offsets[path] = offset + complete
                found += [f"{path}: {line}" for line in leak_lines(data[:complete].decode(errors="replace"))]
        return found


PROCESS_LOGS = LogWatch()
"""The logs of every process started through ``OwnedProcess.start`` in this interpreter."""
