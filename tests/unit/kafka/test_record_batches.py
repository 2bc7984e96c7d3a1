"""Record batches as bytes: golden checks against aiokafka's own v2 builder and reader."""

from __future__ import annotations

import os
import struct

import pytest
from aiokafka.record.default_records import DefaultRecordBatch, DefaultRecordBatchBuilder
from aiokafka.record.legacy_records import LegacyRecordBatchBuilder
from aiokafka.record.util import calc_crc32c

from pyconnect.kafka import record_batches as rb

T0 = 1_700_000_000_000
RECORDS = [
    (b"k0", b"v0", [("h", b"x"), ("empty", None)]),
    (None, b"value without key", []),
    (b"k2", None, [("trace", b"\x00\x01")]),
    (b"k3", b"v3" * 50, []),
]


def build(
    codec: int = rb.Codec.NONE,
    *,
    transactional: bool = False,
    producer_id: int = -1,
    producer_epoch: int = -1,
    base_sequence: int = -1,
    offsets: list[int] | None = None,
    records: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]] = RECORDS,
    timestamps: list[int] | None = None,
) -> bytearray:
    builder = DefaultRecordBatchBuilder(
        2, codec, int(transactional), producer_id, producer_epoch, base_sequence, 1 << 20
    )
    for index, (key, value, headers) in enumerate(records):
        offset = index if offsets is None else offsets[index]
        timestamp = T0 + 7 * index if timestamps is None else timestamps[index]
        builder.append(offset, timestamp, key, value, headers)
    return builder.build()


def placed(batch: bytearray, base_offset: int, leader_epoch: int = 5) -> bytes:
    """The batch as a broker serves it: base offset and leader epoch assigned (outside the CRC)."""
    struct.pack_into(">q", batch, 0, base_offset)
    struct.pack_into(">i", batch, 12, leader_epoch)
    return bytes(batch)


def with_attributes(batch: bytearray, set_bits: int) -> bytearray:
    attributes = struct.unpack_from(">h", batch, 21)[0] | set_bits
    struct.pack_into(">h", batch, 21, attributes)
    struct.pack_into(">I", batch, 17, calc_crc32c(bytes(batch[21:])))
    return batch


def log_append_time(batch: bytearray, append_time: int) -> bytearray:
    """The batch as a LogAppendTime topic stores it: the timestamp-type bit set, the broker's append
    time as the max timestamp, the records' own timestamps (deltas) left as the producer wrote them."""
    struct.pack_into(">q", batch, 35, append_time)
    return with_attributes(batch, rb.TIMESTAMP_TYPE_MASK)


def control_batch(marker: int, producer_id: int, base_offset: int) -> bytes:
    batch = build(
        transactional=True,
        producer_id=producer_id,
        producer_epoch=0,
        base_sequence=-1,
        records=[(struct.pack(">hh", 0, marker), struct.pack(">hi", 0, 0), [])],
    )
    return placed(with_attributes(batch, rb.CONTROL_MASK), base_offset)


def decoded(batch: bytes) -> list[tuple[object, ...]]:
    return [
        (record.offset, record.timestamp, record.key, record.value, list(record.headers))
        for record in DefaultRecordBatch(batch)
    ]


CODECS = [rb.Codec.NONE, rb.Codec.GZIP, rb.Codec.LZ4, rb.Codec.ZSTD, rb.Codec.SNAPPY]


