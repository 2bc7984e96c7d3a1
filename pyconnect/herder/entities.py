"""What the herder answers with: Java's REST entities as plain data, with their exact JSON shapes.

Shapes (spec §4.4): ConnectorInfo ``{"name","config","tasks":[{"connector","task"}],"type"}``;
ConnectorStateInfo ``{"name","connector":{"state","worker_id"[,"version"][,"trace"]},"tasks":[{"id",
"state","worker_id"[,"version"][,"trace"]}],"type"}`` with tasks sorted by id, ``version`` (the plugin
version, Kafka 4) omitted when unknown and ``trace`` omitted when empty; TaskInfo
``{"id":{"connector","task"},"config"}``. Field order is Java's, so ``json.dumps`` of ``to_json()``
with compact separators gives Java's bytes.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pyconnect.protocol.internal_records import TargetState
from pyconnect.protocol.task_id import ConnectorTaskId


class ConnectorType(enum.Enum):
    SOURCE = "source"
    SINK = "sink"
    UNKNOWN = "unknown"


def initial_target_state(text: str) -> TargetState:
    """KIP-980 ``initial_state``: RUNNING / PAUSED / STOPPED, case-insensitive; ValueError otherwise."""
    mapping = {"RUNNING": TargetState.STARTED, "PAUSED": TargetState.PAUSED, "STOPPED": TargetState.STOPPED}
    try:
        return mapping[text.strip().upper()]
    except KeyError:
        raise ValueError(text) from None


def task_id_json(task: ConnectorTaskId) -> dict[str, Any]:
    return {"connector": task.connector, "task": task.task}


@dataclass(frozen=True)
class ConnectorInfo:
    name: str
    config: Mapping[str, str]
    tasks: Sequence[ConnectorTaskId]
    type: ConnectorType

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "config": dict(self.config),
            "tasks": [task_id_json(t) for t in self.tasks],
            "type": self.type.value,
        }


@dataclass(frozen=True)
class TaskInfo:
    id: ConnectorTaskId
    config: Mapping[str, str]

    def to_json(self) -> dict[str, Any]:
        return {"id": task_id_json(self.id), "config": dict(self.config)}


@dataclass(frozen=True)
class AbstractState:
    state: str
    worker_id: str | None
    trace: str | None = None
    version: str | None = None

    def _fields(self) -> dict[str, Any]:
        body: dict[str, Any] = {"state": self.state, "worker_id": self.worker_id}
        if self.version is not None:
            body["version"] = self.version
        if self.trace:
            body["trace"] = self.trace
        return body


@dataclass(frozen=True)
class ConnectorState(AbstractState):
    def to_json(self) -> dict[str, Any]:
        return self._fields()


@dataclass(frozen=True)
class TaskState(AbstractState):
    id: int = 0

    def to_json(self) -> dict[str, Any]:
        return {"id": self.id, **self._fields()}


@dataclass(frozen=True)
class ConnectorStateInfo:
    name: str
    connector: ConnectorState
    tasks: Sequence[TaskState] = field(default_factory=tuple)
    type: ConnectorType = ConnectorType.UNKNOWN

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "connector": self.connector.to_json(),
            "tasks": [t.to_json() for t in sorted(self.tasks, key=lambda t: t.id)],
            "type": self.type.value,
        }
