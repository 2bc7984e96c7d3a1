"""The group offset sync's policy (connectors.mirror.group_sync) and its continuous mode
(connectors.mirror.group_watch, connectors.mirror.share_group_sync) over in-memory clusters.

The fake cluster is a group coordinator as Kafka's: an admin commit (no member) is refused while the
group has members, checked in the same step that writes it. The property tests run adversarial
histories against the continuous sync: source commits that rewind and jump, target members that join,
commit and leave between any two requests of the sync (one foreign step per request: a member needs
several round trips of its own to join, commit and leave), and check that no offset the sync commits
moves a group backwards, lands outside its partition's log, or reaches a group with members.
"""

from __future__ import annotations

import logging
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from connectors.mirror.checkpoint import MirrorCheckpointConnector
from connectors.mirror.config import MirrorCheckpointConfig
from connectors.mirror.group_sync import (
    CONTINUOUS_SYNC_CONFIG,
    SHARE_GROUPS_TASK_CONFIG,
    SyncReport,
    assigned_groups,
    commit_outcome,
    continuous_sync,
    continuous_sync_error,
    plan_commit,
)
from connectors.mirror.group_watch import RECHECK_S, ContinuousGroupSync
from connectors.mirror.share_group_sync import UNSUPPORTED_RETRY_S, effective_starts
from pyconnect.conditions import ConditionBoard
from pyconnect.errors import AuthorizationError, ConfigError, KafkaAccessError
from pyconnect.kafka.group_admin import CommittedOffset
from pyconnect.kafka.group_offsets import ShareGroupsUnsupported, ShareOffsets
from pyconnect.kafka.group_view import ClassicEntry, GroupView, resolve_group
from pyconnect.protocol.consumer_group_describe import DescribedGroup
from pyconnect.protocol.share_group_offsets import AlterAnswer

TP = tuple[str, int]
BASE = {
    "name": "cp",
    "connector.class": "org.apache.kafka.connect.mirror.MirrorCheckpointConnector",
    "source.cluster.alias": "A",
    "target.cluster.alias": "B",
}


class ManualClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


class FakeCluster:
    """An in-memory cluster as :class:`~pyconnect.kafka.group_offsets.SyncAdmin` sees it.

    ``before`` runs before every request is answered (an adversary's step); ``members`` per group;
    ``history`` holds every committed value per (group, partition) in order, with who wrote it."""

    def __init__(self, cluster: str = "cluster B") -> None:
        self.cluster = cluster
        self.offsets: dict[str, dict[TP, CommittedOffset]] = {}
        self.members: Counter[str] = Counter()
        self.logs: dict[TP, tuple[int, int]] = {}
        self.share: dict[str, dict[TP, int]] = {}
        self.share_version = 1
        self.share_lags: dict[str, dict[TP, int]] = {}
        self.share_supported = True
        self.requests: Counter[str] = Counter()
        self.history: list[tuple[str, TP, int, str]] = []
        self.violations: list[str] = []
        self.starts_answered: dict[TP, int] = {}
        self.before: Callable[[str], None] = lambda api: None

    def _ask(self, api: str) -> None:
        self.requests[api] += 1
        self.before(api)

    def write(self, group: str, tp: TP, offset: int, metadata: str = "", who: str = "client") -> None:
        self.offsets.setdefault(group, {})[tp] = CommittedOffset(offset, metadata)
        self.history.append((group, tp, offset, who))

    async def fetch_committed(self, groups: Sequence[str]) -> dict[str, dict[TP, CommittedOffset]]:
        self._ask("OffsetFetch")
        return {g: dict(self.offsets.get(g, {})) for g in groups}

    async def describe(self, groups: Sequence[str]) -> dict[str, GroupView]:
        self._ask("Describe")
        return {
            g: GroupView(g, "classic", "Stable", self.members[g])
            if self.members[g]
            else GroupView(g, "classic", "Empty")
            for g in groups
        }

    async def commit(self, group: str, offsets: Mapping[TP, CommittedOffset]) -> dict[TP, int]:
        self._ask("OffsetCommit")
        if self.members[group]:
            return dict.fromkeys(offsets, 25)  # UNKNOWN_MEMBER_ID, decided where the write would happen
        for tp, committed in offsets.items():
            start, end = self.starts_answered.get(tp, self.logs[tp][0]), self.logs[tp][1]
            if not start <= committed.offset <= end:
                self.violations.append(f"{group} {tp}: {committed.offset} outside [{start}, {end}]")
            previous = self.offsets.get(group, {}).get(tp)
            if previous is not None and previous.offset > committed.offset:
                self.violations.append(f"{group} {tp}: rewound {previous.offset} -> {committed.offset}")
            self.write(group, tp, committed.offset, committed.metadata, "sync")
        return {}

    async def log_starts(self, partitions: Sequence[TP]) -> dict[TP, int]:
        self._ask("ListOffsets")
        answer = {tp: self.logs[tp][0] for tp in partitions if tp in self.logs}
        self.starts_answered.update(answer)
        return answer

    async def log_ends(self, partitions: Sequence[TP], *, refresh: bool = False) -> dict[TP, int]:
        self._ask("ListOffsets")
        return {tp: self.logs[tp][1] for tp in partitions if tp in self.logs}

    async def share_offsets(self, groups: Sequence[str]) -> ShareOffsets:
        if not self.share_supported:
            raise ShareGroupsUnsupported(f"{self.cluster} has no share groups (no DescribeShareGroupOffsets)")
        self._ask("DescribeShareGroupOffsets")
        return ShareOffsets(
            self.share_version,
            {g: dict(self.share.get(g, {})) for g in groups},
            {},
            {g: dict(self.share_lags.get(g, {})) for g in groups},
        )

    async def alter_share_offsets(self, group: str, offsets: Mapping[TP, int]) -> AlterAnswer:
        self._ask("AlterShareGroupOffsets")
        if self.members[group]:
            return AlterAnswer(68, "The group is not empty.", ())
        self.share.setdefault(group, {}).update(offsets)
        return AlterAnswer(0, None, ())


