"""Header transformations: ``InsertHeader``, ``DropHeaders`` and ``HeaderFrom`` (``$Key``/``$Value``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyconnect.api.converters.values_parser import parse_string
from pyconnect.api.data import SchemaBuilder, Struct
from pyconnect.api.source import Header, SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance, Type
from pyconnect.config.validators import NonNullValidator, ValidString
from pyconnect.errors import ConfigError, DataError
from pyconnect.transforms.base import (
    NON_EMPTY_LIST,
    REPLACE_NULL_WITH_DEFAULT_KEY,
    REQUIRED_UNIQUE_LIST,
    KeyOrValue,
    SchemaCache,
    Transformation,
    copy_schema_basics,
    field_value,
    require_map,
    require_struct,
)


class InsertHeader(Transformation):
    """Appends one header whose schema and value come from parsing ``value.literal`` (``Values.parseString``)."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("header", Type.STRING, validator=NonNullValidator(), importance=Importance.HIGH,
                      documentation="The name of the header."),
            ConfigKey("value.literal", Type.STRING, validator=NonNullValidator(), importance=Importance.HIGH,
                      documentation="The literal value that is to be set as the header value on all records."),
        ]
    )  # fmt: skip

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._header = str(parsed["header"])
        literal = parse_string(str(parsed["value.literal"]))
        self._schema = None if literal is None else literal.schema
        self._value = None if literal is None else literal.value

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        headers = (*record.headers, Header(self._header, self._schema, self._value))
        return record.new_record(headers=headers)


class DropHeaders(Transformation):
    """Removes every header whose key is listed in ``headers``."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("headers", Type.LIST, validator=REQUIRED_UNIQUE_LIST, importance=Importance.HIGH,
                      documentation="The name of the headers to be removed."),
        ]
    )  # fmt: skip

    def configure(self, configs: Mapping[str, Any]) -> None:
        self._drop = set(self.CONFIG_DEF.parse(configs)["headers"])  # type: ignore[call-overload]

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        return record.new_record(headers=tuple(h for h in record.headers if h.key not in self._drop))


class HeaderFrom(KeyOrValue):
    """Copies or moves the listed fields into headers (``fields[i]`` goes to header ``headers[i]``)."""

    CONFIG_DEF = ConfigDef(
        [
            ConfigKey("fields", Type.LIST, validator=NON_EMPTY_LIST, importance=Importance.HIGH,
                      documentation="Field names in the record whose values are to be copied or moved to headers."),
            ConfigKey("headers", Type.LIST, validator=NON_EMPTY_LIST, importance=Importance.HIGH,
                      documentation="Header names, in the same order as the field names listed in the fields configuration property."),
            ConfigKey("operation", Type.STRING, validator=ValidString("move", "copy"), importance=Importance.HIGH,
                      documentation="Either <code>move</code> if the fields are to be moved to the headers (removed from the key/value), or <code>copy</code> if the fields are to be copied to the headers (retained in the key/value)."),
            REPLACE_NULL_WITH_DEFAULT_KEY,
        ]
    )  # fmt: skip

    def configure(self, configs: Mapping[str, Any]) -> None:
        parsed = self.CONFIG_DEF.parse(configs)
        self._fields: list[str] = list(parsed["fields"])  # type: ignore[call-overload]
        self._headers: list[str] = list(parsed["headers"])  # type: ignore[call-overload]
        if len(self._fields) != len(self._headers):
            raise ConfigError("'fields' config must have the same number of elements as 'headers' config.")
        self._move = parsed["operation"] == "move"
        self._purpose = f"header {parsed['operation']}"
        self._with_default = bool(parsed["replace.null.with.default"])
        self._cache = SchemaCache()

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        schema = self.operating_schema(record)
        value = self.operating_value(record)
        headers = list(record.headers)
        if schema is None:
            source = require_map(value, self._purpose)
            updated = dict(source)
            for name, header in zip(self._fields, self._headers, strict=True):
                if self._move:
                    updated.pop(name, None)
                headers.append(Header(header, None, source.get(name)))
            return self.new_record(record, None, updated).new_record(headers=tuple(headers))
        struct = require_struct(value, self._purpose)
        new_schema, new_value = schema, struct
        if self._move:
            new_schema = self._cache.get(schema)
            if new_schema is None:
                builder = copy_schema_basics(schema, SchemaBuilder.struct())
                for field in schema.fields:
                    if field.name not in self._fields:
                        builder.field(field.name, field.schema)
                new_schema = builder.build()
                self._cache.put(schema, new_schema)
            new_value = Struct(new_schema)
            for field in new_schema.fields:
                new_value.put(field.name, field_value(struct, field.name, self._with_default))
        for name, header in zip(self._fields, self._headers, strict=True):
            present = struct.schema.field(name)
            field_schema = schema.field(name)
            if field_schema is None:
                raise _null_pointer(name)
            header_value = field_value(struct, name, self._with_default) if present is not None else None
            headers.append(Header(header, field_schema.schema, header_value))
        return self.new_record(record, new_schema, new_value).new_record(headers=tuple(headers))


def _null_pointer(name: str) -> DataError:
    return DataError(f"Field {name} does not exist in the schema")


class HeaderFromKey(HeaderFrom):
    OPERATES_ON_KEY = True


class HeaderFromValue(HeaderFrom):
    OPERATES_ON_KEY = False
