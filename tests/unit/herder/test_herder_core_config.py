"""HerderCore and config-topic events: new, updated and deleted connectors, target states, task
configs, logger levels, and config changes that arrive while the worker is not yet rebalanced.

Mirrors Java's ``DistributedHerderTest``: ``testConnectorConfigAdded``,
``testConnectorConfigDetectedAfterLeaderAlreadyAssigned``, ``testConnectorConfigUpdate``,
``testConnectorPaused`` / ``testConnectorResumed`` / ``testConnectorStopped``,
``testConnectorPausedRunningTaskOnly`` / ``testConnectorResumedRunningTaskOnly``,
``testUnknownConnectorPaused``, ``testTaskConfigAdded``, and ``DistributedHerder.ConfigUpdateListener``
with ``processConnectorConfigUpdates`` / ``processTargetStateChanges`` /
``processTaskConfigUpdatesWithIncrementalCooperative``. Events come from real records applied by the
real ``ConfigStateMachine`` (``tests/herder_core_fakes.py``).
"""

from __future__ import annotations

from pyconnect.herder.effects import (
    ApplyLoggerLevel,
    GenerateTaskConfigs,
    ReadConfigToEnd,
    Rebalance,
    RunRequests,
    SetTargetState,
    StartConnector,
    StartTask,
    StopConnector,
    StopTasks,
)
from pyconnect.protocol.internal_records import TargetState
from pyconnect.stores.config_events import (
    ConnectorConfigUpdated,
    TargetStateChanged,
    TaskConfigsCommitted,
)
from tests.herder_core_fakes import (
    CONN1,
    CONN2,
    ConfigLog,
    CoreHarness,
    connector_config,
    round_,
    task,
    task_configs,
)


def running(conn1_tasks: int = 2, *, tasks_here: bool = True, connector_here: bool = True) -> CoreHarness:
    """A leader that joined, runs CONN1 (and its tasks) and has settled."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, conn1_tasks))
    tasks = [task(CONN1, i) for i in range(conn1_tasks)] if tasks_here else []
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1,) if connector_here else (), tasks=tasks)))
    h.settle()
    return h


# -- connectors created, updated, deleted ----------------------------------------------------------


def test_new_connector_requests_a_round_that_starts_it() -> None:
    """``testConnectorConfigAdded``."""
    h = CoreHarness()
    h.join(round_(offset=h.log.offset))
    assert h.step() == []
    events = h.log.put_connector(CONN1)
    assert events == [ConnectorConfigUpdated(CONN1, h.log.offset)]
    assert h.events(events) == []
    assert h.step(requests_waiting=True) == [Rebalance()]
    effects = h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1,)))
    assert effects == [StartConnector(CONN1, connector_config(CONN1), TargetState.STARTED)]
    h.perform(effects)
    assert h.step() == [GenerateTaskConfigs(CONN1, 3)]
    assert h.step() == []


def test_connector_already_assigned_by_the_round_its_event_asked_for_is_started_once() -> None:
    """``testConnectorConfigDetectedAfterLeaderAlreadyAssigned``: the connector is started once, not
    also restarted as "updated" by the step after the round."""
    h = CoreHarness()
    h.join(round_(offset=h.log.offset))
    h.events(h.log.put_connector(CONN1))
    h.perform(h.join(round_(2, offset=h.log.offset, connectors=(CONN1,))))
    assert h.settle() == [[GenerateTaskConfigs(CONN1, 3)]]


def test_new_connector_read_while_catching_up_with_the_round_that_counts_it_needs_no_other_round() -> None:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    h.join(round_(offset=h.log.offset))
    h.core.request_rejoin("test")
    offset = h.log.offset + 1
    assert h.join(round_(2, offset=offset, connectors=(CONN2,))) == [ReadConfigToEnd(3.0)]
    h.events(h.log.put_connector(CONN2))  # read by the refresh, before config_read
    assert h.config_read() == [StartConnector(CONN2, connector_config(CONN2), TargetState.STARTED)]
    assert not h.core.rejoin_due(h.now)


def test_round_computed_before_a_new_connector_starts_nothing_and_is_followed_by_another() -> None:
    """A config change while not yet rebalanced: the round that answers the rejoin still carries the
    old config offset -> no work is started from it (Java: offsets differ, force a rebalance)."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    old = h.log.offset
    h.join(round_(offset=old))
    h.events(h.log.put_connector(CONN2))
    assert h.step() == [Rebalance()]
    assert h.rebalanced(round_(2, offset=old, connectors=(CONN1, CONN2))) == []
    assert h.step() == [Rebalance()]
    effects = h.rebalanced(round_(3, offset=h.log.offset, connectors=(CONN1, CONN2)))
    assert [e.connector for e in effects if isinstance(e, StartConnector)] == [CONN1, CONN2]


