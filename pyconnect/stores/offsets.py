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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pyconnect.errors import ConnectError, DataError
from pyconnect.kafka.log import LogRecord
from pyconnect.protocol.internal_records import (
    InternalRecordError,
    decode_offset_key,
    decode_offset_value,
    encode_offset_key,
    encode_offset_value,
    freeze,
)
from pyconnect.stores.base import RecordLog, TopicSource
from pyconnect.stores.kafka_topic import InternalTopic, client_config, client_id_base, producer_settings
from pyconnect.stores.memory import MemoryTopic

log = logging.getLogger(__name__)

Partition = Mapping[str, Any]
Offset = Mapping[str, Any]


class OffsetStore:
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
    def from_worker_config(cls, worker: Any) -> OffsetStore:
        client_id = client_id_base(worker) + "offsets"
        consumer = {"client.id": client_id}
        if str(worker["exactly.once.source.support"]).lower() == "enabled":
            consumer["isolation.level"] = "read_committed"
        return cls(
            InternalTopic(
                name=worker["offset.storage.topic"],
                client_config=client_config(worker),
                partitions=worker["offset.storage.partitions"],
                replication_factor=worker["offset.storage.replication.factor"],
                topic_configs=worker.topic_settings("offset.storage."),
                producer_config=producer_settings(client_id),
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

    def key_bytes(self, connector: str, partition: Partition) -> bytes:
        """The key to use for ``partition``: the bytes already in the topic for it, else our encoding."""
        try:
            frozen = freeze(dict(partition))
        except TypeError:
            frozen = None
        if frozen is not None:
            existing = self._keys.get((connector, frozen))
            if existing is not None:
                return existing
        return encode_offset_key(connector, partition)

    async def get_raw(self, keys: Iterable[bytes]) -> dict[bytes, bytes | None]:
        """Java's ``get``: read to the end, then the value bytes stored for each exact key."""
        await self.read_to_end()
        return {k: self._data.get(k) for k in keys}

    async def get(self, connector: str, partitions: Sequence[Partition]) -> list[dict[str, Any] | None]:
        """The offsets of ``partitions`` (same order; ``None`` = none stored) after reading to the end."""
        try:
            keys = [self.key_bytes(connector, p) for p in partitions]
        except InternalRecordError as exc:
            raise DataError(str(exc)) from None
        await self.read_to_end()
        result: list[dict[str, Any] | None] = []
        for key in keys:
            raw = self._data.get(key)
            try:
                result.append(decode_offset_value(raw))
            except InternalRecordError as exc:
                log.error("Failed to deserialize offset for connector %s: %s", connector, exc)
                result.append(None)
        return result

    async def set_raw(self, values: Mapping[bytes, bytes | None]) -> None:
        """Write raw records and wait for every acknowledgement (raises the first failure)."""
        current = self._require_log()
        acks = [await current.send(k, v) for k, v in values.items()]
        await asyncio.gather(*acks)

    async def set(self, connector: str, offsets: Iterable[tuple[Partition, Offset | None]]) -> None:
        """Write ``(partition, offset)`` pairs of ``connector``; an offset ``None`` deletes (tombstone).

        Pairs rather than a dict because partitions are maps. Partitions and offsets must have string
        keys and primitive values (Java ``OffsetUtils``), else ``DataError`` before anything is written.
        """
        pairs = list(offsets)
        values: dict[bytes, bytes | None] = {}
        try:
            for partition, offset in pairs:
                values[self.key_bytes(connector, partition)] = encode_offset_value(offset)
        except InternalRecordError as exc:
            raise DataError(str(exc)) from None
        await self.set_raw(values)

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        """Partitions of ``connector`` with a (non-deleted) offset, as of the records read so far."""
        return [dict(p) for p in self._partitions.get(connector, {}).values()]

    async def connector_offsets(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """``(partition, offset)`` for every partition of ``connector`` (``GET /connectors/C/offsets``)."""
        await self.read_to_end()
        result = []
        for frozen, partition in self._partitions.get(connector, {}).items():
            raw = self._data.get(self._keys[(connector, frozen)])
            try:
                offset = decode_offset_value(raw)
            except InternalRecordError as exc:
                log.error(
                    "Failed to deserialize offset of connector %s partition %s: %s", connector, partition, exc
                )
                continue
            if offset is not None:
                result.append((dict(partition), offset))
        return result


class MemoryOffsetStore(OffsetStore):
    """The in-memory twin (25 partitions by default, like the worker's offsets topic)."""

    def __init__(self, topic: MemoryTopic | None = None) -> None:
        super().__init__(topic if topic is not None else MemoryTopic("offsets", 25))
