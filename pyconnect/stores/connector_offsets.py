"""A source connector's (or task's) view of its offsets: the worker's offsets topic, or its own
``offsets.storage.topic`` backed by the worker's (Java ``ConnectorOffsetBackingStore``).

Which store serves a connector (Java ``Worker.offsetStoreFor*``; :func:`offsets_topic_for`):
- Without exactly-once support, a connector gets a store of its own only when its config names an
  ``offsets.storage.topic`` and the worker permits connector topics (distributed and dedicated mode;
  a standalone worker keeps everything in its file). Else it uses the worker's store.
- With exactly-once support, a connector's offsets live where its task producer writes: its
  ``offsets.storage.topic``, else the worker's topic name, on the cluster the producer reaches.
- When that topic is the worker's own (same name, same bootstrap servers), the worker's store serves
  it; Java then builds a second reader of the same topic, which reads the same records.

Contract of :class:`ConnectorOffsets` (same methods as the worker's store, so the task loop, the
connector's offset reader and the KIP-875 paths use either):
- ``get`` answers from the primary store only. Java merges the worker store's answer and then the
  connector store's, but the connector store answers every key (``null`` when absent), so a partition
  absent from the connector's topic reads as absent even when the worker's topic has it: a connector
  given a new ``offsets.storage.topic`` starts over (checked against the 4.3.1 jars; the spec's
  "reads fall back to the worker topic" does not hold for lookups).
- ``connector_partitions`` is the union of both stores; ``connector_offsets`` (``GET .../offsets``)
  lists every partition of that union with the primary's offset, ``None`` when it has none (Java
  shows ``"offset": null`` for a partition only the worker's topic knows).
- ``set`` writes the primary first, then a best-effort copy to the worker store (its failure is
  logged, not raised). When the batch holds tombstones, they go to the worker store first and a
  failure there fails the write before anything reaches the primary (Java's ``ChainedOffsetWriteFuture``:
  a reset must never leave the worker topic holding offsets the connector topic dropped).
- Under exactly-once the primary is written by the task's own transactional producer inside its
  transaction (:class:`~pyconnect.kafka.task_transactions.TaskTransactions`); this object then only
  does the worker-store half: ``copy_tombstones_first`` before the transaction and
  ``copy_after_commit`` once it committed.
- ``start()`` (idempotent) creates the connector topic if missing, with the worker's offsets-topic
  settings, and reads it to the end; ``stop()`` closes what this object opened. The worker's store is
  never started or stopped here: the worker owns it.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pyconnect.config.client_configs import (
    client_overrides,
    connector_admin_config,
    internal_producer_config,
    task_consumer_config,
)
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConnectError, DataError
from pyconnect.protocol.internal_records import InternalRecordError, encode_offset_value, freeze
from pyconnect.stores.kafka_topic import InternalTopic
from pyconnect.stores.offset_index import Offset, OffsetIndex, Partition
from pyconnect.stores.offsets import OffsetStore

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OffsetsTopicChoice:
    """Where a connector's offsets live: ``topic`` on the cluster of ``bootstrap_servers``;
    ``own_store`` is False when that is the worker's topic (the worker's store serves it)."""

    topic: str
    bootstrap_servers: str
    own_store: bool


def _servers(value: Any) -> frozenset[str]:
    items = value if isinstance(value, list | tuple) else str(value or "").split(",")
    return frozenset(s.strip() for s in items if str(s).strip())


def offsets_topic_for(
    worker: WorkerConfig, connector_config: Mapping[str, Any], producer_config: Mapping[str, Any]
) -> OffsetsTopicChoice:
    """Java ``Worker.offsetStoreFor{Regular,ExactlyOnce}Source{Task,Connector}``: which topic holds the
    connector's offsets (see the module docstring). ``producer_config`` is the task producer's (its
    ``bootstrap.servers`` names the cluster the records, and so the offsets, go to)."""
    if not worker.connector_offsets_topics_permitted:  # a standalone worker: its offsets file
        return OffsetsTopicChoice("", worker.bootstrap_servers_string, own_store=False)
    named = connector_config.get("offsets.storage.topic")
    named = str(named).strip() if named is not None and str(named).strip() else None
    worker_topic = worker.offset_storage_topic
    bootstrap = str(producer_config.get("bootstrap.servers") or worker.bootstrap_servers_string)
    if named is None and not worker.exactly_once_source_enabled:
        return OffsetsTopicChoice(worker_topic, worker.bootstrap_servers_string, own_store=False)
    topic = named or worker_topic
    same = topic == worker_topic and _servers(bootstrap) == _servers(worker.bootstrap_servers_string)
    return OffsetsTopicChoice(topic, bootstrap, own_store=not same)


def connector_offsets_store(
    worker: WorkerConfig,
    connector: str,
    connector_config: Mapping[str, Any],
    producer_config: Mapping[str, Any],
    *,
    client_label: str,
    cluster_id: str,
    consumer_overrides: Mapping[str, Any] | None = None,
    admin_overrides: Mapping[str, Any] | None = None,
    read_only: bool = False,
) -> OffsetStore:
    """The Kafka-backed store of a connector's own offsets topic (unstarted). Its clients reach the
    cluster the task producer writes to (``producer_config``'s connection keys); the consumer reads
    ``read_committed`` unless the connector's consumer overrides say otherwise (Java's default for
    both modes), the admin creates the topic with the worker's ``offset.storage.*`` settings."""
    choice = offsets_topic_for(worker, connector_config, producer_config)
    admin = connector_admin_config(
        worker, f"connector-adminclient-{client_label}", cluster_id, admin_overrides
    )
    consumer = task_consumer_config(
        worker, "", f"connector-consumer-{client_label}", cluster_id, consumer_overrides
    )
    consumer.pop("group.id", None)
    consumer.setdefault("isolation.level", "read_committed")
    if worker.exactly_once_source_enabled:
        consumer["isolation.level"] = "read_committed"
    connection = {
        k: v
        for k, v in producer_config.items()
        if k == "bootstrap.servers" or k.startswith(("security.", "sasl.", "ssl."))
    }
    producer = {
        **{k: v for k, v in producer_config.items() if k != "transactional.id"},
        **internal_producer_config(
            f"connector-offsets-producer-{client_label}", give_up_after_ms=int(worker.offset_flush_timeout_ms)
        ),
    }
    return OffsetStore(
        InternalTopic(
            name=choice.topic,
            client_config={**admin, **connection},
            partitions=worker.offset_storage_partitions,
            replication_factor=worker.offset_storage_replication_factor,
            topic_configs=worker.topic_settings("offset.storage."),
            producer_config=producer,
            consumer_config={**consumer, **connection},
            worker_topic_config="offsets.storage.topic",
            purpose=f"the offsets of connector {connector}",
        ),
        read_only=read_only,
    )


