"""OffsetStore: source connectors' offsets in the offsets topic (Java ``KafkaOffsetBackingStore``).

Keys are ``[connector, partition]`` JSON arrays and values offset maps (spec §2.3); a tombstone deletes
an offset. Java looks offsets up by the exact key bytes, so the store keeps ``key bytes -> value
bytes`` like Java and, because Java may have written a partition map's entries in another order, also
indexes every key by its parsed ``(connector, partition)``: lookups and writes for a partition that is
already in the topic reuse the bytes that are there, so our records compact with Java's and a Java
worker reads our offsets back.

Contract: ``start()`` reads the whole topic; ``get``/``get_raw``/``connector_offsets`` read to the end
first (Java's ``get``); ``set``/``set_raw`` return once the broker acknowledged every record (the
first failure is raised); records are applied by the log's tail task. Undecodable keys still count
as raw data (Java stores them too) but are not listed as connector partitions; nothing stops the store.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from typing import Any

from pyconnect.config.client_configs import client_id_base, internal_producer_config, worker_client_config
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConnectError
from pyconnect.kafka.log import LogRecord
from pyconnect.protocol.internal_records import (
    InternalRecordError,
    decode_offset_key,
    freeze,
)
from pyconnect.stores.base import RecordLog, TopicSource
from pyconnect.stores.kafka_topic import InternalTopic
from pyconnect.stores.memory import MemoryTopic
from pyconnect.stores.offset_index import OffsetIndex

log = logging.getLogger(__name__)


class OffsetStore(OffsetIndex):
    """Offsets of every source connector of the cluster; one per worker (plus per-connector topics)."""

    def __init__(self, topic: TopicSource, *, read_only: bool = False) -> None:
        self.topic = topic
        self._read_only = read_only
        self._log: RecordLog | None = None
        self._start_lock = asyncio.Lock()
        self._data: dict[bytes, bytes] = {}
        self._keys: dict[tuple[str, Any], bytes] = {}
        self._partitions: dict[str, dict[Any, dict[str, Any]]] = {}

    @classmethod
    def from_worker_config(cls, worker: WorkerConfig) -> OffsetStore:
        client_id = client_id_base(worker) + "offsets"
        consumer = {"client.id": client_id}
        if worker.exactly_once_source_enabled:
            consumer["isolation.level"] = "read_committed"
        return cls(
            InternalTopic(
                name=worker.offset_storage_topic,
                client_config=worker_client_config(worker),
                partitions=worker.offset_storage_partitions,
                replication_factor=worker.offset_storage_replication_factor,
                topic_configs=worker.topic_settings("offset.storage."),
                producer_config=internal_producer_config(
                    client_id, give_up_after_ms=int(worker.offset_flush_timeout_ms)
                ),
                consumer_config=consumer,
                worker_topic_config="offset.storage.topic",
                purpose="source connector offsets",
            )
        )

    async def start(self) -> None:
        async with self._start_lock:
            if self._log is not None:
                return
            await self.topic.prepare()
            current = self.topic.open(self._on_records, read_only=self._read_only)
            await current.start()
            self._log = current

    async def stop(self) -> None:
        async with self._start_lock:
            current, self._log = self._log, None
            if current is not None:
                await current.stop()

    def _require_log(self) -> RecordLog:
        if self._log is None:
            raise ConnectError(f"The offset store on {getattr(self.topic, 'name', '?')} is not started")
        return self._log

    async def read_to_end(self) -> None:
        await self._require_log().read_to_end()

    def _on_records(self, records: Sequence[LogRecord]) -> None:
        for record in records:
            key = record.key
            if key is not None:
                if record.value is None:
                    self._data.pop(key, None)
                else:
                    self._data[key] = record.value
            try:
                connector, partition = decode_offset_key(key)
            except InternalRecordError as exc:
                log.warning(
                    "Offsets record at %s-%d offset %d has a key that names no connector partition: %s",
                    record.topic,
                    record.partition,
                    record.offset,
                    exc,
                )
                continue
            if partition is None:
                continue
            frozen = freeze(partition)
            assert key is not None
            self._keys[(connector, frozen)] = key
            known = self._partitions.setdefault(connector, {})
            if record.value is None:
                known.pop(frozen, None)
            else:
                known[frozen] = partition

    async def set_raw(self, values: Mapping[bytes, bytes | None]) -> None:
        """Write raw records and wait for every acknowledgement (raises the first failure)."""
        current = self._require_log()
        acks = [await current.send(k, v) for k, v in values.items()]
        await asyncio.gather(*acks)


class MemoryOffsetStore(OffsetStore):
    """The in-memory twin (25 partitions by default, like the worker's offsets topic)."""

    def __init__(self, topic: MemoryTopic | None = None) -> None:
        super().__init__(topic if topic is not None else MemoryTopic("offsets", 25))
