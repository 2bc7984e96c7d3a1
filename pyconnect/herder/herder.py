"""Herder: the loop around :class:`~pyconnect.herder.core.HerderCore` and the REST-facing API.

Contract:
- One run task owns an ``asyncio.TaskGroup``; every background coroutine of the herder (the tick
  loop, follower publications of task configs, dedicated-mode connector configuration) is a child of
  it, so ``stop`` cancels and awaits them all.
- The tick loop asks the core for a step, performs its effects in order (feeding results back), and
  waits for an event (a config record, a REST write, the member needing a rejoin, a connector asking
  for reconfiguration) or the core's wait time once a step comes back empty. A step that fails is
  logged and retried after a backoff (0.25 s doubling to 5 s); the herder never dies of it.
- Config-topic events arrive from the store's tail and go to the core at once (they only record).
- REST writes are queued and run when the core says the group is settled; reads answer from the
  config snapshot and the status cache directly. Under :data:`~pyconnect.herder.modes.STANDALONE` a
  write is answered once the work it causes is applied.
- Statuses go to the status store stamped with this worker's id and the current generation.
- Shutdown order (``stop``, idempotent): background tasks, queued requests failed, all work stopped
  (tasks commit offsets), statuses flushed, the group left, config and status stores stopped.
- A member of a group (not standalone) keeps Java's ``connect-worker-rebalance-metrics`` and
  ``connect-coordinator-metrics`` in the worker's metrics: a rebalance starts when a round's outcome
  arrives and succeeds once the work it assigns has been started (Java's ``DistributedHerder``).

Modes are :class:`~pyconnect.herder.modes.HerderMode` values; membership (a Connect group or a group
of one) comes from ``membership_factory``. The herder makes itself the worker's status reporter and
gives the worker the membership's ``may_commit`` as its source offset-commit permit (the stale-membership
fence, :mod:`pyconnect.herder.commit_fence`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from pyconnect.concurrency import together
from pyconnect.config.definition import ConfigValue
from pyconnect.errors import (
    BadRequestError,
    ConnectError,
    NotFoundError,
    NotLeaderError,
)
from pyconnect.herder import effects as fx
from pyconnect.herder import requests as rq
from pyconnect.herder.abstract import AbstractHerder
from pyconnect.herder.backoff import Backoff
from pyconnect.herder.core import CoreSettings, HerderCore, Rebalanced
from pyconnect.herder.entities import (
    ConnectorInfo,
    ConnectorState,
    ConnectorStateInfo,
    ConnectorType,
    TaskInfo,
    TaskState,
)
from pyconnect.herder.exactly_once_validation import check_source_exactly_once
from pyconnect.herder.health import (
    HEALTH_CHECK_TIMEOUT_S,
    TickRecorder,
    WorkerHealth,
    stage_description,
    unhealthy,
    worker_verdict,
)
from pyconnect.herder.loggers import LOGGERS, parse_level
from pyconnect.herder.membership import Membership
from pyconnect.herder.modes import DISTRIBUTED, HerderMode
from pyconnect.herder.signing import verify
from pyconnect.herder.sink_offsets import sink_connector_offsets
from pyconnect.herder.source_fencing import RequestFencing, SourceFencing
from pyconnect.metrics.connect import CoordinatorMetrics, RebalanceMetrics
from pyconnect.protocol.assignor import ConfigSnapshot
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility
from pyconnect.protocol.internal_records import (
    ConnectorStatus,
    SessionKeyRecord,
    State,
    TargetState,
    TaskStatus,
    TopicStatus,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.config import ConfigStore
from pyconnect.stores.config_events import ConfigEvent, TaskConfigsCommitted
from pyconnect.stores.status import StatusStore
from pyconnect.worker.status import Item
from pyconnect.worker.worker import Worker

log = logging.getLogger(__name__)

T = TypeVar("T")
PublishTaskConfigs = Callable[[str, str, bytes, Mapping[str, str]], Awaitable[None]]

REQUEST_TIMEOUT_S = 90.0
TOPIC_RECORD_RETRY_S = 5.0
STEP_BACKOFF_S = (0.25, 5.0)


class Herder(AbstractHerder):
    def __init__(
        self,
        config: Any,
        *,
        worker: Worker,
        config_store: ConfigStore,
        status_store: StatusStore,
        membership_factory: Callable[[Herder], Membership],
        rest_url: str,
        kafka_cluster_id: str,
        publish_task_configs: PublishTaskConfigs | None = None,
        request_fencing: RequestFencing | None = None,
        mode: HerderMode = DISTRIBUTED,
        worker_id: str | None = None,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.config = config
        self.mode = mode
        self.worker = worker
        self.config_store = config_store
        self.status_store = status_store
        self.rest_url = rest_url if rest_url.endswith("/") else rest_url + "/"
        self._worker_id = worker_id or self.rest_url.split("://", 1)[-1].rstrip("/")
        self._kafka_cluster_id = kafka_cluster_id
        self._publish = publish_task_configs
        self._clock = clock
        self.core = HerderCore(
            CoreSettings.from_worker_config(
                config, self._worker_id, manages_connectors=bool(mode.managed_connectors)
            )
        )
        self.membership = membership_factory(self)
        self._rebalance_metrics: RebalanceMetrics | None = None
        self._coordinator_metrics: CoordinatorMetrics | None = None
        client_id = self.membership.client_id
        if client_id is not None:
            self._rebalance_metrics = RebalanceMetrics(
                worker.metrics,
                protocol=lambda: self.core.protocol.name if self.core.protocol is not None else None,
                leader_url=lambda: self.core.leader_url,
                generation=lambda: self.core.generation,
            )
            self._coordinator_metrics = CoordinatorMetrics(worker.metrics, client_id, self._assignment_size)
        worker.reporter = self
        worker.offset_commit_permit = self.membership.may_commit
        self._recorded_topics: dict[tuple[str, str], float] = {}
        if config.topic_tracking_enable:
            worker.topic_tracker = self.record_active_topic

        self.tick = TickRecorder()
        self.health_timeout_s = HEALTH_CHECK_TIMEOUT_S
        self._wakeup = asyncio.Event()
        self._idle = asyncio.Event()
        self._marked_ready = False
        self._stopping = False
        self._run_task: asyncio.Task[None] | None = None
        self._group: asyncio.TaskGroup | None = None
        self._requests: list[tuple[rq.Request, asyncio.Future[object]]] = []
        self._publishing: dict[str, asyncio.Task[None]] = {}
        self._configuring: asyncio.Task[None] | None = None
        self._connector_types: dict[str, ConnectorType] = {}
        self.fencing = SourceFencing(self, request_fencing)
        """KIP-618 zombie fencing (pyconnect.herder.source_fencing)."""

    def _validate_source_connector(
        self, connector: Any, config: Mapping[str, str], validated: Mapping[str, ConfigValue]
    ) -> None:
        """KIP-618 preflight checks of ``exactly.once.support`` and ``transaction.boundary``
        (:mod:`pyconnect.herder.exactly_once_validation`)."""
        check_source_exactly_once(
            connector, config, validated, worker_exactly_once=self.config.exactly_once_source_enabled
        )

    # -- identity and readiness ----------------------------------------------------------------

    @property
    def worker_id(self) -> str:
        return self._worker_id

    @property
    def kafka_cluster_id(self) -> str:
        return self._kafka_cluster_id

    @property
    def is_leader(self) -> bool:
        return self.core.is_leader

    @property
    def generation(self) -> int:
        return self.core.generation

    @property
    def flow(self) -> str | None:
        return self.mode.flow

    @property
    def desired_connector_configs(self) -> dict[str, dict[str, str]]:
        """Dedicated mode: the connector configs this herder keeps in the config topic."""
        return {name: dict(config) for name, config in self.mode.managed_connectors.items()}

    def ready(self) -> bool:
        if self.mode.ready_when_marked:
            return self._marked_ready and self.core.ready
        return self.core.ready

    def mark_ready(self) -> None:
        """Standalone: the connectors named on the command line exist (Java's ``herder.ready()``)."""
        self._marked_ready = True

    # -- lifecycle -----------------------------------------------------------------------------

    async def start(self) -> None:
        """Start the stores (the config store's events go to the core), join, start the loop."""
        self.config_store.set_update_listener(self._on_config_event)
        await together(self.status_store.start(), self.config_store.start())
        self.core.session_key = self.config_store.snapshot().session_key
        await self.membership.start()
        started = asyncio.get_running_loop().create_future()
        self._run_task = asyncio.create_task(self._run(started), name=f"herder-{self._worker_id}")
        await started

    async def _run(self, started: asyncio.Future[None]) -> None:
        async with asyncio.TaskGroup() as group:
            self._group = group
            group.create_task(self._tick_loop(), name=f"herder-tick-{self._worker_id}")
            started.set_result(None)

    async def stop(self) -> None:
        """Stop everything in the documented order; idempotent."""
        if self._stopping:
            return
        self._stopping = True
        run, self._run_task = self._run_task, None
        if run is not None:
            run.cancel()
            await asyncio.wait([run])
        for _, future in self._requests:
            if not future.done():
                future.set_exception(ConnectError("Worker is shutting down"))
        self._requests.clear()
        await self.worker.stop()
        try:
            await self.status_store.flush()
        except Exception as exc:
            log.warning("Worker %s: statuses not flushed at shutdown: %s", self._worker_id, exc)
        await self.membership.stop()
        await self.config_store.stop()
        await self.status_store.stop()
        for metrics in (self._rebalance_metrics, self._coordinator_metrics):
            if metrics is not None:
                metrics.close()

    def _assignment_size(self) -> tuple[int, int] | None:
        holding = self.membership.holding
        return None if holding is None else (len(holding.connectors), len(holding.tasks))

    def _rebalance_resolved(self) -> None:
        """After a round's effects: the rebalance succeeded once its work was started."""
        metrics = self._rebalance_metrics
        if metrics is not None and metrics.rebalancing and self.core.rebalance_resolved:
            metrics.rebalance_succeeded()

    def _spawn(self, coroutine: Awaitable[None], name: str) -> asyncio.Task[None]:
        if self._group is None:
            raise ConnectError("Worker is shutting down")
        return self._group.create_task(coroutine, name=name)  # type: ignore[arg-type]

    # -- the loop ----------------------------------------------------------------------------------

    async def _tick_loop(self) -> None:
        backoff = Backoff(*STEP_BACKOFF_S)
        while True:
            try:
                idle = await self._step()
                backoff.reset()
                self.tick.step_succeeded()
            except Exception as exc:
                self.tick.step_failed(exc, self._now_ms())
                self.core.step_failed()
                delay = backoff.failed()
                log.exception("Worker %s: herder tick failed; retrying in %.2f s", self._worker_id, delay)
                await asyncio.sleep(delay)
                continue
            if idle:
                await self._wait_for_work()

    async def _step(self) -> bool:
        """One core step performed; True when the core had nothing to do."""
        membership = self.membership
        effects = self.core.step(
            self._clock(),
            self.config_store.snapshot(),
            self.worker,
            self.status_store,
            coordinator_lost=membership.lost,
            member_needs_rejoin=membership.rejoin_needed(),
            holding=membership.holding is not None,
            requests_waiting=bool(self._requests),
            holds_write_privileges=self.config_store.holds_write_privileges,
        )
        if not effects:
            if not self._wakeup.is_set():
                self._idle.set()
            return True
        await self._perform(effects)
        return False

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    async def _wait_for_work(self) -> None:
        wakeups = (self._wakeup, self.membership.wakeup)
        if not any(event.is_set() for event in wakeups):
            self.tick.begin("polling the group coordinator until interrupted", self._now_ms())
            waiters = [asyncio.ensure_future(event.wait()) for event in wakeups]
            try:
                await asyncio.wait(
                    waiters, timeout=self.core.wait_time(self._clock()), return_when=asyncio.FIRST_COMPLETED
                )
            finally:
                for waiter in waiters:
                    waiter.cancel()
        self._wakeup.clear()

    def _wake(self) -> None:
        self._idle.clear()
        self._wakeup.set()

    async def settled(self) -> None:
        """Wait until the loop has applied everything that happened so far and the statuses it
        wrote are readable (standalone replies; tests)."""
        try:
            await asyncio.wait_for(self._idle.wait(), REQUEST_TIMEOUT_S)
        except TimeoutError:
            raise ConnectError(
                "Request timed out. The worker is currently busy with another operation."
            ) from None
        await self.status_store.flush()
        await self.status_store.read_to_end()

    def _on_config_event(self, event: ConfigEvent) -> None:
        if isinstance(event, TaskConfigsCommitted):
            self.fencing.rounds.conflict(event.connector)
        for effect in self.core.config_event(event, self.worker):
            if isinstance(effect, fx.ApplyLoggerLevel):
                self._apply_logger_level(effect.namespace, effect.level)
        self._wake()

    # -- performing effects ------------------------------------------------------------------------

    async def _perform(self, effects: Sequence[fx.Effect]) -> None:
        for effect in effects:
            description = stage_description(effect)
            if description is None:
                await self._perform_one(effect)
                continue
            self.tick.begin(description, self._now_ms())
            try:
                await self._perform_one(effect)
            finally:
                self.tick.complete(self._now_ms())

    async def _perform_one(self, effect: fx.Effect) -> None:
        core = self.core
        match effect:
            case fx.Rebalance():
                outcome = await self.membership.rebalance()
                if self._rebalance_metrics is not None:
                    self._rebalance_metrics.rebalance_started()
                await self._perform(
                    core.rebalanced(
                        Rebalanced.from_outcome(outcome),
                        self.config_store.snapshot(),
                        self.worker,
                        self.status_store,
                        self._clock(),
                    )
                )
                self._rebalance_resolved()
            case fx.ReadConfigToEnd(timeout_s=timeout):
                try:
                    await self.config_store.refresh(timeout)
                    timed_out = False
                except TimeoutError:
                    timed_out = True
                await self._perform(
                    core.config_read(
                        self.config_store.snapshot(),
                        self.worker,
                        self.status_store,
                        self._clock(),
                        timed_out=timed_out,
                    )
                )
                self._rebalance_resolved()
            case fx.ClaimWritePrivileges():
                try:
                    await self.config_store.claim_write_privileges()
                except Exception as exc:
                    log.error(
                        "Worker %s: unable to claim write privileges for the config topic as leader; "
                        "retrying while still the leader: %s",
                        self._worker_id,
                        exc,
                    )
                    core.write_privileges_claimed(False, self._clock())
                else:
                    core.write_privileges_claimed(True, self._clock())
            case fx.DropAssignment(reason=reason):
                await self.membership.drop_assignment(reason)
            case fx.Sleep(seconds=seconds):
                await asyncio.sleep(seconds)
            case fx.StartConnector(connector=name, config=config, target=target):
                await self.worker.start_connector(
                    name,
                    self._resolved(config),
                    target,
                    self._request_reconfiguration,
                    on_started=lambda ok, state, name=name: self._connector_started(name, ok, state),
                )
            case fx.StopConnector(connector=name):
                await self.worker.stop_connector(name)
            case fx.SetTargetState(connector=name, target=target):
                await self.worker.set_target_state(name, target)
            case fx.StartTask(task=task, connector_config=cc, task_config=tc, target=target):
                generation = self.config_store.snapshot().task_config_generation(task.connector)
                await self.worker.start_task(
                    task,
                    self._resolved(cc),
                    self._resolved(tc),
                    target,
                    preflight=lambda: self.fencing.preflight(task),
                    postflight=lambda: self.fencing.postflight(task, generation),
                )
            case fx.StopTasks(tasks=tasks):
                await self.worker.stop_tasks(tasks)
            case fx.Report(item=item, state=state):
                self.report(item, state)
            case fx.PutStatus(status=status):
                self.status_store.put(status)
            case fx.DeleteTopicStatus(connector=name, topic=topic):
                self.status_store.delete_topic(name, topic)
            case fx.GenerateTaskConfigs(connector=name, max_tasks=max_tasks):
                try:
                    configs = await self.worker.connector_task_configs(name, max_tasks)
                except Exception as exc:
                    core.reconfiguration_failed(name, exc, self._clock())
                    return
                await self._perform(
                    core.task_configs_generated(name, configs, self.config_store.snapshot(), self._clock())
                )
            case fx.WriteTaskConfigs(connector=name, configs=configs):
                try:
                    await self._write(self.config_store.put_task_configs(name, [dict(c) for c in configs]))
                except Exception as exc:
                    core.reconfiguration_failed(name, exc, self._clock())
                else:
                    core.task_configs_written(name)
            case fx.PublishTaskConfigs():
                self._publish_in_background(effect)
            case fx.WriteSessionKey(algorithm=algorithm, length=length, created_ms=created):
                key = SessionKeyRecord(os.urandom(length), algorithm, created)
                await self._write(self.config_store.put_session_key(key))
                core.session_key_written(key)
            case fx.ApplyLoggerLevel(namespace=namespace, level=level):
                self._apply_logger_level(namespace, level)
            case fx.ConfigureManagedConnectors():
                self._configure_in_background()
            case fx.RunRequests():
                await self._run_requests()

    def _connector_started(self, name: str, ok: bool, state: TargetState | None) -> None:
        """A connector's start ended (maybe in the background, after the step that began it), in
        target state ``state`` (a pause, resume or stop that came meanwhile is applied by then)."""
        self.core.connector_started(name, ok, state or TargetState.STARTED, self._clock())
        self._wake()

    def _request_reconfiguration(self, name: str) -> None:
        self.core.reconfiguration_requested(name, self._clock())
        self._wake()

    async def on_revoked(
        self, leader: str | None, connectors: Sequence[str], tasks: Sequence[ConnectorTaskId]
    ) -> None:
        """Stop revoked work before the next round (membership callback)."""
        if tasks:
            await self.worker.stop_tasks(tasks)
        for name in connectors:
            await self.worker.stop_connector(name)
        self.core.revoked(connectors, tasks)
        if connectors or tasks:
            try:
                await self.status_store.flush()
            except Exception as exc:
                log.warning("Worker %s: statuses of revoked work not flushed: %s", self._worker_id, exc)

    def config_snapshot_for_assignor(self) -> tuple[int, ConfigSnapshot]:
        snapshot = self.config_store.snapshot()
        counts = {name: snapshot.task_count(name) for name in snapshot.connector_configs}
        return snapshot.offset, ConfigSnapshot(snapshot.offset, counts)

    def _publish_in_background(self, effect: fx.PublishTaskConfigs) -> None:
        """A follower POSTs task configs to the leader outside the tick, as Java does on its
        forwarding executor: awaiting it in the tick deadlocks when the leader is rebalancing and
        waits for us. A failure schedules the connector's reconfiguration again with a backoff."""
        name = effect.connector
        previous = self._publishing.pop(name, None)
        if previous is not None:
            previous.cancel()
        publish = self._publish
        if publish is None:
            raise ConnectError(f"Connector {name}: this herder cannot publish task configs to a leader")

        async def run() -> None:
            try:
                await publish(effect.leader_url, name, effect.body, effect.headers)
                self.core.publish_succeeded(name)
            except Exception as exc:
                self.core.publish_failed(name, exc, self._clock())
                self._wake()
            finally:
                if self._publishing.get(name) is task:
                    del self._publishing[name]

        task = self._spawn(run(), f"publish-task-configs-{name}")
        self._publishing[name] = task

    def _apply_logger_level(self, namespace: str, level: str) -> None:
        try:
            LOGGERS.set_level(namespace, level)
        except NotFoundError:
            log.warning("Ignoring cluster-wide level %r for logger %s: not a log level", level, namespace)

    # -- dedicated mode --------------------------------------------------------------------------

    def _configure_in_background(self) -> None:
        log.info("This node %s is now a leader for %s. Configuring connectors...", self._worker_id, self.flow)
        previous = self._configuring
        if previous is not None:
            previous.cancel()
        self._configuring = self._spawn(self._configure_connectors(), f"configure-{self.flow}")

    async def _configure_connectors(self) -> None:
        """Write each managed connector config that differs from the config topic, in order.

        A write refused because leadership moved on is logged and dropped (the new leader
        configures); any other failure is logged with its cause."""
        for name, desired in self.mode.managed_connectors.items():
            stored = self.config_store.snapshot().connector_config(name)
            actual = None if stored is None else {k: v for k, v in stored.items() if v is not None}
            if actual == desired:
                log.info(
                    "This node is a leader for %s and configuration for %s is already up to date.",
                    self.flow,
                    name,
                )
                continue
            try:
                await self.put_connector_config(name, desired, allow_replace=True)
            except NotLeaderError:
                log.info(
                    "This node lost leadership for %s while trying to update the connector configuration for "
                    "%s. Using existing connector configuration.",
                    name,
                    self.flow,
                )
            except Exception as exc:
                log.error("Failed to configure %s connector for %s: %s", name, self.flow, exc)
            else:
                log.info("%s connector configured for %s.", name, self.flow)

    async def configured(self) -> None:
        """Dedicated mode: wait for the connector configuration started by the last leadership."""
        configuring = self._configuring
        if configuring is not None:
            await asyncio.wait([configuring])

    # -- status reporting (the worker's StatusReporter) ------------------------------------------

    def report(self, item: Item, state: State, trace: str | None = None, version: str | None = None) -> None:
        generation = self.core.generation
        if isinstance(item, ConnectorTaskId):
            status: ConnectorStatus | TaskStatus = TaskStatus(
                item, state, self._worker_id, generation, trace, version
            )
        else:
            status = ConnectorStatus(item, state, self._worker_id, generation, trace, version)
        self.status_store.report(status)

    # -- requests queued into the loop -----------------------------------------------------------

    def spawn(self, coroutine: Awaitable[None], name: str) -> asyncio.Task[None]:
        return self._spawn(coroutine, name)

    async def submit(self, request: rq.Request) -> object:
        return await self._submit(request)

    async def write(self, write: Awaitable[None]) -> None:
        await self._write(write)

    def connector_type(self, config: Mapping[str, str | None]) -> ConnectorType:
        return self._connector_type(config)

    async def _submit(self, request: rq.Request) -> object:
        """Queue ``request`` for the loop (run once the group is settled) and wait for its reply.

        A request whose waiter timed out still runs (as in Java); its reply goes nowhere."""
        if self._stopping:
            raise ConnectError("Worker is shutting down")
        future: asyncio.Future[object] = asyncio.get_running_loop().create_future()
        future.add_done_callback(_reply_retrieved)
        self._requests.append((request, future))
        self._wake()
        try:
            result = await asyncio.wait_for(asyncio.shield(future), REQUEST_TIMEOUT_S)
        except TimeoutError:
            raise ConnectError(
                "Request timed out. The worker is currently busy with a rebalance or another operation."
            ) from None
        if self.mode.reply_when_settled:
            await self.settled()
        return result

    async def _run_requests(self) -> None:
        requests, self._requests = self._requests, []
        for request, future in requests:
            if future.done():
                continue
            try:
                effects = rq.request_effects(
                    self.core,
                    request,
                    self.config_store.snapshot(),
                    self.status_store,
                    self.worker,
                    self.membership.owner_url,
                )
                reply = await self._perform_request(effects)
            except Exception as exc:
                future.set_exception(exc)
            else:
                future.set_result(reply)

    async def _perform_request(self, effects: Sequence[fx.Effect]) -> object:
        """Perform a request's effects in order; the reply is the :class:`Reply`'s value (or the
        result of the offset modification). The first failure is the reply."""
        reply: object = None
        for effect in effects:
            match effect:
                case fx.ValidateConnectorConfig(connector=name, config=config):
                    await self._validate(name, config)
                case fx.WriteConnectorConfig(connector=name, config=config, initial_state=state):
                    await self._write(self.config_store.put_connector_config(name, dict(config), state))
                case fx.RemoveConnectorConfig(connector=name):
                    await self._write(self.config_store.remove_connector_config(name))
                case fx.WriteTaskConfigs(connector=name, configs=configs):
                    await self._write(self.config_store.put_task_configs(name, [dict(c) for c in configs]))
                case fx.WriteTargetState(connector=name, target=target, read_back=read_back):
                    timeout = self.core.settings.sync_timeout_s if read_back else None
                    await self._write(
                        self.config_store.put_target_state(name, target, read_back_timeout=timeout)
                    )
                case fx.WriteRestartRequest(request=request):
                    await self._write(self.config_store.put_restart_request(request))
                case fx.ModifyConnectorOffsets(connector=name, config=config, offsets=offsets):
                    reply = await self._modify_offsets(name, config, offsets)
                case fx.FenceZombies(connector=name, sources_only=sources_only):
                    reply = await self.fencing.begin(name, sources_only=sources_only)
                case fx.WriteTaskCountRecord(connector=name, task_count=count, generation=generation):
                    await self.fencing.record(name, count, generation)
                case fx.RequireTaskRunning(task=task):
                    if task not in self.worker.tasks:
                        raise ConnectError(f"Failed to start task: {task.connector}-{task.task}")
                case fx.Reply(value=value):
                    reply = value
                case _:
                    await self._perform([effect])
        return reply

    async def _write(self, write: Awaitable[None]) -> None:
        """One config-topic write; its outcome is what ``/health`` reports of a leader's writes."""
        try:
            await write
        except Exception as exc:
            self.tick.write_failed(exc, self._now_ms())
            raise
        self.tick.write_succeeded()

    # -- the HerderApi: health -----------------------------------------------------------------

    async def health_check(self) -> WorkerHealth:
        """KIP-1017: queue a check into the loop and judge (pyconnect.herder.health)."""
        try:
            await asyncio.wait_for(self._submit(rq.HealthCheck()), self.health_timeout_s)
            answered = True
        except TimeoutError:
            answered = False
        except ConnectError as exc:
            return unhealthy(str(exc))
        return worker_verdict(
            answered=answered,
            ready=self.ready(),
            recorder=self.tick,
            leader=self.core.is_leader,
            lacks_write_privileges=self.core.settings.transactional_leader
            and not self.config_store.holds_write_privileges,
            claim_failure=self.config_store.claim_failure,
        )

    def health_leader_url(self) -> tuple[bool, str | None]:
        """(whether a follower should ask its leader, that leader's URL)."""
        asks = self.mode is DISTRIBUTED and not self.core.is_leader
        return asks, self.core.leader_url

    # -- the HerderApi: reads ------------------------------------------------------------------

    def connectors(self) -> list[str]:
        return self.config_store.snapshot().connectors()

    def _known_config(self, name: str) -> dict[str, str]:
        return rq.known_config(self.config_store.snapshot(), name)

    def _known_connector(self, name: str, message: str) -> dict[str, str]:
        return rq.known_config(self.config_store.snapshot(), name, message)

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

    async def connector_offsets(self, name: str) -> dict[str, Any]:
        """``GET /connectors/{c}/offsets``: a sink's from its consumer group; a source's every partition
        with a committed offset (from the connector's own ``offsets.storage.topic`` when it has one:
        see :mod:`pyconnect.stores.connector_offsets`)."""
        config = self._known_config(name)
        if self._connector_type(config) == ConnectorType.SINK:
            return await sink_connector_offsets(self.worker, name, self._resolved(config))
        async with self.worker.offsets_opened(name, config, read_only=True) as view:
            pairs = await view.connector_offsets(name)
        return {"offsets": [{"partition": p, "offset": o} for p, o in pairs]}

    # -- the HerderApi: writes -----------------------------------------------------------------

    async def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> tuple[bool, ConnectorInfo]:
        await self._validate(name, config)
        created = await self._submit(rq.PutConnectorConfig(name, dict(config), allow_replace, initial_state))
        return bool(created), await self.connector_info(name)

    async def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> ConnectorInfo:
        """KIP-477: merge ``patch`` into the current config (``None`` removes a key), validate, write."""
        current = self.config_store.snapshot().connector_configs.get(name)
        validated = None
        if current is not None:  # else the leader answers 404 first, whatever the patch holds (as Java)
            if "name" in patch and patch["name"] != name:
                raise BadRequestError(
                    f"Connector name configuration ({patch['name']}) doesn't match connector name in the URL ({name})"
                )
            # Validated here, so that a connector whose validate blocks holds up this request, not the
            # herder's loop (which validates again only if the stored config moved meanwhile).
            stored = {k: v for k, v in current.items() if v is not None}
            validated = rq.patched(stored, patch)
            await self._validate(name, validated)
        await self._submit(rq.PatchConnectorConfig(name, dict(patch), validated))
        return await self.connector_info(name)

    async def delete_connector(self, name: str) -> None:
        await self._submit(rq.DeleteConnector(name))

    async def pause_connector(self, name: str) -> None:
        await self._set_target_state(name, TargetState.PAUSED)

    async def resume_connector(self, name: str) -> None:
        await self._set_target_state(name, TargetState.STARTED)

    async def _set_target_state(self, name: str, target: TargetState) -> None:
        """Any worker writes PAUSED/STARTED (Java does not forward them)."""
        self._known_connector(name, "Unknown connector {}")
        await self.config_store.put_target_state(name, target)
        if self.mode.reply_when_settled:
            self._wake()
            await self.settled()

    async def stop_connector(self, name: str) -> None:
        await self._submit(rq.StopConnector(name))

    async def restart_connector(
        self, name: str, *, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        """``None`` for a plain restart (done); otherwise the status with what the KIP-745 plan
        restarts shown as RESTARTING, each entry keeping its ``worker_id``, ``trace`` and ``version``
        as Java's ``buildRestartPlan`` does (Strimzi stores this body as the connector's status)."""
        accepted = await self._submit(rq.RestartConnector(name, include_tasks, only_failed))
        if not isinstance(accepted, rq.RestartAccepted):
            return None
        status = accepted.connector_status
        if status is None:
            raise NotFoundError(f"No status found for connector {name}")
        restarting = State.RESTARTING.value
        connector = ConnectorState(
            restarting if accepted.connector else status.state.value,
            status.worker_id,
            status.trace,
            status.version,
        )
        states = [
            TaskState(
                restarting if t.task_id in accepted.tasks else t.state.value,
                t.worker_id,
                t.trace,
                t.version,
                id=t.task_id.task,
            )
            for t in accepted.task_statuses
        ]
        config = self.config_store.snapshot().connector_configs.get(name) or {}
        return ConnectorStateInfo(name, connector, states, self._connector_type(config))

    async def restart_task(self, task: ConnectorTaskId) -> None:
        await self._submit(rq.RestartTask(task))

    async def put_task_configs(
        self, name: str, configs: Sequence[Mapping[str, str]], body: bytes, headers: Mapping[str, str]
    ) -> None:
        if not self.mode.accepts_task_configs:
            raise BadRequestError(
                "Kafka Connect in standalone mode does not support externally setting task configurations."
            )
        if self.core.protocol == ConnectProtocolCompatibility.SESSIONED:
            allowed = list(self.config.inter_worker_verification_algorithms)
            key = self.core.session_key
            verify(key.key_bytes if key else None, body, headers, allowed)
        await self._submit(rq.PutTaskConfigs(name, tuple(dict(c) for c in configs)))

    async def fence_zombie_source_tasks(self, name: str, body: bytes, headers: Mapping[str, str]) -> None:
        """Internal ``PUT /connectors/{c}/fence`` (KIP-618), signed like task configs."""
        if self.core.protocol == ConnectProtocolCompatibility.SESSIONED:
            key = self.core.session_key
            verify(
                key.key_bytes if key else None,
                body,
                headers,
                list(self.config.inter_worker_verification_algorithms),
            )
        await self.fencing.fence(name)

    async def alter_connector_offsets(
        self, name: str, offsets: Sequence[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]
    ) -> str:
        """KIP-875 ``PATCH``: write the given pairs (``None`` offset = tombstone); STOPPED, 0 tasks.
        The connector is looked up first (404, as Java); a ``None`` partition is then refused (400:
        Java writes it, under a key no task can ever read)."""
        self._known_config(name)
        if any(p is None for p, _ in offsets):
            raise BadRequestError("Every offset entry needs a partition: a JSON object, not null")
        pairs = tuple((dict(p or {}), None if o is None else dict(o)) for p, o in offsets)
        return await self._modify_offsets_request(rq.ModifyOffsets(name, pairs))

    async def reset_connector_offsets(self, name: str) -> str:
        """KIP-875 ``DELETE``: a tombstone for every known partition of the connector."""
        return await self._modify_offsets_request(rq.ModifyOffsets(name, None))

    async def _modify_offsets_request(self, request: rq.ModifyOffsets) -> str:
        sink = self._connector_type(self._known_config(request.name)) == ConnectorType.SINK
        if self.config.exactly_once_source_enabled and not sink:  # Java fences source connectors only
            return await self.fencing.modify_offsets(request)
        return str(await self._submit(request))

    # -- active topics (KIP-558) and loggers (KIP-976) ------------------------------------------

    def reset_connector_active_topics(self, name: str) -> None:
        super().reset_connector_active_topics(name)
        for key in [k for k in self._recorded_topics if k[0] == name]:
            del self._recorded_topics[key]

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
        try:
            self.status_store.put_topic(TopicStatus(topic, task.connector, task.task, int(now * 1000)))
        except ConnectError as exc:
            log.debug("Connector %s: active topic %s not recorded: %s", task.connector, topic, exc)

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """KIP-976: write ``logger-cluster-<namespace>``; every worker applies it when read back."""
        parse_level(level)
        await self.config_store.put_logger_level(namespace, level)


def _reply_retrieved(future: asyncio.Future[object]) -> None:
    """A reply nobody waits for any more (the waiter timed out, the worker stopped) is not an
    unretrieved exception."""
    if not future.cancelled():
        future.exception()
