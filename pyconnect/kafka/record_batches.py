"""Kafka record batches as bytes: split a fetched partition's records, read headers, rewrite for a producer.

Pure (no IO, no aiokafka objects): the raw mirror path's arithmetic over the v2 record batch format
(``DefaultRecordBatch`` in Kafka's clients), which every broker since 0.11 stores and serves::

    offset  size  field                    offset  size  field
         0     8  base offset                  27     8  first (base) timestamp
         8     4  length (bytes after it)      35     8  max timestamp
        12     4  partition leader epoch       43     8  producer id
        16     1  magic (2)                    51     2  producer epoch
        17     4  CRC32C of bytes 21..end      53     4  base sequence
        21     2  attributes                   57     4  record count
        23     4  last offset delta            61     .  records (compressed as a whole if a codec is set)

Attributes: bits 0-2 compression codec, bit 3 timestamp type (1 = LogAppendTime), bit 4
transactional, bit 5 control, bit 6 delete horizon (the log cleaner's; the base timestamp then
holds the horizon). The CRC does not cover the base offset, length, leader epoch or magic, so a
broker can assign the first and third without recomputing it; a client rewriting producer state or
attributes must recompute it.

Contract:
- :func:`split` walks a fetched partition's records bytes (``FetchResponse`` partition data) into
  :class:`BatchHeader` views, decoding no record. A last batch cut short (brokers fill a fetch up
  to its byte limit and may end it mid-batch) is left out and reported as ``truncated_bytes``; a
  length that cannot be a batch raises :class:`CorruptBatchError`. Legacy (magic 0/1) entries are
  split too, with only ``base_offset``, ``magic`` and the byte range meaningful.
- :func:`refusal` says whether a batch can be copied faithfully to a target producer, or why not
  (:class:`Refusal`): what the broker would reject from a client, or what would change the
  records, goes the record path (or is dropped, for control batches).
- :func:`rewrite` / :func:`rewrite_in_place` (:func:`rewrite_head_in_place` for a batch held as its
  header and a view of its records) give the batch a producer's identity: base offset 0,
  partition leader epoch -1 (what Java's ``MemoryRecordsBuilder`` writes; the broker assigns
  both), the given producer id, epoch and base sequence (-1/-1/-1 for a producer without
  idempotence, as Java's producer writes), the transactional bit as the producer is, and the
  CRC32C recomputed. Records bytes are copied untouched: keys, values, headers, timestamps, offset
  deltas and the compression stay as fetched.
- :func:`restamp` turns an uncompressed LogAppendTime batch into the CreateTime batch the record
  path would write for it: every record's timestamp the batch's max timestamp (the broker's append
  time, which is what a consumer reads as each record's timestamp), so base and max timestamp that
  time and each record's timestamp delta 0; attributes, offset deltas, keys, values and headers are
  copied as bytes (each record is re-framed, never decoded). :func:`restampable` says which
  LogAppendTime batches qualify: those that would be copied but for their timestamp type, without a
  codec on either side (a compressed one would have to be decompressed and compressed again).
- :func:`plan` decides a whole fetch: per batch copy, restamp, skip (control, aborted, already
  copied) or decode (the record path, from the position on), and the position after the fetch.
- :func:`aborted_batches` applies ``read_committed`` to a fetch: the indices of batches of aborted
  transactions, from the response's aborted-transactions list and the abort markers in the data
  (the same walk Java's ``CompletedFetch`` and aiokafka's ``PartitionRecords`` do).

Compression rule: Java's producer compresses every batch it writes with its ``compression.type``
(default ``none``; neither Connect nor MirrorMaker 2 sets another), so the record path writes
fetched lz4 records as an uncompressed batch unless the producer asks for lz4. A fetched batch is
copied only when its codec is the producer's codec; the keys, values, headers and timestamps
written are then the same as the record path writes, and so is the stored codec (a topic's
``compression.type=producer`` default keeps what the producer sent).
"""

from __future__ import annotations

import dataclasses
import enum
import struct
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pyconnect.errors import DataError

