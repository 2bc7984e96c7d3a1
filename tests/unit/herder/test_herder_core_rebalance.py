"""HerderCore after a round: joining, catching up with the config topic, revocations, delays.

Mirrors Java's ``DistributedHerderTest``: ``testJoinAssignment``, ``testRebalance``,
``testIncrementalCooperativeRebalanceForNewMember`` / ``...ForExistingMember`` / ``...WithDelay``,
``testRevoke`` / ``testIncompleteRebalanceBeforeRevoke``, ``testJoinLeaderCatchUpFails``, and
``DistributedHerder.handleRebalanceCompleted`` / ``startWork`` / ``readConfigToEnd``. The core is
driven alone with a manual clock (``tests/herder_core_fakes.py``).
"""

from __future__ import annotations

import pytest

from pyconnect.errors import NotLeaderError, RebalanceNeededError
from pyconnect.herder.core import IDLE_WAIT_S, CoreSettings
from pyconnect.herder.effects import (
    DeleteTopicStatus,
    DropAssignment,
    GenerateTaskConfigs,
    PutStatus,
    ReadConfigToEnd,
    Rebalance,
    Sleep,
    StartConnector,
    StartTask,
)
from pyconnect.protocol.internal_records import (
    ConnectorStatus,
    State,
    TargetState,
    TaskStatus,
    TopicStatus,
)
from tests.herder_core_fakes import (
    CONN1,
    CONN2,
    LEADER_URL,
    WORKER_ID,
    ConfigLog,
    CoreHarness,
    Runner,
    connector_config,
    round_,
    task,
    task_configs,
)


def two_connectors() -> CoreHarness:
    return CoreHarness(log=ConfigLog().with_connector(CONN1, 3).with_connector(CONN2, 2))


def start_connector(name: str, target: TargetState = TargetState.STARTED) -> StartConnector:
    return StartConnector(name, connector_config(name), target)


def start_task(connector: str, number: int, target: TargetState = TargetState.STARTED) -> StartTask:
    return StartTask(
        task(connector, number), connector_config(connector), task_configs(connector, 3)[number], target
    )


# -- joining ---------------------------------------------------------------------------------------


def test_first_step_asks_for_a_round_and_nothing_else() -> None:
    h = two_connectors()
    assert h.step(requests_waiting=True) == [Rebalance()]
    assert not h.core.ready


def test_leader_starts_its_assigned_connectors_then_its_tasks_in_assignment_order() -> None:
    h = two_connectors()
    effects = h.join(
        round_(
            offset=h.log.offset,
            connectors=(CONN2, CONN1),
            tasks=(task(CONN1, 2), task(CONN1, 0), task(CONN2, 1)),
        )
    )
    assert effects == [
        start_connector(CONN2),
        start_connector(CONN1),
        start_task(CONN1, 2),
        start_task(CONN1, 0),
        StartTask(task(CONN2, 1), connector_config(CONN2, 3), task_configs(CONN2, 2)[1], TargetState.STARTED),
    ]
    assert (h.core.generation, h.core.is_leader, h.core.leader_url) == (1, True, LEADER_URL)
    h.core.require_leader()


def test_follower_starts_its_work_and_is_refused_leader_only_writes() -> None:
    h = two_connectors()
    effects = h.join(
        round_(3, leader=False, offset=h.log.offset, connectors=(CONN1,), tasks=(task(CONN2, 0),))
    )
    assert [type(e) for e in effects] == [StartConnector, StartTask]
    assert h.core.generation == 3 and not h.core.is_leader
    with pytest.raises(NotLeaderError) as raised:
        h.core.require_leader()
    assert raised.value.forward_url == LEADER_URL


def test_before_any_round_leader_only_writes_need_a_rebalance() -> None:
    h = two_connectors()
    with pytest.raises(RebalanceNeededError):
        h.core.require_leader()


