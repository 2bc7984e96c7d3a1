"""A task plan made live: plugins, converters, clients, metric groups and the runner (Java's
``Worker.buildWorkerTask``, the effectful half; :mod:`pyconnect.worker.task_plan` is the pure one).

Contract:

- :func:`assemble_source_task` / :func:`assemble_sink_task` build an unstarted runner from a plan, or
  raise. What they opened before the failure is closed first (the transformation chain, a started
  producer), also when the call is cancelled; nothing is registered anywhere, so the caller reports the
  failure and the worker holds nothing of the task.
- A source task's producer is started here for at-least-once delivery; a transactional one is started
  by the task after the herder's ``preflight`` (zombie fencing), bounded by the producer's
  ``max.block.ms`` (a refusal of its ``transactional.id`` is a one-line error naming it).
- The assembled :class:`AssembledTask` carries the task's metric groups in the order the worker closes
  them when the task stops.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from pyconnect.api.source import SourceTask, SourceTaskContext, TransactionContext
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import DataError
from pyconnect.kafka.access import start_client
from pyconnect.kafka.clients import create_producer, max_block_seconds
from pyconnect.kafka.dead_letter_queue import DeadLetterQueueWriter
from pyconnect.kafka.sink_consumer import SinkConsumer
from pyconnect.kafka.task_transactions import TaskTransactions
from pyconnect.kafka.transaction_access import init_timeout_s, transaction_refusal
from pyconnect.metrics.client_metrics import JAVA_BUFFER_MEMORY, ProducerMetrics
from pyconnect.metrics.connect import ConnectMetrics, SourceTaskMetrics, TaskMetrics, WorkerMetrics
from pyconnect.metrics.sink_task import SinkTaskMetrics
from pyconnect.metrics.task_errors import TaskErrorMetrics
from pyconnect.protocol.internal_records import InternalRecordError, State, TargetState, encode_offset_value
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.connector_offsets import ConnectorOffsets
from pyconnect.transforms.chain import TransformationChain
from pyconnect.transforms.config import transformation_chain
from pyconnect.worker.errant_records import ErrantRecords
from pyconnect.worker.offset_reader import ConnectorOffsetReader
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.raw_batches import records_only_reason
from pyconnect.worker.retry_with_tolerance import RetryWithTolerance
from pyconnect.worker.sink_config import plugin_class_name
from pyconnect.worker.sink_parts import SinkTaskParts
from pyconnect.worker.sink_task import WorkerSinkTask, WorkerSinkTaskContext
from pyconnect.worker.source_commits import CommitPolicy, OffsetCommits, TransactionCommits
from pyconnect.worker.source_parts import SourceTaskMeters, SourceTaskParts
from pyconnect.worker.source_task import WorkerSourceTask
from pyconnect.worker.status import ObservedReporter
from pyconnect.worker.task_converters import TaskConverters
from pyconnect.worker.task_plan import ConverterSpec, ErrorPolicy, SinkTaskPlan, SourceTaskPlan, TaskPlan

log = logging.getLogger(__name__)

__all__ = [
    "AssembledTask",
    "MetricGroups",
    "TaskHost",
    "assemble_sink_task",
    "assemble_source_task",
    "new_converter",
]

MetricGroups = tuple[
    TaskMetrics, *tuple[SourceTaskMetrics | ProducerMetrics | SinkTaskMetrics | TaskErrorMetrics, ...]
]
"""A task's metric groups: its ``connector-task-metrics`` first, then those of its kind."""