try:  # hardware CRC32C (SSE4.2/ARMv8) over any buffer, memoryviews included: nothing is copied for it
    from crc32c import crc32c as _crc32c_hw

    def crc32c(data: bytes | bytearray | memoryview, value: int = 0) -> int:
        """CRC32C (Castagnoli) of ``data``, continuing from ``value`` (the CRC of what precedes it)."""
        return int(_crc32c_hw(data, value))

    CRC32C_IMPLEMENTATION = "crc32c"
except ImportError:  # pragma: no cover - the dependency is declared; aiokafka's table-driven one
    from aiokafka.record.util import calc_crc32c as _crc32c_table

    def crc32c(data: bytes | bytearray | memoryview, value: int = 0) -> int:
        """CRC32C (Castagnoli) of ``data``; ``value`` must be 0 (the table-driven one cannot continue)."""
        if value:
            raise ValueError("the table-driven CRC32C cannot continue a CRC")
        return int(_crc32c_table(data if type(data) is bytes else bytes(data)))

    CRC32C_IMPLEMENTATION = "aiokafka"


HEADER = struct.Struct(">qiibIhiqqqhii")
HEADER_SIZE = HEADER.size  # 61
LOG_OVERHEAD = 12  # base offset and length, in front of every batch of every format
MAGIC_OFFSET = 16
CRC_OFFSET = 17
ATTRIBUTES_OFFSET = 21
PRODUCER_ID_OFFSET = 43
_PRODUCER_STATE = struct.Struct(">qhi")
_OFFSET_AND_LENGTH = struct.Struct(">qi")
_LEADER_EPOCH = struct.Struct(">i")
_ATTRIBUTES = struct.Struct(">h")
_CRC = struct.Struct(">I")
_TIMESTAMP = struct.Struct(">q")
_LENGTH = struct.Struct(">i")
LENGTH_OFFSET = 8
FIRST_TIMESTAMP_OFFSET = 27
_LEGACY_MIN_SIZE = 26  # v0 record: offset, size, crc, magic, attributes, key and value lengths

CODEC_MASK = 0x07
TIMESTAMP_TYPE_MASK = 0x08
TRANSACTIONAL_MASK = 0x10
CONTROL_MASK = 0x20
DELETE_HORIZON_MASK = 0x40

NO_PRODUCER_ID = -1
NO_PRODUCER_EPOCH = -1
NO_SEQUENCE = -1
NO_PARTITION_LEADER_EPOCH = -1


class CorruptBatchError(DataError, ValueError):
    """Fetched bytes that cannot be a record batch (a length shorter than any batch's header)."""


class Codec(enum.IntEnum):
    """The compression codec ids of the attributes' low bits (Java's ``CompressionType``)."""

    NONE = 0
    GZIP = 1
    SNAPPY = 2
    LZ4 = 3
    ZSTD = 4

    @classmethod
    def of(cls, compression_type: str) -> Codec:
        """The codec a producer's ``compression.type`` (``none``, ``gzip``, ...) writes."""
        try:
            return cls[compression_type.strip().upper()]
        except KeyError:
            raise ValueError(f"unknown compression.type {compression_type!r}") from None


class Refusal(enum.Enum):
    """Why a fetched batch cannot be copied as it is; each goes the record path unless noted."""

    LEGACY_FORMAT = "record format older than v2 (magic 0/1): no producer state, no batch header"
    CONTROL_BATCH = "control batch (transaction marker): dropped, never copied (brokers refuse it)"
    BEFORE_POSITION = (
        "batch starts before the consumer's position (a fetch returns the whole batch holding the "
        "fetch offset): copying it would duplicate records"
    )
    LOG_APPEND_TIME = (
        "LogAppendTime batch: records carry the producer's times, the broker's time is the batch's "
        "max timestamp; brokers refuse it from clients"
    )
    OFFSET_GAP = (
        "offsets not contiguous (compaction removed records): brokers refuse it from clients "
        "(LogValidator.validateBatch: 'Inconsistent batch offset range')"
    )
    DELETE_HORIZON = "the log cleaner's delete horizon is set: the base timestamp is not the records'"
    COMPRESSION_MISMATCH = "compressed with another codec than the producer's compression.type"
    ABORTED = "batch of an aborted transaction: dropped under read_committed"


