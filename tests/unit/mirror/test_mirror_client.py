"""MirrorClient / RemoteClusterUtils logic without I/O, against the Java 4.3.1 client.

``tests/golden/mirror_checkpoint/client_vectors.json`` holds ``MirrorClient``'s per-topic helpers
(``countHopsForTopic``, ``allSources``, ``isRemoteTopic``, ...) as the jar computes them for four policy
configurations (``generate_client.jsh``); ``tests/golden/mm2_records.json`` the checkpoints a Java
MirrorMaker 2 wrote.
"""

from __future__ import annotations

import base64
import json
from functools import cache
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from connectors.mirror.checkpoint_records import Checkpoint
from connectors.mirror.offsets.remote_cluster_utils import (
    OffsetAndMetadata,
    PolicyLike,
    checkpoint_topics,
    checkpoints_topic,
    count_hops_for_topic,
    heartbeat_topics,
    remote_consumer_offsets,
    remote_topics,
    replication_hops,
    translate_offsets,
    upstream_clusters,
)
from connectors.mirror.policy import DefaultReplicationPolicy, IdentityReplicationPolicy
from connectors.mirror.records import TopicPartition

GOLDEN = Path(__file__).resolve().parents[2] / "golden"


@cache
def client_vectors() -> dict[str, Any]:
    return json.loads((GOLDEN / "mirror_checkpoint" / "client_vectors.json").read_text())


@cache
def mm2() -> dict[str, Any]:
    return json.loads((GOLDEN / "mm2_records.json").read_text())


def make_policy(case: dict[str, Any]) -> PolicyLike:
    cls = IdentityReplicationPolicy if case["name"].startswith("identity") else DefaultReplicationPolicy
    return cls(case["config"])


@pytest.mark.parametrize("case", client_vectors()["policies"], ids=lambda c: c["name"])
def test_per_topic_helpers_match_java(case: dict[str, Any]) -> None:
    policy = make_policy(case)
    aliases = client_vectors()["aliases"]
    for row in case["topics"]:
        topic = row["topic"]
        assert [count_hops_for_topic(topic, a, policy) for a in aliases] == row["hops"], topic
        assert (topic in remote_topics([topic], policy=policy)) is row["remote"], topic
        assert (topic in heartbeat_topics([topic], policy)) is row["heartbeat"], topic
        assert (topic in checkpoint_topics([topic], policy)) is row["checkpoint"], topic
        if row["heartbeat"]:
            assert upstream_clusters([topic], policy) == set(row["all_sources"]), topic


@pytest.mark.parametrize("case", client_vectors()["policies"], ids=lambda c: c["name"])
def test_cluster_level_answers_fold_the_java_per_topic_answers(case: dict[str, Any]) -> None:
    policy = make_policy(case)
    rows = case["topics"]
    topics = [r["topic"] for r in rows]
    for i, alias in enumerate(client_vectors()["aliases"]):
        hops = [r["hops"][i] for r in rows if r["heartbeat"] and r["hops"][i] != -1]
        assert replication_hops(topics, alias, policy) == (min(hops) if hops else -1)
    assert upstream_clusters(topics, policy) == {s for r in rows if r["heartbeat"] for s in r["all_sources"]}
    assert remote_topics(topics, policy=policy) == {r["topic"] for r in rows if r["remote"]}
    assert remote_topics(topics, "A", policy) == {
        r["topic"] for r in rows if r["remote"] and r["topic_source"] == "A"
    }


def test_spec_examples_with_the_default_separator() -> None:
    topics = [
        "heartbeats",
        "B.A.heartbeats",
        "B.orders",
        "B.checkpoints.internal",
        "orders",
        "__consumer_offsets",
    ]
    assert replication_hops(topics, "B") == 1
    assert replication_hops(topics, "A") == 2
    assert replication_hops(topics, "Z") == -1
    assert replication_hops(["heartbeats"], "A") == -1
    assert upstream_clusters(topics) == {"A", "B"}
    assert heartbeat_topics(topics) == {"heartbeats", "B.A.heartbeats"}
    assert checkpoint_topics(topics) == {"B.checkpoints.internal"}
    assert remote_topics(topics) == {"B.A.heartbeats", "B.orders"}
    assert remote_topics(topics, "B") == {"B.A.heartbeats", "B.orders"}
    assert remote_topics(topics, "A") == set()
    assert checkpoints_topic("A") == "A.checkpoints.internal"
    assert checkpoints_topic("A", separator="_") == "A_checkpoints_internal"
    assert replication_hops(["B_A_heartbeats", "heartbeats"], "A", separator="_") == 2


