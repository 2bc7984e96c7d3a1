"""Which topic configs the mirror goes without after a target refuses them (connectors.mirror.topic_configs),
and the rounds of CreateTopics / IncrementalAlterConfigs that leave them out (connectors.mirror.remote_topics).

The refusals are the broker answers of Kafka 4.3.1, 3.9.1 and 2.8.2 (taken from real brokers)."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pytest

from connectors.mirror.remote_topics import RemoteTopics, alter_accepted, create_accepted
from connectors.mirror.routed_topics import RoutedTopic
from connectors.mirror.topic_configs import CONFIG_DRIFT, ConfigDrift, Refused, refused_names
from pyconnect.conditions import ConditionBoard
from pyconnect.kafka.mirror_admin import DYNAMIC_TOPIC_CONFIG, OP_DELETE, OP_SET, ConfigEntry, NewTopicSpec

SENT = ["message.format.version", "retention.ms", "local.retention.ms", "min.compaction.lag.ms"]


@pytest.mark.parametrize(
    ("message", "names"),
    [
        ("Unknown topic config name: message.format.version", ["message.format.version"]),
        (
            "Invalid value 1000 for configuration retention.ms: Value must be at least 1048576",
            ["retention.ms"],
        ),
        (
            "Invalid config value for resource ConfigResource(type=TOPIC, name='t'): Invalid value 7.0 for "
            "configuration local.retention.ms: Value must not be more than retention.ms property value: 5",
            ["local.retention.ms"],
        ),
        (
            "conflict topic config setting min.compaction.lag.ms (100) > max.compaction.lag.ms (50)",
            ["min.compaction.lag.ms"],
        ),
        ("Unknown topic config name: x.y", []),
        ("Replication factor: 3 larger than available brokers: 1.", []),
        ("The topic 'nope' does not exist.", []),
        ("", []),
        (None, []),
    ],
)
def test_a_refusal_names_the_configs_it_refused(message: str | None, names: list[str]) -> None:
    assert refused_names(message, SENT) == names


def test_a_name_counts_only_as_a_whole_word() -> None:
    assert refused_names("cannot use local.retention.ms here", ["retention.ms"]) == []
    assert refused_names("cannot use retention.ms here", ["retention.ms", "local.retention.ms"]) == [
        "retention.ms"
    ]


def refused(topic: str, name: str, value: str = "v") -> Refused:
    return Refused(topic, name, value, f"Unknown topic config name: {name}")


def test_drift_is_reported_once_and_kept_as_a_condition_per_topic() -> None:
    board = ConditionBoard("mirror", None, clock_ms=lambda: 5)
    drift = ConfigDrift("B", "b-admin", board)
    first = refused("A.t", "message.format.version", "2.8")
    assert drift.created([first]) == [first]
    (condition,) = board.active(CONFIG_DRIFT)
    assert (condition.subject, condition.cluster, condition.client) == ("A.t", "B", "b-admin")
    assert "message.format.version=2.8" in condition.message
    assert drift.synced(["A.t", "A.u"], [first]) == []
    other = refused("A.t", "message.downconversion.enable", "false")
    assert drift.synced(["A.t"], [first, other]) == [other]
    assert [r.name for r in drift.dropped("A.t")] == [
        "message.downconversion.enable",
        "message.format.version",
    ]
    changed = refused("A.t", "message.format.version", "3.0")
    assert drift.synced(["A.t"], [changed]) == [changed]
    assert drift.synced(["A.t"], []) == []
    assert board.active() == [] and drift.dropped("A.t") == []


def test_a_creation_adds_to_what_is_already_dropped() -> None:
    drift = ConfigDrift("B")
    drift.created([refused("A.t", "a")])
    drift.created([refused("A.t", "b")])
    assert [r.name for r in drift.dropped("A.t")] == ["a", "b"]


class RefusingAdmin:
    """Answers as a broker does: the first config it does not know (or whose value is out of range)
    refuses the whole topic, named in the message; ``bad_topics`` are refused for another reason."""

    def __init__(self, unknown: set[str], bad_topics: frozenset[str] = frozenset()) -> None:
        self.unknown = unknown
        self.bad_topics = bad_topics
        self.created: dict[str, NewTopicSpec] = {}
        self.altered: dict[str, list[tuple[str, int, str | None]]] = {}
        self.requests = 0
        self.partitions: dict[str, list[int]] = {}
        self.grown: dict[str, int] = {}
        self.described: dict[str, list[ConfigEntry]] = {}

    def _refusal(self, topic: str, names: Sequence[str]) -> str | None:
        if topic in self.bad_topics:
            return "Replication factor: 3 larger than available brokers: 1."
        for name in names:
            if name in self.unknown:
                return f"Unknown topic config name: {name}"
        return None

    async def create_topics(self, specs: Sequence[NewTopicSpec]) -> dict[str, str | None]:
        self.requests += 1
        answers = {}
        for spec in specs:
            answers[spec.name] = self._refusal(spec.name, list(spec.configs))
            if answers[spec.name] is None:
                self.created[spec.name] = spec
                self.partitions[spec.name] = list(range(spec.partitions))
        return answers

    async def incremental_alter_configs(
        self, operations: Mapping[str, Sequence[tuple[str, int, str | None]]]
    ) -> dict[str, str | None]:
        self.requests += 1
        answers = {}
        for topic, ops in operations.items():
            answers[topic] = self._refusal(topic, [n for n, op, _ in ops if op == OP_SET])
            if answers[topic] is None:
                self.altered[topic] = list(ops)
        return answers

    async def topic_partitions(self) -> dict[str, list[int]]:
        return dict(self.partitions)

    async def create_partitions(self, counts: Mapping[str, int]) -> dict[str, str | None]:
        self.grown.update(counts)
        return {t: None for t in counts}

    async def describe_topic_configs(self, topics: Sequence[str]) -> dict[str, list[ConfigEntry]]:
        return {t: self.described[t] for t in topics if t in self.described}


async def test_a_topic_is_created_with_the_configs_the_target_accepts() -> None:
    admin = RefusingAdmin({"message.format.version", "message.downconversion.enable"}, frozenset({"A.bad"}))
    specs = [
        NewTopicSpec(
            "A.t",
            4,
            1,
            {
                "message.format.version": "2.8",
                "retention.ms": "1000",
                "message.downconversion.enable": "false",
            },
        ),
        NewTopicSpec("A.u", 2, 1, {"retention.ms": "5"}),
        NewTopicSpec("A.bad", 1, 1, {"message.format.version": "2.8"}),
    ]
    results, dropped = await create_accepted(admin, specs)
    assert results == {
        "A.u": None,
        "A.bad": "Replication factor: 3 larger than available brokers: 1.",
        "A.t": None,
    }
    assert admin.created["A.t"] == NewTopicSpec("A.t", 4, 1, {"retention.ms": "1000"})
    assert {(r.topic, r.name, r.value) for r in dropped} == {
        ("A.t", "message.format.version", "2.8"),
        ("A.t", "message.downconversion.enable", "false"),
    }
    assert admin.requests == 3


async def test_a_sync_applies_every_operation_the_target_accepts() -> None:
    admin = RefusingAdmin({"message.format.version"})
    operations = {
        "A.t": [("message.format.version", OP_SET, "2.8"), ("retention.ms", OP_SET, "7")],
        "A.u": [("message.format.version", OP_DELETE, None), ("cleanup.policy", OP_SET, "compact")],
    }
    results, dropped = await alter_accepted(admin, operations)
    assert results == {"A.t": None, "A.u": None}
    assert admin.altered == {"A.t": [("retention.ms", OP_SET, "7")], "A.u": operations["A.u"]}
    assert dropped == [
        Refused("A.t", "message.format.version", "2.8", "Unknown topic config name: message.format.version")
    ]
    assert await alter_accepted(admin, {}) == ({}, [])


async def test_remote_topics_warn_once_per_dropped_config(caplog: pytest.LogCaptureFixture) -> None:
    board = ConditionBoard("mirror", None)
    topics = RemoteTopics("mirror", "B", "admin-b", board)
    admin = RefusingAdmin({"message.format.version"})
    spec = NewTopicSpec("A.t", 3, 1, {"message.format.version": "2.8"})
    with caplog.at_level(logging.INFO, logger="connectors.mirror.remote_topics"):
        await topics.create(admin, [spec])
        for _ in range(3):
            await topics.sync(admin, {"A.t": [("message.format.version", OP_SET, "2.8")]})
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "message.format.version=2.8 of A.t" in warnings[0]
    assert all(r.getMessage().startswith("mirror: ") for r in caplog.records)
    assert [c.subject for c in board.active(CONFIG_DRIFT)] == ["A.t"]
    await topics.sync(admin, {"A.t": [("message.format.version", OP_DELETE, None)]})
    assert board.active() == []


def entry(name: str, value: str) -> ConfigEntry:
    return ConfigEntry(name, value, DYNAMIC_TOPIC_CONFIG, False, False)


async def test_routed_topics_are_created_and_grown_like_their_sources() -> None:
    source, target = RefusingAdmin(set()), RefusingAdmin({"message.format.version"})
    source.described = {
        "orders": [entry("retention.ms", "9"), entry("message.format.version", "2.8")],
        "refunds": [entry("retention.ms", "9"), entry("cleanup.policy", "compact")],
        "audit": [entry("retention.ms", "1")],
    }
    target.partitions = {"audit-copy": [0]}
    topics = RemoteTopics("mirror", "B", None, None)
    routed = [
        RoutedTopic("all-orders", ("orders", "refunds")),
        RoutedTopic("audit-copy", ("audit",)),
    ]
    counts = {"orders": 4, "refunds": 6, "audit": 3}
    await topics.create_routed(
        source,  # type: ignore[arg-type]
        target,  # type: ignore[arg-type]
        routed,
        counts,
        1,
        lambda entries: {e.name: str(e.value) for e in entries},
    )
    assert target.created == {"all-orders": NewTopicSpec("all-orders", 6, 1, {"retention.ms": "9"})}
    assert target.grown == {"audit-copy": 3}
    assert topics.routes == {"audit": ["audit-copy"]}