@dataclass(frozen=True, slots=True)
class BatchHeader:
    """One batch's header, read without decoding its records; ``start``/``end`` index the fetch bytes."""

    start: int
    size: int
    base_offset: int
    partition_leader_epoch: int
    magic: int
    crc: int
    attributes: int
    last_offset_delta: int
    first_timestamp: int
    max_timestamp: int
    producer_id: int
    producer_epoch: int
    base_sequence: int
    record_count: int

    @property
    def end(self) -> int:
        return self.start + self.size

    @property
    def codec(self) -> int:
        return self.attributes & CODEC_MASK

    @property
    def log_append_time(self) -> bool:
        return bool(self.attributes & TIMESTAMP_TYPE_MASK)

    @property
    def transactional(self) -> bool:
        return bool(self.attributes & TRANSACTIONAL_MASK)

    @property
    def control(self) -> bool:
        return bool(self.attributes & CONTROL_MASK)

    @property
    def delete_horizon(self) -> bool:
        return bool(self.attributes & DELETE_HORIZON_MASK)

    @property
    def last_offset(self) -> int:
        return self.base_offset + self.last_offset_delta

    @property
    def next_offset(self) -> int:
        """The offset after this batch: a consumer's position once the batch is read."""
        return self.last_offset + 1


@dataclass(frozen=True, slots=True)
class Split:
    """The complete batches of a fetch and how many bytes of a cut-short last batch were left out."""

    batches: list[BatchHeader]
    truncated_bytes: int


def split(data: bytes | bytearray | memoryview) -> Split:
    """The batches of one partition's fetched records bytes; see the module docstring."""
    batches: list[BatchHeader] = []
    total = len(data)
    position = 0
    unpack_header = HEADER.unpack_from
    unpack_head = _OFFSET_AND_LENGTH.unpack_from
    while total - position >= LOG_OVERHEAD:
        base_offset, length = unpack_head(data, position)
        size = LOG_OVERHEAD + length
        if total - position < max(size, MAGIC_OFFSET + 1):
            break
        magic = data[position + MAGIC_OFFSET]
        if magic >= 2:
            if size < HEADER_SIZE:
                raise CorruptBatchError(
                    f"record batch at byte {position} (offset {base_offset}) declares {length} bytes, "
                    f"fewer than a v2 header's {HEADER_SIZE - LOG_OVERHEAD}"
                )
            batches.append(BatchHeader(position, size, base_offset, *unpack_header(data, position)[2:]))
        else:
            if size < _LEGACY_MIN_SIZE:
                raise CorruptBatchError(
                    f"legacy record at byte {position} (offset {base_offset}) declares {length} bytes"
                )
            batches.append(
                BatchHeader(position, size, base_offset, -1, magic, 0, 0, 0, -1, -1, -1, -1, -1, -1)
            )
        position += size
    return Split(batches, total - position)


def refusal(header: BatchHeader, *, position: int, codec: int) -> Refusal | None:
    """Why ``header``'s batch cannot be copied to a producer writing ``codec``; ``None`` if it can.

    ``position`` is the consumer's position for the partition (the offset of the next record to
    copy). Checked in this order: format, control, position, timestamp type, delete horizon, offset
    contiguity, codec.
    """
    if header.magic < 2:
        return Refusal.LEGACY_FORMAT
    if header.control:
        return Refusal.CONTROL_BATCH
    if header.base_offset < position:
        return Refusal.BEFORE_POSITION
    if header.log_append_time:
        return Refusal.LOG_APPEND_TIME
    if header.delete_horizon:
        return Refusal.DELETE_HORIZON
    if header.record_count != header.last_offset_delta + 1:
        return Refusal.OFFSET_GAP
    if header.codec != codec:
        return Refusal.COMPRESSION_MISMATCH
    return None


def _stamp(
    head: bytearray,
    batch_size: int,
    producer_id: int,
    producer_epoch: int,
    base_sequence: int,
    transactional: bool,
) -> None:
    """Base offset, length, leader epoch, transactional bit and producer state into a batch's first
    :data:`HEADER_SIZE` bytes (the CRC is left to the caller)."""
    _OFFSET_AND_LENGTH.pack_into(head, 0, 0, batch_size - LOG_OVERHEAD)
    _LEADER_EPOCH.pack_into(head, 12, NO_PARTITION_LEADER_EPOCH)
    attributes = _ATTRIBUTES.unpack_from(head, ATTRIBUTES_OFFSET)[0]
    if transactional:
        attributes |= TRANSACTIONAL_MASK
    else:
        attributes &= ~TRANSACTIONAL_MASK
    _ATTRIBUTES.pack_into(head, ATTRIBUTES_OFFSET, attributes)
    _PRODUCER_STATE.pack_into(head, PRODUCER_ID_OFFSET, producer_id, producer_epoch, base_sequence)


