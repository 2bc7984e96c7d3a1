"""What a config-topic record tells the herder, as typed values (Java ``ConfigBackingStore.UpdateListener``).

:class:`~pyconnect.stores.config.ConfigStateMachine` returns these from ``apply``; the store hands each
one to its listener, a plain callable ``listener(event)``. Every event carries ``offset``: the config
offset right after the record that caused it (the store's ``offset`` at that moment), so a consumer
can tell whether an assignment it applied already counted the change.

Pure data, stdlib only.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pyconnect.protocol.internal_records import RestartRequest, SessionKeyRecord
from pyconnect.protocol.task_id import ConnectorTaskId


@dataclass(frozen=True, slots=True)
class ConnectorConfigUpdated:
    """``connector-C`` with a config: C was created or its config replaced."""

    connector: str
    offset: int


@dataclass(frozen=True, slots=True)
class ConnectorConfigRemoved:
    """``connector-C`` tombstone: C was deleted."""

    connector: str
    offset: int


@dataclass(frozen=True, slots=True)
class TaskConfigsCommitted:
    """``commit-C``: the task configs staged for C are in force (``tasks`` empty for a zero-task
    commit or an incomplete one)."""

    connector: str
    tasks: tuple[ConnectorTaskId, ...]
    offset: int


@dataclass(frozen=True, slots=True)
class TargetStateChanged:
    """``target-state-C`` moved an existing connector to another target state."""

    connector: str
    offset: int


@dataclass(frozen=True, slots=True)
class SessionKeyUpdated:
    """A new KIP-507 session key."""

    key: SessionKeyRecord
    offset: int


@dataclass(frozen=True, slots=True)
class RestartRequested:
    """``restart-connector-C`` (KIP-745)."""

    request: RestartRequest
    offset: int


@dataclass(frozen=True, slots=True)
class LoggerLevelChanged:
    """``logger-cluster-<namespace>`` (KIP-976)."""

    namespace: str
    level: str
    offset: int


ConfigEvent = (
    ConnectorConfigUpdated
    | ConnectorConfigRemoved
    | TaskConfigsCommitted
    | TargetStateChanged
    | SessionKeyUpdated
    | RestartRequested
    | LoggerLevelChanged
)

ConfigListener = Callable[[ConfigEvent], None]
"""Receives every event of records read after the store started; must not block."""


def ignore_config_event(event: ConfigEvent) -> None:
    """The listener until the herder sets its own."""
