"""ReplicationPolicy ports against the Kafka 4.3.1 jars (tests/golden/mirror_policy/vectors.json)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from connectors.mirror.policy import (
    DefaultReplicationPolicy,
    IdentityReplicationPolicy,
    ReplicationPolicy,
    java_split,
    replication_policy,
)
from pyconnect.errors import ConfigError

GOLDEN = json.loads((Path(__file__).parents[2] / "golden" / "mirror_policy" / "vectors.json").read_text())


def _policy(case: dict[str, Any]) -> DefaultReplicationPolicy:
    cls = DefaultReplicationPolicy if case["policy"] == "default" else IdentityReplicationPolicy
    return cls(case["config"])


@pytest.mark.parametrize(
    "case", GOLDEN["policy"], ids=lambda c: f"{c['policy']}-{json.dumps(c['config'], sort_keys=True)}"
)
def test_every_method_matches_java(case: dict[str, Any]) -> None:
    policy = _policy(case)
    assert policy.heartbeats_topic() == case["heartbeats_topic"]
    for alias, expected in case["aliases"].items():
        assert policy.offset_syncs_topic(alias) == expected["offset_syncs_topic"]
        assert policy.checkpoints_topic(alias) == expected["checkpoints_topic"]
        for topic, remote in expected["format_remote_topic"].items():
            assert policy.format_remote_topic(alias, topic) == remote
    for row in case["topics"]:
        name = row["topic"]
        assert {
            "topic": name,
            "topic_source": policy.topic_source(name),
            "upstream_topic": policy.upstream_topic(name),
            "original_topic": policy.original_topic(name),
            "is_heartbeats_topic": policy.is_heartbeats_topic(name),
            "is_checkpoints_topic": policy.is_checkpoints_topic(name),
            "is_mm2_internal_topic": policy.is_mm2_internal_topic(name),
            "is_internal_topic": policy.is_internal_topic(name),
        } == row


def test_golden_covers_the_tricky_cases() -> None:
    configs = [c["config"] for c in GOLDEN["policy"]]
    assert {"replication.policy.separator": ""} in configs
    assert {
        "replication.policy.separator": "__",
        "replication.policy.internal.topic.separator.enabled": "false",
    } in configs
    assert len(GOLDEN["policy"][0]["topics"]) >= 70


@pytest.mark.parametrize(
    ("topic", "source", "upstream", "original", "heartbeats"),
    [
        ("orders", None, None, "orders", False),
        ("A.orders", "A", "orders", "orders", False),
        ("B.A.orders", "B", "A.orders", "orders", False),
        ("orders.", None, None, "orders.", False),
        (".hidden", "", "hidden", "hidden", False),
        ("A..orders", "A", ".orders", "orders", False),
        ("heartbeats", None, None, "heartbeats", True),
        ("B.A.heartbeats", "B", "A.heartbeats", "heartbeats", True),
        ("A.checkpoints.internal", "A", "checkpoints.internal", "internal", False),
        ("..", None, None, "..", False),
    ],
)
def test_split_table(
    topic: str, source: str | None, upstream: str | None, original: str, heartbeats: bool
) -> None:
    policy = DefaultReplicationPolicy()
    assert policy.topic_source(topic) == source
    assert policy.upstream_topic(topic) == upstream
    assert policy.original_topic(topic) == original
    assert policy.is_heartbeats_topic(topic) is heartbeats


def test_internal_names_by_separator() -> None:
    dot = DefaultReplicationPolicy()
    assert (dot.offset_syncs_topic("B"), dot.checkpoints_topic("A")) == (
        "mm2-offset-syncs.B.internal",
        "A.checkpoints.internal",
    )
    under = DefaultReplicationPolicy({"replication.policy.separator": "_"})
    assert (
        under.offset_syncs_topic("B"),
        under.checkpoints_topic("A"),
        under.format_remote_topic("A", "orders"),
    ) == (
        "mm2-offset-syncs_B_internal",
        "A_checkpoints_internal",
        "A_orders",
    )
    legacy = DefaultReplicationPolicy(
        {"replication.policy.separator": "__", "replication.policy.internal.topic.separator.enabled": "FALSE"}
    )
    assert (
        legacy.offset_syncs_topic("B"),
        legacy.checkpoints_topic("A"),
        legacy.format_remote_topic("A", "o"),
    ) == (
        "mm2-offset-syncs.B.internal",
        "A.checkpoints.internal",
        "A__o",
    )
    assert under.heartbeats_topic() == legacy.heartbeats_topic() == "heartbeats"


def test_internal_flag_only_read_with_an_explicit_separator() -> None:
    policy = DefaultReplicationPolicy({"replication.policy.internal.topic.separator.enabled": "false"})
    assert policy.internal_topic_separator_enabled is True


def test_kip_1074_user_topics_with_internal_suffix_are_not_internal() -> None:
    policy = DefaultReplicationPolicy()
    assert not policy.is_internal_topic("foo.internal")
    assert not policy.is_internal_topic("foo-internal")
    assert policy.is_internal_topic("mm2-configs.A.internal")
    assert policy.is_internal_topic("__consumer_offsets")
    assert policy.is_internal_topic(".hidden")
    assert policy.is_mm2_internal_topic("B.A.checkpoints.internal")


def test_java_split_semantics() -> None:
    assert java_split("a.b.", ".") == ["a", "b"]
    assert java_split(".a", ".") == ["", "a"]
    assert java_split("...", ".") == []
    assert java_split("", ".") == [""]
    assert java_split("abc", "") == ["a", "b", "c"]
    assert java_split("", "") == [""]


def test_identity_policy() -> None:
    bare = IdentityReplicationPolicy()
    assert bare.format_remote_topic("A", "orders") == "orders"
    assert bare.topic_source("orders") is None
    assert bare.upstream_topic("orders") == "orders"
    assert bare.original_topic("orders") == "orders"
    assert bare.format_remote_topic("A", "heartbeats") == "A.heartbeats"
    assert bare.format_remote_topic("A", "myheartbeats") == "A.myheartbeats"
    with_alias = IdentityReplicationPolicy({"source.cluster.alias": "A"})
    assert with_alias.topic_source("orders") == "A"
    assert with_alias.topic_source("B.heartbeats") == "B"


@pytest.mark.parametrize(
    ("name", "cls"),
    [
        (None, DefaultReplicationPolicy),
        ("org.apache.kafka.connect.mirror.DefaultReplicationPolicy", DefaultReplicationPolicy),
        ("DefaultReplicationPolicy", DefaultReplicationPolicy),
        (" org.apache.kafka.connect.mirror.IdentityReplicationPolicy ", IdentityReplicationPolicy),
        ("IdentityReplicationPolicy", IdentityReplicationPolicy),
    ],
)
def test_factory(name: str | None, cls: type) -> None:
    config = {"replication.policy.separator": "_"}
    if name is not None:
        config["replication.policy.class"] = name
    policy = replication_policy(config)
    assert type(policy) is cls
    assert isinstance(policy, ReplicationPolicy)
    assert policy.format_remote_topic("A", "heartbeats") == "A_heartbeats"


def test_factory_rejects_unknown_class() -> None:
    with pytest.raises(ConfigError, match=r"replication\.policy\.class.*com\.example\.Custom"):
        replication_policy({"replication.policy.class": "com.example.Custom"})
