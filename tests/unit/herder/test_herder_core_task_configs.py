"""HerderCore and task configs: a connector's reconfiguration (requested by the connector or after its
start), written by the leader, published to the leader by a follower (signed under ``sessioned``),
retried with backoff on failure; and what follows a connector start that failed.

Mirrors Java's ``DistributedHerderTest``: ``testJoinAssignment`` (task configs generated after the
start), ``testRebalanceFailedConnector``, ``testTaskReconfigurationRetriesWithConnectorTaskConfigsException``,
``testTaskReconfigurationRetriesWithLeaderRequestForwardingException``, and
``DistributedHerder.reconfigureConnector`` / ``publishConnectorTaskConfigs`` /
``reconfigureConnectorTasksWithExponentialBackoffRetries`` (250 ms doubling to 60 s).
"""

from __future__ import annotations

import json

import pytest

from pyconnect.errors import ConnectError
from pyconnect.herder.core import CoreSettings
from pyconnect.herder.effects import (
    GenerateTaskConfigs,
    PublishTaskConfigs,
    Report,
    StartConnector,
    StopConnector,
    WriteTaskConfigs,
)
from pyconnect.herder.signing import ALGORITHM_HEADER, verify
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility
from pyconnect.protocol.internal_records import (
    CommitRecord,
    RestartRequest,
    SessionKeyRecord,
    State,
    TargetState,
)
from tests.herder_core_fakes import (
    COMPATIBLE,
    CONN1,
    LEADER_URL,
    SESSIONED,
    WORKER_ID,
    ConfigLog,
    CoreHarness,
    connector_config,
    round_,
    task_configs,
)

KEY = SessionKeyRecord(b"s" * 32, "HmacSHA256", 0)
NEW_CONFIGS = [{"task.class": "VerifiableSourceTask", "id": f"new-{i}"} for i in range(2)]


def with_conn1(
    *,
    leader: bool = True,
    protocol: ConnectProtocolCompatibility = COMPATIBLE,
    config: dict[str, str] | None = None,
) -> CoreHarness:
    """A worker that joined holding CONN1 (one committed task config) and started it."""
    h = CoreHarness(CoreSettings(WORKER_ID, key_ttl_ms=10**12))
    h.log.put_connector(CONN1, config or connector_config(CONN1, 2))
    h.log.put_tasks(CONN1, task_configs(CONN1, 1))
    h.events(h.log.put_session_key(KEY))
    h.perform(h.join(round_(offset=h.log.offset, leader=leader, connectors=(CONN1,), protocol=protocol)))
    return h


# -- generating and writing -----------------------------------------------------------------------------


def test_leader_writes_changed_task_configs() -> None:
    h = with_conn1()
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    effects = h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now)
    assert effects == [WriteTaskConfigs(CONN1, tuple(NEW_CONFIGS))]
    h.core.task_configs_written(CONN1)
    assert h.step() == []


def test_unchanged_task_configs_are_not_written() -> None:
    """``taskConfigsChanged``: restoring an existing connector writes nothing."""
    h = with_conn1()
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    assert h.core.task_configs_generated(CONN1, task_configs(CONN1, 1), h.log.snapshot(), h.now) == []
    assert h.step() == []


def test_inconsistent_connector_gets_its_task_configs_written_even_if_they_look_the_same() -> None:
    h = with_conn1()
    h.log.append(CommitRecord(CONN1, 2))  # a commit whose task records compaction removed
    assert h.log.snapshot().inconsistent_connectors == {CONN1}
    effects = h.core.task_configs_generated(CONN1, task_configs(CONN1, 1), h.log.snapshot(), h.now)
    assert effects == [WriteTaskConfigs(CONN1, tuple(task_configs(CONN1, 1)))]


def test_resolved_secrets_are_written_back_as_their_variables() -> None:
    """``reverseTransform``: a task config value that came from a ``${...}`` variable is written raw."""
    raw = connector_config(CONN1, 1, **{"db.password": "${file:/secrets.properties:password}"})
    h = with_conn1(config=raw)
    h.step()
    generated = [{"task.class": "VerifiableSourceTask", "db.password": "hunter2"}]
    effects = h.core.task_configs_generated(CONN1, generated, h.log.snapshot(), h.now)
    assert effects == [
        WriteTaskConfigs(
            CONN1,
            ({"task.class": "VerifiableSourceTask", "db.password": "${file:/secrets.properties:password}"},),
        )
    ]


