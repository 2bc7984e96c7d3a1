"""The config topic's reader state (Java ``KafkaConfigBackingStore``'s record handling, spec §2.2):
:class:`ConfigStateMachine` applies records in topic order and :class:`ClusterConfigState` is its
immutable snapshot. Pure: no I/O, no asyncio (the reader contract is in :mod:`pyconnect.stores.config`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from pyconnect.protocol.internal_records import (
    CommitRecord,
    ConfigRecord,
    ConnectorConfigRecord,
    InternalRecordError,
    LoggerLevelRecord,
    RestartRequest,
    SessionKeyRecord,
    TargetState,
    TargetStateRecord,
    TaskConfigRecord,
    TaskCountRecord,
    decode_config_value,
    decode_key,
    loads,
)
from pyconnect.protocol.javahash import java_string_key
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.config_events import (
    ConfigEvent,
    ConnectorConfigRemoved,
    ConnectorConfigUpdated,
    LoggerLevelChanged,
    RestartRequested,
    SessionKeyUpdated,
    TargetStateChanged,
    TaskConfigsCommitted,
)


class LogRecord(Protocol):
    """One record of the config topic as the reader sees it (``pyconnect.kafka.log.LogRecord``)."""

    @property
    def topic(self) -> str: ...

    @property
    def partition(self) -> int: ...

    @property
    def offset(self) -> int: ...

    @property
    def key(self) -> bytes | None: ...

    @property
    def value(self) -> bytes | None: ...


log = logging.getLogger("pyconnect.stores.config")  # the logger name operators know

Config = Mapping[str, str | None]


def _frozen(mapping: Mapping[Any, Any]) -> Mapping[Any, Any]:
    return MappingProxyType(dict(mapping))


@dataclass(frozen=True)
class ClusterConfigState:
    """An immutable snapshot of the config topic (Java ``ClusterConfigState``), raw (unresolved) configs."""

    offset: int = -1
    session_key: SessionKeyRecord | None = None
    connector_task_counts: Mapping[str, int] = field(default_factory=dict)
    connector_configs: Mapping[str, Config] = field(default_factory=dict)
    connector_target_states: Mapping[str, TargetState] = field(default_factory=dict)
    task_configs: Mapping[ConnectorTaskId, Config] = field(default_factory=dict)
    connector_task_count_records: Mapping[str, int] = field(default_factory=dict)
    connector_task_config_generations: Mapping[str, int] = field(default_factory=dict)
    applied_connector_configs: Mapping[str, Config] = field(default_factory=dict)
    connectors_pending_fencing: frozenset[str] = frozenset()
    inconsistent_connectors: frozenset[str] = frozenset()

    def connectors(self) -> list[str]:
        """Names of the configured connectors, in Java ``String`` order."""
        return sorted(self.connector_configs, key=java_string_key)

    def contains(self, connector: str) -> bool:
        return connector in self.connector_configs

    def connector_config(self, connector: str) -> dict[str, str | None] | None:
        config = self.connector_configs.get(connector)
        return None if config is None else dict(config)

    def target_state(self, connector: str) -> TargetState | None:
        return self.connector_target_states.get(connector)

    def task_count(self, connector: str) -> int:
        """Tasks of the last commit (0 if none), even if the connector is inconsistent."""
        return self.connector_task_counts.get(connector, 0)

    def tasks(self, connector: str) -> list[ConnectorTaskId]:
        """``connector``'s task ids ``0..n-1``; empty while the connector is inconsistent."""
        if connector in self.inconsistent_connectors:
            return []
        return [ConnectorTaskId(connector, i) for i in range(self.connector_task_counts.get(connector, 0))]

    def task_config(self, task: ConnectorTaskId) -> dict[str, str | None] | None:
        config = self.task_configs.get(task)
        return None if config is None else dict(config)

    def all_task_configs(self, connector: str) -> list[dict[str, str | None]]:
        """Configs of ``tasks(connector)`` in task order (Java ``allTaskConfigs``)."""
        return [dict(self.task_configs[t]) for t in self.tasks(connector) if t in self.task_configs]

    def task_config_generation(self, connector: str) -> int | None:
        return self.connector_task_config_generations.get(connector)

    def task_count_record(self, connector: str) -> int | None:
        return self.connector_task_count_records.get(connector)

    def pending_fencing(self, connector: str) -> bool:
        return connector in self.connectors_pending_fencing

    def applied_connector_config(self, connector: str) -> dict[str, str | None] | None:
        """The connector config in force when its current task configs were committed."""
        config = self.applied_connector_configs.get(connector)
        return None if config is None else dict(config)


