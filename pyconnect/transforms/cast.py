"""``Cast``: casts the whole key/value or top-level fields to a primitive type (Java's numeric
narrowing rules: integers wrap, floats saturate toward the integer range, NaN becomes 0; strings are
parsed strictly; bytes cast only to string, as base64; Date/Time/Timestamp cast to numbers as their
encoded int/long and to strings in ISO-8601 form as ``Values.dateFormatFor`` writes them)."""

from __future__ import annotations

import base64
import datetime
import decimal
import math
import re
from collections.abc import Mapping
from typing import Any

from pyconnect.api.converters.jackson import double_text, float_text
from pyconnect.api.converters.values import convert_to_string
from pyconnect.api.data import Date, Schema, SchemaBuilder, Struct, Time, Timestamp, Type
from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.javastr import invalid_value
from pyconnect.config.types import Importance
from pyconnect.config.types import Type as ConfigType
from pyconnect.config.validators import LambdaValidator
from pyconnect.errors import ConfigError, DataError
from pyconnect.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT_KEY,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    field_value,
    require_map,
    require_struct,
    schemaless_type,
)

_INPUT_TYPES = (
    Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64, Type.BOOLEAN, Type.STRING, Type.BYTES
)  # fmt: skip
_OUTPUT_TYPES = _INPUT_TYPES[:-1]
_WHOLE_VALUE = ""
_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_JAVA_INT = re.compile(r"[+-]?\d+")
_JAVA_FLOAT = re.compile(r"\s*[+-]?(NaN|Infinity|((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?)[fFdD]?)\s*")


def _type_list(types: tuple[Type, ...]) -> str:
    return "[" + ", ".join(t.name for t in types) + "]"


def _output_type(text: str) -> Type:
    name = text.strip().upper()
    try:
        kind = Type[name]
    except KeyError:
        raise ConfigError(
            f"Invalid value java.lang.IllegalArgumentException: No enum constant "
            f"org.apache.kafka.connect.data.Schema.Type.{name} for configuration Invalid type found in "
            f"casting spec: {text.strip()}"
        ) from None
    if kind not in _OUTPUT_TYPES:
        raise ConfigError(
            f"Cast transformation does not support casting to {kind.name}; supported types are "
            + _type_list(_OUTPUT_TYPES)
        )
    return kind


def parse_cast_spec(mappings: list[str]) -> dict[str, Type]:
    """``field:type`` pairs, or one bare ``type`` for the whole value (keyed by ``""``)."""
    casts: dict[str, Type] = {}
    whole = False
    for mapping in mappings:
        parts = mapping.split(":")
        while len(parts) > 1 and parts[-1] == "":
            parts.pop()
        if len(parts) > 2:
            raise invalid_value("renames", mappings, f"Invalid rename mapping: {mapping}")
        if len(parts) == 1:
            casts[_WHOLE_VALUE] = _output_type(parts[0])
            whole = True
        else:
            casts[parts[0].strip()] = _output_type(parts[1])
    if whole and len(mappings) > 1:
        raise ConfigError(
            "Cast transformations that specify a type to cast the entire value to may only specify a single "
            "cast in their spec"
        )
    return casts


def _check_spec(name: str, value: object) -> None:
    if not value:
        raise ConfigError("Must specify at least one field to cast.")
    parse_cast_spec(list(value))  # type: ignore[call-overload]


def _wrap(number: int, bits: int) -> int:
    return ((number + 2 ** (bits - 1)) % 2**bits) - 2 ** (bits - 1)


def _saturate(number: float, bits: int) -> int:
    if math.isnan(number):
        return 0
    low, high = -(2 ** (bits - 1)), 2 ** (bits - 1) - 1
    if math.isinf(number):
        return high if number > 0 else low
    return max(low, min(high, int(number)))


def _to_integer(value: Any, kind: Type) -> int:
    bits = _BITS[kind]
    if isinstance(value, bool):
        return int(value)
    if isinstance(value, int):
        return _wrap(value, bits)
    if isinstance(value, float):
        # Java narrows float/double to int (or long) first, saturating, then wraps to byte/short.
        return _wrap(_saturate(value, 64 if bits == 64 else 32), bits)
    if isinstance(value, decimal.Decimal):
        # BigDecimal.intValue/longValue keep the low-order bits of the integer part
        return _wrap(int(value), bits)
    if isinstance(value, str):
        if not _JAVA_INT.fullmatch(value):
            raise DataError(f"Value ({value}) was out of range for requested data type")
        number = int(value)
        if not -(2 ** (bits - 1)) <= number < 2 ** (bits - 1):
            raise DataError(f"Value ({value}) was out of range for requested data type")
        return number
    raise DataError(f"Unexpected type in Cast transformation: class {type(value).__name__}")


def _to_float(value: Any, single: bool) -> float:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float, decimal.Decimal)):
        number = float(value)
    elif isinstance(value, str):
        if not _JAVA_FLOAT.fullmatch(value):
            raise DataError(f"Value ({value}) was out of range for requested data type")
        number = float(value.strip().rstrip("fFdD"))
    else:
        raise DataError(f"Unexpected type in Cast transformation: class {type(value).__name__}")
    # A float32 is kept as the double with its shortest digits, so it prints as Java's Float does.
    return float(float_text(number)) if single else number


