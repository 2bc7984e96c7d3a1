"""ConfigStore: the cluster's connector/task configs and target states, from the config topic.

Java: ``KafkaConfigBackingStore`` (spec §2.2). Every worker tails the single-partition config topic
and runs the same reader state machine (:class:`ConfigStateMachine`), so all workers that have read
up to the same offset hold the same :class:`ClusterConfigState`.

Reader contract:
- Task configs (``task-C-N``) are staged per connector and become visible only when a ``commit-C``
  arrives that covers every id ``0..n-1`` (extra staged ids are allowed: compaction leaves stale
  ones). An incomplete commit marks C *inconsistent*: it has no tasks until the next complete commit.
- ``connector-C`` tombstones remove the connector's config, task count and task configs; the
  ``target-state-C`` tombstone that follows removes its target state. A target state may arrive
  before its connector (KIP-980 ``initial_state``); it is kept and applies when the config arrives.
- ``offset`` is the offset after the last record whose value was valid JSON (Java's converter
  accepted it), ``-1`` before any: the "config offset" of group metadata and assignments.
- Records that cannot be used are logged with topic/partition/offset and skipped.

Listener contract: the listener (``listener(event)``, events of :mod:`pyconnect.stores.config_events`)
is called plainly (sync) from the log's tail task (or from ``refresh``/writers that read to the end),
in topic order, only for records read after ``start()`` finished its initial read (restart requests
and logger levels read during startup are dropped, as in Java). A callback must not block; an exception from it is logged and the tail goes
on. Take a :meth:`ConfigStore.snapshot` inside the callback to see the state that includes the record.

Writers are coroutines; privileged writes (connector configs, deletions, task configs, session keys,
restart requests, fencing records) wait for the broker's acknowledgement and then read the topic to
the end, 30 s in total, like Java. Target state and logger level writes only wait for the ack.
Each write's records leave at once in closed batches (``send_now``) rather than after ``linger.ms``:
the writer waits for their acknowledgement anyway, so lingering would only add its delay.
With ``exactly.once.source.support`` ``preparing``/``enabled`` Java's leader writes privileged records
in transactions of a ``connect-cluster-<group>`` producer; that path is the :class:`PrivilegedWriter`
seam (not implemented yet: :meth:`ConfigStore.claim_write_privileges` raises for such stores).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any, Protocol

from pyconnect.errors import ConfigError, ConnectError
from pyconnect.kafka.log import LogRecord
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
    encode_config_record,
    loads,
)
from pyconnect.protocol.javahash import java_string_key
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.base import RecordLog, TopicSource
from pyconnect.stores.config_events import (
    ConfigEvent,
    ConfigListener,
    ConnectorConfigRemoved,
    ConnectorConfigUpdated,
    LoggerLevelChanged,
    RestartRequested,
    SessionKeyUpdated,
    TargetStateChanged,
    TaskConfigsCommitted,
    ignore_config_event,
)
from pyconnect.stores.kafka_topic import InternalTopic, client_config, client_id_base, producer_settings
from pyconnect.stores.memory import MemoryTopic

log = logging.getLogger(__name__)

READ_WRITE_TOTAL_TIMEOUT_S = 30.0
CONFIG_TOPIC_CONFIG = "config.storage.topic"

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


class PrivilegedWriter(Protocol):
    """Writes the leader-only records; Java uses a transactional producer with EOS (one transaction per call)."""

    async def send(self, records: Sequence[tuple[bytes, bytes | None]], timeout: float) -> None: ...


class ConfigStore:
    """The config topic as a store: snapshots, listener callbacks and Java's write sequences.

    Created by the runtime (``from_worker_config``) or over a :class:`MemoryTopic` (:class:`MemoryConfigStore`).
    Startup: ``start()`` prepares the topic (create if missing: 1 partition, compacted; require
    compaction), reads it to the end, then fails with Java's ``ConfigError`` if the topic has more than
    one partition. ``start()``/``stop()`` are idempotent. All methods run on the event loop; records are
    applied by the log's tail task, one batch at a time, so a snapshot never shows half a record.
    """

    def __init__(self, topic: TopicSource, *, transactional: bool = False) -> None:
        self.topic = topic
        self._name = getattr(topic, "name", "config")
        self._state = ConfigStateMachine()
        self._listener: ConfigListener = ignore_config_event
        self._log: RecordLog | None = None
        self._started = False
        self._start_lock = asyncio.Lock()
        self._transactional = transactional
        self._privileged: PrivilegedWriter | None = None

    @classmethod
    def from_worker_config(cls, worker: Any) -> ConfigStore:
        """The store of a distributed worker (``config.storage.*`` keys of a ``WorkerConfig``)."""
        client_id = client_id_base(worker) + "configs"
        eos = str(worker["exactly.once.source.support"]).lower()
        consumer = {"client.id": client_id}
        if eos == "enabled":
            consumer["isolation.level"] = "read_committed"
        topic = InternalTopic(
            name=worker["config.storage.topic"],
            client_config=client_config(worker),
            partitions=1,
            replication_factor=worker["config.storage.replication.factor"],
            topic_configs=worker.topic_settings("config.storage."),
            producer_config=producer_settings(client_id),
            consumer_config=consumer,
            worker_topic_config=CONFIG_TOPIC_CONFIG,
            purpose="connector configurations",
        )
        return cls(topic, transactional=eos in ("enabled", "preparing"))

    def set_update_listener(self, listener: ConfigListener) -> None:
        """Set before ``start()``; every :mod:`~pyconnect.stores.config_events` event goes to it from then on."""
        self._listener = listener

    async def start(self) -> None:
        async with self._start_lock:
            if self._started:
                return
            await self.topic.prepare()
            current = self.topic.open(self._on_records)
            await current.start()
            partitions = len(current.partitions)
            if partitions > 1:
                await current.stop()
                raise ConfigError(
                    f"Topic '{current.topic}' supplied via the '{CONFIG_TOPIC_CONFIG}' property is required to "
                    "have a single partition in order to guarantee consistency of connector configurations, but "
                    f"found {partitions} partitions."
                )
            self._log = current
            self._started = True
            log.info("Started config store on topic %s at offset %d", current.topic, self._state.offset)

    async def stop(self) -> None:
        async with self._start_lock:
            self._started = False
            self._privileged = None
            current, self._log = self._log, None
            if current is not None:
                await current.stop()

    # ---- reading

    def snapshot(self) -> ClusterConfigState:
        return self._state.snapshot()

    def contains(self, connector: str) -> bool:
        return connector in self._state.connector_configs

    @property
    def offset(self) -> int:
        return self._state.offset

    async def refresh(self, timeout: float) -> None:
        """Read the topic to the end (Java ``refresh``); ``TimeoutError`` after ``timeout`` seconds."""
        await asyncio.wait_for(self._require_log().read_to_end(), timeout)

    def _on_records(self, records: Sequence[LogRecord]) -> None:
        for record in records:
            try:
                events = self._state.apply_record(record)
            except InternalRecordError as exc:
                log.error(
                    "Skipping config record at %s-%d offset %d (key %r): %s",
                    record.topic,
                    record.partition,
                    record.offset,
                    record.key,
                    exc,
                )
                continue
            if not self._started:
                continue
            for event in events:
                try:
                    self._listener(event)
                except Exception:
                    log.exception(
                        "Config update listener failed on %s for record at %s-%d offset %d",
                        type(event).__name__,
                        record.topic,
                        record.partition,
                        record.offset,
                    )

    # ---- writing

    def _require_log(self) -> RecordLog:
        if self._log is None:
            raise ConnectError(f"The config store on {self._name} is not started")
        return self._log

    async def claim_write_privileges(self) -> None:
        """Become the privileged (leader) writer. A no-op unless exactly-once source support is on."""
        if self._transactional and self._privileged is None:
            raise ConnectError(
                "Failed to create and initialize fencable producer for config topic: transactional config topic "
                "writes (exactly.once.source.support=preparing/enabled) are not supported yet"
            )

    def relinquish_write_privileges(self) -> None:
        self._privileged = None

    async def _send(self, records: Iterable[ConfigRecord], deadline: float) -> None:
        encoded = [encode_config_record(r) for r in records]
        if self._transactional:
            if self._privileged is None:
                raise ConnectError("Cannot produce to config topic without claiming write privileges first")
            await self._privileged.send(encoded, max(0.0, deadline - _now()))
            return
        acks = await self._require_log().send_now(encoded, partition=0)
        await asyncio.wait_for(asyncio.gather(*acks), max(0.0, deadline - _now()))

    async def _read_to_end(self, deadline: float) -> None:
        await asyncio.wait_for(self._require_log().read_to_end(), max(0.0, deadline - _now()))

    async def _privileged_write(self, records: Sequence[ConfigRecord], failure: str) -> None:
        deadline = _now() + READ_WRITE_TOTAL_TIMEOUT_S
        try:
            await self._send(records, deadline)
            await self._read_to_end(deadline)
        except Exception as exc:
            if isinstance(exc, ConnectError):
                raise
            log.error("%s: %s", failure, exc)
            raise ConnectError(failure) from exc

    async def put_connector_config(
        self, connector: str, properties: Mapping[str, str | None], target_state: TargetState | None = None
    ) -> None:
        """Write ``connector-C`` (preceded by ``target-state-C`` when ``target_state`` is given), then read to end."""
        records: list[ConfigRecord] = []
        if target_state is not None:
            records.append(TargetStateRecord(connector, target_state))
        records.append(ConnectorConfigRecord(connector, dict(properties)))
        await self._privileged_write(records, "Error writing connector configuration to Kafka")

    async def remove_connector_config(self, connector: str) -> None:
        """Java's deletion: tombstones for ``connector-C`` then ``target-state-C`` (tasks/commit linger)."""
        await self._privileged_write(
            [ConnectorConfigRecord(connector, None), TargetStateRecord(connector, None)],
            "Error removing connector configuration from Kafka",
        )

    async def put_task_configs(self, connector: str, configs: Sequence[Mapping[str, str | None]]) -> None:
        """Read to end; write ``task-C-0..n-1``; read to end (if n > 0); write ``commit-C``; read to end."""
        deadline = _now() + READ_WRITE_TOTAL_TIMEOUT_S
        failure = "Error writing task configurations to Kafka"
        try:
            await self._read_to_end(deadline)
            tasks = [TaskConfigRecord(ConnectorTaskId(connector, i), dict(c)) for i, c in enumerate(configs)]
            if tasks:
                await self._send(tasks, deadline)
                await self._read_to_end(deadline)
            await self._send([CommitRecord(connector, len(tasks))], deadline)
            await self._read_to_end(deadline)
        except ConnectError:
            raise
        except Exception as exc:
            log.error("%s: %s", failure, exc)
            raise ConnectError(failure) from exc

    async def put_target_state(self, connector: str, state: TargetState) -> None:
        """Any worker may write a target state; waits for the broker's ack only (≤ 30 s)."""
        await self._plain_write(TargetStateRecord(connector, state), "Error writing target state to Kafka")

    async def put_logger_level(self, namespace: str, level: str) -> None:
        """``logger-cluster-<namespace>`` (KIP-976); waits for the broker's ack only (≤ 30 s)."""
        await self._plain_write(LoggerLevelRecord(namespace, level), "Error writing logger level to Kafka")

    async def _plain_write(self, record: ConfigRecord, failure: str) -> None:
        try:
            acks = await self._require_log().send_now([encode_config_record(record)], partition=0)
            await asyncio.wait_for(asyncio.gather(*acks), READ_WRITE_TOTAL_TIMEOUT_S)
        except ConnectError:
            raise
        except Exception as exc:
            log.error("%s: %s", failure, exc)
            raise ConnectError(failure) from exc

    async def put_session_key(self, session_key: SessionKeyRecord) -> None:
        await self._privileged_write([session_key], "Error writing session key to Kafka")

    async def put_restart_request(self, request: RestartRequest) -> None:
        await self._privileged_write([request], f"Error writing {request} to Kafka")

    async def put_task_count_record(self, connector: str, task_count: int) -> None:
        """``tasks-fencing-C`` (KIP-618), written after the leader fenced out older task generations."""
        await self._privileged_write(
            [TaskCountRecord(connector, task_count)], "Error writing task count record to Kafka"
        )


def _now() -> float:
    return asyncio.get_running_loop().time()


class MemoryConfigStore(ConfigStore):
    """The in-memory twin: the same store over a :class:`MemoryTopic` (shareable between instances)."""

    def __init__(self, topic: MemoryTopic | None = None) -> None:
        super().__init__(topic if topic is not None else MemoryTopic("config", 1))
