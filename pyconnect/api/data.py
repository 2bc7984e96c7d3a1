"""Connect's data model (``org.apache.kafka.connect.data``): schemas, structs and logical types.

Size: over 600 lines because Connect's data API (Schema, SchemaBuilder, Struct, the logical types and
value checks) is one public module connector authors import from, as Java's
``org.apache.kafka.connect.data``.

Python values per schema type (what :func:`validate_value` accepts):

===============  ==========================================================
INT8..INT64      ``int`` (not ``bool``) within the type's signed range
FLOAT32/FLOAT64  ``float``
BOOLEAN          ``bool``
STRING           ``str``
BYTES            ``bytes``, ``bytearray`` or ``memoryview``
ARRAY            ``list`` or ``tuple``
MAP              ``dict`` (any ``Mapping``)
STRUCT           :class:`Struct` whose schema equals the field's schema
===============  ==========================================================

Logical types, selected by schema name as in Java: Decimal -> ``decimal.Decimal`` whose exponent is
``-scale``; Date -> ``datetime.date`` (a ``datetime`` must be midnight UTC); Time -> ``datetime.time``;
Timestamp -> ``datetime.datetime`` (naive means UTC). Messages of :class:`~pyconnect.errors.DataError`
follow Java's text with Python type names.

Schemas are immutable and hashable; equality is Java's ``ConnectSchema.equals``.
"""

from __future__ import annotations

import datetime
import decimal
import enum
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NamedTuple

from pyconnect.errors import DataError


class SchemaBuilderError(DataError):
    """Java ``SchemaBuilderException``: an invalid :class:`SchemaBuilder` call."""


class Type(enum.Enum):
    """``Schema.Type``; ``value`` is the lower-case name Java's ``getName()`` returns."""

    INT8 = "int8"
    INT16 = "int16"
    INT32 = "int32"
    INT64 = "int64"
    FLOAT32 = "float32"
    FLOAT64 = "float64"
    BOOLEAN = "boolean"
    STRING = "string"
    BYTES = "bytes"
    ARRAY = "array"
    MAP = "map"
    STRUCT = "struct"

    @property
    def is_primitive(self) -> bool:
        return self not in (Type.ARRAY, Type.MAP, Type.STRUCT)

    def __str__(self) -> str:
        return self.name


@dataclass(frozen=True, slots=True)
class Field:
    """One struct field: its name, position and schema."""

    name: str
    index: int
    schema: Schema

    def __repr__(self) -> str:
        return f"Field{{name={self.name}, index={self.index}, schema={self.schema}}}"


class Schema:
    """An immutable ``ConnectSchema``. Build one with :class:`SchemaBuilder` or the constants below."""

    __slots__ = (
        "_fields_by_name",
        "_hash",
        "default",
        "doc",
        "fields",
        "key_schema",
        "name",
        "optional",
        "parameters",
        "type",
        "value_schema",
        "version",
    )

    _fields_by_name: dict[str, Field]
    _hash: int
    type: Type
    optional: bool
    default: Any
    name: str | None
    version: int | None
    doc: str | None
    parameters: Mapping[str, str] | None
    fields: tuple[Field, ...]
    key_schema: Schema | None
    value_schema: Schema | None

    def __init__(
        self,
        type: Type,
        optional: bool = False,
        default: Any = None,
        name: str | None = None,
        version: int | None = None,
        doc: str | None = None,
        parameters: Mapping[str, str] | None = None,
        fields: Iterable[Field] = (),
        key_schema: Schema | None = None,
        value_schema: Schema | None = None,
    ) -> None:
        set_ = object.__setattr__
        set_(self, "type", type)
        set_(self, "optional", optional)
        set_(self, "default", default)
        set_(self, "name", name)
        set_(self, "version", version)
        set_(self, "doc", doc)
        set_(self, "parameters", None if parameters is None else dict(parameters))
        set_(self, "fields", tuple(fields) if type is Type.STRUCT else ())
        set_(self, "_fields_by_name", {f.name: f for f in self.fields})
        set_(self, "key_schema", key_schema)
        set_(self, "value_schema", value_schema)
        set_(
            self,
            "_hash",
            hash((type, optional, name, version, doc, self.fields, key_schema, value_schema)),
        )

    def __setattr__(self, name: str, value: object) -> None:
        raise AttributeError("Schema is immutable")

    def field(self, name: str) -> Field | None:
        """The field called ``name``, or ``None``; a non-struct schema raises like Java."""
        if self.type is not Type.STRUCT:
            raise DataError("Cannot look up fields on non-struct type")
        return self._fields_by_name.get(name)

    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, Schema):
            return NotImplemented
        return (
            self._hash == other._hash
            and self.type is other.type
            and self.optional == other.optional
            and self.version == other.version
            and self.name == other.name
            and self.doc == other.doc
            and _deep_equals(self.default, other.default)
            and self.fields == other.fields
            and self.key_schema == other.key_schema
            and self.value_schema == other.value_schema
            and self.parameters == other.parameters
        )

    def __hash__(self) -> int:
        return self._hash

    def __repr__(self) -> str:
        if self.name is not None:
            return f"Schema{{{self.name}:{self.type}}}"
        return f"Schema{{{self.type}}}"

    def validate_value(self, value: object) -> None:
        validate_value(self, value)


