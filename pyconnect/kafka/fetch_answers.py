"""A Fetch response (v4-v11) read in place: each partition's records a view of the response's bytes.

aiokafka's protocol structs decode a fetch response field by field and copy every partition's records
out of it (``Bytes.decode`` reads them into a new object), so each fetched byte was copied once more
than needed, into fresh memory of the records' size. :func:`read_fetch_response` reads the same
fields with ``struct`` and leaves the records where they are.

Contract (pure, standard library only):

- ``read_fetch_response(version, data, start)`` reads the Fetch response body of ``version`` (4-11;
  ``ValueError`` outside) that begins at ``data[start]`` (after the response header) and returns a
  :class:`FetchAnswer`: the top-level error code and fetch session id (both 0 before v7, which has
  neither) and each partition's ``(topic, partition, RawFetch)`` in response order. ``records`` is a
  ``memoryview`` of ``data`` (``b""`` for an empty or null records field), so ``data`` must not
  change and lives as long as any view of it; read-only ``bytes`` is what a connection reads.
- ``aborted_transactions`` is the list of ``(producer_id, first_offset)`` pairs; a null array (no
  read_committed fetch) reads as ``[]``. ``last_stable_offset`` is as the broker sent it (-1 when
  unknown). Fields of later versions that the raw fetch does not use (throttle time, log start
  offset, preferred read replica) are skipped.
- A body that ends before its fields do, or a negative array count other than a null aborted list,
  raises :class:`TruncatedFetchResponse` (a ``ValueError``) naming where.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import Any

LOWEST_VERSION = 4
HIGHEST_VERSION = 11

_INT16 = struct.Struct(">h")
_INT32 = struct.Struct(">i")
_ERROR_AND_SESSION = struct.Struct(">hi")
_PARTITION_HEAD = struct.Struct(">ihqq")  # partition, error code, high watermark, last stable offset
_ABORTED = struct.Struct(">qq")  # producer id, first offset


class TruncatedFetchResponse(ValueError):
    """The response body ends (or counts) where a field should be."""


@dataclass(frozen=True, slots=True)
class RawFetch:
    """One partition's answer to a fetch, its records left as the broker sent them."""

    error_code: int
    high_watermark: int
    last_stable_offset: int
    aborted_transactions: list[tuple[int, int]]
    records: bytes | memoryview  # a view of the response; or of a held answer's rest (the next poll's)


@dataclass(frozen=True, slots=True)
class FetchAnswer:
    """A whole fetch response body: its top-level error code and session id, and every partition's part."""

    error_code: int
    session_id: int
    partitions: list[tuple[str, int, RawFetch]]  # topic, partition, answer


class _Reader:
    __slots__ = ("data", "end", "pos")

    def __init__(self, data: bytes, start: int) -> None:
        self.data = data
        self.pos = start
        self.end = len(data)

    def take(self, fmt: struct.Struct, what: str) -> tuple[int, ...]:
        pos = self.pos
        if pos + fmt.size > self.end:
            raise TruncatedFetchResponse(
                f"the fetch response ends at byte {self.end} inside {what} (byte {pos})"
            )
        self.pos = pos + fmt.size
        return fmt.unpack_from(self.data, pos)

    def skip(self, size: int, what: str) -> None:
        if self.pos + size > self.end:
            raise TruncatedFetchResponse(
                f"the fetch response ends at byte {self.end} inside {what} (byte {self.pos})"
            )
        self.pos += size

    def count(self, what: str, *, nullable: bool = False) -> int:
        (count,) = self.take(_INT32, what)
        if count < 0:
            if nullable and count == -1:
                return 0
            raise TruncatedFetchResponse(f"the fetch response counts {count} {what} at byte {self.pos - 4}")
        return count


def read_fetch_response(version: int, data: bytes, start: int = 0) -> FetchAnswer:
    """See the module docstring."""
    if not LOWEST_VERSION <= version <= HIGHEST_VERSION:
        raise ValueError(
            f"Fetch v{version} responses are not read here (v{LOWEST_VERSION}-v{HIGHEST_VERSION})"
        )
    view = memoryview(data)
    reader = _Reader(data, start)
    reader.skip(4, "the throttle time")
    error_code = session_id = 0
    if version >= 7:
        error_code, session_id = reader.take(_ERROR_AND_SESSION, "the error code and session id")
    partitions: list[tuple[str, int, RawFetch]] = []
    for _ in range(reader.count("topics")):
        (name_size,) = reader.take(_INT16, "a topic name's length")
        name_at = reader.pos
        reader.skip(max(name_size, 0), "a topic name")
        topic = str(view[name_at : reader.pos], "utf-8")
        for _ in range(reader.count("partitions")):
            partition, partition_error, high_watermark, last_stable = reader.take(
                _PARTITION_HEAD, "a partition's offsets"
            )
            if version >= 5:
                reader.skip(8, "the log start offset")
            aborted: list[Any] = [
                reader.take(_ABORTED, "an aborted transaction")
                for _ in range(reader.count("aborted transactions", nullable=True))
            ]
            if version >= 11:
                reader.skip(4, "the preferred read replica")
            (size,) = reader.take(_INT32, "a records size")
            records_at = reader.pos
            reader.skip(max(size, 0), "the records")
            records = view[records_at : reader.pos] if size > 0 else b""
            answer = RawFetch(partition_error, high_watermark, last_stable, aborted, records)
            partitions.append((topic, partition, answer))
    return FetchAnswer(error_code, session_id, partitions)


__all__ = [
    "HIGHEST_VERSION",
    "LOWEST_VERSION",
    "FetchAnswer",
    "RawFetch",
    "TruncatedFetchResponse",
    "read_fetch_response",
]