@pytest.mark.parametrize("codec", CODECS, ids=lambda codec: codec.name.lower())
def test_split_views_each_header_as_the_reader_does(codec: rb.Codec) -> None:
    first = placed(build(codec), 100)
    second = placed(build(codec, transactional=True, producer_id=42, producer_epoch=3, base_sequence=9), 104)
    fetched = first + second
    result = rb.split(fetched)
    assert result.truncated_bytes == 0
    assert [(h.start, h.end) for h in result.batches] == [(0, len(first)), (len(first), len(fetched))]
    for header, raw in zip(result.batches, (first, second), strict=True):
        reader = DefaultRecordBatch(raw)
        assert header.base_offset == reader.base_offset
        assert header.magic == 2 and header.partition_leader_epoch == 5
        assert header.crc == reader.crc
        assert header.codec == reader.compression_type == codec
        assert header.transactional == reader.is_transactional
        assert not header.control and not header.log_append_time
        assert header.last_offset_delta == reader.last_offset_delta == 3
        assert header.record_count == 4
        assert header.first_timestamp == reader.first_timestamp == T0
        assert header.max_timestamp == reader.max_timestamp == T0 + 21
        assert (header.producer_id, header.producer_epoch, header.base_sequence) == (
            reader.producer_id,
            reader.producer_epoch,
            reader.base_sequence,
        )
        assert header.next_offset == reader.next_offset
        assert rb.crc_valid(fetched, header)
    assert result.batches[1].base_offset == 104 and result.batches[1].producer_id == 42


def test_a_cut_short_last_batch_is_left_out_and_reported() -> None:
    first = placed(build(), 0)
    second = placed(build(rb.Codec.LZ4), 4)
    for cut in (1, 11, 12, 17, len(second) - 1):
        result = rb.split(first + second[:cut])
        assert [h.base_offset for h in result.batches] == [0]
        assert result.truncated_bytes == cut
    assert rb.split(b"").batches == []


def test_a_length_shorter_than_a_header_is_corrupt() -> None:
    batch = bytearray(placed(build(), 0))
    struct.pack_into(">i", batch, 8, 20)
    with pytest.raises(rb.CorruptBatchError, match="fewer than a v2 header"):
        rb.split(bytes(batch))


def test_legacy_entries_are_split_and_refused() -> None:
    builder = LegacyRecordBatchBuilder(1, 0, 1 << 20)
    builder.append(0, T0, b"k", b"v", [])
    legacy = bytes(builder.build())
    result = rb.split(legacy + placed(build(), 1))
    assert [(h.magic, h.base_offset) for h in result.batches] == [(1, 0), (2, 1)]
    assert result.batches[0].end == len(legacy)
    assert rb.refusal(result.batches[0], position=0, codec=rb.Codec.NONE) is rb.Refusal.LEGACY_FORMAT
    with pytest.raises(ValueError, match="magic 1"):
        rb.rewrite(legacy, result.batches[0])


@pytest.mark.parametrize("codec", CODECS, ids=lambda codec: codec.name.lower())
@pytest.mark.parametrize(
    ("state", "transactional"),
    [((-1, -1, -1), False), ((7001, 2, 123), False), ((7001, 2, 0), True)],
    ids=["plain", "idempotent", "transactional"],
)
def test_rewrite_keeps_every_record_and_gives_a_valid_crc(
    codec: rb.Codec, state: tuple[int, int, int], transactional: bool
) -> None:
    source = build(codec, transactional=True, producer_id=55, producer_epoch=1, base_sequence=400)
    expected = decoded(bytes(source))
    fetched = placed(bytearray(source), 1000, leader_epoch=9)
    header = rb.split(fetched).batches[0]
    producer_id, producer_epoch, base_sequence = state
    out = rb.rewrite(
        fetched,
        header,
        producer_id=producer_id,
        producer_epoch=producer_epoch,
        base_sequence=base_sequence,
        transactional=transactional,
    )
    reader = DefaultRecordBatch(bytes(out))
    assert reader.validate_crc()
    assert reader.base_offset == 0
    assert struct.unpack_from(">i", out, 12)[0] == -1
    assert (reader.producer_id, reader.producer_epoch, reader.base_sequence) == state
    assert reader.is_transactional is transactional
    assert reader.compression_type == codec
    assert (reader.first_timestamp, reader.max_timestamp) == (T0, T0 + 21)
    assert decoded(bytes(out)) == expected
    assert out[61:] == fetched[61:]  # the records bytes travel untouched
    again = rb.split(bytes(out)).batches[0]
    assert rb.crc_valid(out, again) and again.record_count == 4