def _deep_equals(a: object, b: object) -> bool:
    if isinstance(a, (bytearray, memoryview)):
        a = bytes(a)
    if isinstance(b, (bytearray, memoryview)):
        b = bytes(b)
    return type(a) is type(b) and a == b


class SchemaAndValue(NamedTuple):
    schema: Schema | None
    value: Any


NULL_SCHEMA_AND_VALUE = SchemaAndValue(None, None)


class SchemaBuilder:
    """Fluent builder with Java's ``SchemaBuilder`` rules (each property set at most once)."""

    __slots__ = (
        "_default",
        "_doc",
        "_fields",
        "_name",
        "_optional",
        "_parameters",
        "_version",
        "key_schema",
        "type",
        "value_schema",
    )

    def __init__(self, type: Type) -> None:
        self.type = type
        self._optional: bool | None = None
        self._default: Any = None
        self._name: str | None = None
        self._version: int | None = None
        self._doc: str | None = None
        self._parameters: dict[str, str] | None = None
        self._fields: dict[str, Field] | None = {} if type is Type.STRUCT else None
        self.key_schema: Schema | None = None
        self.value_schema: Schema | None = None

    @staticmethod
    def _check_can_set(name: str, current: object, new: object) -> None:
        if current is not None and current != new:
            raise SchemaBuilderError(f"Invalid SchemaBuilder call: {name} has already been set.")

    def optional(self) -> SchemaBuilder:
        self._check_can_set("optional", self._optional, True)
        self._optional = True
        return self

    def required(self) -> SchemaBuilder:
        self._check_can_set("optional", self._optional, False)
        self._optional = False
        return self

    @property
    def is_optional(self) -> bool:
        return bool(self._optional)

    def default_value(self, value: Any) -> SchemaBuilder:
        self._check_can_set("default", self._default, value)
        try:
            validate_value(self.build(), value)
        except DataError as exc:
            raise SchemaBuilderError("Invalid default value") from exc
        self._default = value
        return self

    def name(self, name: str) -> SchemaBuilder:
        self._check_can_set("name", self._name, name)
        self._name = name
        return self

    def version(self, version: int) -> SchemaBuilder:
        self._check_can_set("version", self._version, version)
        self._version = version
        return self

    def doc(self, doc: str) -> SchemaBuilder:
        self._check_can_set("doc", self._doc, doc)
        self._doc = doc
        return self

    def parameter(self, key: str, value: str) -> SchemaBuilder:
        if self._parameters is None:
            self._parameters = {}
        self._parameters[key] = value
        return self

    def parameters(self, params: Mapping[str, str]) -> SchemaBuilder:
        if params:
            if self._parameters is None:
                self._parameters = {}
            self._parameters.update(params)
        return self

    def field(self, name: str, schema: Schema | SchemaBuilder) -> SchemaBuilder:
        if self._fields is None:
            raise SchemaBuilderError(f"Cannot create fields on type {self.type}")
        if not name:
            raise SchemaBuilderError("fieldName cannot be null.")
        if schema is None:
            raise SchemaBuilderError(f"fieldSchema for field {name} cannot be null.")
        if name in self._fields:
            raise SchemaBuilderError(f"Cannot create field because of field name duplication {name}")
        if isinstance(schema, SchemaBuilder):
            schema = schema.build()
        self._fields[name] = Field(name, len(self._fields), schema)
        return self

    def build(self) -> Schema:
        return Schema(
            self.type,
            optional=bool(self._optional),
            default=self._default,
            name=self._name,
            version=self._version,
            doc=self._doc,
            parameters=self._parameters,
            fields=() if self._fields is None else self._fields.values(),
            key_schema=self.key_schema,
            value_schema=self.value_schema,
        )

    @staticmethod
    def int8() -> SchemaBuilder:
        return SchemaBuilder(Type.INT8)

    @staticmethod
    def int16() -> SchemaBuilder:
        return SchemaBuilder(Type.INT16)

    @staticmethod
    def int32() -> SchemaBuilder:
        return SchemaBuilder(Type.INT32)

    @staticmethod
    def int64() -> SchemaBuilder:
        return SchemaBuilder(Type.INT64)

    @staticmethod
    def float32() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT32)

    @staticmethod
    def float64() -> SchemaBuilder:
        return SchemaBuilder(Type.FLOAT64)

    @staticmethod
    def bool() -> SchemaBuilder:
        return SchemaBuilder(Type.BOOLEAN)

    @staticmethod
    def string() -> SchemaBuilder:
        return SchemaBuilder(Type.STRING)

    @staticmethod
    def bytes() -> SchemaBuilder:
        return SchemaBuilder(Type.BYTES)

    @staticmethod
    def struct() -> SchemaBuilder:
        return SchemaBuilder(Type.STRUCT)

    @staticmethod
    def array(value_schema: Schema | None) -> SchemaBuilder:
        if value_schema is None:
            raise SchemaBuilderError("valueSchema cannot be null.")
        builder = SchemaBuilder(Type.ARRAY)
        builder.value_schema = value_schema
        return builder

    @staticmethod
    def map(key_schema: Schema | None, value_schema: Schema | None) -> SchemaBuilder:
        if key_schema is None:
            raise SchemaBuilderError("keySchema cannot be null.")
        if value_schema is None:
            raise SchemaBuilderError("valueSchema cannot be null.")
        builder = SchemaBuilder(Type.MAP)
        builder.key_schema = key_schema
        builder.value_schema = value_schema
        return builder


