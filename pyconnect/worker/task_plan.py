"""What a task will be, decided before anything is opened: the pure half of Java's ``Worker.buildWorkerTask``.

:func:`plan_source_task` and :func:`plan_sink_task` turn the worker config, the connector config and the
task config into a frozen :class:`SourceTaskPlan` / :class:`SinkTaskPlan`: every client config, the
delivery mode, the converter and transformation specs, the error policy, the time bounds and the metric
tags. They open no connection, create no plugin and read no clock; the same inputs give the same plan.
:mod:`pyconnect.worker.task_assembly` then turns a plan into live parts (and closes what it opened when
a later part fails).

Contract:

- **Converters** (:class:`ConverterSpec`): the connector's ``key.converter`` / ``value.converter`` /
  ``header.converter`` with its ``<key>.*`` settings, else the worker's with the worker's settings
  (Java's ``Worker.instantiateConverter`` fallback).
- **Transformations**: the connector's ``transforms`` and ``predicates`` keys (``transforms_config``),
  instantiated by the assembly in ``transforms`` order.
- **Errors** (:class:`ErrorPolicy`): ``errors.retry.timeout`` (default 0), ``errors.retry.delay.max.ms``
  (60000), ``errors.tolerance`` (``all`` or ``none``), ``errors.log.enable``,
  ``errors.log.include.messages``; for a sink ``errors.deadletterqueue.*`` (:class:`DeadLetterSpec`).
- **Source delivery** (:class:`SourceTaskPlan`): ``at-least-once``, or ``transactional`` under
  ``exactly.once.source.support=enabled`` with the connector's ``transaction.boundary`` (``poll``
  by default; ``interval`` commits every ``transaction.boundary.interval.ms``, else every
  ``offset.flush.interval.ms``; ``connector`` lets the task define them), the producer's
  ``transactional.id`` ``<group.id>-<connector>-<task>``, and the offsets read-only outside transactions.
  The producer config is the worker's ``producer.*`` over Java's source defaults, then the connector's
  ``producer.override.*`` as ``connector.client.config.override.policy`` allows (a refusal raises
  ``ValueError``, the task fails); ``dropped_producer_keys`` are those no client here uses.
- **Sink subscription** (:class:`SinkTaskPlan`): ``topics`` or ``topics.regex`` (exactly one, else
  :class:`~pyconnect.errors.ConfigError`), the consumer group ``connect-<connector>`` and the consumer
  config of Java's ``Worker.baseConsumerConfigs`` with the allowed ``consumer.override.*``.
- **Offsets topic** (source): where the connector's offsets live (its ``offsets.storage.topic`` or the
  worker's, on the cluster its producer writes to: :func:`~pyconnect.stores.connector_offsets.offsets_topic_for`).
- **Raw batches** (source): not planned here: whether fetched batches may be written as they are
  depends on the converter and transformation instances (:mod:`pyconnect.worker.raw_batches`).
- **Bounds**: offset flush interval and timeout, the graceful stop timeout, and for a source task the
  target-wait bounds (:func:`~pyconnect.worker.target_wait_config.wait_bounds`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any, Literal

from pyconnect.config.client_configs import client_overrides, exactly_once_task_producer_config, ignored_keys
from pyconnect.config.worker import WorkerConfig
from pyconnect.kafka.access import cluster_label
from pyconnect.kafka.target_waits import WaitBounds
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.connector_offsets import OffsetsTopicChoice, offsets_topic_for
from pyconnect.worker.sink_config import (
    DLQ_CONTEXT_HEADERS,
    DLQ_REPLICATION_FACTOR,
    DLQ_REPLICATION_FACTOR_DEFAULT,
    DLQ_TOPIC,
    consumer_group_id,
    flag,
    subscription,
)
from pyconnect.worker.target_wait_config import wait_bounds

__all__ = [
    "ConverterSpec",
    "DeadLetterSpec",
    "ErrorPolicy",
    "SinkTaskPlan",
    "SourceTaskPlan",
    "TaskPlan",
    "converter_spec",
    "plan_sink_task",
    "plan_source_task",
]

Delivery = Literal["at-least-once", "transactional"]
Boundary = Literal["poll", "interval", "connector"]
CONVERTER_KEYS = ("key.converter", "value.converter", "header.converter")
TRANSFORM_PREFIXES = ("transforms", "predicates")


def _frozen(values: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(values))


@dataclass(frozen=True)
class ConverterSpec:
    """One converter: its config key, class name and the settings it is configured with."""

    key: str
    class_name: str
    configs: Mapping[str, Any]

    @property
    def is_key(self) -> bool:
        return self.key == "key.converter"


@dataclass(frozen=True)
class ErrorPolicy:
    """The task's ``errors.*`` keys (see the module docstring)."""

    retry_timeout_ms: int = 0
    retry_delay_max_ms: int = 60000
    tolerate_all: bool = False
    log_errors: bool = False
    log_include_messages: bool = False