def test_started_connector_generates_task_configs_and_then_the_worker_is_ready() -> None:
    """``testJoinAssignment``: after the start, the connector's task configs are generated once."""
    h = two_connectors()
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1,), tasks=(task(CONN1, 0),))))
    assert not h.core.ready
    assert h.step() == [GenerateTaskConfigs(CONN1, 3)]
    assert h.step() == []
    assert h.core.ready


def test_a_later_round_does_not_start_work_that_already_runs() -> None:
    """``testRebalance``: a task kept across rounds is started once; a reassigned connector again."""
    h = two_connectors()
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1,), tasks=(task(CONN1, 0),))))
    h.settle()
    del h.work.connectors[CONN1]  # revoked (and stopped by the loop) before the second round
    h.core.request_rejoin("test")
    effects = h.join(round_(2, offset=h.log.offset, connectors=(CONN1,), tasks=(task(CONN1, 0),)))
    assert effects == [start_connector(CONN1)]


def test_paused_connector_starts_paused_and_generates_no_task_configs() -> None:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1, target=TargetState.PAUSED))
    effects = h.join(round_(offset=h.log.offset, connectors=(CONN1,), tasks=(task(CONN1, 0),)))
    assert effects == [
        start_connector(CONN1, TargetState.PAUSED),
        StartTask(task(CONN1, 0), connector_config(CONN1), task_configs(CONN1, 1)[0], TargetState.PAUSED),
    ]
    h.perform(effects)
    assert h.step() == []


def test_leader_tombstones_statuses_of_deleted_connectors_and_of_tasks_beyond_the_count() -> None:
    """``onAssigned`` -> ``updateDeletedConnectorStatus`` / ``updateDeletedTaskStatus`` (leader only)."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 2))
    h.statuses.set_connector(CONN1, State.RUNNING)
    h.statuses.set_task(task(CONN1, 0), State.RUNNING)
    h.statuses.set_task(task(CONN1, 2), State.RUNNING)  # from a time it had three tasks
    h.statuses.set_connector("gone", State.RUNNING)
    h.statuses.set_task(task("gone", 0), State.FAILED)
    h.statuses.topics["gone"] = [TopicStatus("t1", "gone", 0, 5)]
    effects = h.join(round_(4, offset=h.log.offset))
    assert effects == [
        PutStatus(TaskStatus(task(CONN1, 2), State.DESTROYED, WORKER_ID, 4)),
        PutStatus(TaskStatus(task("gone", 0), State.DESTROYED, WORKER_ID, 4)),
        DeleteTopicStatus("gone", "t1"),
        PutStatus(ConnectorStatus("gone", State.DESTROYED, WORKER_ID, 4)),
    ]


def test_follower_leaves_stale_statuses_to_the_leader() -> None:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 2))
    h.statuses.set_connector("gone", State.RUNNING)
    assert h.join(round_(leader=False, offset=h.log.offset)) == []


# -- catching up with the config topic -----------------------------------------------------------


def behind_by_one_connector() -> tuple[CoreHarness, int]:
    """A log holding CONN1; the round was computed after CONN2 was also written (3 records later)."""
    h = CoreHarness(
        CoreSettings.from_worker_config(
            {"worker.sync.timeout.ms": 5000, "worker.unsync.backoff.ms": 1000}, WORKER_ID
        ),
        log=ConfigLog().with_connector(CONN1, 1),
    )
    return h, h.log.offset + 3


def test_assignment_ahead_of_the_snapshot_reads_the_config_topic_before_starting_anything() -> None:
    h, offset = behind_by_one_connector()
    assert h.join(round_(offset=offset, connectors=(CONN1, CONN2), tasks=(task(CONN2, 0),))) == [
        ReadConfigToEnd(5.0)
    ]
    h.log.with_connector(CONN2, 1)
    assert h.log.offset == offset
    effects = h.config_read()
    assert effects == [
        start_connector(CONN1),
        start_connector(CONN2),
        StartTask(task(CONN2, 0), connector_config(CONN2), task_configs(CONN2, 1)[0], TargetState.STARTED),
    ]


def test_catch_up_timeout_backs_off_and_rejoins_without_starting_work() -> None:
    """``readConfigToEnd``: on timeout leave, back off ``worker.unsync.backoff.ms``, rejoin."""
    h, offset = behind_by_one_connector()
    assert h.join(round_(offset=offset, connectors=(CONN1,))) == [ReadConfigToEnd(5.0)]
    assert h.config_read(timed_out=True) == [Sleep(1.0)]
    assert h.step() == [Rebalance()]
    # The next round is applied normally once the topic was read.
    h.log.with_connector(CONN2, 1)
    assert h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1,))) == [start_connector(CONN1)]


def test_reading_past_the_assignment_offset_rejoins_without_starting_work() -> None:
    """``handleRebalanceCompleted``: a snapshot *past* the assignment's offset forces a rebalance."""
    h, offset = behind_by_one_connector()
    assert h.join(round_(offset=offset, connectors=(CONN1,))) == [ReadConfigToEnd(5.0)]
    h.log.with_connector(CONN2, 1)
    h.log.put_target(CONN2, TargetState.PAUSED)
    assert h.log.offset > offset
    assert h.config_read() == []
    assert h.step() == [Rebalance()]


