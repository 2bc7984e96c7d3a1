"""What a sink task needs from its worker (Java ``Worker.buildWorkerTask`` for a sink): its plugin,
converters, transformation chain and consumer.

Contract: :func:`create_sink_task` builds an unstarted :class:`~pyconnect.worker.sink_task.WorkerSinkTask`
or raises (nothing left open: the consumer is created last and not yet started). The consumer config
is Java's ``Worker.baseConsumerConfigs``: group ``connect-<connector>``, ``client.id``
``connector-consumer-<connector>-<task>``, no auto commit, ``auto.offset.reset=earliest``, then the
worker's ``consumer.*`` keys, then the connector's ``consumer.override.*`` keys the override policy
allows (``consumer.override.group.id`` included). ``topics`` is a comma list; ``topics.regex`` a Java
regex matched against whole topic names. With ``errors.deadletterqueue.topic.name`` the task gets a
dead-letter queue (:mod:`pyconnect.worker.errant_records`): producer ``connector-dlq-producer-<c>-<t>``
from the worker's ``producer.*`` and the connector's ``producer.override.*``, admin
``connector-dlq-adminclient-<c>-<t>`` (with ``admin.override.*``), as Java's. The task's
``errors.*`` keys make its :class:`~pyconnect.worker.retry_with_tolerance.RetryWithTolerance`, counting
in its ``task-error-metrics`` group (returned with the task's other metric groups).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, Protocol

from pyconnect.api.sink import TOPICS_CONFIG, TOPICS_REGEX_CONFIG, SinkConnector
from pyconnect.config.client_configs import client_overrides
from pyconnect.config.worker import WorkerConfig
from pyconnect.errors import ConfigError
from pyconnect.java_regex import compile_java_regex
from pyconnect.kafka.dead_letter_queue import DeadLetterQueueWriter
from pyconnect.kafka.sink_consumer import SinkConsumer
from pyconnect.metrics.connect import ConnectMetrics, TaskMetrics, WorkerMetrics
from pyconnect.metrics.sink_task import SinkTaskMetrics
from pyconnect.metrics.task_errors import TaskErrorMetrics
from pyconnect.protocol.internal_records import State, TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.transforms.config import transformation_chain
from pyconnect.worker.errant_records import ErrantRecords
from pyconnect.worker.plugin_calls import PluginCalls
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.retry_with_tolerance import RetryWithTolerance
from pyconnect.worker.sink_task import WorkerSinkTask, WorkerSinkTaskContext
from pyconnect.worker.status import ObservedReporter
from pyconnect.worker.worker_connector import java_class_name

DLQ_TOPIC = "errors.deadletterqueue.topic.name"
DLQ_REPLICATION_FACTOR = "errors.deadletterqueue.topic.replication.factor"
DLQ_REPLICATION_FACTOR_DEFAULT = 3
DLQ_CONTEXT_HEADERS = "errors.deadletterqueue.context.headers.enable"


class SinkTaskHost(Protocol):
    """What building a sink task needs from its worker; :class:`~pyconnect.worker.worker.Worker` is the
    one (it imports this module to build its sink tasks, so this module names only the contract)."""

    @property
    def plugins(self) -> PluginRegistry: ...

    @property
    def config(self) -> WorkerConfig: ...

    @property
    def kafka_cluster_id(self) -> str: ...

    @property
    def metrics(self) -> ConnectMetrics: ...

    @property
    def worker_metrics(self) -> WorkerMetrics: ...

    @property
    def plugin_calls(self) -> PluginCalls: ...

    def converter(self, connector_config: Mapping[str, str], key: str, is_key: bool) -> Any:
        """The key, value or header converter ``key`` of the connector config names, configured."""
        ...

    def observed(
        self, on_state: Callable[[State], None], startup: Callable[[bool], None]
    ) -> ObservedReporter:
        """The reporter of one task, its states recorded by ``on_state`` and ``startup``."""
        ...


def consumer_group_id(connector: str) -> str:
    """Java's ``SinkUtils.consumerGroupId``."""
    return f"connect-{connector}"


def sink_group_id(connector: str, connector_config: Mapping[str, str]) -> str:
    """The group a sink connector's tasks join and its offsets live in."""
    return connector_config.get("consumer.override.group.id") or consumer_group_id(connector)


def topics_list(value: str | None) -> list[str]:
    """``topics`` as Java parses a LIST: comma separated, trimmed, empty entries dropped."""
    return [t.strip() for t in (value or "").split(",") if t.strip()]


def subscription(connector_config: Mapping[str, str]) -> tuple[list[str], str | None]:
    """``(topics, None)`` or ``([], python pattern)`` from the config (validated at creation)."""
    topics = topics_list(connector_config.get(TOPICS_CONFIG))
    regex = (connector_config.get(TOPICS_REGEX_CONFIG) or "").strip()
    if topics and regex:
        raise ConfigError(
            f"{TOPICS_CONFIG} and {TOPICS_REGEX_CONFIG} are mutually exclusive options, but both are set."
        )
    if not topics and not regex:
        raise ConfigError(f"Must configure one of {TOPICS_CONFIG} or {TOPICS_REGEX_CONFIG}")
    if regex:
        return [], f"(?:{compile_java_regex(regex).pattern})\\Z"
    return topics, None


