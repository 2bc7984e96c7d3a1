"""Transformation and predicate ports against the Kafka 4.3.1 jars (tests/golden/transforms/vectors.json).

Every input record is rebuilt from the envelopes in the file with our JsonConverter; every output is
written back with it and compared as JSON with what Java's converter wrote for Java's output. Errors
compare by kind (``DataException``/``ConfigException``), not by text: Java's messages name Java classes.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pyconnect.api.converters.json_converter import JsonConverter
from pyconnect.api.source import Header, SourceRecord
from pyconnect.errors import ConfigError, DataError
from pyconnect.transforms.registry import BUILTIN_PREDICATES, BUILTIN_TRANSFORMATIONS

GOLDEN = json.loads((Path(__file__).parent / "transforms" / "vectors.json").read_text())
ENVELOPE = JsonConverter()
ENVELOPE.configure({"schemas.enable": "true"}, False)
JAVA_ERRORS = {"DataException": DataError, "ConfigException": ConfigError}


def _decode(text: str | None) -> tuple[Any, Any]:
    if text is None:
        return None, None
    schema, value = ENVELOPE.to_connect_data("t", None, text.encode())
    return schema, value


def _encode(schema: Any, value: Any) -> Any:
    data = ENVELOPE.from_connect_data("t", None, schema, value)
    return None if data is None else json.loads(data)


def build(described: dict[str, Any]) -> SourceRecord:
    key_schema, key = _decode(described["key"])
    value_schema, value = _decode(described["value"])
    headers = tuple(Header(h["key"], *_decode(h["value"])) for h in described["headers"])
    return SourceRecord(
        {"p": 0},
        {"o": 1},
        described["topic"],
        described["partition"],
        key_schema,
        key,
        value_schema,
        value,
        described["timestamp"],
        headers,
    )


def describe(record: SourceRecord) -> dict[str, Any]:
    return {
        "topic": record.topic,
        "partition": record.kafka_partition,
        "timestamp": record.timestamp,
        "key": _encode(record.key_schema, record.key),
        "value": _encode(record.value_schema, record.value),
        "headers": [{"key": h.key, "value": _encode(h.schema, h.value)} for h in record.headers],
    }


def _java_described(described: dict[str, Any]) -> dict[str, Any]:
    out = dict(described)
    for part in ("key", "value"):
        out[part] = None if described[part] is None else json.loads(described[part])
    out["headers"] = [
        {"key": h["key"], "value": None if h["value"] is None else json.loads(h["value"])}
        for h in described["headers"]
    ]
    return out


@pytest.mark.parametrize("case", GOLDEN["cases"], ids=lambda c: c["id"])
def test_transformation_matches_java(case: dict[str, Any]) -> None:
    transformation = BUILTIN_TRANSFORMATIONS[case["class"]]()
    if "configure_error" in case:
        with pytest.raises(JAVA_ERRORS.get(case["configure_error"]["class"], Exception)):
            transformation.configure(case["config"])
        return
    transformation.configure(case["config"])
    record = build(case["input"])
    if "error" in case:
        with pytest.raises(JAVA_ERRORS.get(case["error"]["class"], Exception)):
            transformation.apply(record)
        return
    result = transformation.apply(record)
    if case["dropped"]:
        assert result is None
    elif "output_error" in case:
        assert result is not None
        with pytest.raises(DataError):
            describe(result)
    else:
        assert result is not None
        assert describe(result) == _java_described(case["output"])
        assert (result.source_partition, result.source_offset) == ({"p": 0}, {"o": 1})
    transformation.close()


@pytest.mark.parametrize("case", GOLDEN["predicates"], ids=lambda c: c["id"])
def test_predicate_matches_java(case: dict[str, Any]) -> None:
    predicate = BUILTIN_PREDICATES[case["class"]]()
    if "configure_error" in case:
        with pytest.raises(JAVA_ERRORS.get(case["configure_error"]["class"], Exception)):
            predicate.configure(case["config"])
        return
    predicate.configure(case["config"])
    assert predicate.test(build(case["input"])) is case["result"]


def test_every_java_plugin_is_ported() -> None:
    listing = GOLDEN["plugins"]
    assert sorted(BUILTIN_TRANSFORMATIONS) == sorted(p["class"] for p in listing["transformations"])
    assert sorted(BUILTIN_PREDICATES) == sorted(p["class"] for p in listing["predicates"])


@pytest.mark.parametrize("class_name", sorted(GOLDEN["config_defs"]))
def test_config_definition_matches_java(class_name: str) -> None:
    plugin = {**BUILTIN_TRANSFORMATIONS, **BUILTIN_PREDICATES}[class_name]()
    ours = [
        {
            "name": key.name,
            "type": key.type.value,
            "required": key.required,
            "default_value": None if not key.has_default else _java_default(key),
            "importance": key.importance.value,
            "documentation": key.documentation,
            "validator": None if key.validator is None else str(key.validator),
        }
        for key in plugin.config()
    ]
    java = [
        {
            k: row[k]
            for k in ("name", "type", "required", "default_value", "importance", "documentation", "validator")
        }
        for row in GOLDEN["config_defs"][class_name]
    ]
    assert ours == java


def _java_default(key: Any) -> Any:
    from pyconnect.config.types import convert_to_string

    return convert_to_string(key.default, key.type)
