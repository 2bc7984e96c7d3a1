"""Whether a source task may hand the worker fetched record batches to write as they are.

Contract: :func:`raw_batch_target` gives the :class:`~pyconnect.api.source.RawBatchTarget` a task
gets through ``accept_raw_batches`` (see :mod:`pyconnect.api.source`), or ``None``. A raw batch is
written with its keys, values, headers and timestamps as fetched, so it is allowed only where the
record path would write those same bytes: the key, value and header converters are all
``ByteArrayConverter`` (bytes in, the same bytes out: the default ``SimpleHeaderConverter`` would
write a BYTES header as base64 text, so it is not enough for headers), and no transformation (or
predicate) applies. The target codec is the producer's ``compression.type``: the record path
compresses every batch with it, so a fetched batch is copied only when it already is in that codec.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pyconnect.api.converters.bytearray import ByteArrayConverter
from pyconnect.api.source import RawBatchTarget, SourceTask
from pyconnect.kafka.record_batches import Codec


def raw_batch_target(
    task: SourceTask, producer: Any, converters: Sequence[Any], transformations: Any
) -> RawBatchTarget | None:
    """The target for ``task``'s raw batches, or ``None`` where they are not allowed (see above)."""
    if type(task).accept_raw_batches is SourceTask.accept_raw_batches:
        return None
    if transformations:
        return None
    if not all(type(converter) is ByteArrayConverter for converter in converters):
        return None
    if not hasattr(producer, "send_batch"):
        return None
    compression = getattr(producer, "_compression_type", None)
    try:
        codec = Codec.of(str(compression or "none"))
    except ValueError:
        return None
    limit = getattr(producer, "_max_request_size", None)
    if not isinstance(limit, int):
        return None
    return RawBatchTarget(int(codec), limit)
