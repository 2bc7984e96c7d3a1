"""Record batches in and out of aiokafka as bytes: fetch a partition's raw records, produce a fetched batch.

The IO half of the raw mirror path; the batch arithmetic is :mod:`pyconnect.kafka.record_batches`.

The whole raw path, fetch to produce, is read in order in :mod:`pyconnect.kafka.aiokafka_seam`, the
one module that reaches aiokafka's private parts (its points 8 and 9 are the ones below).

Where aiokafka (0.14) holds the bytes, and the seams used here:

- Fetching. ``Fetcher._proc_fetch_request`` (aiokafka/consumer/fetcher.py) sends a ``FetchRequest``
  and reads each partition's ``(partition, error_code, highwater, *part_data)``:
  ``part_data[-1]`` is the raw records bytes, the aborted transactions ``(producer_id,
  first_offset)`` are ``part_data[2]`` from v11 (``part_data[-2]`` for v4-v10), the last stable
  offset ``part_data[0]``. It wraps the bytes at once in a C ``MemoryRecords`` (which does not
  give them back) inside ``PartitionRecords``, whose ``_unpack_records`` does read_committed
  (``_consume_aborted_up_to``, ``_contains_abort_marker``) and decodes every record into a
  ``ConsumerRecord``. No public hook sits between. So :func:`fetch_raw` sends the same request
  through the consumer's own client (``AIOKafkaClient.send(node_id, FetchRequest(...))``): same
  connections, same negotiated version, nothing decoded; the caller then owns positions (aiokafka's
  ``SubscriptionState`` is not advanced) and applies read_committed with
  :func:`~pyconnect.kafka.record_batches.aborted_batches`. aiokafka's ``FetchRequest`` is always
  sessionless (session 0, epoch -1); :class:`SessionFetchRequest` also sets, from v7, the fetch
  session's id, epoch and forgotten partitions (KIP-227, kept by
  :mod:`pyconnect.kafka.fetch_session`), which :func:`fetch_raw_session` sends and whose answer
  carries the top-level error code and session id; :func:`fetch_raw` is its sessionless form.
  A v4-v11 answer is not decoded by aiokafka's structs (which copy each partition's records out of
  the frame): the request struct names a response type of ours (the connection's reader decodes
  with the struct's ``RESPONSE_TYPE``) that reads it in place (:mod:`pyconnect.kafka.fetch_answers`),
  so each partition's ``records`` is a ``memoryview`` of the frame's ``bytes``.
- Producing. ``AIOKafkaProducer.send_batch(builder, topic, partition=...)`` queues any builder
  object in ``MessageAccumulator.add_batch`` as a ``MessageBatch``. The accumulator and sender use
  only ``record_count()``, ``closed()``, ``close()``, ``append(...)`` (``add_message`` tries the
  partition's last queued batch; ``None`` means full), ``size()``,
  ``_set_producer_state(producer_id, producer_epoch, base_sequence)`` (called by
  ``MessageAccumulator._pop_batch`` on the first drain of an idempotent or transactional producer,
  with the sequence from ``TransactionManager.sequence_number`` then advanced by
  ``record_count``) and ``_build()`` (``MessageBatch.get_data_buffer``, called by
  ``Sender``'s ``SendProduceReqHandler.create_request`` for every attempt). :class:`RawBatch`
  implements that interface over a fetched batch: its ``_build`` rewrites producer state, the
  transactional bit and the CRC once, so retries resend the same bytes and sequence, as for
  aiokafka's own batches. The future ``send_batch`` returns resolves to the batch's
  ``RecordMetadata``: ``offset`` is the downstream base offset, record ``i`` is at ``offset + i``.

Contract of :class:`RawBatch`: built from one v2 batch that
:func:`~pyconnect.kafka.record_batches.refusal` accepts at its own offset and codec (else
``ValueError``; the caller checks position and the producer's codec), for one producer, sent once
through that producer's ``send_batch``. Only the 61-byte batch header is copied (and rewritten once,
at the first build); the records stay a view of a read-only ``data`` (fetched ``bytes`` or a view of
them, whose bytes never change), which the batch keeps alive until it is dropped; the records of a
mutable ``data`` (a ``bytearray``, a restamped batch) are copied instead, as they could change. For a
producer that writes produce frames (:mod:`pyconnect.kafka.produce_writes`) the build is the pair
(header, records view), written to the socket as they are; for any other, one ``bytearray``.
"""

from __future__ import annotations

import io
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from aiokafka import AIOKafkaProducer
from aiokafka.client import AIOKafkaClient
from aiokafka.protocol.fetch import FetchRequest, FetchRequestStruct
from aiokafka.record.memory_records import MemoryRecords
from aiokafka.structs import TopicPartition

from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka import fetch_answers as answers
from pyconnect.kafka.fetch_answers import RawFetch
from pyconnect.kafka.produce_writes import writes_frames
from pyconnect.kafka.record_batches import (
    HEADER_SIZE,
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    NO_SEQUENCE,
    BatchHeader,
    refusal,
    rewrite_head_in_place,
    split,
)