def identity(group: str, topic: str, partition: int, offset: int) -> tuple[str, int] | None:
    return None if topic.startswith("skip") else (f"A.{topic}", offset)


def make_sync(
    source: FakeCluster,
    target: FakeCluster,
    groups: Sequence[str] = ("g",),
    shares: Sequence[str] = (),
    clock: ManualClock | None = None,
) -> tuple[ContinuousGroupSync, ConditionBoard, list[KafkaAccessError]]:
    board = ConditionBoard("cp", 0)
    refused: list[KafkaAccessError] = []
    report = SyncReport("cp-0", "B", lambda: board, logging.getLogger("tests.group_sync"))
    sync = ContinuousGroupSync(
        "cp-0",
        groups,
        (source, target),  # type: ignore[arg-type]
        identity,
        report,
        refused.append,
        shares=shares,
        clock=clock or ManualClock(),
    )
    return sync, board, refused


# -- the pure policy -----------------------------------------------------------------------------------


def test_plan_is_forward_only_within_the_log() -> None:
    wanted = {("t", p): CommittedOffset(o, "m") for p, o in enumerate([50, 5, 90, 40, 30])}
    current = {("t", 0): CommittedOffset(60), ("t", 3): CommittedOffset(10)}
    bounds = {("t", 0): (0, 100), ("t", 1): (20, 100), ("t", 2): (0, 80), ("t", 3): (0, 100)}
    plan = plan_commit(wanted, current, bounds)
    assert plan.changes == {("t", 1): CommittedOffset(20, "m"), ("t", 3): CommittedOffset(40, "m")}
    assert plan.beyond_end == {("t", 2): 90}
    assert plan.missing == (("t", 4),)


@given(
    st.dictionaries(st.integers(0, 5), st.integers(0, 200)),
    st.dictionaries(st.integers(0, 5), st.integers(0, 200)),
    st.dictionaries(st.integers(0, 5), st.tuples(st.integers(0, 100), st.integers(0, 100))),
)
def test_every_planned_offset_is_in_the_log_and_moves_forward(
    wanted: dict[int, int], current: dict[int, int], bounds: dict[int, tuple[int, int]]
) -> None:
    plan = plan_commit(
        {("t", p): CommittedOffset(o) for p, o in wanted.items()},
        {("t", p): CommittedOffset(o) for p, o in current.items()},
        {("t", p): (min(b), max(b)) for p, b in bounds.items()},
    )
    for (_, p), change in plan.changes.items():
        start, end = min(bounds[p]), max(bounds[p])
        assert start <= change.offset <= end
        assert p not in current or current[p] < change.offset
        assert change.offset == max(wanted[p], start)


def test_commit_outcomes() -> None:
    assert commit_outcome({}) == ("committed", "")
    assert commit_outcome({("t", 0): 25, ("t", 1): 113}) == (
        "active",
        "the coordinator refused the commit (UNKNOWN_MEMBER_ID, STALE_MEMBER_EPOCH)",
    )
    assert commit_outcome({("t", 0): 16})[0] == "moving"
    assert commit_outcome({("t", 0): 25, ("t", 1): 3})[0] == "failed"


