"""``MaskField``: the listed fields become their type's zero (``0``, ``false``, ``""``, an empty list or
map, the epoch for Date/Time/Timestamp), or, with ``replacement``, that text converted to the field's
numeric or string type. Types are the schema's, or schemaless the Python value's (``int`` as Java's
``Long``, ``float`` as ``Double``)."""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping
from typing import Any

from pyconnect.api.data import (
    Decimal,
    Schema,
    Struct,
    Timestamp,
    Type,
)
from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance
from pyconnect.config.types import Type as ConfigType
from pyconnect.config.validators import NonEmptyString
from pyconnect.errors import DataError
from pyconnect.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT_KEY,
    REQUIRED_UNIQUE_LIST,
    KeyOrValue,
    field_value,
    require_map,
    require_struct,
    schemaless_type,
)

# --------------------------------------------------------------------------------------------------
# MaskField

_ZERO_BY_TYPE: dict[Type, Any] = {
    Type.BOOLEAN: False,
    Type.INT8: 0,
    Type.INT16: 0,
    Type.INT32: 0,
    Type.INT64: 0,
    Type.FLOAT32: 0.0,
    Type.FLOAT64: 0.0,
    Type.STRING: "",
}
_JAVA_CLASS = {
    Type.BOOLEAN: "class java.lang.Boolean",
    Type.INT8: "class java.lang.Byte",
    Type.INT16: "class java.lang.Short",
    Type.INT32: "class java.lang.Integer",
    Type.INT64: "class java.lang.Long",
    Type.FLOAT32: "class java.lang.Float",
    Type.FLOAT64: "class java.lang.Double",
    Type.STRING: "class java.lang.String",
    Type.BYTES: "class [B",
}


class MaskField(KeyOrValue):
    """Replaces the listed fields with their type's zero (or with ``replacement`` for numbers/strings)."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("fields", ConfigType.LIST, validator=REQUIRED_UNIQUE_LIST, importance=Importance.HIGH,
                      documentation="Names of fields to mask."),
            ConfigKey("replacement", ConfigType.STRING, default=None, validator=NonEmptyString(),
                      importance=Importance.LOW,
                      documentation="Custom value replacement, that will be applied to all 'fields' values (numeric or non-empty string values only)."),
            REPLACE_NULL_WITH_DEFAULT_KEY,
        ]
    )  # fmt: skip
    PURPOSE = "mask fields"

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._fields = set(parsed["fields"])  # type: ignore[call-overload]
        self._replacement = parsed["replacement"]
        self._with_default = bool(parsed["replace.null.with.default"])

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if schema is None:
            updated = dict(require_map(value, self.PURPOSE))
            for name in self._fields:
                original = updated.get(name)
                updated[name] = self._masked(original, None)
            return self.new_record(record, schema, updated)
        struct = require_struct(value, self.PURPOSE)
        out = Struct(struct.schema)
        for field in struct.schema.fields:
            original = field_value(struct, field.name, self._with_default)
            out.put(
                field.name, self._masked(original, field.schema) if field.name in self._fields else original
            )
        return self.new_record(record, struct.schema, out)

    def _masked(self, value: Any, schema: Schema | None) -> Any:
        if value is None:
            return None
        logical = schema.name if schema is not None else None
        kind = schema.type if schema is not None else schemaless_type(value)
        if self._replacement is not None:
            return self._custom(value, kind, logical)
        if logical == Decimal.LOGICAL_NAME or isinstance(value, decimal.Decimal):
            return decimal.Decimal(0)
        if logical == Timestamp.LOGICAL_NAME or isinstance(value, datetime.datetime):
            return datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
        if isinstance(value, datetime.date):
            return datetime.date(1970, 1, 1)
        if isinstance(value, datetime.time):
            return datetime.time(0)
        if logical is None and kind in _ZERO_BY_TYPE:
            return _ZERO_BY_TYPE[kind]
        if isinstance(value, (list, tuple)):
            return []
        if isinstance(value, Mapping):
            return {}
        raise DataError(f"Cannot mask value of type: {_java_type(value, kind, logical)}")

    def _custom(self, value: Any, kind: Type | None, logical: str | None) -> Any:
        text = str(self._replacement)
        try:
            if logical == Decimal.LOGICAL_NAME or isinstance(value, decimal.Decimal):
                return decimal.Decimal(text)
            if logical is None and kind in (Type.INT8, Type.INT16, Type.INT32, Type.INT64):
                return _java_integer(text, kind)
            if logical is None and kind in (Type.FLOAT32, Type.FLOAT64):
                return float(text)
        except (ValueError, ArithmeticError) as exc:
            raise DataError(f"Unable to convert {text} (class java.lang.String) to number") from exc
        if logical is None and kind is Type.STRING:
            return text
        raise DataError(
            f"Cannot mask value of type {_java_type(value, kind, logical)} with custom replacement."
        )


def _java_integer(text: str, kind: Type) -> int:
    number = decimal.Decimal(text.strip())
    bits = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}[kind]
    whole = int(number)
    return ((whole + 2 ** (bits - 1)) % 2**bits) - 2 ** (bits - 1)


def _java_type(value: Any, kind: Type | None, logical: str | None) -> str:
    if logical == Timestamp.LOGICAL_NAME or isinstance(value, datetime.date):
        return "class java.util.Date"
    if kind in _JAVA_CLASS:
        return _JAVA_CLASS[kind]
    return f"class {type(value).__name__}"


class MaskFieldKey(MaskField):
    OPERATES_ON_KEY = True


class MaskFieldValue(MaskField):
    OPERATES_ON_KEY = False