def test_updated_connector_running_here_is_restarted_with_its_new_config_without_a_round() -> None:
    """``testConnectorConfigUpdate``."""
    h = running()
    new_config = connector_config(CONN1, 2, topic="other")
    h.events(h.log.put_connector(CONN1, new_config))
    assert h.step() == [StopConnector(CONN1), StartConnector(CONN1, new_config, TargetState.STARTED)]
    h.perform([StopConnector(CONN1), StartConnector(CONN1, new_config, TargetState.STARTED)])
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    assert h.step() == []


def test_updated_connector_running_on_another_worker_changes_nothing_here() -> None:
    """``onConnectorConfigUpdate``: a connector already in the config state is only bounced by its
    owner; other workers neither restart anything nor rebalance."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1).with_connector(CONN2, 1))
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1,))))
    h.settle()
    h.events(h.log.put_connector(CONN2, connector_config(CONN2, 5)))
    assert h.step(requests_waiting=True) == [RunRequests()]
    assert not h.core.rejoin_due(h.now)


def test_deleted_connector_asks_for_a_round_and_nothing_restarts_it() -> None:
    h = running()
    h.events(h.log.remove_connector(CONN1))
    assert h.step() == [Rebalance()]
    # The round revokes it (the loop stops revoked work before applying the round).
    h.work.connectors.clear()
    h.work.tasks.clear()
    h.core.revoked([CONN1], [task(CONN1, 0), task(CONN1, 1)])
    assert h.rebalanced(round_(2, offset=h.log.offset)) == []
    assert h.step() == []


def test_deleted_connector_still_held_after_the_round_is_stopped_not_restarted() -> None:
    h = running(tasks_here=False)
    h.events(h.log.remove_connector(CONN1))
    assert h.step() == [Rebalance()]
    assert h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1,))) == []
    assert h.step() == [StopConnector(CONN1)]


# -- target states ----------------------------------------------------------------------------------


def test_paused_connector_and_its_tasks_are_paused_without_a_round() -> None:
    """``testConnectorPaused``."""
    h = running()
    h.events(h.log.put_target(CONN1, TargetState.PAUSED))
    assert h.step() == [SetTargetState(CONN1, TargetState.PAUSED)]
    assert h.step() == []


def test_resumed_connector_is_resumed_and_asked_for_task_configs() -> None:
    """``testConnectorResumed``: a connector resumed here may have been reconfigured while paused."""
    h = running()
    h.events(h.log.put_target(CONN1, TargetState.PAUSED))
    h.step()
    h.events(h.log.put_target(CONN1, TargetState.STARTED))
    assert h.step() == [SetTargetState(CONN1, TargetState.STARTED)]
    assert h.step() == [GenerateTaskConfigs(CONN1, 3)]


def test_resumed_tasks_of_a_connector_running_elsewhere_generate_no_task_configs() -> None:
    """``testConnectorResumedRunningTaskOnly``."""
    h = running(connector_here=False)
    h.events(h.log.put_target(CONN1, TargetState.PAUSED))
    assert h.step() == [SetTargetState(CONN1, TargetState.PAUSED)]
    h.events(h.log.put_target(CONN1, TargetState.STARTED))
    assert h.step() == [SetTargetState(CONN1, TargetState.STARTED)]
    assert h.step() == []


def test_stopped_connector_is_stopped_and_its_zero_task_commit_asks_for_a_round() -> None:
    """``testConnectorStopped`` / ``testStopConnector``: the leader writes zero task configs and STOPPED;
    every worker rebalances on the commit, which revokes the tasks."""
    h = running()
    events = h.log.put_tasks(CONN1, []) + h.log.put_target(CONN1, TargetState.STOPPED)
    assert events == [
        TaskConfigsCommitted(CONN1, (), h.log.offset - 1),
        TargetStateChanged(CONN1, h.log.offset),
    ]
    h.events(events)
    assert h.step() == [Rebalance()]
    assert h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1,))) == []
    assert h.step() == [SetTargetState(CONN1, TargetState.STOPPED)]


def test_target_state_of_an_unknown_connector_waits_for_its_connector() -> None:
    """``testUnknownConnectorPaused``: nothing happens for a connector that does not exist; a target
    state written before its connector (KIP-980 ``initial_state``) is the one it starts in."""
    h = running()
    assert h.log.put_target(CONN2, TargetState.PAUSED) == []  # the reader raises no event
    assert h.step() == []
    h.events(h.log.put_connector(CONN2))
    assert h.step() == [Rebalance()]
    effects = h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1, CONN2)))
    assert effects == [StartConnector(CONN2, connector_config(CONN2), TargetState.PAUSED)]


def test_config_update_and_pause_read_together_pause_the_tasks_too() -> None:
    """Java processes connector config updates, then target state changes: the restarted connector
    starts paused, and ``worker.setTargetState`` still pauses the connector's tasks on this worker."""
    h = running()
    new_config = connector_config(CONN1, 2, topic="other")
    h.events(h.log.put_connector(CONN1, new_config) + h.log.put_target(CONN1, TargetState.PAUSED))
    assert h.step() == [
        StopConnector(CONN1),
        StartConnector(CONN1, new_config, TargetState.PAUSED),
        SetTargetState(CONN1, TargetState.PAUSED),
    ]