READ_UNCOMMITTED = 0
READ_COMMITTED = 1


class SessionFetchRequest(FetchRequest):
    """aiokafka's ``FetchRequest`` carrying fetch-session metadata and forgotten partitions (KIP-227)
    from v7; below v7 the same request without them (sessionless: the broker answers every partition)."""

    def __init__(
        self,
        max_wait_time: int,
        min_bytes: int,
        max_bytes: int,
        isolation_level: int,
        topics: list[tuple[str, list[tuple[int, int, int]]]],
        *,
        session_id: int = 0,
        session_epoch: int = -1,
        forgotten: list[tuple[str, list[int]]] | None = None,
    ) -> None:
        super().__init__(max_wait_time, min_bytes, max_bytes, isolation_level, topics)
        self.session_id = session_id
        self.session_epoch = session_epoch
        self.forgotten = forgotten or []

    def build(self, request_struct_class: type[FetchRequestStruct]) -> FetchRequestStruct:
        struct = super().build(request_struct_class)
        version = request_struct_class.API_VERSION
        fields: Any = struct
        if version >= 7:
            fields.session_id = self.session_id
            fields.session_epoch = self.session_epoch
            fields.forgotten_topics_data = self.forgotten
        if answers.LOWEST_VERSION <= version <= answers.HIGHEST_VERSION:
            fields.RESPONSE_TYPE = _InPlaceFetchResponse(
                version
            )  # what the connection decodes the answer with
        return struct


class _InPlaceFetchResponse:
    """The response type a raw fetch's request struct names: the connection's reader calls ``decode`` with
    the frame after its header (a ``BytesIO`` over the frame's ``bytes``, which ``getvalue`` gives back
    without a copy), and gets a :class:`RawFetchResponse` whose records are views of that frame."""

    __slots__ = ("API_VERSION",)

    def __init__(self, version: int) -> None:
        self.API_VERSION = version

    def decode(self, frame: io.BytesIO) -> RawFetchResponse:
        answer = answers.read_fetch_response(self.API_VERSION, frame.getvalue(), frame.tell())
        fetched = {TopicPartition(topic, partition): part for topic, partition, part in answer.partitions}
        return RawFetchResponse(answer.error_code, answer.session_id, fetched)


@dataclass(frozen=True, slots=True)
class RawFetchResponse:
    """A whole fetch response: its top-level error code and session id (both 0 before v7) and each
    partition's answer."""

    error_code: int
    session_id: int
    partitions: dict[TopicPartition, RawFetch]


async def fetch_raw(
    client: AIOKafkaClient,
    node_id: int,
    positions: Iterable[tuple[TopicPartition, int]],
    *,
    max_wait_ms: int = 500,
    min_bytes: int = 1,
    max_bytes: int = 52_428_800,
    partition_max_bytes: int = 1_048_576,
    isolation_level: int = READ_UNCOMMITTED,
) -> dict[TopicPartition, RawFetch]:
    """Fetch from ``node_id`` (the partitions' leader) at the given offsets, sessionless; see the module
    docstring."""
    response = await fetch_raw_session(
        client,
        node_id,
        {tp: (offset, partition_max_bytes) for tp, offset in positions},
        max_wait_ms=max_wait_ms,
        min_bytes=min_bytes,
        max_bytes=max_bytes,
        isolation_level=isolation_level,
    )
    return response.partitions


async def fetch_raw_session(
    client: AIOKafkaClient,
    node_id: int,
    partitions: Mapping[TopicPartition, tuple[int, int]],
    *,
    session_id: int = 0,
    session_epoch: int = -1,
    forgotten: Iterable[TopicPartition] = (),
    max_wait_ms: int = 500,
    min_bytes: int = 1,
    max_bytes: int = 52_428_800,
    isolation_level: int = READ_UNCOMMITTED,
) -> RawFetchResponse:
    """Fetch ``partitions`` (fetch offset, max bytes) from ``node_id`` in fetch session ``session_id``
    at ``session_epoch`` (:mod:`pyconnect.kafka.fetch_session`; the defaults are sessionless),
    dropping ``forgotten`` from the session."""
    by_topic: dict[str, list[tuple[int, int, int]]] = {}
    for tp, (offset, partition_max_bytes) in partitions.items():
        by_topic.setdefault(tp.topic, []).append((tp.partition, offset, partition_max_bytes))
    forgotten_by_topic: dict[str, list[int]] = {}
    for tp in forgotten:
        forgotten_by_topic.setdefault(tp.topic, []).append(tp.partition)
    request = SessionFetchRequest(
        max_wait_ms,
        min_bytes,
        max_bytes,
        isolation_level,
        list(by_topic.items()),
        session_id=session_id,
        session_epoch=session_epoch,
        forgotten=list(forgotten_by_topic.items()),
    )
    response = await client.send(node_id, request)
    if type(response) is RawFetchResponse:  # read in place (v4-v11)
        return response
    version = response.API_VERSION
    fetched: dict[TopicPartition, RawFetch] = {}
    for topic, answered in response.topics:
        for partition, error_code, high_watermark, *part_data in answered:
            if version >= 11:
                aborted = part_data[2]
            elif version >= 4:
                aborted = part_data[-2]
            else:
                aborted = None
            fetched[TopicPartition(topic, partition)] = RawFetch(
                error_code,
                high_watermark,
                part_data[0] if version >= 4 else -1,
                [(int(pid), int(first)) for pid, first in aborted or ()],
                bytes(part_data[-1] or b""),
            )
    if version >= 7:
        return RawFetchResponse(int(response.error_code), int(response.session_id), fetched)
    return RawFetchResponse(0, 0, fetched)


