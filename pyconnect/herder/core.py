"""HerderCore: the cluster brain of one worker as a sans-IO state machine (Java's DistributedHerder,
spec §3.5, §3.8, §3.9).

Size: over 600 lines because the state machine's transitions share one state (assignment, configs,
restarts, fencing); its effects, requests and shell live in their own modules.

No I/O, no asyncio, time passed in. Inputs are method calls with plain values: config-topic events
(:mod:`pyconnect.stores.config_events`), the outcome of a rebalance (:class:`Rebalanced`), results of
effects the loop performed (``connector_started``, ``task_configs_generated``, ``publish_failed`` ...)
and "what now?" (:meth:`HerderCore.step`). Outputs are lists of :mod:`~pyconnect.herder.effects`
values for the loop to perform in order. Read-only views of the config snapshot, of the work running
on this worker (:class:`RunningWork`) and of the status cache (:class:`StatusView`) are passed in.

One step is one phase of Java's tick, the first that has something to do, in this order:

1. the group coordinator is unreachable -> drop everything held and rejoin;
2. a rejoin is due (requested, the member needs one, a config change not yet counted by an
   assignment, or a delayed rebalance's time) -> :class:`~pyconnect.herder.effects.Rebalance`;
   then, with exactly-once source support, a leader without config-topic write privileges (after a
   round, or fenced out) claims them (250 ms apart after a failure);
3. config-topic changes -> stop/start connectors, target states, stop tasks whose configs changed;
4. restart requests (KIP-745) -> restart the affected work assigned to this worker;
5. queued REST writes, once the group is settled (a write that arrives during a rebalance waits
   for it instead of failing; Java answers 409 there);
6. connectors due for reconfiguration -> generate task configs; the leader writes them, a follower
   publishes them to the leader (signed under ``sessioned``);
7. the leader rotates the session key when it expires (KIP-507).

An empty step means the worker is idle (and, from the first one on, ready); the loop then waits for
an event or for :meth:`HerderCore.wait_time`.

After a rebalance (§3.5): a failed assignment -> read the config topic and rejoin; behind the
assignment's config offset -> read to it (``worker.sync.timeout.ms``; on timeout back off
``worker.unsync.backoff.ms`` and rejoin); still different -> rejoin without starting anything;
otherwise start what is newly assigned, rejoin at once if anything was revoked, and rejoin after
``delay`` when the assignment carries one.

A config change that needs a new assignment (a connector added or removed, new task configs) asks for
a round only while the last applied assignment's config offset is below the change's: a member that
reads the record after a round that already counted it has nothing to rejoin for. Task configs
committed at or below the config offset a task was started with do not stop that task.

Modes (:class:`CoreSettings`): ``manages_connectors`` is dedicated MirrorMaker (a member that has just
become leader after a clean round writes its flow's connector configs, KAFKA-15372).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pyconnect.config.providers import VARIABLE_PATTERN
from pyconnect.errors import NotLeaderError, RebalanceNeededError
from pyconnect.herder.backoff import Backoff
from pyconnect.herder.effects import (
    ApplyLoggerLevel,
    ClaimWritePrivileges,
    ConfigureManagedConnectors,
    DeleteTopicStatus,
    DropAssignment,
    Effect,
    GenerateTaskConfigs,
    PublishTaskConfigs,
    PutStatus,
    ReadConfigToEnd,
    Rebalance,
    Report,
    RunRequests,
    SetTargetState,
    Sleep,
    StartConnector,
    StartTask,
    StopConnector,
    StopTasks,
    WriteSessionKey,
    WriteTaskConfigs,
)
from pyconnect.herder.signing import sign
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility
from pyconnect.protocol.internal_records import (
    ConnectorStatus,
    RestartRequest,
    SessionKeyRecord,
    State,
    TargetState,
    TaskStatus,
    TopicStatus,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.config_events import (
    ConfigEvent,
    ConnectorConfigRemoved,
    ConnectorConfigUpdated,
    LoggerLevelChanged,
    RestartRequested,
    SessionKeyUpdated,
    TargetStateChanged,
    TaskConfigsCommitted,
)
from pyconnect.stores.config_state import ClusterConfigState

log = logging.getLogger(__name__)

RECONFIGURE_BACKOFF_S = (0.25, 60.0)
CLAIM_BACKOFF_S = 0.25
"""Java's ``CONFIG_TOPIC_WRITE_PRIVILEGES_BACKOFF_MS``."""
IDLE_WAIT_S = 1.0


