"""MirrorMaker 2 record encodings and Connect offset-store maps, byte for byte as Java writes them.

Standard library only (enforced by ``tests/unit/house/test_import_seams.py``).

* :class:`OffsetSync`: Kafka's ``protocol.types`` struct layout (spec §4.2): fields back to back,
  big-endian integers, STRING = INT16 UTF-8 byte length then the bytes; no version anywhere. Readers,
  like Java's, ignore trailing bytes. Malformed input raises :class:`RecordFormatError` (Java's
  ``SchemaException``); checkpoints and heartbeats live in :mod:`connectors.mirror.checkpoint_records`.
* Connect offset-store maps of the source connector (``MirrorUtils.wrapPartition``/``wrapOffset``):
  partition ``{"cluster", "partition", "topic"}`` (that entry order is Java's ``HashMap`` order for
  these keys, so the serialized key equals Java's and Connect finds offsets a Java MM2 committed) and
  offset ``{"offset": n}`` holding the record's own source offset (resume at ``n + 1``).
* ``task.assigned.partitions`` encoding: ``TopicPartition.toString`` (``topic-partition``) joined with
  commas; decoding splits at the last ``-``.
"""

from __future__ import annotations

import re
import struct
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

SOURCE_CLUSTER_KEY = "cluster"
TOPIC_KEY = "topic"
PARTITION_KEY = "partition"
OFFSET_KEY = "offset"

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_TWO_INT64 = struct.Struct(">qq")
_MAX_STRING_BYTES = 32767
_JAVA_INT = re.compile(r"[+-]?[0-9]+")
_LIST_SEPARATOR = re.compile(r"\s*,\s*")


class RecordFormatError(ValueError):
    """Bytes that do not follow the record layout, or a value that cannot be written (``SchemaException``)."""


class TopicPartition(NamedTuple):
    """Java's ``TopicPartition``; ``str()`` is its ``toString`` (``topic-partition``)."""

    topic: str
    partition: int

    def __str__(self) -> str:
        return f"{self.topic}-{self.partition}"


# -- primitives ------------------------------------------------------------------------------------


def _write_string(value: str) -> bytes:
    try:
        data = value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise RecordFormatError(
            f"String {value!r} has a lone surrogate that Java cannot write: {exc}"
        ) from None
    if len(data) > _MAX_STRING_BYTES:
        raise RecordFormatError(f"String length {len(data)} is larger than the maximum string length.")
    return _INT16.pack(len(data)) + data


def _read_string(data: bytes, pos: int) -> tuple[str, int]:
    if len(data) - pos < 2:
        raise RecordFormatError("Error reading field: not enough bytes for a string length")
    (length,) = _INT16.unpack_from(data, pos)
    pos += 2
    if length < 0:
        raise RecordFormatError(f"String length {length} cannot be negative")
    if length > len(data) - pos:
        raise RecordFormatError(
            f"Error reading string of length {length}, only {len(data) - pos} bytes available"
        )
    return data[pos : pos + length].decode("utf-8", "replace"), pos + length


def _read(fmt: struct.Struct, data: bytes, pos: int, what: str) -> tuple[Any, int]:
    if len(data) - pos < fmt.size:
        raise RecordFormatError(f"Error reading field '{what}': not enough bytes")
    return fmt.unpack_from(data, pos), pos + fmt.size


def _pack(fmt: struct.Struct, *values: int) -> bytes:
    try:
        return fmt.pack(*values)
    except struct.error as exc:
        raise RecordFormatError(f"value out of range: {values}: {exc}") from None


def _require(data: bytes | None, what: str) -> bytes:
    if data is None:
        raise RecordFormatError(f"{what} is null")
    return bytes(data)


# -- OffsetSync ------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class OffsetSync:
    """One offset-syncs record: ``upstream_offset`` on the source maps to ``downstream_offset`` on the target.

    ``topic`` is the source-side topic name. Key ``topic:STRING partition:INT32``, value
    ``upstreamOffset:INT64 offset:INT64`` (16 bytes); no version anywhere.
    """

    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    def record_key(self) -> bytes:
        return _write_string(self.topic) + _pack(_INT32, self.partition)

    def record_value(self) -> bytes:
        return _pack(_TWO_INT64, self.upstream_offset, self.downstream_offset)

    @classmethod
    def deserialize_record(cls, key: bytes | None, value: bytes | None) -> OffsetSync:
        key_bytes, value_bytes = _require(key, "offset sync key"), _require(value, "offset sync value")
        topic, pos = _read_string(key_bytes, 0)
        (partition,), _ = _read(_INT32, key_bytes, pos, PARTITION_KEY)
        (upstream, downstream), _ = _read(_TWO_INT64, value_bytes, 0, "upstreamOffset")
        return cls(topic, partition, upstream, downstream)

    def __str__(self) -> str:
        return (
            f"OffsetSync{{topicPartition={self.topic_partition}, upstreamOffset={self.upstream_offset}, "
            f"downstreamOffset={self.downstream_offset}}}"
        )


# -- Connect offset-store maps (MirrorUtils) -------------------------------------------------------


