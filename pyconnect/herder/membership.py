"""How a herder learns what it runs: a Connect group, or (standalone) itself alone.

:class:`Membership` is what the herder loop needs. :class:`GroupMembership` is a worker in a Kafka
group of protocol type ``connect`` (a ``ConnectGroupMember`` driven by a ``WorkerCoordinator``);
:class:`SoloMembership` is a standalone worker: always the leader of a group of one, each round
assigns it every connector and task in the config snapshot and revokes what no longer exists.

Concurrency: the herder loop calls ``rebalance``/``drop_assignment`` one at a time; ``wakeup`` is an
event the loop also waits on (the member needs a rejoin). ``may_commit`` is asked by the source tasks'
offset commits at any time: in a group it is the stale-membership fence
(:mod:`pyconnect.herder.commit_fence`, beyond Java); a group of one always may.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from pyconnect.herder.commit_fence import OffsetCommitFence
from pyconnect.herder.worker_coordinator import RebalanceOutcome, RevocationListener, WorkerCoordinator
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility
from pyconnect.protocol.task_id import ConnectorTaskId
from pyconnect.stores.config_state import ClusterConfigState


class Membership(Protocol):
    @property
    def lost(self) -> bool:
        """The group coordinator is unreachable."""
        ...

    @property
    def holding(self) -> Any | None:
        """What is held (None before the first round or after ``drop_assignment``)."""
        ...

    @property
    def wakeup(self) -> asyncio.Event: ...

    @property
    def client_id(self) -> str | None:
        """The group member's client id; ``None`` for a group of one (standalone)."""
        ...

    def rejoin_needed(self) -> bool: ...

    def may_commit(self, task: ConnectorTaskId) -> bool:
        """Whether ``task`` may commit its source offsets now."""
        ...

    def owner_url(self, item: str | ConnectorTaskId) -> str | None:
        """Leader only: the REST URL of the worker that runs ``item``."""
        ...

    async def start(self) -> None: ...

    async def stop(self) -> None:
        """Leave the group."""
        ...

    async def rebalance(self) -> Any:
        """One round; returns an outcome ``core.Rebalanced.from_outcome`` reads."""
        ...

    async def drop_assignment(self, reason: str) -> None: ...


class GroupMembership:
    """A worker in a Connect group: ``member`` (the Kafka group client) and its ``coordinator``."""

    def __init__(self, member: Any, coordinator: WorkerCoordinator) -> None:
        self.member = member
        self.coordinator = coordinator
        self.fence = OffsetCommitFence(member)

    @property
    def lost(self) -> bool:
        return bool(self.member.coordinator_lost)

    @property
    def holding(self) -> Any | None:
        return self.coordinator.holding

    @property
    def wakeup(self) -> asyncio.Event:
        event: asyncio.Event = self.member.rejoin_needed
        return event

    @property
    def client_id(self) -> str | None:
        return str(self.member.client_id)

    def rejoin_needed(self) -> bool:
        return self.coordinator.rejoin_needed()

    def may_commit(self, task: ConnectorTaskId) -> bool:
        return self.fence.may_commit(task)

    def owner_url(self, item: str | ConnectorTaskId) -> str | None:
        leader_state = self.coordinator.leader_state
        return leader_state.owner_url(item) if leader_state is not None else None

    async def start(self) -> None:
        await self.member.start()

    async def stop(self) -> None:
        await self.member.stop(leave=True)

    async def rebalance(self) -> RebalanceOutcome:
        self.fence.round_starting()
        outcome = await self.coordinator.rebalance()
        holding = self.coordinator.holding
        self.fence.round_completed(() if holding is None or holding.failed else holding.tasks)
        return outcome

    async def drop_assignment(self, reason: str) -> None:
        await self.coordinator.drop_assignment(reason)


@dataclass(frozen=True, slots=True)
class _Holding:
    connectors: tuple[str, ...]
    tasks: tuple[ConnectorTaskId, ...]


@dataclass(frozen=True, slots=True)
class SoloOutcome:
    """A standalone round, shaped like ``RebalanceOutcome`` for the core."""

    generation: int
    leader_url: str
    holding: _Holding
    config_offset: int
    is_leader: bool = True
    protocol: ConnectProtocolCompatibility | None = None
    failed: bool = False
    revoked: bool = False
    delay: int = 0


class SoloMembership:
    """Standalone: every round this worker holds the whole config snapshot (see the module docstring).

    Revoked work (deleted connectors, tasks beyond a new task count) goes to ``on_revoked`` before the
    outcome is returned, so the round never needs a second one.
    """

    def __init__(
        self,
        url: str,
        config_snapshot: Callable[[], ClusterConfigState],
        on_revoked: RevocationListener,
    ) -> None:
        self.url = url
        self._snapshot = config_snapshot
        self._on_revoked = on_revoked
        self._holding: _Holding | None = None
        self._generation = 0
        self._wakeup = asyncio.Event()

    @property
    def lost(self) -> bool:
        return False

    @property
    def holding(self) -> _Holding | None:
        return self._holding

    @property
    def wakeup(self) -> asyncio.Event:
        return self._wakeup

    @property
    def client_id(self) -> str | None:
        return None

    def rejoin_needed(self) -> bool:
        return self._holding is None

    def may_commit(self, task: ConnectorTaskId) -> bool:
        return True

    def owner_url(self, item: str | ConnectorTaskId) -> str | None:
        return self.url

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def rebalance(self) -> SoloOutcome:
        snapshot = self._snapshot()
        connectors = tuple(snapshot.connectors())
        tasks = tuple(t for name in connectors for t in snapshot.tasks(name))
        previous = self._holding
        if previous is not None:
            gone_connectors = [c for c in previous.connectors if c not in set(connectors)]
            gone_tasks = [t for t in previous.tasks if t not in set(tasks)]
            if gone_connectors or gone_tasks:
                await self._on_revoked(self.url, gone_connectors, gone_tasks)
        self._holding = _Holding(connectors, tasks)
        self._generation += 1
        return SoloOutcome(self._generation, self.url, self._holding, snapshot.offset)

    async def drop_assignment(self, reason: str) -> None:
        self._holding = None
