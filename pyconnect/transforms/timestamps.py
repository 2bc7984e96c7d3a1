"""``TimestampConverter``: converts a timestamp (the whole key/value or one top-level field) between a
``SimpleDateFormat`` string, Unix time (``unix.precision``), and Connect's Date, Time and Timestamp.

Every conversion goes through epoch milliseconds in UTC, as Java goes through ``java.util.Date``: a
Date keeps the day (time cleared), a Time keeps the time of day (date set to the epoch), sub-millisecond
Unix precision is truncated toward zero. The source kind comes from the schema (logical name, else
STRING -> string, INT64 -> unix) or, schemaless, from the Python value (``int`` -> unix, ``str`` ->
string, ``datetime`` -> Timestamp).
"""

from __future__ import annotations

import datetime
from collections.abc import Mapping
from typing import Any

from pyconnect.api.data import (
    DATE_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    TIME_SCHEMA,
    TIMESTAMP_SCHEMA,
    Date,
    Schema,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance
from pyconnect.config.types import Type as ConfigType
from pyconnect.config.validators import ValidString
from pyconnect.errors import ConfigError, ConnectError, DataError
from pyconnect.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT_KEY,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    field_value,
    require_map,
    require_struct,
)
from pyconnect.transforms.date_format import JavaDateFormat

STRING, UNIX, DATE, TIME, TIMESTAMP = "string", "unix", "Date", "Time", "Timestamp"
_MILLIS_PER_DAY = 86_400_000
_LONG_MIN, _LONG_MAX = -(2**63), 2**63 - 1
_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_OPTIONAL = {
    STRING: OPTIONAL_STRING_SCHEMA,
    UNIX: OPTIONAL_INT64_SCHEMA,
    DATE: Date.builder().optional().build(),
    TIME: Time.builder().optional().build(),
    TIMESTAMP: Timestamp.builder().optional().build(),
}
_REQUIRED = {
    STRING: STRING_SCHEMA,
    UNIX: INT64_SCHEMA,
    DATE: DATE_SCHEMA,
    TIME: TIME_SCHEMA,
    TIMESTAMP: TIMESTAMP_SCHEMA,
}


