"""Checkpoint and Heartbeat records of MirrorMaker 2, byte for byte as the Java ``connect-mirror-client`` writes them.

Standard library only. Layout (Kafka ``protocol.types`` structs, spec §4.3/§4.4): fields back to back,
big-endian integers, STRING = INT16 UTF-8 byte length then the bytes (not nullable, at most 32767 bytes).

* Checkpoint key ``group:STRING topic:STRING partition:INT32``; value
  ``version:INT16 upstreamOffset:INT64 offset:INT64 metadata:STRING``. ``topic`` is the target-side
  (renamed) topic; ``offset`` is where a consumer on the target cluster resumes.
* Heartbeat key ``sourceClusterAlias:STRING targetClusterAlias:STRING``; value
  ``version:INT16 timestamp:INT64``.

Versioning (spec §4.1): writers always put version ``0``. Java readers read the version and then apply
the v0 layout whatever it says (the check is a JVM ``assert``, off in production), and ignore trailing
bytes in keys and values; :func:`decode_checkpoint` / :func:`decode_heartbeat` do the same, so a future
version that only appends fields stays readable. The version read is kept on the decoded object.

Errors: any malformed input (truncated field, negative string length, ``None`` key or value) raises
:class:`RecordFormatError` (Java: ``SchemaException``, or an uncaught ``NullPointerException`` for
tombstones) and never ``IndexError``/``struct.error``, so readers such as the checkpoint store or
``remote_consumer_offsets`` can skip and count bad records. Encoding refuses what Java cannot write
either (strings over 32767 UTF-8 bytes, ``None`` fields, out-of-range integers) and strings with lone
surrogates: Java would write ``?`` for them *and* leave zero padding after the struct (its size
estimate counts the surrogate as 3-4 bytes), a record no reader expects.

Invalid UTF-8 in a received string decodes with U+FFFD replacements, like Java; for some malformed
sequences (e.g. an encoded surrogate ``ED B0 80``) Java emits one replacement where Python emits one
per byte. Java writers never produce such bytes.
"""

from __future__ import annotations

import struct
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from connectors.mirror.records import RecordFormatError, TopicPartition

__all__ = [
    "VERSION",
    "Checkpoint",
    "Heartbeat",
    "RecordFormatError",
    "decode_checkpoint",
    "decode_checkpoints",
    "decode_heartbeat",
]

VERSION = 0
"""The only value version written; any version is read with the v0 layout (spec §4.1)."""

CONSUMER_GROUP_ID_KEY = "group"
TOPIC_KEY = "topic"
PARTITION_KEY = "partition"
SOURCE_CLUSTER_ALIAS_KEY = "sourceClusterAlias"
TARGET_CLUSTER_ALIAS_KEY = "targetClusterAlias"

_MAX_STRING_BYTES = 32767
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


class _Writer:
    __slots__ = ("parts",)

    def __init__(self) -> None:
        self.parts: list[bytes] = []

    def string(self, name: str, value: Any) -> _Writer:
        if not isinstance(value, str):
            raise RecordFormatError(f"Error writing field '{name}': expected a string, got {value!r}")
        try:
            raw = value.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise RecordFormatError(
                f"Error writing field '{name}': not encodable as UTF-8 ({exc.reason})"
            ) from None
        if len(raw) > _MAX_STRING_BYTES:
            raise RecordFormatError(
                f"Error writing field '{name}': String length {len(raw)} is larger than the maximum string length."
            )
        self.parts.append(_I16.pack(len(raw)))
        self.parts.append(raw)
        return self

    def int(self, name: str, fmt: struct.Struct, value: Any) -> _Writer:
        if isinstance(value, bool) or not isinstance(value, int):
            raise RecordFormatError(f"Error writing field '{name}': expected an integer, got {value!r}")
        try:
            self.parts.append(fmt.pack(value))
        except struct.error:
            raise RecordFormatError(f"Error writing field '{name}': {value} is out of range") from None
        return self

    def bytes(self) -> bytes:
        return b"".join(self.parts)


class _Reader:
    __slots__ = ("data", "pos")

    def __init__(self, data: bytes | bytearray | memoryview | None, what: str) -> None:
        if data is None:
            raise RecordFormatError(f"{what} is null")
        if not isinstance(data, (bytes, bytearray, memoryview)):
            raise RecordFormatError(f"{what} is not bytes: {type(data).__name__}")
        self.data = bytes(data)
        self.pos = 0

    def int(self, name: str, fmt: struct.Struct) -> int:
        if len(self.data) - self.pos < fmt.size:
            raise RecordFormatError(f"Error reading field '{name}': not enough bytes")
        (value,) = fmt.unpack_from(self.data, self.pos)
        self.pos += fmt.size
        return int(value)

    def string(self, name: str) -> str:
        length = self.int(name, _I16)
        if length < 0:
            raise RecordFormatError(
                f"Error reading field '{name}': String length {length} cannot be negative"
            )
        available = len(self.data) - self.pos
        if length > available:
            raise RecordFormatError(
                f"Error reading field '{name}': Error reading string of length {length}, "
                f"only {available} bytes available"
            )
        raw = self.data[self.pos : self.pos + length]
        self.pos += length
        return raw.decode("utf-8", "replace")


