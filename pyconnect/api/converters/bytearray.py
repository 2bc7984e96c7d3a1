"""``org.apache.kafka.connect.converters.ByteArrayConverter``: record bytes pass through unchanged."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from pyconnect.api.converters.base import BaseConverter, converter_config_def
from pyconnect.api.data import OPTIONAL_BYTES_SCHEMA, Schema, SchemaAndValue, Type
from pyconnect.config.definition import ConfigDef
from pyconnect.errors import DataError

_CONFIG_DEF = converter_config_def()
_PASS_THROUGH = frozenset({bytes, type(None)})


class ByteArrayConverter(BaseConverter):
    """Accepts ``bytes``-like values (or ``None``) with a BYTES schema or none; decodes as OPTIONAL_BYTES."""

    def config(self) -> ConfigDef:
        return _CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        return None

    @staticmethod
    def _check_schema(schema: Schema | None) -> None:
        if schema is not None and schema.type is not Type.BYTES:
            raise DataError(f"Invalid schema type for ByteArrayConverter: {schema.type}")

    def from_connect_data(self, topic: str, headers: Any, schema: Schema | None, value: Any) -> bytes | None:
        self._check_schema(schema)
        if value is None or type(value) is bytes:
            return value
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        raise DataError(f"ByteArrayConverter is not compatible with objects of type {type(value)}")

    def from_connect_batch(
        self, topic: str, schema: Schema | None, values: Iterable[Any]
    ) -> list[bytes | None]:
        """One schema check per batch; a batch of ``bytes``/``None`` is returned as a list without a loop."""
        self._check_schema(schema)
        values = list(values)
        if set(map(type, values)) <= _PASS_THROUGH:
            return values
        return [self.from_connect_data(topic, None, None, v) for v in values]

    def to_connect_data(self, topic: str, headers: Any, value: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_BYTES_SCHEMA, value)