def test_follower_publishes_signed_task_configs_to_the_leader_under_sessioned() -> None:
    h = with_conn1(leader=False, protocol=SESSIONED)
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    [effect] = h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now)
    assert isinstance(effect, PublishTaskConfigs)
    assert (effect.connector, effect.leader_url) == (CONN1, LEADER_URL)
    assert json.loads(effect.body) == NEW_CONFIGS
    assert effect.headers[ALGORITHM_HEADER] == "HmacSHA256"
    verify(KEY.key_bytes, effect.body, effect.headers, ["HmacSHA256"])  # the leader accepts it


def test_follower_publishes_unsigned_task_configs_before_sessioned() -> None:
    h = with_conn1(leader=False, protocol=COMPATIBLE)
    h.step()
    [effect] = h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now)
    assert isinstance(effect, PublishTaskConfigs) and effect.headers == {}


def test_leader_writes_rather_than_publishes_under_sessioned() -> None:
    h = with_conn1(leader=True, protocol=SESSIONED)
    h.step()
    assert h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now) == [
        WriteTaskConfigs(CONN1, tuple(NEW_CONFIGS))
    ]


def test_follower_without_a_leader_url_retries_after_the_backoff() -> None:
    """``publishConnectorTaskConfigs``: a blank leader URL fails the attempt, which is retried."""
    h = CoreHarness()
    h.log.with_connector(CONN1, 1)
    h.perform(h.join(round_(offset=h.log.offset, leader=False, connectors=(CONN1,), leader_url=None)))
    assert h.step() == [GenerateTaskConfigs(CONN1, 3)]
    assert h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now) == []
    assert h.core.wait_time(h.now) == pytest.approx(0.25)
    h.advance(0.25)
    assert h.step() == [GenerateTaskConfigs(CONN1, 3)]


# -- requested reconfiguration and retries -----------------------------------------------------------


def test_connector_requested_reconfiguration_generates_task_configs() -> None:
    h = with_conn1()
    h.settle()
    h.advance(30)
    h.core.reconfiguration_requested(CONN1, h.now)
    assert h.core.wait_time(h.now) == 0.0
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    assert h.step() == []


def test_failed_generation_is_retried_after_250_ms_then_500_ms() -> None:
    """``testTaskReconfigurationRetriesWithConnectorTaskConfigsException``."""
    h = with_conn1()
    h.settle()
    h.core.reconfiguration_requested(CONN1, h.now)
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    h.core.reconfiguration_failed(CONN1, ConnectError("Failed to generate task configs"), h.now)
    assert h.step() == []
    assert h.core.wait_time(h.now) == pytest.approx(0.25)
    h.advance(0.249)
    assert h.step() == []
    h.advance(0.001)
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    h.core.reconfiguration_failed(CONN1, ConnectError("Failed to generate task configs"), h.now)
    assert h.core.wait_time(h.now) == pytest.approx(0.5)
    h.advance(0.5)
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    assert h.core.task_configs_generated(CONN1, task_configs(CONN1, 1), h.log.snapshot(), h.now) == []
    # Success resets the backoff: the next failure waits 250 ms again.
    h.core.reconfiguration_requested(CONN1, h.now)
    h.step()
    h.core.reconfiguration_failed(CONN1, ConnectError("again"), h.now)
    assert h.core.wait_time(h.now) == pytest.approx(0.25)


def test_backoff_doubles_up_to_a_minute() -> None:
    h = with_conn1()
    h.settle()
    delays = []
    for _ in range(12):
        h.core.reconfiguration_failed(CONN1, ConnectError("down"), h.now)
        delays.append(h.core.wait_time(h.now))
        h.advance(60)
        assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    assert delays[:3] == [pytest.approx(0.25), pytest.approx(0.5), pytest.approx(1.0)]
    h.core.reconfiguration_failed(CONN1, ConnectError("down"), h.now)
    h.advance(59.9)
    assert h.step() == []
    h.advance(0.1)
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]


