"""The ``transforms``/``predicates`` config syntax against Kafka 4.3.1's ``ConnectorConfig.enrich`` and
``validateAll`` (tests/golden/transforms/vectors.json ``enrich``), and the chain built from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pyconnect.api.data import STRING_SCHEMA
from pyconnect.api.source import Header, SourceRecord
from pyconnect.config.info import config_key_info
from pyconnect.errors import ConnectError
from pyconnect.transforms.config import enrich, transformation_chain, validate_enriched
from pyconnect.worker.plugins import PluginRegistry, PluginType

GOLDEN = json.loads((Path(__file__).parents[2] / "golden" / "transforms" / "vectors.json").read_text())
PLUGINS = PluginRegistry.from_entry_points()
COMPARED = (
    "name", "type", "required", "default_value", "importance", "documentation", "group", "order_in_group", "width",
    "display_name", "dependents",
)  # fmt: skip


def _java_text(value: Any) -> Any:
    if isinstance(value, list):
        return "[" + ", ".join(str(v) for v in value) + "]"
    if isinstance(value, bool):
        return "true" if value else "false"
    return None if value is None else str(value)


@pytest.mark.parametrize("case", GOLDEN["enrich"], ids=lambda c: c["id"])
def test_enrich_and_validate_match_java(case: dict[str, Any]) -> None:
    props = case["props"]
    definition = enrich(PLUGINS, PLUGINS.connector_config_def(PluginType.SOURCE), props)
    ours = [
        {k: config_key_info(key)[k] for k in COMPARED}
        for key in definition
        if key.name.startswith(("transforms.", "predicates."))
    ]
    assert ours == [{k: row[k] for k in COMPARED} for row in case["keys"]]
    for key in definition:
        row = next((r for r in case["keys"] if r["name"] == key.name), None)
        if row is not None and not key.name.endswith(".plugin.version"):
            assert (None if key.validator is None else str(key.validator)) == row["validator"]
    assert list(definition.groups) == case["groups"]
    values = validate_enriched(PLUGINS, definition, props)
    for name, expected in case["values"].items():
        got = values[name]
        assert got.errors == expected["errors"], name
        assert _java_text(got.value) == expected["value"], name
        assert len(got.recommended_values) == expected["recommended"], name


def _record(topic: str, value: Any, headers: tuple[Header, ...] = ()) -> SourceRecord:
    return SourceRecord(
        {"p": 0}, {"o": 1}, topic, 0, None, None, STRING_SCHEMA if value else None, value, 0, headers
    )


def test_chain_applies_stages_in_order_with_predicates_and_negate() -> None:
    chain = transformation_chain(
        PLUGINS,
        {
            "transforms": "dropOthers,route",
            "transforms.dropOthers.type": "Filter",
            "transforms.dropOthers.predicate": "isOrders",
            "transforms.dropOthers.negate": "true",
            "transforms.route.type": "org.apache.kafka.connect.transforms.RegexRouter",
            "transforms.route.regex": "(.*)",
            "transforms.route.replacement": "copy.$1",
            "predicates": "isOrders",
            "predicates.isOrders.type": "TopicNameMatches",
            "predicates.isOrders.pattern": "orders.*",
        },
    )
    assert [s.alias for s in chain.stages] == ["dropOthers", "route"]
    kept = chain.apply(_record("orders-1", "v"))
    assert kept is not None and kept.topic == "copy.orders-1"
    assert chain.apply(_record("payments", "v")) is None
    chain.close()


def test_predicate_without_negate_applies_when_true() -> None:
    chain = transformation_chain(
        PLUGINS,
        {
            "transforms": "dropTombstones",
            "transforms.dropTombstones.type": "Filter",
            "transforms.dropTombstones.predicate": "tomb",
            "predicates": "tomb",
            "predicates.tomb.type": "org.apache.kafka.connect.transforms.predicates.RecordIsTombstone",
        },
    )
    assert chain.apply(_record("t", None)) is None
    assert chain.apply(_record("t", "v")) is not None


def test_empty_chain_is_identity() -> None:
    chain = transformation_chain(PLUGINS, {"name": "c"})
    record = _record("t", "v")
    assert not chain and chain.apply(record) is record


@pytest.mark.parametrize(
    ("props", "message"),
    [
        (
            {"transforms": "f", "transforms.f.type": "Nope"},
            "Invalid value Nope for configuration transforms.f.type",
        ),
        ({"transforms": "f"}, "Unknown configuration 'transforms.f.type'"),
        (
            {"transforms": "f", "transforms.f.type": "Filter", "transforms.f.predicate": "p"},
            "Unknown configuration 'predicates.p.type'",
        ),
        (
            {
                "transforms": "f",
                "transforms.f.type": "Filter",
                "transforms.f.predicate": "p",
                "predicates.p.type": "RecordIsTombstone",
            },
            "Unknown configuration 'predicates.p.type'",
        ),
        (
            {"transforms": "r", "transforms.r.type": "RegexRouter", "transforms.r.regex": "x"},
            'Missing required configuration "replacement"',
        ),
        ({"transforms": "x", "transforms.x.type": "TopicNameMatches"}, "transforms.x.type"),
    ],
)
def test_chain_refuses_what_a_task_cannot_run(props: dict[str, str], message: str) -> None:
    with pytest.raises(ConnectError, match=message):
        transformation_chain(PLUGINS, props)


def test_plugin_listing_and_config_for_transformations() -> None:
    listing = PLUGINS.connector_plugins(connectors_only=False)
    transformations = [p for p in listing if p["type"] == "transformation"]
    predicates = [p for p in listing if p["type"] == "predicate"]
    assert transformations == [{**p, "type": "transformation"} for p in GOLDEN["plugins"]["transformations"]]
    assert predicates == [{**p, "type": "predicate"} for p in GOLDEN["plugins"]["predicates"]]
    kinds = [p["type"] for p in listing]
    assert kinds.index("transformation") > kinds.index("source") and kinds.index("predicate") > kinds.index(
        "transformation"
    )
    rows = PLUGINS.plugin_config("RegexRouter")
    assert [r["name"] for r in rows] == ["regex", "replacement"]
    insert_field = PLUGINS.plugin_config("org.apache.kafka.connect.transforms.InsertField$Value")
    assert insert_field[0]["name"] == "topic.field"


def test_a_task_refuses_a_plugin_version_it_does_not_have() -> None:
    with pytest.raises(ConnectError, match=r"not found that matches the version range \[1.0,1.0\]"):
        transformation_chain(
            PLUGINS, {"transforms": "f", "transforms.f.type": "Filter", "transforms.f.plugin.version": "1.0"}
        )
    chain = transformation_chain(
        PLUGINS,
        {"transforms": "f", "transforms.f.type": "Filter", "transforms.f.plugin.version": "[4.0,5.0)"},
    )
    assert chain.apply(_record("t", "v")) is None
