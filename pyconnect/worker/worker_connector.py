"""One connector instance on this worker, driven through its target states (Java's WorkerConnector).

Contract:
- ``start(target)`` initializes the instance and moves it to ``target``; ``transition_to`` moves
  it between STARTED (connector started, RUNNING), PAUSED (connector stopped, PAUSED) and STOPPED
  (connector stopped, STOPPED). A connector paused or stopped from the start is never started.
- An exception from the plugin's ``start``/``stop`` leaves the connector FAILED with the traceback
  as trace; it never escapes to the caller. A FAILED connector stays failed until restarted.
- Plugin methods go through :class:`~pyconnect.worker.plugin_calls.PluginCalls`: a plain
  ``start``/``stop``/``task_configs`` runs on a plugin thread, so one that blocks never blocks the
  loop. ``start`` has no bound (as in Java); :meth:`begin` runs it in a task this object owns so that
  the herder need not wait for it, and ``shutdown`` cancels a start still pending (a plain ``start``
  keeps its thread until it returns; the plugin's ``stop`` is still called).
- ``task_configs(max_tasks)`` asks a started connector for its task configs; each gets
  ``task.class`` added, as Java does (a sink connector's tasks also get its ``topics`` /
  ``topics.regex``). It is bounded by ``task_configs_timeout_s``: a connector that
  overruns is FAILED with a trace naming ``task_configs()`` (Java has no bound: its herder thread
  would hang there).
- ``shutdown()`` stops a started connector and reports UNASSIGNED; it is idempotent and bounded by
  ``stop_timeout_s`` (Java's fixed 5 s graceful connector stop): a ``stop`` that overruns is
  abandoned and logged as Java logs an unresponsive connector.
- Conditions (pyconnect.conditions): given the worker's ``conditions`` registry, the connector gets
  a board of its own as ``context.conditions``; while it runs, each change reports RUNNING again with
  the active conditions as the trace. A stop (pause, stop) clears the board; ``shutdown`` removes it
  from the registry.
- Calls come from one task at a time (the herder's); the plugin's own ``raise_error`` may arrive
  from anywhere on the loop.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from typing import Any

from pyconnect.api.sink import TOPICS_CONFIG, TOPICS_REGEX_CONFIG, SinkConnector
from pyconnect.concurrency import cancel_and_wait
from pyconnect.conditions import ConditionBoard, ConditionRegistry
from pyconnect.log_context import connector_scope
from pyconnect.protocol.internal_records import State, TargetState
from pyconnect.worker.failure_trace import failure_trace
from pyconnect.worker.plugin_calls import PluginCalls, PluginCallTimeout
from pyconnect.worker.status import StatusReporter

log = logging.getLogger(__name__)

TASK_CLASS_CONFIG = "task.class"
TASK_CONFIGS_TIMEOUT_S = 5.0
"""How long a connector's ``task_configs`` may take (the herder's loop waits for it)."""


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
        calls: PluginCalls | None = None,
        task_configs_timeout_s: float = TASK_CONFIGS_TIMEOUT_S,
        version: str | None = None,
        conditions: ConditionRegistry | None = None,
    ) -> None:
        self.name = name
        self.connector = connector
        self.config = dict(config)
        self._context = context
        self._reporter = reporter
        self._stop_timeout_s = stop_timeout_s
        self._calls = calls if calls is not None else PluginCalls()
        self._task_configs_timeout_s = task_configs_timeout_s
        self._starting: asyncio.Task[bool] | None = None
        self._target_after_start: TargetState | None = None
        self._started = False
        self._failed = False
        self._state: TargetState | None = None
        self._shut_down = False
        self._version = version
        self._conditions_registry = conditions
        self.conditions: ConditionBoard | None = None
        if conditions is not None:
            self.conditions = conditions.board(name, None, on_change=self._conditions_changed)
            context.conditions = self.conditions

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
        """The plugin's version as the worker asked it before the start (never called on the loop)."""
        return self._version

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

    def begin(
        self, target: TargetState, on_started: Callable[[bool, TargetState | None], None]
    ) -> asyncio.Task[bool]:
        """:meth:`start` in a task owned by this object; ``on_started(ok, state)`` when it ends (not
        when ``shutdown`` cancelled it). ``state`` is the target state the connector is in then, which
        differs from ``target`` when a transition arrived while the start was pending."""

        async def run() -> bool:
            ok = await self.start(target)
            while ok and self._target_after_start is not None:
                later, self._target_after_start = self._target_after_start, None
                ok = await self.transition_to(later)
            on_started(ok, self._state)
            return ok

        with connector_scope(self.name):  # the start task's lines name the connector
            self._starting = asyncio.create_task(run(), name=f"connector-start-{self.name}")
        return self._starting

    async def transition_to(self, target: TargetState) -> bool:
        """Move to ``target``; while :meth:`begin`'s start is pending, ``target`` is applied after it."""
        with connector_scope(self.name):
            if self._failed or self._shut_down:
                return False
            starting = self._starting
            if starting is not None and not starting.done() and asyncio.current_task() is not starting:
                self._target_after_start = target
                return True
            if target == TargetState.STARTED:
                if not self._started:
                    try:
                        await self._calls.call(self.name, "start", self.connector.start, self.config)
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
                self._reporter.report(self.name, State.RUNNING, self._trace(), version=self.version())
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

    def _trace(self) -> str | None:
        return self.conditions.trace() if self.conditions is not None else None

    def _conditions_changed(self) -> None:
        """The connector's conditions changed: RUNNING again (while it runs), with them as its trace."""
        if self._started and not self._failed and not self._shut_down and self._state == TargetState.STARTED:
            self._reporter.report(self.name, State.RUNNING, self._trace(), version=self.version())

    def fail(self, exc: BaseException) -> None:
        """Mark FAILED with the traceback (also the plugin's ``context.raise_error``)."""
        if self._shut_down:
            return
        self._failed = True
        trace = failure_trace(exc)
        log.error("Connector %s failed: %s", self.name, exc)
        self._reporter.report(self.name, State.FAILED, trace, version=self.version())

    async def task_configs(self, max_tasks: int) -> list[dict[str, str]]:
        with connector_scope(self.name):
            if not self.running:
                raise RuntimeError(f"connector {self.name} is not running")
            try:
                configs = await self._calls.call(
                    self.name,
                    "task_configs",
                    self.connector.task_configs,
                    max_tasks,
                    timeout=self._task_configs_timeout_s,
                )
            except PluginCallTimeout as exc:
                self.fail(exc)
                raise
            task_class = java_class_name(self.connector.task_class())
            extra = {TASK_CLASS_CONFIG: task_class}
            if isinstance(self.connector, SinkConnector):  # Java copies the sink's topics into each task
                for key in (TOPICS_CONFIG, TOPICS_REGEX_CONFIG):
                    if self.config.get(key) is not None:
                        extra[key] = self.config[key]
            return [{**{k: v for k, v in c.items()}, **extra} for c in configs]

    async def _stop_plugin(self) -> None:
        self._started = False
        try:
            await self._calls.call(self.name, "stop", self.connector.stop, timeout=self._stop_timeout_s)
        except PluginCallTimeout:
            log.error(
                "Connector '%s' failed to properly shut down within %g s, has become unresponsive, and "
                "may be consuming external resources. Correct the configuration for this connector or "
                "remove the connector. After fixing the connector, it may be necessary to restart this "
                "worker to release any consumed resources.",
                self.name,
                self._stop_timeout_s,
            )
        except Exception as exc:
            self.fail(exc)
        if self.conditions is not None:
            self.conditions.clear_all()

    async def shutdown(self) -> None:
        with connector_scope(self.name):
            if self._shut_down:
                return
            starting, self._starting = self._starting, None
            if starting is not None and not starting.done():
                await cancel_and_wait(starting, log=log)
            was_failed = self._failed
            if self._started:
                await self._stop_plugin()
            self._shut_down = True
            registry, self._conditions_registry = self._conditions_registry, None
            if registry is not None and self.conditions is not None:
                registry.remove(self.conditions)
            if not was_failed and not self._failed:
                self._reporter.report(self.name, State.UNASSIGNED)
            log.info("Completed shutdown for WorkerConnector{id=%s}", self.name)