def flag(config: Mapping[str, str], key: str) -> bool:
    """A BOOLEAN connector key (``true`` in any case), false when absent."""
    return str(config.get(key, "false")).strip().lower() == "true"


def plugin_class_name(worker: SinkTaskHost, plugin: object) -> str:
    """The class name a plugin instance is registered under (its Java name for ports)."""
    for desc in worker.plugins.plugins():
        if desc.plugin_class is type(plugin):
            return desc.class_name
    return java_class_name(type(plugin))


def is_sink(worker: SinkTaskHost, connector_config: Mapping[str, str]) -> bool:
    try:
        connector_class = worker.plugins.resolve_connector(connector_config["connector.class"])
    except Exception:
        return False
    return issubclass(connector_class, SinkConnector)


def create_sink_task(
    worker: SinkTaskHost,
    task_id: ConnectorTaskId,
    connector_config: Mapping[str, str],
    task_config: Mapping[str, str],
    target: TargetState,
) -> tuple[WorkerSinkTask, TaskMetrics, SinkTaskMetrics, TaskErrorMetrics]:
    connector_class = worker.plugins.resolve_connector(connector_config["connector.class"])
    task = connector_class().task_class()()
    transformations = transformation_chain(worker.plugins, connector_config)
    try:
        key_converter = worker.converter(connector_config, "key.converter", True)
        value_converter = worker.converter(connector_config, "value.converter", False)
        header_converter = worker.converter(connector_config, "header.converter", False)
        topics, pattern = subscription(connector_config)
        overrides = client_overrides(
            connector_config, worker.config.connector_client_config_override_policy, role="consumer"
        )
        consumer_config = worker.config.consumer_configs(
            consumer_group_id(task_id.connector),
            f"connector-consumer-{task_id.connector}-{task_id.task}",
            worker.kafka_cluster_id,
            overrides,
        )
        log_errors = flag(connector_config, "errors.log.enable")
        log_messages = flag(connector_config, "errors.log.include.messages")
        dlq_topic = (connector_config.get(DLQ_TOPIC) or "").strip()
        writer = None
        if dlq_topic:
            producer_overrides = client_overrides(
                connector_config, worker.config.connector_client_config_override_policy, role="producer"
            )
            admin_overrides = client_overrides(
                connector_config, worker.config.connector_client_config_override_policy, role="admin"
            )
            writer = DeadLetterQueueWriter(
                dlq_topic,
                int(connector_config.get(DLQ_REPLICATION_FACTOR) or DLQ_REPLICATION_FACTOR_DEFAULT),
                worker.config.producer_configs(
                    f"connector-dlq-producer-{task_id.connector}-{task_id.task}",
                    worker.kafka_cluster_id,
                    producer_overrides,
                ),
                worker.config.admin_configs(
                    f"connector-dlq-adminclient-{task_id.connector}-{task_id.task}",
                    worker.kafka_cluster_id,
                    admin_overrides,
                ),
            )
        errant = (
            ErrantRecords(
                task_id,
                writer=writer,
                context_headers_enabled=flag(connector_config, DLQ_CONTEXT_HEADERS),
                log_errors=log_errors,
                log_include_messages=log_messages,
            )
            if writer is not None or log_errors
            else None
        )
        consumer = SinkConsumer(consumer_config, topics=topics, pattern=pattern)  # last: nothing to close
    except BaseException:
        transformations.close()
        raise
    task_metrics = TaskMetrics(
        worker.metrics,
        task_id.connector,
        task_id.task,
        State.RUNNING if target == TargetState.STARTED else State.PAUSED,
    )
    sink_metrics = SinkTaskMetrics(worker.metrics, task_id.connector, task_id.task)
    error_metrics = TaskErrorMetrics(worker.metrics, task_id.connector, task_id.task)
    if errant is not None:
        errant.metrics = error_metrics
    errors = RetryWithTolerance.from_config(
        connector_config,
        metrics=error_metrics,
        report=errant.report_failure if errant is not None else None,
    )
    context = WorkerSinkTaskContext(
        {k: v for k, v in task_config.items() if v is not None}, metrics=worker.metrics.hub
    )
    runner = WorkerSinkTask(
        task_id,
        task,
        {k: v for k, v in task_config.items() if v is not None},
        context,
        consumer=consumer,
        key_converter=key_converter,
        value_converter=value_converter,
        header_converter=header_converter,
        reporter=worker.observed(task_metrics.record_state, worker.worker_metrics.record_task_startup),
        target_state=target,
        offset_flush_interval_s=worker.config.offset_flush_interval_ms / 1000,
        offset_flush_timeout_s=worker.config.offset_flush_timeout_ms / 1000,
        errors=errors,
        errant=errant,
        sink_metrics=sink_metrics,
        class_name=lambda plugin: plugin_class_name(worker, plugin),
        transformations=transformations,
        task_metrics=task_metrics,
        calls=worker.plugin_calls,
        stop_timeout_s=int(worker.config["task.shutdown.graceful.timeout.ms"]) / 1000,
    )
    return runner, task_metrics, sink_metrics, error_metrics