class TaskHost(Protocol):
    """What assembling a task needs from its worker (:class:`~pyconnect.worker.worker.Worker` is the one)."""

    @property
    def plugins(self) -> PluginRegistry: ...

    @property
    def config(self) -> WorkerConfig: ...

    @property
    def metrics(self) -> ConnectMetrics: ...

    @property
    def worker_metrics(self) -> WorkerMetrics: ...

    @property
    def plugin_calls(self) -> PluginCalls: ...

    @property
    def topic_tracker(self) -> Callable[[ConnectorTaskId, str], None] | None: ...

    @property
    def offset_commit_permit(self) -> Callable[[ConnectorTaskId], bool] | None: ...

    def observed(
        self, on_state: Callable[[State], None], startup: Callable[[bool], None]
    ) -> ObservedReporter:
        """The reporter of one task, its states recorded by ``on_state`` and ``startup``."""
        ...

    def offsets_view(
        self,
        connector: str,
        connector_config: Mapping[str, str],
        *,
        producer_config: Mapping[str, Any] | None = None,
        client_label: str | None = None,
        read_only: bool = False,
    ) -> ConnectorOffsets:
        """The unstarted view of a connector's offsets."""
        ...


@dataclass
class AssembledTask:
    """An unstarted runner and its metric groups (closed in this order when the task stops)."""

    runner: WorkerSourceTask | WorkerSinkTask
    metric_groups: MetricGroups


def new_converter(plugins: PluginRegistry, spec: ConverterSpec) -> Any:
    """The converter a :class:`ConverterSpec` names, configured."""
    if spec.key == "header.converter":
        return plugins.new_header_converter(spec.class_name, dict(spec.configs))
    return plugins.new_converter(spec.class_name, dict(spec.configs), spec.is_key)


def _retry(
    policy: ErrorPolicy, metrics: TaskErrorMetrics, errant: ErrantRecords | None
) -> RetryWithTolerance:
    return RetryWithTolerance(
        policy.retry_timeout_ms,
        policy.retry_delay_max_ms,
        policy.tolerate_all,
        metrics=metrics,
        report=errant.report_failure if errant is not None else None,
    )


def _task_metrics(
    host: TaskHost, plan: TaskPlan, target: TargetState
) -> tuple[TaskMetrics, TaskErrorMetrics]:
    connector, task = plan.task_id.connector, plan.task_id.task
    state = State.RUNNING if target == TargetState.STARTED else State.PAUSED
    return TaskMetrics(host.metrics, connector, task, state), TaskErrorMetrics(host.metrics, connector, task)


def _plugin_parts(host: TaskHost, plan: TaskPlan) -> tuple[Any, TransformationChain, list[Any]]:
    """The task plugin, its transformation chain and its three converters (the chain closed when a
    converter cannot be made)."""
    task = host.plugins.resolve_connector(plan.connector_class)().task_class()()
    chain = transformation_chain(host.plugins, plan.transforms_config)
    try:
        converters = [new_converter(host.plugins, spec) for spec in plan.converters]
    except BaseException:
        chain.close()
        raise
    return task, chain, converters


class _SourceClients:
    """The source task's producer and offsets, and the callbacks the runner calls with them."""

    def __init__(
        self, host: TaskHost, plan: SourceTaskPlan, producer: Any, offsets: ConnectorOffsets
    ) -> None:
        self._host = host
        self._plan = plan
        self.producer = producer
        self.offsets = offsets

    async def write_offsets(
        self, offsets: dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]
    ) -> None:
        await self.offsets.set(
            self._plan.task_id.connector, [(p, o) for p, o in offsets.values() if p is not None]
        )

    async def close(self) -> None:
        try:
            await self.producer.stop()
        finally:
            await self.offsets.stop()

    def encode_offsets(
        self, pairs: list[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]
    ) -> list[tuple[bytes, bytes | None]]:
        connector = self._plan.task_id.connector
        try:
            return [
                (self.offsets.key_bytes(connector, p), encode_offset_value(o))
                for p, o in pairs
                if p is not None
            ]
        except InternalRecordError as exc:
            raise DataError(str(exc)) from None

    def may_commit(self) -> bool:
        permit = self._host.offset_commit_permit
        return permit is None or permit(self._plan.task_id)

    def transactional_start(
        self, preflight: Callable[[], Awaitable[None]] | None
    ) -> Callable[[], Awaitable[None]]:
        """The task's ``preflight``: the herder's fencing round, then the transactional producer started."""
        plan, producer = self._plan, self.producer

        async def prepare() -> None:
            if preflight is not None:
                await preflight()
            timeout_s = init_timeout_s(max_block_seconds(producer))
            try:
                async with asyncio.timeout(timeout_s):
                    await start_client(producer, plan.producer_config, plan.cluster)
            except Exception as exc:
                refusal = transaction_refusal(
                    exc, str(plan.transactional_id), plan.cluster, initialising=True, timeout_s=timeout_s
                )
                if refusal is None:
                    raise
                raise refusal from exc

        return prepare