class _Runner(Protocol):
    @property
    def running(self) -> bool: ...


class RunningWork(Protocol):
    """What this worker runs now (``pyconnect.worker.worker.Worker`` satisfies it)."""

    @property
    def connectors(self) -> Mapping[str, _Runner]: ...

    @property
    def tasks(self) -> Mapping[ConnectorTaskId, Any]: ...


class StatusView(Protocol):
    """The status cache, read-only (``pyconnect.stores.status.StatusStore`` satisfies it)."""

    def get_connector(self, connector: str) -> ConnectorStatus | None: ...

    def get_all(self, connector: str) -> list[TaskStatus]: ...

    def connectors(self) -> Iterable[str]: ...

    def has_task_from(self, connector: str, count: int) -> bool: ...

    def get_topics(self, connector: str) -> list[TopicStatus]: ...


@dataclass(frozen=True, slots=True)
class CoreSettings:
    """The worker config the core decides with (seconds, milliseconds as Java names them)."""

    worker_id: str
    sync_timeout_s: float = 3.0
    unsync_backoff_s: float = 0.3
    key_algorithm: str = "HmacSHA256"
    key_ttl_ms: int = 3_600_000
    key_length: int = 32
    manages_connectors: bool = False
    transactional_leader: bool = False
    """KIP-618 ``exactly.once.source.support`` preparing/enabled: the leader writes the config topic
    through a fencable (transactional) producer it must claim first."""

    @classmethod
    def from_worker_config(
        cls, config: Any, worker_id: str, *, manages_connectors: bool = False
    ) -> CoreSettings:
        """From a worker config; keys a standalone config lacks keep the defaults above."""

        def setting(key: str) -> Any:
            try:
                return config[key]
            except KeyError:
                return None

        defaults = cls(worker_id)
        timeout, backoff = setting("worker.sync.timeout.ms"), setting("worker.unsync.backoff.ms")
        algorithm, ttl = setting("inter.worker.key.generation.algorithm"), setting("inter.worker.key.ttl.ms")
        size = setting("inter.worker.key.size")
        eos = str(setting("exactly.once.source.support") or "disabled").lower()
        return cls(
            worker_id=worker_id,
            sync_timeout_s=defaults.sync_timeout_s if timeout is None else int(timeout) / 1000,
            unsync_backoff_s=defaults.unsync_backoff_s if backoff is None else int(backoff) / 1000,
            key_algorithm=defaults.key_algorithm if algorithm is None else str(algorithm),
            key_ttl_ms=defaults.key_ttl_ms if ttl is None else int(ttl),
            key_length=int(size) // 8 if size else defaults.key_length,
            manages_connectors=manages_connectors,
            transactional_leader=eos in ("preparing", "enabled"),
        )


@dataclass(frozen=True, slots=True)
class Rebalanced:
    """One completed round as the core needs it (from ``WorkerCoordinator.RebalanceOutcome``)."""

    generation: int
    is_leader: bool
    leader_url: str | None
    protocol: ConnectProtocolCompatibility | None
    failed: bool
    config_offset: int
    connectors: tuple[str, ...]
    tasks: tuple[ConnectorTaskId, ...]
    revoked: bool = False
    delay_ms: int = 0

    @classmethod
    def from_outcome(cls, outcome: Any) -> Rebalanced:
        return cls(
            generation=outcome.generation,
            is_leader=outcome.is_leader,
            leader_url=outcome.leader_url,
            protocol=outcome.protocol,
            failed=outcome.failed,
            config_offset=outcome.config_offset,
            connectors=tuple(outcome.holding.connectors),
            tasks=tuple(outcome.holding.tasks),
            revoked=outcome.revoked,
            delay_ms=outcome.delay,
        )


