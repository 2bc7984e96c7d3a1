"""``org.apache.kafka.connect.storage.StringConverter``: ``toString()`` of the value, encoded.

``converter.encoding`` takes a Java charset name. Java's ``UTF-16`` and ``UTF-32`` encoders write
big-endian (``UTF-16`` with a ``FE FF`` byte-order mark) and their decoders default to big-endian
without a mark; Python's codecs of the same names use the machine's byte order, so those two are
mapped explicitly. Unmappable characters become ``?`` and malformed input U+FFFD, as in Java.
"""

from __future__ import annotations

import codecs
from collections.abc import Iterable, Mapping
from typing import Any

from pyconnect.api.converters.base import BaseConverter, converter_config_def, with_type
from pyconnect.api.converters.jackson import float_text
from pyconnect.api.data import OPTIONAL_STRING_SCHEMA, Schema, SchemaAndValue, Type
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.javastr import java_str
from pyconnect.config.types import Importance, Width
from pyconnect.config.types import Type as ConfigType
from pyconnect.errors import ConfigError

ENCODING_KEY = ConfigKey(
    "converter.encoding",
    ConfigType.STRING,
    default="UTF-8",
    importance=Importance.HIGH,
    documentation="The name of the Java character set to use for encoding strings as byte arrays.",
    width=Width.MEDIUM,
    display_name="Encoding",
)
_CONFIG_DEF = converter_config_def(ENCODING_KEY)


def _decode_bom_default_be(data: bytes, width: int) -> str:
    bom_be = b"\xfe\xff" if width == 16 else b"\x00\x00\xfe\xff"
    bom_le = b"\xff\xfe" if width == 16 else b"\xff\xfe\x00\x00"
    if data.startswith(bom_be):
        return data[len(bom_be) :].decode(f"utf-{width}-be", "replace")
    if data.startswith(bom_le):
        return data[len(bom_le) :].decode(f"utf-{width}-le", "replace")
    return data.decode(f"utf-{width}-be", "replace")


def java_to_string(value: Any, schema: Schema | None = None) -> str:
    """``String.valueOf(value)`` for Connect values (``true``, ``1.0E10``, ``[a, b]``, ``{k=v}``)."""
    if isinstance(value, float):
        return float_text(value) if schema is not None and schema.type is Type.FLOAT32 else java_str(value)
    if isinstance(value, Mapping):
        return "{" + ", ".join(f"{java_to_string(k)}={java_to_string(v)}" for k, v in value.items()) + "}"
    if isinstance(value, (list, tuple)):
        return "[" + ", ".join(java_to_string(v) for v in value) + "]"
    return java_str(value)


class StringConverter(BaseConverter):
    """Encodes ``str(value)`` (Java text) with ``converter.encoding``; decodes to OPTIONAL_STRING."""

    def __init__(self) -> None:
        self._codec = "utf-8"
        self._java_name = "UTF-8"

    def config(self) -> ConfigDef:
        return _CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        parsed = _CONFIG_DEF.parse(with_type(configs, is_key))
        name = str(parsed["converter.encoding"])
        upper = name.upper().replace("_", "-")
        if upper in ("UTF-16", "UTF16", "UTF-32", "UTF32"):
            self._codec = upper.replace("-", "")
        else:
            try:
                self._codec = codecs.lookup(name).name
            except LookupError as exc:
                raise ConfigError(f"Unsupported encoding {name}") from exc
        self._java_name = name

    def _encode(self, text: str) -> bytes:
        if self._codec == "UTF16":
            return b"\xfe\xff" + text.encode("utf-16-be", "replace")
        if self._codec == "UTF32":
            return text.encode("utf-32-be", "replace")
        return text.encode(self._codec, "replace")

    def _decode(self, data: bytes) -> str:
        if self._codec == "UTF16":
            return _decode_bom_default_be(data, 16)
        if self._codec == "UTF32":
            return _decode_bom_default_be(data, 32)
        return data.decode(self._codec, "replace")

    def from_connect_data(self, topic: str, headers: Any, schema: Schema | None, value: Any) -> bytes | None:
        if value is None:
            return None
        return self._encode(value if type(value) is str else java_to_string(value, schema))

    def from_connect_batch(
        self, topic: str, schema: Schema | None, values: Iterable[Any]
    ) -> list[bytes | None]:
        """A UTF-8 batch of ``str`` is encoded by one C-level ``map``; anything else per value."""
        values = list(values)
        if self._codec == "utf-8" and set(map(type, values)) == {str}:
            try:
                return list(map(str.encode, values))
            except UnicodeEncodeError:
                pass
        return [self.from_connect_data(topic, None, schema, v) for v in values]

    def to_connect_data(self, topic: str, headers: Any, value: bytes | None) -> SchemaAndValue:
        return SchemaAndValue(OPTIONAL_STRING_SCHEMA, None if value is None else self._decode(bytes(value)))
