"""OffsetFetch v8 (API key 9): the committed offsets of many groups in one request (KIP-709, Kafka 3.0).

Versions before 8 ask one group per request; v8 carries a list of groups, each with its topics (or null:
every partition the group has committed). A broker answers the groups it coordinates; the client sends
one request per coordinator. v8 is the last version keyed by topic name without member fields (v9 adds
the KIP-848 member id and epoch, which an admin leaves empty; v10 keys topics by id), and 4.3.1 brokers
answer versions 1 to 10.

Contract (pure, no IO):
- :func:`encode_request` is the v8 request body (without the request header) for ``groups``: group id
  to ``{topic: partitions}``, or ``None`` for all of the group's partitions.
- :func:`decode_response` reads a v8 response body into :class:`FetchedGroup` values, in the broker's
  order. A partition without a committed offset has ``offset == -1``. Error codes are the broker's:
  per group (``NOT_COORDINATOR`` 16, ``COORDINATOR_LOAD_IN_PROGRESS`` 14, ``GROUP_AUTHORIZATION_FAILED``
  30 ...) and per partition (``TOPIC_AUTHORIZATION_FAILED`` 29, ``UNSTABLE_OFFSET_COMMIT`` 88).
  Malformed or truncated input raises :class:`~pyconnect.protocol.primitives.ProtocolError`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pyconnect.protocol.flexible import FlexibleReader, FlexibleWriter

API_KEY = 9
VERSION = 8
_MESSAGE = "OffsetFetch response"


@dataclass(frozen=True, slots=True)
class FetchedPartition:
    """One partition of a group's answer (``metadata`` ``None`` when the broker sent null)."""

    topic: str
    partition: int
    offset: int
    leader_epoch: int
    metadata: str | None
    error_code: int


@dataclass(frozen=True, slots=True)
class FetchedGroup:
    """One group of an OffsetFetch v8 answer."""

    group_id: str
    error_code: int
    partitions: tuple[FetchedPartition, ...]


Wanted = Mapping[str, Mapping[str, Sequence[int]] | None]
"""Group id -> ``{topic: partitions}``, or ``None`` for every partition the group committed."""


def encode_request(groups: Wanted, require_stable: bool = False) -> bytes:
    """The OffsetFetch v8 request body for ``groups``."""
    writer = FlexibleWriter()

    def topic(w: FlexibleWriter, item: tuple[str, Sequence[int]]) -> None:
        w.string(item[0]).array(item[1], FlexibleWriter.int32).no_tags()

    def group(w: FlexibleWriter, item: tuple[str, Mapping[str, Sequence[int]] | None]) -> None:
        group_id, topics = item
        w.string(group_id)
        w.nullable_array(None if topics is None else topics.items(), topic)
        w.no_tags()

    writer.array(groups.items(), group)
    writer.boolean(require_stable)
    return writer.no_tags().to_bytes()


def _group(reader: FlexibleReader) -> FetchedGroup:
    group_id = reader.string()
    partitions: list[FetchedPartition] = []

    def topic(r: FlexibleReader) -> None:
        name = r.string()

        def partition(p: FlexibleReader) -> None:
            index, offset, epoch = p.int32(), p.int64(), p.int32()
            metadata, error_code = p.nullable_string(), p.int16()
            p.tagged_fields()
            partitions.append(FetchedPartition(name, index, offset, epoch, metadata, error_code))

        r.array(partition)
        r.tagged_fields()

    reader.array(topic)
    error_code = reader.int16()
    reader.tagged_fields()
    return FetchedGroup(group_id, error_code, tuple(partitions))


def decode_response(data: bytes) -> tuple[int, list[FetchedGroup]]:
    """``(throttle_time_ms, groups)`` of an OffsetFetch v8 response body."""
    reader = FlexibleReader(data, _MESSAGE)
    throttle = reader.int32()
    groups = reader.array(_group)
    reader.tagged_fields()
    reader.expect_end()
    return throttle, groups
