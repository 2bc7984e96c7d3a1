"""The worker: the connectors and tasks this process runs, and what each needs (Java's Worker).

Contract:
- Called only from the herder's tick (one caller at a time); every connector and task it starts
  belongs to it until ``stop_connector`` / ``stop_tasks`` / ``stop`` ends it.
- A connector or task that cannot be created or started is reported FAILED with its trace and the
  call returns False; it never raises into the herder.
- Each source task gets its own producer: the worker's ``producer.*`` settings over Java's source
  defaults, then the connector's ``producer.override.*`` when ``connector.client.config.override.policy``
  allows them (``All``, the Kafka 4 default; ``None`` forbids any; ``Principal`` only SASL JAAS).
  Converters come from the connector config, else the worker's.
- ``stop_tasks`` signals every task first, then waits for them with one shared deadline of
  ``task.shutdown.graceful.timeout.ms``; tasks that miss it are cancelled (spec §6.1).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any

from pyconnect.api.source import SourceTaskContext
from pyconnect.config.client_configs import client_overrides, ignored_keys
from pyconnect.config.worker import WorkerConfig
from pyconnect.kafka.access import cluster_label, start_client
from pyconnect.kafka.clients import create_producer
from pyconnect.protocol.internal_records import State, TargetState
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.failure_trace import failure_trace
from pyconnect.worker.plugins import PluginRegistry
from pyconnect.worker.source_task import WorkerSourceTask
from pyconnect.worker.status import StatusReporter
from pyconnect.worker.worker_connector import WorkerConnector

log = logging.getLogger(__name__)


class ConnectorOffsetReader:
    """A task's or connector's view of its committed offsets (Java's OffsetStorageReader)."""

    def __init__(self, offset_store: Any, connector: str) -> None:
        self._store = offset_store
        self._connector = connector

    async def offset(self, partition: Mapping[str, Any]) -> dict[str, Any] | None:
        return (await self._store.get(self._connector, [partition]))[0]

    async def offsets(self, partitions: Sequence[Mapping[str, Any]]) -> list[dict[str, Any] | None]:
        return list(await self._store.get(self._connector, partitions))


class ConnectorContextImpl:
    """What a running connector may ask of the runtime."""

    def __init__(
        self, name: str, on_reconfigure: Callable[[str], None], offset_reader: ConnectorOffsetReader
    ) -> None:
        self._name = name
        self._on_reconfigure = on_reconfigure
        self.worker_connector: WorkerConnector | None = None
        self.offset_storage_reader = offset_reader

    def request_task_reconfiguration(self) -> None:
        self._on_reconfigure(self._name)

    def raise_error(self, exc: BaseException) -> None:
        if self.worker_connector is not None:
            self.worker_connector.fail(exc)


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
    ) -> None:
        self.worker_id = worker_id
        self.config = config
        self.plugins = plugins
        self.offset_store = offset_store
        self.reporter = reporter
        self.kafka_cluster_id = kafka_cluster_id
        self.connectors: dict[str, WorkerConnector] = {}
        self.tasks: dict[ConnectorTaskId, WorkerSourceTask] = {}
        self.topic_tracker: Callable[[ConnectorTaskId, str], None] | None = None
        """KIP-558: told after each acknowledged batch which topic a task wrote to (set by the herder)."""

    def _setting(self, key: str) -> Any:
        return self.config[key]

    async def start_connector(
        self, name: str, config: Mapping[str, str], target: TargetState, on_reconfigure: Callable[[str], None]
    ) -> bool:
        if name in self.connectors:
            raise RuntimeError(f"connector {name} is already running on this worker")
        context = ConnectorContextImpl(name, on_reconfigure, ConnectorOffsetReader(self.offset_store, name))
        try:
            plugin = self.plugins.resolve_connector(config["connector.class"])()
        except Exception as exc:
            self.reporter.report(name, State.FAILED, failure_trace(exc))
            return False
        runner = WorkerConnector(name, plugin, config, context, self.reporter)
        context.worker_connector = runner
        self.connectors[name] = runner
        return await runner.start(target)

    def connector_task_configs(self, name: str, max_tasks: int) -> list[dict[str, str]]:
        return self.connectors[name].task_configs(max_tasks)

    async def stop_connector(self, name: str) -> None:
        runner = self.connectors.pop(name, None)
        if runner is not None:
            await runner.shutdown()

    async def set_target_state(self, name: str, target: TargetState) -> None:
        runner = self.connectors.get(name)
        if runner is not None:
            await runner.transition_to(target)
        for task_id, task in self.tasks.items():
            if task_id.connector == name:
                task.transition_to(target)

    def converter(self, connector_config: Mapping[str, str], key: str, is_key: bool) -> Any:
        name = connector_config.get(key) or self._setting(key)
        name = getattr(name, "__name__", name)
        source = connector_config if connector_config.get(key) else self.config.originals
        configs = {k[len(key) + 1 :]: v for k, v in source.items() if k.startswith(key + ".")}
        if key == "header.converter":
            return self.plugins.new_header_converter(str(name), configs)
        return self.plugins.new_converter(str(name), configs, is_key)

    async def start_task(
        self,
        task_id: ConnectorTaskId,
        connector_config: Mapping[str, str],
        task_config: Mapping[str, str],
        target: TargetState,
    ) -> bool:
        if task_id in self.tasks:
            raise RuntimeError(f"task {task_id} is already running on this worker")
        producer = None
        try:
            connector_class = self.plugins.resolve_connector(connector_config["connector.class"])
            task = connector_class().task_class()()
            key_converter = self.converter(connector_config, "key.converter", True)
            value_converter = self.converter(connector_config, "value.converter", False)
            header_converter = self.converter(connector_config, "header.converter", False)
            client_id = f"connector-producer-{task_id.connector}-{task_id.task}"
            overrides = client_overrides(
                connector_config, self.config.connector_client_config_override_policy
            )
            producer_config = self.config.producer_configs(client_id, self.kafka_cluster_id, overrides)
            dropped = [
                k
                for k in ignored_keys(producer_config, "producer")
                if not k.startswith(("key.", "value.", "metrics.", "metric."))
            ]
            if dropped:
                log.debug("Task %s: producer settings without an equivalent here: %s", task_id, dropped)
            cluster = cluster_label(producer_config)
            producer = create_producer(producer_config)
            await start_client(producer, producer_config, cluster)
        except BaseException as exc:
            if producer is not None:  # also when this start is cancelled: no unclosed producer
                with contextlib.suppress(Exception):
                    await producer.stop()
            if not isinstance(exc, Exception):
                raise
            log.error("Task %s could not be created: %s", task_id, exc)
            self.reporter.report(task_id, State.FAILED, failure_trace(exc))
            return False

        async def write_offsets(
            offsets: dict[str, tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]],
        ) -> None:
            await self.offset_store.set(task_id.connector, [(p, o) for p, o in offsets.values()])

        tolerance = str(connector_config.get("errors.tolerance", "none")).strip().lower()
        context = SourceTaskContext(
            dict(task_config), ConnectorOffsetReader(self.offset_store, task_id.connector)
        )
        runner = WorkerSourceTask(
            task_id,
            task,
            {k: v for k, v in task_config.items() if v is not None},
            context,
            producer=producer,
            key_converter=key_converter,
            value_converter=value_converter,
            header_converter=header_converter,
            write_offsets=write_offsets,
            reporter=self.reporter,
            target_state=target,
            offset_flush_interval_s=self.config.offset_flush_interval_ms / 1000,
            offset_flush_timeout_s=self.config.offset_flush_timeout_ms / 1000,
            tolerate_errors=tolerance == "all",
            close_producer=producer.stop,
            on_topic=self.topic_tracker,
            cluster=cluster,
        )
        self.tasks[task_id] = runner
        runner.start()
        return True

    async def stop_tasks(self, task_ids: Iterable[ConnectorTaskId]) -> None:
        runners = [(tid, self.tasks.pop(tid)) for tid in list(task_ids) if tid in self.tasks]
        for _, runner in runners:
            runner.stop()
        deadline = (
            asyncio.get_running_loop().time() + int(self._setting("task.shutdown.graceful.timeout.ms")) / 1000
        )
        for _, runner in runners:
            await runner.wait_stopped(max(0.0, deadline - asyncio.get_running_loop().time()))

    def connector_names(self) -> set[str]:
        return set(self.connectors)

    def task_ids(self) -> set[ConnectorTaskId]:
        return set(self.tasks)

    async def stop(self) -> None:
        await self.stop_tasks(list(self.tasks))
        for name in list(self.connectors):
            await self.stop_connector(name)
