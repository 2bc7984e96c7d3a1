"""Render values the way Java's ``toString`` does, for messages that must match a Java worker's text."""

from __future__ import annotations

import decimal
import math

from pyconnect.errors import ConfigError


def java_str(value: object) -> str:
    """``String.valueOf(value)`` for the value kinds configs hold.

    ``None`` -> ``null``; booleans -> ``true``/``false``; floats as ``Double.toString`` for ordinary
    magnitudes (``1.0``, ``NaN``, ``Infinity``); lists as ``[a, b]``; anything else via ``str`` (so a
    ``Password`` renders ``[hidden]``).
    """
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return _double_str(value)
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_str(v) for v in value) + "]"
    return str(value)


def _double_str(value: float) -> str:
    """``Double.toString``: plain in [1e-3, 1e7), else ``d.dddE<exp>``; shortest round-trip digits."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
    if 1e-3 <= abs(value) < 1e7:
        return repr(value)
    sign, digits, exponent = decimal.Decimal(repr(value)).as_tuple()
    text = "".join(map(str, digits)).rstrip("0") or "0"
    assert isinstance(exponent, int)
    power = exponent + len(digits) - 1
    return f"{'-' if sign else ''}{text[0]}.{text[1:] or '0'}E{power}"


def invalid_value(name: str, value: object, reason: str | None = None) -> ConfigError:
    """Java's ``new ConfigException(name, value, reason)``: ``Invalid value V for configuration N: R``."""
    text = f"Invalid value {java_str(value)} for configuration {name}"
    return ConfigError(text if reason is None else f"{text}: {reason}")
