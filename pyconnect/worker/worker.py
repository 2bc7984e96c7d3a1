"""The worker: the connectors and tasks this process runs, and what each needs (Java's Worker).

Contract:
- Called only from the herder's tick (one caller at a time); every connector and task it starts
  belongs to it until ``stop_connector`` / ``stop_tasks`` / ``stop`` ends it.
- A connector or task that cannot be created or started is reported FAILED with its trace and the
  call returns False; it never raises into the herder.
- A task is planned by :mod:`pyconnect.worker.task_plan` (pure: client configs, converters,
  transformations, error policy, delivery mode, bounds) and made live by
  :mod:`pyconnect.worker.task_assembly`, which closes what it opened when a later part fails. A sink
  task is a :class:`~pyconnect.worker.sink_task.WorkerSinkTask` with its own consumer in group
  ``connect-<connector>``; each source task gets its own producer: the worker's ``producer.*``
  settings over Java's source defaults, then the connector's ``producer.override.*`` when
  ``connector.client.config.override.policy`` allows them (``All``, the Kafka 4 default; ``None``
  forbids any; ``Principal`` only SASL JAAS). Converters come from the connector config, else the
  worker's.
- With ``exactly.once.source.support=enabled`` a source task's producer is transactional
  (``transactional.id=<group.id>-<connector>-<task>``, idempotent; Java's
  ``exactlyOnceSourceTaskProducerConfigs``) and the task writes records and offsets in transactions
  (:mod:`pyconnect.kafka.task_transactions`) at the connector's ``transaction.boundary`` (``poll``,
  ``interval``, or ``connector``: the task's :class:`~pyconnect.api.source.TransactionContext`).
- ``stop_tasks`` signals every task first, then waits for them with one shared deadline of
  ``task.shutdown.graceful.timeout.ms``; tasks that miss it are cancelled (spec §6.1).
- Plugin code is called through the worker's :class:`~pyconnect.worker.plugin_calls.PluginCalls`
  (``plugin_calls``): a plain plugin method runs on a plugin thread, never on the loop. A connector's
  ``start`` is awaited for up to ``connector_start_wait_s`` when ``start_connector`` is given an
  ``on_started`` callback; a start still running then goes on in the background (Java's connector
  executor) and ``on_started(ok, state)`` reports its outcome and the target state reached, so one connector that blocks in ``start`` holds
  up neither the herder nor any other connector. ``stop`` closes the plugin threads' pool last.
- Metrics (pyconnect.metrics.connect), as Java's Worker keeps them: the worker's counts and startup
  results, and for each connector and task its own groups from its start until it has stopped (a
  connector's task counts while the worker runs any of its tasks). A connector's or task's state
  reports pass through :class:`~pyconnect.worker.status.ObservedReporter` on their way to the herder.
- A source task writes its offsets only when ``offset_commit_permit(task_id)`` allows it (set by the
  herder: the stale-membership fence of :mod:`pyconnect.herder.commit_fence`, beyond Java); without a
  permit every commit is allowed.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from typing import Any

from pyconnect import COMPATIBLE_KAFKA_VERSION, __version__
from pyconnect.conditions import ConditionBoard
from pyconnect.config.client_configs import (
    client_overrides,
    exactly_once_task_producer_config,
)
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConfigError, DataError
from pyconnect.kafka.access import cluster_label, start_client
from pyconnect.kafka.clients import create_producer
from pyconnect.kafka.task_transactions import TaskTransactions
from pyconnect.metrics.connect import (
    ConnectMetrics,
    ConnectorMetrics,
    ConnectorTaskCounts,
    WorkerMetrics,
)
from pyconnect.metrics.registry import MetricsHub
from pyconnect.metrics.stats import MetricConfig
from pyconnect.protocol.internal_records import (
    InternalRecordError,
    State,
    TargetState,
    encode_offset_value,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.connector_offsets import ConnectorOffsets, connector_offsets_for
from pyconnect.worker.failure_trace import failure_trace
from pyconnect.worker.offset_reader import ConnectorOffsetReader
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.sink_config import is_sink
from pyconnect.worker.sink_task import WorkerSinkTask
from pyconnect.worker.source_task import WorkerSourceTask
from pyconnect.worker.status import Item, ObservedReporter, StatusReporter
from pyconnect.worker.task_assembly import MetricGroups, assemble_sink_task, assemble_source_task
from pyconnect.worker.task_plan import plan_sink_task, plan_source_task
from pyconnect.worker.worker_connector import WorkerConnector, java_class_name

log = logging.getLogger(__name__)


CONNECTOR_START_WAIT_S = 1.0
"""How long ``start_connector`` waits for a connector's ``start`` before it goes on in the background."""