class CyclicPolicy:
    """A policy that cannot prevent cycles: every topic comes from ``X`` and upstream is itself."""

    def topic_source(self, topic: str) -> str | None:
        return "X"

    def upstream_topic(self, topic: str) -> str | None:
        return topic

    def is_heartbeats_topic(self, topic: str) -> bool:
        return True

    def is_checkpoints_topic(self, topic: str) -> bool:
        return False

    def is_internal_topic(self, topic: str) -> bool:
        return False

    def checkpoints_topic(self, cluster_alias: str) -> str:
        return f"{cluster_alias}.checkpoints.internal"


def test_cycles_end_the_walk() -> None:
    policy = CyclicPolicy()
    assert replication_hops(["t"], "Y", policy) == -1
    assert replication_hops(["t"], "X", policy) == 1
    assert upstream_clusters(["t"], policy) == {"X"}


# -- checkpoints ------------------------------------------------------------------------------------------


def checkpoint_records() -> list[tuple[bytes | None, bytes | None]]:
    def raw(blob: dict[str, Any] | None) -> bytes | None:
        return None if blob is None else base64.b64decode(blob["base64"])

    return [(raw(r["key"]), raw(r["value"])) for r in mm2()["records"] if r["role"] == "checkpoints"]


def test_translate_offsets_of_the_java_checkpoints() -> None:
    records = checkpoint_records()
    latest: dict[TopicPartition, OffsetAndMetadata] = {}
    for key, value in records:
        c = Checkpoint.from_record(key, value)
        latest[c.topic_partition] = OffsetAndMetadata(c.downstream_offset, c.metadata)
    offsets = translate_offsets(records, "golden-group", "A")
    assert offsets == latest
    assert set(offsets) == {TopicPartition("A.golden-orders", 0), TopicPartition("A.golden-orders", 1)}
    assert offsets[TopicPartition("A.golden-orders", 0)].metadata == "golden-meta"
    synced = mm2()["synced_group_offsets_on_B"]
    for tp, om in offsets.items():
        assert synced[str(tp)] <= om.offset  # Java's group sync wrote checkpoints; the latest is not older
    assert translate_offsets(records, "other-group", "A") == {}


def test_remote_consumer_offsets_latest_wins_and_skips_garbage() -> None:
    first = Checkpoint("g", "A.t", 0, 10, 9, "m1")
    second = Checkpoint("g", "A.t", 0, 20, 19, "m2")
    other = Checkpoint("h", "A.t", 0, 30, 29)
    records: list[Any] = [
        (first.record_key(), first.record_value()),
        (None, None),
        SimpleNamespace(key=other.record_key(), value=other.record_value()),
        (second.record_key(), b"\x00"),
        second,
    ]
    result = remote_consumer_offsets(records, "g")
    assert result.offsets == {TopicPartition("A.t", 0): OffsetAndMetadata(19, "m2")}
    assert (result.records, result.skipped) == (5, 2)


def test_translate_offsets_reads_only_partition_0_of_the_alias_checkpoints_topic() -> None:
    def rec(topic: str, partition: int, c: Checkpoint) -> SimpleNamespace:
        return SimpleNamespace(topic=topic, partition=partition, key=c.record_key(), value=c.record_value())

    good = Checkpoint("g", "A.t", 1, 5, 5)
    records = [
        rec("A.checkpoints.internal", 0, good),
        rec("A.checkpoints.internal", 1, Checkpoint("g", "A.t", 1, 9, 9)),
        rec("C.checkpoints.internal", 0, Checkpoint("g", "C.t", 1, 9, 9)),
    ]
    assert translate_offsets(records, "g", "A") == {TopicPartition("A.t", 1): OffsetAndMetadata(5, "")}
    under = [rec("A_checkpoints_internal", 0, good)]
    assert translate_offsets(under, "g", "A", separator="_") == {
        TopicPartition("A.t", 1): OffsetAndMetadata(5, "")
    }
    assert translate_offsets(under, "g", "A") == {}