def rewrite_in_place(
    batch: bytearray,
    *,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
) -> None:
    """Give one v2 batch (exactly its bytes) a producer's identity; see the module docstring."""
    _stamp(batch, len(batch), producer_id, producer_epoch, base_sequence, transactional)
    with memoryview(batch) as view:
        covered = view[ATTRIBUTES_OFFSET:]
        _CRC.pack_into(batch, CRC_OFFSET, crc32c(covered))
        covered.release()


def rewrite_head_in_place(
    head: bytearray,
    records: bytes | bytearray | memoryview,
    *,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
) -> None:
    """:func:`rewrite_in_place` for a batch held in two parts: ``head`` its first :data:`HEADER_SIZE`
    bytes (rewritten), ``records`` the rest (read, never written: it may be a view of fetched bytes).
    ``head + records`` is then the batch :func:`rewrite_in_place` makes of the whole."""
    if len(head) != HEADER_SIZE:
        raise ValueError(f"a batch header is {HEADER_SIZE} bytes, got {len(head)}")
    _stamp(head, HEADER_SIZE + len(records), producer_id, producer_epoch, base_sequence, transactional)
    with memoryview(head) as view:
        covered = view[ATTRIBUTES_OFFSET:]
        _CRC.pack_into(head, CRC_OFFSET, crc32c(records, crc32c(covered)))
        covered.release()


def rewrite(
    data: bytes | bytearray | memoryview,
    header: BatchHeader,
    *,
    producer_id: int = NO_PRODUCER_ID,
    producer_epoch: int = NO_PRODUCER_EPOCH,
    base_sequence: int = NO_SEQUENCE,
    transactional: bool = False,
) -> bytearray:
    """A copy of ``header``'s batch out of the fetched ``data``, rewritten by :func:`rewrite_in_place`."""
    if header.magic < 2:
        raise ValueError(f"cannot rewrite a magic {header.magic} batch (offset {header.base_offset})")
    batch = bytearray(data[header.start : header.end])
    rewrite_in_place(
        batch,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        transactional=transactional,
    )
    return batch


def crc_valid(data: bytes | bytearray | memoryview, header: BatchHeader) -> bool:
    """Whether a v2 batch's stored CRC matches its bytes (what a consumer's ``check.crcs`` checks)."""
    with memoryview(data) as view:
        covered = view[header.start + ATTRIBUTES_OFFSET : header.end]
        valid = crc32c(covered) == header.crc
        covered.release()
    return valid


def _varint(data: bytes | bytearray | memoryview, position: int) -> tuple[int, int]:
    """A zig-zag varint at ``position``: (value, position after it)."""
    raw = shift = 0
    for _ in range(10):
        byte = data[position]
        position += 1
        raw |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return (raw >> 1) ^ -(raw & 1), position
        shift += 7
    raise CorruptBatchError(f"varint longer than 10 bytes before byte {position}")


def _zigzag_varint(value: int) -> bytes:
    """``value`` as a zig-zag varint (the record format's lengths and deltas)."""
    raw = (value << 1) ^ (value >> 63)
    out = bytearray()
    while raw > 0x7F:
        out.append((raw & 0x7F) | 0x80)
        raw >>= 7
    out.append(raw)
    return bytes(out)


def restampable(header: BatchHeader, *, position: int, codec: int) -> bool:
    """Whether :func:`restamp` applies to ``header``'s batch for a producer writing ``codec``: a
    LogAppendTime batch that :func:`refusal` would accept as CreateTime, with no codec on either side."""
    if not header.log_append_time or header.codec != Codec.NONE or codec != Codec.NONE:
        return False
    as_create_time = dataclasses.replace(header, attributes=header.attributes & ~TIMESTAMP_TYPE_MASK)
    return refusal(as_create_time, position=position, codec=codec) is None