def test_rewrite_in_place_matches_aiokafkas_own_builder() -> None:
    """A batch built without producer state, rewritten, equals the batch built with that state."""
    plain = build(rb.Codec.LZ4)
    rb.rewrite_in_place(plain, producer_id=12, producer_epoch=3, base_sequence=77)
    assert bytes(plain) == bytes(build(rb.Codec.LZ4, producer_id=12, producer_epoch=3, base_sequence=77))
    transactional = build(rb.Codec.NONE)
    rb.rewrite_in_place(transactional, producer_id=12, producer_epoch=3, base_sequence=0, transactional=True)
    assert bytes(transactional) == bytes(
        build(rb.Codec.NONE, transactional=True, producer_id=12, producer_epoch=3, base_sequence=0)
    )


def test_refusals_name_what_the_broker_or_the_records_would_not_take() -> None:
    def header(batch: bytes) -> rb.BatchHeader:
        return rb.split(batch).batches[0]

    plain = header(placed(build(), 10))
    assert rb.refusal(plain, position=10, codec=rb.Codec.NONE) is None
    assert rb.refusal(plain, position=5, codec=rb.Codec.NONE) is None  # a gap before it: not ours
    assert rb.refusal(plain, position=11, codec=rb.Codec.NONE) is rb.Refusal.BEFORE_POSITION
    assert rb.refusal(plain, position=10, codec=rb.Codec.LZ4) is rb.Refusal.COMPRESSION_MISMATCH
    lz4 = header(placed(build(rb.Codec.LZ4), 10))
    assert rb.refusal(lz4, position=10, codec=rb.Codec.NONE) is rb.Refusal.COMPRESSION_MISMATCH
    assert rb.refusal(lz4, position=10, codec=rb.Codec.of("lz4")) is None
    compacted = header(placed(build(offsets=[0, 1, 2, 5]), 10))
    assert (compacted.record_count, compacted.last_offset_delta) == (4, 5)
    assert rb.refusal(compacted, position=10, codec=rb.Codec.NONE) is rb.Refusal.OFFSET_GAP
    log_append = header(placed(with_attributes(build(), rb.TIMESTAMP_TYPE_MASK), 10))
    assert log_append.log_append_time
    assert rb.refusal(log_append, position=10, codec=rb.Codec.NONE) is rb.Refusal.LOG_APPEND_TIME
    horizon = header(placed(with_attributes(build(), rb.DELETE_HORIZON_MASK), 10))
    assert rb.refusal(horizon, position=10, codec=rb.Codec.NONE) is rb.Refusal.DELETE_HORIZON
    control = header(control_batch(rb.COMMIT_MARKER, 9, 10))
    assert control.control and control.transactional
    assert rb.refusal(control, position=10, codec=rb.Codec.NONE) is rb.Refusal.CONTROL_BATCH
    assert rb.control_type(control_batch(rb.COMMIT_MARKER, 9, 10), control) == rb.COMMIT_MARKER
    with pytest.raises(ValueError, match=r"unknown compression\.type"):
        rb.Codec.of("brotli")


def test_aborted_batches_follow_the_markers_and_the_aborted_list() -> None:
    def txn(producer_id: int, base: int) -> bytes:
        return placed(
            build(transactional=True, producer_id=producer_id, producer_epoch=0, base_sequence=0), base
        )

    parts = [
        txn(1, 0),  # 0: producer 1, aborted below
        txn(2, 4),  # 1: producer 2, committed
        control_batch(rb.ABORT_MARKER, 1, 8),  # 2
        control_batch(rb.COMMIT_MARKER, 2, 9),  # 3
        txn(1, 10),  # 4: producer 1 again, a later transaction that commits
        placed(build(producer_id=3, producer_epoch=0, base_sequence=0), 14),  # 5: idempotent only
        txn(4, 18),  # 6: offsets 18-21; producer 4's aborted transaction starts at 20, inside it
    ]
    fetched = b"".join(parts)
    batches = rb.split(fetched).batches
    assert len(batches) == 7
    skipped = rb.aborted_batches(fetched, batches, [(4, 20), (1, 0)])
    assert skipped == {0, 6}
    assert rb.aborted_batches(fetched, batches, []) == set()


