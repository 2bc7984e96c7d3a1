"""DistributedHerder: the cluster brain of one worker (Java's DistributedHerder, spec §3.5, §3.8, §3.9).

Contract:
- One tick task owns every state change: rebalances, starting and stopping work, applying
  config-topic changes, REST writes. REST writes are queued into the tick (``_submit``) and run once
  the group is settled, so a write that arrives during a rebalance waits for it rather than failing
  (Java answers 409 there); reads answer from the config snapshot and the status store directly.
- Config-topic callbacks arrive from the store's tail; they only record what changed (and at which
  config offset) and wake the tick. A change that needs a new assignment (a connector added or
  removed, new task configs) asks for a round only while the last applied assignment's config
  offset is below the change's: a member that reads the record after a round that already
  counted it (the leader wrote and read it first) has nothing to rejoin for, and a lone rejoin
  stalls the others until their next heartbeat. Likewise task configs committed at or below the
  config offset a task was started with do not stop that task.
- After each rebalance (§3.5): a failed assignment -> catch up and rejoin; behind the assignment's
  config offset -> read to it (``worker.sync.timeout.ms``); still different -> rejoin without
  starting anything; otherwise start what is newly assigned, rejoin at once if anything was revoked,
  and rejoin after ``delay`` when the assignment carries one.
- The worker that runs a connector generates its task configs; the leader writes them (a follower
  POSTs them, signed under ``sessioned``, to the leader's internal endpoint through the injected
  ``publish_task_configs``). Only the leader writes connector configs, deletions and STOPPED; any
  worker writes PAUSED/STARTED.
- Statuses go to the status store stamped with this worker's id and the current generation.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from pyconnect.concurrency import together
from pyconnect.config.providers import VARIABLE_PATTERN
from pyconnect.errors import (
    AlreadyExistsError,
    BadRequestError,
    ConnectError,
    NotAssignedError,
    NotFoundError,
    NotLeaderError,
    RebalanceNeededError,
)
from pyconnect.herder.abstract import AbstractHerder
from pyconnect.herder.entities import (
    ConnectorInfo,
    ConnectorState,
    ConnectorStateInfo,
    ConnectorType,
    TaskInfo,
    TaskState,
)
from pyconnect.herder.loggers import LOGGERS, parse_level
from pyconnect.herder.signing import sign, verify
from pyconnect.herder.worker_coordinator import RebalanceOutcome, WorkerCoordinator
from pyconnect.protocol.assignor import ConfigSnapshot
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
from pyconnect.stores.config import ClusterConfigState, ConfigStore
from pyconnect.stores.status import StatusStore
from pyconnect.worker.status import Item
from pyconnect.worker.worker import Worker

log = logging.getLogger(__name__)

T = TypeVar("T")
PublishTaskConfigs = Callable[[str, str, bytes, Mapping[str, str]], Awaitable[None]]

REQUEST_TIMEOUT_S = 90.0
RECONFIGURE_BACKOFF_S = (0.25, 60.0)


class DistributedHerder(AbstractHerder):
    def __init__(
        self,
        config: Any,
        *,
        worker: Worker,
        config_store: ConfigStore,
        status_store: StatusStore,
        coordinator_factory: Callable[[DistributedHerder], WorkerCoordinator],
        member: Any,
        rest_url: str,
        kafka_cluster_id: str,
        publish_task_configs: PublishTaskConfigs,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.worker = worker
        self.config_store = config_store
        self.status_store = status_store
        self.member = member
        self.rest_url = rest_url if rest_url.endswith("/") else rest_url + "/"
        self._worker_id = self.rest_url.split("://", 1)[-1].rstrip("/")
        self._kafka_cluster_id = kafka_cluster_id
        self._publish = publish_task_configs
        self._clock = clock
        self.coordinator = coordinator_factory(self)
        self._install_topic_tracking()

        self._generation = -1
        self._is_leader = False
        self._leader_url: str | None = None
        self._outcome: RebalanceOutcome | None = None
        self._rejoin_requested = True
        self._rejoin_at: float | None = None
        self._ready = False
        self._stopping = False
        self._wakeup = asyncio.Event()
        self._tick_task: asyncio.Task[None] | None = None
        self._requests: list[tuple[Callable[[], Awaitable[Any]], asyncio.Future[Any]]] = []

        self._updated_connectors: set[str] = set()
        self._target_changes: set[str] = set()
        self._task_config_changes: dict[str, int] = {}
        self._assigned_offset = -1
        self._config_rejoin_offset = -1
        self._task_offsets: dict[ConnectorTaskId, int] = {}
        self._restart_requests: dict[str, RestartRequest] = {}
        self._needs_reconfig: dict[str, float] = {}
        self._reconfig_backoff: dict[str, float] = {}
        self._session_key: SessionKeyRecord | None = None
        self._publishing: dict[str, asyncio.Task[None]] = {}
        self._publish_backoff: dict[str, float] = {}
        self._connector_types: dict[str, ConnectorType] = {}

    # -- identity and readiness ----------------------------------------------------------------

    @property
    def worker_id(self) -> str:
        return self._worker_id

    @property
    def kafka_cluster_id(self) -> str:
        return self._kafka_cluster_id

    @property
    def is_leader(self) -> bool:
        return self._is_leader

    @property
    def generation(self) -> int:
        return self._generation

    def ready(self) -> bool:
        return self._ready

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the stores (the config store calls back into this herder) and the tick task."""
        self.config_store.set_update_listener(self)
        await together(self.status_store.start(), self.config_store.start())
        self._session_key = self.config_store.snapshot().session_key
        await self.member.start()
        self._tick_task = asyncio.create_task(self._tick_loop(), name=f"herder-{self._worker_id}")

    async def stop(self) -> None:
        """Stop all work (committing offsets), fail queued requests, leave the group, stop stores."""
        if self._stopping:
            return
        self._stopping = True
        self._wakeup.set()
        if self._tick_task is not None:
            self._tick_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._tick_task
        for publish in list(self._publishing.values()):
            publish.cancel()
        for _, fut in self._requests:
            if not fut.done():
                fut.set_exception(ConnectError("Worker is shutting down"))
        self._requests.clear()
        await self.worker.stop()
        with contextlib.suppress(Exception):
            await self.status_store.flush()
        await self.member.stop(leave=True)
        await self.config_store.stop()
        await self.status_store.stop()

    # -- the tick ------------------------------------------------------------------------------

    async def _tick_loop(self) -> None:
        backoff = 0.0
        while not self._stopping:
            try:
                await self._tick()
                backoff = 0.0
            except asyncio.CancelledError:
                raise
            except Exception:
                backoff = min(max(backoff * 2, 0.25), 5.0)
                log.exception("Worker %s: herder tick failed; retrying in %.2f s", self._worker_id, backoff)
                await asyncio.sleep(backoff)

    def _needs_rejoin(self) -> bool:
        if self._rejoin_requested or self.coordinator.rejoin_needed():
            return True
        if self._config_rejoin_offset > self._assigned_offset:
            return True
        return self._rejoin_at is not None and self._clock() >= self._rejoin_at

    async def _tick(self) -> None:
        if self.member.coordinator_lost and self.coordinator.holding is not None:
            log.warning(
                "Worker %s lost the group coordinator; stopping all work until it rejoins", self._worker_id
            )
            await self.coordinator.drop_assignment("group coordinator unreachable")
            self._request_rejoin("group coordinator unreachable")
        if self._needs_rejoin():
            self._rejoin_requested = False
            self._rejoin_at = None
            outcome = await self.coordinator.rebalance()
            await self._handle_rebalance(outcome)
            if self._rejoin_requested:
                return
        await self._apply_config_changes()
        await self._process_restart_requests()
        await self._run_requests()
        await self._reconfigure_connectors()
        await self._maybe_rotate_session_key()
        self._ready = True
        await self._wait_for_work()

    async def _wait_for_work(self) -> None:
        timeout = 1.0
        if self._rejoin_at is not None:
            timeout = max(0.0, min(timeout, self._rejoin_at - self._clock()))
        if self._needs_reconfig:
            timeout = max(0.0, min(timeout, min(self._needs_reconfig.values()) - self._clock()))
        if self._wakeup.is_set() or self.member.rejoin_needed.is_set():
            self._wakeup.clear()
            return
        waiters = [
            asyncio.ensure_future(self._wakeup.wait()),
            asyncio.ensure_future(self.member.rejoin_needed.wait()),
        ]
        try:
            await asyncio.wait(waiters, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for waiter in waiters:
                waiter.cancel()
        self._wakeup.clear()

    def _request_rejoin(self, reason: str) -> None:
        log.info("Worker %s: rejoining the group (%s)", self._worker_id, reason)
        self._rejoin_requested = True
        self._wakeup.set()

    def _rejoin_for_config(self, reason: str) -> None:
        """A config record just read needs an assignment that counts it: rejoin unless the last
        applied assignment's config offset already covers it (see the module docstring)."""
        offset = self.config_store.offset
        if offset > self._assigned_offset:
            if offset > self._config_rejoin_offset:
                log.info("Worker %s: rejoining the group (%s)", self._worker_id, reason)
                self._config_rejoin_offset = offset
            self._wakeup.set()

    # -- rebalances ----------------------------------------------------------------------------

    def config_snapshot_for_assignor(self) -> tuple[int, ConfigSnapshot]:
        snapshot = self.config_store.snapshot()
        counts = {name: snapshot.task_count(name) for name in snapshot.connector_configs}
        return snapshot.offset, ConfigSnapshot(snapshot.offset, counts)

    async def on_revoked(
        self, leader: str | None, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]
    ) -> None:
        """Stop revoked work before the next round (coordinator callback)."""
        if tasks:
            await self.worker.stop_tasks(tasks)
        for name in connectors:
            await self.worker.stop_connector(name)
            self._needs_reconfig.pop(name, None)
        if connectors or tasks:
            with contextlib.suppress(Exception):
                await self.status_store.flush()

    async def _handle_rebalance(self, outcome: RebalanceOutcome) -> None:
        self._outcome = outcome
        self._generation = outcome.generation
        self._is_leader = outcome.is_leader
        self._leader_url = outcome.leader_url
        sync_timeout = int(self.config["worker.sync.timeout.ms"]) / 1000
        if outcome.failed:
            with contextlib.suppress(TimeoutError):
                await self.config_store.refresh(sync_timeout)
            self._request_rejoin("the leader could not assign with a config offset every member has read")
            return
        if self.config_store.offset < outcome.config_offset:
            try:
                await self.config_store.refresh(sync_timeout)
            except TimeoutError:
                await asyncio.sleep(int(self.config["worker.unsync.backoff.ms"]) / 1000)
                self._request_rejoin("could not read the config topic to the assignment's offset")
                return
        if self.config_store.offset != outcome.config_offset:
            self._request_rejoin(
                f"config offset {self.config_store.offset} differs from the assignment's {outcome.config_offset}"
            )
            return
        self._assigned_offset = outcome.config_offset
        snapshot = self.config_store.snapshot()
        if outcome.is_leader:
            self._remove_stale_statuses(snapshot)
        held = outcome.holding
        for name in held.connectors:
            if name not in self.worker.connectors and snapshot.contains(name):
                self._updated_connectors.discard(name)
                await self._start_connector(name, snapshot)
        for task in held.tasks:
            if task not in self.worker.tasks and snapshot.task_config(task) is not None:
                await self._start_task(task, snapshot)
        self._task_offsets = {t: o for t, o in self._task_offsets.items() if t in self.worker.tasks}
        if outcome.revoked:
            self._request_rejoin("work was revoked: second round of the cooperative rebalance")
        elif outcome.delay > 0:
            self._rejoin_at = self._clock() + outcome.delay / 1000
        log.info(
            "Worker %s joined generation %d as %s: %d connector(s), %d task(s)",
            self._worker_id,
            outcome.generation,
            "leader" if outcome.is_leader else "follower",
            len(held.connectors),
            len(held.tasks),
        )

    # -- starting and stopping work ------------------------------------------------------------

    async def _start_connector(self, name: str, snapshot: ClusterConfigState) -> None:
        config = snapshot.connector_config(name)
        if config is None:
            return
        target = snapshot.target_state(name) or TargetState.STARTED
        ok = await self.worker.start_connector(
            name, self._resolved(config), target, self._request_reconfiguration
        )
        if ok and target == TargetState.STARTED:
            self._needs_reconfig[name] = self._clock()

    async def _start_task(self, task: ConnectorTaskId, snapshot: ClusterConfigState) -> None:
        connector_config = snapshot.connector_config(task.connector)
        task_config = snapshot.task_config(task)
        if connector_config is None or task_config is None:
            return
        target = snapshot.target_state(task.connector) or TargetState.STARTED
        self._task_offsets[task] = snapshot.offset
        await self.worker.start_task(
            task, self._resolved(connector_config), self._resolved(task_config), target
        )

    def _request_reconfiguration(self, name: str) -> None:
        """A running connector asked for new task configs (``context.request_task_reconfiguration``)."""
        self._needs_reconfig[name] = self._clock()
        self._wakeup.set()

    async def _reconfigure_connectors(self) -> None:
        now = self._clock()
        snapshot = self.config_store.snapshot()
        for name, due in list(self._needs_reconfig.items()):
            if due > now:
                continue
            runner = self.worker.connectors.get(name)
            config = snapshot.connector_config(name)
            if (
                runner is None
                or not runner.running
                or config is None
                or snapshot.target_state(name) != TargetState.STARTED
            ):
                self._needs_reconfig.pop(name, None)
                continue
            try:
                max_tasks = int(config.get("tasks.max") or 1)
                configs = reverse_transform(self.worker.connector_task_configs(name, max_tasks), config)
                current = (
                    snapshot.all_task_configs(name) if name not in snapshot.inconsistent_connectors else None
                )
                if current is None or [dict(c) for c in current] != configs:
                    await self._write_task_configs(name, configs)
                self._needs_reconfig.pop(name, None)
                self._reconfig_backoff.pop(name, None)
            except Exception as exc:
                delay = min(
                    max(self._reconfig_backoff.get(name, 0.0) * 2, RECONFIGURE_BACKOFF_S[0]),
                    RECONFIGURE_BACKOFF_S[1],
                )
                self._reconfig_backoff[name] = delay
                self._needs_reconfig[name] = now + delay
                log.warning(
                    "Connector %s: publishing task configs failed, retrying in %.2f s: %s", name, delay, exc
                )

    async def _write_task_configs(self, name: str, configs: list[dict[str, str]]) -> None:
        if self._is_leader:
            await self.config_store.put_task_configs(name, configs)
            return
        if not self._leader_url:
            raise RebalanceNeededError("no known leader to publish task configs to")
        body = json.dumps(configs, separators=(",", ":")).encode()
        headers: dict[str, str] = {}
        if self._protocol() == ConnectProtocolCompatibility.SESSIONED and self._session_key is not None:
            headers = sign(self._session_key.key_bytes, body, self._session_key.algorithm)
        self._publish_off_tick(name, self._leader_url, body, headers)

    def _protocol(self) -> ConnectProtocolCompatibility | None:
        return self._outcome.protocol if self._outcome else None

    # -- config-topic changes (callbacks from the store's tail, then applied in the tick) -------

    def on_connector_config_remove(self, connector: str) -> None:
        self._updated_connectors.add(connector)
        self._rejoin_for_config(f"connector {connector} was deleted")

    def on_connector_config_update(self, connector: str) -> None:
        known = self._outcome is not None and (
            connector in self.worker.connectors or connector in self._assignment_connectors()
        )
        self._updated_connectors.add(connector)
        if not known:
            self._rejoin_for_config(f"connector {connector} was created")
        self._wakeup.set()

    def on_task_config_update(self, tasks: Sequence[ConnectorTaskId]) -> None:
        offset = self.config_store.offset
        for task in tasks:
            self._task_config_changes[task.connector] = offset
        if not tasks:
            # A commit of zero tasks (PUT .../stop, KIP-875): Java rebalances on every commit, which
            # revokes the connector's running tasks; nothing else would stop them here.
            self._request_rejoin("a connector's task configs were committed with zero tasks")
        self._wakeup.set()

    def on_connector_target_state_change(self, connector: str) -> None:
        self._target_changes.add(connector)
        self._wakeup.set()

    def on_session_key_update(self, session_key: SessionKeyRecord) -> None:
        self._session_key = session_key

    def on_restart_request(self, request: RestartRequest) -> None:
        current = self._restart_requests.get(request.connector)
        if current is None or _restart_impact(request) >= _restart_impact(current):
            self._restart_requests[request.connector] = request
        self._wakeup.set()

    def on_logger_level_update(self, namespace: str, level: str) -> None:
        self._apply_cluster_logger_level(namespace, level)

    def _assignment_connectors(self) -> set[str]:
        return set(self._outcome.holding.connectors) if self._outcome else set()

    async def _apply_config_changes(self) -> None:
        if not (self._updated_connectors or self._target_changes or self._task_config_changes):
            return
        snapshot = self.config_store.snapshot()
        updated, self._updated_connectors = self._updated_connectors, set()
        targets, self._target_changes = self._target_changes, set()
        task_changes, self._task_config_changes = self._task_config_changes, {}
        for name in sorted(updated):
            if name in self.worker.connectors:
                await self.worker.stop_connector(name)
                self._needs_reconfig.pop(name, None)
                if snapshot.contains(name):
                    await self._start_connector(name, snapshot)
        for name in sorted(targets - updated):
            target = snapshot.target_state(name)
            if target is not None:
                await self.worker.set_target_state(name, target)
                if target == TargetState.STARTED and name in self.worker.connectors:
                    self._needs_reconfig[name] = self._clock()
        if task_changes:
            # A task started from a snapshot that holds the new configs is already current.
            owned = [
                t
                for t in self.worker.tasks
                if t.connector in task_changes and self._task_offsets.get(t, -1) < task_changes[t.connector]
            ]
            if owned:
                await self.worker.stop_tasks(owned)
            if owned or max(task_changes.values()) > self._assigned_offset:
                self._request_rejoin(f"task configs changed for {', '.join(sorted(task_changes))}")

    # -- restarts --------------------------------------------------------------------------------

    async def _process_restart_requests(self) -> None:
        if not self._restart_requests:
            return
        requests, self._restart_requests = self._restart_requests, {}
        snapshot = self.config_store.snapshot()
        for name, request in requests.items():
            plan = self._restart_plan(name, request)
            if plan is None:
                continue
            restart_connector, tasks = plan
            if restart_connector and name in self.worker.connectors:
                await self._restart_connector_locally(name, snapshot)
            owned = [t for t in tasks if t in self.worker.tasks]
            if owned:
                await self._restart_tasks_locally(owned, snapshot)

    def _restart_plan(self, name: str, request: RestartRequest) -> tuple[bool, list[ConnectorTaskId]] | None:
        status = self.status_store.get_connector(name)
        if status is None:
            return None
        restart_connector = not request.only_failed or status.state == State.FAILED
        tasks = []
        if request.include_tasks:
            for task_status in self.status_store.get_all(name):
                if not request.only_failed or task_status.state == State.FAILED:
                    tasks.append(task_status.task_id)
        return restart_connector, tasks

    async def _restart_connector_locally(self, name: str, snapshot: ClusterConfigState) -> None:
        self.report(name, State.RESTARTING)
        await self.worker.stop_connector(name)
        await self._start_connector(name, snapshot)

    async def _restart_tasks_locally(
        self, tasks: Sequence[ConnectorTaskId], snapshot: ClusterConfigState
    ) -> None:
        for task in tasks:
            self.report(task, State.RESTARTING)
        await self.worker.stop_tasks(tasks)
        for task in tasks:
            await self._start_task(task, snapshot)

    # -- session keys (KIP-507) ------------------------------------------------------------------

    async def _maybe_rotate_session_key(self) -> None:
        if not self._is_leader or self._protocol() != ConnectProtocolCompatibility.SESSIONED:
            return
        algorithm = str(self.config["inter.worker.key.generation.algorithm"])
        ttl_ms = int(self.config["inter.worker.key.ttl.ms"])
        key = self._session_key
        now_ms = int(self._clock() * 1000)
        if key is not None and key.algorithm == algorithm and key.creation_timestamp + ttl_ms > now_ms:
            return
        size = self.config["inter.worker.key.size"]
        length = int(size) // 8 if size else 32
        record = SessionKeyRecord(os.urandom(length), algorithm, now_ms)
        await self.config_store.put_session_key(record)
        self._session_key = record

    # -- status reporting (the worker's StatusReporter) ------------------------------------------

    def report(self, item: Item, state: State, trace: str | None = None, version: str | None = None) -> None:
        if isinstance(item, ConnectorTaskId):
            status: ConnectorStatus | TaskStatus = TaskStatus(
                item, state, self._worker_id, self._generation, trace, version
            )
        else:
            status = ConnectorStatus(item, state, self._worker_id, self._generation, trace, version)
        if state == State.UNASSIGNED:
            self.status_store.put_safe(status)
        else:
            self.status_store.put(status)

    # -- requests queued into the tick -----------------------------------------------------------

    async def _submit(self, operation: Callable[[], Awaitable[T]]) -> T:
        if self._stopping:
            raise ConnectError("Worker is shutting down")
        fut: asyncio.Future[T] = asyncio.get_running_loop().create_future()
        self._requests.append((operation, fut))
        self._wakeup.set()
        try:
            return await asyncio.wait_for(asyncio.shield(fut), REQUEST_TIMEOUT_S)
        except TimeoutError:
            raise ConnectError(
                "Request timed out. The worker is currently busy with a rebalance or another operation."
            ) from None

    async def _run_requests(self) -> None:
        """Run queued requests once the group is settled: a request that arrives during a rebalance
        waits for it (within ``REQUEST_TIMEOUT_S``) instead of failing with "rebalance expected"."""
        if self._outcome is None or self._needs_rejoin():
            return
        requests, self._requests = self._requests, []
        for operation, fut in requests:
            if fut.done():
                continue
            try:
                fut.set_result(await operation())
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                fut.set_exception(exc)

    def _require_leader(self) -> None:
        if self._outcome is None:
            raise RebalanceNeededError("Request cannot be completed because a rebalance is expected")
        if not self._is_leader:
            raise NotLeaderError(
                "Cannot complete request because this worker is not the leader", self._leader_url
            )

    # -- the HerderApi ---------------------------------------------------------------------------

    def connectors(self) -> list[str]:
        return self.config_store.snapshot().connectors()

    def _known_config(self, name: str) -> dict[str, str]:
        config = self.config_store.snapshot().connector_configs.get(name)
        if config is None:
            raise NotFoundError(f"Connector {name} not found")
        return {k: v for k, v in config.items() if v is not None}

    def _connector_type(self, config: Mapping[str, str | None]) -> ConnectorType:
        """The type of the config's ``connector.class``; remembered per class (the plugins are
        fixed for the worker's life, and listings ask it for every connector)."""
        connector_class = config.get("connector.class") or ""
        known = self._connector_types.get(connector_class)
        if known is None:
            try:
                known = ConnectorType(self.worker.plugins.connector_type(connector_class))
            except Exception:
                known = ConnectorType.UNKNOWN
            self._connector_types[connector_class] = known
        return known

    async def connector_info(self, name: str) -> ConnectorInfo:
        config = self._known_config(name)
        return ConnectorInfo(
            name, config, self.config_store.snapshot().tasks(name), self._connector_type(config)
        )

    async def connector_config(self, name: str) -> dict[str, str]:
        return self._known_config(name)

    async def task_configs(self, name: str) -> list[TaskInfo]:
        self._known_config(name)
        snapshot = self.config_store.snapshot()
        return [
            TaskInfo(task, {k: v for k, v in (snapshot.task_config(task) or {}).items() if v is not None})
            for task in snapshot.tasks(name)
        ]

    def connector_status(self, name: str) -> ConnectorStateInfo:
        status = self.status_store.get_connector(name)
        if status is None:
            raise NotFoundError(f"No status found for connector {name}")
        config = self.config_store.snapshot().connector_configs.get(name) or {}
        tasks = [
            TaskState(t.state.value, t.worker_id, t.trace, t.version, id=t.task_id.task)
            for t in self.status_store.get_all(name)
        ]
        return ConnectorStateInfo(
            name,
            ConnectorState(status.state.value, status.worker_id, status.trace, status.version),
            tasks,
            self._connector_type(config),
        )

    def task_status(self, task: ConnectorTaskId) -> TaskState:
        status = self.status_store.get_task(task)
        if status is None:
            raise NotFoundError(f"No status found for task {task.connector}-{task.task}")
        return TaskState(status.state.value, status.worker_id, status.trace, status.version, id=task.task)

    async def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> tuple[bool, ConnectorInfo]:
        self._validate(name, config)

        async def write() -> tuple[bool, ConnectorInfo]:
            self._require_leader()
            exists = self.config_store.snapshot().contains(name)
            if exists and not allow_replace:
                raise AlreadyExistsError(f"Connector {name} already exists")
            await self.config_store.put_connector_config(
                name, dict(config), None if exists else initial_state
            )
            return not exists, await self.connector_info(name)

        return await self._submit(write)

    async def delete_connector(self, name: str) -> None:
        async def delete() -> None:
            self._require_leader()
            self._known_config(name)
            await self.config_store.remove_connector_config(name)

        await self._submit(delete)

    async def pause_connector(self, name: str) -> None:
        self._known_connector(name, "Unknown connector {}")
        await self.config_store.put_target_state(name, TargetState.PAUSED)

    async def resume_connector(self, name: str) -> None:
        self._known_connector(name, "Unknown connector {}")
        await self.config_store.put_target_state(name, TargetState.STARTED)

    async def stop_connector(self, name: str) -> None:
        async def stop() -> None:
            self._require_leader()
            self._known_connector(name, "Unknown connector {}")
            await self.config_store.put_task_configs(name, [])
            await self.config_store.put_target_state(name, TargetState.STOPPED)

        await self._submit(stop)

    async def restart_connector(
        self, name: str, *, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        async def restart() -> ConnectorStateInfo | None:
            self._known_connector(name, "Unknown connector: {}")
            snapshot = self.config_store.snapshot()
            if not include_tasks and not only_failed:
                if name in self.worker.connectors:
                    await self._restart_connector_locally(name, snapshot)
                    return None
                self._require_leader()
                owner = self._owner_url(name)
                raise NotAssignedError(f"Connector {name} is not assigned to this worker", owner)
            self._require_leader()
            if self.status_store.get_connector(name) is None:
                raise NotFoundError(f"Status for connector {name} not found")
            request = RestartRequest(name, only_failed=only_failed, include_tasks=include_tasks)
            plan = self._restart_plan(name, request)
            await self.config_store.put_restart_request(request)
            info = self.connector_status(name)
            if plan is None:
                return info
            restart_connector, tasks = plan
            connector = info.connector
            if restart_connector:
                connector = ConnectorState(State.RESTARTING.value, connector.worker_id)
            states = [
                TaskState(State.RESTARTING.value, t.worker_id, id=t.id)
                if ConnectorTaskId(name, t.id) in tasks
                else t
                for t in info.tasks
            ]
            return ConnectorStateInfo(name, connector, states, info.type)

        return await self._submit(restart)

    async def restart_task(self, task: ConnectorTaskId) -> None:
        async def restart() -> None:
            snapshot = self.config_store.snapshot()
            if snapshot.connector_config(task.connector) is None:
                raise NotFoundError(f"Unknown connector: {task.connector}")
            if snapshot.task_config(task) is None:
                raise NotFoundError(f"Task {task.connector}-{task.task} not found")
            if task in self.worker.tasks:
                await self._restart_tasks_locally([task], snapshot)
                return
            self._require_leader()
            raise NotAssignedError(
                f"Task {task.connector}-{task.task} is not assigned to this worker", self._owner_url(task)
            )

        await self._submit(restart)

    def _owner_url(self, item: str | ConnectorTaskId) -> str | None:
        leader_state = self.coordinator.leader_state
        return leader_state.owner_url(item) if leader_state is not None else None

    async def put_task_configs(
        self, name: str, configs: Sequence[Mapping[str, str]], body: bytes, headers: Mapping[str, str]
    ) -> None:
        if self._protocol() == ConnectProtocolCompatibility.SESSIONED:
            allowed = [str(a) for a in self.config["inter.worker.verification.algorithms"]]
            verify(self._session_key.key_bytes if self._session_key else None, body, headers, allowed)

        async def write() -> None:
            self._require_leader()
            self._known_config(name)
            await self.config_store.put_task_configs(name, [dict(c) for c in configs])

        await self._submit(write)

    # ===========================================================================================
    # REST API completion: plugins and validation, PATCH config, offsets (KIP-875), active topics
    # (KIP-558) and loggers (KIP-495/976). Everything below was added for the full REST API.
    # ===========================================================================================

    def _known_connector(self, name: str, message: str) -> dict[str, str]:
        """``_known_config`` with the wording of the calling Java resource (e.g. ``Unknown connector c``)."""
        try:
            return self._known_config(name)
        except NotFoundError:
            raise NotFoundError(message.format(name)) from None

    async def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> ConnectorInfo:
        """KIP-477: merge ``patch`` into the current config (``None`` removes a key), validate, write."""
        if "name" in patch and patch["name"] != name:
            raise BadRequestError(
                f"Connector name configuration ({patch['name']}) doesn't match connector name in the URL ({name})"
            )

        async def write() -> ConnectorInfo:
            self._require_leader()
            merged: dict[str, str | None] = dict(self._known_config(name))
            for key, value in patch.items():
                if value is None:
                    merged.pop(key, None)
                else:
                    merged[key] = value
            config = {k: v for k, v in merged.items() if v is not None}
            self._validate(name, config)
            await self.config_store.put_connector_config(name, config, None)
            return await self.connector_info(name)

        return await self._submit(write)

    async def connector_offsets(self, name: str) -> dict[str, Any]:
        """``GET /connectors/{c}/offsets``: every source partition with a committed offset."""
        self._known_config(name)
        pairs = await self._offset_store.connector_offsets(name)
        return {"offsets": [{"partition": p, "offset": o} for p, o in pairs]}

    def _require_stopped_without_tasks(self, name: str) -> dict[str, str]:
        config = self._known_config(name)
        snapshot = self.config_store.snapshot()
        if snapshot.target_state(name) != TargetState.STOPPED or snapshot.task_count(name) != 0:
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be "
                "done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        return config

    def reset_connector_active_topics(self, name: str) -> None:
        super().reset_connector_active_topics(name)
        for key in [k for k in self._recorded_topics if k[0] == name]:
            del self._recorded_topics[key]

    def _install_topic_tracking(self) -> None:
        self._recorded_topics: dict[tuple[str, str], float] = {}
        if bool(self.config["topic.tracking.enable"]):
            self.worker.topic_tracker = self.record_active_topic

    def record_active_topic(self, task: ConnectorTaskId, topic: str) -> None:
        """A source task produced to ``topic``: record it once (Java's ``recordActiveTopic``).

        Called after every acknowledged batch; the status cache decides, and a write not yet read
        back is not repeated for ``TOPIC_RECORD_RETRY_S``.
        """
        key = (task.connector, topic)
        if self.status_store.get_topic(task.connector, topic) is not None:
            self._recorded_topics.pop(key, None)
            return
        now = self._clock()
        sent = self._recorded_topics.get(key)
        if sent is not None and now - sent < TOPIC_RECORD_RETRY_S:
            return
        self._recorded_topics[key] = now
        with contextlib.suppress(ConnectError):
            self.status_store.put_topic(TopicStatus(topic, task.connector, task.task, int(now * 1000)))

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """KIP-976: write ``logger-cluster-<namespace>``; every worker applies it when read back."""
        parse_level(level)
        await self.config_store.put_logger_level(namespace, level)

    def _remove_stale_statuses(self, snapshot: ClusterConfigState) -> None:
        """Leader, after a rebalance (spec §2.4): tombstone the statuses of deleted connectors (and
        their tasks and topics) and of tasks numbered at or above their connector's task count (a
        STOPPED connector has none)."""
        configured = snapshot.connector_configs
        stale = []
        for name in self.status_store.connectors():
            count = snapshot.task_count(name) if name in configured else 0
            if name not in configured or self.status_store.has_task_from(name, count):
                stale.append((name, count))
        for name, count in sorted(stale):
            for status in self.status_store.get_all(name):
                if status.task_id.task >= count:
                    self.status_store.put(
                        TaskStatus(status.task_id, State.DESTROYED, self._worker_id, self._generation)
                    )
            if name not in configured:
                for topic in self.status_store.get_topics(name):
                    self.status_store.delete_topic(name, topic.topic)
                if self.status_store.get_connector(name) is not None:
                    self.status_store.put(
                        ConnectorStatus(name, State.DESTROYED, self._worker_id, self._generation)
                    )

    def _publish_off_tick(self, name: str, leader_url: str, body: bytes, headers: Mapping[str, str]) -> None:
        """A follower POSTs task configs to the leader outside the tick, as Java does on its forwarding
        executor: awaiting it in the tick deadlocks when the leader is rebalancing and waits for us.
        A failure schedules the connector's reconfiguration again with the usual backoff."""
        publishing = self._publishing
        previous = publishing.pop(name, None)
        if previous is not None:
            previous.cancel()

        async def publish() -> None:
            try:
                await self._publish(leader_url, name, body, headers)
                self._publish_backoff.pop(name, None)
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                delay = min(
                    max(self._publish_backoff.get(name, 0.0) * 2, RECONFIGURE_BACKOFF_S[0]),
                    RECONFIGURE_BACKOFF_S[1],
                )
                self._publish_backoff[name] = delay
                self._needs_reconfig[name] = self._clock() + delay
                self._wakeup.set()
                log.warning(
                    "Connector %s: publishing task configs failed, retrying in %.2f s: %s", name, delay, exc
                )
            finally:
                if publishing.get(name) is task:
                    del publishing[name]

        task = asyncio.create_task(publish(), name=f"publish-task-configs-{name}")
        publishing[name] = task

    def _apply_cluster_logger_level(self, namespace: str, level: str) -> None:
        try:
            LOGGERS.set_level(namespace, level)
        except NotFoundError:
            log.warning("Ignoring cluster-wide level %r for logger %s: not a log level", level, namespace)


TOPIC_RECORD_RETRY_S = 5.0


def reverse_transform(
    task_configs: list[dict[str, str]], raw_connector_config: Mapping[str, str | None]
) -> list[dict[str, str]]:
    """Java's ``reverseTransform``: a task config key whose connector config value holds a ``${...}``
    variable gets the raw variable back, so resolved secrets never reach the config topic."""
    variables = {k: v for k, v in raw_connector_config.items() if v and VARIABLE_PATTERN.search(v)}
    if not variables:
        return task_configs
    return [{k: variables.get(k, v) for k, v in config.items()} for config in task_configs]


def _restart_impact(request: RestartRequest) -> int:
    """Java's ordering of pending restart requests for one connector (highest impact wins)."""
    if request.only_failed:
        return 1 if request.include_tasks else 0
    return 3 if request.include_tasks else 2
