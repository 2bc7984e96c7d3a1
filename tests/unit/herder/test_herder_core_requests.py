"""HerderCore and requests: KIP-745 restart requests read from the config topic, and queued REST
writes that run only once the group is settled.

Mirrors Java's ``DistributedHerderTest``: ``testDoRestartConnectorAndTasksEmptyPlan`` /
``...NoAssignments`` / ``...OnlyConnector`` / ``...OnlyTasks`` / ``...Both``,
``preserveHighestImpactRestartRequest``, ``processRestartRequestsDequeue``, and
``DistributedHerder.doRestartConnectorAndTasks`` / ``RestartRequest.shouldRestartConnector`` /
``shouldRestartTask``. Java answers a write during a rebalance with 409 (``checkRebalanceNeeded``);
here it waits in the queue until the round is applied (``RunRequests``).
"""

from __future__ import annotations

import pytest

from pyconnect.herder.core import restart_impact
from pyconnect.herder.effects import (
    Effect,
    GenerateTaskConfigs,
    Rebalance,
    Report,
    RunRequests,
    SetTargetState,
    StartConnector,
    StartTask,
    StopConnector,
    StopTasks,
)
from pyconnect.protocol.internal_records import RestartRequest, State, TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
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

T0, T1, T2 = task(CONN1, 0), task(CONN1, 1), task(CONN1, 2)


def holding_conn1_and_two_tasks(
    connector: State = State.RUNNING, *failed_tasks: ConnectorTaskId
) -> CoreHarness:
    """This worker runs CONN1 and its tasks 0 and 1; task 2 runs elsewhere. Statuses as given."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 3))
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1,), tasks=(T0, T1))))
    h.settle()
    h.statuses.set_connector(CONN1, connector)
    for t in (T0, T1, T2):
        h.statuses.set_task(t, State.FAILED if t in failed_tasks else State.RUNNING)
    return h


def restart(h: CoreHarness, only_failed: bool, include_tasks: bool) -> list[Effect]:
    h.events(h.log.put_restart(RestartRequest(CONN1, only_failed=only_failed, include_tasks=include_tasks)))
    return h.step()


def restarted_connector() -> list[Effect]:
    return [
        StopConnector(CONN1),
        Report(CONN1, State.RESTARTING),
        StartConnector(CONN1, connector_config(CONN1), TargetState.STARTED),
    ]


def restarted_tasks(*tasks: ConnectorTaskId) -> list[Effect]:
    configs = task_configs(CONN1, 3)
    return [
        StopTasks(tasks),
        *(Report(t, State.RESTARTING) for t in tasks),
        *(StartTask(t, connector_config(CONN1), configs[t.task], TargetState.STARTED) for t in tasks),
    ]


# -- restart requests (KIP-745) ---------------------------------------------------------------------


def test_restart_of_the_connector_only_restarts_it_whatever_its_state() -> None:
    h = holding_conn1_and_two_tasks(State.RUNNING, T0)
    assert restart(h, only_failed=False, include_tasks=False) == restarted_connector()


def test_restart_with_tasks_restarts_the_connector_and_the_tasks_this_worker_runs() -> None:
    """``testDoRestartConnectorAndTasksBoth`` / ``...OnlyTasks``: task 2 runs elsewhere; its own worker
    restarts it."""
    h = holding_conn1_and_two_tasks()
    assert restart(h, only_failed=False, include_tasks=True) == restarted_connector() + restarted_tasks(
        T0, T1
    )


def test_restart_of_only_failed_instances_leaves_a_running_connector_alone() -> None:
    h = holding_conn1_and_two_tasks(State.RUNNING)
    assert restart(h, only_failed=True, include_tasks=False) == []


def test_restart_of_only_failed_instances_restarts_a_failed_connector() -> None:
    h = holding_conn1_and_two_tasks(State.FAILED, T1)
    assert restart(h, only_failed=True, include_tasks=False) == restarted_connector()


def test_restart_of_only_failed_instances_with_tasks_restarts_just_the_failed_task() -> None:
    h = holding_conn1_and_two_tasks(State.RUNNING, T1, T2)
    assert restart(h, only_failed=True, include_tasks=True) == restarted_tasks(T1)


def test_restart_marks_the_work_restarting_only_after_stopping_it() -> None:
    """``doRestartConnectorAndTasks`` stops first, then ``onRestart`` writes RESTARTING: the stop's own
    UNASSIGNED report must not overwrite it."""
    h = holding_conn1_and_two_tasks()
    effects = restart(h, only_failed=False, include_tasks=True)
    assert effects.index(StopConnector(CONN1)) < effects.index(Report(CONN1, State.RESTARTING))
    assert effects.index(StopTasks((T0, T1))) < effects.index(Report(T0, State.RESTARTING))


def test_restart_without_a_connector_status_does_nothing() -> None:
    """``testDoRestartConnectorAndTasksEmptyPlan``."""
    h = holding_conn1_and_two_tasks()
    del h.statuses.connector_states[CONN1]
    assert restart(h, only_failed=False, include_tasks=True) == []


def test_restart_of_work_held_elsewhere_does_nothing_here() -> None:
    """``testDoRestartConnectorAndTasksNoAssignments``."""
    h = holding_conn1_and_two_tasks()
    h.statuses.set_connector(CONN2, State.FAILED)
    h.events(h.log.put_restart(RestartRequest(CONN2, only_failed=False, include_tasks=True)))
    assert h.step() == []


def test_restart_of_an_assigned_task_that_failed_to_start_starts_it_again() -> None:
    """Java restarts the tasks of its *assignment* (``assignment.tasks().contains``), also one whose
    start failed and that therefore does not run."""
    h = holding_conn1_and_two_tasks(State.RUNNING, T1)
    del h.work.tasks[T1]  # its start failed: FAILED, not running
    assert restart(h, only_failed=True, include_tasks=True) == restarted_tasks(T1)


def test_only_the_highest_impact_request_per_connector_is_kept() -> None:
    """``preserveHighestImpactRestartRequest``: (connector only) is overwritten by (connector and
    tasks); (only failed connector) is then ignored."""
    h = holding_conn1_and_two_tasks()
    for only_failed, include_tasks in ((False, False), (False, True), (True, False)):
        h.events(
            h.log.put_restart(RestartRequest(CONN1, only_failed=only_failed, include_tasks=include_tasks))
        )
    assert h.step() == restarted_connector() + restarted_tasks(T0, T1)
    assert h.step() == []  # the queue was emptied


@pytest.mark.parametrize(
    ("only_failed", "include_tasks", "rank"),
    [(True, False, 0), (True, True, 1), (False, False, 2), (False, True, 3)],
)
def test_restart_impact_is_javas_rank(only_failed: bool, include_tasks: bool, rank: int) -> None:
    assert restart_impact(RestartRequest(CONN1, only_failed=only_failed, include_tasks=include_tasks)) == rank


def test_restart_requests_of_several_connectors_are_all_processed() -> None:
    """``processRestartRequestsDequeue``."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1).with_connector(CONN2, 1))
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1, CONN2))))
    h.settle()
    for name in (CONN1, CONN2):
        h.statuses.set_connector(name, State.RUNNING)
        h.events(h.log.put_restart(RestartRequest(name)))
    effects = h.step()
    assert [e.connector for e in effects if isinstance(e, StartConnector)] == [CONN1, CONN2]
    h.perform(effects)
    assert h.settle() == [[GenerateTaskConfigs(CONN1, 3), GenerateTaskConfigs(CONN2, 3)]]


