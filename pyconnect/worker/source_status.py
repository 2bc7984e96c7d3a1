"""What a source task reports about itself: its state and, while RUNNING, its conditions as the trace.

Contract:
- ``SourceTaskStatus(task_id, reporter, context, active)`` gives the task a condition board: the
  context's own, or one it registers in the worker's condition registry (the context's metrics hub,
  else a private registry) and removes at ``forget()`` (idempotent).
- ``running()``, ``paused()``, ``failed(exc)``, ``unassigned()`` report that state with the task's
  ``version`` (asked once when the task began). While RUNNING, a change of the task's conditions
  reports RUNNING again with the board's trace (``None``: none), but only while ``active()`` says the
  task is STARTED and not stopping, and only when the trace changed.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from pyconnect.api.source import SourceTaskContext
from pyconnect.conditions import ConditionBoard, ConditionRegistry
from pyconnect.protocol.internal_records import State
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.failure_trace import failure_trace
from pyconnect.worker.status import StatusReporter


class SourceTaskStatus:
    """The status reports of one source task (see the module contract)."""

    def __init__(
        self,
        task_id: ConnectorTaskId,
        reporter: StatusReporter,
        context: SourceTaskContext,
        active: Callable[[], bool],
    ) -> None:
        self._id = task_id
        self._reporter = reporter
        self._active = active
        self._registry: ConditionRegistry | None = None
        if context.conditions is None:
            self._registry = (
                context.metrics.conditions if context.metrics is not None else ConditionRegistry()
            )
            board = self._registry.board(task_id.connector, task_id.task, on_change=self._conditions_changed)
            context = dataclasses.replace(context, conditions=board)
        assert context.conditions is not None
        self.context = context
        """The task's context, with its condition board."""
        self.conditions: ConditionBoard = context.conditions
        self.version: str | None = None
        self._problem: str | None = None
        self._running = False

    def running(self) -> None:
        self._running = True
        self._reporter.report(self._id, State.RUNNING, self._problem, self.version)

    def paused(self) -> None:
        self._running = False
        self._reporter.report(self._id, State.PAUSED, version=self.version)

    def failed(self, exc: BaseException) -> None:
        self._running = False
        self._reporter.report(self._id, State.FAILED, failure_trace(exc), self.version)

    def unassigned(self) -> None:
        self._reporter.report(self._id, State.UNASSIGNED)

    def stopped_running(self) -> None:
        """The loop ended: condition changes are no longer reported."""
        self._running = False

    def forget(self) -> None:
        """The task is done: its conditions leave the worker's registry (idempotent)."""
        registry, self._registry = self._registry, None
        if registry is not None:
            registry.remove(self.conditions)

    def _conditions_changed(self) -> None:
        text = self.conditions.trace()
        if text == self._problem:
            return
        self._problem = text
        if self._running and self._active():
            self._reporter.report(self._id, State.RUNNING, text, self.version)