def test_the_continuous_key_is_declared_and_validated() -> None:
    connector = MirrorCheckpointConnector()
    assert CONTINUOUS_SYNC_CONFIG in connector.config()
    assert continuous_sync({}) is False
    assert continuous_sync({CONTINUOUS_SYNC_CONFIG: "true"}) is True
    with pytest.raises(ConfigError, match=CONTINUOUS_SYNC_CONFIG):
        continuous_sync({CONTINUOUS_SYNC_CONFIG: "maybe"})
    bad = connector.validate({**BASE, CONTINUOUS_SYNC_CONFIG: "maybe"})[CONTINUOUS_SYNC_CONFIG]
    assert bad.errors and CONTINUOUS_SYNC_CONFIG in bad.errors[0]
    alone = connector.validate({**BASE, CONTINUOUS_SYNC_CONFIG: "true"})[CONTINUOUS_SYNC_CONFIG]
    assert alone.errors == [continuous_sync_error({CONTINUOUS_SYNC_CONFIG: "true"})]
    ok = connector.validate({**BASE, CONTINUOUS_SYNC_CONFIG: "true", "sync.group.offsets.enabled": "true"})
    assert not ok[CONTINUOUS_SYNC_CONFIG].errors


def test_share_groups_are_dealt_with_the_others_and_named_in_their_task_config() -> None:
    connector = MirrorCheckpointConnector()
    connector._config = MirrorCheckpointConfig(BASE)
    connector.known_groups = ["g1", "g2"]
    assert [c.get(SHARE_GROUPS_TASK_CONFIG) for c in connector.task_configs(2)] == [None, None]
    connector.known_share_groups = ["s1"]
    configs = connector.task_configs(2)
    assert [(c["task.assigned.groups"], c.get(SHARE_GROUPS_TASK_CONFIG)) for c in configs] == [
        ("g1,g2", None),
        ("s1", "s1"),
    ]
    assert assigned_groups(["g1", "s1", "g1"], {SHARE_GROUPS_TASK_CONFIG: "s1"}) == (["g1"], ["s1"])
    connector.known_groups = []
    assert [c["task.assigned.groups"] for c in connector.task_configs(3)] == ["s1"]


# -- the continuous sync over fakes ----------------------------------------------------------------


def fakes() -> tuple[FakeCluster, FakeCluster]:
    source, target = FakeCluster("cluster A"), FakeCluster()
    target.logs = {("A.t", 0): (0, 1000), ("A.t", 1): (0, 1000)}
    return source, target


async def test_source_commits_reach_the_target_and_an_idle_cycle_asks_the_source_only() -> None:
    source, target = fakes()
    source.write("g", ("t", 0), 10, "meta")
    source.write("g", ("skip", 0), 3, "")
    sync, board, _ = make_sync(source, target)
    await sync.cycle()
    assert target.offsets["g"] == {("A.t", 0): CommittedOffset(10, "meta")}
    target.requests.clear()
    await sync.cycle()
    await sync.cycle()
    assert target.requests == Counter() and source.requests["OffsetFetch"] == 3
    source.write("g", ("t", 1), 7, "x")
    await sync.cycle()
    assert target.offsets["g"][("A.t", 1)] == CommittedOffset(7, "x")
    assert sync.stats["commits"] == 2 and board.active() == []


async def test_an_active_group_is_blocked_until_it_empties_and_a_target_ahead_is_never_rewound() -> None:
    source, target = fakes()
    source.write("g", ("t", 0), 10, "")
    target.write("g", ("A.t", 0), 500, who="consumer")
    target.members["g"] = 1
    sync, board, _ = make_sync(source, target)
    await sync.cycle()
    (condition,) = board.active()
    assert (
        condition.code == "GROUP_SYNC_BLOCKED" and "Stable (classic protocol, 1 member)" in condition.message
    )
    target.members["g"] = 0
    await sync.cycle()
    assert board.active() == [] and target.offsets["g"][("A.t", 0)].offset == 500
    target.requests.clear()
    await sync.cycle()
    assert target.requests == Counter()  # known to be ahead: not asked again until the source passes it
    source.write("g", ("t", 0), 600, "")
    await sync.cycle()
    assert target.offsets["g"][("A.t", 0)].offset == 600


async def test_a_group_that_turns_active_before_the_commit_refuses_it() -> None:
    source, target = fakes()
    source.write("g", ("t", 0), 10, "")

    def join_before_commit(api: str) -> None:
        if api == "OffsetCommit":
            target.members["g"] = 1

    target.before = join_before_commit
    sync, board, _ = make_sync(source, target)
    await sync.cycle()
    assert "g" not in target.offsets
    assert "UNKNOWN_MEMBER_ID" in board.active()[0].message