def test_failed_write_of_task_configs_is_retried() -> None:
    h = with_conn1()
    h.step()
    h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now)
    h.core.reconfiguration_failed(CONN1, ConnectError("Error writing task configurations to Kafka"), h.now)
    h.advance(0.25)
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]


def test_failed_publication_to_the_leader_is_retried_with_its_own_backoff() -> None:
    """``testTaskReconfigurationRetriesWithLeaderRequestForwardingException``."""
    h = with_conn1(leader=False)
    h.step()
    [publish] = h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now)
    assert isinstance(publish, PublishTaskConfigs)
    h.core.publish_failed(
        CONN1, ConnectError("Request to leader to reconfigure connector tasks failed"), h.now
    )
    assert h.step() == []
    h.advance(0.25)
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now)
    h.core.publish_failed(CONN1, ConnectError("again"), h.now)
    h.advance(0.25)
    assert h.step() == []
    h.advance(0.25)
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now)
    h.core.publish_succeeded(CONN1)
    assert h.step() == []


def test_invalid_tasks_max_is_retried_rather_than_generated() -> None:
    h = with_conn1(config=connector_config(CONN1, 1) | {"tasks.max": "many"})
    assert h.step() == []
    assert h.core.wait_time(h.now) == pytest.approx(0.25)


@pytest.mark.parametrize("leader", [True, False], ids=["leader", "follower"])
def test_task_configs_generated_after_the_connector_was_stopped_are_dropped(leader: bool) -> None:
    """The connector's ``task_configs`` runs off the loop: the stop (empty task configs, then STOPPED)
    can be read while it runs. Its late answer is neither written nor published (Java generates
    nothing for a connector whose target state is not STARTED, and refuses task configs for a STOPPED
    one)."""
    h = with_conn1(leader=leader)
    h.core.leader_url = LEADER_URL
    assert h.step() == [GenerateTaskConfigs(CONN1, 2)]
    h.events(h.log.put_tasks(CONN1, []))
    h.events(h.log.put_target(CONN1, TargetState.STOPPED))
    assert h.core.task_configs_generated(CONN1, NEW_CONFIGS, h.log.snapshot(), h.now) == []


def test_paused_connector_is_not_reconfigured() -> None:
    h = with_conn1()
    h.events(h.log.put_target(CONN1, TargetState.PAUSED))
    h.step()
    h.core.reconfiguration_requested(CONN1, h.now)
    assert h.step() == []


# -- a connector whose start failed --------------------------------------------------------------------


def failed_start() -> CoreHarness:
    h = CoreHarness(log=ConfigLog().with_connector(CONN1, 1))
    h.perform(h.join(round_(offset=h.log.offset, connectors=(CONN1,))), started_ok=False)
    h.statuses.set_connector(CONN1, State.FAILED)
    return h


def test_connector_whose_start_failed_generates_no_task_configs() -> None:
    """``testRebalanceFailedConnector``: a connector that is not running is not asked for task
    configs, even when a reconfiguration is requested for it."""
    h = failed_start()
    assert h.step() == []
    h.core.reconfiguration_requested(CONN1, h.now)
    assert h.step() == []
    assert h.core.ready


def test_connector_whose_start_failed_is_restarted_by_a_restart_of_failed_instances() -> None:
    h = failed_start()
    h.step()
    h.events(h.log.put_restart(RestartRequest(CONN1, only_failed=True)))
    effects = h.step()
    assert effects == [
        StopConnector(CONN1),
        Report(CONN1, State.RESTARTING),
        StartConnector(CONN1, connector_config(CONN1), TargetState.STARTED),
    ]
    h.perform(effects)
    assert h.step() == [GenerateTaskConfigs(CONN1, 3)]


def test_connector_whose_plugin_could_not_be_created_is_restarted_too() -> None:
    """The worker keeps no runner for a connector it could not create; it is still assigned here."""
    h = failed_start()
    del h.work.connectors[CONN1]
    h.events(h.log.put_restart(RestartRequest(CONN1, only_failed=True)))
    assert [type(e) for e in h.step()] == [StopConnector, Report, StartConnector]