def test_config_update_and_pause_read_together_pause_tasks_of_a_connector_running_elsewhere() -> None:
    h = running(connector_here=False)
    h.events(h.log.put_connector(CONN1, connector_config(CONN1, 2, topic="other")))
    h.events(h.log.put_target(CONN1, TargetState.PAUSED))
    assert h.step() == [SetTargetState(CONN1, TargetState.PAUSED)]
    assert h.step() == []


# -- task configs ----------------------------------------------------------------------------------


def test_new_task_configs_stop_the_tasks_here_and_the_round_restarts_them() -> None:
    """``testTaskConfigAdded`` / ``stopReconfiguredTasks``: tasks with new configs are stopped, a round
    is requested, and the round starts them again with the new configs."""
    h = running()
    new_configs = [{"task.class": "VerifiableSourceTask", "id": f"new-{i}"} for i in range(2)]
    h.events(h.log.put_tasks(CONN1, new_configs))
    assert h.step() == [StopTasks((task(CONN1, 0), task(CONN1, 1)))]
    h.perform([StopTasks((task(CONN1, 0), task(CONN1, 1)))])
    assert h.step() == [Rebalance()]
    effects = h.rebalanced(
        round_(2, offset=h.log.offset, connectors=(CONN1,), tasks=(task(CONN1, 0), task(CONN1, 1)))
    )
    assert effects == [
        StartTask(task(CONN1, i), connector_config(CONN1), new_configs[i], TargetState.STARTED)
        for i in range(2)
    ]


def test_new_task_configs_of_a_connector_without_tasks_here_ask_for_a_round_before_anything_else() -> None:
    """``onTaskConfigUpdate`` sets ``needsReconfigRebalance`` on every worker: the next tick rejoins
    at once. The step that reads the commit must not report the worker idle, nor run queued writes
    before the round."""
    h = running(tasks_here=False)
    h.events(h.log.put_tasks(CONN1, task_configs(CONN1, 3)))
    assert h.step(requests_waiting=True) == [Rebalance()]
    assert h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1,))) == []
    assert h.step() == []


def test_tasks_started_from_a_snapshot_holding_the_new_configs_are_not_stopped_again() -> None:
    """Task configs read while catching up with the round that counts them: the tasks the round starts
    already run the new configs, so the commit neither stops them nor asks for another round."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    h.join(round_(offset=h.log.offset))
    h.core.request_rejoin("test")
    offset = h.log.offset + 3
    tasks = (task(CONN1, 0), task(CONN1, 1))
    assert h.join(round_(2, offset=offset, tasks=tasks)) == [ReadConfigToEnd(3.0)]
    h.events(h.log.put_tasks(CONN1, task_configs(CONN1, 2)))  # read by the refresh
    effects = h.config_read()
    assert effects == [
        StartTask(t, connector_config(CONN1), task_configs(CONN1, 2)[t.task], TargetState.STARTED)
        for t in tasks
    ]
    h.perform(effects)
    assert h.step() == []


# -- logger levels ---------------------------------------------------------------------------------


def test_cluster_logger_level_applies_at_once_without_a_step() -> None:
    """KIP-976 ``onLoggingLevelUpdate``: the level is set when the record is read."""
    h = running()
    assert h.events(h.log.put_logger_level("org.apache.kafka.connect", "DEBUG")) == [
        ApplyLoggerLevel("org.apache.kafka.connect", "DEBUG")
    ]
    assert h.step() == []