def restamp(data: bytes | bytearray | memoryview, header: BatchHeader) -> bytearray:
    """``header``'s uncompressed LogAppendTime batch out of ``data`` as a CreateTime batch whose every
    record's timestamp is the batch's max timestamp; see the module docstring. Producer state, offsets
    and the CRC are left to :func:`rewrite_in_place`. Raises :class:`CorruptBatchError` if the records
    do not fill the batch exactly, ``ValueError`` for a batch :func:`restampable` would not take."""
    if header.magic < 2 or not header.log_append_time or header.codec != Codec.NONE:
        raise ValueError(f"batch at offset {header.base_offset} is not an uncompressed LogAppendTime batch")
    view = memoryview(data)
    try:
        pieces = _restamped_records(view, header)
    except IndexError:  # a varint running past the fetched bytes
        raise CorruptBatchError(
            f"batch at offset {header.base_offset}: a record overruns the batch"
        ) from None
    out = bytearray(view[header.start : header.start + HEADER_SIZE])
    out += b"".join(pieces)
    _LENGTH.pack_into(out, LENGTH_OFFSET, len(out) - LOG_OVERHEAD)
    _ATTRIBUTES.pack_into(out, ATTRIBUTES_OFFSET, header.attributes & ~TIMESTAMP_TYPE_MASK)
    _TIMESTAMP.pack_into(out, FIRST_TIMESTAMP_OFFSET, header.max_timestamp)
    return out


def _restamped_records(view: memoryview, header: BatchHeader) -> list[bytes | memoryview]:
    """The pieces of :func:`restamp`'s records section: per record its new length, its attributes and
    a zero timestamp delta, and the rest of the record as fetched."""
    position = header.start + HEADER_SIZE
    end = header.end
    pieces: list[bytes | memoryview] = []
    add = pieces.append
    lengths = _LENGTH_VARINTS
    for _ in range(header.record_count):
        if position >= end:
            raise CorruptBatchError(f"batch at offset {header.base_offset}: fewer records than its count")
        raw = view[position]
        if raw < 0x80:  # a record under 64 bytes: its length in one byte
            length, body = (raw >> 1) ^ -(raw & 1), position + 1
        else:
            length, body = _varint(view, position)
        record_end = body + length
        if length < 2 or record_end > end:
            raise CorruptBatchError(f"batch at offset {header.base_offset}: a record overruns the batch")
        after_delta = body + 2  # the record's attributes byte, then its timestamp delta: skipped
        if view[body + 1] >= 0x80:
            _delta, after_delta = _varint(view, body + 1)
            if after_delta > record_end:
                raise CorruptBatchError(f"batch at offset {header.base_offset}: a record overruns the batch")
        new_length = length - (after_delta - body) + 2  # attributes and a one-byte zero delta
        encoded = lengths.get(new_length)
        if encoded is None:
            encoded = _zigzag_varint(new_length)
            if new_length < _CACHED_LENGTHS:
                lengths[new_length] = encoded
        add(encoded)
        add(_ZERO_ATTRIBUTES_AND_DELTA if view[body] == 0 else bytes((view[body], 0)))
        add(view[after_delta:record_end])
        position = record_end
    if position != end:
        raise CorruptBatchError(f"batch at offset {header.base_offset}: bytes after its last record")
    return pieces


_ZERO_ATTRIBUTES_AND_DELTA = b"\x00" + _zigzag_varint(0)
_CACHED_LENGTHS = 1 << 14
_LENGTH_VARINTS: dict[int, bytes] = {}
"""Record lengths under ``_CACHED_LENGTHS`` met so far, as zig-zag varints."""


ABORT_MARKER = 0
COMMIT_MARKER = 1
_CONTROL_KEY = struct.Struct(">hh")


def control_type(data: bytes | bytearray | memoryview, header: BatchHeader) -> int:
    """The control record type of a control batch: 0 abort, 1 commit (Java's ``ControlRecordType``).

    Control batches are never compressed and hold one record whose key is (version, type).
    """
    if not header.control or header.codec != Codec.NONE:
        raise ValueError(f"batch at offset {header.base_offset} is no uncompressed control batch")
    position = header.start + HEADER_SIZE
    _length, position = _varint(data, position)
    position += 1  # record attributes
    _timestamp_delta, position = _varint(data, position)
    _offset_delta, position = _varint(data, position)
    key_length, position = _varint(data, position)
    if key_length < 4:
        raise CorruptBatchError(f"control record at offset {header.base_offset} has a {key_length}-byte key")
    return int(_CONTROL_KEY.unpack_from(data, position)[1])


