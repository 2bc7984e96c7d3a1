"""REST writes as typed requests (pyconnect/herder/requests.py): what the core decides for each.

Mirrors Java's ``DistributedHerder``: leader-only writes (``putConnectorConfig``, ``deleteConnectorConfig``,
``stopConnector``, ``putTaskConfigs``, ``modifyConnectorOffsets``: ``NotLeaderException`` on a follower),
``restartConnector``/``restartTask`` (run where the work is assigned, else ``NotAssignedException`` from the
leader naming the owner; no RESTARTING status), ``restartConnectorAndTasks`` (KIP-745: the leader writes
the request and answers with the plan) and KIP-875's "must be STOPPED" check.
"""

from __future__ import annotations

import pytest

from pyconnect.errors import (
    AlreadyExistsError,
    BadRequestError,
    NotAssignedError,
    NotFoundError,
    NotLeaderError,
    RebalanceNeededError,
)
from pyconnect.herder import requests as rq
from pyconnect.herder.effects import (
    ModifyConnectorOffsets,
    RemoveConnectorConfig,
    Reply,
    RequireTaskRunning,
    StartConnector,
    StartTask,
    StopConnector,
    StopTasks,
    ValidateConnectorConfig,
    WriteConnectorConfig,
    WriteRestartRequest,
    WriteTargetState,
    WriteTaskConfigs,
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

T0, T1 = task(CONN1, 0), task(CONN1, 1)
OWNER = "http://owner:8083/"


def member(*, leader: bool) -> CoreHarness:
    """A worker that joined (as leader or follower) running CONN1 and its task 0; CONN1 has 2 tasks."""
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 2))
    h.perform(h.join(round_(leader=leader, offset=h.log.offset, connectors=(CONN1,), tasks=(T0,))))
    h.settle()
    return h


def decide(h: CoreHarness, request: rq.Request) -> list[object]:
    return list(rq.request_effects(h.core, request, h.log.snapshot(), h.statuses, h.work, lambda _: OWNER))


def test_the_leader_creates_and_replaces_connectors() -> None:
    h = member(leader=True)
    new = connector_config(CONN2)
    assert decide(h, rq.PutConnectorConfig(CONN2, new, False, TargetState.STOPPED)) == [
        WriteConnectorConfig(CONN2, new, TargetState.STOPPED),
        Reply(True),
    ]
    changed = connector_config(CONN1, 1)
    assert decide(h, rq.PutConnectorConfig(CONN1, changed, True, TargetState.PAUSED)) == [
        WriteConnectorConfig(CONN1, changed, None),  # KIP-980's initial state is for new ones only
        Reply(False),
    ]
    with pytest.raises(AlreadyExistsError, match=f"^Connector {CONN1} already exists$"):
        decide(h, rq.PutConnectorConfig(CONN1, changed, False))


@pytest.mark.parametrize(
    "request_",
    [
        rq.PutConnectorConfig(CONN2, connector_config(CONN2), True),
        rq.PatchConnectorConfig(CONN1, {"tasks.max": "1"}),
        rq.DeleteConnector(CONN1),
        rq.StopConnector(CONN1),
        rq.PutTaskConfigs(CONN1, ({"k": "v"},)),
        rq.ModifyOffsets(CONN1, None),
        rq.RestartConnector(CONN1, include_tasks=True, only_failed=False),
    ],
    ids=lambda r: type(r).__name__,
)
def test_a_follower_refuses_leader_only_writes_naming_the_leader(request_: rq.Request) -> None:
    h = member(leader=False)
    with pytest.raises(NotLeaderError) as raised:
        decide(h, request_)
    assert raised.value.forward_url == "http://leader:8083/"


def test_no_write_before_the_first_round() -> None:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 2))
    with pytest.raises(RebalanceNeededError):
        decide(h, rq.DeleteConnector(CONN1))


def test_a_patch_is_merged_validated_then_written() -> None:
    h = member(leader=True)
    merged = {**connector_config(CONN1), "tasks.max": "5", "extra": "x"}
    del merged["name"]
    assert decide(h, rq.PatchConnectorConfig(CONN1, {"tasks.max": "5", "extra": "x", "name": None})) == [
        ValidateConnectorConfig(CONN1, merged),
        WriteConnectorConfig(CONN1, merged, None),
        Reply(None),
    ]


def test_a_patch_validated_before_it_was_queued_is_not_validated_again_unless_the_config_moved() -> None:
    """The REST handler validates the merge off the loop; the loop validates only a merge that differs
    (the stored config changed while the request waited), so a blocking ``validate`` never holds it."""
    h = member(leader=True)
    merged = {**connector_config(CONN1), "tasks.max": "5"}
    patch = {"tasks.max": "5"}
    assert decide(h, rq.PatchConnectorConfig(CONN1, patch, dict(merged))) == [
        WriteConnectorConfig(CONN1, merged, None),
        Reply(None),
    ]
    stale = {**merged, "extra": "gone meanwhile"}
    assert decide(h, rq.PatchConnectorConfig(CONN1, patch, stale)) == [
        ValidateConnectorConfig(CONN1, merged),
        WriteConnectorConfig(CONN1, merged, None),
        Reply(None),
    ]


