"""``org.apache.kafka.connect.json.JsonConverter`` (Kafka 4.3.1), byte-for-byte.

``schemas.enable`` (default true) wraps every value as ``{"schema": ..., "payload": ...}``; without it
the payload is written bare (the internal topics' format). Decimals are base64 of the two's-complement
unscaled value, or JSON numbers with ``decimal.format=NUMERIC``; bytes are base64; maps whose key
schema is not STRING (or, schemaless, that have a non-``str`` key) are arrays of ``[key, value]``
pairs. ``replace.null.with.default`` (default true) writes and reads a null as the schema default.
``schema.content`` (KIP-1054), when set and schemas are enabled, is the schema of every message read,
whose whole JSON is then the payload. ``schemas.cache.size`` bounds the two schema caches.

Reading is a little stricter than Jackson's coercions: a JSON value of the wrong kind for its schema
(text for an INT32, say) raises :class:`~pyconnect.errors.DataError` where Java reads 0/false/null.
"""

from __future__ import annotations

import base64
import binascii
import datetime
import decimal
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import msgspec

from pyconnect.api.converters.base import BaseConverter, converter_config_def, with_type
from pyconnect.api.converters.jackson import double_node, dumps, float_node, to_float32
from pyconnect.api.data import (
    Date,
    Decimal,
    Schema,
    SchemaAndValue,
    SchemaBuilder,
    Struct,
    Time,
    Timestamp,
    Type,
)
from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.types import Importance, Width
from pyconnect.config.types import Type as ConfigType
from pyconnect.config.validators import CaseInsensitiveValidString
from pyconnect.errors import DataError

_KEYS = (
    ConfigKey(
        "schemas.enable",
        ConfigType.BOOLEAN,
        default=True,
        importance=Importance.HIGH,
        documentation="Include schemas within each of the serialized values and keys.",
        group="Schemas",
        order_in_group=0,
        width=Width.MEDIUM,
        display_name="Enable Schemas",
    ),
    ConfigKey(
        "schemas.cache.size",
        ConfigType.INT,
        default=1000,
        importance=Importance.HIGH,
        documentation="The maximum number of schemas that can be cached in this converter instance.",
        group="Schemas",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Schema Cache Size",
    ),
    ConfigKey(
        "schema.content",
        ConfigType.STRING,
        default=None,
        importance=Importance.HIGH,
        documentation="When set, this is used as the schema for all messages, and the schemas within each of "
        "the message will be ignored.Otherwise, the schema will be included in the content of each message. "
        "This configuration applies only 'schemas.enable' is true, and it exclusively affects the sink connector.",
        group="Schemas",
        order_in_group=2,
        width=Width.MEDIUM,
        display_name="Schema Content",
    ),
    ConfigKey(
        "decimal.format",
        ConfigType.STRING,
        default="BASE64",
        importance=Importance.LOW,
        documentation="Controls which format this converter will serialize decimals in. This value is case "
        "insensitive and can be either 'BASE64' (default) or 'NUMERIC'",
        validator=CaseInsensitiveValidString("NUMERIC", "BASE64"),
        group="Serialization",
        order_in_group=0,
        width=Width.MEDIUM,
        display_name="Decimal Format",
    ),
    ConfigKey(
        "replace.null.with.default",
        ConfigType.BOOLEAN,
        default=True,
        importance=Importance.LOW,
        documentation="Whether to replace fields that have a default value and that are null to the default "
        "value. When set to true, the default value is used, otherwise null is used.",
        group="Serialization",
        order_in_group=1,
        width=Width.MEDIUM,
        display_name="Replace null with default",
    ),
)
JSON_CONVERTER_CONFIG_DEF = converter_config_def(*_KEYS)