def aborted_batches(
    data: bytes | bytearray | memoryview,
    batches: Sequence[BatchHeader],
    aborted_transactions: Iterable[tuple[int, int]],
) -> set[int]:
    """Indices in ``batches`` of transactional batches that a ``read_committed`` consumer skips.

    ``aborted_transactions`` is the fetch response's list of (producer id, first offset). A
    producer's batches are skipped from its aborted transaction's first offset up to its abort
    marker; control batches themselves are refused by :func:`refusal` either way. As Java's
    ``CompletedFetch``, an aborted transaction counts from the first batch whose last offset
    reaches its first offset (aiokafka 0.14 compares the base offset instead).
    """
    pending = sorted(aborted_transactions, key=lambda entry: entry[1])
    aborting: set[int] = set()
    skipped: set[int] = set()
    next_pending = 0
    for index, header in enumerate(batches):
        if header.magic < 2 or header.producer_id < 0:
            continue
        while next_pending < len(pending) and pending[next_pending][1] <= header.last_offset:
            aborting.add(pending[next_pending][0])
            next_pending += 1
        if header.control:
            if control_type(data, header) == ABORT_MARKER:
                aborting.discard(header.producer_id)
            continue
        if header.transactional and header.producer_id in aborting:
            skipped.add(index)
    return skipped


class Action(enum.Enum):
    """What the raw path does with one fetched batch."""

    COPY = "copy"  # produce the batch as it is (rewritten by rewrite)
    RESTAMP = "restamp"  # a LogAppendTime batch made CreateTime by restamp, then produced as COPY
    SKIP = "skip"  # nothing of it goes to the target: control, aborted, or all before the position
    DECODE = "decode"  # the record path: decode its records at or after the position


@dataclass(frozen=True, slots=True)
class Step:
    action: Action
    header: BatchHeader
    reason: Refusal | None


@dataclass(frozen=True, slots=True)
class FetchPlan:
    """The steps for a fetch's complete batches, in order, and the consumer position after them."""

    steps: list[Step]
    next_position: int
    truncated_bytes: int


def plan(
    data: bytes | bytearray | memoryview,
    position: int,
    codec: int,
    *,
    aborted_transactions: Iterable[tuple[int, int]] | None = None,
) -> FetchPlan:
    """The raw path's steps for one partition's fetched ``data`` read from ``position``.

    ``aborted_transactions`` (the fetch response's, for a ``read_committed`` consumer; ``None`` for
    ``read_uncommitted``) drops aborted batches. A batch wholly before ``position`` is skipped, one
    that starts before it is decoded from ``position`` on. The position moves past every complete
    batch, as a consumer's does (past a compacted batch's last offset too, even if its last records
    were removed), and stays at the first batch not complete.
    """
    result = split(data)
    batches = result.batches
    aborted = set() if aborted_transactions is None else aborted_batches(data, batches, aborted_transactions)
    steps: list[Step] = []
    for index, header in enumerate(batches):
        if header.magic >= 2 and header.next_offset <= position:
            steps.append(Step(Action.SKIP, header, Refusal.BEFORE_POSITION))
            continue
        if index in aborted:
            steps.append(Step(Action.SKIP, header, Refusal.ABORTED))
        else:
            reason = refusal(header, position=position, codec=codec)
            if reason is None:
                steps.append(Step(Action.COPY, header, None))
            elif reason is Refusal.LOG_APPEND_TIME and restampable(header, position=position, codec=codec):
                steps.append(Step(Action.RESTAMP, header, reason))
            elif reason is Refusal.CONTROL_BATCH:
                steps.append(Step(Action.SKIP, header, reason))
            else:
                steps.append(Step(Action.DECODE, header, reason))
        if header.magic >= 2:
            position = header.next_offset
    return FetchPlan(steps, position, result.truncated_bytes)
