"""Field-level transformations of the key or value: ``InsertField``, ``ReplaceField``, ``MaskField``,
``ValueToKey``, ``HoistField``, ``ExtractField`` and ``SetSchemaMetadata``.

Each ``$Key``/``$Value`` pair is one class here with two subclasses. Schemaless data is a ``dict``;
data with a schema is a :class:`~pyconnect.api.data.Struct`. Derived schemas are cached per instance
(16 entries) as in Java. ``replace.null.with.default`` picks ``Struct.get`` (default substituted) or
``get_without_default`` when copying fields.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping
from typing import Any

from pyconnect.api.data import (
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_INT64_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    TIMESTAMP_SCHEMA,
    Decimal,
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    Timestamp,
    Type,
)
from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.javastr import invalid_value
from pyconnect.config.types import Importance
from pyconnect.config.types import Type as ConfigType
from pyconnect.config.validators import LambdaValidator, NonEmptyString, ValidList
from pyconnect.errors import ConfigError, DataError
from pyconnect.transforms.base import (
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    require_map,
    require_schema,
    require_struct,
)
from pyconnect.transforms.field_path import FIELD_SYNTAX_VERSION_KEY, SingleFieldPath

REPLACE_NULL_WITH_DEFAULT_KEY = ConfigKey(
    "replace.null.with.default",
    ConfigType.BOOLEAN,
    default=True,
    importance=Importance.MEDIUM,
    documentation="Whether to replace fields that have a default value and that are null to the default value. When set to true, the default value is used, otherwise null is used.",
)


def _non_empty_list(name: str, value: object) -> None:
    if not value:
        raise invalid_value(name, value, "Empty list")


NON_EMPTY_LIST = LambdaValidator(_non_empty_list, "non-empty list")
"""The transforms' ``NonEmptyListValidator`` (HeaderFrom keeps it in Kafka 4.3.1)."""

REQUIRED_UNIQUE_LIST = ValidList.any_non_duplicate_values(allow_empty=False, allow_null=False)
"""Kafka 4.3.1's ``ValidList.anyNonDuplicateValues(false, false)`` (MaskField, ValueToKey, DropHeaders)."""

OPTIONAL_UNIQUE_LIST = ValidList.any_non_duplicate_values(allow_empty=True, allow_null=False)


def field_value(struct: Struct, name: str, with_default: bool) -> Any:
    return struct.get(name) if with_default else struct.get_without_default(name)


# --------------------------------------------------------------------------------------------------
# InsertField

_OPTIONALITY_DOC = "Suffix with <code>!</code> to make this a required field, or <code>?</code> to keep it optional (the default)."
_OPTIONAL_TIMESTAMP_SCHEMA = Timestamp.builder().optional().build()


def _insertion_spec(spec: object) -> tuple[str, bool] | None:
    if spec is None:
        return None
    text = str(spec)
    if text.endswith("?"):
        return text[:-1], True
    if text.endswith("!"):
        return text[:-1], False
    return text, True


