"""Progress of a long audit on stderr: the step running, Spark's active stages and their tasks.

Contract:

- :class:`Progress` writes one line per event to ``out``: :meth:`Progress.step` a named step (with the
  seconds since the start), :meth:`Progress.note` a fact (records scanned, a file written).
- :meth:`Progress.watch` polls Spark's status tracker every ``interval_s`` seconds in a daemon thread
  while the ``with`` block runs and prints a line when the set of active stages or their completed
  task counts change (``stage 12 [collect at ...]: 3/4 tasks``); at most one line per stage and poll.
  The thread ends with the block (joined, bounded by ``interval_s`` plus a margin) and never raises
  into it: a failing poll ends the watch quietly.
- :func:`stage_line` is the pure formatting (unit-tested).
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Iterator
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from pyspark import SparkContext

_JOIN_MARGIN_S = 5.0


def stage_line(stage_id: int, name: str, completed: int, total: int, active: int) -> str:
    where = name.split("\n", 1)[0].strip()
    running = f", {active} running" if active else ""
    return f"  stage {stage_id} [{where}]: {completed}/{total} tasks{running}"


class Progress:
    def __init__(self, out: TextIO | None, *, interval_s: float = 2.0) -> None:
        self._out = out
        self._interval_s = interval_s
        self._started = time.monotonic()
        self._lock = threading.Lock()

    def _print(self, line: str) -> None:
        if self._out is None:
            return
        with self._lock:
            print(line, file=self._out, flush=True)

    def step(self, what: str) -> None:
        self._print(f"[{time.monotonic() - self._started:6.1f} s] {what}")

    def note(self, what: str) -> None:
        self._print(f"  {what}")

    @contextlib.contextmanager
    def watch(self, context: SparkContext) -> Iterator[None]:
        if self._out is None:
            yield
            return
        stop = threading.Event()
        tracker = context.statusTracker()

        def poll() -> None:
            seen: dict[int, tuple[int, int]] = {}
            while not stop.wait(self._interval_s):
                try:
                    for stage_id in sorted(tracker.getActiveStageIds()):
                        info = tracker.getStageInfo(stage_id)
                        if info is None:
                            continue
                        state = (info.numCompletedTasks, info.numActiveTasks)
                        if seen.get(stage_id) == state:
                            continue
                        seen[stage_id] = state
                        self._print(
                            stage_line(
                                stage_id,
                                info.name,
                                info.numCompletedTasks,
                                info.numTasks,
                                info.numActiveTasks,
                            )
                        )
                except Exception:
                    return

        thread = threading.Thread(target=poll, name="audit-progress", daemon=True)
        thread.start()
        try:
            yield
        finally:
            stop.set()
            thread.join(self._interval_s + _JOIN_MARGIN_S)