async def _open_source_clients(host: TaskHost, plan: SourceTaskPlan) -> _SourceClients:
    """The offsets view and the producer (started unless transactional); the producer stopped again when
    starting it fails or is cancelled."""
    offsets = host.offsets_view(
        plan.task_id.connector,
        plan.connector_config,
        producer_config=plan.producer_config,
        client_label=str(plan.task_id),
        read_only=plan.transactional,
    )
    producer = create_producer(dict(plan.producer_config))
    if not plan.transactional:
        try:
            await start_client(producer, plan.producer_config, plan.cluster)
        except BaseException:
            with contextlib.suppress(Exception):
                await producer.stop()
            raise
    return _SourceClients(host, plan, producer, offsets)


async def assemble_source_task(
    host: TaskHost,
    plan: SourceTaskPlan,
    target: TargetState,
    *,
    preflight: Callable[[], Awaitable[None]] | None = None,
    postflight: Callable[[], Awaitable[None]] | None = None,
) -> AssembledTask:
    """An unstarted source task from its plan (see the module contract)."""
    task, chain, converters = _plugin_parts(host, plan)
    records_only = records_only_reason(converters, chain)
    if records_only and type(task).accept_raw_batches is not SourceTask.accept_raw_batches:
        log.info("Task %s: fetched batches are copied record by record: %s", plan.task_id, records_only)
    try:
        clients = await _open_source_clients(host, plan)
    except BaseException:
        with contextlib.suppress(Exception):
            chain.close()
        raise
    try:
        return _source_runner(host, plan, target, task, chain, converters, clients, preflight, postflight)
    except BaseException:
        with contextlib.suppress(Exception):
            chain.close()
        with contextlib.suppress(Exception):
            await clients.producer.stop()
        raise


def _source_runner(
    host: TaskHost,
    plan: SourceTaskPlan,
    target: TargetState,
    task: Any,
    chain: TransformationChain,
    converters: list[Any],
    clients: _SourceClients,
    preflight: Callable[[], Awaitable[None]] | None,
    postflight: Callable[[], Awaitable[None]] | None,
) -> AssembledTask:
    key_converter, value_converter, header_converter = converters
    task_id, recording = plan.task_id, host.metrics.hub.recording
    producer_metrics = ProducerMetrics(
        host.metrics.hub, plan.client_id, int(plan.producer_config.get("buffer.memory") or JAVA_BUFFER_MEMORY)
    )
    transactions = (
        TaskTransactions(
            clients.producer,
            clients.offsets.primary_topic or host.config.offset_storage_topic,
            str(task_id),
            metrics=producer_metrics if recording else None,
            worker_copy=clients.offsets if clients.offsets.has_own_topic else None,
            transactional_id=str(plan.transactional_id),
            cluster=plan.cluster,
        )
        if plan.transactional
        else None
    )
    task_metrics, error_metrics = _task_metrics(host, plan, target)
    source_metrics = SourceTaskMetrics(host.metrics, task_id.connector, task_id.task)
    errant = (
        ErrantRecords(
            task_id,
            log_errors=True,
            log_include_messages=plan.errors.log_include_messages,
            metrics=error_metrics,
        )
        if plan.errors.log_errors
        else None
    )
    transaction_context = (
        TransactionContext() if plan.transactional and plan.boundary == "connector" else None
    )
    context = SourceTaskContext(
        dict(plan.task_config),
        ConnectorOffsetReader(clients.offsets, task_id.connector),
        transaction_context=transaction_context,
        metrics=host.metrics.hub,
    )
    errors = _retry(plan.errors, error_metrics, errant)
    commits: CommitPolicy = (
        TransactionCommits(
            transactions,
            clients.encode_offsets,
            interval_s=plan.transaction_interval_s,
            settle_s=plan.offset_flush_timeout_s,
            context=transaction_context,
            preflight=clients.transactional_start(preflight),
            postflight=postflight,
        )
        if transactions is not None
        else OffsetCommits(
            clients.write_offsets,
            interval_s=plan.offset_flush_interval_s,
            timeout_s=plan.offset_flush_timeout_s,
        )
    )
    parts = SourceTaskParts(
        clients.producer,
        TaskConverters(key_converter, value_converter, header_converter),
        host.observed(task_metrics.record_state, host.worker_metrics.record_task_startup),
        transformations=chain,
        errors=errors,
        calls=host.plugin_calls,
        close_producer=clients.close,
        open_offsets=clients.offsets.start,
        may_commit=clients.may_commit,
        on_topic=host.topic_tracker,
        meters=SourceTaskMeters(source_metrics, task_metrics, producer_metrics if recording else None),
        cluster=plan.cluster,
        stop_timeout_s=plan.stop_timeout_s,
        target_bounds=plan.target_bounds,
    )
    runner = WorkerSourceTask(task_id, task, dict(plan.task_config), context, parts, commits, target)
    return AssembledTask(runner, (task_metrics, source_metrics, producer_metrics, error_metrics))