def test_crc32c_agrees_with_aiokafkas() -> None:
    for size in (0, 1, 61, 1000, 65_537):
        data = os.urandom(size)
        assert rb.crc32c(data) == calc_crc32c(data)
        assert rb.crc32c(bytearray(data)) == calc_crc32c(data)
        assert rb.crc32c(memoryview(data)[3:]) == calc_crc32c(data[3:])


def test_a_plan_copies_skips_and_decodes_a_whole_fetch() -> None:
    def txn(producer_id: int, base: int) -> bytes:
        return placed(
            build(transactional=True, producer_id=producer_id, producer_epoch=0, base_sequence=0), base
        )

    fetched = b"".join(
        [
            placed(build(), 96),  # 96-99: all before the position 102
            placed(build(), 100),  # 100-103: starts before the position
            placed(build(), 104),  # copied
            txn(7, 108),  # aborted
            control_batch(rb.ABORT_MARKER, 7, 112),
            placed(build(offsets=[0, 1, 3, 4]), 113),  # 113-117, one record compacted away
            placed(build(rb.Codec.GZIP), 118),  # another codec
            placed(build(), 122),  # copied
        ]
    )
    tail = placed(build(), 126)
    result = rb.plan(fetched + tail[:40], 102, rb.Codec.NONE, aborted_transactions=[(7, 108)])
    A, R = rb.Action, rb.Refusal
    assert [(s.action, s.reason, s.header.base_offset) for s in result.steps] == [
        (A.SKIP, R.BEFORE_POSITION, 96),
        (A.DECODE, R.BEFORE_POSITION, 100),
        (A.COPY, None, 104),
        (A.SKIP, R.ABORTED, 108),
        (A.SKIP, R.CONTROL_BATCH, 112),
        (A.DECODE, R.OFFSET_GAP, 113),
        (A.DECODE, R.COMPRESSION_MISMATCH, 118),
        (A.COPY, None, 122),
    ]
    assert result.next_position == 126 and result.truncated_bytes == 40
    uncommitted = rb.plan(fetched, 102, rb.Codec.NONE)
    assert [s.action for s in uncommitted.steps][3] is A.COPY, "read_uncommitted copies the aborted batch"


APPEND_TIME = T0 + 86_400_000
# producer timestamps whose deltas take one to five varint bytes, one before the base timestamp
SPREAD = [T0, T0 + 100, T0 - 3, T0 + 2_000_000, T0 + 30_000_000_000]


@pytest.mark.parametrize(
    "records",
    [[*RECORDS, (b"k4", b"", [])], [(b"k" * 300, b"v" * 20_000, [("h" * 200, b"x" * 500)])] * 5],
    ids=["small", "multi-byte-lengths"],
)
def test_restamp_writes_the_batch_the_record_path_writes_for_records_at_the_append_time(
    records: list[tuple[bytes | None, bytes | None, list[tuple[str, bytes | None]]]],
) -> None:
    """A LogAppendTime batch restamped and given producer state equals, byte for byte, the batch
    aiokafka's builder writes for the same records each stamped with the append time (what a consumer
    reads for them, and what the record path produces)."""
    count = len(records)
    stored = placed(log_append_time(build(records=records, timestamps=SPREAD[:count]), APPEND_TIME), 500)
    header = rb.split(stored).batches[0]
    assert rb.restampable(header, position=500, codec=rb.Codec.NONE)
    restamped = rb.restamp(stored, header)
    rb.rewrite_in_place(restamped, producer_id=12, producer_epoch=3, base_sequence=77)
    expected = build(
        records=records, timestamps=[APPEND_TIME] * count, producer_id=12, producer_epoch=3, base_sequence=77
    )
    assert bytes(restamped) == bytes(expected)
    assert [(o, t, k, v) for o, t, k, v, _ in decoded(bytes(restamped))] == [
        (o - 500, APPEND_TIME, k, v) for o, _, k, v, _ in decoded(stored)
    ]
    again = rb.split(bytes(restamped)).batches[0]
    assert not again.log_append_time and rb.refusal(again, position=0, codec=rb.Codec.NONE) is None


