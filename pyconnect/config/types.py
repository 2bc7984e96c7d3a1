"""Config value types and Java's string coercion rules (``ConfigDef.parseType`` / ``convertToString``).

Parsed Python representations: BOOLEAN -> ``bool``; STRING -> ``str``; INT/SHORT/LONG -> ``int`` (range
checked as 32/16/64-bit); DOUBLE -> ``float``; LIST -> ``list`` (of ``str`` when parsed from text);
CLASS -> ``str`` (the class name; loading/resolving plugins is the plugin layer's job); PASSWORD ->
:class:`Password`. Strings are trimmed the way ``String.trim()`` does (every char <= U+0020).
"""

from __future__ import annotations

import enum
import re

from pyconnect.config.javastr import invalid_value, java_str


class Type(enum.Enum):
    """``ConfigDef.Type``; the member name is what REST shows as ``type``."""

    BOOLEAN = "BOOLEAN"
    STRING = "STRING"
    INT = "INT"
    SHORT = "SHORT"
    LONG = "LONG"
    DOUBLE = "DOUBLE"
    LIST = "LIST"
    CLASS = "CLASS"
    PASSWORD = "PASSWORD"


class Importance(enum.Enum):
    HIGH = "HIGH"
    MEDIUM = "MEDIUM"
    LOW = "LOW"


class Width(enum.Enum):
    NONE = "NONE"
    SHORT = "SHORT"
    MEDIUM = "MEDIUM"
    LONG = "LONG"


class Password:
    """A secret config value: ``str()``/``repr()`` give ``[hidden]``; ``.value`` holds the secret."""

    __slots__ = ("value",)

    HIDDEN = "[hidden]"

    def __init__(self, value: str) -> None:
        self.value = value

    def __str__(self) -> str:
        return self.HIDDEN

    __repr__ = __str__

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Password) and other.value == self.value

    def __hash__(self) -> int:
        return hash(self.value)


_INT_RANGES = {
    Type.SHORT: (-(2**15), 2**15 - 1),
    Type.INT: (-(2**31), 2**31 - 1),
    Type.LONG: (-(2**63), 2**63 - 1),
}
_INTEGER = re.compile(r"[+-]?\d+")
_DECIMAL = re.compile(r"[+-]?(?:NaN|Infinity|(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?[fFdD]?)", re.ASCII)
_HEX_FLOAT = re.compile(
    r"[+-]?0[xX](?:[0-9a-fA-F]+\.?[0-9a-fA-F]*|\.[0-9a-fA-F]+)[pP][+-]?\d+[fFdD]?", re.ASCII
)
_LIST_SEPARATOR = re.compile(r"[ \t\n\x0b\f\r]*,[ \t\n\x0b\f\r]*")
_JAVA_TYPE_NAMES = {
    bool: "java.lang.Boolean",
    int: "java.lang.Integer",
    float: "java.lang.Double",
    str: "java.lang.String",
    list: "java.util.ArrayList",
    tuple: "java.util.ArrayList",
    dict: "java.util.HashMap",
}


def java_trim(text: str) -> str:
    """``String.trim()``: strip every leading/trailing char whose code point is <= U+0020."""
    start, end = 0, len(text)
    while start < end and text[start] <= " ":
        start += 1
    while end > start and text[end - 1] <= " ":
        end -= 1
    return text[start:end]


def _java_class(value: object) -> str:
    if isinstance(value, int) and not isinstance(value, bool) and not -(2**31) <= value < 2**31:
        return "java.lang.Long"
    return _JAVA_TYPE_NAMES.get(type(value), type(value).__name__)


def _parse_integer(name: str, value: object, trimmed: str, type_: Type) -> int:
    low, high = _INT_RANGES[type_]
    if _INTEGER.fullmatch(trimmed):
        parsed = int(trimmed)
        if low <= parsed <= high:
            return parsed
    raise invalid_value(name, value, f"Not a number of type {type_.value}")


def _parse_double(name: str, value: object, trimmed: str) -> float:
    if _DECIMAL.fullmatch(trimmed):
        return float(trimmed.rstrip("fFdD"))
    if _HEX_FLOAT.fullmatch(trimmed):
        return float.fromhex(trimmed.rstrip("fFdD"))
    raise invalid_value(name, value, "Not a number of type DOUBLE")


def parse_type(name: str, value: object, type_: Type) -> object:
    """Coerce ``value`` (text or an already-typed value) to ``type_`` with ``ConfigDef.parseType``'s rules.

    ``None`` stays ``None``. Raises :class:`~pyconnect.errors.ConfigError` with Java's message, e.g.
    ``Invalid value abc for configuration session.timeout.ms: Not a number of type INT``.
    """
    if value is None:
        return None
    trimmed = java_trim(value) if isinstance(value, str) else ""
    is_text = isinstance(value, str)
    if type_ is Type.BOOLEAN:
        if isinstance(value, bool):
            return value
        if is_text and trimmed.lower() in ("true", "false"):
            return trimmed.lower() == "true"
        raise invalid_value(name, value, "Expected value to be either true or false")
    if type_ is Type.PASSWORD:
        if isinstance(value, Password):
            return value
        if is_text:
            return Password(trimmed)
        raise invalid_value(name, value, f"Expected value to be a string, but it was a {_java_class(value)}")
    if type_ is Type.STRING:
        if is_text:
            return trimmed
        raise invalid_value(name, value, f"Expected value to be a string, but it was a {_java_class(value)}")
    if type_ in _INT_RANGES:
        if is_text:
            return _parse_integer(name, value, trimmed, type_)
        low, high = _INT_RANGES[type_]
        if isinstance(value, int) and not isinstance(value, bool) and low <= value <= high:
            return value
        expected = {
            Type.INT: "a 32-bit integer",
            Type.SHORT: "a 16-bit integer (short)",
            Type.LONG: "a 64-bit integer (long)",
        }[type_]
        raise invalid_value(
            name, value, f"Expected value to be {expected}, but it was a {_java_class(value)}"
        )
    if type_ is Type.DOUBLE:
        if is_text:
            return _parse_double(name, value, trimmed)
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            return float(value)
        raise invalid_value(name, value, f"Expected value to be a double, but it was a {_java_class(value)}")
    if type_ is Type.LIST:
        if isinstance(value, (list, tuple)):
            return list(value)
        if is_text:
            return [] if not trimmed else _LIST_SEPARATOR.split(trimmed)
        raise invalid_value(name, value, "Expected a comma separated list.")
    if type_ is Type.CLASS:
        if is_text:
            if not trimmed:
                raise invalid_value(name, value, f"Class {value} could not be found.")
            return trimmed
        raise invalid_value(name, value, "Expected a Class instance or class name.")
    raise ValueError(f"Unknown type {type_!r}")


def convert_to_string(value: object, type_: Type | None) -> str | None:
    """``ConfigDef.convertToString``: the text REST shows for a parsed value (passwords as ``[hidden]``)."""
    if value is None:
        return None
    if type_ is Type.LIST and isinstance(value, (list, tuple)):
        return ",".join(java_str(v) for v in value)
    return java_str(value)
