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
seam: the leader claims write privileges (:meth:`ConfigStore.claim_write_privileges`) after each round
and again after a failed transactional write.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, Protocol

from pyconnect.config.client_configs import (
    client_id_base,
    fencable_producer_config,
    internal_producer_config,
    worker_client_config,
)
from pyconnect.errors import ConfigError, ConnectError
from pyconnect.kafka.fencable_writer import FencableConfigWriter
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
    encode_config_record,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.base import RecordLog, TopicSource
from pyconnect.stores.config_events import (
    ConfigListener,
    ignore_config_event,
)
from pyconnect.stores.config_state import ClusterConfigState, ConfigStateMachine
from pyconnect.stores.kafka_topic import InternalTopic
from pyconnect.stores.memory import MemoryTopic

log = logging.getLogger(__name__)

READ_WRITE_TOTAL_TIMEOUT_S = 30.0
CONFIG_TOPIC_CONFIG = "config.storage.topic"


class PrivilegedWriter(Protocol):
    """Writes the leader-only records in one transaction per call
    (:class:`~pyconnect.kafka.fencable_writer.FencableConfigWriter`)."""

    async def start(self) -> None: ...

    async def send(self, records: Sequence[tuple[bytes, bytes | None]], timeout: float) -> None: ...

    async def close(self) -> None: ...


WriterFactory = Callable[[], PrivilegedWriter]


class ConfigStore:
    """The config topic as a store: snapshots, listener callbacks and Java's write sequences.

    Created by the runtime (``from_worker_config``) or over a :class:`MemoryTopic` (:class:`MemoryConfigStore`).
    Startup: ``start()`` prepares the topic (create if missing: 1 partition, compacted; require
    compaction), reads it to the end, then fails with Java's ``ConfigError`` if the topic has more than
    one partition. ``start()``/``stop()`` are idempotent. All methods run on the event loop; records are
    applied by the log's tail task, one batch at a time, so a snapshot never shows half a record.
    """

    def __init__(self, topic: TopicSource, *, writer_factory: WriterFactory | None = None) -> None:
        self.topic = topic
        self._name = getattr(topic, "name", "config")
        self._state = ConfigStateMachine()
        self._listener: ConfigListener = ignore_config_event
        self._log: RecordLog | None = None
        self._started = False
        self._start_lock = asyncio.Lock()
        self._writer_factory = writer_factory
        self._transactional = writer_factory is not None
        self._privileged: PrivilegedWriter | None = None
        self.claim_failure: str | None = None
        """Why the latest claim of the write privileges failed (None: it did not, or none was tried)."""

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
            client_config=worker_client_config(worker),
            partitions=1,
            replication_factor=worker["config.storage.replication.factor"],
            topic_configs=worker.topic_settings("config.storage."),
            producer_config=internal_producer_config(client_id),
            consumer_config=consumer,
            worker_topic_config=CONFIG_TOPIC_CONFIG,
            purpose="connector configurations",
        )
        if eos not in ("enabled", "preparing"):
            return cls(topic)
        topic_name = topic.name
        producer = fencable_producer_config(worker, client_id)
        return cls(topic, writer_factory=lambda: FencableConfigWriter(topic_name, producer))

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
            await self.relinquish_write_privileges()
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

    @property
    def uses_fencable_writer(self) -> bool:
        """True with exactly-once source support ``preparing``/``enabled``: the leader must claim write
        privileges before any privileged write."""
        return self._transactional

    @property
    def holds_write_privileges(self) -> bool:
        return not self._transactional or self._privileged is not None

    async def claim_write_privileges(self) -> None:
        """Become the privileged (leader) writer: start the fencable producer, which fences any earlier
        leader's. A no-op without exactly-once source support or when already held."""
        if self._writer_factory is None or self._privileged is not None:
            return
        writer = self._writer_factory()
        try:
            await writer.start()
        except Exception as exc:
            await writer.close()
            self.claim_failure = str(exc) or type(exc).__name__
            raise ConnectError(
                f"Failed to create and initialize fencable producer for config topic: {exc}"
            ) from exc
        self.claim_failure = None
        self._privileged = writer

    async def relinquish_write_privileges(self) -> None:
        writer, self._privileged = self._privileged, None
        if writer is not None:
            await writer.close()

    async def _send(self, records: Iterable[ConfigRecord], deadline: float) -> None:
        encoded = [encode_config_record(r) for r in records]
        if self._transactional:
            writer = self._privileged
            if writer is None:
                why = f": {self.claim_failure}" if self.claim_failure else ""
                raise ConnectError(
                    f"Cannot produce to config topic without claiming write privileges first{why}"
                )
            try:
                await writer.send(encoded, max(0.0, deadline - _now()))
            except Exception:
                self._privileged = (
                    None  # the writer closed itself: claim again (Java's fencedFromConfigTopic)
                )
                raise
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

    async def put_target_state(
        self, connector: str, state: TargetState, *, read_back_timeout: float | None = None
    ) -> None:
        """Any worker may write a target state; waits for the broker's ack only (≤ 30 s). With
        ``read_back_timeout``, then reads the topic to its end within it (Java's ``stopConnector``), so
        the snapshot shows the new state; a timeout there is logged, not raised, as in Java."""
        await self._plain_write(TargetStateRecord(connector, state), "Error writing target state to Kafka")
        if read_back_timeout is None:
            return
        try:
            await self.refresh(read_back_timeout)
        except TimeoutError:
            log.warning(
                "Failed to read to end of config topic after writing the %s target state for connector %s",
                state.value,
                connector,
            )

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
