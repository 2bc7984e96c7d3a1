"""The herder's effects executor: performs what :class:`~pyconnect.herder.core.HerderCore` decides and
feeds the outcomes back, and nothing else.

Contract:
- :meth:`EffectsExecutor.perform` runs effects in order; an effect whose outcome the core needs (a
  rebalance round, a config read, generated or written task configs, a session key, a claim of write
  privileges) reports it to the core at once, and the effects the core answers with are performed
  before the next one. Effects that describe a stage of the tick (``health.stage_description``) are
  timed by the herder's :class:`~pyconnect.herder.health.TickRecorder`.
- :meth:`EffectsExecutor.perform_request` runs the effects of one REST request
  (:func:`pyconnect.herder.requests.request_effects`); its reply is the ``Reply`` effect's value or the
  offset modification's message; the first failure is raised to the request's waiter.
- Work that must not hold up the tick runs in the background, owned by the herder's task group: a
  follower's publication of task configs to its leader (a newer one for the same connector cancels
  the older; a failure schedules the connector's reconfiguration again through the core) and, in
  dedicated mode, the leader's writes of the connector configs it manages (:meth:`configured` waits
  for the last one).
- Every config-topic write goes through :meth:`write`, whose outcome the tick recorder keeps for
  ``/health``.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Protocol

from pyconnect.errors import ConnectError, NotFoundError, NotLeaderError
from pyconnect.herder import effects as fx
from pyconnect.herder.core import HerderCore, Rebalanced
from pyconnect.herder.entities import ConnectorInfo
from pyconnect.herder.health import TickRecorder, stage_description
from pyconnect.herder.loggers import LOGGERS
from pyconnect.herder.membership import Membership
from pyconnect.herder.modes import HerderMode
from pyconnect.herder.source_fencing import SourceFencing
from pyconnect.protocol.internal_records import SessionKeyRecord, State, TargetState
from pyconnect.stores.config import ConfigStore
from pyconnect.stores.status import StatusStore
from pyconnect.worker.status import Item
from pyconnect.worker.worker import Worker

log = logging.getLogger(__name__)

PublishTaskConfigs = Callable[[str, str, bytes, Mapping[str, str]], Awaitable[None]]
"""``(leader_url, connector, body, signature_headers)``: a follower's ``POST`` of task configs."""


class EffectsHost(Protocol):
    """What the executor performs effects with; :class:`~pyconnect.herder.herder.Herder` is the one."""

    @property
    def core(self) -> HerderCore: ...

    @property
    def worker(self) -> Worker: ...

    @property
    def config_store(self) -> ConfigStore: ...

    @property
    def status_store(self) -> StatusStore: ...

    @property
    def membership(self) -> Membership: ...

    @property
    def fencing(self) -> SourceFencing: ...

    @property
    def tick(self) -> TickRecorder: ...

    @property
    def mode(self) -> HerderMode: ...

    @property
    def worker_id(self) -> str: ...

    @property
    def flow(self) -> str | None: ...

    def now(self) -> float:
        """The herder's clock (seconds)."""
        ...

    def wake(self) -> None:
        """Wake the tick loop: something the core should see happened."""
        ...

    def spawn(self, coroutine: Awaitable[None], name: str) -> asyncio.Task[None]: ...

    def resolved(self, config: Mapping[str, str | None]) -> dict[str, str]:
        """``config`` with its config-provider variables resolved."""
        ...

    async def validate(self, name: str, config: Mapping[str, str]) -> None: ...

    async def modify_offsets(
        self,
        name: str,
        config: Mapping[str, str],
        offsets: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]] | None,
    ) -> str: ...

    async def run_requests(self) -> None:
        """Run the queued REST requests (:meth:`EffectsExecutor.perform_request` each)."""
        ...

    def report(
        self, item: Item, state: State, trace: str | None = None, version: str | None = None
    ) -> None: ...

    async def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> tuple[bool, ConnectorInfo]: ...

    def rebalance_started(self) -> None: ...

    def rebalance_resolved(self) -> None: ...


