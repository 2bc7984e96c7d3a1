"""The Transformation and Predicate contracts (``org.apache.kafka.connect.transforms``) and the helpers
the built-in ports share.

Calling contract (both kinds): the runtime creates one instance per task and alias, calls
``configure(configs)`` once with the alias' keys (``transforms.<alias>.`` stripped, ``predicate`` and
``negate`` removed), then ``apply``/``test`` for each record in order from one task, then ``close()``.
Instances are not shared between tasks, so they may cache per-schema results. They are pure: no I/O,
no Kafka, no event loop.

* :meth:`Transformation.apply` returns a new record, the same record, or ``None`` to drop it (the
  record is then still acknowledged, and its source offset committed, as Java does).
* :meth:`Predicate.test` says whether the transformation it guards applies.

Errors: bad config raises :class:`~pyconnect.errors.ConfigError` from ``configure``; a record the
transformation cannot handle raises :class:`~pyconnect.errors.DataError` from ``apply``. Messages
follow Java's text, with Python type names where Java prints a class name.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pyconnect import COMPATIBLE_KAFKA_VERSION
from pyconnect.api.data import Schema, SchemaBuilder, Struct, Type
from pyconnect.api.source import SourceRecord
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.javastr import invalid_value
from pyconnect.config.types import Importance
from pyconnect.config.types import Type as ConfigType
from pyconnect.config.validators import LambdaValidator, ValidList
from pyconnect.errors import DataError


class Transformation:
    """Base of every transformation; subclasses define ``CONFIG_DEF`` and override ``apply``."""

    CONFIG_DEF: ConfigDef = ConfigDef()

    def version(self) -> str:
        return COMPATIBLE_KAFKA_VERSION

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.CONFIG_DEF.parse(configs)

    def apply(self, record: SourceRecord) -> SourceRecord | None:
        raise NotImplementedError

    def close(self) -> None:
        return None


class Predicate:
    """Base of every predicate; subclasses define ``CONFIG_DEF`` and override ``test``."""

    CONFIG_DEF: ConfigDef = ConfigDef()

    def version(self) -> str:
        return COMPATIBLE_KAFKA_VERSION

    def config(self) -> ConfigDef:
        return self.CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        self.CONFIG_DEF.parse(configs)

    def test(self, record: SourceRecord) -> bool:
        raise NotImplementedError

    def close(self) -> None:
        return None


class KeyOrValue(Transformation):
    """A transformation with ``$Key`` and ``$Value`` variants (Java's abstract base with two nested
    classes): ``OPERATES_ON_KEY`` picks which half of the record it reads and rewrites."""

    OPERATES_ON_KEY: bool = False

    def operating_schema(self, record: SourceRecord) -> Schema | None:
        return record.key_schema if self.OPERATES_ON_KEY else record.value_schema

    def operating_value(self, record: SourceRecord) -> Any:
        return record.key if self.OPERATES_ON_KEY else record.value

    def new_record(self, record: SourceRecord, schema: Schema | None, value: Any) -> SourceRecord:
        if self.OPERATES_ON_KEY:
            return record.new_record(key_schema=schema, key=value)
        return record.new_record(value_schema=schema, value=value)


def java_class_name(value: object) -> str:
    """The Java class name Connect would print for a Python value (for error messages)."""
    if value is None:
        return "null"
    if isinstance(value, Struct):
        return "org.apache.kafka.connect.data.Struct"
    if isinstance(value, bool):
        return "java.lang.Boolean"
    if isinstance(value, int):
        return "java.lang.Long"
    if isinstance(value, float):
        return "java.lang.Double"
    if isinstance(value, str):
        return "java.lang.String"
    if isinstance(value, (bytes, bytearray, memoryview)):
        return "[B"
    if isinstance(value, Mapping):
        return "java.util.HashMap"
    if isinstance(value, (list, tuple)):
        return "java.util.ArrayList"
    return type(value).__name__


def schemaless_type(value: Any) -> Type | None:
    """The Connect type of a schemaless value (Java's ``ConnectSchema.schemaType`` by class); None for
    a value no Connect type describes."""
    if isinstance(value, bool):
        return Type.BOOLEAN
    if isinstance(value, int):
        return Type.INT64
    if isinstance(value, float):
        return Type.FLOAT64
    if isinstance(value, str):
        return Type.STRING
    if isinstance(value, (bytes, bytearray, memoryview)):
        return Type.BYTES
    if isinstance(value, (list, tuple)):
        return Type.ARRAY
    if isinstance(value, Mapping):
        return Type.MAP
    if isinstance(value, Struct):
        return Type.STRUCT
    return None


def require_schema(schema: Schema | None, purpose: str) -> Schema:
    if schema is None:
        raise DataError(f"Schema required for [{purpose}]")
    return schema


def require_map(value: Any, purpose: str) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        raise DataError(
            f"Only Map objects supported in absence of schema for [{purpose}], found: {java_class_name(value)}"
        )
    return value  # type: ignore[return-value]


def require_struct(value: Any, purpose: str) -> Struct:
    if not isinstance(value, Struct):
        raise DataError(f"Only Struct objects supported for [{purpose}], found: {java_class_name(value)}")
    return value


def copy_schema_basics(source: Schema, builder: SchemaBuilder | None = None) -> SchemaBuilder:
    """``SchemaUtil.copySchemaBasics``: name, version, doc and parameters onto ``builder`` (by default a
    builder of the same type; an array keeps its element schema)."""
    if builder is None:
        if source.type is Type.ARRAY:
            builder = SchemaBuilder.array(source.value_schema)
        else:
            builder = SchemaBuilder(source.type)
    if source.name is not None:
        builder.name(source.name)
    if source.version is not None:
        builder.version(source.version)
    if source.doc is not None:
        builder.doc(source.doc)
    if source.parameters is not None:
        builder.parameters(source.parameters)
    return builder


class SchemaCache:
    """A bounded per-instance cache of derived schemas (Java's 16-entry ``LRUCache``)."""

    def __init__(self, size: int = 16) -> None:
        self._size = size
        self._entries: dict[Any, Any] = {}

    def get(self, key: Any) -> Any:
        found = self._entries.pop(key, None)
        if found is not None:
            self._entries[key] = found
        return found

    def put(self, key: Any, value: Any) -> None:
        self._entries.pop(key, None)
        self._entries[key] = value
        while len(self._entries) > self._size:
            del self._entries[next(iter(self._entries))]


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
