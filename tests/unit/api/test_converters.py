"""Converters against golden vectors written by the Kafka 4.3.1 jars (tests/golden/converters/).

Each ``from`` vector is rebuilt here from its id and must give the identical bytes (or Java's error
message); each ``to`` vector is decoded and compared through an envelope JsonConverter, as the
generating script did on the Java side.
"""

from __future__ import annotations

import base64
import datetime
import decimal
import json
from pathlib import Path
from typing import Any

import pytest

from pyconnect.api.converters import ByteArrayConverter, JsonConverter, SimpleHeaderConverter, StringConverter
from pyconnect.api.converters.jackson import dumps, float_text
from pyconnect.api.data import (
    BOOLEAN_SCHEMA,
    BYTES_SCHEMA,
    DATE_SCHEMA,
    FLOAT32_SCHEMA,
    FLOAT64_SCHEMA,
    INT8_SCHEMA,
    INT16_SCHEMA,
    INT32_SCHEMA,
    INT64_SCHEMA,
    OPTIONAL_INT32_SCHEMA,
    OPTIONAL_STRING_SCHEMA,
    STRING_SCHEMA,
    TIME_SCHEMA,
    TIMESTAMP_SCHEMA,
    Decimal,
    SchemaBuilder,
    Struct,
)
from pyconnect.config.info import config_key_info
from pyconnect.errors import DataError

GOLDEN = json.loads((Path(__file__).parents[2] / "golden" / "converters" / "vectors.json").read_text())
CASES = {case["id"]: case for case in GOLDEN["cases"]}
D = decimal.Decimal
UTC = datetime.UTC