def _truncating_div(a: int, b: int) -> int:
    return -((-a) // b) if a < 0 else a // b


def _saturating(value: int) -> int:
    return max(_LONG_MIN, min(_LONG_MAX, value))


def _java_class(value: Any) -> str:
    names = {int: "class java.lang.Long", str: "class java.lang.String", float: "class java.lang.Double"}
    return names.get(type(value), f"class {type(value).__name__}")


class TimestampConverter(KeyOrValue):
    """See the module docstring."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("field", ConfigType.STRING, default="", importance=Importance.HIGH,
                      documentation="The field containing the timestamp, or empty if the entire value is a timestamp"),
            ConfigKey("target.type", ConfigType.STRING, validator=ValidString(STRING, UNIX, DATE, TIME, TIMESTAMP),
                      importance=Importance.HIGH,
                      documentation="The desired timestamp representation: string, unix, Date, Time, or Timestamp"),
            ConfigKey("format", ConfigType.STRING, default="", importance=Importance.MEDIUM,
                      documentation="A SimpleDateFormat-compatible format for the timestamp. Used to generate the output when type=string or used to parse the input if the input is a string."),
            ConfigKey("unix.precision", ConfigType.STRING, default="milliseconds",
                      validator=ValidString("nanoseconds", "microseconds", "milliseconds", "seconds"),
                      importance=Importance.LOW,
                      documentation="The desired Unix precision for the timestamp: seconds, milliseconds, microseconds, or nanoseconds. Used to generate the output when type=unix or used to parse the input if the input is a Long.Note: This SMT will cause precision loss during conversions from, and to, values with sub-millisecond components."),
            REPLACE_NULL_WITH_DEFAULT_KEY,
        ]
    )  # fmt: skip
    PURPOSE = "converting timestamp formats"

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._field = str(parsed["field"])
        self._target = str(parsed["target.type"])
        self._precision = str(parsed["unix.precision"])
        self._with_default = bool(parsed["replace.null.with.default"])
        pattern = str(parsed["format"])
        if self._target == STRING and not pattern.strip():
            raise ConfigError(
                "TimestampConverter requires format option to be specified when using string timestamps"
            )
        self._format: JavaDateFormat | None = None
        if pattern.strip():
            try:
                self._format = JavaDateFormat(pattern)
            except ValueError as exc:
                raise ConfigError(
                    f"TimestampConverter requires a SimpleDateFormat-compatible pattern for string timestamps: {pattern}"
                ) from exc
        self._cache = SchemaCache()

    # -- conversions through epoch millis ----------------------------------------------------------

    def _to_millis(self, kind: str, value: Any) -> int:
        if kind == STRING:
            if not isinstance(value, str):
                raise DataError(f"Expected string timestamp to be a String, but found {_java_class(value)}")
            assert self._format is not None
            try:
                return self._format.parse(value)
            except ValueError as exc:
                raise DataError(
                    f"Could not parse timestamp: value ({value}) does not match pattern ({self._format.pattern})"
                ) from exc
        if kind == UNIX:
            if isinstance(value, bool) or not isinstance(value, int):
                raise DataError(f"Expected Unix timestamp to be a Long, but found {_java_class(value)}")
            if self._precision == "seconds":
                return _saturating(value * 1000)
            if self._precision == "microseconds":
                return _truncating_div(value, 1000)
            if self._precision == "nanoseconds":
                return _truncating_div(value, 1_000_000)
            return value
        if isinstance(value, datetime.datetime):
            return Timestamp.from_logical(TIMESTAMP_SCHEMA, value)
        if isinstance(value, datetime.date):
            return Date.from_logical(DATE_SCHEMA, value) * _MILLIS_PER_DAY
        if isinstance(value, datetime.time):
            return Time.from_logical(TIME_SCHEMA, value)
        raise DataError(f"Expected {kind} to be a java.util.Date, but found {_java_class(value)}")

    def _from_millis(self, millis: int) -> Any:
        target = self._target
        if target == STRING:
            assert self._format is not None
            return self._format.format(millis)
        if target == UNIX:
            if self._precision == "seconds":
                return _truncating_div(millis, 1000)
            if self._precision == "microseconds":
                return _saturating(millis * 1000)
            if self._precision == "nanoseconds":
                return _saturating(millis * 1_000_000)
            return millis
        moment = _EPOCH + datetime.timedelta(milliseconds=millis)
        if target == DATE:
            return moment.date()
        if target == TIME:
            return moment.time()
        return moment

    def _convert(self, value: Any, kind: str | None) -> Any:
        if value is None:
            return None
        if kind is None:
            if isinstance(value, datetime.datetime):
                kind = TIMESTAMP
            elif isinstance(value, int) and not isinstance(value, bool):
                kind = UNIX
            elif isinstance(value, str):
                kind = STRING
            else:
                raise DataError(
                    f"TimestampConverter does not support {_java_class(value)} objects as timestamps"
                )
        return self._from_millis(self._to_millis(kind, value))

    @staticmethod
    def _kind_of(schema: Schema) -> str:
        if schema.name == Timestamp.LOGICAL_NAME:
            return TIMESTAMP
        if schema.name == Date.LOGICAL_NAME:
            return DATE
        if schema.name == Time.LOGICAL_NAME:
            return TIME
        if schema.type is Type.STRING:
            return STRING
        if schema.type is Type.INT64:
            return UNIX
        raise ConnectError(f"Schema {schema} does not correspond to a known timestamp type format")

    def _target_schema(self, optional: bool) -> Schema:
        return (_OPTIONAL if optional else _REQUIRED)[self._target]

    # -- record paths ------------------------------------------------------------------------------

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            if value is None or not self._field:
                return self.new_record(record, None, self._convert(value, None))
            updated = dict(require_map(value, self.PURPOSE))
            updated[self._field] = self._convert(updated.get(self._field), None)
            return self.new_record(record, None, updated)
        if not self._field:
            return self.new_record(
                record, self._target_schema(schema.optional), self._convert(value, self._kind_of(schema))
            )
        struct = None if value is None else require_struct(value, self.PURPOSE)
        updated_schema = self._cache.get(schema)
        if updated_schema is None:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields:
                if field.name == self._field:
                    builder.field(field.name, self._target_schema(field.schema.optional))
                else:
                    builder.field(field.name, field.schema)
            if schema.optional:
                builder.optional()
            if schema.default is not None:
                builder.default_value(self._convert_struct(schema.default, builder.build()))
            updated_schema = builder.build()
            self._cache.put(schema, updated_schema)
        return self.new_record(record, updated_schema, self._convert_struct(struct, updated_schema))

    def _convert_struct(self, struct: Struct | None, schema: Schema) -> Struct | None:
        if struct is None:
            return None
        out = Struct(schema)
        for field in struct.schema.fields:
            original = field_value(struct, field.name, self._with_default)
            if field.name == self._field:
                original = self._convert(original, self._kind_of(field.schema))
            out.put(field.name, original)
        return out


class TimestampConverterKey(TimestampConverter):
    OPERATES_ON_KEY = True


class TimestampConverterValue(TimestampConverter):
    OPERATES_ON_KEY = False
