"""Connect data model: schema building and equality, struct validation, logical types (Java semantics)."""

from __future__ import annotations

import datetime
import decimal

import pytest

from pyconnect.api.data import (
    INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    Date,
    Decimal,
    Schema,
    SchemaBuilder,
    SchemaBuilderError,
    Struct,
    Time,
    Timestamp,
    Type,
    validate_value,
)
from pyconnect.errors import DataError


def person_schema() -> Schema:
    return (
        SchemaBuilder.struct()
        .name("Person")
        .field("name", STRING_SCHEMA)
        .field("age", SchemaBuilder.int32().optional().build())
        .field("city", SchemaBuilder.string().default_value("Paris").build())
        .build()
    )


def test_builder_produces_equal_hashable_schemas() -> None:
    a = SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).optional().doc("d").build()
    b = SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).optional().doc("d").build()
    assert a == b and hash(a) == hash(b)
    assert a != SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build()
    assert {a: 1}[b] == 1
    assert repr(person_schema()) == "Schema{Person:STRUCT}" and repr(INT32_SCHEMA) == "Schema{INT32}"


def test_builder_rejects_resetting_and_bad_defaults() -> None:
    with pytest.raises(SchemaBuilderError, match="name has already been set"):
        SchemaBuilder.int32().name("a").name("b")
    with pytest.raises(SchemaBuilderError, match="Invalid default value"):
        SchemaBuilder.int8().default_value(1000)
    with pytest.raises(SchemaBuilderError, match="Cannot create fields on type INT32"):
        SchemaBuilder.int32().field("x", STRING_SCHEMA)
    with pytest.raises(SchemaBuilderError, match="field name duplication x"):
        SchemaBuilder.struct().field("x", STRING_SCHEMA).field("x", STRING_SCHEMA)


def test_schemas_are_immutable() -> None:
    with pytest.raises(AttributeError):
        INT32_SCHEMA.optional = True  # type: ignore[misc]


@pytest.mark.parametrize(
    ("schema", "value"),
    [
        (SchemaBuilder.int8().build(), 128),
        (INT32_SCHEMA, True),
        (INT32_SCHEMA, 1.0),
        (SchemaBuilder.float64().build(), 1),
        (STRING_SCHEMA, b"x"),
        (SchemaBuilder.array(INT32_SCHEMA).build(), [1, "2"]),
        (SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(), {1: 1}),
        (Decimal.schema(2), 1.5),
    ],
)
def test_validate_value_rejects_wrong_python_types(schema: Schema, value: object) -> None:
    with pytest.raises(DataError, match="Invalid Java object for schema"):
        validate_value(schema, value)


def test_required_null_message_is_javas() -> None:
    with pytest.raises(DataError) as info:
        validate_value(INT32_SCHEMA, None, "f")
    assert str(info.value) == 'Invalid value: null used for required field: "f", schema type: INT32'


def test_struct_put_get_defaults_and_validate() -> None:
    person = Struct(person_schema()).put("name", "Ada")
    assert person.get("city") == "Paris" and person.get_without_default("city") is None
    assert person.get("age") is None
    person.validate()
    assert repr(person) == "Struct{name=Ada}"
    with pytest.raises(DataError, match="nope is not a valid field name"):
        person.get("nope")
    with pytest.raises(DataError):
        person.put("age", "old")
    with pytest.raises(DataError, match='null used for required field: "name"'):
        Struct(person_schema()).validate()


def test_struct_equality_and_nested_schema_check() -> None:
    assert Struct(person_schema()).put("name", "a") == Struct(person_schema()).put("name", "a")
    assert Struct(person_schema()).put("name", "a") != Struct(person_schema()).put("name", "b")
    outer = SchemaBuilder.struct().field("p", person_schema()).build()
    other = SchemaBuilder.struct().field("x", OPTIONAL_STRING_SCHEMA).build()
    with pytest.raises(DataError, match=r"Struct schemas do not match\."):
        Struct(outer).put("p", Struct(other))
    with pytest.raises(DataError, match="Not a struct schema"):
        Struct(INT32_SCHEMA)


def test_decimal_logical_type_bytes() -> None:
    schema = Decimal.schema(2)
    assert schema.type is Type.BYTES and schema.parameters == {"scale": "2"} and schema.version == 1
    assert Decimal.from_logical(schema, decimal.Decimal("12345.67")) == bytes.fromhex("12d687")
    assert Decimal.from_logical(schema, decimal.Decimal("-0.01")) == b"\xff"
    assert Decimal.from_logical(schema, decimal.Decimal("1.28")) == b"\x00\x80"
    assert Decimal.to_logical(schema, bytes.fromhex("12d687")) == decimal.Decimal("12345.67")
    big = decimal.Decimal("-123456789012345678901234567890.12")
    assert Decimal.to_logical(schema, Decimal.from_logical(schema, big)).as_tuple() == big.as_tuple()
    with pytest.raises(DataError, match=r"Schema has scale 2, value has scale 1\."):
        Decimal.from_logical(schema, decimal.Decimal("1.5"))


def test_date_time_timestamp_logical_types() -> None:
    assert Date.from_logical(Date.builder().build(), datetime.date(2022, 1, 8)) == 19000
    assert Date.to_logical(Date.builder().build(), 19000) == datetime.date(2022, 1, 8)
    with pytest.raises(DataError, match="should not have any time fields"):
        Date.from_logical(Date.builder().build(), datetime.datetime(2022, 1, 8, 1, tzinfo=datetime.UTC))
    assert Time.from_logical(Time.builder().build(), datetime.time(12, 34, 56, 789000)) == 45296789
    assert Time.to_logical(Time.builder().build(), 45296789) == datetime.time(12, 34, 56, 789000)
    moment = datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=datetime.UTC)
    assert Timestamp.from_logical(Timestamp.builder().build(), moment) == 1700000000123
    assert Timestamp.to_logical(Timestamp.builder().build(), 1700000000123) == moment
    assert Timestamp.from_logical(Timestamp.builder().build(), moment.replace(tzinfo=None)) == 1700000000123