class EffectsExecutor:
    """See the module docstring; one per herder."""

    def __init__(self, host: EffectsHost, publish: PublishTaskConfigs | None) -> None:
        self._host = host
        self._publish = publish
        self._publishing: dict[str, asyncio.Task[None]] = {}
        self._configuring: asyncio.Task[None] | None = None

    def _now_ms(self) -> int:
        return int(self._host.now() * 1000)

    async def perform(self, effects: Sequence[fx.Effect]) -> None:
        tick = self._host.tick
        for effect in effects:
            description = stage_description(effect)
            if description is None:
                await self._perform_one(effect)
                continue
            tick.begin(description, self._now_ms())
            try:
                await self._perform_one(effect)
            finally:
                tick.complete(self._now_ms())

    async def _perform_one(self, effect: fx.Effect) -> None:
        host = self._host
        core, worker = host.core, host.worker
        match effect:
            case fx.Rebalance():
                outcome = await host.membership.rebalance()
                host.rebalance_started()
                await self.perform(
                    core.rebalanced(
                        Rebalanced.from_outcome(outcome),
                        host.config_store.snapshot(),
                        worker,
                        host.status_store,
                        host.now(),
                    )
                )
                host.rebalance_resolved()
            case fx.ReadConfigToEnd(timeout_s=timeout):
                try:
                    await host.config_store.refresh(timeout)
                    timed_out = False
                except TimeoutError:
                    timed_out = True
                await self.perform(
                    core.config_read(
                        host.config_store.snapshot(),
                        worker,
                        host.status_store,
                        host.now(),
                        timed_out=timed_out,
                    )
                )
                host.rebalance_resolved()
            case fx.ClaimWritePrivileges():
                await self._claim_write_privileges()
            case fx.DropAssignment(reason=reason):
                await host.membership.drop_assignment(reason)
            case fx.Sleep(seconds=seconds):
                await asyncio.sleep(seconds)
            case fx.StartConnector(connector=name, config=config, target=target):
                await worker.start_connector(
                    name,
                    host.resolved(config),
                    target,
                    self._reconfiguration_requested,
                    on_started=functools.partial(self._connector_started, name),
                )
            case fx.StopConnector(connector=name):
                await worker.stop_connector(name)
            case fx.SetTargetState(connector=name, target=target):
                await worker.set_target_state(name, target)
            case fx.StartTask(task=task, connector_config=cc, task_config=tc, target=target):
                generation = host.config_store.snapshot().task_config_generation(task.connector)
                await worker.start_task(
                    task,
                    host.resolved(cc),
                    host.resolved(tc),
                    target,
                    preflight=lambda: host.fencing.preflight(task),
                    postflight=lambda: host.fencing.postflight(task, generation),
                )
            case fx.StopTasks(tasks=tasks):
                await worker.stop_tasks(tasks)
            case fx.Report(item=item, state=state):
                host.report(item, state)
            case fx.PutStatus(status=status):
                host.status_store.put(status)
            case fx.DeleteTopicStatus(connector=name, topic=topic):
                host.status_store.delete_topic(name, topic)
            case fx.GenerateTaskConfigs(connector=name, max_tasks=max_tasks):
                await self._generate_task_configs(name, max_tasks)
            case fx.WriteTaskConfigs(connector=name, configs=configs):
                try:
                    await self.write(host.config_store.put_task_configs(name, [dict(c) for c in configs]))
                except Exception as exc:
                    core.reconfiguration_failed(name, exc, host.now())
                else:
                    core.task_configs_written(name)
            case fx.PublishTaskConfigs():
                self._publish_in_background(effect)
            case fx.WriteSessionKey(algorithm=algorithm, length=length, created_ms=created):
                key = SessionKeyRecord(os.urandom(length), algorithm, created)
                await self.write(host.config_store.put_session_key(key))
                core.session_key_written(key)
            case fx.ApplyLoggerLevel(namespace=namespace, level=level):
                apply_logger_level(namespace, level)
            case fx.ConfigureManagedConnectors():
                self._configure_in_background()
            case fx.RunRequests():
                await host.run_requests()

    async def _claim_write_privileges(self) -> None:
        host = self._host
        try:
            await host.config_store.claim_write_privileges()
        except Exception as exc:
            log.error(
                "Worker %s: unable to claim write privileges for the config topic as leader; "
                "retrying while still the leader: %s",
                host.worker_id,
                exc,
            )
            host.core.write_privileges_claimed(False, host.now())
        else:
            host.core.write_privileges_claimed(True, host.now())

    async def _generate_task_configs(self, name: str, max_tasks: int) -> None:
        host = self._host
        try:
            configs = await host.worker.connector_task_configs(name, max_tasks)
        except Exception as exc:
            host.core.reconfiguration_failed(name, exc, host.now())
            return
        await self.perform(
            host.core.task_configs_generated(name, configs, host.config_store.snapshot(), host.now())
        )

    async def perform_request(self, effects: Sequence[fx.Effect]) -> object:
        """Perform a request's effects in order; see the module docstring."""
        host = self._host
        store = host.config_store
        reply: object = None
        for effect in effects:
            match effect:
                case fx.ValidateConnectorConfig(connector=name, config=config):
                    await host.validate(name, config)
                case fx.WriteConnectorConfig(connector=name, config=config, initial_state=state):
                    await self.write(store.put_connector_config(name, dict(config), state))
                case fx.RemoveConnectorConfig(connector=name):
                    await self.write(store.remove_connector_config(name))
                case fx.WriteTaskConfigs(connector=name, configs=configs):
                    await self.write(store.put_task_configs(name, [dict(c) for c in configs]))
                case fx.WriteTargetState(connector=name, target=target, read_back=read_back):
                    timeout = host.core.settings.sync_timeout_s if read_back else None
                    await self.write(store.put_target_state(name, target, read_back_timeout=timeout))
                case fx.WriteRestartRequest(request=request):
                    await self.write(store.put_restart_request(request))
                case fx.ModifyConnectorOffsets(connector=name, config=config, offsets=offsets):
                    reply = await host.modify_offsets(name, config, offsets)
                case fx.FenceZombies(connector=name, sources_only=sources_only):
                    reply = await host.fencing.begin(name, sources_only=sources_only)
                case fx.WriteTaskCountRecord(connector=name, task_count=count, generation=generation):
                    await host.fencing.record(name, count, generation)
                case fx.RequireTaskRunning(task=task):
                    if task not in host.worker.tasks:
                        raise ConnectError(f"Failed to start task: {task.connector}-{task.task}")
                case fx.Reply(value=value):
                    reply = value
                case _:
                    await self.perform([effect])
        return reply

    async def write(self, write: Awaitable[None]) -> None:
        """One config-topic write; its outcome is what ``/health`` reports of a leader's writes."""
        tick = self._host.tick
        try:
            await write
        except Exception as exc:
            tick.write_failed(exc, self._now_ms())
            raise
        tick.write_succeeded()

    def _connector_started(self, name: str, ok: bool, state: TargetState | None) -> None:
        """A connector's start ended (maybe in the background, after the step that began it), in
        target state ``state`` (a pause, resume or stop that came meanwhile is applied by then)."""
        self._host.core.connector_started(name, ok, state or TargetState.STARTED, self._host.now())
        self._host.wake()

    def _reconfiguration_requested(self, name: str) -> None:
        self._host.core.reconfiguration_requested(name, self._host.now())
        self._host.wake()

    def _publish_in_background(self, effect: fx.PublishTaskConfigs) -> None:
        """A follower POSTs task configs to the leader outside the tick, as Java does on its
        forwarding executor: awaiting it in the tick deadlocks when the leader is rebalancing and
        waits for us. A failure schedules the connector's reconfiguration again with a backoff."""
        host, name = self._host, effect.connector
        previous = self._publishing.pop(name, None)
        if previous is not None:
            previous.cancel()
        publish = self._publish
        if publish is None:
            raise ConnectError(f"Connector {name}: this herder cannot publish task configs to a leader")

        async def run() -> None:
            try:
                await publish(effect.leader_url, name, effect.body, effect.headers)
                host.core.publish_succeeded(name)
            except Exception as exc:
                host.core.publish_failed(name, exc, host.now())
                host.wake()
            finally:
                if self._publishing.get(name) is task:
                    del self._publishing[name]

        task = host.spawn(run(), f"publish-task-configs-{name}")
        self._publishing[name] = task

    # -- dedicated mode --------------------------------------------------------------------------

    def _configure_in_background(self) -> None:
        host = self._host
        log.info("This node %s is now a leader for %s. Configuring connectors...", host.worker_id, host.flow)
        previous = self._configuring
        if previous is not None:
            previous.cancel()
        self._configuring = host.spawn(self._configure_connectors(), f"configure-{host.flow}")

    async def _configure_connectors(self) -> None:
        """Write each managed connector config that differs from the config topic, in order.

        A write refused because leadership moved on is logged and dropped (the new leader
        configures); any other failure is logged with its cause."""
        host = self._host
        for name, desired in host.mode.managed_connectors.items():
            stored = host.config_store.snapshot().connector_config(name)
            actual = None if stored is None else {k: v for k, v in stored.items() if v is not None}
            if actual == desired:
                log.info(
                    "This node is a leader for %s and configuration for %s is already up to date.",
                    host.flow,
                    name,
                )
                continue
            try:
                await host.put_connector_config(name, desired, allow_replace=True)
            except NotLeaderError:
                log.info(
                    "This node lost leadership for %s while trying to update the connector configuration for "
                    "%s. Using existing connector configuration.",
                    name,
                    host.flow,
                )
            except Exception as exc:
                log.error("Failed to configure %s connector for %s: %s", name, host.flow, exc)
            else:
                log.info("%s connector configured for %s.", name, host.flow)

    async def configured(self) -> None:
        """Dedicated mode: wait for the connector configuration started by the last leadership."""
        configuring = self._configuring
        if configuring is not None:
            await asyncio.wait([configuring])


def apply_logger_level(namespace: str, level: str) -> None:
    """KIP-976: a cluster-wide logger level read back from the config topic, applied to this worker."""
    try:
        LOGGERS.set_level(namespace, level)
    except NotFoundError:
        log.warning("Ignoring cluster-wide level %r for logger %s: not a log level", level, namespace)