_INT_RANGES = {
    Type.INT8: (-(2**7), 2**7 - 1),
    Type.INT16: (-(2**15), 2**15 - 1),
    Type.INT32: (-(2**31), 2**31 - 1),
    Type.INT64: (-(2**63), 2**63 - 1),
}
_TYPE_CLASSES: dict[Type, tuple[type, ...]] = {
    Type.FLOAT32: (float,),
    Type.FLOAT64: (float,),
    Type.BOOLEAN: (bool,),
    Type.STRING: (str,),
    Type.BYTES: (bytes, bytearray, memoryview),
    Type.ARRAY: (list, tuple),
    Type.MAP: (Mapping,),
}


def validate_value(schema: Schema, value: object, field: str | None = None) -> None:
    """``ConnectSchema.validateValue``: raise :class:`DataError` unless ``value`` fits ``schema``."""
    _validate(schema, value, "value" if field is None else f'field: "{field}"')


def _invalid(schema: Schema, value: object, location: str) -> DataError:
    named = f' "{schema.name}"' if schema.name is not None else ""
    return DataError(
        f"Invalid Java object for schema{named} with type {schema.type}: {type(value)} for {location}"
    )


def _validate(schema: Schema, value: object, location: str) -> None:
    if value is None:
        if not schema.optional:
            raise DataError(f"Invalid value: null used for required {location}, schema type: {schema.type}")
        return
    logical = LOGICAL_CLASSES.get(schema.name) if schema.name is not None else None
    if logical is not None:
        if not isinstance(value, logical):
            raise _invalid(schema, value, location)
        return
    kind = schema.type
    bounds = _INT_RANGES.get(kind)
    if bounds is not None:
        if type(value) is bool or not isinstance(value, int) or not bounds[0] <= value <= bounds[1]:
            raise _invalid(schema, value, location)
        return
    if kind is Type.STRUCT:
        if not isinstance(value, Struct):
            raise _invalid(schema, value, location)
        if value.schema != schema:
            raise DataError("Struct schemas do not match.")
        value.validate()
        return
    if not isinstance(value, _TYPE_CLASSES[kind]):
        raise _invalid(schema, value, location)
    if kind is Type.ARRAY:
        entry = f"element of array {location}"
        element_schema = _require(schema.value_schema, entry)
        for element in value:  # type: ignore[attr-defined]
            _validate(element_schema, element, entry)
    elif kind is Type.MAP:
        key_location, value_location = f"key of map {location}", f"value of map {location}"
        key_schema = _require(schema.key_schema, key_location)
        value_schema = _require(schema.value_schema, value_location)
        for k, v in value.items():  # type: ignore[attr-defined]
            _validate(key_schema, k, key_location)
            _validate(value_schema, v, value_location)


