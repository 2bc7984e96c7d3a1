"""``org.apache.kafka.connect.storage.SimpleHeaderConverter``, Connect's default header converter.

Writes ``Values.convertToString(schema, value)`` as UTF-8; reads by inferring a schema from the text
(:func:`pyconnect.api.converters.values.parse_string`), falling back to the raw bytes as BYTES when the
text cannot be parsed.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping
from typing import Any

import pyconnect
from pyconnect.api.converters.values import convert_to_string, parse_string
from pyconnect.api.data import BYTES_SCHEMA, Schema, SchemaAndValue
from pyconnect.config.definition import ConfigDef

log = logging.getLogger(__name__)
_CONFIG_DEF = ConfigDef()


class SimpleHeaderConverter:
    """Stateless; ``configure`` accepts and ignores any configs."""

    def version(self) -> str:
        return pyconnect.COMPATIBLE_KAFKA_VERSION

    def config(self) -> ConfigDef:
        return _CONFIG_DEF

    def configure(self, configs: Mapping[str, Any]) -> None:
        return None

    def close(self) -> None:
        return None

    def from_connect_header(
        self, topic: str, header_key: str, schema: Schema | None, value: Any
    ) -> bytes | None:
        text = convert_to_string(schema, value)
        return None if text is None else text.encode("utf-8", "replace")

    def to_connect_header(self, topic: str, header_key: str, value: bytes | None) -> SchemaAndValue | None:
        """The inferred schema and value; ``None`` for the text ``null`` (Java returns ``null`` too)."""
        if value is None:
            return SchemaAndValue(None, None)
        try:
            return parse_string(bytes(value).decode("utf-8", "replace"))
        except Exception:
            log.warning(
                "Failed to deserialize value for header '%s' on topic '%s', so using byte array",
                header_key,
                topic,
            )
            return SchemaAndValue(BYTES_SCHEMA, bytes(value))