class ConnectorContextImpl:
    """What a running connector may ask of the runtime."""

    def __init__(
        self, name: str, on_reconfigure: Callable[[str], None], offset_reader: ConnectorOffsetReader
    ) -> None:
        self._name = name
        self._on_reconfigure = on_reconfigure
        self.worker_connector: WorkerConnector | None = None
        self.offset_storage_reader = offset_reader
        self.conditions: ConditionBoard | None = None
        self._loop = asyncio.get_running_loop()

    def _on_loop(self, action: Callable[[], None]) -> None:
        """Run ``action`` on the worker's loop: a plain plugin method calls us from a plugin thread."""
        try:
            on_loop = asyncio.get_running_loop() is self._loop
        except RuntimeError:
            on_loop = False
        if on_loop:
            action()
        elif not self._loop.is_closed():
            self._loop.call_soon_threadsafe(action)

    def request_task_reconfiguration(self) -> None:
        self._on_loop(lambda: self._on_reconfigure(self._name))

    def raise_error(self, exc: BaseException) -> None:
        runner = self.worker_connector
        if runner is not None:
            self._on_loop(lambda: runner.fail(exc))


class Worker:
    def __init__(
        self,
        worker_id: str,
        config: WorkerConfig,
        plugins: PluginRegistry,
        offset_store: Any,
        reporter: StatusReporter,
        *,
        kafka_cluster_id: str = "",
        metrics: ConnectMetrics | None = None,
    ) -> None:
        self.worker_id = worker_id
        self.config = config
        self.plugins = plugins
        self.offset_store = offset_store
        self.reporter = reporter
        self.kafka_cluster_id = kafka_cluster_id
        self.connectors: dict[str, WorkerConnector] = {}
        self.tasks: dict[ConnectorTaskId, WorkerSourceTask | WorkerSinkTask] = {}
        self.topic_tracker: Callable[[ConnectorTaskId, str], None] | None = None
        """KIP-558: told after each acknowledged batch which topic a task wrote to (set by the herder)."""
        self.offset_commit_permit: Callable[[ConnectorTaskId], bool] | None = None
        """Whether a source task may write its offsets now (set by the herder; ``None``: always)."""
        self.metrics = (
            metrics if metrics is not None else default_metrics(worker_id, config, kafka_cluster_id)
        )
        self.worker_metrics = WorkerMetrics(self.metrics, self.connectors, self.tasks)
        self._task_metrics: dict[ConnectorTaskId, MetricGroups] = {}
        self._connector_metrics: dict[str, ConnectorMetrics] = {}
        self.connector_task_counts = ConnectorTaskCounts(self.metrics, self._task_states)
        self.plugin_calls = PluginCalls()
        self.connector_start_wait_s = CONNECTOR_START_WAIT_S
        self._connector_offsets: dict[str, ConnectorOffsets] = {}

    def offsets_view(
        self,
        connector: str,
        connector_config: Mapping[str, str],
        *,
        producer_config: Mapping[str, Any] | None = None,
        client_label: str | None = None,
        read_only: bool = False,
    ) -> ConnectorOffsets:
        """The (unstarted) view of ``connector``'s offsets: the worker's store, or the connector's own
        ``offsets.storage.topic`` backed by it (:mod:`pyconnect.stores.connector_offsets`).
        ``producer_config`` names the cluster the connector writes to (default: its producer's)."""
        if producer_config is None:
            overrides = client_overrides(
                connector_config, self.config.connector_client_config_override_policy
            )
            producer_config = self.config.producer_configs(
                f"connector-producer-{connector}", self.kafka_cluster_id, overrides
            )
        return connector_offsets_for(
            self.config,
            self.offset_store,
            connector,
            connector_config,
            producer_config,
            client_label=client_label or connector,
            cluster_id=self.kafka_cluster_id,
            read_only=read_only,
        )

    @contextlib.asynccontextmanager
    async def offsets_opened(
        self, connector: str, connector_config: Mapping[str, str], *, read_only: bool = False
    ) -> AsyncIterator[ConnectorOffsets]:
        """``offsets_view`` started for one request (``GET``/KIP-875 writes), stopped after it."""
        view = self.offsets_view(connector, connector_config, read_only=read_only)
        try:
            await view.start()
            yield view
        finally:
            await view.stop()

    def _task_states(self) -> dict[tuple[str, int], State | None]:
        return {(t.connector, t.task): m.state for t, (m, *_rest) in self._task_metrics.items()}

    def _report(self, item: Item, state: State, trace: str | None = None, version: str | None = None) -> None:
        """Every connector's and task's reports go to the current reporter (the herder sets it)."""
        self.reporter.report(item, state, trace, version)

    def observed(
        self, on_state: Callable[[State], None], startup: Callable[[bool], None]
    ) -> ObservedReporter:
        """The reporter of one connector or task: its states go to ``on_state`` (its metrics) and to the
        worker's current reporter; ``startup`` hears whether it started (see :class:`ObservedReporter`)."""
        return ObservedReporter(self._report, on_state, startup)

    def _setting(self, key: str) -> Any:
        return self.config[key]

    async def start_connector(
        self,
        name: str,
        config: Mapping[str, str],
        target: TargetState,
        on_reconfigure: Callable[[str], None],
        on_started: Callable[[bool, TargetState | None], None] | None = None,
    ) -> bool | None:
        """Create and start connector ``name``: its outcome (False: FAILED), or None when ``on_started``
        was given and the start goes on in the background (see the module docstring). ``on_started``
        is called exactly once unless the connector is stopped first; for a connector that cannot be
        created, with False before this returns."""
        if name in self.connectors:
            raise RuntimeError(f"connector {name} is already running on this worker")
        record_startup = self.worker_metrics.record_connector_startup
        try:
            offsets = self.offsets_view(name, config, read_only=True)
            plugin = self.plugins.resolve_connector(config["connector.class"])()
        except Exception as exc:
            self.observed(lambda state: None, record_startup).report(name, State.FAILED, failure_trace(exc))
            if on_started is not None:
                on_started(False, None)
            return False
        stale = self._connector_offsets.pop(name, None)
        if stale is not None:
            await stale.stop()
        self._connector_offsets[name] = offsets
        context = ConnectorContextImpl(name, on_reconfigure, ConnectorOffsetReader(offsets, name))
        version = await self.plugin_calls.version(name, plugin)
        metrics = self._connector_metrics.pop(name, None)
        if metrics is not None:
            metrics.close()
        metrics = self._connector_metrics[name] = ConnectorMetrics(
            self.metrics,
            name,
            connector_type=self._connector_type(config["connector.class"]),
            connector_class=self._connector_class_name(config["connector.class"], plugin),
            version=version,
        )

        def on_state(state: State, metrics: ConnectorMetrics = metrics) -> None:
            metrics.state = state

        runner = WorkerConnector(
            name,
            plugin,
            config,
            context,
            self.observed(on_state, record_startup),
            calls=self.plugin_calls,
            version=version,
            conditions=self.metrics.hub.conditions,
        )
        context.worker_connector = runner
        self.connectors[name] = runner
        if on_started is None:
            return await runner.start(target)
        starting = runner.begin(target, on_started)
        done, _ = await asyncio.wait({starting}, timeout=self.connector_start_wait_s)
        if done:
            return starting.result()
        log.info(
            "Connector %s is still starting after %g s; it goes on starting in the background",
            name,
            self.connector_start_wait_s,
        )
        return None

    def _connector_class_name(self, name: str, plugin: object) -> str:
        """The class name the plugin is registered under (its Java name), as Java's ``connector-class``."""
        try:
            return self.plugins.connector_class_name(name)
        except Exception:
            return java_class_name(type(plugin))

    def _connector_type(self, connector_class: str) -> str:
        try:
            return str(self.plugins.connector_type(connector_class)).lower()
        except Exception:
            return "unknown"

    async def connector_task_configs(self, name: str, max_tasks: int) -> list[dict[str, str]]:
        return await self.connectors[name].task_configs(max_tasks)

    async def stop_connector(self, name: str) -> None:
        runner = self.connectors.pop(name, None)
        try:
            if runner is not None:
                await runner.shutdown()
        finally:
            metrics = self._connector_metrics.pop(name, None)
            if metrics is not None:
                metrics.close()
            offsets = self._connector_offsets.pop(name, None)
            if offsets is not None:
                await offsets.stop()

    async def set_target_state(self, name: str, target: TargetState) -> None:
        runner = self.connectors.get(name)
        if runner is not None:
            await runner.transition_to(target)
        for task_id, task in self.tasks.items():
            if task_id.connector == name:
                task.transition_to(target)

    async def start_task(
        self,
        task_id: ConnectorTaskId,
        connector_config: Mapping[str, str],
        task_config: Mapping[str, str],
        target: TargetState,
        *,
        preflight: Callable[[], Awaitable[None]] | None = None,
        postflight: Callable[[], Awaitable[None]] | None = None,
    ) -> bool:
        """Plan, assemble and start a task (:mod:`pyconnect.worker.task_plan`,
        :mod:`pyconnect.worker.task_assembly`); False, with the task reported FAILED, when it cannot be
        built. A transactional source task starts its producer itself after ``preflight()`` (the
        herder's zombie fencing): started earlier, its initialisation could be fenced by that round."""
        if task_id in self.tasks:
            raise RuntimeError(f"task {task_id} is already running on this worker")
        try:
            if is_sink(self.plugins, connector_config):
                plan = plan_sink_task(
                    self.config, self.kafka_cluster_id, task_id, connector_config, task_config
                )
                built = assemble_sink_task(self, plan, target)
            else:
                source = plan_source_task(
                    self.config, self.kafka_cluster_id, task_id, connector_config, task_config
                )
                if source.dropped_producer_keys:
                    log.debug(
                        "Task %s: producer settings without an equivalent here: %s",
                        task_id,
                        list(source.dropped_producer_keys),
                    )
                built = await assemble_source_task(
                    self, source, target, preflight=preflight, postflight=postflight
                )
        except Exception as exc:
            log.error("Task %s could not be created: %s", task_id, failure_trace(exc).partition("\n")[0])
            self.observed(lambda state: None, self.worker_metrics.record_task_startup).report(
                task_id, State.FAILED, failure_trace(exc)
            )
            return False
        self.tasks[task_id] = built.runner
        self._task_metrics[task_id] = built.metric_groups
        self.connector_task_counts.task_added(task_id.connector)
        built.runner.start()
        return True

    async def write_offsets_exactly_once(
        self,
        connector: str,
        connector_config: Mapping[str, str],
        pairs: Sequence[tuple[Mapping[str, Any], Mapping[str, Any] | None]],
        offsets: ConnectorOffsets,
    ) -> None:
        """KIP-875 under exactly-once support (Java ``Worker.modifySourceConnectorOffsets``): the offsets
        are written in one transaction of the producer of task 0 (``<group.id>-<connector>-0``, which
        also fences any instance of that task) to the connector's offsets topic, with the worker-store
        copy ``offsets`` makes when that topic is the connector's own; then read back."""
        overrides = client_overrides(connector_config, self.config.connector_client_config_override_policy)
        producer_config = exactly_once_task_producer_config(
            self.config, connector, 0, self.kafka_cluster_id, overrides
        )
        try:
            records = [(offsets.key_bytes(connector, p), encode_offset_value(o)) for p, o in pairs]
        except InternalRecordError as exc:
            raise DataError(str(exc)) from None
        producer = create_producer(producer_config)
        try:
            await start_client(producer, producer_config, cluster_label(producer_config))
            transactions = TaskTransactions(
                producer,
                offsets.primary_topic or self.config.offset_storage_topic,
                f"{connector}-0",
                worker_copy=offsets if offsets.has_own_topic else None,
            )
            await transactions.initialize()
            await transactions.commit(records)
        finally:
            await producer.stop()
        await offsets.read_to_end()

    async def stop_tasks(self, task_ids: Iterable[ConnectorTaskId]) -> None:
        runners = [(tid, self.tasks.pop(tid)) for tid in list(task_ids) if tid in self.tasks]
        for _, runner in runners:
            runner.stop()
        deadline = (
            asyncio.get_running_loop().time() + int(self._setting("task.shutdown.graceful.timeout.ms")) / 1000
        )
        try:
            for _, runner in runners:
                await runner.wait_stopped(max(0.0, deadline - asyncio.get_running_loop().time()))
        finally:
            for task_id, _ in runners:
                for group in self._task_metrics.pop(task_id, ()):
                    group.close()
                self.connector_task_counts.task_removed(task_id.connector)

    def connector_names(self) -> set[str]:
        return set(self.connectors)

    def task_ids(self) -> set[ConnectorTaskId]:
        return set(self.tasks)

    async def stop(self) -> None:
        """Stop every task and connector, then close the plugin threads' pool (abandoned calls keep
        their daemon threads: they never hold up the process's exit)."""
        try:
            await self.stop_tasks(list(self.tasks))
            for name in list(self.connectors):
                await self.stop_connector(name)
        finally:
            abandoned = self.plugin_calls.abandoned
            if abandoned:
                log.warning(
                    "Worker %s: %d plugin call(s) still blocked at shutdown; their threads are left behind",
                    self.worker_id,
                    abandoned,
                )
            self.plugin_calls.close()


