"""The herder as the REST layer sees it.

Contract for implementations:
- Reads (``connectors``, ``connector_status``, ``task_status``) answer from the local snapshot and
  status cache; they never forward.
- Writes run in the herder's own loop. A worker that is not the right target raises
  ``NotLeaderError`` / ``NotAssignedError`` carrying the target's URL; the REST layer forwards.
- Errors come from ``pyconnect.errors``: ``NotFoundError`` for unknown connectors or tasks,
  ``AlreadyExistsError`` on create without replace, ``BadRequestError`` for invalid requests,
  ``RebalanceNeededError`` while a rebalance is expected.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Protocol

from pyconnect.config.version_range import VersionRange
from pyconnect.herder.entities import ConnectorInfo, ConnectorStateInfo, TaskInfo, TaskState
from pyconnect.herder.health import WorkerHealth
from pyconnect.protocol.internal_records import TargetState
from pyconnect.protocol.task_id import ConnectorTaskId


class HerderApi(Protocol):
    @property
    def worker_id(self) -> str:
        """This worker's advertised REST URL without scheme, e.g. ``127.0.0.1:8083``."""
        ...

    @property
    def kafka_cluster_id(self) -> str: ...

    def ready(self) -> bool:
        """True once the worker completed its first full herder tick (``GET /health``)."""
        ...

    async def health_check(self) -> WorkerHealth:
        """This worker's own health (KIP-1017, pyconnect.herder.health); at most about 10 s."""
        ...

    def health_leader_url(self) -> tuple[bool, str | None]:
        """Whether ``/health`` should also ask the leader (a follower of a distributed cluster), and
        the leader's URL if known."""
        ...

    def connectors(self) -> list[str]: ...

    async def connector_info(self, name: str) -> ConnectorInfo: ...

    async def connector_config(self, name: str) -> dict[str, str]: ...

    async def task_configs(self, name: str) -> list[TaskInfo]: ...

    def connector_status(self, name: str) -> ConnectorStateInfo: ...

    def task_status(self, task: ConnectorTaskId) -> TaskState: ...

    async def put_connector_config(
        self,
        name: str,
        config: Mapping[str, str],
        *,
        allow_replace: bool,
        initial_state: TargetState | None = None,
    ) -> tuple[bool, ConnectorInfo]:
        """Create or replace; returns (created, info)."""
        ...

    async def delete_connector(self, name: str) -> None: ...

    async def pause_connector(self, name: str) -> None: ...

    async def resume_connector(self, name: str) -> None: ...

    async def stop_connector(self, name: str) -> None: ...

    async def restart_connector(
        self, name: str, *, include_tasks: bool, only_failed: bool
    ) -> ConnectorStateInfo | None:
        """Plain restart returns None (204); with flags the plan with RESTARTING items (202)."""
        ...

    async def restart_task(self, task: ConnectorTaskId) -> None: ...

    async def put_task_configs(
        self, name: str, configs: Sequence[Mapping[str, str]], body: bytes, headers: Mapping[str, str]
    ) -> None:
        """Internal: a follower publishes generated task configs to the leader (KIP-507 signed)."""
        ...

    async def fence_zombie_source_tasks(self, name: str, body: bytes, headers: Mapping[str, str]) -> None:
        """Internal (KIP-618): fence the previous task generation of source connector ``name`` and record
        it; leader only (``NotLeaderError`` otherwise), signed like task configs."""
        ...

    # -- plugins and validation ------------------------------------------------------------------

    def connector_plugins(self, connectors_only: bool = True) -> list[dict[str, str]]:
        """``GET /connector-plugins``: ``[{"class","type"[,"version"]}]``."""
        ...

    def connector_plugin_config(
        self, plugin: str, version: VersionRange | None = None
    ) -> list[dict[str, Any]]:
        """``GET /connector-plugins/{p}/config``: ConfigKeyInfo list; ``NotFoundError`` if unknown,
        ``BadRequestError`` if no installed version of it satisfies ``version`` (KIP-891)."""
        ...

    async def validate_connector_config(
        self, plugin: str, config: Mapping[str, str | None]
    ) -> dict[str, Any]:
        """ConfigInfos JSON (200 even with errors); ``BadRequestError`` on class mismatch / no class."""
        ...

    async def patch_connector_config(self, name: str, patch: Mapping[str, str | None]) -> ConnectorInfo:
        """KIP-477: merge (``None`` removes a key), validate and write; leader only."""
        ...

    # -- offsets (KIP-875) -------------------------------------------------------------------------

    async def connector_offsets(self, name: str) -> dict[str, Any]:
        """``{"offsets":[{"partition","offset"}]}``."""
        ...

    async def alter_connector_offsets(
        self, name: str, offsets: Sequence[tuple[Mapping[str, Any] | None, Mapping[str, Any] | None]]
    ) -> str:
        """Leader only; the connector must be STOPPED with 0 tasks. Returns the success message.
        ``NotFoundError`` for an unknown connector first; then ``BadRequestError`` for a ``None``
        partition."""
        ...

    async def reset_connector_offsets(self, name: str) -> str: ...

    # -- active topics (KIP-558) -----------------------------------------------------------------

    def connector_active_topics(self, name: str) -> dict[str, Any]:
        """``{"c":{"topics":[...]}}``; ``ForbiddenError`` when topic tracking is disabled."""
        ...

    def reset_connector_active_topics(self, name: str) -> None: ...

    # -- loggers (KIP-495, KIP-976) --------------------------------------------------------------

    def logger_levels(self) -> dict[str, dict[str, Any]]: ...

    def logger_level(self, name: str) -> dict[str, Any]: ...

    def set_worker_logger_level(self, namespace: str, level: str) -> list[str]:
        """Sorted names of the loggers whose level changed; ``NotFoundError`` for an unknown level."""
        ...

    async def set_cluster_logger_level(self, namespace: str, level: str) -> None:
        """Writes ``logger-cluster-<namespace>``; every worker applies it when it reads it back."""
        ...