async def test_offsets_past_the_log_wait_for_the_copy_and_below_its_start_land_on_it() -> None:
    source, target = fakes()
    target.logs[("A.t", 0)] = (100, 150)
    source.write("g", ("t", 0), 50, "")
    source.write("g", ("t", 1), 1200, "")
    sync, _, _ = make_sync(source, target)
    await sync.cycle()
    assert target.offsets["g"] == {("A.t", 0): CommittedOffset(100, "")}
    target.logs[("A.t", 1)] = (0, 1300)
    await sync.cycle()
    assert target.offsets["g"][("A.t", 1)].offset == 1200


async def test_what_the_target_holds_is_asked_again_after_the_recheck_interval() -> None:
    source, target = fakes()
    clock = ManualClock()
    source.write("g", ("t", 0), 10, "")
    sync, _, _ = make_sync(source, target, clock=clock)
    await sync.cycle()
    target.offsets["g"][("A.t", 0)] = CommittedOffset(0)  # an operator's reset behind the sync's back
    await sync.cycle()
    assert target.offsets["g"][("A.t", 0)].offset == 0
    clock.now += RECHECK_S
    await sync.cycle()
    assert target.offsets["g"][("A.t", 0)].offset == 10


async def test_a_refusal_ends_the_watcher_through_on_refused() -> None:
    source, target = fakes()

    async def refused(groups: Sequence[str]) -> dict[str, dict[TP, CommittedOffset]]:
        raise AuthorizationError("Not authorized to access group: g on cluster A")

    source.fetch_committed = refused  # type: ignore[method-assign]
    sync, _, refusals = make_sync(source, target)
    sync.start()
    await sync._task  # type: ignore[misc]
    assert [str(r) for r in refusals] == ["Not authorized to access group: g on cluster A"]
    await sync.stop()


async def test_share_group_start_offsets_are_set_forward_and_never_while_it_has_members() -> None:
    source, target = fakes()
    source.share["s"] = {("t", 0): 40, ("skip", 0): 1}
    target.share["s"] = {("A.t", 1): 5}
    target.members["s"] = 1
    sync, board, _ = make_sync(source, target, groups=(), shares=("s",))
    await sync.cycle()
    assert target.share["s"] == {("A.t", 1): 5}
    assert "share group s" in board.active()[0].message and "NON_EMPTY_GROUP" in board.active()[0].message
    target.members["s"] = 0
    await sync.cycle()
    assert target.share["s"] == {("A.t", 0): 40, ("A.t", 1): 5} and board.active() == []
    source.share["s"][("t", 0)] = 30  # rewound on the source: the target keeps its start offset
    await sync.cycle()
    assert target.share["s"][("A.t", 0)] == 40


@pytest.mark.parametrize("old", ["source", "target"])
async def test_share_groups_need_kafka_4_2_on_both_clusters_and_other_groups_go_on(
    old: str, caplog: pytest.LogCaptureFixture
) -> None:
    source, target = fakes()
    clock = ManualClock()
    source.write("g", ("t", 0), 10, "")
    source.share["s"] = {("t", 0): 40}
    (source if old == "source" else target).share_version = 0
    sync, board, _ = make_sync(source, target, groups=("g",), shares=("s",), clock=clock)
    with caplog.at_level(logging.DEBUG):
        for _ in range(3):
            await sync.cycle()
    assert target.offsets["g"][("A.t", 0)].offset == 10
    assert "s" not in target.share
    (condition,) = board.active()
    assert condition.subject == "s" and "Kafka 4.2 or later" in condition.message
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "share groups s" in warnings[0] and "v0 only" in warnings[0]
    (source if old == "source" else target).share_version = 1
    clock.now += UNSUPPORTED_RETRY_S
    await sync.cycle()
    assert target.share["s"] == {("A.t", 0): 40} and board.active() == []


async def test_a_target_without_share_group_apis_is_reported() -> None:
    source, target = fakes()
    source.share["s"] = {("t", 0): 40}
    target.share_supported = False
    sync, board, _ = make_sync(source, target, groups=(), shares=("s",))
    await sync.cycle()
    assert "has no share groups" in board.active()[0].message


# -- adversarial histories ------------------------------------------------------------------------------

STEP = st.one_of(
    st.tuples(st.just("source"), st.integers(0, 1), st.integers(0, 300)),
    st.tuples(st.just("join"), st.just(0), st.just(0)),
    st.tuples(st.just("leave"), st.just(0), st.just(0)),
    st.tuples(st.just("member-commit"), st.integers(0, 1), st.integers(0, 40)),
    st.tuples(st.just("truncate"), st.integers(0, 1), st.integers(0, 30)),
    st.tuples(st.just("nothing"), st.just(0), st.just(0)),
)