INT_DEFAULT = SchemaBuilder.int32().optional().default_value(42).build()
INNER = SchemaBuilder.struct().name("Inner").field("x", FLOAT64_SCHEMA).build()
OUTER = (
    SchemaBuilder.struct()
    .name("com.example.Outer")
    .version(2)
    .doc("outer doc")
    .field("id", INT64_SCHEMA)
    .field("name", OPTIONAL_STRING_SCHEMA)
    .field("flag", SchemaBuilder.bool().default_value(True).build())
    .field("inner", INNER)
    .field("tags", SchemaBuilder.array(STRING_SCHEMA).optional().build())
    .field("amount", Decimal.builder(2).optional().build())
    .build()
)
OUTER_VALUE = (
    Struct(OUTER)
    .put("id", 7)
    .put("inner", Struct(INNER).put("x", 2.5))
    .put("tags", ["p", "q"])
    .put("amount", D("3.50"))
)
HS = SchemaBuilder.struct().field("a", INT32_SCHEMA).field("b", OPTIONAL_STRING_SCHEMA).build()
JSON_FROM: dict[str, tuple[Any, Any]] = {
    "json.null": (None, None),
    "json.int8": (INT8_SCHEMA, -12),
    "json.int16": (INT16_SCHEMA, 1234),
    "json.int32": (INT32_SCHEMA, -5),
    "json.int64": (INT64_SCHEMA, 2**63 - 1),
    "json.float32.1_5": (FLOAT32_SCHEMA, 1.5),
    "json.float32.0_1": (FLOAT32_SCHEMA, 0.1),
    "json.float32.1e10": (FLOAT32_SCHEMA, 1e10),
    "json.float32.max": (FLOAT32_SCHEMA, 3.4028234663852886e38),
    "json.float32.small": (FLOAT32_SCHEMA, 1.25e-5),
    "json.float64.0_1": (FLOAT64_SCHEMA, 0.1),
    "json.float64.1e20": (FLOAT64_SCHEMA, 1e20),
    "json.float64.1e7": (FLOAT64_SCHEMA, 1e7),
    "json.float64.1e-5": (FLOAT64_SCHEMA, 1e-5),
    "json.float64.neg_zero": (FLOAT64_SCHEMA, -0.0),
    "json.float64.frac": (FLOAT64_SCHEMA, 123456789.125),
    "json.float64.nan": (FLOAT64_SCHEMA, float("nan")),
    "json.boolean": (BOOLEAN_SCHEMA, True),
    "json.string": (STRING_SCHEMA, 'h\u00e9llo "q" \\ / \n\t\b\f\r\u0001\u001f\u007f\u2028\U0001f600'),
    "json.bytes": (BYTES_SCHEMA, bytes([0, 1, 2, 255, 254])),
    "json.optional_null": (OPTIONAL_INT32_SCHEMA, None),
    "json.required_null": (INT32_SCHEMA, None),
    "json.wrong_type": (INT32_SCHEMA, "x"),
    "json.default.replace": (INT_DEFAULT, None),
    "json.default.keep_null": (INT_DEFAULT, None),
    "json.primitive_metadata": (
        SchemaBuilder.string()
        .name("com.example.Name")
        .version(3)
        .doc("a doc")
        .parameter("p1", "v1")
        .parameter("a0", "v0")
        .build(),
        "x",
    ),
    "json.decimal.base64": (Decimal.schema(2), D("12345.67")),
    "json.decimal.numeric": (Decimal.schema(2), D("12345.67")),
    "json.decimal.negative": (Decimal.schema(2), D("-0.01")),
    "json.decimal.negative.numeric": (Decimal.schema(2), D("-0.01")),
    "json.decimal.big": (Decimal.schema(5), D("-123456789012345678901234567890.12345")),
    "json.decimal.negscale.numeric": (Decimal.schema(-3), D("1E+3")),
    "json.decimal.zero": (Decimal.schema(0), D("0")),
    "json.decimal.bad_scale": (Decimal.schema(3), D("1.5")),
    "json.date": (DATE_SCHEMA, datetime.date(2022, 1, 8)),
    "json.time": (TIME_SCHEMA, datetime.time(12, 34, 56, 789000)),
    "json.timestamp": (TIMESTAMP_SCHEMA, datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)),
    "json.array": (SchemaBuilder.array(INT32_SCHEMA).build(), [1, 2, 3]),
    "json.array.optional": (SchemaBuilder.array(OPTIONAL_STRING_SCHEMA).build(), ["a", None, "c"]),
    "json.map.string_keys": (SchemaBuilder.map(STRING_SCHEMA, INT64_SCHEMA).build(), {"b": 2, "a": 1}),
    "json.map.int_keys": (SchemaBuilder.map(INT32_SCHEMA, STRING_SCHEMA).build(), {3: "three", 1: "one"}),
    "json.struct": (OUTER, OUTER_VALUE),
    "json.schemaless.map": (
        None,
        {"s": "v", "l": 5, "d": 2.5, "b": False, "n": None, "list": [1, "two", 3.0], "bytes": b"hi"},
    ),
    "json.schemaless.mixed_keys": (None, {1: "a", "k": 2}),
    "json.schemaless.list": (None, [1, None, "x"]),
    "json.schemaless.string": (None, "plain"),
}
HEADER_FROM: dict[str, tuple[Any, Any]] = {
    "string": (STRING_SCHEMA, 'plain "text"'),
    "int8": (INT8_SCHEMA, 5),
    "int64": (INT64_SCHEMA, -9000000000),
    "float32": (FLOAT32_SCHEMA, 2.5),
    "float64": (FLOAT64_SCHEMA, 0.1),
    "boolean": (BOOLEAN_SCHEMA, False),
    "bytes": (BYTES_SCHEMA, b"hi"),
    "null": (OPTIONAL_STRING_SCHEMA, None),
    "list": (SchemaBuilder.array(STRING_SCHEMA).build(), ["a", 'b"c', "d\\e"]),
    "map": (SchemaBuilder.map(STRING_SCHEMA, INT32_SCHEMA).build(), {"k1": 1, "k2": 2}),
    "struct": (HS, Struct(HS).put("a", 1).put("b", "x")),
    "decimal": (Decimal.schema(2), D("1.50")),
    "date": (DATE_SCHEMA, datetime.date(2022, 1, 8)),
    "time": (TIME_SCHEMA, datetime.time(12, 34, 56, 789000)),
    "timestamp": (TIMESTAMP_SCHEMA, datetime.datetime(2023, 11, 14, 22, 13, 20, 123000, tzinfo=UTC)),
}
HEADER_TO_UNENCODABLE = {
    "header.to.{}": {},
    'header.to.["2026-11-22","x"]': [datetime.date(2026, 11, 22), "x"],
}


def configured_json(config: dict[str, str]) -> JsonConverter:
    converter = JsonConverter()
    converter.configure(config, False)
    return converter


def expected_bytes(case: dict[str, Any]) -> bytes | None:
    return None if case["out_b64"] is None else base64.b64decode(case["out_b64"])


def assert_from(case: dict[str, Any], convert: Any) -> None:
    if "error" in case:
        with pytest.raises(DataError) as info:
            convert()
        if case["id"].startswith("json.wrong_type"):
            assert str(info.value).startswith("Invalid type for INT32: ")
        else:
            assert str(info.value) == case["error"]
    else:
        assert convert() == expected_bytes(case)


def test_golden_file_is_from_the_pinned_jars() -> None:
    assert GOLDEN["facts"]["kafka.version"] == "4.3.1"
    assert len(CASES) == len(GOLDEN["cases"])