@pytest.mark.parametrize(
    ("request_", "message"),
    [
        (rq.PatchConnectorConfig("nope", {}), "Connector nope not found"),
        (rq.DeleteConnector("nope"), "Connector nope not found"),
        (rq.StopConnector("nope"), "Unknown connector nope"),
        (rq.RestartConnector("nope", include_tasks=False, only_failed=False), "Unknown connector: nope"),
        (rq.RestartTask(ConnectorTaskId("nope", 0)), "Unknown connector: nope"),
        (rq.RestartTask(task(CONN1, 7)), f"Unknown task: {CONN1}-7"),
        (rq.PutTaskConfigs("nope", ()), "Connector nope not found"),
        (rq.ModifyOffsets("nope", None), "Connector nope not found"),
    ],
    ids=lambda v: None if isinstance(v, str) else type(v).__name__,
)
def test_unknown_connectors_and_tasks_are_not_found_in_the_java_resource_wording(
    request_: rq.Request, message: str
) -> None:
    h = member(leader=True)
    with pytest.raises(NotFoundError, match=f"^{message}$"):
        decide(h, request_)


def test_stop_writes_empty_task_configs_then_the_stopped_state_and_reads_it_back() -> None:
    """Java's ``stopConnector`` refreshes its config snapshot after writing STOPPED: the next request
    (a follower's late task configs) must see the connector stopped, or it gives it tasks again."""
    h = member(leader=True)
    assert decide(h, rq.StopConnector(CONN1)) == [
        WriteTaskConfigs(CONN1, ()),
        WriteTargetState(CONN1, TargetState.STOPPED, read_back=True),
        Reply(None),
    ]
    assert decide(h, rq.DeleteConnector(CONN1)) == [RemoveConnectorConfig(CONN1), Reply(None)]


def test_a_plain_restart_runs_where_the_connector_runs_without_a_restarting_status() -> None:
    follower = member(leader=False)
    assert decide(follower, rq.RestartConnector(CONN1, include_tasks=False, only_failed=False)) == [
        StopConnector(CONN1),
        StartConnector(CONN1, connector_config(CONN1), TargetState.STARTED),
        Reply(None),
    ]
    configs = task_configs(CONN1, 2)
    assert decide(follower, rq.RestartTask(T0)) == [
        StopTasks((T0,)),
        StartTask(T0, connector_config(CONN1), configs[0], TargetState.STARTED),
        RequireTaskRunning(T0),
        Reply(None),
    ]


def test_work_held_elsewhere_is_not_assigned_here_on_the_leader_and_not_led_on_a_follower() -> None:
    leader, follower = member(leader=True), member(leader=False)
    with pytest.raises(NotAssignedError, match=f"^Task {CONN1}-1 is not assigned to this worker$") as raised:
        decide(leader, rq.RestartTask(T1))
    assert raised.value.forward_url == OWNER
    with pytest.raises(NotLeaderError):
        decide(follower, rq.RestartTask(T1))
    leader.work.connectors.clear()
    with pytest.raises(NotAssignedError, match=f"^Connector {CONN1} is not assigned to this worker$"):
        decide(leader, rq.RestartConnector(CONN1, include_tasks=False, only_failed=False))


def test_a_kip_745_restart_is_written_and_answered_with_its_plan() -> None:
    h = member(leader=True)
    request = rq.RestartConnector(CONN1, include_tasks=True, only_failed=True)
    with pytest.raises(NotFoundError, match=f"^Status for connector {CONN1} not found$"):
        decide(h, request)
    h.statuses.set_connector(CONN1, State.RUNNING)
    h.statuses.set_task(T0, State.FAILED)
    h.statuses.set_task(T1, State.RUNNING, worker="other:8083")
    effects = decide(h, request)
    assert effects[0] == WriteRestartRequest(RestartRequest(CONN1, only_failed=True, include_tasks=True))
    reply = effects[1]
    assert isinstance(reply, Reply) and isinstance(reply.value, rq.RestartAccepted)
    accepted = reply.value
    assert (accepted.connector, accepted.tasks) == (False, frozenset({T0}))
    # the reply keeps the statuses the plan saw, whatever the restart writes after it
    assert accepted.connector_status == h.statuses.get_connector(CONN1)
    assert accepted.task_statuses == tuple(h.statuses.get_all(CONN1))
    h.statuses.set_task(T0, State.UNASSIGNED)
    assert [t.state for t in accepted.task_statuses] == [State.FAILED, State.RUNNING]


def test_offsets_are_modified_only_for_a_stopped_connector_without_tasks() -> None:
    h = member(leader=True)
    with pytest.raises(BadRequestError, match="must be in the STOPPED state"):
        decide(h, rq.ModifyOffsets(CONN1, None))
    h.log.put_tasks(CONN1, [])
    h.log.put_target(CONN1, TargetState.STOPPED)
    pairs = (({"p": 1}, {"o": 2}), ({"p": 2}, None))
    stored = {k: v for k, v in connector_config(CONN1).items()}
    assert decide(h, rq.ModifyOffsets(CONN1, pairs)) == [ModifyConnectorOffsets(CONN1, stored, pairs)]


def test_task_configs_from_a_follower_are_written_by_the_leader() -> None:
    h = member(leader=True)
    assert decide(h, rq.PutTaskConfigs(CONN1, ({"a": "1"}, {"a": "2"}))) == [
        WriteTaskConfigs(CONN1, ({"a": "1"}, {"a": "2"})),
        Reply(None),
    ]


def test_task_configs_published_late_for_a_stopped_connector_are_refused() -> None:
    """Java's ``writeTaskConfigs``: a follower's task configs generated before it read the stop, and
    arriving after it, must not give the STOPPED connector tasks again (400); empty ones are written."""
    h = member(leader=True)
    h.events(h.log.put_tasks(CONN1, []))
    h.events(h.log.put_target(CONN1, TargetState.STOPPED))
    with pytest.raises(
        BadRequestError, match=f"Cannot submit non-empty set of task configs for stopped connector {CONN1}"
    ):
        decide(h, rq.PutTaskConfigs(CONN1, ({"a": "1"},)))
    assert decide(h, rq.PutTaskConfigs(CONN1, ())) == [WriteTaskConfigs(CONN1, ()), Reply(None)]
