"""Default topic/group/config-property filters against Kafka 4.3.1 decisions (golden) and real MM2 patterns."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connectors.mirror.filters import (
    ConfigPropertyFilter,
    DefaultConfigPropertyFilter,
    DefaultGroupFilter,
    DefaultTopicFilter,
    GroupFilter,
    TopicFilter,
    config_property_filter,
    group_filter,
    topic_filter,
)
from pyconnect.errors import ConfigError

GOLDEN = json.loads((Path(__file__).parents[2] / "golden" / "mirror_policy" / "vectors.json").read_text())
_CLASSES: dict[str, tuple[type, str]] = {
    "topic": (DefaultTopicFilter, "should_replicate_topic"),
    "group": (DefaultGroupFilter, "should_replicate_group"),
    "config_property": (DefaultConfigPropertyFilter, "should_replicate_config_property"),
}


@pytest.mark.parametrize(
    "case", GOLDEN["filters"], ids=lambda c: f"{c['filter']}-{json.dumps(c['config'], sort_keys=True)}"
)
def test_decisions_match_java(case: dict[str, Any]) -> None:
    cls, method = _CLASSES[case["filter"]]
    if "error" in case:
        assert "PatternSyntaxException" in case["error"]
        if "*" in case["config"].values():
            return  # our one deliberate difference: see test_a_lone_star_reads_as_every_name
        with pytest.raises(ConfigError):
            cls(case["config"])
        return
    instance = cls(case["config"])
    got = {name: getattr(instance, method)(name) for name in case["decisions"]}
    assert got == case["decisions"]
    if "source_default" in case:
        assert instance.should_replicate_source_default("retention.ms") is case["source_default"]


def test_java_defaults() -> None:
    topics = DefaultTopicFilter()
    assert topics.should_replicate_topic("orders")
    assert not topics.should_replicate_topic("__consumer_offsets")
    assert not topics.should_replicate_topic("mm2-offset-syncs.B.internal")
    assert not topics.should_replicate_topic("A.orders.replica")
    # 4.3.1 narrowed the default exclude to mm2.*\.internal: plain *.internal topics now pass the filter.
    assert topics.should_replicate_topic("foo.internal")
    assert topics.should_replicate_topic("connect-offsets")
    groups = DefaultGroupFilter()
    assert groups.should_replicate_group("app")
    assert not groups.should_replicate_group("console-consumer-42")
    assert not groups.should_replicate_group("connect-mm2")
    props = DefaultConfigPropertyFilter()
    assert not props.should_replicate_config_property("min.insync.replicas")
    assert not props.should_replicate_config_property("log.message.timestamp.after.max.ms")
    assert props.should_replicate_config_property("retention.ms")
    assert not props.should_replicate_source_default("retention.ms")


@pytest.mark.parametrize(
    ("config", "topic", "expected"),
    [
        ({"topics": ".*"}, "payments", True),
        ({"topics": "orders\\..*"}, "orders.eu", True),
        ({"topics": "orders\\..*"}, "orders", False),
        ({"topics": "orders"}, "orders2", False),
        ({"topics": ".*", "topics.exclude": "__.*"}, "__consumer_offsets", False),
        ({"topics": ".*", "topics.exclude": ".*[\\-\\.]internal"}, "foo-internal", False),
        ({"topics": ".*", "topics.exclude": ".*[\\-\\.]internal"}, "foo.internal", False),
        ({"topics": ".*", "topics.exclude": ".*\\.replica"}, "x.replica", False),
        ({"topics": "__consumer_offsets", "topics.exclude": ""}, "__consumer_offsets", True),
        ({"topics": ""}, "anything", False),
        ({"topics": " orders , payments "}, "payments", True),
        ({"topics": "(?i)ORDERS, payments"}, "PAYMENTS", True),
        ({"topics": "orders, (?i)PAYMENTS"}, "ORDERS", False),
    ],
)
def test_real_world_topic_patterns(config: dict[str, str], topic: str, expected: bool) -> None:
    assert DefaultTopicFilter(config).should_replicate_topic(topic) is expected


def test_comma_inside_regex_is_split_like_java() -> None:
    with pytest.raises(ConfigError, match=r"a\{1\|3\} for configuration topics"):
        DefaultTopicFilter({"topics": "a{1,3}"})


def test_empty_items_are_rejected() -> None:
    with pytest.raises(ConfigError, match="must not be empty"):
        DefaultTopicFilter({"topics": "orders,,payments"})


def test_a_lone_star_reads_as_every_name(caplog: pytest.LogCaptureFixture) -> None:
    """Java fails on ``groups = *`` (a dangling ``*``); we read that item as ``.*`` and warn."""
    groups = DefaultGroupFilter({"groups": "*"})
    assert groups.should_replicate_group("app") and not groups.should_replicate_group("connect-x")
    assert "reading it as '.*'" in caplog.text
    topics = DefaultTopicFilter({"topics": "orders, *"})
    assert topics.should_replicate_topic("anything") and not topics.should_replicate_topic(
        "__consumer_offsets"
    )
    with pytest.raises(ConfigError, match=r"groups.*Dangling meta character"):
        DefaultGroupFilter({"groups": "*app"})


def test_untranslatable_pattern_names_key_and_pattern() -> None:
    with pytest.raises(ConfigError, match=r"Invalid value \\p\{IsLatin\}\+ for configuration topics.exclude"):
        DefaultTopicFilter({"topics.exclude": "\\p{IsLatin}+"})


def test_blacklist_aliases_are_gone() -> None:
    assert DefaultTopicFilter({"topics.blacklist": "orders"}).should_replicate_topic("orders")


def test_factories_accept_java_and_simple_names() -> None:
    config = {
        "topics": "orders",
        "topic.filter.class": "org.apache.kafka.connect.mirror.DefaultTopicFilter",
        "group.filter.class": "DefaultGroupFilter",
        "config.property.filter.class": " org.apache.kafka.connect.mirror.DefaultConfigPropertyFilter ",
        "use.defaults.from": "source",
    }
    topics = topic_filter(config)
    assert isinstance(topics, TopicFilter) and topics.should_replicate_topic("orders")
    groups = group_filter(config)
    assert isinstance(groups, GroupFilter) and groups.should_replicate_group("g")
    props = config_property_filter(config)
    assert isinstance(props, ConfigPropertyFilter) and props.should_replicate_source_default("x")
    assert isinstance(topic_filter({}), DefaultTopicFilter)


def test_factory_rejects_unknown_class() -> None:
    with pytest.raises(ConfigError, match=r"group\.filter\.class"):
        group_filter({"group.filter.class": "com.example.Mine"})