def decode_records(data: bytes | bytearray | memoryview, position: int) -> list[Any]:
    """The records at offsets ``>= position`` of the batches in ``data`` (any format; control batches
    left out), decoded by aiokafka's record reader as its consumer does: objects with ``offset``,
    ``timestamp`` (a LogAppendTime batch's max timestamp for each of its records), ``key``,
    ``value`` and ``headers`` (``(str, bytes)`` pairs; a legacy record has none)."""
    records = MemoryRecords(bytes(data))
    decoded: list[Any] = []
    for _ in range(len(data)):  # bounded: every batch is at least one byte
        batch: Any = records.next_batch()
        if batch is None:
            break
        if getattr(batch, "is_control_batch", False):
            continue
        if getattr(batch, "magic", 0) >= 2 and batch.base_offset >= position:  # no record before it
            decoded.extend(batch)
        else:
            decoded.extend(record for record in batch if record.offset >= position)
    return decoded


class RawBatch:
    """A fetched batch that aiokafka's producer queues and numbers as one of its own batches."""

    __slots__ = ("_built", "_count", "_head", "_pieces", "_producer_state", "_records", "_transactional")

    def __init__(
        self,
        data: bytes | bytearray | memoryview,
        header: BatchHeader,
        *,
        transactional: bool,
        pieces: bool = False,
    ) -> None:
        refused = refusal(header, position=header.base_offset, codec=header.codec)
        if refused is not None:
            raise ValueError(
                f"batch at offset {header.base_offset} cannot be produced as it is: {refused.value}"
            )
        view = memoryview(data)
        self._head = bytearray(view[header.start : header.start + HEADER_SIZE])
        self._records = view[header.start + HEADER_SIZE : header.end]
        if not view.readonly:  # a mutable buffer may change under a view: keep a copy
            self._records = memoryview(bytes(self._records))
        self._count = header.record_count
        self._transactional = transactional
        self._pieces = pieces
        self._producer_state = (NO_PRODUCER_ID, NO_PRODUCER_EPOCH, NO_SEQUENCE)
        self._built: bytearray | tuple[bytearray, memoryview] | None = None

    @classmethod
    def for_producer(
        cls, producer: AIOKafkaProducer, data: bytes | bytearray | memoryview, header: BatchHeader
    ) -> RawBatch:
        """A batch for ``producer``, transactional if the producer is, built as pieces if the producer
        writes produce frames (:func:`~pyconnect.kafka.produce_writes.writes_frames`)."""
        manager = seam.producer_txn_manager_of_started(producer)
        return cls(
            data,
            header,
            transactional=manager is not None and manager.transactional_id is not None,
            pieces=writes_frames(producer),
        )

    @classmethod
    def of_batch(cls, producer: AIOKafkaProducer, data: bytes | bytearray | memoryview) -> RawBatch:
        """A batch for ``producer`` from ``data`` holding exactly one v2 batch (else ``ValueError``)."""
        found = split(data)
        if len(found.batches) != 1 or found.truncated_bytes:
            raise ValueError(
                f"expected exactly one record batch, got {len(found.batches)} and "
                f"{found.truncated_bytes} bytes more"
            )
        return cls.for_producer(producer, data, found.batches[0])

    # The builder interface aiokafka's MessageAccumulator, MessageBatch and Sender use.

    def record_count(self) -> int:
        return self._count

    def closed(self) -> bool:
        return True

    def close(self) -> None:
        return None

    def append(self, **_record: Any) -> None:
        """Never takes a record (a full batch to ``add_message``)."""
        return None

    def size(self) -> int:
        return HEADER_SIZE + len(self._records)

    def _set_producer_state(self, producer_id: int, producer_epoch: int, base_sequence: int) -> None:
        self._producer_state = (producer_id, producer_epoch, base_sequence)

    def _build(self) -> bytearray | tuple[bytearray, memoryview]:
        if self._built is None:
            producer_id, producer_epoch, base_sequence = self._producer_state
            rewrite_head_in_place(
                self._head,
                self._records,
                producer_id=producer_id,
                producer_epoch=producer_epoch,
                base_sequence=base_sequence,
                transactional=self._transactional,
            )
            self._built = (self._head, self._records) if self._pieces else self._head + self._records
        return self._built


__all__ = [
    "READ_COMMITTED",
    "READ_UNCOMMITTED",
    "RawBatch",
    "RawFetch",
    "RawFetchResponse",
    "SessionFetchRequest",
    "decode_records",
    "fetch_raw",
    "fetch_raw_session",
]