def _require(schema: Schema | None, location: str) -> Schema:
    if schema is None:
        raise DataError(f"No schema defined for {location}")
    return schema


class Struct:
    """A record conforming to a STRUCT schema. ``put`` validates each value like Java's ``Struct.put``."""

    __slots__ = ("_values", "schema")

    def __init__(self, schema: Schema) -> None:
        if schema.type is not Type.STRUCT:
            raise DataError(f"Not a struct schema: {schema}")
        self.schema = schema
        self._values: list[Any] = [None] * len(schema.fields)

    def _field(self, name: str) -> Field:
        field = self.schema._fields_by_name.get(name)
        if field is None:
            raise DataError(f"{name} is not a valid field name")
        return field

    def put(self, name: str, value: Any) -> Struct:
        field = self._field(name)
        validate_value(field.schema, value, field.name)
        self._values[field.index] = value
        return self

    def get(self, name: str) -> Any:
        """The field's value, or its schema default when unset."""
        field = self._field(name)
        value = self._values[field.index]
        return field.schema.default if value is None else value

    def get_without_default(self, name: str) -> Any:
        return self._values[self._field(name).index]

    def validate(self) -> None:
        """Every required field without a default must be set (``Struct.validate``)."""
        for field in self.schema.fields:
            value = self._values[field.index]
            if value is None and (field.schema.optional or field.schema.default is not None):
                continue
            validate_value(field.schema, value, field.name)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Struct):
            return NotImplemented
        return self.schema == other.schema and all(
            _deep_equals(a, b) for a, b in zip(self._values, other._values, strict=True)
        )

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        parts = [
            f"{f.name}={v}" for f, v in zip(self.schema.fields, self._values, strict=True) if v is not None
        ]
        return "Struct{" + ",".join(parts) + "}"


_EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.UTC)
_MILLIS_PER_DAY = 86_400_000


def _utc(value: datetime.datetime) -> datetime.datetime:
    return value.replace(tzinfo=datetime.UTC) if value.tzinfo is None else value


class Decimal:
    """``org.apache.kafka.connect.data.Decimal``: BYTES holding a two's-complement unscaled integer."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Decimal"
    SCALE_FIELD = "scale"

    @staticmethod
    def builder(scale: int) -> SchemaBuilder:
        return SchemaBuilder.bytes().name(Decimal.LOGICAL_NAME).parameter("scale", str(scale)).version(1)

    @staticmethod
    def schema(scale: int) -> Schema:
        return Decimal.builder(scale).build()

    @staticmethod
    def scale(schema: Schema) -> int:
        text = (schema.parameters or {}).get(Decimal.SCALE_FIELD)
        if text is None:
            raise DataError("Invalid Decimal schema: scale parameter not found.")
        try:
            return int(text)
        except ValueError as exc:
            raise DataError("Invalid scale parameter found in Decimal schema: ") from exc

    @staticmethod
    def from_logical(schema: Schema, value: decimal.Decimal) -> bytes:
        scale = Decimal.scale(schema)
        sign, digits, exponent = value.as_tuple()
        if not isinstance(exponent, int):
            raise DataError(f"Invalid Decimal value: {value}")
        if -exponent != scale:
            raise DataError(
                "Decimal value has mismatching scale for given Decimal schema. "
                f"Schema has scale {scale}, value has scale {-exponent}."
            )
        unscaled = int("".join(map(str, digits)) or "0") * (-1 if sign else 1)
        return unscaled.to_bytes(
            ((unscaled if unscaled >= 0 else ~unscaled).bit_length() + 8) // 8, "big", signed=True
        )

    @staticmethod
    def to_logical(schema: Schema, value: bytes) -> decimal.Decimal:
        unscaled = int.from_bytes(value, "big", signed=True)
        digits = tuple(int(d) for d in str(abs(unscaled)))
        return decimal.Decimal((1 if unscaled < 0 else 0, digits, -Decimal.scale(schema)))


class Date:
    """``org.apache.kafka.connect.data.Date``: INT32 days since the epoch."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Date"

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Date.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.date) -> int:
        if schema.name != Date.LOGICAL_NAME:
            raise DataError("Requested conversion of Date object but the schema does not match.")
        if isinstance(value, datetime.datetime):
            utc = _utc(value).astimezone(datetime.UTC)
            if utc.time() != datetime.time(0):
                raise DataError(
                    "Kafka Connect Date type should not have any time fields set to non-zero values."
                )
            value = utc.date()
        return (value - _EPOCH.date()).days

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.date:
        if schema.name != Date.LOGICAL_NAME:
            raise DataError("Requested conversion of Date object but the schema does not match.")
        return _EPOCH.date() + datetime.timedelta(days=value)


