"""Herder: the loop around :class:`~pyconnect.herder.core.HerderCore` and the REST-facing API.

Contract:
- One run task owns an ``asyncio.TaskGroup``; every background coroutine of the herder (the tick
  loop, follower publications of task configs, dedicated-mode connector configuration) is a child of
  it, so ``stop`` cancels and awaits them all.
- The shell: the tick loop (:mod:`pyconnect.herder.tick_loop`) asks the core for a step, the effects
  executor (:mod:`pyconnect.herder.effects_executor`) performs it; REST writes wait in a
  :mod:`pyconnect.herder.request_queue`; REST reads are built by :mod:`pyconnect.herder.status_views`.
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
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, TypeVar

from pyconnect.concurrency import together
from pyconnect.config.definition import ConfigValue
from pyconnect.errors import (
    BadRequestError,
    ConnectError,
)
from pyconnect.herder import effects as fx
from pyconnect.herder import requests as rq
from pyconnect.herder.abstract import AbstractHerder
from pyconnect.herder.active_topics import ActiveTopics
from pyconnect.herder.core import CoreSettings, HerderCore
from pyconnect.herder.effects_executor import EffectsExecutor, PublishTaskConfigs, apply_logger_level
from pyconnect.herder.entities import (
    ConnectorInfo,
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
    unhealthy,
    worker_verdict,
)
from pyconnect.herder.loggers import parse_level
from pyconnect.herder.membership import Membership
from pyconnect.herder.modes import DISTRIBUTED, HerderMode
from pyconnect.herder.request_queue import SHUTTING_DOWN, RequestQueue
from pyconnect.herder.signing import verify
from pyconnect.herder.sink_offsets import sink_connector_offsets
from pyconnect.herder.source_fencing import RequestFencing, SourceFencing
from pyconnect.herder.status_views import ConnectorTypes, connector_state_info, restart_state_info, task_state
from pyconnect.herder.tick_loop import TickLoop
from pyconnect.metrics.connect import CoordinatorMetrics, RebalanceMetrics
from pyconnect.protocol.assignor import ConfigSnapshot
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility
from pyconnect.protocol.internal_records import (
    ConnectorStatus,
    State,
    TargetState,
    TaskStatus,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.config import ConfigStore
from pyconnect.stores.config_events import ConfigEvent, TaskConfigsCommitted
from pyconnect.stores.status import StatusStore
from pyconnect.worker.status import Item
from pyconnect.worker.worker import Worker

log = logging.getLogger(__name__)

T = TypeVar("T")


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
        self._active_topics = ActiveTopics(status_store, clock)
        if config.topic_tracking_enable:
            worker.topic_tracker = self.record_active_topic

        self.tick = TickRecorder()
        self.health_timeout_s = HEALTH_CHECK_TIMEOUT_S
        self._marked_ready = False
        self._stopping = False
        self._run_task: asyncio.Task[None] | None = None
        self._group: asyncio.TaskGroup | None = None
        self._requests = RequestQueue()
        self.effects = EffectsExecutor(self, publish_task_configs)
        """Performs the core's effects (pyconnect.herder.effects_executor)."""
        self._loop = TickLoop(
            self.core,
            self.tick,
            clock,
            step=self._core_step,
            perform=self.effects.perform,
            extra_wakeups=lambda: (self.membership.wakeup,),
            worker_id=self._worker_id,
        )
        self._connector_types = ConnectorTypes(worker.plugins.connector_type)
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
        self.core.session_key_read(self.config_store.snapshot().session_key)
        await self.membership.start()
        started = asyncio.get_running_loop().create_future()
        self._run_task = asyncio.create_task(self._run(started), name=f"herder-{self._worker_id}")
        await started

    async def _run(self, started: asyncio.Future[None]) -> None:
        async with asyncio.TaskGroup() as group:
            self._group = group
            group.create_task(self._loop.run(), name=f"herder-tick-{self._worker_id}")
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
        self._requests.close()
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

    def rebalance_started(self) -> None:
        """A round's outcome arrived (``connect-worker-rebalance-metrics``)."""
        if self._rebalance_metrics is not None:
            self._rebalance_metrics.rebalance_started()

    def rebalance_resolved(self) -> None:
        """After a round's effects: the rebalance succeeded once its work was started."""
        metrics = self._rebalance_metrics
        if metrics is not None and metrics.rebalancing and self.core.rebalance_resolved:
            metrics.rebalance_succeeded()

    def _spawn(self, coroutine: Awaitable[None], name: str) -> asyncio.Task[None]:
        if self._group is None:
            raise ConnectError(SHUTTING_DOWN)
        return self._group.create_task(coroutine, name=name)  # type: ignore[arg-type]

    # -- the loop ----------------------------------------------------------------------------------

    def _core_step(self) -> Sequence[fx.Effect]:
        """The core's next effects, from what the herder's parts say now."""
        membership = self.membership
        return self.core.step(
            self._clock(),
            self.config_store.snapshot(),
            self.worker,
            self.status_store,
            coordinator_lost=membership.lost,
            member_needs_rejoin=membership.rejoin_needed(),
            holding=membership.holding is not None,
            requests_waiting=self._requests.waiting,
            holds_write_privileges=self.config_store.holds_write_privileges,
        )

    def _now_ms(self) -> int:
        return int(self._clock() * 1000)

    def now(self) -> float:
        """The herder's clock (seconds)."""
        return self._clock()

    def resolved(self, config: Mapping[str, str | None]) -> dict[str, str]:
        """``config`` with its config-provider variables resolved."""
        return self._resolved(config)

    async def validate(self, name: str, config: Mapping[str, str]) -> None:
        await self._validate(name, config)

    async def modify_offsets(
        self,
        name: str,
        config: Mapping[str, str],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]] | None,
    ) -> str:
        return await self._modify_offsets(name, config, offsets)

    async def configured(self) -> None:
        """Dedicated mode: wait for the connector configuration started by the last leadership."""
        await self.effects.configured()

    def wake(self) -> None:
        self._loop.wake()

    async def settled(self) -> None:
        """Wait until the loop has applied everything that happened so far and the statuses it
        wrote are readable (standalone replies; tests)."""
        try:
            await asyncio.wait_for(self._loop.idle(), self._requests.timeout_s)
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
                apply_logger_level(effect.namespace, effect.level)
        self.wake()

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
        await self.effects.write(write)

    def connector_type(self, config: Mapping[str, str | None]) -> ConnectorType:
        """The type of the config's ``connector.class`` (remembered per class)."""
        return self._connector_types.of(config)

    async def _submit(self, request: rq.Request) -> object:
        """Queue ``request`` for the loop (run once the group is settled) and wait for its reply
        (:mod:`pyconnect.herder.request_queue`)."""
        if self._stopping:
            raise ConnectError(SHUTTING_DOWN)
        result = await self._requests.submit(request, self.wake)
        if self.mode.reply_when_settled:
            await self.settled()
        return result

    async def run_requests(self) -> None:
        """Run the queued REST requests (the core's ``RunRequests`` effect)."""
        await self._requests.run(self._perform_request)

    async def _perform_request(self, request: rq.Request) -> object:
        snapshot = self.config_store.snapshot()
        owner = self.membership.owner_url
        effects = rq.request_effects(self.core, request, snapshot, self.status_store, self.worker, owner)
        return await self.effects.perform_request(effects)

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

    async def connector_info(self, name: str) -> ConnectorInfo:
        config = self._known_config(name)
        return ConnectorInfo(
            name, config, self.config_store.snapshot().tasks(name), self.connector_type(config)
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
        config = self.config_store.snapshot().connector_configs.get(name) or {}
        return connector_state_info(
            name,
            self.status_store.get_connector(name),
            self.status_store.get_all(name),
            self.connector_type(config),
        )

    def task_status(self, task: ConnectorTaskId) -> TaskState:
        return task_state(task, self.status_store.get_task(task))

    async def connector_offsets(self, name: str) -> dict[str, Any]:
        """``GET /connectors/{c}/offsets``: a sink's from its consumer group; a source's every partition
        with a committed offset (from the connector's own ``offsets.storage.topic`` when it has one:
        see :mod:`pyconnect.stores.connector_offsets`)."""
        config = self._known_config(name)
        if self.connector_type(config) == ConnectorType.SINK:
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
        # Validated here, so that a connector whose validate blocks holds up this request, not the
        # herder's loop (which validates again only if the stored config moved meanwhile).
        validated = rq.patched_config(name, self.config_store.snapshot().connector_configs.get(name), patch)
        if validated is not None:
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
            self.wake()
            await self.settled()

    async def stop_connector(self, name: str) -> None:
        await self._submit(rq.StopConnector(name))

    async def restart_connector(
        self, name: str, *, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        """``None`` for a plain restart (done); otherwise the KIP-745 reply
        (:func:`~pyconnect.herder.status_views.restart_state_info`)."""
        accepted = await self._submit(rq.RestartConnector(name, include_tasks, only_failed))
        if not isinstance(accepted, rq.RestartAccepted):
            return None
        config = self.config_store.snapshot().connector_configs.get(name) or {}
        return restart_state_info(name, accepted, self.connector_type(config))

    async def restart_task(self, task: ConnectorTaskId) -> None:
        await self._submit(rq.RestartTask(task))

    async def put_task_configs(
        self, name: str, configs: Sequence[Mapping[str, str]], body: bytes, headers: Mapping[str, str]
    ) -> None:
        if not self.mode.accepts_task_configs:
            raise BadRequestError(
                "Kafka Connect in standalone mode does not support externally setting task configurations."
            )
        self._verify_signed(body, headers)
        await self._submit(rq.PutTaskConfigs(name, tuple(dict(c) for c in configs)))

    async def fence_zombie_source_tasks(self, name: str, body: bytes, headers: Mapping[str, str]) -> None:
        """Internal ``PUT /connectors/{c}/fence`` (KIP-618), signed like task configs."""
        self._verify_signed(body, headers)
        await self.fencing.fence(name)

    def _verify_signed(self, body: bytes, headers: Mapping[str, str]) -> None:
        """An internal request's signature, checked with the session key once the group is sessioned."""
        if self.core.protocol == ConnectProtocolCompatibility.SESSIONED:
            key = self.core.session_key
            allowed = list(self.config.inter_worker_verification_algorithms)
            verify(key.key_bytes if key else None, body, headers, allowed)

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
        sink = self.connector_type(self._known_config(request.name)) == ConnectorType.SINK
        if self.config.exactly_once_source_enabled and not sink:  # Java fences source connectors only
            return await self.fencing.modify_offsets(request)
        return str(await self._submit(request))

    # -- active topics (KIP-558) and loggers (KIP-976) ------------------------------------------

    def reset_connector_active_topics(self, name: str) -> None:
        super().reset_connector_active_topics(name)
        self._active_topics.reset(name)

    def record_active_topic(self, task: ConnectorTaskId, topic: str) -> None:
        """A source task produced to ``topic`` (:mod:`pyconnect.herder.active_topics`)."""
        self._active_topics.record(task, topic)

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """KIP-976: write ``logger-cluster-<namespace>``; every worker applies it when read back."""
        parse_level(level)
        await self.config_store.put_logger_level(namespace, level)
