"""One connector instance on this worker, driven through its target states (Java's WorkerConnector).

Contract:
- ``start(target)`` initializes the instance and moves it to ``target``; ``transition_to`` moves
  it between STARTED (connector started, RUNNING), PAUSED (connector stopped, PAUSED) and STOPPED
  (connector stopped, STOPPED). A connector paused or stopped from the start is never started.
- An exception from the plugin's ``start``/``stop`` leaves the connector FAILED with the traceback
  as trace; it never escapes to the caller. A FAILED connector stays failed until restarted.
- ``task_configs(max_tasks)`` asks a started connector for its task configs; each gets
  ``task.class`` added, as Java does.
- ``shutdown()`` stops a started connector and reports UNASSIGNED; it is idempotent and bounded by
  ``stop_timeout_s`` (Java's fixed 5 s graceful connector stop).
- Calls come from one task at a time (the herder's); the plugin's own ``raise_error`` may arrive
  from anywhere on the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping
from typing import Any

from pyconnect.log_context import connector_scope
from pyconnect.protocol.internal_records import State, TargetState
from pyconnect.worker.failure_trace import failure_trace
from pyconnect.worker.maybe_await import maybe_await
from pyconnect.worker.status import StatusReporter

log = logging.getLogger(__name__)

TASK_CLASS_CONFIG = "task.class"


def java_class_name(cls: type) -> str:
    """The Java class name a plugin declares (``java_class`` attribute), else its Python path."""
    return str(getattr(cls, "java_class", None) or f"{cls.__module__}.{cls.__qualname__}")


class WorkerConnector:
    def __init__(
        self,
        name: str,
        connector: Any,
        config: Mapping[str, str],
        context: Any,
        reporter: StatusReporter,
        *,
        stop_timeout_s: float = 5.0,
    ) -> None:
        self.name = name
        self.connector = connector
        self.config = dict(config)
        self._context = context
        self._reporter = reporter
        self._stop_timeout_s = stop_timeout_s
        self._started = False
        self._failed = False
        self._state: TargetState | None = None
        self._shut_down = False

    @property
    def running(self) -> bool:
        return self._started and not self._failed

    @property
    def failed(self) -> bool:
        return self._failed

    @property
    def target_state(self) -> TargetState | None:
        return self._state

    def version(self) -> str | None:
        try:
            return str(self.connector.version())
        except Exception:
            return None

    async def start(self, target: TargetState) -> bool:
        """Initialize and move to ``target``; False when the connector failed."""
        with connector_scope(self.name):
            log.info("Creating connector %s of type %s", self.name, self.config.get("connector.class"))
            try:
                self.connector.initialize(self._context)
            except Exception as exc:
                self.fail(exc)
                return False
            return await self.transition_to(target)

    async def transition_to(self, target: TargetState) -> bool:
        with connector_scope(self.name):
            if self._failed or self._shut_down:
                return False
            if target == TargetState.STARTED:
                if not self._started:
                    try:
                        await maybe_await(self.connector.start(self.config))
                    except asyncio.CancelledError:
                        # Stopped while starting: the plugin releases what its start opened.
                        await self._stop_plugin()
                        raise
                    except Exception as exc:
                        self.fail(exc)
                        return False
                    self._started = True
                    log.info("Finished creating connector %s", self.name)
                self._state = target
                self._reporter.report(self.name, State.RUNNING, version=self.version())
                return True
            if self._started:
                await self._stop_plugin()
                if self._failed:
                    return False
            self._state = target
            self._reporter.report(
                self.name,
                State.PAUSED if target == TargetState.PAUSED else State.STOPPED,
                version=self.version(),
            )
            return True

    def fail(self, exc: BaseException) -> None:
        """Mark FAILED with the traceback (also the plugin's ``context.raise_error``)."""
        if self._shut_down:
            return
        self._failed = True
        trace = failure_trace(exc)
        log.error("Connector %s failed: %s", self.name, exc)
        self._reporter.report(self.name, State.FAILED, trace, version=self.version())

    def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        with connector_scope(self.name):
            if not self.running:
                raise RuntimeError(f"connector {self.name} is not running")
            configs = self.connector.task_configs(max_tasks)
            task_class = java_class_name(self.connector.task_class())
            return [{**{k: v for k, v in c.items()}, TASK_CLASS_CONFIG: task_class} for c in configs]

    async def _stop_plugin(self) -> None:
        self._started = False
        try:
            await asyncio.wait_for(maybe_await(self.connector.stop()), self._stop_timeout_s)
        except TimeoutError:
            log.error("Connector %s did not stop within %.0f s", self.name, self._stop_timeout_s)
        except Exception as exc:
            self.fail(exc)

    async def shutdown(self) -> None:
        with connector_scope(self.name):
            if self._shut_down:
                return
            was_failed = self._failed
            if self._started:
                await self._stop_plugin()
            self._shut_down = True
            if not was_failed and not self._failed:
                self._reporter.report(self.name, State.UNASSIGNED)
            log.info("Completed shutdown for WorkerConnector{id=%s}", self.name)