class HerderCore:
    """See the module docstring. Not thread-safe; one loop drives it."""

    def __init__(self, settings: CoreSettings) -> None:
        self.settings = settings
        self.generation = -1
        self.is_leader = False
        self.leader_url: str | None = None
        self.assignment: Rebalanced | None = None
        """The last round whose outcome was applied (None before the first)."""
        self.rebalance_resolved = False
        """The last round's work has been asked for (Java's ``rebalanceResolved``)."""
        self.session_key: SessionKeyRecord | None = None
        self.ready = False
        self._rejoin_requested = True
        self._rejoin_at: float | None = None
        self._catching_up: Rebalanced | None = None
        self._assigned_offset = -1
        self._config_rejoin_offset = -1
        self._updated: set[str] = set()
        self._targets: set[str] = set()
        self._task_changes: dict[str, int] = {}
        self._task_offsets: dict[ConnectorTaskId, int] = {}
        self._restarts: dict[str, RestartRequest] = {}
        self._reconfigure_at: dict[str, float] = {}
        self._reconfigure_backoff = Backoff(*RECONFIGURE_BACKOFF_S)
        self._publish_backoff = Backoff(*RECONFIGURE_BACKOFF_S)
        self._key_write_pending = False
        self._was_leader = False
        self._configured: frozenset[str] = frozenset()
        self._claim_retry_at: float | None = None
        """Connectors of the snapshot of the last step (Java's ``configState``)."""

    # -- what the core knows --------------------------------------------------------------------

    @property
    def protocol(self) -> ConnectProtocolCompatibility | None:
        return self.assignment.protocol if self.assignment is not None else None

    def require_leader(self) -> None:
        """Raise unless this worker may write leader-only records now."""
        if self.assignment is None:
            raise RebalanceNeededError("Request cannot be completed because a rebalance is expected")
        if not self.is_leader:
            raise NotLeaderError(
                "Cannot complete request because this worker is not the leader", self.leader_url
            )

    def rejoin_due(self, now: float, member_needs_rejoin: bool = False) -> bool:
        if self._rejoin_requested or member_needs_rejoin:
            return True
        if self._config_rejoin_offset > self._assigned_offset:
            return True
        return self._rejoin_at is not None and now >= self._rejoin_at

    def wait_time(self, now: float) -> float:
        """Seconds the loop may wait for an event before the next step is due."""
        timeout = IDLE_WAIT_S
        if self._rejoin_at is not None:
            timeout = min(timeout, self._rejoin_at - now)
        if self._reconfigure_at:
            timeout = min(timeout, min(self._reconfigure_at.values()) - now)
        if self._claim_retry_at is not None:
            timeout = min(timeout, self._claim_retry_at - now)
        return max(0.0, timeout)

    def request_rejoin(self, reason: str) -> None:
        log.info("Worker %s: rejoining the group (%s)", self.settings.worker_id, reason)
        self._rejoin_requested = True

    # -- config-topic events ----------------------------------------------------------------------

    def config_event(self, event: ConfigEvent, work: RunningWork) -> list[Effect]:
        """Record what a config record changed; effects that cannot wait for a step (a logger level
        read back must be in force at once) are returned."""
        if isinstance(event, ConnectorConfigRemoved):
            self._updated.add(event.connector)
            self._rejoin_for_config(f"connector {event.connector} was deleted", event.offset)
        elif isinstance(event, ConnectorConfigUpdated):
            name = event.connector
            known = name in self._configured or (
                self.assignment is not None
                and (name in work.connectors or name in self.assignment.connectors)
            )
            self._updated.add(name)
            if not known:
                self._rejoin_for_config(f"connector {name} was created", event.offset)
        elif isinstance(event, TaskConfigsCommitted):
            for task in event.tasks:
                self._task_changes[task.connector] = event.offset
            if not event.tasks:
                # A commit of zero tasks (PUT .../stop, KIP-875): Java rebalances on every commit,
                # which revokes the connector's running tasks; nothing else would stop them here.
                self.request_rejoin("a connector's task configs were committed with zero tasks")
        elif isinstance(event, TargetStateChanged):
            self._targets.add(event.connector)
        elif isinstance(event, SessionKeyUpdated):
            self.session_key = event.key
        elif isinstance(event, RestartRequested):
            request = event.request
            current = self._restarts.get(request.connector)
            if current is None or restart_impact(request) >= restart_impact(current):
                self._restarts[request.connector] = request
        elif isinstance(event, LoggerLevelChanged):
            return [ApplyLoggerLevel(event.namespace, event.level)]
        return []

    def _rejoin_for_config(self, reason: str, offset: int) -> None:
        if offset > self._assigned_offset and offset > self._config_rejoin_offset:
            log.info("Worker %s: rejoining the group (%s)", self.settings.worker_id, reason)
            self._config_rejoin_offset = offset

    # -- the step ---------------------------------------------------------------------------------

    def step(
        self,
        now: float,
        snapshot: ClusterConfigState,
        work: RunningWork,
        statuses: StatusView,
        *,
        coordinator_lost: bool = False,
        member_needs_rejoin: bool = False,
        holding: bool = False,
        requests_waiting: bool = False,
        holds_write_privileges: bool = True,
    ) -> list[Effect]:
        """The effects of the first phase (module docstring) that has something to do; ``[]`` when
        idle. ``holding``: the coordinator holds an assignment; ``requests_waiting``: REST writes
        are queued; ``holds_write_privileges``: the config store's fencable writer is claimed."""
        self._configured = frozenset(snapshot.connector_configs)
        if coordinator_lost and holding:
            log.warning(
                "Worker %s lost the group coordinator; stopping all work until it rejoins",
                self.settings.worker_id,
            )
            self.request_rejoin("group coordinator unreachable")
            return [DropAssignment("group coordinator unreachable")]
        if self.rejoin_due(now, member_needs_rejoin):
            self._rejoin_requested = False
            self._rejoin_at = None
            return [Rebalance()]
        if self._claim_due(now, holds_write_privileges):
            return [ClaimWritePrivileges()]
        effects = self._apply_config_changes(now, snapshot, work)
        if not effects and self._rejoin_requested:
            self._rejoin_requested = False
            self._rejoin_at = None
            return [Rebalance()]
        if not effects:
            effects = self._apply_restarts(snapshot, work, statuses)
        if not effects and requests_waiting and self.assignment is not None:
            effects = [RunRequests()]
        if not effects:
            effects = self._reconfigure(now, snapshot, work)
        if not effects:
            effects = self._rotate_session_key(now)
        if effects:
            return effects
        self.ready = True
        return []

    def _claim_due(self, now: float, holds_write_privileges: bool) -> bool:
        """Java claims after each round as leader and again after being fenced out of the config
        topic, backing off ``CONFIG_TOPIC_WRITE_PRIVILEGES_BACKOFF_MS`` after a failed claim."""
        if not self.settings.transactional_leader or holds_write_privileges:
            self._claim_retry_at = None
            return False
        if not self.is_leader or self.assignment is None:
            return False
        return self._claim_retry_at is None or now >= self._claim_retry_at

    def write_privileges_claimed(self, ok: bool, now: float) -> None:
        """The result of :class:`~pyconnect.herder.effects.ClaimWritePrivileges`."""
        self._claim_retry_at = None if ok else now + CLAIM_BACKOFF_S

    def step_failed(self) -> None:
        """Performing a step's effects raised: forget writes in flight so the next step retries."""
        self._key_write_pending = False

    # -- rebalances ---------------------------------------------------------------------------------

    def rebalanced(
        self,
        round_: Rebalanced,
        snapshot: ClusterConfigState,
        work: RunningWork,
        statuses: StatusView,
        now: float,
    ) -> list[Effect]:
        """A round completed (revocations already performed); what to do before the next step."""
        self.assignment = round_
        self.rebalance_resolved = False
        self.generation = round_.generation
        self.is_leader = round_.is_leader
        self.leader_url = round_.leader_url
        if round_.failed:
            self.request_rejoin("the leader could not assign with a config offset every member has read")
            return [ReadConfigToEnd(self.settings.sync_timeout_s)]
        if snapshot.offset < round_.config_offset:
            self._catching_up = round_
            return [ReadConfigToEnd(self.settings.sync_timeout_s)]
        return self._apply_assignment(round_, snapshot, work, statuses, now)

    def config_read(
        self,
        snapshot: ClusterConfigState,
        work: RunningWork,
        statuses: StatusView,
        now: float,
        *,
        timed_out: bool,
    ) -> list[Effect]:
        """The result of :class:`~pyconnect.herder.effects.ReadConfigToEnd`."""
        round_, self._catching_up = self._catching_up, None
        if timed_out:
            self.request_rejoin("could not read the config topic to the assignment's offset")
            return [Sleep(self.settings.unsync_backoff_s)]
        if round_ is None:
            return []
        return self._apply_assignment(round_, snapshot, work, statuses, now)

    def revoked(self, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]) -> None:
        """Work was revoked (and stopped by the loop): no reconfiguration for it any more."""
        for name in connectors:
            self._reconfigure_at.pop(name, None)

    def _apply_assignment(
        self,
        round_: Rebalanced,
        snapshot: ClusterConfigState,
        work: RunningWork,
        statuses: StatusView,
        now: float,
    ) -> list[Effect]:
        if snapshot.offset != round_.config_offset:
            self.request_rejoin(
                f"config offset {snapshot.offset} differs from the assignment's {round_.config_offset}"
            )
            return []
        self._assigned_offset = round_.config_offset
        effects: list[Effect] = []
        if round_.is_leader:
            effects += self._stale_status_cleanup(snapshot, statuses)
        for name in round_.connectors:
            if name not in work.connectors and snapshot.contains(name):
                self._updated.discard(name)
                effects += self._start_connector(name, snapshot)
        started: set[ConnectorTaskId] = set()
        for task in round_.tasks:
            if task not in work.tasks and snapshot.task_config(task) is not None:
                effects += self._start_task(task, snapshot)
                started.add(task)
        self._task_offsets = {t: o for t, o in self._task_offsets.items() if t in work.tasks or t in started}
        if round_.revoked:
            self.request_rejoin("work was revoked: second round of the cooperative rebalance")
        elif round_.delay_ms > 0:
            self._rejoin_at = now + round_.delay_ms / 1000
        log.info(
            "Worker %s joined generation %d as %s: %d connector(s), %d task(s)",
            self.settings.worker_id,
            round_.generation,
            "leader" if round_.is_leader else "follower",
            len(round_.connectors),
            len(round_.tasks),
        )
        if self.settings.manages_connectors and not self._rejoin_requested:
            if round_.is_leader and not self._was_leader:
                effects.append(ConfigureManagedConnectors())
            self._was_leader = round_.is_leader
        self.rebalance_resolved = True
        return effects

    def _stale_status_cleanup(self, snapshot: ClusterConfigState, statuses: StatusView) -> list[Effect]:
        """Leader, after a rebalance (spec §2.4): tombstones for the statuses of deleted connectors
        (and their tasks and topics) and of tasks numbered at or above their connector's task count
        (a STOPPED connector has none)."""
        configured = snapshot.connector_configs
        stale = []
        for name in statuses.connectors():
            count = snapshot.task_count(name) if name in configured else 0
            if name not in configured or statuses.has_task_from(name, count):
                stale.append((name, count))
        effects: list[Effect] = []
        worker, generation = self.settings.worker_id, self.generation
        for name, count in sorted(stale):
            for status in statuses.get_all(name):
                if status.task_id.task >= count:
                    effects.append(PutStatus(TaskStatus(status.task_id, State.DESTROYED, worker, generation)))
            if name not in configured:
                effects += [DeleteTopicStatus(name, topic.topic) for topic in statuses.get_topics(name)]
                if statuses.get_connector(name) is not None:
                    effects.append(PutStatus(ConnectorStatus(name, State.DESTROYED, worker, generation)))
        return effects

    # -- starting work --------------------------------------------------------------------------------

    def _start_connector(self, name: str, snapshot: ClusterConfigState) -> list[Effect]:
        config = snapshot.connector_config(name)
        if config is None:
            return []
        return [StartConnector(name, config, snapshot.target_state(name) or TargetState.STARTED)]

    def _start_task(self, task: ConnectorTaskId, snapshot: ClusterConfigState) -> list[Effect]:
        connector_config = snapshot.connector_config(task.connector)
        task_config = snapshot.task_config(task)
        if connector_config is None or task_config is None:
            return []
        self._task_offsets[task] = snapshot.offset
        target = snapshot.target_state(task.connector) or TargetState.STARTED
        return [StartTask(task, connector_config, task_config, target)]

    def connector_started(self, name: str, ok: bool, target: TargetState, now: float) -> None:
        """The result of :class:`~pyconnect.herder.effects.StartConnector`."""
        if ok and target == TargetState.STARTED:
            self._reconfigure_at[name] = now

    def reconfiguration_requested(self, name: str, now: float) -> None:
        """A running connector asked for new task configs (``context.request_task_reconfiguration``)."""
        self._reconfigure_at[name] = now

    # -- config changes and restarts ------------------------------------------------------------------

    def _apply_config_changes(
        self, now: float, snapshot: ClusterConfigState, work: RunningWork
    ) -> list[Effect]:
        if not (self._updated or self._targets or self._task_changes):
            return []
        updated, self._updated = self._updated, set()
        targets, self._targets = self._targets, set()
        task_changes, self._task_changes = self._task_changes, {}
        effects: list[Effect] = []
        for name in sorted(updated):
            if name in work.connectors:
                effects.append(StopConnector(name))
                self._reconfigure_at.pop(name, None)
                effects += self._start_connector(name, snapshot)
        for name in sorted(targets):
            target = snapshot.target_state(name)
            if target is not None:
                effects.append(SetTargetState(name, target))
                if target == TargetState.STARTED and name in work.connectors:
                    self._reconfigure_at[name] = now
        if task_changes:
            # A task started from a snapshot that holds the new configs is already current.
            owned = tuple(
                t
                for t in work.tasks
                if t.connector in task_changes and self._task_offsets.get(t, -1) < task_changes[t.connector]
            )
            if owned:
                effects.append(StopTasks(owned))
            if owned or max(task_changes.values()) > self._assigned_offset:
                self.request_rejoin(f"task configs changed for {', '.join(sorted(task_changes))}")
        return effects

    def _apply_restarts(
        self, snapshot: ClusterConfigState, work: RunningWork, statuses: StatusView
    ) -> list[Effect]:
        if not self._restarts:
            return []
        requests, self._restarts = self._restarts, {}
        # Java restarts what is assigned here, also work whose start failed and that does not run.
        held = self.assignment
        held_connectors = set(work.connectors) | set(held.connectors if held is not None else ())
        held_tasks = set(work.tasks) | set(held.tasks if held is not None else ())
        effects: list[Effect] = []
        for name, request in requests.items():
            plan = restart_plan(request, statuses)
            if plan is None:
                continue
            restart_connector, tasks = plan
            if restart_connector and name in held_connectors:
                effects += self.restart_connector_locally(name, snapshot)
            owned = [t for t in tasks if t in held_tasks]
            if owned:
                effects += self.restart_tasks_locally(owned, snapshot)
        return effects

    def restart_connector_locally(
        self, name: str, snapshot: ClusterConfigState, *, announce: bool = True
    ) -> list[Effect]:
        """Stop, then start ``name`` here; ``announce``: report RESTARTING in between (a KIP-745
        restart; Java's plain ``POST /connectors/{c}/restart`` reports nothing there)."""
        restarting: list[Effect] = [Report(name, State.RESTARTING)] if announce else []
        return [StopConnector(name), *restarting, *self._start_connector(name, snapshot)]

    def restart_tasks_locally(
        self, tasks: Sequence[ConnectorTaskId], snapshot: ClusterConfigState, *, announce: bool = True
    ) -> list[Effect]:
        """Stop, then start ``tasks`` here; ``announce`` as for :meth:`restart_connector_locally`."""
        effects: list[Effect] = [StopTasks(tuple(tasks))]
        if announce:
            effects += [Report(task, State.RESTARTING) for task in tasks]
        for task in tasks:
            effects += self._start_task(task, snapshot)
        return effects

    # -- task configs ---------------------------------------------------------------------------------

    def _reconfigure(self, now: float, snapshot: ClusterConfigState, work: RunningWork) -> list[Effect]:
        effects: list[Effect] = []
        for name, due in list(self._reconfigure_at.items()):
            if due > now:
                continue
            runner = work.connectors.get(name)
            config = snapshot.connector_config(name)
            del self._reconfigure_at[name]
            if (
                runner is None
                or not runner.running
                or config is None
                or snapshot.target_state(name) != TargetState.STARTED
            ):
                continue
            try:
                max_tasks = int(config.get("tasks.max") or 1)
            except ValueError as exc:
                self.reconfiguration_failed(name, exc, now)
                continue
            effects.append(GenerateTaskConfigs(name, max_tasks))
        return effects

    def task_configs_generated(
        self, name: str, configs: Sequence[Mapping[str, str]], snapshot: ClusterConfigState, now: float
    ) -> list[Effect]:
        """The connector's task configs: write (leader) or publish (follower) them if they changed.

        ``snapshot`` is read after the connector answered (its ``task_configs`` runs off the loop): a
        connector whose target state is no longer STARTED (a stop read meanwhile) has them dropped, as
        Java never generates task configs for it and refuses non-empty ones for a STOPPED connector."""
        target = snapshot.target_state(name)
        if target != TargetState.STARTED:
            log.info("Skipping reconfiguration of connector %s since its target state is %s", name, target)
            self._reconfigure_backoff.reset(name)
            return []
        raw = snapshot.connector_config(name) or {}
        wanted = reverse_transform([dict(c) for c in configs], raw)
        current = snapshot.all_task_configs(name) if name not in snapshot.inconsistent_connectors else None
        if current is not None and [dict(c) for c in current] == wanted:
            self._reconfigure_backoff.reset(name)
            return []
        if self.is_leader:
            return [WriteTaskConfigs(name, tuple(wanted))]
        if not self.leader_url:
            self.reconfiguration_failed(
                name, RebalanceNeededError("no known leader to publish task configs to"), now
            )
            return []
        body = json.dumps(wanted, separators=(",", ":")).encode()
        headers: dict[str, str] = {}
        if self.protocol == ConnectProtocolCompatibility.SESSIONED and self.session_key is not None:
            headers = sign(self.session_key.key_bytes, body, self.session_key.algorithm)
        self._reconfigure_backoff.reset(name)
        return [PublishTaskConfigs(name, self.leader_url, body, headers)]

    def task_configs_written(self, name: str) -> None:
        self._reconfigure_backoff.reset(name)

    def reconfiguration_failed(self, name: str, error: BaseException, now: float) -> None:
        """Generating or writing ``name``'s task configs failed: retry after the backoff."""
        self._retry_reconfiguration(name, self._reconfigure_backoff.failed(name), error, now)

    def publish_succeeded(self, name: str) -> None:
        self._publish_backoff.reset(name)

    def publish_failed(self, name: str, error: BaseException, now: float) -> None:
        """A follower's publication to the leader failed: reconfigure again after the backoff."""
        self._retry_reconfiguration(name, self._publish_backoff.failed(name), error, now)

    def _retry_reconfiguration(self, name: str, delay: float, error: BaseException, now: float) -> None:
        self._reconfigure_at[name] = now + delay
        log.warning(
            "Connector %s: publishing task configs failed, retrying in %.2f s: %s", name, delay, error
        )

    # -- session keys (KIP-507) -------------------------------------------------------------------------

    def _rotate_session_key(self, now: float) -> list[Effect]:
        if self._key_write_pending:
            return []
        if not self.is_leader or self.protocol != ConnectProtocolCompatibility.SESSIONED:
            return []
        settings, key = self.settings, self.session_key
        now_ms = int(now * 1000)
        if (
            key is not None
            and key.algorithm == settings.key_algorithm
            and len(key.key_bytes) == settings.key_length
            and key.creation_timestamp + settings.key_ttl_ms > now_ms
        ):
            return []
        self._key_write_pending = True
        return [WriteSessionKey(settings.key_algorithm, settings.key_length, now_ms)]

    def session_key_read(self, key: SessionKeyRecord | None) -> None:
        """The session key the config topic held when the stores started (before the first step)."""
        self.session_key = key

    def session_key_written(self, key: SessionKeyRecord) -> None:
        self.session_key = key
        self._key_write_pending = False