@pytest.mark.parametrize(
    "case_id", sorted(k for k in CASES if k.startswith("json.") and not k.startswith("json.to."))
)
def test_json_from_connect_matches_java(case_id: str) -> None:
    case = CASES[case_id]
    schema, value = JSON_FROM[case_id.rsplit(".", 1)[0]]
    converter = configured_json(case["config"])
    assert_from(case, lambda: converter.from_connect_data("t", None, schema, value))


def envelope_text(schema: Any, value: Any) -> str | None:
    out = configured_json({"schemas.enable": "true"}).from_connect_data("t", None, schema, value)
    return None if out is None else out.decode()


def canonical(text: str) -> Any:
    """The envelope as Python data; map entries written as pairs are sorted (Java iterates a HashMap)."""
    parsed = json.loads(text)
    schema = parsed.get("schema") or {}
    if schema.get("type") == "map" and isinstance(parsed.get("payload"), list):
        parsed["payload"] = sorted(parsed["payload"])
    return parsed


@pytest.mark.parametrize("case_id", sorted(k for k in CASES if k.startswith("json.to.")))
def test_json_to_connect_matches_java(case_id: str) -> None:
    case = CASES[case_id]
    converter = configured_json(case["config"])
    data = None if case["in_b64"] is None else base64.b64decode(case["in_b64"])
    if "error" in case:
        with pytest.raises(DataError) as info:
            converter.to_connect_data("t", None, data)
        assert str(info.value) == case["error"]
        return
    result = converter.to_connect_data("t", None, data)
    assert (None if result.schema is None else str(result.schema.type)) == case["schema_type"]
    assert (None if result.schema is None else result.schema.name) == case["schema_name"]
    decoded = envelope_text(result.schema, result.value)
    if case["decoded"] is None:
        assert decoded is None
    elif case_id == "json.to.env.struct.keep_null":
        assert result.value.get_without_default("flag") is None
    else:
        assert decoded is not None and canonical(decoded) == canonical(case["decoded"])


@pytest.mark.parametrize("case_id", sorted(k for k in CASES if k.startswith("string.")))
def test_string_converter_matches_java(case_id: str) -> None:
    case = CASES[case_id]
    converter = StringConverter()
    converter.configure(
        case["config"],
        case_id in ("string.from.int", "string.from.null", "string.to.null", "string.to.malformed"),
    )
    if case["op"] == "from":
        schema, value = {
            "string.from.int": (INT32_SCHEMA, 12),
            "string.from.null": (OPTIONAL_STRING_SCHEMA, None),
        }.get(case_id, (STRING_SCHEMA, "h\u00e9\u20ac!"))
        assert_from(case, lambda: converter.from_connect_data("t", None, schema, value))
    else:
        data = None if case["in_b64"] is None else base64.b64decode(case["in_b64"])
        result = converter.to_connect_data("t", None, data)
        assert result.schema == OPTIONAL_STRING_SCHEMA
        assert result.value == case["value_string"]


@pytest.mark.parametrize("case_id", sorted(k for k in CASES if k.startswith("bytearray.")))
def test_byte_array_converter_matches_java(case_id: str) -> None:
    case = CASES[case_id]
    converter = ByteArrayConverter()
    if case["op"] == "to":
        result = converter.to_connect_data("t", None, base64.b64decode(case["in_b64"]))
        assert result.value == base64.b64decode(case["value_string"])
        assert str(result.schema.type) == case["schema_type"] and result.schema.optional
        return
    schema, value = {
        "bytearray.from": (BYTES_SCHEMA, b"\x01\x02\x03"),
        "bytearray.from.null": (None, None),
        "bytearray.from.wrong_schema": (STRING_SCHEMA, b"\x01"),
        "bytearray.from.wrong_value": (None, "x"),
    }[case_id]
    if case_id == "bytearray.from.wrong_value":
        with pytest.raises(DataError, match=r"^ByteArrayConverter is not compatible with objects of type "):
            converter.from_connect_data("t", None, schema, value)
    else:
        assert_from(case, lambda: converter.from_connect_data("t", None, schema, value))


@pytest.mark.parametrize("name", sorted(HEADER_FROM))
def test_simple_header_converter_writes_like_java(name: str) -> None:
    case = CASES[f"header.from.{name}"]
    schema, value = HEADER_FROM[name]
    assert SimpleHeaderConverter().from_connect_header("t", "h", schema, value) == expected_bytes(case)


