"""What every source-offset store answers the same way, whatever holds the records.

``OffsetIndex`` is mixed into the Kafka-backed ``OffsetStore`` and the standalone ``FileOffsetStore``.
The store keeps ``_data`` (exact key bytes -> value bytes), ``_keys`` ((connector, frozen partition)
-> the key bytes already stored for it) and ``_partitions`` (connector -> frozen -> partition map),
and provides ``read_to_end()`` (a no-op when every write goes through the store) and ``set_raw()``.
Offsets are looked up by the exact key bytes already stored, so keys written by Java are reused.
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from pyconnect.errors import DataError
from pyconnect.protocol.internal_records import (
    InternalRecordError,
    decode_offset_value,
    encode_offset_key,
    encode_offset_value,
    freeze,
)

log = logging.getLogger(__name__)

Partition = Mapping[str, Any]
Offset = Mapping[str, Any]


class OffsetIndex:
    _data: dict[bytes, bytes]
    _keys: dict[tuple[str, Any], bytes]
    _partitions: dict[str, dict[Any, dict[str, Any]]]

    async def read_to_end(self) -> None:
        raise NotImplementedError

    async def set_raw(self, values: Mapping[bytes, bytes | None]) -> None:
        raise NotImplementedError

    def key_bytes(self, connector: str, partition: Partition) -> bytes:
        """The key to use for ``partition``: the bytes already stored for it, else our encoding."""
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
            try:
                result.append(decode_offset_value(self._data.get(key)))
            except InternalRecordError as exc:
                log.error("Failed to deserialize offset for connector %s: %s", connector, exc)
                result.append(None)
        return result

    async def set(self, connector: str, offsets: Iterable[tuple[Partition, Offset | None]]) -> None:
        """Write ``(partition, offset)`` pairs of ``connector``; an offset ``None`` deletes it.

        Pairs rather than a dict because partitions are maps. Partitions and offsets must have string
        keys and primitive values (Java ``OffsetUtils``), else ``DataError`` before anything is written.
        """
        values: dict[bytes, bytes | None] = {}
        try:
            for partition, offset in offsets:
                values[self.key_bytes(connector, partition)] = encode_offset_value(offset)
        except InternalRecordError as exc:
            raise DataError(str(exc)) from None
        await self.set_raw(values)

    def connector_partitions(self, connector: str) -> list[dict[str, Any]]:
        """Partitions of ``connector`` with a stored (non-deleted) offset, as of what was read so far."""
        return [dict(p) for p in self._partitions.get(connector, {}).values()]

    async def connector_offsets(self, connector: str) -> list[tuple[dict[str, Any], dict[str, Any]]]:
        """``(partition, offset)`` for every partition of ``connector`` (``GET /connectors/C/offsets``)."""
        await self.read_to_end()
        result = []
        for frozen, partition in self._partitions.get(connector, {}).items():
            try:
                offset = decode_offset_value(self._data.get(self._keys[(connector, frozen)]))
            except InternalRecordError as exc:
                log.error(
                    "Failed to deserialize offset of connector %s partition %s: %s", connector, partition, exc
                )
                continue
            if offset is not None:
                result.append((dict(partition), offset))
        return result
