"""Fakes for testing :class:`~pyconnect.herder.core.HerderCore` alone, with a manual clock.

- :class:`ConfigLog`: a config topic as records applied through the real
  :class:`~pyconnect.stores.config.ConfigStateMachine` (encoded and decoded like the store does), so
  snapshots, offsets and the events handed to the core are the real ones.
- :class:`FakeWork` / :class:`FakeStatuses`: what the core reads as ``RunningWork`` and ``StatusView``.
- :func:`round_`: a :class:`~pyconnect.herder.core.Rebalanced` with the defaults of a clean round.
- :class:`CoreHarness`: one core with its clock, config log, work and statuses; ``perform`` plays the
  loop's part for the effects that change what runs (start/stop), so a scenario reads as a sequence
  of core calls.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from pyconnect.herder.core import CoreSettings, HerderCore, Rebalanced
from pyconnect.herder.effects import (
    Effect,
    Rebalance,
    StartConnector,
    StartTask,
    StopConnector,
    StopTasks,
)
from pyconnect.kafka.log import LogRecord
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility
from pyconnect.protocol.internal_records import (
    CommitRecord,
    ConfigRecord,
    ConnectorConfigRecord,
    ConnectorStatus,
    LoggerLevelRecord,
    RestartRequest,
    SessionKeyRecord,
    State,
    TargetState,
    TargetStateRecord,
    TaskConfigRecord,
    TaskStatus,
    TopicStatus,
    encode_config_record,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.config import ClusterConfigState, ConfigStateMachine
from pyconnect.stores.config_events import ConfigEvent

WORKER_ID = "worker-1:8083"
LEADER_URL = "http://leader:8083/"
SESSIONED = ConnectProtocolCompatibility.SESSIONED
COMPATIBLE = ConnectProtocolCompatibility.COMPATIBLE
EAGER = ConnectProtocolCompatibility.EAGER

CONN1 = "conn1"
CONN2 = "conn2"


def task(connector: str, number: int) -> ConnectorTaskId:
    return ConnectorTaskId(connector, number)


def connector_config(name: str, tasks_max: int = 3, **extra: str) -> dict[str, str]:
    return {
        "name": name,
        "connector.class": "org.apache.kafka.connect.tools.VerifiableSourceConnector",
        "tasks.max": str(tasks_max),
        **extra,
    }


def task_configs(name: str, count: int) -> list[dict[str, str]]:
    return [{"task.class": "VerifiableSourceTask", "id": f"{name}-{i}"} for i in range(count)]


class ConfigLog:
    """A config topic: each record is encoded, given the next offset and applied to the real reader."""

    def __init__(self) -> None:
        self.machine = ConfigStateMachine()
        self._next_offset = 0

    def snapshot(self) -> ClusterConfigState:
        return self.machine.snapshot()

    @property
    def offset(self) -> int:
        return self.machine.offset

    def append(self, *records: ConfigRecord) -> list[ConfigEvent]:
        events: list[ConfigEvent] = []
        for record in records:
            key, value = encode_config_record(record)
            log_record = LogRecord("configs", 0, self._next_offset, 0, key, value)
            self._next_offset += 1
            events += self.machine.apply_record(log_record)
        return events

    def put_connector(
        self, name: str, config: Mapping[str, str] | None = None, target: TargetState | None = None
    ) -> list[ConfigEvent]:
        records: list[ConfigRecord] = []
        if target is not None:
            records.append(TargetStateRecord(name, target))
        records.append(ConnectorConfigRecord(name, dict(config or connector_config(name))))
        return self.append(*records)

    def put_tasks(self, name: str, configs: Sequence[Mapping[str, str]]) -> list[ConfigEvent]:
        records: list[ConfigRecord] = [
            TaskConfigRecord(ConnectorTaskId(name, i), dict(c)) for i, c in enumerate(configs)
        ]
        return self.append(*records, CommitRecord(name, len(configs)))

    def remove_connector(self, name: str) -> list[ConfigEvent]:
        return self.append(ConnectorConfigRecord(name, None), TargetStateRecord(name, None))

    def put_target(self, name: str, target: TargetState) -> list[ConfigEvent]:
        return self.append(TargetStateRecord(name, target))

    def put_session_key(self, key: SessionKeyRecord) -> list[ConfigEvent]:
        return self.append(key)

    def put_restart(self, request: RestartRequest) -> list[ConfigEvent]:
        return self.append(request)

    def put_logger_level(self, namespace: str, level: str) -> list[ConfigEvent]:
        return self.append(LoggerLevelRecord(namespace, level))

    def with_connector(self, name: str, tasks: int = 3, target: TargetState | None = None) -> ConfigLog:
        """Add a connector and a complete commit of ``tasks`` task configs; returns self."""
        self.put_connector(name, connector_config(name), target)
        self.put_tasks(name, task_configs(name, tasks))
        return self


@dataclass
class Runner:
    running: bool = True


@dataclass
class FakeWork:
    """What runs on this worker (the ``Worker`` as the core reads it)."""

    connectors: dict[str, Runner] = field(default_factory=dict)
    tasks: dict[ConnectorTaskId, object] = field(default_factory=dict)


@dataclass
class FakeStatuses:
    """The status cache as the core reads it."""

    connector_states: dict[str, ConnectorStatus] = field(default_factory=dict)
    task_states: dict[ConnectorTaskId, TaskStatus] = field(default_factory=dict)
    topics: dict[str, list[TopicStatus]] = field(default_factory=dict)

    def set_connector(self, name: str, state: State, worker: str = WORKER_ID, generation: int = 1) -> None:
        self.connector_states[name] = ConnectorStatus(name, state, worker, generation)

    def set_task(
        self, task_id: ConnectorTaskId, state: State, worker: str = WORKER_ID, generation: int = 1
    ) -> None:
        self.task_states[task_id] = TaskStatus(task_id, state, worker, generation)

    def get_connector(self, connector: str) -> ConnectorStatus | None:
        return self.connector_states.get(connector)

    def get_all(self, connector: str) -> list[TaskStatus]:
        return [s for t, s in sorted(self.task_states.items()) if t.connector == connector]

    def connectors(self) -> Iterable[str]:
        return set(self.connector_states) | {t.connector for t in self.task_states}

    def has_task_from(self, connector: str, count: int) -> bool:
        return any(t.connector == connector and t.task >= count for t in self.task_states)

    def get_topics(self, connector: str) -> list[TopicStatus]:
        return list(self.topics.get(connector, []))


def round_(
    generation: int = 1,
    *,
    leader: bool = True,
    offset: int = -1,
    connectors: Iterable[str] = (),
    tasks: Iterable[ConnectorTaskId] = (),
    revoked: bool = False,
    delay_ms: int = 0,
    failed: bool = False,
    protocol: ConnectProtocolCompatibility | None = COMPATIBLE,
    leader_url: str | None = LEADER_URL,
) -> Rebalanced:
    """A completed round: ``connectors``/``tasks`` are everything this worker holds from now on
    (``compatible`` by default: no session key to rotate unless a test asks for ``sessioned``)."""
    return Rebalanced(
        generation=generation,
        is_leader=leader,
        leader_url=leader_url,
        protocol=protocol,
        failed=failed,
        config_offset=offset,
        connectors=tuple(connectors),
        tasks=tuple(tasks),
        revoked=revoked,
        delay_ms=delay_ms,
    )


class CoreHarness:
    """One core, a manual clock (seconds, as a float) and the views the core reads."""

    def __init__(self, settings: CoreSettings | None = None, *, log: ConfigLog | None = None) -> None:
        self.settings = settings or CoreSettings(WORKER_ID)
        self.core = HerderCore(self.settings)
        self.log = log or ConfigLog()
        self.work = FakeWork()
        self.statuses = FakeStatuses()
        self.now = 1_000.0

    def advance(self, seconds: float) -> None:
        self.now += seconds

    def step(self, **flags: bool) -> list[Effect]:
        return self.core.step(self.now, self.log.snapshot(), self.work, self.statuses, **flags)

    def rebalanced(self, outcome: Rebalanced) -> list[Effect]:
        return self.core.rebalanced(outcome, self.log.snapshot(), self.work, self.statuses, self.now)

    def config_read(self, *, timed_out: bool = False) -> list[Effect]:
        return self.core.config_read(
            self.log.snapshot(), self.work, self.statuses, self.now, timed_out=timed_out
        )

    def events(self, events: Iterable[ConfigEvent]) -> list[Effect]:
        """Hand config-topic events to the core as the store's listener does."""
        effects: list[Effect] = []
        for event in events:
            effects += self.core.config_event(event, self.work)
        return effects

    def join(self, outcome: Rebalanced) -> list[Effect]:
        """The step asks for a round (it must), the round completes: the effects of ``rebalanced``."""
        assert self.step() == [Rebalance()]
        return self.rebalanced(outcome)

    def perform(self, effects: Iterable[Effect], *, started_ok: bool = True) -> None:
        """The loop's part for effects that change what runs; a started connector reports back."""
        for effect in effects:
            if isinstance(effect, StartConnector):
                self.work.connectors[effect.connector] = Runner(running=started_ok)
                self.core.connector_started(effect.connector, started_ok, effect.target, self.now)
            elif isinstance(effect, StopConnector):
                self.work.connectors.pop(effect.connector, None)
            elif isinstance(effect, StartTask):
                self.work.tasks[effect.task] = object()
            elif isinstance(effect, StopTasks):
                for stopped in effect.tasks:
                    self.work.tasks.pop(stopped, None)

    def settle(self, limit: int = 20) -> list[list[Effect]]:
        """Step (performing start/stop effects) until a step is empty; returns the non-empty steps."""
        steps: list[list[Effect]] = []
        for _ in range(limit):
            effects = self.step()
            if not effects:
                return steps
            steps.append(effects)
            self.perform(effects)
        raise AssertionError(f"the core did not settle within {limit} steps: {steps[-3:]}")