@dataclass(frozen=True)
class DeadLetterSpec:
    """A sink task's dead-letter queue: its topic and the configs of its producer and admin client."""

    topic: str
    replication_factor: int
    context_headers: bool
    producer_config: Mapping[str, Any]
    admin_config: Mapping[str, Any]


@dataclass(frozen=True)
class TaskPlan:
    """What every task has (see the module docstring)."""

    task_id: ConnectorTaskId
    connector_class: str
    connector_config: Mapping[str, str]
    task_config: Mapping[str, str]
    converters: tuple[ConverterSpec, ConverterSpec, ConverterSpec]
    transforms_config: Mapping[str, str]
    errors: ErrorPolicy
    offset_flush_interval_s: float
    offset_flush_timeout_s: float
    stop_timeout_s: float

    @property
    def metric_tags(self) -> dict[str, str]:
        """The ``connector`` and ``task`` tags of the task's metric groups."""
        return {"connector": self.task_id.connector, "task": str(self.task_id.task)}


@dataclass(frozen=True)
class SourceTaskPlan(TaskPlan):
    """A source task (see the module docstring)."""

    producer_config: Mapping[str, Any]
    client_id: str
    cluster: str
    dropped_producer_keys: tuple[str, ...]
    delivery: Delivery
    boundary: Boundary
    transaction_interval_s: float | None
    transactional_id: str | None
    target_bounds: WaitBounds
    offsets: OffsetsTopicChoice

    @property
    def transactional(self) -> bool:
        return self.delivery == "transactional"


@dataclass(frozen=True)
class SinkTaskPlan(TaskPlan):
    """A sink task (see the module docstring)."""

    consumer_config: Mapping[str, Any]
    group_id: str
    topics: tuple[str, ...]
    pattern: str | None
    dead_letter: DeadLetterSpec | None


def converter_spec(config: WorkerConfig, connector_config: Mapping[str, str], key: str) -> ConverterSpec:
    """The converter ``key`` names: the connector's with its settings, else the worker's with its own."""
    own = connector_config.get(key)
    name = own or config[key]
    name = getattr(name, "__name__", name)
    source: Mapping[str, Any] = connector_config if own else config.originals
    settings = {k[len(key) + 1 :]: v for k, v in source.items() if k.startswith(key + ".")}
    return ConverterSpec(key, str(name), _frozen(settings))


def _errors(connector_config: Mapping[str, str]) -> ErrorPolicy:
    return ErrorPolicy(
        int(connector_config.get("errors.retry.timeout") or 0),
        int(connector_config.get("errors.retry.delay.max.ms") or 60000),
        str(connector_config.get("errors.tolerance") or "none").strip().lower() == "all",
        flag(connector_config, "errors.log.enable"),
        flag(connector_config, "errors.log.include.messages"),
    )


def _common(
    config: WorkerConfig,
    task_id: ConnectorTaskId,
    connector_config: Mapping[str, str],
    task_config: Mapping[str, str],
) -> dict[str, Any]:
    key, value, header = (converter_spec(config, connector_config, k) for k in CONVERTER_KEYS)
    return {
        "task_id": task_id,
        "connector_class": connector_config["connector.class"],
        "connector_config": _frozen(connector_config),
        "task_config": _frozen({k: v for k, v in task_config.items() if v is not None}),
        "converters": (key, value, header),
        "transforms_config": _frozen(
            {k: v for k, v in connector_config.items() if k.startswith(TRANSFORM_PREFIXES)}
        ),
        "errors": _errors(connector_config),
        "offset_flush_interval_s": config.offset_flush_interval_ms / 1000,
        "offset_flush_timeout_s": config.offset_flush_timeout_ms / 1000,
        "stop_timeout_s": int(config["task.shutdown.graceful.timeout.ms"]) / 1000,
    }