def test_only_uncompressed_log_append_time_batches_that_would_copy_otherwise_are_restampable() -> None:
    def header(batch: bytearray, base: int = 10) -> rb.BatchHeader:
        return rb.split(placed(batch, base)).batches[0]

    plain = header(log_append_time(build(), APPEND_TIME))
    assert rb.restampable(plain, position=10, codec=rb.Codec.NONE)
    assert not rb.restampable(plain, position=10, codec=rb.Codec.LZ4)  # the producer compresses
    assert not rb.restampable(plain, position=11, codec=rb.Codec.NONE)  # starts before the position
    lz4 = header(log_append_time(build(rb.Codec.LZ4), APPEND_TIME))
    assert not rb.restampable(lz4, position=10, codec=rb.Codec.NONE)
    assert not rb.restampable(lz4, position=10, codec=rb.Codec.LZ4)  # would need recompressing
    gaps = header(log_append_time(build(offsets=[0, 1, 3, 4]), APPEND_TIME))
    assert not rb.restampable(gaps, position=10, codec=rb.Codec.NONE)
    create_time = header(build())
    assert not rb.restampable(create_time, position=10, codec=rb.Codec.NONE)
    with pytest.raises(ValueError, match="not an uncompressed LogAppendTime batch"):
        rb.restamp(placed(build(), 10), create_time)
    fetched = placed(log_append_time(build(), APPEND_TIME), 10) + placed(
        log_append_time(build(rb.Codec.LZ4), APPEND_TIME), 14
    )
    steps = rb.plan(fetched, 10, rb.Codec.NONE).steps
    assert [(s.action, s.reason) for s in steps] == [
        (rb.Action.RESTAMP, rb.Refusal.LOG_APPEND_TIME),
        (rb.Action.DECODE, rb.Refusal.LOG_APPEND_TIME),
    ]


def test_restamp_refuses_records_that_do_not_fill_their_batch() -> None:
    stored = bytearray(placed(log_append_time(build(), APPEND_TIME), 0))
    header = rb.split(bytes(stored)).batches[0]
    fewer = rb.BatchHeader(**{**_fields(header), "record_count": header.record_count + 1})
    with pytest.raises(rb.CorruptBatchError, match="fewer records"):
        rb.restamp(stored, fewer)
    more = rb.BatchHeader(**{**_fields(header), "record_count": header.record_count - 1})
    with pytest.raises(rb.CorruptBatchError, match="after its last record"):
        rb.restamp(stored, more)
    stored[61] = 0x7E  # the first record's length: 63 bytes, past the batch's end
    with pytest.raises(rb.CorruptBatchError, match="overruns"):
        rb.restamp(stored, rb.BatchHeader(**{**_fields(header), "size": 61 + 20}))
    # a two-byte record whose timestamp delta never ends, at the very end of the fetched bytes
    cut = bytes(stored[:61]) + b"\x04\x00\x80"
    with pytest.raises(rb.CorruptBatchError, match="overruns"):
        rb.restamp(cut, rb.BatchHeader(**{**_fields(header), "size": 64, "record_count": 1}))


def _fields(header: rb.BatchHeader) -> dict[str, object]:
    return {name: getattr(header, name) for name in rb.BatchHeader.__slots__}
