"""A Connect group whose rounds a test decides, for driving the real herder without Kafka."""

from __future__ import annotations

import asyncio
from typing import Any

from pyconnect.herder.worker_coordinator import RebalanceOutcome
from pyconnect.protocol.connect_assignment import ExtendedAssignment
from pyconnect.protocol.connect_metadata import ConnectProtocolCompatibility
from pyconnect.protocol.task_id import ConnectorTaskId

LEADER_URL = "http://leader:1/"


class ScriptedMembership:
    """Each round returns the next ``play``-ed role; while ``serving`` it answers further rounds
    itself with the last role (as a group whose other members never change anything would).

    Rounds hold nothing: the herder runs no connectors or tasks of its own.
    """

    def __init__(self, herder: Any, *, serving: bool = False, leader: bool = True) -> None:
        self.herder = herder
        self.serving = serving
        self.leader = leader
        self.lost = False
        self.holding: Any = None
        self.wakeup = asyncio.Event()
        self._plays: asyncio.Queue[tuple[bool, bool]] = asyncio.Queue()
        self._rejoin = True
        self._generation = 0

    def rejoin_needed(self) -> bool:
        return self._rejoin

    def owner_url(self, item: str | ConnectorTaskId) -> str | None:
        return None

    async def start(self) -> None:
        pass

    async def stop(self) -> None:
        pass

    async def drop_assignment(self, reason: str) -> None:
        self.holding = None

    def play(self, *, leader: bool, revoked: bool = False) -> None:
        """The next round makes this worker leader or follower (``revoked``: it also lost work)."""
        self._plays.put_nowait((leader, revoked))
        self._rejoin = True
        self.wakeup.set()

    async def rebalance(self) -> RebalanceOutcome:
        if self.serving and self._plays.empty():
            leader, revoked = self.leader, False
        else:
            leader, revoked = await self._plays.get()
        self.leader = leader
        self._rejoin = False
        self.wakeup.clear()
        self._generation += 1
        offset = self.herder.config_store.offset
        assignment = ExtendedAssignment(
            0,
            "leader",
            LEADER_URL,
            offset,
            revoked_connectors=("MirrorHeartbeatConnector",) if revoked else (),
        )
        self.holding = ExtendedAssignment(0, "leader", LEADER_URL, offset)
        return RebalanceOutcome(
            self._generation,
            "me",
            "me" if leader else "other",
            LEADER_URL,
            ConnectProtocolCompatibility.SESSIONED,
            leader,
            assignment,
            self.holding,
        )