def connector_offsets_for(
    worker: WorkerConfig,
    worker_store: OffsetIndex,
    connector: str,
    connector_config: Mapping[str, Any],
    producer_config: Mapping[str, Any],
    *,
    client_label: str,
    cluster_id: str,
    read_only: bool = False,
) -> ConnectorOffsets:
    """The view of ``connector``'s offsets its task (``client_label`` ``C-N``), connector (``C``) or a
    KIP-875 request uses (unstarted; see the module docstring). ``read_only``: the connector's own
    store opens no producer (an exactly-once task writes it through its transactional producer).
    Raises ``ValueError`` when the override policy refuses the connector's client overrides."""
    choice = offsets_topic_for(worker, connector_config, producer_config)
    if not choice.own_store:
        return ConnectorOffsets.worker_only(worker_store)
    policy = worker.connector_client_config_override_policy
    store = connector_offsets_store(
        worker,
        connector,
        connector_config,
        producer_config,
        client_label=client_label,
        cluster_id=cluster_id,
        consumer_overrides=client_overrides(connector_config, policy, "consumer"),
        admin_overrides=client_overrides(connector_config, policy, "admin"),
        read_only=read_only,
    )
    return ConnectorOffsets(store, worker_store, owns_primary=True)


class ConnectorOffsets:
    """One connector's offsets: ``primary`` and, when the connector has a topic of its own, the
    worker's store as ``secondary`` (see the module docstring)."""

    def __init__(
        self, primary: OffsetIndex, secondary: OffsetIndex | None = None, *, owns_primary: bool
    ) -> None:
        self.primary = primary
        self.secondary = secondary
        self._owns_primary = owns_primary
        self._closed = False

    @classmethod
    def worker_only(cls, worker_store: OffsetIndex) -> ConnectorOffsets:
        return cls(worker_store, None, owns_primary=False)

    @property
    def primary_topic(self) -> str | None:
        topic = getattr(self.primary, "topic", None)
        return getattr(topic, "name", None)

    @property
    def has_own_topic(self) -> bool:
        return self._owns_primary

    async def start(self) -> None:
        """Open the connector's own store (idempotent; refused once stopped, so no late reader
        reopens what its owner closed)."""
        if self._closed:
            raise ConnectError(f"The offset store on {self.primary_topic} is closed")
        if self._owns_primary and isinstance(self.primary, OffsetStore):
            await self.primary.start()

    async def stop(self) -> None:
        self._closed = True
        if self._owns_primary and isinstance(self.primary, OffsetStore):
            await self.primary.stop()

    async def read_to_end(self) -> None:
        await self.start()
        await self.primary.read_to_end()
        if self.secondary is not None:
            await self.secondary.read_to_end()

    def key_bytes(self, connector: str, partition: Partition) -> bytes:
        return self.primary.key_bytes(connector, partition)

    async def get(self, connector: str, partitions: Sequence[Partition]) -> list[dict[str, Any] | None]:
        await self.start()
        return await self.primary.get(connector, partitions)

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        found: dict[Any, dict[str, Any]] = {}
        for store in (self.secondary, self.primary):
            if store is not None:
                for partition in store.connector_partitions(connector):
                    found.setdefault(freeze(partition), partition)
        return list(found.values())

    async def connector_offsets(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any] | None]]:
        """``(partition, offset)`` for ``GET /connectors/C/offsets`` (see the module docstring)."""
        if self.secondary is None:
            return list(await self.primary.connector_offsets(connector))
        await self.read_to_end()
        partitions = self.connector_partitions(connector)
        offsets = await self.primary.get(connector, partitions)
        return list(zip(partitions, offsets, strict=True))

    async def set(self, connector: str, offsets: Iterable[tuple[Partition, Offset | None]]) -> None:
        pairs = list(offsets)
        await self.start()
        if self.secondary is None:
            await self.primary.set(connector, pairs)
            return
        try:
            records = [(self.key_bytes(connector, p), encode_offset_value(o)) for p, o in pairs]
        except InternalRecordError as exc:
            raise DataError(str(exc)) from None
        await self.copy_tombstones_first(records)
        await self.primary.set_raw(dict(records))
        await self.copy_after_commit(records)

    async def copy_tombstones_first(self, records: Sequence[tuple[bytes, bytes | None]]) -> None:
        """The tombstones of ``records`` to the worker store, before the primary write; raises on failure."""
        tombstones = {key: None for key, value in records if value is None}
        if self.secondary is not None and tombstones:
            await self.secondary.set_raw(tombstones)

    async def copy_after_commit(self, records: Sequence[tuple[bytes, bytes | None]]) -> None:
        """The regular offsets of ``records`` to the worker store once the primary has them; a failure
        is logged (the connector's topic is the truth)."""
        regular = {key: value for key, value in records if value is not None}
        if self.secondary is None or not regular:
            return
        try:
            await self.secondary.set_raw(regular)
        except Exception as exc:
            log.warning(
                "Failed to write offsets to the worker's offsets topic after writing them to %s: %s",
                self.primary_topic,
                exc,
            )
