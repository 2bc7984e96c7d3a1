"""Field-level transformations of the key or value: ``InsertField`` and ``ReplaceField``.

Each ``$Key``/``$Value`` pair is one class here with two subclasses. Schemaless data is a ``dict``;
data with a schema is a :class:`~pyconnect.api.data.Struct`. Derived schemas are cached per instance
(16 entries) as in Java. ``replace.null.with.default`` picks ``Struct.get`` (default substituted) or
``get_without_default`` when copying fields.
"""

from __future__ import annotations

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
    Schema,
    SchemaBuilder,
    Struct,
    Timestamp,
)
from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.javastr import invalid_value
from pyconnect.config.types import Importance
from pyconnect.config.types import Type as ConfigType
from pyconnect.config.validators import LambdaValidator
from pyconnect.errors import ConfigError, DataError
from pyconnect.transforms.base import (
    OPTIONAL_UNIQUE_LIST,
    REPLACE_NULL_WITH_DEFAULT_KEY,
    KeyOrValue,
    SchemaCache,
    copy_schema_basics,
    field_value,
    require_map,
    require_struct,
)

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
    """Adds topic, partition, timestamp and/or a static string; the Kafka offset for sink records only
    (on a source record it is an error, as in Java)."""

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
            offset = getattr(record, "kafka_offset", None)  # a SinkRecord's (pyconnect.api.sink)
            if offset is None:
                raise DataError(
                    f"Only SinkRecord supported for [{self.PURPOSE}], found: org.apache.kafka.connect.source.SourceRecord"
                )
            put(self._offset[0], offset)
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
