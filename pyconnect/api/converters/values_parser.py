"""``Values.parseString``: infer a schema and value from header text (see ``values`` for the rules)."""

from __future__ import annotations

import datetime
import decimal
import re
from typing import Any

from pyconnect.api.converters.jackson import to_float32
from pyconnect.api.data import (
    BOOLEAN_SCHEMA,
    DATE_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    STRING_SCHEMA,
    TIME_SCHEMA,
    TIMESTAMP_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Time,
    Timestamp,
    Type,
)
from pyconnect.config.types import java_trim
from pyconnect.errors import DataError

_DELIMITERS = frozenset(':,{}[]"')
_NUMBER = re.compile(r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?")
_DATE = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_TIME = re.compile(r"(\d{2}):(\d{2}):(\d{2})\.(\d{3})Z")
_RANK = {Type.INT8: 0, Type.INT16: 1, Type.INT32: 2, Type.INT64: 3, Type.FLOAT32: 4, Type.FLOAT64: 5}
_TRUE = SchemaAndValue(BOOLEAN_SCHEMA, True)
_FALSE = SchemaAndValue(BOOLEAN_SCHEMA, False)
_NULL_CONVERSION = "Unable to convert a null value to a schema that requires a value"


def _blank(token: str) -> bool:
    return not java_trim(token)


def parse_string(text: str | None) -> SchemaAndValue | None:
    """Java's ``Values.parseString``; ``None`` for the text ``null``, as Java returns ``null``."""
    if text is None:
        return SchemaAndValue(None, None)
    if not text:
        return SchemaAndValue(STRING_SCHEMA, text)
    return _ValueParser(text).parse(False)


class _Parser:
    """Java's ``Values.Parser``: a rewindable tokenizer splitting at unescaped ``:,{}[]"``."""

    def __init__(self, original: str) -> None:
        self.original = original
        self.pos = 0
        self.next_token: str | None = None
        self.previous: str | None = None

    def mark(self) -> int:
        return self.pos - (len(self.next_token) if self.next_token is not None else 0)

    def rewind_to(self, position: int) -> None:
        self.pos = position
        self.next_token = None
        self.previous = None

    def has_next(self) -> bool:
        return self.next_token is not None or self.pos < len(self.original)

    def next(self) -> str:
        if self.next_token is not None:
            self.previous, self.next_token = self.next_token, None
        else:
            self.previous = self._consume()
        return self.previous

    def next_n(self, n: int) -> str | None:
        start = self.mark()
        for _ in range(n):
            if not self.has_next():
                self.rewind_to(start)
                return None
            self.next()
        return self.original[start : self.pos]

    def _consume(self) -> str:
        text, start, escaped = self.original, self.pos, False
        i = start
        while i < len(text):
            c = text[i]
            if c == "\\":
                escaped = not escaped
            elif c in _DELIMITERS and not escaped:
                if start < i:
                    self.pos = i
                    return text[start:i]
                self.pos = i + 1
                return c
            else:
                escaped = False
            i += 1
        self.pos = i
        return text[start:i]

    def can_consume(self, expected: str) -> bool:
        if self.next_token is None:
            if not self.has_next():
                return False
            self.next_token = self._consume()
        while _blank(self.next_token) and self.pos < len(self.original):
            self.next_token = self._consume()
        if java_trim(self.next_token) == expected:
            self.next_token = None
            return True
        return False


class _Merger:
    """``SchemaMerger``: the common schema of parsed elements (numbers widen), or none."""

    def __init__(self) -> None:
        self.common: Schema | None = None
        self.compatible = True

    def merge(self, latest: SchemaAndValue | None) -> None:
        if latest is None or latest.schema is None or not self.compatible:
            return
        if self.common is None:
            self.common = latest.schema
        else:
            self.common = _merge_schemas(self.common, latest.schema)
            self.compatible = self.common is not None


def _merge_schemas(previous: Schema, new: Schema) -> Schema | None:
    if previous.type is not new.type:
        if previous.type in _RANK and new.type in _RANK:
            return previous if _RANK[previous.type] > _RANK[new.type] else new
        return None
    if previous.optional == new.optional:
        return previous if previous.optional else new
    return previous if previous == new else None


class _ValueParser:
    def __init__(self, text: str) -> None:
        self.parser = _Parser(text)

    def _single_literal(self, embedded: bool, literal: str) -> bool:
        start = self.parser.mark()
        if self.parser.can_consume(literal) and (embedded or not self.parser.has_next()):
            return True
        self.parser.rewind_to(start)
        return False

    def parse(self, embedded: bool) -> SchemaAndValue | None:
        p = self.parser
        if not p.has_next():
            return None
        if embedded and p.can_consume('"'):
            return self._quoted()
        if self._single_literal(embedded, "null"):
            return None
        if self._single_literal(embedded, "true"):
            return _TRUE
        if self._single_literal(embedded, "false"):
            return _FALSE
        start = p.mark()
        try:
            if p.can_consume("["):
                return self._array()
            if p.can_consume("{"):
                return self._map()
        except DataError:
            p.rewind_to(start)
        token = p.next()
        if _blank(token):
            return SchemaAndValue(STRING_SCHEMA, token)
        return self._next_token(embedded, java_trim(token))

    def _next_token(self, embedded: bool, token: str) -> SchemaAndValue:
        digit = token[0].isdecimal()
        if digit:
            position = self.parser.mark()
            remainder = self.parser.next_n(4)
            temporal = _parse_temporal(token + remainder) if remainder is not None else None
            if temporal is not None:
                return temporal
            self.parser.rewind_to(position)
            temporal = _parse_temporal(token)
            if temporal is not None:
                return temporal
        if digit or token[0] in "+-":
            number = _parse_number(token)
            if number is not None:
                return number
        if embedded:
            raise DataError("Failed to parse embedded value")
        return SchemaAndValue(STRING_SCHEMA, self.parser.original)

    def _quoted(self) -> SchemaAndValue:
        parts = []
        while self.parser.has_next():
            if self.parser.can_consume('"'):
                break
            parts.append(self.parser.next())
        content = "".join(parts)
        return _parse_temporal(content) or SchemaAndValue(STRING_SCHEMA, content)

    def _array(self) -> SchemaAndValue:
        p = self.parser
        result: list[Any] = []
        merger = _Merger()
        while p.has_next():
            if p.can_consume("]"):
                if merger.common is not None:
                    schema = SchemaBuilder.array(merger.common).build()
                    return SchemaAndValue(schema, [_convert_to(merger.common, v) for v in result])
                return SchemaAndValue(Schema(Type.ARRAY), result)
            if p.can_consume(","):
                raise DataError(f"Unable to parse an empty array element: {p.original}")
            element = self.parse(True)
            merger.merge(element)
            result.append(None if element is None else element.value)
            position = p.mark()
            if p.can_consume("]"):
                p.rewind_to(position)
            elif not p.can_consume(","):
                raise DataError("Array elements missing ',' delimiter")
        if p.previous == ",":
            raise DataError(f"Array is missing element after ',': {p.original}")
        raise DataError(f"Array is missing terminating ']': {p.original}")

    def _map(self) -> SchemaAndValue:
        p = self.parser
        result: dict[Any, Any] = {}
        keys, values = _Merger(), _Merger()
        while p.has_next():
            if p.can_consume("}"):
                if keys.common is not None and values.common is not None:
                    schema = SchemaBuilder.map(keys.common, values.common).build()
                    aligned = {
                        _convert_to(keys.common, k): _convert_to(values.common, v) for k, v in result.items()
                    }
                    return SchemaAndValue(schema, aligned)
                if keys.common is not None:
                    aligned = {_convert_to(keys.common, k): v for k, v in result.items()}
                    return SchemaAndValue(Schema(Type.MAP, key_schema=keys.common), aligned)
                return SchemaAndValue(Schema(Type.MAP), result)
            if p.can_consume(","):
                raise DataError(f"Unable to parse a map entry with no key or value: {p.original}")
            key = self.parse(True)
            if key is None or key.value is None:
                raise DataError(f"Map entry may not have a null key: {p.original}")
            if not p.can_consume(":"):
                raise DataError(f"Map entry is missing ':' at {p.pos} in {p.original}")
            value = self.parse(True)
            try:
                result[key.value] = None if value is None else value.value
            except TypeError as exc:
                raise DataError(f"Map key is not hashable in Python: {p.original}") from exc
            p.can_consume(",")
            keys.merge(key)
            values.merge(value)
        if p.previous == ",":
            raise DataError(f"Map is missing element after ',': {p.original}")
        raise DataError(f"Map is missing terminating '}}': {p.original}")


def _as_long(value: Any) -> int:
    if isinstance(value, (int, float, decimal.Decimal)) and not isinstance(value, bool):
        return int(value)
    if isinstance(value, str):
        try:
            return int(decimal.Decimal(value))
        except decimal.InvalidOperation as exc:
            raise DataError(f"Unable to convert {value} to a number") from exc
    raise DataError(f"Unable to convert {value} ({type(value)}) to a number")


def _wrap(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _convert_to(schema: Schema, value: Any) -> Any:
    """``Values.convertTo(schema, null, value)`` for the values the parser produces."""
    if value is None:
        if schema.optional:
            return None
        raise DataError(_NULL_CONVERSION)
    kind, name = schema.type, schema.name
    if kind in (Type.INT32, Type.INT64) and not isinstance(value, (datetime.date, datetime.time)):
        if name == Date.LOGICAL_NAME:
            return Date.to_logical(schema, _wrap(_as_long(value), 32))
        if name == Time.LOGICAL_NAME:
            return Time.to_logical(schema, _wrap(_as_long(value), 32))
        if name == Timestamp.LOGICAL_NAME:
            return Timestamp.to_logical(schema, _as_long(value))
    if isinstance(value, (datetime.date, datetime.time)) and name is not None:
        return value
    if kind in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
        return _wrap(_as_long(value), {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}[kind])
    if kind is Type.FLOAT32 or kind is Type.FLOAT64:
        if isinstance(value, bool) or not isinstance(value, (int, float, decimal.Decimal, str)):
            raise DataError(f"Unable to convert {value} ({type(value)}) to a number")
        number = float(decimal.Decimal(value) if isinstance(value, str) else value)
        return to_float32(number) if kind is Type.FLOAT32 else number
    if kind is Type.BOOLEAN:
        return value if isinstance(value, bool) else _as_long(value) != 0
    return value


def _parse_temporal(token: str) -> SchemaAndValue | None:
    token = token.replace("\\:", ":")
    try:
        if len(token) == 13 and (t := _TIME.fullmatch(token)):
            h, mi, s, ms = (int(g) for g in t.groups())
            return SchemaAndValue(TIME_SCHEMA, datetime.time(h, mi, s, ms * 1000))
        if len(token) == 24 and token[10] == "T":
            d, t = _DATE.fullmatch(token[:10]), _TIME.fullmatch(token[11:])
            if d and t:
                y, mo, day = (int(g) for g in d.groups())
                h, mi, s, ms = (int(g) for g in t.groups())
                moment = datetime.datetime(y, mo, day, h, mi, s, ms * 1000, tzinfo=datetime.UTC)
                return SchemaAndValue(TIMESTAMP_SCHEMA, moment)
        if len(token) == 10 and (d := _DATE.fullmatch(token)):
            y, mo, day = (int(g) for g in d.groups())
            return SchemaAndValue(DATE_SCHEMA, datetime.date(y, mo, day))
    except ValueError:
        return None
    return None


def _parse_number(token: str) -> SchemaAndValue | None:
    if not _NUMBER.fullmatch(token):
        return None
    value = decimal.Decimal(token)
    exponent = value.as_tuple().exponent
    assert isinstance(exponent, int)
    if value == value.to_integral_value():
        integral = int(value)
        for schema, bits in ((INT8_SCHEMA, 8), (INT16_SCHEMA, 16), (INT32_SCHEMA, 32), (INT64_SCHEMA, 64)):
            if -(1 << (bits - 1)) <= integral < 1 << (bits - 1):
                return SchemaAndValue(schema, integral)
    if exponent != 0:
        single = to_float32(float(value))
        if abs(single) != float("inf"):
            return SchemaAndValue(FLOAT32_SCHEMA, single)
        double = float(value)
        if abs(double) != float("inf"):
            return SchemaAndValue(FLOAT64_SCHEMA, double)
    return SchemaAndValue(Decimal.schema(-exponent), value)