def _boundary(connector_config: Mapping[str, str]) -> Boundary:
    text = str(connector_config.get("transaction.boundary") or "poll").strip().lower()
    return "interval" if text == "interval" else "connector" if text == "connector" else "poll"


def plan_source_task(
    config: WorkerConfig,
    kafka_cluster_id: str,
    task_id: ConnectorTaskId,
    connector_config: Mapping[str, str],
    task_config: Mapping[str, str],
) -> SourceTaskPlan:
    """The plan of a source task (see the module docstring)."""
    common = _common(config, task_id, connector_config, task_config)
    transactional = config.exactly_once_source_enabled
    client_id = f"connector-producer-{task_id.connector}-{task_id.task}"
    overrides = client_overrides(connector_config, config.connector_client_config_override_policy)
    producer_config = (
        exactly_once_task_producer_config(
            config, task_id.connector, task_id.task, kafka_cluster_id, overrides
        )
        if transactional
        else config.producer_configs(client_id, kafka_cluster_id, overrides)
    )
    dropped = tuple(
        k
        for k in ignored_keys(producer_config, "producer")
        if not k.startswith(("key.", "value.", "metrics.", "metric."))
    )
    boundary = _boundary(connector_config)
    interval_s = None
    if transactional and boundary == "interval":
        interval_ms = connector_config.get("transaction.boundary.interval.ms")
        interval_s = (int(interval_ms) if interval_ms is not None else config.offset_flush_interval_ms) / 1000
    return SourceTaskPlan(
        **common,
        producer_config=_frozen(producer_config),
        client_id=str(producer_config.get("client.id") or client_id),
        cluster=cluster_label(producer_config),
        dropped_producer_keys=dropped,
        delivery="transactional" if transactional else "at-least-once",
        boundary=boundary,
        transaction_interval_s=interval_s,
        transactional_id=str(producer_config["transactional.id"]) if transactional else None,
        target_bounds=wait_bounds(connector_config),
        offsets=offsets_topic_for(config, connector_config, producer_config),
    )


def _dead_letter(
    config: WorkerConfig, kafka_cluster_id: str, task_id: ConnectorTaskId, connector_config: Mapping[str, str]
) -> DeadLetterSpec | None:
    topic = (connector_config.get(DLQ_TOPIC) or "").strip()
    if not topic:
        return None
    policy = config.connector_client_config_override_policy
    name = f"{task_id.connector}-{task_id.task}"
    return DeadLetterSpec(
        topic,
        int(connector_config.get(DLQ_REPLICATION_FACTOR) or DLQ_REPLICATION_FACTOR_DEFAULT),
        flag(connector_config, DLQ_CONTEXT_HEADERS),
        _frozen(
            config.producer_configs(
                f"connector-dlq-producer-{name}",
                kafka_cluster_id,
                client_overrides(connector_config, policy, role="producer"),
            )
        ),
        _frozen(
            config.admin_configs(
                f"connector-dlq-adminclient-{name}",
                kafka_cluster_id,
                client_overrides(connector_config, policy, role="admin"),
            )
        ),
    )


def plan_sink_task(
    config: WorkerConfig,
    kafka_cluster_id: str,
    task_id: ConnectorTaskId,
    connector_config: Mapping[str, str],
    task_config: Mapping[str, str],
) -> SinkTaskPlan:
    """The plan of a sink task (see the module docstring)."""
    common = _common(config, task_id, connector_config, task_config)
    topics, pattern = subscription(connector_config)
    overrides = client_overrides(
        connector_config, config.connector_client_config_override_policy, role="consumer"
    )
    group = consumer_group_id(task_id.connector)
    consumer_config = config.consumer_configs(
        group, f"connector-consumer-{task_id.connector}-{task_id.task}", kafka_cluster_id, overrides
    )
    return SinkTaskPlan(
        **common,
        consumer_config=_frozen(consumer_config),
        group_id=str(consumer_config.get("group.id") or group),
        topics=tuple(topics),
        pattern=pattern,
        dead_letter=_dead_letter(config, kafka_cluster_id, task_id, connector_config),
    )
