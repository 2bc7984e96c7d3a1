"""ConsumerGroupDescribe (API key 69, KIP-848): the describe call for groups of the new consumer protocol.

A group whose members use ``group.protocol=consumer`` is invisible to DescribeGroups (up to v5 the
broker answers it as ``Dead`` with no error; v6 answers ``GROUP_ID_NOT_FOUND``); ConsumerGroupDescribe
is the API that reports its state and members. It is a flexible-version message (compact strings and
arrays, tagged fields), which :mod:`pyconnect.protocol.primitives` does not cover, so this module has
its own small reader.

Contract (pure, no IO):
- :func:`encode_request` is the request body (without the request header) of versions 0 and 1, which
  have the same layout: ``GroupIds`` and ``IncludeAuthorizedOperations``, no tagged fields.
- :func:`decode_response` reads a response body of version 0 or 1 (v1 adds ``MemberType`` per member)
  into :class:`DescribedGroup` values; unknown tagged fields are skipped. Malformed or truncated input
  raises :class:`~pyconnect.protocol.primitives.ProtocolError`, never ``IndexError``/``struct.error``.
- Error codes are the broker's: ``GROUP_ID_NOT_FOUND`` (69) for a group that is unknown or is not a
  consumer-protocol group (a classic group), ``GROUP_AUTHORIZATION_FAILED`` (30), coordinator errors
  (14, 15, 16).
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from pyconnect.protocol.primitives import ProtocolError, encode_utf8

API_KEY = 69
VERSIONS = (0, 1)
"""The versions this module reads (4.3.1 brokers answer both; the request layout is the same)."""
GROUP_ID_NOT_FOUND = 69

T = TypeVar("T")
_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")


@dataclass(frozen=True, slots=True)
class DescribedMember:
    """Who one member is: its id, client id and client host (as the broker saw its connection)."""

    member_id: str
    client_id: str
    client_host: str


@dataclass(frozen=True, slots=True)
class DescribedGroup:
    """One group of a ConsumerGroupDescribe answer: its members' ids, and (not compared) who they are."""

    error_code: int
    error_message: str | None
    group_id: str
    state: str
    group_epoch: int
    assignor: str
    member_ids: tuple[str, ...]
    members: tuple[DescribedMember, ...] = field(default=(), compare=False)


def _unsigned_varint(value: int) -> bytes:
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def _compact_string(value: str) -> bytes:
    raw = encode_utf8(value)
    return _unsigned_varint(len(raw) + 1) + raw


def encode_request(group_ids: Sequence[str], include_authorized_operations: bool = False) -> bytes:
    """The ConsumerGroupDescribe v0/v1 request body for ``group_ids``."""
    body = bytearray(_unsigned_varint(len(group_ids) + 1))
    for group in group_ids:
        body += _compact_string(group)
    body.append(1 if include_authorized_operations else 0)
    body += _unsigned_varint(0)  # no tagged fields
    return bytes(body)


class _FlexibleReader:
    """Reads the flexible-version primitives of one message body."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes) -> None:
        self._data = data
        self._pos = 0

    def _take(self, size: int, what: str) -> bytes:
        if size < 0 or self._pos + size > len(self._data):
            raise ProtocolError(f"truncated ConsumerGroupDescribe response while reading {what}")
        chunk = self._data[self._pos : self._pos + size]
        self._pos += size
        return chunk

    def int8(self) -> int:
        return int(_I8.unpack(self._take(1, "an int8"))[0])

    def int16(self) -> int:
        return int(_I16.unpack(self._take(2, "an int16"))[0])

    def int32(self) -> int:
        return int(_I32.unpack(self._take(4, "an int32"))[0])

    def uvarint(self) -> int:
        value = 0
        for shift in range(0, 35, 7):
            byte = self._take(1, "a varint")[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
        raise ProtocolError("varint longer than 5 bytes in ConsumerGroupDescribe response")

    def nullable_string(self) -> str | None:
        size = self.uvarint()
        if size == 0:
            return None
        return self._take(size - 1, "a string").decode("utf-8", "replace")

    def string(self) -> str:
        value = self.nullable_string()
        if value is None:
            raise ProtocolError("null where ConsumerGroupDescribe has a non-nullable string")
        return value

    def array(self, element: Callable[[_FlexibleReader], T]) -> list[T]:
        size = self.uvarint()
        if size == 0:
            raise ProtocolError("null where ConsumerGroupDescribe has a non-nullable array")
        if size - 1 > len(self._data) - self._pos:
            raise ProtocolError(f"array of {size - 1} elements exceeds the remaining bytes")
        return [element(self) for _ in range(size - 1)]

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self._take(self.uvarint(), "a tagged field")

    def at_end(self) -> bool:
        return self._pos == len(self._data)


def _assignment(reader: _FlexibleReader) -> None:
    def topic_partitions(r: _FlexibleReader) -> None:
        r._take(16, "a topic id")
        r.string()
        r.array(_FlexibleReader.int32)
        r.tagged_fields()

    reader.array(topic_partitions)
    reader.tagged_fields()


def _member(version: int) -> Callable[[_FlexibleReader], DescribedMember]:
    def read(reader: _FlexibleReader) -> DescribedMember:
        member_id = reader.string()
        reader.nullable_string()  # instance id
        reader.nullable_string()  # rack id
        reader.int32()  # member epoch
        client_id = reader.string()
        client_host = reader.string()
        reader.array(_FlexibleReader.string)  # subscribed topic names
        reader.nullable_string()  # subscribed topic regex
        _assignment(reader)
        _assignment(reader)  # target assignment
        if version >= 1:
            reader.int8()  # member type
        reader.tagged_fields()
        return DescribedMember(member_id, client_id, client_host)

    return read


def _group(version: int) -> Callable[[_FlexibleReader], DescribedGroup]:
    def read(reader: _FlexibleReader) -> DescribedGroup:
        error_code = reader.int16()
        error_message = reader.nullable_string()
        group_id = reader.string()
        state = reader.string()
        group_epoch = reader.int32()
        reader.int32()  # assignment epoch
        assignor = reader.string()
        members = reader.array(_member(version))
        reader.int32()  # authorized operations
        reader.tagged_fields()
        return DescribedGroup(
            error_code,
            error_message,
            group_id,
            state,
            group_epoch,
            assignor,
            tuple(m.member_id for m in members),
            tuple(members),
        )

    return read


def decode_response(data: bytes, version: int) -> tuple[int, list[DescribedGroup]]:
    """``(throttle_time_ms, groups)`` of a ConsumerGroupDescribe response body of ``version``."""
    if version not in VERSIONS:
        raise ProtocolError(f"ConsumerGroupDescribe v{version} is not supported (only {VERSIONS})")
    reader = _FlexibleReader(bytes(data))
    throttle = reader.int32()
    groups = reader.array(_group(version))
    reader.tagged_fields()
    if not reader.at_end():
        raise ProtocolError("trailing bytes after a ConsumerGroupDescribe response")
    return throttle, groups
