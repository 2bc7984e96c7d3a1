"""RawBatch as aiokafka's accumulator sees it: a closed builder whose build applies the producer's state once."""

from __future__ import annotations

import pytest
from aiokafka.record.default_records import DefaultRecordBatch

from pyconnect.kafka import record_batches as rb
from pyconnect.kafka.raw_batches_io import RawBatch
from tests.unit.kafka.test_record_batches import build, decoded, placed, with_attributes


def test_the_builder_interface_numbers_the_batch_once() -> None:
    fetched = placed(build(rb.Codec.LZ4, producer_id=90, producer_epoch=4, base_sequence=1000), 500)
    header = rb.split(fetched).batches[0]
    batch = RawBatch(fetched, header, transactional=False)
    assert batch.closed() and batch.record_count() == 4 and batch.size() == header.size
    assert batch.append(timestamp=None, key=b"k", value=b"v", headers=[]) is None
    batch._set_producer_state(3, 1, 77)
    first = bytes(batch._build())
    batch._set_producer_state(5, 5, 5)  # a retry keeps what the first drain gave it
    assert bytes(batch._build()) == first
    reader = DefaultRecordBatch(first)
    assert reader.validate_crc()
    assert (reader.base_offset, reader.producer_id, reader.producer_epoch, reader.base_sequence) == (
        0,
        3,
        1,
        77,
    )
    assert [r[1:] for r in decoded(first)] == [r[1:] for r in decoded(fetched)]  # offsets now from 0


def test_a_producer_without_idempotence_writes_no_producer_state() -> None:
    fetched = placed(build(transactional=True, producer_id=90, producer_epoch=4, base_sequence=1000), 0)
    built = bytes(RawBatch(fetched, rb.split(fetched).batches[0], transactional=False)._build())
    reader = DefaultRecordBatch(built)
    assert (reader.producer_id, reader.producer_epoch, reader.base_sequence) == (-1, -1, -1)
    assert not reader.is_transactional and reader.validate_crc()


@pytest.mark.parametrize(
    ("batch", "reason"),
    [
        (placed(build(offsets=[0, 1, 2, 9]), 0), rb.Refusal.OFFSET_GAP),
        (placed(with_attributes(build(), rb.TIMESTAMP_TYPE_MASK), 0), rb.Refusal.LOG_APPEND_TIME),
        (placed(with_attributes(build(), rb.CONTROL_MASK), 0), rb.Refusal.CONTROL_BATCH),
    ],
    ids=["gap", "log-append-time", "control"],
)
def test_a_batch_the_broker_would_refuse_is_refused_up_front(batch: bytes, reason: rb.Refusal) -> None:
    with pytest.raises(ValueError, match="cannot be produced as it is") as raised:
        RawBatch(batch, rb.split(batch).batches[0], transactional=False)
    assert reason.value in str(raised.value)


def test_only_the_header_is_copied_from_read_only_bytes_and_a_mutable_buffer_is_copied_whole() -> None:
    fetched = placed(build(rb.Codec.LZ4, producer_id=90, producer_epoch=4, base_sequence=1000), 500)
    header = rb.split(fetched).batches[0]
    from_view = RawBatch(memoryview(fetched), header, transactional=False, pieces=True)
    head, records = from_view._build()
    assert records.obj is fetched  # a view of the fetched bytes themselves
    assert bytes(head) + bytes(records) == bytes(RawBatch(fetched, header, transactional=False)._build())
    mutable = bytearray(fetched)
    copied = RawBatch(mutable, header, transactional=False, pieces=True)
    mutable[header.start + rb.HEADER_SIZE] ^= 0xFF
    assert bytes(copied._build()[1]) == fetched[header.start + rb.HEADER_SIZE : header.end]