class InsertField(KeyOrValue):
    """Adds topic, partition, timestamp and/or a static string (offset is sink-only: an error here)."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("topic.field", ConfigType.STRING, default=None, importance=Importance.MEDIUM,
                      documentation="Field name for Kafka topic. " + _OPTIONALITY_DOC),
            ConfigKey("partition.field", ConfigType.STRING, default=None, importance=Importance.MEDIUM,
                      documentation="Field name for Kafka partition. " + _OPTIONALITY_DOC),
            ConfigKey("offset.field", ConfigType.STRING, default=None, importance=Importance.MEDIUM,
                      documentation="Field name for Kafka offset - only applicable to sink connectors.<br/>" + _OPTIONALITY_DOC),
            ConfigKey("timestamp.field", ConfigType.STRING, default=None, importance=Importance.MEDIUM,
                      documentation="Field name for record timestamp. " + _OPTIONALITY_DOC),
            ConfigKey("static.field", ConfigType.STRING, default=None, importance=Importance.MEDIUM,
                      documentation="Field name for static data field. " + _OPTIONALITY_DOC),
            ConfigKey("static.value", ConfigType.STRING, default=None, importance=Importance.MEDIUM,
                      documentation="Static field value, if field name configured."),
            REPLACE_NULL_WITH_DEFAULT_KEY,
        ]
    )  # fmt: skip
    PURPOSE = "field insertion"

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._topic = _insertion_spec(parsed["topic.field"])
        self._partition = _insertion_spec(parsed["partition.field"])
        self._offset = _insertion_spec(parsed["offset.field"])
        self._timestamp = _insertion_spec(parsed["timestamp.field"])
        self._static = _insertion_spec(parsed["static.field"])
        self._static_value = parsed["static.value"]
        self._with_default = bool(parsed["replace.null.with.default"])
        if not (self._topic or self._partition or self._offset or self._timestamp or self._static):
            raise ConfigError("No field insertion configured")
        if self._static is not None and self._static_value is None:
            raise invalid_value(
                "static.value", None, f"No value specified for static field: {self._static[0]}"
            )
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            updated = dict(require_map(value, self.PURPOSE))
            self._insert(record, updated.__setitem__, schemaless=True)
            return self.new_record(record, None, updated)
        struct = require_struct(value, self.PURPOSE)
        schema = self._cache.get(struct.schema)
        if schema is None:
            schema = self._updated_schema(struct.schema)
            self._cache.put(struct.schema, schema)
        out = Struct(schema)
        for field in struct.schema.fields:
            out.put(field.name, field_value(struct, field.name, self._with_default))
        self._insert(record, out.put, schemaless=False)
        return self.new_record(record, schema, out)

    def _insert(self, record: SourceRecord, put: Any, schemaless: bool) -> None:
        if self._topic is not None:
            put(self._topic[0], record.topic)
        if self._partition is not None and record.kafka_partition is not None:
            put(self._partition[0], record.kafka_partition)
        if self._offset is not None:
            raise DataError(
                f"Only SinkRecord supported for [{self.PURPOSE}], found: org.apache.kafka.connect.source.SourceRecord"
            )
        if self._timestamp is not None and record.timestamp is not None:
            put(
                self._timestamp[0],
                record.timestamp if schemaless else Timestamp.to_logical(TIMESTAMP_SCHEMA, record.timestamp),
            )
        if self._static is not None and self._static_value is not None:
            put(self._static[0], self._static_value)

    def _updated_schema(self, schema: Schema) -> Schema:
        builder = copy_schema_basics(schema, SchemaBuilder.struct())
        for field in schema.fields:
            builder.field(field.name, field.schema)
        extra = (
            (self._topic, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
            (self._partition, OPTIONAL_INT32_SCHEMA, INT32_SCHEMA),
            (self._offset, OPTIONAL_INT64_SCHEMA, INT64_SCHEMA),
            (self._timestamp, _OPTIONAL_TIMESTAMP_SCHEMA, TIMESTAMP_SCHEMA),
            (self._static, OPTIONAL_STRING_SCHEMA, STRING_SCHEMA),
        )
        for spec, optional, required in extra:
            if spec is not None:
                builder.field(spec[0], optional if spec[1] else required)
        return builder.build()


class InsertFieldKey(InsertField):
    OPERATES_ON_KEY = True


class InsertFieldValue(InsertField):
    OPERATES_ON_KEY = False


# --------------------------------------------------------------------------------------------------
# ReplaceField


def _parse_renames(name: str, mappings: object) -> dict[str, str]:
    renames: dict[str, str] = {}
    for mapping in mappings or []:  # type: ignore[attr-defined]
        parts = _java_split(str(mapping), ":")
        if len(parts) != 2:
            raise invalid_value("renames", mappings, f"Invalid rename mapping: {mapping}")
        renames[parts[0]] = parts[1]
    return renames


def _check_renames(name: str, mappings: object) -> None:
    _parse_renames(name, mappings)


def _java_split(text: str, sep: str) -> list[str]:
    """``String.split`` with a literal separator: trailing empty strings are removed."""
    parts = text.split(sep)
    while parts and parts[-1] == "" and len(parts) > 1:
        parts.pop()
    if parts == [""] and text:
        return []
    return parts


class ReplaceField(KeyOrValue):
    """Keeps (``include``), drops (``exclude`` wins) and renames (``renames``: ``old:new``) fields."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("exclude", ConfigType.LIST, default=[], validator=OPTIONAL_UNIQUE_LIST, importance=Importance.MEDIUM,
                      documentation="Fields to exclude. This takes precedence over the fields to include."),
            ConfigKey("include", ConfigType.LIST, default=[], validator=OPTIONAL_UNIQUE_LIST, importance=Importance.MEDIUM,
                      documentation="Fields to include. If specified, only these fields will be used."),
            ConfigKey("renames", ConfigType.LIST, default=[],
                      validator=LambdaValidator(_check_renames, "list of colon-delimited pairs, e.g. <code>foo:bar,abc:xyz</code>"),
                      importance=Importance.MEDIUM, documentation="Field rename mappings."),
            REPLACE_NULL_WITH_DEFAULT_KEY,
        ]
    )  # fmt: skip
    PURPOSE = "field replacement"

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._exclude = set(parsed["exclude"])  # type: ignore[call-overload]
        self._include = set(parsed["include"])  # type: ignore[call-overload]
        self._renames = _parse_renames("renames", parsed["renames"])
        self._reverse = {v: k for k, v in self._renames.items()}
        self._with_default = bool(parsed["replace.null.with.default"])
        self._cache = SchemaCache()

    def _keep(self, name: str) -> bool:
        return name not in self._exclude and (not self._include or name in self._include)

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        if self.operating_schema(record) is None:
            source = require_map(value, self.PURPOSE)
            updated = {self._renames.get(k, k): v for k, v in source.items() if self._keep(k)}
            return self.new_record(record, None, updated)
        struct = require_struct(value, self.PURPOSE)
        schema = self._cache.get(struct.schema)
        if schema is None:
            builder = copy_schema_basics(struct.schema, SchemaBuilder.struct())
            for field in struct.schema.fields:
                if self._keep(field.name):
                    builder.field(self._renames.get(field.name, field.name), field.schema)
            schema = builder.build()
            self._cache.put(struct.schema, schema)
        out = Struct(schema)
        for field in schema.fields:
            out.put(
                field.name, field_value(struct, self._reverse.get(field.name, field.name), self._with_default)
            )
        return self.new_record(record, schema, out)


