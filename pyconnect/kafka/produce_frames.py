"""A Produce request (v3-v8) as a list of buffers to write, the record batches left where they are.

A produce request is a few dozen bytes of framing around the record batches it carries. Encoding it
field by field and concatenating the result (what aiokafka's protocol structs do) copies every batch
several times: into its length-prefixed field, into each enclosing array and struct, into the header
and body, into the size-prefixed frame. :func:`produce_frames` instead returns the framing as small
``bytes`` pieces interleaved with the batches' own buffers, ready for one ``writelines``: the batches
are copied once, by the kernel.

Contract (pure, standard library only):

- ``produce_frames(version, correlation_id, client_id, transactional_id, acks, timeout_ms, topics)``:
  ``topics`` is a sequence of ``(topic, [(partition, batch), ...])``; a ``batch`` is one bytes-like
  object or a tuple of bytes-like pieces that together are one batch (a rewritten header and the
  fetched records, :class:`~pyconnect.kafka.raw_batches_io.RawBatch`), or ``None`` for a null records
  field. The returned buffers, joined, are exactly the request frame Kafka reads: the 4-byte size,
  request header v1 (api key 0, ``version``, ``correlation_id``, nullable ``client_id``) and the body
  of Produce v3-v8 (nullable ``transactional_id``, ``acks``, ``timeout_ms``, the topics array, each
  partition's records as nullable bytes). Produce v9+ is a flexible version (compact fields, tagged
  fields) and is not encoded here: ``ValueError`` for a version outside 3-8.
- Nothing is copied from a batch; the pieces are the caller's objects, which must not change until
  the frame is written.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from typing import TypeAlias

Buffer: TypeAlias = bytes | bytearray | memoryview
BatchBuffers: TypeAlias = Buffer | tuple[Buffer, ...] | None

PRODUCE_API_KEY = 0
LOWEST_VERSION = 3
HIGHEST_VERSION = 8

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_HEADER = struct.Struct(">hhi")  # api key, api version, correlation id
_ACKS_TIMEOUT_COUNT = struct.Struct(">hii")  # acks, timeout, topic count
_PARTITION_AND_SIZE = struct.Struct(">ii")
_NULL_STRING = _INT16.pack(-1)
_NULL_BYTES = -1


def _nullable_string(value: str | None) -> bytes:
    if value is None:
        return _NULL_STRING
    encoded = value.encode("utf-8")
    return _INT16.pack(len(encoded)) + encoded


def _batch_size(batch: BatchBuffers) -> int:
    if batch is None:
        return _NULL_BYTES
    if type(batch) is tuple:
        return sum(len(piece) for piece in batch)
    return len(batch)


def produce_frames(
    version: int,
    correlation_id: int,
    client_id: str | None,
    transactional_id: str | None,
    acks: int,
    timeout_ms: int,
    topics: Sequence[tuple[str, Sequence[tuple[int, BatchBuffers]]]],
) -> list[Buffer]:
    """The request frame's buffers, in order; see the module docstring."""
    if not LOWEST_VERSION <= version <= HIGHEST_VERSION:
        raise ValueError(f"Produce v{version} is not encoded here (v{LOWEST_VERSION}-v{HIGHEST_VERSION})")
    head = bytearray(_HEADER.pack(PRODUCE_API_KEY, version, correlation_id))
    head += _nullable_string(client_id)
    head += _nullable_string(transactional_id)
    head += _ACKS_TIMEOUT_COUNT.pack(acks, timeout_ms, len(topics))
    frames: list[Buffer] = [b"", head]  # the size goes first, once known
    pending = head  # the framing since the last batch, extended in place (it is already in frames)
    for topic, partitions in topics:
        pending += _nullable_string(topic)
        pending += _INT32.pack(len(partitions))
        for partition, batch in partitions:
            batch_size = _batch_size(batch)
            pending += _PARTITION_AND_SIZE.pack(partition, batch_size)
            if batch is None:
                continue
            if type(batch) is tuple:
                frames.extend(batch)
            else:
                frames.append(batch)  # type: ignore[arg-type]
            pending = bytearray()
            frames.append(pending)
    frames[0] = _INT32.pack(sum(len(piece) for piece in frames))
    return [piece for piece in frames if len(piece)]


__all__ = ["HIGHEST_VERSION", "LOWEST_VERSION", "PRODUCE_API_KEY", "BatchBuffers", "produce_frames"]
