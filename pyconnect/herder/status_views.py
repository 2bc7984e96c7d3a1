"""The REST views of connector and task statuses, built from what the status store holds (pure).

Contract:
- :func:`connector_state_info` is ``GET /connectors/{c}/status``: the connector's status and each of its
  tasks', with the connector's type; :class:`~pyconnect.errors.NotFoundError` (404, Java's message) when
  the store has no status of the connector. :func:`task_state` is ``GET .../tasks/{t}/status``, likewise.
- :func:`restart_state_info` is the KIP-745 reply to ``POST .../restart?includeTasks=..&onlyFailed=..``:
  the statuses the restart plan was made from, with what it restarts shown as RESTARTING, each entry
  keeping its ``worker_id``, ``trace`` and ``version`` (Java's ``buildRestartPlan``; Strimzi stores this
  body as the connector's status).
- :class:`ConnectorTypes` answers a config's connector type, remembered per class (the plugins are fixed
  for the worker's life, and listings ask it for every connector).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping

from pyconnect.errors import NotFoundError
from pyconnect.herder.entities import ConnectorState, ConnectorStateInfo, ConnectorType, TaskState
from pyconnect.herder.requests import RestartAccepted
from pyconnect.protocol.internal_records import ConnectorStatus, State, TaskStatus
from pyconnect.protocol.task_id import ConnectorTaskId

__all__ = ["ConnectorTypes", "connector_state_info", "restart_state_info", "task_state"]


def _task(status: TaskStatus, state: str | None = None) -> TaskState:
    return TaskState(
        state or status.state.value, status.worker_id, status.trace, status.version, id=status.task_id.task
    )


def connector_state_info(
    name: str, status: ConnectorStatus | None, tasks: Iterable[TaskStatus], connector_type: ConnectorType
) -> ConnectorStateInfo:
    """``GET /connectors/{c}/status`` (see the module docstring)."""
    if status is None:
        raise NotFoundError(f"No status found for connector {name}")
    connector = ConnectorState(status.state.value, status.worker_id, status.trace, status.version)
    return ConnectorStateInfo(name, connector, [_task(t) for t in tasks], connector_type)


def task_state(task: ConnectorTaskId, status: TaskStatus | None) -> TaskState:
    """``GET /connectors/{c}/tasks/{t}/status`` (see the module docstring)."""
    if status is None:
        raise NotFoundError(f"No status found for task {task.connector}-{task.task}")
    return _task(status)


def restart_state_info(
    name: str, accepted: RestartAccepted, connector_type: ConnectorType
) -> ConnectorStateInfo:
    """The KIP-745 restart reply (see the module docstring)."""
    status = accepted.connector_status
    if status is None:
        raise NotFoundError(f"No status found for connector {name}")
    restarting = State.RESTARTING.value
    connector = ConnectorState(
        restarting if accepted.connector else status.state.value,
        status.worker_id,
        status.trace,
        status.version,
    )
    tasks = [_task(t, restarting if t.task_id in accepted.tasks else None) for t in accepted.task_statuses]
    return ConnectorStateInfo(name, connector, tasks, connector_type)


class ConnectorTypes:
    """A config's connector type, remembered per ``connector.class`` (``UNKNOWN`` when it cannot be
    resolved); ``resolve`` is the plugin registry's ``connector_type``."""

    def __init__(self, resolve: Callable[[str], object]) -> None:
        self._resolve = resolve
        self._known: dict[str, ConnectorType] = {}

    def of(self, config: Mapping[str, str | None]) -> ConnectorType:
        connector_class = config.get("connector.class") or ""
        known = self._known.get(connector_class)
        if known is None:
            try:
                known = ConnectorType(self._resolve(connector_class))
            except Exception:
                known = ConnectorType.UNKNOWN
            self._known[connector_class] = known
        return known
