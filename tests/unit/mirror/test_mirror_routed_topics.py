"""Where a MirrorSourceConnector's transformations route its records, and which RegexRouter replacements
can only make illegal topic names (connectors.mirror.routed_topics)."""

from __future__ import annotations

from collections.abc import Mapping

import pytest

from connectors.mirror.routed_topics import (
    RoutedTopic,
    builtin_transformation,
    common_configs,
    probe,
    replacement_literal,
    replacement_problem,
    routed_topic,
    routed_topics,
    routing_errors,
    topic_name_problem,
)
from connectors.mirror.source import MirrorSourceConnector
from pyconnect.transforms.chain import TransformationChain
from pyconnect.transforms.config import transformation_chain
from pyconnect.worker.plugins import PluginRegistry, builtin_plugins

NOW_MS = 1_700_000_000_000  # 2023-11-14 UTC


def chain(props: Mapping[str, str]) -> TransformationChain:
    return transformation_chain(PluginRegistry(builtin_plugins()), props)


RENAME = {
    "transforms": "rename",
    "transforms.rename.type": "RegexRouter",
    "transforms.rename.regex": "A\\.orders",
    "transforms.rename.replacement": "copied-orders",
}


@pytest.mark.parametrize(
    ("name", "legal"),
    [
        ("copied-orders", True),
        ("A.orders_2", True),
        ("x" * 249, True),
        ("", False),
        (".", False),
        ("..", False),
        ("x" * 250, False),
        ("copied orders", False),
        ("copied/orders", False),
    ],
)
def test_topic_names_as_kafka_validates_them(name: str, legal: bool) -> None:
    assert (topic_name_problem(name) is None) is legal


@pytest.mark.parametrize(
    ("replacement", "literal", "refers"),
    [
        ("renamed.$1", "renamed.", True),
        ("${name}-copy", "-copy", True),
        ("\\$1", "$1", False),
        ("a$12b", "ab", True),
        ("plain", "plain", False),
    ],
)
def test_the_literal_text_of_a_replacement(replacement: str, literal: str, refers: bool) -> None:
    assert replacement_literal(replacement) == (literal, refers)


@pytest.mark.parametrize(
    ("replacement", "problem"),
    [
        ("copied-orders", None),
        ("renamed.$1", None),
        ("copied orders", "illegal topic name"),
        ("$1 copy", "' '"),
        ("", "can't be empty"),
        ("..", "cannot be"),
        ("\\$x", "illegal topic name"),
    ],
)
def test_a_replacement_that_can_only_make_illegal_names(replacement: str, problem: str | None) -> None:
    found = replacement_problem(replacement)
    assert (found is None) if problem is None else (found is not None and problem in found)


def test_routing_errors_name_the_replacement_key() -> None:
    props = {
        "transforms": "ok,bad,other",
        "transforms.ok.type": "org.apache.kafka.connect.transforms.RegexRouter",
        "transforms.ok.regex": "(.*)",
        "transforms.ok.replacement": "copy.$1",
        "transforms.bad.type": "RegexRouter",
        "transforms.bad.regex": "A\\.orders",
        "transforms.bad.replacement": "copied orders",
        "transforms.other.type": "InsertHeader",
        "transforms.other.replacement": "not a router",
    }
    errors = routing_errors(props, builtin_transformation)
    assert list(errors) == ["transforms.bad.replacement"]
    assert errors["transforms.bad.replacement"].startswith(
        "Invalid value copied orders for configuration transforms.bad.replacement: "
    )
    assert routing_errors({"transforms": "x", "transforms.x.type": "Nope"}, builtin_transformation) == {}


def test_a_probe_is_what_the_task_writes_for_partition_zero() -> None:
    record = probe("orders", "A.orders", "A", NOW_MS)
    assert (record.topic, record.kafka_partition, record.timestamp) == ("A.orders", 0, NOW_MS)
    assert record.source_partition == {"cluster": "A", "partition": 0, "topic": "orders"}


def test_a_regex_router_routes_the_matching_remote_topics() -> None:
    found = routed_topics(chain(RENAME), {"orders": "A.orders", "refunds": "A.refunds"}, "A", NOW_MS)
    assert found == [RoutedTopic("copied-orders", ("orders",))]


def test_topics_routed_together_are_one_routed_topic() -> None:
    props = {**RENAME, "transforms.rename.regex": "A\\.(.*)", "transforms.rename.replacement": "all"}
    found = routed_topics(chain(props), {"orders": "A.orders", "refunds": "A.refunds"}, "A", NOW_MS)
    assert found == [RoutedTopic("all", ("orders", "refunds"))]


def test_a_route_onto_another_remote_topic_is_no_routed_topic() -> None:
    props = {**RENAME, "transforms.rename.regex": "A\\.refunds", "transforms.rename.replacement": "A.orders"}
    assert routed_topics(chain(props), {"orders": "A.orders", "refunds": "A.refunds"}, "A", NOW_MS) == []


def test_stages_that_fail_on_or_drop_the_probe_leave_the_topic_as_it_is() -> None:
    props = {
        "transforms": "field,drop,rename",
        "transforms.field.type": "org.apache.kafka.connect.transforms.ExtractField$Value",
        "transforms.field.field": "id",
        "transforms.drop.type": "Filter",
        **{k: v for k, v in RENAME.items() if k != "transforms"},
    }
    assert routed_topic(chain(props), probe("orders", "A.orders", "A", NOW_MS)) == "copied-orders"


def test_predicates_see_the_probe() -> None:
    props = {
        **RENAME,
        "transforms.rename.predicate": "marked",
        "predicates": "marked",
        "predicates.marked.type": "HasHeaderKey",
        "predicates.marked.name": "route",
    }
    assert routed_topic(chain(props), probe("orders", "A.orders", "A", NOW_MS)) == "A.orders"


def test_a_timestamp_router_routes_as_it_would_now() -> None:
    props = {
        "transforms": "day",
        "transforms.day.type": "TimestampRouter",
        "transforms.day.topic.format": "${topic}-${timestamp}",
    }
    assert routed_topic(chain(props), probe("orders", "A.orders", "A", NOW_MS)) == "A.orders-20231114"


def test_common_configs_are_those_all_carry_alike() -> None:
    assert common_configs([{"a": "1", "b": "2"}, {"a": "1", "b": "3"}, {"a": "1"}]) == {"a": "1"}
    assert common_configs([]) == {}


def test_the_connector_validates_its_routes() -> None:
    props = {
        "connector.class": "org.apache.kafka.connect.mirror.MirrorSourceConnector",
        "source.cluster.alias": "A",
        "target.cluster.alias": "B",
        **RENAME,
        "transforms.rename.replacement": "copied/orders",
    }
    values = MirrorSourceConnector().validate(props)
    assert [e.split(":")[0] for e in values["transforms.rename.replacement"].errors] == [
        "Invalid value copied/orders for configuration transforms.rename.replacement"
    ]
    assert "transforms.rename.replacement" not in MirrorSourceConnector().validate({**props, **RENAME})
