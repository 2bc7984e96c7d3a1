"""Kafka protocol primitive types (big-endian, non-flexible), as used by the Connect group protocol.

Mirrors ``org.apache.kafka.common.protocol.types.Type``: ``INT16``/``INT32``/``INT64``, ``STRING``
(int16 length + UTF-8, never null), ``NULLABLE_BYTES`` (int32 length, -1 = null) and ``ArrayOf``
(int32 count, -1 = null when nullable). No tagged fields, no compact encodings.

Contract: :class:`Reader` never lets ``struct.error``/``IndexError`` escape; every malformed or
truncated input raises :class:`ProtocolError`. Strings decode like Java's ``new String(bytes, UTF_8)``
(malformed sequences become U+FFFD) and encode like ``String.getBytes(UTF_8)`` (lone surrogates
become ``?``).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TypeVar

T = TypeVar("T")

_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")
_MAX_STRING_BYTES = 0x7FFF


class ProtocolError(ValueError):
    """Bytes that are not a valid Connect group-protocol message (or a value that cannot be encoded)."""


def encode_utf8(value: str) -> bytes:
    """UTF-8 bytes of ``value`` exactly as Java's ``String.getBytes(UTF_8)`` produces them."""
    return value.encode("utf-8", "replace")


class Writer:
    """Appends primitive encodings to a growing buffer."""

    __slots__ = ("_parts",)

    def __init__(self) -> None:
        self._parts: list[bytes] = []

    def int16(self, value: int) -> Writer:
        return self._pack(_I16, value, "int16")

    def int32(self, value: int) -> Writer:
        return self._pack(_I32, value, "int32")

    def int64(self, value: int) -> Writer:
        return self._pack(_I64, value, "int64")

    def string(self, value: str | None) -> Writer:
        if value is None:
            raise ProtocolError("STRING fields are not nullable")
        data = encode_utf8(value)
        if len(data) > _MAX_STRING_BYTES:
            raise ProtocolError(f"String length {len(data)} is larger than the maximum string length.")
        self.int16(len(data))
        self._parts.append(data)
        return self

    def nullable_bytes(self, value: bytes | None) -> Writer:
        if value is None:
            return self.int32(-1)
        self.int32(len(value))
        self._parts.append(bytes(value))
        return self

    def raw(self, value: bytes) -> Writer:
        self._parts.append(value)
        return self

    def getvalue(self) -> bytes:
        return b"".join(self._parts)

    def _pack(self, codec: struct.Struct, value: int, name: str) -> Writer:
        try:
            self._parts.append(codec.pack(value))
        except struct.error as exc:
            raise ProtocolError(f"{value!r} does not fit in {name}") from exc
        return self


class Reader:
    """Consumes primitive encodings from a byte string; trailing bytes are the caller's business."""

    __slots__ = ("_data", "_pos")

    def __init__(self, data: bytes | bytearray | memoryview) -> None:
        self._data = bytes(data)
        self._pos = 0

    @property
    def remaining(self) -> int:
        return len(self._data) - self._pos

    def int16(self) -> int:
        return self._unpack(_I16, "int16")

    def int32(self) -> int:
        return self._unpack(_I32, "int32")

    def int64(self) -> int:
        return self._unpack(_I64, "int64")

    def string(self) -> str:
        length = self.int16()
        if length < 0:
            raise ProtocolError(f"String length {length} cannot be negative")
        return self._take(length, "string").decode("utf-8", "replace")

    def nullable_bytes(self) -> bytes | None:
        size = self.int32()
        if size < 0:
            return None
        return self._take(size, "bytes")

    def array(self, element: Callable[[Reader], T]) -> list[T]:
        size = self.int32()
        if size < 0:
            raise ProtocolError(f"Array size {size} cannot be negative")
        return self._elements(size, element)

    def nullable_array(self, element: Callable[[Reader], T]) -> list[T] | None:
        """Any negative count means null, as in Java's ``ArrayOf.nullable``."""
        size = self.int32()
        return None if size < 0 else self._elements(size, element)

    def _elements(self, size: int, element: Callable[[Reader], T]) -> list[T]:
        if size > self.remaining:
            raise ProtocolError(f"Error reading array of size {size}, only {self.remaining} bytes available")
        return [element(self) for _ in range(size)]

    def _take(self, size: int, what: str) -> bytes:
        if size > self.remaining:
            raise ProtocolError(
                f"Error reading {what} of length {size}, only {self.remaining} bytes available"
            )
        start = self._pos
        self._pos += size
        return self._data[start : self._pos]

    def _unpack(self, codec: struct.Struct, name: str) -> int:
        if codec.size > self.remaining:
            raise ProtocolError(f"Truncated {name}: need {codec.size} bytes, {self.remaining} available")
        (value,) = codec.unpack_from(self._data, self._pos)
        self._pos += codec.size
        return int(value)