def _to_string(value: Any, schema: Schema | None) -> str:
    if isinstance(value, (datetime.date, datetime.time)):
        return str(convert_to_string(None, value))
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return float_text(value) if schema is not None and schema.type is Type.FLOAT32 else double_text(value)
    if isinstance(value, decimal.Decimal):
        return str(convert_to_string(None, value))
    return str(value) if isinstance(value, (int, str)) else str(convert_to_string(schema, value))


def _encode_logical(schema: Schema, value: Any) -> Any:
    if schema.name == Date.LOGICAL_NAME:
        return Date.from_logical(schema, value)
    if schema.name == Time.LOGICAL_NAME:
        return Time.from_logical(schema, value)
    if schema.name == Timestamp.LOGICAL_NAME:
        return Timestamp.from_logical(schema, value)
    return value


def cast_value(schema: Schema | None, value: Any, target: Type) -> Any:
    """``Cast.castValueToType``: ``value`` (described by ``schema``, or by its Python type) as ``target``."""
    if value is None:
        return None
    inferred = schema.type if schema is not None else schemaless_type(value)
    if inferred is None:
        raise DataError(
            f"Cast transformation was passed a value of type {type(value)} which is not supported by "
            "Connect's data API"
        )
    if inferred not in _INPUT_TYPES:
        raise DataError(
            f"Cast transformation does not support casting from {inferred.name}; supported types are "
            + _type_list(_INPUT_TYPES)
        )
    if schema is not None and schema.name is not None and target is not Type.STRING:
        value = _encode_logical(schema, value)
    if target in _BITS:
        return _to_integer(value, target)
    if target is Type.FLOAT32 or target is Type.FLOAT64:
        return _to_float(value, target is Type.FLOAT32)
    if target is Type.BOOLEAN:
        if isinstance(value, str):
            return value.lower() == "true"
        if isinstance(value, bool):
            return value
        if isinstance(value, (int, float, decimal.Decimal)):
            return _to_integer(value, Type.INT64) != 0
        raise DataError(f"Unexpected type in Cast transformation: class {type(value).__name__}")
    return _to_string(value, schema)


class Cast(KeyOrValue):
    """See the module docstring; ``spec`` is ``field:type,...`` or a single type for the whole value."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey(
                "spec",
                ConfigType.LIST,
                validator=LambdaValidator(
                    _check_spec, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"
                ),
                importance=Importance.HIGH,
                documentation="List of fields and the type to cast them to of the form field1:type,field2:type to cast fields of Maps or Structs. A single type to cast the entire value. Valid types are int8, int16, int32, int64, float32, float64, boolean, and string. Note that binary fields can only be cast to string.",
            ),
            REPLACE_NULL_WITH_DEFAULT_KEY,
        ]
    )
    PURPOSE = "cast types"

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._casts = parse_cast_spec(list(parsed["spec"]))  # type: ignore[call-overload]
        self._whole = self._casts.get(_WHOLE_VALUE)
        self._with_default = bool(parsed["replace.null.with.default"])
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            if self._whole is not None:
                return self.new_record(record, None, cast_value(None, value, self._whole))
            updated = dict(require_map(value, self.PURPOSE))
            for name, target in self._casts.items():
                updated[name] = cast_value(None, updated.get(name), target)
            return self.new_record(record, None, updated)
        updated_schema = self._schema_for(schema)
        if self._whole is not None:
            return self.new_record(record, updated_schema, cast_value(schema, value, self._whole))
        struct = require_struct(value, self.PURPOSE)
        out = Struct(updated_schema)
        for field in struct.schema.fields:
            original = field_value(struct, field.name, self._with_default)
            cast_to = self._casts.get(field.name)
            out.put(field.name, original if cast_to is None else cast_value(field.schema, original, cast_to))
        return self.new_record(record, updated_schema, out)

    def _schema_for(self, schema: Schema) -> Schema:
        cached = self._cache.get(schema)
        if cached is not None:
            return cached
        if self._whole is not None:
            builder = copy_schema_basics(schema, SchemaBuilder(self._whole))
        else:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            for field in schema.fields:
                target = self._casts.get(field.name)
                if target is None:
                    builder.field(field.name, field.schema)
                    continue
                field_builder = SchemaBuilder(target)
                if field.schema.optional:
                    field_builder.optional()
                if field.schema.default is not None:
                    field_builder.default_value(cast_value(field.schema, field.schema.default, target))
                builder.field(field.name, field_builder.build())
        if schema.optional:
            builder.optional()
        if schema.default is not None:
            builder.default_value(cast_value(schema, schema.default, builder.type))
        built = builder.build()
        self._cache.put(schema, built)
        return built


class CastKey(Cast):
    OPERATES_ON_KEY = True


class CastValue(Cast):
    OPERATES_ON_KEY = False
