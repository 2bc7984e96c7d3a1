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
from typing import Protocol

from pyconnect.herder.entities import ConnectorInfo, ConnectorStateInfo, TaskInfo, TaskState
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
