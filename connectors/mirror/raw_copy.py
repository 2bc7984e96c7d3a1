"""MirrorSourceTask's raw path: one partition's fetched bytes into batches copied as they are and
records decoded for the rest (issue: a raw record-batch mirror path).

When the worker allows raw batches (:mod:`pyconnect.api.source`: ByteArrayConverter everywhere, no
transformation) and ``pyconnect.mirror.raw.batches.enable`` is true (the default), a task fetches
record batches as bytes (:mod:`pyconnect.kafka.raw_source_fetch`) and :func:`take` decides each
batch (:func:`pyconnect.kafka.record_batches.plan`, the consumer's ``isolation.level``):

- copied: a :class:`~pyconnect.api.source.RawRecordBatch` whose source offset is the batch's last
  offset (what the record path commits after its last record) and whose records are the batch's
  contiguous offsets ``first_offset ...``: offset syncs and metrics follow from that arithmetic;
- restamped, then copied: an uncompressed LogAppendTime batch, made the CreateTime batch the record
  path would write (:func:`~pyconnect.kafka.record_batches.restamp`: each record's timestamp the
  broker's append time, its bytes otherwise untouched);
- decoded (the record path, from the position on): gaps left by compaction, compressed
  LogAppendTime batches, formats older than v2, another codec than the target producer's
  ``compression.type``, a batch starting before the position, a batch larger than the producer's
  ``max.request.size``;
- skipped: control batches, aborted transactions under ``read_committed``, batches already copied.

The records written are the same either way: key, value, headers, timestamp, partition and order
(per partition, batches and decoded records keep the source order).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from connectors.mirror.record_copy import copied
from connectors.mirror.records import OFFSET_KEY
from pyconnect.api.source import RawBatchTarget, RawRecordBatch, SourceRecord
from pyconnect.kafka.raw_batches_io import RawFetch, decode_records
from pyconnect.kafka.record_batches import Action, plan, restamp

RAW_BATCHES_CONFIG = "pyconnect.mirror.raw.batches.enable"
"""MirrorSourceConnector key of ours: ``true`` (the default) copies record batches as they are where the
worker allows it; ``false`` keeps the record path."""


def enabled(value: str | None) -> bool:
    """The key's value (``None``: the default, true); anything but true/false raises ``ValueError``."""
    if value is None:
        return True
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ValueError(
            f"Invalid value {value} for configuration {RAW_BATCHES_CONFIG}: expected true or false"
        )
    return text == "true"


def enabled_error(value: str | None) -> str | None:
    """The validation message for the key's value, or ``None``."""
    try:
        enabled(value)
    except ValueError as exc:
        return str(exc)
    return None


@dataclass(slots=True)
class Taken:
    """What :func:`take` made of one partition's fetch."""

    items: list[SourceRecord | RawRecordBatch] = field(default_factory=list)
    next_position: int = 0
    records: int = 0  # records copied or decoded
    copied_batches: int = 0
    decoded_batches: int = 0
    skipped_batches: int = 0
    timestamps: list[int] = field(default_factory=list)  # per copied batch its first and max
    size: int = 0  # bytes of copied batches, values of decoded records
    last_offset: int | None = None
    end: int = 0  # the position after the fetch's complete batches, had all been taken
    rest: int | None = None  # cut by max_records: the byte of the fetch where the batches not taken start


def take(
    fetch: RawFetch,
    position: int,
    target: RawBatchTarget,
    *,
    read_committed: bool,
    remote: str,
    partition: int,
    source_partition: Mapping[str, Any],
    max_records: int | None = None,
) -> Taken:
    """One partition's fetch read from ``position``: the items for the worker, in offset order. With
    ``max_records`` (what is left of the consumer's ``max.poll.records`` in this poll), batches stop
    being taken once that many records were: whole batches, at least one, the position stopping after
    the last taken; ``rest`` then names where the batches not taken start in the fetched bytes (the
    caller keeps them for its next poll, :meth:`~pyconnect.kafka.raw_source_fetch.RawSourceFetch.hold`,
    as Java's consumer keeps the rest of a fetch) and ``end`` is where the whole fetch ends."""
    data = fetch.records
    steps = plan(
        data,
        position,
        target.compression_codec,
        aborted_transactions=fetch.aborted_transactions if read_committed else None,
    )
    taken = Taken(next_position=steps.next_position, end=steps.next_position)
    items = taken.items
    view = memoryview(data)
    limit = target.max_batch_bytes
    after = position  # the position after the steps taken so far
    for step in steps.steps:
        header = step.header
        if step.action is not Action.SKIP and max_records is not None and taken.records >= max_records:
            taken.next_position = after
            taken.rest = header.start
            break
        after = max(after, header.next_offset if header.magic >= 2 else header.base_offset + 1)
        if step.action is Action.SKIP:
            taken.skipped_batches += 1
            continue
        if step.action is not Action.DECODE and header.size <= limit:
            if step.action is Action.RESTAMP:
                data_out: bytes | bytearray | memoryview = restamp(view, header)
                first_timestamp = header.max_timestamp
            else:
                data_out = view[header.start : header.end]
                first_timestamp = header.first_timestamp
            items.append(
                RawRecordBatch(
                    source_partition,
                    {OFFSET_KEY: header.last_offset},
                    remote,
                    partition,
                    data_out,
                    header.record_count,
                    header.base_offset,
                    first_timestamp,
                    header.max_timestamp,
                )
            )
            taken.copied_batches += 1
            taken.records += header.record_count
            taken.timestamps.append(first_timestamp)
            taken.timestamps.append(header.max_timestamp)
            taken.size += len(data_out)
            taken.last_offset = header.last_offset
            continue
        taken.decoded_batches += 1
        if header.magic < 2:  # a legacy entry's offset is its last record's: the position moves past it
            taken.next_position = max(taken.next_position, header.base_offset + 1)
        decoded = decode_records(view[header.start : header.end], position)
        if not decoded:
            continue
        items.extend(copied(decoded, source_partition, remote, partition))
        taken.records += len(decoded)
        taken.timestamps.extend([m.timestamp for m in decoded if m.timestamp is not None])
        taken.size += sum([len(v) for v in [m.value for m in decoded] if v is not None])
        last = decoded[-1].offset
        taken.last_offset = last
        taken.next_position = max(taken.next_position, last + 1)
    return taken