_TYPE_NAMES = {
    Type.BOOLEAN: "boolean",
    Type.INT8: "int8",
    Type.INT16: "int16",
    Type.INT32: "int32",
    Type.INT64: "int64",
    Type.FLOAT32: "float",
    Type.FLOAT64: "double",
    Type.BYTES: "bytes",
    Type.STRING: "string",
    Type.ARRAY: "array",
    Type.MAP: "map",
    Type.STRUCT: "struct",
}
_NAMED_TYPES = {name: type_ for type_, name in _TYPE_NAMES.items()}
_INT_BITS = {Type.INT8: 8, Type.INT16: 16, Type.INT32: 32, Type.INT64: 64}
_DECODER = msgspec.json.Decoder(float_hook=decimal.Decimal)
_SCHEMA_KEY = msgspec.json.Encoder(decimal_format="number")
_ENVELOPE_ERROR = (
    'JsonConverter with schemas.enable requires "schema" and "payload" fields and may not contain additional '
    "fields. If you are trying to deserialize plain JSON data, set schemas.enable=false in your converter "
    "configuration."
)


class _Lru(OrderedDict[Any, Any]):
    def __init__(self, size: int) -> None:
        super().__init__()
        self.size = size

    def lookup(self, key: Any) -> Any:
        found = self.get(key)
        if found is not None:
            self.move_to_end(key)
        return found

    def store(self, key: Any, value: Any) -> None:
        if self.size <= 0:
            return
        self[key] = value
        if len(self) > self.size:
            self.popitem(last=False)


def _wrap(value: int, bits: int) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if value >> (bits - 1) else value


def _kind(node: Any) -> str:
    if node is None:
        return "NULL"
    if isinstance(node, bool):
        return "BOOLEAN"
    if isinstance(node, (int, decimal.Decimal)):
        return "NUMBER"
    if isinstance(node, str):
        return "STRING"
    if isinstance(node, list):
        return "ARRAY"
    return "OBJECT"