class Time:
    """``org.apache.kafka.connect.data.Time``: INT32 milliseconds since midnight."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Time"

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int32().name(Time.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.time) -> int:
        if schema.name != Time.LOGICAL_NAME:
            raise DataError("Requested conversion of Time object but the schema does not match.")
        return ((value.hour * 60 + value.minute) * 60 + value.second) * 1000 + value.microsecond // 1000

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.time:
        if schema.name != Time.LOGICAL_NAME:
            raise DataError("Requested conversion of Date object but the schema does not match.")
        if value < 0 or value > _MILLIS_PER_DAY:
            raise DataError(
                "Time values must use number of milliseconds greater than 0 and less than 86400000"
            )
        return (_EPOCH + datetime.timedelta(milliseconds=value)).time()


class Timestamp:
    """``org.apache.kafka.connect.data.Timestamp``: INT64 milliseconds since the epoch."""

    LOGICAL_NAME = "org.apache.kafka.connect.data.Timestamp"

    @staticmethod
    def builder() -> SchemaBuilder:
        return SchemaBuilder.int64().name(Timestamp.LOGICAL_NAME).version(1)

    @staticmethod
    def from_logical(schema: Schema, value: datetime.datetime) -> int:
        if schema.name != Timestamp.LOGICAL_NAME:
            raise DataError("Requested conversion of Timestamp object but the schema does not match.")
        delta = _utc(value) - _EPOCH
        return (delta.days * 86_400 + delta.seconds) * 1000 + delta.microseconds // 1000

    @staticmethod
    def to_logical(schema: Schema, value: int) -> datetime.datetime:
        if schema.name != Timestamp.LOGICAL_NAME:
            raise DataError("Requested conversion of Timestamp object but the schema does not match.")
        return _EPOCH + datetime.timedelta(milliseconds=value)


LOGICAL_CLASSES: dict[str, tuple[type, ...]] = {
    Decimal.LOGICAL_NAME: (decimal.Decimal,),
    Date.LOGICAL_NAME: (datetime.date,),
    Time.LOGICAL_NAME: (datetime.time,),
    Timestamp.LOGICAL_NAME: (datetime.datetime,),
}

INT8_SCHEMA = Schema(Type.INT8)
INT16_SCHEMA = Schema(Type.INT16)
INT32_SCHEMA = Schema(Type.INT32)
INT64_SCHEMA = Schema(Type.INT64)
FLOAT32_SCHEMA = Schema(Type.FLOAT32)
FLOAT64_SCHEMA = Schema(Type.FLOAT64)
BOOLEAN_SCHEMA = Schema(Type.BOOLEAN)
STRING_SCHEMA = Schema(Type.STRING)
BYTES_SCHEMA = Schema(Type.BYTES)
OPTIONAL_INT8_SCHEMA = Schema(Type.INT8, optional=True)
OPTIONAL_INT16_SCHEMA = Schema(Type.INT16, optional=True)
OPTIONAL_INT32_SCHEMA = Schema(Type.INT32, optional=True)
OPTIONAL_INT64_SCHEMA = Schema(Type.INT64, optional=True)
OPTIONAL_FLOAT32_SCHEMA = Schema(Type.FLOAT32, optional=True)
OPTIONAL_FLOAT64_SCHEMA = Schema(Type.FLOAT64, optional=True)
OPTIONAL_BOOLEAN_SCHEMA = Schema(Type.BOOLEAN, optional=True)
OPTIONAL_STRING_SCHEMA = Schema(Type.STRING, optional=True)
OPTIONAL_BYTES_SCHEMA = Schema(Type.BYTES, optional=True)
DATE_SCHEMA = Date.builder().build()
TIME_SCHEMA = Time.builder().build()
TIMESTAMP_SCHEMA = Timestamp.builder().build()
