"""How the worker reports connector and task state changes (Java's ConnectorStatus/TaskStatus listeners).

The herder implements ``StatusReporter`` over the status store (stamping its worker id and the
group generation); tests use a list. Calls come from the event loop, in the order the states
happen; implementations must not block.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from pyconnect.protocol.internal_records import State
from pyconnect.protocol.task_id import ConnectorTaskId

Item = str | ConnectorTaskId
log = logging.getLogger(__name__)


class StatusReporter(Protocol):
    def report(
        self, item: Item, state: State, trace: str | None = None, version: str | None = None
    ) -> None: ...


class RecordingReporter:
    """Keeps every report in order; for tests and for the standalone mode's in-memory status."""

    def __init__(self) -> None:
        self.reports: list[tuple[Item, State, str | None]] = []

    def report(self, item: Item, state: State, trace: str | None = None, version: str | None = None) -> None:
        self.reports.append((item, state, trace))

    def states(self, item: Item) -> list[State]:
        return [state for reported, state, _ in self.reports if reported == item]


class ObservedReporter:
    """Passes one connector's or task's reports to ``report`` after telling the metrics about them
    (Java's metric-recording status listeners): ``on_state`` sees every state; ``startup(True)`` is
    called at the first RUNNING, ``startup(False)`` at a FAILED before any RUNNING (a startup that
    failed); later reports leave the startup alone. A failure to record is logged; the report goes on."""

    def __init__(
        self,
        report: Callable[[Item, State, str | None, str | None], None],
        on_state: Callable[[State], None],
        startup: Callable[[bool], None],
    ) -> None:
        self._report = report
        self._on_state = on_state
        self._startup = startup
        self._started = False

    def report(self, item: Item, state: State, trace: str | None = None, version: str | None = None) -> None:
        try:
            self._on_state(state)
            if not self._started and state in (State.RUNNING, State.FAILED):
                self._started = True
                self._startup(state == State.RUNNING)
        except Exception:
            log.exception("%s: recording state %s in the metrics failed", item, state.value)
        self._report(item, state, trace, version)