def assemble_sink_task(host: TaskHost, plan: SinkTaskPlan, target: TargetState) -> AssembledTask:
    """An unstarted sink task from its plan (see the module contract; the consumer is created last and
    not started, so nothing is left open on a failure)."""
    task, chain, (key_converter, value_converter, header_converter) = _plugin_parts(host, plan)
    try:
        dead_letter = plan.dead_letter
        writer = (
            DeadLetterQueueWriter(
                dead_letter.topic,
                dead_letter.replication_factor,
                dict(dead_letter.producer_config),
                dict(dead_letter.admin_config),
            )
            if dead_letter is not None
            else None
        )
        errant = (
            ErrantRecords(
                plan.task_id,
                writer=writer,
                context_headers_enabled=dead_letter is not None and dead_letter.context_headers,
                log_errors=plan.errors.log_errors,
                log_include_messages=plan.errors.log_include_messages,
            )
            if writer is not None or plan.errors.log_errors
            else None
        )
        consumer = SinkConsumer(dict(plan.consumer_config), topics=list(plan.topics), pattern=plan.pattern)
    except BaseException:
        chain.close()
        raise
    task_metrics, error_metrics = _task_metrics(host, plan, target)
    sink_metrics = SinkTaskMetrics(host.metrics, plan.task_id.connector, plan.task_id.task)
    if errant is not None:
        errant.metrics = error_metrics
    parts = SinkTaskParts(
        consumer,
        TaskConverters(key_converter, value_converter, header_converter),
        host.observed(task_metrics.record_state, host.worker_metrics.record_task_startup),
        transformations=chain,
        errors=_retry(plan.errors, error_metrics, errant),
        errant=errant,
        calls=host.plugin_calls,
        task_metrics=task_metrics,
        sink_metrics=sink_metrics,
        class_name=lambda plugin: plugin_class_name(host.plugins, plugin),
        offset_flush_interval_s=plan.offset_flush_interval_s,
        offset_flush_timeout_s=plan.offset_flush_timeout_s,
        stop_timeout_s=plan.stop_timeout_s,
    )
    context = WorkerSinkTaskContext(dict(plan.task_config), metrics=host.metrics.hub)
    runner = WorkerSinkTask(plan.task_id, task, dict(plan.task_config), context, parts, target)
    return AssembledTask(runner, (task_metrics, sink_metrics, error_metrics))