def test_snapshot_already_past_the_assignment_rejoins_at_once() -> None:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    assert h.join(round_(offset=h.log.offset - 1, connectors=(CONN1,))) == []
    assert h.step() == [Rebalance()]


def test_failed_assignment_reads_to_the_end_and_rejoins() -> None:
    """``testJoinLeaderCatchUpFails``: CONFIG_MISMATCH -> read the config topic, rejoin, start nothing."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    assert h.join(round_(offset=h.log.offset, connectors=(CONN1,), failed=True)) == [ReadConfigToEnd(3.0)]
    assert h.config_read() == []
    assert h.step() == [Rebalance()]
    assert h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1,))) == [start_connector(CONN1)]


def test_failed_assignment_whose_read_times_out_backs_off_before_rejoining() -> None:
    """``testJoinLeaderCatchUpFails``: the leader's read to the end times out -> it backs off
    ``worker.unsync.backoff.ms`` (Java's ``readConfigToEnd`` -> ``backoff``) before the next round."""
    h = CoreHarness(CoreSettings(WORKER_ID, unsync_backoff_s=0.3), log=ConfigLog().with_connector(CONN1, 1))
    assert h.join(round_(offset=h.log.offset, failed=True)) == [ReadConfigToEnd(3.0)]
    assert h.config_read(timed_out=True) == [Sleep(0.3)]
    assert h.step() == [Rebalance()]


def test_incomplete_round_before_a_revocation_then_the_revocation_and_reassignment() -> None:
    """``testIncompleteRebalanceBeforeRevoke``: a round whose offset the worker cannot reach starts
    nothing and rejoins; the next round revokes CONN1 (second round requested at once); the third
    gives it back and it is started again."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    offset = h.log.offset
    h.perform(h.join(round_(offset=offset, connectors=(CONN1,), tasks=(task(CONN1, 0),))))
    h.settle()

    h.core.request_rejoin("test")
    assert h.join(round_(2, offset=offset + 1)) == [ReadConfigToEnd(3.0)]
    assert h.config_read() == []  # read "to the end" but still behind
    assert h.step() == [Rebalance()]

    h.log.put_target(CONN1, TargetState.STARTED)  # the record the round counted (no change)
    del h.work.connectors[CONN1]  # revoked and stopped by the loop
    h.core.revoked([CONN1], [])
    assert h.rebalanced(round_(3, offset=offset + 1, tasks=(task(CONN1, 0),), revoked=True)) == []
    assert h.step() == [Rebalance()]
    assert h.rebalanced(round_(4, offset=offset + 1, connectors=(CONN1,), tasks=(task(CONN1, 0),))) == [
        start_connector(CONN1)
    ]


# -- revocations ----------------------------------------------------------------------------------


def test_revocation_requests_the_second_cooperative_round_at_once() -> None:
    """``testIncrementalCooperativeRebalanceForExistingMember``."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1,), tasks=(task(CONN1, 0),))))
    h.settle()
    h.work.connectors.clear()
    h.work.tasks.clear()
    h.core.revoked([CONN1], [task(CONN1, 0)])
    h.core.request_rejoin("a member joined")
    assert h.join(round_(2, offset=h.log.offset, revoked=True)) == []
    assert h.step(requests_waiting=True) == [Rebalance()]
    assert h.rebalanced(round_(3, offset=h.log.offset)) == []
    assert h.step() == []


def test_revocation_with_new_work_starts_it_and_still_rejoins() -> None:
    h = two_connectors()
    h.work.connectors[CONN1] = Runner()
    effects = h.join(round_(offset=h.log.offset, connectors=(CONN1, CONN2), revoked=True))
    assert effects == [start_connector(CONN2)]
    assert h.step() == [Rebalance()]


def test_new_member_gets_nothing_first_then_its_assignment() -> None:
    """``testIncrementalCooperativeRebalanceForNewMember``."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    assert h.join(round_(offset=h.log.offset)) == []
    assert h.step() == []
    h.core.request_rejoin("the leader assigns the new member")
    effects = h.join(round_(2, offset=h.log.offset, connectors=(CONN1,), tasks=(task(CONN1, 0),)))
    assert [type(e) for e in effects] == [StartConnector, StartTask]


def test_revoked_connector_is_not_reconfigured_any_more() -> None:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1,))))
    h.core.reconfiguration_requested(CONN1, h.now)
    h.core.revoked([CONN1], [])
    assert h.step() == []
    assert h.core.wait_time(h.now) == IDLE_WAIT_S


def test_lost_coordinator_drops_the_assignment_and_rejoins() -> None:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1,))))
    h.settle()
    effects = h.step(coordinator_lost=True, holding=True)
    assert [type(e) for e in effects] == [DropAssignment]
    assert h.step(coordinator_lost=True, holding=False) == [Rebalance()]


# -- delayed rebalances ---------------------------------------------------------------------------


def test_delayed_rebalance_happens_only_once_the_clock_reaches_the_delay() -> None:
    """``testIncrementalCooperativeRebalanceWithDelay``: the assignment starts TASK2 and carries a
    10 s delay for a member that went missing; the worker rejoins when (and only when) it expires."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 3))
    effects = h.join(round_(offset=h.log.offset, tasks=(task(CONN1, 2),), delay_ms=10_000))
    assert effects == [start_task(CONN1, 2)]
    h.perform(effects)
    assert h.step() == []
    assert h.core.wait_time(h.now) == IDLE_WAIT_S
    h.advance(9.9)
    assert h.step() == []
    assert h.core.wait_time(h.now) == pytest.approx(0.1)
    h.advance(0.1)
    assert h.core.wait_time(h.now) == 0.0
    assert h.step() == [Rebalance()]
    # The round after the delay carries none: no further rejoin however long the worker waits.
    assert h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1,), tasks=(task(CONN1, 2),))) == [
        start_connector(CONN1)
    ]
    h.advance(60)
    assert h.core.wait_time(h.now) == IDLE_WAIT_S
    assert not h.core.rejoin_due(h.now)


def test_short_delay_shortens_the_wait() -> None:
    h = CoreHarness()
    h.join(round_(offset=h.log.offset, delay_ms=300))
    assert h.step() == []
    assert h.core.wait_time(h.now) == pytest.approx(0.3)
    h.advance(0.299)
    assert not h.core.rejoin_due(h.now)
    h.advance(0.001)
    assert h.core.rejoin_due(h.now)