def wrap_partition(topic: str, partition: int, source_cluster_alias: str) -> dict[str, Any]:
    """``MirrorUtils.wrapPartition``: the Connect source partition of a source topic-partition.

    Entries in Java ``HashMap`` iteration order (``cluster``, ``partition``, ``topic``), so the
    offsets-topic key bytes are the ones a Java MM2 writes.
    """
    return {SOURCE_CLUSTER_KEY: source_cluster_alias, PARTITION_KEY: partition, TOPIC_KEY: topic}


def wrap_offset(offset: int) -> dict[str, Any]:
    """``MirrorUtils.wrapOffset``: the Connect source offset of a replicated record (its own offset)."""
    return {OFFSET_KEY: offset}


def unwrap_partition(wrapped: Mapping[str, Any]) -> TopicPartition:
    """``MirrorUtils.unwrapPartition``: the source topic-partition of a Connect source partition."""
    return TopicPartition(str(wrapped[TOPIC_KEY]), int(wrapped[PARTITION_KEY]))


def unwrap_offset(wrapped: Mapping[str, Any] | None) -> int:
    """``MirrorUtils.unwrapOffset``: the stored offset, ``-1`` when there is none."""
    if wrapped is None or wrapped.get(OFFSET_KEY) is None:
        return -1
    return int(wrapped[OFFSET_KEY])


def encode_topic_partitions(partitions: Iterable[tuple[str, int]]) -> str:
    """``task.assigned.partitions``: ``topic-partition`` entries joined with commas, in order."""
    return ",".join(f"{topic}-{partition}" for topic, partition in partitions)


def decode_topic_partition(text: str) -> TopicPartition:
    """``MirrorUtils.decodeTopicPartition``: split at the last ``-``."""
    sep = text.rfind("-")
    if sep < 0:
        raise RecordFormatError(f"Invalid topic-partition '{text}': no '-' separator")
    digits = text[sep + 1 :]
    if not _JAVA_INT.fullmatch(digits) or not -(2**31) <= int(digits) < 2**31:
        raise RecordFormatError(f'For input string: "{digits}"')
    return TopicPartition(text[:sep], int(digits))


def decode_topic_partitions(value: str | None) -> list[TopicPartition]:
    """``task.assigned.partitions`` parsed as a Connect LIST (trim, split on commas with blanks)."""
    text = (value or "").strip()
    if not text:
        return []
    return [decode_topic_partition(item) for item in _LIST_SEPARATOR.split(text)]


def _invalid(message: str) -> RecordFormatError:
    return RecordFormatError(message)


def validate_source_partition(partition: Mapping[str, Any] | None) -> None:
    """KIP-875 ``alterOffsets`` check of a source connector partition (string ``cluster``/``topic``,
    non-negative int ``partition``). Raises :class:`RecordFormatError` with Java's message."""
    if partition is None:
        raise _invalid("Source partitions may not be null")
    for key in (SOURCE_CLUSTER_KEY, TOPIC_KEY):
        if key not in partition:
            raise _invalid(
                f"Source partition {dict(partition)} is missing the '{key}' key, which is required"
            )
        if not isinstance(partition[key], str):
            raise _invalid(
                f"Source partition {dict(partition)} has an invalid value {partition[key]} for the '{key}' key, "
                "which must be a string"
            )
    if PARTITION_KEY not in partition:
        raise _invalid(
            f"Source partition {dict(partition)} is missing the '{PARTITION_KEY}' key, which is required"
        )
    value = partition[PARTITION_KEY]
    if isinstance(value, bool) or not isinstance(value, int) or value > 2**31 - 1:
        raise _invalid(
            f"Source partition {dict(partition)} has an invalid value {value} for the '{PARTITION_KEY}' key, "
            "which must be an integer"
        )
    if value < 0:
        raise _invalid(
            f"Source partition {dict(partition)} has an invalid value {value} for the '{PARTITION_KEY}' key, "
            "which cannot be negative"
        )


def validate_source_offset(
    partition: Mapping[str, Any], offset: Mapping[str, Any] | None, *, only_offset_zero: bool = False
) -> None:
    """KIP-875 check of a source offset: ``{"offset": n}`` with ``n >= 0`` (or exactly 0); ``None`` is valid."""
    if offset is None:
        return
    if OFFSET_KEY not in offset:
        raise _invalid(
            f"Source offset {dict(offset)} for source partition {dict(partition)} is missing the "
            f"'{OFFSET_KEY}' key, which is required"
        )
    value = offset[OFFSET_KEY]
    if isinstance(value, bool) or not isinstance(value, int):
        raise _invalid(
            f"Source offset {dict(offset)} for source partition {dict(partition)} has an invalid value "
            f"{value} for the '{OFFSET_KEY}' key, which must be an integer"
        )
    if only_offset_zero and value != 0:
        raise _invalid(
            f"Source offset {dict(offset)} for source partition {dict(partition)} has an invalid value "
            f"{value} for the '{OFFSET_KEY}' key; the only accepted value is 0"
        )
    if not only_offset_zero and value < 0:
        raise _invalid(
            f"Source offset {dict(offset)} for source partition {dict(partition)} has an invalid value "
            f"{value} for the '{OFFSET_KEY}' key, which cannot be negative"
        )
