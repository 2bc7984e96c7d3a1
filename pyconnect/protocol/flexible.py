"""The primitives of Kafka's *flexible* message versions (KIP-482): compact strings and arrays, tagged fields.

A flexible version writes a string as an unsigned varint ``length + 1`` (``0`` = null) followed by its
UTF-8 bytes, an array as an unsigned varint ``count + 1`` (``0`` = null) followed by its elements, and ends
every struct with its tagged fields (an unsigned varint count, then per field a tag, a size and the
bytes). :mod:`pyconnect.protocol.primitives` covers the older, non-flexible encodings.

Contract (pure, stdlib only):
- :class:`FlexibleWriter` appends encodings and never writes tagged fields of its own (:meth:`no_tags`
  writes the empty set every struct of ours carries). Integers out of range raise
  :class:`~pyconnect.protocol.primitives.ProtocolError`.
- :class:`FlexibleReader` reads them back; unknown tagged fields are skipped. Malformed or truncated
  input raises :class:`ProtocolError` naming ``message`` (the message being read), never
  ``IndexError`` or ``struct.error``. Strings decode like Java's ``new String(bytes, UTF_8)``.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable
from typing import TypeVar

from pyconnect.protocol.primitives import ProtocolError, encode_utf8

T = TypeVar("T")
_I8 = struct.Struct(">b")
_I16 = struct.Struct(">h")
_I32 = struct.Struct(">i")
_I64 = struct.Struct(">q")


def unsigned_varint(value: int) -> bytes:
    """The unsigned varint encoding of ``value`` (0 .. 2**32 - 1)."""
    if not 0 <= value < 1 << 32:
        raise ProtocolError(f"{value} does not fit an unsigned varint")
    out = bytearray()
    while value >= 0x80:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


class FlexibleWriter:
    """Appends flexible-version encodings to a growing buffer; :meth:`to_bytes` returns them."""

    __slots__ = ("_out",)

    def __init__(self) -> None:
        self._out = bytearray()

    def _pack(self, packer: struct.Struct, value: int, what: str) -> FlexibleWriter:
        try:
            self._out += packer.pack(value)
        except struct.error:
            raise ProtocolError(f"{value} does not fit an {what}") from None
        return self

    def int8(self, value: int) -> FlexibleWriter:
        return self._pack(_I8, value, "int8")

    def int16(self, value: int) -> FlexibleWriter:
        return self._pack(_I16, value, "int16")

    def int32(self, value: int) -> FlexibleWriter:
        return self._pack(_I32, value, "int32")

    def int64(self, value: int) -> FlexibleWriter:
        return self._pack(_I64, value, "int64")

    def boolean(self, value: bool) -> FlexibleWriter:
        self._out.append(1 if value else 0)
        return self

    def uvarint(self, value: int) -> FlexibleWriter:
        self._out += unsigned_varint(value)
        return self

    def nullable_string(self, value: str | None) -> FlexibleWriter:
        if value is None:
            return self.uvarint(0)
        raw = encode_utf8(value)
        self.uvarint(len(raw) + 1)
        self._out += raw
        return self

    def string(self, value: str) -> FlexibleWriter:
        return self.nullable_string(value)

    def nullable_array(
        self, items: Iterable[T] | None, write: Callable[[FlexibleWriter, T], object]
    ) -> FlexibleWriter:
        if items is None:
            return self.uvarint(0)
        elements = list(items)
        self.uvarint(len(elements) + 1)
        for item in elements:
            write(self, item)
        return self

    def array(self, items: Iterable[T], write: Callable[[FlexibleWriter, T], object]) -> FlexibleWriter:
        return self.nullable_array(items, write)

    def no_tags(self) -> FlexibleWriter:
        """The empty tagged-field section that ends a struct."""
        return self.uvarint(0)

    def to_bytes(self) -> bytes:
        return bytes(self._out)


class FlexibleReader:
    """Reads flexible-version primitives from one message body (``message`` names it in errors)."""

    __slots__ = ("_data", "_message", "_pos")

    def __init__(self, data: bytes, message: str) -> None:
        self._data = bytes(data)
        self._message = message
        self._pos = 0

    def _take(self, size: int, what: str) -> bytes:
        if size < 0 or self._pos + size > len(self._data):
            raise ProtocolError(f"truncated {self._message} while reading {what}")
        chunk = self._data[self._pos : self._pos + size]
        self._pos += size
        return chunk

    def int8(self) -> int:
        return int(_I8.unpack(self._take(1, "an int8"))[0])

    def int16(self) -> int:
        return int(_I16.unpack(self._take(2, "an int16"))[0])

    def int32(self) -> int:
        return int(_I32.unpack(self._take(4, "an int32"))[0])

    def int64(self) -> int:
        return int(_I64.unpack(self._take(8, "an int64"))[0])

    def boolean(self) -> bool:
        return self._take(1, "a boolean")[0] != 0

    def uuid(self) -> bytes:
        return self._take(16, "a UUID")

    def uvarint(self) -> int:
        value = 0
        for shift in range(0, 35, 7):
            byte = self._take(1, "a varint")[0]
            value |= (byte & 0x7F) << shift
            if not byte & 0x80:
                return value
        raise ProtocolError(f"varint longer than 5 bytes in {self._message}")

    def nullable_string(self) -> str | None:
        size = self.uvarint()
        if size == 0:
            return None
        return self._take(size - 1, "a string").decode("utf-8", "replace")

    def string(self) -> str:
        value = self.nullable_string()
        if value is None:
            raise ProtocolError(f"null where {self._message} has a non-nullable string")
        return value

    def nullable_array(self, element: Callable[[FlexibleReader], T]) -> list[T] | None:
        size = self.uvarint()
        if size == 0:
            return None
        if size - 1 > len(self._data) - self._pos:
            raise ProtocolError(
                f"array of {size - 1} elements exceeds the remaining bytes of {self._message}"
            )
        return [element(self) for _ in range(size - 1)]

    def array(self, element: Callable[[FlexibleReader], T]) -> list[T]:
        items = self.nullable_array(element)
        if items is None:
            raise ProtocolError(f"null where {self._message} has a non-nullable array")
        return items

    def tagged_fields(self) -> None:
        for _ in range(self.uvarint()):
            self.uvarint()  # tag
            self._take(self.uvarint(), "a tagged field")

    def expect_end(self) -> None:
        if self._pos != len(self._data):
            raise ProtocolError(f"trailing bytes after a {self._message}")