@pytest.mark.parametrize("case_id", sorted(k for k in CASES if k.startswith("header.to.")))
def test_simple_header_converter_reads_like_java(case_id: str) -> None:
    case = CASES[case_id]
    data = None if case["in_b64"] is None else base64.b64decode(case["in_b64"])
    result = SimpleHeaderConverter().to_connect_header("t", "h", data)
    if case.get("returned_null"):
        assert result is None
        return
    assert result is not None
    assert (None if result.schema is None else str(result.schema.type)) == case["schema_type"]
    assert (None if result.schema is None else result.schema.name) == case["schema_name"]
    if case_id in HEADER_TO_UNENCODABLE:
        assert result.value == HEADER_TO_UNENCODABLE[case_id]
        return
    decoded = envelope_text(result.schema, result.value)
    assert (None if decoded is None else canonical(decoded)) == (
        None if case["decoded"] is None else canonical(case["decoded"])
    )


@pytest.mark.parametrize(
    "plugin", ["JsonConverter", "StringConverter", "ByteArrayConverter", "SimpleHeaderConverter"]
)
def test_config_definitions_match_java(plugin: str) -> None:
    converter = {
        "JsonConverter": JsonConverter,
        "StringConverter": StringConverter,
        "ByteArrayConverter": ByteArrayConverter,
        "SimpleHeaderConverter": SimpleHeaderConverter,
    }[plugin]()
    ours = [config_key_info(key) for key in converter.config()]
    java = [d for d in GOLDEN["config_defs"] if d["plugin"] == plugin]
    assert [k["name"] for k in ours] == [d["name"] for d in java]
    for mine, theirs in zip(ours, java, strict=True):
        assert mine["type"] == theirs["type"]
        assert mine["default_value"] == (None if theirs["default"] == "<required>" else theirs["default"])
        assert (mine["importance"], mine["documentation"], mine["group"]) == (
            theirs["importance"],
            theirs["documentation"],
            theirs["group"],
        )
        assert (mine["order_in_group"], mine["width"], mine["display_name"]) == (
            theirs["order_in_group"],
            theirs["width"],
            theirs["display_name"],
        )


def test_json_schema_cache_is_bounded_and_reused() -> None:
    converter = configured_json({"schemas.cache.size": "2"})
    schemas = [SchemaBuilder.string().name(f"n{i}").build() for i in range(3)]
    first = converter.as_json_schema(schemas[0])
    assert converter.as_json_schema(schemas[0]) is first
    for schema in schemas[1:]:
        converter.as_json_schema(schema)
    assert converter.as_json_schema(schemas[0]) is not first


def test_batch_forms_equal_per_record_results() -> None:
    values = ["a", "\u00e9", "", "x\u20acy"]
    string = StringConverter()
    string.configure({}, False)
    assert string.from_connect_batch("t", STRING_SCHEMA, values) == [v.encode() for v in values]
    assert string.from_connect_batch("t", None, ["a\x00b", "c"]) == [b"a\x00b", b"c"]
    assert string.from_connect_batch("t", None, [1, None, True]) == [b"1", None, b"true"]
    assert string.from_connect_batch("t", None, ["a\ud800b"]) == [b"a?b"]
    raw = ByteArrayConverter()
    batch = [b"a", None, b"c"]
    assert raw.from_connect_batch("t", BYTES_SCHEMA, batch) == batch
    assert raw.from_connect_batch("t", None, [bytearray(b"x"), memoryview(b"y")]) == [b"x", b"y"]
    with pytest.raises(DataError, match="Invalid schema type for ByteArrayConverter: STRING"):
        raw.from_connect_batch("t", STRING_SCHEMA, batch)
    json_converter = configured_json({"schemas.enable": "false"})
    assert json_converter.from_connect_batch("t", INT64_SCHEMA, [1, 2]) == [b"1", b"2"]


def test_jackson_text_rules() -> None:
    assert dumps({"k": "\x1f\U0001f600\\u001f"}) == b'{"k":"\\u001F\\uD83D\\uDE00\\\\u001f"}'
    assert [float_text(v) for v in (1e7, 1e-3, 9.999999e-4, 123.456)] == [
        "1.0E7",
        "0.001",
        "9.999999E-4",
        "123.456",
    ]


def test_verifiable_offset_bytes_match_java() -> None:
    converter = configured_json({"schemas.enable": "false"})
    facts = GOLDEN["facts"]
    assert (
        converter.from_connect_data("t", None, None, ["vs", {"id": 0}]).decode()
        == facts["verifiable.offset_key"]
    )
    assert (
        converter.from_connect_data("t", None, None, {"seqno": 5}).decode()
        == facts["verifiable.offset_value"]
    )