class ConfigStateMachine:
    """The reader of spec §2.2.3; sans-IO. ``apply`` returns the listener calls the record causes.

    ``snapshot()`` is built once per state: every record applied drops it, and it is taken again on
    the next call. Readers (REST listings ask it per connector) share one immutable copy.
    """

    def __init__(self) -> None:
        self.offset = -1
        self.session_key: SessionKeyRecord | None = None
        self.connector_task_counts: dict[str, int] = {}
        self.connector_configs: dict[str, Config] = {}
        self.connector_target_states: dict[str, TargetState] = {}
        self.task_configs: dict[ConnectorTaskId, Config] = {}
        self.deferred_task_updates: dict[str, dict[ConnectorTaskId, Config]] = {}
        self.inconsistent: set[str] = set()
        self.connector_task_count_records: dict[str, int] = {}
        self.connector_task_config_generations: dict[str, int] = {}
        self.applied_connector_configs: dict[str, Config] = {}
        self.connectors_pending_fencing: set[str] = set()
        self._snapshot: ClusterConfigState | None = None

    def snapshot(self) -> ClusterConfigState:
        if self._snapshot is None:
            self._snapshot = self._take_snapshot()
        return self._snapshot

    def _take_snapshot(self) -> ClusterConfigState:
        return ClusterConfigState(
            offset=self.offset,
            session_key=self.session_key,
            connector_task_counts=_frozen(self.connector_task_counts),
            connector_configs=_frozen(self.connector_configs),
            connector_target_states=_frozen(self.connector_target_states),
            task_configs=_frozen(self.task_configs),
            connector_task_count_records=_frozen(self.connector_task_count_records),
            connector_task_config_generations=_frozen(self.connector_task_config_generations),
            applied_connector_configs=_frozen(self.applied_connector_configs),
            connectors_pending_fencing=frozenset(self.connectors_pending_fencing),
            inconsistent_connectors=frozenset(self.inconsistent),
        )

    def apply_record(self, record: LogRecord) -> list[ConfigEvent]:
        """Apply one consumed record; raises ``InternalRecordError`` for records that are skipped."""
        value = loads(record.value)  # unparsable JSON: raises before the offset moves (as Java)
        self._snapshot = None
        self.offset = record.offset + 1
        return self.apply(decode_config_value(decode_key(record.key), value))

    def apply(self, record: ConfigRecord) -> list[ConfigEvent]:
        """Apply one decoded record; returns the events it causes for the listener."""
        self._snapshot = None
        if isinstance(record, TargetStateRecord):
            return self._target_state(record)
        if isinstance(record, ConnectorConfigRecord):
            return self._connector_config(record)
        if isinstance(record, TaskConfigRecord):
            if record.properties is None:
                log.error(
                    "Ignoring task configuration for task %s because it is unexpectedly null", record.task_id
                )
                return []
            self.deferred_task_updates.setdefault(record.task_id.connector, {})[record.task_id] = dict(
                record.properties
            )
            return []
        if isinstance(record, CommitRecord):
            return self._commit(record)
        if isinstance(record, RestartRequest):
            return [RestartRequested(record, self.offset)]
        if isinstance(record, TaskCountRecord):
            self.connector_task_count_records[record.connector] = record.task_count
            self.connectors_pending_fencing.discard(record.connector)
            return []
        if isinstance(record, SessionKeyRecord):
            self.session_key = record
            return [SessionKeyUpdated(record, self.offset)]
        if isinstance(record, LoggerLevelRecord):
            return [LoggerLevelChanged(record.namespace, record.level, self.offset)]
        raise InternalRecordError(f"unexpected config record {record!r}")

    def _target_state(self, record: TargetStateRecord) -> list[ConfigEvent]:
        name = record.connector
        if record.state is None:
            self.connector_target_states.pop(name, None)
            if name in self.connector_configs:
                self.connector_target_states[name] = TargetState.STARTED
            return []
        previous = self.connector_target_states.get(name)
        self.connector_target_states[name] = record.state
        if previous is not record.state and name in self.connector_configs:
            return [TargetStateChanged(name, self.offset)]
        return []

    def _connector_config(self, record: ConnectorConfigRecord) -> list[ConfigEvent]:
        name = record.connector
        if record.properties is None:
            self._remove_connector(name)
            log.info("Successfully processed removal of connector '%s'", name)
            return [ConnectorConfigRemoved(name, self.offset)]
        self.connector_configs[name] = dict(record.properties)
        self.connector_target_states.setdefault(name, TargetState.STARTED)
        return [ConnectorConfigUpdated(name, self.offset)]

    def _remove_connector(self, name: str) -> None:
        self.connector_configs.pop(name, None)
        self.connector_task_counts.pop(name, None)
        for task in [t for t in self.task_configs if t.connector == name]:
            del self.task_configs[task]
        self.deferred_task_updates.pop(name, None)
        self.applied_connector_configs.pop(name, None)

    def _commit(self, record: CommitRecord) -> list[ConfigEvent]:
        name = record.connector
        applied = self.connector_configs.get(name)
        if applied is None:
            self._remove_connector(name)
            log.debug(
                "Ignoring task configs for connector %s; it was deleted and compaction removed its config",
                name,
            )
            return []
        deferred = self.deferred_task_updates.get(name)
        present = {t.task for t in deferred} if deferred else set()
        updated: list[ConnectorTaskId] = []
        if not all(i in present for i in range(record.tasks)):
            log.debug(
                "Incomplete set of task configs for connector '%s' (probably compaction); not applying them",
                name,
            )
            self.inconsistent.add(name)
        else:
            if deferred:
                self.task_configs.update(deferred)
                updated = sorted(deferred)
                generation = self.connector_task_config_generations.get(name)
                self.connector_task_config_generations[name] = 0 if generation is None else generation + 1
            self.inconsistent.discard(name)
            self.applied_connector_configs[name] = applied
        if deferred:
            deferred.clear()
        self.connector_task_counts[name] = record.tasks
        self.connectors_pending_fencing.add(name)
        return [TaskConfigsCommitted(name, tuple(updated), self.offset)]