# -- queued writes -------------------------------------------------------------------------------------


def test_writes_queued_before_the_first_round_wait_for_it() -> None:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    assert h.step(requests_waiting=True) == [Rebalance()]
    effects = h.rebalanced(round_(offset=h.log.offset, connectors=(CONN1,)))
    h.perform(effects)
    assert h.step(requests_waiting=True) == [RunRequests()]


def test_writes_arriving_while_a_rejoin_is_due_wait_for_the_round() -> None:
    h = holding_conn1_and_two_tasks()
    h.core.request_rejoin("a member joined")
    assert h.step(requests_waiting=True) == [Rebalance()]
    h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1,), tasks=(T0, T1)))
    assert h.step(requests_waiting=True) == [RunRequests()]


def test_writes_wait_while_the_member_needs_a_rejoin() -> None:
    h = holding_conn1_and_two_tasks()
    assert h.step(requests_waiting=True, member_needs_rejoin=True) == [Rebalance()]
    assert h.step(requests_waiting=True) == [RunRequests()]


def test_writes_wait_for_the_round_a_new_connector_asks_for() -> None:
    """A config change while not yet rebalanced: the write runs against the new assignment."""
    h = holding_conn1_and_two_tasks()
    h.events(h.log.put_connector(CONN2))
    assert h.step(requests_waiting=True) == [Rebalance()]
    effects = h.rebalanced(round_(2, offset=h.log.offset, connectors=(CONN1, CONN2), tasks=(T0, T1)))
    h.perform(effects)
    assert h.step(requests_waiting=True) == [RunRequests()]


def test_writes_wait_for_a_second_cooperative_round() -> None:
    h = holding_conn1_and_two_tasks()
    h.core.request_rejoin("test")
    h.join(round_(2, offset=h.log.offset, connectors=(CONN1,), tasks=(T0, T1), revoked=True))
    assert h.step(requests_waiting=True) == [Rebalance()]


def test_writes_run_while_a_delayed_rebalance_is_not_yet_due() -> None:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    h.join(round_(offset=h.log.offset, delay_ms=5_000))
    assert h.step(requests_waiting=True) == [RunRequests()]
    h.advance(5)
    assert h.step(requests_waiting=True) == [Rebalance()]


def test_restarts_and_config_changes_of_a_step_come_before_queued_writes() -> None:
    h = holding_conn1_and_two_tasks()
    h.events(h.log.put_restart(RestartRequest(CONN1)))
    h.events(h.log.put_target(CONN1, TargetState.PAUSED))
    assert h.step(requests_waiting=True) == [SetTargetState(CONN1, TargetState.PAUSED)]
    assert h.step(requests_waiting=True) == [
        StopConnector(CONN1),
        Report(CONN1, State.RESTARTING),
        StartConnector(CONN1, connector_config(CONN1), TargetState.PAUSED),
    ]
    assert h.step(requests_waiting=True) == [RunRequests()]
