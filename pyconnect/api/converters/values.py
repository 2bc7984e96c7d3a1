"""The parts of ``org.apache.kafka.connect.data.Values`` that ``SimpleHeaderConverter`` uses.

:func:`convert_to_string` is complete. :func:`parse_string` follows Java for top-level literals
(``null``, booleans), numbers (smallest of INT8..INT64, then FLOAT32, FLOAT64, Decimal), ISO-8601
dates, times and timestamps and plain strings, including Java's tokenizer quirks (``"12:34:56.789"``
reads as INT8 ``12``). Not ported: ``[...]`` and ``{...}`` text, which Java parses into arrays and maps;
here it stays a STRING. Temporal text is formatted and parsed in UTC (Java uses the JVM's default
time zone; Connect workers normally run in UTC).
"""

from __future__ import annotations

import base64
import datetime
import decimal
from collections.abc import Mapping
from typing import Any

from pyconnect.api.converters.jackson import float_text
from pyconnect.api.converters.values_parser import parse_string
from pyconnect.api.data import (
    Schema,
    Struct,
    Type,
)
from pyconnect.config.javastr import java_str
from pyconnect.errors import DataError

__all__ = ["convert_to_string", "parse_string"]

_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)


def convert_to_string(schema: Schema | None, value: Any) -> str | None:
    """``Values.convertToString``: the header text ``SimpleHeaderConverter`` writes."""
    if value is None:
        return None
    out: list[str] = []
    _append(out, value, False, schema)
    return "".join(out)


def _escape(text: str) -> str:
    return text.replace("\\", "\\\\").replace('"', '\\"')


def _append(out: list[str], value: Any, embedded: bool, schema: Schema | None = None) -> None:
    if value is None:
        out.append("null")
    elif isinstance(value, bool):
        out.append("true" if value else "false")
    elif isinstance(value, float):
        out.append(
            float_text(value) if schema is not None and schema.type is Type.FLOAT32 else java_str(value)
        )
    elif isinstance(value, (int, decimal.Decimal)):
        out.append(str(value))
    elif isinstance(value, str):
        out.append(f'"{_escape(value)}"' if embedded else value)
    elif isinstance(value, (bytes, bytearray, memoryview)):
        text = base64.b64encode(bytes(value)).decode()
        out.append(f'"{text}"' if embedded else text)
    elif isinstance(value, (list, tuple)):
        out.append("[")
        for i, element in enumerate(value):
            if i:
                out.append(",")
            _append(out, element, True)
        out.append("]")
    elif isinstance(value, Mapping):
        out.append("{")
        for i, (k, v) in enumerate(value.items()):
            if i:
                out.append(",")
            _append(out, k, True)
            out.append(":")
            _append(out, v, True)
        out.append("}")
    elif isinstance(value, Struct):
        out.append("{")
        for i, field in enumerate(value.schema.fields):
            if i:
                out.append(",")
            _append(out, field.name, True)
            out.append(":")
            _append(out, value.get(field.name), True, field.schema)
        out.append("}")
    elif isinstance(value, (datetime.date, datetime.time)):
        out.append(_format_temporal(value))
    else:
        raise DataError(f"Failed to serialize unexpected value type {type(value).__name__}: {value}")


def _format_temporal(value: datetime.date | datetime.time) -> str:
    if isinstance(value, datetime.time):
        return f"{value.strftime('%H:%M:%S')}.{value.microsecond // 1000:03d}Z"
    if not isinstance(value, datetime.datetime):
        return value.isoformat()
    moment = value.replace(tzinfo=datetime.UTC) if value.tzinfo is None else value.astimezone(datetime.UTC)
    millis = (moment - _EPOCH) // datetime.timedelta(milliseconds=1)
    if 0 <= millis < 86_400_000:
        return f"{moment.strftime('%H:%M:%S')}.{moment.microsecond // 1000:03d}Z"
    if millis % 86_400_000 == 0:
        return moment.date().isoformat()
    return f"{moment.strftime('%Y-%m-%dT%H:%M:%S')}.{moment.microsecond // 1000:03d}Z"