@settings(max_examples=300, suppress_health_check=[HealthCheck.too_slow], deadline=None)
@given(st.lists(STEP, min_size=1, max_size=120), st.integers(1, 4))
async def test_adversarial_histories_never_rewind_never_leave_the_log_never_touch_a_member_group(
    steps: list[tuple[str, int, int]], cycles_per_step: int
) -> None:
    """One foreign step before each request of the sync: source commits (rewinds included), members
    of the target group joining, committing from their position and leaving, retention moving the log
    start. Every commit the coordinator takes from the sync is checked at its write: not below the
    group's committed offset, within the log (its start as the sync read it in that cycle: retention may
    delete more in between), and the coordinator refuses it while the group has members."""
    source, target = fakes()
    target.logs = {("A.t", 0): (0, 300), ("A.t", 1): (0, 300)}
    queue = list(steps)

    def adversary(api: str) -> None:
        if not queue:
            return
        kind, partition, value = queue.pop(0)
        tp = ("A.t", partition)
        if kind == "source":
            source.write("g", ("t", partition), value)
        elif kind == "join":
            target.members["g"] += 1
        elif kind == "leave" and target.members["g"]:
            target.members["g"] -= 1
        elif kind == "member-commit" and target.members["g"]:
            have = target.offsets.get("g", {}).get(tp, CommittedOffset(target.logs[tp][0])).offset
            target.write("g", tp, min(have + value, target.logs[tp][1]), who="member")
        elif kind == "truncate":
            start, end = target.logs[tp]
            target.logs[tp] = (min(end, start + value), end)

    source.before = target.before = adversary
    sync, _, _ = make_sync(source, target)
    while queue:
        for _ in range(cycles_per_step):
            await sync.cycle()
    assert target.violations == []


def test_a_broker_with_the_consumer_protocol_off_leaves_the_classic_answer_to_decide() -> None:
    """Kafka 3.7 to 3.9 answer ConsumerGroupDescribe with UNSUPPORTED_VERSION (35) per group unless the
    consumer protocol is turned on: a target of that age still takes an unknown or Empty group's offsets."""
    unsupported = DescribedGroup(35, None, "g", "", -1, "", ())
    assert resolve_group("g", ClassicEntry(0, "Dead", 0), unsupported).idle
    assert resolve_group("g", ClassicEntry(0, "Empty", 0), unsupported) == GroupView("g", "classic", "Empty")
    assert not resolve_group("g", ClassicEntry(0, "Stable", 1), unsupported).idle


@given(
    st.dictionaries(st.integers(0, 3), st.integers(0, 100)),
    st.dictionaries(st.integers(0, 3), st.integers(-1, 50)),
    st.dictionaries(st.integers(0, 3), st.integers(0, 200)),
)
def test_a_share_group_stands_at_its_start_or_at_an_end_whose_records_all_completed(
    starts: dict[int, int], lags: dict[int, int], ends: dict[int, int]
) -> None:
    position = effective_starts(
        {("t", p): o for p, o in starts.items()},
        {("t", p): o for p, o in lags.items()},
        {("t", p): o for p, o in ends.items()},
    )
    for (_, p), where in position.items():
        assert where >= starts[p]
        if where > starts[p]:  # only past records the broker counts as delivered: lag 0 up to that end
            assert lags.get(p) == 0 and where == ends[p]


async def test_a_caught_up_share_group_is_synced_to_the_end_it_completed() -> None:
    """Kafka keeps a share group's start offset behind records that completed delivery until it next
    acquires records; with lag 0 the group stands at the partition's end read before the describe."""
    source, target = fakes()
    source.logs = {("t", 0): (0, 200), ("t", 1): (0, 200)}
    source.share["s"] = {("t", 0): 0, ("t", 1): 0}
    source.share_lags["s"] = {("t", 0): 0, ("t", 1): 150}
    sync, _, _ = make_sync(source, target, groups=(), shares=("s",))
    await sync.cycle()  # learns the partitions: start offsets only
    assert target.share["s"] == {("A.t", 0): 0, ("A.t", 1): 0}
    await sync.cycle()
    assert target.share["s"] == {("A.t", 0): 200, ("A.t", 1): 0}
    target.share_lags["s"] = {("A.t", 0): 0}  # the target's own position counts the same way
    target.logs[("A.t", 1)] = (0, 1000)
    source.share["s"][("t", 1)] = 50
    await sync.cycle()
    assert target.share["s"] == {("A.t", 0): 200, ("A.t", 1): 50}