@dataclass(frozen=True, slots=True)
class Checkpoint:
    """``consumer_group_id``'s committed ``upstream_offset`` on the source, translated for the target.

    ``topic`` is the target-side (renamed) topic; ``downstream_offset`` is the offset to commit on the
    target cluster; ``metadata`` is the source commit metadata (``""`` when none, never ``None``).
    ``version`` is what the record said when decoded (always 0 when built here); it takes no part in
    equality. Immutable and hashable; safe to share between tasks.
    """

    consumer_group_id: str
    topic: str
    partition: int
    upstream_offset: int
    downstream_offset: int
    metadata: str = ""
    version: int = field(default=VERSION, compare=False)

    @property
    def topic_partition(self) -> TopicPartition:
        return TopicPartition(self.topic, self.partition)

    def offset_and_metadata(self) -> tuple[int, str]:
        """What ``RemoteClusterUtils.translateOffsets`` hands back: ``(downstream offset, metadata)``."""
        return self.downstream_offset, self.metadata

    def record_key(self) -> bytes:
        return (
            _Writer()
            .string(CONSUMER_GROUP_ID_KEY, self.consumer_group_id)
            .string(TOPIC_KEY, self.topic)
            .int(PARTITION_KEY, _I32, self.partition)
            .bytes()
        )

    def record_value(self) -> bytes:
        """Value with version header 0 (the only version any writer may produce)."""
        return (
            _Writer()
            .int("version", _I16, VERSION)
            .int("upstreamOffset", _I64, self.upstream_offset)
            .int("offset", _I64, self.downstream_offset)
            .string("metadata", self.metadata)
            .bytes()
        )

    def connect_partition(self) -> dict[str, Any]:
        """The Connect source partition of the checkpoint record (``Checkpoint.connectPartition``).

        Entry order is Java's ``HashMap`` order for these keys (``partition``, ``topic``, ``group``),
        so the JSON key in the Connect offsets topic is byte-identical to Java's.
        """
        return {
            PARTITION_KEY: self.partition,
            TOPIC_KEY: self.topic,
            CONSUMER_GROUP_ID_KEY: self.consumer_group_id,
        }

    @classmethod
    def from_record(cls, key: bytes | None, value: bytes | None) -> Checkpoint:
        """``Checkpoint.deserializeRecord``; raises :class:`RecordFormatError` on malformed input."""
        v = _Reader(value, "checkpoint value")
        version = v.int("version", _I16)
        upstream = v.int("upstreamOffset", _I64)
        downstream = v.int("offset", _I64)
        metadata = v.string("metadata")
        k = _Reader(key, "checkpoint key")
        group = k.string(CONSUMER_GROUP_ID_KEY)
        topic = k.string(TOPIC_KEY)
        partition = k.int(PARTITION_KEY, _I32)
        return cls(group, topic, partition, upstream, downstream, metadata, version)

    def __str__(self) -> str:
        return (
            f"Checkpoint{{consumerGroupId={self.consumer_group_id}, topicPartition={self.topic}-{self.partition}, "
            f"upstreamOffset={self.upstream_offset}, downstreamOffset={self.downstream_offset}, "
            f"metadata={self.metadata}}}"
        )


@dataclass(frozen=True, slots=True)
class Heartbeat:
    """One heartbeat of the flow ``source_cluster_alias -> target_cluster_alias`` at ``timestamp`` (epoch ms).

    ``version`` is what the record said when decoded (0 when built here); not part of equality.
    """

    source_cluster_alias: str
    target_cluster_alias: str
    timestamp: int
    version: int = field(default=VERSION, compare=False)

    def record_key(self) -> bytes:
        return (
            _Writer()
            .string(SOURCE_CLUSTER_ALIAS_KEY, self.source_cluster_alias)
            .string(TARGET_CLUSTER_ALIAS_KEY, self.target_cluster_alias)
            .bytes()
        )

    def record_value(self) -> bytes:
        return _Writer().int("version", _I16, VERSION).int("timestamp", _I64, self.timestamp).bytes()

    def connect_partition(self) -> dict[str, Any]:
        """``Heartbeat.connectPartition`` in Java ``HashMap`` order (``sourceClusterAlias``, ``targetClusterAlias``)."""
        return {
            SOURCE_CLUSTER_ALIAS_KEY: self.source_cluster_alias,
            TARGET_CLUSTER_ALIAS_KEY: self.target_cluster_alias,
        }

    @classmethod
    def from_record(cls, key: bytes | None, value: bytes | None) -> Heartbeat:
        """``Heartbeat.deserializeRecord``; raises :class:`RecordFormatError` on malformed input."""
        v = _Reader(value, "heartbeat value")
        version = v.int("version", _I16)
        timestamp = v.int("timestamp", _I64)
        k = _Reader(key, "heartbeat key")
        source = k.string(SOURCE_CLUSTER_ALIAS_KEY)
        target = k.string(TARGET_CLUSTER_ALIAS_KEY)
        return cls(source, target, timestamp, version)

    def __str__(self) -> str:
        return (
            f"Heartbeat{{sourceClusterAlias={self.source_cluster_alias}, "
            f"targetClusterAlias={self.target_cluster_alias}, timestamp={self.timestamp}}}"
        )


def decode_checkpoint(key: bytes | None, value: bytes | None) -> Checkpoint:
    """Decode one checkpoints-topic record (see :meth:`Checkpoint.from_record`)."""
    return Checkpoint.from_record(key, value)


def decode_heartbeat(key: bytes | None, value: bytes | None) -> Heartbeat:
    """Decode one heartbeats-topic record (see :meth:`Heartbeat.from_record`)."""
    return Heartbeat.from_record(key, value)


def decode_checkpoints(records: Iterable[tuple[bytes | None, bytes | None]]) -> tuple[list[Checkpoint], int]:
    """Decode ``(key, value)`` pairs in order, skipping malformed ones as Java's readers do.

    Returns the checkpoints and the number of records skipped (for a metric or a log line).
    """
    out: list[Checkpoint] = []
    skipped = 0
    for key, value in records:
        try:
            out.append(Checkpoint.from_record(key, value))
        except RecordFormatError:
            skipped += 1
    return out, skipped
