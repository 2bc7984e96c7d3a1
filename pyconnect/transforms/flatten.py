"""``Flatten``: nested Structs (with schema) or maps (schemaless) become one level, field names joined
with ``delimiter``. Arrays and primitives are copied as they are; a field under an optional parent
becomes optional; defaults come from the field, else from the parent's default Struct."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyconnect.api.data import Schema, SchemaBuilder, Struct, Type
from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance
from pyconnect.config.types import Type as ConfigType
from pyconnect.errors import DataError
from pyconnect.transforms.base import (
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    java_class_name,
    require_map,
    require_struct,
)

_LEAVES = (
    Type.INT8, Type.INT16, Type.INT32, Type.INT64, Type.FLOAT32, Type.FLOAT64, Type.BOOLEAN, Type.STRING, Type.BYTES,
    Type.ARRAY,
)  # fmt: skip


class Flatten(KeyOrValue):
    """See the module docstring."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("delimiter", ConfigType.STRING, default=".", importance=Importance.MEDIUM,
                      documentation="Delimiter to insert between field names from the input record when generating field names for the output record"),
        ]
    )  # fmt: skip
    PURPOSE = "flattening"

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._delimiter = str(self.CONFIG_DEF.parse(configs)["delimiter"])
        self._cache = SchemaCache()

    def _name(self, prefix: str, name: str) -> str:
        return name if not prefix else f"{prefix}{self._delimiter}{name}"

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        value = self.operating_value(record)
        if value is None:
            return record
        schema = self.operating_schema(record)
        if schema is None:
            flat: dict[str, Any] = {}
            self._flatten_map(require_map(value, self.PURPOSE), "", flat)
            return self.new_record(record, None, flat)
        struct = require_struct(value, self.PURPOSE)
        updated = self._cache.get(schema)
        if updated is None:
            builder = copy_schema_basics(schema, SchemaBuilder.struct())
            self._flatten_schema(schema, "", builder, schema.optional, schema.default)
            updated = builder.build()
            self._cache.put(schema, updated)
        out = Struct(updated)
        self._flatten_struct(struct, "", out)
        return self.new_record(record, updated, out)

    def _flatten_map(self, source: Mapping[str, Any], prefix: str, out: dict[str, Any]) -> None:
        for key, value in source.items():
            name = self._name(prefix, key)
            if value is None or isinstance(value, (bool, int, float, str, bytes, bytearray, list, tuple)):
                out[name] = value
            elif isinstance(value, Mapping):
                self._flatten_map(value, name, out)
            else:
                raise DataError(
                    f"Flatten transformation does not support class {java_class_name(value)} for record without "
                    f"schemas (for field {name})."
                )

    def _flatten_schema(
        self, schema: Schema, prefix: str, builder: SchemaBuilder, optional: bool, parent_default: Any
    ) -> None:
        for field in schema.fields:
            name = self._name(prefix, field.name)
            field_optional = optional or field.schema.optional
            default = field.schema.default
            if default is None and parent_default is not None:
                default = parent_default.get(field.name)
            if field.schema.type in _LEAVES:
                leaf = copy_schema_basics(field.schema)
                if field_optional:
                    leaf.optional()
                if default is not None:
                    leaf.default_value(default)
                builder.field(name, leaf.build())
            elif field.schema.type is Type.STRUCT:
                self._flatten_schema(field.schema, name, builder, field_optional, default)
            else:
                raise DataError(
                    f"Flatten transformation does not support {field.schema.type} for record with schemas "
                    f"(for field {name})."
                )

    def _flatten_struct(self, struct: Struct | None, prefix: str, out: Struct) -> None:
        if struct is None:
            return
        for field in struct.schema.fields:
            name = self._name(prefix, field.name)
            if field.schema.type in _LEAVES:
                out.put(name, struct.get(field.name))
            elif field.schema.type is Type.STRUCT:
                self._flatten_struct(struct.get(field.name), name, out)
            else:
                raise DataError(
                    f"Flatten transformation does not support {field.schema.type} for record with schemas "
                    f"(for field {name})."
                )


class FlattenKey(Flatten):
    OPERATES_ON_KEY = True


class FlattenValue(Flatten):
    OPERATES_ON_KEY = False