def restart_impact(request: RestartRequest) -> int:
    """Java's ordering of pending restart requests for one connector (highest impact wins)."""
    if request.only_failed:
        return 1 if request.include_tasks else 0
    return 3 if request.include_tasks else 2


def restart_plan(request: RestartRequest, statuses: StatusView) -> tuple[bool, list[ConnectorTaskId]] | None:
    """Whether to restart the connector and which tasks (KIP-745); None without a connector status."""
    status = statuses.get_connector(request.connector)
    if status is None:
        return None
    restart_connector = not request.only_failed or status.state == State.FAILED
    tasks = [
        t.task_id
        for t in (statuses.get_all(request.connector) if request.include_tasks else ())
        if not request.only_failed or t.state == State.FAILED
    ]
    return restart_connector, tasks


def reverse_transform(
    task_configs: list[dict[str, str]], raw_connector_config: Mapping[str, str | None]
) -> list[dict[str, str]]:
    """Java's ``reverseTransform``: a task config key whose connector config value holds a ``${...}``
    variable gets the raw variable back, so resolved secrets never reach the config topic."""
    variables = {k: v for k, v in raw_connector_config.items() if v and VARIABLE_PATTERN.search(v)}
    if not variables:
        return task_configs
    return [{k: variables.get(k, v) for k, v in config.items()} for config in task_configs]
