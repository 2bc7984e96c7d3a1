"""Transformations that change the shape of the key or value: ``ValueToKey``, ``HoistField``,
``ExtractField`` (KIP-821 paths) and ``SetSchemaMetadata``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyconnect.api.data import (
    Field,
    Schema,
    SchemaBuilder,
    Struct,
    Type,
)
from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance
from pyconnect.config.types import Type as ConfigType
from pyconnect.errors import ConfigError, DataError
from pyconnect.transforms.base import (
    REPLACE_NULL_WITH_DEFAULT_KEY,
    REQUIRED_UNIQUE_LIST,
    KeyOrValue,
    SchemaCache,
    field_value,
    require_map,
    require_schema,
    require_struct,
)
from pyconnect.transforms.field_path import FIELD_SYNTAX_VERSION_KEY, SingleFieldPath

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