class ReplaceFieldKey(ReplaceField):
    OPERATES_ON_KEY = True


class ReplaceFieldValue(ReplaceField):
    OPERATES_ON_KEY = False


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


def _schemaless_type(value: Any) -> Type | None:
    if isinstance(value, bool):
        return Type.BOOLEAN
    if isinstance(value, int):
        return Type.INT64
    if isinstance(value, float):
        return Type.FLOAT64
    if isinstance(value, str):
        return Type.STRING
    if isinstance(value, (bytes, bytearray)):
        return Type.BYTES
    return None


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
        kind = schema.type if schema is not None else _schemaless_type(value)
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


# --------------------------------------------------------------------------------------------------
# ValueToKey, HoistField, ExtractField, SetSchemaMetadata


class ValueToKey(KeyOrValue):
    """Replaces the key with a map/Struct of the listed value fields."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("fields", ConfigType.LIST, validator=REQUIRED_UNIQUE_LIST, importance=Importance.HIGH,
                      documentation="Field names on the record value to extract as the record key."),
            REPLACE_NULL_WITH_DEFAULT_KEY,
        ]
    )  # fmt: skip
    PURPOSE = "copying fields from value to key"

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._fields: list[str] = list(parsed["fields"])  # type: ignore[call-overload]
        self._with_default = bool(parsed["replace.null.with.default"])
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        if record.value_schema is None:
            value = require_map(record.value, self.PURPOSE)
            return record.new_record(key_schema=None, key={name: value.get(name) for name in self._fields})
        struct = require_struct(record.value, self.PURPOSE)
        key_schema = self._cache.get(struct.schema)
        if key_schema is None:
            builder = SchemaBuilder.struct()
            for name in self._fields:
                found = struct.schema.field(name)
                if found is None:
                    raise DataError(f"Field does not exist: {name}")
                builder.field(name, found.schema)
            key_schema = builder.build()
            self._cache.put(struct.schema, key_schema)
        key = Struct(key_schema)
        for name in self._fields:
            key.put(name, field_value(struct, name, self._with_default))
        return record.new_record(key_schema=key_schema, key=key, value_schema=struct.schema, value=struct)


class HoistField(KeyOrValue):
    """Wraps the key/value in a one-field Struct (with schema) or map (schemaless)."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("field", ConfigType.STRING, importance=Importance.MEDIUM,
                      documentation="Field name for the single field that will be created in the resulting Struct or Map."),
        ]
    )  # fmt: skip

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._field = str(self.CONFIG_DEF.parse(configs)["field"])
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            return self.new_record(record, None, {self._field: value})
        updated = self._cache.get(schema)
        if updated is None:
            updated = SchemaBuilder.struct().field(self._field, schema).build()
            self._cache.put(schema, updated)
        return self.new_record(record, updated, Struct(updated).put(self._field, value))


