"""Whether a source task may hand the worker fetched record batches to write as they are.

Contract: :func:`records_only_reason` says why a task's fetched batches must go record by record
(``None``: they need not), the one rule both the assembly's log line and the gate use;
:func:`raw_batch_target` gives the :class:`~pyconnect.api.source.RawBatchTarget` a task
gets through ``accept_raw_batches`` (see :mod:`pyconnect.api.source`), or ``None``. A raw batch is
written with its keys, values, headers and timestamps as fetched, so it is allowed only where the
record path would write those same bytes: the key, value and header converters are all
``ByteArrayConverter`` (bytes in, the same bytes out: the default ``SimpleHeaderConverter`` would
write a BYTES header as base64 text, so it is not enough for headers), and no transformation (or
predicate) applies. The target codec is the producer's ``compression.type``: the record path
compresses every batch with it, so a fetched batch is copied only when it already is in that codec.

:func:`interleaved` orders the raw batches of one poll for the producer: one of each target
partition in turn, each partition's own batches in their order (all that offsets and the target
log depend on). The producer queues one batch per partition until the one before it is sent, and a
produce request carries at most one batch per partition: batches handed over partition after
partition (as a poll returns them) left one batch per request, interleaved they fill each request
with one batch of every partition that has one.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import chain, zip_longest
from typing import Any

from pyconnect.api.converters.bytearray import ByteArrayConverter
from pyconnect.api.source import RawBatchTarget, RawRecordBatch, SourceTask
from pyconnect.kafka import aiokafka_seam as seam
from pyconnect.kafka.record_batches import Codec
from pyconnect.worker.submitted_records import partition_key
from pyconnect.worker.worker_connector import java_class_name

CONVERTER_KEYS = ("key.converter", "value.converter", "header.converter")


def records_only_reason(converters: Sequence[Any], transformations: Any) -> str | None:
    """Why fetched batches cannot be written as they are, by the task's converters (key, value,
    header) and transformations: a converter other than ``ByteArrayConverter`` (it would not write the
    fetched bytes), or any transformation; ``None`` when they can."""
    for key, converter in zip(CONVERTER_KEYS, converters, strict=True):
        if type(converter) is not ByteArrayConverter:
            return f"{key} is {java_class_name(type(converter))}, not ByteArrayConverter"
    if transformations:
        return "the connector has transformations"
    return None


def raw_batch_target(
    task: SourceTask, producer: Any, converters: Sequence[Any], transformations: Any
) -> RawBatchTarget | None:
    """The target for ``task``'s raw batches, or ``None`` where they are not allowed (see above)."""
    if type(task).accept_raw_batches is SourceTask.accept_raw_batches:
        return None
    if records_only_reason(converters, transformations) is not None:
        return None
    if not hasattr(producer, "send_batch"):
        return None
    compression = seam.producer_compression_type(producer)
    try:
        codec = Codec.of(str(compression or "none"))
    except ValueError:
        return None
    limit = seam.max_request_bytes_or_none(producer)
    if not isinstance(limit, int):
        return None
    return RawBatchTarget(int(codec), limit)


def interleaved(batches: list[RawRecordBatch]) -> list[RawRecordBatch]:
    """``batches`` taking one of each (topic, partition) in turn; see the module docstring. Batches
    keep their order where a target partition takes batches of more than one source partition, or a
    source partition goes to more than one target partition: reordering then could commit a source
    offset before an earlier one is written, or change a target partition's order."""
    groups: dict[tuple[str, int], list[RawRecordBatch]] = {}
    for batch in batches:
        key = (batch.topic, batch.kafka_partition)
        group = groups.get(key)
        if group is None:
            groups[key] = [batch]
        elif (
            batch.source_partition is group[0].source_partition
            or batch.source_partition == group[0].source_partition
        ):
            group.append(batch)
        else:
            return batches
    if len(groups) < 2:
        return batches
    sources = {partition_key(group[0].source_partition) for group in groups.values()}
    if len(sources) != len(groups):
        return batches
    rounds = zip_longest(*groups.values(), fillvalue=None)
    return [batch for batch in chain.from_iterable(rounds) if batch is not None]
