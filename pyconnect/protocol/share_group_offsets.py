"""DescribeShareGroupOffsets (API 90) and AlterShareGroupOffsets (API 91): a share group's start offsets.

A share group (KIP-932, production-ready since Kafka 4.2) keeps per partition a *share-partition start
offset* (SPSO): every record before it has completed delivery; records after it are available,
in flight, or already acknowledged one by one. The two APIs read and set it from outside the group:

- DescribeShareGroupOffsets v0 (Kafka 4.0) / v1 (Kafka 4.2, KIP-1226: adds ``lag``) asks many groups
  per request, each with its topics or null (every partition with share state). A partition without
  share state answers ``start_offset == -1``.
- AlterShareGroupOffsets v0 sets start offsets of one group; the coordinator refuses it while the group
  has members (``NON_EMPTY_GROUP``, 68, as the group-level error) and creates an unknown group (Empty).
  It does not check the offsets against the partition's log.

Both are flexible versions. Contract (pure, no IO):
- :func:`encode_describe_request` is the request body of v0 and v1 (same layout);
  :func:`decode_describe_response` reads a v0 or v1 body into :class:`ShareGroupOffsets`.
- :func:`encode_alter_request` / :func:`decode_alter_response` for AlterShareGroupOffsets v0.
- Malformed or truncated input raises :class:`~pyconnect.protocol.primitives.ProtocolError`; a version
  this module does not read raises it too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyconnect.protocol.flexible import FlexibleReader, FlexibleWriter
from pyconnect.protocol.primitives import ProtocolError

DESCRIBE_API_KEY = 90
DESCRIBE_VERSIONS = (0, 1)
LAG_VERSION = 1
"""DescribeShareGroupOffsets v1 (KIP-1226) is what tells a Kafka 4.2 or later broker."""
ALTER_API_KEY = 91
ALTER_VERSION = 0
NON_EMPTY_GROUP = 68


@dataclass(frozen=True, slots=True)
class SharePartitionOffset:
    """One partition of a share group's answer (``lag`` ``None`` before v1)."""

    topic: str
    partition: int
    start_offset: int
    leader_epoch: int
    lag: int | None
    error_code: int
    error_message: str | None


@dataclass(frozen=True, slots=True)
class ShareGroupOffsets:
    """One group of a DescribeShareGroupOffsets answer."""

    group_id: str
    error_code: int
    error_message: str | None
    partitions: tuple[SharePartitionOffset, ...]


@dataclass(frozen=True, slots=True)
class AlteredPartition:
    topic: str
    partition: int
    error_code: int
    error_message: str | None


@dataclass(frozen=True, slots=True)
class AlterAnswer:
    """An AlterShareGroupOffsets answer: the group-level error, then one entry per partition."""

    error_code: int
    error_message: str | None
    partitions: tuple[AlteredPartition, ...]


def _topic_partitions(w: FlexibleWriter, item: tuple[str, Sequence[int]]) -> None:
    w.string(item[0]).array(item[1], FlexibleWriter.int32).no_tags()


def encode_describe_request(groups: Mapping[str, Mapping[str, Sequence[int]] | None]) -> bytes:
    """The DescribeShareGroupOffsets v0/v1 request body: group id -> ``{topic: partitions}`` or None."""

    def group(w: FlexibleWriter, item: tuple[str, Mapping[str, Sequence[int]] | None]) -> None:
        w.string(item[0])
        w.nullable_array(None if item[1] is None else item[1].items(), _topic_partitions)
        w.no_tags()

    return FlexibleWriter().array(groups.items(), group).no_tags().to_bytes()


def decode_describe_response(data: bytes, version: int) -> tuple[int, list[ShareGroupOffsets]]:
    """``(throttle_time_ms, groups)`` of a DescribeShareGroupOffsets response body of ``version``."""
    if version not in DESCRIBE_VERSIONS:
        raise ProtocolError(
            f"DescribeShareGroupOffsets v{version} is not supported (only {DESCRIBE_VERSIONS})"
        )
    reader = FlexibleReader(data, "DescribeShareGroupOffsets response")

    def group(r: FlexibleReader) -> ShareGroupOffsets:
        group_id = r.string()
        partitions: list[SharePartitionOffset] = []

        def topic(t: FlexibleReader) -> None:
            name = t.string()
            t.uuid()

            def partition(p: FlexibleReader) -> None:
                index, start, epoch = p.int32(), p.int64(), p.int32()
                lag = p.int64() if version >= LAG_VERSION else None
                code, message = p.int16(), p.nullable_string()
                p.tagged_fields()
                partitions.append(SharePartitionOffset(name, index, start, epoch, lag, code, message))

            t.array(partition)
            t.tagged_fields()

        r.array(topic)
        code, message = r.int16(), r.nullable_string()
        r.tagged_fields()
        return ShareGroupOffsets(group_id, code, message, tuple(partitions))

    throttle = reader.int32()
    groups = reader.array(group)
    reader.tagged_fields()
    reader.expect_end()
    return throttle, groups


def encode_alter_request(group_id: str, offsets: Mapping[str, Sequence[tuple[int, int]]]) -> bytes:
    """The AlterShareGroupOffsets v0 request body: ``{topic: [(partition, start offset), ...]}``."""

    def partition(w: FlexibleWriter, item: tuple[int, int]) -> None:
        w.int32(item[0]).int64(item[1]).no_tags()

    def topic(w: FlexibleWriter, item: tuple[str, Sequence[tuple[int, int]]]) -> None:
        w.string(item[0]).array(item[1], partition).no_tags()

    return FlexibleWriter().string(group_id).array(offsets.items(), topic).no_tags().to_bytes()


def decode_alter_response(data: bytes) -> tuple[int, AlterAnswer]:
    """``(throttle_time_ms, answer)`` of an AlterShareGroupOffsets v0 response body."""
    reader = FlexibleReader(data, "AlterShareGroupOffsets response")
    throttle = reader.int32()
    code, message = reader.int16(), reader.nullable_string()
    partitions: list[AlteredPartition] = []

    def topic(t: FlexibleReader) -> None:
        name = t.string()
        t.uuid()

        def partition(p: FlexibleReader) -> None:
            index, error_code, error_message = p.int32(), p.int16(), p.nullable_string()
            p.tagged_fields()
            partitions.append(AlteredPartition(name, index, error_code, error_message))

        t.array(partition)
        t.tagged_fields()

    reader.array(topic)
    reader.tagged_fields()
    reader.expect_end()
    return throttle, AlterAnswer(code, message, tuple(partitions))