RECORDING_CONFIG = "pyconnect.metrics.recording.enabled"
"""pyconnect's worker key (not in Java): ``false`` keeps the data path from recording any metric."""


def metrics_recording(config: Mapping[str, Any]) -> bool:
    """``pyconnect.metrics.recording.enabled`` of a worker's properties (default true); raises
    ``ConfigError`` (one line) for anything but true or false (any case)."""
    value = config.get(RECORDING_CONFIG)
    if value is None or str(value).strip() == "":
        return True
    text = str(value).strip().lower()
    if text not in ("true", "false"):
        raise ConfigError(
            f"Invalid value {value} for configuration {RECORDING_CONFIG}: Expected value to be either true or false"
        )
    return text == "true"


def metrics_hub(config: WorkerConfig) -> MetricsHub:
    """A hub whose windows are ``metrics.num.samples`` x ``metrics.sample.window.ms``, recording unless
    ``pyconnect.metrics.recording.enabled=false``."""
    return MetricsHub(
        MetricConfig(int(config["metrics.num.samples"]), int(config["metrics.sample.window.ms"])),
        recording=metrics_recording(config.originals),
    )


def default_metrics(
    worker_id: str,
    config: WorkerConfig,
    kafka_cluster_id: str,
    hub: MetricsHub | None = None,
    group_id: str | None = None,
) -> ConnectMetrics:
    """The worker's ``kafka.connect`` metrics in ``hub`` (else a hub of its own), with the app-info
    the REST root reports (Kafka version, commit id)."""
    return ConnectMetrics(
        worker_id,
        hub if hub is not None else metrics_hub(config),
        kafka_cluster_id=kafka_cluster_id,
        group_id=group_id,
        version=COMPATIBLE_KAFKA_VERSION,
        commit_id=hashlib.sha256(__version__.encode()).hexdigest()[:16],
    )
