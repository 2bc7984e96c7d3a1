"""JSON bytes exactly as Jackson's ``ObjectMapper.writeValueAsBytes`` writes a ``JsonNode`` tree.

Input trees are plain Python values (``dict`` with ``str`` keys in output order, ``list``, ``str``,
``int``, ``bool``, ``None``, ``bytes`` -> base64 text) plus :class:`msgspec.Raw` for numbers that must
be written verbatim (floats via :func:`double_text` / :func:`float_text`, decimals via ``str``).

Jackson's output differs from a plain JSON encoder in three places, all reproduced here: control
characters other than ``\\b \\t \\n \\f \\r`` are escaped with upper-case hex (``\\u001F``), characters
outside the BMP are escaped as a surrogate pair (``\\uD83D\\uDE00``), and floats use Java's
``Double.toString``/``Float.toString`` (``1.0E10``; NaN and infinities as quoted strings).
"""

from __future__ import annotations

import math
import re
import struct
from typing import Any

import msgspec

from pyconnect.config.javastr import java_str

_ENCODER = msgspec.json.Encoder()
_LOWER_ESCAPE = re.compile(rb"\\(\\|u00[0-9a-f]{2})")
_NON_BMP = re.compile(rb"[\xf0-\xf4][\x80-\xbf]{3}")
_QUOTED_SPECIALS = {"NaN": b'"NaN"', "Infinity": b'"Infinity"', "-Infinity": b'"-Infinity"'}


def _upper_escape(match: re.Match[bytes]) -> bytes:
    escape = match.group(1)
    return match.group(0) if escape == b"\\" else b"\\u00" + escape[3:].upper()


def _surrogates(match: re.Match[bytes]) -> bytes:
    code = ord(match.group(0).decode("utf-8")) - 0x10000
    return b"\\u%04X\\u%04X" % (0xD800 + (code >> 10), 0xDC00 + (code & 0x3FF))


def dumps(tree: Any) -> bytes:
    """Compact Jackson bytes of ``tree`` (see module docstring for the accepted values)."""
    out = _ENCODER.encode(tree)
    if b"\\u00" in out:
        out = _LOWER_ESCAPE.sub(_upper_escape, out)
    if _NON_BMP.search(out):
        out = _NON_BMP.sub(_surrogates, out)
    return out


def _special(value: float) -> msgspec.Raw | None:
    if math.isfinite(value):
        return None
    return msgspec.Raw(_QUOTED_SPECIALS[java_str(value)])


def double_node(value: float) -> msgspec.Raw:
    """A FLOAT64 node: ``Double.toString`` digits, non-finite values quoted like Jackson."""
    return _special(value) or msgspec.Raw(double_text(value).encode())


def float_node(value: float) -> msgspec.Raw:
    """A FLOAT32 node: ``Float.toString`` of ``value`` rounded to single precision."""
    return _special(value) or msgspec.Raw(float_text(value).encode())


def double_text(value: float) -> str:
    """``Double.toString`` (shortest round-trip digits)."""
    return java_str(float(value))


def to_float32(value: float) -> float:
    """``value`` rounded to the nearest single-precision float (overflow becomes infinity)."""
    try:
        return struct.unpack("<f", struct.pack("<f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def float_text(value: float) -> str:
    """``Float.toString``: the shortest digits that read back as the same single-precision value."""
    f = to_float32(value)
    if not math.isfinite(f) or f == 0:
        return java_str(f)
    for precision in range(1, 10):
        text = f"{f:.{precision - 1}e}"
        if to_float32(float(text)) == f:
            break
    mantissa, exponent = text.split("e")
    negative = mantissa.startswith("-")
    digits = mantissa.lstrip("-").replace(".", "").rstrip("0") or "0"
    power = int(exponent)
    sign = "-" if negative else ""
    if -3 <= power < 7:
        if power >= 0:
            whole = digits[: power + 1].ljust(power + 1, "0")
            fraction = digits[power + 1 :] or "0"
            return f"{sign}{whole}.{fraction}"
        return f"{sign}0.{'0' * (-power - 1)}{digits}"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{power}"
