"""StandaloneHerder: one process, configs and statuses in memory (Java's StandaloneHerder).

Contract:
- Every write (create/replace, delete, pause, resume, stop, restart, task reconfiguration, offset
  changes) runs under one lock, as Java's herder methods are ``synchronized``; reads answer from the
  in-memory state at once. Nothing is forwarded: this worker is the whole cluster.
- Creating or updating a connector validates it (Java's 400), stops a running instance, starts it
  with the new config and generates its task configs locally; tasks restart when their configs, or
  the connector config they were generated from, changed (``taskConfigsChanged``).
- ``stop`` stops the tasks, drops their configs and statuses and moves the connector to STOPPED;
  offsets may then be altered or reset (KIP-875). ``set_cluster_logger_level`` sets this worker's.
- Statuses live in :class:`StandaloneStatus` (Java's ``MemoryStatusBackingStore``): DESTROYED removes
  an entry; the worker reports through it directly.
- Plugin listing, validation and the KIP-875 offset modification are the same code as the
  distributed herder's: both inherit :class:`~pyconnect.herder.abstract.AbstractHerder`.

:class:`StandaloneConfig` is Java's StandaloneConfig: the common worker keys (``WorkerConfig``'s base
ConfigDef with client SSL keys) plus the required ``offset.storage.file.filename``; no group or
internal-topic keys.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import time
from collections.abc import Mapping, Sequence
from typing import Any, cast

from pyconnect.config.definition import ConfigDef, ConfigKey
from pyconnect.config.providers import resolve_config_variables
from pyconnect.config.security_keys import SECURITY_KEYS
from pyconnect.config.types import Importance, Type
from pyconnect.config.worker import REMOVED_KEYS, WorkerConfig
from pyconnect.config.worker_keys import WORKER_KEYS
from pyconnect.errors import AlreadyExistsError, BadRequestError, ConnectError, NotFoundError
from pyconnect.herder.abstract import AbstractHerder
from pyconnect.herder.entities import (
    ConnectorInfo,
    ConnectorState,
    ConnectorStateInfo,
    ConnectorType,
    TaskInfo,
    TaskState,
)
from pyconnect.herder.herder import reverse_transform
from pyconnect.herder.loggers import LOGGERS, parse_level
from pyconnect.protocol.internal_records import (
    ConnectorStatus,
    State,
    TargetState,
    TaskStatus,
    TopicStatus,
)
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.worker.status import Item
from pyconnect.worker.worker import Worker

log = logging.getLogger(__name__)

OFFSET_STORAGE_FILE_FILENAME = "offset.storage.file.filename"
_DISTRIBUTED_ONLY_FROM = "group.id"

STANDALONE_KEYS: tuple[ConfigKey, ...] = (
    *WORKER_KEYS[: [k.name for k in WORKER_KEYS].index(_DISTRIBUTED_ONLY_FROM)],
    *(k for k in SECURITY_KEYS if k.name.startswith("ssl.")),
    ConfigKey(
        OFFSET_STORAGE_FILE_FILENAME,
        Type.STRING,
        importance=Importance.HIGH,
        documentation="File to store source connector offsets",
    ),
)
STANDALONE_CONFIG_DEF = ConfigDef(STANDALONE_KEYS)
_STANDALONE_ATTRIBUTES = {key.name.replace(".", "_"): key.name for key in STANDALONE_CONFIG_DEF}


class StandaloneConfig(WorkerConfig):
    """Parsed standalone worker config; the same typed view as :class:`WorkerConfig`."""

    definition = STANDALONE_CONFIG_DEF

    def __init__(self, props: Mapping[str, Any], *, environ: Mapping[str, str] | None = None) -> None:
        self._environ = dict(os.environ if environ is None else environ)
        self._originals = resolve_config_variables(props, self._environ)
        self._values = self.definition.parse(self._originals)
        for removed in REMOVED_KEYS:
            if removed in self._originals:
                log.warning(
                    "The worker has been configured with the removed property %r; it is ignored", removed
                )

    def __getattr__(self, attribute: str) -> Any:
        name = _STANDALONE_ATTRIBUTES.get(attribute)
        if name is None:
            raise AttributeError(attribute)
        return self._values[name]


class StandaloneStatus:
    """Connector, task and topic statuses in memory; the worker's ``StatusReporter``."""

    def __init__(self, worker_id: str) -> None:
        self.worker_id = worker_id
        self._connectors: dict[str, ConnectorStatus] = {}
        self._tasks: dict[str, dict[int, TaskStatus]] = {}
        self._topics: dict[str, dict[str, TopicStatus]] = {}

    def report(self, item: Item, state: State, trace: str | None = None, version: str | None = None) -> None:
        if isinstance(item, ConnectorTaskId):
            tasks = self._tasks.setdefault(item.connector, {})
            if state == State.DESTROYED:
                tasks.pop(item.task, None)
            else:
                tasks[item.task] = TaskStatus(item, state, self.worker_id, 0, trace, version)
        elif state == State.DESTROYED:
            self._connectors.pop(item, None)
        else:
            self._connectors[item] = ConnectorStatus(item, state, self.worker_id, 0, trace, version)

    def get_connector(self, connector: str) -> ConnectorStatus | None:
        return self._connectors.get(connector)

    def get_task(self, task: ConnectorTaskId) -> TaskStatus | None:
        return self._tasks.get(task.connector, {}).get(task.task)

    def get_all(self, connector: str) -> list[TaskStatus]:
        return sorted(self._tasks.get(connector, {}).values(), key=lambda s: s.task_id.task)

    def get_topic(self, connector: str, topic: str) -> TopicStatus | None:
        return self._topics.get(connector, {}).get(topic)

    def get_topics(self, connector: str) -> list[TopicStatus]:
        return list(self._topics.get(connector, {}).values())

    def put_topic(self, status: TopicStatus) -> None:
        self._topics.setdefault(status.connector, {})[status.topic] = status

    def delete_topic(self, connector: str, topic: str) -> None:
        self._topics.get(connector, {}).pop(topic, None)

    def on_deletion(self, connector: str) -> None:
        """Java's ``onDeletion``: the tasks' and the connector's statuses go."""
        for status in self.get_all(connector):
            self.report(status.task_id, State.DESTROYED)
        self.report(connector, State.DESTROYED)