class JsonConverter(BaseConverter):
    """Converter and header converter; see the module docstring for the format."""

    def __init__(self) -> None:
        self.configure({}, False)

    def config(self) -> ConfigDef:
        return JSON_CONVERTER_CONFIG_DEF

    def configure(self, configs: Mapping[str, Any], is_key: bool | None = None) -> None:
        parsed = JSON_CONVERTER_CONFIG_DEF.parse(with_type(configs, is_key))
        self.schemas_enabled = bool(parsed["schemas.enable"])
        self.numeric_decimals = str(parsed["decimal.format"]).upper() == "NUMERIC"
        self.replace_null_with_default = bool(parsed["replace.null.with.default"])
        size = int(parsed["schemas.cache.size"])  # type: ignore[call-overload]
        self._from_connect_cache = _Lru(size)
        self._to_connect_cache = _Lru(size)
        content = parsed["schema.content"]
        self._content_schema: Schema | None = None
        if content:
            try:
                self._content_schema = self.as_connect_schema(_DECODER.decode(str(content).encode()))
            except msgspec.DecodeError as exc:
                raise DataError("Failed to parse schema.content") from exc

    def from_connect_data(self, topic: str, headers: Any, schema: Schema | None, value: Any) -> bytes | None:
        if schema is None and value is None:
            return None
        payload = self._to_json(schema, value)
        if self.schemas_enabled:
            return dumps({"schema": self.as_json_schema(schema), "payload": payload})
        return dumps(payload)

    def to_connect_data(self, topic: str, headers: Any, value: bytes | None) -> SchemaAndValue:
        if value is None:
            return SchemaAndValue(None, None)
        try:
            node = _DECODER.decode(value)
        except msgspec.DecodeError as exc:
            raise DataError(
                "Converting byte[] to Kafka Connect data failed due to serialization error: "
            ) from exc
        if not self.schemas_enabled:
            return SchemaAndValue(None, self._to_connect(None, node))
        if self._content_schema is not None:
            return SchemaAndValue(self._content_schema, self._to_connect(self._content_schema, node))
        if not isinstance(node, dict) or len(node) != 2 or "schema" not in node or "payload" not in node:
            raise DataError(_ENVELOPE_ERROR)
        schema = self.as_connect_schema(node["schema"])
        return SchemaAndValue(schema, self._to_connect(schema, node["payload"]))

    def as_json_schema(self, schema: Schema | None) -> dict[str, Any] | None:
        """The envelope's ``schema`` object (``asJsonSchema``); results are cached and must not be mutated."""
        if schema is None:
            return None
        cached = self._from_connect_cache.lookup(schema)
        if cached is not None:
            return cached
        out: dict[str, Any] = {"type": _TYPE_NAMES[schema.type]}
        if schema.type is Type.ARRAY:
            out["items"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.MAP:
            out["keys"] = self.as_json_schema(schema.key_schema)
            out["values"] = self.as_json_schema(schema.value_schema)
        elif schema.type is Type.STRUCT:
            out["fields"] = [
                {**(self.as_json_schema(f.schema) or {}), "field": f.name} for f in schema.fields
            ]
        out["optional"] = schema.optional
        if schema.name is not None:
            out["name"] = schema.name
        if schema.version is not None:
            out["version"] = schema.version
        if schema.doc is not None:
            out["doc"] = schema.doc
        if schema.parameters is not None:
            out["parameters"] = dict(schema.parameters)
        if schema.default is not None:
            out["default"] = self._to_json(schema, schema.default)
        self._from_connect_cache.store(schema, out)
        return out

    def as_connect_schema(self, node: Any) -> Schema | None:
        """``asConnectSchema``: the Connect schema an envelope's ``schema`` object describes."""
        if node is None:
            return None
        key = _SCHEMA_KEY.encode(node) if isinstance(node, dict) else None
        cached = self._to_connect_cache.lookup(key) if key is not None else None
        if cached is not None:
            return cached
        type_name = node.get("type") if isinstance(node, dict) else None
        if not isinstance(type_name, str):
            raise DataError("Schema must contain 'type' field")
        builder = self._builder_for(type_name, node)
        if node.get("optional") is True:
            builder.optional()
        else:
            builder.required()
        if isinstance(node.get("name"), str):
            builder.name(node["name"])
        if isinstance(node.get("version"), int) and not isinstance(node.get("version"), bool):
            builder.version(_wrap(node["version"], 32))
        if isinstance(node.get("doc"), str):
            builder.doc(node["doc"])
        params = node.get("parameters")
        if isinstance(params, dict):
            for name, text in params.items():
                if not isinstance(text, str):
                    raise DataError("Schema parameters must have string values.")
                builder.parameter(name, text)
        if "default" in node:
            builder.default_value(self._to_connect(builder.build(), node["default"]))
        result = builder.build()
        self._to_connect_cache.store(key, result)
        return result

    def _builder_for(self, type_name: str, node: dict[str, Any]) -> SchemaBuilder:
        type_ = _NAMED_TYPES.get(type_name)
        if type_ is None:
            raise DataError(f"Unknown schema type: {type_name}")
        if type_ is Type.ARRAY:
            items = node.get("items")
            if items is None:
                raise DataError("Array schema did not specify the element type")
            return SchemaBuilder.array(self.as_connect_schema(items))
        if type_ is Type.MAP:
            if "keys" not in node:
                raise DataError("Map schema did not specify the key type")
            if "values" not in node:
                raise DataError("Map schema did not specify the value type")
            return SchemaBuilder.map(
                self.as_connect_schema(node["keys"]), self.as_connect_schema(node["values"])
            )
        builder = SchemaBuilder(type_)
        if type_ is Type.STRUCT:
            fields = node.get("fields")
            if not isinstance(fields, list):
                raise DataError('Struct schema\'s "fields" argument is not an array.')
            for field in fields:
                name = field.get("field") if isinstance(field, dict) else None
                if not isinstance(name, str):
                    raise DataError("Struct schema's field name not specified properly")
                builder.field(name, self.as_connect_schema(field))  # type: ignore[arg-type]
        return builder

    def _to_json(self, schema: Schema | None, value: Any) -> Any:
        if value is None:
            if schema is None:
                return None
            if schema.default is not None and self.replace_null_with_default:
                return self._to_json(schema, schema.default)
            if schema.optional:
                return None
            raise DataError(
                "Conversion error: null value for field that is required and has no default value"
            )
        if schema is None:
            return self._schemaless_to_json(value)
        if schema.name is not None:
            logical = self._logical_to_json(schema, value)
            if logical is not None:
                return logical
        kind = schema.type
        bits = _INT_BITS.get(kind)
        if bits is not None:
            if type(value) is bool or not isinstance(value, int) or _wrap(value, bits) != value:
                raise self._invalid(schema, value)
            return value
        if kind is Type.FLOAT64 or kind is Type.FLOAT32:
            if type(value) is bool or not isinstance(value, (float, int)):
                raise self._invalid(schema, value)
            return double_node(float(value)) if kind is Type.FLOAT64 else float_node(float(value))
        if kind is Type.BOOLEAN:
            if type(value) is not bool:
                raise self._invalid(schema, value)
            return value
        if kind is Type.STRING:
            if not isinstance(value, str):
                raise self._invalid(schema, value)
            return value
        if kind is Type.BYTES:
            if not isinstance(value, (bytes, bytearray, memoryview)):
                raise DataError(f"Invalid type for bytes type: {type(value)}")
            return bytes(value)
        if kind is Type.ARRAY:
            if not isinstance(value, (list, tuple, set, frozenset)):
                raise self._invalid(schema, value)
            return [self._to_json(schema.value_schema, v) for v in value]
        if kind is Type.MAP:
            if not isinstance(value, Mapping):
                raise self._invalid(schema, value)
            assert schema.key_schema is not None
            return self._map_to_json(
                schema.key_schema, schema.value_schema, value, schema.key_schema.type is Type.STRING
            )
        if not isinstance(value, Struct):
            raise self._invalid(schema, value)
        if value.schema != schema:
            raise DataError("Mismatching schema.")
        return {f.name: self._to_json(f.schema, value.get_without_default(f.name)) for f in schema.fields}

    def _map_to_json(
        self,
        key_schema: Schema | None,
        value_schema: Schema | None,
        value: Mapping[Any, Any],
        object_mode: bool,
    ) -> Any:
        if object_mode:
            return {
                self._as_text(self._to_json(key_schema, k)): self._to_json(value_schema, v)
                for k, v in value.items()
            }
        return [[self._to_json(key_schema, k), self._to_json(value_schema, v)] for k, v in value.items()]

    @staticmethod
    def _as_text(node: Any) -> str:
        if isinstance(node, str):
            return node
        if node is None:
            return "null"
        if isinstance(node, bool):
            return "true" if node else "false"
        if isinstance(node, msgspec.Raw):
            return bytes(node).decode().strip('"')
        return str(node)

    def _schemaless_to_json(self, value: Any) -> Any:
        if isinstance(value, (str, bool, int)):
            return value
        if isinstance(value, float):
            return double_node(value)
        if isinstance(value, (bytes, bytearray, memoryview)):
            return bytes(value)
        if isinstance(value, (list, tuple, set, frozenset)):
            return [self._to_json(None, v) for v in value]
        if isinstance(value, Mapping):
            return self._map_to_json(None, None, value, all(isinstance(k, str) for k in value))
        if isinstance(value, Struct):
            raise DataError("Mismatching schema.")
        raise DataError(f"Java class {type(value)} does not have corresponding schema type.")

    def _logical_to_json(self, schema: Schema, value: Any) -> Any:
        name = schema.name
        if name == Decimal.LOGICAL_NAME:
            if not isinstance(value, decimal.Decimal):
                raise DataError(f"Invalid type for Decimal, expected BigDecimal but was {type(value)}")
            if self.numeric_decimals:
                Decimal.from_logical(schema, value)
                return msgspec.Raw(str(value).encode())
            return Decimal.from_logical(schema, value)
        if name == Date.LOGICAL_NAME:
            if not isinstance(value, datetime.date):
                raise DataError(f"Invalid type for Date, expected Date but was {type(value)}")
            return Date.from_logical(schema, value)
        if name == Time.LOGICAL_NAME:
            if not isinstance(value, datetime.time):
                raise DataError(f"Invalid type for Time, expected Date but was {type(value)}")
            return Time.from_logical(schema, value)
        if name == Timestamp.LOGICAL_NAME:
            if not isinstance(value, datetime.datetime):
                raise DataError(f"Invalid type for Timestamp, expected Date but was {type(value)}")
            return Timestamp.from_logical(schema, value)
        return None

    @staticmethod
    def _invalid(schema: Schema, value: Any) -> DataError:
        return DataError(f"Invalid type for {schema.type}: {type(value)}")

    def _to_connect(self, schema: Schema | None, node: Any) -> Any:
        if schema is None:
            return self._schemaless_to_connect(node)
        if node is None:
            if schema.default is not None and self.replace_null_with_default:
                return schema.default
            if schema.optional:
                return None
            raise DataError(f"Invalid null value for required {schema.type} field")
        if schema.name is not None:
            converter = _LOGICAL_TO_CONNECT.get(schema.name)
            if converter is not None:
                return converter(schema, node)
        kind = schema.type
        try:
            bits = _INT_BITS.get(kind)
            if bits is not None:
                return _wrap(int(node), bits)
            if kind is Type.FLOAT64:
                return float(node)
            if kind is Type.FLOAT32:
                return to_float32(float(node))
            if kind is Type.BOOLEAN:
                return node is True
            if kind is Type.STRING:
                return node if isinstance(node, str) else None
            if kind is Type.BYTES:
                return _binary(node)
            if kind is Type.ARRAY:
                return [self._to_connect(schema.value_schema, e) for e in node]
        except (TypeError, ValueError, decimal.InvalidOperation) as exc:
            raise DataError(f"Invalid {kind} value: {node!r}") from exc
        if kind is Type.MAP:
            return self._map_to_connect(schema, node)
        if not isinstance(node, dict):
            raise DataError(f"Structs should be encoded as JSON objects, but found {_kind(node)}")
        struct = Struct(schema)
        for f in schema.fields:
            struct.put(f.name, self._to_connect(f.schema, node.get(f.name)))
        return struct

    def _map_to_connect(self, schema: Schema, node: Any) -> dict[Any, Any]:
        assert schema.key_schema is not None
        if schema.key_schema.type is Type.STRING:
            if not isinstance(node, dict):
                raise DataError(
                    f"Maps with string fields should be encoded as JSON objects, but found {_kind(node)}"
                )
            return {k: self._to_connect(schema.value_schema, v) for k, v in node.items()}
        if not isinstance(node, list):
            raise DataError(
                f"Maps with non-string fields should be encoded as JSON array of tuples, but found {_kind(node)}"
            )
        result = {}
        for entry in node:
            if not isinstance(entry, list):
                raise DataError(f"Found invalid map entry instead of array tuple: {_kind(entry)}")
            if len(entry) != 2:
                raise DataError(f"Found invalid map entry, expected length 2 but found :{len(entry)}")
            result[self._to_connect(schema.key_schema, entry[0])] = self._to_connect(
                schema.value_schema, entry[1]
            )
        return result

    def _schemaless_to_connect(self, node: Any) -> Any:
        if node is None or isinstance(node, (bool, int, str)):
            return node
        if isinstance(node, decimal.Decimal):
            return float(node)
        if isinstance(node, list):
            return [self._schemaless_to_connect(e) for e in node]
        return {k: self._schemaless_to_connect(v) for k, v in node.items()}


def _binary(node: Any) -> bytes | None:
    if not isinstance(node, str):
        return None
    try:
        return base64.b64decode(node, validate=True)
    except binascii.Error as exc:
        raise DataError("Invalid bytes field") from exc


def _decimal_to_connect(schema: Schema, node: Any) -> decimal.Decimal:
    if isinstance(node, decimal.Decimal):
        return node
    if isinstance(node, int) and not isinstance(node, bool):
        return decimal.Decimal(node)
    if isinstance(node, str):
        try:
            return Decimal.to_logical(schema, base64.b64decode(node, validate=True))
        except (binascii.Error, DataError) as exc:
            raise DataError("Invalid bytes for Decimal field") from exc
    raise DataError(
        f"Invalid type for Decimal, underlying representation should be numeric or bytes but was {_kind(node)}"
    )


def _int_node(node: Any, logical: str, bits: int) -> int:
    if type(node) is not int or _wrap(node, bits) != node:
        kind = "integer" if bits == 32 else "integral"
        raise DataError(
            f"Invalid type for {logical}, underlying representation should be {kind} but was {_kind(node)}"
        )
    return node


_LOGICAL_TO_CONNECT = {
    Decimal.LOGICAL_NAME: _decimal_to_connect,
    Date.LOGICAL_NAME: lambda schema, node: Date.to_logical(schema, _int_node(node, "Date", 32)),
    Time.LOGICAL_NAME: lambda schema, node: Time.to_logical(schema, _int_node(node, "Time", 32)),
    Timestamp.LOGICAL_NAME: lambda schema, node: Timestamp.to_logical(
        schema, _int_node(node, "Timestamp", 64)
    ),
}
