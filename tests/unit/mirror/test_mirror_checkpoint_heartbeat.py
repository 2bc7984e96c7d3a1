"""MirrorCheckpoint/MirrorHeartbeat connector and task logic, with in-memory fakes for the group admins.

The Kafka side is covered by tests/integration/test_mirror_checkpoint.py; here: task config encoding,
the checkpoint emission rules, the group-offset sync gate and the heartbeat record.
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

import pytest

from connectors.mirror.checkpoint import (
    MirrorCheckpointConnector,
    MirrorCheckpointTask,
    group_partitions,
    translation_mode,
)
from connectors.mirror.checkpoint_records import Checkpoint, Heartbeat
from connectors.mirror.config import MirrorCheckpointConfig, MirrorHeartbeatConfig
from connectors.mirror.filters import DefaultTopicFilter
from connectors.mirror.heartbeat import MirrorHeartbeatConnector, MirrorHeartbeatTask
from connectors.mirror.offsets.translation import OffsetSyncStore
from connectors.mirror.policy import DefaultReplicationPolicy
from pyconnect.errors import ConfigError, ConnectError, RetriableError
from pyconnect.kafka.group_admin import CommittedOffset
from pyconnect.kafka.group_view import GroupView

BASE = {
    "name": "cp",
    "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    "source.cluster.alias": "A",
    "target.cluster.alias": "B",
}


class FakeGroups:
    """In-memory stand-in for GroupAdmin: committed offsets and views per group; records commits.

    ``later`` gives the view a group shows from its second describe on (a consumer joining between the
    round's describe and the check right before the commit); ``refuse`` gives the error code the
    coordinator answers to a commit of that group."""

    def __init__(
        self,
        offsets: dict[str, dict[tuple[str, int], CommittedOffset]],
        states: dict[str, str | GroupView] | None = None,
        later: dict[str, GroupView] | None = None,
        refuse: dict[str, int] | None = None,
    ) -> None:
        self.offsets = offsets
        self.states = states or {}
        self.later = later or {}
        self.refuse = refuse or {}
        self.described: dict[str, int] = {}
        self.altered: list[tuple[str, dict[tuple[str, int], CommittedOffset]]] = []

    async def committed_offsets(self, group: str) -> dict[tuple[str, int], CommittedOffset]:
        return dict(self.offsets.get(group, {}))

    def _view(self, group: str) -> GroupView:
        self.described[group] = self.described.get(group, 0) + 1
        if self.described[group] > 1 and group in self.later:
            return self.later[group]
        state = self.states.get(group, "Dead")
        if isinstance(state, GroupView):
            return state
        return GroupView(group, "unknown" if state == "Dead" else "classic", state)

    async def describe_groups(self, groups: Sequence[str]) -> dict[str, GroupView]:
        return {g: self._view(g) for g in groups}

    async def group_states(self, groups: Sequence[str]) -> dict[str, str]:
        return {g: v.state for g, v in (await self.describe_groups(groups)).items()}

    async def alter_offsets(
        self, group: str, offsets: Mapping[tuple[str, int], CommittedOffset]
    ) -> dict[tuple[str, int], int]:
        if group in self.refuse:
            return dict.fromkeys(offsets, self.refuse[group])
        self.altered.append((group, dict(offsets)))
        return {}


def task(groups: list[str], source: FakeGroups, store: OffsetSyncStore) -> MirrorCheckpointTask:
    t = MirrorCheckpointTask()
    t._name = "cp-0"
    t.groups = groups
    t._source_alias, t._target_alias = "A", "B"
    t._policy = DefaultReplicationPolicy()
    t._topic_filter = DefaultTopicFilter({})
    t._topic = "A.checkpoints.internal"
    t._source_admin = source  # type: ignore[assignment]
    t.store = store
    return t


def ready_store(*syncs: tuple[str, int, int, int]) -> OffsetSyncStore:
    store = OffsetSyncStore("exact")
    store.start(must_read_to_end=False)
    for topic, partition, up, down in syncs:
        store.add(topic, partition, up, down)
    store.mark_read_to_end()
    return store


def test_group_partitions_is_contiguous_with_leftovers_first() -> None:
    assert group_partitions(list("abcdefg"), 3) == [["a", "b", "c"], ["d", "e"], ["f", "g"]]
    assert group_partitions(["a"], 1) == [["a"]]


def test_checkpoint_task_configs() -> None:
    connector = MirrorCheckpointConnector()
    connector._config = MirrorCheckpointConfig(BASE)
    with pytest.raises(RetriableError):
        connector.task_configs(2)
    connector.known_groups = ["g1", "g2", "g3"]
    configs = connector.task_configs(2)
    assert [(c["task.assigned.groups"], c["task.index"]) for c in configs] == [("g1,g2", "0"), ("g3", "1")]
    assert all(c["source.cluster.alias"] == "A" for c in configs)
    connector.known_groups = []
    assert connector.task_configs(2) == []
    connector._config = MirrorCheckpointConfig({**BASE, "emit.checkpoints.enabled": "false"})
    assert connector.task_configs(2) == []


def test_translation_mode_key() -> None:
    assert translation_mode({}) == "exact"
    assert translation_mode({"pyconnect.offset.translation": "java"}) == "java"
    with pytest.raises(ConfigError):
        translation_mode({"pyconnect.offset.translation": "fast"})
    assert "pyconnect.offset.translation" in MirrorCheckpointConnector().config()


async def test_checkpoints_follow_java_emission_rules() -> None:
    source = FakeGroups({"g": {("t", 0): CommittedOffset(50, "meta"), ("skip", 0): CommittedOffset(5)}})
    t = task(["g"], source, ready_store(("t", 0, 0, 100), ("t", 0, 60, 160)))
    first = await t.checkpoint_records()
    assert len(first) == 1
    record = first[0]
    decoded = Checkpoint.from_record(record.key, record.value)
    assert decoded == Checkpoint("g", "A.t", 0, 50, 150, "meta")
    assert (record.topic, record.kafka_partition) == ("A.checkpoints.internal", 0)
    assert list(record.source_partition or {}) == ["partition", "topic", "group"]
    assert record.source_offset == {"offset": 0}
    assert await t.checkpoint_records() == []  # repeat suppressed
    source.offsets["g"][("t", 0)] = CommittedOffset(55)
    assert [
        Checkpoint.from_record(r.key, r.value).downstream_offset for r in await t.checkpoint_records()
    ] == [155]
    source.offsets["g"][("t", 0)] = CommittedOffset(10)  # rewound upstream: emitted although lower
    assert [
        Checkpoint.from_record(r.key, r.value).downstream_offset for r in await t.checkpoint_records()
    ] == [110]


async def test_java_mode_and_untranslatable_offsets() -> None:
    source = FakeGroups({"g": {("t", 0): CommittedOffset(50), ("t", 1): CommittedOffset(3)}})
    store = ready_store(("t", 0, 0, 100), ("t", 0, 60, 160), ("t", 1, 10, 10))
    store.mode = "java"
    records = await task(["g"], source, store).checkpoint_records()
    assert [Checkpoint.from_record(r.key, r.value).downstream_offset for r in records] == [101]


async def test_java_mode_checkpoint_stays_above_a_translation_that_later_syncs_lower() -> None:
    """Java's store thins older syncs as newer ones arrive, so the translation of one offset can fall
    (60 with syncs every 11 records: 56 while the newest sync is 55 or 66, 45 from 77 on); a checkpoint
    only moves forward, so the one emitted at 56 stays. A checkpoint emitted mid-copy can therefore sit
    above what a store fed with all the syncs promises (the Spark audit test starts its checkpoints
    once the syncs are complete for this reason)."""
    source = FakeGroups({"g": {("t", 0): CommittedOffset(60)}})
    store = ready_store()
    store.mode = "java"
    t = task(["g"], source, store)
    emitted = []
    for up in range(0, 100, 11):
        store.add("t", 0, up, up)
        emitted += [
            Checkpoint.from_record(r.key, r.value).downstream_offset for r in await t.checkpoint_records()
        ]
        if up == 66:
            assert emitted[-1] == 56
    assert store.translate_downstream("g", ("t", 0), 60) == 45
    assert emitted == [1, 12, 23, 34, 45, 56]


async def test_group_offset_sync_only_for_empty_or_unknown_groups_and_forward() -> None:
    target = FakeGroups(
        {"empty": {("A.t", 0): CommittedOffset(200), ("A.t", 1): CommittedOffset(5)}},
        {"empty": "Empty", "busy": "Stable"},
    )
    t = task(["empty", "busy", "gone"], FakeGroups({}), ready_store())
    t._target_admin = target  # type: ignore[assignment]
    for group in t.groups:
        t.checkpoints[group] = {
            ("A.t", 0): Checkpoint(group, "A.t", 0, 90, 100, "m"),
            ("A.t", 1): Checkpoint(group, "A.t", 1, 10, 20, ""),
        }
    await t.sync_group_offsets()
    assert target.altered == [
        ("empty", {("A.t", 1): CommittedOffset(20, "")}),
        ("gone", {("A.t", 0): CommittedOffset(100, "m"), ("A.t", 1): CommittedOffset(20, "")}),
    ]


def two_partitions(t: MirrorCheckpointTask) -> None:
    for group in t.groups:
        t.checkpoints[group] = {
            ("A.t", 0): Checkpoint(group, "A.t", 0, 90, 100, "m"),
            ("A.t", 1): Checkpoint(group, "A.t", 1, 10, 20, ""),
        }


async def test_group_offset_sync_skips_active_consumer_protocol_groups_and_unanswered_describes() -> None:
    target = FakeGroups(
        {"new-idle": {("A.t", 0): CommittedOffset(150)}},
        {
            "new-idle": GroupView("new-idle", "consumer", "Empty"),
            "new-stable": GroupView("new-stable", "consumer", "Stable", 2),
            "new-reconciling": GroupView("new-reconciling", "consumer", "Reconciling", 1),
            "unanswered": GroupView("unanswered", "unknown", "Unknown", 0, "DescribeGroups error code 15"),
        },
    )
    t = task(["new-idle", "new-stable", "new-reconciling", "unanswered"], FakeGroups({}), ready_store())
    t._target_admin = target  # type: ignore[assignment]
    two_partitions(t)
    await t.sync_group_offsets()
    assert target.altered == [("new-idle", {("A.t", 1): CommittedOffset(20, "")})]


async def test_group_that_turns_active_before_the_commit_is_not_touched_and_warned_once(
    caplog: pytest.LogCaptureFixture,
) -> None:
    target = FakeGroups({}, {"g": "Empty"}, later={"g": GroupView("g", "consumer", "Stable", 1)})
    t = task(["g"], FakeGroups({}), ready_store())
    t._target_admin = target  # type: ignore[assignment]
    two_partitions(t)
    with caplog.at_level(logging.DEBUG, logger="connectors.mirror.checkpoint"):
        await t.sync_group_offsets()
        await t.sync_group_offsets()
    assert target.altered == []
    # round 1: the round's describe (Empty) and the check right before the commit (Stable); round 2:
    # the round's describe (Stable) already skips it
    assert target.described["g"] == 3
    warnings = [r for r in caplog.records if r.levelno == logging.WARNING]
    assert [r.getMessage() for r in warnings] == [
        "cp-0: not syncing offsets of consumer group g on B: Stable (consumer protocol, 1 member); "
        "retried every round, logged again after a successful sync"
    ]


async def test_coordinator_refusal_is_a_skip_warned_once_then_synced(
    caplog: pytest.LogCaptureFixture,
) -> None:
    target = FakeGroups({}, {"g": "Empty"}, refuse={"g": 25})
    t = task(["g"], FakeGroups({}), ready_store())
    t._target_admin = target  # type: ignore[assignment]
    two_partitions(t)
    with caplog.at_level(logging.INFO, logger="connectors.mirror.checkpoint"):
        await t.sync_group_offsets()
        await t.sync_group_offsets()
        del target.refuse["g"]
        await t.sync_group_offsets()
    messages = [(r.levelname, r.getMessage()) for r in caplog.records]
    assert messages == [
        (
            "WARNING",
            "cp-0: not syncing offsets of consumer group g on B: the coordinator refused the commit "
            "(UNKNOWN_MEMBER_ID); retried every round, logged again after a successful sync",
        ),
        ("INFO", "cp-0: synced offsets of consumer group g again"),
    ]
    assert target.altered == [
        ("g", {("A.t", 0): CommittedOffset(100, "m"), ("A.t", 1): CommittedOffset(20, "")})
    ]


async def test_heartbeat_connector_and_task() -> None:
    props = {**BASE, "connector.class": "MirrorHeartbeatConnector", "emit.heartbeats.interval.seconds": "0"}
    connector = MirrorHeartbeatConnector()
    connector._config = MirrorHeartbeatConfig(props)
    assert connector.task_configs(5) == [props]
    connector._config = MirrorHeartbeatConfig({**props, "emit.heartbeats.enabled": "false"})
    assert connector.task_configs(5) == []

    heartbeat_task = MirrorHeartbeatTask()
    await heartbeat_task.start(props)
    records = await heartbeat_task.poll()
    assert records is not None and len(records) == 1
    record = records[0]
    beat = Heartbeat.from_record(record.key, record.value)
    assert (beat.source_cluster_alias, beat.target_cluster_alias, beat.timestamp) == (
        "A",
        "B",
        record.timestamp,
    )
    assert (record.topic, record.kafka_partition, record.source_offset) == ("heartbeats", 0, {"offset": 0})
    assert record.source_partition == {"sourceClusterAlias": "A", "targetClusterAlias": "B"}
    await heartbeat_task.stop()
    assert await heartbeat_task.poll() is None


def test_alter_offsets_checks_java_formats() -> None:
    checkpoint = {"partition": 0, "topic": "A.t", "group": "g"}
    assert MirrorCheckpointConnector().alter_offsets({}, [(checkpoint, {"offset": 0}), (checkpoint, None)])
    for bad_partition, bad_offset in (
        ({"partition": -1, "topic": "A.t", "group": "g"}, {"offset": 0}),
        ({"partition": 0, "group": "g"}, {"offset": 0}),
        (checkpoint, {"offset": 5}),
    ):
        with pytest.raises(ConnectError):
            MirrorCheckpointConnector().alter_offsets({}, [(bad_partition, bad_offset)])
    beat = {"sourceClusterAlias": "A", "targetClusterAlias": "B"}
    assert MirrorHeartbeatConnector().alter_offsets({}, [(beat, {"offset": 0})])
    with pytest.raises(ConnectError):
        MirrorHeartbeatConnector().alter_offsets({}, [({"sourceClusterAlias": 1}, {"offset": 0})])


async def test_a_group_active_on_the_target_is_a_warning_condition_until_it_is_synced() -> None:
    from pyconnect.api.source import SourceTaskContext
    from pyconnect.conditions import WARNING, ConditionBoard

    target = FakeGroups({}, {"g": "Stable"})
    t = task(["g"], FakeGroups({}), ready_store())
    board = ConditionBoard("cp", 0)
    t.initialize(SourceTaskContext({}, offset_storage_reader=None, conditions=board))  # type: ignore[arg-type]
    t._target_admin = target  # type: ignore[assignment]
    two_partitions(t)
    await t.sync_group_offsets()
    (condition,) = board.active()
    assert (condition.code, condition.subject, condition.cluster) == ("GROUP_SYNC_BLOCKED", "g", "B")
    assert (
        condition.severity == WARNING
        and "offsets of consumer group g are not synced to B" in condition.message
    )
    target.states["g"] = "Empty"
    await t.sync_group_offsets()
    assert board.active() == [] and target.altered


async def test_rounds_that_keep_failing_are_checkpoints_stalled_until_one_succeeds(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from connectors.mirror import checkpoint
    from pyconnect.api.source import SourceTaskContext
    from pyconnect.conditions import ConditionBoard

    monkeypatch.setattr(checkpoint, "CHECKPOINTS_STALLED_AFTER_S", 0.0)
    t = task(["g"], FakeGroups({}), ready_store())
    board = ConditionBoard("cp", 0)
    t.initialize(SourceTaskContext({}, offset_storage_reader=None, conditions=board))  # type: ignore[arg-type]
    t._loaded, t._interval_s = True, 0.0

    async def broken() -> list[Any]:
        raise RuntimeError("listing offsets failed\nsecond line")

    real = t.checkpoint_records
    t.checkpoint_records = broken  # type: ignore[method-assign]
    assert await t.poll() is None
    (condition,) = board.active()
    assert condition.code == "CHECKPOINTS_STALLED" and condition.subject == "A.checkpoints.internal"
    assert condition.message.endswith("A.checkpoints.internal: listing offsets failed")
    t.checkpoint_records = real  # type: ignore[method-assign]
    await t.poll()
    assert board.active() == []