class _ConnectorEntry:
    def __init__(self, config: dict[str, str], target: TargetState) -> None:
        self.config = config
        self.target = target
        self.task_configs: list[dict[str, str]] = []
        self.applied_config: dict[str, str] | None = None


class StandaloneHerder(AbstractHerder):
    """The :class:`~pyconnect.herder.interface.HerderApi` of a standalone worker."""

    def __init__(
        self, config: Any, *, worker: Worker, status: StandaloneStatus, kafka_cluster_id: str
    ) -> None:
        self.config = config
        self.worker = worker
        self.status_store = status
        self._kafka_cluster_id = kafka_cluster_id
        self._entries: dict[str, _ConnectorEntry] = {}
        self._lock = asyncio.Lock()
        self._ready = False
        self._stopping = False
        self._background: set[asyncio.Task[None]] = set()
        if bool(config["topic.tracking.enable"]):
            worker.topic_tracker = self.record_active_topic

    # -- identity, readiness, lifecycle -----------------------------------------------------------

    @property
    def worker_id(self) -> str:
        return self.status_store.worker_id

    @property
    def kafka_cluster_id(self) -> str:
        return self._kafka_cluster_id

    def ready(self) -> bool:
        return self._ready

    def mark_ready(self) -> None:
        """Java's ``herder.ready()``: called once the connectors named on the command line exist."""
        self._ready = True

    async def start(self) -> None:
        """Nothing to join or read: the offset store is started by the runtime."""

    async def stop(self) -> None:
        """Stop every task (each commits its offsets) and connector."""
        if self._stopping:
            return
        self._stopping = True
        for task in list(self._background):
            task.cancel()
        for task in list(self._background):
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        async with self._lock:
            await self.worker.stop()

    # -- config state ------------------------------------------------------------------------------

    def connectors(self) -> list[str]:
        return sorted(self._entries)

    def _entry(self, name: str, message: str = "Connector {} not found") -> _ConnectorEntry:
        entry = self._entries.get(name)
        if entry is None:
            raise NotFoundError(message.format(name))
        return entry

    def _known_config(self, name: str) -> dict[str, str]:
        return dict(self._entry(name).config)

    def _task_ids(self, name: str) -> list[ConnectorTaskId]:
        return [ConnectorTaskId(name, i) for i in range(len(self._entry(name).task_configs))]

    def _connector_type(self, config: Mapping[str, str]) -> ConnectorType:
        try:
            return ConnectorType(self.worker.plugins.connector_type(config.get("connector.class", "")))
        except Exception:
            return ConnectorType.UNKNOWN

    async def connector_info(self, name: str) -> ConnectorInfo:
        entry = self._entry(name)
        return ConnectorInfo(
            name, dict(entry.config), self._task_ids(name), self._connector_type(entry.config)
        )

    async def connector_config(self, name: str) -> dict[str, str]:
        return self._known_config(name)

    async def task_configs(self, name: str) -> list[TaskInfo]:
        entry = self._entry(name)
        return [TaskInfo(ConnectorTaskId(name, i), dict(c)) for i, c in enumerate(entry.task_configs)]

    def connector_status(self, name: str) -> ConnectorStateInfo:
        status = self.status_store.get_connector(name)
        if status is None:
            raise NotFoundError(f"No status found for connector {name}")
        entry = self._entries.get(name)
        tasks = [
            TaskState(t.state.value, t.worker_id, t.trace, t.version, id=t.task_id.task)
            for t in self.status_store.get_all(name)
        ]
        return ConnectorStateInfo(
            name,
            ConnectorState(status.state.value, status.worker_id, status.trace, status.version),
            tasks,
            self._connector_type(entry.config if entry else {}),
        )

    def task_status(self, task: ConnectorTaskId) -> TaskState:
        status = self.status_store.get_task(task)
        if status is None:
            raise NotFoundError(f"No status found for task {task.connector}-{task.task}")
        return TaskState(status.state.value, status.worker_id, status.trace, status.version, id=task.task)

    # -- starting and stopping work ----------------------------------------------------------------

    async def _start_connector(self, name: str) -> bool:
        entry = self._entry(name)
        return await self.worker.start_connector(
            name, self._resolved(entry.config), entry.target, self.request_task_reconfiguration
        )

    async def _start_tasks(self, name: str, tasks: Sequence[ConnectorTaskId]) -> None:
        entry = self._entry(name)
        resolved = self._resolved(entry.config)
        for task in tasks:
            if task.task < len(entry.task_configs):
                await self.worker.start_task(
                    task, resolved, self._resolved(entry.task_configs[task.task]), entry.target
                )

    async def _remove_connector_tasks(self, name: str) -> None:
        entry = self._entry(name)
        tasks = self._task_ids(name)
        if tasks:
            await self.worker.stop_tasks(tasks)
            entry.task_configs = []
            entry.applied_config = None
            for task in tasks:
                self.status_store.report(task, State.DESTROYED)

    async def _update_connector_tasks(self, name: str) -> None:
        """Java's ``updateConnectorTasks``: regenerate task configs; restart the tasks when they changed."""
        entry = self._entries.get(name)
        runner = self.worker.connectors.get(name)
        if entry is None or runner is None or not runner.running:
            log.info("Skipping update of tasks for connector %s since it is not running", name)
            return
        if entry.target != TargetState.STARTED:
            return
        max_tasks = int(entry.config.get("tasks.max") or 1)
        configs = reverse_transform(self.worker.connector_task_configs(name, max_tasks), entry.config)
        if configs == entry.task_configs and entry.applied_config == entry.config:
            return
        await self._remove_connector_tasks(name)
        entry.task_configs = configs
        entry.applied_config = dict(entry.config)
        await self._start_tasks(name, self._task_ids(name))

    def request_task_reconfiguration(self, name: str) -> None:
        """A running connector asked for new task configs; handled under the herder lock."""
        if self._stopping:
            return

        async def reconfigure() -> None:
            async with self._lock:
                if name not in self.worker.connectors:
                    log.error("Task that requested reconfiguration does not exist: %s", name)
                    return
                await self._update_connector_tasks(name)

        task = asyncio.get_running_loop().create_task(reconfigure(), name=f"reconfigure-{name}")
        self._background.add(task)
        task.add_done_callback(self._background.discard)

    async def _submit(self, operation: Any) -> Any:
        if self._stopping:
            raise ConnectError("Worker is shutting down")
        async with self._lock:
            return await operation()

    # -- writes ------------------------------------------------------------------------------------

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
            entry = self._entries.get(name)
            if entry is not None:
                if not allow_replace:
                    raise AlreadyExistsError(f"Connector {name} already exists")
                await self.worker.stop_connector(name)
                entry.config = dict(config)
                if initial_state is not None:
                    entry.target = initial_state
            else:
                self._entries[name] = _ConnectorEntry(dict(config), initial_state or TargetState.STARTED)
            if await self._start_connector(name):
                await self._update_connector_tasks(name)
            return entry is None, await self.connector_info(name)

        created, info = await self._submit(write)
        return bool(created), info

    async def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> ConnectorInfo:
        """KIP-477: merge (``None`` removes a key), validate and apply as a replace."""
        if "name" in patch and patch["name"] != name:
            raise BadRequestError(
                f"Connector name configuration ({patch['name']}) doesn't match connector name in the URL ({name})"
            )
        merged: dict[str, str | None] = dict(self._known_config(name))
        for key, value in patch.items():
            if value is None:
                merged.pop(key, None)
            else:
                merged[key] = value
        config = {k: v for k, v in merged.items() if v is not None}
        _, info = await self.put_connector_config(name, config, allow_replace=True)
        return info

    async def delete_connector(self, name: str) -> None:
        async def delete() -> None:
            self._entry(name)
            await self._remove_connector_tasks(name)
            await self.worker.stop_connector(name)
            del self._entries[name]
            self.status_store.on_deletion(name)

        await self._submit(delete)

    async def _set_target_state(self, name: str, target: TargetState) -> None:
        entry = self._entry(name, "Unknown connector {}")
        entry.target = target
        await self.worker.set_target_state(name, target)
        if target == TargetState.STARTED:
            await self._update_connector_tasks(name)

    async def pause_connector(self, name: str) -> None:
        await self._submit(lambda: self._set_target_state(name, TargetState.PAUSED))

    async def resume_connector(self, name: str) -> None:
        await self._submit(lambda: self._set_target_state(name, TargetState.STARTED))

    async def stop_connector(self, name: str) -> None:
        async def stop() -> None:
            self._entry(name, "Unknown connector {}")
            await self._remove_connector_tasks(name)
            await self._set_target_state(name, TargetState.STOPPED)

        await self._submit(stop)

    async def restart_connector(
        self, name: str, *, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        async def plain() -> None:
            self._entry(name)
            await self.worker.stop_connector(name)
            if await self._start_connector(name):
                await self._update_connector_tasks(name)

        if not include_tasks and not only_failed:
            await self._submit(plain)
            return None

        async def restart() -> ConnectorStateInfo:
            self._entry(name, "Unknown connector: {}")
            status = self.status_store.get_connector(name)
            if status is None:
                raise NotFoundError(f"Status for connector {name} not found")
            restart_connector = not only_failed or status.state == State.FAILED
            tasks = [
                t.task_id
                for t in self.status_store.get_all(name)
                if not only_failed or t.state == State.FAILED
            ]
            info = self.connector_status(name)
            connector = info.connector
            if restart_connector:
                connector = ConnectorState(State.RESTARTING.value, connector.worker_id, connector.trace)
            states = [
                TaskState(State.RESTARTING.value, t.worker_id, t.trace, id=t.id)
                if ConnectorTaskId(name, t.id) in tasks
                else t
                for t in info.tasks
            ]
            plan = ConnectorStateInfo(name, connector, states, info.type)
            if restart_connector:
                await self.worker.stop_connector(name)
                self.status_store.report(name, State.RESTARTING)
            if tasks:
                await self.worker.stop_tasks(tasks)
                for task in tasks:
                    self.status_store.report(task, State.RESTARTING)
            if restart_connector:
                await self._start_connector(name)
            if tasks:
                await self._start_tasks(name, tasks)
            return plan

        return cast(ConnectorStateInfo, await self._submit(restart))

    async def restart_task(self, task: ConnectorTaskId) -> None:
        async def restart() -> None:
            entry = self._entry(task.connector)
            if task.task >= len(entry.task_configs):
                raise NotFoundError(f"Task {task.connector}-{task.task} not found")
            await self.worker.stop_tasks([task])
            await self._start_tasks(task.connector, [task])
            if task not in self.worker.tasks:
                raise ConnectError(f"Failed to start task: {task.connector}-{task.task}")

        await self._submit(restart)

    async def put_task_configs(
        self, name: str, configs: Sequence[Mapping[str, str]], body: bytes, headers: Mapping[str, str]
    ) -> None:
        raise BadRequestError(
            "Kafka Connect in standalone mode does not support externally setting task configurations."
        )

    # -- plugins and validation (Java's AbstractHerder) -------------------------------------------

    # -- offsets (KIP-875) -------------------------------------------------------------------------

    def _require_leader(self) -> None:
        """Standalone: this worker is always the leader."""

    def _require_stopped_without_tasks(self, name: str) -> dict[str, str]:
        entry = self._entry(name)
        if entry.target != TargetState.STOPPED or entry.task_configs:
            raise BadRequestError(
                "Connectors must be in the STOPPED state before their offsets can be modified. This can be "
                "done for the specified connector by issuing a 'PUT' request to the "
                f"'/connectors/{name}/stop' endpoint"
            )
        return dict(entry.config)

    async def connector_offsets(self, name: str) -> dict[str, Any]:
        self._entry(name)
        pairs = await self._offset_store.connector_offsets(name)
        return {"offsets": [{"partition": p, "offset": o} for p, o in pairs]}

    # -- active topics (KIP-558) -------------------------------------------------------------------

    def record_active_topic(self, task: ConnectorTaskId, topic: str) -> None:
        if self.status_store.get_topic(task.connector, topic) is None:
            now_ms = int(time.time() * 1000)
            self.status_store.put_topic(TopicStatus(topic, task.connector, task.task, now_ms))

    # -- loggers (KIP-495, KIP-976) ---------------------------------------------------------------

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """Standalone: this single worker is the entire cluster."""
        parse_level(level)
        LOGGERS.set_level(namespace, level)