class HoistFieldKey(HoistField):
    OPERATES_ON_KEY = True


class HoistFieldValue(HoistField):
    OPERATES_ON_KEY = False


class ExtractField(KeyOrValue):
    """Replaces the key/value with one of its fields (a KIP-821 path with ``field.syntax.version=V2``)."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey(
                "field",
                ConfigType.STRING,
                importance=Importance.MEDIUM,
                documentation="Field name to extract.",
            ),
            REPLACE_NULL_WITH_DEFAULT_KEY,
            FIELD_SYNTAX_VERSION_KEY,
        ]
    )
    PURPOSE = "field extraction"

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._original = str(parsed["field"])
        self._path = SingleFieldPath(self._original, str(parsed["field.syntax.version"]))
        self._with_default = bool(parsed["replace.null.with.default"])

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        if schema is None:
            source = None if value is None else require_map(value, self.PURPOSE)
            return self.new_record(record, None, self._path.value_from_map(source))
        struct = None if value is None else require_struct(value, self.PURPOSE)
        field: Field | None = self._path.field_from(schema)
        if field is None:
            raise DataError(f"Unknown field: {self._original}")
        return self.new_record(record, field.schema, self._path.value_from_struct(struct, self._with_default))


class ExtractFieldKey(ExtractField):
    OPERATES_ON_KEY = True


class ExtractFieldValue(ExtractField):
    OPERATES_ON_KEY = False


class SetSchemaMetadata(KeyOrValue):
    """Sets the schema name and/or version of the key/value schema (a Struct is rebuilt on the new schema)."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("schema.name", ConfigType.STRING, default=None, importance=Importance.HIGH,
                      documentation="Schema name to set."),
            ConfigKey("schema.version", ConfigType.INT, default=None, importance=Importance.HIGH,
                      documentation="Schema version to set."),
            REPLACE_NULL_WITH_DEFAULT_KEY,
        ]
    )  # fmt: skip

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._name = parsed["schema.name"]
        self._version = parsed["schema.version"]
        self._with_default = bool(parsed["replace.null.with.default"])
        if self._name is None and self._version is None:
            raise ConfigError("Neither schema name nor version configured")

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        schema = self.operating_schema(record)
        if value is None and schema is None:
            return record
        schema = require_schema(schema, "updating schema metadata")
        if schema.type is not Type.STRUCT:
            # Kafka 4.3.1 copies ``schema.fields()``, which only a struct schema allows.
            raise DataError("Cannot list fields on non-struct type")
        is_map = schema.type is Type.MAP
        updated = Schema(
            schema.type,
            optional=schema.optional,
            default=schema.default,
            name=str(self._name) if self._name is not None else schema.name,
            version=int(self._version) if self._version is not None else schema.version,  # type: ignore[call-overload]
            doc=schema.doc,
            parameters=schema.parameters,
            fields=schema.fields,
            key_schema=schema.key_schema if is_map else None,
            value_schema=schema.value_schema if is_map or schema.type is Type.ARRAY else None,
        )
        if isinstance(value, Struct):
            out = Struct(updated)
            for field in updated.fields:
                out.put(field.name, field_value(value, field.name, self._with_default))
            value = out
        return self.new_record(record, updated, value)


class SetSchemaMetadataKey(SetSchemaMetadata):
    OPERATES_ON_KEY = True


class SetSchemaMetadataValue(SetSchemaMetadata):
    OPERATES_ON_KEY = False
